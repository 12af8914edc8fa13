//! `tracegate merge`: the reports of `check --shard K/N` merged into one are the
//! report of the whole run: SARIF that validates with every result, JUnit whose counts
//! add up, JSON Lines with every finding and one summary.

use std::path::Path;

use serde_json::Value;

use crate::ci_outputs::assert_valid_sarif;
use crate::util::{run, stdout};

const SHARDS: u64 = 3;

/// The whole shipped library's report in `output`, and the reports of its shards
/// written to files in `dir`.
fn whole_and_shards(output: &str, dir: &Path) -> (String, Vec<String>) {
    let whole = stdout(&run(&["check", "--output", output]));
    let files = (1..=SHARDS)
        .map(|k| {
            let shard = format!("{k}/{SHARDS}");
            let text = stdout(&run(&["check", "--output", output, "--shard", &shard]));
            let file = dir.join(format!("shard-{k}.{output}"));
            std::fs::write(&file, text).expect("the shard's report is written");
            file.to_string_lossy().into_owned()
        })
        .collect();
    (whole, files)
}

fn merge(format: &str, files: &[String]) -> String {
    let mut args = vec!["merge", "--format", format];
    args.extend(files.iter().map(String::as_str));
    let output = run(&args);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout(&output)
}

/// What identifies each SARIF result, sorted.
fn results(log: &Value) -> Vec<String> {
    let mut found: Vec<String> = log["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            format!(
                "{} {} {} {}",
                r["ruleId"],
                r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                r["locations"][0]["physicalLocation"]["region"]["startLine"],
                r["message"]["text"]
            )
        })
        .collect();
    found.sort();
    found
}

#[test]
fn merged_sarif_validates_and_holds_every_result_of_the_run() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let (whole, files) = whole_and_shards("sarif", dir.path());
    let merged = assert_valid_sarif(&merge("sarif", &files));
    let whole = assert_valid_sarif(&whole);
    assert_eq!(merged["runs"].as_array().map(Vec::len), Some(1), "one run");
    assert!(!results(&whole).is_empty());
    assert_eq!(results(&merged), results(&whole));
    let prints: std::collections::BTreeSet<String> = merged["runs"][0]["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["partialFingerprints"].to_string())
        .collect();
    assert_eq!(
        prints.len(),
        results(&merged).len(),
        "fingerprints stay unique"
    );
    let rules = |log: &Value| log["runs"][0]["tool"]["driver"]["rules"].clone();
    assert_eq!(rules(&merged), rules(&whole));
    for result in merged["runs"][0]["results"].as_array().expect("results") {
        let index = result["ruleIndex"].as_u64().expect("a rule index") as usize;
        assert_eq!(rules(&merged)[index]["id"], result["ruleId"]);
    }
}

/// Root and per-suite counts of a JUnit report, checked against its elements.
fn junit_counts(text: &str) -> Vec<(String, usize, usize, usize)> {
    let document = roxmltree::Document::parse(text).expect("JUnit is XML");
    let root = document.root_element();
    let mut counts = Vec::new();
    let count = |node: roxmltree::Node<'_, '_>, name: &str| -> usize {
        node.attribute(name)
            .and_then(|n| n.parse().ok())
            .expect("a count")
    };
    let elements = |node: roxmltree::Node<'_, '_>, name: &str| -> usize {
        node.descendants().filter(|n| n.has_tag_name(name)).count()
    };
    for node in std::iter::once(root).chain(root.children().filter(|n| n.is_element())) {
        let name = node.attribute("name").unwrap_or_default().to_string();
        let tests = count(node, "tests");
        let failures = count(node, "failures");
        let errors = count(node, "errors");
        assert_eq!(tests, elements(node, "testcase"), "{name}: tests");
        assert_eq!(failures, elements(node, "failure"), "{name}: failures");
        assert_eq!(errors, elements(node, "error"), "{name}: errors");
        counts.push((name, tests, failures, errors));
    }
    counts
}

#[test]
fn merged_junit_counts_add_up_to_the_run() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let (whole, files) = whole_and_shards("junit", dir.path());
    let merged = merge("junit", &files);
    let mut merged_counts = junit_counts(&merged);
    let mut whole_counts = junit_counts(&whole);
    let root = |counts: &mut Vec<(String, usize, usize, usize)>| counts.remove(0);
    assert_eq!(root(&mut merged_counts), root(&mut whole_counts));
    merged_counts.sort();
    whole_counts.sort();
    assert_eq!(merged_counts, whole_counts, "per spec");
    // One report merged alone is itself.
    let one = std::fs::read_to_string(&files[0]).expect("the shard's report");
    assert_eq!(merge("junit", &files[..1]), one);
}

#[test]
fn merged_json_lines_are_the_run() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let (whole, files) = whole_and_shards("json", dir.path());
    let merged = merge("json", &files);
    let split = |text: &str| {
        let mut lines: Vec<&str> = text.lines().collect();
        let summary = lines.pop().expect("a summary").to_string();
        lines.sort_unstable();
        (lines.join("\n"), summary)
    };
    assert_eq!(split(&merged), split(&whole));
}

#[test]
fn a_report_that_is_not_one_says_which_file_and_why() {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let bad = dir.path().join("bad.xml");
    std::fs::write(&bad, "<testsuites><nope/></testsuites>").expect("written");
    let output = run(&["merge", "--format", "junit", &bad.to_string_lossy()]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("bad.xml:1:13: expected `<testsuite>`, found `<nope>`"),
        "{err}"
    );
    let output = run(&["merge", "--format", "sarif", "no-such-report.sarif"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("error[unreadable-input]"));
}

#[test]
fn merge_and_shard_have_help_completions_and_a_manual_page() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let script = stdout(&run(&["completions", shell]));
        assert!(
            script.contains("merge") && script.contains("shard"),
            "{shell}"
        );
    }
    let man = stdout(&run(&["man"]));
    assert!(man.contains("tracegate\\-merge"), "{man}");
    let help = run(&["help", "merge"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(stdout(&help).contains("--format <FORMAT>"));
    let check = stdout(&run(&["check", "--help"]));
    assert!(check.contains("--shard <K/N>"), "{check}");
}

/// Runs `args` (a `coverage --output json` command line) whole and in `n` parts,
/// writing each part's report to `dir`; returns the whole report and the parts' files.
fn coverage_whole_and_parts(args: &[&str], n: u64, dir: &Path) -> (String, Vec<String>) {
    let whole = run(args);
    assert_eq!(whole.status.code(), Some(0), "{args:?}");
    let files = (1..=n)
        .map(|k| {
            let shard = format!("{k}/{n}");
            let mut part = args.to_vec();
            part.extend(["--shard", shard.as_str()]);
            let output = run(&part);
            assert_eq!(output.status.code(), Some(0), "{part:?}");
            let file = dir.join(format!("coverage-{k}-of-{n}.json"));
            std::fs::write(&file, stdout(&output)).expect("the part's report is written");
            file.to_string_lossy().into_owned()
        })
        .collect();
    (stdout(&whole), files)
}

#[test]
fn merged_coverage_of_the_parts_is_the_coverage_of_the_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // By file, over the shipped library (the project file pairs specs and traces).
    for n in [2, 3, 7] {
        let (whole, files) =
            coverage_whole_and_parts(&["coverage", "--output", "json"], n, dir.path());
        let parts: Vec<String> = files
            .iter()
            .map(|f| std::fs::read_to_string(f).expect("read"))
            .collect();
        assert!(
            parts.iter().all(|part| *part != whole),
            "no part alone is the run ({n} parts)"
        );
        assert_eq!(merge("coverage", &files), whole, "{n} parts by file");
    }
    // By trace key: the shipped seed_protocol traces as cases of one file.
    let file = crate::shard::seed_protocol_cases(dir.path());
    let args = [
        "coverage",
        "specs/seed_protocol.tg",
        "--traces",
        file.as_str(),
        "--trace-by",
        "case",
        "--output",
        "json",
    ];
    for n in [2, 4] {
        let (whole, files) = coverage_whole_and_parts(&args, n, dir.path());
        assert_eq!(merge("coverage", &files), whole, "{n} parts by trace key");
    }
}

#[test]
fn merged_coverage_judges_min_for_the_whole_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let spec = dir.path().join("half.tg");
    std::fs::write(
        &spec,
        "spec half\nevent a = call a\nevent b = call b\nevent c = call c\ninitial x\n\
         x -> y on a\ny -> x on b\ny -> y on c\n",
    )
    .expect("the spec is written");
    // Each file makes one transition; together they make two of three.
    for (name, tool) in [("one", "a"), ("two", "b")] {
        let text = if tool == "a" {
            "{\"kind\":\"call\",\"tool\":\"a\"}\n".to_string()
        } else {
            "{\"kind\":\"call\",\"tool\":\"a\"}\n{\"kind\":\"call\",\"tool\":\"b\"}\n".to_string()
        };
        std::fs::create_dir_all(dir.path().join("traces")).expect("a directory");
        std::fs::write(dir.path().join(format!("traces/{name}.jsonl")), text).expect("written");
    }
    let spec = spec.to_string_lossy().into_owned();
    let traces = dir.path().join("traces").to_string_lossy().into_owned();
    let args = [
        "coverage",
        spec.as_str(),
        "--traces",
        traces.as_str(),
        "--output",
        "json",
    ];
    let (whole, files) = coverage_whole_and_parts(&args, 2, dir.path());
    assert_eq!(merge("coverage", &files), whole);
    let judged = |min: &str| {
        let mut args = vec!["merge", "--format", "coverage", "--min", min];
        args.extend(files.iter().map(String::as_str));
        let output = run(&args);
        let summary: Value =
            serde_json::from_str(stdout(&output).lines().last().expect("a summary")).expect("JSON");
        (output.status.code(), summary)
    };
    let (status, summary) = judged("66");
    assert_eq!(status, Some(0), "{summary}");
    assert_eq!(summary["below"], serde_json::json!([]));
    let (status, summary) = judged("67");
    assert_eq!(status, Some(1), "two of three transitions is below 67 %");
    assert_eq!(summary["below"], serde_json::json!(["half"]));
    assert_eq!(summary["min"], serde_json::json!(67.0));
    // A part cannot judge the whole run, and a check report has no coverage.
    let output = run(&["coverage", "--shard", "1/2", "--min", "50"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--min cannot judge one part"));
    let output = run(&["merge", "--format", "json", "--min", "50", &files[0]]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--min applies to --format coverage"));
}

#[test]
fn coverage_of_other_specs_does_not_merge() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let seed = stdout(&run(&[
        "coverage",
        "specs/seed_protocol.tg",
        "--output",
        "json",
    ]));
    let other = stdout(&run(&[
        "coverage",
        "specs/respect_retry_after.tg",
        "--output",
        "json",
    ]));
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, seed).expect("written");
    std::fs::write(&b, other).expect("written");
    let output = run(&[
        "merge",
        "--format",
        "coverage",
        &a.to_string_lossy(),
        &b.to_string_lossy(),
    ]);
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{err}");
    assert!(
        err.contains("b.json: spec `respect_retry_after` differs from"),
        "{err}"
    );
    assert!(output.stdout.is_empty());
}
