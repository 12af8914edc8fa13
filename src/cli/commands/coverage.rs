//! `tracegate coverage`: which states, transitions and forbidden moves a trace corpus
//! exercised, and with `--min` whether enough of them were.
//!
//! What is measured is, as for `check`, either every spec named against every trace
//! named, or, when the command line names neither and a project file is found, each
//! scope's specs against the traces it scopes, read as it says.

use std::io;

use super::{load_specs, no_input};
use crate::cli::Exit;
use crate::cli::args::OutputFormat;
use crate::cli::config::CoverageConfig;
use crate::cli::output::{Output, Stream};
use crate::cli::project::Project;
use crate::diagnostic::Diagnostic;
use crate::explore::{self, Coverage, render};
use crate::files;
use crate::machine::Machine;

pub fn run(config: CoverageConfig, out: &mut Output<'_>) -> io::Result<()> {
    let measured = match &config.project {
        Some(project) => scoped(project),
        None => named(&config),
    };
    let (specs, coverage) = match measured {
        Ok(measured) => measured,
        Err(problems) => return out.diagnostics(Stream::Stdout, config.output, &problems),
    };
    // The traces that could not be read are listed in the report; the run fails.
    if !coverage.errors.is_empty() {
        out.raise(Exit::Error);
    } else if config
        .min
        .is_some_and(|min| !coverage.below(min).is_empty())
    {
        out.raise(Exit::Violations);
    }
    out.report(&match config.output {
        OutputFormat::Human => render::coverage_human(&specs, &coverage, config.min),
        OutputFormat::Json => render::coverage_json(&specs, &coverage, config.min),
    })
}

/// Every spec named against every trace named.
fn named(config: &CoverageConfig) -> Result<(Vec<Machine>, Coverage), Vec<Diagnostic>> {
    let (specs, errors) = load_specs(&config.specs);
    if !errors.is_empty() {
        return Err(errors);
    }
    let (trace_files, missing) = files::collect(&config.traces, files::is_trace_file);
    if !missing.is_empty() {
        return Err(missing);
    }
    if trace_files.is_empty() {
        return Err(vec![no_input(
            "trace",
            &config.traces,
            "`*.jsonl` or `*.json`",
        )]);
    }
    let coverage = explore::coverage(&specs, &trace_files, &config.check, &config.input.options);
    Ok((specs, coverage))
}

/// Each scope's specs against the trace files it scopes, read with its options; the
/// specs of all scopes are reported in the file's order.
fn scoped(project: &Project) -> Result<(Vec<Machine>, Coverage), Vec<Diagnostic>> {
    let mut problems = Vec::new();
    let mut groups = Vec::new();
    for scope in &project.scopes {
        let (specs, errors) = load_specs(&scope.specs);
        problems.extend(errors);
        let (found, missing) = files::collect(&scope.roots, files::is_trace_file);
        problems.extend(missing);
        let files: Vec<_> = found.into_iter().filter(|f| scope.contains(f)).collect();
        groups.push((scope, specs, files));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    if groups.iter().all(|(_, _, files)| files.is_empty()) {
        let roots: Vec<_> = project
            .scopes
            .iter()
            .flat_map(|s| s.roots.iter().cloned())
            .collect();
        return Err(vec![no_input("trace", &roots, "`*.jsonl` or `*.json`")]);
    }
    let mut all_specs = Vec::new();
    let mut total = Coverage {
        specs: Vec::new(),
        records: 0,
        traces: 0,
        errors: Vec::new(),
    };
    for (scope, specs, files) in groups {
        let coverage = explore::coverage(&specs, &files, &scope.check, &scope.input);
        total.specs.extend(coverage.specs);
        total.records += coverage.records;
        total.traces += coverage.traces;
        total.errors.extend(coverage.errors);
        all_specs.extend(specs);
    }
    Ok((all_specs, total))
}
