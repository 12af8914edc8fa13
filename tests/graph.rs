//! `tracegate graph`: snapshots of DOT, Mermaid, SVG and JSON for every shipped spec;
//! the SVG is well-formed XML with every state and edge label; escaping; determinism;
//! `--highlight`; and a 30-state, 90-transition spec lays out.

use std::fmt::Write as _;
use std::path::PathBuf;

use tracegate::export::highlight::{End, trace_walk};
use tracegate::export::{Drawing, EdgeKind, Format, render};
use tracegate::machine::Machine;

use crate::util::{root, run, spec, stdout};

fn shipped() -> Vec<(String, Machine)> {
    let (paths, errors) =
        tracegate::files::collect(&[root().join("specs")], tracegate::files::is_spec_file);
    assert!(errors.is_empty());
    paths
        .iter()
        .map(|path| {
            let (machines, errors) = tracegate::files::load_specs(std::slice::from_ref(path));
            assert!(errors.is_empty(), "{errors:#?}");
            let machine = machines.into_iter().next().unwrap();
            (machine.name.clone(), machine)
        })
        .collect()
}

/// A machine whose source path is relative, so snapshots do not depend on the checkout.
fn relative(machine: &Machine) -> Machine {
    let path = machine
        .source
        .path
        .strip_prefix(root())
        .unwrap_or(&machine.source.path)
        .to_path_buf();
    let source = std::sync::Arc::new(tracegate::machine::SpecSource::new(
        path,
        machine.source.text.clone(),
    ));
    tracegate::spec::analyzer::load(source).unwrap()
}

#[test]
fn snapshots_of_the_shipped_specs() {
    for (name, machine) in shipped() {
        let machine = relative(&machine);
        for (format, ext) in [
            (Format::Dot, "dot"),
            (Format::Mermaid, "mmd"),
            (Format::Svg, "svg"),
            (Format::Json, "json"),
        ] {
            let text = render(&machine, format, None);
            insta::assert_snapshot!(format!("{name}.{ext}"), text);
        }
    }
}

/// The text content of an SVG document's `<text>` elements and `<title>`s.
fn svg_texts(svg: &str) -> Vec<String> {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.has_tag_name("text") || n.has_tag_name("title"))
        .map(|n| n.text().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn svg_is_well_formed_and_labels_everything() {
    for (name, machine) in shipped() {
        let drawing = Drawing::new(&machine, None);
        let svg = render(&machine, Format::Svg, None);
        let texts = svg_texts(&svg);
        for state in machine.state_ids() {
            let state = &machine.state(state).name;
            assert!(
                texts.contains(state),
                "{name}: state `{state}` has no label"
            );
        }
        for edge in &drawing.edges {
            if !edge.label.is_empty() {
                assert!(
                    texts.contains(&edge.label),
                    "{name}: edge label `{}` missing",
                    edge.label
                );
            }
        }
        for forbid in &machine.forbids {
            assert!(
                texts.contains(&forbid.message),
                "{name}: forbid message missing"
            );
        }
        assert_eq!(
            render(&machine, Format::Svg, None),
            svg,
            "{name}: not deterministic"
        );
    }
}

#[test]
fn every_format_shows_states_transitions_and_forbids() {
    for (name, machine) in shipped() {
        let dot = render(&machine, Format::Dot, None);
        let mermaid = render(&machine, Format::Mermaid, None);
        assert!(
            dot.starts_with(&format!("digraph \"{name}\" {{\n")),
            "{dot}"
        );
        assert!(dot.ends_with("}\n"));
        assert!(mermaid.contains("\nstateDiagram-v2\n"), "{mermaid}");
        assert!(
            mermaid.contains(&format!(
                "    [*] --> {}\n",
                machine.state(machine.initial).name
            )),
            "{mermaid}"
        );
        for (from, to, edge) in machine.edges() {
            let (from, to) = (&machine.state(from).name, &machine.state(to).name);
            let event = &machine.events[edge.event].name;
            let in_dot = dot.lines().any(|l| {
                l.starts_with(&format!("  \"{from}\" -> \"{to}\" [label=\"")) && l.contains(event)
            });
            assert!(
                in_dot,
                "{name}: `{from} -> {to}` on `{event}` missing from DOT"
            );
            let in_mermaid = mermaid
                .lines()
                .any(|l| l.starts_with(&format!("    {from} --> {to} : ")) && l.contains(event));
            assert!(in_mermaid, "{name}: `{from} -> {to}` missing from Mermaid");
        }
        for (rule, _) in machine.forbids.iter().enumerate() {
            assert!(
                dot.contains(&format!("-> \":forbid{rule}\" [label=")),
                "{name}: forbid {rule} not drawn"
            );
            assert!(dot.contains("style=dashed"), "{dot}");
            assert!(
                mermaid.contains(&format!(" --> forbid{rule} : ✗ ")),
                "{mermaid}"
            );
        }
    }
}

#[test]
fn accepting_hot_and_otherwise_ignore_are_marked() {
    let machine = spec(
        "spec marks\nevent a = call a\nevent b = call b\ninitial idle\naccept idle\n\
         otherwise ignore\nper args.id\nidle -> busy on a\nbusy -> idle on b\n\
         forbid busy on a: \"twice\"\n",
    );
    let dot = render(&machine, Format::Dot, None);
    assert!(
        dot.contains("\"idle\" [label=\"idle\", peripheries=2];"),
        "{dot}"
    );
    assert!(
        dot.contains("\"busy\" [label=\"busy\", style=\"rounded,filled\""),
        "{dot}"
    );
    assert!(dot.contains("otherwise ignore"), "{dot}");
    assert!(dot.contains("one instance per args.id"), "{dot}");
    let mermaid = render(&machine, Format::Mermaid, None);
    assert!(mermaid.contains("    class idle accepting\n"), "{mermaid}");
    assert!(mermaid.contains("    class busy hot\n"), "{mermaid}");
    assert!(mermaid.contains("    note right of idle\n"), "{mermaid}");
    assert!(mermaid.contains("otherwise ignore#58; events"), "{mermaid}");
    let svg = render(&machine, Format::Svg, None);
    assert!(svg.contains("class=\"state initial accepting\""), "{svg}");
    assert!(svg.contains("class=\"state hot\""), "{svg}");
    assert!(
        svg_texts(&svg)
            .iter()
            .any(|t| t.starts_with("otherwise ignore"))
    );
}

#[test]
fn labels_are_escaped_for_each_format() {
    let message = r#"never "quote" <tag> & #hash; a\b: c"#;
    let machine = spec(&format!(
        "spec escapes\nevent a = call a\ninitial end\nend -> state on a\nforbid state on a: {}\n",
        serde_json::to_string(message).unwrap()
    ));
    let dot = render(&machine, Format::Dot, None);
    assert!(
        dot.contains(r#"never \"quote\" <tag> & #hash; a\\b: c"#),
        "{dot}"
    );
    let mermaid = render(&machine, Format::Mermaid, None);
    assert!(
        mermaid.contains("never #quot;quote#quot; #lt;tag#gt; & #35;hash#59; a\\b#58; c"),
        "{mermaid}"
    );
    // Mermaid keywords are not used as ids.
    assert!(
        mermaid.contains("    state \"end\" as state_end\n"),
        "{mermaid}"
    );
    assert!(mermaid.contains("    [*] --> state_end\n"), "{mermaid}");
    assert!(
        mermaid.contains("    state_end --> state_state : a\n"),
        "{mermaid}"
    );
    let svg = render(&machine, Format::Svg, None);
    assert!(svg_texts(&svg).contains(&message.to_string()));
    let json: serde_json::Value =
        serde_json::from_str(&render(&machine, Format::Json, None)).unwrap();
    assert_eq!(json["forbids"][0]["message"], message);
}

#[test]
fn a_transition_a_forbid_overrides_is_not_drawn() {
    let machine = spec("event a = call a\ninitial s\ns -> t on a\nforbid s on a: \"no\"\n");
    let drawing = Drawing::new(&machine, None);
    assert!(
        drawing.edges.iter().all(|e| e.kind != EdgeKind::Allowed),
        "{drawing:#?}"
    );
}

fn trace_file(path: &str) -> PathBuf {
    root().join(path)
}

#[test]
fn highlight_follows_the_checker() {
    let machines = shipped();
    let (_, reconcile) = machines
        .iter()
        .find(|(name, _)| name == "reconcile_before_retry")
        .unwrap();
    let cases = [
        (
            "traces/reconcile_before_retry/fail/forbidden-transition.jsonl",
            "forbidden",
        ),
        (
            "traces/reconcile_before_retry/fail/unexpected-event.jsonl",
            "unexpected",
        ),
        (
            "traces/reconcile_before_retry/fail/unaccepted-end.jsonl",
            "unaccepted",
        ),
        (
            "traces/reconcile_before_retry/pass/lookup-found-then-note.jsonl",
            "accepted",
        ),
    ];
    for (trace, want) in cases {
        let walk = trace_walk(reconcile, &trace_file(trace)).unwrap();
        assert_eq!(walk.instances.len(), 1, "{trace}: {walk:#?}");
        let instance = &walk.instances[0];
        let kind = match instance.end {
            End::Accepted { .. } => "accepted",
            End::Unaccepted { .. } => "unaccepted",
            End::Forbidden { .. } => "forbidden",
            End::Unexpected { .. } => "unexpected",
        };
        assert_eq!(kind, want, "{trace}: {walk:#?}");
        // The walk is connected: it starts at the initial state, each step starts
        // where the last one ended.
        let mut at = reconcile.initial;
        for step in &instance.steps {
            assert_eq!(step.from, at, "{trace}");
            at = step.to;
        }
        for format in [Format::Dot, Format::Mermaid, Format::Svg, Format::Json] {
            let text = render(reconcile, format, Some(&walk));
            assert!(!text.is_empty());
            if format == Format::Svg {
                let texts = svg_texts(&text);
                assert!(texts.iter().any(|t| t.contains("(line ")), "{trace}");
            }
        }
    }
}

#[test]
fn highlight_on_the_command_line() {
    let output = run(&[
        "graph",
        "specs/reconcile_before_retry.tg",
        "--format",
        "json",
        "--highlight",
        "traces/reconcile_before_retry/fail/forbidden-transition.jsonl",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let end = &json["highlight"]["instances"][0]["end"];
    assert_eq!(end["kind"], "forbidden");
    assert_eq!(end["state"], "unknown");
    assert_eq!(end["event"], "create");

    let dot = stdout(&run(&[
        "graph",
        "specs/reconcile_before_retry.tg",
        "--highlight",
        "traces/reconcile_before_retry/fail/forbidden-transition.jsonl",
    ]));
    assert!(dot.contains("label=\"✗ create (line "), "{dot}");
    assert!(dot.contains("penwidth=3"), "{dot}");

    let missing = run(&[
        "graph",
        "specs/reconcile_before_retry.tg",
        "--highlight",
        "no/such/trace.jsonl",
    ]);
    assert_eq!(missing.status.code(), Some(2));
}

#[test]
fn output_file_and_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("seed.svg");
    let output = run(&[
        "graph",
        "specs/seed_protocol.tg",
        "--format",
        "svg",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "");
    let written = std::fs::read_to_string(&out).unwrap();
    svg_texts(&written);
    let again = stdout(&run(&[
        "graph",
        "specs/seed_protocol.tg",
        "--format",
        "svg",
    ]));
    assert_eq!(written, again, "file and stdout differ");

    let broken = run(&["graph", "tests/fixtures/codes/unknown-event/spec.tg"]);
    assert_eq!(broken.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&broken.stderr).contains("error[unknown-event]"));
}

/// A spec with `states` states and `transitions` transitions over 12 events, every
/// state reachable.
fn generated(states: usize, transitions: usize) -> String {
    let mut text = String::from("spec generated\n");
    for e in 0..12 {
        let _ = writeln!(text, "event e{e} = call tool_{e}");
    }
    text.push_str("initial s0\n");
    let mut used = std::collections::BTreeSet::new();
    let mut seed: u64 = 0x5eed;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((seed >> 33) as usize) % n
    };
    let mut count = 0;
    for to in 1..states {
        loop {
            let (from, event) = (next(to), next(12));
            if used.insert((from, event)) {
                let _ = writeln!(text, "s{from} -> s{to} on e{event}");
                break;
            }
        }
        count += 1;
    }
    while count < transitions {
        let (from, event, to) = (next(states), next(12), next(states));
        if used.insert((from, event)) {
            let _ = writeln!(text, "s{from} -> s{to} on e{event}");
            count += 1;
        }
    }
    text.push_str("forbid s3, s7 on e11: \"no e11 here\"\n");
    text
}

#[test]
fn thirty_states_and_ninety_transitions_lay_out() {
    let machine = spec(&generated(30, 90));
    assert_eq!(machine.state_count(), 30);
    assert_eq!(machine.edges().count(), 90);
    let svg = render(&machine, Format::Svg, None);
    let texts = svg_texts(&svg);
    for state in machine.state_ids() {
        assert!(texts.contains(&machine.state(state).name));
    }
    // Every node sits inside the image.
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let root = doc.root_element();
    let width: f64 = root.attribute("width").unwrap().parse().unwrap();
    let height: f64 = root.attribute("height").unwrap().parse().unwrap();
    for rect in doc.descendants().filter(|n| n.has_tag_name("rect")) {
        if let (Some(x), Some(y)) = (rect.attribute("x"), rect.attribute("y")) {
            let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
            assert!((0.0..=width).contains(&x) && (0.0..=height).contains(&y));
        }
    }
}

#[test]
fn the_layout_interface() {
    use tracegate::export::layout::{Input, Size, layout};
    let size = Size {
        width: 40.0,
        height: 20.0,
    };
    let none = Size {
        width: 0.0,
        height: 0.0,
    };
    let placed = layout(&Input {
        nodes: vec![size; 3],
        edges: vec![(0, 1, size), (1, 2, none), (2, 0, none), (1, 1, size)],
    });
    assert_eq!(placed.nodes.len(), 3);
    assert_eq!(placed.edges.len(), 4);
    // Layered top to bottom: 0 above 1 above 2.
    assert!(placed.nodes[0].1 < placed.nodes[1].1 && placed.nodes[1].1 < placed.nodes[2].1);
    assert!(placed.edges.iter().all(|e| e.points.len() >= 2));
    assert!(placed.edges[0].label.is_some() && placed.edges[1].label.is_none());
    assert!(placed.width > 0.0 && placed.height > 0.0);
    assert_eq!(layout(&Input::default()).nodes.len(), 0);
}
