//! Graphviz DOT. Every id is a quoted string, so any state name is safe; labels are
//! escaped for DOT's quoted strings.

use std::fmt::Write as _;

use super::{Drawing, EdgeKind, NodeKind, wrap};

const RED: &str = "#c92a2a";
const BLUE: &str = "#1c7ed6";
const GREEN: &str = "#2b8a3e";
const HOT_FILL: &str = "#ffe8cc";

/// A DOT quoted string: `"` and `\` escaped, line breaks as `\n`.
pub fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => {}
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

pub fn render(drawing: &Drawing) -> String {
    let mut out = String::new();
    let mut title = vec![drawing.spec.clone()];
    title.extend(drawing.about.iter().flat_map(|about| wrap(about, 80)));
    title.extend(drawing.notes.iter().cloned());
    let _ = writeln!(out, "digraph {} {{", quote(&drawing.spec));
    let _ = writeln!(
        out,
        "  graph [rankdir=TB, labelloc=t, fontname=\"Helvetica\", label={}];",
        quote(&title.join("\n"))
    );
    let _ = writeln!(
        out,
        "  node [fontname=\"Helvetica\", shape=box, style=rounded];"
    );
    let _ = writeln!(out, "  edge [fontname=\"Helvetica\", fontsize=10];");
    for node in &drawing.nodes {
        let id = quote(&node.key);
        let attrs = match node.kind {
            NodeKind::Start => "shape=point, width=0.15, label=\"\"".to_string(),
            NodeKind::State {
                initial: _,
                accepting,
                visited,
            } => {
                let mut attrs = vec![format!("label={}", quote(&node.label))];
                if accepting {
                    attrs.push("peripheries=2".into());
                } else {
                    attrs.push(format!(
                        "style=\"rounded,filled\", fillcolor={}",
                        quote(HOT_FILL)
                    ));
                }
                if visited {
                    attrs.push(format!("color={}, penwidth=2", quote(BLUE)));
                }
                attrs.join(", ")
            }
            NodeKind::Violation { hit } => {
                let mut attrs = format!(
                    "label={}, shape=octagon, color={red}, fontcolor={red}",
                    quote(&wrap(&node.label, 40).join("\n")),
                    red = quote(RED)
                );
                if hit {
                    attrs.push_str(", penwidth=3");
                }
                attrs
            }
            NodeKind::Marker { ok } => {
                let color = quote(if ok { GREEN } else { RED });
                format!(
                    "label={}, shape=note, color={color}, fontcolor={color}",
                    quote(&wrap(&node.label, 40).join("\n"))
                )
            }
        };
        let _ = writeln!(out, "  {id} [{attrs}];");
    }
    for edge in &drawing.edges {
        let from = quote(&drawing.nodes[edge.from].key);
        let to = quote(&drawing.nodes[edge.to].key);
        let mut attrs = Vec::new();
        if !edge.label.is_empty() {
            attrs.push(format!("label={}", quote(&edge.label)));
        }
        match edge.kind {
            EdgeKind::Start | EdgeKind::Allowed => {
                if edge.taken {
                    attrs.push(format!(
                        "color={blue}, fontcolor={blue}, penwidth=2.5",
                        blue = quote(BLUE)
                    ));
                }
            }
            EdgeKind::Forbidden => {
                attrs.push(format!(
                    "color={red}, fontcolor={red}, style={}",
                    if edge.taken { "bold" } else { "dashed" },
                    red = quote(RED)
                ));
                if edge.taken {
                    attrs.push("penwidth=3".into());
                }
            }
            EdgeKind::Marker { ok } => {
                attrs.push(format!(
                    "color={}, style=dotted, arrowhead=none",
                    quote(if ok { GREEN } else { RED })
                ));
            }
        }
        if attrs.is_empty() {
            let _ = writeln!(out, "  {from} -> {to};");
        } else {
            let _ = writeln!(out, "  {from} -> {to} [{}];", attrs.join(", "));
        }
    }
    out.push_str("}\n");
    out
}
