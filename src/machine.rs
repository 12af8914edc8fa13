//! The compiled machine: a spec's events as compiled matchers, its states and allowed
//! transitions as a petgraph graph, and a dense move table for the checker's hot path.
//!
//! Built only by `spec::compile`, which guarantees the invariants the checker
//! relies on: one initial state, at most one target per (state, event), every name
//! resolved.

use std::cmp::Ordering;
use std::sync::Arc;

use petgraph::graph::{DiGraph, NodeIndex};
use regex::Regex;
use serde_json::Value;

use crate::eval::{Context, Operand, VarCheck, compare, value_has_secret};
use crate::json::{CompareOp, JsonType, Segment};
use crate::source::Span;
pub use crate::source::SpecSource;
use crate::trace::{Kind, Record, Status};

/// What kind of record an event pattern matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// A tool call.
    Call,
    /// A tool result.
    Result,
    /// A message.
    Message,
    /// Any record, whatever its kind.
    Record,
}

impl PatternKind {
    /// The pattern's keyword in the spec language.
    pub fn keyword(self) -> &'static str {
        match self {
            PatternKind::Call => "call",
            PatternKind::Result => "result",
            PatternKind::Message => "message",
            PatternKind::Record => "record",
        }
    }
}

/// What an event with no transition from the current state means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Otherwise {
    /// A violation that names the allowed events (the default).
    Reject,
    /// Nothing: the event is skipped.
    Ignore,
}

/// A state's index in its machine (see [`Machine::state`]): the order in which the
/// spec first names its states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StateId(u32);

impl StateId {
    /// The state's position, from 0, in the order the spec first names its states.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The graph node of this state.
    pub(crate) fn node(self) -> NodeIndex<u32> {
        NodeIndex::new(self.index())
    }

    /// The state of a graph node.
    pub(crate) fn of(node: NodeIndex<u32>) -> StateId {
        StateId(node.index() as u32)
    }
}
/// An event's index in [`Machine::events`].
pub type EventId = usize;

/// A compiled spec: what the checker walks, the explorer searches and the exports draw.
#[derive(Debug)]
pub struct Machine {
    /// The spec's name (`spec NAME`, or the file's stem).
    pub name: String,
    /// Its one-line purpose (`about "..."`).
    pub about: Option<String>,
    /// The source it was compiled from, for locating rules in reports.
    pub source: Arc<SpecSource>,
    /// Its events, in declaration order; an [`EventId`] indexes them.
    pub events: Vec<Event>,
    /// States are nodes; allowed transitions are edges labelled with their event.
    /// Kept inside the crate: [`Machine::state`], [`Machine::state_ids`] and
    /// [`Machine::edges`] read it.
    pub(crate) graph: DiGraph<State, Edge, u32>,
    /// The state every instance starts in.
    pub initial: StateId,
    /// What an event with no transition from the current state means.
    pub otherwise: Otherwise,
    /// Span of the `otherwise` statement, when written.
    pub otherwise_span: Option<Span>,
    /// Span of the `accept` or `hot` statement, when written.
    pub ending_span: Option<Span>,
    /// `per` keys: one instance per distinct value of these paths.
    pub per: Vec<KeyPath>,
    /// The `forbid` rules, one per forbidden message and statement.
    pub forbids: Vec<ForbidRule>,
    /// What each event does in each state.
    pub(crate) moves: MoveTable,
    /// Which events can match a record, by the record's tool: events naming the tool
    /// exactly, and the events that must always be tried (globs, regexes, no tool).
    pub(crate) index: EventIndex,
    /// The instance variables events bind, by slot.
    pub variables: Vec<String>,
    /// Whether some guard reads a variable or a provenance index, so which event a
    /// record is depends on the instance it goes to.
    pub(crate) contextual: bool,
    /// Whether some guard tests provenance, so the checker keeps each trace's index.
    pub(crate) provenance: bool,
}

/// Narrows the events to try on a record to those that can match its kind and tool.
#[derive(Debug, Default)]
pub(crate) struct EventIndex {
    /// Per tool named exactly, and per record kind ([`kind_slot`]): the events naming
    /// that tool whose pattern takes that kind, ascending.
    by_tool: rustc_hash::FxHashMap<String, [Vec<EventId>; KINDS]>,
    /// Per record kind: the events that must always be tried (globs, regexes, no
    /// tool) whose pattern takes that kind, ascending.
    always: [Vec<EventId>; KINDS],
}

/// Record kinds an [`EventIndex`] tells apart: call, result, message, and none.
const KINDS: usize = 4;

fn kind_slot(kind: Option<Kind>) -> usize {
    match kind {
        Some(Kind::Call) => 0,
        Some(Kind::Result) => 1,
        Some(Kind::Message) => 2,
        None => 3,
    }
}

impl EventIndex {
    pub(crate) fn new(events: &[Event]) -> EventIndex {
        let mut index = EventIndex::default();
        let kinds = [
            Some(Kind::Call),
            Some(Kind::Result),
            Some(Kind::Message),
            None,
        ];
        for (id, event) in events.iter().enumerate() {
            let lists = match &event.matcher.tool {
                Some(ToolMatcher::Name(name)) => index.by_tool.entry(name.clone()).or_default(),
                _ => &mut index.always,
            };
            for kind in kinds {
                if event.matcher.takes(kind) {
                    lists[kind_slot(kind)].push(id);
                }
            }
        }
        index
    }
}

/// One `per` path.
#[derive(Debug, Clone)]
pub struct KeyPath {
    /// The path as written.
    pub text: String,
    /// The path's steps into a record.
    pub segments: Vec<Segment>,
}

/// A state of the machine.
#[derive(Debug)]
pub struct State {
    /// Its name.
    pub name: String,
    /// Where the state is first named.
    pub span: Span,
    /// Whether a trace may end in it.
    pub accepting: bool,
}

/// An allowed transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    /// The event that takes it.
    pub event: EventId,
    /// The transition or `path` statement that allows it.
    pub rule: Span,
}

/// A `forbid` rule.
#[derive(Debug)]
pub struct ForbidRule {
    /// The message a reviewer reads when it fires.
    pub message: String,
    /// The `forbid` statement.
    pub span: Span,
}

/// What each event does in each state: a dense row-major table (one lookup, the
/// checker's hot path) while states × events is small, as it is in every spec written
/// by hand; past [`MoveTable::DENSE_LIMIT`] cells, each state's specified moves sorted by
/// event (a binary search), so memory grows with the spec rather than with its square.
#[derive(Debug)]
pub(crate) enum MoveTable {
    /// `moves[state * events + event]`.
    Dense { events: usize, moves: Vec<Move> },
    /// `rows[state]`: `(event, move)` for each specified move, sorted by event.
    Sparse { rows: Vec<Vec<(EventId, Move)>> },
}

impl MoveTable {
    /// The most cells a dense table may have (about 24 MiB).
    pub(crate) const DENSE_LIMIT: usize = 1 << 20;

    /// A table with `states` states and `events` events, of the moves `specified`.
    pub(crate) fn new(
        states: usize,
        events: usize,
        specified: impl IntoIterator<Item = (StateId, EventId, Move)>,
    ) -> MoveTable {
        match states.checked_mul(events) {
            Some(cells) if cells <= Self::DENSE_LIMIT => {
                let mut moves = vec![Move::Unspecified; cells];
                for (state, event, step) in specified {
                    moves[state.index() * events + event] = step;
                }
                MoveTable::Dense { events, moves }
            }
            _ => {
                let mut rows = vec![Vec::new(); states];
                for (state, event, step) in specified {
                    let row: &mut Vec<(EventId, Move)> = &mut rows[state.index()];
                    match row.binary_search_by_key(&event, |&(e, _)| e) {
                        Ok(at) => row[at].1 = step,
                        Err(at) => row.insert(at, (event, step)),
                    }
                }
                MoveTable::Sparse { rows }
            }
        }
    }

    /// Every cell that is not [`Move::Unspecified`], by state then event.
    fn specified(&self) -> Vec<(StateId, EventId, Move)> {
        let state = |index: usize| StateId(index as u32);
        match self {
            MoveTable::Dense { events, moves } => moves
                .iter()
                .enumerate()
                .filter(|(_, step)| **step != Move::Unspecified)
                .map(|(cell, &step)| (state(cell / events), cell % events, step))
                .collect(),
            MoveTable::Sparse { rows } => rows
                .iter()
                .enumerate()
                .flat_map(|(index, row)| {
                    row.iter()
                        .map(move |&(event, step)| (state(index), event, step))
                })
                .filter(|(_, _, step)| *step != Move::Unspecified)
                .collect(),
        }
    }

    fn get(&self, state: StateId, event: EventId) -> Move {
        match self {
            MoveTable::Dense { events, moves } => moves[state.index() * events + event],
            MoveTable::Sparse { rows } => {
                let row = &rows[state.index()];
                row.binary_search_by_key(&event, |&(e, _)| e)
                    .map_or(Move::Unspecified, |at| row[at].1)
            }
        }
    }
}

/// What an event does in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    /// No transition: `otherwise` decides.
    Unspecified,
    /// An allowed transition.
    Go {
        /// The state it leads to.
        to: StateId,
        /// The statement that allows it.
        rule: Span,
    },
    /// Index into [`Machine::forbids`].
    Forbidden(usize),
}

impl Machine {
    /// The state `id`.
    pub fn state(&self, id: StateId) -> &State {
        &self.graph[id.node()]
    }

    /// How many states the machine has.
    pub fn state_count(&self) -> usize {
        self.graph.node_count()
    }

    /// Every state, in declaration order.
    pub fn state_ids(&self) -> impl Iterator<Item = StateId> + '_ {
        self.graph.node_indices().map(StateId::of)
    }

    /// Every edge of the graph: `(from, to, edge)`.
    pub fn edges(&self) -> impl Iterator<Item = (StateId, StateId, Edge)> + '_ {
        self.graph.edge_indices().map(|edge| {
            let (from, to) = self
                .graph
                .edge_endpoints(edge)
                .expect("bug: an edge index from the graph itself");
            (StateId::of(from), StateId::of(to), self.graph[edge])
        })
    }

    /// The moves a trace can make, `(from, to, edge)`, in declaration order: by the
    /// statement that allows them, then (for the moves of one `path` or one
    /// `on E1, E2`) by source state and event. A transition a `forbid` overrides never
    /// happens and is left out.
    pub fn allowed_moves(&self) -> Vec<(StateId, StateId, Edge)> {
        let mut moves: Vec<_> = self
            .edges()
            .filter(|&(from, _, edge)| matches!(self.step(from, edge.event), Move::Go { .. }))
            .collect();
        moves.sort_by_key(|&(from, _, edge)| (edge.rule.start, from.index(), edge.event));
        moves
    }

    /// What `event` does in `state`.
    pub fn step(&self, state: StateId, event: EventId) -> Move {
        self.moves.get(state, event)
    }

    /// Every move the spec specifies, allowed or forbidden, by state then event: what
    /// [`Machine::step`] answers other than [`Move::Unspecified`], found without asking
    /// for every pair of states and events (which grows with the square of the spec).
    pub(crate) fn specified_moves(&self) -> Vec<(StateId, EventId, Move)> {
        self.moves.specified()
    }

    /// Per state, whether it is a sink: accepting, and every event there keeps an
    /// instance in it or is ignored (`otherwise ignore`), so an instance that reaches it
    /// can never move or report again. Reads each state's specified moves once, so a
    /// large sparse machine costs its moves, not states × events.
    pub(crate) fn sinks(&self) -> Vec<bool> {
        let events = self.events.len();
        self.state_ids()
            .map(|state| {
                let stays = |step: Move| match step {
                    Move::Go { to, .. } => to == state,
                    Move::Unspecified => self.otherwise == Otherwise::Ignore,
                    Move::Forbidden(_) => false,
                };
                self.state(state).accepting
                    && match &self.moves {
                        MoveTable::Dense { moves, .. } => {
                            let start = state.index() * events;
                            moves[start..start + events].iter().all(|&step| stays(step))
                        }
                        MoveTable::Sparse { rows } => {
                            let row = &rows[state.index()];
                            row.iter().all(|&(_, step)| stays(step))
                                && (row.len() == events || stays(Move::Unspecified))
                        }
                    }
            })
            .collect()
    }

    /// The events with an allowed transition from `state`, in declaration order.
    pub fn allowed(&self, state: StateId) -> Vec<EventId> {
        (0..self.events.len())
            .filter(|&event| matches!(self.step(state, event), Move::Go { .. }))
            .collect()
    }

    /// The events of this spec that `record` matches, in declaration order.
    pub fn classify(&self, record: &Record<'_>) -> Vec<EventId> {
        let mut matched = Vec::new();
        self.each_match(record, &Context::default(), |id| {
            matched.push(id);
            true
        });
        matched
    }

    /// [`Machine::classify`] for an instance: its variables and its trace's index.
    pub fn classify_in(&self, record: &Record<'_>, ctx: &Context<'_>) -> Vec<EventId> {
        let mut matched = Vec::new();
        self.each_match(record, ctx, |id| {
            matched.push(id);
            true
        });
        matched
    }

    /// Whether some guard reads a variable or provenance, so that which event a record
    /// is depends on the instance (and the trace) it goes to.
    pub fn is_contextual(&self) -> bool {
        self.contextual
    }

    /// The first two events that `record` matches, in declaration order: the event it
    /// is, and (if any) a second one that makes it ambiguous.
    pub fn first_two(&self, record: &Record<'_>) -> (Option<EventId>, Option<EventId>) {
        self.first_two_in(record, &Context::default())
    }

    /// [`Machine::first_two`] for an instance: its variables and its trace's index.
    pub fn first_two_in(
        &self,
        record: &Record<'_>,
        ctx: &Context<'_>,
    ) -> (Option<EventId>, Option<EventId>) {
        let (mut first, mut second) = (None, None);
        self.each_match(record, ctx, |id| {
            if first.is_none() {
                first = Some(id);
                true
            } else {
                second = Some(id);
                false
            }
        });
        (first, second)
    }

    /// Calls `found` with each event `record` matches, in declaration order, while it
    /// returns `true`. Only events that can match the record's tool are tried.
    fn each_match(
        &self,
        record: &Record<'_>,
        ctx: &Context<'_>,
        mut found: impl FnMut(EventId) -> bool,
    ) {
        let slot = kind_slot(record.kind);
        let named: &[EventId] = record
            .tool
            .as_deref()
            .and_then(|tool| self.index.by_tool.get(tool))
            .map_or(&[], |lists| lists[slot].as_slice());
        let always = self.index.always[slot].as_slice();
        let (mut i, mut j) = (0, 0);
        while i < named.len() || j < always.len() {
            // Merge the two ascending lists, so events are tried in declaration order.
            // An event of the first takes the record's kind and names its tool, so
            // only its guard is left to test; one of the second takes its kind.
            let (id, holds) = if j == always.len() || (i < named.len() && named[i] < always[j]) {
                i += 1;
                let id = named[i - 1];
                (id, self.events[id].matcher.guard_holds(record, ctx))
            } else {
                j += 1;
                let id = always[j - 1];
                let matcher = &self.events[id].matcher;
                (
                    id,
                    matcher.tool_matches(record) && matcher.guard_holds(record, ctx),
                )
            };
            if holds && !found(id) {
                return;
            }
        }
    }

    /// Writes the instance key of `record` into `key`: the values of the `per` paths
    /// (strings as their text, other values as JSON), joined by `, `. Returns `false`
    /// when one of the paths is missing from the record (`key` then holds nothing usable).
    pub fn key_of(&self, record: &Record<'_>, key: &mut String) -> bool {
        key.clear();
        for (i, path) in self.per.iter().enumerate() {
            if i > 0 {
                key.push_str(", ");
            }
            if !record.push_key(&path.segments, key) {
                return false;
            }
        }
        true
    }
}

/// An event: a name for the records its pattern matches.
#[derive(Debug)]
pub struct Event {
    /// Its name.
    pub name: String,
    /// The `event` statement.
    pub span: Span,
    /// The compiled pattern; inside the crate, as it holds compiled regexes.
    pub(crate) matcher: Matcher,
    /// `bind` list: (variable slot, value), set together when the event's move is taken.
    pub(crate) binds: Vec<(usize, Operand)>,
}

/// A compiled event pattern.
#[derive(Debug)]
pub(crate) struct Matcher {
    pub kind: PatternKind,
    pub tool: Option<ToolMatcher>,
    pub guard: Option<Guard>,
}

impl Matcher {
    pub fn matches(&self, record: &Record<'_>) -> bool {
        self.matches_in(record, &Context::default())
    }

    pub fn matches_in(&self, record: &Record<'_>, ctx: &Context<'_>) -> bool {
        self.takes(record.kind) && self.tool_matches(record) && self.guard_holds(record, ctx)
    }

    /// Whether the pattern takes records of `kind`.
    fn takes(&self, kind: Option<Kind>) -> bool {
        match self.kind {
            PatternKind::Call => kind == Some(Kind::Call),
            PatternKind::Result => kind == Some(Kind::Result),
            PatternKind::Message => kind == Some(Kind::Message),
            PatternKind::Record => true,
        }
    }

    fn tool_matches(&self, record: &Record<'_>) -> bool {
        self.tool.as_ref().is_none_or(|tool| {
            record
                .tool
                .as_deref()
                .is_some_and(|name| tool.matches(name))
        })
    }

    fn guard_holds(&self, record: &Record<'_>, ctx: &Context<'_>) -> bool {
        self.guard
            .as_ref()
            .is_none_or(|guard| guard.eval(record, ctx))
    }
}

/// How an event names its tool.
#[derive(Debug)]
pub(crate) enum ToolMatcher {
    Name(String),
    /// Globs and regexes both compile to a regex.
    Pattern(Regex),
}

impl ToolMatcher {
    pub fn matches(&self, tool: &str) -> bool {
        match self {
            ToolMatcher::Name(name) => name == tool,
            ToolMatcher::Pattern(regex) => regex.is_match(tool),
        }
    }
}

/// A compiled guard. Evaluation never coerces: see [`crate::json::json_eq`] and [`crate::json::json_cmp`].
#[derive(Debug)]
pub(crate) enum Guard {
    Or(Box<Guard>, Box<Guard>),
    And(Box<Guard>, Box<Guard>),
    Not(Box<Guard>),
    Compare {
        path: Vec<Segment>,
        op: CompareOp,
        value: Value,
    },
    In {
        path: Vec<Segment>,
        values: Vec<Value>,
    },
    Matches {
        path: Vec<Segment>,
        regex: Regex,
    },
    Has(Vec<Segment>),
    Is(Vec<Segment>, JsonType),
    Relation {
        lhs: Operand,
        op: CompareOp,
        rhs: Operand,
    },
    HasVar(usize),
    /// `$VAR in [..]`, `$VAR matches /re/`, `$VAR is TYPE`.
    VarTest(usize, VarCheck),
    /// `VALUE in outputs [of TOOL]` (`outputs`) or `VALUE in messages [from ROLE]`.
    Provenance {
        value: Operand,
        outputs: bool,
        tool: Option<ToolMatcher>,
        role: Option<String>,
    },
    /// `secret in VALUE`; `None` for the whole record.
    Secret(Option<Operand>),
}

impl Guard {
    /// Hands every test of the guard (what is neither `and`, `or` nor `not`) to `visit`,
    /// left to right, with whether it counts positively: under an even number of `not`s.
    pub(crate) fn each_test<'g>(&'g self, visit: &mut impl FnMut(&'g Guard, bool)) {
        fn walk<'g>(guard: &'g Guard, positive: bool, visit: &mut impl FnMut(&'g Guard, bool)) {
            match guard {
                Guard::Or(a, b) | Guard::And(a, b) => {
                    walk(a, positive, visit);
                    walk(b, positive, visit);
                }
                Guard::Not(inner) => walk(inner, !positive, visit),
                test => visit(test, positive),
            }
        }
        walk(self, true, visit);
    }

    pub fn eval(&self, record: &Record<'_>, ctx: &Context<'_>) -> bool {
        match self {
            Guard::Or(a, b) => a.eval(record, ctx) || b.eval(record, ctx),
            Guard::And(a, b) => a.eval(record, ctx) && b.eval(record, ctx),
            Guard::Not(inner) => !inner.eval(record, ctx),
            Guard::Relation { lhs, op, rhs } => {
                compare(lhs.eval(record, ctx), *op, rhs.eval(record, ctx))
            }
            Guard::HasVar(slot) => ctx.vars.get(*slot).is_some_and(Option::is_some),
            Guard::VarTest(slot, check) => {
                check.holds(ctx.vars.get(*slot).and_then(Option::as_ref))
            }
            Guard::Provenance {
                value,
                outputs,
                tool,
                role,
            } => {
                let Some(seen) = ctx.seen else {
                    return false;
                };
                let Ok(Some(crate::eval::Val::Json(value))) = value.eval(record, ctx) else {
                    return false;
                };
                seen.contains(&value, *outputs, |source| {
                    if *outputs {
                        tool.as_ref().is_none_or(|tool| tool.matches(source))
                    } else {
                        role.as_deref().is_none_or(|role| role == source)
                    }
                })
            }
            Guard::Secret(None) => record_has_secret(record),
            Guard::Secret(Some(target)) => match target.eval(record, ctx) {
                Ok(Some(crate::eval::Val::Json(value))) => value_has_secret(&value),
                _ => false,
            },
            Guard::Compare { path, op, value } => {
                if let ([Segment::Key(key)], Value::String(want), CompareOp::Eq | CompareOp::Ne) =
                    (path.as_slice(), value, op)
                {
                    // The canonical fields were validated and extracted when the record
                    // was read; comparing those is the same test, without a lookup.
                    let canonical = match key.as_str() {
                        "status" => Some(record.status.map(Status::as_str)),
                        "kind" => Some(record.kind.map(Kind::as_str)),
                        "tool" => Some(record.tool.as_deref()),
                        _ => None,
                    };
                    if let Some(have) = canonical {
                        return (have == Some(want.as_str())) == (*op == CompareOp::Eq);
                    }
                }
                let Some(actual) = record.lookup(path) else {
                    // A missing path is distinct from every value: only `!=` holds.
                    return *op == CompareOp::Ne;
                };
                match op {
                    CompareOp::Eq => actual.eq_literal(value),
                    CompareOp::Ne => !actual.eq_literal(value),
                    CompareOp::Lt => actual.cmp_literal(value) == Some(Ordering::Less),
                    CompareOp::Le => matches!(
                        actual.cmp_literal(value),
                        Some(Ordering::Less | Ordering::Equal)
                    ),
                    CompareOp::Gt => actual.cmp_literal(value) == Some(Ordering::Greater),
                    CompareOp::Ge => matches!(
                        actual.cmp_literal(value),
                        Some(Ordering::Greater | Ordering::Equal)
                    ),
                }
            }
            Guard::In { path, values } => record
                .lookup(path)
                .is_some_and(|actual| values.iter().any(|value| actual.eq_literal(value))),
            Guard::Matches { path, regex } => record
                .lookup(path)
                .is_some_and(|actual| actual.as_str().is_some_and(|text| regex.is_match(&text))),
            Guard::Has(path) => match path.as_slice() {
                [Segment::Key(key)] => record.has_field(key),
                _ => record.lookup(path).is_some(),
            },
            Guard::Is(path, ty) => record
                .lookup(path)
                .is_some_and(|actual| actual.json_type() == *ty),
        }
    }
}

/// Whether any field of `record` holds a credential (see [`value_has_secret`]).
fn record_has_secret(record: &Record<'_>) -> bool {
    use crate::trace::Fields;
    match &record.fields {
        Fields::Raw(fields) => fields.iter().any(|(name, raw)| {
            let text = raw.get();
            // A member named like a secret is judged with its name, as JSON.
            crate::redact::contains_secret(&format!(
                "{{{}:{text}}}",
                Value::String(name.to_string())
            )) || serde_json::from_str::<Value>(text).is_ok_and(|value| value_has_secret(&value))
        }),
        Fields::Owned(map) => value_has_secret(&Value::Object(map.clone())),
        Fields::Built(built) => value_has_secret(&Value::Object(built.to_map())),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::trace::{Fields, Location};

    /// The index only narrows which events are tried: on records of every kind and
    /// tool, `first_two` finds what testing every event in declaration order finds.
    #[test]
    fn the_event_index_finds_what_trying_every_event_finds() {
        // Kinds, exact tools, patterns and no tool, told apart by guards (the analyzer
        // refuses events that claim the same records).
        let text = "spec t\n\
            event a = call write where args.n == 1\n\
            event b = record where args.n == 9\n\
            event c = result write where status == \"ok\"\n\
            event d = call \"wr*\" where args.n == 2\n\
            event e = call where args.n == 3\n\
            event f = message\n\
            event h = result /^re/ where status == \"error\"\n\
            initial s\naccept s\notherwise ignore\n";
        let source = Arc::new(SpecSource::new("t.tg", text));
        let machine = crate::spec::analyzer::load(source).expect("the spec compiles");
        let kinds = [None, Some("call"), Some("result"), Some("message")];
        let tools = [
            None,
            Some("write"),
            Some("wrap"),
            Some("read"),
            Some("other"),
        ];
        let mut tried = 0;
        for kind in kinds {
            for tool in tools {
                for n in 1..=9 {
                    let extra = format!(
                        r#""args":{{"n":{n}}},"status":"{}""#,
                        ["ok", "error"][n % 2]
                    );
                    let mut members = vec![extra];
                    if let Some(kind) = kind {
                        members.push(format!(r#""kind":"{kind}""#));
                    }
                    if let Some(tool) = tool {
                        members.push(format!(r#""tool":"{tool}""#));
                    }
                    let line = format!("{{{}}}", members.join(","));
                    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&line) else {
                        panic!("the test's line is an object");
                    };
                    let Ok(record) = Record::new(Fields::Owned(map), Location::default()) else {
                        continue;
                    };
                    let mut every = machine
                        .events
                        .iter()
                        .enumerate()
                        .filter(|(_, event)| event.matcher.matches(&record))
                        .map(|(id, _)| id);
                    let want = (every.next(), every.next());
                    assert_eq!(machine.first_two(&record), want, "{line}");
                    tried += 1;
                }
            }
        }
        assert!(tried > 100, "most combinations are records ({tried})");
    }
}
