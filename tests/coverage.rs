//! `coverage`: exact counts on a small corpus (tests/fixtures/explore/coverage), the
//! shortest path to each forbidden move it never made, `--min`, and the JSON contract.

use std::path::PathBuf;

use tracegate::check::CheckOptions;
use tracegate::explore::{self, Coverage};
use tracegate::files;
use tracegate::machine::Machine;

use crate::json_contract::{CoverageLine, parse_as};
use crate::util::{root, run, stdout};

const DIR: &str = "tests/fixtures/explore/coverage";

fn order() -> Machine {
    let (mut specs, errors) = files::load_specs(&[root().join(DIR).join("order.tg")]);
    assert!(errors.is_empty(), "{errors:#?}");
    specs.remove(0)
}

fn corpus() -> Vec<PathBuf> {
    let (paths, errors) = files::collect(&[root().join(DIR).join("traces")], files::is_trace_file);
    assert!(errors.is_empty());
    assert_eq!(paths.len(), 3);
    paths
}

fn measure(machine: &Machine) -> Coverage {
    explore::coverage(
        std::slice::from_ref(machine),
        &corpus(),
        &CheckOptions::default(),
        &Default::default(),
    )
}

#[test]
fn counts_every_edge_state_and_forbidden_move_exactly() {
    let machine = order();
    let coverage = measure(&machine);
    assert_eq!((coverage.records, coverage.traces), (13, 3));
    assert!(coverage.errors.is_empty());
    let spec = &coverage.specs[0];
    let name = |s| machine.state(s).name.clone();
    let event = |e: usize| machine.events[e].name.clone();

    let transitions: Vec<(String, String, String, u64)> = spec
        .transitions
        .iter()
        .map(|t| (name(t.from), event(t.event), name(t.to), t.count))
        .collect();
    let want = [
        ("idle", "place", "pending", 4),
        ("pending", "placed", "done", 3),
        ("pending", "failed", "idle", 1),
        ("done", "cancel", "idle", 1),
        ("done", "lookup", "done", 0),
    ];
    let want: Vec<(String, String, String, u64)> = want
        .iter()
        .map(|(a, b, c, n)| (a.to_string(), b.to_string(), c.to_string(), *n))
        .collect();
    assert_eq!(transitions, want);
    assert_eq!(spec.transitions_ratio().covered, 4);
    assert_eq!(spec.transitions_ratio().total, 5);
    assert_eq!(spec.transitions_ratio().percent(), 80.0);

    // Three instances start in `idle`; `failed` and `cancel` lead back to it.
    let states: Vec<(String, u64)> = spec
        .states
        .iter()
        .map(|s| (name(s.state), s.visits))
        .collect();
    assert_eq!(
        states,
        [
            ("idle".to_string(), 5),
            ("pending".to_string(), 4),
            ("done".to_string(), 3)
        ]
    );

    let forbidden: Vec<(String, String, u64, Option<String>)> = spec
        .forbidden
        .iter()
        .map(|f| {
            (
                name(f.state),
                event(f.event),
                f.count,
                f.shortest.as_ref().map(|c| c.display_path(&machine)),
            )
        })
        .collect();
    assert_eq!(
        forbidden,
        [
            ("idle".to_string(), "cancel".to_string(), 1, None),
            (
                "pending".to_string(),
                "cancel".to_string(),
                0,
                Some("place -> cancel ✗".to_string())
            ),
        ]
    );
    assert!(coverage.below(80.0).is_empty());
    assert_eq!(coverage.below(80.1).len(), 1);
}

#[test]
fn one_input_is_one_trace() {
    // The corpus's records as one input are one trace with one instance: after `a`,
    // the instance is in `done`, where `b`'s events are ignored and `c`'s cancel is
    // allowed, so nothing is forbidden any more.
    let machine = order();
    let mut all = String::new();
    for path in corpus() {
        all.push_str(&std::fs::read_to_string(path).unwrap());
    }
    let one = explore::coverage_reader(
        std::slice::from_ref(&machine),
        std::sync::Arc::from(std::path::Path::new("all.jsonl")),
        all.as_bytes(),
        &CheckOptions::default(),
    );
    assert_eq!((one.records, one.traces), (13, 1));
    let counts: Vec<u64> = one.specs[0].transitions.iter().map(|t| t.count).collect();
    assert_eq!(counts, [2, 2, 0, 2, 0]);
    assert_eq!(one.specs[0].forbidden[0].count, 0);
    let visits: Vec<u64> = one.specs[0].states.iter().map(|s| s.visits).collect();
    assert_eq!(visits, [3, 2, 2]);
}

#[test]
fn coverage_prints_a_table_and_fails_below_min() {
    let spec = format!("{DIR}/order.tg");
    let traces = format!("{DIR}/traces");
    let output = run(&["coverage", &spec, "--traces", &traces]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(
        text.contains(
            "order: transitions 4/5 (80.0%), states 3/3 (100.0%), forbidden moves 1/2 (50.0%)"
        ),
        "{text}"
    );
    assert!(
        text.contains("      0  done     lookup  done  (never)"),
        "{text}"
    );
    assert!(
        text.contains("      0  pending  cancel  (never; shortest: place -> cancel ✗)"),
        "{text}"
    );
    assert!(text.contains("13 records in 3 traces"), "{text}");

    let pass = run(&["coverage", &spec, "--traces", &traces, "--min", "80"]);
    assert_eq!(pass.status.code(), Some(0), "{}", stdout(&pass));
    let fail = run(&["coverage", &spec, "--traces", &traces, "--min", "90"]);
    assert_eq!(fail.status.code(), Some(1));
    assert!(
        stdout(&fail).contains("below --min 90%: `order` has 4/5 (80.0%)"),
        "{}",
        stdout(&fail)
    );
    assert_eq!(
        run(&["coverage", &spec, "--traces", &traces, "--min", "101"])
            .status
            .code(),
        Some(2)
    );
}

#[test]
fn coverage_json_is_a_contract() {
    let spec = format!("{DIR}/order.tg");
    let traces = format!("{DIR}/traces");
    let output = run(&[
        "coverage", &spec, "--traces", &traces, "--output", "json", "--min", "90",
    ]);
    assert_eq!(output.status.code(), Some(1));
    // The contract itself is `json_contract::CoverageLine`.
    let lines: Vec<CoverageLine> = parse_as(&stdout(&output));
    assert_eq!(lines.len(), 2);
    let CoverageLine::Coverage {
        transitions,
        forbidden,
        ..
    } = &lines[0]
    else {
        panic!("{:?}", lines[0])
    };
    assert_eq!((transitions.ratio.covered, transitions.ratio.total), (4, 5));
    assert_eq!(transitions.ratio.percent, 80.0);
    assert_eq!(transitions.items[0].count, 4);
    assert_eq!(
        transitions.items[0].rule.text,
        "idle    -> pending on place"
    );
    assert_eq!(
        forbidden.items[1].shortest.as_deref(),
        Some(&["place".to_string(), "cancel".to_string()][..])
    );
    let CoverageLine::Summary { below, records, .. } = &lines[1] else {
        panic!("{:?}", lines[1])
    };
    assert_eq!(below, &["order"]);
    assert_eq!(*records, 13);
}

#[test]
fn the_shipped_corpus_covers_every_forbidden_move_it_has_a_fail_trace_for() {
    let output = run(&[
        "coverage", "specs", "--traces", "traces", "--output", "json",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    for line in stdout(&output).lines() {
        let line: CoverageLine = serde_json::from_str(line).unwrap();
        if let CoverageLine::Coverage {
            spec, forbidden, ..
        } = line
        {
            assert!(
                forbidden.ratio.covered >= 1,
                "{spec}: no forbidden move exercised"
            );
        }
    }
}
