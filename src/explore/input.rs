//! Reading trace files of any format for coverage and shrinking.
//!
//! This mirrors [`crate::ingest::check_path`] — native JSONL streams through the
//! checker; other formats are adapted to normalized records and fed to a [`Monitor`],
//! one trace per transcript — with an observer on the checker, which `ingest` has no
//! place for.

use std::io::BufReader;
use std::path::Path;
use std::sync::Arc;

use crate::check::{CheckOptions, Monitor, Observer, Outcome, check_reader_observed};
use crate::diagnostic::{Code, Diagnostic, TraceSite};
use crate::machine::Machine;
use crate::spec::ast::Segment;
use crate::trace::adapters::{self, Entry, InputOptions, Opened, Problem, ProblemKind};
use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;
use crate::trace::{Fields, Location};

fn located(mut diagnostic: Diagnostic, file: &Arc<Path>, loc: Location) -> Diagnostic {
    diagnostic.trace = Some(TraceSite {
        file: file.clone(),
        trace: None,
        loc,
    });
    diagnostic
}

fn unreadable(file: &Arc<Path>, err: &std::io::Error) -> Diagnostic {
    located(
        Diagnostic::new(
            Code::UnreadableInput,
            format!("cannot read `{}`: {err}", file.display()),
        ),
        file,
        Location::default(),
    )
}

fn problem(file: &Arc<Path>, problem: Problem) -> Diagnostic {
    let code = match problem.kind {
        ProblemKind::Malformed => Code::MalformedRecord,
        ProblemKind::UnknownFormat => Code::UnknownFormat,
    };
    let mut diagnostic = Diagnostic::new(code, problem.message);
    diagnostic.hint = problem.hint;
    located(diagnostic, file, problem.loc)
}

/// Checks one trace file of any format, showing every move to `observer`.
pub fn check_path_observed(
    specs: &[Machine],
    path: &Path,
    options: &CheckOptions,
    input: &InputOptions,
    observer: Observer<'_>,
) -> Outcome {
    let file: Arc<Path> = Arc::from(path);
    let max = options.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    let failed = |err: &std::io::Error| Outcome {
        diagnostics: vec![unreadable(&file, err)],
        ..Outcome::default()
    };
    match adapters::open(path, input, max) {
        Err(err) => failed(&err),
        Ok(Opened::Native(_)) => match std::fs::File::open(path) {
            Ok(handle) => check_reader_observed(
                specs,
                file.clone(),
                BufReader::with_capacity(1 << 16, handle),
                options,
                Some(observer),
            ),
            Err(err) => failed(&err),
        },
        Ok(Opened::Read(reading)) => {
            // Several transcripts in one file: one trace each, as `check` splits them.
            let trace_by = options
                .trace_by
                .clone()
                .or_else(|| (reading.traces > 1).then(|| vec![Segment::Key("trace".into())]));
            let mut monitor = Monitor::new(specs, file.clone(), trace_by).with_observer(observer);
            let mut file_level = Vec::new();
            for entry in reading.entries {
                match entry {
                    Entry::Record(record) => monitor.feed(record),
                    Entry::Problem(p) if p.kind == ProblemKind::Malformed && p.hint.is_none() => {
                        monitor.malformed(p.loc, p.message)
                    }
                    Entry::Problem(p) => file_level.push(problem(&file, p)),
                }
            }
            let mut outcome = monitor.finish();
            file_level.append(&mut outcome.diagnostics);
            outcome.diagnostics = file_level;
            outcome
        }
    }
}

/// A trace file as native JSONL: the file itself when it is native, else its
/// normalized records, one per line (each with its `trace` when the file holds
/// several transcripts). Also says whether there are several traces, and which
/// elements could not be read (they are left out).
pub struct AsNative {
    pub text: Vec<u8>,
    pub native: bool,
    pub several_traces: bool,
    pub problems: Vec<Diagnostic>,
}

/// Reads `path` as native JSONL (see [`AsNative`]).
pub fn as_native(path: &Path, input: &InputOptions) -> Result<AsNative, Box<Diagnostic>> {
    let file: Arc<Path> = Arc::from(path);
    match adapters::open(path, input, DEFAULT_MAX_LINE_BYTES) {
        Err(err) => Err(Box::new(unreadable(&file, &err))),
        Ok(Opened::Native(_)) => match std::fs::read(path) {
            Ok(text) => Ok(AsNative {
                text,
                native: true,
                several_traces: false,
                problems: Vec::new(),
            }),
            Err(err) => Err(Box::new(unreadable(&file, &err))),
        },
        Ok(Opened::Read(reading)) => {
            let mut text = Vec::new();
            let mut problems = Vec::new();
            for entry in reading.entries {
                match entry {
                    Entry::Record(record) => {
                        let fields = match &record.fields {
                            Fields::Owned(map) => map.clone(),
                            Fields::Raw(raw) => raw
                                .iter()
                                .filter_map(|(key, value)| {
                                    Some((key.to_string(), serde_json::from_str(value.get()).ok()?))
                                })
                                .collect(),
                        };
                        text.extend_from_slice(super::emit::native_line(&fields).as_bytes());
                    }
                    Entry::Problem(p) => problems.push(problem(&file, p)),
                }
            }
            Ok(AsNative {
                text,
                native: false,
                several_traces: reading.traces > 1,
                problems,
            })
        }
    }
}
