//! Fitting synthesized records to what the instance has bound so far: a guard that
//! compares a record's path with a `$VAR` (or with a value computed from one), or asks
//! for provenance, cannot be solved from the pattern alone. Along the path being built,
//! the explorer keeps the instance's variables and the trace's provenance index, and
//! before a record is placed, sets the paths such tests name: the bound value for `==`,
//! a fresh one for `!=`, one just past a bound for orderings, a value from an earlier
//! synthesized output for `in outputs`, one never seen for `not (... in outputs)`.
//! Nothing is trusted: the record is then classified with the same context.

use serde_json::{Value, json};

use super::synth::{JsonRecord, as_record, set_path};
use crate::eval::{Context, Operand, Seen, Val, format_rfc3339};
use crate::json::{CompareOp, Segment};
use crate::machine::{EventId, Guard, Machine};

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
    ) -> Result<Vec<EventId>, String> {
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
        if let Some(guard) = &machine.events[event].matcher.guard {
            self.fit_guard(guard, true, record, inherited);
        }
        // A binding from a path the record lacks would leave its variable unset: give
        // the path a value, so later events can compare with it.
        for (slot, value) in &machine.events[event].binds {
            if let Operand::Path(path) = value {
                let present = as_record(record, inherited).is_ok_and(|r| r.get(path).is_some());
                if !present {
                    let name = &machine.variables[*slot];
                    set(
                        record,
                        path,
                        json!(format!("{name}-{}", self.seen_count() + 1)),
                    );
                }
            }
        }
    }

    fn seen_count(&self) -> usize {
        self.vars.iter().filter(|v| v.is_some()).count()
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
                let (path, other, op) = match (lhs, rhs) {
                    (Operand::Path(path), other) if !reads_path(other) => (path, other, *op),
                    (other, Operand::Path(path)) if !reads_path(other) => (path, other, flip(*op)),
                    _ => return,
                };
                let Some(value) = self.value_of(other, record, inherited) else {
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

fn guard_vars(guard: &Guard, out: &mut Vec<usize>) {
    match guard {
        Guard::Or(a, b) | Guard::And(a, b) => {
            guard_vars(a, out);
            guard_vars(b, out);
        }
        Guard::Not(inner) => guard_vars(inner, out),
        Guard::HasVar(slot) => out.push(*slot),
        Guard::Relation { lhs, rhs, .. } => {
            operand_vars(lhs, out);
            operand_vars(rhs, out);
        }
        Guard::Provenance { value, .. } | Guard::Secret(Some(value)) => operand_vars(value, out),
        _ => {}
    }
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

fn reads_path(operand: &Operand) -> bool {
    match operand {
        Operand::Path(_) => true,
        Operand::Arith(_, a, b) => reads_path(a) || reads_path(b),
        Operand::Var(_) | Operand::Const(_) => false,
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
