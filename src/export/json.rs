//! `graph --format json`: the compiled machine as data, for tools that draw or analyse
//! specs themselves. A contract like the diagnostics' JSON: fields are only ever added.
//! The shape is documented in the language reference (`specs/README.md`).

use serde::Serialize;

use super::highlight::{End, Walk};
use crate::machine::Machine;
use crate::spec::ast::Otherwise;

#[derive(Serialize)]
struct Graph<'m> {
    spec: &'m str,
    about: Option<&'m str>,
    file: String,
    initial: &'m str,
    otherwise: &'static str,
    per: Vec<&'m str>,
    states: Vec<State<'m>>,
    events: Vec<Event<'m>>,
    transitions: Vec<Transition<'m>>,
    forbids: Vec<Forbid<'m>>,
    highlight: Option<Highlight<'m>>,
}

#[derive(Serialize)]
struct State<'m> {
    name: &'m str,
    initial: bool,
    accepting: bool,
    line: usize,
}

#[derive(Serialize)]
struct Event<'m> {
    name: &'m str,
    line: usize,
}

#[derive(Serialize)]
struct Transition<'m> {
    from: &'m str,
    to: &'m str,
    event: &'m str,
    line: usize,
}

#[derive(Serialize)]
struct Forbid<'m> {
    message: &'m str,
    line: usize,
    moves: Vec<ForbiddenMove<'m>>,
}

#[derive(Serialize)]
struct ForbiddenMove<'m> {
    state: &'m str,
    event: &'m str,
}

#[derive(Serialize)]
struct Highlight<'m> {
    trace: &'m str,
    instances: Vec<Instance<'m>>,
}

#[derive(Serialize)]
struct Instance<'m> {
    key: Option<&'m str>,
    steps: Vec<Step<'m>>,
    elided: u64,
    end: EndJson<'m>,
}

#[derive(Serialize)]
struct Step<'m> {
    from: &'m str,
    event: &'m str,
    to: &'m str,
    line: u64,
}

#[derive(Serialize)]
struct EndJson<'m> {
    /// `accepted`, `unaccepted`, `forbidden` or `unexpected`.
    kind: &'static str,
    state: &'m str,
    event: Option<&'m str>,
    line: Option<u64>,
    /// The line of the `forbid` rule, for `forbidden`.
    rule_line: Option<usize>,
}

pub fn render(machine: &Machine, walk: Option<&Walk>) -> String {
    // Where each line starts, found once: counting the newlines before every rule
    // again would grow with the square of the spec.
    let newlines: Vec<usize> = machine
        .source
        .text
        .bytes()
        .enumerate()
        .filter(|&(_, b)| b == b'\n')
        .map(|(at, _)| at)
        .collect();
    // As `SpecSource::line_col`: one more than the newlines before the offset.
    let line = |span: crate::spec::ast::Span| {
        let offset = span.start.min(machine.source.text.len());
        newlines.partition_point(|&at| at < offset) + 1
    };
    let state_name = |id| machine.state(id).name.as_str();
    let event_name = |id: usize| machine.events[id].name.as_str();

    // In declaration order, as the other formats draw them.
    let transitions: Vec<Transition<'_>> = machine
        .allowed_moves()
        .into_iter()
        .map(|(from, to, edge)| Transition {
            from: state_name(from),
            to: state_name(to),
            event: event_name(edge.event),
            line: line(edge.rule),
        })
        .collect();

    let forbidden = super::forbidden_by_rule(machine);
    let forbids = machine
        .forbids
        .iter()
        .zip(&forbidden)
        .map(|(forbid, by_state)| Forbid {
            message: &forbid.message,
            line: line(forbid.span),
            moves: by_state
                .iter()
                .flat_map(|(state, events)| {
                    events.iter().map(move |&event| ForbiddenMove {
                        state: state_name(*state),
                        event: event_name(event),
                    })
                })
                .collect(),
        })
        .collect();

    let highlight = walk.map(|walk| highlight(machine, walk));

    let graph = Graph {
        spec: &machine.name,
        about: machine.about.as_deref(),
        file: machine.source.path.display().to_string(),
        initial: state_name(machine.initial),
        otherwise: match machine.otherwise {
            Otherwise::Reject => "reject",
            Otherwise::Ignore => "ignore",
        },
        per: machine.per.iter().map(|k| k.text.as_str()).collect(),
        states: machine
            .state_ids()
            .map(|id| State {
                name: state_name(id),
                initial: id == machine.initial,
                accepting: machine.state(id).accepting,
                line: line(machine.state(id).span),
            })
            .collect(),
        events: machine
            .events
            .iter()
            .map(|event| Event {
                name: &event.name,
                line: line(event.span),
            })
            .collect(),
        transitions,
        forbids,
        highlight,
    };
    let mut text = serde_json::to_string_pretty(&graph).expect("bug: a graph always serializes");
    text.push('\n');
    text
}

/// The walk of a highlighted trace: each instance's steps and how it ended.
fn highlight<'m>(machine: &'m Machine, walk: &'m Walk) -> Highlight<'m> {
    let state_name = |id| machine.state(id).name.as_str();
    let event_name = |id: usize| machine.events[id].name.as_str();
    Highlight {
        trace: &walk.trace,
        instances: walk
            .instances
            .iter()
            .map(|instance| Instance {
                key: instance.key.as_deref(),
                steps: instance
                    .steps
                    .iter()
                    .map(|step| Step {
                        from: state_name(step.from),
                        event: event_name(step.event),
                        to: state_name(step.to),
                        line: step.line,
                    })
                    .collect(),
                // The contract keeps `elided`: every move is highlighted, so none is
                // left out.
                elided: 0,
                end: end(machine, instance.end),
            })
            .collect(),
    }
}

/// How an instance of the walk ended.
fn end(machine: &Machine, end: End) -> EndJson<'_> {
    let state_name = |id| machine.state(id).name.as_str();
    let event_name = |id: usize| machine.events[id].name.as_str();
    match end {
        End::Accepted { state } => EndJson {
            kind: "accepted",
            state: state_name(state),
            event: None,
            line: None,
            rule_line: None,
        },
        End::Unaccepted { state, line } => EndJson {
            kind: "unaccepted",
            state: state_name(state),
            event: None,
            line: Some(line),
            rule_line: None,
        },
        End::Forbidden {
            state,
            event,
            rule,
            line: at,
        } => EndJson {
            kind: "forbidden",
            state: state_name(state),
            event: Some(event_name(event)),
            line: Some(at),
            rule_line: machine
                .forbids
                .get(rule)
                .map(|f| machine.source.line_col(f.span.start).0),
        },
        End::Unexpected { state, event, line } => EndJson {
            kind: "unexpected",
            state: state_name(state),
            event: Some(event_name(event)),
            line: Some(line),
            rule_line: None,
        },
    }
}
