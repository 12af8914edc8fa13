//! The JSON Lines output is a contract (README, "JSON output"): every line
//! deserializes into exactly one of these shapes, with no unknown fields.

use serde::Deserialize;

use crate::util::{run, stdout};

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
    Error {
        code: String,
        file: Option<String>,
        line: Option<u64>,
        column: Option<usize>,
        pointer: Option<String>,
        spec: Option<String>,
        message: String,
        hint: Option<String>,
    },
    Summary {
        specs: usize,
        traces: u64,
        records: u64,
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
        lines.iter().any(
            |l| matches!(l, Line::Error { code, column: Some(_), .. } if code == "syntax-error")
        )
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
