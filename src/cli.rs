//! The command line: clap types (raw flags), and `run`, which turns them into calls of
//! the library and writes the results. This is the only module that prints.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

use crate::check::CheckOptions;
use crate::diagnostic::render::{human, json};
use crate::diagnostic::{Code, Diagnostic, Summary, explain};
use crate::files;
use crate::machine::Machine;

// The hash-chain and join commands and flags; their bodies live in cli/chain.rs.
mod chain;
pub use chain::{SealArgs, VerifyArgs};

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
    // `help` is ours, so that `tracegate help spec` can print the language reference.
    disable_help_subcommand = true,
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
    /// Print trace files of any format as the normalized records specs see (JSON Lines).
    Convert(ConvertArgs),
    /// List what a spec forbids: the shortest path to every violation it can report
    /// (or, with `--allowed`, the paths it allows); `--emit DIR` writes a synthetic
    /// trace for each.
    Explore(crate::explore::command::ExploreArgs),
    /// Shrink a failing trace to the fewest records that still yield the same
    /// violation at the same rule.
    Shrink(crate::explore::command::ShrinkArgs),
    /// Show which states, transitions and forbidden moves a trace corpus exercised.
    Coverage(crate::explore::command::CoverageArgs),
    /// Explain a diagnostic code (or list them all).
    Explain {
        /// A code such as `forbidden-transition`; omit to list every code.
        code: Option<String>,
    },
    /// Find doubtful specs: unreachable or trap states, unused events, shadowed rules,
    /// overlapping patterns; with `--traces`, tool names that do not line up.
    Lint(LintArgs),
    /// Format specs in the canonical layout (in place, or `--check` for a diff).
    Fmt(FmtArgs),
    /// Draw a spec's machine as DOT, Mermaid, SVG or JSON.
    Graph(GraphArgs),
    /// Seal JSONL logs into one hash-chained log (`prev` and `hash` on every record):
    /// tamper evidence that `verify` checks offline.
    Seal(SealArgs),
    /// Verify sealed logs offline: exit 0 when every chain is intact, 1 at the first
    /// broken link of a log (modified, deleted, inserted or reordered records, a bad
    /// genesis or head), 2 when a log cannot be read.
    Verify(VerifyArgs),
    /// Print help: `tracegate help spec` is the spec language reference; `tracegate
    /// help COMMAND` is a command's help.
    Help {
        /// `spec`, or a command name.
        topic: Vec<String>,
    },
}

#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Spec files or directories (walked for `*.tg`). Default: `specs/`.
    pub specs: Vec<PathBuf>,
    /// Trace files or directories: also compare the tools they use with the specs'.
    #[arg(long, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
    /// `--deny warnings`: exit with status 1 when there are warnings.
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub deny: Vec<Deny>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Deny {
    /// Lint warnings fail the run (exit status 1).
    Warnings,
}

#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// Spec files or directories (walked for `*.tg`); `-` formats standard input to
    /// standard output. Default: `specs/`.
    pub specs: Vec<PathBuf>,
    /// Change no file: print a diff for each file that is not formatted, and exit with
    /// status 1 if there is one.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// The spec file to draw.
    pub spec: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = crate::export::Format::Dot)]
    pub format: crate::export::Format,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Colour the path this trace takes through the machine, and mark where it was
    /// rejected.
    #[arg(long, value_name = "TRACE")]
    pub highlight: Option<PathBuf>,
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
    #[command(flatten)]
    pub input: InputArgs,
    /// Merge every trace file (JSON Lines) into one stream ordered by each record's
    /// RFC 3339 `time` (ties keep file order, then line order), split by `--trace-by`.
    #[arg(long)]
    pub join: bool,
    /// Verify each trace file's hash chain (see `seal`) before checking it; a broken
    /// or unsealed chain is an error.
    #[arg(long)]
    pub verify_chain: bool,
}

/// How trace files are read: `--format`, `--select`, `--verbose`.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// The trace format; `auto` recognizes each file's from its content.
    #[arg(long, value_enum, default_value_t = TraceFormat::Auto)]
    pub format: TraceFormat,
    /// Where the transcripts are in a JSON document: keys and indexes, `[*]` for each
    /// element, e.g. `runs[*].messages`.
    #[arg(long, value_name = "PATH")]
    pub select: Option<String>,
    /// Say on stderr which format each file was read as.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TraceFormat {
    /// Detect each file's format from its content.
    Auto,
    /// tracegate's own JSONL records.
    Native,
    /// OpenAI Chat Completions message lists.
    Openai,
    /// OpenAI Responses API items.
    OpenaiResponses,
    /// Anthropic Messages.
    Anthropic,
    /// MCP / JSON-RPC logs.
    Mcp,
    /// OpenTelemetry GenAI spans, OTLP JSON.
    Otel,
    /// ATIF trajectories.
    Atif,
    /// ToolBench answers' DFSDT search trees.
    Toolbench,
}

impl InputArgs {
    pub(crate) fn options(&self) -> Result<crate::trace::adapters::InputOptions, String> {
        use crate::trace::adapters::Format;
        let format = match self.format {
            TraceFormat::Auto => None,
            TraceFormat::Native => Some(Format::Native),
            TraceFormat::Openai => Some(Format::OpenAi),
            TraceFormat::OpenaiResponses => Some(Format::Responses),
            TraceFormat::Anthropic => Some(Format::Anthropic),
            TraceFormat::Mcp => Some(Format::Mcp),
            TraceFormat::Otel => Some(Format::Otel),
            TraceFormat::Atif => Some(Format::Atif),
            TraceFormat::Toolbench => Some(Format::ToolBench),
        };
        let select = match &self.select {
            None => None,
            Some(path) => Some(
                crate::trace::adapters::Selector::parse(path)
                    .map_err(|message| format!("invalid --select path: {message}"))?,
            ),
        };
        Ok(crate::trace::adapters::InputOptions { format, select })
    }

    fn say(&self, path: &std::path::Path, detected: Option<&crate::trace::adapters::Detected>) {
        if let (true, Some(detected)) = (self.verbose, detected) {
            eprintln!("tracegate: {}: {detected}", path.display());
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct ConvertArgs {
    /// Trace files or directories (walked for `*.jsonl` and `*.json`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub input: InputArgs,
    /// Lines longer than this many bytes are reported as malformed, not read.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
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
        Command::Convert(args) => convert(args, out),
        Command::Explain { code } => explain_code(code.as_deref(), out),
        Command::Explore(args) => crate::explore::command::explore(args, out),
        Command::Shrink(args) => crate::explore::command::shrink(args, out),
        Command::Coverage(args) => crate::explore::command::coverage(args, out),
        Command::Lint(args) => lint(args, out),
        Command::Fmt(args) => fmt(args, out),
        Command::Graph(args) => graph(args, out),
        Command::Help { topic } => help(&topic, out),
        Command::Seal(args) => chain::seal(args, out),
        Command::Verify(args) => chain::verify(args, out),
    }
}

/// The spec language reference, embedded so `help spec` cannot drift from the docs.
pub const SPEC_REFERENCE: &str = include_str!("../specs/README.md");

fn help(topic: &[String], out: &mut dyn Write) -> std::io::Result<Exit> {
    use clap::CommandFactory;
    let mut command = Cli::command();
    match topic {
        [] => write!(out, "{}", command.render_long_help())?,
        [name] if name == "spec" => out.write_all(SPEC_REFERENCE.as_bytes())?,
        [name, ..] => match command.find_subcommand_mut(name) {
            Some(sub) => write!(out, "{}", sub.render_long_help())?,
            None => {
                let names: Vec<String> = command
                    .get_subcommands()
                    .map(|c| c.get_name().to_string())
                    .chain(["spec".to_string()])
                    .collect();
                let hint = crate::suggest::did_you_mean(name, names.iter().map(String::as_str))
                    .map(|close| format!(" (did you mean `{close}`?)"))
                    .unwrap_or_default();
                eprintln!(
                    "error: no help topic `{name}`{hint}; topics: {}",
                    names.join(", ")
                );
                return Ok(Exit::Error);
            }
        },
    }
    Ok(Exit::Success)
}

fn lint(args: LintArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    let spec_paths = or_default(args.specs, "specs");
    let deny_warnings = args.deny.contains(&Deny::Warnings);
    let mut report = Report::lint(out, args.output, deny_warnings);

    let (spec_files, _) = files::collect(&spec_paths, files::is_spec_file);
    let (specs, spec_errors) = load_specs(&spec_paths);
    report.summary.specs = spec_files.len();
    for diagnostic in &spec_errors {
        report.emit(diagnostic)?;
    }
    let linted: Vec<crate::lint::Linted<'_>> =
        specs.iter().filter_map(crate::lint::Linted::new).collect();
    for spec in &linted {
        for diagnostic in crate::lint::lint_spec(spec) {
            report.emit(&diagnostic)?;
        }
    }
    if !args.traces.is_empty() {
        let (trace_files, missing) = files::collect(&args.traces, files::is_trace_file);
        for diagnostic in &missing {
            report.emit(diagnostic)?;
        }
        if trace_files.is_empty() && missing.is_empty() {
            report.emit(&no_input("trace", &args.traces, "`*.jsonl` or `*.json`"))?;
        }
        let (usage, unreadable) = crate::lint::tools::scan(&trace_files);
        report.summary.traces = usage.files;
        report.summary.records = usage.records;
        for diagnostic in &unreadable {
            report.emit(diagnostic)?;
        }
        // A spec that did not compile may mention any tool: compare names only when
        // every spec is known.
        if spec_errors.is_empty() && !trace_files.is_empty() {
            for diagnostic in crate::lint::tools::tool_lints(&linted, &usage) {
                report.emit(&diagnostic)?;
            }
        }
    }
    report.finish()
}

fn fmt(args: FmtArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    use crate::spec::fmt::format_source;
    let mut stderr = std::io::stderr();
    let mut styled_errors = Report::new(&mut stderr, OutputFormat::Human);
    styled_errors.quiet_summary();
    let stdin = args.specs.iter().any(|path| path.as_os_str() == "-");
    if stdin {
        if args.specs.len() > 1 {
            eprintln!("error: `-` (standard input) cannot be combined with other paths");
            return Ok(Exit::Error);
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        let source = crate::machine::SpecSource {
            path: PathBuf::from("<stdin>"),
            text,
        };
        return match format_source(&source.text) {
            Ok(formatted) => {
                if args.check {
                    if formatted == source.text {
                        return Ok(Exit::Success);
                    }
                    out.write_all(
                        crate::spec::fmt::unified_diff("<stdin>", &source.text, &formatted)
                            .as_bytes(),
                    )?;
                    Ok(Exit::Violations)
                } else {
                    out.write_all(formatted.as_bytes())?;
                    Ok(Exit::Success)
                }
            }
            Err(errors) => {
                let source = std::sync::Arc::new(source);
                for error in errors {
                    styled_errors.emit(&files::spec_diagnostic(error, "", &source))?;
                }
                Ok(Exit::Error)
            }
        };
    }

    let spec_paths = or_default(args.specs, "specs");
    let (spec_files, missing) = files::collect(&spec_paths, files::is_spec_file);
    let mut exit = Exit::Success;
    for diagnostic in &missing {
        styled_errors.emit(diagnostic)?;
        exit = Exit::Error;
    }
    if spec_files.is_empty() && missing.is_empty() {
        styled_errors.emit(&no_input("spec", &spec_paths, "`*.tg`"))?;
        exit = Exit::Error;
    }
    for path in &spec_files {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) => {
                let mut diagnostic = Diagnostic::new(
                    Code::UnreadableInput,
                    format!("cannot read `{}`: {err}", path.display()),
                );
                diagnostic.hint = Some("spec files are UTF-8 text".into());
                styled_errors.emit(&diagnostic)?;
                exit = Exit::Error;
                continue;
            }
        };
        match format_source(&text) {
            Ok(formatted) if formatted == text => {}
            Ok(formatted) => {
                if args.check {
                    let name = path.display().to_string();
                    out.write_all(
                        crate::spec::fmt::unified_diff(&name, &text, &formatted).as_bytes(),
                    )?;
                    if exit == Exit::Success {
                        exit = Exit::Violations;
                    }
                } else {
                    std::fs::write(path, formatted)?;
                    eprintln!("formatted {}", path.display());
                }
            }
            Err(errors) => {
                let source = std::sync::Arc::new(crate::machine::SpecSource {
                    path: path.clone(),
                    text,
                });
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                for error in errors {
                    styled_errors.emit(&files::spec_diagnostic(error, &name, &source))?;
                }
                exit = Exit::Error;
            }
        }
    }
    out.flush()?;
    Ok(exit)
}

fn graph(args: GraphArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    let mut stderr = std::io::stderr();
    let mut errors = Report::new(&mut stderr, OutputFormat::Human);
    errors.quiet_summary();
    let (specs, spec_errors) = files::load_specs(std::slice::from_ref(&args.spec));
    for diagnostic in &spec_errors {
        errors.emit(diagnostic)?;
    }
    let Some(machine) = specs.first().filter(|_| spec_errors.is_empty()) else {
        return Ok(Exit::Error);
    };
    let highlight = match &args.highlight {
        None => None,
        Some(trace) => match crate::export::highlight::trace_walk(machine, trace) {
            Ok(walk) => Some(walk),
            Err(diagnostic) => {
                errors.emit(&diagnostic)?;
                return Ok(Exit::Error);
            }
        },
    };
    let text = crate::export::render(machine, args.format, highlight.as_ref());
    match &args.output {
        Some(path) => std::fs::write(path, text)?,
        None => {
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(Exit::Success)
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
    let spec_paths = or_default(args.specs, "specs");
    let trace_paths = or_default(args.traces, "traces");
    let input = match args.input.options() {
        Ok(input) => input,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(Exit::Error);
        }
    };
    let mut report = Report::new(out, args.output);

    let trace_by = match parse_trace_by(args.trace_by.as_deref()) {
        Ok(path) => path,
        Err(exit) => return Ok(exit),
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
    if args.verify_chain {
        chain::verify_chains(&trace_files, args.max_line_bytes, &mut report)?;
    }
    // A spec that does not compile checks nothing: fail closed, before reading traces.
    if spec_errors.is_empty() && !specs.is_empty() && args.join {
        let options = CheckOptions {
            trace_by,
            max_line_bytes: args.max_line_bytes,
        };
        let outcome = chain::check_join(&specs, &trace_files, &options);
        report.summary.records += outcome.records;
        report.summary.traces += outcome.traces;
        for diagnostic in &outcome.diagnostics {
            report.emit(diagnostic)?;
        }
    } else if spec_errors.is_empty() && !specs.is_empty() {
        let options = CheckOptions {
            trace_by,
            max_line_bytes: args.max_line_bytes,
        };
        let run = || crate::ingest::check_paths(&specs, &trace_files, &options, &input);
        let checked = match args.jobs {
            Some(jobs) => rayon::ThreadPoolBuilder::new()
                .num_threads(jobs.max(1))
                .build()
                .map_err(std::io::Error::other)?
                .install(run),
            None => run(),
        };
        for (path, checked) in trace_files.iter().zip(&checked) {
            args.input.say(path, checked.detected.as_ref());
            let outcome = &checked.outcome;
            report.summary.records += outcome.records;
            report.summary.traces += outcome.traces;
            for diagnostic in &outcome.diagnostics {
                report.emit(diagnostic)?;
            }
        }
    }
    report.finish()
}

/// `tracegate convert`: records to stdout, problems to stderr.
fn convert(args: ConvertArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    let input = match args.input.options() {
        Ok(input) => input,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(Exit::Error);
        }
    };
    let mut stderr = std::io::stderr();
    let mut errors = Report::new(&mut stderr, OutputFormat::Human);
    errors.quiet_summary();
    let (paths, missing) = files::collect(&args.files, files::is_trace_file);
    for diagnostic in &missing {
        errors.emit(diagnostic)?;
    }
    for path in &paths {
        let converted = crate::ingest::convert_path(path, &input, args.max_line_bytes, out)?;
        args.input.say(path, converted.detected.as_ref());
        for diagnostic in &converted.diagnostics {
            errors.emit(diagnostic)?;
        }
    }
    out.flush()?;
    Ok(if errors.summary.errors > 0 {
        Exit::Error
    } else {
        Exit::Success
    })
}

/// Whether human output may use colour: stdout is a terminal and `NO_COLOR` is unset.
pub(crate) fn styled() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

/// The paths given, or `default` (`specs`, `traces`) when none were.
pub(crate) fn or_default(paths: Vec<PathBuf>, default: &str) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from(default)]
    } else {
        paths
    }
}

/// The `--trace-by` path, if given; a bad one is reported and ends the command.
pub(crate) fn parse_trace_by(
    text: Option<&str>,
) -> Result<Option<Vec<crate::spec::ast::Segment>>, Exit> {
    match text.map(crate::spec::parser::parse_path) {
        None => Ok(None),
        Some(Ok(path)) => Ok(Some(path.segments)),
        Some(Err(message)) => {
            eprintln!("error: invalid --trace-by path: {message}");
            Err(Exit::Error)
        }
    }
}

/// Compiles the specs under `paths`: the machines, and every error (none found is one).
pub(crate) fn load_specs(paths: &[PathBuf]) -> (Vec<Machine>, Vec<Diagnostic>) {
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
    mode: ReportMode,
    pub summary: Summary,
}

/// Which command a report is for: it decides the summary line and the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReportMode {
    Check,
    /// Warnings fail the run only when denied.
    Lint {
        deny_warnings: bool,
    },
    /// Diagnostics only, no summary (errors beside another command's output).
    Quiet,
}

impl<'o> Report<'o> {
    /// Colour is used only when stdout is a terminal and `NO_COLOR` is unset.
    pub fn new(out: &'o mut dyn Write, format: OutputFormat) -> Report<'o> {
        Report {
            out,
            format,
            styled: styled(),
            mode: ReportMode::Check,
            summary: Summary::default(),
        }
    }

    /// A report for `lint`: the summary counts warnings, and warnings exit with status 1
    /// only when `deny_warnings`.
    pub fn lint(out: &'o mut dyn Write, format: OutputFormat, deny_warnings: bool) -> Report<'o> {
        Report {
            mode: ReportMode::Lint { deny_warnings },
            ..Report::new(out, format)
        }
    }

    /// Writes no summary line at `finish`.
    pub fn quiet_summary(&mut self) {
        self.mode = ReportMode::Quiet;
    }

    pub fn emit(&mut self, diagnostic: &Diagnostic) -> std::io::Result<()> {
        if diagnostic.is_violation() {
            self.summary.violations += 1;
        } else if diagnostic.is_warning() {
            self.summary.warnings += 1;
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
        let summary = match (self.mode, self.format) {
            (ReportMode::Check, OutputFormat::Human) => human::render_summary(&self.summary),
            (ReportMode::Check, OutputFormat::Json) => {
                format!("{}\n", json::render_summary(&self.summary))
            }
            (ReportMode::Lint { .. }, OutputFormat::Human) => {
                human::render_lint_summary(&self.summary)
            }
            (ReportMode::Lint { .. }, OutputFormat::Json) => {
                format!("{}\n", json::render_lint_summary(&self.summary))
            }
            (ReportMode::Quiet, _) => String::new(),
        };
        self.out.write_all(summary.as_bytes())?;
        self.out.flush()?;
        let denied = matches!(
            self.mode,
            ReportMode::Lint {
                deny_warnings: true
            }
        );
        Ok(if self.summary.errors > 0 {
            Exit::Error
        } else if self.summary.violations > 0 || (denied && self.summary.warnings > 0) {
            Exit::Violations
        } else {
            Exit::Success
        })
    }
}
