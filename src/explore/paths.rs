//! Paths through a machine: the shortest way to every violation a spec can report
//! (forbidden moves, non-accepting ends, unexpected events), and a bounded enumeration
//! of the paths it allows.
//!
//! Everything here works on the compiled [`Machine`] alone and is deterministic: states
//! are visited breadth-first, events in declaration order, so two runs (and two
//! machines compiled from one spec) give the same paths in the same order.

use std::collections::VecDeque;

use crate::diagnostic::Code;
use crate::machine::{EventId, Machine, Move, StateId};
use crate::spec::ast::{Otherwise, Span};

/// One move along a path: in state `from`, event `event` led to `to`. An event that
/// `otherwise ignore` skips is a move with `to == from` and `ignored` set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The state before the move.
    pub from: StateId,
    /// The event.
    pub event: EventId,
    /// The state after the move.
    pub to: StateId,
    /// `otherwise ignore` skipped the event.
    pub ignored: bool,
}

/// What a counterexample makes the checker report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Violation {
    /// A `forbid` rule (index into [`Machine::forbids`]) fires on the last event.
    Forbidden(usize),
    /// The trace ends in a state that may not end a trace.
    UnacceptedEnd,
    /// The last event has no transition from the state, under `otherwise reject`.
    Unexpected,
}

impl Violation {
    /// The diagnostic code the checker reports it with.
    pub fn code(self) -> Code {
        match self {
            Violation::Forbidden(_) => Code::ForbiddenTransition,
            Violation::UnacceptedEnd => Code::UnacceptedEnd,
            Violation::Unexpected => Code::UnexpectedEvent,
        }
    }

    fn order(self) -> u8 {
        match self {
            Violation::Forbidden(_) => 0,
            Violation::UnacceptedEnd => 1,
            Violation::Unexpected => 2,
        }
    }
}

/// The shortest event sequence from the initial state that makes the checker report
/// one violation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counterexample {
    /// What the checker reports.
    pub violation: Violation,
    /// The allowed moves that lead to `state`, in order.
    pub steps: Vec<Step>,
    /// The state the violation happens in.
    pub state: StateId,
    /// The offending event; `None` for an unaccepted end.
    pub event: Option<EventId>,
}

impl Counterexample {
    /// The diagnostic code the checker reports it with.
    pub fn code(&self) -> Code {
        self.violation.code()
    }

    /// The events of the trace, in order: the path's moves, then the offending event.
    pub fn events(&self) -> Vec<EventId> {
        self.steps
            .iter()
            .map(|step| step.event)
            .chain(self.event)
            .collect()
    }

    /// The span the checker reports as the violated rule; the same choice as
    /// [`crate::check`] makes.
    pub fn rule(&self, machine: &Machine) -> Span {
        match self.violation {
            Violation::Forbidden(rule) => machine.forbids[rule].span,
            Violation::Unexpected => machine
                .otherwise_span
                .unwrap_or(machine.state(self.state).span),
            Violation::UnacceptedEnd => machine
                .ending_span
                .unwrap_or(machine.state(self.state).span),
        }
    }

    /// What the reviewer reads: the forbid rule's message, or what went wrong.
    pub fn message(&self, machine: &Machine) -> String {
        let state = &machine.state(self.state).name;
        match (self.violation, self.event) {
            (Violation::Forbidden(rule), _) => machine.forbids[rule].message.clone(),
            (Violation::Unexpected, Some(event)) => format!(
                "event `{}` is not allowed in state `{state}`",
                machine.events[event].name
            ),
            _ => format!("the trace ends in state `{state}`, which may not end a trace"),
        }
    }

    /// The path as a person reads it: `create -> outcome_unknown -> create ✗`, with
    /// `(ignored)` after events `otherwise ignore` skips and, for a trace that ends in
    /// the wrong state, `✗ ends in `unknown``.
    pub fn display_path(&self, machine: &Machine) -> String {
        let mut text = path_text(machine, &self.steps);
        match self.event {
            Some(event) => {
                if !text.is_empty() {
                    text.push_str(" -> ");
                }
                text.push_str(&machine.events[event].name);
                text.push_str(" ✗");
            }
            None => {
                text.push_str(&format!(" ✗ ends in `{}`", machine.state(self.state).name));
            }
        }
        text
    }
}

/// `a -> b -> c`, marking ignored events.
pub fn path_text(machine: &Machine, steps: &[Step]) -> String {
    steps
        .iter()
        .map(|step| {
            let name = &machine.events[step.event].name;
            if step.ignored {
                format!("{name} (ignored)")
            } else {
                name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(" -> ")
}

/// A violation the spec declares but no path of at most `max_depth` events reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unreached {
    /// What the checker would report.
    pub violation: Violation,
    /// The state the violation would happen in.
    pub state: StateId,
    /// The offending event; `None` for an unaccepted end.
    pub event: Option<EventId>,
    /// `true` when the state is reachable, only by a path longer than `max_depth`.
    pub beyond_depth: bool,
}

/// Shortest paths from the initial state: breadth-first over allowed moves, events in
/// declaration order, so ties go to the earlier-declared event.
#[derive(Debug, Clone)]
pub(crate) struct ShortestPaths {
    /// `parent[state]`: the move that first reached it.
    parent: Vec<Option<Step>>,
    reached: Vec<bool>,
    /// `depth[state]`: the length of the shortest path to it.
    depth: Vec<usize>,
    initial: StateId,
}

impl ShortestPaths {
    pub fn new(machine: &Machine) -> ShortestPaths {
        let count = machine.graph.node_count();
        let mut paths = ShortestPaths {
            parent: vec![None; count],
            reached: vec![false; count],
            depth: vec![0; count],
            initial: machine.initial,
        };
        let mut queue = VecDeque::new();
        paths.reached[machine.initial.index()] = true;
        queue.push_back(machine.initial);
        while let Some(from) = queue.pop_front() {
            for event in 0..machine.events.len() {
                if let Move::Go { to, .. } = machine.step(from, event) {
                    if !paths.reached[to.index()] {
                        paths.reached[to.index()] = true;
                        paths.depth[to.index()] = paths.depth[from.index()] + 1;
                        paths.parent[to.index()] = Some(Step {
                            from,
                            event,
                            to,
                            ignored: false,
                        });
                        queue.push_back(to);
                    }
                }
            }
        }
        paths
    }

    /// Whether any path reaches `state` (the initial state is reached by the empty one).
    pub fn reaches(&self, state: StateId) -> bool {
        self.reached[state.index()]
    }

    /// The length of the shortest path to `state`, if one reaches it.
    pub fn depth(&self, state: StateId) -> Option<usize> {
        self.reaches(state).then(|| self.depth[state.index()])
    }

    /// The shortest path to `state` (empty for the initial state).
    pub fn to(&self, state: StateId) -> Option<Vec<Step>> {
        if !self.reaches(state) {
            return None;
        }
        let mut steps = Vec::new();
        let mut at = state;
        while at != self.initial {
            let step = self.parent[at.index()].expect("bug: a reached state has a parent");
            steps.push(step);
            at = step.from;
        }
        steps.reverse();
        Some(steps)
    }

    /// The shortest path of at least one event that leaves an instance in `state`. For
    /// any state but the initial one that is [`ShortestPaths::to`]; the initial state
    /// needs an event to create the instance: a move back to it, or an event `otherwise
    /// ignore` skips there.
    pub fn nonempty_to(&self, machine: &Machine, state: StateId) -> Option<Vec<Step>> {
        if state != self.initial {
            return self.to(state);
        }
        let mut best: Option<Vec<Step>> = None;
        if machine.otherwise == Otherwise::Ignore {
            if let Some(event) = (0..machine.events.len())
                .find(|&event| machine.step(state, event) == Move::Unspecified)
            {
                best = Some(vec![Step {
                    from: state,
                    event,
                    to: state,
                    ignored: true,
                }]);
            }
        }
        for from in machine.state_ids() {
            for event in 0..machine.events.len() {
                if !matches!(machine.step(from, event), Move::Go { to, .. } if to == state) {
                    continue;
                }
                let Some(mut steps) = self.to(from) else {
                    continue;
                };
                steps.push(Step {
                    from,
                    event,
                    to: state,
                    ignored: false,
                });
                if best.as_ref().is_none_or(|b| steps.len() < b.len()) {
                    best = Some(steps);
                }
            }
        }
        best
    }
}

/// The most events [`counterexamples`] may hold across all its paths (about 50 MB). A
/// machine with many states and events has a counterexample for nearly every pair of
/// them, each with a path up to `max_depth` long; past this the answer could not be
/// held, let alone read, and the search stops before it starts.
pub const MAX_EVENTS: usize = 2_000_000;

/// A search too large to hold: the counterexamples it would find.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "exploring `--max-depth {max_depth}` would find {counterexamples} counterexamples of {events} events in all, \
     more than the limit of {MAX_EVENTS} events; lower `--max-depth` (longer paths are then listed as not reached) \
     or explore a smaller spec"
)]
pub struct TooLarge {
    /// The `--max-depth` asked for.
    pub max_depth: usize,
    /// The counterexamples the search would find.
    pub counterexamples: usize,
    /// The events they would hold in all.
    pub events: usize,
}

/// Every violation the spec can report, each with its shortest path, and the ones no
/// path of at most `max_depth` events reaches. Counterexamples come forbidden moves
/// first, then non-accepting ends, then unexpected events; within a kind, shortest
/// first, then by state and event declaration order.
/// A search whose paths would hold more than [`MAX_EVENTS`] events is refused before
/// any path is built.
pub fn counterexamples(
    machine: &Machine,
    max_depth: usize,
) -> Result<(Vec<Counterexample>, Vec<Unreached>), TooLarge> {
    let paths = ShortestPaths::new(machine);
    size(machine, &paths, max_depth)?;
    let mut found = Vec::new();
    let mut unreached = Vec::new();
    for state in machine.state_ids() {
        // The path to the state, built once for all its events, and only if it is
        // short enough to be used.
        let depth = paths.depth(state);
        let shortest = depth
            .filter(|&depth| depth < max_depth)
            .and_then(|_| paths.to(state));
        for event in 0..machine.events.len() {
            let violation = match machine.step(state, event) {
                Move::Forbidden(rule) => Violation::Forbidden(rule),
                Move::Unspecified if machine.otherwise == Otherwise::Reject => {
                    Violation::Unexpected
                }
                _ => continue,
            };
            match &shortest {
                Some(steps) => found.push(Counterexample {
                    violation,
                    steps: steps.clone(),
                    state,
                    event: Some(event),
                }),
                None => unreached.push(Unreached {
                    violation,
                    state,
                    event: Some(event),
                    beyond_depth: depth.is_some(),
                }),
            }
        }
        if !machine.state(state).accepting {
            match paths.nonempty_to(machine, state) {
                Some(steps) if steps.len() <= max_depth => found.push(Counterexample {
                    violation: Violation::UnacceptedEnd,
                    steps,
                    state,
                    event: None,
                }),
                reached => unreached.push(Unreached {
                    violation: Violation::UnacceptedEnd,
                    state,
                    event: None,
                    beyond_depth: reached.is_some(),
                }),
            }
        }
    }
    found.sort_by_key(|c| {
        (
            c.violation.order(),
            c.steps.len(),
            c.state.index(),
            c.event.unwrap_or(usize::MAX),
        )
    });
    unreached.sort_by_key(|u| {
        (
            u.violation.order(),
            u.state.index(),
            u.event.unwrap_or(usize::MAX),
        )
    });
    Ok((found, unreached))
}

/// Counts what [`counterexamples`] would hold, from the path lengths alone: the same
/// choices, no path built. (An unaccepted end's path is counted at its upper bound,
/// one event past the shortest path to the state.)
fn size(machine: &Machine, paths: &ShortestPaths, max_depth: usize) -> Result<(), TooLarge> {
    let mut counterexamples = 0usize;
    let mut events = 0usize;
    for state in machine.state_ids() {
        let Some(depth) = paths.depth(state) else {
            continue;
        };
        if depth < max_depth {
            for event in 0..machine.events.len() {
                let violation = match machine.step(state, event) {
                    Move::Forbidden(_) => true,
                    Move::Unspecified => machine.otherwise == Otherwise::Reject,
                    Move::Go { .. } => false,
                };
                if violation {
                    counterexamples += 1;
                    events = events.saturating_add(depth + 1);
                }
            }
        }
        if !machine.state(state).accepting && depth <= max_depth {
            counterexamples += 1;
            events = events.saturating_add(depth + 1);
        }
        if events > MAX_EVENTS {
            return Err(TooLarge {
                max_depth,
                counterexamples,
                events,
            });
        }
    }
    Ok(())
}

/// An allowed path: a trace of these moves conforms to the spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedPath {
    /// The moves, in order.
    pub steps: Vec<Step>,
}

impl AllowedPath {
    /// The events of the path, in order.
    pub fn events(&self) -> Vec<EventId> {
        self.steps.iter().map(|step| step.event).collect()
    }

    /// The state the path ends in.
    pub fn end(&self) -> StateId {
        self.steps
            .last()
            .map(|step| step.to)
            .expect("allowed paths are not empty")
    }
}

/// The allowed paths of at most `max_depth` events that end in a state a trace may end
/// in: every simple path from the initial state, plus each of them extended by one move
/// back onto itself (one traversal of each cycle), depth-first in event declaration
/// order. At most `limit` paths; the flag says whether the enumeration stopped there.
pub fn allowed_paths(
    machine: &Machine,
    max_depth: usize,
    limit: usize,
) -> (Vec<AllowedPath>, bool) {
    // Depth-first without recursion (a path may be as long as the machine has
    // states): each frame is a state on the path and the next event to try from it.
    let mut on_path = vec![false; machine.graph.node_count()];
    let mut steps: Vec<Step> = Vec::new();
    let mut frames: Vec<(StateId, EventId)> = vec![(machine.initial, 0)];
    let mut found = Vec::new();
    on_path[machine.initial.index()] = true;
    while let Some(frame) = frames.last_mut() {
        let (from, next) = *frame;
        if next == machine.events.len() || steps.len() == max_depth {
            // Every event from here is tried: leave the state.
            // Frame k + 1 was entered by step k; the initial state's frame by none.
            frames.pop();
            if steps.pop().is_some() {
                on_path[from.index()] = false;
            }
            continue;
        }
        frame.1 += 1;
        let Move::Go { to, .. } = machine.step(from, next) else {
            continue;
        };
        if found.len() == limit {
            return (found, true);
        }
        steps.push(Step {
            from,
            event: next,
            to,
            ignored: false,
        });
        if machine.state(to).accepting {
            found.push(AllowedPath {
                steps: steps.clone(),
            });
        }
        // A move back onto the path closes a cycle: it is traversed once.
        if on_path[to.index()] {
            steps.pop();
        } else {
            on_path[to.index()] = true;
            frames.push((to, 0));
        }
    }
    (found, false)
}
