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

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use crate::diagnostic::{Code, Diagnostic, PATH_LIMIT, SpecSite, Step, TraceSite, ViolationDetail};
use crate::eval::{Context, Seen, Val};
use crate::json::Segment;
use crate::machine::Otherwise;
use crate::machine::{EventId, Machine, Move, StateId};
use crate::source::Span;
use crate::trace::adapters::{Detected, InputOptions, ProblemKind};
use crate::trace::input::{Item, TraceInput};
use crate::trace::{Fields, Kind, Location, Record, Status};

/// How traces are read and split.
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// Split each input into one trace per value of this path (e.g. `case`).
    pub trace_by: Option<Vec<Segment>>,
    /// Lines longer than this are reported, not read; `None` for the default.
    pub max_line_bytes: Option<usize>,
}

/// What checking one input produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Violations and input problems, in the order they were found.
    pub diagnostics: Vec<Diagnostic>,
    /// Records read (malformed lines are diagnostics, not records).
    pub records: u64,
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
    /// Whether the record is a `missing` result synthesized when the input ended.
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
    // A file of many transcripts: one trace each, by the `trace` field the adapters
    // gave every record, unless the user split traces their own way.
    let trace_by = options
        .trace_by
        .clone()
        .or_else(|| (input.traces() > 1).then(|| vec![Segment::Key("trace".into())]));
    let mut monitor = Monitor::new(specs, file.clone(), trace_by);
    monitor.observer = observer;
    // Problems of the file as a whole come first; a malformed element is reported in
    // its place among the records.
    let mut file_level = Vec::new();
    input.for_each(|item| match item {
        Item::Record(record) => {
            monitor.feed(record);
        }
        Item::Problem(problem) => match problem.kind {
            ProblemKind::Malformed if problem.hint.is_none() => {
                monitor.malformed(problem.loc, problem.message)
            }
            _ => file_level.push(Diagnostic::from_problem(&file, problem)),
        },
        Item::Stopped(err) => monitor.push(Diagnostic::unreadable(&file, &err)),
    });
    let mut outcome = monitor.finish();
    file_level.append(&mut outcome.diagnostics);
    outcome.diagnostics = file_level;
    outcome
}

/// What checking one file gave, and what was recognized in it (`None` when the file
/// could not be read).
#[derive(Debug)]
pub struct Checked {
    /// The checker's verdicts and counts.
    pub outcome: Outcome,
    /// The file's format and layout, as detected or given.
    pub detected: Option<Detected>,
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
    match TraceInput::open(path, input, options.max_line_bytes) {
        Ok(opened) => {
            let detected = opened.detected().clone();
            let file: Arc<Path> = Arc::from(path);
            let stream = opened.stream_text();
            let mut outcome = check_input(specs, file.clone(), opened, options, observer);
            if let Some(text) = stream {
                crate::diagnostic::render::keep_record_text(
                    &mut outcome.diagnostics,
                    text.as_ref(),
                );
            }
            // Records without `kind` or `tool` are fine when specs match them with
            // `record` patterns; the warning is for a file no spec saw anything in.
            if let (Some(warning), 0) = (detected.warning.clone(), outcome.matched) {
                let warning = Diagnostic::from_problem(&file, warning);
                outcome.diagnostics.insert(0, warning);
            }
            Checked {
                outcome,
                detected: Some(detected),
            }
        }
        Err(err) => Checked {
            outcome: Outcome {
                diagnostics: vec![Diagnostic::unreadable(path, &err)],
                ..Outcome::default()
            },
            detected: None,
        },
    }
}

/// Checks many files, in parallel, returning their results in input order.
pub fn check_paths<P: AsRef<Path> + Sync>(
    specs: &[Machine],
    paths: &[P],
    options: &CheckOptions,
    input: &InputOptions,
) -> Vec<Checked> {
    use rayon::prelude::*;
    paths
        .par_iter()
        .map(|path| check_path(specs, path.as_ref(), options, input))
        .collect()
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
    traces: Vec<TraceState>,
    trace_index: FxHashMap<String, usize>,
    diagnostics: Vec<Diagnostic>,
    records: u64,
    /// Records that matched an event of at least one spec.
    matched: u64,
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

struct TraceState {
    name: Option<String>,
    calls: OpenCalls,
    runs: Vec<SpecRun>,
    /// The values this trace's outputs and messages have shown, when a spec tests
    /// provenance (`None` otherwise, so other specs pay nothing for it).
    seen: Option<Box<Seen>>,
}

/// The calls of one trace still waiting for their result.
#[derive(Default)]
struct OpenCalls {
    /// Calls with an id, by id. Ids are unique while open in every format we read.
    by_id: FxHashMap<Box<str>, OpenCall>,
    /// A call whose id was already open (a reused id); answered after the first.
    reused: VecDeque<(Box<str>, OpenCall)>,
    /// Calls without an id, per tool: they pair with the next result for that tool.
    anonymous: FxHashMap<Option<Arc<str>>, VecDeque<OpenCall>>,
    seen: u64,
}

impl OpenCalls {
    fn open(&mut self, id: Option<&str>, mut call: OpenCall) {
        call.order = self.seen;
        self.seen += 1;
        match id {
            Some(id) if self.by_id.contains_key(id) => self.reused.push_back((id.into(), call)),
            Some(id) => {
                // The id is kept once, as the key, and given back by `drain`.
                self.by_id.insert(id.into(), call);
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
            Some(id) => self.by_id.get(id),
            None => {
                let tool: Option<Arc<str>> = tool.map(Into::into);
                self.anonymous.get(&tool)?.front()
            }
        }
    }

    fn close(&mut self, id: Option<&str>, tool: Option<&str>) -> Option<OpenCall> {
        match id {
            Some(id) => {
                let call = self.by_id.remove(id)?;
                if let Some(index) = self.reused.iter().position(|(other, _)| &**other == id) {
                    let (other, next) = self.reused.remove(index).expect("index is in range");
                    self.by_id.insert(other, next);
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
        let mut open: Vec<_> = self
            .by_id
            .drain()
            .map(|(id, call)| (Some(id), call))
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
    args: Option<Arc<str>>,
    loc: Location,
}

/// One spec's instances within one trace.
#[derive(Default)]
struct SpecRun {
    by_key: FxHashMap<Box<str>, usize>,
    instances: Vec<Instance>,
}

struct Instance {
    key: Option<Box<str>>,
    state: StateId,
    stopped: bool,
    /// Moves: from state, on event, at line (of the file, in a joined stream).
    path: VecDeque<(StateId, EventId, u64, Option<Arc<Path>>)>,
    elided: u64,
    /// The last event delivered to the instance, where an unaccepted end is reported.
    last: Location,
    /// The file of `last`, in a joined stream.
    last_file: Option<Arc<Path>>,
    /// The instance's variables, by slot (empty, and unallocated, when the spec binds
    /// none: instances are many, so this costs a spec without variables no memory).
    vars: Box<[Option<Val<'static>>]>,
}

impl Instance {
    fn new(machine: &Machine, key: Option<Box<str>>, loc: &Location) -> Instance {
        Instance {
            key,
            state: machine.initial,
            stopped: false,
            path: VecDeque::new(),
            elided: 0,
            last: loc.clone(),
            last_file: None,
            vars: vec![None; machine.variables.len()].into_boxed_slice(),
        }
    }
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

impl<'s> Monitor<'s> {
    /// A monitor for one input named `file`, checking it against `specs`, with one
    /// trace per value of `trace_by` (the whole input when `None`).
    pub fn new(specs: &'s [Machine], file: Arc<Path>, trace_by: Option<Vec<Segment>>) -> Self {
        Monitor::with_specs(Specs::Borrowed(specs), file, trace_by)
    }

    fn with_specs(specs: Specs<'s>, file: Arc<Path>, trace_by: Option<Vec<Segment>>) -> Self {
        let keys = specs.iter().map(|_| KeyWatch::default()).collect();
        Monitor {
            observer: None,
            at_end: false,
            specs,
            file,
            trace_by,
            traces: Vec::new(),
            trace_index: FxHashMap::default(),
            diagnostics: Vec::new(),
            records: 0,
            matched: 0,
            ambiguous_seen: Vec::new(),
            key: String::new(),
            tools: Default::default(),
            joined: false,
            keys,
            split: KeyWatch::default(),
        }
    }

    /// How many diagnostics the input has produced so far. [`Monitor::finish`] returns
    /// them first, in the same order, so the end-of-trace verdicts are those after
    /// this many.
    pub fn reported(&self) -> usize {
        self.diagnostics.len()
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
    pub fn feed(&mut self, record: Record<'_>) -> &[Diagnostic] {
        let before = self.diagnostics.len();
        self.check_record(record);
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
                    record.inherited_args = args;
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
            let keyed = machine.per.is_empty() || machine.key_of(&record, &mut key);
            let run = trace.map(|trace| &trace.runs[spec]);
            let fresh;
            let instances: Vec<&Instance> = if keyed {
                match run.and_then(|run| run.by_key.get(key.as_str())) {
                    Some(&index) => vec![&run.expect("an index implies a run").instances[index]],
                    None => {
                        let key = (!machine.per.is_empty()).then(|| key.as_str().into());
                        fresh = Instance::new(machine, key, &record.loc);
                        vec![&fresh]
                    }
                }
            } else {
                run.map(|run| run.instances.iter().collect())
                    .unwrap_or_default()
            };
            for instance in instances {
                if instance.stopped {
                    continue;
                }
                let event = match plain {
                    Some((first, _)) => first.expect("bug: a plain event was found above"),
                    None => {
                        let ctx = Context {
                            vars: &instance.vars,
                            seen,
                        };
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
                if let Some(kind) = verdict(machine, machine.step(instance.state, event)) {
                    let found = Found {
                        kind,
                        key: instance.key.as_deref().map(str::to_string),
                        state: instance.state,
                        event: Some(event),
                        path: instance.path.iter().cloned().collect(),
                        elided: instance.elided,
                    };
                    return deny(self.violation(spec, name, &record.loc, found));
                }
            }
        }
        Allowance { denial: None }
    }

    fn check_record(&mut self, mut record: Record<'_>) {
        let trace = match self.trace_of(&record) {
            Ok(trace) => trace,
            Err(message) => {
                let mut diagnostic = Diagnostic::new(Code::MalformedRecord, message.to_string());
                diagnostic.trace = Some(self.site(None, &record.loc));
                if let Some(diagnostic) = self.split.missed(&record, diagnostic) {
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
        match record.kind {
            Some(Kind::Call) => self.open_call(trace, &record),
            Some(Kind::Result) => self.close_call(trace, &mut record),
            _ => {}
        }
        self.dispatch(trace, &record);
        if self.traces[trace].seen.is_some() {
            self.remember(trace, &record);
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
        let name = trace_name(path, record)?;
        if let Some(&index) = self.trace_index.get(&name) {
            return Ok(index);
        }
        let index = self.traces.len();
        self.trace_index.insert(name.clone(), index);
        self.traces.push(self.new_trace(Some(name)));
        Ok(index)
    }

    fn new_trace(&self, name: Option<String>) -> TraceState {
        TraceState {
            name,
            calls: OpenCalls::default(),
            runs: self.specs.iter().map(|_| SpecRun::default()).collect(),
            seen: self
                .specs
                .iter()
                .any(|spec| spec.provenance)
                .then(Box::default),
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

    fn open_call(&mut self, trace: usize, record: &Record<'_>) {
        let tool = record.tool.as_deref().map(|tool| self.intern(tool));
        let call = OpenCall {
            order: 0,
            file: self.joined.then(|| self.file.clone()),
            tool,
            args: record
                .fields
                .raw_text("args")
                .map(|text| Arc::from(text.as_ref())),
            loc: record.loc.clone(),
        };
        self.traces[trace]
            .calls
            .open(record.call_id.as_deref(), call);
    }

    /// Pairs a result with its call, and lets it inherit the call's tool and args.
    fn close_call(&mut self, trace: usize, record: &mut Record<'_>) {
        let calls = &mut self.traces[trace].calls;
        let Some(call) = calls.close(record.call_id.as_deref(), record.tool.as_deref()) else {
            return;
        };
        if record.tool.is_none() {
            record.tool = call.tool.map(|tool| Cow::Owned(tool.to_string()));
        }
        if !record.has_field("args") {
            record.inherited_args = call.args;
        }
    }

    fn dispatch(&mut self, trace: usize, record: &Record<'_>) {
        let mut matched = false;
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
            let keyed = machine.per.is_empty() || machine.key_of(record, &mut self.key);
            if keyed && !machine.per.is_empty() {
                let held = self.keys[spec_index].carried();
                self.diagnostics.extend(held);
            }
            let run = &mut self.traces[trace].runs[spec_index];
            if !keyed && run.instances.is_empty() {
                // No instance can take the record: it would be checked by nothing. (Once
                // instances exist and have all stopped, each has reported its violation.)
                let name = self.traces[trace].name.clone();
                let diagnostic = self.missing_key(spec_index, event, name.as_deref(), record);
                if let Some(diagnostic) = self.keys[spec_index].missed(record, diagnostic) {
                    self.push(diagnostic);
                }
                continue;
            }
            let mut found = Vec::new();
            if keyed {
                let index = match run.by_key.get(self.key.as_str()) {
                    Some(&index) => index,
                    None => {
                        let index = run.instances.len();
                        let key = (!machine.per.is_empty()).then(|| self.key.as_str().into());
                        run.instances.push(Instance::new(machine, key, &record.loc));
                        run.by_key.insert(self.key.as_str().into(), index);
                        index
                    }
                };
                let watch = (&mut self.observer, spec_index, trace, self.at_end);
                let file = self.joined.then_some(&self.file);
                found.extend(deliver(
                    machine,
                    &mut run.instances[index],
                    event,
                    (record, file),
                    None,
                    watch,
                ));
            } else {
                // A record lacking the key concerns every live instance of its trace.
                for instance in &mut run.instances {
                    let watch = (&mut self.observer, spec_index, trace, self.at_end);
                    let file = self.joined.then_some(&self.file);
                    found.extend(deliver(
                        machine,
                        instance,
                        event,
                        (record, file),
                        None,
                        watch,
                    ));
                }
            }
            for violation in found {
                let name = self.traces[trace].name.clone();
                let diagnostic =
                    self.violation(spec_index, name.as_deref(), &record.loc, violation);
                self.push(diagnostic);
            }
        }
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
            let mut diagnostic = Diagnostic::new(
                Code::MissingKey,
                format!(
                    "no record of the events of spec `{}` carries its `per` key {}: {} record(s) were checked by no instance",
                    machine.name,
                    paths.join(", "),
                    watch.missed
                ),
            );
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
            let mut diagnostic = Diagnostic::new(
                Code::UsageError,
                format!(
                    "no record has a `{path}` field to split traces by (--trace-by): {} record(s) were not checked",
                    watch.missed
                ),
            );
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
        let keyed = machine.per.is_empty() || machine.key_of(record, &mut self.key);
        let state = &mut self.traces[trace];
        let seen = state.seen.as_deref();
        let run = &mut state.runs[spec_index];
        let targets: Vec<Option<usize>> = if keyed {
            // A new key's instance exists only once an event concerns it.
            vec![run.by_key.get(self.key.as_str()).copied()]
        } else {
            (0..run.instances.len()).map(Some).collect()
        };
        let mut found = Vec::new();
        let mut ambiguous = Vec::new();
        for target in targets {
            // A new key's instance has every variable unset, as an empty slice does.
            let vars: &[Option<Val<'static>>] = match target {
                Some(index) if run.instances[index].stopped => continue,
                Some(index) => &run.instances[index].vars,
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
            let index = match target {
                Some(index) => index,
                None => {
                    let index = run.instances.len();
                    let key = (!machine.per.is_empty()).then(|| self.key.as_str().into());
                    run.instances.push(Instance::new(machine, key, &record.loc));
                    run.by_key.insert(self.key.as_str().into(), index);
                    index
                }
            };
            let watch = (&mut self.observer, spec_index, trace, self.at_end);
            let instance = &mut run.instances[index];
            let file = self.joined.then_some(&self.file);
            found.extend(deliver(
                machine,
                instance,
                event,
                (record, file),
                seen,
                watch,
            ));
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
    /// calls, then reports instances that did not end in an accepting state.
    pub fn finish(mut self) -> Outcome {
        self.at_end = true;
        for trace in 0..self.traces.len() {
            let open = self.traces[trace].calls.drain();
            for (call_id, call) in open {
                let mut fields = serde_json::Map::new();
                fields.insert("kind".into(), Value::String("result".into()));
                if let Some(tool) = call.tool {
                    fields.insert("tool".into(), Value::String(tool.to_string()));
                }
                if let Some(id) = call_id {
                    fields.insert("call_id".into(), Value::String(id.into()));
                }
                fields.insert("status".into(), Value::String("missing".into()));
                if let Some(file) = call.file {
                    self.file = file;
                }
                let mut record = Record::new(Fields::Owned(fields), call.loc)
                    .expect("bug: a synthesized result is a valid record");
                debug_assert_eq!(record.status, Some(Status::Missing));
                record.inherited_args = call.args;
                self.dispatch(trace, &record);
            }

            let trace_name = self.traces[trace].name.clone();
            let mut found = Vec::new();
            for (spec, run) in self.traces[trace].runs.iter_mut().enumerate() {
                let machine = &self.specs[spec];
                for instance in &mut run.instances {
                    if !instance.stopped && !machine.state(instance.state).accepting {
                        let loc = instance.last.clone();
                        let file = instance.last_file.clone();
                        let violation = instance.found(FoundKind::Unaccepted, None);
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
        self.never_carried();
        Outcome {
            diagnostics: self.diagnostics,
            records: self.records,
            traces: self.traces.len() as u64,
            matched: self.matched,
        }
    }
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

impl Instance {
    fn found(&mut self, kind: FoundKind, event: Option<EventId>) -> Found {
        self.stopped = true;
        Found {
            kind,
            key: self.key.as_deref().map(str::to_string),
            state: self.state,
            event,
            // The instance reports once, so its history can go.
            path: std::mem::take(&mut self.path).into(),
            elided: self.elided,
        }
    }
}

/// Moves an instance on one event; returns the violation, if the move is one. An
/// allowed move sets the event's `bind` variables (evaluated together, on the values
/// from before the move); any other move binds nothing.
fn deliver(
    machine: &Machine,
    instance: &mut Instance,
    event: EventId,
    (record, file): (&Record<'_>, Option<&Arc<Path>>),
    seen: Option<&Seen>,
    (observer, spec, trace, at_end): (&mut Option<Observer<'_>>, usize, usize, bool),
) -> Option<Found> {
    let loc = &record.loc;
    if instance.stopped {
        return None;
    }
    if let Some(observe) = observer {
        observe(&Observation {
            spec,
            trace,
            key: instance.key.as_deref(),
            from: instance.state,
            event,
            step: machine.step(instance.state, event),
            loc,
            at_end,
        });
    }
    instance.last = loc.clone();
    if let Some(file) = file {
        instance.last_file = Some(file.clone());
    }
    let step = machine.step(instance.state, event);
    if let Move::Go { to, .. } = step {
        if instance.path.len() == PATH_LIMIT {
            instance.path.pop_front();
            instance.elided += 1;
        }
        instance
            .path
            .push_back((instance.state, event, loc.line, file.cloned()));
        instance.state = to;
        let binds = &machine.events[event].binds;
        if !binds.is_empty() {
            let ctx = Context {
                vars: &instance.vars,
                seen,
            };
            // All binds of the event read the values from before the move; a value
            // that is missing or invalid leaves the variable unset.
            let values: Vec<(usize, Option<Val<'static>>)> = binds
                .iter()
                .map(|(slot, value)| {
                    let value = value.eval(record, &ctx).ok().flatten();
                    (*slot, value.map(Val::into_owned))
                })
                .collect();
            for (slot, value) in values {
                instance.vars[slot] = value;
            }
        }
        return None;
    }
    verdict(machine, step).map(|kind| instance.found(kind, Some(event)))
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
    let value = record.lookup(path).ok_or_else(|| NoTraceField {
        path: crate::spec::ast::Path {
            segments: path.to_vec(),
            span: Span::default(),
        },
    })?;
    Ok(match value.as_str() {
        Some(text) => text.into_owned(),
        None => value.to_value().map_or_else(String::new, |v| v.to_string()),
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
}
