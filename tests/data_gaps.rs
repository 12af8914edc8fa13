//! The data-aware language's later additions: `$VAR` as the subject of `in`, `matches`
//! and `is`; `missing-key` for specs whose guards read variables; the provenance
//! bound's warning; and the count of synthesized results.

use crate::util::{check_text, codes_and_lines, spec};

// ---- missing keys in specs that read variables ---------------------------------------

const KEYED_WITH_VARS: &str = r#"spec keyed_vars
event create = call create where not has $n bind n = 1
event again  = call create where $n == 1
per args.id
initial idle
idle -> made on create
made -> made on again
"#;

#[test]
fn a_record_without_the_key_is_missing_key_in_a_spec_that_reads_variables() {
    let trace = r#"{"kind":"call","tool":"create","args":{}}
{"kind":"call","tool":"create","args":{"id":"a"}}
{"kind":"call","tool":"create","args":{"id":"a"}}
"#;
    let outcome = check_text(&[spec(KEYED_WITH_VARS)], trace);
    assert_eq!(
        codes_and_lines(&outcome),
        [("missing-key".to_string(), 1)],
        "{:#?}",
        outcome.diagnostics
    );
    // The same message as a spec that reads no variable.
    let plain = KEYED_WITH_VARS
        .replace(" where not has $n bind n = 1", "")
        .replace("event again  = call create where $n == 1\n", "")
        .replace("made -> made on again\n", "");
    let plain = check_text(&[spec(&plain)], trace);
    assert_eq!(plain.diagnostics[0].message, outcome.diagnostics[0].message);
}

#[test]
fn a_key_no_record_carries_is_one_finding_in_a_spec_that_reads_variables() {
    let text = KEYED_WITH_VARS.replace("per args.id", "per args.idd");
    let trace = r#"{"kind":"call","tool":"create","args":{"id":"a"}}
{"kind":"call","tool":"create","args":{"id":"a"}}
"#;
    let outcome = check_text(&[spec(&text)], trace);
    assert_eq!(codes_and_lines(&outcome), [("missing-key".to_string(), 1)]);
    let hint = outcome.diagnostics[0].hint.as_deref().unwrap_or_default();
    assert!(hint.contains("did you mean `args.id`"), "{hint}");
}

#[test]
fn a_record_without_the_key_reaches_live_instances_in_a_spec_that_reads_variables() {
    let trace = r#"{"kind":"call","tool":"create","args":{"id":"a"}}
{"kind":"call","tool":"create","args":{}}
"#;
    let outcome = check_text(&[spec(KEYED_WITH_VARS)], trace);
    assert!(outcome.diagnostics.is_empty(), "{:#?}", outcome.diagnostics);
}

// ---- synthesized results in the counts ----------------------------------------------

#[test]
fn synthesized_results_are_counted_apart_from_records_read() {
    let text = "spec s\nevent call = call fetch\nevent gone = result fetch where status == \"missing\"\nevent done = result fetch where status != \"missing\"\ninitial idle\nidle -> waiting on call\nwaiting -> idle on done, gone\n";
    let trace = r#"{"kind":"call","tool":"fetch","call_id":"1"}
{"kind":"result","call_id":"1","status":"ok"}
{"kind":"call","tool":"fetch","call_id":"2"}
"#;
    let outcome = check_text(&[spec(text)], trace);
    assert!(outcome.diagnostics.is_empty(), "{:#?}", outcome.diagnostics);
    assert_eq!((outcome.records, outcome.synthesized), (3, 1));
}

#[test]
fn the_summary_says_how_many_results_were_synthesized() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let spec_path = dir.path().join("s.tg");
    let trace_path = dir.path().join("t.jsonl");
    std::fs::write(
        &spec_path,
        "spec s\nevent call = call fetch\nevent back = result fetch\notherwise ignore\ninitial idle\nidle -> waiting on call\nwaiting -> idle on back\n",
    )
    .expect("spec written");
    std::fs::write(
        &trace_path,
        "{\"kind\":\"call\",\"tool\":\"fetch\",\"call_id\":\"1\"}\n{\"kind\":\"call\",\"tool\":\"fetch\",\"call_id\":\"2\"}\n",
    )
    .expect("trace written");
    let run = |mode: &str| {
        let output = crate::util::tracegate()
            .arg("check")
            .arg(&spec_path)
            .arg("--traces")
            .arg(&trace_path)
            .args(["--output", mode])
            .output()
            .expect("tracegate runs");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let human = run("human");
    assert!(
        human.contains("checked 1 trace (2 records + 2 synthesized) against 1 spec"),
        "{human}"
    );
    let json = run("json");
    let summary: serde_json::Value =
        serde_json::from_str(json.lines().last().expect("a summary line")).expect("JSON");
    assert_eq!(summary["records"], 2, "{json}");
    assert_eq!(summary["synthesized"], 2, "{json}");
}

// ---- `in`, `matches` and `is` of a variable ------------------------------------------

const STATUS: &str = r#"spec status
event pick   = call pick bind s = args.status
event usable = call use where $s in ["open", "new"] and $s matches /^[a-z]+$/ and $s is string
event other  = call use where not ($s in ["open", "new"] and $s matches /^[a-z]+$/ and $s is string)
otherwise ignore
initial idle
idle   -> picked on pick
picked -> idle   on usable
forbid picked on other: "the picked status cannot be used"
"#;

fn pick(status: &str) -> String {
    format!("{{\"kind\":\"call\",\"tool\":\"pick\",\"args\":{{\"status\":{status}}}}}\n")
}

const USE: &str = "{\"kind\":\"call\",\"tool\":\"use\"}\n";

#[test]
fn a_variable_is_tested_with_in_matches_and_is() {
    let lines = |trace: &str| codes_and_lines(&check_text(&[spec(STATUS)], trace));
    let pass = format!("{}{USE}{}{USE}", pick("\"open\""), pick("\"new\""));
    assert_eq!(lines(&pass), []);
    // Not in the list; in it but typed differently; a missing value leaves it unset.
    for status in ["\"closed\"", "[\"open\"]", "1"] {
        let fail = format!("{}{USE}{}{USE}", pick("\"open\""), pick(status));
        assert_eq!(
            lines(&fail),
            [("forbidden-transition".to_string(), 4)],
            "status {status}"
        );
    }
    let unset = format!(
        "{}{USE}",
        "{\"kind\":\"call\",\"tool\":\"pick\",\"args\":{}}\n"
    );
    assert_eq!(lines(&unset), [("forbidden-transition".to_string(), 2)]);
}

#[test]
fn a_duration_or_instant_in_a_variable_is_no_json_value() {
    // `reset` binds JSON values, so the variables' types are open and the spec compiles;
    // after `start` they hold a duration and an instant, which no JSON test accepts.
    let text = r#"spec d
event start = call start bind d = args.wait * 1s, t = time + 1s
event reset = call reset bind d = args.wait, t = time
event typed = call probe where $d is number or $t is string or $d in [2] or $t matches /./
event plain = call probe where not ($d is number or $t is string or $d in [2] or $t matches /./)
initial idle
idle -> idle on start, reset, plain
forbid idle on typed: "a JSON test passed"
"#;
    let start = "{\"kind\":\"call\",\"tool\":\"start\",\"time\":\"2026-01-01T00:00:00Z\",\"args\":{\"wait\":2}}\n";
    let reset = start.replace("\"start\"", "\"reset\"");
    let probe = "{\"kind\":\"call\",\"tool\":\"probe\"}\n";
    let lines = |trace: &str| codes_and_lines(&check_text(&[spec(text)], trace));
    assert_eq!(lines(&format!("{start}{probe}")), []);
    assert_eq!(
        lines(&format!("{reset}{probe}")),
        [("forbidden-transition".to_string(), 2)]
    );
}

#[track_caller]
fn spec_errors(text: &str) -> Vec<(String, String)> {
    let source = std::sync::Arc::new(tracegate::machine::SpecSource::new(
        "t.tg",
        text.to_string(),
    ));
    match tracegate::spec::analyzer::load(source) {
        Ok(_) => panic!("expected errors from:\n{text}"),
        Err(errors) => errors
            .into_iter()
            .map(|e| {
                (
                    e.code.as_str().to_string(),
                    text[e.span.range()].to_string(),
                )
            })
            .collect(),
    }
}

#[test]
fn tests_of_a_variable_that_can_never_hold_are_type_mismatches() {
    let text = r#"spec m
event a = call a bind d = 5s, n = 1, k = "x"
event b = call b where $d in [5] or $n is string or $n matches /1/ or $k in [1, 2] or $z is null
initial i
i -> i on a, b
"#;
    assert_eq!(
        spec_errors(text),
        [
            ("type-mismatch".to_string(), "$d in [5]".to_string()),
            ("type-mismatch".to_string(), "$n is string".to_string()),
            ("type-mismatch".to_string(), "$n matches /1/".to_string()),
            ("type-mismatch".to_string(), "$k in [1, 2]".to_string()),
            ("unknown-variable".to_string(), "$z".to_string()),
        ]
    );
    // Binds of different types leave the variable's type open: no error.
    let open = "spec m\nevent a = call a bind n = 1\nevent c = call c bind n = \"x\"\nevent b = call b where $n is string\ninitial i\ni -> i on a, b, c\n";
    spec(open);
}

#[test]
fn explore_emits_a_bound_value_that_the_variables_tests_accept() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let spec_path = dir.path().join("status.tg");
    std::fs::write(&spec_path, STATUS).expect("spec written");
    let emit = dir.path().join("out");
    let output = crate::util::tracegate()
        .arg("explore")
        .arg(&spec_path)
        .args(["--allowed", "--max-depth", "2", "--emit"])
        .arg(&emit)
        .output()
        .expect("tracegate runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert_eq!(output.status.code(), Some(0), "{text}");
    let trace = emit.join("status/pass/002-pick-usable.jsonl");
    let written = std::fs::read_to_string(&trace).expect("the pick-usable path is emitted");
    assert!(written.contains(r#""status":"open""#), "{written}");
    let checked = crate::util::tracegate()
        .arg("check")
        .arg(&spec_path)
        .arg("--traces")
        .arg(&trace)
        .output()
        .expect("tracegate runs");
    assert_eq!(
        checked.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&checked.stdout)
    );
}

#[test]
fn lint_warns_of_a_variable_tested_before_any_move_binds_it() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let spec_path = dir.path().join("l.tg");
    std::fs::write(
        &spec_path,
        "spec l\nevent a = call a bind s = args.s\nevent b = call b where $s in [\"x\"]\ninitial i\ni -> j on b\ni -> k on a\n",
    )
    .expect("spec written");
    let output = crate::util::tracegate()
        .arg("lint")
        .arg(&spec_path)
        .output()
        .expect("tracegate runs");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        text.contains("warning[unset-variable]: event `b` reads `$s` in state `i`"),
        "{text}"
    );
}

// ---- the provenance index's bound ---------------------------------------------------

#[test]
fn a_full_provenance_index_is_one_warning_per_trace_at_the_record_that_filled_it() {
    let text = r#"spec cited
event cite   = call refund where args.id in outputs of list
event recall = call refund where not (args.id in outputs of list)
initial idle
otherwise ignore
idle -> idle on cite
forbid * on recall: "an id no listing showed"
"#;
    let list = |case: &str, ids: &[&str]| {
        let items: Vec<String> = ids
            .iter()
            .map(|id| format!("{{\"id\":\"{id}\"}}"))
            .collect();
        format!(
            "{{\"case\":\"{case}\",\"kind\":\"result\",\"tool\":\"list\",\"status\":\"ok\",\"output\":[{}]}}\n",
            items.join(",")
        )
    };
    let refund = |case: &str, id: &str| {
        format!(
            "{{\"case\":\"{case}\",\"kind\":\"call\",\"tool\":\"refund\",\"call_id\":\"r\",\"args\":{{\"id\":\"{id}\"}}}}\n"
        )
    };
    // Each id is a leaf and a token: two values. Case `a` fills the index of 4 at its
    // second listing (line 2) and shows more after; case `b` stays under it.
    let trace = [
        list("a", &["id_0001"]),
        list("a", &["id_0002", "id_0003"]),
        list("a", &["id_0004"]),
        list("b", &["id_0001"]),
        refund("a", "id_0001"),
        refund("a", "id_0003"),
        refund("b", "id_0001"),
    ]
    .concat();
    let options = tracegate::check::CheckOptions {
        trace_by: Some(vec![tracegate::json::Segment::Key("case".into())]),
        provenance_limit: Some(4),
        ..Default::default()
    };
    let outcome = tracegate::check::check_reader(
        &[spec(text)],
        std::sync::Arc::from(std::path::Path::new("t.jsonl")),
        trace.as_bytes(),
        &options,
    );
    assert_eq!(
        codes_and_lines(&outcome),
        [
            ("provenance-limit".to_string(), 2),
            // `id_0003` came after the bound: not found, so the refund is reported.
            ("forbidden-transition".to_string(), 6),
        ]
    );
    let message = &outcome.diagnostics[0].message;
    assert!(message.contains("(4 distinct values)"), "{message}");
    assert!(message.contains("`in outputs`"), "{message}");
    // With the default bound, nothing is missed.
    let options = tracegate::check::CheckOptions {
        provenance_limit: None,
        ..options
    };
    let outcome = tracegate::check::check_reader(
        &[spec(text)],
        std::sync::Arc::from(std::path::Path::new("t.jsonl")),
        trace.as_bytes(),
        &options,
    );
    assert_eq!(codes_and_lines(&outcome), []);
}

// ---- `state` declarations and misspelled states -------------------------------------

const DECLARED: &str = "spec s\nevent a = call a\nevent b = call b\nstate idle, pending, done\ninitial idle\nidle -> pending on a\npending -> donne on b\n";

#[test]
fn with_declared_states_a_near_miss_of_one_is_unknown_even_when_only_entered() {
    assert_eq!(
        spec_errors(DECLARED),
        [("unknown-state".to_string(), "donne".to_string())]
    );
    // Without declarations, a state only entered is taken as written.
    spec(&DECLARED.replace("state idle, pending, done\n", ""));
    // Declaring it keeps it: a deliberately new state.
    spec(&DECLARED.replace(
        "state idle, pending, done",
        "state idle, pending, done, donne",
    ));
}

#[test]
fn a_declared_state_is_never_taken_for_a_misspelling() {
    let dead = "spec s\nevent a = call a\nevent b = call b\ninitial idle\nidle -> pending on a\npendng -> done on b\n";
    assert_eq!(
        spec_errors(dead),
        [("unknown-state".to_string(), "pendng".to_string())]
    );
    spec(&dead.replace(
        "initial idle",
        "state idle, pending, pendng, done\ninitial idle",
    ));
    // Declaring only the odd name makes the other one the near miss.
    assert_eq!(
        spec_errors(&dead.replace("initial idle", "state pendng\ninitial idle")),
        [("unknown-state".to_string(), "pending".to_string())]
    );
}

#[test]
fn the_misspelled_state_message_says_how_to_keep_the_name() {
    let source = std::sync::Arc::new(tracegate::machine::SpecSource::new(
        "t.tg",
        DECLARED.to_string(),
    ));
    let errors = tracegate::spec::analyzer::load(source).expect_err("an unknown state");
    assert_eq!(
        errors[0].message,
        "unknown state `donne`: no `state` declares it, and the spec declares `done`"
    );
    assert_eq!(
        errors[0].hint.as_deref(),
        Some("did you mean `done`? (to keep `donne` as a new state, declare it: `state donne`)")
    );
}

#[test]
fn a_declared_state_exists_fmt_keeps_it_and_lint_says_it_is_unreachable() {
    let text =
        "spec s\n\nevent a = call a\n\ninitial idle\nstate idle, spare\n\nidle -> idle on a\n";
    let machine = spec(text);
    assert!(
        machine
            .state_ids()
            .any(|s| machine.state(s).name == "spare")
    );
    assert_eq!(
        tracegate::spec::fmt::format_source(text).expect("it parses"),
        text
    );
    let dir = tempfile::tempdir().expect("a scratch directory");
    let path = dir.path().join("s.tg");
    std::fs::write(&path, text).expect("spec written");
    let output = crate::util::tracegate()
        .arg("lint")
        .arg(&path)
        .output()
        .expect("tracegate runs");
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        report.contains("warning[unreachable-state]: state `spare`"),
        "{report}"
    );
    assert!(
        report.contains("remove it from `state` and the transitions"),
        "{report}"
    );
}
