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
        human.contains("checked 1 trace (2 records, 2 synthesized) against 1 spec"),
        "{human}"
    );
    let json = run("json");
    let summary: serde_json::Value =
        serde_json::from_str(json.lines().last().expect("a summary line")).expect("JSON");
    assert_eq!(summary["records"], 2, "{json}");
    assert_eq!(summary["synthesized"], 2, "{json}");
}
