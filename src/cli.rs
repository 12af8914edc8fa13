//! The command line: clap types (raw flags), and `run`, which turns them into calls of
//! the library and writes the results. This is the only module that prints.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::check::{CheckOptions, check_files};
use crate::diagnostic::render::{human, json};
use crate::diagnostic::{Code, Diagnostic, Summary, explain};
use crate::files;
use crate::machine::Machine;

/// What a run ended in, as the process exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Every trace conforms (or the command had nothing to judge).
    Success,
    /// Violations, and no errors.
    Violations,
    /// A spec, input or usage error.
    Error,
}

impl Exit {
    pub fn code(self) -> i32 {
        match self {
            Exit::Success => 0,
            Exit::Violations => 1,
            Exit::Error => 2,
        }
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "tracegate",
    version,
    about = "Verify what AI agents do after a tool fails.",
    long_about = "Verify what AI agents do after a tool fails.\n\n\
        A spec says which sequences of tool calls and results are allowed; tracegate \
        replays recorded agent transcripts through it and reports every forbidden path \
        with the trace line, the spec rule and the path that led there.\n\n\
        Exit status: 0 every trace conforms, 1 violations found, 2 a spec, input or usage error."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check traces against specs.
    Check(CheckArgs),
    /// Explain a diagnostic code (or list them all).
    Explain {
        /// A code such as `forbidden-transition`; omit to list every code.
        code: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Spec files or directories (walked for `*.tg`). Default: `specs/`.
    pub specs: Vec<PathBuf>,
    /// Trace files or directories (walked for `*.jsonl` and `*.json`). Default: `traces/`.
    #[arg(long, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
    /// Split each trace file into one trace per value of this field (e.g. `case`).
    #[arg(long, value_name = "FIELD")]
    pub trace_by: Option<String>,
    /// Lines longer than this many bytes are reported as malformed, not read.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
    /// Worker threads for checking files in parallel (default: one per core).
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// rustc-style report (colour on a terminal unless NO_COLOR is set).
    Human,
    /// JSON Lines: one object per finding, then a summary.
    Json,
}

/// Runs a parsed command line, writing to `out`.
pub fn run(cli: Cli, out: &mut dyn Write) -> std::io::Result<Exit> {
    match cli.command {
        Command::Check(args) => check(args, out),
        Command::Explain { code } => explain_code(code.as_deref(), out),
    }
}

fn explain_code(code: Option<&str>, out: &mut dyn Write) -> std::io::Result<Exit> {
    let Some(name) = code else {
        for &code in Code::ALL {
            writeln!(out, "{:<26} {}", code.as_str(), code.summary())?;
        }
        return Ok(Exit::Success);
    };
    match Code::from_name(name) {
        Some(code) => {
            writeln!(out, "# {code}\n\n{}", code.summary())?;
            writeln!(out, "\n{}", explain::explain(code).trim_end())?;
            Ok(Exit::Success)
        }
        None => {
            let names = Code::ALL.iter().map(|c| c.as_str());
            let hint = crate::suggest::did_you_mean(name, names)
                .map(|close| format!(" (did you mean `{close}`?)"))
                .unwrap_or_default();
            eprintln!("error: unknown code `{name}`{hint}; `tracegate explain` lists them all");
            Ok(Exit::Error)
        }
    }
}

fn check(args: CheckArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    let spec_paths = if args.specs.is_empty() {
        vec![PathBuf::from("specs")]
    } else {
        args.specs
    };
    let trace_paths = if args.traces.is_empty() {
        vec![PathBuf::from("traces")]
    } else {
        args.traces
    };
    let mut report = Report::new(out, args.output);

    let trace_by = match args
        .trace_by
        .as_deref()
        .map(crate::spec::parser::parse_path)
    {
        None => None,
        Some(Ok(path)) => Some(path.segments),
        Some(Err(message)) => {
            eprintln!("error: invalid --trace-by path: {message}");
            return Ok(Exit::Error);
        }
    };

    let (specs, spec_errors) = load_specs(&spec_paths);
    report.summary.specs = specs.len();
    for diagnostic in &spec_errors {
        report.emit(diagnostic)?;
    }
    let (trace_files, missing) = files::collect(&trace_paths, files::is_trace_file);
    for diagnostic in &missing {
        report.emit(diagnostic)?;
    }
    if trace_files.is_empty() && missing.is_empty() {
        report.emit(&no_input("trace", &trace_paths, "`*.jsonl` or `*.json`"))?;
    }
    // A spec that does not compile checks nothing: fail closed, before reading traces.
    if spec_errors.is_empty() && !specs.is_empty() {
        let options = CheckOptions {
            trace_by,
            max_line_bytes: args.max_line_bytes,
        };
        let outcomes = match args.jobs {
            Some(jobs) => rayon::ThreadPoolBuilder::new()
                .num_threads(jobs.max(1))
                .build()
                .map_err(std::io::Error::other)?
                .install(|| check_files(&specs, &trace_files, &options)),
            None => check_files(&specs, &trace_files, &options),
        };
        for outcome in &outcomes {
            report.summary.records += outcome.records;
            report.summary.traces += outcome.traces;
            for diagnostic in &outcome.diagnostics {
                report.emit(diagnostic)?;
            }
        }
    }
    report.finish()
}

fn load_specs(paths: &[PathBuf]) -> (Vec<Machine>, Vec<Diagnostic>) {
    let (spec_files, mut errors) = files::collect(paths, files::is_spec_file);
    if spec_files.is_empty() && errors.is_empty() {
        errors.push(no_input("spec", paths, "`*.tg`"));
    }
    let (specs, spec_errors) = files::load_specs(&spec_files);
    errors.extend(spec_errors);
    (specs, errors)
}

fn no_input(what: &str, paths: &[PathBuf], pattern: &str) -> Diagnostic {
    let list = paths
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut diagnostic = Diagnostic::new(Code::NoInput, format!("no {what} files found in {list}"));
    diagnostic.hint = Some(format!(
        "{what} files are {pattern}; name them on the command line or in a directory"
    ));
    diagnostic
}

/// Writes diagnostics in the chosen format as they come, counting them for the
/// summary and the exit status. Shared by every command that reports diagnostics.
pub struct Report<'o> {
    out: &'o mut dyn Write,
    format: OutputFormat,
    styled: bool,
    pub summary: Summary,
}

impl<'o> Report<'o> {
    /// Colour is used only when stdout is a terminal and `NO_COLOR` is unset.
    pub fn new(out: &'o mut dyn Write, format: OutputFormat) -> Report<'o> {
        Report {
            out,
            format,
            styled: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none(),
            summary: Summary::default(),
        }
    }

    pub fn emit(&mut self, diagnostic: &Diagnostic) -> std::io::Result<()> {
        if diagnostic.is_violation() {
            self.summary.violations += 1;
        } else {
            self.summary.errors += 1;
        }
        match self.format {
            OutputFormat::Human => self
                .out
                .write_all(human::render(diagnostic, self.styled).as_bytes()),
            OutputFormat::Json => writeln!(self.out, "{}", json::render(diagnostic)),
        }
    }

    /// Writes the summary and returns the exit status the findings call for.
    pub fn finish(self) -> std::io::Result<Exit> {
        match self.format {
            OutputFormat::Human => self
                .out
                .write_all(human::render_summary(&self.summary).as_bytes())?,
            OutputFormat::Json => writeln!(self.out, "{}", json::render_summary(&self.summary))?,
        }
        self.out.flush()?;
        Ok(if self.summary.errors > 0 {
            Exit::Error
        } else if self.summary.violations > 0 {
            Exit::Violations
        } else {
            Exit::Success
        })
    }
}
