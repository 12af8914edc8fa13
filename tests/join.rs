//! `check --join`: several logs merged by time into one stream per `--trace-by` key,
//! each record reported in its own file; the shipped client/fixture pairs.

use serde_json::Value;

use crate::util::{run, stdout};

/// A spec of two events that must come in order: `a` then `b`, per `id`.
const SPEC: &str = "spec a_then_b\nper id\nevent a = record where event == \"a\"\nevent b = record where event == \"b\"\ninitial s\naccept s, u\ns -> t on a\nt -> u on b\n";

/// A record: its time (empty for none), its `id` and its `event`.
type Line<'a> = (&'a str, &'a str, &'a str);

struct Logs {
    dir: tempfile::TempDir,
}

impl Logs {
    fn new(files: &[(&str, &[Line<'_>])]) -> Logs {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a_then_b.tg"), SPEC).unwrap();
        for (name, records) in files {
            let text: String = records
                .iter()
                .map(|(time, id, event)| {
                    let time = if time.is_empty() {
                        String::new()
                    } else {
                        format!("\"time\":\"{time}\",")
                    };
                    format!("{{{time}\"id\":\"{id}\",\"event\":\"{event}\"}}\n")
                })
                .collect();
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        Logs { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).to_str().unwrap().to_string()
    }

    /// `check --join --trace-by id` over `files` in this order: exit status and JSON lines.
    fn check(&self, files: &[&str]) -> (Option<i32>, Vec<Value>) {
        let spec = self.path("a_then_b.tg");
        let paths: Vec<String> = files.iter().map(|name| self.path(name)).collect();
        let mut args = vec![
            "check",
            &spec,
            "--join",
            "--trace-by",
            "id",
            "--output",
            "json",
        ];
        args.push("--traces");
        args.extend(paths.iter().map(String::as_str));
        let output = run(&args);
        let lines = stdout(&output)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (output.status.code(), lines)
    }
}

fn t(second: u32) -> String {
    format!("2025-04-12T10:18:{second:02}Z")
}

/// `(code, file name, line)` of each finding.
fn findings(lines: &[Value]) -> Vec<(String, String, u64)> {
    lines
        .iter()
        .filter(|line| line["type"] != "summary")
        .map(|line| {
            let file = line["file"].as_str().unwrap_or_default();
            let name = file.rsplit('/').next().unwrap_or_default().to_string();
            (
                line["code"].as_str().unwrap().to_string(),
                name,
                line["line"].as_u64().unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn interleaved_times_merge_into_one_stream_per_key() {
    let (t1, t2, t3, t4) = (t(1), t(2), t(3), t(4));
    // Alone, x.jsonl has a `b` before any `a` for op-2; joined, y.jsonl's `a` comes first.
    let logs = Logs::new(&[
        ("x.jsonl", &[(&t1, "op-1", "a"), (&t3, "op-2", "b")]),
        ("y.jsonl", &[(&t2, "op-2", "a"), (&t4, "op-1", "b")]),
    ]);
    let (status, lines) = logs.check(&["x.jsonl", "y.jsonl"]);
    assert_eq!(status, Some(0), "{lines:?}");
    let summary = lines.last().unwrap();
    assert_eq!(summary["records"], 4);
    assert_eq!(summary["traces"], 2);
    // Without --join each file is on its own, and x.jsonl fails.
    let spec = logs.path("a_then_b.tg");
    let alone = run(&["check", &spec, "--traces", &logs.path("x.jsonl")]);
    assert_eq!(alone.status.code(), Some(1));
}

#[test]
fn each_record_keeps_its_own_file_and_line() {
    let (t1, t2, t3) = (t(1), t(2), t(3));
    let logs = Logs::new(&[
        ("x.jsonl", &[(&t1, "op-1", "a"), (&t3, "op-1", "b")]),
        ("y.jsonl", &[(&t2, "op-1", "b")]),
    ]);
    let (status, lines) = logs.check(&["x.jsonl", "y.jsonl"]);
    assert_eq!(status, Some(1), "{lines:?}");
    // a (x:1), b (y:1), then b again (x:2) is not allowed in `u`.
    assert_eq!(
        findings(&lines),
        [("unexpected-event".into(), "x.jsonl".into(), 2)]
    );
    let path: Vec<(String, u64)> = lines[0]["path"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| {
            let file = step["file"].as_str().unwrap();
            (
                file.rsplit('/').next().unwrap().to_string(),
                step["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        path,
        [("x.jsonl".to_string(), 1), ("y.jsonl".to_string(), 1)]
    );
    // Human output names the file of every step too.
    let spec = logs.path("a_then_b.tg");
    let human = stdout(&run(&[
        "check",
        &spec,
        "--join",
        "--trace-by",
        "id",
        "--traces",
        &logs.path("x.jsonl"),
        &logs.path("y.jsonl"),
    ]));
    assert!(human.contains("y.jsonl:1)-->"), "{human}");
}

#[test]
fn equal_times_keep_file_order_then_line_order() {
    let t1 = t(1);
    let logs = Logs::new(&[
        ("first.jsonl", &[(&t1, "op-1", "a")]),
        ("second.jsonl", &[(&t1, "op-1", "b")]),
        ("both.jsonl", &[(&t1, "op-2", "a"), (&t1, "op-2", "b")]),
    ]);
    assert_eq!(logs.check(&["first.jsonl", "second.jsonl"]).0, Some(0));
    let (status, lines) = logs.check(&["second.jsonl", "first.jsonl"]);
    assert_eq!(status, Some(1));
    assert_eq!(
        findings(&lines),
        [("unexpected-event".into(), "second.jsonl".into(), 1)]
    );
    assert_eq!(logs.check(&["both.jsonl"]).0, Some(0));
}

#[test]
fn a_record_without_a_usable_time_is_a_located_error() {
    let (t1, t2) = (t(1), t(2));
    let logs = Logs::new(&[
        (
            "x.jsonl",
            &[
                (&t1, "op-1", "a"),
                ("", "op-1", "b"),
                ("2025-04-12", "op-1", "b"),
            ],
        ),
        ("y.jsonl", &[(&t2, "op-1", "b")]),
    ]);
    let (status, lines) = logs.check(&["x.jsonl", "y.jsonl"]);
    assert_eq!(status, Some(2), "{lines:?}");
    assert_eq!(
        findings(&lines),
        [
            ("unusable-time".into(), "x.jsonl".into(), 2),
            ("unusable-time".into(), "x.jsonl".into(), 3),
        ]
    );
    // The records that could be placed were still checked.
    assert_eq!(lines.last().unwrap()["records"], 2);
}

#[test]
fn a_file_out_of_time_order_is_reported_once_and_still_merged() {
    let (t1, t2, t3, t4, t5, t6) = (t(1), t(2), t(3), t(4), t(5), t(6));
    // x.jsonl goes back in time at line 2 and again at line 4.
    let logs = Logs::new(&[
        (
            "x.jsonl",
            &[
                (&t3, "op-1", "a"),
                (&t1, "op-2", "a"),
                (&t4, "op-1", "b"),
                (&t2, "op-3", "a"),
                (&t5, "op-3", "b"),
            ],
        ),
        ("y.jsonl", &[(&t6, "op-2", "b")]),
    ]);
    let (status, lines) = logs.check(&["x.jsonl", "y.jsonl"]);
    assert_eq!(status, Some(2), "{lines:?}");
    assert_eq!(
        findings(&lines),
        [("time-out-of-order".into(), "x.jsonl".into(), 2)]
    );
    let message = lines[0]["message"].as_str().unwrap();
    assert!(message.contains("may be checked out of order"), "{message}");
    assert_eq!(lines.last().unwrap()["records"], 6);
}

#[test]
fn the_shipped_witness_pairs_agree_and_disagree_only_when_joined() {
    let spec = "specs/fixture_agrees_with_tool.tg";
    // Each file conforms on its own, so the pairs live in pass/; joined, one pair agrees
    // and the other does not.
    let dir = "traces/fixture_agrees_with_tool/pass";
    for kind in ["agree", "disagree"] {
        let pair = format!("{dir}/joined-{kind}");
        // Each witness alone conforms.
        for witness in ["client", "fixture"] {
            let alone = run(&[
                "check",
                spec,
                "--traces",
                &format!("{pair}/{witness}.jsonl"),
            ]);
            assert_eq!(alone.status.code(), Some(0), "{}", stdout(&alone));
        }
        let joined = run(&[
            "check",
            spec,
            "--traces",
            &pair,
            "--join",
            "--trace-by",
            "id",
            "--output",
            "json",
        ]);
        let lines: Vec<Value> = stdout(&joined)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if kind == "agree" {
            assert_eq!(joined.status.code(), Some(0), "{lines:?}");
            continue;
        }
        assert_eq!(joined.status.code(), Some(1), "{lines:?}");
        assert_eq!(
            findings(&lines),
            [("forbidden-transition".into(), "client.jsonl".into(), 5)]
        );
        assert_eq!(lines[0]["key"], "case-http-005");
        let steps: Vec<&str> = lines[0]["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|step| step["file"].as_str().unwrap().rsplit('/').next().unwrap())
            .collect();
        assert_eq!(steps, ["client.jsonl", "fixture.jsonl", "client.jsonl"]);
    }
}

#[test]
fn join_time_names_the_field_that_orders_records() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("a_then_b.tg"), SPEC).unwrap();
    // `time` says y's `a` comes after x's `b`; `meta.at` says it comes first.
    std::fs::write(
        path("x.jsonl"),
        "{\"time\":\"2025-04-12T10:18:01Z\",\"meta\":{\"at\":\"2025-04-12T10:18:05Z\"},\"id\":\"op\",\"event\":\"b\"}\n",
    )
    .unwrap();
    std::fs::write(
        path("y.jsonl"),
        "{\"time\":\"2025-04-12T10:18:02Z\",\"meta\":{\"at\":\"2025-04-12T10:18:03Z\"},\"id\":\"op\",\"event\":\"a\"}\n",
    )
    .unwrap();
    let (spec, x, y) = (path("a_then_b.tg"), path("x.jsonl"), path("y.jsonl"));
    let check = |extra: &[&str]| {
        let mut args = vec!["check", &spec, "--join", "--trace-by", "id"];
        args.extend(extra);
        args.extend(["--traces", &x, &y]);
        run(&args).status.code()
    };
    assert_eq!(check(&[]), Some(1));
    assert_eq!(check(&["--join-time", "meta.at"]), Some(0));
    let (status, lines) = {
        let output = run(&[
            "check",
            &spec,
            "--join",
            "--join-time",
            "meta.when",
            "--trace-by",
            "id",
            "--output",
            "json",
            "--traces",
            &x,
            &y,
        ]);
        let lines: Vec<Value> = stdout(&output)
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        (output.status.code(), lines)
    };
    assert_eq!(status, Some(2));
    assert_eq!(lines[0]["code"], "unusable-time");
    assert_eq!(
        lines[0]["message"],
        "record has no `meta.when` field to join by"
    );
    // Without --join there is nothing to order.
    let alone = run(&["check", &spec, "--join-time", "meta.at", "--traces", &x]);
    assert_eq!(alone.status.code(), Some(2));
}

/// Which inputs a join pulls a record at a time (so that memory does not grow with
/// them) and which it reads whole first, as the README says.
#[test]
fn documents_in_files_join_as_streams() {
    use std::path::Path;

    use tracegate::trace::adapters::InputOptions;
    use tracegate::trace::join::{JoinInput, open};

    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let kind = |path: &Path| match open(path, &InputOptions::default(), None) {
        Ok(JoinInput::Lines(_)) => "lines",
        Ok(JoinInput::Stream(_)) => "stream",
        Ok(JoinInput::Read(_)) => "read whole",
        Err(err) => panic!("{}: {err}", path.display()),
    };
    let fail = root.join("traces/reconcile_before_retry/fail");
    for (file, expected) in [
        ("forbidden-transition-openai.json", "stream"),
        ("forbidden-transition-anthropic.json", "stream"),
        ("forbidden-transition-atif.json", "stream"),
        ("forbidden-transition-claude-code-loglines.json", "stream"),
        ("forbidden-transition-gemini-cli.json", "stream"),
        ("forbidden-transition-otel.json", "stream"),
    ] {
        assert_eq!(kind(&fail.join(file)), expected, "{file}");
    }
    let toolbench =
        root.join("tests/fixtures/realdata/toolbench/G1_answer__10_ChatGPT_DFS_woFilter_w2.json");
    assert_eq!(kind(&toolbench), "read whole");
    assert_eq!(
        kind(&root.join("tests/fixtures/coding_agents/claude_code_session.jsonl")),
        "stream"
    );
}
