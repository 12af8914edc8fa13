//! The outputs made for CI: SARIF (validated against the official schema), JUnit XML
//! (well-formed, with consistent counts), GitHub workflow commands and step summary,
//! the HTML report's file, and the everyday flags (`--color`, `--quiet`, completions,
//! the manual page).

use serde_json::Value;

use crate::util::{root, run, stdout, tracegate};

/// The summary of a `--output json` run over the same inputs: (violations, errors).
fn json_counts(args: &[&str]) -> (u64, u64) {
    let mut line = vec!["check", "--output", "json"];
    line.extend_from_slice(args);
    let out = stdout(&run(&line));
    let summary: Value =
        serde_json::from_str(out.lines().last().expect("a summary")).expect("JSON summary");
    (
        summary["violations"].as_u64().expect("violations"),
        summary["errors"].as_u64().expect("errors"),
    )
}

#[track_caller]
pub(crate) fn assert_valid_sarif(text: &str) -> Value {
    let schema_text =
        std::fs::read_to_string(root().join("tests/fixtures/sarif/sarif-schema-2.1.0.json"))
            .expect("the vendored schema");
    let schema: Value = serde_json::from_str(&schema_text).expect("the schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let log: Value = serde_json::from_str(text).expect("SARIF is JSON");
    let errors: Vec<String> = validator
        .iter_errors(&log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "SARIF does not validate: {errors:#?}");
    log
}

/// A directory with one broken spec, one good spec and a malformed trace.
fn broken_project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a scratch directory");
    std::fs::create_dir_all(dir.path().join("specs")).expect("mkdir");
    std::fs::create_dir_all(dir.path().join("traces")).expect("mkdir");
    std::fs::write(
        dir.path().join("specs/bad.tg"),
        "spec bad\ninitial a\na -> b on nothing\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("traces/t.jsonl"), "{not json\n").expect("write");
    dir
}

#[test]
fn sarif_validates_and_has_a_result_per_finding() {
    let out = run(&["check", "--output", "sarif"]);
    assert_eq!(out.status.code(), Some(1));
    let log = assert_valid_sarif(&stdout(&out));
    let sarif_run = &log["runs"][0];
    let rules: Vec<&str> = sarif_run["tool"]["driver"]["rules"]
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| r["id"].as_str().expect("an id"))
        .collect();
    assert!(rules.contains(&"forbidden-transition") && rules.contains(&"malformed-record"));
    let results = sarif_run["results"].as_array().expect("results");
    let (violations, errors) = json_counts(&[]);
    assert_eq!(results.len() as u64, violations + errors);
    for result in results {
        let rule = result["ruleId"].as_str().expect("ruleId");
        let index = result["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index], rule);
        assert_eq!(result["level"], "error");
        let location = &result["locations"][0]["physicalLocation"];
        let uri = location["artifactLocation"]["uri"].as_str().expect("a uri");
        assert!(uri.starts_with("traces/"), "{uri}");
        assert!(location["region"]["startLine"].as_u64().expect("a line") >= 1);
        assert!(
            result["partialFingerprints"]["tracegate/v1"].is_string(),
            "{result}"
        );
    }
    let violation = results
        .iter()
        .find(|r| r["ruleId"] == "forbidden-transition" && r["codeFlows"].is_array())
        .expect("a violation with its path");
    assert!(
        violation["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .expect("the rule's file")
            .starts_with("specs/")
    );
    let documents = results
        .iter()
        .filter(|r| r["locations"][0]["properties"]["pointer"].is_string())
        .count();
    assert!(documents > 0, "document formats carry their JSON pointer");
    let prints: std::collections::BTreeSet<&str> = results
        .iter()
        .map(|r| {
            r["partialFingerprints"]["tracegate/v1"]
                .as_str()
                .expect("a print")
        })
        .collect();
    assert_eq!(
        prints.len(),
        results.len(),
        "fingerprints tell findings apart"
    );
}

#[test]
fn sarif_of_errors_validates_and_notifies_what_has_no_place() {
    let dir = broken_project();
    let out = tracegate()
        .current_dir(dir.path())
        .args(["check", "--output", "sarif"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let log = assert_valid_sarif(&stdout(&out));
    let result = &log["runs"][0]["results"][0];
    assert_eq!(result["ruleId"], "unknown-event");
    assert_eq!(
        result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        "specs/bad.tg"
    );
    assert_eq!(
        log["runs"][0]["invocations"][0]["executionSuccessful"],
        false
    );

    let empty = tempfile::tempdir().expect("a scratch directory");
    for sub in ["specs", "traces"] {
        std::fs::create_dir(empty.path().join(sub)).expect("mkdir");
    }
    let out = tracegate()
        .current_dir(empty.path())
        .args(["check", "--output", "sarif"])
        .output()
        .expect("runs");
    let log = assert_valid_sarif(&stdout(&out));
    let notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .expect("notifications");
    assert_eq!(notes[0]["descriptor"]["id"], "no-input");
    assert_eq!(log["runs"][0]["results"].as_array().map(Vec::len), Some(0));
}

#[test]
fn lint_warnings_are_sarif_warnings_and_github_warnings() {
    let out = run(&["lint", "tests/fixtures/lint", "--output", "sarif"]);
    assert_eq!(out.status.code(), Some(0));
    let log = assert_valid_sarif(&stdout(&out));
    let results = log["runs"][0]["results"].as_array().expect("results");
    assert!(!results.is_empty());
    for result in results {
        assert_eq!(result["level"], "warning", "{result}");
        let uri = &result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"];
        assert!(
            uri.as_str()
                .expect("a uri")
                .starts_with("tests/fixtures/lint/")
        );
    }
    let github = stdout(&run(&["lint", "tests/fixtures/lint", "--output", "github"]));
    let warnings = github
        .lines()
        .filter(|l| l.starts_with("::warning file="))
        .count();
    assert_eq!(warnings, results.len());
}

#[test]
fn sarif_and_junit_structure_do_not_depend_on_the_thread_count() {
    let sarif = |jobs: &str| stdout(&run(&["check", "--output", "sarif", "-j", jobs]));
    assert_eq!(sarif("1"), sarif("4"));
    // JUnit carries measured times; everything else is the same.
    let junit = |jobs: &str| {
        let text = stdout(&run(&["check", "--output", "junit", "-j", jobs]));
        let times = regex::Regex::new(r#" time="[0-9.]+""#).expect("a regex");
        times.replace_all(&text, "").into_owned()
    };
    assert_eq!(junit("1"), junit("4"));
}

#[test]
fn sarif_names_and_fingerprints_do_not_depend_on_where_it_ran() {
    let from_root = run(&[
        "check",
        "specs/seed_protocol.tg",
        "--traces",
        "traces/seed_protocol",
        "--output",
        "sarif",
    ]);
    let from_below = tracegate()
        .current_dir(root().join("traces"))
        .args([
            "check",
            "../specs/seed_protocol.tg",
            "--traces",
            "seed_protocol",
            "--output",
            "sarif",
            "--sarif-root",
            "..",
        ])
        .output()
        .expect("runs");
    let places = |out: &std::process::Output| -> Vec<(String, String)> {
        let log: Value = serde_json::from_str(&stdout(out)).expect("SARIF");
        log["runs"][0]["results"]
            .as_array()
            .expect("results")
            .iter()
            .map(|r| {
                (
                    r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].to_string(),
                    r["partialFingerprints"]["tracegate/v1"].to_string(),
                )
            })
            .collect()
    };
    let have = places(&from_below);
    assert!(!have.is_empty());
    assert_eq!(have, places(&from_root));
}

#[test]
fn junit_is_well_formed_and_its_counts_add_up() {
    let out = run(&["check", "--output", "junit"]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let top = doc.root_element();
    assert_eq!(top.tag_name().name(), "testsuites");
    let attr = |node: roxmltree::Node<'_, '_>, name: &str| -> usize {
        node.attribute(name)
            .unwrap_or_else(|| panic!("no {name}"))
            .parse()
            .expect("a count")
    };
    let count = |node: roxmltree::Node<'_, '_>, tag: &str| {
        node.descendants().filter(|n| n.has_tag_name(tag)).count()
    };
    for element in std::iter::once(top).chain(top.children().filter(|n| n.is_element())) {
        assert_eq!(attr(element, "tests"), count(element, "testcase"));
        assert_eq!(attr(element, "failures"), count(element, "failure"));
        assert_eq!(attr(element, "errors"), count(element, "error"));
    }
    let (violations, errors) = json_counts(&[]);
    assert_eq!(count(top, "failure") as u64, violations);
    assert_eq!(errors, 0);
    let suites: Vec<&str> = top
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| n.attribute("name").expect("a name"))
        .collect();
    assert!(suites.contains(&"seed_protocol"), "{suites:?}");
    for case in top.descendants().filter(|n| n.has_tag_name("testcase")) {
        assert!(
            case.attribute("time")
                .expect("a time")
                .parse::<f64>()
                .is_ok()
        );
    }

    let dir = broken_project();
    let out = tracegate()
        .current_dir(dir.path())
        .args(["check", "--output", "junit"])
        .output()
        .expect("runs");
    let text = stdout(&out);
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let error = doc
        .descendants()
        .find(|n| n.has_tag_name("error"))
        .expect("a spec error is an error");
    assert_eq!(error.attribute("type"), Some("unknown-event"));
}

#[test]
fn github_annotations_and_the_step_summary() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").expect("write");
    let out = tracegate()
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["check", "--output", "github"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    let (violations, _) = json_counts(&[]);
    let errors: Vec<&str> = text.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(errors.len() as u64, violations);
    for line in &errors {
        let (properties, message) = line["::error ".len()..]
            .split_once("::")
            .expect("properties::message");
        assert!(properties.starts_with("file=traces/"), "{line}");
        assert!(
            properties.contains(",line=") && properties.contains(",title="),
            "{line}"
        );
        assert!(!message.contains('\n') && !message.contains('\r'));
    }
    assert!(
        text.lines()
            .last()
            .expect("a last line")
            .starts_with("::notice title=tracegate::")
    );
    let written = std::fs::read_to_string(&summary).expect("the step summary");
    assert!(
        written.starts_with("earlier step\n## tracegate: ❌ violations"),
        "{written}"
    );
    assert!(
        written.contains("| seed_protocol | `forbidden-transition` | 1 |"),
        "{written}"
    );
}

#[test]
fn the_html_report_is_one_self_contained_file_beside_any_output() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let report = dir.path().join("report.html");
    let out = tracegate()
        .args(["check", "--output", "json", "--report"])
        .arg(&report)
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).contains("\"type\":\"summary\""),
        "stdout keeps its format"
    );
    let html = std::fs::read_to_string(&report).expect("the report is written");
    assert!(html.starts_with("<!DOCTYPE html>"));
    for external in ["src=\"http", "href=\"http", "@import", "url(http"] {
        assert!(
            !html.contains(external),
            "{external} fetches from the network"
        );
    }
    assert_eq!(
        html.matches("<template id=\"graph-").count(),
        std::fs::read_dir(crate::util::root().join("specs"))
            .expect("specs/ exists")
            .filter(|e| e.as_ref().expect("an entry").path().extension() == Some("tg".as_ref()))
            .count(),
        "a graph per spec"
    );
    let again = dir.path().join("again.html");
    tracegate()
        .args(["check", "-q", "--report"])
        .arg(&again)
        .output()
        .expect("runs");
    assert_eq!(
        std::fs::read(&again).expect("written"),
        html.as_bytes(),
        "the same run gives the same bytes"
    );
}

#[test]
fn color_and_quiet() {
    let line = ["check", "specs", "--traces", "traces/seed_protocol/fail"];
    let plain = run(&line);
    assert!(!stdout(&plain).contains('\u{1b}'), "no colour in a pipe");
    let mut always = line.to_vec();
    always.extend(["--color", "always"]);
    assert!(stdout(&run(&always)).contains('\u{1b}'));
    let quiet = run(&[&line[..], &["-q"]].concat());
    assert_eq!(quiet.status.code(), Some(1), "the status is kept");
    assert!(quiet.stdout.is_empty());
}

#[test]
fn completions_and_the_manual_page_name_the_commands() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = run(&["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}");
        let script = stdout(&out);
        assert!(
            script.contains("tracegate") && script.contains("sarif-root"),
            "{shell}"
        );
    }
    let man = stdout(&run(&["man"]));
    assert!(man.contains(".TH tracegate"), "{man}");
    assert!(man.contains("completions"));
}

/// The bytes of each CI output for one small run, pinned (JUnit's measured times
/// masked; SARIF pretty-printed here for a readable snapshot, without its rules, whose
/// text is `explain`'s).
#[test]
fn ci_outputs_are_pinned() {
    let line = |output: &str| {
        stdout(&run(&[
            "check",
            "specs/seed_protocol.tg",
            "--traces",
            "traces/seed_protocol/fail",
            "--output",
            output,
        ]))
    };
    insta::assert_snapshot!("github", line("github"));
    let times = regex::Regex::new(r#" time="[0-9.]+""#).expect("a regex");
    insta::assert_snapshot!("junit", times.replace_all(&line("junit"), r#" time="T""#));
    let mut log: Value = serde_json::from_str(&line("sarif")).expect("SARIF");
    log["runs"][0]["tool"]["driver"]["rules"] = Value::Null;
    insta::assert_snapshot!("sarif", serde_json::to_string_pretty(&log).expect("JSON"));
}
