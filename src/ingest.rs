//! `convert`: a trace file of any format as normalized records, one JSON line each, so
//! users see exactly what the specs see.
//!
//! The file is read through [`TraceInput`], as `check` reads it; problems come back as
//! diagnostics, records are written to the writer the caller hands in.

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::trace::adapters::unanswered::{Unanswered, with_missing};
use crate::trace::adapters::{Detected, InputOptions};
use crate::trace::input::{DetectedAtEnd, Item, RecentBytes, TraceInput};
use crate::trace::{Fields, Record};

/// What converting one file gave.
#[derive(Debug, Default)]
pub struct Converted {
    /// Problems of the file: unreadable, malformed elements, no known format.
    pub diagnostics: Vec<Diagnostic>,
    /// Records written, the synthesized ones included.
    pub records: u64,
    /// `missing` results written for calls no result answers by the end of their
    /// trace, as the checker synthesizes them.
    pub synthesized: u64,
    /// The file's format and layout (`None` when it could not be read).
    pub detected: Option<Detected>,
}

/// Writes the normalized records of one file to `out` as JSON Lines: each record's
/// fields, the canonical ones first, then `at`, where it comes from (file, line, JSON
/// pointer). Secrets are masked, as in every output. Problems come back as
/// diagnostics; an error is a failure to write to `out`.
pub fn convert_path(
    path: &Path,
    input: &InputOptions,
    max_line_bytes: Option<usize>,
    out: &mut dyn Write,
) -> io::Result<Converted> {
    let file: Arc<Path> = Arc::from(path);
    let mut converted = Converted::default();
    let opened = match TraceInput::open(path, input, max_line_bytes) {
        Ok(opened) => opened,
        Err(err) => {
            converted
                .diagnostics
                .push(Diagnostic::unreadable(path, &err));
            return Ok(converted);
        }
    };
    let mut at_end = opened.detected_at_end();
    // A stream's problems quote their lines as they are found, as `check`'s findings do.
    let recent = opened.recent_bytes();
    if let Some(warning) = opened.detected().warning.clone() {
        let warning = quote(Diagnostic::from_problem(&file, warning), recent.as_ref());
        converted.diagnostics.push(warning);
    }
    // The `missing` results the checker synthesizes at the end of each trace are shown
    // where it adds them: after the last record of their trace. An adapter's reading is
    // in memory already, so they go in place; a stream's records are written as they
    // come, each held back only while a trace before it may still get a `missing`
    // result after its last record (see [`Placer`]).
    if opened.reading().is_none() {
        let placer = Some(Placer::new(opened.traces() > 1));
        return convert_items(
            opened,
            (path, &file, recent),
            out,
            placer,
            converted,
            at_end,
        );
    }
    let mut reading = opened.into_reading().expect("bug: a reading was there");
    let many = reading.traces > 1;
    let (entries, synthesized) = with_missing(std::mem::take(&mut reading.entries), many);
    reading.entries = entries;
    converted.synthesized = synthesized;
    let input = TraceInput::read(reading);
    at_end = input.detected_at_end();
    convert_items(input, (path, &file, recent), out, None, converted, at_end)
}

/// `diagnostic`, quoting its record's line from `recent`, the bytes of the stream it
/// was found in, if it was found in one.
fn quote(mut diagnostic: Diagnostic, recent: Option<&RecentBytes>) -> Diagnostic {
    if let Some(recent) = recent {
        crate::check::quote(&mut diagnostic, recent);
    }
    diagnostic
}

/// Writes the records of `input` (and, with a `placer`, the `missing` results of the
/// calls its traces leave open, in place), and collects its problems, each quoting its
/// line from `recent` when the input is a stream.
fn convert_items(
    input: TraceInput<'_>,
    (path, file, recent): (&Path, &Arc<Path>, Option<RecentBytes>),
    out: &mut dyn Write,
    mut placer: Option<Placer>,
    mut converted: Converted,
    at_end: DetectedAtEnd,
) -> io::Result<Converted> {
    input.try_for_each(|item| {
        match item {
            Item::Record(record) => {
                let line = record_line(&record, path);
                converted.records += 1;
                match placer.as_mut() {
                    Some(placer) => placer.record(&record, line, out)?,
                    None => writeln!(out, "{line}")?,
                }
            }
            Item::Problem(problem) => converted.diagnostics.push(quote(
                Diagnostic::from_problem(file, problem),
                recent.as_ref(),
            )),
            Item::Stopped(err) => converted
                .diagnostics
                .push(Diagnostic::unreadable(path, &err)),
            Item::TraceEnd(name) => {
                if let Some(placer) = placer.as_mut() {
                    placer.end(&Some(name), path, out)?;
                }
            }
        }
        Ok::<(), io::Error>(())
    })?;
    converted.detected = Some(at_end.get());
    if let Some(placer) = placer {
        let placed = placer.finish(path, out)?;
        converted.records += placed;
        converted.synthesized += placed;
    }
    Ok(converted)
}

/// Writes a stream's records with the `missing` results of the calls each trace
/// leaves open right after the trace's last record, as [`with_missing`] places them in
/// a reading held whole, without holding the stream: a line is held back only while
/// an earlier line is the last so far of a trace with a call still open, which may
/// yet get its `missing` results after it. A trace's open calls are answered where the
/// stream says it ended ([`Item::TraceEnd`]), or at the end of the input.
struct Placer {
    unanswered: Unanswered,
    /// Lines not written yet, each with the `missing` results placed after it.
    held: VecDeque<(String, Vec<String>)>,
    /// The number (from 0, over the whole output) of the first line in `held`.
    first: u64,
    /// The number of the last record line of each trace so far, by trace number.
    last: Vec<u64>,
    /// The traces with a call still open (by number), by the number of their last line.
    open: BTreeMap<u64, usize>,
    /// `missing` results written.
    placed: u64,
}

impl Placer {
    /// `many`: records name their trace in a `trace` field.
    fn new(many: bool) -> Placer {
        Placer {
            unanswered: Unanswered::new(many),
            held: VecDeque::new(),
            first: 0,
            last: Vec::new(),
            open: BTreeMap::new(),
            placed: 0,
        }
    }

    fn record(&mut self, record: &Record<'_>, line: String, out: &mut dyn Write) -> io::Result<()> {
        let trace = self.unanswered.see(record);
        let number = self.first + self.held.len() as u64;
        self.held.push_back((line, Vec::new()));
        match self.last.get_mut(trace) {
            Some(last) => {
                self.open.remove(last);
                *last = number;
            }
            None => self.last.push(number),
        }
        if self.unanswered.has_open(trace) {
            self.open.insert(number, trace);
        }
        self.write_ready(out)
    }

    /// Trace `name` has ended: its open calls' `missing` results go after its last line.
    fn end(&mut self, name: &Option<String>, path: &Path, out: &mut dyn Write) -> io::Result<()> {
        // A trace with no call open has nothing to place (its lines may be written).
        if let Some(trace) = self.unanswered.trace_named(name)
            && self.open.remove(&self.last[trace]).is_some()
        {
            self.place(trace, path);
        }
        self.write_ready(out)
    }

    /// The input has ended, and with it every trace. Returns how many `missing`
    /// results were written.
    fn finish(mut self, path: &Path, out: &mut dyn Write) -> io::Result<u64> {
        // In the order the traces were met, as [`with_missing`] places them.
        let mut open: Vec<usize> = std::mem::take(&mut self.open).into_values().collect();
        open.sort_unstable();
        for trace in open {
            self.place(trace, path);
        }
        self.write_ready(out)?;
        Ok(self.placed)
    }

    /// Places the `missing` results of trace number `trace` after its last line, which
    /// is held, as the trace had a call open.
    fn place(&mut self, trace: usize, path: &Path) {
        let missing = self.unanswered.end(trace);
        self.placed += missing.len() as u64;
        let after = &mut self.held[(self.last[trace] - self.first) as usize].1;
        after.extend(missing.iter().map(|record| record_line(record, path)));
    }

    /// Writes every held line that no open trace's `missing` results can follow any
    /// more: those up to the earliest last line of a trace with a call open.
    fn write_ready(&mut self, out: &mut dyn Write) -> io::Result<()> {
        let until = self
            .open
            .keys()
            .next()
            .map_or(self.first + self.held.len() as u64, |&at| at);
        while self.first < until {
            let Some((line, after)) = self.held.pop_front() else {
                break;
            };
            writeln!(out, "{line}")?;
            for line in after {
                writeln!(out, "{line}")?;
            }
            self.first += 1;
        }
        Ok(())
    }
}

/// The canonical fields, in the order `convert` writes them.
const CANONICAL: &[&str] = &[
    "kind",
    "tool",
    "call_id",
    "status",
    "args",
    "args_error",
    "output",
    "output_text",
    "error",
    "error_text",
    "role",
    "text",
    "trace",
    "seq",
    "time",
];

/// One record as a JSON line, with its origin under `at`.
pub(crate) fn record_line(record: &Record<'_>, file: &Path) -> String {
    let mut line = String::with_capacity(256);
    line.push('{');
    let mut member = |name: &str, value: &dyn std::fmt::Display| {
        if line.len() > 1 {
            line.push(',');
        }
        json_string(&mut line, name);
        line.push(':');
        let _ = write!(line, "{value}");
    };
    // A built object is printed as the same object of values is.
    let decoded;
    let map = match &record.fields {
        Fields::Raw(fields) => {
            for (name, raw) in fields {
                member(name, &raw.get());
            }
            None
        }
        Fields::Owned(map) => Some(map),
        Fields::Built(built) => {
            decoded = built.to_map();
            Some(&decoded)
        }
    };
    if let Some(map) = map {
        for key in CANONICAL {
            if let Some(value) = map.get(*key) {
                member(key, value);
            }
        }
        for (key, value) in map {
            if !CANONICAL.contains(&key.as_str()) {
                member(key, value);
            }
        }
    }
    // `at` as serde_json writes the object: its members in key order.
    let mut at = String::from("{\"file\":");
    json_string(&mut at, &file.display().to_string());
    let _ = write!(at, ",\"line\":{},\"pointer\":", record.loc.line);
    json_string(&mut at, &record.loc.pointer);
    at.push('}');
    member("at", &at);
    line.push('}');
    match crate::redact::redact(&line) {
        std::borrow::Cow::Borrowed(_) => line,
        std::borrow::Cow::Owned(redacted) => redacted,
    }
}

/// Appends `text` as a JSON string, escaped as serde_json writes it.
fn json_string(out: &mut String, text: &str) {
    out.push('"');
    crate::json::write_string_body(text, |piece| out.push_str(piece));
    out.push('"');
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;
    use crate::trace::adapters::{Choices, Entry};

    /// An MCP log of interleaved sessions: some requests answered, some with an error,
    /// some never; a reused request id; a line that is not JSON now and then.
    fn mcp_log(choices: &mut Choices, lines: usize, live: u64) -> String {
        let mut out = String::new();
        let mut open: Vec<Vec<u64>> = vec![Vec::new(); live as usize];
        let mut next_id = vec![1u64; live as usize];
        let mut session = (0..live).collect::<Vec<_>>();
        for n in 0..lines {
            let lane = choices.below(live) as usize;
            let s = session[lane];
            let head = format!(r#"{{"session_id":"s{s}","direction":"#);
            if !open[lane].is_empty() && choices.one_in(2) {
                let which = choices.below(open[lane].len() as u64) as usize;
                let id = open[lane].remove(which);
                let body = if choices.one_in(4) {
                    r#""error":{"code":-32000,"message":"timeout"}"#
                } else {
                    r#""result":{"content":[{"type":"text","text":"ok"}],"isError":false}"#
                };
                let _ = writeln!(
                    out,
                    r#"{head}"recv","message":{{"jsonrpc":"2.0","id":{id},{body}}}}}"#
                );
            } else if choices.one_in(40) {
                out.push_str("not json\n");
            } else {
                // Now and then an id used before in the session.
                let id = if choices.one_in(10) { 1 } else { next_id[lane] };
                next_id[lane] += 1;
                open[lane].push(id);
                let _ = writeln!(
                    out,
                    r#"{head}"send","message":{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"op","arguments":{{"n":{n}}}}}}}}}"#
                );
            }
            // A session ends now and then (its open requests stay open); a new one
            // takes its lane.
            if choices.one_in(150) {
                session[lane] += live;
                open[lane].clear();
                next_id[lane] = 1;
            }
        }
        out
    }

    /// What `convert` wrote for a transcript of many traces when it read it whole: the
    /// records of the whole reading, with the `missing` results placed after the last
    /// record of their trace.
    fn read_whole(path: &Path) -> (String, u64) {
        let opened = TraceInput::open(path, &InputOptions::default(), None).unwrap();
        let reading = opened.into_reading().unwrap();
        let (entries, synthesized) = with_missing(reading.entries, reading.traces > 1);
        let mut out = String::new();
        for entry in entries {
            if let Entry::Record(record) = entry {
                out.push_str(&record_line(&record, path));
                out.push('\n');
            }
        }
        (out, synthesized)
    }

    #[test]
    fn a_streamed_log_gets_its_missing_results_where_a_whole_reading_places_them() {
        let dir = tempfile::tempdir().unwrap();
        let mut choices = Choices(13);
        // Small logs, and logs past the first MiB, which a first pass reads through.
        for (round, lines) in [300, 2_000, 12_000, 12_000].into_iter().enumerate() {
            let live = 1 + choices.below(24);
            let path = dir.path().join(format!("log{round}.jsonl"));
            std::fs::write(&path, mcp_log(&mut choices, lines, live)).unwrap();
            let opened = TraceInput::open(&path, &InputOptions::default(), None).unwrap();
            assert!(opened.reading().is_none(), "the log streams");
            assert!(opened.traces() > 1, "the log has many sessions");
            drop(opened);
            let (want, synthesized) = read_whole(&path);
            let mut have = Vec::new();
            let converted = convert_path(&path, &InputOptions::default(), None, &mut have).unwrap();
            let have = String::from_utf8(have).unwrap();
            assert!(
                synthesized > 0,
                "round {round}: some calls are never answered"
            );
            assert_eq!(converted.synthesized, synthesized, "round {round}");
            assert_eq!(converted.records, want.lines().count() as u64);
            assert!(
                have == want,
                "round {round}: {lines} lines, {live} sessions at once"
            );
        }
    }
}
