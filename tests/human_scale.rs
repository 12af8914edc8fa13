//! Human reports that stay readable at scale: long paths abbreviated in the middle
//! (the other outputs keep every move), and records quoted from inputs that cannot be
//! read twice.

use crate::util::{run, stdout, tracegate};

const SPEC: &str = "tests/fixtures/long_path/busy.tg";
const TRACE: &str = "tests/fixtures/long_path/busy.jsonl";

#[test]
fn a_long_path_shows_its_first_and_last_moves() {
    let output = run(&["check", SPEC, "--traces", TRACE]);
    assert_eq!(output.status.code(), Some(1));
    insta::assert_snapshot!("long_path", stdout(&output));
}

#[test]
fn json_keeps_every_move_of_a_long_path() {
    let output = run(&["check", SPEC, "--traces", TRACE, "--output", "json"]);
    let first = stdout(&output);
    let finding: serde_json::Value =
        serde_json::from_str(first.lines().next().expect("a finding")).expect("JSON");
    let path = finding["path"].as_array().expect("a path");
    assert_eq!(path.len(), 41, "every move: {finding}");
    assert_eq!(path[20]["line"], 21);
}

#[test]
fn a_record_read_from_standard_input_is_quoted() {
    let trace = std::fs::read(crate::util::root().join(TRACE)).expect("the trace");
    let output = tracegate()
        .args(["check", SPEC, "--traces", "-"])
        .write_stdin(trace)
        .output()
        .expect("tracegate runs");
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(
        text.contains(
            "  --> -:42:1\n   |\n42 | {\"kind\":\"call\",\"tool\":\"stop\"}\n   | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^ `stop` in state `busy`\n"
        ),
        "{text}"
    );
}
