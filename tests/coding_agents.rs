//! Coding agents' session logs: Claude Code (JSONL and the exported `loglines` JSON),
//! Codex CLI rollouts and Gemini CLI sessions, read from real published samples in
//! `tests/fixtures/coding_agents/` and from the examples in `traces/`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tracegate::ingest::convert_path;
use tracegate::trace::adapters::InputOptions;

use crate::util::{root, run, stdout};

fn fixture(name: &str) -> PathBuf {
    root().join("tests/fixtures/coding_agents").join(name)
}

/// The records `convert` writes for `path`, asserting it reports no problem.
#[track_caller]
fn records_of(path: &Path) -> Vec<Value> {
    let mut out = Vec::new();
    let converted = convert_path(path, &InputOptions::default(), None, &mut out).unwrap();
    assert!(
        converted.diagnostics.is_empty(),
        "{:#?}",
        converted.diagnostics
    );
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// A `tool_use` block's id and tool.
type ToolUse = (String, String);
/// A `tool_result` block's `tool_use_id` and whether it says `is_error: true`.
type ToolResult = (String, bool);

/// What the envelopes of a Claude Code log hold, read straight from the JSON: the
/// `(id, tool)` of every `tool_use`, and the `(tool_use_id, is_error)` of every
/// `tool_result`, in order.
fn blocks(envelopes: &[Value]) -> (Vec<ToolUse>, Vec<ToolResult>) {
    let mut uses = Vec::new();
    let mut results = Vec::new();
    for envelope in envelopes {
        let Some(Value::Array(content)) = envelope.pointer("/message/content") else {
            continue;
        };
        for block in content {
            match block["type"].as_str() {
                Some("tool_use") => uses.push((
                    block["id"].as_str().unwrap().to_string(),
                    block["name"].as_str().unwrap().to_string(),
                )),
                Some("tool_result") => results.push((
                    block["tool_use_id"].as_str().unwrap().to_string(),
                    block["is_error"] == true,
                )),
                _ => {}
            }
        }
    }
    (uses, results)
}

#[track_caller]
fn assert_claude_code_read(records: &[Value], envelopes: &[Value]) {
    let (uses, results) = blocks(envelopes);
    let calls: Vec<(String, String)> = records
        .iter()
        .filter(|r| r["kind"] == "call")
        .map(|r| {
            (
                r["call_id"].as_str().unwrap().to_string(),
                r["tool"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(calls, uses);
    let have: Vec<(String, bool)> = records
        .iter()
        .filter(|r| r["kind"] == "result")
        .map(|r| {
            (
                r["call_id"].as_str().unwrap().to_string(),
                r["status"] == "error",
            )
        })
        .collect();
    assert_eq!(have, results);
    // Every result names its call's tool, and every record its time and place.
    for record in records {
        if record["kind"] == "result" {
            let id = record["call_id"].as_str().unwrap();
            let tool = &uses.iter().find(|(use_id, _)| use_id == id).unwrap().1;
            assert_eq!(record["tool"], *tool.as_str());
        }
        assert!(record["time"].is_string(), "{record}");
        assert!(record["at"]["line"].as_u64() > Some(0), "{record}");
    }
}

#[test]
fn a_real_claude_code_session_log_reads_call_by_call() {
    let path = fixture("claude_code_session.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let envelopes: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let records = records_of(&path);
    assert_claude_code_read(&records, &envelopes);
    // 8 lines: a summary (not a record), 2 user texts, 2 assistant texts, 2 calls, 2
    // results — one session, so no `trace` field.
    assert_eq!(records.len(), 8);
    assert!(records.iter().all(|r| r.get("trace").is_none()));
    // Each record is located at its own line.
    for record in &records {
        let line = record["at"]["line"].as_u64().unwrap() as usize;
        let uuid = record["uuid"].as_str().unwrap();
        assert!(text.lines().nth(line - 1).unwrap().contains(uuid));
    }
}

#[test]
fn a_real_claude_code_export_reads_from_its_loglines() {
    let path = fixture("claude_code_loglines.json");
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let envelopes = document["loglines"].as_array().unwrap();
    let records = records_of(&path);
    assert_claude_code_read(&records, envelopes);
    assert_eq!(records.len(), 38);
    // The failed test run is the one error, located at its block.
    let errors: Vec<&Value> = records.iter().filter(|r| r["status"] == "error").collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["tool"], "Bash");
    assert_eq!(errors[0]["at"]["pointer"], "/loglines/20/message/content/0");
    // Thinking blocks are not records.
    assert!(records.iter().all(|r| r["kind"] != "thinking"));

    let output = run(&["convert", path.to_str().unwrap(), "-v"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Claude Code session logs (detected; one JSON document; 1 trace)"),
        "{stderr}"
    );
}

#[test]
fn coding_agent_examples_check_as_their_names_say() {
    for (file, violations) in [
        ("pass/lookup-found-then-note-claude-code.jsonl", 0),
        ("pass/lookup-found-then-note-codex.jsonl", 0),
        ("fail/forbidden-transition-claude-code.jsonl", 1),
        ("fail/forbidden-transition-claude-code-loglines.json", 1),
        ("fail/forbidden-transition-codex.jsonl", 1),
        ("pass/lookup-found-then-note-gemini-cli.json", 0),
        ("fail/forbidden-transition-gemini-cli.json", 1),
    ] {
        let path = format!("traces/reconcile_before_retry/{file}");
        let output = run(&["check", "specs", "--traces", &path, "--output", "json"]);
        let text = stdout(&output);
        let summary: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
        assert_eq!(summary["violations"], violations, "{file}: {text}");
        assert_eq!(summary["errors"], 0, "{file}: {text}");
        assert_eq!(summary["traces"], 1, "{file}: {text}");
    }
}

#[test]
fn a_codex_rollout_reads_its_response_items_and_skips_the_rest() {
    let path = root().join("traces/reconcile_before_retry/pass/lookup-found-then-note-codex.jsonl");
    let records = records_of(&path);
    let have: Vec<(&str, &str, &str)> = records
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["tool"].as_str().unwrap_or(""),
                r["status"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        have,
        [
            ("message", "", ""),
            ("call", "create_record", ""),
            // No output before the agent's next message: the reply never came.
            ("result", "create_record", "missing"),
            ("message", "", ""),
            ("call", "lookup_by_request_id", ""),
            ("result", "lookup_by_request_id", "ok"),
            ("call", "attach_note", ""),
            ("result", "attach_note", "ok"),
            ("message", "", ""),
        ]
    );
    // The event_msg lines repeat the messages: they are not read twice.
    assert_eq!(records[0]["at"]["line"], 2);
    assert_eq!(records[0]["time"], "2025-11-07T09:01:12.004Z");
    assert_eq!(records[5]["output"]["id"], "rec_48213");
    assert_eq!(
        records[2]["synthesized"],
        "no output before the next assistant message"
    );
}

#[test]
fn sessions_and_sidechains_in_one_log_are_separate_traces() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("session.jsonl");
    let main = |uuid: &str, message: &str| {
        format!(
            r#"{{"type":"user","sessionId":"s1","uuid":"{uuid}","timestamp":"2025-01-01T00:00:00Z","isSidechain":false,"message":{{"role":"user","content":"{message}"}}}}"#
        )
    };
    let create = |uuid: &str, parent: &str, id: &str, request: &str| {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","uuid":"{uuid}","parentUuid":"{parent}","isSidechain":true,"timestamp":"2025-01-01T00:00:01Z","message":{{"id":"m-{uuid}","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"create_record","input":{{"request_id":"{request}"}}}}]}}}}"#
        )
    };
    let timed_out = |uuid: &str, parent: &str, id: &str| {
        format!(
            r#"{{"type":"user","sessionId":"s1","uuid":"{uuid}","parentUuid":"{parent}","isSidechain":true,"timestamp":"2025-01-01T00:00:02Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","is_error":true,"content":"{{\"category\": \"outcome_unknown\"}}"}}]}}}}"#
        )
    };
    // The sub-agent re-creates blindly; the main thread only talks.
    let lines = [
        main("u1", "file it"),
        create("a1", "", "t1", "r1"),
        timed_out("a2", "a1", "t1"),
        create("a3", "a2", "t2", "r2"),
        main("u2", "thanks"),
    ];
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let output = run(&[
        "check",
        "specs",
        "--traces",
        log.to_str().unwrap(),
        "--output",
        "json",
    ]);
    let text = stdout(&output);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let violations: Vec<&Value> = lines.iter().filter(|l| l["type"] == "violation").collect();
    // One violation: the instance stops after it.
    assert_eq!(violations.len(), 1, "{text}");
    assert_eq!(violations[0]["trace"], "s1 sidechain a1", "{text}");
    assert_eq!(violations[0]["code"], "forbidden-transition");
    assert_eq!(violations[0]["line"], 4);
    let summary = lines.last().unwrap();
    assert_eq!(summary["traces"], 2, "{text}");
}

#[test]
fn a_log_read_as_native_records_without_kind_or_tool_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    // An envelope format tracegate does not read: every line a native record.
    let log = dir.path().join("agent.jsonl");
    std::fs::write(
        &log,
        concat!(
            r#"{"ts":"2025-11-07T11:05:01Z","type":"step","payload":{"name":"create_record","input":{"request_id":"r1"}}}"#,
            "\n",
            r#"{"ts":"2025-11-07T11:05:31Z","type":"step","payload":{"name":"create_record","error":"timed out"}}"#,
            "\n"
        ),
    )
    .unwrap();
    let output = run(&[
        "check",
        "specs",
        "--traces",
        log.to_str().unwrap(),
        "--output",
        "json",
    ]);
    // A warning: the exit status is unchanged.
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let warnings: Vec<&Value> = lines.iter().filter(|l| l["type"] == "warning").collect();
    assert_eq!(warnings.len(), 1, "{text}");
    assert_eq!(warnings[0]["code"], "untyped-records");
    assert_eq!(warnings[0]["line"], 1);
    assert!(
        warnings[0]["hint"]
            .as_str()
            .unwrap()
            .contains("Codex CLI rollouts (--format codex)"),
        "{text}"
    );

    // `--format native` says the records are meant as they are.
    let output = run(&[
        "check",
        "specs",
        "--traces",
        log.to_str().unwrap(),
        "--format",
        "native",
        "--output",
        "json",
    ]);
    assert!(!stdout(&output).contains("untyped-records"));

    // convert warns too; a file whose records have a `kind` does not warn.
    let output = run(&["convert", log.to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&output.stderr).contains("warning[untyped-records]"));
    let typed = root().join("traces/reconcile_before_retry/pass/lookup-found-then-note.jsonl");
    let output = run(&["convert", typed.to_str().unwrap()]);
    assert!(output.stderr.is_empty());
}
