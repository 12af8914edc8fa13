//! Joining: several trace inputs merged into one stream of records ordered by time.
//!
//! Two witnesses of one operation (a client's log and a test fixture's) each record
//! their own lines; checked together, ordered by an RFC 3339 time field (`time` unless
//! told otherwise), they say what neither says alone. [`Join`] merges the record
//! streams of several inputs: at each step it yields the earliest pending record;
//! equal times keep the order of the inputs, then of the records. Every record keeps
//! its own file and location.
//!
//! An input may be in any format [`TraceInput`] reads ([`open`]), and is read as the
//! merge goes, so memory does not grow with the logs: native JSON Lines one pending
//! line per input; a transcript whose adapter streams it ([`Stream`]: Claude Code logs,
//! Codex rollouts, MCP logs, chat messages one per line, arrays of runs) one pending
//! record per input, beside what the adapter holds until it is final. Formats an
//! adapter reads whole (OpenTelemetry exports, ATIF, ToolBench, a document that is
//! not an array of runs) and standard input are read before the merge. An adapter's
//! normalized records carry the envelope's timestamp as `time` and are merged like
//! native ones.
//!
//! The merge is exact when each input is in time order. An input that is not is
//! reported once, at the first record whose time goes back
//! ([`ProblemKind::OutOfOrder`]); its records are still merged as they come, so records
//! around that point may be checked out of order (sort the file, e.g. by its `time`,
//! and join again). A record without a usable time cannot be placed: it is a problem,
//! and left out.
//!
//! "As they come" is in the order the adapter hands records on, which is the order
//! reading the whole input gives, not always the file's: a log of several threads (a
//! Claude Code session and its sidechains, the sessions of a Codex rollout) gives its
//! records thread by thread, so a thread that starts before the one before it ends
//! goes back in time, and is reported so. A streamed input is therefore joined exactly
//! as it would be read whole: the same records, problems, order and locations.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::io::{self, BufRead, BufReader};
use std::path::Path;
use std::sync::Arc;

use crate::json::Segment;
use crate::trace::Record;
use crate::trace::adapters::{self, Entry, InputOptions, Reading, Stream};
use crate::trace::input::{Adapted, RecentBytes, TraceInput, entry_or_stopped, spool_input};
use crate::trace::json_index::{skip_ws, string_end, value_end};
use crate::trace::native::{decode_line, unreadable_line};
use crate::trace::reader::{DEFAULT_MAX_LINE_BYTES, LineContent, LineReader};
use crate::trace::record::Location;

/// The top-level field that orders joined records unless another is named.
pub const TIME_FIELD: &str = "time";

/// The field that orders joined records: a path into each record (`time`,
/// `meta.at`), as the user wrote it and parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeField {
    /// The path, as written (for messages).
    pub name: String,
    /// The path's steps.
    pub path: Vec<Segment>,
}

impl Default for TimeField {
    fn default() -> Self {
        TimeField {
            name: TIME_FIELD.into(),
            path: vec![Segment::Key(TIME_FIELD.into())],
        }
    }
}

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

/// What went wrong with one element of a joined input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// Not a record: not JSON, not an object, not UTF-8, too long.
    Malformed,
    /// A record without the time field, or whose time is not an RFC 3339 date-time.
    UnusableTime,
    /// The first record of an input whose time is earlier than the record before it.
    OutOfOrder,
    /// The input could not be read on.
    Unreadable,
    /// A problem the input's adapter found (a malformed element, an unknown format).
    Input(adapters::ProblemKind),
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
    /// How to fix it, when the adapter knows.
    pub hint: Option<String>,
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
    /// An element that is not a usable record, or an input that is out of time order.
    Problem(Problem),
}

/// One input of a join, opened.
pub enum JoinInput<R> {
    /// Native JSON Lines, streamed.
    Lines(R),
    /// A transcript its adapter streams ([`Stream`]): records are taken as it hands
    /// them on.
    Stream(Box<Stream>),
    /// What an adapter read from the whole input.
    Read(Box<Reading>),
}

impl<R> std::fmt::Debug for JoinInput<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JoinInput::Lines(_) => f.write_str("JoinInput::Lines"),
            JoinInput::Stream(stream) => f.debug_tuple("JoinInput::Stream").field(stream).finish(),
            JoinInput::Read(reading) => f.debug_tuple("JoinInput::Read").field(reading).finish(),
        }
    }
}

/// An input [`open`] opened.
pub type OpenedInput = JoinInput<Box<dyn BufRead + Send>>;

/// Opens the trace input at `path` for a join, recognizing its format as every other
/// command does ([`TraceInput`]): native JSON Lines and the transcript formats that
/// stream stay streams; anything else is read by its adapter. `-` is standard input:
/// a stream (it, or a pipe) is copied to a temporary file first and read from there
/// as a regular file is (`trace::spool`).
pub fn open(
    path: &Path,
    options: &InputOptions,
    max_line_bytes: Option<usize>,
) -> io::Result<OpenedInput> {
    Ok(open_quoted(path, options, max_line_bytes)?.0)
}

/// [`open`], with, for a stream, where its findings quote their records from: the
/// temporary file it is kept in, which lives as long as this.
pub fn open_quoted(
    path: &Path,
    options: &InputOptions,
    max_line_bytes: Option<usize>,
) -> io::Result<(OpenedInput, Option<RecentBytes>)> {
    let regular = !crate::trace::input::is_stdin(path) && std::fs::metadata(path)?.is_file();
    let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    let (opened, spool) = if regular {
        (TraceInput::open(path, options, Some(max))?, None)
    } else {
        // A stream can be read once, and the join reads its inputs side by side.
        let spool = spool_input(path)?;
        (
            TraceInput::open_spool(spool.clone(), options, max)?,
            Some(spool),
        )
    };
    let file = spool.as_ref().map_or(path, |spool| spool.path());
    let quoted = spool
        .as_ref()
        .map(|spool| RecentBytes::of_spool(spool.clone()));
    let opened: OpenedInput = match opened.into_adapted() {
        Some(Adapted::Stream(stream)) => JoinInput::Stream(stream),
        Some(Adapted::Read(reading)) => JoinInput::Read(reading),
        // Detected as native lines: stream the file from its start.
        None => JoinInput::Lines(Box::new(BufReader::with_capacity(
            1 << 16,
            std::fs::File::open(file)?,
        ))),
    };
    Ok((opened, quoted))
}

enum Feed<R> {
    Lines {
        reader: LineReader<R>,
        /// The pending line's text and location, while it waits its turn.
        text: String,
        loc: Location,
    },
    Records {
        entries: Entries,
        /// The pending record, while it waits its turn.
        pending: Option<Record<'static>>,
    },
}

/// The records and problems of an input an adapter reads, taken one at a time.
enum Entries {
    /// Read as the adapter hands them on, which it does in the order of reading the
    /// whole input.
    Stream(Box<Stream>),
    /// Read whole before the join.
    Read(std::vec::IntoIter<Entry>),
}

impl Entries {
    fn next(&mut self) -> Option<Entry> {
        match self {
            Entries::Stream(stream) => stream.next_entry().map(entry_or_stopped),
            Entries::Read(entries) => entries.next(),
        }
    }
}

struct Source<R> {
    file: Arc<Path>,
    feed: Feed<R>,
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
    /// The input whose record was yielded last: it reads its next record on the next
    /// call.
    refill: Option<usize>,
    max_line_bytes: usize,
    time: TimeField,
}

impl<R: BufRead> Join<R> {
    /// A join of `inputs`, each named by its file, ordered by `time`; ties in time keep
    /// this order.
    pub fn new(
        inputs: Vec<(Arc<Path>, JoinInput<R>)>,
        time: TimeField,
        max_line_bytes: usize,
    ) -> Join<R> {
        let sources = inputs
            .into_iter()
            .map(|(file, input)| Source {
                file,
                feed: match input {
                    JoinInput::Lines(input) => Feed::Lines {
                        reader: LineReader::with_max_line_bytes(input, max_line_bytes),
                        text: String::new(),
                        loc: Location::default(),
                    },
                    JoinInput::Stream(stream) => Feed::Records {
                        entries: Entries::Stream(stream),
                        pending: None,
                    },
                    JoinInput::Read(reading) => Feed::Records {
                        entries: Entries::Read(reading.entries.into_iter()),
                        pending: None,
                    },
                },
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
            time,
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
        let source = &mut self.sources[index];
        let record = match &mut source.feed {
            Feed::Lines { text, loc, .. } => match decode_line(text, loc.clone()) {
                Ok(record) => record,
                Err(message) => {
                    return Some(Item::Problem(Problem {
                        file: source.file.clone(),
                        loc: loc.clone(),
                        kind: ProblemKind::Malformed,
                        message: message.to_string(),
                        hint: None,
                    }));
                }
            },
            Feed::Records { pending, .. } => pending
                .take()
                .expect("bug: an input in the heap has a pending record"),
        };
        Some(Item::Record {
            file: &source.file,
            record,
        })
    }

    /// Reads input `index` up to its next record with a usable time, queueing the
    /// problems met on the way, and puts that record in the heap.
    fn fill(&mut self, index: usize) {
        let max = self.max_line_bytes;
        let source = &mut self.sources[index];
        let time = loop {
            let found = match &mut source.feed {
                Feed::Lines { reader, text, loc } => next_line(reader, text, loc, &self.time, max),
                Feed::Records { entries, pending } => {
                    next_record(entries, pending, &self.time, source.last)
                }
            };
            match found {
                Next::Done => return,
                Next::Problem(kind, loc, message, hint) => {
                    self.problems.push_back(Problem {
                        file: source.file.clone(),
                        loc,
                        kind,
                        message,
                        hint,
                    });
                    if matches!(
                        self.problems.back().map(|p| &p.kind),
                        Some(ProblemKind::Unreadable)
                    ) {
                        return;
                    }
                }
                Next::Timed(time) => break time,
            }
        };
        let back_in_time = source.last.is_some_and(|last| time < last);
        if back_in_time && !source.out_of_order_reported {
            source.out_of_order_reported = true;
            let loc = match &source.feed {
                Feed::Lines { loc, .. } => loc.clone(),
                Feed::Records { pending, .. } => pending
                    .as_ref()
                    .map(|record| record.loc.clone())
                    .unwrap_or_default(),
            };
            self.problems.push_back(Problem {
                file: source.file.clone(),
                loc,
                kind: ProblemKind::OutOfOrder,
                message: format!(
                    "record is earlier than the one before it in `{}`: --join merges files that are each in time order, so records near here may be checked out of order (later ones in this file are not reported again)",
                    source.file.display()
                ),
                hint: None,
            });
        }
        source.last = Some(source.last.map_or(time, |last| last.max(time)));
        self.heap.push(Reverse((time, index)));
    }
}

/// What reading an input on found.
enum Next {
    /// A record with a usable time, now pending (where it is is kept with it).
    Timed(Timestamp),
    /// A problem, and where it is.
    Problem(ProblemKind, Location, String, Option<String>),
    /// The end of the input.
    Done,
}

/// Reads the next non-blank line into `text`, with its time.
fn next_line<R: BufRead>(
    reader: &mut LineReader<R>,
    text: &mut String,
    loc: &mut Location,
    time: &TimeField,
    max: usize,
) -> Next {
    let line = match reader.next_line() {
        Ok(Some(line)) => line,
        Ok(None) => return Next::Done,
        Err(err) => {
            return Next::Problem(
                ProblemKind::Unreadable,
                Location::default(),
                format!("reading stopped: {err}"),
                None,
            );
        }
    };
    let here = line.location();
    let line_text = match line.content {
        LineContent::Text(line_text) => line_text,
        _ => {
            let message = unreadable_line(&line, max)
                .map(|err| err.to_string())
                .unwrap_or_default();
            return Next::Problem(ProblemKind::Malformed, here, message, None);
        }
    };
    match time_of_line(line_text, time) {
        Ok(at) => {
            text.clear();
            text.push_str(line_text);
            *loc = here;
            Next::Timed(at)
        }
        Err(message) => {
            // A line that is no record at all says so, rather than that its time is
            // missing.
            let (kind, message) = match decode_line(line_text, Location::default()) {
                Err(reason) => (ProblemKind::Malformed, reason.to_string()),
                Ok(_) => (ProblemKind::UnusableTime, message),
            };
            Next::Problem(kind, here, message, None)
        }
    }
}

/// Takes the next entry an adapter read: a record with its time, now pending, or a
/// problem. A record the adapter synthesized (the `missing` result of a call nothing
/// answered) has no time of its own: it keeps its place after the record before it,
/// `last`.
fn next_record(
    entries: &mut Entries,
    pending: &mut Option<Record<'static>>,
    time: &TimeField,
    last: Option<Timestamp>,
) -> Next {
    match entries.next() {
        None => Next::Done,
        Some(Entry::Problem(problem)) => Next::Problem(
            ProblemKind::Input(problem.kind),
            problem.loc,
            problem.message,
            problem.hint,
        ),
        Some(Entry::Record(record)) => {
            let found = record.lookup(&time.path);
            let raw = found
                .as_ref()
                .and_then(|found| found.to_value())
                .map(|v| v.to_string());
            let parsed = match &found {
                Some(found) => found.as_str().and_then(|text| Timestamp::parse(&text)),
                None if record.has_field("synthesized") => last,
                None => None,
            };
            match parsed {
                Some(at) => {
                    *pending = Some(record);
                    Next::Timed(at)
                }
                None => Next::Problem(
                    ProblemKind::UnusableTime,
                    record.loc.clone(),
                    unusable(time, raw.as_deref()),
                    None,
                ),
            }
        }
    }
}

/// Why a record's time cannot order it: it has none, or `raw` (JSON) is not one.
fn unusable(time: &TimeField, raw: Option<&str>) -> String {
    match raw {
        None => format!("record has no `{}` field to join by", time.name),
        Some(raw) => format!(
            "field `{}` is {raw}, not an RFC 3339 date-time such as \"2025-04-12T10:18:03Z\"",
            time.name
        ),
    }
}

/// The record's time, read by scanning the line along the time field's path (the
/// record itself is decoded only when its turn comes).
fn time_of_line(text: &str, time: &TimeField) -> Result<Timestamp, String> {
    let raw = raw_at(text, &time.path).ok_or_else(|| unusable(time, None))?;
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
        .ok_or_else(|| unusable(time, Some(raw)))
}

/// The raw JSON text at `path` in the raw JSON `text`, found by scanning, not decoding.
/// `text` is not validated yet: on invalid JSON this returns something or nothing,
/// never panics, and the line is then decoded to say what is wrong with it.
fn raw_at<'t>(mut text: &'t str, path: &[Segment]) -> Option<&'t str> {
    for segment in path {
        text = match segment {
            Segment::Key(key) => raw_member(text, key)?,
            Segment::Index(index) => raw_element(text, *index)?,
        };
    }
    Some(text)
}

/// The first member `key` of the raw object `text`. Recorders write `time` first, as a
/// rule, so the scan usually stops at the first member.
fn raw_member<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut at = skip_ws(bytes, 0, end);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    loop {
        at = skip_ws(bytes, at, end);
        if at >= end || bytes[at] != b'"' {
            return None;
        }
        let key_end = string_end(bytes, at);
        let name = text.get(at..key_end)?;
        at = skip_ws(bytes, key_end, end);
        at += usize::from(at < end && bytes[at] == b':');
        at = skip_ws(bytes, at, end);
        let value_end = value_end(bytes, at, end);
        if names(name, key) {
            return text.get(at..value_end);
        }
        at = skip_ws(bytes, value_end, end);
        if at < end && bytes[at] == b',' {
            at += 1;
        } else {
            return None;
        }
    }
}

/// Element `index` of the raw array `text`.
fn raw_element(text: &str, index: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let end = bytes.len();
    let mut at = skip_ws(bytes, 0, end);
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    at += 1;
    for current in 0.. {
        at = skip_ws(bytes, at, end);
        if at >= end || bytes[at] == b']' {
            return None;
        }
        let value_end = value_end(bytes, at, end);
        if current == index {
            return text.get(at..value_end);
        }
        at = skip_ws(bytes, value_end, end);
        if at < end && bytes[at] == b',' {
            at += 1;
        } else {
            return None;
        }
    }
    None
}

/// Whether the raw JSON string `raw` (quotes included) spells `key`.
fn names(raw: &str, key: &str) -> bool {
    let inner = raw.get(1..raw.len().saturating_sub(1)).unwrap_or_default();
    if inner.contains('\\') {
        serde_json::from_str::<String>(raw).is_ok_and(|decoded| decoded == key)
    } else {
        inner == key
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

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
            .map(|(name, text)| {
                (
                    Arc::from(Path::new(name)),
                    JoinInput::Lines(text.as_bytes()),
                )
            })
            .collect();
        let mut join = Join::new(inputs, TimeField::default(), 1 << 20);
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

    fn time_field(name: &str) -> TimeField {
        let path = crate::spec::parser::parse_path(name)
            .expect("a path")
            .segments;
        TimeField {
            name: name.into(),
            path,
        }
    }

    #[test]
    fn the_time_field_can_be_any_path() {
        let a = "{\"id\":1,\"meta\":{\"at\":[\"2025-01-01T00:00:03Z\"]}}\n{\"meta\":{\"at\":[]}}\n{\"meta\":{\"at\":[\"x\"]}}\n";
        let b = "{\"meta\": {\"other\": 1, \"at\": [\"2025-01-01T00:00:02Z\"]}}\n";
        let inputs = vec![
            (Arc::from(Path::new("a")), JoinInput::Lines(a.as_bytes())),
            (Arc::from(Path::new("b")), JoinInput::Lines(b.as_bytes())),
        ];
        let mut join = Join::new(inputs, time_field("meta.at[0]"), 1 << 20);
        let mut seen = Vec::new();
        while let Some(item) = join.next() {
            seen.push(match item {
                Item::Record { file, record } => format!("{}:{}", file.display(), record.loc.line),
                Item::Problem(p) => format!(
                    "{:?} {}:{} {}",
                    p.kind,
                    p.file.display(),
                    p.loc.line,
                    p.message
                ),
            });
        }
        assert_eq!(
            seen,
            [
                "b:1",
                "a:1",
                "UnusableTime a:2 record has no `meta.at[0]` field to join by",
                "UnusableTime a:3 field `meta.at[0]` is \"x\", not an RFC 3339 date-time such as \"2025-04-12T10:18:03Z\"",
            ]
        );
    }

    type Opened = JoinInput<Box<dyn BufRead + Send>>;

    /// Everything a join of `inputs` yields, in full: each record's file and all of it
    /// (fields, location), each problem's kind, file, location, message and hint.
    fn everything(inputs: Vec<(Arc<Path>, Opened)>) -> Vec<String> {
        let mut join = Join::new(inputs, TimeField::default(), DEFAULT_MAX_LINE_BYTES);
        let mut seen = Vec::new();
        while let Some(item) = join.next() {
            seen.push(match item {
                Item::Record { file, record } => format!("{} {record:?}", file.display()),
                Item::Problem(p) => format!(
                    "{:?} {} at {:?}: {} ({:?})",
                    p.kind,
                    p.file.display(),
                    p.loc,
                    p.message,
                    p.hint
                ),
            });
        }
        seen
    }

    /// The input at `path` as the join read it before it streamed transcripts: what
    /// its adapter read, taken whole from the streamed reading.
    fn read_before(path: &Path) -> Opened {
        match TraceInput::open(path, &InputOptions::default(), None)
            .unwrap()
            .into_reading()
        {
            Some(reading) => JoinInput::Read(Box::new(reading)),
            None => JoinInput::Lines(Box::new(io::Cursor::new(std::fs::read(path).unwrap()))),
        }
    }

    /// The input at `path` read whole from memory by its adapter.
    fn read_whole(path: &Path) -> Opened {
        let bytes = std::fs::read(path).unwrap();
        match TraceInput::from_bytes(&bytes, &InputOptions::default(), None).into_reading() {
            Some(reading) => JoinInput::Read(Box::new(reading)),
            None => JoinInput::Lines(Box::new(io::Cursor::new(bytes))),
        }
    }

    fn opened(path: &Path) -> Opened {
        open(path, &InputOptions::default(), None).unwrap()
    }

    /// Asserts that a join of `paths` (each opened by `open`, which streams what
    /// streams) yields exactly what it yields with each input read whole, and what it
    /// yielded when it read every input whole. Returns how many inputs streamed.
    #[track_caller]
    fn joins_as_read_whole(paths: &[&Path]) -> usize {
        let name = |path: &Path| Arc::from(path);
        let streamed: Vec<_> = paths.iter().map(|p| (name(p), opened(p))).collect();
        let count = streamed
            .iter()
            .filter(|(_, input)| matches!(input, JoinInput::Stream(_)))
            .count();
        let streamed = everything(streamed);
        let before = everything(paths.iter().map(|p| (name(p), read_before(p))).collect());
        let whole = everything(paths.iter().map(|p| (name(p), read_whole(p))).collect());
        assert_eq!(streamed, before, "{paths:?}");
        assert_eq!(streamed, whole, "{paths:?}");
        count
    }

    /// Every trace file of the repository in a transcript format: the examples, the
    /// real recorded transcripts and the coding agents' logs.
    fn corpus() -> Vec<std::path::PathBuf> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut files = Vec::new();
        let mut dirs: Vec<_> = [
            "traces",
            "tests/fixtures/realdata",
            "tests/fixtures/coding_agents",
        ]
        .iter()
        .map(|dir| root.join(dir))
        .collect();
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path
                    .extension()
                    .is_some_and(|ext| ext == "json" || ext == "jsonl")
                {
                    files.push(path);
                }
            }
        }
        files.sort();
        files
    }

    #[test]
    fn every_example_joins_streamed_as_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        // A witness whose records fall among the examples' times, before and after.
        let witness = dir.path().join("witness.jsonl");
        let times = [
            "2024-01-01T00:00:00Z",
            "2025-04-12T10:18:03Z",
            "2025-11-07T09:01:30Z",
            "2025-11-07T09:01:30Z",
            "2026-01-01T00:00:00Z",
        ];
        let text: String = times
            .iter()
            .map(|time| format!("{{\"time\":\"{time}\",\"event\":\"seen\"}}\n"))
            .collect();
        std::fs::write(&witness, text).unwrap();
        let files = corpus();
        assert!(files.len() > 50, "{files:?}");
        let mut streamed = 0;
        for (index, file) in files.iter().enumerate() {
            // Each alone, with the witness, and with the next one.
            streamed += joins_as_read_whole(&[file]);
            joins_as_read_whole(&[&witness, file]);
            if let Some(next) = files.get(index + 1) {
                joins_as_read_whole(&[file, next]);
            }
        }
        // The Claude Code and Codex logs, MCP logs and arrays of runs among them.
        assert!(streamed >= 10, "{streamed} of {} streamed", files.len());
    }

    /// A Claude Code session whose sidechain's records fall between its main thread's,
    /// with `padding` more messages at the end of the main thread.
    fn threads_log(padding: usize) -> String {
        let line = |uuid: &str, side: bool, ty: &str, second: u32, message: &str| {
            format!(
                "{{\"type\":\"{ty}\",\"sessionId\":\"s1\",\"uuid\":\"{uuid}\",\"isSidechain\":{side},\"timestamp\":\"2025-01-01T00:00:{second:02}Z\",\"message\":{message}}}\n"
            )
        };
        let call = |id: &str| {
            format!(
                r#"{{"id":"m-{id}","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"create","input":{{}}}}]}}"#
            )
        };
        let result = |id: &str| {
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"ok"}}]}}"#
            )
        };
        let mut text = String::new();
        text += &line("u1", false, "user", 1, r#"{"role":"user","content":"go"}"#);
        text += &line("u2", false, "assistant", 2, &call("a"));
        text += &line("x1", true, "assistant", 3, &call("x"));
        text += &line("u3", false, "user", 4, &result("a"));
        text += &line("x2", true, "user", 5, &result("x"));
        text += &line(
            "u4",
            false,
            "assistant",
            6,
            r#"{"id":"m-done","role":"assistant","content":[{"type":"text","text":"done"}]}"#,
        );
        for n in 0..padding {
            text += &line(
                &format!("p{n}"),
                false,
                "user",
                7 + (n % 50) as u32,
                r#"{"role":"user","content":"and one more thing, to make the log longer"}"#,
            );
        }
        text
    }

    #[test]
    fn a_log_given_thread_by_thread_joins_in_that_order() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("log");
        let witness = dir.path().join("witness");
        std::fs::write(&log, threads_log(0)).unwrap();
        std::fs::write(
            &witness,
            "{\"time\":\"2025-01-01T00:00:03.5Z\"}\n{\"time\":\"2025-01-01T00:01:00Z\"}\n",
        )
        .unwrap();
        let inputs = vec![
            (Arc::from(Path::new("log")), opened(&log)),
            (Arc::from(Path::new("witness")), opened(&witness)),
        ];
        assert!(
            matches!(inputs[0].1, JoinInput::Stream(_)),
            "{:?}",
            inputs[0].1
        );
        let mut join = Join::new(inputs, TimeField::default(), 1 << 20);
        let mut seen = Vec::new();
        while let Some(item) = join.next() {
            seen.push(match item {
                Item::Record { file, record } => format!("{}:{}", file.display(), record.loc.line),
                Item::Problem(p) => format!("{:?} {}:{}", p.kind, p.file.display(), p.loc.line),
            });
        }
        // The main thread first, then the sidechain, whose first record goes back in
        // time: reported once, and merged as it comes.
        assert_eq!(
            seen,
            [
                "log:1",
                "log:2",
                "witness:1",
                "log:4",
                "log:6",
                "OutOfOrder log:3",
                "log:3",
                "log:5",
                "witness:2",
            ]
        );
        assert_eq!(joins_as_read_whole(&[&log, &witness]), 1);
        // Longer than what is read before a first pass: the threads' ends are found
        // first, and the records stream from then on.
        let long = threads_log(40);
        assert!(long.len() > 4 * 2048);
        std::fs::write(&log, long).unwrap();
        assert_eq!(joins_as_read_whole(&[&log, &witness]), 1);
        assert_eq!(joins_as_read_whole(&[&witness, &log]), 1);
    }

    #[test]
    fn any_format_joins_by_the_time_its_adapter_gives_each_record() {
        let codex = include_bytes!(
            "../../traces/reconcile_before_retry/pass/lookup-found-then-note-codex.jsonl"
        );
        let reading = TraceInput::from_bytes(codex, &InputOptions::default(), None)
            .into_reading()
            .expect("a Codex rollout is read by its adapter");
        let records = reading
            .entries
            .iter()
            .filter(|entry| matches!(entry, Entry::Record(_)))
            .count();
        assert!(records > 3, "{records}");
        let native = "{\"time\":\"2025-11-07T09:01:14Z\",\"event\":\"x\"}\n{\"time\":\"2025-11-07T09:01:50Z\",\"event\":\"y\"}\n";
        let inputs = vec![
            (
                Arc::from(Path::new("codex")),
                JoinInput::Read(Box::new(reading)),
            ),
            (
                Arc::from(Path::new("fixture")),
                JoinInput::Lines(native.as_bytes()),
            ),
        ];
        let mut join = Join::new(inputs, TimeField::default(), 1 << 20);
        let (mut times, mut files, mut synthesized) = (Vec::new(), Vec::new(), 0);
        while let Some(item) = join.next() {
            let Item::Record { file, record } = item else {
                panic!("{item:?}");
            };
            let time = record
                .lookup(&[Segment::Key("time".into())])
                .and_then(|found| found.as_str().and_then(|t| Timestamp::parse(&t)));
            match time {
                Some(time) => times.push(time),
                None => {
                    assert!(record.has_field("synthesized"), "{record:?}");
                    synthesized += 1;
                }
            }
            files.push(file.display().to_string());
        }
        assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{times:?}");
        // The synthesized `missing` result, without a time, kept its place.
        assert!(synthesized > 0);
        assert_eq!(files.iter().filter(|f| *f == "codex").count(), records);
        assert_eq!(files.iter().filter(|f| *f == "fixture").count(), 2);
        // The fixture's records fall between the rollout's, not after them all.
        assert_ne!(files.last().map(String::as_str), Some("fixture"));
        assert_ne!(files.first().map(String::as_str), Some("fixture"));
    }
}
