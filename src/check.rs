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
        Item::Record(record) => monitor.feed(record),
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
            let mut outcome = check_input(specs, file.clone(), opened, options, observer);
            if let Some(warning) = detected.warning.clone() {
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
pub struct Monitor<'s> {
    /// `None` unless someone watches; then it sees every move.
    observer: Option<Observer<'s>>,
    /// Set once the input has ended and `finish` synthesizes `missing` results.
    at_end: bool,
    specs: &'s [Machine],
    file: Arc<Path>,
    trace_by: Option<Vec<Segment>>,
    traces: Vec<TraceState>,
    trace_index: FxHashMap<String, usize>,
    diagnostics: Vec<Diagnostic>,
    records: u64,
    /// (spec, event, event) pairs already reported as ambiguous in this input.
    ambiguous_seen: Vec<(usize, EventId, EventId)>,
    /// Scratch space for instance keys, reused across records.
    key: String,
    tools: rustc_hash::FxHashSet<Arc<str>>,
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
    path: VecDeque<(StateId, EventId, u64)>,
    elided: u64,
    /// The last event delivered to the instance, where an unaccepted end is reported.
    last: Location,
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
            vars: vec![None; machine.variables.len()].into_boxed_slice(),
        }
    }
}

impl<'s> Monitor<'s> {
    /// A monitor for one input named `file`, checking it against `specs`, with one
    /// trace per value of `trace_by` (the whole input when `None`).
    pub fn new(specs: &'s [Machine], file: Arc<Path>, trace_by: Option<Vec<Segment>>) -> Self {
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
            ambiguous_seen: Vec::new(),
            key: String::new(),
            tools: Default::default(),
        }
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

    /// Checks one record.
    pub fn feed(&mut self, mut record: Record<'_>) {
        let trace = match self.trace_of(&record) {
            Ok(trace) => trace,
            Err(message) => return self.malformed(record.loc.clone(), message),
        };
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

    fn trace_of(&mut self, record: &Record<'_>) -> Result<usize, String> {
        let Some(path) = &self.trace_by else {
            // The whole input is one trace.
            if self.traces.is_empty() {
                self.traces.push(self.new_trace(None));
            }
            return Ok(0);
        };
        let value = record.lookup(path).ok_or_else(|| {
            format!(
                "record has no `{}` field to split traces by (--trace-by)",
                crate::spec::ast::Path {
                    segments: path.clone(),
                    span: Span::default(),
                }
            )
        })?;
        let name = match value.as_str() {
            Some(text) => text.into_owned(),
            None => value.to_value().map_or_else(String::new, |v| v.to_string()),
        };
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
            if let Some(other) = second {
                self.ambiguous(spec_index, event, other, trace, record);
                continue;
            }
            let keyed = machine.per.is_empty() || machine.key_of(record, &mut self.key);
            let run = &mut self.traces[trace].runs[spec_index];
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
                found.extend(deliver(
                    machine,
                    &mut run.instances[index],
                    event,
                    record,
                    None,
                    watch,
                ));
            } else {
                // A record lacking the key concerns every live instance of its trace.
                for instance in &mut run.instances {
                    let watch = (&mut self.observer, spec_index, trace, self.at_end);
                    found.extend(deliver(machine, instance, event, record, None, watch));
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
            found.extend(deliver(machine, instance, event, record, seen, watch));
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
        let machine = &self.specs[spec];
        let (a, b) = (&machine.events[first], &machine.events[second]);
        let mut diagnostic = Diagnostic::new(
            Code::AmbiguousEvent,
            format!(
                "record matches both event `{}` and event `{}` of spec `{}` (later records in this file that do the same are not reported again)",
                a.name, b.name, machine.name
            ),
        );
        diagnostic.trace = Some(self.site(self.traces[trace].name.as_deref(), &record.loc));
        diagnostic.spec = Some(SpecSite::new(&machine.name, &machine.source, a.span));
        diagnostic.related.push((
            SpecSite::new(&machine.name, &machine.source, b.span),
            "the other event".to_string(),
        ));
        diagnostic.hint = Some(
            "a record may match at most one event; make the patterns exclusive with `where`"
                .to_string(),
        );
        self.push(diagnostic);
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
                .map(|(state, event, line)| Step {
                    state: state_name(state),
                    event: machine.events[event].name.clone(),
                    line,
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
                        found.push((spec, loc, instance.found(FoundKind::Unaccepted, None)));
                    }
                }
            }
            for (spec, loc, violation) in found {
                let diagnostic = self.violation(spec, trace_name.as_deref(), &loc, violation);
                self.push(diagnostic);
            }
        }
        Outcome {
            diagnostics: self.diagnostics,
            records: self.records,
            traces: self.traces.len() as u64,
        }
    }
}

/// A violation found by an instance, before it is dressed as a diagnostic.
struct Found {
    kind: FoundKind,
    key: Option<String>,
    state: StateId,
    event: Option<EventId>,
    path: Vec<(StateId, EventId, u64)>,
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
    record: &Record<'_>,
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
    match machine.step(instance.state, event) {
        Move::Go { to, .. } => {
            if instance.path.len() == PATH_LIMIT {
                instance.path.pop_front();
                instance.elided += 1;
            }
            instance.path.push_back((instance.state, event, loc.line));
            instance.state = to;
            let binds = &machine.events[event].binds;
            if !binds.is_empty() {
                let ctx = Context {
                    vars: &instance.vars,
                    seen,
                };
                // A value that is missing or invalid leaves the variable unset.
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
            None
        }
        Move::Forbidden(rule) => Some(instance.found(FoundKind::Forbidden(rule), Some(event))),
        Move::Unspecified => match machine.otherwise {
            Otherwise::Ignore => None,
            Otherwise::Reject => Some(instance.found(FoundKind::Unexpected, Some(event))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(line: u64, tool: &str) -> OpenCall {
        OpenCall {
            order: 0,
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
