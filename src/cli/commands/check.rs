//! `tracegate check`: traces against specs, a report on stdout.

use std::io;
use std::path::PathBuf;

use super::{load_specs, no_input, say_format};
use crate::check::Checked;
use crate::cli::config::CheckConfig;
use crate::cli::output::{Output, Stream, SummaryKind};
use crate::diagnostic::Diagnostic;
use crate::files;

/// What a check found, in report order.
struct Found {
    specs: usize,
    /// Spec errors, unreadable trace paths, no trace files.
    problems: Vec<Diagnostic>,
    /// Each trace file and what checking it gave.
    checked: Vec<(PathBuf, Checked)>,
}

pub fn run(config: CheckConfig, out: &mut Output<'_>) -> io::Result<()> {
    let found = find(&config)?;
    // Everything is counted before anything is written, so that a run cut short by a
    // closed pipe still exits with the status of all it found.
    out.summary.specs = found.specs;
    found.problems.iter().for_each(|d| out.tally(d));
    for (_, checked) in &found.checked {
        out.summary.records += checked.outcome.records;
        out.summary.traces += checked.outcome.traces;
        checked
            .outcome
            .diagnostics
            .iter()
            .for_each(|d| out.tally(d));
    }
    for diagnostic in &found.problems {
        out.write_diagnostic(Stream::Stdout, config.output, diagnostic)?;
    }
    for (path, checked) in &found.checked {
        say_format(out, &config.input, path, checked.detected.as_ref())?;
        for diagnostic in &checked.outcome.diagnostics {
            out.write_diagnostic(Stream::Stdout, config.output, diagnostic)?;
        }
    }
    out.summary(SummaryKind::Check, config.output)
}

/// The library's part: load specs, find trace files, check them.
fn find(config: &CheckConfig) -> io::Result<Found> {
    let (specs, spec_errors) = load_specs(&config.specs);
    let (trace_files, missing) = files::collect(&config.traces, files::is_trace_file);
    // A spec that does not compile checks nothing: fail closed, before reading traces.
    let checked = if spec_errors.is_empty() && !specs.is_empty() {
        let run = || {
            crate::check::check_paths(&specs, &trace_files, &config.check, &config.input.options)
        };
        match config.jobs {
            Some(jobs) => rayon::ThreadPoolBuilder::new()
                .num_threads(jobs.max(1))
                .build()
                .map_err(io::Error::other)?
                .install(run),
            None => run(),
        }
    } else {
        Vec::new()
    };
    let mut checked = checked;
    merge_never_carried(&mut checked);
    let no_traces = (trace_files.is_empty() && missing.is_empty())
        .then(|| no_input("trace", &config.traces, "`*.jsonl` or `*.json`"));
    // A run that read no record never passes, even when no file said why.
    let read_nothing = !checked.is_empty()
        && checked.iter().all(|c| c.outcome.records == 0)
        && checked
            .iter()
            .all(|c| c.outcome.diagnostics.iter().all(|d| d.is_warning()));
    let no_records = read_nothing.then(|| {
        let mut diagnostic = no_input("trace", &config.traces, "`*.jsonl` or `*.json`");
        diagnostic.message = "no record was read from the trace files: nothing was checked".into();
        diagnostic
    });
    Ok(Found {
        specs: specs.len(),
        problems: spec_errors
            .into_iter()
            .chain(missing)
            .chain(no_traces)
            .chain(no_records)
            .collect(),
        checked: trace_files.into_iter().zip(checked).collect(),
    })
}

/// A `per` key or `--trace-by` field that no record carries is reported by each file
/// that lacks it; across files, the same finding is given once, at the first file, with
/// how many other files lack it too.
fn merge_never_carried(checked: &mut [Checked]) {
    use crate::diagnostic::Code;
    let never_carried = |d: &Diagnostic| {
        (d.code == Code::MissingKey && d.message.starts_with("no record of the events of spec"))
            || (d.code == Code::UsageError && d.message.starts_with("no record has a `"))
    };
    // The finding without its per-file count, and where its first copy is.
    let mut first: Vec<(String, usize, usize, u64)> = Vec::new();
    for (file, one) in checked.iter_mut().enumerate() {
        let diagnostics = &mut one.outcome.diagnostics;
        let mut index = 0;
        while index < diagnostics.len() {
            let diagnostic = &diagnostics[index];
            if !never_carried(diagnostic) {
                index += 1;
                continue;
            }
            let what = diagnostic
                .message
                .split_once(": ")
                .map_or(diagnostic.message.as_str(), |(what, _)| what)
                .to_string();
            match first.iter_mut().find(|(seen, ..)| *seen == what) {
                Some((.., others)) => {
                    *others += 1;
                    diagnostics.remove(index);
                }
                None => {
                    first.push((what, file, index, 0));
                    index += 1;
                }
            }
        }
    }
    for (_, file, index, others) in first {
        if others > 0 {
            let s = if others == 1 { "" } else { "s" };
            let diagnostic = &mut checked[file].outcome.diagnostics[index];
            diagnostic.message.push_str(&format!(
                " (and in {others} other file{s}, not reported again)"
            ));
        }
    }
}
