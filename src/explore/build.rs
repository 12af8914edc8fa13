//! Building whole synthetic traces: the records of a path, joined into calls and
//! results the way a recorder would write them, with the `per` key on every record,
//! and verified by running the real checker on them.
//!
//! A call record gets a `call_id`; a result joins the most recent open call its
//! pattern accepts (taking that call's tool and inheriting its arguments), or stands
//! alone (formats that cannot express a lone result get a call for it first, one that
//! changes nothing in the machine). The checker gives every call still open at the end
//! a `status: "missing"` result, which may move the machine; when it does, each open
//! call is closed with a result no event of the spec matches. Whatever is built is
//! checked by [`crate::check`]: a trace that would not yield exactly the expected
//! verdict is an error, never emitted.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::emit::{Format, Inexpressible, RecordSite, native_line};
use super::fit::Bound;
use super::paths::{AllowedPath, Counterexample, Step};
use super::synth::{
    JsonRecord, any_result, as_record, classify, last_key, neutral_result, records_for, set_path,
};
use crate::check::{CheckOptions, check_reader};
use crate::diagnostic::{Code, Diagnostic};
use crate::machine::{EventId, Machine, Move, StateId};
use crate::spec::ast::{Otherwise, Segment, Span};

/// The violation a synthetic trace must make the checker report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpectedViolation {
    /// The violation's code.
    pub code: Code,
    /// Index of the record the violation is located at (0-based; its line in native
    /// JSONL is one more).
    pub record: usize,
    /// The span of the rule the checker names.
    pub rule: Span,
    /// The state the instance was in.
    pub state: String,
    /// The offending event; `None` for an unaccepted end.
    pub event: Option<String>,
}

/// A generated trace: normalized records, and the verdict the checker gives them.
#[derive(Debug, Clone, PartialEq)]
pub struct SyntheticTrace {
    /// The records, in order.
    pub records: Vec<JsonRecord>,
    /// `None`: the trace conforms.
    pub expected: Option<ExpectedViolation>,
}

impl SyntheticTrace {
    /// The trace as text in `format`.
    pub fn write(&self, format: Format) -> Result<String, Inexpressible> {
        format.write(&self.records)
    }

    /// Where, in the text [`SyntheticTrace::write`] gives for `format`, the checker
    /// locates the expected violation.
    pub fn violation_site(&self, format: Format) -> Option<RecordSite> {
        let expected = self.expected.as_ref()?;
        format.sites(&self.records).into_iter().nth(expected.record)
    }
}

/// Why no trace could be built for a path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SynthError {
    /// The event no record could be found for, when that is the reason.
    pub event: Option<String>,
    /// Why, for people.
    pub message: String,
}

/// The trace of a counterexample: the checker rejects it with the counterexample's
/// code, at the record of its last event, naming its rule.
pub fn counterexample_trace(
    machine: &Machine,
    counterexample: &Counterexample,
    format: Format,
) -> Result<SyntheticTrace, SynthError> {
    let mut moves: Vec<(StateId, EventId)> = counterexample
        .steps
        .iter()
        .map(|step| (step.from, step.event))
        .collect();
    if let Some(event) = counterexample.event {
        moves.push((counterexample.state, event));
    }
    let expected = ExpectedViolation {
        code: counterexample.code(),
        record: 0,
        rule: counterexample.rule(machine),
        state: machine.state(counterexample.state).name.clone(),
        event: counterexample
            .event
            .map(|event| machine.events[event].name.clone()),
    };
    build(machine, &moves, Some(expected), format)
}

/// The trace of an allowed path: it conforms.
pub fn allowed_trace(
    machine: &Machine,
    path: &AllowedPath,
    format: Format,
) -> Result<SyntheticTrace, SynthError> {
    let moves: Vec<(StateId, EventId)> = path
        .steps
        .iter()
        .map(|step: &Step| (step.from, step.event))
        .collect();
    build(machine, &moves, None, format)
}

struct OpenCall {
    id: String,
    tool: String,
    args: Option<Value>,
}

struct Builder<'m> {
    machine: &'m Machine,
    format: Format,
    /// The `per` paths and the value each record carries there.
    keys: Vec<(Vec<Segment>, Value)>,
    records: Vec<JsonRecord>,
    open: Vec<OpenCall>,
    calls: usize,
    /// Why the last attempt to place a record failed.
    why: Option<String>,
    /// What the instance has bound so far, for specs whose guards read it.
    bound: Bound,
}

fn build(
    machine: &Machine,
    moves: &[(StateId, EventId)],
    expected: Option<ExpectedViolation>,
    format: Format,
) -> Result<SyntheticTrace, SynthError> {
    let accept = |record: &JsonRecord| format.accepts(record).is_ok();
    let mut choices: Vec<Vec<JsonRecord>> = Vec::new();
    for &(_, event) in moves {
        let found = records_for(machine, event, &accept);
        if found.is_empty() {
            return Err(no_record(machine, event, format));
        }
        choices.push(found);
    }
    // Every record must carry one `per` key. Try the values some event pins first (a
    // guard such as `args.id matches /^req-/` admits few), then a made-up one.
    let mut first_error = None;
    for keys in key_values(machine, &choices) {
        match build_keyed(machine, moves, &choices, keys, expected.clone(), format) {
            Ok(trace) => return Ok(trace),
            Err(err) => {
                first_error.get_or_insert(err);
            }
        }
    }
    Err(first_error.expect("bug: there is always one key assignment to try"))
}

fn build_keyed(
    machine: &Machine,
    moves: &[(StateId, EventId)],
    choices: &[Vec<JsonRecord>],
    keys: Vec<(Vec<Segment>, Value)>,
    mut expected: Option<ExpectedViolation>,
    format: Format,
) -> Result<SyntheticTrace, SynthError> {
    let accept = |record: &JsonRecord| format.accepts(record).is_ok();
    let mut builder = Builder {
        machine,
        format,
        keys,
        records: Vec::new(),
        open: Vec::new(),
        calls: 0,
        why: None,
        bound: Bound::new(machine),
    };
    for (&(state, event), templates) in moves.iter().zip(choices) {
        builder.why = None;
        if !templates.iter().any(|t| builder.place(state, event, t)) {
            return Err(SynthError {
                event: Some(machine.events[event].name.clone()),
                message: format!(
                    "cannot place a record for event `{}` after {}: {}",
                    machine.events[event].name,
                    match builder.records.len() {
                        0 => "nothing (at the start)".to_string(),
                        n => format!("{n} record{}", if n == 1 { "" } else { "s" }),
                    },
                    builder
                        .why
                        .take()
                        .unwrap_or_else(|| "no record matches only this event".to_string())
                ),
            });
        }
    }
    if let Some(expected) = &mut expected {
        expected.record = builder.records.len().saturating_sub(1);
    }

    // Calls still open get a `missing` result (from the reader at the next turn, in
    // formats with turns, else from the checker at the end); if that changes the
    // verdict, close them with results no event matches.
    let mut failure = None;
    if !format.answers_every_call() {
        let (records, index) = format.as_read(&builder.records);
        let expected = expected.clone().map(|mut e| {
            e.record = index[e.record];
            e
        });
        let verified = verify(machine, &records, expected.as_ref())
            .and_then(|()| read_back(machine, format, &records, expected.as_ref()));
        match verified {
            Ok(()) => return Ok(SyntheticTrace { records, expected }),
            Err(why) => failure = Some(why),
        }
    }
    // After a violation on the last record the instance has stopped: what replies
    // written after it match no longer matters.
    let after_violation = expected.as_ref().is_some_and(|e| e.event.is_some());
    let mut closed = builder.records.clone();
    for call in &builder.open {
        let args = call.args.as_ref();
        let result = neutral_result(machine, &call.tool, &call.id, args, &accept).or_else(|| {
            after_violation
                .then(|| any_result(machine, &call.tool, &call.id, args, &accept))
                .flatten()
        });
        match result {
            Some(result) => closed.push(result),
            None => {
                return Err(SynthError {
                    event: None,
                    message: match failure {
                        Some(why) => format!(
                            "the checker gives the call to `{}` left open a `missing` result, which changes the verdict ({why}), and every result of `{}`{} matches an event",
                            call.tool,
                            call.tool,
                            in_format(format)
                        ),
                        None => format!(
                            "{format} answers every call, and every result of `{}` that it can express matches an event",
                            call.tool
                        ),
                    },
                });
            }
        }
    }
    verify(machine, &closed, expected.as_ref())
        .and_then(|()| read_back(machine, format, &closed, expected.as_ref()))
        .map_err(|why| SynthError {
            event: None,
            message: format!("the synthesized trace does not give the expected verdict: {why}"),
        })?;
    Ok(SyntheticTrace {
        records: closed,
        expected,
    })
}

fn in_format(format: Format) -> String {
    if format == Format::Native {
        String::new()
    } else {
        format!(" that {format} can express")
    }
}

fn no_record(machine: &Machine, event: EventId, format: Format) -> SynthError {
    let name = &machine.events[event].name;
    let any = records_for(machine, event, &|_| true);
    let mut reasons: Vec<String> = Vec::new();
    for record in &any {
        if let Err(why) = format.accepts(record) {
            let why = why.to_string();
            if !reasons.contains(&why) {
                reasons.push(why);
            }
        }
    }
    let message = if any.is_empty() {
        format!("cannot synthesize a record for event `{name}`")
    } else {
        format!(
            "cannot synthesize a record for event `{name}` that {format} can express ({})",
            reasons.join("; ")
        )
    };
    SynthError {
        event: Some(name.clone()),
        message,
    }
}

/// The most key assignments tried for one trace.
const MAX_KEY_ASSIGNMENTS: usize = 8;

/// Assignments of a value to each `per` path, to try in order: the values the records
/// chosen for the path already have there (a guard may pin them), then `NAME-1` after
/// the path's last key. Without `per`, one empty assignment.
fn key_values(machine: &Machine, choices: &[Vec<JsonRecord>]) -> Vec<Vec<(Vec<Segment>, Value)>> {
    let mut assignments: Vec<Vec<(Vec<Segment>, Value)>> = vec![Vec::new()];
    for key in &machine.per {
        let mut values: Vec<Value> = Vec::new();
        for templates in choices {
            for template in templates {
                let Ok(record) = as_record(template, None) else {
                    continue;
                };
                if let Some(value) = record.get(&key.segments) {
                    if !values.contains(&value) {
                        values.push(value.into_owned());
                    }
                }
            }
        }
        let name = last_key(&key.segments).unwrap_or("key");
        let made_up = json!(format!("{name}-1"));
        if !values.contains(&made_up) {
            values.push(made_up);
        }
        let mut next = Vec::new();
        for assignment in &assignments {
            for value in &values {
                let mut longer = assignment.clone();
                longer.push((key.segments.clone(), value.clone()));
                next.push(longer);
            }
        }
        next.truncate(MAX_KEY_ASSIGNMENTS);
        assignments = next;
    }
    assignments
}

impl Builder<'_> {
    /// Whether `record` (inheriting `inherited` arguments) matches exactly `event`;
    /// when not, `why` says what it matches instead.
    fn exact(&mut self, record: &JsonRecord, inherited: Option<&Value>, event: EventId) -> bool {
        if let Err(why) = self.format.accepts(record) {
            self.why = Some(why.to_string());
            return false;
        }
        let events = if self.machine.is_contextual() {
            self.bound.classify(self.machine, record, inherited)
        } else {
            classify(self.machine, record, inherited)
        };
        match events {
            Ok(events) if events == [event] => true,
            Ok(events) => {
                let unset = if self.machine.is_contextual() {
                    self.bound.unset_reads(self.machine, event)
                } else {
                    Vec::new()
                };
                let unseen = self.machine.is_contextual()
                    && self.bound.lacks_provenance(self.machine, event);
                self.why = Some(if unset.is_empty() && unseen {
                    format!(
                        "its condition asks for a value seen in an earlier output or message, and no earlier record of this path shows one (the record matches {})",
                        self.names(&events)
                    )
                } else if unset.is_empty() {
                    format!(
                        "joined to its call and keyed, the record matches {}",
                        self.names(&events)
                    )
                } else {
                    format!(
                        "its condition reads {}, which no earlier move of this path binds (the record matches {})",
                        unset.join(" and "),
                        self.names(&events)
                    )
                });
                false
            }
            Err(why) => {
                self.why = Some(why.to_string());
                false
            }
        }
    }

    fn names(&self, events: &[EventId]) -> String {
        match events {
            [] => "no event".to_string(),
            events => events
                .iter()
                .map(|&e| format!("`{}`", self.machine.events[e].name))
                .collect::<Vec<_>>()
                .join(" and "),
        }
    }

    /// Gives `record` the `per` key where it (with the arguments it inherits) lacks it or
    /// has another value.
    fn keyed(&self, mut record: JsonRecord, inherited: Option<&Value>) -> JsonRecord {
        for (path, value) in &self.keys {
            let has = as_record(&record, inherited)
                .is_ok_and(|r| r.get(path).is_some_and(|v| v.as_ref() == value));
            if has {
                continue;
            }
            if path.first() == Some(&Segment::Key("args".into())) && !record.contains_key("args") {
                if let Some(args) = inherited {
                    record.insert("args".into(), args.clone());
                }
            }
            let mut whole = Value::Object(record);
            set_path(&mut whole, path, value.clone());
            let Value::Object(map) = whole else {
                unreachable!("a record stays an object")
            };
            record = map;
        }
        record
    }

    /// The id the next call (or lone result) gets; `calls` counts the ids given.
    fn fresh_id(&self) -> String {
        format!("call-{}", self.calls + 1)
    }

    /// Places a record for `event` (taken in `state`) built from `template`; `false`
    /// when no way of placing it matches exactly `event`.
    fn place(&mut self, state: StateId, event: EventId, template: &JsonRecord) -> bool {
        if self.machine.is_contextual() && self.bound.lacks_provenance(self.machine, event) {
            self.add_source(state, event);
        }
        let keyings: &[bool] = if self.keys.is_empty() {
            &[false]
        } else {
            &[true, false]
        };
        keyings
            .iter()
            .any(|&keyed| self.place_keyed(state, event, template, keyed))
    }

    fn place_keyed(
        &mut self,
        state: StateId,
        event: EventId,
        template: &JsonRecord,
        keyed: bool,
    ) -> bool {
        let key = |builder: &Self, record: JsonRecord, inherited: Option<&Value>| {
            if keyed {
                builder.keyed(record, inherited)
            } else {
                record
            }
        };
        match template.get("kind").and_then(Value::as_str) {
            Some("call") => {
                let id = self.fresh_id();
                let mut record = template.clone();
                record.insert("call_id".into(), json!(id));
                let mut record = key(self, record, None);
                self.fit(event, &mut record, None);
                if !self.exact(&record, None, event) {
                    return false;
                }
                self.commit(state, event, &record, None);
                self.calls += 1;
                self.open.push(OpenCall {
                    id,
                    tool: record
                        .get("tool")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    args: record.get("args").cloned(),
                });
                self.records.push(record);
                true
            }
            Some("result") => {
                if self.join(state, event, template, keyed) {
                    return true;
                }
                self.standalone(state, event, template, keyed)
            }
            _ => {
                let mut record = key(self, template.clone(), None);
                self.fit(event, &mut record, None);
                if !self.exact(&record, None, event) {
                    return false;
                }
                self.commit(state, event, &record, None);
                self.records.push(record);
                true
            }
        }
    }

    /// Before an event that needs a value from an earlier output or message, and when
    /// the path has shown none: a record that shows one and moves nothing (a result of
    /// a tool the test names, or a message), so the event's record can cite it.
    fn add_source(&mut self, state: StateId, event: EventId) {
        let Some(mut source) = self.bound.source_record(self.machine, event) else {
            return;
        };
        let is_result = source.get("kind") == Some(&json!("result"));
        if is_result {
            if self.format.results_need_calls() {
                return;
            }
            source.insert("call_id".into(), json!(self.fresh_id()));
        }
        if self.format.accepts(&source).is_err() || !self.harmless(state, &source) {
            self.why = None;
            return;
        }
        if is_result {
            self.calls += 1;
        }
        self.commit(state, event, &source, None);
        self.records.push(source);
    }

    /// Fits `record` to the values bound so far (specs whose guards read them only).
    fn fit(&self, event: EventId, record: &mut JsonRecord, inherited: Option<&Value>) {
        if self.machine.is_contextual() {
            self.bound.fit(self.machine, event, record, inherited);
        }
    }

    /// Takes note of what placing `record` as `event` in `state` binds and shows.
    fn commit(
        &mut self,
        state: StateId,
        event: EventId,
        record: &JsonRecord,
        inherited: Option<&Value>,
    ) {
        if self.machine.is_contextual() {
            let moved = matches!(self.machine.step(state, event), Move::Go { .. });
            self.bound
                .commit(self.machine, event, moved, record, inherited);
        }
    }

    /// Answers the most recent open call the event's pattern accepts.
    fn join(&mut self, state: StateId, event: EventId, template: &JsonRecord, keyed: bool) -> bool {
        let matcher = &self.machine.events[event].matcher;
        let Some(index) = self.open.iter().rposition(|call| {
            matcher
                .tool
                .as_ref()
                .is_none_or(|tool| tool.matches(&call.tool))
        }) else {
            return false;
        };
        let call = &self.open[index];
        let mut record = template.clone();
        record.insert("tool".into(), json!(call.tool));
        record.insert("call_id".into(), json!(call.id));
        let inherited = call.args.clone();
        if self.format.results_need_calls() {
            // Such formats give a result its call's arguments and no others.
            match record.remove("args") {
                Some(args) if Some(&args) != inherited.as_ref() => return false,
                _ => {}
            }
        }
        let mut record = if keyed {
            self.keyed(record, inherited.as_ref())
        } else {
            record
        };
        self.fit(event, &mut record, inherited.as_ref());
        if !self.exact(&record, inherited.as_ref(), event) {
            return false;
        }
        self.commit(state, event, &record, inherited.as_ref());
        self.open.remove(index);
        self.records.push(record);
        true
    }

    /// A result that answers no call in the path (formats that need it get a call for it
    /// first, one that moves nothing in `state`).
    fn standalone(
        &mut self,
        state: StateId,
        event: EventId,
        template: &JsonRecord,
        keyed: bool,
    ) -> bool {
        let id = self.fresh_id();
        let mut record = template.clone();
        record.insert("call_id".into(), json!(id));
        if !self.format.results_need_calls() {
            let mut record = if keyed {
                self.keyed(record, None)
            } else {
                record
            };
            self.fit(event, &mut record, None);
            if !self.exact(&record, None, event) {
                return false;
            }
            self.commit(state, event, &record, None);
            self.calls += 1;
            self.records.push(record);
            return true;
        }
        let mut call = Map::new();
        call.insert("kind".into(), json!("call"));
        call.insert(
            "tool".into(),
            record.get("tool").cloned().unwrap_or(json!("tool")),
        );
        call.insert("call_id".into(), json!(id));
        call.insert("args".into(), record.remove("args").unwrap_or(json!({})));
        let call = if keyed { self.keyed(call, None) } else { call };
        let inherited = call.get("args").cloned();
        let mut record = if keyed {
            self.keyed(record, inherited.as_ref())
        } else {
            record
        };
        self.fit(event, &mut record, inherited.as_ref());
        if self.format.accepts(&call).is_err()
            || !self.harmless(state, &call)
            || !self.exact(&record, inherited.as_ref(), event)
        {
            return false;
        }
        self.commit(state, event, &record, inherited.as_ref());
        self.calls += 1;
        self.records.push(call);
        self.records.push(record);
        true
    }

    /// Whether `record` changes nothing when delivered in `state`: it matches no event,
    /// or one that `otherwise ignore` skips there.
    fn harmless(&mut self, state: StateId, record: &JsonRecord) -> bool {
        let events = classify(self.machine, record, None).unwrap_or_default();
        let harmless = match events.as_slice() {
            [] => true,
            [event] => {
                self.machine.otherwise == Otherwise::Ignore
                    && self.machine.step(state, *event) == Move::Unspecified
            }
            _ => false,
        };
        if !harmless {
            let tool = record
                .get("tool")
                .and_then(Value::as_str)
                .unwrap_or_default();
            self.why = Some(format!(
                "{} writes a call before each result, and a call to `{tool}` is {} in state `{}`",
                self.format,
                self.names(&events),
                self.machine.state(state).name
            ));
        }
        harmless
    }
}

/// Why a synthetic trace does not give the verdict it was built for.
#[derive(Debug, thiserror::Error)]
enum Disagreement {
    /// The format cannot write the records.
    #[error(transparent)]
    Inexpressible(#[from] Inexpressible),
    /// The checker gives another verdict on the records as native JSONL.
    #[error(transparent)]
    Verdict(#[from] Verdict),
    #[error("the {format} reader rejects it: {message}")]
    Rejected { format: Format, message: String },
    #[error("the {format} reader stopped: {error}")]
    Stopped {
        format: Format,
        error: std::io::Error,
    },
    /// The checker gives another verdict on the records the format's reader gives.
    #[error("read back by the {format} reader, {verdict}")]
    ReadBack { format: Format, verdict: Verdict },
    /// The right verdict, at another place in the written text.
    #[error("read back by the {format} reader, the violation is at `{have}`, not at `{want}`")]
    Moved {
        format: Format,
        have: String,
        want: String,
    },
}

/// What the checker reports instead of the expected verdict.
#[derive(Debug, thiserror::Error)]
enum Verdict {
    #[error("the checker reports no finding")]
    NoFinding,
    /// One finding, not the expected one (or one where none was expected).
    #[error("the checker reports {0}")]
    Other(String),
    /// Several findings, listed.
    #[error("the checker reports {1} findings instead of one: {0}")]
    Several(String, usize),
}

/// Writes `records` in `format`, reads the text back with that format's reader, checks
/// the records it gives with the real checker, and compares the verdict with
/// `expected` (its code, rule, state and event; the location is the reader's). Native
/// traces are [`verify`]'s business.
fn read_back(
    machine: &Machine,
    format: Format,
    records: &[JsonRecord],
    expected: Option<&ExpectedViolation>,
) -> Result<(), Disagreement> {
    use crate::trace::adapters::{self, InputOptions};
    use crate::trace::input::{Item, TraceInput};
    let reader = match format {
        Format::Native => return Ok(()),
        Format::Openai => adapters::Format::OpenAi,
        Format::Anthropic => adapters::Format::Anthropic,
        Format::Mcp => adapters::Format::Mcp,
        Format::Otel => adapters::Format::Otel,
    };
    let mut text = format.write(records)?;
    let mut site = expected.map(|e| format.sites(records)[e.record].clone());
    if format == Format::Mcp {
        // The reader takes JSON-RPC messages one per line in a file, or as the elements
        // of an array in a document, which is what reading from memory takes.
        text = format!("[{}]", text.trim_end().replace('\n', ","));
        site = site.map(|site| match site {
            RecordSite::Line(line) => RecordSite::Pointer(format!("/{}", line - 1)),
            other => other,
        });
    }
    let input = TraceInput::read(adapters::read_text(
        &text,
        &InputOptions {
            format: Some(reader),
            select: None,
        },
    ));
    let trace_by = (input.traces() > 1).then(|| vec![Segment::Key("trace".into())]);
    let mut monitor = crate::check::Monitor::new(
        std::slice::from_ref(machine),
        Arc::from(Path::new("synthetic")),
        trace_by,
    );
    // The first problem decides: a record the reader rejects is a trace it cannot
    // express, whatever the checker would say about the rest.
    input.try_for_each(|item| match item {
        Item::Record(record) => {
            monitor.feed(record);
            Ok(())
        }
        Item::Problem(problem) => Err(Disagreement::Rejected {
            format,
            message: problem.message,
        }),
        Item::Stopped(error) => Err(Disagreement::Stopped { format, error }),
        Item::TraceEnd(_) => Ok(()),
    })?;
    let diagnostics = monitor.finish().diagnostics;
    judge(&diagnostics, expected, None)
        .map_err(|verdict| Disagreement::ReadBack { format, verdict })?;
    if let (Some(RecordSite::Pointer(want)), Some(found)) = (site, diagnostics.first()) {
        let have = found
            .trace
            .as_ref()
            .map(|t| &*t.loc.pointer)
            .unwrap_or_default();
        if have != want {
            return Err(Disagreement::Moved {
                format,
                have: have.to_string(),
                want,
            });
        }
    }
    Ok(())
}

/// Runs the real checker on `records` (as native JSONL) and compares its verdict with
/// `expected`; the error says what the checker reported instead.
fn verify(
    machine: &Machine,
    records: &[JsonRecord],
    expected: Option<&ExpectedViolation>,
) -> Result<(), Disagreement> {
    let text: String = records.iter().map(native_line).collect();
    let outcome = check_reader(
        std::slice::from_ref(machine),
        Arc::from(Path::new("synthetic.jsonl")),
        text.as_bytes(),
        &CheckOptions::default(),
    );
    let line = expected.map(|e| e.record as u64 + 1);
    Ok(judge(&outcome.diagnostics, expected, line)?)
}

/// Compares a checker's findings with the expected verdict. `line`, when given, is the
/// line the violation must be located at.
fn judge(
    diagnostics: &[Diagnostic],
    expected: Option<&ExpectedViolation>,
    line: Option<u64>,
) -> Result<(), Verdict> {
    let describe = |d: &Diagnostic| {
        format!(
            "`{}` at line {}: {}",
            d.code,
            d.trace.as_ref().map_or(0, |t| t.loc.line),
            d.message
        )
    };
    let Some(expected) = expected else {
        return match diagnostics.first() {
            None => Ok(()),
            Some(d) => Err(Verdict::Other(describe(d))),
        };
    };
    if diagnostics.is_empty() {
        return Err(Verdict::NoFinding);
    }
    let [found] = diagnostics else {
        return Err(Verdict::Several(
            diagnostics
                .iter()
                .map(describe)
                .collect::<Vec<_>>()
                .join("; "),
            diagnostics.len(),
        ));
    };
    let detail = found.violation.as_deref();
    let same = found.code == expected.code
        && line.is_none_or(|line| found.trace.as_ref().is_some_and(|t| t.loc.line == line))
        && found.spec.as_ref().is_some_and(|s| s.span == expected.rule)
        && detail.is_some_and(|d| d.state == expected.state && d.event == expected.event);
    if same {
        Ok(())
    } else {
        Err(Verdict::Other(format!(
            "{}{}",
            describe(found),
            detail.map_or(String::new(), |d| format!(" in state `{}`", d.state))
        )))
    }
}
