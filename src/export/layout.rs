//! Layered (Sugiyama) layout for the SVG writer, in-process: no Graphviz binary.
//!
//! The work is done by the `dagre` crate (a port of dagre.js: network-simplex ranking,
//! barycenter crossing reduction, Brandes–Köpf coordinates, edge-label placement). It
//! is young, so it is pinned in Cargo.toml and used only through this small interface:
//! boxes and labelled edges in, centres and polylines out. Replacing it means
//! rewriting this file only.

use dagre::graph::{Graph, GraphOptions};
use dagre::{EdgeLabel, GraphLabel, LayoutOptions, NodeLabel};

/// A box's width and height, in pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    /// Width, in pixels.
    pub width: f64,
    /// Height, in pixels.
    pub height: f64,
}

/// What to lay out: boxes, and edges between them (indexes into `nodes`) with the size
/// of their label (zero for none).
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Each box's size.
    pub nodes: Vec<Size>,
    /// Each edge: its source, its target and its label's size.
    pub edges: Vec<(usize, usize, Size)>,
}

/// Where everything went. Coordinates start at the top-left corner `(0, 0)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Each node's centre.
    pub nodes: Vec<(f64, f64)>,
    /// Each edge's route, in the order of [`Input::edges`].
    pub edges: Vec<EdgePath>,
    /// The drawing's width, in pixels.
    pub width: f64,
    /// The drawing's height, in pixels.
    pub height: f64,
}

/// Where an edge goes.
#[derive(Debug, Clone, PartialEq)]
pub struct EdgePath {
    /// From the source's border to the target's border.
    pub points: Vec<(f64, f64)>,
    /// The centre of the label, if the edge has one.
    pub label: Option<(f64, f64)>,
}

/// Spacing between boxes in a rank, between ranks, and around the drawing.
const NODE_SEP: f64 = 40.0;
const RANK_SEP: f64 = 48.0;
const EDGE_SEP: f64 = 16.0;
const MARGIN: f64 = 16.0;

/// Lays `input` out top to bottom.
pub fn layout(input: &Input) -> Layout {
    let mut g: Graph<NodeLabel, EdgeLabel> = Graph::with_options(GraphOptions {
        directed: true,
        multigraph: true,
        compound: true,
    });
    g.set_graph_label(GraphLabel::default());
    let id = |n: usize| format!("n{n}");
    for (n, size) in input.nodes.iter().enumerate() {
        let label = NodeLabel {
            width: size.width,
            height: size.height,
            ..NodeLabel::default()
        };
        g.set_node(id(n), Some(label));
    }
    for (k, (from, to, size)) in input.edges.iter().enumerate() {
        let label = EdgeLabel {
            width: size.width,
            height: size.height,
            labelpos: dagre::layout::types::LabelPos::Center,
            ..EdgeLabel::default()
        };
        g.set_edge(id(*from), id(*to), Some(label), Some(&format!("e{k}")));
    }
    dagre::layout(
        &mut g,
        Some(LayoutOptions {
            nodesep: NODE_SEP,
            ranksep: RANK_SEP,
            edgesep: EDGE_SEP,
            marginx: MARGIN,
            marginy: MARGIN,
            ..LayoutOptions::default()
        }),
    );

    let nodes = (0..input.nodes.len())
        .map(|n| {
            g.node(&id(n))
                .map_or((0.0, 0.0), |l| (l.x.unwrap_or(0.0), l.y.unwrap_or(0.0)))
        })
        .collect();
    let edges = input
        .edges
        .iter()
        .enumerate()
        .map(|(k, (from, to, size))| {
            let label = g.edge(&id(*from), &id(*to), Some(&format!("e{k}")));
            EdgePath {
                points: label
                    .map_or_else(Vec::new, |l| l.points.iter().map(|p| (p.x, p.y)).collect()),
                label: label
                    .filter(|_| size.width > 0.0)
                    .and_then(|l| Some((l.x?, l.y?))),
            }
        })
        .collect();
    let (width, height) = g
        .graph_label::<GraphLabel>()
        .map_or((0.0, 0.0), |l| (l.width, l.height));
    Layout {
        nodes,
        edges,
        width,
        height,
    }
}
