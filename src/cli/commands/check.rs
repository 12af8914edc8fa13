//! `tracegate check`: traces against specs, a report on stdout (and, with `--report`,
//! an HTML file).
//!
//! What is checked is either every spec named against every trace named, or, when the
//! command line names neither and a project file is found, the pairs its scopes make.
//! With `--shard K/N`, only the K-th of N parts of that: the trace files whose path
//! hashes to it, or, for traces split by `--trace-by`, the traces whose key does.
//!
//! Human, JSON Lines and GitHub output stream: each finding is written as soon as it
//! is final, in the order one thread checking file after file would write it (see
//! [`crate::check::in_file_order`]). SARIF, JUnit and the HTML report are one document
//! each, written at the end from the findings kept until then.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{format_note, load_specs, no_input};
use crate::check::{CheckOptions, Checked, Event, Report, Shard};
use crate::cli::args::{CheckOutput, OutputFormat};
use crate::cli::config::CheckConfig;
use crate::cli::output::{Output, Stream, SummaryKind};
use crate::cli::project::FILE_NAME;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::render::run::{FileRun, Paths, Run, SpecInfo};
use crate::diagnostic::render::{github, html, junit, sarif};
use crate::export;
use crate::files;
use crate::machine::Machine;
use crate::trace::adapters::InputOptions;

/// A run shorter than this shows no progress bar.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// What is to be checked, found before any trace is read.
struct Plan<'c> {
    specs: Vec<Machine>,
    /// Spec errors, unreadable trace paths, no trace files.
    problems: Vec<Diagnostic>,
    groups: Vec<Group<'c>>,
    /// With a project file: what was left unchecked, as notes for `-v`.
    unscoped: Vec<String>,
    /// Whether traces are checked at all (not when a spec failed to compile).
    checking: bool,
}

/// One group of specs checked against one list of files, read one way.
struct Group<'a> {
    specs: std::ops::Range<usize>,
    files: Vec<PathBuf>,
    check: &'a CheckOptions,
    input: &'a InputOptions,
    /// `--shard` by trace key: every shard reads the files and checks its traces.
    shard: Option<Shard>,
}

/// One trace file checked: what it was checked against and what it gave.
struct FileChecked {
    path: PathBuf,
    /// Indexes into [`Plan::specs`].
    specs: Vec<usize>,
    seconds: f64,
    checked: Checked,
}

pub fn run(config: CheckConfig, out: &mut Output<'_>) -> io::Result<()> {
    let plan = plan(&config)?;
    if config.input.verbose {
        for note in &plan.unscoped {
            out.note(note)?;
        }
    }
    let paths = super::report_paths(config.sarif_root.as_ref())?;
    out.summary.specs = plan.specs.len();
    let streamed = match config.output {
        CheckOutput::Human => Some(Streamed::Human),
        CheckOutput::Json => Some(Streamed::Json),
        CheckOutput::Github => Some(Streamed::Github),
        CheckOutput::Sarif | CheckOutput::Junit => None,
    };
    // The documents written at the end need every finding; streamed output alone
    // keeps none.
    let keep = streamed.is_none()
        || config.report.is_some()
        || (config.output == CheckOutput::Github
            && std::env::var_os("GITHUB_STEP_SUMMARY").is_some());
    let files: Vec<(usize, &PathBuf)> = plan
        .groups
        .iter()
        .enumerate()
        .flat_map(|(g, group)| group.files.iter().map(move |file| (g, file)))
        .collect();
    let progress = Progress::new(files.len() as u64, out.progress, PROGRESS_AFTER);
    let returned = Returned::default();
    let mut writer = Writer {
        // A join checks on this thread, which frees what it has written at once.
        returned: (!config.join).then_some(&returned),
        spent: Vec::new(),
        out,
        streamed,
        paths: &paths,
        verbose: config.input.verbose,
        progress: &progress,
        problems: plan.problems,
        problems_written: false,
        queue: Vec::new(),
        repeats_held: false,
        last_file: 0,
        judged: false,
        kept: keep.then(Vec::new),
        checked: Vec::new(),
        failed: None,
    };
    if plan.checking && config.join {
        join_groups(&plan.specs, &plan.groups, &config.join_time, &mut writer);
    } else if plan.checking {
        writer.last_file = files.len().saturating_sub(1);
        // With fewer files than threads a core would sit idle: each file's native
        // records are decoded on a thread of their own, ahead of checking.
        let ahead = crate::check::threads(config.jobs) > files.len();
        crate::check::in_file_order(
            files.len(),
            config.jobs,
            |index, report| {
                let (group, file) = files[index];
                let group = &plan.groups[group];
                let started = Instant::now();
                let decoding_ahead;
                let options = if ahead {
                    decoding_ahead = CheckOptions {
                        decode_ahead: true,
                        ..group.check.clone()
                    };
                    &decoding_ahead
                } else {
                    group.check
                };
                let checked = crate::check::check_path_reported(
                    &plan.specs[group.specs.clone()],
                    file,
                    options,
                    group.input,
                    None,
                    group.shard,
                    &mut Freeing {
                        report,
                        returned: &returned,
                    },
                );
                progress.tick();
                (started.elapsed().as_secs_f64(), checked)
            },
            |event| {
                if let Event::Done(index, (seconds, checked)) = event {
                    let (group, file) = files[index];
                    writer.done(FileChecked {
                        path: file.clone(),
                        specs: plan.groups[group].specs.clone().collect(),
                        seconds,
                        checked,
                    });
                } else {
                    writer.event(event);
                }
            },
        );
        progress.finish();
    }
    let Finished {
        problems,
        checked,
        kept,
        failed,
    } = writer.finish(&config.traces);
    let Some(kept) = kept else {
        return match failed {
            Some(err) => Err(err),
            None => close(out, &config, None),
        };
    };
    let run = Run {
        version: env!("CARGO_PKG_VERSION"),
        specs: plan
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
        problems: &problems,
        files: checked
            .iter()
            .zip(&kept)
            .map(|(file, diagnostics)| FileRun {
                path: &file.path,
                specs: file.specs.clone(),
                seconds: file.seconds,
                diagnostics,
            })
            .collect(),
        summary: out.summary,
        paths: &paths,
    };
    // A closed stdout must not cost the reviewer their report.
    if let Some(report) = &config.report {
        let snippets = read_snippets(&run);
        let page = html::render(&run, &snippets);
        if let Err(err) = std::fs::write(report, page) {
            out.failure(&format!("cannot write `{}`: {err}", report.display()))?;
        }
    }
    match failed {
        Some(err) => Err(err),
        None => close(out, &config, Some(&run)),
    }
}

/// What closes the output: the summary line, the GitHub step summary, or the SARIF or
/// JUnit document.
fn close(out: &mut Output<'_>, config: &CheckConfig, run: Option<&Run<'_>>) -> io::Result<()> {
    match (config.output, run) {
        (CheckOutput::Human, _) => out.summary(SummaryKind::Check, OutputFormat::Human),
        (CheckOutput::Json, _) => out.summary(SummaryKind::Check, OutputFormat::Json),
        (CheckOutput::Github, run) => {
            out.data(github::render_summary(&out.summary))?;
            match run {
                Some(run) => step_summary(run, out),
                None => Ok(()),
            }
        }
        (CheckOutput::Sarif, Some(run)) => out.data(sarif::render(run)),
        (CheckOutput::Junit, Some(run)) => out.data(junit::render(run)),
        (CheckOutput::Sarif | CheckOutput::Junit, None) => {
            unreachable!("bug: SARIF and JUnit keep their findings")
        }
    }
}

/// `--output github` of a whole run (`lint`): a workflow command per finding, a
/// closing notice, and the step summary appended to `$GITHUB_STEP_SUMMARY` when it is
/// set.
pub(super) fn github(run: &Run<'_>, out: &mut Output<'_>) -> io::Result<()> {
    for diagnostic in run.diagnostics() {
        out.data(github::render(diagnostic, run.paths))?;
    }
    out.data(github::render_summary(&run.summary))?;
    step_summary(run, out)
}

/// Appends the step summary to `$GITHUB_STEP_SUMMARY`, when it is set. It is GitHub's
/// page for the job: appended, as each step adds its own part.
fn step_summary(run: &Run<'_>, out: &mut Output<'_>) -> io::Result<()> {
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

/// The output written as findings come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Streamed {
    Human,
    Json,
    Github,
}

/// What a [`Writer`] gives back at the end of the checking.
struct Finished {
    problems: Vec<Diagnostic>,
    checked: Vec<FileChecked>,
    /// Each file's findings, when they were kept.
    kept: Option<Vec<Vec<Diagnostic>>>,
    /// The first write that failed; nothing was written after it.
    failed: Option<io::Error>,
}

/// Something waiting to be written, in report order.
enum Piece {
    /// A `-v` note on stderr.
    Note(String),
    /// Findings of file `index`.
    File(usize, Vec<Diagnostic>),
}

/// Findings written and not kept, on their way back to a checking thread: each is freed
/// there, on the thread whose allocator made it. The allocator keeps memory per thread,
/// and a thread freeing another's memory takes that thread's lock; with a finding freed
/// by the writing thread for every one the checking thread makes, the two took turns at
/// that lock (a run with 123,514 findings switched threads 11,900 times, and took twice
/// as long with the human report).
#[derive(Default)]
struct Returned(std::sync::Mutex<Vec<Diagnostic>>);

/// Findings the writer returns at once.
const SPENT_BATCH: usize = 64;

impl Returned {
    /// Moves `spent` in, leaving it empty.
    fn take_back(&self, spent: &mut Vec<Diagnostic>) {
        let mut returned = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        returned.append(spent);
    }

    /// Frees what was returned, on this thread, unless the writer is returning some
    /// right now.
    fn free(&self) {
        let Ok(mut returned) = self.0.try_lock() else {
            return;
        };
        if returned.is_empty() {
            return;
        }
        let spent = std::mem::take(&mut *returned);
        drop(returned);
        drop(spent);
    }
}

/// A checking thread's [`Report`]: frees what the writer has [`Returned`] each time it
/// hands on a finding.
struct Freeing<'r, 'g> {
    report: &'r mut dyn Report,
    returned: &'g Returned,
}

impl Report for Freeing<'_, '_> {
    fn diagnostic(&mut self, diagnostic: Diagnostic) {
        self.returned.free();
        self.report.diagnostic(diagnostic);
    }

    fn reading(&mut self) {
        self.report.reading();
    }
}

/// Writes a run's findings in report order as they come (file by file, from
/// [`crate::check::in_file_order`]), holding back only what is not final yet:
///
/// - the problems of the run come first, and one of them (nothing was read) is known
///   only once a record was read or a finding is more than a warning: until then,
///   everything waits;
/// - a `per` key or `--trace-by` field that no record carries is reported once for the
///   run, with how many other files lack it: from its first copy on, everything waits
///   for the end of the run, when that count is known.
///
/// Everything is tallied even after a write failed (a closed pipe), so that the run
/// still exits with the status of all it found.
struct Writer<'o, 'w, 'r> {
    /// Where findings written and not kept go, to be freed by a checking thread (when
    /// checking is on other threads).
    returned: Option<&'r Returned>,
    /// Findings written and not kept, until there are enough to hand over at once.
    spent: Vec<Diagnostic>,
    out: &'o mut Output<'w>,
    streamed: Option<Streamed>,
    paths: &'r Paths,
    verbose: bool,
    progress: &'r Progress,
    problems: Vec<Diagnostic>,
    problems_written: bool,
    queue: Vec<Piece>,
    /// Whether the queue holds a finding that later files may repeat.
    repeats_held: bool,
    /// The index of the last file: what it reports, no later file repeats.
    last_file: usize,
    /// Whether the run is known to have read a record or found more than a warning.
    judged: bool,
    /// Each file's findings as written, for the documents made at the end.
    kept: Option<Vec<Vec<Diagnostic>>>,
    checked: Vec<FileChecked>,
    failed: Option<io::Error>,
}

impl Writer<'_, '_, '_> {
    fn event(&mut self, event: Event<(f64, Checked)>) {
        match event {
            Event::Diagnostic(index, diagnostic) => {
                self.judged |= !diagnostic.is_warning();
                self.push(Piece::File(index, vec![diagnostic]));
            }
            Event::Reading(_) => self.judged = true,
            Event::Done(..) => unreachable!("bug: files done go to `Writer::done`"),
            Event::Idle => {
                if self.failed.is_none() {
                    let flushed = self.progress.suspended(|| self.out.stdout().flush());
                    self.failed = flushed.err();
                }
            }
        }
        self.release();
    }

    fn done(&mut self, file: FileChecked) {
        let outcome = &file.checked.outcome;
        self.out.summary.records += outcome.records;
        self.out.summary.synthesized += outcome.synthesized;
        self.out.summary.traces += outcome.traces;
        self.judged |= outcome.records > 0 || file.checked.elsewhere > 0;
        // A streamed transcript learns its formats and traces as it is read: `-v` says
        // what was recognized once the file is done.
        if let (true, Some(detected)) = (self.verbose, &file.checked.detected) {
            self.push(Piece::Note(format_note(&file.path, detected)));
        }
        self.checked.push(file);
        self.release();
    }

    /// Once the run is judged, the problems are final: writes them, then what waited.
    fn release(&mut self) {
        if self.problems_written || !self.judged {
            return;
        }
        self.write_problems();
        for piece in std::mem::take(&mut self.queue) {
            self.push(piece);
        }
    }

    fn write_problems(&mut self) {
        self.problems_written = true;
        let problems = std::mem::take(&mut self.problems);
        for problem in &problems {
            self.write(problem);
        }
        self.problems = problems;
    }

    /// Writes `piece` now, or queues it while what comes before it is not final.
    fn push(&mut self, piece: Piece) {
        if let Piece::File(index, diagnostics) = &piece {
            self.repeats_held |= *index < self.last_file
                && diagnostics.iter().any(|d| d.same_in_every_file.is_some());
        }
        if !self.problems_written || self.repeats_held {
            match (self.queue.last_mut(), piece) {
                (Some(Piece::File(last, held)), Piece::File(index, diagnostics))
                    if *last == index =>
                {
                    held.extend(diagnostics);
                }
                (_, piece) => self.queue.push(piece),
            }
            return;
        }
        match piece {
            Piece::Note(note) => {
                if self.failed.is_none() {
                    let written = self.progress.suspended(|| self.out.note(&note));
                    self.failed = written.err();
                }
            }
            Piece::File(index, diagnostics) => {
                for diagnostic in diagnostics {
                    self.write(&diagnostic);
                    match &mut self.kept {
                        Some(kept) => {
                            if kept.len() <= index {
                                kept.resize_with(index + 1, Vec::new);
                            }
                            kept[index].push(diagnostic);
                        }
                        None => self.spend(diagnostic),
                    }
                }
            }
        }
    }

    /// Done with `diagnostic`, written: it is [`Returned`] with others, or freed now when
    /// checking is on this thread.
    fn spend(&mut self, diagnostic: Diagnostic) {
        let Some(returned) = self.returned else {
            return;
        };
        self.spent.push(diagnostic);
        if self.spent.len() >= SPENT_BATCH {
            returned.take_back(&mut self.spent);
        }
    }

    /// Tallies `diagnostic` and writes it, if this output streams and nothing failed.
    fn write(&mut self, diagnostic: &Diagnostic) {
        self.out.tally(diagnostic);
        let (Some(streamed), None) = (self.streamed, &self.failed) else {
            return;
        };
        let out = &mut *self.out;
        let paths = self.paths;
        let written = self.progress.suspended(|| {
            match streamed {
                Streamed::Human => {
                    out.write_diagnostic(Stream::Stdout, OutputFormat::Human, diagnostic)
                }
                Streamed::Json => {
                    out.write_diagnostic(Stream::Stdout, OutputFormat::Json, diagnostic)
                }
                Streamed::Github => out.data(github::render(diagnostic, paths)),
            }?;
            // Over a progress bar, what is written must be out before it is redrawn.
            if self.progress.is_shown() {
                out.stdout().flush()?;
            }
            Ok(())
        });
        self.failed = written.err();
    }

    /// The end of the checking: judges whether anything was read, writes all that
    /// waited, and gives back the problems, the files and the findings kept.
    fn finish(mut self, traces: &[PathBuf]) -> Finished {
        if !self.problems_written {
            // A run that read no record never passes, even when no file said why.
            if !self.checked.is_empty() && !self.judged {
                let mut diagnostic = no_input("trace", traces, "`*.jsonl` or `*.json`");
                diagnostic.message =
                    "no record was read from the trace files: nothing was checked".into();
                self.problems.push(diagnostic);
            }
            self.write_problems();
        }
        let mut queue = std::mem::take(&mut self.queue);
        merge_never_carried(queue.iter_mut().filter_map(|piece| match piece {
            Piece::File(_, diagnostics) => Some(diagnostics),
            Piece::Note(_) => None,
        }));
        // What is left is final now: nothing comes after it.
        self.repeats_held = false;
        self.last_file = 0;
        for piece in queue {
            self.push(piece);
        }
        let mut kept = self.kept.take();
        if let Some(kept) = &mut kept {
            kept.resize_with(self.checked.len(), Vec::new);
        }
        Finished {
            problems: self.problems,
            checked: self.checked,
            kept,
            failed: self.failed,
        }
    }
}

/// The library's part before any trace is read: load specs, find the trace files, and,
/// with `--shard`, keep this shard's part.
fn plan(config: &CheckConfig) -> io::Result<Plan<'_>> {
    let mut specs = Vec::new();
    let mut problems = Vec::new();
    let mut groups = Vec::new();
    let mut unscoped = Vec::new();
    let mut spec_failed = false;
    // Trace files are named for sharding relative to the project file's directory, or
    // as given: the same on every machine of a CI matrix.
    let mut shard_root = std::env::current_dir()?;
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
                shard: None,
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
                    shard: None,
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
            if let Some(dir) = project.file.parent() {
                shard_root = shard_root.join(dir);
            }
        }
    }
    if let Some(shard) = config.shard {
        let names = Paths {
            base: std::env::current_dir()?,
            root: shard_root,
        };
        for group in &mut groups {
            if group.check.trace_by.is_some() {
                group.shard = Some(shard);
            } else {
                group.files.retain(|file| shard.takes(&names.name(file)));
            }
        }
    }
    if config.verify_chain {
        // Each file once, whichever scopes name it; a file whose traces are sharded,
        // by the first shard.
        let files: BTreeSet<&PathBuf> = groups
            .iter()
            .filter(|g| g.shard.is_none_or(|s| s.is_first()))
            .flat_map(|g| g.files.iter())
            .collect();
        let files: Vec<PathBuf> = files.into_iter().cloned().collect();
        problems.extend(super::chain::verify_chains(
            &files,
            config.check.max_line_bytes,
        ));
    }
    // A spec that does not compile checks nothing: fail closed, before reading traces.
    let checking = !spec_failed && !specs.is_empty();
    Ok(Plan {
        specs,
        problems,
        groups,
        unscoped,
        checking,
    })
}

/// `--join`: each group's files merged into one stream by time and checked as one
/// input, whose findings name each record's own file.
fn join_groups(
    specs: &[Machine],
    groups: &[Group<'_>],
    time: &crate::trace::join::TimeField,
    writer: &mut Writer<'_, '_, '_>,
) {
    let joined: Vec<&Group<'_>> = groups.iter().filter(|g| !g.files.is_empty()).collect();
    writer.last_file = joined.len().saturating_sub(1);
    for (index, group) in joined.into_iter().enumerate() {
        let started = Instant::now();
        let mut outcome = super::chain::check_join(
            &specs[group.specs.clone()],
            &group.files,
            group.check,
            group.input,
            time,
        );
        for diagnostic in std::mem::take(&mut outcome.diagnostics) {
            writer.event(Event::Diagnostic(index, diagnostic));
        }
        writer.done(FileChecked {
            path: PathBuf::from(format!("{} files, joined", group.files.len())),
            specs: group.specs.clone().collect(),
            seconds: started.elapsed().as_secs_f64(),
            checked: Checked {
                outcome,
                detected: None,
                elsewhere: 0,
            },
        });
    }
}

/// A `per` key or `--trace-by` field that no record carries is reported by each file
/// that lacks it; across files, the same finding is given once, at the first file, with
/// how many other files lack it too. `files` are the files' findings in report order.
fn merge_never_carried<'f>(files: impl IntoIterator<Item = &'f mut Vec<Diagnostic>>) {
    // Each finding (by what it says) with how many files repeat it, and where its
    // first copy is (file, index).
    let mut firsts: Vec<(String, u64)> = Vec::new();
    let mut at: Vec<(usize, usize)> = Vec::new();
    let mut held: Vec<&'f mut Vec<Diagnostic>> = Vec::new();
    for diagnostics in files {
        let file = held.len();
        let mut index = 0;
        diagnostics.retain(|diagnostic| {
            let keep = match &diagnostic.same_in_every_file {
                None => true,
                Some(what) => match firsts.iter_mut().find(|(seen, _)| seen == what) {
                    Some((_, others)) => {
                        *others += 1;
                        false
                    }
                    None => {
                        firsts.push((what.clone(), 0));
                        at.push((file, index));
                        true
                    }
                },
            };
            index += usize::from(keep);
            keep
        });
        held.push(diagnostics);
    }
    for ((_, others), (file, index)) in firsts.into_iter().zip(at) {
        if others > 0 {
            let s = if others == 1 { "" } else { "s" };
            held[file][index].message.push_str(&format!(
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
        // Only regular files: a pipe or standard input (`-`) was read to its end
        // already, and its findings keep their records' text.
        let regular = std::fs::metadata(&file).is_ok_and(|meta| meta.is_file());
        if !regular || crate::trace::input::is_stdin(&file) {
            continue;
        }
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

    /// Whether the bar is drawn on stderr.
    fn is_shown(&self) -> bool {
        self.shown.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `write` with the bar taken off the terminal, when it is on it.
    fn suspended<R>(&self, write: impl FnOnce() -> R) -> R {
        if self.is_shown() {
            self.bar.suspend(write)
        } else {
            write()
        }
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
