//! The command line as parsed: clap types that mirror the flags one for one, with no
//! judgement beyond what clap itself checks (required arguments, the names of enum
//! values). [`super::config`] turns them into what a command runs with. This is the
//! only module that knows clap.
//!
//! The library's own enums (trace formats, graph formats) are offered to clap through
//! `choices`, built from each enum's `ALL` and `name`: there is one enum per concept,
//! in the library, and its help lines live here beside the flag.

use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::explore::{self, DEFAULT_LIMIT, DEFAULT_MAX_DEPTH};
use crate::export;
use crate::trace::adapters;

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
    /// When to colour reports: `auto` colours a stream that is a terminal, unless
    /// NO_COLOR is set.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Print no report on standard output: only errors on standard error and the exit
    /// status (files named by `--report` or `-o` are still written).
    #[arg(long, short = 'q', global = true)]
    pub quiet: bool,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal, unless NO_COLOR is set.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
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
    Explore(ExploreArgs),
    /// Shrink a failing trace to the fewest records that still yield the same
    /// violation at the same rule.
    Shrink(ShrinkArgs),
    /// Show which states, transitions and forbidden moves a trace corpus exercised.
    Coverage(CoverageArgs),
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
    /// Merge the reports of a run split with `check --shard K/N` into one (e.g.
    /// `tracegate merge --format sarif shard-*.sarif > all.sarif`).
    Merge(MergeArgs),
    /// Print a shell completion script (e.g. `tracegate completions bash >
    /// /etc/bash_completion.d/tracegate`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Print the manual page (roff; e.g. `tracegate man | man -l -`).
    Man,
    /// Print help: `tracegate help spec` is the spec language reference; `tracegate
    /// help COMMAND` is a command's help.
    Help {
        /// `spec`, or a command name.
        topic: Vec<String>,
    },
}

/// `completions SHELL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Spec files or directories (walked for `*.tg`). Default: the scopes of the
    /// project file `tracegate.toml` (found from the working directory upward), or
    /// `specs/` when there is none.
    pub specs: Vec<PathBuf>,
    /// Trace files or directories (walked for `*.jsonl` and `*.json`). Default: as for
    /// specs, or `traces/`.
    #[arg(long, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckOutput::Human)]
    pub output: CheckOutput,
    /// With `--output sarif`: file URIs are relative to this directory (default: the
    /// working directory), e.g. the repository's root.
    #[arg(long, value_name = "DIR")]
    pub sarif_root: Option<PathBuf>,
    /// Also write a self-contained HTML report to this file.
    #[arg(long, value_name = "FILE.html")]
    pub report: Option<PathBuf>,
    /// Split each trace file into one trace per value of this field (e.g. `case`).
    #[arg(long, value_name = "FIELD")]
    pub trace_by: Option<String>,
    /// Lines longer than this many bytes are reported as malformed, not read.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
    /// How many distinct values each trace's provenance index (`in outputs`, `in
    /// messages`) holds; past it, later values are not remembered and a
    /// `provenance-limit` warning says where.
    #[arg(long, value_name = "N", default_value_t = crate::eval::SEEN_LIMIT)]
    pub provenance_limit: usize,
    /// Worker threads for checking files in parallel (default: one per core). With
    /// fewer files than threads, a native JSONL file's lines are also decoded on a
    /// thread of their own, ahead of checking.
    #[arg(long, short = 'j')]
    pub jobs: Option<usize>,
    #[command(flatten)]
    pub input: InputArgs,
    /// Merge every trace file (any format) into one stream ordered by each record's
    /// RFC 3339 time (`--join-time`; ties keep file order, then record order), split
    /// by `--trace-by`.
    #[arg(long)]
    pub join: bool,
    /// With `--join`: the field that orders records, a path such as `time` (the
    /// default) or `meta.at`. Adapters put a transcript's timestamps in `time`.
    #[arg(long, value_name = "PATH", requires = "join")]
    pub join_time: Option<String>,
    /// Verify each trace file's hash chain (see `seal`) before checking it; a broken
    /// or unsealed chain is an error.
    #[arg(long)]
    pub verify_chain: bool,
    /// Check only part K of N (e.g. `2/4`), for a CI matrix of N jobs: the trace files
    /// whose path hashes to K, or, with `--trace-by`, the traces whose key does. The N
    /// parts together check exactly what one run checks.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct SealArgs {
    /// JSONL logs to seal, in order, into one chain (`-` reads standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write the sealed log to this file instead of standard output.
    #[arg(long = "output", short = 'o', value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Continue the sealed log OUT (verified first) instead of starting a new one.
    #[arg(long, requires = "output")]
    pub append: bool,
    /// Lines longer than this many bytes are refused, not read.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
    /// Sign the head with this Ed25519 secret key (a file of 64 hex digits, the seed)
    /// into OUT.sig.
    #[arg(long, value_name = "SECRET_KEY_FILE", requires = "output")]
    pub key: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Sealed logs; each is its own chain (`-` reads standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
    /// The hash the last record must have (64 hex digits, as `seal` and `verify`
    /// print it): catches a log cut short or with its tail replaced. One file only.
    #[arg(long, value_name = "HASH")]
    pub head: Option<String>,
    /// Check FILE.sig, the signature `seal --key` wrote over each log's head, with this
    /// Ed25519 public key (a file of 64 hex digits).
    #[arg(long, value_name = "PUBLIC_KEY_FILE")]
    pub key: Option<PathBuf>,
    /// Lines longer than this many bytes are reported, not read.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
}

/// How trace files are read: `--format`, `--select`, `--verbose`.
#[derive(Debug, clap::Args)]
pub struct InputArgs {
    /// The trace format; `auto` recognizes each file's from its content.
    #[arg(long, value_parser = trace_formats(), default_value = "auto")]
    pub format: TraceFormat,
    /// Where the transcripts are in a JSON document: keys and indexes, `[*]` for each
    /// element, e.g. `runs[*].messages`.
    #[arg(long, value_name = "PATH")]
    pub select: Option<String>,
    /// Say on stderr which format each file was read as.
    #[arg(long, short = 'v')]
    pub verbose: bool,
}

/// `--format`: a format the library reads, or `None` for `auto` (detect each file's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceFormat(pub Option<adapters::Format>);

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

#[derive(Debug, clap::Args)]
pub struct ExploreArgs {
    /// Spec files or directories (walked for `*.tg`).
    #[arg(required = true)]
    pub specs: Vec<PathBuf>,
    /// Consider paths of at most this many events.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_DEPTH)]
    pub max_depth: usize,
    /// List the paths each spec allows (simple paths plus one traversal of each
    /// cycle), instead of its counterexamples.
    #[arg(long)]
    pub allowed: bool,
    /// With `--allowed`: list at most this many paths per spec.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_LIMIT)]
    pub limit: usize,
    /// Write one synthetic trace per path: `DIR/<spec>/fail/<code>-<state>[-<event>]`
    /// for counterexamples, `DIR/<spec>/pass/<n>-<events>` with `--allowed`.
    #[arg(long, value_name = "DIR")]
    pub emit: Option<PathBuf>,
    /// The format of the emitted traces.
    #[arg(
        long = "as",
        value_name = "FORMAT",
        value_parser = written_formats(),
        default_value = explore::Format::Native.name(),
        requires = "emit"
    )]
    pub format: explore::Format,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
}

#[derive(Debug, clap::Args)]
pub struct ShrinkArgs {
    /// The spec file (or directory of specs) the trace violates.
    pub spec: PathBuf,
    /// The failing trace, in any format tracegate reads. A native trace is shrunk line
    /// by line; any other by removing whole elements (messages, items, steps, spans,
    /// JSON-RPC messages), and written in its own format. A file with no element that
    /// can go on its own is shrunk as its normalized records, written as native JSONL.
    pub trace: PathBuf,
    /// Write the shrunk trace here (default: standard output, with the summary on
    /// standard error).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write secrets (tokens, keys, passwords) in the shrunk trace as they are, for
    /// local debugging only; by default they are masked. Never use it for a trace that
    /// leaves your machine.
    #[arg(long)]
    pub keep_secrets: bool,
    /// Keep the violation with this code (default: the trace's first violation).
    #[arg(long, value_name = "CODE")]
    pub code: Option<String>,
    /// Keep the N-th violation (1-based) among those `--code` selects.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub violation: usize,
    /// Split the trace file into one trace per value of this field (e.g. `case`).
    #[arg(long, value_name = "FIELD")]
    pub trace_by: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
}

#[derive(Debug, clap::Args)]
pub struct CoverageArgs {
    /// Spec files or directories (walked for `*.tg`). Default: `specs/`.
    pub specs: Vec<PathBuf>,
    /// Trace files or directories (walked for `*.jsonl` and `*.json`). Default: `traces/`.
    #[arg(long, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Fail (exit 1) when a spec has less than this percentage of its transitions
    /// exercised.
    #[arg(long, value_name = "TRANSITIONS_PERCENT")]
    pub min: Option<f64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
    /// Split each trace file into one trace per value of this field (e.g. `case`).
    #[arg(long, value_name = "FIELD")]
    pub trace_by: Option<String>,
    /// Measure only part K of N (e.g. `2/4`), split as `check --shard` splits a run;
    /// `tracegate merge --format coverage` adds the parts' JSON reports up.
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    #[command(flatten)]
    pub input: InputArgs,
}

#[derive(Debug, clap::Args)]
pub struct LintArgs {
    /// Spec files or directories (walked for `*.tg`). Default: `specs/`.
    pub specs: Vec<PathBuf>,
    /// Trace files or directories: also compare the tools they use with the specs'.
    #[arg(long, num_args = 1..)]
    pub traces: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = LintOutput::Human)]
    pub output: LintOutput,
    /// With `--output sarif`: file URIs are relative to this directory (default: the
    /// working directory), e.g. the repository's root.
    #[arg(long, value_name = "DIR")]
    pub sarif_root: Option<PathBuf>,
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
    #[arg(long, value_parser = graph_formats(), default_value = export::Format::Dot.name())]
    pub format: export::Format,
    /// Write to this file instead of standard output.
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Colour the path this trace takes through the machine, and mark where it was
    /// rejected.
    #[arg(long, value_name = "TRACE")]
    pub highlight: Option<PathBuf>,
}

/// `--output` of the commands that report findings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// rustc-style report (colour on a terminal unless NO_COLOR is set).
    Human,
    /// JSON Lines: one object per finding, then a summary.
    Json,
}

/// `check --output`: the formats every reporting command has, and those made for CI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CheckOutput {
    /// rustc-style report (colour on a terminal unless NO_COLOR is set).
    Human,
    /// JSON Lines: one object per finding, then a summary.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// JUnit XML: a test suite per spec, a test case per spec and trace file.
    Junit,
    /// GitHub Actions workflow commands (annotations), and a Markdown summary appended
    /// to $GITHUB_STEP_SUMMARY when it is set.
    Github,
}

/// `merge`: reports of `check` (or of `coverage`) to merge, all of one format.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// The reports' format, as `check --output` wrote them.
    #[arg(long, value_enum)]
    pub format: MergeFormat,
    /// The reports, in the order their findings are to come.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// With `--format coverage`: fail (exit 1) when a spec has less than this
    /// percentage of its transitions exercised by all the parts together.
    #[arg(long, value_name = "TRANSITIONS_PERCENT")]
    pub min: Option<f64>,
}

/// `merge --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MergeFormat {
    /// JSON Lines: every finding in file order, then one summary with the counts summed.
    Json,
    /// SARIF 2.1.0: one run with every rule, result and notification.
    Sarif,
    /// JUnit XML: a test suite per spec with every file's test cases; counts recomputed.
    Junit,
    /// JSON reports of `coverage --shard`: every count summed, ratios recomputed.
    Coverage,
}

/// `lint --output`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LintOutput {
    /// rustc-style report (colour on a terminal unless NO_COLOR is set).
    Human,
    /// JSON Lines: one object per finding, then a summary.
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.
    Sarif,
    /// GitHub Actions workflow commands (annotations), and a Markdown summary appended
    /// to $GITHUB_STEP_SUMMARY when it is set.
    Github,
}

/// A clap value parser for a library enum: `all` its values, each offered under its
/// `name` with a `help` line. What clap accepts is exactly `all`.
fn choices<T>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    help: fn(T) -> &'static str,
) -> impl TypedValueParser<Value = T>
where
    T: Copy + Send + Sync + 'static,
{
    let values = all
        .iter()
        .map(|&v| PossibleValue::new(name(v)).help(help(v)));
    PossibleValuesParser::new(values).map(move |chosen: String| {
        all.iter()
            .copied()
            .find(|&v| name(v) == chosen)
            .expect("bug: clap accepts only the names of `all`")
    })
}

/// `--format` of the commands that read traces: `auto`, then every format read.
fn trace_formats() -> impl TypedValueParser<Value = TraceFormat> {
    const N: usize = adapters::Format::ALL.len();
    static ALL: [TraceFormat; N + 1] = {
        let mut all = [TraceFormat(None); N + 1];
        let mut i = 0;
        while i < N {
            all[i + 1] = TraceFormat(Some(adapters::Format::ALL[i]));
            i += 1;
        }
        all
    };
    choices(
        &ALL,
        |choice| choice.0.map_or("auto", adapters::Format::name),
        |choice| {
            use adapters::Format;
            match choice.0 {
                None => "Detect each file's format from its content",
                Some(Format::Native) => "tracegate's own JSONL records",
                Some(Format::OpenAi) => "OpenAI Chat Completions message lists",
                Some(Format::Responses) => "OpenAI Responses API items",
                Some(Format::Anthropic) => "Anthropic Messages",
                Some(Format::Mcp) => "MCP / JSON-RPC logs",
                Some(Format::Otel) => "OpenTelemetry GenAI spans, OTLP JSON",
                Some(Format::Atif) => "ATIF trajectories",
                Some(Format::ToolBench) => "ToolBench answers' DFSDT search trees",
                Some(Format::ClaudeCode) => {
                    "Claude Code session logs (JSONL, or the exported `loglines` JSON)"
                }
                Some(Format::Codex) => "Codex CLI rollouts",
                Some(Format::Gemini) => "Gemini CLI session files",
            }
        },
    )
}

/// `explore --as`: the formats synthetic traces are written in.
fn written_formats() -> impl TypedValueParser<Value = explore::Format> {
    choices(&explore::Format::ALL, explore::Format::name, |format| {
        use explore::Format;
        match format {
            Format::Native => "Native JSONL: one normalized record per line",
            Format::Openai => {
                "OpenAI Chat Completions: `{\"messages\": [...]}` with assistant `tool_calls` and `role: \"tool\"` replies"
            }
            Format::Anthropic => {
                "Anthropic Messages: `{\"messages\": [...]}` with `tool_use` and `tool_result` blocks"
            }
            Format::Mcp => {
                "MCP: JSON-RPC `tools/call` requests and their responses, one message per line"
            }
            Format::Otel => "OpenTelemetry GenAI: OTLP JSON with one `execute_tool` span per call",
        }
    })
}

/// `graph --format`.
fn graph_formats() -> impl TypedValueParser<Value = export::Format> {
    choices(&export::Format::ALL, export::Format::name, |format| {
        use export::Format;
        match format {
            Format::Dot => "Graphviz DOT",
            Format::Mermaid => "A Mermaid `stateDiagram-v2` (renders on GitHub as is)",
            Format::Svg => "A standalone SVG image, laid out in-process",
            Format::Json => "The machine as JSON (see the language reference)",
        }
    })
}

/// The clap command, for completions and the manual page.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Parses the process's command line; a malformed one ends the process with clap's
/// message and status 2.
pub fn parse() -> Cli {
    Cli::parse()
}

/// Parses `line` (without the program name), for tests.
#[cfg(test)]
pub(crate) fn parse_line(line: &[&str]) -> Cli {
    Cli::try_parse_from(std::iter::once("tracegate").chain(line.iter().copied()))
        .expect("the command line parses")
}

/// The names `tracegate help TOPIC` knows besides `spec`: every command's.
pub fn command_names() -> Vec<String> {
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

/// The long help of the whole program, or of the command `name` if there is one.
pub fn long_help(name: Option<&str>) -> Option<String> {
    let mut command = Cli::command();
    match name {
        None => Some(command.render_long_help().to_string()),
        Some(name) => command
            .find_subcommand_mut(name)
            .map(|sub| sub.render_long_help().to_string()),
    }
}
