//! The analyzer: resolves a parsed spec's names, checks it, and builds its [`Machine`].
//!
//! Spec errors are fatal (a spec that does not compile checks nothing), so the analyzer
//! reports every error it finds, not just the first, each with a code and a span.
//! Doubtful but meaningful specs (an unreachable state, an unused event) compile;
//! they are `lint`'s business.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use petgraph::graph::DiGraph;
use regex::{Regex, RegexBuilder};

use super::SpecError;
use super::ast::{
    ArithOp, CompareOp, Expr, Forbid, Ident, ItemKind, JsonType, Operand, Otherwise, Pattern,
    PatternKind, RegexLit, Source, Span, SpecFile, StateSet, ToolPattern, VarTest,
};
use crate::diagnostic::Code;
use crate::eval::{self, Val, VarCheck};
use crate::machine::{
    Edge, Event, EventId, ForbidRule, Guard, KeyPath, Machine, Matcher, Move, MoveTable,
    SpecSource, State, StateId, ToolMatcher,
};
use crate::suggest::{did_you_mean, did_you_mean_hint};
use crate::time::parse_rfc3339;

/// The largest compiled regex a spec may use, in bytes. User patterns are untrusted
/// input; this keeps a pathological one from eating memory.
const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// The initial state `path` statements create when no `initial` is declared.
pub const PATH_START: &str = "start";

/// Parses and compiles a spec source in one step.
pub fn load(source: Arc<SpecSource>) -> Result<Machine, Vec<SpecError>> {
    let file = super::parse(&source.text)?;
    compile(&file, source)
}

/// Compiles a parsed spec. `source` is the text `file` was parsed from.
pub fn compile(file: &SpecFile, source: Arc<SpecSource>) -> Result<Machine, Vec<SpecError>> {
    let mut analyzer = Analyzer::default();
    analyzer.collect(file);
    analyzer.finish(file, source)
}

#[derive(Default)]
struct Analyzer<'f> {
    errors: Vec<SpecError>,
    name: Option<&'f Ident>,
    about: Option<String>,
    initial: Option<&'f Ident>,
    accept: Option<(&'f [Ident], Span)>,
    hot: Option<(&'f [Ident], Span)>,
    otherwise: Option<(Otherwise, Span)>,
    per: Option<&'f [crate::spec::ast::Path]>,
    /// Event name → (index, declaration).
    event_index: BTreeMap<&'f str, EventId>,
    events: Vec<Event>,
    /// First statement of each kind that may appear once, for duplicate reports.
    seen_once: BTreeMap<&'static str, Span>,
    /// Variables some `bind` sets, by name, to their slot.
    variables: BTreeMap<&'f str, usize>,
    /// What every `bind` of a variable gives, when they all agree on a type.
    var_types: BTreeMap<&'f str, Ty>,
    /// Whether a guard reads a variable or a provenance index.
    contextual: bool,
    /// Whether a guard tests provenance.
    provenance: bool,
}

/// What can be known of a value's type before any record is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ty {
    /// A path or a variable: anything.
    Unknown,
    /// A JSON value of this type; `computed` when arithmetic made it.
    Json(JsonType, bool),
    Duration,
    Instant,
}

impl Ty {
    /// What a variable bound to values of types `self` and `other` can hold.
    fn join(self, other: Ty) -> Ty {
        match (self, other) {
            // A number bound once computed and once as written compares leniently.
            (Ty::Json(a, computed_a), Ty::Json(b, computed_b)) if a == b => {
                Ty::Json(a, computed_a && computed_b)
            }
            (a, b) if a == b => a,
            _ => Ty::Unknown,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Ty::Unknown => "a value",
            Ty::Json(JsonType::Number, true) => "a number (computed)",
            Ty::Json(ty, _) => match ty {
                JsonType::Null => "`null`",
                JsonType::Bool => "a boolean",
                JsonType::Number => "a number",
                JsonType::String => "a string",
                JsonType::Array => "an array",
                JsonType::Object => "an object",
            },
            Ty::Duration => "a duration",
            Ty::Instant => "an instant",
        }
    }
}

/// A state under construction: its name, where first named.
struct StateTable<'f> {
    ids: BTreeMap<&'f str, StateId>,
    graph: DiGraph<State, Edge, u32>,
}

impl<'f> StateTable<'f> {
    fn intern(&mut self, name: &'f str, span: Span) -> StateId {
        *self.ids.entry(name).or_insert_with(|| {
            StateId::of(self.graph.add_node(State {
                name: name.to_string(),
                span,
                accepting: true,
            }))
        })
    }
}

/// The error for a name nothing declares: "unknown event `x`", with a did-you-mean
/// among the `known` names, or else the hint `otherwise`.
fn unknown_name<'k>(
    code: Code,
    what: &str,
    ident: &Ident,
    known: impl IntoIterator<Item = &'k str>,
    otherwise: String,
) -> SpecError {
    let hint = did_you_mean_hint(&ident.name, known).unwrap_or(otherwise);
    SpecError::new(code, ident.span, format!("unknown {what} `{}`", ident.name)).with_hint(hint)
}

/// Adds the allowed moves to the graph and returns the move table: for each state and
/// event, where the event goes, or which rule forbids it (a forbid overrides a move).
fn move_table(
    graph: &mut DiGraph<State, Edge, u32>,
    event_count: usize,
    moves: &BTreeMap<(StateId, EventId), (StateId, Span)>,
    forbidden: &BTreeMap<(StateId, EventId), usize>,
) -> MoveTable {
    for (&(from, event), &(to, rule)) in moves {
        graph.add_edge(from.node(), to.node(), Edge { event, rule });
    }
    let allowed = moves
        .iter()
        .map(|(&(from, event), &(to, rule))| (from, event, Move::Go { to, rule }));
    let forbidden = forbidden
        .iter()
        .map(|(&(state, event), &rule)| (state, event, Move::Forbidden(rule)));
    MoveTable::new(graph.node_count(), event_count, allowed.chain(forbidden))
}

impl<'f> Analyzer<'f> {
    fn once(&mut self, what: &'static str, span: Span) -> bool {
        if let Some(&first) = self.seen_once.get(what) {
            self.errors.push(
                SpecError::new(
                    Code::DuplicateDeclaration,
                    span,
                    format!("`{what}` is declared more than once"),
                )
                .with_related(first, "first declared here")
                .with_hint(format!("a spec has at most one `{what}` statement")),
            );
            false
        } else {
            self.seen_once.insert(what, span);
            true
        }
    }

    /// The type of each variable, so tests of it that can never hold are reported: the
    /// type every `bind` of it gives (read with the variables themselves of unknown
    /// type), or unknown when they differ. Errors in the values are reported when the
    /// binds are compiled, not here.
    fn variable_types(&mut self, file: &'f SpecFile) {
        let (errors, contextual) = (self.errors.len(), self.contextual);
        let mut types: BTreeMap<&'f str, Ty> = BTreeMap::new();
        for item in &file.items {
            let ItemKind::Event(decl) = &item.kind else {
                continue;
            };
            for bind in &decl.binds {
                let ty = self.operand(&bind.value).map_or(Ty::Unknown, |(_, ty)| ty);
                types
                    .entry(bind.var.name.as_str())
                    .and_modify(|known| *known = known.join(ty))
                    .or_insert(ty);
            }
        }
        self.errors.truncate(errors);
        self.contextual = contextual;
        self.var_types = types;
    }

    /// First pass: declarations that later statements refer to.
    fn collect(&mut self, file: &'f SpecFile) {
        // Variables first: a guard may read one that a later event binds.
        for item in &file.items {
            if let ItemKind::Event(decl) = &item.kind {
                for bind in &decl.binds {
                    let slot = self.variables.len();
                    self.variables.entry(bind.var.name.as_str()).or_insert(slot);
                }
            }
        }
        self.variable_types(file);
        for item in &file.items {
            match &item.kind {
                ItemKind::Spec(name) => {
                    if self.once("spec", item.span) {
                        self.name = Some(name);
                    }
                }
                ItemKind::About(text) => {
                    if self.once("about", item.span) {
                        self.about = Some(text.value.clone());
                    }
                }
                ItemKind::Initial(state) => {
                    if self.once("initial", item.span) {
                        self.initial = Some(state);
                    }
                }
                ItemKind::Accept(states) => {
                    if self.once("accept", item.span) {
                        self.accept = Some((states, item.span));
                    }
                }
                ItemKind::Hot(states) => {
                    if self.once("hot", item.span) {
                        self.hot = Some((states, item.span));
                    }
                }
                ItemKind::Otherwise(mode) => {
                    if self.once("otherwise", item.span) {
                        self.otherwise = Some((*mode, item.span));
                    }
                }
                ItemKind::Per(paths) => {
                    if self.once("per", item.span) {
                        self.per = Some(paths);
                    }
                }
                ItemKind::Event(decl) => {
                    let name = decl.name.name.as_str();
                    if let Some(&first) = self.event_index.get(name) {
                        self.errors.push(
                            SpecError::new(
                                Code::DuplicateEvent,
                                decl.name.span,
                                format!("event `{name}` is declared more than once"),
                            )
                            .with_related(self.events[first].span, "first declared here"),
                        );
                        continue;
                    }
                    let matcher = self.matcher(&decl.pattern);
                    let binds = decl
                        .binds
                        .iter()
                        .filter_map(|bind| {
                            let (value, _) = self.operand(&bind.value)?;
                            Some((self.variables[bind.var.name.as_str()], value))
                        })
                        .collect();
                    self.event_index.insert(name, self.events.len());
                    self.events.push(Event {
                        name: name.to_string(),
                        span: item.span,
                        matcher,
                        binds,
                    });
                }
                ItemKind::Transition(_)
                | ItemKind::Forbid(_)
                | ItemKind::Path(_)
                | ItemKind::State(_) => {}
            }
        }
        if let (Some((_, accept)), Some((_, hot))) = (self.accept, self.hot) {
            self.errors.push(
                SpecError::new(
                    Code::AcceptAndHot,
                    hot,
                    "a spec uses either `accept` or `hot`, not both",
                )
                .with_related(accept, "`accept` is declared here")
                .with_hint("list the states a trace may end in with `accept`, or the ones it may not end in with `hot`"),
            );
        }
        self.check_overlaps(file);
    }

    fn matcher(&mut self, pattern: &Pattern) -> Matcher {
        if let (PatternKind::Message | PatternKind::Record, Some(tool)) =
            (pattern.kind, &pattern.tool)
        {
            self.errors.push(
                SpecError::new(
                    Code::ToolOnNonToolPattern,
                    tool.span(),
                    format!("a `{}` pattern has no tool", pattern.kind.keyword()),
                )
                .with_hint(
                    "only `call` and `result` patterns name a tool; to test a field, use `where`",
                ),
            );
        }
        let tool = pattern.tool.as_ref().and_then(|tool| match tool {
            ToolPattern::Name(name, _) => Some(ToolMatcher::Name(name.clone())),
            ToolPattern::Glob(glob, span) => self
                .regex(&glob_to_regex(glob), false, *span)
                .map(ToolMatcher::Pattern),
            ToolPattern::Regex(re) => self.regex_lit(re).map(ToolMatcher::Pattern),
        });
        let guard = pattern.guard.as_ref().and_then(|expr| self.guard(expr));
        Matcher {
            kind: pattern.kind,
            tool,
            guard,
        }
    }

    fn regex_lit(&mut self, re: &RegexLit) -> Option<Regex> {
        self.regex(&re.pattern, re.case_insensitive, re.span)
    }

    fn regex(&mut self, pattern: &str, case_insensitive: bool, span: Span) -> Option<Regex> {
        match RegexBuilder::new(pattern)
            .case_insensitive(case_insensitive)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
        {
            Ok(regex) => Some(regex),
            Err(err) => {
                let detail = err.to_string();
                let last = detail.lines().last().unwrap_or_default().trim();
                self.errors.push(SpecError::new(
                    Code::InvalidRegex,
                    span,
                    format!(
                        "invalid regular expression: {}",
                        last.trim_start_matches("error: ")
                    ),
                ));
                None
            }
        }
    }

    /// Compiles a guard, reporting bad regexes. Returns `None` when part of it failed
    /// (the error is recorded, so the spec will not compile).
    fn guard(&mut self, expr: &Expr) -> Option<Guard> {
        if let Expr::Secret { .. } = expr {
            // Not instance data, but the explorer fits such records in context.
            self.contextual = true;
        }
        Some(match expr {
            Expr::Or(a, b) => {
                let (a, b) = (self.guard(a), self.guard(b));
                Guard::Or(Box::new(a?), Box::new(b?))
            }
            Expr::And(a, b) => {
                let (a, b) = (self.guard(a), self.guard(b));
                Guard::And(Box::new(a?), Box::new(b?))
            }
            Expr::Not(inner, _) => Guard::Not(Box::new(self.guard(inner)?)),
            Expr::Group(inner, _) => self.guard(inner)?,
            Expr::Compare { path, op, value } => Guard::Compare {
                path: path.segments.clone(),
                op: *op,
                value: value.value.clone(),
            },
            Expr::In { path, values, .. } => Guard::In {
                path: path.segments.clone(),
                values: values.iter().map(|v| v.value.clone()).collect(),
            },
            Expr::Matches { path, regex } => Guard::Matches {
                path: path.segments.clone(),
                regex: self.regex_lit(regex)?,
            },
            Expr::Has { path, .. } => Guard::Has(path.segments.clone()),
            Expr::Is { path, ty, .. } => Guard::Is(path.segments.clone(), *ty),
            Expr::Relation { lhs, op, rhs } => {
                let (a, b) = (self.operand(lhs), self.operand(rhs));
                let ((lhs_value, lhs_ty), (rhs_value, rhs_ty)) = (a?, b?);
                self.check_comparison(expr.span(), lhs_ty, *op, rhs_ty)?;
                // Which records satisfy it is found by evaluating, in context: the
                // checker classifies per instance and the explorer fits records.
                self.contextual = true;
                Guard::Relation {
                    lhs: lhs_value,
                    op: *op,
                    rhs: rhs_value,
                }
            }
            Expr::HasVar { var, .. } => Guard::HasVar(self.variable(var)?),
            Expr::VarTest { var, test, span } => {
                let slot = self.variable(var)?;
                self.check_var_test(*span, var, test)?;
                Guard::VarTest(
                    slot,
                    match test {
                        VarTest::In(values) => {
                            VarCheck::In(values.iter().map(|v| v.value.clone()).collect())
                        }
                        VarTest::Matches(regex) => VarCheck::Matches(self.regex_lit(regex)?),
                        VarTest::Is(ty) => VarCheck::Is(*ty),
                    },
                )
            }
            Expr::Provenance { value, source, .. } => {
                self.contextual = true;
                self.provenance = true;
                let (value, _) = self.operand(value)?;
                match source {
                    Source::Outputs(tool) => Guard::Provenance {
                        value,
                        outputs: true,
                        tool: match tool {
                            None => None,
                            Some(tool) => Some(self.tool_matcher(tool)?),
                        },
                        role: None,
                    },
                    Source::Messages(role) => Guard::Provenance {
                        value,
                        outputs: false,
                        tool: None,
                        role: role.as_ref().map(|role| role.name.clone()),
                    },
                }
            }
            Expr::Secret { target, .. } => Guard::Secret(match target {
                None => None,
                Some(target) => Some(self.operand(target)?.0),
            }),
        })
    }

    /// Reports a test of a variable that can never hold because every `bind` of the
    /// variable gives a value of another type (a duration is never `in` a list of
    /// JSON values, a number never `matches` a regex).
    fn check_var_test(&mut self, span: Span, var: &Ident, test: &VarTest) -> Option<()> {
        let ty = self
            .var_types
            .get(var.name.as_str())
            .copied()
            .unwrap_or(Ty::Unknown);
        let fits = match (ty, test) {
            (Ty::Unknown, _) => true,
            (Ty::Duration | Ty::Instant, _) => false,
            (Ty::Json(have, _), VarTest::Is(want)) => have == *want,
            (Ty::Json(have, _), VarTest::Matches(_)) => have == JsonType::String,
            (Ty::Json(have, _), VarTest::In(values)) => values
                .iter()
                .any(|value| JsonType::of(&value.value) == have),
        };
        if fits {
            return Some(());
        }
        let what = match test {
            VarTest::In(_) => "`in [..]` compares JSON values".to_owned(),
            VarTest::Matches(_) => "`matches` tests strings".to_owned(),
            VarTest::Is(want) => format!("`is {}` tests the JSON type", want.keyword()),
        };
        self.errors.push(
            SpecError::new(
                Code::TypeMismatch,
                span,
                format!(
                    "this test of `${}` can never hold: every `bind` of it gives {}, and {what}",
                    var.name,
                    ty.name()
                ),
            )
            .with_hint("test the variable as the value it holds, or bind another value"),
        );
        None
    }

    /// The slot of `$VAR`, or the `unknown-variable` error.
    fn variable(&mut self, var: &Ident) -> Option<usize> {
        self.contextual = true;
        if let Some(&slot) = self.variables.get(var.name.as_str()) {
            return Some(slot);
        }
        let mut error = SpecError::new(
            Code::UnknownVariable,
            var.span,
            format!("variable `${}` is bound by no event", var.name),
        );
        error = match crate::suggest::did_you_mean(&var.name, self.variables.keys().copied()) {
            Some(name) => error.with_hint(format!("did you mean `${name}`?")),
            None => error.with_hint(format!(
                "an event binds it: `event NAME = PATTERN bind {} = VALUE`",
                var.name
            )),
        };
        self.errors.push(error);
        None
    }

    /// Compiles a value and works out what can be known of its type; reports unknown
    /// variables and arithmetic that can never be valid.
    fn operand(&mut self, value: &Operand) -> Option<(eval::Operand, Ty)> {
        Some(match value {
            Operand::Path(path) => (eval::Operand::Path(path.segments.clone()), Ty::Unknown),
            Operand::Var(var) => (
                eval::Operand::Var(self.variable(var)?),
                self.var_types
                    .get(var.name.as_str())
                    .copied()
                    .unwrap_or(Ty::Unknown),
            ),
            Operand::Literal(lit) => (
                eval::Operand::Const(Val::Json(std::borrow::Cow::Owned(lit.value.clone()))),
                Ty::Json(JsonType::of(&lit.value), false),
            ),
            Operand::Duration(duration) => (
                eval::Operand::Const(Val::Duration(
                    i128::from(duration.amount) * duration.unit.nanos(),
                )),
                Ty::Duration,
            ),
            Operand::Group(inner, _) => self.operand(inner)?,
            Operand::Arith { op, lhs, rhs } => {
                let (a, b) = (self.operand(lhs), self.operand(rhs));
                let ((a, a_ty), (b, b_ty)) = (a?, b?);
                let ty = self.arith_type(value.span(), *op, (lhs, a_ty), (rhs, b_ty))?;
                (eval::Operand::Arith(*op, Box::new(a), Box::new(b)), ty)
            }
        })
    }

    /// The type of `a op b`, or a `type-mismatch` when it can never be valid.
    fn arith_type(
        &mut self,
        span: Span,
        op: ArithOp,
        (a_expr, a): (&Operand, Ty),
        (b_expr, b): (&Operand, Ty),
    ) -> Option<Ty> {
        use ArithOp::{Add, Div, Mul, Sub};
        let number = |ty: Ty| matches!(ty, Ty::Json(JsonType::Number, _));
        let string_time = |ty: Ty, expr: &Operand| match (ty, expr) {
            (Ty::Json(JsonType::String, _), Operand::Literal(lit)) => {
                lit.value.as_str().and_then(parse_rfc3339).is_some()
            }
            _ => false,
        };
        // Values no arithmetic accepts, whatever the other side is.
        for ty in [a, b] {
            if let Ty::Json(
                JsonType::Null | JsonType::Bool | JsonType::Array | JsonType::Object,
                _,
            ) = ty
            {
                return self.mismatch(span, format!("arithmetic on {}", ty.name()));
            }
        }
        let found = match (op, a, b) {
            // With one side unknown, the other may still decide what a valid result is.
            (Add | Sub, x, Ty::Unknown) | (Add | Sub, Ty::Unknown, x) if number(x) => {
                Ty::Json(JsonType::Number, true)
            }
            (Div, Ty::Unknown, y) if number(y) => Ty::Unknown,
            (Div, x, Ty::Unknown) if number(x) => Ty::Json(JsonType::Number, true),
            (Mul, Ty::Duration, Ty::Unknown) | (Mul, Ty::Unknown, Ty::Duration) => Ty::Duration,
            (Div, Ty::Duration, Ty::Unknown) => Ty::Duration,
            (_, Ty::Json(JsonType::String, _), Ty::Unknown)
            | (_, Ty::Unknown, Ty::Json(JsonType::String, _))
                if matches!(op, Mul | Div) =>
            {
                return self.mismatch(span, format!("`{}` on a string", op.symbol()));
            }
            (_, Ty::Unknown, _) | (_, _, Ty::Unknown) => Ty::Unknown,
            (_, x, y) if number(x) && number(y) => Ty::Json(JsonType::Number, true),
            (Add | Sub, Ty::Duration, Ty::Duration) => Ty::Duration,
            (Mul, Ty::Duration, y) | (Mul, y, Ty::Duration) if number(y) => Ty::Duration,
            (Div, Ty::Duration, y) if number(y) => Ty::Duration,
            (Add, Ty::Duration, Ty::Instant) | (Add | Sub, Ty::Instant, Ty::Duration) => {
                Ty::Instant
            }
            (Add, Ty::Duration, _) if string_time(b, b_expr) => Ty::Instant,
            (Add | Sub, _, Ty::Duration) if string_time(a, a_expr) => Ty::Instant,
            (Sub, Ty::Instant, Ty::Instant) => Ty::Duration,
            _ => {
                let what = format!("`{}` between {} and {}", op.symbol(), a.name(), b.name());
                return self.mismatch(span, what);
            }
        };
        Some(found)
    }

    /// Reports a comparison that can never hold, whatever the record.
    fn check_comparison(&mut self, span: Span, a: Ty, op: CompareOp, b: Ty) -> Option<()> {
        let ok = match (a, b) {
            (Ty::Unknown, _) | (_, Ty::Unknown) => true,
            (Ty::Duration, Ty::Duration) | (Ty::Instant, Ty::Instant) => true,
            (Ty::Instant, Ty::Json(JsonType::String, _))
            | (Ty::Json(JsonType::String, _), Ty::Instant) => true,
            (Ty::Duration | Ty::Instant, _) | (_, Ty::Duration | Ty::Instant) => false,
            (Ty::Json(x, computed_a), Ty::Json(y, computed_b)) => {
                x == y || !(computed_a || computed_b)
            }
        };
        if ok {
            return Some(());
        }
        self.mismatch(
            span,
            format!("`{}` between {} and {}", op.symbol(), a.name(), b.name()),
        )
    }

    fn mismatch<T>(&mut self, span: Span, what: String) -> Option<T> {
        self.errors.push(
            SpecError::new(
                Code::TypeMismatch,
                span,
                format!("{what} can never hold: no value is coerced"),
            )
            .with_hint(
                "compare durations with durations (`30s`), instants with RFC 3339 strings or `$t + 30s`, numbers with numbers",
            ),
        );
        None
    }

    fn tool_matcher(&mut self, tool: &ToolPattern) -> Option<ToolMatcher> {
        match tool {
            ToolPattern::Name(name, _) => Some(ToolMatcher::Name(name.clone())),
            ToolPattern::Glob(glob, span) => self
                .regex(&glob_to_regex(glob), false, *span)
                .map(ToolMatcher::Pattern),
            ToolPattern::Regex(re) => self.regex_lit(re).map(ToolMatcher::Pattern),
        }
    }

    /// Reports pairs of event patterns where one claims every record the other does
    /// (so no record could ever be told apart). Overlaps that depend on guards are
    /// found at run time (`ambiguous-event`).
    fn check_overlaps(&mut self, file: &SpecFile) {
        let decls: Vec<_> = file
            .items
            .iter()
            .filter_map(|item| match &item.kind {
                ItemKind::Event(decl) => Some(decl),
                _ => None,
            })
            .collect();
        // Only a pattern without a guard covers another, and only one with no tool or
        // the same tool: index the events by tool so each is compared with those alone,
        // not with every other (a spec may declare 100,000 events).
        let mut by_tool: BTreeMap<ToolKey<'_>, Vec<usize>> = BTreeMap::new();
        for (n, decl) in decls.iter().enumerate() {
            if let Some(tool) = &decl.pattern.tool {
                by_tool.entry(ToolKey::of(tool)).or_default().push(n);
            }
        }
        let mut pairs = BTreeSet::new();
        for (n, wide) in decls.iter().enumerate() {
            if wide.pattern.guard.is_some() {
                continue;
            }
            let candidates: Box<dyn Iterator<Item = usize>> = match &wide.pattern.tool {
                None => Box::new(0..decls.len()),
                Some(tool) => Box::new(
                    by_tool
                        .get(&ToolKey::of(tool))
                        .into_iter()
                        .flatten()
                        .copied(),
                ),
            };
            pairs.extend(
                candidates
                    .filter(|&m| m != n && covers(&wide.pattern, &decls[m].pattern))
                    .map(|m| (n.min(m), n.max(m))),
            );
        }
        // Reported in the order of a comparison of every pair.
        for (i, j) in pairs {
            let (a, b) = (decls[i], decls[j]);
            if a.name.name == b.name.name {
                continue;
            }
            let (wide, narrow) = if covers(&a.pattern, &b.pattern) {
                (a, b)
            } else if covers(&b.pattern, &a.pattern) {
                (b, a)
            } else {
                continue;
            };
            self.errors.push(
                SpecError::new(
                    Code::OverlappingEvents,
                    b.name.span,
                    format!(
                        "event `{}` claims every record that event `{}` claims",
                        wide.name.name, narrow.name.name
                    ),
                )
                .with_related(a.name.span, "the other event is declared here")
                .with_hint("a record may match at most one event; narrow one of them with `where`"),
            );
        }
    }

    fn finish(
        mut self,
        file: &'f SpecFile,
        source: Arc<SpecSource>,
    ) -> Result<Machine, Vec<SpecError>> {
        let mut states = StateTable {
            ids: BTreeMap::new(),
            graph: DiGraph::default(),
        };
        let initial = self.initial_state(file, &mut states);
        // Declared states exist even when nothing else names them (lint says if one is
        // unreachable), in the order declared, located at their declaration.
        for item in &file.items {
            if let ItemKind::State(list) = &item.kind {
                for state in list {
                    states.intern(&state.name, state.span);
                }
            }
        }
        let moves = self.moves(file, &mut states, initial);
        self.misspelled_states(file, &states);
        let (forbids, forbidden) = self.forbids(file, &states);
        self.mark_accepting(&mut states);

        let per = self.per.map_or_else(Vec::new, |paths| {
            paths
                .iter()
                .map(|path| KeyPath {
                    text: path.to_string(),
                    segments: path.segments.clone(),
                })
                .collect()
        });

        if !self.errors.is_empty() {
            self.errors.sort_by_key(|e| (e.span.start, e.span.end));
            return Err(self.errors);
        }
        let initial = initial.expect("bug: a spec without an initial state reported no error");
        let table = move_table(&mut states.graph, self.events.len(), &moves, &forbidden);

        let name = self.name.map_or_else(
            || {
                source
                    .path
                    .file_stem()
                    .map_or_else(|| "spec".to_string(), |s| s.to_string_lossy().into_owned())
            },
            |ident| ident.name.clone(),
        );
        let index = crate::machine::EventIndex::new(&self.events);
        Ok(Machine {
            index,
            name,
            about: self.about,
            source,
            events: self.events,
            graph: states.graph,
            initial,
            otherwise: self.otherwise.map_or(Otherwise::Reject, |(mode, _)| mode),
            otherwise_span: self.otherwise.map(|(_, span)| span),
            ending_span: self.accept.or(self.hot).map(|(_, span)| span),
            per,
            forbids,
            moves: table,
            variables: {
                let mut names: Vec<(usize, String)> = self
                    .variables
                    .iter()
                    .map(|(name, &slot)| (slot, name.to_string()))
                    .collect();
                names.sort();
                names.into_iter().map(|(_, name)| name).collect()
            },
            contextual: self.contextual,
            provenance: self.provenance,
        })
    }

    /// The initial state: the declared one, else the start `path` statements begin at.
    /// Without either the spec has none, which is an error.
    fn initial_state(
        &mut self,
        file: &'f SpecFile,
        states: &mut StateTable<'f>,
    ) -> Option<StateId> {
        let first_path = file
            .items
            .iter()
            .find(|item| matches!(item.kind, ItemKind::Path(_)))
            .map(|item| item.span);
        match (self.initial, first_path) {
            (Some(ident), _) => Some(states.intern(&ident.name, ident.span)),
            (None, Some(first_path)) => Some(states.intern(PATH_START, first_path)),
            (None, None) => {
                self.errors.push(
                    SpecError::new(Code::MissingInitial, Span::new(0, 0), "the spec has no initial state")
                        .with_hint("declare one with `initial STATE`, or describe the protocol with `path E1 -> E2 -> ...`"),
                );
                None
            }
        }
    }

    /// The allowed moves of transitions and paths. States are declared by use: the
    /// statements that name them.
    fn moves(
        &mut self,
        file: &'f SpecFile,
        states: &mut StateTable<'f>,
        initial: Option<StateId>,
    ) -> BTreeMap<(StateId, EventId), (StateId, Span)> {
        let mut moves: BTreeMap<(StateId, EventId), (StateId, Span)> = BTreeMap::new();
        for item in &file.items {
            match &item.kind {
                ItemKind::Transition(t) => {
                    let from = states.intern(&t.from.name, t.from.span);
                    let to = states.intern(&t.to.name, t.to.span);
                    for event in &t.events {
                        if let Some(event) = self.event(event) {
                            self.add_move(&mut moves, states, from, event, to, item.span);
                        }
                    }
                }
                ItemKind::Path(steps) => {
                    let Some(mut at) = initial else { continue };
                    for step in steps {
                        let Some(event) = self.event(step) else { break };
                        let to = states.intern(&step.name, step.span);
                        self.add_move(&mut moves, states, at, event, to, item.span);
                        at = to;
                    }
                }
                _ => {}
            }
        }
        moves
    }

    /// States are declared by use, so a misspelled name would silently be a new state.
    /// A name is taken for a misspelling, an `unknown-state` with a did-you-mean, when
    /// it is close to another state's name and it is dead where it stands: the
    /// `initial` state that nothing else names (no transition, `forbid`, `accept` or
    /// `hot`), or a state transitions leave but nothing enters (nor is it initial), so
    /// its moves could never happen. A state only entered (a sink like `done`) is never
    /// taken for one, nor a name shorter than four characters or one that differs from
    /// the other only in digits.
    ///
    /// `state NAME, ...` declares states on purpose: a declared state is never taken for
    /// a misspelling, and once a spec declares states, a state it names (in a
    /// transition, `initial`, `accept`, `hot` or `forbid`) without declaring it is one
    /// when it is close to a declared name, wherever it stands (`pending -> donne`).
    fn misspelled_states(&mut self, file: &'f SpecFile, states: &StateTable<'f>) {
        let mut entered = BTreeSet::new();
        let mut named = BTreeSet::new();
        let mut sources = Vec::new();
        let mut declared = BTreeSet::new();
        // Every state name as written, in source order (not `path` steps: those are
        // named after events, not chosen).
        let mut written: Vec<&Ident> = Vec::new();
        for item in &file.items {
            match &item.kind {
                ItemKind::State(list) => {
                    declared.extend(list.iter().map(|state| state.name.as_str()));
                }
                ItemKind::Initial(state) => written.push(state),
                _ => {}
            }
            match &item.kind {
                ItemKind::Transition(t) => {
                    entered.insert(t.to.name.as_str());
                    named.extend([t.from.name.as_str(), t.to.name.as_str()]);
                    sources.push(&t.from);
                    written.extend([&t.from, &t.to]);
                }
                ItemKind::Path(steps) => {
                    entered.extend(steps.iter().map(|step| step.name.as_str()));
                }
                ItemKind::Accept(list) | ItemKind::Hot(list) => {
                    named.extend(list.iter().map(|state| state.name.as_str()));
                    written.extend(list);
                }
                ItemKind::Forbid(Forbid {
                    states: StateSet::Named(list),
                    ..
                }) => {
                    named.extend(list.iter().map(|state| state.name.as_str()));
                    written.extend(list);
                }
                _ => {}
            }
        }
        if self.initial.is_none()
            && !file
                .items
                .iter()
                .any(|item| matches!(item.kind, ItemKind::Path(_)))
        {
            // Without an initial state nothing is entered; that is its own error.
            return;
        }
        entered.insert(PATH_START);
        // Short names (`s`, `t`) are all close to each other, and numbered families
        // (`step1`, `step2`) differ in digits by design: neither is taken for a typo.
        let letters = |name: &str| name.replace(|c: char| c.is_ascii_digit(), "");
        let close_in = |name: &str, known: &mut dyn Iterator<Item = &'f str>| {
            did_you_mean(name, known)
                .filter(|known| name.chars().count() >= 4 && letters(name) != letters(known))
        };
        let close = |name: &str| close_in(name, &mut states.ids.keys().copied());
        let mut dead: Vec<(&Ident, String)> = Vec::new();
        // Undeclared names already reported, so the dead-name rule skips them.
        let mut reported = BTreeSet::new();
        if !declared.is_empty() {
            let mut seen = BTreeSet::new();
            for ident in &written {
                let name = ident.name.as_str();
                if declared.contains(name) || !seen.insert(name) {
                    continue;
                }
                if let Some(known) = close_in(name, &mut declared.iter().copied()) {
                    reported.insert(name);
                    self.errors.push(
                        SpecError::new(
                            Code::UnknownState,
                            ident.span,
                            format!("unknown state `{name}`: no `state` declares it, and the spec declares `{known}`"),
                        )
                        .with_hint(format!(
                            "did you mean `{known}`? (to keep `{name}` as a new state, declare it: `state {name}`)"
                        )),
                    );
                }
            }
        }
        if let Some(initial) = self.initial {
            if !named.contains(initial.name.as_str()) {
                dead.push((
                    initial,
                    "no transition, `forbid`, `accept` or `hot` names it".to_owned(),
                ));
            }
            entered.insert(initial.name.as_str());
            // Where a misspelled initial state was meant to start is entered, too.
            if let Some(meant) =
                close(&initial.name).filter(|_| !named.contains(initial.name.as_str()))
            {
                entered.insert(meant);
            }
        }
        let mut seen = BTreeSet::new();
        for from in sources {
            if !entered.contains(from.name.as_str()) && seen.insert(from.name.as_str()) {
                dead.push((
                    from,
                    "nothing enters it: no transition leads to it, and it is not the initial state"
                        .to_owned(),
                ));
            }
        }
        for (ident, why) in dead {
            let name = ident.name.as_str();
            // A declared state is meant; a name already reported is not reported twice.
            if declared.contains(name) || reported.contains(name) {
                continue;
            }
            if let Some(known) = close(name) {
                self.errors.push(
                    SpecError::new(
                        Code::UnknownState,
                        ident.span,
                        format!("unknown state `{name}`: {why}"),
                    )
                    .with_hint(format!(
                        "did you mean `{known}`? (to keep `{name}` as a new state, declare it: `state {name}`)"
                    )),
                );
            }
        }
    }

    /// The `forbid` rules, and which rule each forbidden (state, event) pair reports.
    fn forbids(
        &mut self,
        file: &'f SpecFile,
        states: &StateTable<'f>,
    ) -> (Vec<ForbidRule>, BTreeMap<(StateId, EventId), usize>) {
        let mut forbids = Vec::new();
        let mut forbidden: BTreeMap<(StateId, EventId), usize> = BTreeMap::new();
        for item in &file.items {
            let ItemKind::Forbid(forbid) = &item.kind else {
                continue;
            };
            let targets: Vec<StateId> = match &forbid.states {
                StateSet::All(_) => states.graph.node_indices().map(StateId::of).collect(),
                StateSet::Named(names) => names
                    .iter()
                    .filter_map(|name| self.known_state(states, name))
                    .collect(),
            };
            let events: Vec<EventId> = forbid
                .events
                .iter()
                .filter_map(|event| self.event(event))
                .collect();
            let rule = forbids.len();
            forbids.push(ForbidRule {
                message: forbid.message.value.clone(),
                span: item.span,
            });
            for &state in &targets {
                for &event in &events {
                    // The first forbid that names a (state, event) pair is the one
                    // reported; later ones are redundant, which `lint` points out.
                    forbidden.entry((state, event)).or_insert(rule);
                }
            }
        }
        (forbids, forbidden)
    }

    /// Which states may end a trace: those `accept` names, or all but those `hot` names.
    fn mark_accepting(&mut self, states: &mut StateTable<'f>) {
        for (list, _) in [self.accept, self.hot].into_iter().flatten() {
            for name in list {
                self.known_state(states, name);
            }
        }
        if let Some((accept, _)) = self.accept {
            let accepted: Vec<StateId> = accept
                .iter()
                .filter_map(|name| states.ids.get(name.name.as_str()).copied())
                .collect();
            for id in states
                .graph
                .node_indices()
                .map(StateId::of)
                .collect::<Vec<_>>()
            {
                states.graph[id.node()].accepting = accepted.contains(&id);
            }
        } else if let Some((hot, _)) = self.hot {
            for name in hot {
                if let Some(&id) = states.ids.get(name.name.as_str()) {
                    states.graph[id.node()].accepting = false;
                }
            }
        }
    }

    fn add_move(
        &mut self,
        moves: &mut BTreeMap<(StateId, EventId), (StateId, Span)>,
        states: &StateTable<'_>,
        from: StateId,
        event: EventId,
        to: StateId,
        rule: Span,
    ) {
        match moves.get(&(from, event)) {
            None => {
                moves.insert((from, event), (to, rule));
            }
            // The same move twice (e.g. two paths sharing a prefix) is one move.
            Some(&(existing, _)) if existing == to => {}
            Some(&(existing, first)) => {
                self.errors.push(
                    SpecError::new(
                        Code::ConflictingTransition,
                        rule,
                        format!(
                            "state `{}` already moves to `{}` on `{}`; it cannot also move to `{}`",
                            states.graph[from.node()].name,
                            states.graph[existing.node()].name,
                            self.events[event].name,
                            states.graph[to.node()].name
                        ),
                    )
                    .with_related(first, "the first transition is here")
                    .with_hint("a machine is deterministic: give the two cases different events, e.g. by narrowing them with `where`"),
                );
            }
        }
    }

    fn event(&mut self, ident: &Ident) -> Option<EventId> {
        if let Some(&id) = self.event_index.get(ident.name.as_str()) {
            return Some(id);
        }
        self.errors.push(unknown_name(
            Code::UnknownEvent,
            "event",
            ident,
            self.event_index.keys().copied(),
            format!("declare it: `event {} = call TOOL`", ident.name),
        ));
        None
    }

    fn known_state(&mut self, states: &StateTable<'_>, ident: &Ident) -> Option<StateId> {
        if let Some(&id) = states.ids.get(ident.name.as_str()) {
            return Some(id);
        }
        self.errors.push(unknown_name(
            Code::UnknownState,
            "state",
            ident,
            states.ids.keys().copied(),
            "states are declared by `initial`, by transitions `FROM -> TO on EVENT`, and by `path`"
                .to_owned(),
        ));
        None
    }
}

/// Whether every record `narrow` matches is also matched by `wide`, decided on the
/// pattern's shape alone: `wide` has no guard, its kind includes `narrow`'s, and its tool
/// is absent or the same as `narrow`'s.
fn covers(wide: &Pattern, narrow: &Pattern) -> bool {
    let kind = wide.kind == PatternKind::Record || wide.kind == narrow.kind;
    let tool = match (&wide.tool, &narrow.tool) {
        (None, _) => true,
        (Some(a), Some(b)) => same_tool(a, b),
        (Some(_), None) => false,
    };
    wide.guard.is_none() && kind && tool
}

/// A tool pattern as a key: two patterns have the same key exactly when [`same_tool`]
/// holds for them.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
enum ToolKey<'a> {
    Name(&'a str),
    Glob(&'a str),
    Regex(&'a str, bool),
}

impl<'a> ToolKey<'a> {
    fn of(tool: &'a ToolPattern) -> Self {
        match tool {
            ToolPattern::Name(name, _) => ToolKey::Name(name),
            ToolPattern::Glob(glob, _) => ToolKey::Glob(glob),
            ToolPattern::Regex(regex) => ToolKey::Regex(&regex.pattern, regex.case_insensitive),
        }
    }
}

fn same_tool(a: &ToolPattern, b: &ToolPattern) -> bool {
    ToolKey::of(a) == ToolKey::of(b)
}

/// A quoted tool glob as an anchored regex: `*` is any run, `?` any one character.
pub fn glob_to_regex(glob: &str) -> String {
    let mut out = String::from("^");
    let mut literal = String::new();
    for c in glob.chars() {
        match c {
            '*' | '?' => {
                out.push_str(&regex::escape(&literal));
                literal.clear();
                out.push_str(if c == '*' { "(?s:.*)" } else { "(?s:.)" });
            }
            _ => literal.push(c),
        }
    }
    out.push_str(&regex::escape(&literal));
    out.push('$');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn source(text: &str) -> Arc<SpecSource> {
        Arc::new(SpecSource::new(PathBuf::from("test.tg"), text.to_string()))
    }

    #[track_caller]
    fn machine(text: &str) -> Machine {
        load(source(text)).unwrap_or_else(|errors| panic!("{errors:#?}"))
    }

    /// Each error as `(code, the source text its span covers, hint)`.
    #[track_caller]
    fn errors(text: &str) -> Vec<(Code, String, Option<String>)> {
        match load(source(text)) {
            Ok(_) => panic!("expected errors in:\n{text}"),
            Err(errors) => errors
                .into_iter()
                .map(|e| (e.code, text[e.span.range()].to_string(), e.hint))
                .collect(),
        }
    }

    /// A machine too large for a dense move table gets a sparse one that answers
    /// every (state, event) pair alike: moves, forbids overriding moves, and nothing.
    #[test]
    fn large_machines_get_a_sparse_move_table_with_the_same_answers() {
        let n = 1100;
        let mut text = String::from("spec big\ninitial s0\n");
        for i in 0..n {
            text += &format!("event e{i} = call t{i}\n");
        }
        for i in 0..n {
            text += &format!("s{i} -> s{} on e{i}\n", i + 1);
        }
        text += "forbid s5 on e7, e9: \"no\"\nforbid * on e1000: \"never\"\n";
        let machine = machine(&text);
        assert!(machine.state_count() * machine.events.len() > MoveTable::DENSE_LIMIT);
        assert!(matches!(machine.moves, MoveTable::Sparse { .. }));
        let state = |name: &str| {
            machine
                .state_ids()
                .find(|&id| machine.state(id).name == name)
                .unwrap()
        };
        let event = |name: &str| machine.events.iter().position(|e| e.name == name).unwrap();
        for i in [0, 1, 5, 7, 999, 1001, n - 1] {
            let from = state(&format!("s{i}"));
            match machine.step(from, event(&format!("e{i}"))) {
                Move::Go { to, .. } => assert_eq!(machine.state(to).name, format!("s{}", i + 1)),
                other => panic!("s{i} on e{i}: {other:?}"),
            }
        }
        assert_eq!(machine.step(state("s5"), event("e7")), Move::Forbidden(0));
        assert_eq!(machine.step(state("s5"), event("e9")), Move::Forbidden(0));
        assert_eq!(
            machine.step(state("s1000"), event("e1000")),
            Move::Forbidden(1)
        );
        assert_eq!(
            machine.step(state("s3"), event("e1000")),
            Move::Forbidden(1)
        );
        assert_eq!(machine.step(state("s3"), event("e4")), Move::Unspecified);
        assert_eq!(machine.step(state("s1100"), event("e0")), Move::Unspecified);
    }

    /// Overlaps are found through the index by tool: the same pairs, reported in the
    /// order of a comparison of every pair.
    #[test]
    fn overlaps_are_found_across_tools_kinds_and_toolless_patterns() {
        let found = errors(
            "spec o\ninitial s\n\
             event a = call x where args.v == 1\n\
             event b = call x\n\
             event c = record\n\
             event d = call /x/\n\
             event e = call \"x\"\n\
             event f = result x\n\
             event g = call /x/\n\
             s -> s on a, b, c, d, e, f, g\n",
        );
        let pairs: Vec<String> = found
            .iter()
            .filter(|(code, ..)| *code == Code::OverlappingEvents)
            .map(|(_, at, _)| at.clone())
            .collect();
        // b covers a; c covers a, b, d, e, f, g; d and g cover each other.
        assert_eq!(pairs, ["b", "c", "c", "d", "e", "f", "g", "g"]);
    }

    /// A misspelled state is an unknown state with a did-you-mean where the name is
    /// dead: an `initial` nothing else names, or a source nothing enters.
    #[test]
    fn misspelled_states_are_unknown_with_a_suggestion() {
        let events = "spec s\nevent a = call x\nevent b = call y\n";
        let found = errors(&format!(
            "{events}initial idel\nidle -> pending on a\npending -> done on a\npendng -> done on b\n"
        ));
        let found: Vec<_> = found
            .iter()
            .map(|(code, at, hint)| (*code, at.as_str(), hint.as_deref().unwrap_or("")))
            .collect();
        let hint = |name, typo| {
            format!(
                "did you mean `{name}`? (to keep `{typo}` as a new state, declare it: `state {typo}`)"
            )
        };
        assert_eq!(
            found,
            [
                (Code::UnknownState, "idel", hint("idle", "idel").as_str()),
                (
                    Code::UnknownState,
                    "pendng",
                    hint("pending", "pendng").as_str()
                ),
            ]
        );
        // Sinks, states far from any other, and entered sources are states as written.
        machine(&format!(
            "{events}initial s0\ns0 -> s1 on a\ns1 -> s2 on a\ns2 -> s0 on b\nlimbo -> s0 on b\ns1 -> dome on b\ns2 -> done on a\n"
        ));
        machine(&format!(
            "{events}initial idle\nforbid idle on a: \"no\"\nidl -> idle on b\nidle -> idl on a\n"
        ));
    }

    #[test]
    fn builds_states_moves_and_accepting_sets() {
        let m = machine(
            "spec s\nevent a = call a\nevent b = call b\ninitial x\naccept x\nx -> y on a\ny -> x on b\nforbid y on a: \"no\"\n",
        );
        assert_eq!(m.name, "s");
        let names: Vec<&str> = m.state_ids().map(|id| m.state(id).name.as_str()).collect();
        assert_eq!(names, ["x", "y"]);
        let (x, y) = (m.initial, m.state_ids().nth(1).unwrap());
        assert!(m.state(x).accepting && !m.state(y).accepting);
        assert!(matches!(m.step(x, 0), Move::Go { to, .. } if to == y));
        assert_eq!(m.step(y, 0), Move::Forbidden(0));
        assert_eq!(m.step(x, 1), Move::Unspecified);
        assert_eq!(m.allowed(y), [1]);
        assert_eq!(m.graph.edge_count(), 2);
    }

    #[test]
    fn hot_states_are_the_only_non_accepting_ones() {
        let m = machine("event a = call a\ninitial x\nhot y\nx -> y on a\ny -> z on a\n");
        let accepting: Vec<bool> = m.state_ids().map(|id| m.state(id).accepting).collect();
        assert_eq!(accepting, [true, false, true]);
    }

    #[test]
    fn paths_share_prefixes_and_start_at_the_initial_state() {
        let m = machine(
            "event a = call a\nevent b = call b\nevent c = call c\npath a -> b\npath a -> c\n",
        );
        let names: Vec<&str> = m.state_ids().map(|id| m.state(id).name.as_str()).collect();
        assert_eq!(names, ["start", "a", "b", "c"]);
        assert_eq!(m.graph.edge_count(), 3);
        let declared = machine("event a = call a\ninitial idle\npath a\n");
        assert_eq!(declared.state(declared.initial).name, "idle");
    }

    #[test]
    fn the_spec_name_defaults_to_the_file_stem() {
        assert_eq!(machine("event a = call a\ninitial s\n").name, "test");
    }

    #[test]
    fn reports_every_name_error_with_a_hint() {
        let text = "event lookup = call l\nevent lookup = call m\ninitial idle\naccept idel\nidle -> idle on lokup\nforbid nowhere on lookup: \"x\"\n";
        let found = errors(text);
        let codes: Vec<(Code, &str)> = found.iter().map(|(c, t, _)| (*c, t.as_str())).collect();
        assert_eq!(
            codes,
            [
                (Code::DuplicateEvent, "lookup"),
                (Code::UnknownState, "idel"),
                (Code::UnknownEvent, "lokup"),
                (Code::UnknownState, "nowhere"),
            ]
        );
        assert_eq!(found[1].2.as_deref(), Some("did you mean `idle`?"));
        assert_eq!(found[2].2.as_deref(), Some("did you mean `lookup`?"));
    }

    #[test]
    fn structural_errors() {
        let codes = |text: &str| errors(text).into_iter().map(|e| e.0).collect::<Vec<_>>();
        assert_eq!(
            codes("event a = call a\nx -> y on a\n"),
            [Code::MissingInitial]
        );
        assert_eq!(
            codes("event a = call a\ninitial x\ninitial y\nx -> y on a\n"),
            [Code::DuplicateDeclaration]
        );
        assert_eq!(
            codes("event a = call a\ninitial x\nx -> y on a\nx -> z on a\n"),
            [Code::ConflictingTransition]
        );
        assert_eq!(
            codes("event a = call a\ninitial x\naccept x\nhot x\nx -> x on a\n"),
            [Code::AcceptAndHot]
        );
        assert_eq!(
            codes(
                "event a = call t\nevent b = call t where status == \"ok\"\ninitial x\nx -> x on a, b\n"
            ),
            [Code::OverlappingEvents]
        );
        assert_eq!(
            codes("event a = record\nevent b = message\ninitial x\nx -> x on a, b\n"),
            [Code::OverlappingEvents]
        );
        assert_eq!(
            codes("event m = message bob\ninitial x\nx -> x on m\n"),
            [Code::ToolOnNonToolPattern]
        );
        assert_eq!(
            codes("event a = call /([a-z/\ninitial x\nx -> x on a\n"),
            [Code::InvalidRegex]
        );
    }

    #[test]
    fn guarded_patterns_on_one_tool_do_not_overlap_statically() {
        machine(
            "event ok = result t where status == \"ok\"\nevent err = result t where status == \"error\"\ninitial x\nx -> x on ok, err\n",
        );
    }

    #[test]
    fn globs_are_anchored_and_escaped() {
        let regex = Regex::new(&glob_to_regex("create_*.v?")).unwrap();
        assert!(regex.is_match("create_record.v1"));
        assert!(!regex.is_match("create_recordXv1"));
        assert!(!regex.is_match("xcreate_a.v1"));
    }
}
