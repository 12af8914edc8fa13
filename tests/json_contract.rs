//! The JSON output is a contract (README, "JSON output"): every line of `check`,
//! `explore` and `coverage`, and the document of `graph --format json`, deserializes
//! into exactly one of these shapes, with no unknown fields.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use serde::Deserialize;
use tracegate::machine::{Machine, Move};

use crate::util::{root, run, stdout};

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum Line {
    Violation {
        code: String,
        spec: String,
        rule: Option<Rule>,
        file: String,
        line: u64,
        pointer: String,
        trace: Option<String>,
        key: Option<String>,
        state: String,
        event: Option<String>,
        message: String,
        allowed: Vec<String>,
        path: Vec<Step>,
        path_elided: u64,
    },
    Error(ErrorLine),
    Summary {
        specs: usize,
        traces: u64,
        records: u64,
        synthesized: u64,
        violations: u64,
        errors: u64,
    },
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    file: String,
    line: usize,
    column: usize,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Step {
    state: String,
    event: String,
    line: u64,
}

#[track_caller]
fn parse_lines(text: &str) -> Vec<Line> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

#[test]
fn violations_and_summary_follow_the_contract() {
    let output = run(&["check", "--output", "json"]);
    let lines = parse_lines(&stdout(&output));
    let (last, rest) = lines.split_last().expect("output is not empty");
    let Line::Summary {
        violations, errors, ..
    } = last
    else {
        panic!("the last line is the summary: {last:?}")
    };
    assert_eq!(*errors, 0);
    assert_eq!(*violations as usize, rest.len());
    for line in rest {
        let Line::Violation {
            code,
            rule,
            line,
            path,
            file,
            ..
        } = line
        else {
            panic!("expected only violations: {line:?}")
        };
        assert!(code.contains('-'), "{code}");
        assert!(
            rule.as_ref().is_some_and(|r| r.line > 0),
            "{code} has a rule"
        );
        assert!(*line > 0);
        assert!(file.contains("/fail/"), "{file}");
        assert!(
            path.iter()
                .all(|s| s.line > 0 && s.line < *line || code == "unaccepted-end")
        );
    }
}

#[test]
fn errors_follow_the_contract() {
    let output = run(&[
        "check",
        "tests/fixtures/codes/syntax-error/spec.tg",
        "--traces",
        "tests/fixtures/codes/malformed-record/trace.jsonl",
        "--output",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let lines = parse_lines(&stdout(&output));
    assert!(
        lines
            .iter()
            .any(|l| matches!(l, Line::Error(e) if e.code == "syntax-error" && e.column.is_some()))
    );
    assert!(matches!(lines.last(), Some(Line::Summary { errors, .. }) if *errors > 0));
}

#[test]
fn output_is_deterministic_whatever_the_thread_count() {
    let one = run(&["check", "--output", "json", "-j", "1"]);
    let many = run(&["check", "--output", "json", "-j", "4"]);
    assert_eq!(one.stdout, many.stdout);
    let human_one = run(&["check", "-j", "1"]);
    let human_many = run(&["check", "-j", "3"]);
    assert_eq!(human_one.stdout, human_many.stdout);
}

// --- explore, coverage and graph --------------------------------------------------
//
// The machine outputs of the other commands (README, "JSON output"): every line of
// `explore --output json` and `coverage --output json`, and the document of `graph
// --format json`, read with `deny_unknown_fields`, for every shipped spec.

/// Every shipped spec, compiled by the library, by name.
fn shipped_specs() -> BTreeMap<String, (PathBuf, Machine)> {
    let (paths, errors) =
        tracegate::files::collect(&[root().join("specs")], tracegate::files::is_spec_file);
    assert!(errors.is_empty(), "{errors:#?}");
    assert!(!paths.is_empty());
    paths
        .into_iter()
        .map(|path| {
            let (machines, errors) = tracegate::files::load_specs(std::slice::from_ref(&path));
            assert!(errors.is_empty(), "{errors:#?}");
            let machine = machines.into_iter().next().expect("one spec per file");
            let relative = path.strip_prefix(root()).unwrap().to_path_buf();
            (machine.name.clone(), (relative, machine))
        })
        .collect()
}

/// `(state, event, to)` of every allowed move of a machine.
fn allowed_moves(machine: &Machine) -> BTreeSet<(String, String, String)> {
    let mut moves = BTreeSet::new();
    for state in machine.state_ids() {
        for (event, e) in machine.events.iter().enumerate() {
            if let Move::Go { to, .. } = machine.step(state, event) {
                moves.insert((
                    machine.state(state).name.clone(),
                    e.name.clone(),
                    machine.state(to).name.clone(),
                ));
            }
        }
    }
    moves
}

/// `(state, event)` of every forbidden move of a machine, with its rule's index.
fn forbidden_moves(machine: &Machine) -> BTreeMap<(String, String), usize> {
    let mut moves = BTreeMap::new();
    for state in machine.state_ids() {
        for (event, e) in machine.events.iter().enumerate() {
            if let Move::Forbidden(rule) = machine.step(state, event) {
                moves.insert((machine.state(state).name.clone(), e.name.clone()), rule);
            }
        }
    }
    moves
}

fn forbid_line(machine: &Machine, rule: usize) -> usize {
    machine.source.line_col(machine.forbids[rule].span.start).0
}

/// An input, spec or usage error, in the shape every command writes it (`lint`'s
/// warnings too).
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ErrorLine {
    pub(crate) code: String,
    pub(crate) file: Option<String>,
    pub(crate) line: Option<u64>,
    pub(crate) column: Option<usize>,
    pub(crate) pointer: Option<String>,
    pub(crate) spec: Option<String>,
    pub(crate) message: String,
    pub(crate) hint: Option<String>,
}

#[track_caller]
pub(crate) fn parse_as<T: serde::de::DeserializeOwned>(text: &str) -> Vec<T> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

/// A spec rule, with the first line of its text.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleText {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) column: usize,
    pub(crate) text: String,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum ExploreLine {
    Counterexample {
        spec: String,
        code: String,
        path: Vec<String>,
        states: Vec<String>,
        state: String,
        event: Option<String>,
        message: String,
        rule: RuleText,
        display: String,
        trace: Option<String>,
        at: Option<String>,
        error: Option<String>,
    },
    Unreached {
        spec: String,
        code: String,
        state: String,
        event: Option<String>,
        rule: RuleText,
        reason: String,
    },
    Allowed {
        spec: String,
        path: Vec<String>,
        states: Vec<String>,
        end: String,
        trace: Option<String>,
        error: Option<String>,
    },
    Truncated {
        spec: String,
        paths: usize,
    },
}

#[test]
fn explore_json_names_every_forbidden_move_with_its_path() {
    let specs = shipped_specs();
    let output = run(&["explore", "specs", "--output", "json"]);
    assert_eq!(output.status.code(), Some(0));
    let lines: Vec<ExploreLine> = parse_as(&stdout(&output));
    let mut found: BTreeMap<(String, String, String), usize> = BTreeMap::new();
    for line in &lines {
        let ExploreLine::Counterexample {
            spec,
            code,
            path,
            states,
            state,
            event,
            rule,
            display,
            trace,
            at,
            error,
            ..
        } = line
        else {
            panic!("at the default depth every violation is reached: {line:?}")
        };
        let (file, machine) = &specs[spec];
        assert_eq!(rule.file, file.to_str().unwrap());
        assert!(rule.line > 0 && rule.column > 0 && !rule.text.is_empty());
        // Nothing emitted without --emit.
        assert!(
            trace.is_none() && at.is_none() && error.is_none(),
            "{line:?}"
        );
        assert!(display.contains('✗'), "{display}");
        // `states` starts at the initial state and ends in `state`; `path` ends with
        // the offending event, if there is one.
        assert_eq!(states[0], machine.state(machine.initial).name);
        assert_eq!(states.last(), Some(state));
        match event {
            Some(event) => {
                assert_eq!(path.last(), Some(event), "{line:?}");
                assert_eq!(states.len(), path.len(), "{line:?}");
            }
            None => {
                assert_eq!(code, "unaccepted-end");
                assert_eq!(states.len(), path.len() + 1, "{line:?}");
            }
        }
        if code == "forbidden-transition" {
            let key = (spec.clone(), state.clone(), event.clone().unwrap());
            assert!(found.insert(key, rule.line).is_none(), "{line:?} twice");
        }
    }
    // Every forbidden move of every spec, each once, at its own `forbid`.
    let mut expected = BTreeMap::new();
    for (name, (_, machine)) in &specs {
        for ((state, event), rule) in forbidden_moves(machine) {
            expected.insert((name.clone(), state, event), forbid_line(machine, rule));
        }
    }
    assert_eq!(found, expected);

    // reconcile_before_retry, in full: both blind re-creates, with the message.
    let reconcile: Vec<_> = lines
        .iter()
        .filter_map(|line| match line {
            ExploreLine::Counterexample {
                spec,
                code,
                path,
                state,
                message,
                ..
            } if spec == "reconcile_before_retry" && code == "forbidden-transition" => {
                assert!(message.starts_with("blind re-create"), "{message}");
                Some((state.as_str(), path.join(" ")))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        reconcile,
        [
            ("unknown", "create outcome_unknown create".to_string()),
            (
                "checking",
                "create outcome_unknown lookup create".to_string()
            )
        ]
    );
}

#[test]
fn explore_json_unreached_allowed_and_emitted() {
    // Too shallow to reach every violation: each unreached one names its rule.
    let output = run(&[
        "explore",
        "specs/reconcile_before_retry.tg",
        "--max-depth",
        "2",
        "--output",
        "json",
    ]);
    let lines: Vec<ExploreLine> = parse_as(&stdout(&output));
    let unreached: Vec<_> = lines
        .iter()
        .filter_map(|line| match line {
            ExploreLine::Unreached {
                code,
                state,
                event,
                rule,
                reason,
                ..
            } => {
                assert_eq!(reason, "beyond-max-depth");
                assert_eq!(rule.file, "specs/reconcile_before_retry.tg");
                Some((code.as_str(), state.as_str(), event.as_deref(), rule.line))
            }
            _ => None,
        })
        .collect();
    assert!(unreached.contains(&("forbidden-transition", "unknown", Some("create"), 84)));
    assert!(unreached.contains(&("forbidden-transition", "checking", Some("create"), 84)));
    assert!(unreached.contains(&("unaccepted-end", "checking", None, 54)));

    // Allowed paths: `states` has one more entry than `path`, and ends in `end`; a
    // `truncated` line counts the spec's paths.
    let output = run(&[
        "explore",
        "specs",
        "--allowed",
        "--limit",
        "3",
        "--output",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let lines: Vec<ExploreLine> = parse_as(&stdout(&output));
    let specs = shipped_specs();
    let mut per_spec: BTreeMap<&str, usize> = BTreeMap::new();
    for line in &lines {
        match line {
            ExploreLine::Allowed {
                spec,
                path,
                states,
                end,
                trace,
                error,
            } => {
                let machine = &specs[spec].1;
                assert!(!path.is_empty());
                assert_eq!(states.len(), path.len() + 1);
                assert_eq!(states[0], machine.state(machine.initial).name);
                assert_eq!(states.last(), Some(end));
                assert!(trace.is_none() && error.is_none());
                *per_spec.entry(spec).or_default() += 1;
            }
            ExploreLine::Truncated { spec, paths } => {
                assert_eq!(per_spec.get(spec.as_str()), Some(paths));
                assert_eq!(*paths, 3);
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        per_spec.keys().copied().collect::<Vec<_>>(),
        specs.keys().map(String::as_str).collect::<Vec<_>>()
    );

    // With --emit: each counterexample has a trace and where it is rejected, or says
    // why it has none.
    let dir = tempfile::tempdir().unwrap();
    let output = run(&[
        "explore",
        "specs",
        "--output",
        "json",
        "--emit",
        dir.path().to_str().unwrap(),
    ]);
    for line in parse_as::<ExploreLine>(&stdout(&output)) {
        let ExploreLine::Counterexample {
            trace, at, error, ..
        } = &line
        else {
            panic!("{line:?}")
        };
        match (trace, at, error) {
            (Some(trace), Some(at), None) => {
                assert!(PathBuf::from(trace).is_file(), "{trace}");
                assert!(at.starts_with("line ") || at.starts_with('/'), "{at}");
            }
            (None, None, Some(why)) => assert!(!why.is_empty()),
            _ => panic!("{line:?}"),
        }
    }
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub(crate) enum CoverageLine {
    Coverage {
        spec: String,
        transitions: Section<CoveredTransition>,
        states: Section<CoveredState>,
        forbidden: Section<CoveredForbidden>,
    },
    /// The same shape as `check`'s errors.
    Error(ErrorLine),
    Summary {
        specs: usize,
        records: u64,
        traces: u64,
        errors: usize,
        min: Option<f64>,
        below: Vec<String>,
    },
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Section<T> {
    pub(crate) ratio: Ratio,
    pub(crate) items: Vec<T>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Ratio {
    pub(crate) covered: usize,
    pub(crate) total: usize,
    pub(crate) percent: f64,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CoveredTransition {
    pub(crate) from: String,
    pub(crate) event: String,
    pub(crate) to: String,
    pub(crate) count: u64,
    pub(crate) rule: RuleText,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CoveredState {
    pub(crate) state: String,
    pub(crate) visits: u64,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CoveredForbidden {
    pub(crate) state: String,
    pub(crate) event: String,
    pub(crate) count: u64,
    pub(crate) message: String,
    pub(crate) rule: RuleText,
    pub(crate) shortest: Option<Vec<String>>,
}

/// `covered` counts the exercised items, `total` all of them, `percent` is their
/// ratio in [0, 100] to one decimal.
#[track_caller]
fn assert_ratio(what: &str, ratio: &Ratio, counts: impl Iterator<Item = u64>) {
    let counts: Vec<u64> = counts.collect();
    assert_eq!(ratio.total, counts.len(), "{what}");
    assert_eq!(
        ratio.covered,
        counts.iter().filter(|&&c| c > 0).count(),
        "{what}"
    );
    assert!((0.0..=100.0).contains(&ratio.percent), "{what}");
    let expected = if ratio.total == 0 {
        100.0
    } else {
        (ratio.covered as f64 * 1000.0 / ratio.total as f64).round() / 10.0
    };
    assert_eq!(ratio.percent, expected, "{what}");
}

#[test]
fn coverage_json_counts_match_the_specs_and_the_corpus() {
    let specs = shipped_specs();
    let output = run(&["coverage", "--output", "json", "--min", "100"]);
    let lines: Vec<CoverageLine> = parse_as(&stdout(&output));
    let (last, rest) = lines.split_last().unwrap();
    let mut seen = Vec::new();
    let mut below_100 = Vec::new();
    for line in rest {
        let CoverageLine::Coverage {
            spec,
            transitions,
            states,
            forbidden,
        } = line
        else {
            panic!("no errors in the shipped corpus: {line:?}")
        };
        let (file, machine) = &specs[spec];
        seen.push(spec.clone());
        assert_ratio(
            &format!("{spec} transitions"),
            &transitions.ratio,
            transitions.items.iter().map(|t| t.count),
        );
        assert_ratio(
            &format!("{spec} states"),
            &states.ratio,
            states.items.iter().map(|s| s.visits),
        );
        assert_ratio(
            &format!("{spec} forbidden"),
            &forbidden.ratio,
            forbidden.items.iter().map(|f| f.count),
        );
        if transitions.ratio.covered < transitions.ratio.total {
            below_100.push(spec.clone());
        }
        // Every state, allowed move and forbidden move of the spec, in order, once.
        let names: Vec<&str> = states.items.iter().map(|s| s.state.as_str()).collect();
        let declared: Vec<&str> = machine
            .state_ids()
            .map(|s| machine.state(s).name.as_str())
            .collect();
        assert_eq!(names, declared, "{spec}");
        let moves: BTreeSet<_> = transitions
            .items
            .iter()
            .map(|t| (t.from.clone(), t.event.clone(), t.to.clone()))
            .collect();
        assert_eq!(moves.len(), transitions.items.len());
        assert_eq!(moves, allowed_moves(machine), "{spec}");
        for t in &transitions.items {
            assert_eq!(t.rule.file, file.to_str().unwrap());
        }
        let mut expected = forbidden_moves(machine);
        for f in &forbidden.items {
            let rule = expected
                .remove(&(f.state.clone(), f.event.clone()))
                .unwrap_or_else(|| panic!("{spec}: {f:?} is not a forbidden move"));
            assert_eq!(f.rule.line, forbid_line(machine, rule));
            assert_eq!(f.message, machine.forbids[rule].message);
            // A move never made has the shortest path that would make it.
            match (&f.shortest, f.count) {
                (None, n) => assert!(n > 0, "{spec}: {f:?}"),
                (Some(path), 0) => assert_eq!(path.last(), Some(&f.event)),
                (Some(_), _) => panic!("{spec}: {f:?}"),
            }
        }
        assert!(expected.is_empty(), "{spec}: missing {expected:?}");
    }
    // Every shipped spec once (in the order of the project file's scopes).
    seen.sort();
    assert_eq!(seen, specs.keys().cloned().collect::<Vec<_>>());

    // The summary agrees with `check` on the same corpus.
    let CoverageLine::Summary {
        specs: count,
        records,
        traces,
        errors,
        min,
        below,
    } = last
    else {
        panic!("the last line is the summary: {last:?}")
    };
    assert_eq!((*count, *errors, *min), (specs.len(), 0, Some(100.0)));
    assert_eq!(below, &below_100);
    let status = if below.is_empty() { 0 } else { 1 };
    assert_eq!(output.status.code(), Some(status));
    let check = parse_lines(&stdout(&run(&["check", "--output", "json"])));
    let Some(Line::Summary {
        records: check_records,
        traces: check_traces,
        ..
    }) = check.last()
    else {
        panic!("{check:?}")
    };
    assert_eq!((records, traces), (check_records, check_traces));
}

#[test]
fn coverage_json_errors_have_checks_shape_and_location() {
    let dir = tempfile::tempdir().unwrap();
    // An OpenAI transcript whose second message is not an object.
    let bad = dir.path().join("bad-openai.json");
    std::fs::write(
        &bad,
        r#"{"messages":[{"role":"user","content":"hi"},5]}"#.to_string() + "\n",
    )
    .unwrap();
    let output = run(&[
        "coverage",
        "tests/fixtures/codes/malformed-record/spec.tg",
        "--traces",
        "tests/fixtures/codes/malformed-record/trace.jsonl",
        bad.to_str().unwrap(),
        "--output",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let lines: Vec<CoverageLine> = parse_as(&stdout(&output));
    let errors: Vec<_> = lines
        .iter()
        .filter_map(|line| match line {
            CoverageLine::Error(e) => Some((
                e.code.as_str(),
                e.file.clone().unwrap(),
                e.line,
                e.pointer.clone(),
            )),
            _ => None,
        })
        .collect();
    assert!(errors.len() > 1);
    assert!(
        errors
            .iter()
            .all(|(code, _, line, _)| *code == "malformed-record" && line.is_some())
    );
    assert!(
        errors.contains(&(
            "malformed-record",
            bad.display().to_string(),
            Some(1),
            Some("/messages/1".to_string())
        )),
        "{errors:?}"
    );
    // The same errors as `check` reports, word for word.
    let check = run(&[
        "check",
        "tests/fixtures/codes/malformed-record/spec.tg",
        "--traces",
        "tests/fixtures/codes/malformed-record/trace.jsonl",
        bad.to_str().unwrap(),
        "--output",
        "json",
    ]);
    let error_lines = |text: String| -> Vec<String> {
        text.lines()
            .filter(|l| l.starts_with(r#"{"type":"error""#))
            .map(str::to_owned)
            .collect()
    };
    let coverage_errors = error_lines(stdout(&output));
    assert_eq!(coverage_errors, error_lines(stdout(&check)));
    assert!(
        matches!(lines.last(), Some(CoverageLine::Summary { errors, .. }) if *errors == coverage_errors.len())
    );
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphJson {
    spec: String,
    about: Option<String>,
    file: String,
    initial: String,
    otherwise: String,
    per: Vec<String>,
    states: Vec<GraphState>,
    events: Vec<GraphEvent>,
    transitions: Vec<GraphTransition>,
    forbids: Vec<GraphForbid>,
    highlight: Option<GraphHighlight>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphState {
    name: String,
    initial: bool,
    accepting: bool,
    line: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphEvent {
    name: String,
    line: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphTransition {
    from: String,
    to: String,
    event: String,
    line: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphForbid {
    message: String,
    line: usize,
    moves: Vec<GraphMove>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphMove {
    state: String,
    event: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphHighlight {
    trace: String,
    instances: Vec<GraphInstance>,
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphInstance {
    key: Option<String>,
    steps: Vec<GraphStep>,
    elided: u64,
    end: GraphEnd,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphStep {
    from: String,
    event: String,
    to: String,
    line: u64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct GraphEnd {
    kind: String,
    state: String,
    event: Option<String>,
    line: Option<u64>,
    rule_line: Option<usize>,
}

#[track_caller]
fn graph_json(args: &[&str]) -> GraphJson {
    let output = run(args);
    assert_eq!(output.status.code(), Some(0), "{args:?}");
    let text = stdout(&output);
    serde_json::from_str(&text).unwrap_or_else(|err| panic!("{err}: {text}"))
}

#[test]
fn graph_json_has_every_state_event_and_edge_of_the_spec() {
    for (name, (file, machine)) in shipped_specs() {
        let file = file.to_str().unwrap();
        let graph = graph_json(&["graph", file, "--format", "json"]);
        assert_eq!(graph.spec, name);
        assert_eq!(graph.file, file);
        assert_eq!(graph.about, machine.about);
        assert!(graph.highlight.is_none());
        assert!(["reject", "ignore"].contains(&graph.otherwise.as_str()));
        assert_eq!(
            graph.per,
            machine
                .per
                .iter()
                .map(|k| k.text.clone())
                .collect::<Vec<_>>()
        );

        // Every state, in declaration order, with its flags and first mention.
        let states: Vec<(&str, bool, bool)> = graph
            .states
            .iter()
            .map(|s| (s.name.as_str(), s.initial, s.accepting))
            .collect();
        let expected: Vec<(&str, bool, bool)> = machine
            .state_ids()
            .map(|id| {
                let state = machine.state(id);
                (state.name.as_str(), id == machine.initial, state.accepting)
            })
            .collect();
        assert_eq!(states, expected, "{name}");
        assert_eq!(graph.states.iter().filter(|s| s.initial).count(), 1);
        assert!(
            graph
                .states
                .iter()
                .any(|s| s.name == graph.initial && s.initial)
        );
        assert!(graph.states.iter().all(|s| s.line > 0));

        let events: Vec<&str> = graph.events.iter().map(|e| e.name.as_str()).collect();
        let expected: Vec<&str> = machine.events.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(events, expected, "{name}");
        assert!(graph.events.iter().all(|e| e.line > 0));

        // Every allowed move once, in declaration order (by rule line).
        let edges: BTreeSet<_> = graph
            .transitions
            .iter()
            .map(|t| (t.from.clone(), t.event.clone(), t.to.clone()))
            .collect();
        assert_eq!(edges.len(), graph.transitions.len(), "{name}");
        assert_eq!(edges, allowed_moves(&machine), "{name}");
        assert!(
            graph.transitions.windows(2).all(|w| w[0].line <= w[1].line),
            "{name}: {:?}",
            graph.transitions
        );

        // Every forbidden move under the rule that forbids it.
        assert_eq!(graph.forbids.len(), machine.forbids.len());
        let mut moves = BTreeMap::new();
        for (rule, forbid) in graph.forbids.iter().enumerate() {
            assert_eq!(forbid.message, machine.forbids[rule].message);
            assert_eq!(forbid.line, forbid_line(&machine, rule));
            for m in &forbid.moves {
                moves.insert((m.state.clone(), m.event.clone()), rule);
            }
        }
        assert_eq!(moves, forbidden_moves(&machine), "{name}");
    }

    // A `path` statement's moves come in the path's order.
    let seed = graph_json(&["graph", "specs/seed_protocol.tg", "--format", "json"]);
    let chain: Vec<&str> = seed.transitions.iter().map(|t| t.event.as_str()).collect();
    assert_eq!(
        chain,
        [
            "create",
            "outcome_unknown",
            "lookup_by_request_id",
            "found",
            "attach_note"
        ]
    );
    assert!(seed.transitions.windows(2).all(|w| w[0].to == w[1].from));
}

#[test]
fn graph_json_highlights_every_shipped_trace() {
    for (name, (file, machine)) in shipped_specs() {
        let dir = root().join("traces").join(&name);
        let (traces, errors) = tracegate::files::collect(&[dir], tracegate::files::is_trace_file);
        assert!(errors.is_empty() && !traces.is_empty(), "{name}");
        for trace in traces {
            let trace = trace
                .strip_prefix(root())
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let graph = graph_json(&[
                "graph",
                file.to_str().unwrap(),
                "--format",
                "json",
                "--highlight",
                &trace,
            ]);
            let highlight = graph.highlight.expect("asked for");
            assert_eq!(highlight.trace, trace);
            assert!(!highlight.instances.is_empty(), "{trace}");
            for instance in &highlight.instances {
                // Every move is shown: the steps chain from the initial state, each
                // at a later line than the one before.
                assert_eq!(instance.elided, 0, "{trace}");
                if let Some(first) = instance.steps.first() {
                    assert_eq!(first.from, graph.initial, "{trace}");
                }
                for w in instance.steps.windows(2) {
                    assert_eq!(w[0].to, w[1].from, "{trace}");
                    assert!(w[0].line <= w[1].line, "{trace}");
                }
                for step in &instance.steps {
                    assert!(
                        graph.transitions.iter().any(|t| t.from == step.from
                            && t.event == step.event
                            && t.to == step.to)
                    );
                }
                let end = &instance.end;
                let last = instance
                    .steps
                    .last()
                    .map_or(graph.initial.as_str(), |s| s.to.as_str());
                assert_eq!(end.state, last, "{trace}");
                match end.kind.as_str() {
                    "accepted" => {
                        assert!(end.event.is_none() && end.line.is_none());
                        assert!(end.rule_line.is_none());
                    }
                    "unaccepted" => assert!(end.event.is_none() && end.line.is_some()),
                    "forbidden" => {
                        let rule = forbidden_moves(&machine)
                            [&(end.state.clone(), end.event.clone().unwrap())];
                        assert_eq!(end.rule_line, Some(forbid_line(&machine, rule)));
                    }
                    "unexpected" => {
                        assert!(end.event.is_some() && end.line.is_some());
                        assert!(end.rule_line.is_none());
                    }
                    other => panic!("{trace}: end kind {other}"),
                }
            }
            // A pass trace ends well everywhere; a fail trace is rejected in at least
            // one instance, as its name says.
            let kinds: Vec<&str> = highlight
                .instances
                .iter()
                .map(|i| i.end.kind.as_str())
                .collect();
            if trace.contains("/pass/") {
                assert!(kinds.iter().all(|k| *k == "accepted"), "{trace}: {kinds:?}");
            } else {
                let expected = match trace.rsplit('/').next().unwrap() {
                    n if n.starts_with("forbidden-transition") => "forbidden",
                    n if n.starts_with("unexpected-event") => "unexpected",
                    n if n.starts_with("unaccepted-end") => "unaccepted",
                    n => panic!("{trace}: fail trace named {n}"),
                };
                assert!(kinds.contains(&expected), "{trace}: {kinds:?}");
            }
        }
    }
}

#[test]
fn error_lines_reject_unknown_fields() {
    // The shared `ErrorLine` keeps `deny_unknown_fields` inside the tagged enums.
    let good = r#"{"type":"error","code":"x","file":null,"line":null,"column":null,"pointer":null,"spec":null,"message":"m","hint":null}"#;
    let bad = good.replace(r#""hint":null"#, r#""hint":null,"extra":1"#);
    assert!(serde_json::from_str::<Line>(good).is_ok());
    assert!(serde_json::from_str::<Line>(&bad).is_err());
    assert!(serde_json::from_str::<CoverageLine>(&bad).is_err());
}
