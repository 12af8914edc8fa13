//! `tracegate coverage`: which states, transitions and forbidden moves a trace corpus
//! exercised, and with `--min` whether enough of them were.
//!
//! What is measured is, as for `check`, either every spec named against every trace
//! named, or, when the command line names neither and a project file is found, each
//! scope's specs against the traces it scopes, read as it says. With `--shard K/N`, only
//! the part `check --shard K/N` would check: `tracegate merge --format coverage` adds
//! the parts' JSON reports up to the whole run's.

use std::io;
use std::path::{Path, PathBuf};

use super::{load_specs, no_input};
use crate::check::{CheckOptions, Shard};
use crate::cli::Exit;
use crate::cli::args::OutputFormat;
use crate::cli::config::CoverageConfig;
use crate::cli::output::{Output, Stream};
use crate::cli::project::Project;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::render::run::Paths;
use crate::explore::{self, Coverage, render};
use crate::files;
use crate::machine::Machine;

pub fn run(config: CoverageConfig, out: &mut Output<'_>) -> io::Result<()> {
    let cwd = std::env::current_dir()?;
    let measured = match &config.project {
        Some(project) => scoped(project, config.shard, &cwd),
        None => named(&config, &cwd),
    };
    let (specs, coverage) = match measured {
        Ok(measured) => measured,
        Err(problems) => return out.diagnostics(Stream::Stdout, config.output, &problems),
    };
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

/// Every spec named against every trace named.
fn named(config: &CoverageConfig, cwd: &Path) -> Result<(Vec<Machine>, Coverage), Vec<Diagnostic>> {
    let (specs, errors) = load_specs(&config.specs);
    if !errors.is_empty() {
        return Err(errors);
    }
    let (trace_files, missing) = files::collect(&config.traces, files::is_trace_file);
    if !missing.is_empty() {
        return Err(missing);
    }
    if trace_files.is_empty() {
        return Err(vec![no_input(
            "trace",
            &config.traces,
            "`*.jsonl` or `*.json`",
        )]);
    }
    let (files, shard) = part(trace_files, &config.check, config.shard, cwd, cwd);
    let coverage =
        explore::coverage_of_traces(&specs, &files, &config.check, &config.input.options, shard);
    Ok((specs, coverage))
}

/// A `shard`'s part of `files`, split as `check --shard` splits them: by trace key when
/// traces are split by a field (every shard reads every file, and the returned shard
/// says which traces are its), else by the files' paths relative to `root`.
fn part(
    mut files: Vec<PathBuf>,
    check: &CheckOptions,
    shard: Option<Shard>,
    cwd: &Path,
    root: &Path,
) -> (Vec<PathBuf>, Option<Shard>) {
    match shard {
        Some(shard) if check.trace_by.is_none() => {
            let names = Paths {
                base: cwd.to_path_buf(),
                root: root.to_path_buf(),
            };
            files.retain(|file| shard.takes(&names.name(file)));
            (files, None)
        }
        shard => (files, shard),
    }
}

/// Each scope's specs against the trace files it scopes, read with its options; the
/// specs of all scopes are reported in the file's order.
fn scoped(
    project: &Project,
    shard: Option<Shard>,
    cwd: &Path,
) -> Result<(Vec<Machine>, Coverage), Vec<Diagnostic>> {
    // Files are named for sharding relative to the project file's directory, as
    // `check` names them.
    let root = match project.file.parent() {
        Some(dir) => cwd.join(dir),
        None => cwd.to_path_buf(),
    };
    let mut problems = Vec::new();
    let mut groups = Vec::new();
    for scope in &project.scopes {
        let (specs, errors) = load_specs(&scope.specs);
        problems.extend(errors);
        let (found, missing) = files::collect(&scope.roots, files::is_trace_file);
        problems.extend(missing);
        let files: Vec<_> = found.into_iter().filter(|f| scope.contains(f)).collect();
        groups.push((scope, specs, files));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    if groups.iter().all(|(_, _, files)| files.is_empty()) {
        let roots: Vec<_> = project
            .scopes
            .iter()
            .flat_map(|s| s.roots.iter().cloned())
            .collect();
        return Err(vec![no_input("trace", &roots, "`*.jsonl` or `*.json`")]);
    }
    let mut all_specs = Vec::new();
    let mut total = Coverage {
        specs: Vec::new(),
        records: 0,
        traces: 0,
        errors: Vec::new(),
    };
    for (scope, specs, files) in groups {
        let (files, shard) = part(files, &scope.check, shard, cwd, &root);
        let coverage =
            explore::coverage_of_traces(&specs, &files, &scope.check, &scope.input, shard);
        total.specs.extend(coverage.specs);
        total.records += coverage.records;
        total.traces += coverage.traces;
        total.errors.extend(coverage.errors);
        all_specs.extend(specs);
    }
    Ok((all_specs, total))
}
