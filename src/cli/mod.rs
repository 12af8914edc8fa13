//! The command line, in layers: `args` (the flags as clap parses them) →
//! `config` (a validated configuration per command, usage problems as diagnostics) →
//! `commands` (one module per command: configuration → library → data) →
//! `output` (the one writer of stdout and stderr, which also keeps the exit status).
//! This is the only part of the crate that prints; the binary needs only [`parse`] and
//! [`run`], so nothing else here is public.

pub(crate) mod args;
pub(crate) mod commands;
pub(crate) mod config;
pub(crate) mod output;
pub(crate) mod project;

use std::io::{self, ErrorKind};

pub use args::{Cli, parse};
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

/// Runs a parsed command line on the process's stdout and stderr.
pub fn run(cli: Cli) -> Exit {
    let stdout = io::stdout();
    let mut stdout = io::BufWriter::new(stdout.lock());
    let mut stderr = io::stderr();
    let mut output = Output::new(&mut stdout, &mut stderr, cli.color);
    run_with(cli, &mut output)
}

/// Runs a parsed command line, writing through `output`. A closed pipe ends the run
/// quietly, with the status of what it had found; any other I/O failure (a file that
/// cannot be written, standard input that cannot be read) is an error.
pub(crate) fn run_with(cli: Cli, output: &mut Output<'_>) -> Exit {
    if cli.quiet {
        output.quiet();
    }
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
        Config::Seal(config) => commands::seal::run(config, out),
        Config::Verify(config) => commands::verify::run(config, out),
        Config::Merge(config) => commands::merge::run(config, out),
        Config::Completions(shell) => commands::completions::run(shell, out),
        Config::Man => commands::completions::man(out),
    }
}

#[cfg(test)]
mod tests {
    use std::io::{self, Write};

    use super::args::parse_line;
    use super::*;

    /// Runs a command line in-process: its status, stdout and stderr.
    fn run_line(line: &[&str]) -> (Exit, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let exit = run_with(
            parse_line(line),
            &mut Output::with_style(&mut out, false, &mut err, false),
        );
        let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("UTF-8 output");
        (exit, text(out), text(err))
    }

    #[test]
    fn usage_problems_go_to_stderr_and_fail_the_run() {
        let (exit, out, err) = run_line(&["coverage", "--min", "150", "--trace-by", ".."]);
        assert_eq!((exit, out.as_str()), (Exit::Error, ""));
        assert_eq!(err.matches("error[usage-error]").count(), 2, "{err}");
    }

    #[test]
    fn findings_decide_the_status() {
        let (exit, out, err) =
            run_line(&["check", "specs", "--traces", "traces/seed_protocol/fail"]);
        assert_eq!(exit, Exit::Violations, "{out}");
        assert!(out.ends_with(": 2 violations\n"), "{out}");
        assert_eq!(err, "");
        let (exit, out, _) = run_line(&["explain", "no-input"]);
        assert_eq!(exit, Exit::Success);
        assert!(out.starts_with("# no-input\n"), "{out}");
    }

    /// A reader that has gone away.
    struct ClosedPipe;

    impl Write for ClosedPipe {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_closed_pipe_keeps_the_status_of_what_was_found() {
        let cli = parse_line(&["check", "specs", "--traces", "traces/seed_protocol/fail"]);
        let (mut out, mut err) = (ClosedPipe, Vec::new());
        let exit = run_with(
            cli,
            &mut Output::with_style(&mut out, false, &mut err, false),
        );
        assert_eq!(exit, Exit::Violations);
        assert!(err.is_empty(), "a closed pipe is not reported");
    }
}
