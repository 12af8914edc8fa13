//! From flags as parsed to what a command runs with: defaults filled in, paths and
//! codes parsed, numbers checked. Every usage problem becomes a [`Diagnostic`]
//! (`usage-error`) of the same shape as any other finding, and all of a command line's
//! problems are reported together, before any file is read.

use std::path::PathBuf;

use super::args::{
    CheckArgs, CheckOutput, Cli, Command, ConvertArgs, CoverageArgs, Deny, ExploreArgs, FmtArgs,
    GraphArgs, InputArgs, LintArgs, LintOutput, MergeArgs, MergeFormat, OutputFormat, Shell,
    ShrinkArgs, VerifyArgs,
};
use super::project::{self, Project};
use crate::chain::Digest;
use crate::check::{CheckOptions, Shard};
use crate::diagnostic::{Code, Diagnostic};
use crate::explore::{self, ShrinkOptions};
use crate::export;
use crate::spec::ast::Segment;
use crate::trace::adapters::{InputOptions, Selector};

/// A validated command line: one configuration per command.
#[derive(Debug)]
pub enum Config {
    Check(CheckConfig),
    Convert(ConvertConfig),
    Explore(ExploreConfig),
    Shrink(ShrinkConfig),
    Coverage(CoverageConfig),
    Explain(ExplainConfig),
    Lint(LintConfig),
    Fmt(FmtConfig),
    Graph(GraphConfig),
    Help(HelpConfig),
    Seal(SealConfig),
    Verify(VerifyConfig),
    Merge(MergeConfig),
    /// A shell's completion script.
    Completions(Shell),
    /// The manual page.
    Man,
}

/// How traces are read, shared by every command that reads them.
#[derive(Debug, Clone, Default)]
pub struct Input {
    pub options: InputOptions,
    /// Say on stderr which format each file was read as.
    pub verbose: bool,
}

#[derive(Debug)]
pub struct CheckConfig {
    pub specs: Vec<PathBuf>,
    pub traces: Vec<PathBuf>,
    /// The project file's scopes, when no spec or trace was named and one was found:
    /// then they, not `specs` × `traces`, say what is checked.
    pub project: Option<Project>,
    pub output: CheckOutput,
    /// What SARIF file URIs are relative to; `None` for the working directory.
    pub sarif_root: Option<PathBuf>,
    /// Where the HTML report goes, if anywhere.
    pub report: Option<PathBuf>,
    pub check: CheckOptions,
    pub input: Input,
    /// Worker threads; `None` for one per core.
    pub jobs: Option<usize>,
    /// Merge the trace files into one stream by time (`--join`).
    pub join: bool,
    /// The field that orders joined records (`--join-time`).
    pub join_time: crate::trace::join::TimeField,
    /// Verify each trace file's hash chain before checking it (`--verify-chain`).
    pub verify_chain: bool,
    /// Check only this part of the run (`--shard K/N`).
    pub shard: Option<Shard>,
}

/// `tracegate merge`.
#[derive(Debug)]
pub struct MergeConfig {
    pub format: MergeFormat,
    pub files: Vec<PathBuf>,
    /// With coverage reports: the transition coverage below which the run fails.
    pub min: Option<f64>,
}

/// `tracegate seal`.
#[derive(Debug)]
pub struct SealConfig {
    pub files: Vec<PathBuf>,
    /// The sealed log's file; standard output when `None`.
    pub output: Option<PathBuf>,
    /// Continue the sealed log `output` instead of starting a new one.
    pub append: bool,
    pub max_line_bytes: Option<usize>,
    /// The Ed25519 secret key file that signs the head.
    pub key: Option<PathBuf>,
}

/// `tracegate verify`.
#[derive(Debug)]
pub struct VerifyConfig {
    pub files: Vec<PathBuf>,
    pub output: OutputFormat,
    /// The hash the last record of the one log must have.
    pub head: Option<Digest>,
    /// The Ed25519 public key file that checks each log's signature.
    pub key: Option<PathBuf>,
    pub max_line_bytes: Option<usize>,
}

#[derive(Debug)]
pub struct ConvertConfig {
    pub files: Vec<PathBuf>,
    pub input: Input,
    pub max_line_bytes: Option<usize>,
}

#[derive(Debug)]
pub struct ExploreConfig {
    pub specs: Vec<PathBuf>,
    pub max_depth: usize,
    /// List allowed paths instead of counterexamples, at most `limit` per spec.
    pub allowed: bool,
    pub limit: usize,
    /// Where synthetic traces are written, if anywhere, and in which format.
    pub emit: Option<PathBuf>,
    pub format: explore::Format,
    pub output: OutputFormat,
}

#[derive(Debug)]
pub struct ShrinkConfig {
    pub spec: PathBuf,
    pub trace: PathBuf,
    /// Where the shrunk trace goes; `None` for stdout.
    pub output: Option<PathBuf>,
    /// Write the trace's secrets unmasked (`--keep-secrets`).
    pub keep_secrets: bool,
    pub shrink: ShrinkOptions,
    pub input: Input,
}

#[derive(Debug)]
pub struct CoverageConfig {
    pub specs: Vec<PathBuf>,
    pub traces: Vec<PathBuf>,
    /// The project file's scopes, when no spec or trace was named and one was found:
    /// then they, not `specs` × `traces`, say what is measured.
    pub project: Option<Project>,
    /// The transition coverage (a percentage) below which the run fails.
    pub min: Option<f64>,
    pub output: OutputFormat,
    pub check: CheckOptions,
    pub input: Input,
    /// Measure only this part of the run (`--shard K/N`).
    pub shard: Option<Shard>,
}

#[derive(Debug)]
pub struct ExplainConfig {
    /// The code to explain; `None` lists them all.
    pub code: Option<Code>,
}

#[derive(Debug)]
pub struct LintConfig {
    pub specs: Vec<PathBuf>,
    /// Traces whose tools are compared with the specs'; empty for none.
    pub traces: Vec<PathBuf>,
    pub output: LintOutput,
    /// What SARIF file URIs are relative to; `None` for the working directory.
    pub sarif_root: Option<PathBuf>,
    pub deny_warnings: bool,
}

#[derive(Debug)]
pub struct FmtConfig {
    pub target: FmtTarget,
    /// Print diffs instead of writing files.
    pub check: bool,
}

/// What `fmt` formats.
#[derive(Debug, PartialEq, Eq)]
pub enum FmtTarget {
    /// Standard input, to standard output.
    Stdin,
    /// Spec files, in place.
    Paths(Vec<PathBuf>),
}

#[derive(Debug)]
pub struct GraphConfig {
    pub spec: PathBuf,
    pub format: export::Format,
    /// The file the drawing goes to; `None` for stdout.
    pub output: Option<PathBuf>,
    /// The trace whose walk is drawn.
    pub highlight: Option<PathBuf>,
}

#[derive(Debug, PartialEq, Eq)]
pub enum HelpConfig {
    /// The program's help.
    Program,
    /// The spec language reference.
    Spec,
    /// A command's help.
    Command(String),
}

/// Validates a parsed command line.
pub fn config(cli: Cli) -> Result<Config, Vec<Diagnostic>> {
    let mut problems = Problems::default();
    let config = match cli.command {
        Command::Check(args) => Config::Check(check(args, &mut problems)),
        Command::Convert(args) => Config::Convert(convert(args, &mut problems)),
        Command::Explore(args) => Config::Explore(explore(args)),
        Command::Shrink(args) => Config::Shrink(shrink(args, &mut problems)),
        Command::Coverage(args) => Config::Coverage(coverage(args, &mut problems)),
        Command::Explain { code } => Config::Explain(ExplainConfig {
            code: code.and_then(|name| code_named(&name, &mut problems)),
        }),
        Command::Lint(args) => Config::Lint(lint(args, &mut problems)),
        Command::Fmt(args) => Config::Fmt(fmt(args, &mut problems)),
        Command::Graph(args) => Config::Graph(graph(args)),
        Command::Help { topic } => Config::Help(help(&topic, &mut problems)),
        Command::Seal(args) => Config::Seal(SealConfig {
            files: args.files,
            output: args.output,
            append: args.append,
            max_line_bytes: args.max_line_bytes,
            key: args.key,
        }),
        Command::Verify(args) => Config::Verify(verify(args, &mut problems)),
        Command::Merge(args) => Config::Merge(merge(args, &mut problems)),
        Command::Completions { shell } => Config::Completions(shell),
        Command::Man => Config::Man,
    };
    problems.or(config)
}

/// The usage problems found so far.
#[derive(Default)]
struct Problems(Vec<Diagnostic>);

impl Problems {
    /// The value, or `None` after recording the problem `message` describes.
    fn take<T, E>(
        &mut self,
        checked: Result<T, E>,
        problem: impl FnOnce(E) -> (String, Option<String>),
    ) -> Option<T> {
        match checked {
            Ok(value) => Some(value),
            Err(err) => {
                let (message, hint) = problem(err);
                self.0.push(usage(message, hint));
                None
            }
        }
    }

    fn or<T>(self, value: T) -> Result<T, Vec<Diagnostic>> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self.0)
        }
    }
}

/// A `usage-error` diagnostic.
fn usage(message: String, hint: Option<String>) -> Diagnostic {
    let mut diagnostic = Diagnostic::new(Code::UsageError, message);
    diagnostic.hint = hint;
    diagnostic
}

/// The paths given, or `default` (`specs`, `traces`) when none were.
fn or_default(paths: Vec<PathBuf>, default: &str) -> Vec<PathBuf> {
    if paths.is_empty() {
        vec![PathBuf::from(default)]
    } else {
        paths
    }
}

fn input(args: InputArgs, problems: &mut Problems) -> Input {
    let select = args.select.and_then(|path| {
        problems.take(Selector::parse(&path), |message| {
            (format!("invalid --select path: {message}"), None)
        })
    });
    Input {
        options: InputOptions {
            format: args.format.0,
            select,
        },
        verbose: args.verbose,
    }
}

fn trace_by(text: Option<String>, problems: &mut Problems) -> Option<Vec<Segment>> {
    let text = text?;
    let parsed = crate::spec::parser::parse_path(&text).map(|path| path.segments);
    problems.take(parsed, |message| {
        (format!("invalid --trace-by path: {message}"), None)
    })
}

fn join_time(text: Option<String>, problems: &mut Problems) -> crate::trace::join::TimeField {
    let Some(text) = text else {
        return Default::default();
    };
    let parsed = crate::spec::parser::parse_path(&text).map(|path| path.segments);
    problems
        .take(parsed, |message| {
            (format!("invalid --join-time path: {message}"), None)
        })
        .map(|path| crate::trace::join::TimeField { name: text, path })
        .unwrap_or_default()
}

fn code_named(name: &str, problems: &mut Problems) -> Option<Code> {
    problems.take(Code::from_name(name).ok_or(()), |()| {
        let close = crate::suggest::did_you_mean(name, Code::ALL.iter().map(|c| c.as_str()));
        let hint = match close {
            Some(close) => format!("did you mean `{close}`? `tracegate explain` lists them all"),
            None => "`tracegate explain` lists them all".to_string(),
        };
        (format!("unknown code `{name}`"), Some(hint))
    })
}

/// The project file's scopes, when the command line names nothing to check (`nothing`)
/// and one is found from the working directory upward; a file that does not load is a
/// problem.
fn project_file(nothing: bool, problems: &mut Problems) -> Option<Project> {
    if !nothing {
        return None;
    }
    let cwd = std::env::current_dir().ok()?;
    let file = project::find(&cwd)?;
    let loaded = project::load(&file, &cwd);
    problems.take(loaded, |messages| {
        (
            messages.join("\n"),
            Some(format!(
                "see `{}` in the README; name specs and --traces to check without it",
                project::FILE_NAME
            )),
        )
    })
}

fn check(args: CheckArgs, problems: &mut Problems) -> CheckConfig {
    let input = input(args.input, problems);
    let project = project_file(args.specs.is_empty() && args.traces.is_empty(), problems);
    let shard = args
        .shard
        .and_then(|text| problems.take(shard(&text), |m| m));
    if shard.is_some() && args.join {
        problems.0.push(usage(
            "--shard cannot split a --join run: joining needs every file in one stream".into(),
            Some("shard a --join run by running it per group of files instead".into()),
        ));
    }
    if args.sarif_root.is_some() && args.output != CheckOutput::Sarif {
        problems
            .0
            .push(usage("--sarif-root applies to --output sarif".into(), None));
    }
    // The bound is the command line's in every scope.
    let project = project.map(|mut project| {
        for scope in &mut project.scopes {
            scope.check.provenance_limit = Some(args.provenance_limit);
        }
        project
    });
    CheckConfig {
        specs: or_default(args.specs, "specs"),
        traces: or_default(args.traces, "traces"),
        project,
        output: args.output,
        sarif_root: args.sarif_root,
        report: args.report,
        check: CheckOptions {
            trace_by: trace_by(args.trace_by, problems),
            max_line_bytes: args.max_line_bytes,
            provenance_limit: Some(args.provenance_limit),
            decode_ahead: false,
        },
        input,
        jobs: args.jobs,
        join: args.join,
        join_time: join_time(args.join_time, problems),
        verify_chain: args.verify_chain,
        shard,
    }
}

/// `--shard K/N`: part K (from 1) of N.
fn shard(text: &str) -> Result<Shard, (String, Option<String>)> {
    let hint = || Some("write the part and the number of parts, as in `--shard 2/4`".into());
    let parsed = text
        .split_once('/')
        .and_then(|(k, n)| Some((k.trim().parse::<u64>().ok()?, n.trim().parse::<u64>().ok()?)));
    match parsed {
        None => Err((format!("invalid --shard `{text}`: expected K/N"), hint())),
        Some((index, count)) if count == 0 || index == 0 || index > count => Err((
            format!("invalid --shard `{text}`: K must be from 1 to N, and N at least 1"),
            hint(),
        )),
        Some((index, count)) => Ok(Shard { index, count }),
    }
}

fn verify(args: VerifyArgs, problems: &mut Problems) -> VerifyConfig {
    let head = args.head.and_then(|text| {
        let parsed = Digest::parse(&text.to_ascii_lowercase()).ok_or(());
        problems.take(parsed, |()| {
            (format!("--head must be 64 hex digits, got `{text}`"), None)
        })
    });
    if head.is_some() && args.files.len() > 1 {
        problems.0.push(usage(
            "--head pins the head of one log, but several were named".to_string(),
            Some("verify each log with its own head".to_string()),
        ));
    }
    VerifyConfig {
        files: args.files,
        output: args.output,
        head,
        key: args.key,
        max_line_bytes: args.max_line_bytes,
    }
}

fn convert(args: ConvertArgs, problems: &mut Problems) -> ConvertConfig {
    ConvertConfig {
        files: args.files,
        input: input(args.input, problems),
        max_line_bytes: args.max_line_bytes,
    }
}

fn explore(args: ExploreArgs) -> ExploreConfig {
    ExploreConfig {
        specs: args.specs,
        max_depth: args.max_depth,
        allowed: args.allowed,
        limit: args.limit,
        emit: args.emit,
        format: args.format,
        output: args.output,
    }
}

fn shrink(args: ShrinkArgs, problems: &mut Problems) -> ShrinkConfig {
    let code = args.code.and_then(|name| code_named(&name, problems));
    let trace_by = trace_by(args.trace_by, problems);
    let index = match args.violation.checked_sub(1) {
        Some(index) => index,
        None => {
            problems
                .0
                .push(usage("--violation counts from 1".into(), None));
            0
        }
    };
    ShrinkConfig {
        spec: args.spec,
        trace: args.trace,
        output: args.output,
        keep_secrets: args.keep_secrets,
        shrink: ShrinkOptions {
            check: CheckOptions {
                trace_by,
                max_line_bytes: None,
                provenance_limit: None,
                decode_ahead: false,
            },
            code,
            index,
        },
        input: input(args.input, problems),
    }
}

fn coverage(args: CoverageArgs, problems: &mut Problems) -> CoverageConfig {
    let project = project_file(args.specs.is_empty() && args.traces.is_empty(), problems);
    let trace_by = trace_by(args.trace_by, problems);
    let min = percent(args.min, problems);
    let shard = args
        .shard
        .and_then(|text| problems.take(shard(&text), |m| m));
    if shard.is_some() && min.is_some() {
        problems.0.push(usage(
            "--min cannot judge one part of a sharded run: each part measures only its traces"
                .into(),
            Some(
                "drop --min here and give it to `tracegate merge --format coverage`, which \
                 adds the parts up"
                    .into(),
            ),
        ));
    }
    CoverageConfig {
        specs: or_default(args.specs, "specs"),
        traces: or_default(args.traces, "traces"),
        project,
        min,
        output: args.output,
        check: CheckOptions {
            trace_by,
            max_line_bytes: None,
            provenance_limit: None,
            decode_ahead: false,
        },
        input: input(args.input, problems),
        shard,
    }
}

/// `--min`: a percentage.
fn percent(min: Option<f64>, problems: &mut Problems) -> Option<f64> {
    min.filter(|min| {
        let valid = (0.0..=100.0).contains(min);
        if !valid {
            problems.0.push(usage(
                format!("--min is a percentage between 0 and 100, not {min}"),
                None,
            ));
        }
        valid
    })
}

fn merge(args: MergeArgs, problems: &mut Problems) -> MergeConfig {
    if args.min.is_some() && args.format != MergeFormat::Coverage {
        problems.0.push(usage(
            "--min applies to --format coverage".into(),
            Some("a check report has no coverage to judge".into()),
        ));
    }
    MergeConfig {
        format: args.format,
        files: args.files,
        min: percent(args.min, problems),
    }
}

fn lint(args: LintArgs, problems: &mut Problems) -> LintConfig {
    if args.sarif_root.is_some() && args.output != LintOutput::Sarif {
        problems
            .0
            .push(usage("--sarif-root applies to --output sarif".into(), None));
    }
    LintConfig {
        specs: or_default(args.specs, "specs"),
        traces: args.traces,
        output: args.output,
        sarif_root: args.sarif_root,
        deny_warnings: args.deny.contains(&Deny::Warnings),
    }
}

fn fmt(args: FmtArgs, problems: &mut Problems) -> FmtConfig {
    let stdin = args.specs.iter().any(|path| path.as_os_str() == "-");
    let target = if !stdin {
        FmtTarget::Paths(or_default(args.specs, "specs"))
    } else {
        if args.specs.len() > 1 {
            problems.0.push(usage(
                "`-` (standard input) cannot be combined with other paths".into(),
                None,
            ));
        }
        FmtTarget::Stdin
    };
    FmtConfig {
        target,
        check: args.check,
    }
}

fn graph(args: GraphArgs) -> GraphConfig {
    GraphConfig {
        spec: args.spec,
        format: args.format,
        output: args.output,
        highlight: args.highlight,
    }
}

fn help(topic: &[String], problems: &mut Problems) -> HelpConfig {
    let commands = super::args::command_names();
    match topic {
        [] => HelpConfig::Program,
        [name] if name == "spec" => HelpConfig::Spec,
        // Only the first word names the topic: `help check extra` is `help check`.
        [name, ..] if commands.contains(name) => HelpConfig::Command(name.clone()),
        [name, ..] => {
            let topics: Vec<&str> = commands
                .iter()
                .map(String::as_str)
                .chain(["spec"])
                .collect();
            let list = topics.join(", ");
            let hint = match crate::suggest::did_you_mean(name, topics.iter().copied()) {
                Some(close) => format!("did you mean `{close}`? topics: {list}"),
                None => format!("topics: {list}"),
            };
            problems
                .0
                .push(usage(format!("no help topic `{name}`"), Some(hint)));
            HelpConfig::Program
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::args::parse_line;
    use super::*;

    /// The configuration of a command line, or the messages of its usage problems.
    fn configure(line: &[&str]) -> Result<Config, Vec<(Code, String, Option<String>)>> {
        config(parse_line(line)).map_err(|problems| {
            problems
                .into_iter()
                .map(|d| (d.code, d.message, d.hint))
                .collect()
        })
    }

    /// The messages of a command line's usage problems; every one is `usage-error`.
    fn problems(line: &[&str]) -> Vec<String> {
        let problems = configure(line).expect_err("the command line has usage problems");
        assert!(problems.iter().all(|(code, ..)| *code == Code::UsageError));
        problems
            .into_iter()
            .map(|(_, message, _)| message)
            .collect()
    }

    #[test]
    fn a_bad_select_path_is_a_usage_error_in_every_command_that_reads_traces() {
        for line in [
            &["check", "--select", "["][..],
            &["convert", "t.jsonl", "--select", "["],
            &["coverage", "--select", "["],
            &["shrink", "s.tg", "t.jsonl", "--select", "["],
        ] {
            assert_eq!(
                problems(line),
                ["invalid --select path: unclosed `[` at column 1"],
                "{line:?}"
            );
        }
    }

    #[test]
    fn a_bad_trace_by_path_is_a_usage_error() {
        for line in [
            &["check", "--trace-by", ".."][..],
            &["coverage", "--trace-by", ".."],
            &["shrink", "s.tg", "t.jsonl", "--trace-by", ".."],
        ] {
            let found = problems(line);
            assert_eq!(found.len(), 1, "{found:?}");
            assert!(
                found[0].starts_with("invalid --trace-by path: "),
                "{found:?}"
            );
        }
    }

    #[test]
    fn every_problem_of_a_command_line_is_reported() {
        assert_eq!(
            problems(&["check", "--select", "[", "--trace-by", ".."]).len(),
            2
        );
        assert_eq!(
            problems(&[
                "shrink",
                "s.tg",
                "t.jsonl",
                "--code",
                "nope",
                "--violation",
                "0"
            ]),
            ["unknown code `nope`", "--violation counts from 1"]
        );
    }

    #[test]
    fn an_unknown_code_is_a_usage_error_with_a_suggestion() {
        let found = configure(&["explain", "forbiden-transition"]).expect_err("unknown code");
        assert_eq!(
            found,
            [(
                Code::UsageError,
                "unknown code `forbiden-transition`".to_string(),
                Some(
                    "did you mean `forbidden-transition`? `tracegate explain` lists them all"
                        .to_string()
                )
            )]
        );
        assert_eq!(
            problems(&["shrink", "s.tg", "t.jsonl", "--code", "nope"]),
            ["unknown code `nope`"]
        );
        assert!(matches!(
            configure(&["explain", "no-input"]),
            Ok(Config::Explain(ExplainConfig {
                code: Some(Code::NoInput)
            }))
        ));
    }

    #[test]
    fn violation_counts_from_one() {
        assert_eq!(
            problems(&["shrink", "s.tg", "t.jsonl", "--violation", "0"]),
            ["--violation counts from 1"]
        );
        match configure(&["shrink", "s.tg", "t.jsonl", "--violation", "2"]) {
            Ok(Config::Shrink(config)) => assert_eq!(config.shrink.index, 1),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn min_is_a_percentage() {
        for bad in ["150", "100.5", "NaN"] {
            assert_eq!(
                problems(&["coverage", "--min", bad]),
                [format!(
                    "--min is a percentage between 0 and 100, not {}",
                    bad.parse::<f64>().expect("a number")
                )]
            );
        }
        for good in ["0", "100", "62.5"] {
            assert!(configure(&["coverage", "--min", good]).is_ok(), "{good}");
        }
    }

    #[test]
    fn stdin_stands_alone_in_fmt() {
        assert_eq!(
            problems(&["fmt", "-", "specs"]),
            ["`-` (standard input) cannot be combined with other paths"]
        );
        match configure(&["fmt", "-"]) {
            Ok(Config::Fmt(config)) => assert_eq!(config.target, FmtTarget::Stdin),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_unknown_help_topic_is_a_usage_error_listing_the_topics() {
        let found = configure(&["help", "chek"]).expect_err("unknown topic");
        let (code, message, hint) = &found[0];
        assert_eq!(
            (*code, message.as_str()),
            (Code::UsageError, "no help topic `chek`")
        );
        let hint = hint.as_deref().expect("a hint");
        assert!(
            hint.starts_with("did you mean `check`? topics: check, "),
            "{hint}"
        );
        assert!(hint.ends_with(", spec"), "{hint}");
        assert_eq!(
            problems(&["help", "spec", "extra"]),
            ["no help topic `spec`"]
        );
        match configure(&["help", "lint", "extra"]) {
            Ok(Config::Help(topic)) => assert_eq!(topic, HelpConfig::Command("lint".into())),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sarif_root_goes_with_sarif_output() {
        assert_eq!(
            problems(&["check", "--sarif-root", "."]),
            ["--sarif-root applies to --output sarif"]
        );
        match configure(&["check", "--output", "sarif", "--sarif-root", "/repo"]) {
            Ok(Config::Check(config)) => {
                assert_eq!(config.sarif_root, Some(PathBuf::from("/repo")));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn paths_default_to_specs_and_traces() {
        match configure(&["check"]) {
            Ok(Config::Check(config)) => {
                assert_eq!(config.specs, [PathBuf::from("specs")]);
                assert_eq!(config.traces, [PathBuf::from("traces")]);
                assert_eq!(config.input.options.format, None, "`auto` detects");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn format_names_are_the_library_enums_names() {
        use crate::trace::adapters;
        for format in adapters::Format::ALL {
            match configure(&["check", "--format", format.name()]) {
                Ok(Config::Check(config)) => assert_eq!(config.input.options.format, Some(format)),
                other => panic!("{other:?}"),
            }
        }
        for format in export::Format::ALL {
            match configure(&["graph", "s.tg", "--format", format.name()]) {
                Ok(Config::Graph(config)) => assert_eq!(config.format, format),
                other => panic!("{other:?}"),
            }
        }
        for format in explore::Format::ALL {
            match configure(&["explore", "s.tg", "--emit", "d", "--as", format.name()]) {
                Ok(Config::Explore(config)) => assert_eq!(config.format, format),
                other => panic!("{other:?}"),
            }
        }
    }
}
