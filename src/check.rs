//! The checker: routes records to machine instances and collects verdicts. Pure: it
//! reads what it is given and returns data; it never prints.
//!
//! A [`Monitor`] takes the records of one input, one at a time, in order. Records are
//! grouped into traces (the whole input, or one trace per value of `--trace-by`);
//! within a trace, each spec routes a record to an instance by its `per` key (a record
//! lacking the key goes to every live instance of the trace), and each instance walks
//! the spec's machine. When the input ends, calls that never got a result receive a
//! synthetic `status: "missing"` result, and every live instance must be in an
//! accepting state.
//!
//! A trace may end before the input: the traces of a streamed document of runs, one
//! per run, end with their run, the threads and sessions of a streamed log with
//! their last line ([`Item::TraceEnd`]), and the `--trace-by` traces of a large file
//! with their last record, which a first pass finds (`trace_ends`). Such a trace is
//! checked to its end at once and its state freed, so memory follows the traces being
//! read, not the traces read; what its end found is held and reported where the end of
//! the input would report it, so the report is the same either way.

mod instances;
mod trace_ends;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use hashbrown::HashTable;
use hashbrown::hash_table::Entry;
use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic, SpecSite, Step, TraceSite, ViolationDetail};
use crate::eval::{Context, Seen, Val};
use crate::json::Segment;
use crate::machine::Otherwise;
use crate::machine::{EventId, Machine, Move, StateId};
use crate::source::Span;
use crate::trace::adapters::{Detected, InputOptions, Problem, ProblemKind};
use crate::trace::input::{Item, RecentBytes, TraceInput};
use crate::trace::{Fields, Kind, Location, Record, Status};
use instances::{KeyHash, SpecRun};
use trace_ends::TraceEnds;

/// How traces are read and split.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Split each input into one trace per value of this path (e.g. `case`).
    pub trace_by: Option<Vec<Segment>>,
    /// Lines longer than this are reported, not read; `None` for the default.
    pub max_line_bytes: Option<usize>,
    /// How many distinct values a trace's provenance index holds; `None` for
    /// [`crate::eval::SEEN_LIMIT`].
    pub provenance_limit: Option<usize>,
    /// Decode a native JSONL file's records on a second thread, ahead of checking
    /// them ([`TraceInput::decode_ahead`]): for a core that would otherwise be idle.
    pub decode_ahead: bool,
}

/// What checking one input produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Violations and input problems, in the order they were found.
    pub diagnostics: Vec<Diagnostic>,
    /// Records read (malformed lines are diagnostics, not records).
    pub records: u64,
    /// `missing` results synthesized at the end of a trace for calls no record
    /// answered. Specs see them, but they were not read, so `records` leaves them out.
    pub synthesized: u64,
    /// Traces the input held.
    pub traces: u64,
    /// Records that matched an event of at least one spec.
    pub matched: u64,
}

/// One move of one instance, as an [`Observer`] sees it: in state `from`, `event`
/// (found in the record at `loc`) made the move `step`.
#[derive(Debug, Clone, Copy)]
pub struct Observation<'a> {
    /// Index of the spec in the checker's list.
    pub spec: usize,
    /// Index of the trace within the input.
    pub trace: usize,
    /// The instance's `per` key, if the spec has one.
    pub key: Option<&'a str>,
    /// The state the instance was in.
    pub from: StateId,
    /// The event the record is.
    pub event: EventId,
    /// What the event did in `from`.
    pub step: Move,
    /// Where the record is.
    pub loc: &'a Location,
    /// Whether the record is a `missing` result synthesized at the end of its trace
    /// (the end of the input, or of its run in a document of runs).
    pub at_end: bool,
}

/// Watches every move of every instance (coverage, shrinking, `graph --highlight`).
/// Instances that have stopped after a violation make no moves.
pub type Observer<'o> = Box<dyn FnMut(&Observation<'_>) + 'o>;

/// Checks one native JSONL input, streaming it line by line (`file` names it in
/// diagnostics).
pub fn check_reader<R: BufRead>(
    specs: &[Machine],
    file: Arc<Path>,
    input: R,
    options: &CheckOptions,
) -> Outcome {
    let input = TraceInput::native(input, options.max_line_bytes);
    check_input(specs, file, input, options, None)
}

/// Checks every record of an opened trace input (`file` names it in diagnostics),
/// showing every move to `observer` when there is one.
pub fn check_input(
    specs: &[Machine],
    file: Arc<Path>,
    input: TraceInput<'_>,
    options: &CheckOptions,
    observer: Option<Observer<'_>>,
) -> Outcome {
    let mut found = Vec::new();
    let mut outcome = drive(
        specs, &file, input, options, observer, None, None, None, &mut found,
    );
    outcome.diagnostics = found;
    outcome
}

/// [`check_input`], handing each finding to `report` as soon as it is final (see
/// [`check_path_reported`]); the outcome's `diagnostics` are empty.
pub fn check_input_reported(
    specs: &[Machine],
    file: Arc<Path>,
    input: TraceInput<'_>,
    options: &CheckOptions,
    observer: Option<Observer<'_>>,
    report: &mut dyn Report,
) -> Outcome {
    drive(
        specs, &file, input, options, observer, None, None, None, report,
    )
}

/// Where a check hands its findings, each as soon as it is final: nothing found later
/// in the same input comes before it in the report. A `Vec` collects them.
pub trait Report {
    /// The next finding of the input, in report order.
    fn diagnostic(&mut self, diagnostic: Diagnostic);

    /// The input's first record has been checked (said once).
    fn reading(&mut self) {}
}

impl Report for Vec<Diagnostic> {
    fn diagnostic(&mut self, diagnostic: Diagnostic) {
        self.push(diagnostic);
    }
}

/// A [`Report`] on a stream, which cannot be read again: each finding takes the text of
/// the record it points to from the stream's last bytes (from anywhere in it, for a
/// stream kept in a temporary file), for renderers to quote.
struct Quoting<'r> {
    inner: &'r mut dyn Report,
    recent: RecentBytes,
}

impl Report for Quoting<'_> {
    fn diagnostic(&mut self, mut diagnostic: Diagnostic) {
        quote(&mut diagnostic, &self.recent);
        self.inner.diagnostic(diagnostic);
    }

    fn reading(&mut self) {
        self.inner.reading();
    }
}

/// Gives `diagnostic` the text of the record it points to, taken from `recent`, the
/// bytes of the stream it was found in.
pub(crate) fn quote(diagnostic: &mut Diagnostic, recent: &RecentBytes) {
    if let Some(site) = diagnostic.trace.as_ref().filter(|s| s.loc.line > 0) {
        let len = crate::diagnostic::render::snippet_bytes(site.loc.len);
        diagnostic.record_text =
            recent.get(site.loc.offset, usize::try_from(len).unwrap_or(usize::MAX));
    }
}

/// One part of a run split `count` ways (`--shard K/N`), so that machines that each
/// check one part check, together, exactly what one run would.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which part, from 1.
    pub index: u64,
    /// How many parts.
    pub count: u64,
}

impl Shard {
    /// Whether this part takes what is named `name` (a trace file's path, a trace's
    /// key). Decided by a hash that is the same on every machine and in every release,
    /// so every machine of a CI matrix agrees on who checks what.
    pub fn takes(&self, name: &str) -> bool {
        stable_hash(name) % self.count == self.index - 1
    }

    /// Whether this is the first part, which reports what belongs to no trace (an
    /// input's own problems, records that cannot be placed in a trace).
    pub fn is_first(&self) -> bool {
        self.index == 1
    }
}

/// FNV-1a over `text`, mixed (splitmix64's finalizer) so that its low bits spread
/// evenly. Fixed: a change would move traces between shards.
fn stable_hash(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

/// What checking one file gave, and what was recognized in it (`None` when the file
/// could not be read).
#[derive(Debug)]
pub struct Checked {
    /// The checker's verdicts and counts. Checked through a [`Report`], its
    /// `diagnostics` are empty: the report has them.
    pub outcome: Outcome,
    /// The file's format and layout, as detected or given.
    pub detected: Option<Detected>,
    /// Records of the file left to other shards (`--shard` by trace key).
    pub elsewhere: u64,
}

/// Checks one trace file of any format ([`TraceInput::open`]).
pub fn check_path(
    specs: &[Machine],
    path: &Path,
    options: &CheckOptions,
    input: &InputOptions,
) -> Checked {
    check_path_observed(specs, path, options, input, None)
}

/// [`check_path`], showing every move of every instance to `observer` (coverage,
/// shrinking and `graph --highlight` watch the checker this way).
pub fn check_path_observed(
    specs: &[Machine],
    path: &Path,
    options: &CheckOptions,
    input: &InputOptions,
    observer: Option<Observer<'_>>,
) -> Checked {
    let mut found = Vec::new();
    let mut checked = check_path_reported(specs, path, options, input, observer, None, &mut found);
    checked.outcome.diagnostics = found;
    checked
}

/// [`check_path_observed`], handing each finding to `report` as soon as it is final,
/// and checking, with a `shard` and `--trace-by`, only the traces whose key the shard
/// takes.
///
/// Findings come in the order [`check_path`] gives them. A native JSONL input is
/// checked as it is read, so a violation is reported when its record is, and the
/// end-of-trace findings when the input ends; so is a file of one transcript element
/// per line (an MCP log, a Claude Code log), once its adapter hands the record on,
/// and so is a document streamed from a file, once its first pass has found it valid
/// and what it holds. Documents read whole report when their file ends, as problems of
/// a file as a whole come before its records' findings and may be found late; so does a
/// streamed document whose `--select` path may select nothing.
pub fn check_path_reported(
    specs: &[Machine],
    path: &Path,
    options: &CheckOptions,
    input: &InputOptions,
    observer: Option<Observer<'_>>,
    shard: Option<Shard>,
    report: &mut dyn Report,
) -> Checked {
    // With a shard of traces, what is not a trace's (the file's own problems) is the
    // first shard's to report, so that the shards' reports add up to one run's.
    let own_problems = shard.is_none_or(|s| options.trace_by.is_none() || s.is_first());
    match TraceInput::open(path, input, options.max_line_bytes) {
        Ok(mut opened) => {
            if options.decode_ahead {
                opened.decode_ahead();
            }
            let at_end = opened.detected_at_end();
            let file: Arc<Path> = Arc::from(path);
            // Records without `kind` or `tool` are fine when specs match them with
            // `record` patterns; the warning is for a file no spec saw anything in.
            let warning = opened.detected().warning.clone().filter(|_| own_problems);
            let mut elsewhere = 0;
            let mut quoting;
            let report: &mut dyn Report = match opened.recent_bytes() {
                Some(recent) => {
                    quoting = Quoting {
                        inner: report,
                        recent,
                    };
                    &mut quoting
                }
                None => report,
            };
            // Traces split by a field end where a first pass found their last
            // record, when the file streams: memory then follows the traces in flight.
            let ends = match &options.trace_by {
                Some(by) if opened.reading().is_none() => {
                    TraceEnds::survey(path, by, input, options.max_line_bytes)
                }
                _ => None,
            };
            let outcome = drive(
                specs,
                &file,
                opened,
                options,
                observer,
                ends,
                warning,
                shard
                    .filter(|_| options.trace_by.is_some())
                    .map(|s| (s, &mut elsewhere)),
                report,
            );
            Checked {
                outcome,
                // A streamed transcript learns its formats and traces as it is read.
                detected: Some(at_end.get()),
                elsewhere,
            }
        }
        Err(err) => {
            if own_problems {
                report.diagnostic(Diagnostic::unreadable(path, &err));
            }
            Checked {
                outcome: Outcome::default(),
                detected: None,
                elsewhere: 0,
            }
        }
    }
}

/// Feeds `input` to a monitor, handing findings to `report` once their place in the
/// report is final, and returns the counts (its `diagnostics` empty).
///
/// The report order is: the `untyped-records` `warning` (when no record matched any
/// event), the input's problems as a whole, then the monitor's findings in the order
/// it made them. So the monitor's findings wait while the warning may still come (no
/// record matched yet), and, for transcript formats, until the end. With a `shard` of
/// traces, records of other shards' traces are counted in it and not checked.
#[allow(clippy::too_many_arguments)]
fn drive(
    specs: &[Machine],
    file: &Arc<Path>,
    input: TraceInput<'_>,
    options: &CheckOptions,
    observer: Option<Observer<'_>>,
    mut ends: Option<TraceEnds>,
    warning: Option<Problem>,
    mut shard: Option<(Shard, &mut u64)>,
    report: &mut dyn Report,
) -> Outcome {
    // A file of many transcripts: one trace each, by the `trace` field the adapters
    // gave every record, unless the user split traces their own way.
    let trace_by = options
        .trace_by
        .clone()
        .or_else(|| (input.traces() > 1).then(|| vec![Segment::Key("trace".into())]));
    let own_problems = shard.as_ref().is_none_or(|(s, _)| s.is_first());
    // Whether findings are final as they are made, or wait for the end of the file.
    let streams = input.findings_final();
    let mut monitor = Monitor::new(specs, file.clone(), trace_by.clone());
    monitor.observer = observer;
    if let Some(limit) = options.provenance_limit {
        monitor.provenance_limit = limit;
    }
    let mut file_level = Vec::new();
    let mut reading = false;
    let mut holding = true;
    let done: Result<(), std::convert::Infallible> = input.try_for_each_in_place(|item| {
        match item {
            // Checked where it lies: a record is large, and each move copies it.
            Item::Record(record) => {
                let ending = ends.as_mut().and_then(TraceEnds::record);
                if let (Some((shard, elsewhere)), Some(path)) = (shard.as_mut(), &trace_by) {
                    // A record that names no trace is the first shard's to report.
                    let mine = match trace_name(path, record) {
                        Ok(name) => shard.takes(&name),
                        Err(_) => shard.is_first(),
                    };
                    if !mine {
                        **elsewhere += 1;
                        return Ok(());
                    }
                }
                monitor.check_record(record);
                if let Some(name) = ending {
                    monitor.end_trace(&name);
                }
            }
            Item::Problem(_) if !own_problems => {}
            Item::Problem(problem) => match problem.kind {
                ProblemKind::Malformed if problem.hint.is_none() => {
                    monitor.malformed(problem.loc.clone(), std::mem::take(&mut problem.message))
                }
                _ => file_level.push(Diagnostic::from_problem(file, problem.clone())),
            },
            Item::Stopped(err) if own_problems => monitor.report(Diagnostic::unreadable(file, err)),
            Item::Stopped(_) => {}
            // A trace the adapter named has ended (a run of a document of runs): it is
            // checked to its end now, and what it held is freed. Traces the user split
            // by a field of their own may span runs.
            Item::TraceEnd(name) if options.trace_by.is_none() => monitor.end_trace(name),
            Item::TraceEnd(_) => {}
        }
        if !reading && monitor.records() > 0 {
            reading = true;
            report.reading();
        }
        if holding {
            holding = !streams || (warning.is_some() && monitor.matched() == 0);
        }
        if !holding && monitor.reported() > 0 {
            file_level.drain(..).for_each(|d| report.diagnostic(d));
            monitor
                .take_reported()
                .into_iter()
                .for_each(|d| report.diagnostic(d));
        }
        Ok(())
    });
    let Ok(()) = done;
    let mut outcome = monitor.finish();
    if let (Some(warning), 0) = (warning, outcome.matched) {
        report.diagnostic(Diagnostic::from_problem(file, warning));
    }
    file_level.into_iter().for_each(|d| report.diagnostic(d));
    std::mem::take(&mut outcome.diagnostics)
        .into_iter()
        .for_each(|d| report.diagnostic(d));
    outcome
}

/// Checks many files, in parallel, returning their results in input order.
pub fn check_paths<P: AsRef<Path> + Sync>(
    specs: &[Machine],
    paths: &[P],
    options: &CheckOptions,
    input: &InputOptions,
) -> Vec<Checked> {
    let mut checked: Vec<Checked> = Vec::with_capacity(paths.len());
    let mut found = Vec::new();
    in_file_order(
        paths.len(),
        None,
        |index, report| {
            check_path_reported(
                specs,
                paths[index].as_ref(),
                options,
                input,
                None,
                None,
                report,
            )
        },
        |event| match event {
            Event::Diagnostic(_, diagnostic) => found.push(diagnostic),
            Event::Reading(_) | Event::Idle => {}
            Event::Done(_, mut one) => {
                one.outcome.diagnostics = std::mem::take(&mut found);
                checked.push(one);
            }
        },
    );
    checked
}

/// The threads `jobs` asks for: the number of cores when `None`, and at least one.
pub fn threads(jobs: Option<usize>) -> usize {
    jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1)
}

/// What [`in_file_order`] hands on, in file order.
// Nearly every event is a finding, the largest variant: boxing it would allocate per
// finding to save room only in the rare small ones.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Event<T> {
    /// A finding of file `index`, final.
    Diagnostic(usize, Diagnostic),
    /// File `index` has had its first record checked.
    Reading(usize),
    /// File `index` is done: what checking it returned.
    Done(usize, T),
    /// Nothing has come for a moment ([`QUIET`]): the time to flush what was written,
    /// so that findings do not sit in a buffer while checking waits (on a pipe, say).
    Idle,
}

/// How long [`in_file_order`] waits for the next event before it says
/// [`Event::Idle`]: short enough for a person watching, long enough that a busy run
/// is not flushed after every finding.
pub const QUIET: std::time::Duration = std::time::Duration::from_millis(20);

/// Events that may wait for the writer before checking waits for it.
const BACKLOG: usize = 4096;

/// Checks `count` files with `check(index, report)` on `jobs` threads (the number of
/// cores when `None`), handing every event to `on` in file order: all of file `k`'s
/// before any of file `k + 1`'s. Files are taken in order as threads come free, and a
/// file's events are handed on as they come while every file before it is done; a
/// later file's wait, in memory, until then. So output written from `on` streams in
/// the order one thread would write it, and a file that never ends (a pipe held
/// open) stops only what comes after it.
pub fn in_file_order<T: Send>(
    count: usize,
    jobs: Option<usize>,
    check: impl Fn(usize, &mut dyn Report) -> T + Sync,
    mut on: impl FnMut(Event<T>),
) {
    use std::collections::BTreeMap;
    use std::sync::atomic::{AtomicUsize, Ordering};

    if count == 0 {
        return;
    }
    let threads = threads(jobs).min(count);
    let next = AtomicUsize::new(0);
    let queue = Queue::new(threads);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (queue, next, check) = (&queue, &next, &check);
            scope.spawn(move || {
                // Counts this thread out however it ends, so that the loop below ends.
                let _leaving = Leaving(queue);
                loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    if index >= count {
                        break;
                    }
                    let done = check(index, &mut Sender { index, queue });
                    queue.push(Event::Done(index, done));
                }
            });
        }
        // Events of files after the one being handed on, in arrival order per file.
        let mut waiting: BTreeMap<usize, Vec<Event<T>>> = BTreeMap::new();
        let mut current = 0;
        let mut events = VecDeque::new();
        // If `on` panics, the checking threads must not wait for room that never comes.
        let _closing = Closing(&queue);
        // Whether `Idle` was said since the last events: once per quiet spell.
        let mut quiet = false;
        while queue.take(&mut events) {
            if events.is_empty() {
                if !quiet {
                    on(Event::Idle);
                }
                quiet = true;
                continue;
            }
            quiet = false;
            for event in events.drain(..) {
                let index = match &event {
                    Event::Diagnostic(index, _) | Event::Reading(index) | Event::Done(index, _) => {
                        *index
                    }
                    Event::Idle => continue,
                };
                if index != current {
                    waiting.entry(index).or_default().push(event);
                    continue;
                }
                let mut done = matches!(event, Event::Done(..));
                on(event);
                // A file done: hand on what the next ones have waiting, as far as they
                // are done.
                while done {
                    current += 1;
                    done = false;
                    for event in waiting.remove(&current).unwrap_or_default() {
                        done |= matches!(event, Event::Done(..));
                        on(event);
                    }
                }
            }
        }
    });
}

/// Events on their way from the checking threads to [`in_file_order`]'s caller.
///
/// A checking thread does not wake the caller for each finding: waking a thread costs
/// more than judging many records (a run with a finding every hundred records spent a
/// tenth of its time in wake-ups). The caller looks every [`QUIET`] on its own, and is
/// woken only for a file's end or a full batch. So a finding reaches the output within
/// about [`QUIET`], as a finding on a pipe did before.
struct Queue<T> {
    state: std::sync::Mutex<Queued<T>>,
    /// Signalled when the caller should look now.
    ready: std::sync::Condvar,
    /// Signalled when the caller has taken events, for a checking thread that waits
    /// for room.
    room: std::sync::Condvar,
}

struct Queued<T> {
    events: VecDeque<Event<T>>,
    /// Checking threads still running.
    threads: usize,
    /// Set when the caller has stopped taking events (it panicked): what comes is
    /// dropped.
    closed: bool,
}

/// Events that wake the caller at once: enough to be worth a wake-up.
const BATCH: usize = 256;

impl<T> Queue<T> {
    fn new(threads: usize) -> Self {
        Queue {
            state: std::sync::Mutex::new(Queued {
                events: VecDeque::new(),
                threads,
                closed: false,
            }),
            ready: std::sync::Condvar::new(),
            room: std::sync::Condvar::new(),
        }
    }

    /// The state; a thread that panicked holding it left nothing half done.
    fn lock(&self) -> std::sync::MutexGuard<'_, Queued<T>> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues `event` from a checking thread; waits while [`BACKLOG`] events wait for
    /// the caller (a slow writer), so that findings are not all held.
    fn push(&self, event: Event<T>) {
        let wake = matches!(event, Event::Done(..));
        let mut state = self.lock();
        while state.events.len() >= BACKLOG && !state.closed {
            self.ready.notify_one();
            state = self
                .room
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        if state.closed {
            return;
        }
        state.events.push_back(event);
        if wake || state.events.len() >= BATCH {
            self.ready.notify_one();
        }
    }

    /// A checking thread has ended.
    fn leave(&self) {
        self.lock().threads -= 1;
        self.ready.notify_one();
    }

    /// Moves the queued events to `events` (empty), waiting up to [`QUIET`] for some:
    /// `events` stays empty when none came in that time. `false` once every checking
    /// thread has ended and every event is taken.
    fn take(&self, events: &mut VecDeque<Event<T>>) -> bool {
        let mut state = self.lock();
        if state.events.is_empty() {
            if state.threads == 0 {
                return false;
            }
            state = self
                .ready
                .wait_timeout(state, QUIET)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
            if state.events.is_empty() {
                return state.threads > 0;
            }
        }
        std::mem::swap(events, &mut state.events);
        self.room.notify_all();
        true
    }
}

/// Sends a file's findings to the thread that orders them.
struct Sender<'a, T> {
    index: usize,
    queue: &'a Queue<T>,
}

impl<T> Report for Sender<'_, T> {
    fn diagnostic(&mut self, diagnostic: Diagnostic) {
        self.queue.push(Event::Diagnostic(self.index, diagnostic));
    }
    fn reading(&mut self) {
        self.queue.push(Event::Reading(self.index));
    }
}

/// Closes a [`Queue`] when the caller stops taking from it, even by a panic.
struct Closing<'a, T>(&'a Queue<T>);

impl<T> Drop for Closing<'_, T> {
    fn drop(&mut self) {
        self.0.lock().closed = true;
        self.0.room.notify_all();
    }
}

/// Counts a checking thread out of its [`Queue`] when it ends, even by a panic.
struct Leaving<'a, T>(&'a Queue<T>);

impl<T> Drop for Leaving<'_, T> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// Checks the records of one input, fed one at a time.
///
/// [`Monitor::feed`] returns the verdicts a record makes final at once (a forbidden or
/// unexpected move); [`Monitor::allows`] asks whether a record may come next without
/// changing anything; [`Monitor::finish`] ends the input and adds the end-of-trace
/// verdicts. The crate documentation has a complete example, and the `runtime` module
/// builds records from the shapes agent SDKs use.
pub struct Monitor<'s> {
    /// `None` unless someone watches; then it sees every move.
    observer: Option<Observer<'s>>,
    /// Set once the input has ended and `finish` synthesizes `missing` results.
    at_end: bool,
    specs: Specs<'s>,
    file: Arc<Path>,
    trace_by: Option<Vec<Segment>>,
    traces: Traces,
    /// The traces by name, when split by `trace_by`: those still open.
    trace_index: FxHashMap<String, usize>,
    diagnostics: Vec<Diagnostic>,
    /// What traces that ended before the input did found at their end, by trace: held
    /// for [`Monitor::finish`], which reports the end of every trace in trace order
    /// after everything else.
    ended: Vec<(usize, Diagnostic)>,
    records: u64,
    synthesized: u64,
    /// How many distinct values each trace's provenance index holds.
    provenance_limit: usize,
    /// Records that matched an event of at least one spec.
    matched: u64,
    /// `missing` results synthesized at the end of traces that ended before the input
    /// and matched an event: counted in `matched` once the input ends, as they would
    /// have been if synthesized then.
    matched_at_ends: u64,
    /// (spec, event, event) pairs already reported as ambiguous in this input.
    ambiguous_seen: Vec<(usize, EventId, EventId)>,
    /// Scratch space for instance keys, reused across records.
    key: String,
    /// Records come from several files (a join): `file` is the current record's, and
    /// instances and open calls remember their own.
    joined: bool,
    tools: rustc_hash::FxHashSet<Arc<str>>,
    /// Per spec: records of its events that lacked its `per` key with no instance to
    /// take them (`missing-key`).
    keys: Vec<KeyWatch>,
    /// Records that lacked the `--trace-by` field.
    split: KeyWatch,
    /// Per spec, per state: whether the state is a sink ([`instances::sinks`]).
    sinks: Vec<Box<[bool]>>,
    /// Per spec: whether its `per` key is read from `args` alone, so a result that
    /// inherits its call's args has its call's key.
    args_keyed: Vec<bool>,
}

/// The specs a monitor checks against: borrowed from the caller, or shared with it (a
/// monitor that must own what it checks against, such as one held by another
/// language's object).
enum Specs<'s> {
    Borrowed(&'s [Machine]),
    Shared(Arc<[Machine]>),
}

impl std::ops::Deref for Specs<'_> {
    type Target = [Machine];

    fn deref(&self) -> &[Machine] {
        match self {
            Specs::Borrowed(specs) => specs,
            Specs::Shared(specs) => specs,
        }
    }
}

/// The answer of [`Monitor::allows`]: whether a record may come next and, when it may
/// not, the diagnostic that feeding it would report first.
#[derive(Debug, Clone)]
pub struct Allowance {
    denial: Option<Box<Diagnostic>>,
}

impl Allowance {
    /// Whether the record would be allowed: it would make no diagnostic final now.
    pub fn is_allowed(&self) -> bool {
        self.denial.is_none()
    }

    /// The diagnostic the record would cause, in full (trace site, spec rule, path).
    pub fn denial(&self) -> Option<&Diagnostic> {
        self.denial.as_deref()
    }

    /// Why the record is not allowed: `forbidden-transition`, `unexpected-event`, …
    pub fn code(&self) -> Option<Code> {
        self.denial.as_ref().map(|d| d.code)
    }

    /// The forbid rule's message, or what makes the move unexpected.
    pub fn message(&self) -> Option<&str> {
        self.denial.as_ref().map(|d| d.message.as_str())
    }

    /// The spec rule that decides: the `forbid`, or the `otherwise reject`.
    pub fn rule(&self) -> Option<&SpecSite> {
        self.denial.as_ref().and_then(|d| d.spec.as_ref())
    }

    /// The events the instance's state allows; empty when the record is allowed.
    pub fn allowed_events(&self) -> &[String] {
        self.denial
            .as_ref()
            .and_then(|d| d.violation.as_deref())
            .map_or(&[], |v| v.allowed.as_slice())
    }
}

#[derive(Default)]
struct TraceState {
    name: Option<String>,
    calls: OpenCalls,
    runs: Vec<SpecRun>,
    /// The values this trace's outputs and messages have shown, when a spec tests
    /// provenance (`None` otherwise, so other specs pay nothing for it).
    seen: Option<Box<Seen>>,
    /// Whether the trace ended before the input ([`Monitor::end_trace`]): then it holds
    /// nothing else.
    ended: bool,
}

/// The traces of an input, by index, in the order they began. A trace that ended
/// before the input keeps its index but none of its state; once the traces that ended
/// make up at least half of those kept from the first on, their places go too, so a
/// document of many runs one after the other keeps one or two.
#[derive(Default)]
struct Traces {
    /// How many traces, from index 0 on, have ended and are kept no more.
    dropped: usize,
    /// The traces from index `dropped` on.
    kept: Vec<TraceState>,
}

impl Traces {
    /// How many traces the input has had.
    fn len(&self) -> usize {
        self.dropped + self.kept.len()
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn first(&self) -> Option<&TraceState> {
        self.kept.first().filter(|_| self.dropped == 0)
    }

    fn push(&mut self, trace: TraceState) {
        self.kept.push(trace);
    }

    /// Frees the state of trace `index`, which has ended.
    fn end(&mut self, index: usize) {
        self[index] = TraceState {
            ended: true,
            ..TraceState::default()
        };
        let ended = self.kept.iter().take_while(|trace| trace.ended).count();
        if 2 * ended >= self.kept.len() {
            self.kept.drain(..ended);
            self.dropped += ended;
        }
    }
}

impl std::ops::Index<usize> for Traces {
    type Output = TraceState;

    fn index(&self, index: usize) -> &TraceState {
        &self.kept[index - self.dropped]
    }
}

impl std::ops::IndexMut<usize> for Traces {
    fn index_mut(&mut self, index: usize) -> &mut TraceState {
        &mut self.kept[index - self.dropped]
    }
}

/// The calls of one trace still waiting for their result.
#[derive(Default)]
struct OpenCalls {
    /// Calls with an id, found by the id's hash: each names its call's place in
    /// `calls`. Ids are unique while open in every format we read. The table's slots
    /// are small, so that it stays in cache for the thousands of calls a busy trace
    /// has open.
    by_id: HashTable<CallSlot>,
    /// The calls `by_id` names, with their ids. A closed call's place is taken by the
    /// next call, while it is still in cache.
    calls: Vec<Option<(CallId, OpenCall)>>,
    /// Places in `calls` of closed calls.
    free: Vec<u32>,
    /// A call whose id was already open (a reused id); answered after the first.
    reused: VecDeque<(Box<str>, OpenCall)>,
    /// Calls without an id, per tool: they pair with the next result for that tool.
    anonymous: FxHashMap<Option<Arc<str>>, VecDeque<OpenCall>>,
    seen: u64,
    /// Emptied buffers of closed calls' arguments, for the next calls': a call's
    /// arguments are copied out of its line, and a reused buffer makes that copy
    /// allocate nothing.
    spare: Vec<String>,
}

/// How many argument buffers [`OpenCalls::spare`] keeps at least (it may keep as many
/// as the trace has had calls open at once), and the largest it keeps: enough for the
/// calls in flight of a busy trace, never a large buffer held for nothing.
const SPARE_BUFFERS: usize = 1024;
const SPARE_BYTES: usize = 1024;

/// A call's place in [`OpenCalls::calls`], with 32 bits of its id's hash: growing the
/// table, and most mismatches, then read no call.
#[derive(Clone, Copy)]
struct CallSlot {
    hash: u32,
    call: u32,
}

/// A call id, as [`OpenCalls::calls`] keeps it. An id of up to 15 bytes (most ids) is
/// held in place, so keeping it allocates nothing.
enum CallId {
    /// The id's bytes, then zeros, and its length in the last byte.
    Short([u8; 16]),
    Long(Box<str>),
}

impl CallId {
    fn short(id: &str) -> Option<[u8; 16]> {
        let mut bytes = [0u8; 16];
        bytes.get_mut(..id.len())?.copy_from_slice(id.as_bytes());
        if id.len() == 16 {
            return None;
        }
        bytes[15] = id.len() as u8;
        Some(bytes)
    }

    fn new(id: &str) -> CallId {
        CallId::short(id).map_or_else(|| CallId::Long(id.into()), CallId::Short)
    }

    fn is(&self, id: &str) -> bool {
        match self {
            CallId::Short(short) => CallId::short(id) == Some(*short),
            CallId::Long(long) => **long == *id,
        }
    }

    fn into_text(self) -> Box<str> {
        match self {
            CallId::Short(bytes) => {
                let text = std::str::from_utf8(&bytes[..usize::from(bytes[15])])
                    .expect("bug: a short call id holds the text it was made of");
                text.into()
            }
            CallId::Long(id) => id,
        }
    }
}

impl OpenCalls {
    /// A buffer holding `text`, a spare one when there is one.
    fn args_buffer(&mut self, text: &str) -> String {
        let mut buffer = self.spare.pop().unwrap_or_default();
        buffer.push_str(text);
        buffer
    }

    /// Keeps a call's arguments buffer, emptied, for a later call. Calls often open and
    /// close in waves of thousands (every agent calls, then every result comes back):
    /// spares are kept up to the most calls the trace has had open at once, so a wave
    /// of calls finds a buffer for each, and the spares never outnumber the buffers
    /// the trace already held at its peak.
    fn recycle(&mut self, mut buffer: String) {
        let keep = SPARE_BUFFERS.max(self.calls.len());
        if buffer.capacity() <= SPARE_BYTES && self.spare.len() < keep {
            buffer.clear();
            self.spare.push(buffer);
        }
    }

    /// Whether the call at `slot` has the id `id`, of hash `hash`.
    fn holds(
        calls: &[Option<(CallId, OpenCall)>],
        slot: &CallSlot,
        id: &str,
        hash: KeyHash,
    ) -> bool {
        slot.hash == hash.bits()
            && calls[slot.call as usize]
                .as_ref()
                .is_some_and(|(open, _)| open.is(id))
    }

    fn open(&mut self, id: Option<&str>, mut call: OpenCall) {
        call.order = self.seen;
        self.seen += 1;
        match id {
            Some(id) => {
                let hash = KeyHash::of(id.as_bytes());
                let calls = &self.calls;
                match self.by_id.entry(
                    hash.table(),
                    |slot| OpenCalls::holds(calls, slot, id, hash),
                    |slot| KeyHash::from_bits(slot.hash).table(),
                ) {
                    Entry::Occupied(_) => self.reused.push_back((id.into(), call)),
                    Entry::Vacant(vacant) => {
                        let open = Some((CallId::new(id), call));
                        let at = match self.free.pop() {
                            Some(at) => {
                                self.calls[at as usize] = open;
                                at
                            }
                            None => {
                                self.calls.push(open);
                                u32::try_from(self.calls.len() - 1)
                                    .expect("bug: more than 4 billion open calls")
                            }
                        };
                        vacant.insert(CallSlot {
                            hash: hash.bits(),
                            call: at,
                        });
                    }
                }
            }
            None => self
                .anonymous
                .entry(call.tool.clone())
                .or_default()
                .push_back(call),
        }
    }

    /// The call [`OpenCalls::close`] would close, left open.
    fn peek(&self, id: Option<&str>, tool: Option<&str>) -> Option<&OpenCall> {
        match id {
            Some(id) => {
                let hash = KeyHash::of(id.as_bytes());
                let slot = self.by_id.find(hash.table(), |slot| {
                    OpenCalls::holds(&self.calls, slot, id, hash)
                })?;
                self.calls[slot.call as usize]
                    .as_ref()
                    .map(|(_, call)| call)
            }
            None => {
                let tool: Option<Arc<str>> = tool.map(Into::into);
                self.anonymous.get(&tool)?.front()
            }
        }
    }

    fn close(&mut self, id: Option<&str>, tool: Option<&str>) -> Option<OpenCall> {
        match id {
            Some(id) => {
                let hash = KeyHash::of(id.as_bytes());
                let calls = &self.calls;
                let entry = self
                    .by_id
                    .find_entry(hash.table(), |slot| OpenCalls::holds(calls, slot, id, hash))
                    .ok()?;
                let (slot, _) = entry.remove();
                let place = &mut self.calls[slot.call as usize];
                let (key, call) = place.take().expect("bug: an open call's place is taken");
                match self.reused.iter().position(|(other, _)| &**other == id) {
                    Some(index) => {
                        let (_, next) = self.reused.remove(index).expect("index is in range");
                        *place = Some((key, next));
                        self.by_id.insert_unique(hash.table(), slot, |slot| {
                            KeyHash::from_bits(slot.hash).table()
                        });
                    }
                    None => self.free.push(slot.call),
                }
                Some(call)
            }
            None => {
                // Id-less calls are rare (legacy formats); the key is built per lookup.
                let tool: Option<Arc<str>> = tool.map(Into::into);
                let queue = self.anonymous.get_mut(&tool)?;
                let call = queue.pop_front();
                if queue.is_empty() {
                    self.anonymous.remove(&tool);
                }
                call
            }
        }
    }

    /// Every call still open with its id, in the order they were made.
    fn drain(&mut self) -> Vec<(Option<Box<str>>, OpenCall)> {
        self.by_id.clear();
        self.free.clear();
        let mut open: Vec<_> = self
            .calls
            .drain(..)
            .flatten()
            .map(|(id, call)| (Some(id.into_text()), call))
            .collect();
        open.extend(self.reused.drain(..).map(|(id, call)| (Some(id), call)));
        open.extend(
            self.anonymous
                .drain()
                .flat_map(|(_, calls)| calls.into_iter().map(|call| (None, call))),
        );
        open.sort_by_key(|(_, call)| call.order);
        open
    }
}

struct OpenCall {
    order: u64,
    /// The call's file, in a joined stream.
    file: Option<Arc<Path>>,
    /// Interned: a trace has few tools and many calls.
    tool: Option<Arc<str>>,
    /// The call's `args` as raw JSON text, which a result without its own inherits.
    args: Option<String>,
    loc: Location,
    /// The instance the call went to, in a spec whose key is read from `args` alone:
    /// its result, reading the same `args`, goes to the same instance.
    routed: Option<Routed>,
}

/// An instance of spec `spec` (by number in its trace's run of that spec).
#[derive(Clone, Copy)]
struct Routed {
    spec: usize,
    instance: usize,
}

impl Monitor<'static> {
    /// A monitor that holds its specs itself, sharing them with the caller: for a
    /// monitor that must live as long as it likes, such as one a runtime keeps per
    /// conversation.
    pub fn shared(
        specs: Arc<[Machine]>,
        file: Arc<Path>,
        trace_by: Option<Vec<Segment>>,
    ) -> Monitor<'static> {
        Monitor::with_specs(Specs::Shared(specs), file, trace_by)
    }
}

/// A record without the field `--trace-by` splits traces by.
#[derive(Debug, thiserror::Error)]
#[error("record has no `{path}` field to split traces by (--trace-by)")]
struct NoTraceField {
    path: crate::spec::ast::Path,
}

impl NoTraceField {
    fn at(path: &[Segment]) -> NoTraceField {
        NoTraceField {
            path: crate::spec::ast::Path {
                segments: path.to_vec(),
                span: Span::default(),
            },
        }
    }
}

impl<'s> Monitor<'s> {
    /// A monitor for one input named `file`, checking it against `specs`, with one
    /// trace per value of `trace_by` (the whole input when `None`).
    pub fn new(specs: &'s [Machine], file: Arc<Path>, trace_by: Option<Vec<Segment>>) -> Self {
        Monitor::with_specs(Specs::Borrowed(specs), file, trace_by)
    }

    fn with_specs(specs: Specs<'s>, file: Arc<Path>, trace_by: Option<Vec<Segment>>) -> Self {
        let keys = specs.iter().map(|_| KeyWatch::default()).collect();
        let sinks = specs.iter().map(instances::sinks).collect();
        let args_keyed = specs
            .iter()
            .map(|machine| {
                !machine.per.is_empty()
                    && machine.per.iter().all(|path| {
                        matches!(path.segments.first(), Some(Segment::Key(key)) if key == "args")
                    })
            })
            .collect();
        Monitor {
            observer: None,
            at_end: false,
            specs,
            file,
            trace_by,
            traces: Traces::default(),
            trace_index: FxHashMap::default(),
            diagnostics: Vec::new(),
            ended: Vec::new(),
            records: 0,
            synthesized: 0,
            provenance_limit: crate::eval::SEEN_LIMIT,
            matched: 0,
            matched_at_ends: 0,
            ambiguous_seen: Vec::new(),
            key: String::new(),
            tools: Default::default(),
            joined: false,
            keys,
            split: KeyWatch::default(),
            sinks,
            args_keyed,
        }
    }

    /// How many diagnostics the input has produced so far. [`Monitor::finish`] returns
    /// them first, in the same order, so the end-of-trace verdicts are those after
    /// this many.
    pub fn reported(&self) -> usize {
        self.diagnostics.len()
    }

    /// Takes the diagnostics reported so far, in order; [`Monitor::finish`] then
    /// returns only those reported after. For a caller that hands findings on as
    /// they come.
    pub fn take_reported(&mut self) -> Vec<Diagnostic> {
        std::mem::take(&mut self.diagnostics)
    }

    /// Records checked so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Records so far that matched an event of at least one spec.
    pub fn matched(&self) -> u64 {
        self.matched
    }

    /// Checks the next record of a stream joined from several files (see
    /// [`crate::trace::join`]); `file` is the record's own, and every report about it
    /// names that file.
    pub fn feed_from(&mut self, file: &Arc<Path>, record: Record<'_>) {
        self.joined = true;
        if !Arc::ptr_eq(&self.file, file) {
            self.file = file.clone();
        }
        self.feed(record);
    }

    /// Adds a finding about the input that was made outside the checker (a join's
    /// unplaceable records, say).
    pub fn report(&mut self, diagnostic: Diagnostic) {
        self.push(diagnostic);
    }

    /// Shows every move of every instance to `observer`.
    pub fn with_observer(mut self, observer: Observer<'s>) -> Self {
        self.observer = Some(observer);
        self
    }

    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    fn site(&self, trace: Option<&str>, loc: &Location) -> TraceSite {
        TraceSite {
            file: self.file.clone(),
            trace: trace.map(str::to_string),
            loc: loc.clone(),
        }
    }

    /// Records an input element that is not a usable record.
    pub fn malformed(&mut self, loc: Location, message: String) {
        let mut diagnostic = Diagnostic::new(Code::MalformedRecord, message);
        diagnostic.trace = Some(self.site(None, &loc));
        self.push(diagnostic);
    }

    /// Checks one record and returns the diagnostics it makes final now: a forbidden or
    /// unexpected move, an ambiguous match, a record that cannot be placed in a trace.
    /// An empty slice means the record was allowed. Verdicts that only the end of a
    /// trace can give come from [`Monitor::finish`], which also returns these again.
    pub fn feed(&mut self, mut record: Record<'_>) -> &[Diagnostic] {
        let before = self.diagnostics.len();
        self.check_record(&mut record);
        crate::trace::native::recycle(record.fields);
        &self.diagnostics[before..]
    }

    /// Whether feeding `record` next would be allowed, with the first diagnostic it would
    /// cause if not. Changes nothing: the same question may be asked again, and
    /// `allows(&r).is_allowed() == feed(r).is_empty()` for any record `r`.
    pub fn allows(&self, record: &Record<'_>) -> Allowance {
        let deny = |diagnostic: Diagnostic| Allowance {
            denial: Some(Box::new(diagnostic)),
        };
        let trace = match &self.trace_by {
            None => self.traces.first(),
            Some(path) => match trace_name(path, record) {
                Ok(name) => self
                    .trace_index
                    .get(&name)
                    .map(|&index| &self.traces[index]),
                Err(message) => {
                    let mut diagnostic =
                        Diagnostic::new(Code::MalformedRecord, message.to_string());
                    diagnostic.trace = Some(self.site(None, &record.loc));
                    return deny(diagnostic);
                }
            },
        };
        // A result is matched with the tool and args of the call it answers, as
        // `feed` would give them.
        let mut record = Cow::Borrowed(record);
        if record.kind == Some(Kind::Result) {
            let call = trace.and_then(|trace| {
                trace
                    .calls
                    .peek(record.call_id.as_deref(), record.tool.as_deref())
            });
            if let Some(call) = call {
                let (tool, args) = (call.tool.clone(), call.args.clone());
                let record = record.to_mut();
                if record.tool.is_none() {
                    record.tool = tool.map(|tool| Cow::Owned(tool.to_string()));
                }
                if !record.has_field("args") {
                    record.inherited_args = args.map(Cow::Owned);
                }
            }
        }
        let name = trace.and_then(|trace| trace.name.as_deref());
        let mut key = String::new();
        let seen = trace.and_then(|trace| trace.seen.as_deref());
        for (spec, machine) in self.specs.iter().enumerate() {
            // Which event the record is: the same for every instance, unless the spec's
            // guards read variables or provenance (then per instance, as `feed` does).
            let plain = (!machine.contextual).then(|| machine.first_two(&record));
            if let Some((first, second)) = plain {
                let Some(event) = first else {
                    continue;
                };
                if let Some(other) = second {
                    if self.ambiguous_seen.contains(&(spec, event, other)) {
                        continue;
                    }
                    return deny(self.ambiguous_diagnostic(spec, event, other, name, &record));
                }
            }
            let keyed = instance_key(machine, &record, &mut key);
            let run = trace.map(|trace| &trace.runs[spec]);
            // Existing instances by number; `None` for the one a new key would make.
            let instances: Vec<Option<usize>> = match run {
                Some(run) if keyed => vec![run.find(&key)],
                Some(run) => (0..run.len()).map(Some).collect(),
                None if keyed => vec![None],
                None => Vec::new(),
            };
            for instance in instances {
                let run = run.filter(|_| instance.is_some());
                if let (Some(run), Some(index)) = (run, instance) {
                    if run.stopped(index) {
                        continue;
                    }
                }
                // A new key's instance has every variable unset, as an empty slice does.
                let vars = match (run, instance) {
                    (Some(run), Some(index)) => run.vars(index),
                    _ => &[],
                };
                let event = match plain {
                    Some((first, _)) => first.expect("bug: a plain event was found above"),
                    None => {
                        let ctx = Context { vars, seen };
                        let (first, second) = machine.first_two_in(&record, &ctx);
                        let Some(event) = first else {
                            continue;
                        };
                        if let Some(other) = second {
                            if self.ambiguous_seen.contains(&(spec, event, other)) {
                                continue;
                            }
                            let ambiguous =
                                self.ambiguous_diagnostic(spec, event, other, name, &record);
                            return deny(ambiguous);
                        }
                        event
                    }
                };
                let state = match (run, instance) {
                    (Some(run), Some(index)) => run.state(index),
                    _ => machine.initial,
                };
                if let Some(kind) = verdict(machine, machine.step(state, event)) {
                    let found = match (run, instance) {
                        (Some(run), Some(index)) => run.found(machine, index, kind, Some(event)),
                        _ => Found {
                            kind,
                            key: (!machine.per.is_empty()).then(|| key.clone()),
                            state,
                            event: Some(event),
                            path: Vec::new(),
                            elided: 0,
                        },
                    };
                    return deny(self.violation(spec, name, &record.loc, found));
                }
            }
        }
        Allowance { denial: None }
    }

    fn check_record(&mut self, record: &mut Record<'_>) {
        let trace = match self.trace_of(record) {
            Ok(trace) => trace,
            Err(message) => {
                let mut diagnostic = Diagnostic::new(Code::MalformedRecord, message.to_string());
                diagnostic.trace = Some(self.site(None, &record.loc));
                if let Some(diagnostic) = self.split.missed(record, diagnostic) {
                    self.push(diagnostic);
                }
                return;
            }
        };
        if self.trace_by.is_some() {
            let held = self.split.carried();
            self.diagnostics.extend(held);
        }
        self.records += 1;
        let routed = match record.kind {
            Some(Kind::Result) => self.close_call(trace, record),
            _ => None,
        };
        let routed = self.dispatch(trace, record, routed);
        // Dispatch reads no open call, so the call is opened after it, knowing where
        // it went.
        if record.kind == Some(Kind::Call) {
            self.open_call(trace, record, routed);
        }
        if self.traces[trace].seen.is_some() {
            self.remember_and_warn(trace, record);
        }
        if let Some(Cow::Owned(args)) = record.inherited_args.take() {
            self.traces[trace].calls.recycle(args);
        }
    }

    /// Adds what `record` shows to the provenance index (see [`Monitor::remember`]); the
    /// first record of a trace that finds the index full gets the `provenance-limit`
    /// warning, as from then on `in outputs` and `in messages` may miss what it showed.
    fn remember_and_warn(&mut self, trace: usize, record: &Record<'_>) {
        let was_full = self.traces[trace].seen.as_deref().is_some_and(Seen::full);
        self.remember(trace, record);
        let full = self.traces[trace].seen.as_deref().is_some_and(Seen::full);
        if full && !was_full {
            let name = self.traces[trace].name.clone();
            let mut diagnostic = Diagnostic::new(
                Code::ProvenanceLimit,
                format!(
                    "the provenance index of this trace is full ({} distinct values): from this record on, values not seen before are not remembered, so `in outputs` and `in messages` do not find them and a condition that needs them is false",
                    self.provenance_limit
                ),
            );
            diagnostic.trace = Some(self.site(name.as_deref(), &record.loc));
            diagnostic.hint = Some(
                "raise the bound with `--provenance-limit N`, or split the input into smaller traces with `--trace-by`"
                    .into(),
            );
            self.push(diagnostic);
        }
    }

    /// Adds what `record` shows (a result's output, a message's text) to its trace's
    /// provenance index, after the record itself was checked: only later records may
    /// cite it.
    fn remember(&mut self, trace: usize, record: &Record<'_>) {
        let Some(seen) = self.traces[trace].seen.as_deref_mut() else {
            return;
        };
        match record.kind {
            Some(Kind::Result) => {
                let output = record.get(&[Segment::Key("output".into())]);
                if let Some(output) = output {
                    seen.add_output(record.tool.as_deref().unwrap_or(""), &output);
                }
            }
            Some(Kind::Message) => {
                let text = record.get(&[Segment::Key("text".into())]);
                let role = record.get(&[Segment::Key("role".into())]);
                if let Some(Value::String(text)) = text.as_deref() {
                    let role = role.as_deref().and_then(Value::as_str).unwrap_or("");
                    seen.add_message(role, text);
                }
            }
            _ => {}
        }
    }

    fn trace_of(&mut self, record: &Record<'_>) -> Result<usize, NoTraceField> {
        let Some(path) = &self.trace_by else {
            // The whole input is one trace.
            if self.traces.is_empty() {
                self.traces.push(self.new_trace(None));
            }
            return Ok(0);
        };
        // The name is looked up where it is in the record, and copied only for a new
        // trace.
        let known = with_trace_name(path, record, |name| {
            self.trace_index
                .get(name)
                .copied()
                .ok_or_else(|| name.to_string())
        });
        let name = match known {
            Some(Ok(index)) => return Ok(index),
            Some(Err(name)) => name,
            None => return Err(NoTraceField::at(path)),
        };
        let index = self.traces.len();
        self.trace_index.insert(name.clone(), index);
        self.traces.push(self.new_trace(Some(name)));
        Ok(index)
    }

    fn new_trace(&self, name: Option<String>) -> TraceState {
        TraceState {
            name,
            calls: OpenCalls::default(),
            runs: self.specs.iter().map(SpecRun::new).collect(),
            seen: self
                .specs
                .iter()
                .any(|spec| spec.provenance)
                .then(|| Box::new(Seen::with_limit(self.provenance_limit))),
            ended: false,
        }
    }

    fn intern(&mut self, tool: &str) -> Arc<str> {
        if let Some(interned) = self.tools.get(tool) {
            return interned.clone();
        }
        let interned: Arc<str> = Arc::from(tool);
        self.tools.insert(interned.clone());
        interned
    }

    fn open_call(&mut self, trace: usize, record: &Record<'_>, routed: Option<Routed>) {
        let tool = record.tool.as_deref().map(|tool| self.intern(tool));
        let file = self.joined.then(|| self.file.clone());
        let calls = &mut self.traces[trace].calls;
        let args = record
            .fields
            .raw_text("args")
            .map(|text| calls.args_buffer(&text));
        let call = OpenCall {
            order: 0,
            file,
            tool,
            args,
            loc: record.loc.clone(),
            routed,
        };
        calls.open(record.call_id.as_deref(), call);
    }

    /// Pairs a result with its call, and lets it inherit the call's tool and args.
    /// Returns where the call went when the result inherits its args, and so its key.
    fn close_call(&mut self, trace: usize, record: &mut Record<'_>) -> Option<Routed> {
        let calls = &mut self.traces[trace].calls;
        let call = calls.close(record.call_id.as_deref(), record.tool.as_deref())?;
        if record.tool.is_none() {
            record.tool = call.tool.map(|tool| Cow::Owned(tool.to_string()));
        }
        if record.has_field("args") {
            if let Some(args) = call.args {
                calls.recycle(args);
            }
            return None;
        }
        record.inherited_args = call.args.map(Cow::Owned);
        call.routed
    }

    /// Delivers `record` to the instances it goes to, in every spec. `routed` is the
    /// instance the record's key names, when already known (see [`OpenCall::routed`]);
    /// returns the instance it went to in the first spec keyed by `args` alone.
    fn dispatch(
        &mut self,
        trace: usize,
        record: &Record<'_>,
        routed: Option<Routed>,
    ) -> Option<Routed> {
        let mut matched = false;
        let mut went = None;
        for spec_index in 0..self.specs.len() {
            let machine = &self.specs[spec_index];
            if machine.contextual {
                self.dispatch_in_context(spec_index, trace, record);
                continue;
            }
            let (first, second) = machine.first_two(record);
            let Some(event) = first else {
                continue;
            };
            if !matched {
                matched = true;
                self.matched += 1;
            }
            if let Some(other) = second {
                self.ambiguous(spec_index, event, other, trace, record);
                continue;
            }
            let known = routed
                .filter(|routed| routed.spec == spec_index)
                .map(|routed| routed.instance);
            let keyed = known.is_some() || instance_key(machine, record, &mut self.key);
            if keyed && !machine.per.is_empty() && !self.keys[spec_index].carried {
                let held = self.keys[spec_index].carried();
                self.diagnostics.extend(held);
            }
            let run = &mut self.traces[trace].runs[spec_index];
            if !keyed && run.is_empty() {
                // No instance can take the record: it would be checked by nothing. (Once
                // instances exist and have all stopped, each has reported its violation.)
                let name = self.traces[trace].name.clone();
                let diagnostic = self.missing_key(spec_index, event, name.as_deref(), record);
                if let Some(diagnostic) = self.keys[spec_index].missed(record, diagnostic) {
                    self.push(diagnostic);
                }
                continue;
            }
            // Most records go to one instance and find nothing: no list is made for them.
            let mut found = None;
            let mut more = Vec::new();
            let sinks = &self.sinks[spec_index];
            if keyed {
                let index = match known {
                    Some(index) => index,
                    None => run.find_or_create(machine, sinks, &self.key, &record.loc),
                };
                if went.is_none() && self.args_keyed[spec_index] {
                    went = Some(Routed {
                        spec: spec_index,
                        instance: index,
                    });
                }
                let watch = (&mut self.observer, spec_index, trace, self.at_end);
                let file = self.joined.then_some(&self.file);
                found = run.deliver(machine, sinks, index, event, (record, file), None, watch);
            } else {
                // A record lacking the key concerns every live instance of its trace.
                for index in 0..run.len() {
                    let watch = (&mut self.observer, spec_index, trace, self.at_end);
                    let file = self.joined.then_some(&self.file);
                    more.extend(run.deliver(
                        machine,
                        sinks,
                        index,
                        event,
                        (record, file),
                        None,
                        watch,
                    ));
                }
            }
            if found.is_none() && more.is_empty() {
                continue;
            }
            for violation in found.into_iter().chain(more) {
                let name = self.traces[trace].name.clone();
                let diagnostic =
                    self.violation(spec_index, name.as_deref(), &record.loc, violation);
                self.push(diagnostic);
            }
        }
        went
    }

    /// `missing-key`: `record` is event `event` of spec `spec`, lacks the spec's `per`
    /// key, and no live instance of the spec in its trace can take it.
    fn missing_key(
        &self,
        spec: usize,
        event: EventId,
        trace: Option<&str>,
        record: &Record<'_>,
    ) -> Diagnostic {
        let machine = &self.specs[spec];
        let missing: Vec<String> = machine
            .per
            .iter()
            .filter(|path| record.lookup(&path.segments).is_none())
            .map(|path| format!("`{}`", path.text))
            .collect();
        let mut diagnostic = Diagnostic::new(
            Code::MissingKey,
            format!(
                "record is event `{}` of spec `{}` but has no {} (its `per` key), and no instance exists yet to take it: no instance checked it",
                machine.events[event].name,
                machine.name,
                missing.join(", ")
            ),
        );
        diagnostic.trace = Some(self.site(trace, &record.loc));
        diagnostic.spec = Some(SpecSite::new(
            &machine.name,
            &machine.source,
            per_span(machine),
        ));
        diagnostic.hint = Some(
            "every record of a keyed spec's events must carry its `per` key (a missing correlation id is a failure of the run); a record without it goes only to the instances already live"
                .into(),
        );
        diagnostic
    }

    /// At the end of the input: a `per` key or a `--trace-by` field that no record
    /// carried is one finding each, with the fields the records do carry, instead of
    /// one finding per record.
    fn never_carried(&mut self) {
        for spec in 0..self.specs.len() {
            let watch = std::mem::take(&mut self.keys[spec]);
            let Some(first) = watch.first.clone() else {
                continue;
            };
            let machine = &self.specs[spec];
            let paths: Vec<String> = machine
                .per
                .iter()
                .map(|p| format!("`{}`", p.text))
                .collect();
            let what = format!(
                "no record of the events of spec `{}` carries its `per` key {}",
                machine.name,
                paths.join(", ")
            );
            let mut diagnostic = Diagnostic::new(
                Code::MissingKey,
                format!(
                    "{what}: {} record(s) were checked by no instance",
                    watch.missed
                ),
            );
            diagnostic.same_in_every_file = Some(what);
            diagnostic.trace = Some(self.site(None, &first));
            diagnostic.spec = Some(SpecSite::new(
                &machine.name,
                &machine.source,
                per_span(machine),
            ));
            let names: Vec<&str> = machine.per.iter().map(|p| p.text.as_str()).collect();
            diagnostic.hint = Some(watch.hint(&names, "check the spelling of the `per` path"));
            self.push(diagnostic);
        }
        let watch = std::mem::take(&mut self.split);
        if let (Some(first), Some(path)) = (watch.first.clone(), &self.trace_by) {
            let path = crate::spec::ast::Path {
                segments: path.clone(),
                span: Span::default(),
            }
            .to_string();
            let what = format!("no record has a `{path}` field to split traces by (--trace-by)");
            let mut diagnostic = Diagnostic::new(
                Code::UsageError,
                format!("{what}: {} record(s) were not checked", watch.missed),
            );
            diagnostic.same_in_every_file = Some(what);
            diagnostic.trace = Some(self.site(None, &first));
            diagnostic.hint = Some(watch.hint(&[path.as_str()], "name a field the records have"));
            self.push(diagnostic);
        }
    }

    /// [`Monitor::dispatch`] for a spec whose guards read variables or provenance:
    /// which event the record is depends on the instance, so it is classified once per
    /// instance it reaches, with that instance's variables.
    fn dispatch_in_context(&mut self, spec_index: usize, trace: usize, record: &Record<'_>) {
        let machine = &self.specs[spec_index];
        let keyed = instance_key(machine, record, &mut self.key);
        if !machine.per.is_empty() {
            if keyed {
                let held = self.keys[spec_index].carried();
                self.diagnostics.extend(held);
            } else if self.traces[trace].runs[spec_index].is_empty() {
                self.unkeyed_in_context(spec_index, trace, record);
                return;
            }
        }
        let state = &mut self.traces[trace];
        let seen = state.seen.as_deref();
        let run = &mut state.runs[spec_index];
        let targets: Vec<Option<usize>> = if keyed {
            // A new key's instance exists only once an event concerns it.
            vec![run.find(&self.key)]
        } else {
            (0..run.len()).map(Some).collect()
        };
        let mut found = Vec::new();
        let mut ambiguous = Vec::new();
        for target in targets {
            // A new key's instance has every variable unset, as an empty slice does.
            let vars: &[Option<Val<'static>>] = match target {
                Some(index) if run.stopped(index) => continue,
                Some(index) => run.vars(index),
                None => &[],
            };
            let ctx = Context { vars, seen };
            let (first, second) = machine.first_two_in(record, &ctx);
            let Some(event) = first else {
                continue;
            };
            if let Some(other) = second {
                ambiguous.push((event, other));
                continue;
            }
            let sinks = &self.sinks[spec_index];
            let index = match target {
                Some(index) => index,
                None => run.create(machine, sinks, &self.key, &record.loc),
            };
            let watch = (&mut self.observer, spec_index, trace, self.at_end);
            let file = self.joined.then_some(&self.file);
            found.extend(run.deliver(machine, sinks, index, event, (record, file), seen, watch));
        }
        for (event, other) in ambiguous {
            self.ambiguous(spec_index, event, other, trace, record);
        }
        for violation in found {
            let name = self.traces[trace].name.clone();
            let diagnostic = self.violation(spec_index, name.as_deref(), &record.loc, violation);
            self.push(diagnostic);
        }
    }

    /// A record lacking the `per` key when the spec has no instance in the trace: if it
    /// is one of the spec's events for a new instance (every variable unset), it is the
    /// same `missing-key` finding as in [`Monitor::dispatch`].
    fn unkeyed_in_context(&mut self, spec_index: usize, trace: usize, record: &Record<'_>) {
        let machine = &self.specs[spec_index];
        let seen = self.traces[trace].seen.as_deref();
        let ctx = Context { vars: &[], seen };
        let Some(event) = machine.first_two_in(record, &ctx).0 else {
            return;
        };
        let name = self.traces[trace].name.clone();
        let diagnostic = self.missing_key(spec_index, event, name.as_deref(), record);
        if let Some(diagnostic) = self.keys[spec_index].missed(record, diagnostic) {
            self.push(diagnostic);
        }
    }

    fn ambiguous(
        &mut self,
        spec: usize,
        first: EventId,
        second: EventId,
        trace: usize,
        record: &Record<'_>,
    ) {
        if self.ambiguous_seen.contains(&(spec, first, second)) {
            return;
        }
        self.ambiguous_seen.push((spec, first, second));
        let name = self.traces[trace].name.as_deref();
        let diagnostic = self.ambiguous_diagnostic(spec, first, second, name, record);
        self.push(diagnostic);
    }

    fn ambiguous_diagnostic(
        &self,
        spec: usize,
        first: EventId,
        second: EventId,
        trace: Option<&str>,
        record: &Record<'_>,
    ) -> Diagnostic {
        let machine = &self.specs[spec];
        let (a, b) = (&machine.events[first], &machine.events[second]);
        let mut diagnostic = Diagnostic::new(
            Code::AmbiguousEvent,
            format!(
                "record matches both event `{}` and event `{}` of spec `{}` (later records in this file that do the same are not reported again)",
                a.name, b.name, machine.name
            ),
        );
        diagnostic.trace = Some(self.site(trace, &record.loc));
        diagnostic.spec = Some(SpecSite::new(&machine.name, &machine.source, a.span));
        diagnostic.related.push((
            SpecSite::new(&machine.name, &machine.source, b.span),
            "the other event".to_string(),
        ));
        diagnostic.hint = Some(
            "a record may match at most one event; make the patterns exclusive with `where`"
                .to_string(),
        );
        diagnostic
    }

    fn violation(
        &self,
        spec: usize,
        trace: Option<&str>,
        loc: &Location,
        found: Found,
    ) -> Diagnostic {
        let machine = &self.specs[spec];
        let state_name = |id: StateId| machine.state(id).name.clone();
        let (message, rule) = match found.kind {
            FoundKind::Forbidden(rule) => {
                let rule = &machine.forbids[rule];
                (rule.message.clone(), Some(rule.span))
            }
            FoundKind::Unexpected => (
                format!(
                    "event `{}` is not allowed in state `{}`",
                    machine.events[found.event.unwrap_or_default()].name,
                    machine.state(found.state).name
                ),
                machine
                    .otherwise_span
                    .or(Some(machine.state(found.state).span)),
            ),
            FoundKind::Unaccepted => (
                format!(
                    "the trace ended in state `{}`, which may not end a trace",
                    machine.state(found.state).name
                ),
                machine
                    .ending_span
                    .or(Some(machine.state(found.state).span)),
            ),
        };
        let code = match found.kind {
            FoundKind::Forbidden(_) => Code::ForbiddenTransition,
            FoundKind::Unexpected => Code::UnexpectedEvent,
            FoundKind::Unaccepted => Code::UnacceptedEnd,
        };
        let mut diagnostic = Diagnostic::new(code, message);
        diagnostic.trace = Some(self.site(trace, loc));
        diagnostic.spec = rule.map(|span| SpecSite::new(&machine.name, &machine.source, span));
        diagnostic.violation = Some(Box::new(ViolationDetail {
            key: found.key,
            state: state_name(found.state),
            event: found.event.map(|e| machine.events[e].name.clone()),
            allowed: machine
                .allowed(found.state)
                .into_iter()
                .map(|e| machine.events[e].name.clone())
                .collect(),
            path: found
                .path
                .into_iter()
                .map(|(state, event, line, file)| Step {
                    state: state_name(state),
                    event: machine.events[event].name.clone(),
                    line,
                    file,
                })
                .collect(),
            path_elided: found.elided,
        }));
        diagnostic
    }

    /// Ends every trace of the input: synthesizes `missing` results for unanswered
    /// calls, then reports instances that did not end in an accepting state. Traces
    /// that ended before the input (a run of a document of runs) report what they found
    /// then, in their place: the end of every trace comes after everything else, in the
    /// order the traces began.
    pub fn finish(mut self) -> Outcome {
        self.at_end = true;
        let mut ended = std::mem::take(&mut self.ended);
        // Traces end in the order they began, unless a trace was kept open longer.
        ended.sort_by_key(|(trace, _)| *trace);
        let mut ended = ended.into_iter().peekable();
        for trace in self.traces.dropped..self.traces.len() {
            if self.traces[trace].ended {
                continue;
            }
            while let Some((_, diagnostic)) = ended.next_if(|(before, _)| *before < trace) {
                self.push(diagnostic);
            }
            self.finish_trace(trace);
        }
        ended.for_each(|(_, diagnostic)| self.diagnostics.push(diagnostic));
        self.matched += self.matched_at_ends;
        self.never_carried();
        Outcome {
            diagnostics: self.diagnostics,
            records: self.records,
            synthesized: self.synthesized,
            traces: self.traces.len() as u64,
            matched: self.matched,
        }
    }

    /// Ends trace `trace`: synthesizes `missing` results for its unanswered calls, then
    /// reports its instances that are not in an accepting state.
    fn finish_trace(&mut self, trace: usize) {
        let open = self.traces[trace].calls.drain();
        for (call_id, call) in open {
            if let Some(file) = &call.file {
                self.file = file.clone();
            }
            let record = missing_result(call_id.as_deref(), &call);
            self.synthesized += 1;
            self.dispatch(trace, &record, call.routed);
        }

        let trace_name = self.traces[trace].name.clone();
        let mut found = Vec::new();
        for (spec, run) in self.traces[trace].runs.iter().enumerate() {
            let machine = &self.specs[spec];
            for index in 0..run.len() {
                if let Some((loc, file)) = run.unaccepted(machine, index) {
                    let violation = run.found(machine, index, FoundKind::Unaccepted, None);
                    found.push((spec, loc, file, violation));
                }
            }
        }
        for (spec, loc, file, violation) in found {
            if let Some(file) = file {
                self.file = file;
            }
            let diagnostic = self.violation(spec, trace_name.as_deref(), &loc, violation);
            self.push(diagnostic);
        }
    }

    /// Ends the trace named `name` before the input ends, when no record of it can
    /// follow (a run of a document of runs, each named after its place), and frees what
    /// it held: its end is checked as [`Monitor::finish`] would check it, and what that
    /// finds is held until `finish` reports it, in its place. A trace whose end could
    /// find something else now than at the end of the input (a `missing` result that
    /// would decide whether a `per` key no record carried yet is misspelt, or be an
    /// ambiguous record reported first) is left to `finish`.
    pub(crate) fn end_trace(&mut self, name: &str) {
        let Some(&trace) = self.trace_index.get(name) else {
            return;
        };
        if !self.ends_alone(trace) {
            return;
        }
        self.trace_index.remove(name);
        let (file, matched, before) = (self.file.clone(), self.matched, self.diagnostics.len());
        self.at_end = true;
        self.finish_trace(trace);
        self.at_end = false;
        self.file = file;
        self.matched_at_ends += self.matched - matched;
        self.matched = matched;
        let found = self.diagnostics.split_off(before);
        self.ended.extend(found.into_iter().map(|d| (trace, d)));
        self.traces.end(trace);
    }

    /// Whether trace `trace` would find the same at its end now as at the end of the
    /// input: what its `missing` results do touches nothing but the trace itself.
    fn ends_alone(&mut self, trace: usize) -> bool {
        let open = self.traces[trace].calls.drain();
        let alone = open.iter().all(|(call_id, call)| {
            let record = missing_result(call_id.as_deref(), call);
            (0..self.specs.len()).all(|spec| self.settled(spec, trace, &record))
        });
        let calls = &mut self.traces[trace].calls;
        for (call_id, call) in open {
            calls.open(call_id.as_deref(), call);
        }
        alone
    }

    /// Whether `record`, a `missing` result for trace `trace`, would do the same to
    /// spec `spec` now as at the end of the input. It would not if it were an
    /// ambiguous record of a pair not reported yet (a later record may be reported
    /// first), or if it carried or lacked the spec's `per` key while no record has
    /// carried it (a later one may: that decides how records lacking it are reported).
    fn settled(&self, spec: usize, trace: usize, record: &Record<'_>) -> bool {
        let machine = &self.specs[spec];
        let watched = !machine.per.is_empty() && !self.keys[spec].carried;
        let unreported = |pair: (Option<EventId>, Option<EventId>)| match pair {
            (Some(first), Some(second)) => !self.ambiguous_seen.contains(&(spec, first, second)),
            _ => false,
        };
        if !machine.contextual {
            let pair = machine.first_two(record);
            // One event of the spec: it either carries the key or lacks it.
            let touches_watch = watched && pair.0.is_some() && pair.1.is_none();
            return !(unreported(pair) || touches_watch);
        }
        let state = &self.traces[trace];
        let run = &state.runs[spec];
        if watched && (machine.key_of(record, &mut String::new()) || run.is_empty()) {
            return false;
        }
        // Every instance the record could reach, and a new one.
        let no_vars: &[Option<Val<'static>>] = &[];
        let mut contexts = (0..run.len())
            .filter(|&index| !run.stopped(index))
            .map(|index| run.vars(index))
            .chain([no_vars]);
        contexts.all(|vars| {
            let ctx = Context {
                vars,
                seen: state.seen.as_deref(),
            };
            !unreported(machine.first_two_in(record, &ctx))
        })
    }
}

/// The `missing` result of an unanswered call (with id `call_id`): what the checker
/// synthesizes at the end of its trace.
fn missing_result(call_id: Option<&str>, call: &OpenCall) -> Record<'static> {
    let mut fields = serde_json::Map::new();
    fields.insert("kind".into(), Value::String("result".into()));
    if let Some(tool) = &call.tool {
        fields.insert("tool".into(), Value::String(tool.to_string()));
    }
    if let Some(id) = call_id {
        fields.insert("call_id".into(), Value::String(id.into()));
    }
    fields.insert("status".into(), Value::String("missing".into()));
    let mut record = Record::new(Fields::Owned(fields), call.loc.clone())
        .expect("bug: a synthesized result is a valid record");
    debug_assert_eq!(record.status, Some(Status::Missing));
    record.inherited_args = call.args.clone().map(Cow::Owned);
    record
}

/// A violation found by an instance, before it is dressed as a diagnostic.
struct Found {
    kind: FoundKind,
    key: Option<String>,
    state: StateId,
    event: Option<EventId>,
    path: Vec<(StateId, EventId, u64, Option<Arc<Path>>)>,
    elided: u64,
}

enum FoundKind {
    Forbidden(usize),
    Unexpected,
    Unaccepted,
}

/// Writes into `key` the key of the instance of `machine` that `record` goes to: its
/// `per` key, or `""` for the one instance of a spec without one (not what another
/// spec left in the buffer). `false` when the record lacks the `per` key.
fn instance_key(machine: &Machine, record: &Record<'_>, key: &mut String) -> bool {
    if machine.per.is_empty() {
        key.clear();
        return true;
    }
    machine.key_of(record, key)
}

/// What a move means for its instance: `None` when the move is allowed.
fn verdict(machine: &Machine, step: Move) -> Option<FoundKind> {
    match step {
        Move::Go { .. } => None,
        Move::Forbidden(rule) => Some(FoundKind::Forbidden(rule)),
        Move::Unspecified => match machine.otherwise {
            Otherwise::Ignore => None,
            Otherwise::Reject => Some(FoundKind::Unexpected),
        },
    }
}

/// The name of the trace a record belongs to, when traces are split by `path`.
fn trace_name(path: &[Segment], record: &Record<'_>) -> Result<String, NoTraceField> {
    with_trace_name(path, record, str::to_string).ok_or_else(|| NoTraceField::at(path))
}

/// What `f` makes of the name of the trace `record` is in, with traces split by the
/// field at `path` (its text, or its JSON text when it is not a string); `None` when
/// the record lacks the field.
fn with_trace_name<T>(
    path: &[Segment],
    record: &Record<'_>,
    f: impl FnOnce(&str) -> T,
) -> Option<T> {
    let value = record.lookup(path)?;
    Some(match value.as_str() {
        Some(text) => f(&text),
        None => f(&value.to_value().map_or_else(String::new, |v| v.to_string())),
    })
}

/// Records that lacked a key (a spec's `per` key, or the `--trace-by` field), while no
/// record has carried it. Until one does, their findings are held: if none ever does,
/// the key is likely misspelt, and one finding says so instead of one per record.
#[derive(Default)]
struct KeyWatch {
    /// Whether a record has carried the key.
    carried: bool,
    /// Findings held while no record has carried the key.
    held: Vec<Diagnostic>,
    /// Records that lacked the key while none had carried it.
    missed: u64,
    /// The first of them.
    first: Option<Location>,
    /// Field paths those records carry (top-level and one level down), for did-you-mean.
    fields: std::collections::BTreeSet<String>,
}

/// The most findings held before a key is known to be carried; past this, records
/// that lack it are only counted.
const HELD: usize = 100_000;
/// How many records lacking a key give their field names for did-you-mean.
const SAMPLED: u64 = 64;

impl KeyWatch {
    /// A record carried the key: the findings held until now are to be reported.
    fn carried(&mut self) -> Vec<Diagnostic> {
        if self.carried {
            return Vec::new();
        }
        self.carried = true;
        self.first = None;
        self.fields.clear();
        std::mem::take(&mut self.held)
    }

    /// `record` lacked the key: its finding, to report now if the key has been
    /// carried already; otherwise it is held.
    fn missed(&mut self, record: &Record<'_>, diagnostic: Diagnostic) -> Option<Diagnostic> {
        if self.carried {
            return Some(diagnostic);
        }
        self.missed += 1;
        if self.first.is_none() {
            self.first = Some(record.loc.clone());
        }
        if self.missed <= SAMPLED {
            for name in record.fields.keys() {
                self.fields.insert(name.to_string());
                let value = record.get(&[Segment::Key(name.to_string())]);
                if let Some(Value::Object(map)) = value.as_deref() {
                    for inner in map.keys() {
                        self.fields.insert(format!("{name}.{inner}"));
                    }
                }
            }
        }
        if self.held.len() < HELD {
            self.held.push(diagnostic);
        }
        None
    }

    /// A hint for a key no record carried: did-you-mean for each of `paths`, or else
    /// `otherwise`, and the fields the records have.
    fn hint(&self, paths: &[&str], otherwise: &str) -> String {
        let close: Vec<String> = paths
            .iter()
            .filter_map(|path| {
                crate::suggest::did_you_mean(path, self.fields.iter().map(String::as_str))
            })
            .map(|close| format!("`{close}`"))
            .collect();
        let mut hint = if close.is_empty() {
            otherwise.to_string()
        } else {
            format!("did you mean {}", close.join(", "))
        };
        let fields: Vec<&str> = self.fields.iter().map(String::as_str).take(20).collect();
        if !fields.is_empty() {
            hint.push_str(&format!("; the records have: {}", fields.join(", ")));
        }
        hint
    }
}

/// Where a spec's `per` statement is, for pointing at it.
fn per_span(machine: &Machine) -> Span {
    let text = &machine.source.text;
    let start = if text.starts_with("per ") {
        Some(0)
    } else {
        text.find("\nper ").map(|at| at + 1)
    };
    match start {
        Some(start) => {
            let end = text[start..]
                .find('\n')
                .map_or(text.len(), |len| start + len);
            Span { start, end }
        }
        None => Span::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many findings from several files on several threads, more than the backlog:
    /// every one is handed on, in file order, each file's in the order it was found.
    #[test]
    fn findings_of_many_files_are_handed_on_in_file_order() {
        let (files, per_file) = (7, BACKLOG + BATCH + 3);
        let mut seen = Vec::new();
        in_file_order(
            files,
            Some(3),
            |index, report| {
                for n in 0..per_file {
                    let mut diagnostic =
                        Diagnostic::new(crate::diagnostic::Code::MalformedRecord, n.to_string());
                    diagnostic.hint = Some(index.to_string());
                    report.diagnostic(diagnostic);
                }
                index
            },
            |event| match event {
                Event::Diagnostic(index, diagnostic) => {
                    assert_eq!(diagnostic.hint, Some(index.to_string()));
                    seen.push((index, diagnostic.message.parse::<usize>().expect("a count")));
                }
                Event::Done(index, done) => assert_eq!(index, done),
                Event::Reading(_) | Event::Idle => {}
            },
        );
        let want: Vec<_> = (0..files)
            .flat_map(|file| (0..per_file).map(move |n| (file, n)))
            .collect();
        assert_eq!(seen, want);
    }

    /// A caller that stops taking events (it panicked) does not leave the checking
    /// threads waiting for room: the panic comes back instead of a hang.
    #[test]
    fn a_caller_that_panics_does_not_leave_checking_threads_waiting() {
        let ran = std::panic::catch_unwind(|| {
            in_file_order(
                4,
                Some(2),
                |_, report| {
                    for _ in 0..3 * BACKLOG {
                        report.diagnostic(Diagnostic::new(
                            crate::diagnostic::Code::MalformedRecord,
                            "x",
                        ));
                    }
                },
                |event| {
                    if matches!(event, Event::Diagnostic(..)) {
                        panic!("the writer failed");
                    }
                },
            )
        });
        assert!(ran.is_err());
    }

    fn call(line: u64, tool: &str) -> OpenCall {
        OpenCall {
            order: 0,
            file: None,
            tool: Some(Arc::from(tool)),
            args: None,
            loc: Location {
                line,
                ..Location::default()
            },
            routed: None,
        }
    }

    fn line(call: Option<OpenCall>) -> Option<u64> {
        call.map(|c| c.loc.line)
    }

    #[test]
    fn results_pair_by_id_then_by_position_per_tool() {
        let mut calls = OpenCalls::default();
        calls.open(Some("a"), call(1, "t"));
        calls.open(None, call(2, "u"));
        calls.open(None, call(3, "u"));
        calls.open(None, call(4, "v"));
        assert_eq!(line(calls.close(Some("a"), None)), Some(1));
        assert_eq!(line(calls.close(Some("a"), None)), None);
        // Id-less results take the oldest open call of their own tool.
        assert_eq!(line(calls.close(None, Some("v"))), Some(4));
        assert_eq!(line(calls.close(None, Some("u"))), Some(2));
        assert_eq!(line(calls.close(None, Some("w"))), None);
        let left: Vec<u64> = calls.drain().iter().map(|(_, c)| c.loc.line).collect();
        assert_eq!(left, [3]);
    }

    /// Checks `lines` against `spec`, returning the diagnostics' codes and lines, and
    /// every move the observer saw as (key, from, event, line).
    #[allow(clippy::type_complexity)]
    fn watched(
        spec: &str,
        lines: &[&str],
    ) -> (Vec<(Code, u64)>, Vec<(String, String, String, u64)>) {
        let source = Arc::new(crate::machine::SpecSource::new("t.tg", spec));
        let specs = vec![crate::spec::analyzer::load(source).expect("the spec compiles")];
        let moves = std::cell::RefCell::new(Vec::new());
        let machine = &specs[0];
        let mut monitor = Monitor::new(&specs, Arc::from(Path::new("t.jsonl")), None)
            .with_observer(Box::new(|seen: &Observation<'_>| {
                moves.borrow_mut().push((
                    seen.key.unwrap_or("-").to_string(),
                    machine.state(seen.from).name.clone(),
                    machine.events[seen.event].name.clone(),
                    seen.loc.line,
                ))
            }));
        for (at, line) in lines.iter().enumerate() {
            let loc = Location {
                line: at as u64 + 1,
                ..Location::default()
            };
            monitor.feed(crate::trace::native::decode_line(line, loc).expect("a record"));
        }
        let outcome = monitor.finish();
        let codes = outcome
            .diagnostics
            .iter()
            .map(|d| (d.code, d.trace.as_ref().map_or(0, |t| t.loc.line)))
            .collect();
        (codes, moves.into_inner())
    }

    #[test]
    fn finished_instances_still_take_their_keys_records() {
        // `done` is a sink; `stuck` is not accepting, so an instance there that was
        // stopped by a forbidden move must not be reported again at the end.
        let spec = "spec t\nper args.id\nevent open = call open\nevent shut = call shut\nevent note = call note\n\
            initial idle\naccept idle, done\notherwise ignore\n\
            idle -> done on shut\nidle -> stuck on open\ndone -> done on note\nforbid stuck on shut: \"no\"\n";
        let lines = [
            r#"{"kind":"call","tool":"shut","args":{"id":"a"}}"#,
            r#"{"kind":"call","tool":"open","args":{"id":"b"}}"#,
            r#"{"kind":"call","tool":"note","args":{"id":"a"}}"#,
            r#"{"kind":"call","tool":"shut","args":{"id":"b"}}"#,
            r#"{"kind":"call","tool":"open","args":{"id":"a"}}"#,
            r#"{"kind":"call","tool":"shut","args":{"id":"b"}}"#,
            r#"{"kind":"call","tool":"open","args":{"id":"c"}}"#,
            // Lacking the key: every instance but the stopped one sees it.
            r#"{"kind":"call","tool":"note"}"#,
        ];
        let (codes, moves) = watched(spec, &lines);
        assert_eq!(
            codes,
            [(Code::ForbiddenTransition, 4), (Code::UnacceptedEnd, 8)]
        );
        let moves: Vec<String> = moves
            .iter()
            .map(|(key, from, event, line)| format!("{key} {from} {event} {line}"))
            .collect();
        assert_eq!(
            moves,
            [
                "a idle shut 1",
                "b idle open 2",
                "a done note 3",
                "b stuck shut 4",
                "a done open 5",
                "c idle open 7",
                "a done note 8",
                "c stuck note 8",
            ]
        );
    }

    #[test]
    fn a_result_goes_to_its_calls_instance_unless_it_carries_its_own_args() {
        let spec = "spec t\nper args.id\nevent go = call go\nevent ok = result go\n\
            initial idle\naccept idle, done\nidle -> wait on go\nwait -> done on ok\n";
        let lines = [
            r#"{"kind":"call","tool":"go","call_id":"1","args":{"id":"a"}}"#,
            r#"{"kind":"call","tool":"go","call_id":"2","args":{"id":"b"}}"#,
            // Inherits `a` from its call.
            r#"{"kind":"result","tool":"go","call_id":"1"}"#,
            // Its own args name `c`, not its call's `b`.
            r#"{"kind":"result","tool":"go","call_id":"2","args":{"id":"c"}}"#,
            r#"{"kind":"call","tool":"go","call_id":"3","args":{"id":"d"}}"#,
        ];
        let (codes, moves) = watched(spec, &lines);
        let moves: Vec<String> = moves
            .iter()
            .map(|(key, from, event, line)| format!("{key} {from} {event} {line}"))
            .collect();
        assert_eq!(
            moves,
            [
                "a idle go 1",
                "b idle go 2",
                "a wait ok 3",
                "c idle ok 4",
                "d idle go 5",
                // The unanswered call's synthesized result goes to the call's instance.
                "d wait ok 5",
            ]
        );
        assert_eq!(
            codes,
            [(Code::UnexpectedEvent, 4), (Code::UnacceptedEnd, 2)]
        );
    }

    #[test]
    fn a_result_reads_its_own_calls_args_when_buffers_are_reused() {
        // The second call's arguments are copied into the buffer the first call's
        // held, which is longer: the second result must read only its call's.
        let spec = "spec t\nevent go = call go\n\
            event long = result go where args.id == \"long-id-aaaa\"\n\
            event short = result go where args.id == \"b\"\n\
            initial a\naccept e\na -> b on go\nb -> c on long\nc -> d on go\nd -> e on short\n";
        let lines = [
            r#"{"kind":"call","tool":"go","call_id":"1","args":{"id":"long-id-aaaa"}}"#,
            r#"{"kind":"result","tool":"go","call_id":"1"}"#,
            r#"{"kind":"call","tool":"go","call_id":"2","args":{"id":"b"}}"#,
            r#"{"kind":"result","tool":"go","call_id":"2"}"#,
        ];
        let (codes, moves) = watched(spec, &lines);
        let moves: Vec<String> = moves
            .iter()
            .map(|(_, from, event, line)| format!("{from} {event} {line}"))
            .collect();
        assert_eq!(moves, ["a go 1", "b long 2", "c go 3", "d short 4"]);
        assert!(codes.is_empty(), "{codes:?}");
    }

    #[test]
    fn a_spec_without_a_key_has_one_instance_beside_a_keyed_spec() {
        let load = |text: &str| {
            let source = Arc::new(crate::machine::SpecSource::new("t.tg", text));
            crate::spec::analyzer::load(source).expect("the spec compiles")
        };
        let keyed = "spec keyed\nper args.id\nevent x = call x\ninitial s\naccept s\ns -> s on x\n";
        let whole = "spec whole\nevent x = call x\ninitial a\naccept a\na -> b on x\nb -> a on x\n";
        let lines = [
            r#"{"kind":"call","tool":"x","args":{"id":"1"}}"#,
            r#"{"kind":"call","tool":"x","args":{"id":"2"}}"#,
        ];
        // Two moves of the one instance of `whole`, back to `a`: accepted, whether a
        // keyed spec is checked beside it or not.
        for specs in [vec![load(whole)], vec![load(keyed), load(whole)]] {
            let mut monitor = Monitor::new(&specs, Arc::from(Path::new("t.jsonl")), None);
            for (at, line) in lines.iter().enumerate() {
                let loc = Location {
                    line: at as u64 + 1,
                    ..Location::default()
                };
                monitor.feed(crate::trace::native::decode_line(line, loc).expect("a record"));
            }
            let codes: Vec<Code> = monitor
                .finish()
                .diagnostics
                .iter()
                .map(|d| d.code)
                .collect();
            assert_eq!(codes, [], "with {} spec(s)", specs.len());
        }
    }

    #[test]
    fn a_reused_id_is_answered_after_the_first() {
        let mut calls = OpenCalls::default();
        calls.open(Some("1"), call(1, "t"));
        calls.open(Some("1"), call(2, "t"));
        calls.open(Some("2"), call(3, "t"));
        assert_eq!(line(calls.close(Some("1"), None)), Some(1));
        // Both still-open calls come back in call order, with their ids.
        let left: Vec<(Option<String>, u64)> = calls
            .drain()
            .into_iter()
            .map(|(id, c)| (id.map(String::from), c.loc.line))
            .collect();
        assert_eq!(
            left,
            [(Some("1".to_string()), 2), (Some("2".to_string()), 3)]
        );
    }

    #[test]
    fn a_closed_calls_place_goes_to_the_next_call_and_drain_keeps_call_order() {
        let mut calls = OpenCalls::default();
        calls.open(Some("a"), call(1, "t"));
        calls.open(Some("a-long-id-of-more-than-15-bytes"), call(2, "t"));
        calls.open(Some("c"), call(3, "t"));
        assert_eq!(line(calls.close(Some("a"), None)), Some(1));
        calls.open(Some("d"), call(4, "t"));
        assert_eq!(calls.calls.len(), 3);
        assert_eq!(calls.peek(Some("d"), None).map(|c| c.loc.line), Some(4));
        assert_eq!(calls.peek(Some("a"), None).map(|c| c.loc.line), None);
        let left: Vec<(Option<String>, u64)> = calls
            .drain()
            .into_iter()
            .map(|(id, c)| (id.map(String::from), c.loc.line))
            .collect();
        let want = [
            (Some("a-long-id-of-more-than-15-bytes".to_string()), 2),
            (Some("c".to_string()), 3),
            (Some("d".to_string()), 4),
        ];
        assert_eq!(left, want);
        // A drained table takes calls again from scratch.
        calls.open(Some("a"), call(5, "t"));
        assert_eq!(line(calls.close(Some("a"), None)), Some(5));
    }

    /// A monitor of `spec`'s traces split by their `trace` field.
    fn by_trace(specs: &[Machine]) -> Monitor<'_> {
        let path = vec![Segment::Key("trace".into())];
        Monitor::new(specs, Arc::from(Path::new("t.jsonl")), Some(path))
    }

    fn feed_lines(monitor: &mut Monitor<'_>, first_line: u64, lines: &[&str]) {
        for (at, line) in lines.iter().enumerate() {
            let loc = Location {
                line: first_line + at as u64,
                ..Location::default()
            };
            monitor.feed(crate::trace::native::decode_line(line, loc).expect("a record"));
        }
    }

    #[test]
    fn a_trace_that_ends_is_freed_and_reports_its_end_in_its_place() {
        let source = Arc::new(crate::machine::SpecSource::new(
            "t.tg",
            "spec t\nper args.id\nevent open = call open\nevent shut = result open where status == \"ok\"\n\
                event lost = result open where status == \"missing\"\nevent note = call note\n\
                initial idle\naccept idle, done\nidle -> open on open\nopen -> done on shut\n\
                forbid open on lost: \"lost\"\n",
        ));
        let specs = vec![crate::spec::analyzer::load(source).expect("the spec compiles")];
        let a = [
            r#"{"kind":"call","tool":"open","call_id":"1","args":{"id":"x"},"trace":"a"}"#,
            r#"{"kind":"call","tool":"open","call_id":"2","args":{"id":"y"},"trace":"a"}"#,
            r#"{"kind":"result","tool":"open","call_id":"2","status":"ok","trace":"a"}"#,
        ];
        let b = [
            r#"{"kind":"call","tool":"open","call_id":"1","args":{"id":"x"},"trace":"b"}"#,
            // Unexpected in `idle`: reported as it is read, before the end of `a`.
            r#"{"kind":"call","tool":"note","args":{"id":"z"},"trace":"b"}"#,
            // An answer that is no event: `x` ends in `open`. (The `note` call gets a
            // `missing` result, which is no event either.)
            r#"{"kind":"result","tool":"open","call_id":"1","status":"error","trace":"b"}"#,
        ];
        let mut ending = by_trace(&specs);
        feed_lines(&mut ending, 1, &a);
        assert_eq!(ending.traces.kept[0].runs[0].len(), 2);
        ending.end_trace("a");
        // Nothing of `a` is kept but what its end found, held for `finish`.
        assert_eq!((ending.traces.dropped, ending.traces.kept.len()), (1, 0));
        assert!(ending.trace_index.is_empty());
        assert_eq!(
            (ending.synthesized, ending.matched, ending.ended.len()),
            (1, 3, 1)
        );
        assert!(ending.diagnostics.is_empty());
        feed_lines(&mut ending, 4, &b);
        assert_eq!(ending.diagnostics.len(), 1);
        ending.end_trace("b");
        assert_eq!((ending.traces.dropped, ending.traces.kept.len()), (2, 0));
        let ended = ending.finish();

        let mut whole = by_trace(&specs);
        feed_lines(&mut whole, 1, &a);
        feed_lines(&mut whole, 4, &b);
        let whole = whole.finish();
        let lines = |outcome: &Outcome| -> Vec<(Code, u64)> {
            let site = |d: &Diagnostic| d.trace.as_ref().map_or(0, |t| t.loc.line);
            outcome
                .diagnostics
                .iter()
                .map(|d| (d.code, site(d)))
                .collect()
        };
        assert_eq!(
            lines(&whole),
            [
                (Code::UnexpectedEvent, 5),
                (Code::ForbiddenTransition, 1),
                (Code::UnacceptedEnd, 4)
            ]
        );
        assert_eq!(lines(&ended), lines(&whole));
        let counts = |o: &Outcome| (o.records, o.synthesized, o.traces, o.matched);
        assert_eq!(counts(&ended), counts(&whole));
        assert_eq!(counts(&ended), (6, 2, 2, 6));
    }

    #[test]
    fn a_trace_whose_end_would_tell_of_a_key_no_record_carried_yet_waits() {
        let source = Arc::new(crate::machine::SpecSource::new(
            "t.tg",
            "spec t\nper args.key\nevent lost = result open where status == \"missing\"\n\
                initial idle\nidle -> idle on lost\n",
        ));
        let specs = vec![crate::spec::analyzer::load(source).expect("the spec compiles")];
        let mut monitor = by_trace(&specs);
        let a = [r#"{"kind":"call","tool":"open","call_id":"1","args":{"id":"x"},"trace":"a"}"#];
        feed_lines(&mut monitor, 1, &a);
        monitor.end_trace("a");
        // Its `missing` result lacks the key: whether that is one `missing-key` of many
        // records or a finding of its own depends on records still to come.
        assert_eq!((monitor.traces.dropped, monitor.traces.kept.len()), (0, 1));
        assert_eq!(monitor.trace_index.len(), 1);
        let outcome = monitor.finish();
        assert_eq!(outcome.synthesized, 1);
        let codes: Vec<Code> = outcome.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, [Code::MissingKey]);
    }
}
