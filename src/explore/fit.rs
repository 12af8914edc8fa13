//! Fitting synthesized records to what the instance has bound so far: a guard that
//! compares a record's path with a `$VAR` (or with a value computed from one), or asks
//! for provenance, cannot be solved from the pattern alone. Along the path being built,
//! the explorer keeps the instance's variables and the trace's provenance index, and
//! before a record is placed, sets the paths such tests name: the bound value for `==`,
//! a fresh one for `!=`, one just past a bound for orderings, a value from an earlier
//! synthesized output for `in outputs`, one never seen for `not (... in outputs)`; and
//! a path a `bind` reads gets a value the variable's `in`, `is` or `matches` accepts.
//! Nothing is trusted: the record is then classified with the same context.

use serde_json::{Value, json};

use super::synth::{JsonRecord, as_record, set_path};
use crate::eval::{Context, Operand, Seen, Val, VarCheck};
use crate::json::{CompareOp, JsonType, Segment};
use crate::machine::{EventId, Guard, Machine};
use crate::time::format_rfc3339;
use crate::trace::record::RecordError;

/// The variables and provenance index of the one instance a synthesized trace drives.
#[derive(Default)]
pub struct Bound {
    pub vars: Vec<Option<Val<'static>>>,
    pub seen: Seen,
}

impl Bound {
    pub fn new(machine: &Machine) -> Bound {
        Bound {
            vars: vec![None; machine.variables.len()],
            seen: Seen::default(),
        }
    }

    pub fn context(&self) -> Context<'_> {
        Context {
            vars: &self.vars,
            seen: Some(&self.seen),
        }
    }

    /// The events `record` is, in this context.
    pub fn classify(
        &self,
        machine: &Machine,
        record: &JsonRecord,
        inherited: Option<&Value>,
    ) -> Result<Vec<EventId>, RecordError> {
        let record = as_record(record, inherited)?;
        Ok(machine.classify_in(&record, &self.context()))
    }

    /// After `record` was placed as `event` (an allowed move, or not: `moved` says),
    /// sets the event's bindings and records what the record shows.
    pub fn commit(
        &mut self,
        machine: &Machine,
        event: EventId,
        moved: bool,
        record: &JsonRecord,
        inherited: Option<&Value>,
    ) {
        let Ok(parsed) = as_record(record, inherited) else {
            return;
        };
        if moved {
            let ctx = self.context();
            let values: Vec<(usize, Option<Val<'static>>)> = machine.events[event]
                .binds
                .iter()
                .map(|(slot, value)| {
                    let value = value.eval(&parsed, &ctx).ok().flatten();
                    (*slot, value.map(Val::into_owned))
                })
                .collect();
            for (slot, value) in values {
                self.vars[slot] = value;
            }
        }
        match record.get("kind").and_then(Value::as_str) {
            Some("result") => {
                if let Some(output) = record.get("output") {
                    let tool = record.get("tool").and_then(Value::as_str).unwrap_or("");
                    self.seen.add_output(tool, output);
                }
            }
            Some("message") => {
                if let Some(Value::String(text)) = record.get("text") {
                    let role = record.get("role").and_then(Value::as_str).unwrap_or("");
                    self.seen.add_message(role, text);
                }
            }
            _ => {}
        }
    }

    /// Sets the paths of `record` that `event`'s guard compares with bound values.
    pub fn fit(
        &self,
        machine: &Machine,
        event: EventId,
        record: &mut JsonRecord,
        inherited: Option<&Value>,
    ) {
        // A `record` pattern gives a record of no kind; a message is the plainest one,
        // and keeps the trace from reading as untyped.
        if !record.contains_key("kind") {
            record.insert("kind".into(), json!("message"));
            record.entry("role").or_insert(json!("user"));
            record.entry("text").or_insert(json!("ok"));
        }
        if let Some(guard) = &machine.events[event].matcher.guard {
            self.fit_guard(guard, true, record, inherited);
        }
        // A binding from a path the record lacks would leave its variable unset: give
        // the path a value, so later events can compare with it (one a guard's `in`,
        // `is` or `matches` of the variable accepts, a time if some guard adds a
        // duration to it, a number if some guard orders it, else a string).
        for (slot, value) in &machine.events[event].binds {
            if let Operand::Path(path) = value {
                let present = as_record(record, inherited).is_ok_and(|r| r.get(path).is_some());
                if !present {
                    let name = &machine.variables[*slot];
                    let fresh = if let Some(sample) = tested_value(machine, *slot) {
                        sample
                    } else if timed_vars(machine).contains(slot) {
                        json!("2026-01-01T00:00:00Z")
                    } else if ordered_vars(machine).contains(slot) {
                        json!(100 * (self.seen_count() + 1))
                    } else {
                        json!(format!("{name}-{}", self.seen_count() + 1))
                    };
                    set(record, path, fresh);
                }
            }
        }
    }

    fn seen_count(&self) -> usize {
        self.vars.iter().filter(|v| v.is_some()).count()
    }

    /// Whether `event`'s guard asks for provenance while nothing earlier in the path
    /// showed a value: why no record can be that event at this point.
    pub fn lacks_provenance(&self, machine: &Machine, event: EventId) -> bool {
        let has = |guard: &Guard| {
            let mut found = false;
            guard.each_test(&mut |test, _| found |= matches!(test, Guard::Provenance { .. }));
            found
        };
        machine.events[event]
            .matcher
            .guard
            .as_ref()
            .is_some_and(has)
            && self.seen.sample(true, |_| true).is_none()
            && self.seen.sample(false, |_| true).is_none()
    }

    /// A record that shows a value `event`'s first provenance test would accept: a
    /// result of a tool it names (the name, or a string its glob or regex matches) with
    /// an `id` in its output, or a message from the role it names.
    pub fn source_record(&self, machine: &Machine, event: EventId) -> Option<JsonRecord> {
        let first = |guard| {
            let mut first = None;
            Guard::each_test(guard, &mut |test, _| {
                if first.is_none() && matches!(test, Guard::Provenance { .. }) {
                    first = Some(test);
                }
            });
            first
        };
        let guard = machine.events[event].matcher.guard.as_ref()?;
        let Guard::Provenance {
            value,
            outputs,
            tool,
            role,
        } = first(guard)?
        else {
            return None;
        };
        let name = match value {
            Operand::Path(path) => last_name(path),
            _ => "value",
        };
        let shown = json!(format!("{name}-src-1"));
        let mut record = JsonRecord::new();
        if *outputs {
            let tool = match tool {
                None => "lookup".to_string(),
                Some(crate::machine::ToolMatcher::Name(name)) => name.clone(),
                Some(crate::machine::ToolMatcher::Pattern(regex)) => {
                    super::synth::regex_strings(regex.as_str())
                        .into_iter()
                        .find(|candidate| regex.is_match(candidate))?
                }
            };
            record.insert("kind".into(), json!("result"));
            record.insert("tool".into(), json!(tool));
            record.insert("status".into(), json!("ok"));
            record.insert("output".into(), json!({ "id": shown }));
        } else {
            record.insert("kind".into(), json!("message"));
            record.insert("role".into(), json!(role.as_deref().unwrap_or("user")));
            record.insert("text".into(), shown);
        }
        Some(record)
    }

    /// The variables `event`'s guard reads that are unset here, by name: why no record
    /// can be that event at this point of the path.
    pub fn unset_reads(&self, machine: &Machine, event: EventId) -> Vec<String> {
        let mut slots = Vec::new();
        if let Some(guard) = &machine.events[event].matcher.guard {
            guard_vars(guard, &mut slots);
        }
        slots.sort_unstable();
        slots.dedup();
        slots
            .into_iter()
            .filter(|&slot| self.vars.get(slot).is_some_and(Option::is_none))
            .map(|slot| format!("`${}`", machine.variables[slot]))
            .collect()
    }

    fn fit_guard(
        &self,
        guard: &Guard,
        positive: bool,
        record: &mut JsonRecord,
        inherited: Option<&Value>,
    ) {
        match (guard, positive) {
            (Guard::And(a, b), true) | (Guard::Or(a, b), false) => {
                self.fit_guard(a, positive, record, inherited);
                self.fit_guard(b, positive, record, inherited);
            }
            // One way to satisfy a disjunction: its first alternative that names a
            // bound value.
            (Guard::Or(a, b), true) | (Guard::And(a, b), false)
                if !self.fit_guard_changes(a, positive, record, inherited) =>
            {
                self.fit_guard(b, positive, record, inherited);
            }
            (Guard::Not(inner), _) => self.fit_guard(inner, !positive, record, inherited),
            (Guard::Relation { lhs, op, rhs }, _) => {
                // Set a path side to what the other side evaluates to (a variable, a
                // computed value, or another path the record already has).
                let mut sides = Vec::new();
                if let Operand::Path(path) = lhs {
                    sides.push((path, rhs, *op));
                }
                if let Operand::Path(path) = rhs {
                    sides.push((path, lhs, flip(*op)));
                }
                let found = sides.into_iter().find_map(|(path, other, op)| {
                    let value = self.value_of(other, record, inherited)?;
                    Some((path, value, op))
                });
                let Some((path, value, op)) = found else {
                    // Two paths the record lacks: make them equal, or different.
                    if let (Operand::Path(a), Operand::Path(b)) = (lhs, rhs) {
                        let want = if positive { *op } else { negate(*op) };
                        let name = last_name(a);
                        set(record, a, json!(format!("{name}-1")));
                        let other = match want {
                            CompareOp::Eq | CompareOp::Le | CompareOp::Ge => format!("{name}-1"),
                            // `a < b` with a = NAME-1: b sorts after it.
                            CompareOp::Lt | CompareOp::Ne => format!("{name}-2"),
                            CompareOp::Gt => format!("{name}-0"),
                        };
                        set(record, b, json!(other));
                    }
                    return;
                };
                let op = if positive { op } else { negate(op) };
                if let Some(wanted) = satisfying(&value, op) {
                    set(record, path, wanted);
                }
            }
            (
                Guard::Provenance {
                    value: Operand::Path(path),
                    outputs,
                    tool,
                    role,
                },
                _,
            ) => {
                let wanted = if positive {
                    let accepts = |source: &str| {
                        if *outputs {
                            tool.as_ref().is_none_or(|tool| tool.matches(source))
                        } else {
                            role.as_deref().is_none_or(|role| role == source)
                        }
                    };
                    match self.seen.sample(*outputs, accepts) {
                        Some(value) => value,
                        None => return,
                    }
                } else {
                    json!(format!("{}-unseen", last_name(path)))
                };
                set(record, path, wanted);
            }
            // A credential the shared detector recognizes, made up for the purpose.
            (Guard::Secret(target), true) => {
                let secret = json!(SYNTHETIC_SECRET);
                match target {
                    None => {
                        record.insert("note".into(), secret);
                    }
                    Some(Operand::Path(path)) => set(record, path, secret),
                    Some(_) => {}
                }
            }
            _ => {}
        }
    }

    fn fit_guard_changes(
        &self,
        guard: &Guard,
        positive: bool,
        record: &mut JsonRecord,
        inherited: Option<&Value>,
    ) -> bool {
        let before = record.clone();
        self.fit_guard(guard, positive, record, inherited);
        *record != before
    }

    fn value_of(
        &self,
        operand: &Operand,
        record: &JsonRecord,
        inherited: Option<&Value>,
    ) -> Option<Val<'static>> {
        let parsed = as_record(record, inherited).ok()?;
        let ctx = self.context();
        operand
            .eval(&parsed, &ctx)
            .ok()
            .flatten()
            .map(Val::into_owned)
    }
}

/// What a synthesized record that must hold a credential carries: a bearer token, fake.
const SYNTHETIC_SECRET: &str = "Authorization: Bearer tg-synthetic-000000000000";

/// The variables some guard adds a duration to (`$at + 30s`): they hold times.
fn timed_vars(machine: &Machine) -> Vec<usize> {
    fn has_duration(operand: &Operand) -> bool {
        match operand {
            Operand::Const(Val::Duration(_)) => true,
            Operand::Arith(_, a, b) => has_duration(a) || has_duration(b),
            _ => false,
        }
    }
    fn walk_operand(operand: &Operand, out: &mut Vec<usize>) {
        if let Operand::Arith(op, a, b) = operand {
            if matches!(op, crate::eval::ArithOp::Add | crate::eval::ArithOp::Sub) {
                for (x, y) in [(a, b), (b, a)] {
                    if let (Operand::Var(slot), true) = (x.as_ref(), has_duration(y)) {
                        out.push(*slot);
                    }
                }
            }
            walk_operand(a, out);
            walk_operand(b, out);
        }
    }
    let mut out = Vec::new();
    for guard in machine
        .events
        .iter()
        .filter_map(|e| e.matcher.guard.as_ref())
    {
        guard.each_test(&mut |test, _| {
            if let Guard::Relation { lhs, rhs, .. } = test {
                walk_operand(lhs, &mut out);
                walk_operand(rhs, &mut out);
            }
        });
    }
    out
}

/// A value the first `$VAR in [..]`, `$VAR is TYPE` or `$VAR matches /re/` of variable
/// `slot` not under a `not` accepts: the list's first item, a value of the type, a
/// string the regex matches.
fn tested_value(machine: &Machine, slot: usize) -> Option<Value> {
    let accepted = |check: &VarCheck| match check {
        VarCheck::In(values) => values.first().cloned(),
        VarCheck::Is(ty) => Some(match ty {
            JsonType::Null => Value::Null,
            JsonType::Bool => json!(true),
            JsonType::Number => json!(100),
            JsonType::String => json!("value"),
            JsonType::Array => json!([]),
            JsonType::Object => json!({}),
        }),
        VarCheck::Matches(regex) => super::synth::regex_strings(regex.as_str())
            .into_iter()
            .find(|candidate| regex.is_match(candidate))
            .map(Value::String),
    };
    let mut value = None;
    for guard in machine
        .events
        .iter()
        .filter_map(|e| e.matcher.guard.as_ref())
    {
        guard.each_test(&mut |test, positive| match test {
            Guard::VarTest(at, check) if *at == slot && positive && value.is_none() => {
                value = accepted(check);
            }
            _ => {}
        });
    }
    value
}

/// The variables some guard compares with `<`, `<=`, `>` or `>=`.
fn ordered_vars(machine: &Machine) -> Vec<usize> {
    let mut out = Vec::new();
    for guard in machine
        .events
        .iter()
        .filter_map(|e| e.matcher.guard.as_ref())
    {
        guard.each_test(&mut |test, _| match test {
            Guard::Relation { lhs, op, rhs } if !matches!(op, CompareOp::Eq | CompareOp::Ne) => {
                operand_vars(lhs, &mut out);
                operand_vars(rhs, &mut out);
            }
            _ => {}
        });
    }
    out
}

fn guard_vars(guard: &Guard, out: &mut Vec<usize>) {
    guard.each_test(&mut |test, _| match test {
        Guard::HasVar(slot) | Guard::VarTest(slot, _) => out.push(*slot),
        Guard::Relation { lhs, rhs, .. } => {
            operand_vars(lhs, out);
            operand_vars(rhs, out);
        }
        Guard::Provenance { value, .. } | Guard::Secret(Some(value)) => operand_vars(value, out),
        _ => {}
    });
}

fn operand_vars(operand: &Operand, out: &mut Vec<usize>) {
    match operand {
        Operand::Var(slot) => out.push(*slot),
        Operand::Arith(_, a, b) => {
            operand_vars(a, out);
            operand_vars(b, out);
        }
        Operand::Path(_) | Operand::Const(_) => {}
    }
}

fn flip(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Lt => CompareOp::Gt,
        CompareOp::Le => CompareOp::Ge,
        CompareOp::Gt => CompareOp::Lt,
        CompareOp::Ge => CompareOp::Le,
        other => other,
    }
}

fn negate(op: CompareOp) -> CompareOp {
    match op {
        CompareOp::Eq => CompareOp::Ne,
        CompareOp::Ne => CompareOp::Eq,
        CompareOp::Lt => CompareOp::Ge,
        CompareOp::Le => CompareOp::Gt,
        CompareOp::Gt => CompareOp::Le,
        CompareOp::Ge => CompareOp::Lt,
    }
}

/// A JSON value `x` with `x op value`; `None` when none is known (a duration).
fn satisfying(value: &Val<'_>, op: CompareOp) -> Option<Value> {
    const SECOND: i128 = 1_000_000_000;
    match value {
        Val::Json(value) => {
            let value: &Value = value;
            match (op, value) {
                (CompareOp::Eq | CompareOp::Le | CompareOp::Ge, v) => Some(v.clone()),
                (CompareOp::Ne, Value::String(s)) => Some(json!(format!("{s}-2"))),
                (CompareOp::Ne, Value::Number(_)) | (CompareOp::Gt, Value::Number(_)) => {
                    value.as_f64().map(|x| number(x + 1.0))
                }
                (CompareOp::Lt, Value::Number(_)) => value.as_f64().map(|x| number(x - 1.0)),
                (CompareOp::Ne, _) => Some(json!("other")),
                (CompareOp::Gt, Value::String(s)) => Some(json!(format!("{s}~"))),
                _ => None,
            }
        }
        Val::Instant(t) => {
            let at = match op {
                CompareOp::Eq | CompareOp::Le | CompareOp::Ge => *t,
                CompareOp::Gt | CompareOp::Ne => t + SECOND,
                CompareOp::Lt => t - SECOND,
            };
            format_rfc3339(at).map(Value::String)
        }
        Val::Duration(_) => None,
    }
}

fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

fn last_name(path: &[Segment]) -> &str {
    path.iter()
        .rev()
        .find_map(|segment| match segment {
            Segment::Key(key) => Some(key.as_str()),
            Segment::Index(_) => None,
        })
        .unwrap_or("value")
}

/// Sets `path` in `record`, except the canonical fields the pattern already decided.
fn set(record: &mut JsonRecord, path: &[Segment], value: Value) {
    if let Some(Segment::Key(root)) = path.first() {
        if matches!(root.as_str(), "kind" | "tool" | "call_id" | "status") {
            return;
        }
    }
    let mut whole = Value::Object(std::mem::take(record));
    set_path(&mut whole, path, value);
    if let Value::Object(map) = whole {
        *record = map;
    }
}
