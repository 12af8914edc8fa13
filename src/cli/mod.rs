//! The command line, in layers: [`args`] (the flags as clap parses them) →
//! [`config`] (a validated configuration per command, usage problems as diagnostics) →
//! [`commands`] (one module per command: configuration → library → data) →
//! [`output`] (the one writer of stdout and stderr, which also keeps the exit status).
//! This is the only part of the crate that prints.

pub mod args;
pub mod commands;
pub mod config;
pub mod output;

use std::io::{self, ErrorKind};

pub use args::Cli;
use config::Config;
use output::Output;

/// What a run ended in, as the process exit status. Ordered from best to worst: a run's
/// status is the worst of what it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Every trace conforms (or the command had nothing to judge).
    Success,
    /// Violations, and no errors.
    Violations,
    /// A spec, input or usage error.
    Error,
}

/// The spec language reference, embedded so `help spec` cannot drift from the docs.
pub const SPEC_REFERENCE: &str = include_str!("../../specs/README.md");

/// Runs a parsed command line on the process's stdout and stderr.
pub fn run(cli: Cli) -> Exit {
    let stdout = io::stdout();
    let mut stdout = io::BufWriter::new(stdout.lock());
    let mut stderr = io::stderr();
    let mut output = Output::new(&mut stdout, &mut stderr);
    run_with(cli, &mut output)
}

/// Runs a parsed command line, writing through `output`. A closed pipe ends the run
/// quietly, with the status of what it had found; any other failure to write is an
/// error.
pub fn run_with(cli: Cli, output: &mut Output<'_>) -> Exit {
    let ran = match config::config(cli) {
        Ok(config) => dispatch(config, output),
        Err(problems) => problems.iter().try_for_each(|p| output.problem(p)),
    };
    match ran.and_then(|()| output.flush()) {
        Ok(()) => output.status(),
        Err(err) if err.kind() == ErrorKind::BrokenPipe => output.status(),
        Err(err) => {
            // Stdout may be what failed; stderr is the last place left to say so, and if
            // that fails too there is nowhere.
            let _ = output.failure(&err.to_string());
            Exit::Error
        }
    }
}

fn dispatch(config: Config, out: &mut Output<'_>) -> io::Result<()> {
    match config {
        Config::Check(config) => commands::check::run(config, out),
        Config::Convert(config) => commands::convert::run(config, out),
        Config::Explore(config) => commands::explore::run(config, out),
        Config::Shrink(config) => commands::shrink::run(config, out),
        Config::Coverage(config) => commands::coverage::run(config, out),
        Config::Explain(config) => commands::explain::run(config, out),
        Config::Lint(config) => commands::lint::run(config, out),
        Config::Fmt(config) => commands::fmt::run(config, out),
        Config::Graph(config) => commands::graph::run(config, out),
        Config::Help(config) => commands::help::run(config, out),
    }
}
