//! `tracegate lint`: doubtful but meaningful specs.
//!
//! A spec that does not compile is reported with its errors, exactly as `check` would.
//! A spec that compiles is examined for what is legal but probably not meant: states no
//! trace reaches or can leave cleanly, events and rules that never take effect, patterns
//! that can claim one record twice, and a spec no trace could ever violate. With traces,
//! the tool names on both sides are compared, which is where typos show up.
//!
//! Pure: the functions here take compiled specs (and, for the trace lints, the tools a
//! scan of the traces found) and return diagnostics; [`tools::scan`] is the one place
//! that reads trace files.

pub(crate) mod overlap;
pub mod tools;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::diagnostic::{Code, Diagnostic};
use crate::machine::{EventId, Machine, Move, StateId};
use crate::spec::SpecFinding;
use crate::spec::ast::{Ident, ItemKind, Otherwise, Span, SpecFile, StateSet};

/// A compiled spec together with the syntax tree it was compiled from (the tree has the
/// spans of names, which the machine does not keep).
pub struct Linted<'m> {
    /// The compiled spec.
    pub machine: &'m Machine,
    /// Its syntax tree.
    pub file: SpecFile,
}

impl<'m> Linted<'m> {
    /// Re-parses the machine's own source for its syntax tree. `None` only if the
    /// source no longer parses, which would be a bug (the machine was compiled from it).
    pub fn new(machine: &'m Machine) -> Option<Linted<'m>> {
        let file = crate::spec::parse(&machine.source.text).ok()?;
        Some(Linted { machine, file })
    }
}

/// Every warning about one compiled spec, sorted by position in the spec.
pub fn lint_spec(spec: &Linted<'_>) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let graph = Moves::new(spec.machine);
    reachability(spec, &graph, &mut found);
    unused_events(spec, &mut found);
    shadowed_transitions(spec, &mut found);
    redundant_forbids(spec, &mut found);
    duplicate_paths(spec, &mut found);
    overlap::overlapping_patterns(spec, &mut found);
    vacuous(spec, &mut found);
    unset_variables(spec, &graph, &mut found);
    found.sort_by_key(|f| (f.span.start, f.span.end, f.code));
    found
        .into_iter()
        .map(|finding| finding.into_diagnostic(&spec.machine.name, &spec.machine.source))
        .collect()
}

/// The moves that can actually happen: allowed transitions a `forbid` does not override.
/// Built from the moves the spec specifies, never from every pair of states and events,
/// so that a spec of thousands of events lints in time linear in its size.
struct Moves {
    forward: Vec<Vec<StateId>>,
    backward: Vec<Vec<StateId>>,
    /// `(event, to)` for each move out of a state, by event.
    out: Vec<Vec<(EventId, StateId)>>,
    /// The states in which each event moves or is forbidden, in state order.
    specified_in: Vec<Vec<StateId>>,
}

impl Moves {
    fn new(machine: &Machine) -> Moves {
        let n = machine.state_count();
        let mut forward = vec![Vec::new(); n];
        let mut backward = vec![Vec::new(); n];
        let mut out = vec![Vec::new(); n];
        let mut specified_in = vec![Vec::new(); machine.events.len()];
        for (from, event, step) in machine.specified_moves() {
            specified_in[event].push(from);
            if let Move::Go { to, .. } = step {
                forward[from.index()].push(to);
                backward[to.index()].push(from);
                out[from.index()].push((event, to));
            }
        }
        Moves {
            forward,
            backward,
            out,
            specified_in,
        }
    }

    /// The states reachable from `starts` along `edges`.
    fn closure(edges: &[Vec<StateId>], starts: impl IntoIterator<Item = StateId>) -> Vec<bool> {
        let mut seen = vec![false; edges.len()];
        let mut stack: Vec<StateId> = starts.into_iter().collect();
        for state in &stack {
            seen[state.index()] = true;
        }
        while let Some(state) = stack.pop() {
            for &next in &edges[state.index()] {
                if !seen[next.index()] {
                    seen[next.index()] = true;
                    stack.push(next);
                }
            }
        }
        seen
    }
}

fn reachability(spec: &Linted<'_>, moves: &Moves, found: &mut Vec<SpecFinding>) {
    let machine = spec.machine;
    let reachable = Moves::closure(&moves.forward, [machine.initial]);
    let accepting = machine
        .state_ids()
        .filter(|&state| machine.state(state).accepting);
    let can_end = Moves::closure(&moves.backward, accepting);
    let ending = machine
        .ending_span
        .map(|span| (span, "the states that may end a trace are listed here"));
    for state in machine.state_ids() {
        let name = &machine.state(state).name;
        let span = machine.state(state).span;
        if !reachable[state.index()] {
            // A state located at a `state` statement is declared there.
            let declared = spec.file.items.iter().any(|item| {
                matches!(&item.kind, ItemKind::State(list) if list.iter().any(|s| s.span == span))
            });
            found.push(
                SpecFinding::new(
                    Code::UnreachableState,
                    span,
                    format!(
                        "state `{name}` is unreachable from the initial state `{}`",
                        machine.state(machine.initial).name
                    ),
                )
                .with_hint(if declared {
                    "add a transition into it, or remove it from `state` and the transitions that name it"
                } else {
                    "add a transition into it, or remove the transitions that name it"
                }),
            );
        } else if !can_end[state.index()] {
            let mut finding = SpecFinding::new(
                Code::TrapState,
                span,
                format!("no state that may end a trace can be reached from state `{name}`"),
            )
            .with_hint(format!(
                "every trace that enters `{name}` ends in `unaccepted-end`; add the way back, or let `{name}` end a trace"
            ));
            if let Some((span, label)) = ending {
                finding = finding.with_related(span, label);
            }
            found.push(finding);
        }
    }
}

/// Variables read where no move that binds them can have happened yet: for each
/// state, the variables some path from the initial state binds (a may-analysis);
/// an event that moves (or is forbidden) in a state reads its variables there.
/// `has $VAR` asks whether the variable is set, so it is not a read.
fn unset_variables(spec: &Linted<'_>, moves: &Moves, found: &mut Vec<SpecFinding>) {
    let machine = spec.machine;
    if machine.variables.is_empty() {
        return;
    }
    let lookup = Names::new(machine);
    let slot = |name: &str| machine.variables.iter().position(|v| v == name);
    let n = machine.state_count();
    let mut bound = vec![BTreeSet::<usize>::new(); n];
    let reachable = Moves::closure(&moves.forward, [machine.initial]);
    // A worklist of states whose set grew: sets only grow, over a finite lattice, so
    // each state comes back at most once per variable and the loop ends.
    let mut queued = vec![true; n];
    let mut work: std::collections::VecDeque<StateId> = machine.state_ids().collect();
    while let Some(from) = work.pop_front() {
        queued[from.index()] = false;
        for &(event, to) in &moves.out[from.index()] {
            let mut next = bound[from.index()].clone();
            next.extend(machine.events[event].binds.iter().map(|(slot, _)| *slot));
            if !next.is_subset(&bound[to.index()]) {
                bound[to.index()].extend(next);
                if !queued[to.index()] {
                    queued[to.index()] = true;
                    work.push_back(to);
                }
            }
        }
    }
    for item in &spec.file.items {
        let ItemKind::Event(decl) = &item.kind else {
            continue;
        };
        let Some(event) = lookup.event(&decl.name.name) else {
            continue;
        };
        let mut reads: Vec<&Ident> = Vec::new();
        // A condition that tests `has $VAR` has said what the unset case means.
        let mut tested: BTreeSet<&str> = BTreeSet::new();
        if let Some(guard) = &decl.pattern.guard {
            guard.each_var(&mut |var, only_has| {
                if only_has {
                    tested.insert(var.name.as_str());
                } else {
                    reads.push(var);
                }
            });
        }
        reads.retain(|var| !tested.contains(var.name.as_str()));
        for bind in &decl.binds {
            bind.value.each_var(&mut |var| reads.push(var));
        }
        let mut reported = BTreeSet::new();
        for var in reads {
            let Some(var_slot) = slot(&var.name) else {
                continue;
            };
            let unset_in = moves.specified_in[event].iter().copied().find(|&state| {
                reachable[state.index()] && !bound[state.index()].contains(&var_slot)
            });
            if let Some(state) = unset_in {
                if reported.insert(var.name.as_str()) {
                    found.push(
                        SpecFinding::new(
                            Code::UnsetVariable,
                            var.span,
                            format!(
                                "event `{}` reads `${}` in state `{}`, which no move that binds `{}` leads to",
                                decl.name.name,
                                var.name,
                                machine.state(state).name,
                                var.name
                            ),
                        )
                        .with_hint(format!(
                            "there `${}` is unset and acts as a missing path; bind it on an earlier move, or test `has ${}`",
                            var.name, var.name
                        )),
                    );
                }
            }
        }
    }
}

/// The event names a statement refers to, with their spans.
fn used_events(file: &SpecFile) -> impl Iterator<Item = &Ident> {
    file.items
        .iter()
        .flat_map(|item| -> Box<dyn Iterator<Item = &Ident>> {
            match &item.kind {
                ItemKind::Transition(t) => Box::new(t.events.iter()),
                ItemKind::Forbid(f) => Box::new(f.events.iter()),
                ItemKind::Path(steps) => Box::new(steps.iter()),
                _ => Box::new(std::iter::empty()),
            }
        })
}

fn unused_events(spec: &Linted<'_>, found: &mut Vec<SpecFinding>) {
    let used: BTreeSet<&str> = used_events(&spec.file).map(|e| e.name.as_str()).collect();
    for item in &spec.file.items {
        if let ItemKind::Event(decl) = &item.kind {
            let name = &decl.name.name;
            if !used.contains(name.as_str()) {
                found.push(
                    SpecFinding::new(
                        Code::UnusedEvent,
                        decl.name.span,
                        format!("event `{name}` is used by no transition, `path` or `forbid`"),
                    )
                    .with_hint("records that match it are still claimed by it; use it in a transition or remove it"),
                );
            }
        }
    }
}

fn shadowed_transitions(spec: &Linted<'_>, found: &mut Vec<SpecFinding>) {
    let machine = spec.machine;
    let mut seen = BTreeSet::new();
    for (from, to, weight) in machine.edges() {
        let Move::Forbidden(rule) = machine.step(from, weight.event) else {
            continue;
        };
        if !seen.insert((from, weight.event)) {
            continue;
        }
        let event = &machine.events[weight.event].name;
        found.push(
            SpecFinding::new(
                Code::ShadowedTransition,
                weight.rule,
                format!(
                    "the move `{} -> {}` on `{event}` never happens: a `forbid` names state `{}` and event `{event}`",
                    machine.state(from).name,
                    machine.state(to).name,
                    machine.state(from).name
                ),
            )
            .with_related(machine.forbids[rule].span, "forbid overrides allow")
            .with_hint("remove the transition if the move is forbidden, or narrow the `forbid` if it is not"),
        );
    }
}

/// A machine's states and events by name, looked up in constant time: lints ask for
/// each name a spec writes, and a spec may have thousands.
struct Names<'m> {
    states: HashMap<&'m str, StateId>,
    events: HashMap<&'m str, EventId>,
}

impl<'m> Names<'m> {
    fn new(machine: &'m Machine) -> Names<'m> {
        let mut states = HashMap::new();
        for state in machine.state_ids() {
            states
                .entry(machine.state(state).name.as_str())
                .or_insert(state);
        }
        let mut events = HashMap::new();
        for (id, event) in machine.events.iter().enumerate() {
            events.entry(event.name.as_str()).or_insert(id);
        }
        Names { states, events }
    }

    fn state(&self, name: &str) -> Option<StateId> {
        self.states.get(name).copied()
    }

    fn event(&self, name: &str) -> Option<EventId> {
        self.events.get(name).copied()
    }
}

fn redundant_forbids(spec: &Linted<'_>, found: &mut Vec<SpecFinding>) {
    let machine = spec.machine;
    let lookup = Names::new(machine);
    let mut first: BTreeMap<(StateId, EventId), Span> = BTreeMap::new();
    for item in &spec.file.items {
        let ItemKind::Forbid(forbid) = &item.kind else {
            continue;
        };
        let states: Vec<StateId> = match &forbid.states {
            StateSet::All(_) => machine.state_ids().collect(),
            StateSet::Named(names) => names
                .iter()
                .filter_map(|name| lookup.state(&name.name))
                .collect(),
        };
        let events: Vec<EventId> = forbid
            .events
            .iter()
            .filter_map(|event| lookup.event(&event.name))
            .collect();
        let mut pre_empted = Vec::new();
        let mut pre_empted_set = BTreeSet::new();
        let mut earlier = None;
        for &state in &states {
            for &event in &events {
                match first.get(&(state, event)) {
                    Some(&span) => {
                        if pre_empted_set.insert((state, event)) {
                            pre_empted.push((state, event));
                        }
                        earlier.get_or_insert(span);
                    }
                    None => {
                        first.insert((state, event), item.span);
                    }
                }
            }
        }
        let Some(earlier) = earlier else { continue };
        let moves = pre_empted
            .iter()
            .map(|&(state, event)| {
                format!(
                    "`{}` on `{}`",
                    machine.state(state).name,
                    machine.events[event].name
                )
            })
            .collect::<Vec<_>>()
            .join(", ");
        let all = pre_empted.len() == states.len() * events.len();
        let message = if pre_empted.len() == 1 {
            format!(
                "{moves} is already forbidden by an earlier rule, so this message is never shown for it"
            )
        } else {
            format!(
                "{moves} are already forbidden by an earlier rule, so this message is never shown for them"
            )
        };
        found.push(
            SpecFinding::new(Code::RedundantForbid, item.span, message)
                .with_related(earlier, "the earlier rule, whose message is reported")
                .with_hint(if all {
                    "remove this rule, or merge its message into the earlier one"
                } else {
                    "drop the moves the earlier rule already forbids from this one"
                }),
        );
    }
}

fn duplicate_paths(spec: &Linted<'_>, found: &mut Vec<SpecFinding>) {
    let paths: Vec<(Span, Vec<&str>)> = spec
        .file
        .items
        .iter()
        .filter_map(|item| match &item.kind {
            ItemKind::Path(steps) => Some((
                item.span,
                steps.iter().map(|step| step.name.as_str()).collect(),
            )),
            _ => None,
        })
        .collect();
    // In lexicographic order, the paths that start with a given one follow it in one
    // run, so each path looks only at that run rather than at every other path.
    let mut sorted: Vec<usize> = (0..paths.len()).collect();
    sorted.sort_by(|&a, &b| paths[a].1.cmp(&paths[b].1).then(a.cmp(&b)));
    for (i, (span, steps)) in paths.iter().enumerate() {
        // A path is redundant if another one starts with all of its steps; of two equal
        // paths, the later one is. The first such path in the file is named.
        let from = sorted.partition_point(|&k| paths[k].1 < *steps);
        let covering = sorted[from..]
            .iter()
            .copied()
            .take_while(|&j| paths[j].1.starts_with(steps))
            .filter(|&j| j != i && (paths[j].1.len() > steps.len() || j < i))
            .min()
            .map(|j| &paths[j]);
        if let Some((other_span, other)) = covering {
            let (message, label) = if other.len() == steps.len() {
                ("this `path` repeats another", "the same path")
            } else {
                (
                    "this `path` is a prefix of another, which already allows all of its moves",
                    "the longer path",
                )
            };
            found.push(
                SpecFinding::new(Code::DuplicatePath, *span, message.to_string())
                    .with_related(*other_span, label)
                    .with_hint("paths share states by name, so this one adds nothing; remove it"),
            );
        }
    }
}

fn vacuous(spec: &Linted<'_>, found: &mut Vec<SpecFinding>) {
    let machine = spec.machine;
    let all_accepting = machine
        .state_ids()
        .all(|state| machine.state(state).accepting);
    if machine.forbids.is_empty() && machine.otherwise == Otherwise::Ignore && all_accepting {
        let span = machine.otherwise_span.unwrap_or_default();
        found.push(
            SpecFinding::new(
                Code::VacuousSpec,
                span,
                format!(
                    "no trace can violate spec `{}`: it has no `forbid`, ignores other events, and every state may end a trace",
                    machine.name
                ),
            )
            .with_hint("forbid the moves the protocol prevents, list the states a trace may end in with `accept`, or say `otherwise reject`"),
        );
    }
}
