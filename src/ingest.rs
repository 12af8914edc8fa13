//! `convert`: a trace file of any format as normalized records, one JSON line each, so
//! users see exactly what the specs see.
//!
//! The file is read through [`TraceInput`], as `check` reads it; problems come back as
//! diagnostics, records are written to the writer the caller hands in.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::trace::adapters::unanswered::{Unanswered, with_missing};
use crate::trace::adapters::{Detected, InputOptions};
use crate::trace::input::{Item, TraceInput};
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
    if let Some(warning) = opened.detected().warning.clone() {
        converted
            .diagnostics
            .push(Diagnostic::from_problem(&file, warning));
    }
    // The `missing` results the checker synthesizes at the end of each trace are shown
    // where it adds them: after the last record of their trace. An adapter's reading is
    // in memory already, so they go in place, and a streamed transcript of many traces
    // is read whole for it; native lines and a streamed transcript of one trace stream,
    // as one trace whose end is the end of the input.
    let whole = opened.reading().is_some() || opened.traces() > 1;
    let (opened, mut unanswered) = match whole {
        true => {
            let mut reading = opened.into_reading().expect("bug: a reading was there");
            let many = reading.traces > 1;
            let (entries, synthesized) = with_missing(std::mem::take(&mut reading.entries), many);
            reading.entries = entries;
            converted.synthesized = synthesized;
            let input = TraceInput::read(reading);
            at_end = input.detected_at_end();
            (input, None)
        }
        false => (opened, Some(Unanswered::new(false))),
    };
    opened.try_for_each(|item| {
        match item {
            Item::Record(record) => {
                writeln!(out, "{}", record_line(&record, path))?;
                converted.records += 1;
                if let Some(unanswered) = unanswered.as_mut() {
                    unanswered.see(&record);
                }
            }
            Item::Problem(problem) => converted
                .diagnostics
                .push(Diagnostic::from_problem(&file, problem)),
            Item::Stopped(err) => converted
                .diagnostics
                .push(Diagnostic::unreadable(path, &err)),
            Item::TraceEnd(_) => {}
        }
        Ok::<(), io::Error>(())
    })?;
    converted.detected = Some(at_end.get());
    for record in unanswered.map(Unanswered::finish).unwrap_or_default() {
        writeln!(out, "{}", record_line(&record, path))?;
        converted.records += 1;
        converted.synthesized += 1;
    }
    Ok(converted)
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
