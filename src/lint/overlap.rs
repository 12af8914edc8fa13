//! Event patterns that can claim the same record (`overlapping-patterns`).
//!
//! Deciding this in general is deciding whether two guards can both hold, which the
//! analyzer does not attempt (it rejects only the certain case: a pattern with no guard
//! that covers another). Here the question is answered by construction: from the
//! literals, regexes and types the two patterns mention, candidate records are built and
//! run through the real compiled matchers. A warning is given only with a record that
//! both patterns match, so it is never a false alarm; an overlap the candidates miss
//! is still caught at run time as `ambiguous-event`.

use std::cmp::Ordering;
use std::collections::HashMap;

use regex::RegexBuilder;
use regex_syntax::hir::{Class, Hir, HirKind};
use serde_json::{Map, Number, Value};

use super::Linted;
use crate::diagnostic::Code;
use crate::json::{json_cmp, json_eq};
use crate::machine::{Matcher, ToolMatcher};
use crate::spec::SpecFinding;
use crate::spec::analyzer::glob_to_regex;
use crate::spec::ast::{
    CompareOp, EventDecl, Expr, ItemKind, JsonType, Pattern, PatternKind, RegexLit, Segment,
    ToolPattern,
};
use crate::trace::{Fields, Location, Record};

/// Guards with more disjuncts than this (after pushing `not` inwards) are not examined.
const MAX_CLAUSES: usize = 64;
/// The most sample strings drawn from one regex (or one part of it).
const MAX_SAMPLES: usize = 16;
/// The most pairs of disjuncts tried for one pair of events, to bound the work on
/// large specs.
const MAX_PAIRS: usize = 1024;

pub(crate) fn overlapping_patterns(spec: &Linted<'_>, found: &mut Vec<SpecFinding>) {
    let decls: Vec<&EventDecl> = spec
        .file
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Event(decl) => Some(decl),
            _ => None,
        })
        .collect();
    let mut by_name: HashMap<&str, &Matcher> = HashMap::new();
    for event in &spec.machine.events {
        by_name.entry(event.name.as_str()).or_insert(&event.matcher);
    }
    let matchers: Vec<&Matcher> = decls
        .iter()
        .map(|decl| {
            *by_name
                .get(decl.name.name.as_str())
                .expect("bug: every declared event of a compiled spec is in its machine")
        })
        .collect();
    // Two events that each name one tool exactly, and not the same one, can never claim
    // the same record; only the others are paired, so a spec of thousands of events that
    // each name their own tool is not examined pair by pair.
    let mut named: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut open: Vec<usize> = Vec::new();
    for (j, matcher) in matchers.iter().enumerate() {
        match &matcher.tool {
            Some(ToolMatcher::Name(name)) => named.entry(name.as_str()).or_default().push(j),
            _ => open.push(j),
        }
    }
    for (j, b) in decls.iter().enumerate() {
        let candidates: Vec<usize> = match &matchers[j].tool {
            Some(ToolMatcher::Name(name)) => {
                let same = named.get(name.as_str()).map_or(&[][..], Vec::as_slice);
                let mut both: Vec<usize> = same
                    .iter()
                    .chain(&open)
                    .copied()
                    .filter(|&i| i < j)
                    .collect();
                both.sort_unstable();
                both
            }
            _ => (0..j).collect(),
        };
        for i in candidates {
            let a = decls[i];
            let Some(record) = witness(&a.pattern, &b.pattern, matchers[i], matchers[j]) else {
                continue;
            };
            found.push(
                SpecFinding::new(
                    Code::OverlappingPatterns,
                    b.name.span,
                    format!(
                        "events `{}` and `{}` can claim the same record",
                        a.name.name, b.name.name
                    ),
                )
                .with_related(a.name.span, "the other event")
                .with_hint(format!(
                    "both match {}, which would be an `ambiguous-event`; make the patterns exclusive with `where`",
                    show(&record)
                )),
            );
        }
    }
}

/// A record as compact JSON with `kind` and `tool` first, as people write them.
fn show(record: &Map<String, Value>) -> String {
    let mut parts = Vec::new();
    for key in ["kind", "tool"] {
        if let Some(value) = record.get(key) {
            parts.push(format!("{}:{value}", Value::String(key.into())));
        }
    }
    for (key, value) in record {
        if key != "kind" && key != "tool" {
            parts.push(format!("{}:{value}", Value::String(key.clone())));
        }
    }
    format!("`{{{}}}`", parts.join(","))
}

/// One test in a guard, and whether it must hold (`true`) or fail (`false`).
type Atom<'e> = (&'e Expr, bool);
/// A conjunction of atoms; a guard is an `or` of these.
type Clause<'e> = Vec<Atom<'e>>;

/// The guard as a disjunction of conjunctions, with `not` pushed onto the tests.
/// `None` when it has more than [`MAX_CLAUSES`] disjuncts.
fn dnf(expr: &Expr, positive: bool) -> Option<Vec<Clause<'_>>> {
    let clauses = match expr {
        Expr::Group(inner, _) => return dnf(inner, positive),
        Expr::Not(inner, _) => return dnf(inner, !positive),
        Expr::Or(a, b) | Expr::And(a, b) => {
            let (left, right) = (dnf(a, positive)?, dnf(b, positive)?);
            // `a or b` is a union of clauses; so is `not (a and b)`.
            if matches!(expr, Expr::Or(..)) == positive {
                left.into_iter().chain(right).collect()
            } else {
                let mut product = Vec::new();
                for l in &left {
                    for r in &right {
                        product.push(l.iter().chain(r).copied().collect());
                        if product.len() > MAX_CLAUSES {
                            return None;
                        }
                    }
                }
                product
            }
        }
        leaf => vec![vec![(leaf, positive)]],
    };
    (clauses.len() <= MAX_CLAUSES).then_some(clauses)
}

fn clauses(pattern: &Pattern) -> Option<Vec<Clause<'_>>> {
    match &pattern.guard {
        None => Some(vec![Vec::new()]),
        Some(guard) => dnf(guard, true),
    }
}

fn leaf_path(leaf: &Expr) -> Option<&[Segment]> {
    match leaf {
        Expr::Compare { path, .. }
        | Expr::In { path, .. }
        | Expr::Matches { path, .. }
        | Expr::Has { path, .. }
        | Expr::Is { path, .. } => Some(&path.segments),
        _ => None,
    }
}

/// Whether `leaf` holds of a value (`None`: the path is missing), with the same
/// semantics as the checker's guards.
fn holds(leaf: &Expr, value: Option<&Value>) -> bool {
    match leaf {
        Expr::Compare { op, value: lit, .. } => {
            let Some(actual) = value else {
                return *op == CompareOp::Ne;
            };
            match op {
                CompareOp::Eq => json_eq(actual, &lit.value),
                CompareOp::Ne => !json_eq(actual, &lit.value),
                CompareOp::Lt => json_cmp(actual, &lit.value) == Some(Ordering::Less),
                CompareOp::Le => matches!(
                    json_cmp(actual, &lit.value),
                    Some(Ordering::Less | Ordering::Equal)
                ),
                CompareOp::Gt => json_cmp(actual, &lit.value) == Some(Ordering::Greater),
                CompareOp::Ge => matches!(
                    json_cmp(actual, &lit.value),
                    Some(Ordering::Greater | Ordering::Equal)
                ),
            }
        }
        Expr::In { values, .. } => {
            value.is_some_and(|actual| values.iter().any(|v| json_eq(actual, &v.value)))
        }
        Expr::Matches { regex, .. } => value
            .and_then(Value::as_str)
            .is_some_and(|text| compile(regex).is_some_and(|re| re.is_match(text))),
        Expr::Has { .. } => value.is_some(),
        Expr::Is { ty, .. } => value.is_some_and(|actual| JsonType::of(actual) == *ty),
        _ => false,
    }
}

fn compile(regex: &RegexLit) -> Option<regex::Regex> {
    RegexBuilder::new(&regex.pattern)
        .case_insensitive(regex.case_insensitive)
        .size_limit(1 << 20)
        .build()
        .ok()
}

/// A record that both patterns match, if the candidates find one.
fn witness(a: &Pattern, b: &Pattern, ma: &Matcher, mb: &Matcher) -> Option<Map<String, Value>> {
    let kinds = kinds(a.kind, b.kind)?;
    let tools = tools(a, b, ma, mb);
    if tools.is_empty() {
        return None;
    }
    let (left, right) = (clauses(a)?, clauses(b)?);
    let pairs = left.iter().flat_map(|l| right.iter().map(move |r| (l, r)));
    for (l, r) in pairs.take(MAX_PAIRS) {
        let clause: Clause<'_> = l.iter().chain(r).copied().collect();
        let Some(record) = build(&clause, &kinds, &tools) else {
            continue;
        };
        let Ok(candidate) = Record::new(Fields::Owned(record.clone()), Location::default()) else {
            continue;
        };
        if ma.matches(&candidate) && mb.matches(&candidate) {
            return Some(record);
        }
    }
    None
}

/// The `kind` values a record matched by both patterns may have (`None`: no kind).
fn kinds(a: PatternKind, b: PatternKind) -> Option<Vec<Option<Value>>> {
    let name = |kind: PatternKind| Some(Value::String(kind.keyword().to_string()));
    match (a, b) {
        (PatternKind::Record, PatternKind::Record) => Some(vec![
            None,
            name(PatternKind::Call),
            name(PatternKind::Result),
            name(PatternKind::Message),
        ]),
        (PatternKind::Record, other) | (other, PatternKind::Record) => Some(vec![name(other)]),
        (x, y) if x == y => Some(vec![name(x)]),
        _ => None,
    }
}

/// Tool names both patterns' tool matchers accept, drawn from the names, globs and
/// regexes they mention (`None`: no tool, when neither names one).
fn tools(a: &Pattern, b: &Pattern, ma: &Matcher, mb: &Matcher) -> Vec<Option<Value>> {
    let mut names: Vec<String> = Vec::new();
    for pattern in [a, b] {
        match &pattern.tool {
            Some(ToolPattern::Name(name, _)) => names.push(name.clone()),
            Some(ToolPattern::Glob(glob, _)) => {
                names.extend(samples_of(&glob_to_regex(glob), false))
            }
            Some(ToolPattern::Regex(re)) => {
                names.extend(samples_of(&re.pattern, re.case_insensitive))
            }
            None => {}
        }
        if let Some(guard) = &pattern.guard {
            collect_strings(guard, &[Segment::Key("tool".into())], &mut names);
        }
    }
    names.push("some_tool".to_string());
    let accepts = |m: &Matcher, name: &str| m.tool.as_ref().is_none_or(|t| t.matches(name));
    let mut tools: Vec<Option<Value>> = Vec::new();
    if ma.tool.is_none() && mb.tool.is_none() {
        tools.push(None);
    }
    for name in names {
        let value = Some(Value::String(name.clone()));
        if accepts(ma, &name) && accepts(mb, &name) && !tools.contains(&value) {
            tools.push(value);
        }
    }
    tools
}

/// String literals and regex samples the guard tests `path` against.
fn collect_strings(expr: &Expr, path: &[Segment], out: &mut Vec<String>) {
    match expr {
        Expr::Or(a, b) | Expr::And(a, b) => {
            collect_strings(a, path, out);
            collect_strings(b, path, out);
        }
        Expr::Not(inner, _) | Expr::Group(inner, _) => collect_strings(inner, path, out),
        leaf if leaf_path(leaf) == Some(path) => match leaf {
            Expr::Compare { value, .. } => out.extend(value.value.as_str().map(str::to_string)),
            Expr::In { values, .. } => out.extend(
                values
                    .iter()
                    .filter_map(|v| v.value.as_str().map(str::to_string)),
            ),
            Expr::Matches { regex, .. } => {
                out.extend(samples_of(&regex.pattern, regex.case_insensitive))
            }
            _ => {}
        },
        _ => {}
    }
}

/// Builds a record in which every atom of `clause` holds, choosing each path's value
/// from candidates; `None` if some path has no value that satisfies its atoms.
fn build(
    clause: &Clause<'_>,
    kinds: &[Option<Value>],
    tools: &[Option<Value>],
) -> Option<Map<String, Value>> {
    let mut paths: Vec<Vec<Segment>> = vec![
        vec![Segment::Key("kind".into())],
        vec![Segment::Key("tool".into())],
    ];
    for (leaf, _) in clause {
        let path = leaf_path(leaf)?;
        if !paths.iter().any(|p| p == path) {
            paths.push(path.to_vec());
        }
    }
    // Deeper paths first: a shorter path then sees the object its longer ones made.
    paths[2..].sort_by_key(|path| std::cmp::Reverse(path.len()));
    paths.rotate_left(2);

    let mut root = Value::Object(Map::new());
    for path in &paths {
        let atoms: Vec<Atom<'_>> = clause
            .iter()
            .copied()
            .filter(|(leaf, _)| leaf_path(leaf) == Some(path.as_slice()))
            .collect();
        let existing = get(&root, path).cloned();
        let candidates: Vec<Option<Value>> = match (existing, path.as_slice()) {
            (Some(value), _) => vec![Some(value)],
            (None, [Segment::Key(key)]) if key == "kind" => kinds.to_vec(),
            (None, [Segment::Key(key)]) if key == "tool" => tools.to_vec(),
            (None, _) => candidates(path, &atoms),
        };
        let chosen = candidates.into_iter().find(|candidate| {
            atoms
                .iter()
                .all(|&(leaf, positive)| holds(leaf, candidate.as_ref()) == positive)
        })?;
        if let Some(value) = chosen {
            set(&mut root, path, value)?;
        }
    }
    match root {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// Values worth trying for a path: missing, the literals it is compared with and their
/// neighbours, strings its regexes match, and one value of each JSON type.
fn candidates(path: &[Segment], atoms: &[Atom<'_>]) -> Vec<Option<Value>> {
    let mut out: Vec<Option<Value>> = vec![None];
    let push = |value: Value, out: &mut Vec<Option<Value>>| {
        if !out.iter().flatten().any(|v| v == &value) {
            out.push(Some(value));
        }
    };
    if let [Segment::Key(key)] = path {
        if key == "status" {
            for status in ["ok", "error", "invalid", "missing"] {
                push(Value::String(status.into()), &mut out);
            }
        }
    }
    let mut derived = Vec::new();
    for (leaf, _) in atoms {
        let literals: Vec<&Value> = match leaf {
            Expr::Compare { value, .. } => vec![&value.value],
            Expr::In { values, .. } => values.iter().map(|v| &v.value).collect(),
            Expr::Matches { regex, .. } => {
                for sample in samples_of(&regex.pattern, regex.case_insensitive) {
                    derived.push(Value::String(sample));
                }
                Vec::new()
            }
            _ => Vec::new(),
        };
        for literal in literals {
            push(literal.clone(), &mut out);
            match literal {
                Value::Number(n) => {
                    if let Some(x) = n.as_f64() {
                        for y in [x + 1.0, x - 1.0, x + 0.5] {
                            derived.extend(Number::from_f64(y).map(Value::Number));
                        }
                    }
                }
                Value::String(s) => derived.push(Value::String(format!("{s}_other"))),
                _ => {}
            }
        }
    }
    for value in derived {
        push(value, &mut out);
    }
    for value in [
        Value::String("other".into()),
        Value::Null,
        Value::Bool(true),
        Value::Bool(false),
        Value::Number(0.into()),
        Value::Array(Vec::new()),
        Value::Object(Map::new()),
    ] {
        push(value, &mut out);
    }
    out
}

fn get<'v>(root: &'v Value, path: &[Segment]) -> Option<&'v Value> {
    let mut at = root;
    for segment in path {
        at = match (segment, at) {
            (Segment::Key(key), Value::Object(map)) => map.get(key)?,
            (Segment::Index(i), Value::Array(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Sets `path` to `value`, making the objects and arrays on the way. `None` if a value
/// already on the way has another shape.
fn set(root: &mut Value, path: &[Segment], value: Value) -> Option<()> {
    let (last, init) = path.split_last()?;
    let mut at = root;
    for (n, segment) in init.iter().enumerate() {
        let empty = match path[n + 1] {
            Segment::Key(_) => Value::Object(Map::new()),
            Segment::Index(_) => Value::Array(Vec::new()),
        };
        at = slot(at, segment, empty)?;
    }
    *slot(at, last, Value::Null)? = value;
    Some(())
}

fn slot<'v>(at: &'v mut Value, segment: &Segment, empty: Value) -> Option<&'v mut Value> {
    match (segment, at) {
        (Segment::Key(key), Value::Object(map)) => Some(map.entry(key.clone()).or_insert(empty)),
        (Segment::Index(i), Value::Array(items)) => {
            while items.len() <= *i {
                items.push(Value::Null);
            }
            if items[*i].is_null() {
                items[*i] = empty;
            }
            Some(&mut items[*i])
        }
        _ => None,
    }
}

/// A few strings the regex matches (each also checked by the real matcher later).
fn samples_of(pattern: &str, case_insensitive: bool) -> Vec<String> {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(case_insensitive)
        .build()
        .parse(pattern)
        .map(|hir| samples(&hir))
        .unwrap_or_default()
}

fn samples(hir: &Hir) -> Vec<String> {
    let mut out: Vec<String> = match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => vec![String::new()],
        HirKind::Literal(literal) => vec![String::from_utf8_lossy(&literal.0).into_owned()],
        HirKind::Class(Class::Unicode(class)) => class
            .ranges()
            .iter()
            .take(3)
            .map(|range| {
                // A letter, when the range has one, reads better than a control character.
                let nice = ('a'..='z').find(|c| range.start() <= *c && *c <= range.end());
                nice.unwrap_or(range.start()).to_string()
            })
            .collect(),
        HirKind::Class(Class::Bytes(class)) => class
            .ranges()
            .iter()
            .take(3)
            .filter(|range| range.start().is_ascii())
            .map(|range| char::from(range.start()).to_string())
            .collect(),
        HirKind::Capture(capture) => samples(&capture.sub),
        HirKind::Repetition(repetition) => {
            let inner = samples(&repetition.sub);
            let min = repetition.min as usize;
            let mut out: Vec<String> = inner.iter().map(|s| s.repeat(min)).collect();
            if repetition.max.is_none_or(|max| max as usize > min) {
                out.extend(inner.iter().map(|s| s.repeat(min + 1)));
            }
            out
        }
        HirKind::Concat(parts) => {
            let mut out = vec![String::new()];
            for part in parts {
                let next = samples(part);
                let mut product = Vec::new();
                'outer: for prefix in &out {
                    for suffix in &next {
                        product.push(format!("{prefix}{suffix}"));
                        if product.len() >= MAX_SAMPLES {
                            break 'outer;
                        }
                    }
                }
                out = product;
            }
            out
        }
        HirKind::Alternation(alternatives) => alternatives.iter().flat_map(samples).collect(),
    };
    out.dedup();
    out.truncate(MAX_SAMPLES);
    out
}
