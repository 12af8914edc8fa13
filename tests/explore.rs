//! `explore`: the counterexamples and allowed paths of the shipped specs and of specs
//! written for the tests (cycles, `per` keys, hot states, `otherwise ignore`), every
//! synthetic trace judged by the real checker, and the command.

use std::fmt::Write as _;
use std::path::PathBuf;

use proptest::prelude::*;
use tracegate::explore::{self, Format, SyntheticTrace};
use tracegate::files;
use tracegate::machine::{Machine, SpecSource};

use crate::util::{check_text, codes_and_lines, root, run, spec, stdout};

fn shipped() -> Vec<Machine> {
    let (paths, errors) = files::collect(&[root().join("specs")], files::is_spec_file);
    assert!(errors.is_empty(), "{errors:#?}");
    let (specs, errors) = files::load_specs(&paths);
    assert!(errors.is_empty(), "{errors:#?}");
    specs
}

fn shipped_spec(name: &str) -> Machine {
    shipped()
        .into_iter()
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no shipped spec `{name}`"))
}

/// Checks `trace` (as native JSONL) with the real checker, independently of the
/// verification `explore` did itself, and compares the verdict with the prediction.
#[track_caller]
fn assert_judged(machine: &Machine, trace: &SyntheticTrace) {
    let text = trace
        .write(Format::Native)
        .expect("native expresses every record");
    let outcome = check_text(std::slice::from_ref(machine), &text);
    match &trace.expected {
        None => assert!(
            outcome.diagnostics.is_empty(),
            "a trace of an allowed path must conform:\n{text}{:#?}",
            outcome.diagnostics
        ),
        Some(want) => {
            assert_eq!(
                codes_and_lines(&outcome),
                [(want.code.as_str().to_string(), want.record as u64 + 1)],
                "\n{text}"
            );
            let found = &outcome.diagnostics[0];
            assert_eq!(
                found.spec.as_ref().map(|s| s.span),
                Some(want.rule),
                "\n{text}"
            );
            let detail = found.violation.as_ref().expect("a violation has detail");
            assert_eq!(detail.state, want.state, "\n{text}");
            assert_eq!(detail.event, want.event, "\n{text}");
        }
    }
}

/// Writes `trace` in `format`, reads it back with that format's reader, and checks the
/// records it gives: the verdict must be the predicted one.
#[track_caller]
fn assert_read_back(machine: &Machine, trace: &SyntheticTrace, format: Format) {
    use tracegate::trace::adapters::{self, Entry, InputOptions};
    let reader = match format {
        Format::Native => return,
        Format::Openai => adapters::Format::OpenAi,
        Format::Anthropic => adapters::Format::Anthropic,
        Format::Mcp => adapters::Format::Mcp,
        Format::Otel => adapters::Format::Otel,
    };
    let mut text = trace
        .write(format)
        .expect("an emitted trace can be written");
    if format == Format::Mcp {
        text = format!("[{}]", text.trim_end().replace('\n', ","));
    }
    let reading = adapters::read_text(
        &text,
        &InputOptions {
            format: Some(reader),
            select: None,
        },
    );
    let mut monitor = tracegate::check::Monitor::new(
        std::slice::from_ref(machine),
        std::sync::Arc::from(std::path::Path::new("read-back")),
        None,
    );
    for entry in reading.entries {
        match entry {
            Entry::Record(record) => {
                monitor.feed(record);
            }
            Entry::Problem(problem) => panic!("{format}: {}\n{text}", problem.message),
        }
    }
    let outcome = monitor.finish();
    let have: Vec<&str> = outcome
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    let want: Vec<&str> = trace.expected.iter().map(|e| e.code.as_str()).collect();
    assert_eq!(have, want, "{format}\n{text}");
}

fn displays(machine: &Machine, exploration: &explore::Exploration) -> Vec<String> {
    exploration
        .counterexamples
        .iter()
        .map(|c| format!("{}: {}", c.code(), c.display_path(machine)))
        .collect()
}

#[test]
fn reconcile_forbidden_moves_and_ends_have_their_shortest_paths() {
    let machine = shipped_spec("reconcile_before_retry");
    let exploration = explore::explore(&machine, explore::DEFAULT_MAX_DEPTH).unwrap();
    let have = displays(&machine, &exploration);
    assert_eq!(
        have[..6],
        [
            "forbidden-transition: create -> outcome_unknown -> create ✗",
            "forbidden-transition: create -> outcome_unknown -> lookup -> create ✗",
            "unaccepted-end: create ✗ ends in `pending`",
            "unaccepted-end: lookup ✗ ends in `verifying`",
            "unaccepted-end: create -> outcome_unknown ✗ ends in `unknown`",
            "unaccepted-end: create -> outcome_unknown -> lookup ✗ ends in `checking`",
        ]
    );
    // Every state's unexpected events follow, shortest first, then the longer ones.
    assert_eq!(have.len(), 6 + 41);
    assert!(
        have[6..]
            .iter()
            .all(|d| d.starts_with("unexpected-event: "))
    );
    assert_eq!(have[6], "unexpected-event: created ✗");
    assert!(exploration.unreached.is_empty());
    let blind = &exploration.counterexamples[0];
    assert_eq!(
        blind.message(&machine),
        "blind re-create: the first create may have committed; look it up by request id first"
    );
    let rule = blind.rule(&machine);
    assert!(machine.source.text[rule.range()].starts_with("forbid unknown, checking on create"));
}

#[test]
fn exploring_is_deterministic() {
    for machine in shipped() {
        let a = explore::explore(&machine, 8).unwrap();
        let b = explore::explore(&shipped_spec(&machine.name), 8).unwrap();
        assert_eq!(displays(&machine, &a), displays(&machine, &b));
    }
}

#[test]
fn every_shipped_counterexample_is_rejected_as_predicted() {
    let mut failures = Vec::new();
    for machine in shipped() {
        let exploration = explore::explore(&machine, explore::DEFAULT_MAX_DEPTH).unwrap();
        assert!(!exploration.counterexamples.is_empty(), "{}", machine.name);
        for counterexample in &exploration.counterexamples {
            match explore::counterexample_trace(&machine, counterexample, Format::Native) {
                Ok(trace) => assert_judged(&machine, &trace),
                Err(err) => failures.push(format!(
                    "{}: {} ({})",
                    machine.name,
                    counterexample.display_path(&machine),
                    err.message
                )),
            }
        }
    }
    // A retry (same request id) right after a lookup from `idle`: no create has bound
    // the key yet, and the explorer says so.
    // Likewise `over_budget` first: nothing has been counted yet.
    let (unbound, failures): (Vec<String>, Vec<String>) = failures
        .into_iter()
        .partition(|f| f.contains("which no earlier move of this path binds"));
    assert_eq!(unbound.len(), 2, "{unbound:#?}");
    assert!(unbound[0].starts_with("approval_budget: over_budget ✗"));
    assert!(unbound[1].starts_with("reconcile_before_retry: lookup -> retry ✗"));
    // The two ends no trace can reach: every reply to a lookup is found, not_found or
    // lookup_failed, and a call left unanswered gets a `missing` one (lookup_failed).
    assert_eq!(failures.len(), 2, "{failures:#?}");
    assert!(failures[0].starts_with("reconcile_before_retry: lookup ✗ ends in `verifying`"));
    assert!(failures[1].starts_with(
        "reconcile_before_retry: create -> outcome_unknown -> lookup ✗ ends in `checking`"
    ));
    assert!(
        failures
            .iter()
            .all(|f| f.contains("every result of `lookup_by_request_id`"))
    );
}

#[test]
fn every_shipped_allowed_path_conforms() {
    for machine in shipped() {
        let allowed = explore::allowed(&machine, 6, 200);
        assert!(!allowed.paths.is_empty(), "{}", machine.name);
        let mut built = 0;
        for path in &allowed.paths {
            let trace = match explore::allowed_trace(&machine, path, Format::Native) {
                Ok(trace) => trace,
                // The graph allows `retry` first, but its condition needs a bound key:
                // the explorer says so instead of writing a trace that is not one.
                // (In `approval_budget`, `next_request` needs a count `first_request`
                // started.)
                Err(e)
                    if e.message
                        .contains("which no earlier move of this path binds") =>
                {
                    let first = &machine.events[path.steps[0].event].name;
                    assert!(
                        ["retry", "next_request"].contains(&first.as_str()),
                        "{}: {e}",
                        machine.name
                    );
                    continue;
                }
                Err(e) => panic!("{}: {e}", machine.name),
            };
            assert!(trace.expected.is_none());
            assert_judged(&machine, &trace);
            built += 1;
        }
        assert!(built > 0, "{}", machine.name);
    }
}

const CYCLE: &str = r#"spec cycle
event ping  = call ping
event pong  = result ping where status == "ok"
event fail  = result ping where status == "error"
event reset = message where role == "user" and text == "reset"
initial idle
hot waiting
idle    -> waiting on ping
waiting -> idle    on pong
waiting -> broken  on fail
broken  -> idle    on reset
forbid broken on ping: "retry before reset"
"#;

#[test]
fn cycles_are_traversed_once_and_hot_states_are_ends_to_avoid() {
    let machine = spec(CYCLE);
    let exploration = explore::explore(&machine, explore::DEFAULT_MAX_DEPTH).unwrap();
    let have = displays(&machine, &exploration);
    assert_eq!(have[0], "forbidden-transition: ping -> fail -> ping ✗");
    assert_eq!(have[1], "unaccepted-end: ping ✗ ends in `waiting`");
    assert!(have[2..].iter().all(|d| d.starts_with("unexpected-event")));
    for counterexample in &exploration.counterexamples {
        let trace = explore::counterexample_trace(&machine, counterexample, Format::Native)
            .unwrap_or_else(|e| panic!("{}: {e}", counterexample.display_path(&machine)));
        assert_judged(&machine, &trace);
    }

    let allowed = explore::allowed(&machine, 10, 100);
    let paths: Vec<String> = allowed
        .paths
        .iter()
        .map(|p| explore::paths::path_text(&machine, &p.steps))
        .collect();
    assert_eq!(
        paths,
        ["ping -> pong", "ping -> fail", "ping -> fail -> reset"]
    );
    assert!(!allowed.truncated);
    for path in &allowed.paths {
        assert_judged(
            &machine,
            &explore::allowed_trace(&machine, path, Format::Native).unwrap(),
        );
    }
    // The depth bound cuts paths, and the limit cuts their number.
    assert_eq!(explore::allowed(&machine, 2, 100).paths.len(), 2);
    let limited = explore::allowed(&machine, 10, 1);
    assert_eq!((limited.paths.len(), limited.truncated), (1, true));
}

#[test]
fn unanswered_calls_are_closed_when_the_missing_result_would_move_the_machine() {
    // `ping` left open gets a `missing` result: no event matches it, so the trace ends
    // in `waiting` as predicted, at the call's line.
    let machine = spec(CYCLE);
    let exploration = explore::explore(&machine, 4).unwrap();
    let end = &exploration.counterexamples[1];
    let trace = explore::counterexample_trace(&machine, end, Format::Native).unwrap();
    assert_eq!(trace.records.len(), 1);

    // Here a `missing` reply is `lost`, which would move to `gone`: the call gets a
    // reply that no event matches instead.
    let lossy = spec(
        r#"event ping = call ping
event pong = result ping where status == "ok"
event lost = result ping where status == "missing"
initial idle
accept idle
idle -> waiting on ping
waiting -> idle on pong
waiting -> gone on lost
"#,
    );
    let exploration = explore::explore(&lossy, 4).unwrap();
    let waiting = exploration
        .counterexamples
        .iter()
        .find(|c| c.display_path(&lossy) == "ping ✗ ends in `waiting`")
        .expect("a trace may not end in `waiting`");
    let trace = explore::counterexample_trace(&lossy, waiting, Format::Native).unwrap();
    let text = trace.write(Format::Native).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.lines().nth(1).unwrap().contains("\"kind\":\"result\""),
        "{text}"
    );
    assert_judged(&lossy, &trace);
}

#[test]
fn per_keys_are_consistent_across_a_trace() {
    let machine = spec(
        r#"spec per_request
per args.request_id
event create  = call create_record where has args.request_id
event unknown = result create_record where status == "error" and error.category == "outcome_unknown"
event lookup  = call lookup_by_request_id where args.request_id matches /^req-[0-9]+$/
event found   = result lookup_by_request_id where status == "ok" and has output.id
event note    = message where role == "assistant"
otherwise ignore
initial idle
accept idle, done
idle     -> pending  on create
pending  -> unknown  on unknown
unknown  -> checking on lookup
checking -> done     on found
forbid unknown on create: "blind re-create"
forbid checking on note: "talking before the lookup answered"
"#,
    );
    let exploration = explore::explore(&machine, explore::DEFAULT_MAX_DEPTH).unwrap();
    assert!(!exploration.counterexamples.is_empty());
    for counterexample in &exploration.counterexamples {
        let trace = explore::counterexample_trace(&machine, counterexample, Format::Native)
            .unwrap_or_else(|e| panic!("{}: {e}", counterexample.display_path(&machine)));
        assert_judged(&machine, &trace);
        // Every call carries the one key; with a lookup in the path, one its regex
        // admits.
        let keys: Vec<&serde_json::Value> = trace
            .records
            .iter()
            .filter(|r| r["kind"] == "call")
            .map(|r| &r["args"]["request_id"])
            .collect();
        assert!(keys.windows(2).all(|w| w[0] == w[1]), "{keys:?}");
        if trace
            .records
            .iter()
            .any(|r| r["tool"] == "lookup_by_request_id")
        {
            assert_eq!(keys[0], "req-0");
        }
    }
    for path in &explore::allowed(&machine, 8, 100).paths {
        assert_judged(
            &machine,
            &explore::allowed_trace(&machine, path, Format::Native).unwrap(),
        );
    }
}

#[test]
fn an_initial_state_that_may_not_end_a_trace_needs_one_ignored_event() {
    let machine = spec(
        r#"spec must_finish
otherwise ignore
event begin  = call begin
event finish = call finish
initial start
hot start, working
start   -> working on begin
working -> done    on finish
"#,
    );
    let exploration = explore::explore(&machine, explore::DEFAULT_MAX_DEPTH).unwrap();
    let have = displays(&machine, &exploration);
    assert_eq!(
        have,
        [
            "unaccepted-end: finish (ignored) ✗ ends in `start`",
            "unaccepted-end: begin ✗ ends in `working`",
        ]
    );
    for counterexample in &exploration.counterexamples {
        assert_judged(
            &machine,
            &explore::counterexample_trace(&machine, counterexample, Format::Native).unwrap(),
        );
    }
}

#[test]
fn unreachable_and_too_deep_violations_are_listed_apart() {
    let machine = spec(
        r#"event a = call a
event b = call b
otherwise ignore
initial s0
s0 -> s1 on a
s1 -> s2 on a
s2 -> s3 on a
forbid s3 on b: "deep"
forbid island on b: "unreachable"
island -> island on a
"#,
    );
    let shallow = explore::explore(&machine, 2).unwrap();
    assert!(shallow.counterexamples.is_empty());
    let reasons: Vec<(String, bool)> = shallow
        .unreached
        .iter()
        .map(|u| (machine.state(u.state).name.clone(), u.beyond_depth))
        .collect();
    assert_eq!(
        reasons,
        [("s3".to_string(), true), ("island".to_string(), false)]
    );
    let deep = explore::explore(&machine, 4).unwrap();
    assert_eq!(
        displays(&machine, &deep),
        ["forbidden-transition: a -> a -> a -> b ✗"]
    );
}

#[test]
fn events_no_record_can_satisfy_are_reported_not_emitted() {
    let machine = spec(
        r#"event a = call a
event never = call b where args.x == 1 and args.x == 2
initial s
s -> t on a
forbid t on never: "never happens"
"#,
    );
    let exploration = explore::explore(&machine, 4).unwrap();
    let forbidden = &exploration.counterexamples[0];
    let err = explore::counterexample_trace(&machine, forbidden, Format::Native).unwrap_err();
    assert_eq!(err.message, "cannot synthesize a record for event `never`");
    assert_eq!(err.event.as_deref(), Some("never"));
}

#[test]
fn records_satisfy_every_kind_of_guard() {
    let machine = spec(
        r#"event e = call t
    where args.n >= 10 and args.n < 11
      and args.kind in ["x", "y"]
      and args.id matches /^[a-z]{3}-[0-9]+$/
      and args.list is array
      and has args.flag
      and not (args.mode == "dry")
      and (args.a == 1 or args.b == 2)
event other = call t where args.kind == "z"
initial s
s -> s on e
"#,
    );
    let path = &explore::allowed(&machine, 1, 10).paths[0];
    let trace = explore::allowed_trace(&machine, path, Format::Native).unwrap();
    let args = &trace.records[0]["args"];
    assert_eq!(args["n"], 10);
    assert_eq!(args["kind"], "x");
    assert_eq!(args["id"], "aaa-0");
    assert!(args["list"].is_array());
    assert!(args.get("flag").is_some());
    assert!(args.get("mode").is_none());
    assert_eq!(args["a"], 1);
    assert_judged(&machine, &trace);
}

#[test]
fn formats_that_cannot_express_an_event_say_why() {
    let machine = shipped_spec("no_retry_after_auth_failure");
    let exploration = explore::explore(&machine, 4).unwrap();
    let retry = exploration
        .counterexamples
        .iter()
        .find(|c| c.display_path(&machine) == "auth_failed -> retry ✗")
        .expect("a retry after an auth failure is forbidden");
    let err = explore::counterexample_trace(&machine, retry, Format::Openai).unwrap_err();
    assert!(
        err.message.starts_with(
            "cannot synthesize a record for event `auth_failed` that openai can express"
        ),
        "{err}"
    );
    assert!(err.message.contains("status `error`"), "{err}");
    // Anthropic has `is_error`: the failure is expressible, and the trace is written.
    let trace = explore::counterexample_trace(&machine, retry, Format::Anthropic).unwrap();
    let text = trace.write(Format::Anthropic).unwrap();
    assert!(text.contains("\"is_error\": true"), "{text}");
}

// --- Generated specs --------------------------------------------------------------

/// A generated spec: events of several shapes, a random transition table, forbids,
/// an ending rule, `otherwise`, and maybe a `per` key.
#[derive(Debug, Clone)]
struct Generated {
    events: Vec<u8>,
    /// For result events: which call's tool they answer.
    answers: Vec<usize>,
    table: Vec<Vec<Option<usize>>>,
    forbids: Vec<(usize, usize)>,
    ending: u8,
    ignore: bool,
    per: bool,
}

impl Generated {
    fn text(&self) -> String {
        let mut text = String::from("spec generated\n");
        if self.per {
            text.push_str("per args.request_id\n");
        }
        for (i, shape) in self.events.iter().enumerate() {
            let k = self.answers[i];
            let pattern = match shape {
                0 => format!("call tool_{i}"),
                1 => format!("call tool_{i} where args.mode in [\"a\", \"b\"]"),
                2 => format!("result tool_{k} where status == \"ok\" and has output.id"),
                3 => {
                    format!("result tool_{k} where status == \"error\" and error.code == \"E{i}\"")
                }
                4 => format!("message where role == \"user\" and text matches /^stop{i}\\b/"),
                _ => format!(
                    "result tool_{k} where not (status == \"ok\") and error.code != \"E{i}\" and not has output"
                ),
            };
            let _ = writeln!(text, "event e{i} = {pattern}");
        }
        text.push_str("initial s0\n");
        if self.ignore {
            text.push_str("otherwise ignore\n");
        }
        // States are declared by use: only those the transitions name (and `s0`) exist.
        let mut declared = vec![0];
        for (s, row) in self.table.iter().enumerate() {
            for target in row.iter().flatten() {
                declared.extend([s, *target]);
            }
        }
        let last = declared.iter().copied().max().unwrap_or(0);
        match self.ending {
            1 => {
                let _ = writeln!(text, "accept s0");
            }
            2 if last > 0 => {
                let _ = writeln!(text, "hot s{last}");
            }
            _ => {}
        }
        for (s, row) in self.table.iter().enumerate() {
            for (e, target) in row.iter().enumerate() {
                if let Some(t) = target {
                    let _ = writeln!(text, "s{s} -> s{t} on e{e}");
                }
            }
        }
        for (s, e) in &self.forbids {
            if declared.contains(s) && *e < self.events.len() {
                let _ = writeln!(text, "forbid s{s} on e{e}: \"no e{e} in s{s}\"");
            }
        }
        text
    }
}

fn generated(shapes: std::ops::Range<u8>) -> impl Strategy<Value = Generated> {
    (1usize..5, 1usize..5).prop_flat_map(move |(states, events)| {
        (
            proptest::collection::vec(shapes.clone(), events),
            proptest::collection::vec(0..events, events),
            proptest::collection::vec(
                proptest::collection::vec(proptest::option::weighted(0.5, 0..states), events),
                states,
            ),
            proptest::collection::vec((0..states, 0..events), 0..3),
            0u8..3,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(events, answers, table, forbids, ending, ignore, per)| Generated {
                    events,
                    answers,
                    table,
                    forbids,
                    ending,
                    ignore,
                    per,
                },
            )
    })
}

fn compile(text: &str) -> Option<Machine> {
    let source = std::sync::Arc::new(SpecSource::new(
        PathBuf::from("generated.tg"),
        text.to_string(),
    ));
    tracegate::spec::analyzer::load(source).ok()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Specs of calls only: every counterexample and every allowed path can be
    /// synthesized, and the checker agrees with every prediction.
    #[test]
    fn generated_call_specs_materialize_every_path(generated in generated(0..2)) {
        let text = generated.text();
        let machine = compile(&text).expect("call-only specs compile");
        let exploration = explore::explore(&machine, 6).unwrap();
        for counterexample in &exploration.counterexamples {
            let trace = explore::counterexample_trace(&machine, counterexample, Format::Native);
            prop_assert!(trace.is_ok(), "{}\n{}: {:?}", text, counterexample.display_path(&machine), trace.err());
            assert_judged(&machine, &trace.unwrap());
        }
        for path in &explore::allowed(&machine, 5, 50).paths {
            let trace = explore::allowed_trace(&machine, path, Format::Native);
            prop_assert!(trace.is_ok(), "{}\n{:?}", text, trace.err());
            assert_judged(&machine, &trace.unwrap());
        }
    }

    /// Specs with results, messages and guards, in every format: whatever is
    /// synthesized is judged as predicted (also when read back by the format's reader);
    /// what cannot be is reported, never emitted.
    #[test]
    fn generated_specs_emit_only_traces_judged_as_predicted(generated in generated(0..6)) {
        let text = generated.text();
        // Some generated specs do not compile (e.g. two identical patterns); skip them.
        let Some(machine) = compile(&text) else { return Ok(()) };
        let exploration = explore::explore(&machine, 5).unwrap();
        for format in Format::ALL {
            for counterexample in &exploration.counterexamples {
                if let Ok(trace) = explore::counterexample_trace(&machine, counterexample, format) {
                    assert_judged(&machine, &trace);
                    assert_read_back(&machine, &trace, format);
                }
            }
            for path in &explore::allowed(&machine, 4, 30).paths {
                if let Ok(trace) = explore::allowed_trace(&machine, path, format) {
                    assert_judged(&machine, &trace);
                    assert_read_back(&machine, &trace, format);
                }
            }
        }
    }
}

// --- The command ----------------------------------------------------------------------

#[test]
fn explore_prints_paths_with_their_rules() {
    let output = run(&["explore", "specs/seed_protocol.tg"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(
        text.contains("create -> outcome_unknown -> create ✗ blind re-create: the first create_invoice may have committed"),
        "{text}"
    );
    let spec_text = std::fs::read_to_string(root().join("specs/seed_protocol.tg")).unwrap();
    let forbid_line = spec_text
        .lines()
        .position(|line| line.starts_with("forbid"))
        .unwrap()
        + 1;
    assert!(
        text.contains(&format!("rule specs/seed_protocol.tg:{forbid_line}:1")),
        "{text}"
    );
}

#[test]
fn explore_emits_traces_that_check_rejects_as_named() {
    let dir = tempfile::tempdir().unwrap();
    let emit = dir.path().to_str().unwrap();
    let output = run(&["explore", "specs/seed_protocol.tg", "--emit", emit]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let fail = dir.path().join("seed_protocol/fail");
    let trace = fail.join("forbidden-transition-outcome_unknown-create.jsonl");
    assert!(trace.is_file(), "{}", stdout(&output));
    let checked = run(&[
        "check",
        "specs/seed_protocol.tg",
        "--traces",
        trace.to_str().unwrap(),
        "--output",
        "json",
    ]);
    assert_eq!(checked.status.code(), Some(1));
    let first: serde_json::Value =
        serde_json::from_str(stdout(&checked).lines().next().unwrap()).unwrap();
    assert_eq!(first["code"], "forbidden-transition");

    // Every emitted trace is rejected, with the code its name starts with.
    for entry in std::fs::read_dir(&fail).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let checked = run(&[
            "check",
            "specs/seed_protocol.tg",
            "--traces",
            path.to_str().unwrap(),
            "--output",
            "json",
        ]);
        assert_eq!(checked.status.code(), Some(1), "{name}");
        let first: serde_json::Value =
            serde_json::from_str(stdout(&checked).lines().next().unwrap()).unwrap();
        assert!(
            name.starts_with(first["code"].as_str().unwrap()),
            "{name}: {first}"
        );
    }
}

#[test]
fn explore_allowed_emits_conforming_traces() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(&[
        "explore",
        "specs/reconcile_before_retry.tg",
        "--allowed",
        "--max-depth",
        "4",
        "--emit",
        dir.path().to_str().unwrap(),
    ]);
    // Paths that start with `retry` have no trace (no key is bound yet): they say why,
    // and the command says not every path could be written.
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let text = stdout(&output);
    assert!(
        text.contains("no trace: cannot place a record for event `retry` after nothing (at the start): its condition reads `$key`, which no earlier move of this path binds"),
        "{text}"
    );
    let pass = dir.path().join("reconcile_before_retry/pass");
    assert!(pass.join("001-create-created.jsonl").is_file());
    let checked = run(&["check", "specs", "--traces", pass.to_str().unwrap()]);
    assert_eq!(checked.status.code(), Some(0), "{}", stdout(&checked));
}

/// The JSON Lines `explore --output json` prints: a contract, read with
/// `deny_unknown_fields`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields, tag = "type", rename_all = "lowercase")]
#[allow(dead_code)]
enum ExploreLine {
    Counterexample {
        spec: String,
        code: String,
        path: Vec<String>,
        states: Vec<String>,
        state: String,
        event: Option<String>,
        message: String,
        rule: Rule,
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
        rule: Rule,
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

#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Rule {
    file: String,
    line: usize,
    column: usize,
    text: String,
}

#[test]
fn explore_json_is_a_contract() {
    let dir = tempfile::tempdir().unwrap();
    let output = run(&[
        "explore",
        "specs/reconcile_before_retry.tg",
        "--output",
        "json",
        "--emit",
        dir.path().to_str().unwrap(),
    ]);
    // Two ends cannot be materialized: exit 1, and each says why.
    assert_eq!(output.status.code(), Some(1));
    let lines: Vec<ExploreLine> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    let first = &lines[0];
    let ExploreLine::Counterexample {
        path,
        states,
        at,
        trace,
        ..
    } = first
    else {
        panic!("{first:?}")
    };
    assert_eq!(path, &["create", "outcome_unknown", "create"]);
    assert_eq!(states, &["idle", "pending", "unknown"]);
    assert_eq!(at.as_deref(), Some("line 3"));
    assert!(
        trace
            .as_ref()
            .unwrap()
            .ends_with("forbidden-transition-unknown-create.jsonl")
    );
    let failed = lines
        .iter()
        .filter(|l| matches!(l, ExploreLine::Counterexample { error: Some(_), .. }))
        .count();
    // Two ends no trace reaches, and `lookup -> retry` (no key bound yet).
    assert_eq!(failed, 3);

    let allowed = run(&[
        "explore",
        "specs/seed_protocol.tg",
        "--allowed",
        "--output",
        "json",
        "--limit",
        "2",
    ]);
    let lines: Vec<ExploreLine> = stdout(&allowed)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(
        matches!(lines.last(), Some(ExploreLine::Truncated { paths: 2, .. })),
        "{lines:?}"
    );
}

/// Every trace `explore --emit --as FORMAT` writes, in every format, is read by that
/// format's reader and rejected by `check` with the code its name starts with, at the
/// line or JSON pointer `explore` predicted; every allowed path's trace conforms.
#[test]
fn emitted_traces_in_every_format_are_checked_as_predicted() {
    for format in ["native", "openai", "anthropic", "mcp", "otel"] {
        let dir = tempfile::tempdir().unwrap();
        let emit = dir.path().to_str().unwrap();
        let output = run(&[
            "explore", "specs", "--emit", emit, "--as", format, "--output", "json",
        ]);
        let mut predicted = std::collections::BTreeMap::new();
        for line in stdout(&output).lines() {
            let line: ExploreLine = serde_json::from_str(line).unwrap();
            if let ExploreLine::Counterexample {
                code,
                trace: Some(trace),
                at: Some(at),
                ..
            } = line
            {
                predicted.insert(trace, (code, at));
            }
        }
        assert!(!predicted.is_empty(), "{format}: nothing emitted");
        // Each spec's traces against that spec (another spec may object too: an
        // `invalid` reply is also a bad response for `no_guessed_identity…`).
        let mut findings = String::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let spec_dir = entry.unwrap().path();
            let name = spec_dir.file_name().unwrap().to_string_lossy().into_owned();
            let spec = format!("specs/{name}.tg");
            let checked = run(&[
                "check",
                &spec,
                "--traces",
                spec_dir.to_str().unwrap(),
                "--output",
                "json",
            ]);
            assert_eq!(checked.status.code(), Some(1), "{format}: {name}");
            findings.push_str(&stdout(&checked));
        }
        let mut found = std::collections::BTreeMap::new();
        for line in findings.lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            if value["type"] != "violation" {
                assert_eq!(value["type"], "summary", "{format}: {value}");
                continue;
            }
            let file = value["file"].as_str().unwrap().to_string();
            let at = match value["pointer"].as_str() {
                Some(pointer) if !pointer.is_empty() => pointer.to_string(),
                _ => format!("line {}", value["line"]),
            };
            let previous = found.insert(
                file.clone(),
                (value["code"].as_str().unwrap().to_string(), at),
            );
            assert!(
                previous.is_none(),
                "{format}: {file} has more than one finding"
            );
        }
        assert_eq!(found, predicted, "{format}");

        let allowed = tempfile::tempdir().unwrap();
        let emit = allowed.path().to_str().unwrap();
        run(&[
            "explore",
            "specs",
            "--allowed",
            "--max-depth",
            "4",
            "--emit",
            emit,
            "--as",
            format,
        ]);
        for entry in std::fs::read_dir(allowed.path()).unwrap() {
            let spec_dir = entry.unwrap().path();
            let name = spec_dir.file_name().unwrap().to_string_lossy().into_owned();
            let spec = format!("specs/{name}.tg");
            let checked = run(&["check", &spec, "--traces", spec_dir.to_str().unwrap()]);
            assert_eq!(
                checked.status.code(),
                Some(0),
                "{format}: {}",
                stdout(&checked)
            );
        }
    }
}

#[test]
fn a_write_that_needs_an_earlier_output_gets_one() {
    let machine = shipped_spec("ids_from_tool_output");
    let allowed = explore::allowed(&machine, 2, 10);
    let trace = explore::allowed_trace(&machine, &allowed.paths[0], Format::Native)
        .expect("the explorer writes a lookup result before the write");
    assert_judged(&machine, &trace);
    // A result of a tool the test names shows the id; the write cites it.
    let id = &trace.records[0]["output"]["id"];
    assert!(
        trace.records[0]["tool"]
            .as_str()
            .unwrap()
            .starts_with("list_payment")
    );
    assert_eq!(&trace.records[1]["args"]["payment_id"], id);
}
