//! From a trace file in any format to the checker, or to `convert`.
//!
//! [`crate::trace::adapters::open`] recognizes what a file holds. Native JSONL stays on
//! the streaming path ([`crate::check::check_reader`]), so a file of any size checks in
//! bounded memory; other formats are read whole, adapted to normalized records, and fed
//! to a [`Monitor`] one record at a time, each trace of a file on its own
//! ([`check_reading`]). Coverage and shrinking watch the checker through an
//! [`Observer`] ([`check_path_observed`]). `convert` writes the same records as JSON
//! Lines.

use std::io::{self, BufReader, Write};
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::check::{CheckOptions, Monitor, Observer, Outcome, check_reader_observed};
use crate::diagnostic::{Code, Diagnostic, TraceSite};
use crate::machine::Machine;
use crate::spec::ast::Segment;
use crate::trace::adapters::{
    self, Detected, Entry, InputOptions, Opened, Problem, ProblemKind, Reading,
};
use crate::trace::reader::{DEFAULT_MAX_LINE_BYTES, LineReader};
use crate::trace::{Fields, Location, Record, native};

/// What checking one file gave, and what was recognized in it (`None` when the file
/// could not be read).
#[derive(Debug)]
pub struct Checked {
    pub outcome: Outcome,
    pub detected: Option<Detected>,
}

/// Checks one trace file of any format.
pub fn check_path(
    specs: &[Machine],
    path: &Path,
    options: &CheckOptions,
    input: &InputOptions,
) -> Checked {
    check_path_observed(specs, path, options, input, None)
}

/// [`check_path`], showing every move of every instance to `observer` (coverage and
/// shrinking watch the checker this way).
pub fn check_path_observed(
    specs: &[Machine],
    path: &Path,
    options: &CheckOptions,
    input: &InputOptions,
    observer: Option<Observer<'_>>,
) -> Checked {
    let file: Arc<Path> = Arc::from(path);
    let max = options.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    let opened = match adapters::open(path, input, max) {
        Ok(opened) => opened,
        Err(err) => {
            return Checked {
                outcome: Outcome {
                    diagnostics: vec![unreadable(&file, &err)],
                    ..Outcome::default()
                },
                detected: None,
            };
        }
    };
    match opened {
        Opened::Native(detected) => {
            let outcome = match std::fs::File::open(path) {
                Ok(handle) => check_reader_observed(
                    specs,
                    file,
                    BufReader::with_capacity(1 << 16, handle),
                    options,
                    observer,
                ),
                Err(err) => Outcome {
                    diagnostics: vec![unreadable(&file, &err)],
                    ..Outcome::default()
                },
            };
            Checked {
                outcome,
                detected: Some(detected),
            }
        }
        Opened::Read(reading) => {
            let detected = reading.detected.clone();
            Checked {
                outcome: check_reading(specs, file, reading, options, observer),
                detected: Some(detected),
            }
        }
    }
}

/// Checks what an adapter read from one input (`file` names it in diagnostics),
/// showing every move to `observer` when there is one.
pub fn check_reading(
    specs: &[Machine],
    file: Arc<Path>,
    reading: Reading,
    options: &CheckOptions,
    observer: Option<Observer<'_>>,
) -> Outcome {
    // A file of many transcripts: one trace each, by the `trace` field the adapters
    // gave every record, unless the user split traces their own way.
    let trace_by = options
        .trace_by
        .clone()
        .or_else(|| (reading.traces > 1).then(|| vec![Segment::Key("trace".into())]));
    let mut monitor = Monitor::new(specs, file.clone(), trace_by);
    if let Some(observer) = observer {
        monitor = monitor.with_observer(observer);
    }
    let mut file_level = Vec::new();
    for entry in reading.entries {
        match entry {
            Entry::Record(record) => {
                monitor.feed(record);
            }
            Entry::Problem(problem) => match problem.kind {
                ProblemKind::Malformed if problem.hint.is_none() => {
                    monitor.malformed(problem.loc, problem.message)
                }
                _ => file_level.push(diagnostic(&file, problem)),
            },
        }
    }
    let mut outcome = monitor.finish();
    file_level.append(&mut outcome.diagnostics);
    outcome.diagnostics = file_level;
    outcome
}

/// Checks many files, in parallel, returning their results in input order.
pub fn check_paths<P: AsRef<Path> + Sync>(
    specs: &[Machine],
    paths: &[P],
    options: &CheckOptions,
    input: &InputOptions,
) -> Vec<Checked> {
    use rayon::prelude::*;
    paths
        .par_iter()
        .map(|path| check_path(specs, path.as_ref(), options, input))
        .collect()
}

/// What converting one file gave.
#[derive(Debug, Default)]
pub struct Converted {
    pub diagnostics: Vec<Diagnostic>,
    pub records: u64,
    pub detected: Option<Detected>,
}

/// Writes the normalized records of one file to `out` as JSON Lines: each record's
/// fields, the canonical ones first, then `at`, where it comes from (file, line, JSON
/// pointer). Secrets are masked, as in every output. Problems come back as
/// diagnostics.
pub fn convert_path(
    path: &Path,
    input: &InputOptions,
    max_line_bytes: Option<usize>,
    out: &mut dyn Write,
) -> io::Result<Converted> {
    let file: Arc<Path> = Arc::from(path);
    let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    let mut converted = Converted::default();
    let opened = match adapters::open(path, input, max) {
        Ok(opened) => opened,
        Err(err) => {
            converted.diagnostics.push(unreadable(&file, &err));
            return Ok(converted);
        }
    };
    match opened {
        Opened::Native(detected) => {
            converted.detected = Some(detected);
            let handle = match std::fs::File::open(path) {
                Ok(handle) => handle,
                Err(err) => {
                    converted.diagnostics.push(unreadable(&file, &err));
                    return Ok(converted);
                }
            };
            let mut reader = LineReader::with_max_line_bytes(BufReader::new(handle), max);
            loop {
                let line = match reader.next_line() {
                    Ok(Some(line)) => line,
                    Ok(None) => break,
                    Err(err) => {
                        converted.diagnostics.push(unreadable(&file, &err));
                        break;
                    }
                };
                let loc = line.location();
                match native::decode(line, max) {
                    Ok(record) => {
                        writeln!(out, "{}", record_line(&record, path))?;
                        converted.records += 1;
                    }
                    Err(message) => converted.diagnostics.push(site(
                        Diagnostic::new(Code::MalformedRecord, message),
                        &file,
                        loc,
                    )),
                }
            }
        }
        Opened::Read(reading) => {
            converted.detected = Some(reading.detected);
            for entry in reading.entries {
                match entry {
                    Entry::Record(record) => {
                        writeln!(out, "{}", record_line(&record, path))?;
                        converted.records += 1;
                    }
                    Entry::Problem(problem) => {
                        converted.diagnostics.push(diagnostic(&file, problem))
                    }
                }
            }
        }
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
pub fn record_line(record: &Record<'_>, file: &Path) -> String {
    let mut members: Vec<(String, String)> = Vec::new();
    match &record.fields {
        Fields::Raw(fields) => {
            for (name, raw) in fields {
                members.push((name.to_string(), raw.get().to_string()));
            }
        }
        Fields::Owned(map) => {
            for key in CANONICAL {
                if let Some(value) = map.get(*key) {
                    members.push((key.to_string(), value.to_string()));
                }
            }
            for (key, value) in map {
                if !CANONICAL.contains(&key.as_str()) {
                    members.push((key.clone(), value.to_string()));
                }
            }
        }
    }
    let at = serde_json::json!({
        "file": file.display().to_string(),
        "line": record.loc.line,
        "pointer": &*record.loc.pointer,
    });
    members.push(("at".to_string(), at.to_string()));
    let mut line = String::from("{");
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&Value::String(key.clone()).to_string());
        line.push(':');
        line.push_str(value);
    }
    line.push('}');
    crate::redact::redact(&line).into_owned()
}

fn diagnostic(file: &Arc<Path>, problem: Problem) -> Diagnostic {
    let code = match problem.kind {
        ProblemKind::Malformed => Code::MalformedRecord,
        ProblemKind::UnknownFormat => Code::UnknownFormat,
    };
    let mut diagnostic = Diagnostic::new(code, problem.message);
    diagnostic.hint = problem.hint;
    site(diagnostic, file, problem.loc)
}

fn site(mut diagnostic: Diagnostic, file: &Arc<Path>, loc: Location) -> Diagnostic {
    diagnostic.trace = Some(TraceSite {
        file: file.clone(),
        trace: None,
        loc,
    });
    diagnostic
}

/// An input that could not be read, as a diagnostic.
pub(crate) fn unreadable(file: &Arc<Path>, err: &io::Error) -> Diagnostic {
    site(
        Diagnostic::new(
            Code::UnreadableInput,
            format!("cannot read `{}`: {err}", file.display()),
        ),
        file,
        Location::default(),
    )
}
