//! Drawings of a compiled machine: DOT, Mermaid, SVG and JSON.
//!
//! [`Drawing::new`] turns a machine (and optionally the walk of a trace through it)
//! into plain nodes and edges, in declaration order; each writer renders that with its
//! own escaping. The writers are ours (not petgraph's `Dot`, whose output may change),
//! so the output is stable byte for byte: same spec, same drawing.
//!
//! What every format shows: the initial state (an arrow from a start dot), states that
//! may end a trace (double border), states that may not (`hot`, filled), allowed
//! transitions labelled with their events, forbidden moves as red dashed edges to a
//! violation node that carries the rule's message, and `otherwise ignore` as a note.

pub(crate) mod dot;
pub mod highlight;
pub(crate) mod json;
pub mod layout;
pub(crate) mod mermaid;
pub(crate) mod svg;

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::machine::{EventId, Machine, Move, StateId};
use crate::spec::ast::Otherwise;
use highlight::{End, Walk};

/// An output format of `tracegate graph`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Graphviz DOT.
    Dot,
    /// A Mermaid `stateDiagram-v2` (renders on GitHub as is).
    Mermaid,
    /// A standalone SVG image, laid out in-process.
    Svg,
    /// The machine as JSON (see the language reference).
    Json,
}

impl Format {
    /// Every format, in the order `graph --format` lists them.
    pub const ALL: [Format; 4] = [Format::Dot, Format::Mermaid, Format::Svg, Format::Json];

    /// The name `graph --format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Dot => "dot",
            Format::Mermaid => "mermaid",
            Format::Svg => "svg",
            Format::Json => "json",
        }
    }
}

/// Renders `machine` in `format`, with the walk of a trace if given.
pub fn render(machine: &Machine, format: Format, walk: Option<&Walk>) -> String {
    match format {
        Format::Json => json::render(machine, walk),
        Format::Dot => dot::render(&Drawing::new(machine, walk)),
        Format::Mermaid => mermaid::render(&Drawing::new(machine, walk)),
        Format::Svg => svg::render(&Drawing::new(machine, walk)),
    }
}

/// A machine as something to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct Drawing {
    /// The spec's name, the drawing's title.
    pub spec: String,
    /// The spec's `about` text, if it has one.
    pub about: Option<String>,
    /// Lines shown under the title: `otherwise ignore`, `per`, the highlighted trace.
    pub notes: Vec<String>,
    /// The boxes: the start dot, the states, the rules' messages, the markers.
    pub nodes: Vec<Node>,
    /// The arrows between them.
    pub edges: Vec<Edge>,
}

/// One box of a drawing.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Unique among the nodes: a state's name, or `:start`, `:forbid0`, `:mark0` (no
    /// state name contains `:`).
    pub key: String,
    /// The text in the box.
    pub label: String,
    /// What the box stands for, which decides its shape.
    pub kind: NodeKind,
}

/// What a box of a drawing stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// The dot the initial state's arrow starts from.
    Start,
    /// A state of the machine.
    State {
        /// The machine starts in it.
        initial: bool,
        /// May end a trace (double border); otherwise it is hot (filled).
        accepting: bool,
        /// The highlighted trace passed through it.
        visited: bool,
    },
    /// A `forbid` rule's message.
    Violation {
        /// The highlighted trace was rejected by this rule.
        hit: bool,
    },
    /// Where the highlighted trace ended or was rejected (`ok` for a good end).
    Marker {
        /// The trace ended where it may end.
        ok: bool,
    },
}

/// One arrow of a drawing.
#[derive(Debug, Clone, PartialEq)]
pub struct Edge {
    /// Indexes into [`Drawing::nodes`].
    pub from: usize,
    /// Index into [`Drawing::nodes`] of the box it points to.
    pub to: usize,
    /// The event (or events) it is labelled with; empty for none.
    pub label: String,
    /// What the arrow stands for, which decides its style.
    pub kind: EdgeKind,
    /// The highlighted trace took it.
    pub taken: bool,
}

/// What an arrow of a drawing stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// From the start dot to the initial state.
    Start,
    /// A transition the spec allows.
    Allowed,
    /// A `forbid` rule: from a state to the rule's message.
    Forbidden,
    /// To a highlight marker.
    Marker {
        /// The marker is a good end.
        ok: bool,
    },
}

/// `(line 3)`, `(lines 3, 9)`.
fn lines_note(lines: &[u64]) -> String {
    let list = lines
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    if lines.len() == 1 {
        format!("(line {list})")
    } else {
        format!("(lines {list})")
    }
}

/// The moves each `forbid` rule forbids, by rule: the states it applies to in order,
/// each with its events in declaration order. Read from the moves the spec specifies,
/// not from every pair of states and events.
pub(crate) fn forbidden_by_rule(machine: &Machine) -> Vec<Vec<(StateId, Vec<EventId>)>> {
    let mut rules: Vec<Vec<(StateId, Vec<EventId>)>> = vec![Vec::new(); machine.forbids.len()];
    for (state, event, step) in machine.specified_moves() {
        let Move::Forbidden(rule) = step else {
            continue;
        };
        let Some(by_state) = rules.get_mut(rule) else {
            continue;
        };
        match by_state.last_mut() {
            Some((last, events)) if *last == state => events.push(event),
            _ => by_state.push((state, vec![event])),
        }
    }
    rules
}

/// The node of a state: node 0 is the start dot, then the states in declaration order.
fn state_node(state: StateId) -> usize {
    state.index() + 1
}

/// What a trace's walk did: the moves it took (with their lines, sorted) and the states
/// it visited.
struct Trail {
    moves: BTreeMap<(StateId, EventId), Vec<u64>>,
    visited: Vec<bool>,
}

impl Trail {
    fn new(machine: &Machine, walk: Option<&Walk>) -> Trail {
        let mut moves: BTreeMap<(StateId, EventId), Vec<u64>> = BTreeMap::new();
        let mut visited = vec![false; machine.graph.node_count()];
        if let Some(walk) = walk {
            visited[machine.initial.index()] = true;
            for instance in &walk.instances {
                for step in &instance.steps {
                    moves
                        .entry((step.from, step.event))
                        .or_default()
                        .push(step.line);
                    visited[step.from.index()] = true;
                    visited[step.to.index()] = true;
                }
            }
            for lines in moves.values_mut() {
                lines.sort_unstable();
                lines.dedup();
            }
        }
        Trail { moves, visited }
    }
}

/// The lines under the title: instances per key, `otherwise ignore`, and which trace is
/// highlighted.
fn notes(machine: &Machine, walk: Option<&Walk>) -> Vec<String> {
    let mut notes = Vec::new();
    if !machine.per.is_empty() {
        let keys: Vec<&str> = machine.per.iter().map(|k| k.text.as_str()).collect();
        notes.push(format!("one instance per {}", keys.join(", ")));
    }
    if machine.otherwise == Otherwise::Ignore {
        notes.push("otherwise ignore: events with no transition are ignored".to_string());
    }
    if let Some(walk) = walk {
        let instances = walk.instances.len();
        notes.push(format!(
            "highlighted: {} ({} instance{})",
            walk.trace,
            instances,
            if instances == 1 { "" } else { "s" }
        ));
    }
    notes
}

impl Drawing {
    /// The drawing of `machine`, with the walk of a trace marked on it if given.
    pub fn new(machine: &Machine, walk: Option<&Walk>) -> Drawing {
        let trail = Trail::new(machine, walk);
        let mut drawing = Drawing {
            spec: machine.name.clone(),
            about: machine.about.clone(),
            notes: notes(machine, walk),
            nodes: Vec::new(),
            edges: Vec::new(),
        };
        drawing.add_states(machine, &trail.visited, walk.is_some());
        drawing.add_allowed_moves(machine, &trail.moves);
        drawing.add_forbidden_moves(machine, walk);
        drawing.add_end_markers(machine, walk);
        drawing
    }

    /// The start dot, a node per state, and the arrow into the initial state.
    fn add_states(&mut self, machine: &Machine, visited: &[bool], highlighted: bool) {
        self.nodes.push(Node {
            key: ":start".to_string(),
            label: String::new(),
            kind: NodeKind::Start,
        });
        for state in machine.state_ids() {
            let s = machine.state(state);
            self.nodes.push(Node {
                key: s.name.clone(),
                label: s.name.clone(),
                kind: NodeKind::State {
                    initial: state == machine.initial,
                    accepting: s.accepting,
                    visited: visited[state.index()],
                },
            });
        }
        self.edges.push(Edge {
            from: 0,
            to: state_node(machine.initial),
            label: String::new(),
            kind: EdgeKind::Start,
            taken: highlighted,
        });
    }

    /// Allowed moves, in the order of the statements that allow them, one edge per pair
    /// of states. A move a `forbid` overrides never happens and is not drawn.
    fn add_allowed_moves(
        &mut self,
        machine: &Machine,
        taken: &BTreeMap<(StateId, EventId), Vec<u64>>,
    ) {
        let mut groups: Vec<((StateId, StateId), Vec<EventId>)> = Vec::new();
        // Where each pair's group is, and the moves already in one: looked up, not
        // searched for, so a spec of thousands of transitions draws in linear time.
        let mut group_of: HashMap<(StateId, StateId), usize> = HashMap::new();
        let mut grouped: HashSet<(StateId, StateId, EventId)> = HashSet::new();
        for (from, to, edge) in machine.allowed_moves() {
            let event = edge.event;
            if !grouped.insert((from, to, event)) {
                continue;
            }
            match group_of.get(&(from, to)) {
                Some(&at) => groups[at].1.push(event),
                None => {
                    group_of.insert((from, to), groups.len());
                    groups.push(((from, to), vec![event]));
                }
            }
        }
        for ((from, to), events) in groups {
            let mut any = false;
            let label = events
                .iter()
                .map(|&event| {
                    let name = machine.events[event].name.clone();
                    match taken.get(&(from, event)) {
                        Some(lines) => {
                            any = true;
                            format!("{name} {}", lines_note(lines))
                        }
                        None => name,
                    }
                })
                .collect::<Vec<_>>()
                .join(", ");
            self.edges.push(Edge {
                from: state_node(from),
                to: state_node(to),
                label,
                kind: EdgeKind::Allowed,
                taken: any,
            });
        }
    }

    /// Forbidden moves: one violation node per rule, one edge per state it applies to,
    /// marked where the walk was rejected by the rule.
    fn add_forbidden_moves(&mut self, machine: &Machine, walk: Option<&Walk>) {
        // Where the walk was rejected by a rule: (state, rule) → lines.
        let mut hits: BTreeMap<(StateId, usize), Vec<u64>> = BTreeMap::new();
        for instance in walk.iter().flat_map(|w| &w.instances) {
            if let End::Forbidden {
                state, rule, line, ..
            } = instance.end
            {
                hits.entry((state, rule)).or_default().push(line);
            }
        }
        let forbidden = forbidden_by_rule(machine);
        for (rule, forbid) in machine.forbids.iter().enumerate() {
            let by_state = &forbidden[rule];
            if by_state.is_empty() {
                continue;
            }
            let node = self.nodes.len();
            let hit = by_state
                .iter()
                .any(|(state, _)| hits.contains_key(&(*state, rule)));
            self.nodes.push(Node {
                key: format!(":forbid{rule}"),
                label: forbid.message.clone(),
                kind: NodeKind::Violation { hit },
            });
            for (state, events) in by_state {
                let state = *state;
                let mut label = events
                    .iter()
                    .map(|&e| machine.events[e].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ");
                let lines = hits.get(&(state, rule));
                if let Some(lines) = lines {
                    label = format!("✗ {label} {}", lines_note(lines));
                }
                self.edges.push(Edge {
                    from: state_node(state),
                    to: node,
                    label,
                    kind: EdgeKind::Forbidden,
                    taken: lines.is_some(),
                });
            }
        }
    }

    /// How the walk ended, one marker per state and kind of ending. An instance a rule
    /// rejected ends at that rule's violation node instead.
    fn add_end_markers(&mut self, machine: &Machine, walk: Option<&Walk>) {
        let mut ends: Vec<((StateId, bool, String), Vec<u64>)> = Vec::new();
        for instance in walk.iter().flat_map(|w| &w.instances) {
            let (state, ok, what, line) = match instance.end {
                End::Accepted { state } => (state, true, "trace ends here".to_string(), None),
                End::Unaccepted { state, line } => (
                    state,
                    false,
                    "trace ends here, but may not end here".to_string(),
                    Some(line),
                ),
                End::Unexpected { state, event, line } => (
                    state,
                    false,
                    format!(
                        "rejected: `{}` is not allowed here",
                        machine.events[event].name
                    ),
                    Some(line),
                ),
                End::Forbidden { .. } => continue,
            };
            let key = (state, ok, what);
            let entry = match ends.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry,
                None => {
                    ends.push((key, Vec::new()));
                    ends.last_mut().expect("bug: just pushed")
                }
            };
            entry.1.extend(line);
        }
        for (n, ((state, ok, what), mut lines)) in ends.into_iter().enumerate() {
            lines.sort_unstable();
            lines.dedup();
            let mark = if ok { "✓" } else { "✗" };
            let label = if lines.is_empty() {
                format!("{mark} {what}")
            } else {
                format!("{mark} {what} {}", lines_note(&lines))
            };
            let node = self.nodes.len();
            self.nodes.push(Node {
                key: format!(":mark{n}"),
                label,
                kind: NodeKind::Marker { ok },
            });
            self.edges.push(Edge {
                from: state_node(state),
                to: node,
                label: String::new(),
                kind: EdgeKind::Marker { ok },
                taken: true,
            });
        }
    }
}

/// Breaks `text` into lines of at most `width` characters, at spaces where it can.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in text.split(' ') {
        let fits = current.chars().count() + 1 + word.chars().count() <= width;
        if current.is_empty() {
            current = word.to_string();
        } else if fits {
            current.push(' ');
            current.push_str(word);
        } else {
            lines.push(std::mem::take(&mut current));
            current = word.to_string();
        }
    }
    lines.push(current);
    lines
}
