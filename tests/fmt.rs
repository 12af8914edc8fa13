//! `tracegate fmt`: the canonical layout, comments, `--check` and its diff, and the
//! properties that make it safe: for generated specs, `parse(fmt(s))` is `parse(s)`
//! (up to spans and the canonical statement order) and `fmt(fmt(s)) == fmt(s)`.

use proptest::prelude::*;
use tracegate::spec::fmt::{canonical_order, format_source, without_spans};
use tracegate::spec::parse;

use crate::util::{root, run, stdout, tracegate};

#[track_caller]
fn fmt(source: &str) -> String {
    match format_source(source) {
        Ok(text) => text,
        Err(errors) => panic!("does not parse: {errors:#?}\n{source}"),
    }
}

#[test]
fn the_shipped_specs_are_formatted() {
    let output = run(&["fmt", "--check", "specs"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert_eq!(stdout(&output), "");
}

#[test]
fn the_layout() {
    let have = fmt(r#"forbid unknown on create: "blind re-create"
initial idle
event created = result create_record where status=="ok"
unknown->checking on lookup
spec layout
idle -> pending on create,retry
event create = call create_record
accept idle,done
about "What the layout looks like."
event outcome_unknown = result create_record where status == "missing" or (status == "error" and error.category == "outcome_unknown") or error.code in ["timeout", "connection_reset", "connection_closed"]
"#);
    let want = r#"spec layout
about "What the layout looks like."

event created         = result create_record where status == "ok"
event create          = call create_record
event outcome_unknown = result create_record
    where status == "missing"
       or (status == "error" and error.category == "outcome_unknown")
       or error.code in ["timeout", "connection_reset", "connection_closed"]

initial idle
accept idle, done

unknown -> checking on lookup
idle    -> pending  on create, retry

forbid unknown on create: "blind re-create"
"#;
    assert_eq!(have, want);
    assert_eq!(fmt(&have), have);
}

#[test]
fn long_chains_break_inside_parentheses() {
    let have = fmt(
        r#"event denial = result "*" where status == "error" and (error.status == 403 or error.code in ["forbidden", "insufficient_scope", "permission_denied", "access_denied", "not_allowed"] or error.retry == "never")
"#,
    );
    let want = r#"event denial = result "*"
    where status == "error"
      and (error.status == 403
           or error.code in ["forbidden", "insufficient_scope", "permission_denied",
                             "access_denied", "not_allowed"]
           or error.retry == "never")
"#;
    assert_eq!(have, want);
    assert_eq!(fmt(&have), have);
}

#[test]
fn comments_stay_with_their_statements() {
    let source = r#"# The header stays on top.

idle -> pending on create   # trailing
    # below the transition

# Leading comment of the event.
event create = call create_record
event weird = result create_record
    # a comment inside the statement: kept as written
    where   status == "ok"


spec comments
# at the end
"#;
    let want = r#"# The header stays on top.

spec comments

# Leading comment of the event.
event create = call create_record
event weird = result create_record
    # a comment inside the statement: kept as written
    where   status == "ok"

idle -> pending on create  # trailing
    # below the transition
# at the end
"#;
    let have = fmt(source);
    assert_eq!(have, want);
    assert_eq!(fmt(&have), have);
}

#[test]
fn blank_lines_inside_a_section_are_kept_once() {
    let have = fmt("initial a\n\n\n\na -> b on x\n\n\n\nb -> a on y\nb -> b on z\n");
    assert_eq!(
        have,
        "initial a\n\na -> b on x\n\nb -> a on y\nb -> b on z\n"
    );
}

#[test]
fn empty_and_comment_only_files() {
    assert_eq!(fmt(""), "");
    assert_eq!(fmt("\n\n"), "");
    assert_eq!(fmt("# only\n\n\n# comments"), "# only\n\n# comments\n");
}

#[test]
fn check_prints_a_diff_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.tg");
    let ugly = "initial idle\nevent a = call a\nidle -> idle on a\n";
    std::fs::write(&path, ugly).unwrap();
    let file = path.to_str().unwrap();

    let output = run(&["fmt", "--check", file]);
    assert_eq!(output.status.code(), Some(1));
    let diff = stdout(&output);
    assert!(
        diff.starts_with(&format!("--- {file}\n+++ {file} (formatted)\n")),
        "{diff}"
    );
    assert!(diff.contains("\n@@ -1,3 +1,5 @@\n"), "{diff}");
    assert!(diff.lines().any(|l| l.starts_with('-')), "{diff}");
    assert!(diff.lines().any(|l| l == "+"), "{diff}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), ugly);

    let output = run(&["fmt", file]);
    assert_eq!(output.status.code(), Some(0));
    let formatted = std::fs::read_to_string(&path).unwrap();
    assert_eq!(
        formatted,
        "event a = call a\n\ninitial idle\n\nidle -> idle on a\n"
    );
    assert_eq!(run(&["fmt", "--check", file]).status.code(), Some(0));
}

#[test]
fn stdin_to_stdout_and_errors() {
    let output = tracegate()
        .args(["fmt", "-"])
        .write_stdin("initial  idle\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(stdout(&output), "initial idle\n");

    let output = tracegate()
        .args(["fmt", "-"])
        .write_stdin("initial\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error[syntax-error]"), "{stderr}");
}

#[test]
fn unified_diff_hunks() {
    let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\n";
    let new = "a\nB\nc\nd\ne\nf\ng\nh\ni\nJ\nk\n";
    let diff = tracegate::spec::fmt::unified_diff("x", old, new);
    assert_eq!(
        diff,
        "--- x\n+++ x (formatted)\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n d\n e\n@@ -7,5 +7,5 @@\n g\n h\n i\n-j\n+J\n k\n"
    );
    assert_eq!(tracegate::spec::fmt::unified_diff("x", old, old), "");
    assert_eq!(
        tracegate::spec::fmt::unified_diff("x", "a\r\n", "a\n"),
        "--- x\n+++ x (formatted)\n(only line endings or the final newline differ)\n"
    );
}

/// Every fenced `tg` block of the language reference parses and is formatted, and every
/// one that is a whole spec (it starts with `spec` and declares events) compiles.
#[test]
fn the_reference_examples_parse_and_compile() {
    let reference = std::fs::read_to_string(root().join("specs/README.md")).unwrap();
    let mut blocks = 0;
    let mut rest = reference.as_str();
    while let Some(start) = rest.find("```tg\n") {
        let body = &rest[start + 6..];
        let end = body.find("```").expect("closed block");
        let text = &body[..end];
        if let Err(errors) = parse(text) {
            panic!("reference example does not parse: {errors:#?}\n{text}");
        }
        assert_eq!(fmt(text), text, "reference example is not formatted");
        if text.starts_with("spec ") && text.contains("\nevent ") {
            crate::util::spec(text);
        }
        blocks += 1;
        rest = &body[end + 3..];
    }
    assert!(blocks >= 12, "only {blocks} examples");
}

// ---- Properties over generated specs ---------------------------------------------

fn name() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "idle", "pending", "done", "a", "b", "c1", "spec", "event", "on", "path", "where", "not",
        "x_y",
    ])
    .prop_map(str::to_string)
}

fn tool() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "create_record",
        "mcp:github/create-issue",
        "x.y",
        "\"create_*\"",
        "\"a\\\"b?\"",
        "/^create_/",
        "/a\\/b|c/i",
        "/[\\]\\/]x/",
    ])
    .prop_map(str::to_string)
}

fn path() -> impl Strategy<Value = String> {
    let root = prop::sample::select(vec![
        "status", "output", "args", "event", "error", "not", "has", "kind", "and",
    ]);
    let segment = prop::sample::select(vec![
        ".id",
        ".items",
        "[0]",
        "[12]",
        "[\"odd key\"]",
        "[\"a\\\"b\"]",
        ".category",
    ]);
    (root, prop::collection::vec(segment, 0..3)).prop_map(|(root, segments)| {
        let mut path = root.to_string();
        for segment in segments {
            path.push_str(segment);
        }
        path
    })
}

fn literal() -> impl Strategy<Value = String> {
    prop::sample::select(vec![
        "\"ok\"",
        "\"é \\\" \\\\ \\u00e9 #\"",
        "0",
        "-1.5",
        "1e3",
        "12345678901234",
        "true",
        "false",
        "null",
        "[]",
        "[1, \"a\", null]",
        "{\"k\": [null], \"b\": {}}",
    ])
    .prop_map(str::to_string)
}

/// Whitespace between two tokens of a statement: spaces, or a continuation line.
fn gap() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        " ",
        " ",
        " ",
        "  ",
        "\n    ",
        "\n\t",
        "  # inside\n    ",
    ])
}

fn leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            path(),
            prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]),
            literal(),
            gap()
        )
            .prop_map(|(p, op, l, g)| format!("{p}{g}{op} {l}")),
        (path(), prop::collection::vec(literal(), 0..4))
            .prop_map(|(p, ls)| format!("{p} in [{}]", ls.join(","))),
        (
            path(),
            prop::sample::select(vec!["/^no\\b/i", "/a\\/b/", "/x|y/"])
        )
            .prop_map(|(p, r)| format!("{p} matches {r}")),
        path().prop_map(|p| format!("has {p}")),
        (
            path(),
            prop::sample::select(vec!["null", "bool", "number", "string", "array", "object"])
        )
            .prop_map(|(p, t)| format!("{p} is {t}")),
    ]
}

fn variable() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["$n", "$rid", "$t", "$not"]).prop_map(str::to_string)
}

/// A value: paths, variables, numbers, strings, durations, arithmetic and groups.
fn value() -> impl Strategy<Value = String> {
    let atom = prop_oneof![
        path(),
        variable(),
        prop::sample::select(vec![
            "0",
            "-1.5",
            "1e3",
            "\"2026-01-01T00:00:00Z\"",
            "\"ok\""
        ])
        .prop_map(str::to_string),
        prop::sample::select(vec!["500ms", "30s", "5m", "2h", "0s"]).prop_map(str::to_string),
    ];
    atom.prop_recursive(3, 8, 2, |inner| {
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(vec!["+", "-", "*", "/"]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
            inner.prop_map(|a| format!("({a})")),
        ]
    })
}

/// The tests added for values across records: comparisons of values, `has $VAR`,
/// provenance, secrets, and `in`, `matches` and `is` of a variable.
fn value_leaf() -> impl Strategy<Value = String> {
    prop_oneof![
        (
            value(),
            prop::sample::select(vec!["==", "!=", "<", "<=", ">", ">="]),
            value()
        )
            .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        variable().prop_map(|v| format!("has {v}")),
        (
            value(),
            prop_oneof![
                Just("outputs".to_string()),
                tool().prop_map(|t| format!("outputs of {t}")),
                Just("messages".to_string()),
                name().prop_map(|r| format!("messages from {r}")),
            ]
        )
            .prop_map(|(v, source)| format!("{v} in {source}")),
        Just("secret in record".to_string()),
        value().prop_map(|v| format!("secret in {v}")),
        (variable(), prop::collection::vec(literal(), 0..4))
            .prop_map(|(v, ls)| format!("{v} in [{}]", ls.join(","))),
        (
            variable(),
            prop::sample::select(vec!["/^no\\b/i", "/a\\/b/"])
        )
            .prop_map(|(v, r)| format!("{v} matches {r}")),
        (
            variable(),
            prop::sample::select(vec!["null", "bool", "number", "string", "array", "object"])
        )
            .prop_map(|(v, t)| format!("{v} is {t}")),
    ]
}

fn condition() -> impl Strategy<Value = String> {
    prop_oneof![leaf(), value_leaf()].prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            (inner.clone(), gap(), inner.clone()).prop_map(|(a, g, b)| format!("{a}{g}and {b}")),
            (inner.clone(), gap(), inner.clone()).prop_map(|(a, g, b)| format!("{a}{g}or {b}")),
            inner.clone().prop_map(|a| format!("not ({a})")),
            inner.prop_map(|a| format!("( {a} )")),
        ]
    })
}

fn names(strategy: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec(strategy, 1..4).prop_map(|names| names.join(", "))
}

fn statement() -> impl Strategy<Value = String> {
    prop_oneof![
        name().prop_map(|n| format!("spec {n}")),
        Just("about \"what # it checks \\u00e9\"".to_string()),
        (
            name(),
            prop::sample::select(vec!["call", "result"]),
            prop::option::of(tool()),
            prop::option::of(condition()),
            prop::collection::vec((name(), value()), 0..3)
        )
            .prop_map(|(n, kind, tool, guard, binds)| {
                let mut text = format!("event {n} = {kind}");
                if let Some(tool) = tool {
                    text.push(' ');
                    text.push_str(&tool);
                }
                if let Some(guard) = guard {
                    text.push_str(" where ");
                    text.push_str(&guard);
                }
                if !binds.is_empty() {
                    let binds: Vec<String> =
                        binds.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                    text.push_str(" bind ");
                    text.push_str(&binds.join(", "));
                }
                text
            }),
        (
            name(),
            prop::sample::select(vec!["message", "record"]),
            condition()
        )
            .prop_map(|(n, kind, guard)| format!("event {n} = {kind}\n    where {guard}")),
        name().prop_map(|n| format!("initial {n}")),
        names(name()).prop_map(|n| format!("accept {n}")),
        names(name()).prop_map(|n| format!("state {n}")),
        names(name()).prop_map(|n| format!("hot {n}")),
        prop::sample::select(vec!["otherwise reject", "otherwise ignore"]).prop_map(str::to_string),
        names(path()).prop_map(|p| format!("per {p}")),
        (name(), name(), names(name())).prop_map(|(a, b, e)| format!("{a} -> {b} on {e}")),
        prop::collection::vec(name(), 1..5).prop_map(|e| format!("path {}", e.join(" -> "))),
        (
            prop_oneof![Just("*".to_string()), names(name())],
            names(name())
        )
            .prop_map(|(s, e)| format!("forbid {s} on {e}: \"no \\\"way\\\" #1\"")),
    ]
}

/// What goes after a statement: its line end (maybe with a comment), and blank or
/// comment lines.
fn separator() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "\n",
        "\n",
        "\n",
        "\n\n",
        "\n\n\n",
        "  # trailing\n",
        "\n# leading\n",
        "\n\n# leading after a blank\n",
        "\n    # below, indented\n",
        "\n# block\n\n",
    ])
}

fn spec_text() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["", "# header\n\n", "\n"]),
        prop::collection::vec((statement(), separator()), 0..12),
    )
        .prop_map(|(head, items)| {
            let mut text = head.to_string();
            for (statement, separator) in items {
                text.push_str(&statement);
                text.push_str(separator);
            }
            text
        })
}

fn comment_texts(file: &tracegate::spec::ast::SpecFile) -> Vec<String> {
    let mut texts: Vec<String> = file
        .comments
        .iter()
        .map(|c| c.text.trim_end().to_string())
        .collect();
    texts.sort();
    texts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn fmt_keeps_the_syntax_tree_and_is_idempotent(text in spec_text()) {
        let Ok(before) = parse(&text) else {
            // Generated text is meant to parse; the few that do not test nothing.
            return Ok(());
        };
        let formatted = fmt(&text);
        let after = match parse(&formatted) {
            Ok(after) => after,
            Err(errors) => {
                return Err(TestCaseError::fail(format!(
                    "formatted text does not parse: {errors:#?}\n--- source\n{text}\n--- formatted\n{formatted}"
                )));
            }
        };
        prop_assert_eq!(
            without_spans(&canonical_order(&before)),
            without_spans(&after),
            "\n--- source\n{}\n--- formatted\n{}", text, formatted
        );
        prop_assert_eq!(comment_texts(&before), comment_texts(&after));
        let again = fmt(&formatted);
        prop_assert_eq!(&again, &formatted, "\n--- source\n{}", text);
    }
}

#[test]
fn a_spec_that_is_not_utf8_is_unreadable_input_named_in_the_message_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.tg");
    std::fs::write(&path, b"event a = call x\n\xff\n").unwrap();
    let output = run(&["fmt", path.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stdout(&output), "");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        format!(
            "error[unreadable-input]: cannot read `{}`: invalid utf-8 sequence of 1 bytes from index 17\n = help: spec files are UTF-8 text\n\n",
            path.display()
        )
    );
}
