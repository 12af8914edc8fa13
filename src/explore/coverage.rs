//! Coverage: which states, transitions and forbidden moves of each spec a corpus of
//! traces exercised, and how often.
//!
//! The traces, in any format tracegate reads, are run through the real checker with
//! an observer that counts every move of every instance, so call/result pairing,
//! argument inheritance, `per` routing and the synthesized `missing` results are
//! exactly the checker's.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashSet;

use super::paths::{Counterexample, ShortestPaths, Violation};
use crate::check::{CheckOptions, Observation, Outcome, Shard, check_input};
use crate::diagnostic::Diagnostic;
use crate::machine::{EventId, Machine, Move, StateId};
use crate::spec::ast::Span;
use crate::trace::adapters::InputOptions;
use crate::trace::input::TraceInput;

/// What a corpus exercised of every spec.
#[derive(Debug, Clone)]
pub struct Coverage {
    /// One per spec, in the order the specs were given.
    pub specs: Vec<SpecCoverage>,
    /// Records read.
    pub records: u64,
    /// Traces read (a file of several transcripts counts each).
    pub traces: u64,
    /// Inputs that could not be read, and records that are not records: what was
    /// counted is short of them. Reported as `check` reports them.
    pub errors: Vec<Diagnostic>,
}

/// What a corpus exercised of one spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecCoverage {
    /// The spec's name.
    pub spec: String,
    /// Every state, in declaration order.
    pub states: Vec<StateCoverage>,
    /// Every allowed transition (an edge no `forbid` overrides), by source state and
    /// event declaration order.
    pub transitions: Vec<TransitionCoverage>,
    /// Every (state, event) pair a `forbid` rule names, in the same order.
    pub forbidden: Vec<ForbiddenCoverage>,
}

/// How often a corpus visited one state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateCoverage {
    /// The state.
    pub state: StateId,
    /// How many times an instance started in the state or moved into it.
    pub visits: u64,
}

/// How often a corpus made one allowed transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransitionCoverage {
    /// The state it leaves.
    pub from: StateId,
    /// The event that triggers it.
    pub event: EventId,
    /// The state it enters.
    pub to: StateId,
    /// The transition or `path` statement that allows it.
    pub rule: Span,
    /// How many times the corpus made it.
    pub count: u64,
}

/// How often a corpus made one forbidden move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForbiddenCoverage {
    /// The state the rule forbids the event in.
    pub state: StateId,
    /// The forbidden event.
    pub event: EventId,
    /// Index into [`Machine::forbids`].
    pub rule: usize,
    /// How many times the corpus made the move.
    pub count: u64,
    /// For a move the corpus never made: the shortest path that makes it (`None`
    /// when it was made, or when no path reaches its state).
    pub shortest: Option<Counterexample>,
}

/// A count of exercised items out of all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    /// Items exercised at least once.
    pub covered: usize,
    /// All items.
    pub total: usize,
}

impl Ratio {
    /// The percentage covered; 100 when there is nothing to cover.
    pub fn percent(self) -> f64 {
        if self.total == 0 {
            100.0
        } else {
            self.covered as f64 * 100.0 / self.total as f64
        }
    }
}

impl SpecCoverage {
    /// States visited, out of all states.
    pub fn states_ratio(&self) -> Ratio {
        ratio(self.states.iter().map(|s| s.visits))
    }

    /// Allowed transitions made, out of all of them.
    pub fn transitions_ratio(&self) -> Ratio {
        ratio(self.transitions.iter().map(|t| t.count))
    }

    /// Forbidden moves made, out of all of them.
    pub fn forbidden_ratio(&self) -> Ratio {
        ratio(self.forbidden.iter().map(|f| f.count))
    }
}

fn ratio(counts: impl Iterator<Item = u64>) -> Ratio {
    let mut r = Ratio {
        covered: 0,
        total: 0,
    };
    for count in counts {
        r.total += 1;
        r.covered += usize::from(count > 0);
    }
    r
}

/// Raw counts for one input, before they are laid out per spec.
struct Counts {
    /// `moves[spec][state * events + event]`.
    moves: Vec<Vec<u64>>,
    /// Instances seen, per spec, by (trace, key): each started in the initial state.
    instances: Vec<FxHashSet<(usize, Option<Box<str>>)>>,
}

impl Counts {
    fn new(specs: &[Machine]) -> Counts {
        Counts {
            moves: specs
                .iter()
                .map(|m| vec![0; m.graph.node_count() * m.events.len()])
                .collect(),
            instances: specs.iter().map(|_| FxHashSet::default()).collect(),
        }
    }

    fn observe(&mut self, specs: &[Machine], seen: &Observation<'_>) {
        let events = specs[seen.spec].events.len();
        self.moves[seen.spec][seen.from.index() * events + seen.event] += 1;
        self.instances[seen.spec].insert((seen.trace, seen.key.map(Into::into)));
    }

    fn add(&mut self, other: &Counts) {
        for (mine, theirs) in self.moves.iter_mut().zip(&other.moves) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a += b;
            }
        }
    }
}

/// Coverage of one native JSONL input.
pub fn coverage_reader<R: BufRead>(
    specs: &[Machine],
    file: Arc<Path>,
    input: R,
    options: &CheckOptions,
) -> Coverage {
    let (counts, starts, outcome) = count(specs, |observer| {
        check_input(
            specs,
            file,
            TraceInput::native(input, options.max_line_bytes),
            options,
            Some(observer),
        )
    });
    let errors = outcome
        .diagnostics
        .iter()
        .filter(|d| !d.is_violation())
        .cloned()
        .collect();
    layout(
        specs,
        &counts,
        &starts,
        outcome.records,
        outcome.traces,
        errors,
    )
}

/// Coverage of trace files of any format, read in parallel.
pub fn coverage<P: AsRef<Path> + Sync>(
    specs: &[Machine],
    paths: &[P],
    options: &CheckOptions,
    input: &InputOptions,
) -> Coverage {
    coverage_of_traces(specs, paths, options, input, None)
}

/// [`coverage()`] of only the traces a `shard` takes, when `options` split files into
/// traces by key (`--trace-by`); the files' own problems are the first shard's. The
/// shards' coverages add up to the whole run's. (A run split by file passes each shard
/// its files, and no shard here.)
pub fn coverage_of_traces<P: AsRef<Path> + Sync>(
    specs: &[Machine],
    paths: &[P],
    options: &CheckOptions,
    input: &InputOptions,
    shard: Option<Shard>,
) -> Coverage {
    use rayon::prelude::*;
    let per_file: Vec<(Counts, Vec<u64>, Outcome)> = paths
        .par_iter()
        .map(|path| {
            count(specs, |observer| {
                let mut found = Vec::new();
                let mut checked = crate::check::check_path_reported(
                    specs,
                    path.as_ref(),
                    options,
                    input,
                    Some(observer),
                    shard,
                    &mut found,
                );
                checked.outcome.diagnostics = found;
                checked.outcome
            })
        })
        .collect();
    let mut total = Counts::new(specs);
    let mut starts = vec![0; specs.len()];
    let (mut records, mut traces, mut errors) = (0, 0, Vec::new());
    for (counts, file_starts, outcome) in per_file {
        total.add(&counts);
        for (a, b) in starts.iter_mut().zip(file_starts) {
            *a += b;
        }
        records += outcome.records;
        traces += outcome.traces;
        errors.extend(
            outcome
                .diagnostics
                .iter()
                .filter(|d| !d.is_violation())
                .cloned(),
        );
    }
    layout(specs, &total, &starts, records, traces, errors)
}

/// Runs `check` with an observer that counts moves; returns the counts, the instance
/// starts per spec, and the checker's outcome.
fn count(
    specs: &[Machine],
    check: impl FnOnce(crate::check::Observer<'_>) -> Outcome,
) -> (Counts, Vec<u64>, Outcome) {
    let mut counts = Counts::new(specs);
    let outcome = {
        let counts = &mut counts;
        check(Box::new(move |seen: &Observation<'_>| {
            counts.observe(specs, seen)
        }))
    };
    let starts = counts
        .instances
        .iter()
        .map(|set| set.len() as u64)
        .collect();
    (counts, starts, outcome)
}

fn layout(
    specs: &[Machine],
    counts: &Counts,
    starts: &[u64],
    records: u64,
    traces: u64,
    errors: Vec<Diagnostic>,
) -> Coverage {
    let specs = specs
        .iter()
        .enumerate()
        .map(|(index, machine)| spec_coverage(machine, &counts.moves[index], starts[index]))
        .collect();
    Coverage {
        specs,
        records,
        traces,
        errors,
    }
}

fn spec_coverage(machine: &Machine, moves: &[u64], starts: u64) -> SpecCoverage {
    let events = machine.events.len();
    let mut visits = vec![0u64; machine.graph.node_count()];
    visits[machine.initial.index()] += starts;
    let mut transitions = Vec::new();
    let mut forbidden = Vec::new();
    let paths = ShortestPaths::new(machine);
    for state in machine.state_ids() {
        for event in 0..events {
            let count = moves[state.index() * events + event];
            match machine.step(state, event) {
                Move::Go { to, rule } => {
                    visits[to.index()] += count;
                    transitions.push(TransitionCoverage {
                        from: state,
                        event,
                        to,
                        rule,
                        count,
                    });
                }
                Move::Forbidden(rule) => forbidden.push(ForbiddenCoverage {
                    state,
                    event,
                    rule,
                    count,
                    shortest: (count == 0)
                        .then(|| paths.to(state))
                        .flatten()
                        .map(|steps| Counterexample {
                            violation: Violation::Forbidden(rule),
                            steps,
                            state,
                            event: Some(event),
                        }),
                }),
                Move::Unspecified => {}
            }
        }
    }
    SpecCoverage {
        spec: machine.name.clone(),
        states: machine
            .state_ids()
            .map(|state| StateCoverage {
                state,
                visits: visits[state.index()],
            })
            .collect(),
        transitions,
        forbidden,
    }
}

impl Coverage {
    /// The specs whose share of exercised transitions is below `percent`.
    pub fn below(&self, percent: f64) -> Vec<&SpecCoverage> {
        self.specs
            .iter()
            .filter(|spec| spec.transitions_ratio().percent() < percent)
            .collect()
    }
}
