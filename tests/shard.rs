//! `check --shard K/N`: the N parts of a run, by trace file or by trace key, check
//! together exactly what the run checks, and part K/N is a usage error unless
//! 1 ≤ K ≤ N.

use serde_json::Value;

use crate::util::{root, run, stdout, tracegate};

/// A run's findings as sorted JSON Lines, and its summary.
fn findings_and_summary(text: &str) -> (Vec<String>, Value) {
    let mut findings = Vec::new();
    let mut summary = None;
    for line in text.lines() {
        let value: Value = serde_json::from_str(line).expect("JSON Lines");
        if value["type"] == "summary" {
            summary = Some(value);
        } else {
            findings.push(line.to_string());
        }
    }
    findings.sort();
    (findings, summary.expect("a summary line"))
}

const COUNTS: [&str; 4] = ["traces", "records", "violations", "errors"];

/// Runs `args` whole and in `n` shards; asserts the shards' findings are the whole
/// run's and their counts add up to its counts.
fn assert_shards_make_the_run(args: &[&str], n: u64) {
    let whole = run(args);
    let (want, want_summary) = findings_and_summary(&stdout(&whole));
    assert!(!want.is_empty(), "the run finds something to split");
    let mut got = Vec::new();
    let mut sums = [0u64; 4];
    let mut worst = 0;
    for k in 1..=n {
        let shard = format!("{k}/{n}");
        let mut sharded = args.to_vec();
        sharded.extend(["--shard", shard.as_str()]);
        let output = run(&sharded);
        let (findings, summary) = findings_and_summary(&stdout(&output));
        assert_eq!(
            summary["specs"], want_summary["specs"],
            "every shard loads every spec"
        );
        for (sum, count) in sums.iter_mut().zip(COUNTS) {
            *sum += summary[count].as_u64().expect("a count");
        }
        worst = worst.max(output.status.code().expect("an exit status"));
        got.extend(findings);
    }
    got.sort();
    assert_eq!(got, want, "{n} shards of {args:?}");
    for (sum, count) in sums.iter().zip(COUNTS) {
        assert_eq!(
            Some(*sum),
            want_summary[count].as_u64(),
            "{count} of {n} shards"
        );
    }
    assert_eq!(
        Some(worst),
        whole.status.code(),
        "the worst shard fails as the run does"
    );
}

#[test]
fn shards_by_file_make_the_run_over_the_shipped_library() {
    // The project file pairs every shipped spec with its traces.
    for n in [1, 2, 3, 7] {
        assert_shards_make_the_run(&["check", "--output", "json"], n);
    }
}

/// Every shipped seed_protocol trace, each a case (`case` is `pass/NAME` or
/// `fail/NAME`), in one JSONL file written in `dir`; returns its path.
pub fn seed_protocol_cases(dir: &std::path::Path) -> String {
    let mut cases = String::new();
    for outcome in ["pass", "fail"] {
        let traces = root().join("traces/seed_protocol").join(outcome);
        let mut files: Vec<_> = std::fs::read_dir(&traces)
            .expect("the traces")
            .map(|entry| entry.expect("an entry").path())
            .collect();
        files.sort();
        for file in files {
            let name = file
                .file_stem()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&file).expect("the trace");
            for line in text.lines() {
                let mut record: Value = serde_json::from_str(line).expect("a record");
                record["case"] = Value::String(format!("{outcome}/{name}"));
                cases.push_str(&format!("{record}\n"));
            }
        }
    }
    let file = dir.join("cases.jsonl");
    std::fs::write(&file, cases).expect("the cases are written");
    file.to_string_lossy().into_owned()
}

#[test]
fn shards_by_trace_key_make_the_run() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let file = seed_protocol_cases(dir.path());
    let args = [
        "check",
        "specs/seed_protocol.tg",
        "--traces",
        file.as_str(),
        "--trace-by",
        "case",
        "--output",
        "json",
    ];
    for n in [2, 3, 4] {
        assert_shards_make_the_run(&args, n);
    }
}

#[test]
fn a_shard_is_the_same_on_every_run_and_wherever_it_runs() {
    let args = ["check", "--output", "json", "--shard", "2/3"];
    let first = run(&args);
    let again = run(&args);
    assert_eq!(first.stdout, again.stdout);
    // From a subdirectory, the project file is found upward and files are named
    // relative to it, so the same files fall to the same shard.
    let from_below = tracegate()
        .current_dir(root().join("specs"))
        .args(args)
        .output()
        .expect("tracegate runs");
    let (below, _) = findings_and_summary(&stdout(&from_below));
    let (here, _) = findings_and_summary(&stdout(&first));
    let files = |lines: &[String]| -> Vec<String> {
        lines
            .iter()
            .map(|line| {
                let value: Value = serde_json::from_str(line).expect("JSON");
                let file = value["file"].as_str().unwrap_or_default().to_string();
                file.trim_start_matches("../").to_string()
            })
            .collect()
    };
    assert_eq!(files(&below), files(&here));
}

#[test]
fn a_shard_outside_one_to_n_is_a_usage_error() {
    for bad in ["0/3", "4/3", "1/0", "2", "a/b", "1/2/3"] {
        let output = run(&["check", "--shard", bad]);
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("error[usage-error]: invalid --shard"),
            "{bad}: {err}"
        );
        assert!(output.stdout.is_empty(), "{bad}: nothing is checked");
    }
    let output = run(&["check", "--shard", "1/2", "--join"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("--shard cannot split a --join run"));
}
