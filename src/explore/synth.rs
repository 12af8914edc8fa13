//! Synthesizing records: for an event of a spec, normalized records that match that
//! event's pattern and no other event of the spec.
//!
//! A pattern (its kind, its tool and its guard) is turned into a disjunction of
//! conjunctions of literal tests on record paths (negations pushed down to the
//! leaves). Each conjunction is solved on its own: every path a positive test mentions
//! gets the first candidate value that passes every test on that path (literals from
//! `==` and `in`, a value of the type `is` asks for, a string generated from a
//! `matches` regex, a number just past a bound); paths only negative tests mention
//! stay absent, which is what a negative test accepts. Nothing is trusted: every
//! candidate record is checked with the compiled matchers, and kept only when exactly
//! its event matches.

use std::collections::BTreeMap;

use regex::Regex;
use regex_syntax::hir::{Class, Hir, HirKind};
use serde_json::{Map, Value, json};

use crate::json::{json_cmp, json_eq};
use crate::machine::{EventId, Guard, Machine, Matcher, ToolMatcher};
use crate::spec::ast::{CompareOp, JsonType, PatternKind, Segment};
use crate::trace::record::RecordError;
use crate::trace::{Fields, Location, Record};

/// The most alternatives a disjunction is expanded to; the rest are not tried.
const MAX_ALTERNATIVES: usize = 256;
/// The most strings generated from one regex.
const MAX_STRINGS: usize = 16;

/// The statuses a record may carry, most natural first. `missing` is last: the checker
/// synthesizes it for a call that gets no reply, so in a real trace it appears only at
/// the end.
const STATUSES: [&str; 4] = ["ok", "error", "invalid", "missing"];

/// A normalized record as plain JSON fields, before it is written in some format.
pub type JsonRecord = Map<String, Value>;

#[derive(Debug, Clone)]
enum Test<'m> {
    Eq(Value),
    Cmp(CompareOp, Value),
    In(Vec<Value>),
    Matches(&'m Regex),
    Has,
    Is(JsonType),
    Tool(&'m ToolMatcher),
}

#[derive(Debug, Clone)]
struct Lit<'m> {
    path: Vec<Segment>,
    test: Test<'m>,
    positive: bool,
}

impl Lit<'_> {
    fn holds(&self, value: Option<&Value>) -> bool {
        let result = match (&self.test, value) {
            (Test::Has, found) => found.is_some(),
            (_, None) => false,
            (Test::Eq(want), Some(have)) => json_eq(have, want),
            (Test::Cmp(op, bound), Some(have)) => {
                let order = json_cmp(have, bound);
                match op {
                    CompareOp::Lt => order == Some(std::cmp::Ordering::Less),
                    CompareOp::Le => order.is_some_and(|o| o.is_le()),
                    CompareOp::Gt => order == Some(std::cmp::Ordering::Greater),
                    CompareOp::Ge => order.is_some_and(|o| o.is_ge()),
                    CompareOp::Eq => json_eq(have, bound),
                    CompareOp::Ne => !json_eq(have, bound),
                }
            }
            (Test::In(values), Some(have)) => values.iter().any(|v| json_eq(have, v)),
            (Test::Matches(regex), Some(have)) => have.as_str().is_some_and(|s| regex.is_match(s)),
            (Test::Is(ty), Some(have)) => JsonType::of(have) == *ty,
            (Test::Tool(tool), Some(have)) => have.as_str().is_some_and(|s| tool.matches(s)),
        };
        result == self.positive
    }
}

type Conj<'m> = Vec<Lit<'m>>;

fn key(name: &str) -> Vec<Segment> {
    vec![Segment::Key(name.to_string())]
}

fn lit<'m>(path: &[Segment], test: Test<'m>, positive: bool) -> Vec<Conj<'m>> {
    vec![vec![Lit {
        path: path.to_vec(),
        test,
        positive,
    }]]
}

/// The conjunctions whose union is `guard` (or its negation).
fn guard_dnf(guard: &Guard, positive: bool) -> Vec<Conj<'_>> {
    match (guard, positive) {
        (Guard::Or(a, b), true) | (Guard::And(a, b), false) => {
            let mut alternatives = guard_dnf(a, positive);
            alternatives.extend(guard_dnf(b, positive));
            alternatives.truncate(MAX_ALTERNATIVES);
            alternatives
        }
        (Guard::And(a, b), true) | (Guard::Or(a, b), false) => {
            product(guard_dnf(a, positive), &guard_dnf(b, positive))
        }
        (Guard::Not(inner), _) => guard_dnf(inner, !positive),
        // `!=` is exactly the negation of `==`, missing paths included.
        (Guard::Compare { path, op, value }, _) => match op {
            CompareOp::Eq => lit(path, Test::Eq(value.clone()), positive),
            CompareOp::Ne => lit(path, Test::Eq(value.clone()), !positive),
            op => lit(path, Test::Cmp(*op, value.clone()), positive),
        },
        (Guard::In { path, values }, _) => lit(path, Test::In(values.clone()), positive),
        (Guard::Matches { path, regex }, _) => lit(path, Test::Matches(regex), positive),
        (Guard::Has(path), _) => lit(path, Test::Has, positive),
        (Guard::Is(path, ty), _) => lit(path, Test::Is(*ty), positive),
        // Tests on variables, provenance and secrets depend on more than the record:
        // no constraint here; the candidate is checked against the compiled pattern.
        (
            Guard::Relation { .. }
            | Guard::HasVar(_)
            | Guard::VarTest(..)
            | Guard::Provenance { .. }
            | Guard::Secret(_),
            _,
        ) => vec![Vec::new()],
    }
}

/// Every conjunction of one of `a` with one of `b`, dropping the contradictory ones.
fn product<'m>(a: Vec<Conj<'m>>, b: &[Conj<'m>]) -> Vec<Conj<'m>> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            let mut both = x.clone();
            both.extend(y.iter().cloned());
            if consistent(&both) {
                out.push(both);
                if out.len() == MAX_ALTERNATIVES {
                    return out;
                }
            }
        }
    }
    out
}

/// A cheap contradiction check: a path pinned by a positive `==` must pass every other
/// test on that path.
fn consistent(conj: &Conj<'_>) -> bool {
    conj.iter().all(|pin| match (&pin.test, pin.positive) {
        (Test::Eq(value), true) => conj
            .iter()
            .filter(|other| other.path == pin.path)
            .all(|other| other.holds(Some(value))),
        _ => true,
    })
}

fn kind_name(kind: PatternKind) -> Option<&'static str> {
    match kind {
        PatternKind::Call => Some("call"),
        PatternKind::Result => Some("result"),
        PatternKind::Message => Some("message"),
        PatternKind::Record => None,
    }
}

/// The conjunctions whose union is the set of records `matcher` matches (or, with
/// `positive == false`, does not match). `None` for a negation that nothing satisfies.
fn pattern_dnf(matcher: &Matcher, positive: bool) -> Vec<Conj<'_>> {
    let kind = kind_name(matcher.kind).map(|k| Lit {
        path: key("kind"),
        test: Test::Eq(Value::String(k.to_string())),
        positive,
    });
    let tool = matcher.tool.as_ref().map(|tool| Lit {
        path: key("tool"),
        test: Test::Tool(tool),
        positive,
    });
    if positive {
        let base: Conj<'_> = kind.into_iter().chain(tool).collect();
        match &matcher.guard {
            Some(guard) => product(vec![base], &guard_dnf(guard, true)),
            None => vec![base],
        }
    } else {
        let mut alternatives: Vec<Conj<'_>> =
            kind.into_iter().chain(tool).map(|lit| vec![lit]).collect();
        if let Some(guard) = &matcher.guard {
            alternatives.extend(guard_dnf(guard, false));
        }
        alternatives
    }
}

/// A normalized record as the checker would see it: `fields`, plus the `args` a result
/// inherits from its call when it has none of its own.
pub fn as_record(
    fields: &JsonRecord,
    inherited_args: Option<&Value>,
) -> Result<Record<'static>, RecordError> {
    let mut record = Record::new(Fields::Owned(fields.clone()), Location::default())?;
    if !fields.contains_key("args") {
        record.inherited_args = inherited_args.map(|args| args.to_string().into());
    }
    Ok(record)
}

/// The events of `machine` a record matches, or why it is not a record.
pub fn classify(
    machine: &Machine,
    fields: &JsonRecord,
    inherited_args: Option<&Value>,
) -> Result<Vec<EventId>, RecordError> {
    Ok(machine.classify(&as_record(fields, inherited_args)?))
}

/// Records that match exactly `event` of `machine` (no other event), most natural
/// first, each accepted by `accept` (what the output format can express). Empty when
/// none could be found.
pub fn records_for(
    machine: &Machine,
    event: EventId,
    accept: &dyn Fn(&JsonRecord) -> bool,
) -> Vec<JsonRecord> {
    let name = &machine.events[event].name;
    let mut found: Vec<JsonRecord> = Vec::new();
    for conj in pattern_dnf(&machine.events[event].matcher, true) {
        for defaults in [Defaults::All, Defaults::Unmentioned, Defaults::None] {
            let Some(fields) = solve(&conj, name, defaults) else {
                continue;
            };
            if found.contains(&fields) || !accept(&fields) {
                continue;
            }
            // Which event a record is may depend on what the instance has bound; such
            // templates are fitted and classified in context when they are placed.
            let fits = if machine.is_contextual() {
                shape_matches(&machine.events[event].matcher, &fields)
            } else {
                classify(machine, &fields, None).is_ok_and(|events| events == [event])
            };
            if fits {
                found.push(fields);
            }
        }
    }
    // A literal `missing` status reads like the checker's own synthesized result; use
    // it only when nothing else satisfies the event.
    found.sort_by_key(|fields| fields.get("status") == Some(&json!("missing")));
    found
}

/// Whether `fields` has the kind and tool `matcher` asks for (its guard aside).
fn shape_matches(matcher: &Matcher, fields: &JsonRecord) -> bool {
    let kind = fields.get("kind").and_then(Value::as_str);
    let kind_ok = match matcher.kind {
        PatternKind::Record => true,
        other => kind_name(other) == kind,
    };
    let tool_ok = matcher.tool.as_ref().is_none_or(|tool| {
        fields
            .get("tool")
            .and_then(Value::as_str)
            .is_some_and(|name| tool.matches(name))
    });
    kind_ok && tool_ok
}

/// A result for `tool` that matches no event of `machine`, for closing a call nothing
/// in the path answers. `inherited_args` are the call's arguments.
pub fn neutral_result(
    machine: &Machine,
    tool: &str,
    call_id: &str,
    inherited_args: Option<&Value>,
    accept: &dyn Fn(&JsonRecord) -> bool,
) -> Option<JsonRecord> {
    let base = vec![vec![
        Lit {
            path: key("kind"),
            test: Test::Eq(json!("result")),
            positive: true,
        },
        Lit {
            path: key("tool"),
            test: Test::Eq(json!(tool)),
            positive: true,
        },
    ]];
    let mut alternatives = base;
    for event in &machine.events {
        alternatives = product(alternatives, &pattern_dnf(&event.matcher, false));
    }
    for conj in alternatives {
        for defaults in [Defaults::All, Defaults::Unmentioned, Defaults::None] {
            let Some(mut fields) = solve(&conj, "result", defaults) else {
                continue;
            };
            fields.insert("call_id".into(), json!(call_id));
            if accept(&fields)
                && classify(machine, &fields, inherited_args).is_ok_and(|events| events.is_empty())
            {
                return Some(fields);
            }
        }
    }
    None
}

/// Which fields a real record of its kind would have are added where no test pins them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Defaults {
    /// Every such field the tests on the field itself allow.
    All,
    /// Only fields no test mentions at all (not even below them).
    Unmentioned,
    None,
}

/// A result for `tool` answering call `call_id` that matches at most one event, for
/// closing a call after the trace's violation (when the instance has stopped, what the
/// reply matches no longer matters, as long as it is not ambiguous).
pub fn any_result(
    machine: &Machine,
    tool: &str,
    call_id: &str,
    inherited_args: Option<&Value>,
    accept: &dyn Fn(&JsonRecord) -> bool,
) -> Option<JsonRecord> {
    (0..machine.events.len())
        .filter(|&event| {
            let matcher = &machine.events[event].matcher;
            matches!(matcher.kind, PatternKind::Result | PatternKind::Record)
                && matcher.tool.as_ref().is_none_or(|t| t.matches(tool))
        })
        .flat_map(|event| records_for(machine, event, accept))
        .map(|mut fields| {
            fields.insert("tool".into(), json!(tool));
            fields.insert("call_id".into(), json!(call_id));
            fields.remove("args");
            fields
        })
        .find(|fields| {
            accept(fields)
                && classify(machine, fields, inherited_args).is_ok_and(|events| events.len() <= 1)
        })
}

/// Builds the record one conjunction describes; `None` when some path has no value
/// that passes all its tests. `hint` (the event's name) is tried first as a tool name.
fn solve(conj: &Conj<'_>, hint: &str, defaults: Defaults) -> Option<JsonRecord> {
    let mut by_path: BTreeMap<&[Segment], Vec<&Lit<'_>>> = BTreeMap::new();
    for lit in conj {
        by_path.entry(&lit.path).or_default().push(lit);
    }
    let positive: Vec<&[Segment]> = by_path
        .iter()
        .filter(|(_, lits)| lits.iter().any(|lit| lit.positive))
        .map(|(path, _)| *path)
        .collect();
    let mut record = Value::Object(Map::new());
    for &path in &positive {
        // A path some longer positive path extends becomes that path's container.
        if positive
            .iter()
            .any(|&other| other.len() > path.len() && other.starts_with(path))
        {
            continue;
        }
        let lits = &by_path[path];
        let value = candidates(path, lits, hint)
            .into_iter()
            .find(|value| lits.iter().all(|lit| lit.holds(Some(value))))?;
        if !set_path(&mut record, path, value) {
            return None;
        }
    }
    let Value::Object(mut fields) = record else {
        unreachable!("a record is an object")
    };
    if defaults != Defaults::None {
        add_defaults(&mut fields, &by_path, defaults == Defaults::All);
    }
    Some(fields)
}

/// Fields a real record of its kind would have, where no test asks for or against them:
/// a call's `args`, a result's `status` and its `output` or `error`, a message's `role`
/// and `text`.
fn add_defaults(fields: &mut JsonRecord, by_path: &BTreeMap<&[Segment], Vec<&Lit<'_>>>, all: bool) {
    let mentioned = |name: &str| {
        !all && by_path
            .keys()
            .any(|path| path.first() == Some(&Segment::Key(name.to_string())))
    };
    let add = |fields: &mut JsonRecord, name: &str, choices: &[Value]| {
        if fields.contains_key(name) {
            return;
        }
        let path = key(name);
        let lits = by_path.get(path.as_slice()).map_or(&[][..], Vec::as_slice);
        // Only the tests on the field itself can veto a default; tests on paths below
        // it are checked when the record is verified.
        if let Some(value) = choices
            .iter()
            .find(|value| lits.iter().all(|lit| lit.holds(Some(value))))
        {
            fields.insert(name.to_string(), value.clone());
        }
    };
    match fields.get("kind").and_then(Value::as_str) {
        Some("call") if !mentioned("args") => add(fields, "args", &[json!({})]),
        Some("result") => {
            let statuses: Vec<Value> = STATUSES.iter().map(|s| json!(s)).collect();
            add(fields, "status", &statuses);
            match fields.get("status").and_then(Value::as_str) {
                Some("ok") if !mentioned("output") => add(fields, "output", &[json!({})]),
                Some("error") if !mentioned("error") => {
                    add(fields, "error", &[json!({"message": "failed"})]);
                }
                _ => {}
            }
        }
        Some("message") => {
            add(fields, "role", &[json!("assistant"), json!("user")]);
            add(fields, "text", &[json!("ok"), json!("")]);
        }
        _ => {}
    }
}

/// Sets `path` in `record` to `value`, creating objects and arrays on the way; `false`
/// when something already there is in the way.
pub fn set_path(record: &mut Value, path: &[Segment], value: Value) -> bool {
    let Some((last, parents)) = path.split_last() else {
        *record = value;
        return true;
    };
    let mut at = record;
    for (i, segment) in parents.iter().enumerate() {
        let next_is_index = matches!(path[i + 1], Segment::Index(_));
        let empty = || {
            if next_is_index {
                Value::Array(Vec::new())
            } else {
                Value::Object(Map::new())
            }
        };
        at = match (at, segment) {
            (Value::Object(map), Segment::Key(key)) => map.entry(key.clone()).or_insert_with(empty),
            (Value::Array(items), Segment::Index(index)) => {
                if items.len() <= *index {
                    items.resize(*index + 1, Value::Null);
                }
                if items[*index].is_null() {
                    items[*index] = empty();
                }
                &mut items[*index]
            }
            _ => return false,
        };
    }
    match (at, last) {
        (Value::Object(map), Segment::Key(key)) => {
            map.insert(key.clone(), value);
            true
        }
        (Value::Array(items), Segment::Index(index)) => {
            if items.len() <= *index {
                items.resize(*index + 1, Value::Null);
            }
            items[*index] = value;
            true
        }
        _ => false,
    }
}

/// Candidate values for `path`, from its positive tests first, then generic ones.
fn candidates(path: &[Segment], lits: &[&Lit<'_>], hint: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let canonical = match path {
        [Segment::Key(name)] => Some(name.as_str()),
        _ => None,
    };
    for lit in lits.iter().filter(|lit| lit.positive) {
        match &lit.test {
            Test::Eq(value) => out.push(value.clone()),
            Test::In(values) => out.extend(values.iter().cloned()),
            Test::Is(ty) => out.push(typed(*ty)),
            Test::Cmp(op, bound) => out.extend(past(*op, bound)),
            Test::Matches(regex) => {
                out.extend(regex_strings(regex.as_str()).into_iter().map(Value::String))
            }
            Test::Tool(ToolMatcher::Name(name)) => out.push(json!(name)),
            // A tool pattern admits many names: the event's own name reads best, else a
            // generated name, completed with the event's name where the pattern allows
            // (`create_` + `write`).
            Test::Tool(ToolMatcher::Pattern(regex)) => {
                out.push(json!(hint));
                for text in regex_strings(regex.as_str()) {
                    if !text.is_empty() {
                        out.push(json!(format!("{text}{hint}")));
                        out.push(json!(text));
                    }
                }
            }
            Test::Has => {}
        }
    }
    match canonical {
        Some("status") => out.extend(STATUSES.iter().map(|s| json!(s))),
        Some("kind") => out.extend(["call", "result", "message"].map(|k| json!(k))),
        Some("tool") => out.extend([json!(hint), json!("tool")]),
        _ => {}
    }
    let name = last_key(path).unwrap_or("value");
    out.extend([
        json!(format!("{name}-1")),
        json!(1),
        json!(true),
        json!({}),
        json!([]),
        Value::Null,
    ]);
    // Canonical fields must have the types the reader requires.
    out.retain(|value| match canonical {
        Some("kind") => value
            .as_str()
            .is_some_and(|k| ["call", "result", "message"].contains(&k)),
        Some("status") => value.as_str().is_some_and(|s| STATUSES.contains(&s)),
        Some("tool" | "role" | "text") => value.is_string(),
        Some("call_id") => value.is_string() || value.is_i64() || value.is_u64(),
        _ => true,
    });
    let mut unique: Vec<Value> = Vec::new();
    for value in out {
        if !unique.contains(&value) {
            unique.push(value);
        }
    }
    unique
}

fn typed(ty: JsonType) -> Value {
    match ty {
        JsonType::Null => Value::Null,
        JsonType::Bool => json!(true),
        JsonType::Number => json!(1),
        JsonType::String => json!("text"),
        JsonType::Array => json!([]),
        JsonType::Object => json!({}),
    }
}

/// Values on the right side of an ordering bound.
fn past(op: CompareOp, bound: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    if matches!(op, CompareOp::Le | CompareOp::Ge) {
        out.push(bound.clone());
    }
    let up = matches!(op, CompareOp::Gt | CompareOp::Ge);
    match bound {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push(json!(if up {
                    i.saturating_add(1)
                } else {
                    i.saturating_sub(1)
                }));
            }
            if let Some(f) = n.as_f64() {
                out.push(json!(if up { f + 1.0 } else { f - 1.0 }));
                out.push(json!(if up { f + 0.5 } else { f - 0.5 }));
            }
        }
        Value::String(s) => {
            if up {
                out.push(json!(format!("{s}z")));
            } else {
                out.push(json!(""));
                let mut shorter = s.clone();
                shorter.pop();
                out.push(json!(shorter));
            }
        }
        _ => {}
    }
    out
}

/// Short strings the regex `pattern` matches (some candidates may not: look-arounds
/// are ignored while generating, so every candidate is checked against the regex).
pub fn regex_strings(pattern: &str) -> Vec<String> {
    let Ok(hir) = regex_syntax::Parser::new().parse(pattern) else {
        return Vec::new();
    };
    let Ok(regex) = Regex::new(pattern) else {
        return Vec::new();
    };
    let mut strings = generate(&hir);
    strings.retain(|s| regex.is_match(s));
    strings
}

fn generate(hir: &Hir) -> Vec<String> {
    let mut out = match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => vec![String::new()],
        HirKind::Literal(literal) => vec![String::from_utf8_lossy(&literal.0).into_owned()],
        HirKind::Class(class) => class_chars(class).into_iter().map(String::from).collect(),
        HirKind::Capture(capture) => generate(&capture.sub),
        HirKind::Repetition(repetition) => {
            let sub = generate(&repetition.sub);
            let mut out = Vec::new();
            let counts = [repetition.min, repetition.min.max(1)];
            for count in counts {
                if repetition.max.is_some_and(|max| count > max) {
                    continue;
                }
                for s in &sub {
                    out.push(s.repeat(count as usize));
                }
            }
            out
        }
        HirKind::Concat(parts) => {
            let mut acc = vec![String::new()];
            for part in parts {
                let next = generate(part);
                let mut joined = Vec::new();
                for prefix in &acc {
                    for suffix in &next {
                        joined.push(format!("{prefix}{suffix}"));
                        if joined.len() == MAX_STRINGS {
                            break;
                        }
                    }
                }
                acc = joined;
            }
            acc
        }
        HirKind::Alternation(branches) => branches.iter().flat_map(generate).collect(),
    };
    let mut unique = Vec::new();
    for s in out.drain(..) {
        if !unique.contains(&s) {
            unique.push(s);
        }
        if unique.len() == MAX_STRINGS {
            break;
        }
    }
    unique
}

/// One or two readable characters of a class: lowercase letters, digits and common
/// punctuation first, else the first characters the class holds.
fn class_chars(class: &Class) -> Vec<char> {
    const PREFERRED: &str = "abcdefghijklmnopqrstuvwxyz0123456789., _-:/ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let contains = |c: char| match class {
        Class::Unicode(u) => u.ranges().iter().any(|r| r.start() <= c && c <= r.end()),
        Class::Bytes(b) => {
            c.is_ascii()
                && b.ranges()
                    .iter()
                    .any(|r| r.start() <= c as u8 && c as u8 <= r.end())
        }
    };
    let mut chars: Vec<char> = PREFERRED.chars().filter(|&c| contains(c)).take(2).collect();
    if chars.is_empty() {
        match class {
            Class::Unicode(u) => chars.extend(u.ranges().first().map(|r| r.start())),
            Class::Bytes(b) => chars.extend(
                b.ranges()
                    .first()
                    .filter(|r| r.start().is_ascii())
                    .map(|r| r.start() as char),
            ),
        }
    }
    chars
}

/// The last field name in a path (`id` in `output.items[0].id`), to name a made-up
/// value after.
pub(super) fn last_key(path: &[Segment]) -> Option<&str> {
    path.iter().rev().find_map(|segment| match segment {
        Segment::Key(key) => Some(key.as_str()),
        Segment::Index(_) => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regex_strings_match_their_regex() {
        for pattern in [
            "^(create|update)_",
            r"^\W*(no|nope|stop|cancel( that| it)?)\s*([,.!;:\u2014\u2013-]|$)|\b(don.t|do not)\s+(do|run)\b",
            "^[0-9]{3}-[a-z]+$",
            "(?i)^x",
        ] {
            let strings = regex_strings(pattern);
            assert!(!strings.is_empty(), "{pattern}");
            let regex = Regex::new(pattern).unwrap();
            assert!(
                strings.iter().all(|s| regex.is_match(s)),
                "{pattern}: {strings:?}"
            );
        }
        assert_eq!(regex_strings("^(create|update)_")[0], "create_");
    }

    #[test]
    fn set_path_builds_nested_values() {
        let mut record = json!({});
        assert!(set_path(
            &mut record,
            &[
                Segment::Key("output".into()),
                Segment::Key("items".into()),
                Segment::Index(1)
            ],
            json!(5)
        ));
        assert_eq!(record, json!({"output": {"items": [null, 5]}}));
        assert!(!set_path(
            &mut record,
            &[Segment::Key("output".into()), Segment::Index(0)],
            json!(1)
        ));
    }
}
