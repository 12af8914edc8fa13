//! Bad input never panics and never stops the run: every bad line is one located
//! `malformed-record` error, and every other record is still checked.

use crate::util::{run, stdout, tracegate};

#[test]
fn every_bad_line_is_reported_and_the_rest_is_checked() {
    let output = run(&[
        "check",
        "tests/fixtures/codes/malformed-record/spec.tg",
        "--traces",
        "tests/fixtures/codes/malformed-record/trace.jsonl",
        "--output",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let found: Vec<(String, u64, String)> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] != "summary")
        .map(|v| {
            (
                v["code"].as_str().unwrap().to_string(),
                v["line"].as_u64().unwrap(),
                v["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let lines: Vec<(&str, u64)> = found.iter().map(|(c, l, _)| (c.as_str(), *l)).collect();
    assert_eq!(
        lines,
        [
            ("malformed-record", 2),
            ("malformed-record", 3),
            ("malformed-record", 4),
            ("malformed-record", 6),
            ("forbidden-transition", 7),
            ("malformed-record", 8),
            ("malformed-record", 9),
            ("malformed-record", 10),
            ("malformed-record", 11),
        ],
        "{found:#?}"
    );
    let message = |line: u64| &found.iter().find(|f| f.1 == line).unwrap().2;
    assert!(message(2).contains("not valid JSON"), "{}", message(2));
    assert!(message(3).contains("array"), "{}", message(3));
    assert!(message(4).contains("`tool`"), "{}", message(4));
    assert!(message(6).contains("`status`"), "{}", message(6));
    assert!(message(8).contains("UTF-8"), "{}", message(8));
    assert!(message(9).contains("the number `1e400`"), "{}", message(9));
    assert!(message(10).contains("surrogate pair"), "{}", message(10));
    assert!(message(11).contains("truncated"), "{}", message(11));
}

#[test]
fn huge_and_deeply_nested_lines_are_errors_not_crashes() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("hostile.jsonl");
    let mut text = String::new();
    text.push_str(&"[".repeat(2_000));
    text.push('\n');
    text.push_str(&format!(
        "{{\"kind\":\"message\",\"text\":\"{}\"}}\n",
        "x".repeat(10_000)
    ));
    text.push_str("{\"kind\":\"call\",\"tool\":\"create_record\",\"call_id\":\"c1\"}\n");
    std::fs::write(&trace, text).unwrap();
    let output = tracegate()
        .args([
            "check",
            "tests/fixtures/codes/malformed-record/spec.tg",
            "--traces",
            trace.to_str().unwrap(),
            "--max-line-bytes",
            "4096",
            "--output",
            "json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = stdout(&output);
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["line"], 1);
    assert!(
        lines[0]["message"]
            .as_str()
            .unwrap()
            .contains("nested too deeply"),
        "{text}"
    );
    assert_eq!(lines[1]["line"], 2);
    assert!(
        lines[1]["message"]
            .as_str()
            .unwrap()
            .contains("over the limit"),
        "{text}"
    );
    // The one good record was read and checked.
    assert_eq!(lines[2]["records"], 1);
}
