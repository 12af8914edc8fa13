//! `tracegate lint`: doubtful specs, and with `--traces` tool names that do not line up.

use std::io;

use super::{load_specs, no_input};
use crate::cli::args::{LintOutput, OutputFormat};
use crate::cli::config::LintConfig;
use crate::cli::output::{Output, Stream, SummaryKind};
use crate::diagnostic::Diagnostic;
use crate::diagnostic::render::run::Run;
use crate::diagnostic::render::sarif;
use crate::files;
use crate::lint::{self, Linted};

/// What linting found, in report order.
struct Found {
    specs: usize,
    trace_files: u64,
    records: u64,
    diagnostics: Vec<Diagnostic>,
}

pub fn run(config: LintConfig, out: &mut Output<'_>) -> io::Result<()> {
    let found = find(&config);
    if config.deny_warnings {
        out.deny_warnings();
    }
    out.summary.specs = found.specs;
    out.summary.traces = found.trace_files;
    out.summary.records = found.records;
    let format = match config.output {
        LintOutput::Human => OutputFormat::Human,
        LintOutput::Json => OutputFormat::Json,
        LintOutput::Sarif | LintOutput::Github => {
            found.diagnostics.iter().for_each(|d| out.tally(d));
            let paths = super::report_paths(config.sarif_root.as_ref())?;
            let run = Run {
                version: env!("CARGO_PKG_VERSION"),
                specs: Vec::new(),
                problems: &found.diagnostics,
                files: Vec::new(),
                summary: out.summary,
                paths: &paths,
            };
            return if config.output == LintOutput::Sarif {
                out.data(sarif::render(&run))
            } else {
                super::check::github(&run, out)
            };
        }
    };
    out.diagnostics(Stream::Stdout, format, &found.diagnostics)?;
    out.summary(SummaryKind::Lint, format)
}

/// The library's part: load and lint the specs, and compare their tools with the
/// traces'.
fn find(config: &LintConfig) -> Found {
    let (spec_files, _) = files::collect(&config.specs, files::is_spec_file);
    let (specs, spec_errors) = load_specs(&config.specs);
    let mut found = Found {
        specs: spec_files.len(),
        trace_files: 0,
        records: 0,
        diagnostics: Vec::new(),
    };
    let spec_ok = spec_errors.is_empty();
    found.diagnostics.extend(spec_errors);
    let linted: Vec<Linted<'_>> = specs.iter().filter_map(Linted::new).collect();
    for spec in &linted {
        found.diagnostics.extend(lint::lint_spec(spec));
    }
    if config.traces.is_empty() {
        return found;
    }
    let (trace_files, missing) = files::collect(&config.traces, files::is_trace_file);
    if trace_files.is_empty() && missing.is_empty() {
        found
            .diagnostics
            .push(no_input("trace", &config.traces, "`*.jsonl` or `*.json`"));
    }
    found.diagnostics.extend(missing);
    let (usage, unreadable) = lint::tools::scan(&trace_files, &specs);
    found.trace_files = usage.files;
    found.records = usage.records;
    found.diagnostics.extend(unreadable);
    // A spec that did not compile may mention any tool: compare names only when every
    // spec is known.
    if spec_ok && !trace_files.is_empty() {
        found
            .diagnostics
            .extend(lint::tools::tool_lints(&linted, &usage));
    }
    // A `per` key that records lack (most often a misspelt path) is found by checking
    // the traces, exactly as `check` would report it.
    if spec_ok && specs.iter().any(|machine| !machine.per.is_empty()) {
        let checked = crate::check::check_paths(
            &specs,
            &trace_files,
            &crate::check::CheckOptions::default(),
            &crate::trace::adapters::InputOptions::default(),
        );
        for checked in checked {
            let missing = checked.outcome.diagnostics.into_iter();
            found.diagnostics.extend(
                missing.filter(|diagnostic| diagnostic.code == crate::diagnostic::Code::MissingKey),
            );
        }
    }
    found
}
