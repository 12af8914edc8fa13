//! The walk one trace takes through a machine, for `graph --highlight TRACE`.
//!
//! The walk comes from the real checker, so it follows exactly the semantics of
//! `check` (`per` routing, results paired with calls, synthetic `missing` results at
//! the end). The checker reports the path only with a violation, so the trace is
//! checked against a copy of the machine in which no state may end a trace: then every
//! instance reports, and its report carries the path it took. Whether the trace really
//! ended well is decided with the original machine.

use std::path::Path;

use crate::check::{CheckOptions, check_file};
use crate::diagnostic::{Code, Diagnostic};
use crate::machine::{EventId, Machine, StateId};

/// How the instances of a trace walked the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// The trace file, as given.
    pub trace: String,
    pub instances: Vec<InstanceWalk>,
}

/// One instance (one `per` key, or the whole trace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceWalk {
    pub key: Option<String>,
    /// The moves it made, oldest first (the checker keeps the last 64).
    pub steps: Vec<WalkStep>,
    /// Moves made before `steps[0]` that the checker did not keep.
    pub elided: u64,
    pub end: End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkStep {
    pub from: StateId,
    pub event: EventId,
    pub to: StateId,
    /// The trace line of the record.
    pub line: u64,
}

/// How an instance's walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The trace ended in a state that may end a trace.
    Accepted { state: StateId },
    /// The trace ended in a state that may not end one (`unaccepted-end`).
    Unaccepted { state: StateId, line: u64 },
    /// A `forbid` rule (index into the machine's forbids) rejected `event` in `state`.
    Forbidden {
        state: StateId,
        event: EventId,
        rule: usize,
        line: u64,
    },
    /// `event` had no transition from `state` under `otherwise reject`.
    Unexpected {
        state: StateId,
        event: EventId,
        line: u64,
    },
}

/// Checks `trace` against `machine` and returns how each instance walked it. An input
/// that cannot be read is an error; other diagnostics of the trace (malformed lines,
/// ambiguous records) are `check`'s business and do not stop the walk.
pub fn trace_walk(machine: &Machine, trace: &Path) -> Result<Walk, Box<Diagnostic>> {
    let mut probe = crate::spec::analyzer::load(machine.source.clone()).map_err(|_| {
        Box::new(Diagnostic::new(
            Code::SyntaxError,
            "bug: a spec that compiled once does not compile again",
        ))
    })?;
    for state in probe.graph.node_weights_mut() {
        state.accepting = false;
    }
    let outcome = check_file(
        std::slice::from_ref(&probe),
        trace,
        &CheckOptions::default(),
    );
    let state = |name: &str| {
        machine
            .state_ids()
            .find(|&id| machine.state(id).name == name)
    };
    let event = |name: &str| machine.events.iter().position(|e| e.name == name);
    let mut instances = Vec::new();
    for diagnostic in outcome.diagnostics {
        if diagnostic.code == Code::UnreadableInput {
            return Err(Box::new(diagnostic));
        }
        let Some(detail) = diagnostic.violation.as_deref() else {
            continue;
        };
        let line = diagnostic.trace.as_ref().map_or(0, |site| site.loc.line);
        let Some(at) = state(&detail.state) else {
            continue;
        };
        let mut steps = Vec::new();
        for (n, step) in detail.path.iter().enumerate() {
            let to = detail
                .path
                .get(n + 1)
                .map_or(Some(at), |next| state(&next.state));
            if let (Some(from), Some(event), Some(to)) =
                (state(&step.state), event(&step.event), to)
            {
                steps.push(WalkStep {
                    from,
                    event,
                    to,
                    line: step.line,
                });
            }
        }
        let offending = detail.event.as_deref().and_then(event);
        let end = match (diagnostic.code, offending) {
            (Code::UnacceptedEnd, _) if machine.state(at).accepting => End::Accepted { state: at },
            (Code::UnacceptedEnd, _) => End::Unaccepted { state: at, line },
            (Code::ForbiddenTransition, Some(event)) => {
                let span = diagnostic.spec.as_ref().map(|site| site.span);
                let rule = machine
                    .forbids
                    .iter()
                    .position(|rule| Some(rule.span) == span)
                    .unwrap_or_default();
                End::Forbidden {
                    state: at,
                    event,
                    rule,
                    line,
                }
            }
            (Code::UnexpectedEvent, Some(event)) => End::Unexpected {
                state: at,
                event,
                line,
            },
            _ => continue,
        };
        instances.push(InstanceWalk {
            key: detail.key.clone(),
            steps,
            elided: detail.path_elided,
            end,
        });
    }
    Ok(Walk {
        trace: trace.display().to_string(),
        instances,
    })
}
