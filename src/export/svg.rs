//! A standalone SVG image, laid out in-process (see [`super::layout`]).
//!
//! Text is set in a monospace font so its width can be known without font metrics: a
//! character is 0.6 em wide. Coordinates are rounded to 0.1 px, so the output is stable
//! byte for byte. Every node and edge is a `<g>` with a class (`state`, `violation`,
//! `marker`, `edge allowed`, `edge forbidden`, ...) and a `<title>` (a tooltip with the
//! full text), so the image can be styled or inspected.

use std::fmt::Write as _;

use super::layout::{self, Input, Size};
use super::{Drawing, Edge, EdgeKind, Node, NodeKind, wrap};

const FONT: &str = "ui-monospace, SFMono-Regular, Menlo, Consolas, 'Liberation Mono', monospace";
const FONT_SIZE: f64 = 12.0;
const LABEL_SIZE: f64 = 11.0;
/// Monospace glyphs are 0.6 em wide.
const CHAR: f64 = 0.6;
const LINE: f64 = 16.0;

const INK: &str = "#343a40";
const EDGE: &str = "#495057";
const RED: &str = "#c92a2a";
const BLUE: &str = "#1c7ed6";
const GREEN: &str = "#2b8a3e";
const HOT_FILL: &str = "#ffe8cc";
const HOT_STROKE: &str = "#d9480f";

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}

/// A coordinate, rounded to 0.1 and printed without trailing zeros (`12`, `12.5`).
fn num(x: f64) -> String {
    let rounded = (x * 10.0).round() / 10.0;
    if rounded == 0.0 {
        "0".to_string()
    } else {
        format!("{rounded}")
    }
}

fn text_width(text: &str, size: f64) -> f64 {
    text.chars().count() as f64 * size * CHAR
}

/// The lines a node shows.
fn node_lines(kind: NodeKind, label: &str) -> Vec<String> {
    match kind {
        NodeKind::Start => Vec::new(),
        NodeKind::State { .. } => vec![label.to_string()],
        NodeKind::Violation { .. } => wrap(&format!("✗ {label}"), 36),
        NodeKind::Marker { .. } => wrap(label, 32),
    }
}

fn node_size(kind: NodeKind, lines: &[String]) -> Size {
    let widest = lines
        .iter()
        .map(|l| text_width(l, FONT_SIZE))
        .fold(0.0, f64::max);
    match kind {
        NodeKind::Start => Size {
            width: 14.0,
            height: 14.0,
        },
        NodeKind::State { .. } => Size {
            width: (widest + 28.0).max(60.0),
            height: 34.0,
        },
        NodeKind::Violation { .. } | NodeKind::Marker { .. } => Size {
            width: widest + 24.0,
            height: lines.len() as f64 * LINE + 14.0,
        },
    }
}

const LEGEND: &str =
    "double border: may end a trace · filled: may not (hot) · red dashed: forbidden move";
const LEGEND_HEIGHT: f64 = 28.0;

pub fn render(drawing: &Drawing) -> String {
    let lines: Vec<Vec<String>> = drawing
        .nodes
        .iter()
        .map(|node| node_lines(node.kind, &node.label))
        .collect();
    let sizes: Vec<Size> = drawing
        .nodes
        .iter()
        .zip(&lines)
        .map(|(node, lines)| node_size(node.kind, lines))
        .collect();
    let placed = layout::layout(&layout_input(drawing, &sizes));
    let canvas = Canvas::new(drawing, &placed);

    let mut out = String::new();
    write_prelude(&mut out, drawing, &canvas);
    write_header(&mut out, &canvas.title);
    out.push_str("<g class=\"edges\">\n");
    for (edge, path) in drawing.edges.iter().zip(&placed.edges) {
        write_edge(&mut out, drawing, edge, path, &canvas);
    }
    out.push_str("</g>\n");
    out.push_str("<g class=\"nodes\">\n");
    for (n, node) in drawing.nodes.iter().enumerate() {
        let frame = NodeBox::new(canvas.at(placed.nodes[n]), sizes[n]);
        write_node(&mut out, node, &frame, &lines[n]);
    }
    out.push_str("</g>\n");
    let _ = writeln!(
        out,
        "<text class=\"legend\" x=\"16\" y=\"{}\" font-size=\"{}\" fill=\"#868e96\">{}</text>",
        num(canvas.height - 10.0),
        num(LABEL_SIZE),
        escape(LEGEND)
    );
    out.push_str("</svg>\n");
    out
}

/// What the layout needs: the size of every node and of every edge's label.
fn layout_input(drawing: &Drawing, sizes: &[Size]) -> Input {
    Input {
        nodes: sizes.to_vec(),
        edges: drawing
            .edges
            .iter()
            .map(|edge| {
                let size = if edge.label.is_empty() {
                    Size {
                        width: 0.0,
                        height: 0.0,
                    }
                } else {
                    Size {
                        width: text_width(&edge.label, LABEL_SIZE) + 8.0,
                        height: LINE,
                    }
                };
                (edge.from, edge.to, size)
            })
            .collect(),
    }
}

/// The whole image: the title block above the laid-out graph and the legend below it.
struct Canvas {
    /// The title block's lines, each with its class: the spec's name, what it is about,
    /// and the notes.
    title: Vec<(String, &'static str)>,
    width: f64,
    height: f64,
    /// Where the graph's origin sits on the canvas.
    dx: f64,
    dy: f64,
}

impl Canvas {
    fn new(drawing: &Drawing, placed: &layout::Layout) -> Canvas {
        let mut title = vec![(drawing.spec.clone(), "title")];
        let title_chars = ((placed.width.max(480.0) - 32.0) / (FONT_SIZE * CHAR)) as usize;
        if let Some(about) = &drawing.about {
            title.extend(wrap(about, title_chars).into_iter().map(|l| (l, "about")));
        }
        title.extend(drawing.notes.iter().map(|n| (n.clone(), "note")));
        let title_height = 16.0 + title.len() as f64 * (LINE + 2.0) + 4.0;
        let content_width = title
            .iter()
            .map(|(l, _)| text_width(l, FONT_SIZE) + 32.0)
            .chain([text_width(LEGEND, LABEL_SIZE) + 32.0, placed.width])
            .fold(0.0, f64::max);
        let width = content_width.ceil();
        let height = (title_height + placed.height + LEGEND_HEIGHT).ceil();
        Canvas {
            title,
            width,
            height,
            // Centre the graph under the title when the title is wider.
            dx: ((width - placed.width) / 2.0).max(0.0),
            dy: title_height,
        }
    }

    /// A point of the layout, placed on the canvas.
    fn at(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (x + self.dx, y + self.dy)
    }
}

/// The `<svg>` element's start, the arrowheads and the white background.
fn write_prelude(out: &mut String, drawing: &Drawing, canvas: &Canvas) {
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" font-family=\"{}\" font-size=\"{}\">",
        FONT,
        num(FONT_SIZE),
        w = num(canvas.width),
        h = num(canvas.height),
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&drawing.spec));
    out.push_str("<defs>\n");
    for (id, color) in [("arrow", EDGE), ("arrow-red", RED), ("arrow-blue", BLUE)] {
        let _ = writeln!(
            out,
            "<marker id=\"{id}\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" markerWidth=\"9\" markerHeight=\"9\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"{color}\"/></marker>"
        );
    }
    out.push_str("</defs>\n");
    let _ = writeln!(
        out,
        "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>"
    );
}

/// The title block.
fn write_header(out: &mut String, title: &[(String, &str)]) {
    out.push_str("<g class=\"header\">\n");
    let mut y = 16.0;
    for (line, class) in title {
        y += LINE + 2.0;
        let style = match *class {
            "title" => " font-weight=\"bold\" font-size=\"14\" fill=\"#343a40\"",
            "note" => " font-style=\"italic\" fill=\"#495057\"",
            _ => " fill=\"#343a40\"",
        };
        let _ = writeln!(
            out,
            "<text class=\"{class}\" x=\"16\" y=\"{}\"{style}>{}</text>",
            num(y - 4.0),
            escape(line)
        );
    }
    out.push_str("</g>\n");
}

/// How an edge is drawn.
struct EdgeStyle {
    class: &'static str,
    color: &'static str,
    /// The arrowhead's marker id; empty for none.
    marker: &'static str,
    /// An extra `stroke-dasharray` attribute, or empty.
    dash: &'static str,
    width: f64,
}

fn edge_style(kind: EdgeKind, taken: bool) -> EdgeStyle {
    let (class, color, marker, dash, width) = match kind {
        EdgeKind::Start | EdgeKind::Allowed if taken => {
            ("allowed taken", BLUE, "arrow-blue", "", 2.5)
        }
        EdgeKind::Start => ("start", EDGE, "arrow", "", 1.2),
        EdgeKind::Allowed => ("allowed", EDGE, "arrow", "", 1.2),
        EdgeKind::Forbidden if taken => ("forbidden taken", RED, "arrow-red", "", 3.0),
        EdgeKind::Forbidden => (
            "forbidden",
            RED,
            "arrow-red",
            " stroke-dasharray=\"6 4\"",
            1.2,
        ),
        EdgeKind::Marker { ok } => (
            "marker",
            if ok { GREEN } else { RED },
            "",
            " stroke-dasharray=\"2 3\"",
            1.5,
        ),
    };
    EdgeStyle {
        class,
        color,
        marker,
        dash,
        width,
    }
}

/// One edge: its tooltip, its curve and its label on a light backing.
fn write_edge(
    out: &mut String,
    drawing: &Drawing,
    edge: &Edge,
    path: &layout::EdgePath,
    canvas: &Canvas,
) {
    let points: Vec<(f64, f64)> = path.points.iter().map(|&p| canvas.at(p)).collect();
    if points.len() < 2 {
        return;
    }
    let EdgeStyle {
        class,
        color,
        marker,
        dash,
        width: stroke_width,
    } = edge_style(edge.kind, edge.taken);
    let from = &drawing.nodes[edge.from].key;
    let to = &drawing.nodes[edge.to].key;
    let _ = writeln!(out, "<g class=\"edge {class}\">");
    let _ = writeln!(
        out,
        "<title>{}</title>",
        escape(&format!("{from} -> {to}: {}", edge.label))
    );
    let marker = if marker.is_empty() {
        String::new()
    } else {
        format!(" marker-end=\"url(#{marker})\"")
    };
    let _ = writeln!(
        out,
        "<path d=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{}\"{dash}{marker}/>",
        path_data(&points),
        num(stroke_width)
    );
    if let Some(center) = path.label {
        let (x, y) = canvas.at(center);
        let w = text_width(&edge.label, LABEL_SIZE) + 6.0;
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"14\" fill=\"#ffffff\" fill-opacity=\"0.85\"/>",
            num(x - w / 2.0),
            num(y - 7.0),
            num(w)
        );
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" font-size=\"{}\" text-anchor=\"middle\" fill=\"{color}\">{}</text>",
            num(x),
            num(y + 4.0),
            num(LABEL_SIZE),
            escape(&edge.label)
        );
    }
    out.push_str("</g>\n");
}

/// Where a node sits on the canvas: its centre and its size.
struct NodeBox {
    cx: f64,
    cy: f64,
    size: Size,
}

impl NodeBox {
    fn new((cx, cy): (f64, f64), size: Size) -> NodeBox {
        NodeBox { cx, cy, size }
    }

    /// The top-left corner.
    fn corner(&self) -> (f64, f64) {
        (
            self.cx - self.size.width / 2.0,
            self.cy - self.size.height / 2.0,
        )
    }

    /// A rounded rectangle `inset` inside the box.
    fn rect(&self, out: &mut String, inset: f64, fill: &str, stroke: &str, width: f64) {
        let (x, y) = self.corner();
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"{}\" fill=\"{fill}\" stroke=\"{stroke}\" stroke-width=\"{}\"/>",
            num(x + inset),
            num(y + inset),
            num(self.size.width - 2.0 * inset),
            num(self.size.height - 2.0 * inset),
            num((8.0 - inset).max(2.0)),
            num(width)
        );
    }
}

/// One node: a group with its tooltip, its shape and its lines of text.
fn write_node(out: &mut String, node: &Node, frame: &NodeBox, lines: &[String]) {
    match node.kind {
        NodeKind::Start => {
            let _ = writeln!(
                out,
                "<g class=\"start\"><title>start</title><circle cx=\"{}\" cy=\"{}\" r=\"6\" fill=\"{INK}\"/></g>",
                num(frame.cx),
                num(frame.cy)
            );
            return;
        }
        NodeKind::State {
            initial,
            accepting,
            visited,
        } => write_state(out, node, frame, initial, accepting, visited),
        NodeKind::Violation { hit } => write_violation(out, node, frame, hit),
        NodeKind::Marker { ok } => {
            let _ = writeln!(
                out,
                "<g class=\"marker {}\">",
                if ok { "ok" } else { "rejected" }
            );
            let _ = writeln!(out, "<title>{}</title>", escape(&node.label));
            let (fill, stroke) = if ok {
                ("#ebfbee", GREEN)
            } else {
                ("#fff5f5", RED)
            };
            frame.rect(out, 0.0, fill, stroke, 1.5);
        }
    }
    let color = match node.kind {
        NodeKind::Violation { .. } | NodeKind::Marker { ok: false } => RED,
        NodeKind::Marker { ok: true } => GREEN,
        _ => INK,
    };
    let count = lines.len() as f64;
    for (k, line) in lines.iter().enumerate() {
        let ty = frame.cy - (count - 1.0) * LINE / 2.0 + k as f64 * LINE + FONT_SIZE * 0.35;
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{color}\">{}</text>",
            num(frame.cx),
            num(ty),
            escape(line)
        );
    }
    out.push_str("</g>\n");
}

/// A state's group start and its box: double-bordered if it may end a trace, filled
/// if not, blue if the trace visited it.
fn write_state(
    out: &mut String,
    node: &Node,
    frame: &NodeBox,
    initial: bool,
    accepting: bool,
    visited: bool,
) {
    let mut class = String::from("state");
    let mut tip = node.label.clone();
    if initial {
        class.push_str(" initial");
        tip.push_str(" (initial)");
    }
    if accepting {
        class.push_str(" accepting");
        tip.push_str(": may end a trace");
    } else {
        class.push_str(" hot");
        tip.push_str(": may not end a trace");
    }
    if visited {
        class.push_str(" visited");
    }
    let _ = writeln!(
        out,
        "<g class=\"{class}\" id=\"state-{}\">",
        escape(&node.key)
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&tip));
    let (fill, stroke) = if accepting {
        ("#ffffff", INK)
    } else {
        (HOT_FILL, HOT_STROKE)
    };
    let stroke = if visited { BLUE } else { stroke };
    let width = if visited { 2.5 } else { 1.5 };
    frame.rect(out, 0.0, fill, stroke, width);
    if accepting {
        frame.rect(out, 3.5, "none", stroke, 1.2);
    }
}

/// A violation's group start and its octagon, stronger if the trace hit it.
fn write_violation(out: &mut String, node: &Node, frame: &NodeBox, hit: bool) {
    let _ = writeln!(
        out,
        "<g class=\"violation{}\" id=\"violation-{}\">",
        if hit { " hit" } else { "" },
        escape(node.key.trim_start_matches(':'))
    );
    let _ = writeln!(out, "<title>{}</title>", escape(&node.label));
    let c = 7.0;
    let (x, y) = frame.corner();
    let (w, h) = (frame.size.width, frame.size.height);
    let _ = writeln!(
        out,
        "<polygon points=\"{}\" fill=\"{}\" stroke=\"{RED}\" stroke-width=\"{}\"/>",
        [
            (x + c, y),
            (x + w - c, y),
            (x + w, y + c),
            (x + w, y + h - c),
            (x + w - c, y + h),
            (x + c, y + h),
            (x, y + h - c),
            (x, y + c),
        ]
        .iter()
        .map(|&(px, py)| format!("{},{}", num(px), num(py)))
        .collect::<Vec<_>>()
        .join(" "),
        if hit { "#ffc9c9" } else { "#fff5f5" },
        if hit { "3" } else { "1.5" }
    );
}

/// A smooth path through the layout's points: straight for two, else quadratic curves
/// that pass through the midpoints between bends.
fn path_data(points: &[(f64, f64)]) -> String {
    let p = |(x, y): (f64, f64)| format!("{},{}", num(x), num(y));
    let mut d = format!("M{}", p(points[0]));
    if points.len() == 2 {
        let _ = write!(d, " L{}", p(points[1]));
        return d;
    }
    for i in 1..points.len() - 1 {
        let end = if i == points.len() - 2 {
            points[i + 1]
        } else {
            (
                (points[i].0 + points[i + 1].0) / 2.0,
                (points[i].1 + points[i + 1].1) / 2.0,
            )
        };
        let _ = write!(d, " Q{} {}", p(points[i]), p(end));
    }
    d
}
