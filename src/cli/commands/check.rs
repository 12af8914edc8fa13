//! `tracegate check`: traces against specs, a report on stdout (and, with `--report`,
//! an HTML file).
//!
//! What is checked is either every spec named against every trace named, or, when the
//! command line names neither and a project file is found, the pairs its scopes make.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use super::{load_specs, no_input, say_format};
use crate::check::{CheckOptions, Checked};
use crate::cli::args::{CheckOutput, OutputFormat};
use crate::cli::config::CheckConfig;
use crate::cli::output::{Output, Stream, SummaryKind};
use crate::cli::project::FILE_NAME;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::render::run::{FileRun, Run, SpecInfo};
use crate::diagnostic::render::{github, html, junit, sarif};
use crate::export;
use crate::files;
use crate::machine::Machine;
use crate::trace::adapters::InputOptions;

/// A run shorter than this shows no progress bar.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// What a check found, in report order.
struct Found {
    specs: Vec<Machine>,
    /// Spec errors, unreadable trace paths, no trace files.
    problems: Vec<Diagnostic>,
    /// Each trace file checked and what checking it gave.
    checked: Vec<FileChecked>,
    /// With a project file: what was left unchecked, as notes for `-v`.
    unscoped: Vec<String>,
}

struct FileChecked {
    path: PathBuf,
    /// Indexes into [`Found::specs`].
    specs: Vec<usize>,
    seconds: f64,
    checked: Checked,
}

/// One group of specs checked against one list of files, read one way.
struct Group<'a> {
    specs: std::ops::Range<usize>,
    files: Vec<PathBuf>,
    check: &'a CheckOptions,
    input: &'a InputOptions,
}

pub fn run(config: CheckConfig, out: &mut Output<'_>) -> io::Result<()> {
    let progress = out.progress;
    let found = find(&config, progress)?;
    // Everything is counted before anything is written, so that a run cut short by a
    // closed pipe still exits with the status of all it found.
    out.summary.specs = found.specs.len();
    found.problems.iter().for_each(|d| out.tally(d));
    for file in &found.checked {
        out.summary.records += file.checked.outcome.records;
        out.summary.traces += file.checked.outcome.traces;
        file.checked
            .outcome
            .diagnostics
            .iter()
            .for_each(|d| out.tally(d));
    }
    if config.input.verbose {
        for note in &found.unscoped {
            out.note(note)?;
        }
    }
    let paths = super::report_paths(config.sarif_root.as_ref())?;
    let run = Run {
        version: env!("CARGO_PKG_VERSION"),
        specs: found
            .specs
            .iter()
            .map(|machine| SpecInfo {
                name: &machine.name,
                path: &machine.source.path,
                // Only the HTML report shows the graphs; drawing them costs a layout each.
                graph: config
                    .report
                    .is_some()
                    .then(|| export::svg::render(&export::Drawing::new(machine, None))),
            })
            .collect(),
        problems: &found.problems,
        files: found
            .checked
            .iter()
            .map(|file| FileRun {
                path: &file.path,
                specs: file.specs.clone(),
                seconds: file.seconds,
                diagnostics: &file.checked.outcome.diagnostics,
            })
            .collect(),
        summary: out.summary,
        paths: &paths,
    };
    // The HTML file first: a closed stdout must not cost the reviewer their report.
    if let Some(report) = &config.report {
        let snippets = read_snippets(&run);
        let page = html::render(&run, &snippets);
        if let Err(err) = std::fs::write(report, page) {
            return out.failure(&format!("cannot write `{}`: {err}", report.display()));
        }
    }
    match config.output {
        CheckOutput::Human | CheckOutput::Json => {
            let format = if config.output == CheckOutput::Human {
                OutputFormat::Human
            } else {
                OutputFormat::Json
            };
            for diagnostic in &found.problems {
                out.write_diagnostic(Stream::Stdout, format, diagnostic)?;
            }
            for file in &found.checked {
                say_format(
                    out,
                    &config.input,
                    &file.path,
                    file.checked.detected.as_ref(),
                )?;
                for diagnostic in &file.checked.outcome.diagnostics {
                    out.write_diagnostic(Stream::Stdout, format, diagnostic)?;
                }
            }
            out.summary(SummaryKind::Check, format)
        }
        CheckOutput::Sarif => out.data(sarif::render(&run)),
        CheckOutput::Junit => out.data(junit::render(&run)),
        CheckOutput::Github => github(&run, out),
    }
}

/// `--output github`: a workflow command per finding, a closing notice, and the step
/// summary appended to `$GITHUB_STEP_SUMMARY` when it is set.
pub(super) fn github(run: &Run<'_>, out: &mut Output<'_>) -> io::Result<()> {
    for diagnostic in run.diagnostics() {
        out.data(github::render(diagnostic, run.paths))?;
    }
    out.data(github::render_summary(&run.summary))?;
    // The step summary is GitHub's page for the job: appended, as each step adds its
    // own part.
    if let Some(file) = std::env::var_os("GITHUB_STEP_SUMMARY") {
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&file)
            .and_then(|mut f| f.write_all(github::step_summary(run).as_bytes()));
        if let Err(err) = written {
            let name = Path::new(&file).display().to_string();
            return out.failure(&format!("cannot write `{name}`: {err}"));
        }
    }
    Ok(())
}

/// The library's part: load specs, find trace files, check them.
fn find(config: &CheckConfig, progress: bool) -> io::Result<Found> {
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    let mut groups = Vec::new();
    let mut unscoped = Vec::new();
    let mut spec_failed = false;
    match &config.project {
        None => {
            let (loaded, errors) = load_specs(&config.specs);
            spec_failed = !errors.is_empty();
            let (trace_files, missing) = files::collect(&config.traces, files::is_trace_file);
            if trace_files.is_empty() && missing.is_empty() {
                problems.push(no_input("trace", &config.traces, "`*.jsonl` or `*.json`"));
            }
            problems.splice(0..0, errors.into_iter().chain(missing));
            groups.push(Group {
                specs: 0..loaded.len(),
                files: trace_files,
                check: &config.check,
                input: &config.input.options,
            });
            specs = loaded;
        }
        Some(project) => {
            let mut walked = BTreeSet::new();
            let mut missing = Vec::new();
            for scope in &project.scopes {
                let (loaded, errors) = load_specs(&scope.specs);
                spec_failed |= !errors.is_empty();
                problems.extend(errors);
                let (found, unreadable) = files::collect(&scope.roots, files::is_trace_file);
                missing.extend(unreadable);
                walked.extend(found.iter().cloned());
                let start = specs.len();
                specs.extend(loaded);
                groups.push(Group {
                    specs: start..specs.len(),
                    files: found.into_iter().filter(|f| scope.contains(f)).collect(),
                    check: &scope.check,
                    input: &scope.input,
                });
            }
            if groups.iter().all(|g| g.files.is_empty()) && missing.is_empty() {
                let roots: Vec<PathBuf> = project
                    .scopes
                    .iter()
                    .flat_map(|s| s.roots.iter().cloned())
                    .collect();
                problems.push(no_input("trace", &roots, "`*.jsonl` or `*.json`"));
            }
            problems.extend(missing);
            unscoped = unscoped_notes(&specs, &groups, &walked, &project.file);
        }
    }
    if config.verify_chain {
        // Each file once, whichever scopes name it.
        let files: BTreeSet<&PathBuf> = groups.iter().flat_map(|g| g.files.iter()).collect();
        let files: Vec<PathBuf> = files.into_iter().cloned().collect();
        problems.extend(super::chain::verify_chains(
            &files,
            config.check.max_line_bytes,
        ));
    }
    // A spec that does not compile checks nothing: fail closed, before reading traces.
    let checked = if spec_failed || specs.is_empty() {
        Vec::new()
    } else if config.join {
        join_groups(&specs, &groups, &config.join_time)
    } else {
        check_groups(&specs, &groups, config.jobs, progress)?
    };
    let mut checked = checked;
    merge_never_carried(&mut checked);
    // A run that read no record never passes, even when no file said why.
    let read_nothing = !checked.is_empty()
        && checked.iter().all(|c| c.checked.outcome.records == 0)
        && checked
            .iter()
            .all(|c| c.checked.outcome.diagnostics.iter().all(|d| d.is_warning()));
    if read_nothing {
        let mut diagnostic = no_input("trace", &config.traces, "`*.jsonl` or `*.json`");
        diagnostic.message = "no record was read from the trace files: nothing was checked".into();
        problems.push(diagnostic);
    }
    Ok(Found {
        specs,
        problems,
        checked,
        unscoped,
    })
}

/// Checks every group's files against its specs, in parallel, timing each file.
fn check_groups(
    specs: &[Machine],
    groups: &[Group<'_>],
    jobs: Option<usize>,
    progress: bool,
) -> io::Result<Vec<FileChecked>> {
    let total: usize = groups.iter().map(|g| g.files.len()).sum();
    let bar = Progress::new(total as u64, progress, PROGRESS_AFTER);
    let run = || {
        groups
            .iter()
            .flat_map(|group| group.files.iter().map(move |file| (group, file)))
            .collect::<Vec<_>>()
            .par_iter()
            .map(|&(group, file)| {
                let started = Instant::now();
                let checked = crate::check::check_path(
                    &specs[group.specs.clone()],
                    file,
                    group.check,
                    group.input,
                );
                bar.tick();
                FileChecked {
                    path: file.clone(),
                    specs: group.specs.clone().collect(),
                    seconds: started.elapsed().as_secs_f64(),
                    checked,
                }
            })
            .collect()
    };
    let checked = match jobs {
        Some(jobs) => rayon::ThreadPoolBuilder::new()
            .num_threads(jobs.max(1))
            .build()
            .map_err(io::Error::other)?
            .install(run),
        None => run(),
    };
    bar.finish();
    Ok(checked)
}

/// `--join`: each group's files merged into one stream by time and checked as one
/// input, whose findings name each record's own file.
fn join_groups(
    specs: &[Machine],
    groups: &[Group<'_>],
    time: &crate::trace::join::TimeField,
) -> Vec<FileChecked> {
    groups
        .iter()
        .filter(|group| !group.files.is_empty())
        .map(|group| {
            let started = Instant::now();
            let outcome = super::chain::check_join(
                &specs[group.specs.clone()],
                &group.files,
                group.check,
                group.input,
                time,
            );
            FileChecked {
                path: PathBuf::from(format!("{} files, joined", group.files.len())),
                specs: group.specs.clone().collect(),
                seconds: started.elapsed().as_secs_f64(),
                checked: Checked {
                    outcome,
                    detected: None,
                },
            }
        })
        .collect()
}

/// A `per` key or `--trace-by` field that no record carries is reported by each file
/// that lacks it; across files, the same finding is given once, at the first file, with
/// how many other files lack it too.
fn merge_never_carried(checked: &mut [FileChecked]) {
    use crate::diagnostic::Code;
    let never_carried = |d: &Diagnostic| {
        (d.code == Code::MissingKey && d.message.starts_with("no record of the events of spec"))
            || (d.code == Code::UsageError && d.message.starts_with("no record has a `"))
    };
    // The finding without its per-file count, and where its first copy is.
    let mut first: Vec<(String, usize, usize, u64)> = Vec::new();
    for (file, one) in checked.iter_mut().enumerate() {
        let diagnostics = &mut one.checked.outcome.diagnostics;
        let mut index = 0;
        while index < diagnostics.len() {
            let diagnostic = &diagnostics[index];
            if !never_carried(diagnostic) {
                index += 1;
                continue;
            }
            let what = diagnostic
                .message
                .split_once(": ")
                .map_or(diagnostic.message.as_str(), |(what, _)| what)
                .to_string();
            match first.iter_mut().find(|(seen, ..)| *seen == what) {
                Some((.., others)) => {
                    *others += 1;
                    diagnostics.remove(index);
                }
                None => {
                    first.push((what, file, index, 0));
                    index += 1;
                }
            }
        }
    }
    for (_, file, index, others) in first {
        if others > 0 {
            let s = if others == 1 { "" } else { "s" };
            let diagnostic = &mut checked[file].checked.outcome.diagnostics[index];
            diagnostic.message.push_str(&format!(
                " (and in {others} other file{s}, not reported again)"
            ));
        }
    }
}

/// With a project file, what `-v` says was not checked: each trace file found under a
/// scope's directories, with the specs it was not checked against.
fn unscoped_notes(
    specs: &[Machine],
    groups: &[Group<'_>],
    walked: &BTreeSet<PathBuf>,
    project: &Path,
) -> Vec<String> {
    let names: BTreeSet<&str> = specs.iter().map(|m| m.name.as_str()).collect();
    let mut checked: BTreeMap<&Path, BTreeSet<&str>> = BTreeMap::new();
    for group in groups {
        for file in &group.files {
            let against = specs[group.specs.clone()].iter().map(|m| m.name.as_str());
            checked.entry(file).or_default().extend(against);
        }
    }
    let none = BTreeSet::new();
    let mut notes = Vec::new();
    for file in walked {
        let checked = checked.get(file.as_path()).unwrap_or(&none);
        let left: Vec<String> = names
            .difference(checked)
            .map(|name| format!("`{name}`"))
            .collect();
        if checked.is_empty() {
            notes.push(format!(
                "tracegate: {}: not checked: outside every scope of `{}`\n",
                file.display(),
                project.display()
            ));
        } else if !left.is_empty() {
            notes.push(format!(
                "tracegate: {}: not checked against {}: outside their scopes in `{FILE_NAME}`\n",
                file.display(),
                left.join(", ")
            ));
        }
    }
    notes
}

/// Reads the trace lines the HTML report shows, each cut to
/// [`SNIPPET_CHARS`](crate::diagnostic::render::SNIPPET_CHARS) and masked. A file that
/// cannot be read shows no lines.
fn read_snippets(run: &Run<'_>) -> html::Snippets {
    use crate::diagnostic::render::SNIPPET_CHARS;
    use std::io::BufRead;
    let mut snippets = html::Snippets::default();
    for (file, lines) in html::Snippets::wanted(run) {
        let Ok(handle) = std::fs::File::open(&file) else {
            continue;
        };
        let mut wanted = lines.iter().copied().peekable();
        let mut reader = io::BufReader::new(handle);
        let mut buffer = Vec::new();
        let mut number = 0u64;
        while let Some(&next) = wanted.peek() {
            buffer.clear();
            match reader.read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => number += 1,
            }
            if number == next {
                wanted.next();
                let text = String::from_utf8_lossy(&buffer);
                let text = text.trim_end_matches(['\n', '\r']);
                let mut cut: String = text.chars().take(SNIPPET_CHARS).collect();
                if cut.len() < text.len() {
                    cut.push('…');
                }
                let masked = crate::redact::redact(&cut).into_owned();
                snippets.lines.insert((file.clone(), number), masked);
            }
        }
    }
    snippets
}

/// A progress bar on stderr, drawn only when stderr is a terminal and only once the
/// run has taken longer than [`PROGRESS_AFTER`], so short runs and piped or CI output
/// never see it. It is cleared before the report is written.
struct Progress {
    bar: ProgressBar,
    started: Instant,
    enabled: bool,
    after: Duration,
    /// Whether the bar was handed stderr to draw on.
    shown: std::sync::atomic::AtomicBool,
}

impl Progress {
    fn new(total: u64, enabled: bool, after: Duration) -> Progress {
        let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::hidden());
        if let Ok(style) =
            ProgressStyle::with_template("{bar:30} {pos}/{len} trace files {elapsed}")
        {
            bar.set_style(style);
        }
        Progress {
            bar,
            started: Instant::now(),
            enabled,
            after,
            shown: std::sync::atomic::AtomicBool::new(false),
        }
    }

    fn tick(&self) {
        self.bar.inc(1);
        use std::sync::atomic::Ordering;
        if self.enabled
            && !self.shown.load(Ordering::Relaxed)
            && self.started.elapsed() >= self.after
            && !self.shown.swap(true, Ordering::Relaxed)
        {
            self.bar.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_is_drawn_only_when_enabled_and_once_the_run_is_long() {
        use std::sync::atomic::Ordering;
        let long = Progress::new(2, true, Duration::ZERO);
        long.tick();
        assert!(
            long.shown.load(Ordering::Relaxed),
            "a long run on a terminal shows progress"
        );
        long.finish();
        let piped = Progress::new(2, false, Duration::ZERO);
        piped.tick();
        assert!(
            !piped.shown.load(Ordering::Relaxed),
            "never when stderr is not a terminal"
        );
        assert!(piped.bar.is_hidden());
        let short = Progress::new(2, true, Duration::from_secs(3600));
        short.tick();
        assert!(
            !short.shown.load(Ordering::Relaxed),
            "not before the run has taken long"
        );
        assert_eq!(short.bar.position(), 1, "but it counts from the start");
    }
}
