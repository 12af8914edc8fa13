//! Mermaid `stateDiagram-v2`, which GitHub renders in Markdown as is.
//!
//! Mermaid cannot style single transitions or draw double borders, so: states that may
//! end a trace have a thick border (class `accepting`), states that may not are filled
//! (`hot`), forbidden moves lead to red violation states (`violation`) with a `✗` on
//! their label, and a highlighted path is in blue (`*_visited`) with the trace lines on
//! the transitions it took. Text is escaped with Mermaid's `#code;` entities.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{Drawing, EdgeKind, NodeKind};

/// Words Mermaid's state diagram grammar gives a meaning; a state with such a name gets
/// another id (and keeps its name as its label).
const RESERVED: &[&str] = &[
    "as",
    "class",
    "classDef",
    "click",
    "default",
    "direction",
    "end",
    "hide",
    "left",
    "note",
    "of",
    "right",
    "scale",
    "state",
    "style",
    "stateDiagram",
    "accTitle",
    "accDescr",
    "BT",
    "LR",
    "RL",
    "TB",
];

/// Text for a label: characters Mermaid would read as syntax become `#code;` entities,
/// and line breaks become spaces.
pub fn escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            ';' => out.push_str("#59;"),
            ':' => out.push_str("#58;"),
            '<' => out.push_str("#lt;"),
            '>' => out.push_str("#gt;"),
            '\n' | '\r' => out.push(' '),
            _ => out.push(c),
        }
    }
    out
}

fn yaml_string(text: &str) -> String {
    serde_json::to_string(text).expect("bug: a string always serializes")
}

pub fn render(drawing: &Drawing) -> String {
    // Ids: a state's name where Mermaid allows it, otherwise a fresh one.
    let names: BTreeSet<&str> = drawing
        .nodes
        .iter()
        .filter(|n| matches!(n.kind, NodeKind::State { .. }))
        .map(|n| n.key.as_str())
        .collect();
    let mut taken: BTreeSet<String> = names.iter().map(|s| s.to_string()).collect();
    let fresh = |wanted: String, taken: &mut BTreeSet<String>| {
        let mut id = wanted;
        while taken.contains(&id) {
            id.insert_str(0, "x_");
        }
        taken.insert(id.clone());
        id
    };
    let ids: Vec<String> = drawing
        .nodes
        .iter()
        .map(|node| match node.kind {
            NodeKind::Start => "[*]".to_string(),
            NodeKind::State { .. } if !RESERVED.contains(&node.key.as_str()) => node.key.clone(),
            NodeKind::State { .. } => fresh(format!("state_{}", node.key), &mut taken),
            NodeKind::Violation { .. } | NodeKind::Marker { .. } => {
                fresh(node.key.trim_start_matches(':').to_string(), &mut taken)
            }
        })
        .collect();

    let mut out = String::new();
    let title = match &drawing.about {
        Some(about) => format!("{}: {about}", drawing.spec),
        None => drawing.spec.clone(),
    };
    let _ = writeln!(out, "---\ntitle: {}\n---", yaml_string(&title));
    out.push_str("stateDiagram-v2\n");
    for (node, id) in drawing.nodes.iter().zip(&ids) {
        let label = match node.kind {
            NodeKind::Start => continue,
            NodeKind::State { .. } if *id == node.key => continue,
            NodeKind::State { .. } => node.label.clone(),
            NodeKind::Violation { .. } => format!("✗ {}", node.label),
            NodeKind::Marker { .. } => node.label.clone(),
        };
        let _ = writeln!(out, "    state \"{}\" as {id}", escape(&label));
    }
    for edge in &drawing.edges {
        let (from, to) = (&ids[edge.from], &ids[edge.to]);
        let label = match edge.kind {
            EdgeKind::Forbidden if !edge.label.starts_with('✗') => format!("✗ {}", edge.label),
            _ => edge.label.clone(),
        };
        if label.is_empty() {
            let _ = writeln!(out, "    {from} --> {to}");
        } else {
            let _ = writeln!(out, "    {from} --> {to} : {}", escape(&label));
        }
    }
    if !drawing.notes.is_empty() {
        let initial = drawing
            .nodes
            .iter()
            .position(|n| matches!(n.kind, NodeKind::State { initial: true, .. }));
        if let Some(initial) = initial {
            let _ = writeln!(out, "    note right of {}", ids[initial]);
            for note in &drawing.notes {
                let _ = writeln!(out, "        {}", escape(note));
            }
            out.push_str("    end note\n");
        }
    }
    out.push_str("    classDef accepting stroke-width:3px\n");
    out.push_str("    classDef hot fill:#ffe8cc,stroke:#d9480f\n");
    out.push_str("    classDef accepting_visited stroke:#1c7ed6,stroke-width:4px,color:#1c7ed6\n");
    out.push_str(
        "    classDef hot_visited fill:#ffe8cc,stroke:#1c7ed6,stroke-width:4px,color:#1c7ed6\n",
    );
    out.push_str("    classDef violation fill:#fff5f5,stroke:#c92a2a,color:#c92a2a\n");
    out.push_str(
        "    classDef violation_hit fill:#ffc9c9,stroke:#c92a2a,stroke-width:4px,color:#c92a2a\n",
    );
    out.push_str("    classDef good fill:#ebfbee,stroke:#2b8a3e,color:#2b8a3e\n");
    out.push_str("    classDef bad fill:#fff5f5,stroke:#c92a2a,color:#c92a2a\n");
    for (node, id) in drawing.nodes.iter().zip(&ids) {
        let class = match node.kind {
            NodeKind::Start => continue,
            NodeKind::State {
                accepting: true,
                visited: false,
                ..
            } => "accepting",
            NodeKind::State {
                accepting: false,
                visited: false,
                ..
            } => "hot",
            NodeKind::State {
                accepting: true,
                visited: true,
                ..
            } => "accepting_visited",
            NodeKind::State {
                accepting: false,
                visited: true,
                ..
            } => "hot_visited",
            NodeKind::Violation { hit: false } => "violation",
            NodeKind::Violation { hit: true } => "violation_hit",
            NodeKind::Marker { ok: true } => "good",
            NodeKind::Marker { ok: false } => "bad",
        };
        let _ = writeln!(out, "    class {id} {class}");
    }
    out
}
