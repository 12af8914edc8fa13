//! `tracegate lint`: one fixture per warning code in `tests/fixtures/lint/<code>/` (a spec,
//! and a trace for the codes that need `--traces`) that yields exactly that code; the
//! spec errors of `check`, reported alike; exit statuses; the JSON shape of warnings; and
//! the language reference's table of codes.

use std::collections::BTreeSet;

use serde::Deserialize;
use tracegate::diagnostic::{Category, Code};

use crate::json_contract::ErrorLine;
use crate::util::{root, run, spec, stdout};

fn fixture_dirs(base: &str) -> Vec<String> {
    let mut dirs: Vec<String> = std::fs::read_dir(root().join(base))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    dirs
}

fn has_trace(dir: &str) -> bool {
    std::fs::read_dir(root().join(dir))
        .unwrap()
        .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "jsonl"))
}

/// Lints `dir` (with its traces, if it has any) and returns the exit status and the
/// codes of the findings.
fn lint_codes(dir: &str, extra: &[&str]) -> (Option<i32>, BTreeSet<String>, String) {
    let mut args = vec!["lint", dir, "--output", "json"];
    if has_trace(dir) {
        args.extend(["--traces", dir]);
    }
    args.extend(extra);
    let output = run(&args);
    let text = stdout(&output);
    let codes = text
        .lines()
        .filter_map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["code"].as_str().map(str::to_string)
        })
        .collect();
    (output.status.code(), codes, text)
}

#[test]
fn each_lint_fixture_yields_exactly_its_code() {
    let fixtures = fixture_dirs("tests/fixtures/lint");
    assert!(!fixtures.is_empty());
    for name in &fixtures {
        let code = Code::from_name(name).unwrap_or_else(|| panic!("`{name}` is not a code"));
        assert_eq!(code.category(), Category::Warning, "{name}");
        let dir = format!("tests/fixtures/lint/{name}");
        let (status, codes, text) = lint_codes(&dir, &[]);
        assert_eq!(codes, BTreeSet::from([name.clone()]), "{name}:\n{text}");
        assert_eq!(status, Some(0), "warnings alone exit 0:\n{text}");
        let (status, _, text) = lint_codes(&dir, &["--deny", "warnings"]);
        assert_eq!(status, Some(1), "denied warnings exit 1:\n{text}");
    }
}

#[test]
fn every_warning_code_has_a_lint_fixture() {
    let fixtures: BTreeSet<String> = fixture_dirs("tests/fixtures/lint").into_iter().collect();
    for &code in Code::ALL {
        // `check` gives this one, not `lint`: its fixture is in tests/fixtures/codes/.
        if code.category() == Category::Warning && code != Code::ProvenanceLimit {
            assert!(
                fixtures.contains(code.as_str()),
                "no fixture in tests/fixtures/lint/ triggers `{code}`"
            );
        }
    }
}

#[test]
fn lint_reports_spec_errors_as_check_does() {
    for name in fixture_dirs("tests/fixtures/codes") {
        let dir = format!("tests/fixtures/codes/{name}");
        // Fixtures with traces are run-time codes; `lint` reads no trace by default.
        if has_trace(&dir) {
            continue;
        }
        // A code about the command line itself has a `command` file and no spec.
        if crate::util::fixture_command(&name).is_some() {
            continue;
        }
        let (status, codes, text) = lint_codes(&dir, &[]);
        assert_eq!(codes, BTreeSet::from([name.clone()]), "{name}:\n{text}");
        assert_eq!(status, Some(2), "{name} is an error:\n{text}");
    }
}

#[test]
fn the_shipped_library_lints_clean() {
    let output = run(&["lint", "specs", "--deny", "warnings", "--output", "json"]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
    let summary: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(summary["warnings"], 0);
    assert_eq!(summary["errors"], 0);
}

#[test]
fn the_shipped_traces_exercise_every_tool_the_shipped_specs_name() {
    // Tools in the corpus that no spec mentions (protocol methods of some formats,
    // say) are fine; a tool a spec names that the corpus never uses is not.
    let (status, codes, text) = lint_codes("specs", &["--traces", "traces"]);
    assert_ne!(status, Some(2), "{text}");
    assert!(codes.iter().all(|code| code == "unmatched-tool"), "{text}");
    let summary: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert!(summary["traces"].as_u64().unwrap() > 0, "{text}");
}

#[test]
fn human_output_says_warning_with_code_span_and_hint() {
    let output = run(&["lint", "tests/fixtures/lint/unused-event"]);
    let text = stdout(&output);
    assert!(
        text.contains("warning[unused-event]: event `lookup` is used by no transition"),
        "{text}"
    );
    assert!(
        text.contains("tests/fixtures/lint/unused-event/spec.tg:6:7"),
        "{text}"
    );
    assert!(text.contains("help: "), "{text}");
    assert!(text.ends_with("linted 1 spec: 1 warning\n"), "{text}");

    let clean = stdout(&run(&["lint", "specs/seed_protocol.tg"]));
    assert_eq!(clean, "linted 1 spec: no findings\n");
}

#[test]
fn did_you_mean_for_tool_typos() {
    let (_, _, text) = lint_codes("tests/fixtures/lint/unmatched-tool", &[]);
    assert!(text.contains("did you mean `create_record`?"), "{text}");
    let output = run(&[
        "lint",
        "tests/fixtures/lint/unseen-tool",
        "--traces",
        "tests/fixtures/lint/unmatched-tool",
    ]);
    let text = stdout(&output);
    // The spec names `attach_notes`; these traces call `create_recrod` too.
    assert!(text.contains("warning[unseen-tool]"), "{text}");
    assert!(text.contains("did you mean `create_record`?"), "{text}");
}

#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
enum LintLine {
    /// A warning has the shape of an error.
    Warning(ErrorLine),
    Error(ErrorLine),
    Summary {
        specs: usize,
        traces: u64,
        records: u64,
        violations: u64,
        errors: u64,
        warnings: u64,
    },
}

#[test]
fn json_lines_are_the_documented_shapes() {
    for dir in fixture_dirs("tests/fixtures/lint") {
        let (_, _, text) = lint_codes(&format!("tests/fixtures/lint/{dir}"), &[]);
        let lines: Vec<LintLine> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect();
        assert!(
            matches!(lines.first(), Some(LintLine::Warning(_))),
            "{text}"
        );
        assert!(
            matches!(lines.last(), Some(LintLine::Summary { warnings: 1, .. })),
            "{text}"
        );
    }
    // `check` output is unchanged: its summary has no `warnings`.
    let check = stdout(&run(&[
        "check",
        "specs",
        "--traces",
        "traces/seed_protocol/pass",
        "--output",
        "json",
    ]));
    let summary: serde_json::Value = serde_json::from_str(check.lines().last().unwrap()).unwrap();
    assert!(summary.get("warnings").is_none(), "{check}");
}

/// The warnings `lint_spec` gives a spec, as codes.
fn warnings(text: &str) -> Vec<String> {
    let machine = spec(text);
    let linted = tracegate::lint::Linted::new(&machine).expect("parses");
    tracegate::lint::lint_spec(&linted)
        .into_iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect()
}

const HEAD: &str = "initial idle\nidle -> idle on a, b\n";

#[test]
fn overlapping_patterns_are_decided_with_a_witness() {
    let cases = [
        // Exclusive statuses, tools, kinds: no overlap.
        (
            r#"event a = result x where status == "ok"
event b = result x where status == "error""#,
            false,
        ),
        ("event a = call x\nevent b = call y", false),
        ("event a = call x\nevent b = result x", false),
        // A regex that matches the other's tool name.
        (
            "event a = call /^create_/\nevent b = call create_record",
            true,
        ),
        (
            "event a = call /^create_/\nevent b = call delete_record",
            false,
        ),
        // A glob against a regex: a sample of one matches the other.
        (
            r#"event a = call "get_*"
event b = call /^(get|list)_user$/"#,
            true,
        ),
        // Guards: overlapping number ranges, disjoint ones, `in` lists.
        (
            "event a = result x where output.n > 3\nevent b = result x where output.n < 5",
            true,
        ),
        (
            "event a = result x where output.n > 5\nevent b = result x where output.n < 3",
            false,
        ),
        (
            r#"event a = result x where error.code in ["a", "b"]
event b = result x where error.code in ["b", "c"]"#,
            true,
        ),
        (
            r#"event a = result x where error.code in ["a"]
event b = result x where not (error.code in ["a"])"#,
            false,
        ),
        // Missing is distinct from null: `!= null` holds on a missing path.
        (
            "event a = result x where output.id != null\nevent b = result x where not (has output.id)",
            true,
        ),
        (
            "event a = result x where has output.id\nevent b = result x where not (has output.id)",
            false,
        ),
        // `record` covers every kind; `message` has no tool.
        (
            r#"event a = record where event == "done"
event b = message where role == "user""#,
            true,
        ),
        // Nested paths: an object built for both.
        (
            r#"event a = result x where output.a.b == 1
event b = result x where output.a is object and output.c == true"#,
            true,
        ),
        // `matches` on both sides.
        (
            "event a = message where text matches /^no\\b/i\nevent b = message where text matches /^NO/",
            true,
        ),
    ];
    for (events, overlap) in cases {
        let text = format!("{events}\n{HEAD}");
        let found = warnings(&text);
        let has = found.iter().any(|w| w.starts_with("overlapping-patterns"));
        assert_eq!(has, overlap, "{events}\n{found:#?}");
    }
}

#[test]
fn reachability_and_traps() {
    let found = warnings(
        "event a = call a\nevent b = call b\ninitial s\naccept s\n\
         s -> t on a\nt -> u on a\nu -> u on b\nv -> s on a\n",
    );
    assert_eq!(
        found,
        [
            "trap-state: no state that may end a trace can be reached from state `t`",
            "trap-state: no state that may end a trace can be reached from state `u`",
            "unreachable-state: state `v` is unreachable from the initial state `s`",
        ]
    );
    // A transition a forbid overrides does not make its target reachable.
    let found = warnings(
        "event a = call a\nevent b = call b\ninitial s\ns -> t on a\ns -> s on b\n\
         forbid s on a: \"no\"\n",
    );
    assert!(
        found
            .iter()
            .any(|w| w.starts_with("unreachable-state: state `t`")),
        "{found:#?}"
    );
    assert!(
        found.iter().any(|w| w.starts_with("shadowed-transition")),
        "{found:#?}"
    );
}

#[test]
fn paths_forbids_and_vacuity() {
    let found = warnings(
        "event a = call a\nevent b = call b\nevent c = call c\n\
         path a -> b\npath a -> b\npath a\n\
         forbid * on c: \"one\"\nforbid b on c: \"two\"\n",
    );
    let codes: Vec<&str> = found.iter().map(|w| w.split(':').next().unwrap()).collect();
    assert_eq!(
        codes,
        ["duplicate-path", "duplicate-path", "redundant-forbid"],
        "{found:#?}"
    );
    assert!(found.iter().any(|w| w.contains("prefix")), "{found:#?}");
    // `otherwise ignore` alone is not vacuous when a state may not end a trace.
    assert!(
        warnings(
            "event a = call a\ninitial s\nhot t\notherwise ignore\ns -> t on a\nt -> s on a\n"
        )
        .is_empty()
    );
}

#[test]
fn the_reference_lists_every_code_with_its_summary() {
    let reference = std::fs::read_to_string(root().join("specs/README.md")).unwrap();
    for &code in Code::ALL {
        let category = match code.category() {
            Category::Violation => "violation",
            Category::Error => "error",
            Category::Warning => "warning",
        };
        let row = format!("| `{code}` | {category} | {} |", code.summary());
        assert!(
            reference.contains(&row),
            "specs/README.md lacks the row\n{row}"
        );
    }
}

#[test]
fn help_spec_prints_the_reference() {
    let output = run(&["help", "spec"]);
    assert_eq!(output.status.code(), Some(0));
    let reference = std::fs::read_to_string(root().join("specs/README.md")).unwrap();
    assert_eq!(stdout(&output), reference);
    let lint_help = stdout(&run(&["help", "lint"]));
    assert!(lint_help.contains("--deny"), "{lint_help}");
    assert!(stdout(&run(&["help"])).contains("Commands:"));
    assert_eq!(run(&["help", "nonsense"]).status.code(), Some(2));
}
