//! The walk one trace takes through a machine, for `graph --highlight TRACE`.
//!
//! The walk comes from the real checker, watched through a [`check::Observer`]
//! (`crate::check`), so it follows exactly the semantics of `check` (`per` routing,
//! results paired with calls, synthetic `missing` results at the end) and keeps every
//! move, however long the trace.

use std::path::Path;

use rustc_hash::FxHashMap;

use crate::check::{self, CheckOptions, Observation};
use crate::diagnostic::{Code, Diagnostic};
use crate::machine::{EventId, Machine, Move, Otherwise, StateId};
use crate::trace::adapters::InputOptions;

/// How the instances of a trace walked the machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// The trace file, as given.
    pub trace: String,
    /// Every instance, in the order the checker reports them: those stopped by a
    /// violation first, as they stopped, then the rest, trace by trace.
    pub instances: Vec<InstanceWalk>,
}

/// One instance (one `per` key, or the whole trace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceWalk {
    /// The instance's `per` key, if the spec has one.
    pub key: Option<String>,
    /// Every move it made, oldest first.
    pub steps: Vec<WalkStep>,
    /// How the walk ended.
    pub end: End,
}

/// One move: in state `from`, `event` led to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalkStep {
    /// The state before the move.
    pub from: StateId,
    /// The event that made it.
    pub event: EventId,
    /// The state after it.
    pub to: StateId,
    /// The trace line of the record.
    pub line: u64,
}

/// How an instance's walk ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The trace ended in a state that may end a trace.
    Accepted {
        /// The last state.
        state: StateId,
    },
    /// The trace ended in a state that may not end one (`unaccepted-end`).
    Unaccepted {
        /// The last state.
        state: StateId,
        /// The line of the instance's last event.
        line: u64,
    },
    /// A `forbid` rule (index into the machine's forbids) rejected `event` in `state`.
    Forbidden {
        /// The state the instance was in.
        state: StateId,
        /// The forbidden event.
        event: EventId,
        /// Index into the machine's forbids.
        rule: usize,
        /// The line of the record.
        line: u64,
    },
    /// `event` had no transition from `state` under `otherwise reject`.
    Unexpected {
        /// The state the instance was in.
        state: StateId,
        /// The unexpected event.
        event: EventId,
        /// The line of the record.
        line: u64,
    },
}

/// One instance as the observer follows it.
struct Following {
    trace: usize,
    key: Option<String>,
    state: StateId,
    steps: Vec<WalkStep>,
    last_line: u64,
    /// When it began, among all instances.
    began: usize,
    /// The violation that stopped it: when (among all stops), whether at the end of
    /// the input, and how.
    stopped: Option<(usize, bool, End)>,
}

/// Checks `trace` against `machine` and returns how each instance walked it. An input
/// that cannot be read is an error; other diagnostics of the trace (malformed lines,
/// ambiguous records) are `check`'s business and do not stop the walk.
pub fn trace_walk(machine: &Machine, trace: &Path) -> Result<Walk, Box<Diagnostic>> {
    let mut following: Vec<Following> = Vec::new();
    // Instances by trace and key, to find one without a scan per move.
    let mut by_key: FxHashMap<(usize, Option<String>), usize> = FxHashMap::default();
    let mut stops = 0;
    let observer = Box::new(|seen: &Observation<'_>| {
        let id = (seen.trace, seen.key.map(str::to_string));
        let began = following.len();
        let index = *by_key.entry(id).or_insert_with_key(|(trace, key)| {
            following.push(Following {
                trace: *trace,
                key: key.clone(),
                state: seen.from,
                steps: Vec::new(),
                last_line: seen.loc.line,
                began,
                stopped: None,
            });
            began
        });
        let instance = &mut following[index];
        let line = seen.loc.line;
        instance.last_line = line;
        let (state, event) = (seen.from, seen.event);
        let end = match seen.step {
            Move::Go { to, .. } => {
                instance.steps.push(WalkStep {
                    from: state,
                    event,
                    to,
                    line,
                });
                instance.state = to;
                return;
            }
            Move::Forbidden(rule) => End::Forbidden {
                state,
                event,
                rule,
                line,
            },
            Move::Unspecified if machine.otherwise == Otherwise::Ignore => return,
            Move::Unspecified => End::Unexpected { state, event, line },
        };
        instance.stopped = Some((stops, seen.at_end, end));
        stops += 1;
    });
    let outcome = check::check_path_observed(
        std::slice::from_ref(machine),
        trace,
        &CheckOptions::default(),
        &InputOptions::default(),
        Some(observer),
    )
    .outcome;
    if let Some(unreadable) = outcome
        .diagnostics
        .into_iter()
        .find(|d| d.code == Code::UnreadableInput)
    {
        return Err(Box::new(unreadable));
    }
    // The checker's order: violations as they happened while the input was read;
    // then, trace by trace, violations of the `missing` results synthesized at its end
    // and the end of every live instance, in the order the instances began.
    following.sort_by_key(|f| match f.stopped {
        Some((order, false, _)) => (0, order, 0, 0),
        Some((order, true, _)) => (1, f.trace, 0, order),
        None => (1, f.trace, 1, f.began),
    });
    let instances = following
        .into_iter()
        .map(|f| {
            let end = match f.stopped {
                Some((_, _, end)) => end,
                None if machine.state(f.state).accepting => End::Accepted { state: f.state },
                None => End::Unaccepted {
                    state: f.state,
                    line: f.last_line,
                },
            };
            InstanceWalk {
                key: f.key,
                steps: f.steps,
                end,
            }
        })
        .collect();
    Ok(Walk {
        trace: trace.display().to_string(),
        instances,
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;
    use crate::source::SpecSource;

    #[test]
    fn a_long_walk_is_shown_whole() {
        let source = Arc::new(SpecSource::new(PathBuf::from("tick.tg"), "event tick = call tick\nevent stop = call stop\ninitial idle\naccept idle\nidle -> idle on tick\nforbid idle on stop: \"no stopping\"\n".to_string()));
        let machine = crate::spec::analyzer::load(source).expect("the spec compiles");
        let mut trace = tempfile::NamedTempFile::new().expect("a temporary file");
        let mut text = "{\"kind\":\"call\",\"tool\":\"tick\"}\n".repeat(100);
        text.push_str("{\"kind\":\"call\",\"tool\":\"stop\"}\n");
        std::io::Write::write_all(&mut trace, text.as_bytes()).expect("written");

        let walk = trace_walk(&machine, trace.path()).expect("the trace reads");
        let [instance] = walk.instances.as_slice() else {
            panic!("one instance, got {:?}", walk.instances);
        };
        assert_eq!(instance.steps.len(), 100);
        let lines: Vec<u64> = instance.steps.iter().map(|s| s.line).collect();
        assert_eq!(lines, (1..=100).collect::<Vec<u64>>());
        assert!(matches!(
            instance.end,
            End::Forbidden {
                line: 101,
                rule: 0,
                ..
            }
        ));
    }

    #[test]
    fn instances_come_in_the_order_the_checker_reports_them() {
        let source = Arc::new(SpecSource::new(
            PathBuf::from("ops.tg"),
            r#"
event call = call op
event ok   = result op where status == "ok"
event lost = result op where status == "missing"
event bad  = call bad
event note = message
per args.k
initial idle
accept idle, done
idle -> busy on call
busy -> done on ok
idle -> noted on note
forbid busy on lost: "no reply"
forbid * on bad: "bad call"
otherwise ignore
"#
            .to_string(),
        ));
        let machine = crate::spec::analyzer::load(source).expect("the spec compiles");
        let lines = [
            r#"{"kind":"call","tool":"op","call_id":"1","args":{"k":"A"}}"#,
            r#"{"kind":"call","tool":"op","call_id":"2","args":{"k":"B"}}"#,
            r#"{"kind":"result","tool":"op","call_id":"2","status":"ok","output":{}}"#,
            r#"{"kind":"call","tool":"bad","call_id":"3","args":{"k":"C"}}"#,
            r#"{"kind":"call","tool":"op","call_id":"5","args":{"k":"D"}}"#,
            r#"{"kind":"message","role":"user","text":"hi","args":{"k":"E"}}"#,
        ];
        let mut trace = tempfile::NamedTempFile::new().expect("a temporary file");
        std::io::Write::write_all(&mut trace, (lines.join("\n") + "\n").as_bytes())
            .expect("written");

        let walk = trace_walk(&machine, trace.path()).expect("the trace reads");
        let have: Vec<(Option<&str>, End)> = walk
            .instances
            .iter()
            .map(|i| (i.key.as_deref(), i.end))
            .collect();
        let state = |name: &str| {
            machine
                .state_ids()
                .find(|&id| machine.state(id).name == name)
                .expect("a state of the spec")
        };
        let (call, lost, bad) = (0, 2, 3);
        let want = [
            // Stopped while the input was read.
            (
                Some("C"),
                End::Forbidden {
                    state: state("idle"),
                    event: bad,
                    rule: 1,
                    line: 4,
                },
            ),
            // Stopped by the `missing` results given at the end, in call order.
            (
                Some("A"),
                End::Forbidden {
                    state: state("busy"),
                    event: lost,
                    rule: 0,
                    line: 1,
                },
            ),
            (
                Some("D"),
                End::Forbidden {
                    state: state("busy"),
                    event: lost,
                    rule: 0,
                    line: 5,
                },
            ),
            // Then every live instance, in the order it began.
            (
                Some("B"),
                End::Accepted {
                    state: state("done"),
                },
            ),
            (
                Some("E"),
                End::Unaccepted {
                    state: state("noted"),
                    line: 6,
                },
            ),
        ];
        assert_eq!(have, want);
        assert_eq!(walk.instances[1].steps.len(), 1);
        assert_eq!(walk.instances[1].steps[0].event, call);
    }
}
