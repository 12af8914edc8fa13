//! The `explore`, `shrink` and `coverage` commands: their flags, and the glue that
//! loads specs, calls the library, writes emitted traces and prints the reports. The
//! only part of `explore` that touches files or prints.

use std::io::Write;
use std::path::PathBuf;

use super::render::{self, Emitted};
use super::{DEFAULT_LIMIT, DEFAULT_MAX_DEPTH, Format, ShrinkOptions, Written};
use crate::check::CheckOptions;
use crate::cli::{Exit, InputArgs, OutputFormat, or_default, parse_trace_by, styled};
use crate::diagnostic::render::{FileResolver, human, json};
use crate::diagnostic::{Code, Diagnostic};
use crate::files;
use crate::machine::Machine;

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
    #[arg(long = "as", value_enum, value_name = "FORMAT", default_value_t = Format::Native, requires = "emit")]
    pub format: Format,
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
    #[command(flatten)]
    pub input: InputArgs,
}

fn print_diagnostics(
    out: &mut dyn Write,
    format: OutputFormat,
    diagnostics: &[Diagnostic],
) -> std::io::Result<()> {
    for diagnostic in diagnostics {
        match format {
            OutputFormat::Human => {
                out.write_all(human::render(diagnostic, styled(), &FileResolver).as_bytes())?
            }
            OutputFormat::Json => writeln!(out, "{}", json::render(diagnostic))?,
        }
    }
    Ok(())
}

/// Loads specs; `Err` with the exit status after printing their errors.
fn load(
    paths: &[PathBuf],
    out: &mut dyn Write,
    format: OutputFormat,
) -> std::io::Result<Result<Vec<Machine>, Exit>> {
    let (specs, errors) = crate::cli::load_specs(paths);
    if errors.is_empty() {
        Ok(Ok(specs))
    } else {
        print_diagnostics(out, format, &errors)?;
        Ok(Err(Exit::Error))
    }
}

/// `tracegate explore`.
pub fn explore(args: ExploreArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    let specs = match load(&args.specs, out, args.output)? {
        Ok(specs) => specs,
        Err(exit) => return Ok(exit),
    };
    let mut failed = 0;
    for machine in &specs {
        let mut emit = |kind: &str, name: String, trace: Result<super::SyntheticTrace, String>| {
            let dir = args.emit.as_ref()?;
            let written = trace.and_then(|trace| {
                let text = trace.write(args.format)?;
                let dir = dir.join(&machine.name).join(kind);
                let file = dir.join(format!("{name}.{}", args.format.extension()));
                std::fs::create_dir_all(&dir)
                    .and_then(|()| std::fs::write(&file, text))
                    .map_err(|err| format!("cannot write `{}`: {err}", file.display()))?;
                Ok(Emitted::Written {
                    file: file.display().to_string(),
                    at: trace
                        .violation_site(args.format)
                        .map(|site| site.to_string()),
                })
            });
            Some(written.unwrap_or_else(|why| {
                failed += 1;
                Emitted::Failed(why)
            }))
        };
        let text = if args.allowed {
            let allowed = super::allowed(machine, args.max_depth, args.limit);
            let width = allowed.paths.len().to_string().len().max(3);
            let paths: Vec<_> = allowed
                .paths
                .iter()
                .enumerate()
                .map(|(i, path)| {
                    let events: Vec<&str> = path
                        .events()
                        .iter()
                        .map(|&e| machine.events[e].name.as_str())
                        .collect();
                    let name = file_name(&format!("{:0width$}-{}", i + 1, events.join("-")));
                    let trace =
                        super::allowed_trace(machine, path, args.format).map_err(|e| e.to_string());
                    (path.clone(), emit("pass", name, trace))
                })
                .collect();
            match args.output {
                OutputFormat::Human => render::allowed_human(machine, &paths, allowed.truncated),
                OutputFormat::Json => render::allowed_json(machine, &paths, allowed.truncated),
            }
        } else {
            let exploration = super::explore(machine, args.max_depth);
            let found: Vec<_> = exploration
                .counterexamples
                .iter()
                .map(|c| {
                    let mut name = format!("{}-{}", c.code(), machine.state(c.state).name);
                    if let Some(event) = c.event {
                        name.push('-');
                        name.push_str(&machine.events[event].name);
                    }
                    let trace = super::counterexample_trace(machine, c, args.format)
                        .map_err(|e| e.to_string());
                    (c.clone(), emit("fail", file_name(&name), trace))
                })
                .collect();
            match args.output {
                OutputFormat::Human => render::counterexamples_human(
                    machine,
                    &found,
                    &exploration.unreached,
                    args.max_depth,
                ),
                OutputFormat::Json => {
                    render::counterexamples_json(machine, &found, &exploration.unreached)
                }
            }
        };
        out.write_all(text.as_bytes())?;
    }
    out.flush()?;
    Ok(if failed > 0 {
        Exit::Violations
    } else {
        Exit::Success
    })
}

/// A file name from state and event names (which are identifiers), kept short.
fn file_name(name: &str) -> String {
    const MAX: usize = 100;
    let mut name: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() > MAX {
        let mut cut = MAX;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    name
}

/// `tracegate shrink`.
pub fn shrink(args: ShrinkArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    let specs = match load(std::slice::from_ref(&args.spec), out, OutputFormat::Human)? {
        Ok(specs) => specs,
        Err(exit) => return Ok(exit),
    };
    let code = match args
        .code
        .as_deref()
        .map(|name| (name, Code::from_name(name)))
    {
        None => None,
        Some((_, Some(code))) => Some(code),
        Some((name, None)) => {
            eprintln!("error: unknown code `{name}`; `tracegate explain` lists them all");
            return Ok(Exit::Error);
        }
    };
    let trace_by = match parse_trace_by(args.trace_by.as_deref()) {
        Ok(path) => path,
        Err(exit) => return Ok(exit),
    };
    if args.violation == 0 {
        eprintln!("error: --violation counts from 1");
        return Ok(Exit::Error);
    }
    let input_options = match args.input.options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(Exit::Error);
        }
    };
    let text = match std::fs::read(&args.trace) {
        Ok(text) => text,
        Err(err) => {
            let diagnostic = Diagnostic::unreadable(&args.trace, &err);
            print_diagnostics(out, OutputFormat::Human, &[diagnostic])?;
            return Ok(Exit::Error);
        }
    };
    let options = ShrinkOptions {
        check: CheckOptions {
            trace_by,
            max_line_bytes: None,
        },
        code,
        index: args.violation - 1,
    };
    let shrunk = match super::shrink_file(&specs, &text, &input_options, &options) {
        Ok(shrunk) => shrunk,
        Err(err) => {
            eprintln!("error: {}: {err}", args.trace.display());
            return Ok(Exit::Error);
        }
    };
    if let Written::Records { left_out } = shrunk.written {
        if left_out > 0 {
            eprintln!(
                "note: {}: {left_out} element(s) that are not records are left out",
                args.trace.display(),
            );
        }
        eprintln!(
            "note: {} has no element that can be removed on its own: it is shrunk as its normalized records, written as native JSONL",
            args.trace.display()
        );
    }
    let summary = render::shrink_summary(&shrunk, &args.trace, args.output.as_deref());
    match &args.output {
        Some(path) => {
            if let Err(err) = std::fs::write(path, &shrunk.text) {
                eprintln!("error: cannot write `{}`: {err}", path.display());
                return Ok(Exit::Error);
            }
            out.write_all(summary.as_bytes())?;
        }
        None => {
            out.write_all(&shrunk.text)?;
            eprint!("{summary}");
        }
    }
    out.flush()?;
    Ok(Exit::Success)
}

/// `tracegate coverage`.
pub fn coverage(args: CoverageArgs, out: &mut dyn Write) -> std::io::Result<Exit> {
    let spec_paths = or_default(args.specs, "specs");
    let trace_paths = or_default(args.traces, "traces");
    let specs = match load(&spec_paths, out, args.output)? {
        Ok(specs) => specs,
        Err(exit) => return Ok(exit),
    };
    let trace_by = match parse_trace_by(args.trace_by.as_deref()) {
        Ok(path) => path,
        Err(exit) => return Ok(exit),
    };
    if let Some(min) = args.min {
        if !(0.0..=100.0).contains(&min) {
            eprintln!("error: --min is a percentage between 0 and 100, not {min}");
            return Ok(Exit::Error);
        }
    }
    let (trace_files, missing) = files::collect(&trace_paths, files::is_trace_file);
    if !missing.is_empty() {
        print_diagnostics(out, args.output, &missing)?;
        return Ok(Exit::Error);
    }
    if trace_files.is_empty() {
        eprintln!("error: no trace files (`*.jsonl` or `*.json`) found");
        return Ok(Exit::Error);
    }
    let input = match args.input.options() {
        Ok(input) => input,
        Err(message) => {
            eprintln!("error: {message}");
            return Ok(Exit::Error);
        }
    };
    let options = CheckOptions {
        trace_by,
        max_line_bytes: None,
    };
    let coverage = super::coverage(&specs, &trace_files, &options, &input);
    let text = match args.output {
        OutputFormat::Human => render::coverage_human(&specs, &coverage, args.min),
        OutputFormat::Json => render::coverage_json(&specs, &coverage, args.min),
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(if !coverage.errors.is_empty() {
        Exit::Error
    } else if args.min.is_some_and(|min| !coverage.below(min).is_empty()) {
        Exit::Violations
    } else {
        Exit::Success
    })
}
