//! `tracegate coverage`: which states, transitions and forbidden moves a trace corpus
//! exercised, and with `--min` whether enough of them were.

use std::io;

use super::{load_specs, no_input};
use crate::cli::Exit;
use crate::cli::args::OutputFormat;
use crate::cli::config::CoverageConfig;
use crate::cli::output::{Output, Stream};
use crate::explore::{self, render};
use crate::files;

pub fn run(config: CoverageConfig, out: &mut Output<'_>) -> io::Result<()> {
    let (specs, errors) = load_specs(&config.specs);
    if !errors.is_empty() {
        return out.diagnostics(Stream::Stdout, config.output, &errors);
    }
    let (trace_files, missing) = files::collect(&config.traces, files::is_trace_file);
    if !missing.is_empty() {
        return out.diagnostics(Stream::Stdout, config.output, &missing);
    }
    if trace_files.is_empty() {
        let none = no_input("trace", &config.traces, "`*.jsonl` or `*.json`");
        return out.diagnostics(Stream::Stdout, config.output, &[none]);
    }
    let coverage = explore::coverage(&specs, &trace_files, &config.check, &config.input.options);
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
