//! Exploring a spec and a corpus: what a spec forbids, traces that show it, a real
//! failing trace shrunk to its minimum, and which paths a corpus exercised. These
//! functions take machines and trace text and return data; the `explore`, `shrink` and
//! `coverage` commands of the CLI print it and write files ([`coverage()`] reads the
//! trace files it is given, as [`crate::check::check_path`] does, through
//! [`crate::trace::input`]).
//!
//! The parts: [`paths`] (shortest paths, allowed paths), `synth` (records that match
//! exactly one event), `build` (whole traces, verified by the checker and, for other
//! formats, by their readers), `emit` (the writers), [`shrink()`], [`coverage()`],
//! `render` (the reports' text, for the CLI). Only `paths`, `coverage` and `shrink` are
//! public modules; what a library user needs of the others is re-exported here.
//!
//! - [`explore`]: for every violation the spec can report — every forbidden move, every
//!   state a trace may not end in, and (under `otherwise reject`) every event a state
//!   has no transition for — the shortest event path from the initial state that
//!   triggers it.
//! - [`counterexample_trace`] / [`allowed_trace`]: a synthetic trace for a path, its
//!   records built to satisfy each event's pattern and verified by the real checker,
//!   written in any [`Format`] with [`SyntheticTrace::write`]. [`allowed`] enumerates
//!   the paths a spec allows.
//! - [`shrink()`] / [`shrink_file`]: delta debugging over a failing trace's lines, or
//!   over the elements of a trace in another format (written back in that format), down
//!   to the smallest trace that still yields the same violation at the same rule.
//! - [`coverage()`]: which states, transitions and forbidden moves a corpus exercised.

pub(crate) mod build;
pub mod coverage;
pub(crate) mod emit;
pub(crate) mod fit;
pub mod merge;
pub mod paths;
pub(crate) mod render;
pub mod shrink;
pub(crate) mod synth;

pub use build::{
    ExpectedViolation, SynthError, SyntheticTrace, allowed_trace, counterexample_trace,
};
pub use coverage::{Coverage, SpecCoverage, coverage, coverage_of_traces, coverage_reader};
pub use emit::{Format, Inexpressible, RecordSite};
pub use paths::{AllowedPath, Counterexample, Step, TooLarge, Unreached, Violation};
pub use shrink::{ShrinkError, ShrinkOptions, Shrunk, Written, shrink, shrink_file};

use crate::machine::Machine;

/// How deep [`explore`] and [`allowed`] search, by default: paths of at most this many
/// events.
pub const DEFAULT_MAX_DEPTH: usize = 16;
/// How many allowed paths [`allowed`] lists, by default.
pub const DEFAULT_LIMIT: usize = 1000;

/// The counterexamples of one spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exploration {
    /// Forbidden moves, then unaccepted ends, then unexpected events; shortest first
    /// within each kind.
    pub counterexamples: Vec<Counterexample>,
    /// Violations the spec declares that no path of at most `max_depth` events reaches.
    pub unreached: Vec<Unreached>,
}

/// Every violation `machine` can report, each with the shortest path that triggers it;
/// or, when those paths would hold more than [`paths::MAX_EVENTS`] events in all, why
/// not.
pub fn explore(machine: &Machine, max_depth: usize) -> Result<Exploration, TooLarge> {
    let (counterexamples, unreached) = paths::counterexamples(machine, max_depth)?;
    Ok(Exploration {
        counterexamples,
        unreached,
    })
}

/// The allowed paths of one spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed {
    /// The paths, shortest first.
    pub paths: Vec<AllowedPath>,
    /// Whether the enumeration stopped at the limit.
    pub truncated: bool,
}

/// The paths `machine` allows, ending where a trace may end: simple paths from the
/// initial state plus one traversal of each cycle, at most `max_depth` events long, at
/// most `limit` of them.
pub fn allowed(machine: &Machine, max_depth: usize, limit: usize) -> Allowed {
    let (paths, truncated) = paths::allowed_paths(machine, max_depth, limit);
    Allowed { paths, truncated }
}
