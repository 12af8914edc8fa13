//! Where each `--trace-by` trace of a file ends, found by a first pass, so that the
//! checker ends each trace at its last record and frees it.
//!
//! Split by a field of the user's choosing, a file's traces may interleave in any way,
//! so none is known to be over before the input is. Memory would then hold every
//! trace the file has had, ended or not. A first pass over a file over
//! [`SURVEY_AFTER`] bytes (a MiB, as for the first pass over a transcript log) reads it
//! the way the check will (the same adapter, the same records in the same order) and
//! notes, for each trace name, the number of the last record that carries it. The
//! check then ends a trace as soon as that record is checked
//! ([`super::Monitor::end_trace`]), and what its end finds is reported where the end of
//! the input would report it: the report is the same either way, and memory follows
//! the traces in flight, plus one name and one number a trace until it ends.
//!
//! Only a regular file has a first pass (a pipe can be read once), and only when its
//! records stream (a transcript read whole is already in memory). An
//! [`super::Observer`] sees a trace's `missing` results and end when its last record
//! is checked, as it does for the traces adapters end. A file changed between the two
//! passes can end a trace too early; its later records then start a new trace of the
//! same name (nothing worse).

use std::collections::VecDeque;
use std::path::Path;

use rustc_hash::FxHashMap;

use crate::json::Segment;
use crate::trace::adapters::{InputOptions, SURVEY_AFTER};
use crate::trace::input::{Item, TraceInput, is_stdin};

/// The traces of a file still to end, each by the number (from 1) of its last record.
#[derive(Debug, Default)]
pub(super) struct TraceEnds {
    /// Trace names, by the record after which each ends, that first.
    ends: VecDeque<(u64, String)>,
    /// Records seen so far.
    records: u64,
}

impl TraceEnds {
    /// Reads the file at `path` through once, as `check` will, to find where each
    /// trace `by` names ends; `None` when it is not a regular file over
    /// [`SURVEY_AFTER`] bytes or cannot be read (the check itself then says why).
    pub(super) fn survey(
        path: &Path,
        by: &[Segment],
        input: &InputOptions,
        max_line_bytes: Option<usize>,
    ) -> Option<TraceEnds> {
        if is_stdin(path) {
            return None;
        }
        let meta = std::fs::metadata(path).ok()?;
        if !meta.is_file() || meta.len() <= SURVEY_AFTER {
            return None;
        }
        let opened = TraceInput::open(path, input, max_line_bytes).ok()?;
        let mut last: FxHashMap<String, u64> = FxHashMap::default();
        let mut records = 0;
        opened.for_each(|item| {
            if let Item::Record(record) = item {
                records += 1;
                // A record that names no trace is in none: it ends nothing.
                super::with_trace_name(by, &record, |name| match last.get_mut(name) {
                    Some(at) => *at = records,
                    None => {
                        last.insert(name.to_string(), records);
                    }
                });
            }
        });
        let mut ends: Vec<(u64, String)> = last.into_iter().map(|(name, at)| (at, name)).collect();
        ends.sort_unstable();
        Some(TraceEnds {
            ends: ends.into(),
            records: 0,
        })
    }

    /// Counts a record, and returns the name of the trace it is the last record of,
    /// if any: that trace ends once the record is checked.
    pub(super) fn record(&mut self) -> Option<String> {
        self.records += 1;
        // Each record carries one name, so at most one trace ends at it.
        while self.ends.front().is_some_and(|(at, _)| *at < self.records) {
            self.ends.pop_front(); // a file changed since the first pass
        }
        if self.ends.front()?.0 == self.records {
            return self.ends.pop_front().map(|(_, name)| name);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn surveyed(text: &str) -> Option<Vec<Option<String>>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, text).unwrap();
        let by = [Segment::Key("case".into())];
        let mut ends = TraceEnds::survey(&path, &by, &InputOptions::default(), None)?;
        let records = text.lines().filter(|l| !l.trim().is_empty()).count();
        Some((0..records).map(|_| ends.record()).collect())
    }

    #[test]
    fn each_trace_ends_at_its_last_record() {
        let mut text = String::new();
        for (case, n) in [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5), ("c", 6)] {
            text.push_str(&format!(
                "{{\"case\":\"{case}\",\"kind\":\"call\",\"tool\":\"t\",\"call_id\":\"{n}\",\"args\":{{\"pad\":\"{}\"}}}}\n",
                "x".repeat(400)
            ));
        }
        // A record of no trace and a line that is no record end nothing, and a
        // number names its trace as its JSON text.
        text.push_str("{\"kind\":\"call\",\"tool\":\"t\"}\nnot json\n");
        text.push_str("{\"case\":7,\"kind\":\"call\",\"tool\":\"t\"}\n");
        let ends = surveyed(&text).expect("the file is large enough to survey");
        let name = |n: &str| Some(n.to_string());
        assert_eq!(
            ends,
            vec![
                None,
                None,
                name("a"),
                None,
                name("b"),
                name("c"),
                None,
                name("7"),
                None
            ]
        );
    }

    #[test]
    fn a_small_file_has_no_first_pass() {
        assert_eq!(
            surveyed("{\"case\":\"a\",\"kind\":\"call\",\"tool\":\"t\"}\n"),
            None
        );
    }
}
