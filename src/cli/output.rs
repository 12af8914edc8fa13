//! The one writer of everything a command prints, on stdout and on stderr.
//!
//! It also keeps the run's tally: diagnostics are counted as they are handed over
//! ([`Output::tally`]), and the exit status is decided from that tally and from what a
//! command [`raise`](Output::raise)s, so a run cut short (a closed pipe) still exits
//! with the status of what it had found. Colour is decided per stream, from whether
//! that stream is a terminal (and `NO_COLOR`).

use std::io::{self, IsTerminal, Write};

use super::Exit;
use super::args::{ColorChoice, OutputFormat};
use crate::diagnostic::render::{human, json};
use crate::diagnostic::{Diagnostic, Summary};

/// Which stream a write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What the closing summary line reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryKind {
    Check,
    Lint,
}

/// One output stream and whether it takes colour.
struct Sink<'w> {
    writer: &'w mut dyn Write,
    styled: bool,
}

/// Everything a run writes, and the tally that decides its exit status.
pub struct Output<'w> {
    stdout: Sink<'w>,
    stderr: Sink<'w>,
    /// The counts of every diagnostic tallied, plus what the command fills in.
    pub summary: Summary,
    /// Whether lint warnings fail the run (`lint --deny warnings`).
    deny_warnings: bool,
    /// The worst status a command raised besides its diagnostics.
    raised: Exit,
    /// `--quiet`: nothing goes to stdout.
    quiet: bool,
    /// Where stdout's writes go under `--quiet`.
    discard: io::Sink,
    /// Whether stderr is a terminal a progress bar may be drawn on.
    pub progress: bool,
    /// Lays out human reports, remembering what consecutive ones share.
    human: human::Renderer,
    /// The text of one diagnostic, reused for the next.
    buffer: String,
}

impl<'w> Output<'w> {
    /// Writes to the process's streams, styled as `color` says: `auto` styles a stream
    /// that is a terminal when `NO_COLOR` is unset.
    pub fn new(
        stdout: &'w mut dyn Write,
        stderr: &'w mut dyn Write,
        color: ColorChoice,
    ) -> Output<'w> {
        let (stdout_styled, stderr_styled) = match color {
            ColorChoice::Always => (true, true),
            ColorChoice::Never => (false, false),
            ColorChoice::Auto => {
                let colour = std::env::var_os("NO_COLOR").is_none();
                (
                    colour && io::stdout().is_terminal(),
                    colour && io::stderr().is_terminal(),
                )
            }
        };
        let mut output = Output::with_style(stdout, stdout_styled, stderr, stderr_styled);
        output.progress = io::stderr().is_terminal();
        output
    }

    /// Writes to the given streams, with colour as given.
    pub fn with_style(
        stdout: &'w mut dyn Write,
        stdout_styled: bool,
        stderr: &'w mut dyn Write,
        stderr_styled: bool,
    ) -> Output<'w> {
        Output {
            stdout: Sink {
                writer: stdout,
                styled: stdout_styled,
            },
            stderr: Sink {
                writer: stderr,
                styled: stderr_styled,
            },
            summary: Summary::default(),
            deny_warnings: false,
            raised: Exit::Success,
            quiet: false,
            discard: io::sink(),
            progress: false,
            human: human::Renderer::default(),
            buffer: String::new(),
        }
    }

    /// `--quiet`: from now on nothing is written to stdout and no progress is drawn;
    /// stderr still says what went wrong, and the status is kept as before.
    pub fn quiet(&mut self) {
        self.quiet = true;
        self.progress = false;
    }

    /// Lint warnings fail the run from now on.
    pub fn deny_warnings(&mut self) {
        self.deny_warnings = true;
    }

    /// The status of the run so far: the worst of its diagnostics and of what was
    /// raised.
    pub fn status(&self) -> Exit {
        let found = if self.summary.errors > 0 {
            Exit::Error
        } else if self.summary.violations > 0 || (self.deny_warnings && self.summary.warnings > 0) {
            Exit::Violations
        } else {
            Exit::Success
        };
        found.max(self.raised)
    }

    /// Records a status that is not a diagnostic (a diff, a coverage threshold missed).
    pub fn raise(&mut self, exit: Exit) {
        self.raised = self.raised.max(exit);
    }

    /// Counts a diagnostic for the summary and the exit status, without writing it.
    pub fn tally(&mut self, diagnostic: &Diagnostic) {
        if diagnostic.is_violation() {
            self.summary.violations += 1;
        } else if diagnostic.is_warning() {
            self.summary.warnings += 1;
        } else {
            self.summary.errors += 1;
        }
    }

    /// Writes a diagnostic already tallied.
    pub fn write_diagnostic(
        &mut self,
        to: Stream,
        format: OutputFormat,
        diagnostic: &Diagnostic,
    ) -> io::Result<()> {
        if to == Stream::Stdout && self.quiet {
            return Ok(());
        }
        let sink = match to {
            Stream::Stdout => &mut self.stdout,
            Stream::Stderr => &mut self.stderr,
        };
        match format {
            OutputFormat::Human => {
                self.buffer.clear();
                self.human.render(&mut self.buffer, diagnostic, sink.styled);
                sink.writer.write_all(self.buffer.as_bytes())
            }
            OutputFormat::Json => writeln!(sink.writer, "{}", json::render(diagnostic)),
        }
    }

    /// Tallies and writes each diagnostic.
    pub fn diagnostics(
        &mut self,
        to: Stream,
        format: OutputFormat,
        diagnostics: &[Diagnostic],
    ) -> io::Result<()> {
        diagnostics.iter().for_each(|d| self.tally(d));
        for diagnostic in diagnostics {
            self.write_diagnostic(to, format, diagnostic)?;
        }
        Ok(())
    }

    /// A problem of the run as a whole, with the same shape as every finding: on
    /// stderr, as a human report.
    pub fn problem(&mut self, diagnostic: &Diagnostic) -> io::Result<()> {
        self.diagnostics(
            Stream::Stderr,
            OutputFormat::Human,
            std::slice::from_ref(diagnostic),
        )
    }

    /// Writes the closing summary line of a report on stdout.
    pub fn summary(&mut self, kind: SummaryKind, format: OutputFormat) -> io::Result<()> {
        let line = match (kind, format) {
            (SummaryKind::Check, OutputFormat::Human) => human::render_summary(&self.summary),
            (SummaryKind::Check, OutputFormat::Json) => {
                format!("{}\n", json::render_summary(&self.summary))
            }
            (SummaryKind::Lint, OutputFormat::Human) => human::render_lint_summary(&self.summary),
            (SummaryKind::Lint, OutputFormat::Json) => {
                format!("{}\n", json::render_lint_summary(&self.summary))
            }
        };
        self.data(line)
    }

    /// Writes a command's result as it is (a formatted spec, a help text, a trace) on
    /// stdout.
    pub fn data(&mut self, bytes: impl AsRef<[u8]>) -> io::Result<()> {
        self.stdout().write_all(bytes.as_ref())
    }

    /// Writes a report that quotes traces or specs (coverage, counterexamples, a
    /// drawing, a summary) on stdout: secrets masked, control characters escaped.
    pub fn report(&mut self, text: &str) -> io::Result<()> {
        let safe = crate::redact::for_terminal(text, true);
        self.stdout.writer.write_all(safe.as_bytes())
    }

    /// Stdout, for a library writer that streams its result (`convert`).
    pub fn stdout(&mut self) -> &mut dyn Write {
        if self.quiet {
            &mut self.discard
        } else {
            &mut *self.stdout.writer
        }
    }

    /// A line of commentary on stderr: progress, notes, a summary beside data on
    /// stdout. `text` carries its own line ending.
    pub fn note(&mut self, text: &str) -> io::Result<()> {
        let safe = crate::redact::for_terminal(text, true);
        self.stderr.writer.write_all(safe.as_bytes())
    }

    /// A failure that is not a finding (a file that cannot be written, a trace with
    /// nothing to shrink): `error: MESSAGE` on stderr, and the run exits 2.
    pub fn failure(&mut self, message: &str) -> io::Result<()> {
        self.raise(Exit::Error);
        let safe = crate::redact::for_terminal(message, false);
        writeln!(self.stderr.writer, "error: {safe}")
    }

    /// Flushes both streams.
    pub fn flush(&mut self) -> io::Result<()> {
        self.stdout.writer.flush()?;
        self.stderr.writer.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;

    #[test]
    fn the_status_is_the_worst_of_diagnostics_and_raised() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut output = Output::with_style(&mut out, false, &mut err, false);
        assert_eq!(output.status(), Exit::Success);
        output.tally(&Diagnostic::new(Code::UnusedEvent, "w"));
        assert_eq!(
            output.status(),
            Exit::Success,
            "warnings pass unless denied"
        );
        output.deny_warnings();
        assert_eq!(output.status(), Exit::Violations);
        output.raise(Exit::Success);
        assert_eq!(output.status(), Exit::Violations, "raising never lowers");
        output.tally(&Diagnostic::new(Code::NoInput, "e"));
        assert_eq!(output.status(), Exit::Error);
    }

    #[test]
    fn colour_follows_the_stream_written_to() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut output = Output::with_style(&mut out, false, &mut err, true);
        let diagnostic = Diagnostic::new(Code::UsageError, "bad flag");
        output.problem(&diagnostic).expect("writes to memory");
        output
            .diagnostics(Stream::Stdout, OutputFormat::Human, &[diagnostic])
            .expect("writes to memory");
        assert_eq!(output.summary.errors, 2);
        let (out, err) = (String::from_utf8_lossy(&out), String::from_utf8_lossy(&err));
        assert!(err.contains('\u{1b}'), "stderr is a terminal: {err:?}");
        assert!(!out.contains('\u{1b}'), "stdout is not: {out:?}");
        assert!(out.starts_with("error[usage-error]: bad flag"), "{out}");
    }
}
