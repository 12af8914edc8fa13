//! Values that guards compute rather than read: instance variables, arithmetic,
//! durations and instants, the per-trace index of values seen in earlier outputs and
//! messages (provenance), and the secret test.
//!
//! The rules are the spec language's (specs/README.md, "Values"): no coercion and no
//! truthiness. Evaluating a value gives one of three answers: a value, *missing* (an
//! absent path, an unset variable; `==` false, `!=` true, ordering false), or
//! *invalid* (a non-number in arithmetic, a division by zero, a string that is not an
//! RFC 3339 time where an instant is needed), which makes every comparison false.

use std::borrow::Cow;
use std::cmp::Ordering;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Number, Value};

use crate::json::{CompareOp, JsonType, Segment, json_cmp, json_eq};
use crate::time::parse_rfc3339;
use crate::trace::Record;

/// An arithmetic operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArithOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

impl ArithOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
        }
    }

    /// How tightly it binds: `*` and `/` before `+` and `-`.
    pub fn precedence(self) -> u8 {
        match self {
            ArithOp::Add | ArithOp::Sub => 1,
            ArithOp::Mul | ArithOp::Div => 2,
        }
    }
}

/// The unit of a duration literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DurationUnit {
    /// `ms`
    Millis,
    /// `s`
    Seconds,
    /// `m`
    Minutes,
    /// `h`
    Hours,
}

impl DurationUnit {
    /// Every unit; `ms` before `m`, so the longer suffix is tried first.
    pub const ALL: [DurationUnit; 4] = [
        DurationUnit::Millis,
        DurationUnit::Seconds,
        DurationUnit::Minutes,
        DurationUnit::Hours,
    ];

    /// The suffix as written.
    pub fn suffix(self) -> &'static str {
        match self {
            DurationUnit::Millis => "ms",
            DurationUnit::Seconds => "s",
            DurationUnit::Minutes => "m",
            DurationUnit::Hours => "h",
        }
    }

    /// The unit in nanoseconds.
    pub fn nanos(self) -> i128 {
        match self {
            DurationUnit::Millis => 1_000_000,
            DurationUnit::Seconds => 1_000_000_000,
            DurationUnit::Minutes => 60_000_000_000,
            DurationUnit::Hours => 3_600_000_000_000,
        }
    }
}

/// A computed value: JSON, a duration, or an instant (both in nanoseconds; an instant
/// since the Unix epoch).
#[derive(Debug, Clone, PartialEq)]
pub enum Val<'r> {
    /// A JSON value, read from the record, a variable or a literal.
    Json(Cow<'r, Value>),
    /// A duration.
    Duration(i128),
    /// A point in time.
    Instant(i128),
}

impl Val<'_> {
    /// The value, owning its data (to keep in a variable).
    pub fn into_owned(self) -> Val<'static> {
        match self {
            Val::Json(value) => Val::Json(Cow::Owned(value.into_owned())),
            Val::Duration(d) => Val::Duration(d),
            Val::Instant(t) => Val::Instant(t),
        }
    }
}

/// What evaluating a value gave: `Ok(Some(value))`, `Ok(None)` for missing, `Err` for
/// invalid.
pub type Eval<'r> = Result<Option<Val<'r>>, Invalid>;

/// A value that makes every comparison false (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

/// A compiled value.
#[derive(Debug, Clone)]
pub(crate) enum Operand {
    Path(Vec<Segment>),
    Var(usize),
    Const(Val<'static>),
    Arith(ArithOp, Box<Operand>, Box<Operand>),
}

/// A test of a variable's value: `$VAR in [..]`, `$VAR matches /re/`, `$VAR is TYPE`.
/// It holds as the same test of a path holding the value would; an unset variable, a
/// duration and an instant are no JSON value, so none of these holds of them.
#[derive(Debug)]
pub(crate) enum VarCheck {
    In(Vec<Value>),
    Matches(regex::Regex),
    Is(JsonType),
}

impl VarCheck {
    pub(crate) fn holds(&self, value: Option<&Val<'_>>) -> bool {
        let Some(Val::Json(value)) = value else {
            return false;
        };
        match self {
            VarCheck::In(values) => values.iter().any(|want| json_eq(value, want)),
            VarCheck::Matches(regex) => value.as_str().is_some_and(|text| regex.is_match(text)),
            VarCheck::Is(ty) => JsonType::of(value) == *ty,
        }
    }
}

/// What a guard may read besides the record: the instance's variables and the trace's
/// provenance index.
#[derive(Clone, Copy, Default)]
pub struct Context<'c> {
    /// The instance's variables, by slot (`None`: unset).
    pub vars: &'c [Option<Val<'static>>],
    /// Values seen earlier in the trace, when some spec tests provenance.
    pub seen: Option<&'c Seen>,
}

impl Operand {
    pub(crate) fn eval<'r>(&'r self, record: &'r Record<'_>, ctx: &Context<'r>) -> Eval<'r> {
        match self {
            Operand::Path(path) => Ok(record
                .lookup(path)
                .and_then(|found| found.to_value().map(|value| value.into_owned()))
                .map(|value| Val::Json(Cow::Owned(value)))),
            Operand::Var(slot) => Ok(ctx.vars.get(*slot).cloned().flatten()),
            Operand::Const(value) => Ok(Some(value.clone())),
            Operand::Arith(op, lhs, rhs) => {
                let (a, b) = (lhs.eval(record, ctx), rhs.eval(record, ctx));
                match (a?, b?) {
                    (Some(a), Some(b)) => arith(*op, &a, &b).map(Some),
                    _ => Ok(None),
                }
            }
        }
    }
}

fn number(value: &Val<'_>) -> Option<f64> {
    match value {
        Val::Json(value) => value.as_f64(),
        _ => None,
    }
}

fn integer(value: &Val<'_>) -> Option<i64> {
    match value {
        Val::Json(value) => value.as_i64(),
        _ => None,
    }
}

/// An instant: itself, or an RFC 3339 string.
fn instant(value: &Val<'_>) -> Option<i128> {
    match value {
        Val::Instant(t) => Some(*t),
        Val::Json(value) => value.as_str().and_then(parse_rfc3339),
        Val::Duration(_) => None,
    }
}

fn json_number(x: f64) -> Result<Val<'static>, Invalid> {
    if x.fract() == 0.0 && x.abs() < 9.0e15 {
        // Whole results stay integers, so `$n + 1` prints and compares as `2`, not `2.0`.
        return Ok(Val::Json(Cow::Owned(Value::from(x as i64))));
    }
    Number::from_f64(x)
        .map(|n| Val::Json(Cow::Owned(Value::Number(n))))
        .ok_or(Invalid)
}

fn scale(nanos: i128, factor: f64) -> Result<i128, Invalid> {
    let scaled = nanos as f64 * factor;
    if scaled.is_finite() && scaled.abs() < 1.0e36 {
        Ok(scaled.round() as i128)
    } else {
        Err(Invalid)
    }
}

/// Arithmetic on two present values (see the module docs for what is invalid).
fn arith(op: ArithOp, a: &Val<'_>, b: &Val<'_>) -> Result<Val<'static>, Invalid> {
    use ArithOp::{Add, Div, Mul, Sub};
    if let (Some(x), Some(y)) = (integer(a), integer(b)) {
        let exact = match op {
            Add => x.checked_add(y),
            Sub => x.checked_sub(y),
            Mul => x.checked_mul(y),
            Div => (y != 0 && x % y == 0).then(|| x / y),
        };
        if let Some(n) = exact {
            return Ok(Val::Json(Cow::Owned(Value::from(n))));
        }
    }
    if let (Some(x), Some(y)) = (number(a), number(b)) {
        return match op {
            Add => json_number(x + y),
            Sub => json_number(x - y),
            Mul => json_number(x * y),
            Div if y == 0.0 => Err(Invalid),
            Div => json_number(x / y),
        };
    }
    // Overflow is invalid, like any other arithmetic no value can come of.
    let add = |x: i128, y: i128| x.checked_add(y).ok_or(Invalid);
    let sub = |x: i128, y: i128| x.checked_sub(y).ok_or(Invalid);
    match (op, a, b) {
        (Add, Val::Duration(x), Val::Duration(y)) => Ok(Val::Duration(add(*x, *y)?)),
        (Sub, Val::Duration(x), Val::Duration(y)) => Ok(Val::Duration(sub(*x, *y)?)),
        (Mul, Val::Duration(d), n) | (Mul, n, Val::Duration(d)) => {
            Ok(Val::Duration(scale(*d, number(n).ok_or(Invalid)?)?))
        }
        (Div, Val::Duration(d), n) => match number(n) {
            Some(y) if y != 0.0 => Ok(Val::Duration(scale(*d, 1.0 / y)?)),
            _ => Err(Invalid),
        },
        (Add, Val::Duration(d), t) | (Add, t, Val::Duration(d)) => {
            Ok(Val::Instant(add(instant(t).ok_or(Invalid)?, *d)?))
        }
        (Sub, t, Val::Duration(d)) => Ok(Val::Instant(sub(instant(t).ok_or(Invalid)?, *d)?)),
        (Sub, Val::Instant(x), t) | (Sub, t, Val::Instant(x)) if instant(t).is_some() => {
            let y = instant(t).ok_or(Invalid)?;
            Ok(Val::Duration(if matches!(a, Val::Instant(_)) {
                sub(*x, y)?
            } else {
                sub(y, *x)?
            }))
        }
        _ => Err(Invalid),
    }
}

/// Compares two evaluated values (see the module docs).
pub(crate) fn compare(a: Eval<'_>, op: CompareOp, b: Eval<'_>) -> bool {
    let (Ok(a), Ok(b)) = (a, b) else {
        return false;
    };
    let (Some(a), Some(b)) = (a, b) else {
        return op == CompareOp::Ne;
    };
    let ordering = match (&a, &b) {
        (Val::Json(x), Val::Json(y)) => {
            return match op {
                CompareOp::Eq => json_eq(x, y),
                CompareOp::Ne => !json_eq(x, y),
                _ => ordered(json_cmp(x, y), op),
            };
        }
        (Val::Duration(x), Val::Duration(y)) => x.cmp(y),
        (Val::Instant(_), _) | (_, Val::Instant(_)) => match (instant(&a), instant(&b)) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => return false,
        },
        // A duration with anything but a duration: no coercion.
        _ => return false,
    };
    ordered(Some(ordering), op)
}

fn ordered(ordering: Option<Ordering>, op: CompareOp) -> bool {
    let Some(ordering) = ordering else {
        return false;
    };
    match op {
        CompareOp::Eq => ordering == Ordering::Equal,
        CompareOp::Ne => ordering != Ordering::Equal,
        CompareOp::Lt => ordering == Ordering::Less,
        CompareOp::Le => ordering != Ordering::Greater,
        CompareOp::Gt => ordering == Ordering::Greater,
        CompareOp::Ge => ordering != Ordering::Less,
    }
}

/// How many distinct values one trace's provenance index holds at most, unless
/// `--provenance-limit` says otherwise. Beyond it, new values are not recorded (and
/// [`Seen::full`] says so; `check` warns `provenance-limit`), so memory stays bounded on
/// any input.
pub const SEEN_LIMIT: usize = 1 << 18;

/// Shortest string looked for as a token inside earlier text.
pub const TOKEN_MIN: usize = 4;

/// One trace's index of the values its records have shown so far: every string and
/// number leaf of each result's `output`, by tool, every token of those strings, and
/// the same for message texts, by role. Values, not outputs, are kept.
#[derive(Debug)]
pub struct Seen {
    outputs: FxHashMap<Box<str>, Bag>,
    messages: FxHashMap<Box<str>, Bag>,
    size: usize,
    /// How many distinct values it holds at most ([`SEEN_LIMIT`] by default).
    limit: usize,
    full: bool,
}

impl Default for Seen {
    fn default() -> Self {
        Seen::with_limit(SEEN_LIMIT)
    }
}

/// The values seen from one tool or one role.
#[derive(Debug, Default)]
struct Bag {
    /// Leaves, keyed by [`leaf_key`].
    leaves: FxHashSet<Box<str>>,
    /// Tokens of at least [`TOKEN_MIN`] characters from text.
    tokens: FxHashSet<Box<str>>,
}

/// The key of a leaf: JSON-typed, so `"7"` and `7` differ, and numbers by value.
fn leaf_key(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(format!("s{text}")),
        Value::Number(n) => Some(match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => format!("n{i}"),
            (None, Some(x)) if x.fract() == 0.0 && x.abs() < 9.0e15 => format!("n{}", x as i64),
            _ => format!("n{n}"),
        }),
        _ => None,
    }
}

fn is_token_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_' || c == '-'
}

/// The whole tokens of `text` a value could equal: maximal runs of letters, digits,
/// `_` and `-`, and whitespace-separated words trimmed of other characters at their
/// ends (so `inv_4242` and `bob@example.com` are both found in prose).
fn tokens(text: &str, mut found: impl FnMut(&str)) {
    for run in text.split(|c: char| !is_token_char(c)) {
        if run.chars().count() >= TOKEN_MIN {
            found(run);
        }
    }
    for word in text.split_whitespace() {
        let word = word.trim_matches(|c: char| !is_token_char(c));
        if word.chars().count() >= TOKEN_MIN && word.contains(|c: char| !is_token_char(c)) {
            found(word);
        }
    }
}

impl Seen {
    /// An empty index that holds at most `limit` distinct values.
    pub fn with_limit(limit: usize) -> Seen {
        Seen {
            outputs: FxHashMap::default(),
            messages: FxHashMap::default(),
            size: 0,
            limit,
            full: false,
        }
    }

    /// Whether the bound was reached in this trace (later values were not recorded).
    pub fn full(&self) -> bool {
        self.full
    }

    /// Records the output of a result of `tool`.
    pub fn add_output(&mut self, tool: &str, output: &Value) {
        self.add(true, tool, output);
    }

    /// Records the text of a message from `role`.
    pub fn add_message(&mut self, role: &str, text: &str) {
        self.add(false, role, &Value::String(text.to_owned()));
    }

    fn add(&mut self, output: bool, source: &str, value: &Value) {
        let mut leaves = Vec::new();
        collect_leaves(value, &mut leaves);
        let map = if output {
            &mut self.outputs
        } else {
            &mut self.messages
        };
        let bag = map.entry(source.into()).or_default();
        for leaf in leaves {
            if let Value::String(text) = leaf {
                tokens(text, |token| {
                    if self.size < self.limit {
                        if bag.tokens.insert(token.into()) {
                            self.size += 1;
                        }
                    } else if !bag.tokens.contains(token) {
                        self.full = true;
                    }
                });
            }
            if let Some(key) = leaf_key(leaf) {
                if self.size < self.limit {
                    if bag.leaves.insert(key.into()) {
                        self.size += 1;
                    }
                } else if !bag.leaves.contains(key.as_str()) {
                    self.full = true;
                }
            }
        }
    }

    /// Whether `value` was seen in an output of a tool `tool` accepts (any tool for
    /// `None`), or in a message from `role`.
    pub(crate) fn contains(
        &self,
        value: &Value,
        outputs: bool,
        accepts: impl Fn(&str) -> bool,
    ) -> bool {
        let Some(key) = leaf_key(value) else {
            return false;
        };
        let token = value
            .as_str()
            .filter(|text| text.chars().count() >= TOKEN_MIN);
        let map = if outputs {
            &self.outputs
        } else {
            &self.messages
        };
        map.iter().any(|(source, bag)| {
            accepts(source)
                && (bag.leaves.contains(key.as_str())
                    || token.is_some_and(|token| bag.tokens.contains(token)))
        })
    }
}

impl Seen {
    /// A value seen from a source `accepts` (for synthesizing records that cite one):
    /// the smallest leaf string of the first source in name order, for determinism.
    pub fn sample(&self, outputs: bool, accepts: impl Fn(&str) -> bool) -> Option<Value> {
        let map = if outputs {
            &self.outputs
        } else {
            &self.messages
        };
        let mut sources: Vec<(&Box<str>, &Bag)> = map.iter().collect();
        sources.sort_by(|a, b| a.0.cmp(b.0));
        sources
            .into_iter()
            .filter(|(source, _)| accepts(source))
            .find_map(|(_, bag)| {
                let mut leaves: Vec<&Box<str>> = bag.leaves.iter().collect();
                leaves.sort();
                leaves.into_iter().find_map(|leaf| match leaf.split_at(1) {
                    ("s", text) => Some(Value::String(text.to_owned())),
                    ("n", number) => serde_json::from_str(number).ok(),
                    _ => None,
                })
            })
    }
}

/// The string and number leaves of `value`, and of JSON text inside its strings.
fn collect_leaves<'v>(value: &'v Value, out: &mut Vec<&'v Value>) {
    match value {
        Value::Array(items) => items.iter().for_each(|item| collect_leaves(item, out)),
        Value::Object(members) => members.values().for_each(|item| collect_leaves(item, out)),
        Value::String(_) | Value::Number(_) => out.push(value),
        Value::Null | Value::Bool(_) => {}
    }
}

/// Whether any string under `value`, recursively (JSON text inside strings included),
/// holds a credential; an object member named like a secret counts too.
pub fn value_has_secret(value: &Value) -> bool {
    value_has_secret_at(value, 0)
}

fn value_has_secret_at(value: &Value, depth: usize) -> bool {
    // JSON inside a string inside JSON... stops somewhere; a real record nests a few.
    if depth > 8 {
        return false;
    }
    match value {
        Value::String(text) => {
            if crate::redact::contains_secret(text) {
                return true;
            }
            let inner = text.trim_start();
            if inner.starts_with(['{', '[']) {
                if let Ok(parsed) = serde_json::from_str::<Value>(text) {
                    return value_has_secret_at(&parsed, depth + 1);
                }
            }
            false
        }
        Value::Array(items) => items
            .iter()
            .any(|item| value_has_secret_at(item, depth + 1)),
        Value::Object(_) => {
            // The detector knows secret-named members by their JSON spelling.
            crate::redact::contains_secret(&value.to_string())
                || match value {
                    Value::Object(members) => members
                        .values()
                        .any(|item| value_has_secret_at(item, depth + 1)),
                    _ => false,
                }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn j(value: Value) -> Eval<'static> {
        Ok(Some(Val::Json(Cow::Owned(value))))
    }

    #[test]
    fn arithmetic_has_no_coercion() {
        let n = |v: Value| Val::Json(Cow::Owned(v));
        assert_eq!(
            arith(ArithOp::Add, &n(json!(1)), &n(json!(2))),
            Ok(n(json!(3)))
        );
        assert_eq!(
            arith(ArithOp::Div, &n(json!(3)), &n(json!(2))),
            Ok(n(json!(1.5)))
        );
        assert_eq!(
            arith(ArithOp::Div, &n(json!(3)), &n(json!(0))),
            Err(Invalid)
        );
        assert_eq!(
            arith(ArithOp::Add, &n(json!("1")), &n(json!(2))),
            Err(Invalid)
        );
        let second = DurationUnit::Seconds.nanos();
        assert_eq!(
            arith(ArithOp::Mul, &n(json!(2.5)), &Val::Duration(second)),
            Ok(Val::Duration(2 * second + second / 2))
        );
        assert_eq!(
            arith(
                ArithOp::Add,
                &n(json!("1970-01-01T00:00:00Z")),
                &Val::Duration(second)
            ),
            Ok(Val::Instant(second))
        );
        assert_eq!(
            arith(ArithOp::Add, &n(json!("soon")), &Val::Duration(second)),
            Err(Invalid)
        );
    }

    #[test]
    fn overflowing_time_arithmetic_is_invalid() {
        let huge = Val::Duration(i128::MAX - 1);
        assert_eq!(arith(ArithOp::Add, &huge, &huge), Err(Invalid));
        assert_eq!(
            arith(ArithOp::Sub, &Val::Duration(i128::MIN + 1), &huge),
            Err(Invalid)
        );
        assert_eq!(
            arith(ArithOp::Add, &Val::Instant(i128::MAX), &huge),
            Err(Invalid)
        );
    }

    #[test]
    fn comparisons_missing_and_invalid() {
        assert!(compare(Ok(None), CompareOp::Ne, j(json!(1))));
        assert!(!compare(Ok(None), CompareOp::Eq, j(json!(1))));
        assert!(!compare(Err(Invalid), CompareOp::Ne, j(json!(1))));
        assert!(!compare(j(json!("7")), CompareOp::Eq, j(json!(7))));
        let t = |s: &str| j(json!(s));
        assert!(compare(
            t("1970-01-01T00:00:31Z"),
            CompareOp::Ge,
            Ok(Some(Val::Instant(30 * DurationUnit::Seconds.nanos())))
        ));
        assert!(!compare(
            t("not a time"),
            CompareOp::Ne,
            Ok(Some(Val::Instant(0)))
        ));
        assert!(!compare(
            Ok(Some(Val::Duration(1))),
            CompareOp::Ne,
            j(json!(1))
        ));
    }

    #[test]
    fn seen_values_are_typed_and_tokens_whole() {
        let mut seen = Seen::default();
        seen.add_output(
            "search",
            &json!({"items": [{"id": 7}], "note": "Found invoice inv_4242, status open"}),
        );
        let any = |_: &str| true;
        assert!(seen.contains(&json!(7), true, any));
        assert!(!seen.contains(&json!("7"), true, any));
        assert!(seen.contains(&json!("inv_4242"), true, any));
        assert!(!seen.contains(&json!("inv_424"), true, any));
        assert!(!seen.contains(&json!("inv_4242"), false, any));
        assert!(!seen.contains(&json!(7), true, |tool: &str| tool == "other"));
        assert!(!seen.full());
    }

    #[test]
    fn the_index_is_bounded_and_says_when_it_filled() {
        let mut seen = Seen::default();
        let items: Vec<Value> = (0..SEEN_LIMIT + 10).map(|i| json!(i)).collect();
        seen.add_output("list", &Value::Array(items));
        assert!(seen.full());
        assert!(seen.contains(&json!(0), true, |_| true));
        assert!(!seen.contains(&json!(SEEN_LIMIT + 5), true, |_| true));
    }

    #[test]
    fn the_bound_can_be_set() {
        let mut seen = Seen::with_limit(3);
        seen.add_output("list", &json!(["ab", 1, 2]));
        assert!(!seen.full());
        seen.add_output("list", &json!([3]));
        assert!(seen.full());
        assert!(seen.contains(&json!(2), true, |_| true));
        assert!(!seen.contains(&json!(3), true, |_| true));
    }

    #[test]
    fn variable_tests_hold_of_json_values_only() {
        let check = VarCheck::In(vec![json!("a"), json!(1)]);
        let value = |v: Value| Val::Json(Cow::Owned(v));
        assert!(check.holds(Some(&value(json!(1)))));
        assert!(!check.holds(Some(&value(json!("1")))));
        assert!(!check.holds(None));
        assert!(!VarCheck::Is(JsonType::Number).holds(Some(&Val::Duration(1))));
        assert!(VarCheck::Is(JsonType::Null).holds(Some(&value(Value::Null))));
        let regex = regex::Regex::new("^a").expect("a valid regex");
        assert!(VarCheck::Matches(regex.clone()).holds(Some(&value(json!("ab")))));
        assert!(!VarCheck::Matches(regex).holds(Some(&Val::Instant(0))));
    }

    #[test]
    fn secrets_inside_json_text() {
        assert!(value_has_secret(
            &json!({"body": "{\"auth\": \"Bearer abcdefghijklmnop\"}"})
        ));
        assert!(!value_has_secret(
            &json!({"id": "3f2b8c1e-9d4a-4b7e-8c2f-1a2b3c4d5e6f"})
        ));
    }
}
