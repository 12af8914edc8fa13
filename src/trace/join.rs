//! Joining: several JSONL logs merged into one stream of records ordered by time.
//!
//! Two witnesses of one operation (a client's log and a test fixture's) each record
//! their own lines; checked together, ordered by their RFC 3339 `time`, they say what
//! neither says alone. [`Join`] merges the record streams of several inputs: at each
//! step it yields the earliest pending record; equal times keep the order of the
//! inputs, then of the lines. Every record keeps its own file and location.
//!
//! The merge streams: it holds one pending line per input, so memory does not grow
//! with the logs. That is exact when each input is in time order. An input that is not
//! is reported once, at the first record whose time goes back ([`ProblemKind::OutOfOrder`]);
//! its records are still merged as they come, so records around that point may be
//! checked out of order (sort the file, e.g. by its `time`, and join again). A record
//! without a usable time cannot be placed: it is a problem, and left out.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use crate::trace::Record;
use crate::trace::json_index::{skip_ws, string_end, value_end};
use crate::trace::native::{decode_line, unreadable_line};
use crate::trace::reader::{LineContent, LineReader};
use crate::trace::record::Location;

/// The top-level field that orders joined records.
pub const TIME_FIELD: &str = "time";

/// An instant, as nanoseconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub i128);

impl Timestamp {
    /// Parses an RFC 3339 date-time (`2025-04-12T10:18:03Z`, `…03.25+02:00`); the
    /// separator may be `T`, `t` or a space, and `Z` may be lower case. Digits of a
    /// fraction past nanoseconds are ignored.
    pub fn parse(text: &str) -> Option<Timestamp> {
        crate::time::parse_rfc3339(text).map(Timestamp)
    }
}

/// What went wrong with one line of a joined input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// Not a record: not JSON, not an object, not UTF-8, too long.
    Malformed,
    /// A record without a `time`, or whose `time` is not an RFC 3339 date-time.
    UnusableTime,
    /// The first record of an input whose time is earlier than the record before it.
    OutOfOrder,
    /// The input could not be read on.
    Unreadable,
}

/// A problem with one input of a join, located in its own file.
#[derive(Debug, Clone)]
pub struct Problem {
    /// The input the problem is in.
    pub file: Arc<Path>,
    /// Where in it.
    pub loc: Location,
    /// What kind of problem.
    pub kind: ProblemKind,
    /// What is wrong, as a sentence.
    pub message: String,
}

/// What a [`Join`] yields next.
#[derive(Debug)]
pub enum Item<'j> {
    /// The next record in time order, with the file it comes from.
    Record {
        /// The input it comes from.
        file: &'j Arc<Path>,
        /// The record.
        record: Record<'j>,
    },
    /// A line that is not a usable record, or an input that is out of time order.
    Problem(Problem),
}

struct Source<R> {
    file: Arc<Path>,
    reader: LineReader<R>,
    /// The pending line's text and location, while it waits its turn.
    text: String,
    loc: Location,
    /// The time of the last record taken from this input.
    last: Option<Timestamp>,
    out_of_order_reported: bool,
}

/// Merges the record streams of several inputs by time. See the module documentation.
pub struct Join<R> {
    sources: Vec<Source<R>>,
    /// The pending record of each input that has one: earliest time, then input order.
    heap: BinaryHeap<Reverse<(Timestamp, usize)>>,
    problems: VecDeque<Problem>,
    /// The input whose record was yielded last: it reads its next line on the next call.
    refill: Option<usize>,
    max_line_bytes: usize,
}

impl<R: BufRead> Join<R> {
    /// A join of `inputs`, each named by its file; ties in time keep this order.
    pub fn new(inputs: Vec<(Arc<Path>, R)>, max_line_bytes: usize) -> Join<R> {
        let sources = inputs
            .into_iter()
            .map(|(file, input)| Source {
                file,
                reader: LineReader::with_max_line_bytes(input, max_line_bytes),
                text: String::new(),
                loc: Location::default(),
                last: None,
                out_of_order_reported: false,
            })
            .collect::<Vec<_>>();
        let mut join = Join {
            heap: BinaryHeap::with_capacity(sources.len()),
            sources,
            problems: VecDeque::new(),
            refill: None,
            max_line_bytes,
        };
        for index in 0..join.sources.len() {
            join.fill(index);
        }
        join
    }

    /// The next record in time order, or a problem; `None` when every input is done.
    // Not `Iterator::next`: the record borrows the join's buffer until the next call.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Item<'_>> {
        if let Some(index) = self.refill.take() {
            self.fill(index);
        }
        if let Some(problem) = self.problems.pop_front() {
            return Some(Item::Problem(problem));
        }
        let Reverse((_, index)) = self.heap.pop()?;
        self.refill = Some(index);
        let source = &self.sources[index];
        match decode_line(&source.text, source.loc.clone()) {
            Ok(record) => Some(Item::Record {
                file: &source.file,
                record,
            }),
            Err(message) => Some(Item::Problem(Problem {
                file: source.file.clone(),
                loc: source.loc.clone(),
                kind: ProblemKind::Malformed,
                message: message.to_string(),
            })),
        }
    }

    /// Reads input `index` up to its next record with a usable time, queueing the
    /// problems met on the way, and puts that record in the heap.
    fn fill(&mut self, index: usize) {
        let max = self.max_line_bytes;
        let source = &mut self.sources[index];
        loop {
            let line = match source.reader.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return,
                Err(err) => {
                    self.problems.push_back(Problem {
                        file: source.file.clone(),
                        loc: Location::default(),
                        kind: ProblemKind::Unreadable,
                        message: format!("reading stopped: {err}"),
                    });
                    return;
                }
            };
            let loc = line.location();
            let text = match line.content {
                LineContent::Text(text) => text,
                _ => {
                    let message = unreadable_line(&line, max)
                        .map(|err| err.to_string())
                        .unwrap_or_default();
                    self.problems.push_back(Problem {
                        file: source.file.clone(),
                        loc,
                        kind: ProblemKind::Malformed,
                        message,
                    });
                    continue;
                }
            };
            let time = match time_of(text) {
                Ok(time) => time,
                Err(message) => {
                    // A line that is no record at all says so, rather than that its
                    // time is missing.
                    let (kind, message) = match decode_line(text, Location::default()) {
                        Err(reason) => (ProblemKind::Malformed, reason.to_string()),
                        Ok(_) => (ProblemKind::UnusableTime, message),
                    };
                    self.problems.push_back(Problem {
                        file: source.file.clone(),
                        loc,
                        kind,
                        message,
                    });
                    continue;
                }
            };
            let back_in_time = source.last.is_some_and(|last| time < last);
            if back_in_time && !source.out_of_order_reported {
                source.out_of_order_reported = true;
                self.problems.push_back(Problem {
                    file: source.file.clone(),
                    loc: loc.clone(),
                    kind: ProblemKind::OutOfOrder,
                    message: format!(
                        "record is earlier than the one before it in `{}`: --join merges files that are each in time order, so records near here may be checked out of order (later ones in this file are not reported again)",
                        source.file.display()
                    ),
                });
            }
            source.last = Some(source.last.map_or(time, |last| last.max(time)));
            source.text.clear();
            source.text.push_str(text);
            source.loc = loc;
            self.heap.push(Reverse((time, index)));
            return;
        }
    }
}

/// The record's `time`, read by scanning the line's top level (the record itself is
/// decoded only when its turn comes).
fn time_of(text: &str) -> Result<Timestamp, String> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut at = skip_ws(bytes, 0, end);
    if bytes.get(at) != Some(&b'{') {
        return Err("record is not a JSON object".into());
    }
    at += 1;
    let mut found = None;
    loop {
        at = skip_ws(bytes, at, end);
        if at >= end || bytes[at] != b'"' {
            break;
        }
        let key_end = string_end(bytes, at);
        let is_time = text.get(at + 1..key_end.saturating_sub(1)) == Some(TIME_FIELD);
        at = skip_ws(bytes, key_end, end);
        at += usize::from(at < end && bytes[at] == b':');
        at = skip_ws(bytes, at, end);
        let value_end = value_end(bytes, at, end);
        if is_time {
            // Recorders write `time` first, as a rule: stop there.
            found = text.get(at..value_end);
            break;
        }
        at = skip_ws(bytes, value_end, end);
        if at < end && bytes[at] == b',' {
            at += 1;
        } else {
            break;
        }
    }
    let raw = found.ok_or_else(|| format!("record has no `{TIME_FIELD}` field to join by"))?;
    // A time has no escapes; one that does is decoded the slow way.
    let plain = raw
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .filter(|r| !r.contains('\\'));
    let decoded: Option<String> = match plain {
        Some(_) => None,
        None => serde_json::from_str(raw).ok(),
    };
    plain
        .or(decoded.as_deref())
        .and_then(Timestamp::parse)
        .ok_or_else(|| {
            format!("field `{TIME_FIELD}` is {raw}, not an RFC 3339 date-time such as \"2025-04-12T10:18:03Z\"")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> i128 {
        Timestamp::parse(text)
            .unwrap_or_else(|| panic!("{text} parses"))
            .0
    }

    #[test]
    fn parses_rfc_3339() {
        assert_eq!(at("1970-01-01T00:00:00Z"), 0);
        assert_eq!(at("1970-01-01T00:00:01.5Z"), 1_500_000_000);
        assert_eq!(at("2025-04-12T10:18:03Z"), 1_744_453_083 * 1_000_000_000);
        assert_eq!(at("2025-04-12T12:18:03+02:00"), at("2025-04-12T10:18:03Z"));
        assert_eq!(
            at("2025-04-12 10:18:03.000000000001z"),
            at("2025-04-12T10:18:03Z")
        );
        assert_eq!(at("1969-12-31T23:59:59Z"), -1_000_000_000);
        assert_eq!(
            at("2024-02-29T00:00:00Z") + 86_400 * 1_000_000_000,
            at("2024-03-01T00:00:00Z")
        );
        for bad in [
            "2025-04-12",
            "2025-04-12T10:18:03",
            "2025-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2025-04-12T24:00:00Z",
            "2025-04-12T10:18:03.Z",
            "2025-04-12T10:18:03+0200",
            "yesterday at noon, roughly",
        ] {
            assert_eq!(Timestamp::parse(bad), None, "{bad}");
        }
    }

    fn joined(inputs: &[(&str, &str)]) -> Vec<String> {
        let inputs = inputs
            .iter()
            .map(|(name, text)| (Arc::from(Path::new(name)), text.as_bytes()))
            .collect();
        let mut join = Join::new(inputs, 1 << 20);
        let mut seen = Vec::new();
        while let Some(item) = join.next() {
            seen.push(match item {
                Item::Record { file, record } => {
                    format!("{}:{}", file.display(), record.loc.line)
                }
                Item::Problem(p) => format!("{:?} {}:{}", p.kind, p.file.display(), p.loc.line),
            });
        }
        seen
    }

    #[test]
    fn merges_by_time_then_input_then_line() {
        let a = "{\"time\":\"2025-01-01T00:00:01Z\"}\n{\"time\":\"2025-01-01T00:00:03Z\"}\n{\"time\":\"2025-01-01T00:00:03Z\"}\n";
        let b = "{\"time\":\"2025-01-01T00:00:02Z\"}\n{\"time\":\"2025-01-01T00:00:03Z\"}\n{\"time\":\"2025-01-01T00:00:04Z\"}\n";
        assert_eq!(
            joined(&[("a", a), ("b", b)]),
            ["a:1", "b:1", "a:2", "a:3", "b:2", "b:3"]
        );
        assert_eq!(
            joined(&[("b", b), ("a", a)]),
            ["a:1", "b:1", "b:2", "a:2", "a:3", "b:3"]
        );
    }

    #[test]
    fn reports_lines_it_cannot_place() {
        let a = "{\"time\":\"2025-01-01T00:00:05Z\"}\n{\"event\":\"x\"}\nnope\n{\"time\":\"soon\"}\n{\"time\":\"2025-01-01T00:00:01Z\"}\n{\"time\":\"2025-01-01T00:00:00Z\"}\n";
        assert_eq!(
            joined(&[("a", a)]),
            [
                "a:1",
                "UnusableTime a:2",
                "Malformed a:3",
                "UnusableTime a:4",
                "OutOfOrder a:5",
                "a:5",
                "a:6",
            ]
        );
    }
}
