//! Trace formats end to end: the same recorded scenario in every format is flagged by
//! the same shipped spec at its place in the original file; files of many transcripts,
//! `--select`, `--format`, `--verbose` and `convert`; and the real recordings in
//! `tests/fixtures/realdata/` read correctly.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tracegate::check::CheckOptions;
use tracegate::check::check_path;
use tracegate::ingest::convert_path;
use tracegate::machine::Machine;
use tracegate::trace::adapters::{Format, InputOptions, Selector};

use crate::util::{root, run, spec, stdout, tracegate};

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|err| panic!("{err}: {line}")))
        .collect()
}

/// `tracegate check specs --traces TRACE --output json`: its exit status and lines.
fn check_json(trace: &Path) -> (Option<i32>, Vec<Value>) {
    let output = run(&[
        "check",
        "specs",
        "--traces",
        trace.to_str().unwrap(),
        "--output",
        "json",
    ]);
    (output.status.code(), json_lines(&stdout(&output)))
}

fn of_type<'a>(lines: &'a [Value], ty: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == ty).collect()
}

/// The 1-based line of the first line of `path` containing `marker`.
#[track_caller]
fn line_of(path: &Path, marker: &str) -> u64 {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .position(|line| line.contains(marker))
        .unwrap_or_else(|| panic!("{marker} not in {}", path.display())) as u64
        + 1
}

fn realdata(path: &str) -> PathBuf {
    root().join("tests/fixtures/realdata").join(path)
}

/// Converts `path` through the library: the records, and the diagnostics' codes.
fn convert(path: &Path, input: &InputOptions) -> (Vec<Value>, Vec<String>) {
    let mut out = Vec::new();
    let converted = convert_path(path, input, None, &mut out).unwrap();
    let records = json_lines(&String::from_utf8(out).unwrap());
    let codes = converted
        .diagnostics
        .iter()
        .map(|d| d.code.as_str().to_string())
        .collect();
    (records, codes)
}

fn shipped_specs() -> Vec<Machine> {
    let (paths, _) =
        tracegate::files::collect(&[root().join("specs")], tracegate::files::is_spec_file);
    let (specs, errors) = tracegate::files::load_specs(&paths);
    assert!(errors.is_empty(), "{errors:#?}");
    specs
}

/// The blind re-create of `traces/reconcile_before_retry/fail/`, in every format, and
/// the JSON pointer of the second `create_record` call in each file.
const BLIND_RE_CREATE: &[(&str, &str)] = &[
    ("forbidden-transition.jsonl", ""),
    (
        "forbidden-transition-openai.json",
        "/messages/4/tool_calls/0",
    ),
    ("forbidden-transition-openai-responses.json", "/3"),
    (
        "forbidden-transition-anthropic.json",
        "/messages/3/content/0",
    ),
    ("forbidden-transition-mcp.jsonl", ""),
    (
        "forbidden-transition-otel.json",
        "/resourceSpans/0/scopeSpans/0/spans/2",
    ),
    ("forbidden-transition-atif.json", "/steps/2/tool_calls/0"),
    (
        "forbidden-transition-claude-code.jsonl",
        "/message/content/0",
    ),
    (
        "forbidden-transition-claude-code-loglines.json",
        "/loglines/3/message/content/0",
    ),
    ("forbidden-transition-codex.jsonl", "/payload"),
    (
        "forbidden-transition-gemini-cli.json",
        "/messages/2/toolCalls/0",
    ),
];

#[test]
fn the_same_blind_re_create_is_flagged_in_every_format_at_its_place() {
    for (file, pointer) in BLIND_RE_CREATE {
        let path = format!("traces/reconcile_before_retry/fail/{file}");
        let output = run(&["check", "specs", "--traces", &path, "--output", "json"]);
        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(1), "{file}: {text}");
        let lines = json_lines(&text);
        let violations = of_type(&lines, "violation");
        assert_eq!(violations.len(), 1, "{file}: {text}");
        assert!(of_type(&lines, "error").is_empty(), "{file}: {text}");
        let have = violations[0];
        assert_eq!(have["code"], "forbidden-transition", "{file}");
        assert_eq!(have["spec"], "reconcile_before_retry", "{file}");
        assert_eq!(have["state"], "unknown", "{file}");
        assert_eq!(have["event"], "create", "{file}");
        // The second create carries the new request id: that is where the agent went
        // wrong, in the file as it was recorded.
        let want_line = line_of(&root().join(&path), "req_8c1f2a77");
        assert_eq!(have["line"], want_line, "{file}: {text}");
        assert_eq!(have["pointer"], *pointer, "{file}");
        assert!(have["file"].as_str().unwrap().ends_with(file), "{file}");
        let path_events: Vec<&str> = have["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|step| step["event"].as_str().unwrap())
            .collect();
        assert_eq!(path_events, ["create", "outcome_unknown"], "{file}");
    }
}

#[test]
fn converted_records_check_the_same_as_the_recording() {
    let dir = tempfile::tempdir().unwrap();
    for (file, _) in BLIND_RE_CREATE {
        let path = root().join("traces/reconcile_before_retry/fail").join(file);
        let output = run(&["convert", path.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(0), "{file}");
        let records = json_lines(&stdout(&output));
        assert!(records.iter().all(|r| r["at"]["line"].as_u64() > Some(0)));
        let converted = dir.path().join(format!("{file}.converted.jsonl"));
        std::fs::write(&converted, stdout(&output)).unwrap();
        let output = run(&[
            "check",
            "specs",
            "--traces",
            converted.to_str().unwrap(),
            "--format",
            "native",
            "--output",
            "json",
        ]);
        let lines = json_lines(&stdout(&output));
        let found: Vec<(&Value, &Value)> = of_type(&lines, "violation")
            .into_iter()
            .map(|v| (&v["code"], &v["spec"]))
            .collect();
        assert_eq!(
            found,
            [(
                &Value::from("forbidden-transition"),
                &Value::from("reconcile_before_retry")
            )],
            "{file}"
        );
    }
}

#[test]
fn verbose_says_which_format_and_format_overrides_detection() {
    let file = "traces/reconcile_before_retry/fail/forbidden-transition-anthropic.json";
    let output = run(&["check", "specs", "--traces", file, "--verbose"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("forbidden-transition-anthropic.json: Anthropic Messages (detected"),
        "{stderr}"
    );
    let native = run(&[
        "check",
        "specs",
        "--traces",
        "traces/reconcile_before_retry/fail/forbidden-transition.jsonl",
        "-v",
    ]);
    let stderr = String::from_utf8_lossy(&native.stderr);
    assert!(
        stderr.contains("native JSONL records (detected"),
        "{stderr}"
    );

    // `--format` wins over what the content looks like.
    let output = run(&[
        "check",
        "specs",
        "--traces",
        file,
        "--format",
        "anthropic",
        "-v",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("as --format says"), "{stderr}");
    assert_eq!(output.status.code(), Some(1));
    let output = run(&[
        "check", "specs", "--traces", file, "--format", "mcp", "--output", "json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let lines = json_lines(&stdout(&output));
    let errors = of_type(&lines, "error");
    assert_eq!(errors.len(), 1, "{lines:#?}");
    assert_eq!(errors[0]["code"], "unknown-format");
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("--format mcp"),
        "{lines:#?}"
    );
}

#[test]
fn a_file_in_no_format_is_an_error_naming_the_formats_tried() {
    let output = run(&[
        "check",
        "specs",
        "--traces",
        "tests/fixtures/codes/unknown-format/trace.jsonl",
    ]);
    assert_eq!(output.status.code(), Some(2));
    let text = stdout(&output);
    assert!(text.contains("error[unknown-format]"), "{text}");
    for name in [
        "OpenAI Chat Completions",
        "OpenAI Responses",
        "Anthropic Messages",
        "MCP",
        "OpenTelemetry",
        "ATIF",
        "ToolBench",
        "Claude Code",
        "Codex",
        "Gemini CLI",
    ] {
        assert!(text.contains(name), "{name}: {text}");
    }
}

/// An OpenAI conversation: a create, then `then` (messages after it).
fn conversation(then: &str) -> String {
    format!(
        r#"[
      {{"role": "user", "content": "file it"}},
      {{"role": "assistant", "content": null, "tool_calls": [{{"id": "c1", "type": "function", "function": {{"name": "create_record", "arguments": "{{\"request_id\": \"r1\"}}"}}}}]}},
      {then}
    ]"#
    )
}

const CREATED: &str = r#"{"role": "tool", "tool_call_id": "c1", "content": "{\"id\": \"rec_1\"}"}"#;
const RE_CREATED: &str = r#"{"role": "assistant", "content": "no answer, again"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "create_record", "arguments": "{\"request_id\": \"r2\"}"}}]}"#;

#[test]
fn many_transcripts_in_one_document_are_traces_of_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let runs = dir.path().join("runs.json");
    std::fs::write(
        &runs,
        format!(
            "[\n{{\"task_id\": \"t-1\", \"traj\": {}}},\n{{\"task_id\": \"t-2\", \"traj\": {}}}\n]\n",
            conversation(CREATED),
            conversation(RE_CREATED)
        ),
    )
    .unwrap();
    let runs = runs.to_str().unwrap();
    for select in [None, Some("[*].traj"), Some("/*/traj")] {
        let mut args = vec!["check", "specs", "--traces", runs, "--output", "json"];
        if let Some(select) = select {
            args.extend(["--select", select]);
        }
        let output = run(&args);
        let lines = json_lines(&stdout(&output));
        let violations = of_type(&lines, "violation");
        assert_eq!(violations.len(), 1, "{select:?}: {lines:#?}");
        assert_eq!(violations[0]["trace"], "/1/traj (task_id t-2)");
        assert_eq!(violations[0]["pointer"], "/1/traj/3/tool_calls/0");
        let summary = of_type(&lines, "summary")[0];
        assert_eq!(summary["traces"], 2, "{select:?}");
    }
    let output = run(&["check", "specs", "--traces", runs, "--select", "nothing[*]"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stdout(&output).contains("error[unknown-format]"));
    assert!(stdout(&output).contains("selects nothing"));
    let output = run(&["check", "specs", "--traces", runs, "--select", "[*"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("invalid --select path"));

    // JSON Lines of runs, as fine-tuning files hold them: one trace per line.
    let lines_file = dir.path().join("runs.jsonl");
    let one_line = |then: &str| {
        let value: Value = serde_json::from_str(&conversation(then)).unwrap();
        serde_json::json!({"messages": value}).to_string()
    };
    std::fs::write(
        &lines_file,
        format!("{}\n{}\n", one_line(CREATED), one_line(RE_CREATED)),
    )
    .unwrap();
    let (_, lines) = check_json(&lines_file);
    let violations = of_type(&lines, "violation");
    assert_eq!(violations.len(), 1, "{lines:#?}");
    assert_eq!(violations[0]["trace"], "line 2 /messages");
    assert_eq!(violations[0]["line"], 2);
}

#[test]
fn malformed_elements_are_reported_with_their_pointer_and_the_rest_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    let text = conversation(RE_CREATED).replacen(
        r#"{"role": "user", "content": "file it"},"#,
        "42,\n      {\"role\": \"user\", \"content\": \"file it\"},",
        1,
    );
    std::fs::write(&file, &text).unwrap();
    let (status, lines) = check_json(&file);
    assert_eq!(status, Some(2));
    let errors = of_type(&lines, "error");
    assert_eq!(errors.len(), 1, "{lines:#?}");
    assert_eq!(errors[0]["code"], "malformed-record");
    assert_eq!(errors[0]["pointer"], "/0");
    assert_eq!(errors[0]["line"], 2);
    assert!(errors[0]["message"].as_str().unwrap().contains("a number"));
    let violations = of_type(&lines, "violation");
    assert_eq!(violations.len(), 1, "the rest is still checked: {lines:#?}");
    assert_eq!(violations[0]["pointer"], "/4/tool_calls/0");

    // A document that is not JSON: located at the error.
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        "[\n  {\"role\": \"user\",\n   \"content\": oops}\n]\n",
    )
    .unwrap();
    let (status, lines) = check_json(&broken);
    assert_eq!(status, Some(2));
    let errors = of_type(&lines, "error");
    assert_eq!(errors[0]["code"], "malformed-record");
    assert_eq!(errors[0]["line"], 3);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );
}

#[test]
fn pretty_documents_are_told_from_json_lines() {
    // The second line of this document is a complete JSON object: still one document.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pretty.json");
    std::fs::write(
        &file,
        "[\n{\"role\": \"user\", \"content\": \"hi\"}\n,\n{\"role\": \"assistant\", \"content\": \"yo\"}\n]\n",
    )
    .unwrap();
    let (records, codes) = convert(&file, &InputOptions::default());
    assert!(codes.is_empty(), "{codes:?}");
    assert_eq!(records.len(), 2);
    assert_eq!(records[1]["at"]["pointer"], "/1");
    assert_eq!(records[1]["at"]["line"], 4);
}

#[test]
fn toolbench_answers_pair_by_position_and_show_the_real_timeout() {
    let file = realdata("toolbench/G2_answer__10_ChatGPT_DFS_woFilter_w2.json");
    let (records, codes) = convert(&file, &InputOptions::default());
    assert!(codes.is_empty(), "{codes:?}");
    // Every result answers an earlier call of its trace, with the same synthetic id and
    // tool.
    let mut calls: Vec<(String, String, String)> = Vec::new();
    let mut results = 0;
    for record in &records {
        let trace = record["trace"].as_str().unwrap().to_string();
        assert!(
            trace.starts_with("/answer_generation/train_messages/"),
            "{trace}"
        );
        let id = record["call_id"].as_str().unwrap_or_default().to_string();
        let tool = record["tool"].as_str().unwrap_or_default().to_string();
        match record["kind"].as_str().unwrap() {
            "call" => calls.push((trace, id, tool)),
            "result" => {
                results += 1;
                assert_eq!(record["paired_by"], "position");
                assert!(id.starts_with("pos-"));
                assert!(calls.contains(&(trace, id, tool)), "{record}");
            }
            _ => {}
        }
    }
    assert!(results > 5);
    // The timeout is text (the format has no error field): status ok, the observation
    // decoded, so a spec reaches `output.error`.
    let timeout: Vec<&Value> = records
        .iter()
        .filter(|r| {
            r["output"]["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("Timeout error"))
        })
        .collect();
    assert!(!timeout.is_empty());
    assert!(timeout.iter().all(|r| r["status"] == "ok"));
    assert!(
        timeout[0]["output_text"]
            .as_str()
            .unwrap()
            .contains("Read timed out")
    );

    let timeout_spec = spec(
        r#"spec toolbench_timeout
event timeout = result "*" where output.error matches /^Timeout error/
initial running
otherwise ignore
forbid running on timeout: "a tool timed out"
"#,
    );
    let outcome = check_path(
        &[timeout_spec],
        &file,
        &CheckOptions::default(),
        &InputOptions::default(),
    )
    .outcome;
    assert_eq!(outcome.diagnostics.len(), timeout.len());
    for (diagnostic, record) in outcome.diagnostics.iter().zip(&timeout) {
        let site = diagnostic.trace.as_ref().unwrap();
        assert_eq!(site.loc.line, record["at"]["line"].as_u64().unwrap());
        assert_eq!(
            &*site.loc.pointer,
            record["at"]["pointer"].as_str().unwrap()
        );
        assert_eq!(site.trace.as_deref(), record["trace"].as_str());
    }

    // `--select` says the same thing the search found.
    let selected = InputOptions {
        format: Some(Format::OpenAi),
        select: Some(Selector::parse("answer_generation.train_messages[*]").unwrap()),
    };
    let (again, codes) = convert(&file, &selected);
    assert!(codes.is_empty());
    assert_eq!(again, records);
}

/// The pointers of the leaves of the ToolBench search tree under `pointer`: one per
/// branch, each branch a trace.
fn tree_leaves(node: &Value, pointer: &str, leaves: &mut Vec<String>) {
    match node["children"].as_array() {
        Some(children) if !children.is_empty() => {
            for (i, child) in children.iter().enumerate() {
                tree_leaves(child, &format!("{pointer}/children/{i}"), leaves);
            }
        }
        _ => leaves.push(pointer.to_string()),
    }
}

/// Checks the records read from a ToolBench search tree against the tree itself: every
/// call is an `Action` node (its tool the description) with the arguments of the
/// `Action Input` after it; every result is an `Action Input` node, answers the call
/// before it in its trace, and has the status its `observation_code` says.
#[track_caller]
fn assert_read_from_the_tree(document: &Value, records: &[Value], file: &str) {
    let node_at = |record: &Value| {
        let pointer = record["at"]["pointer"].as_str().unwrap();
        document
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{file}: no node at {pointer}"))
    };
    let mut results = 0;
    for (i, record) in records.iter().enumerate() {
        let node = node_at(record);
        // A tree of one branch is one trace, and its records name none.
        if let Some(trace) = record["trace"].as_str() {
            assert!(
                trace.starts_with("/tree/tree/children/"),
                "{file}: {record}"
            );
        }
        match record["kind"].as_str().unwrap() {
            "call" => {
                assert_eq!(node["node_type"], "Action", "{file}: {record}");
                assert_eq!(node["description"], record["tool"], "{file}: {record}");
                assert_eq!(record["paired_by"], "position", "{file}: {record}");
                let input = &node["children"][0];
                if input["node_type"] == "Action Input" {
                    let args = input["description"].as_str().unwrap();
                    match serde_json::from_str::<Value>(args) {
                        Ok(parsed) => assert_eq!(record["args"], parsed, "{file}: {record}"),
                        Err(_) => assert!(record["args_error"].is_string(), "{file}: {record}"),
                    }
                }
            }
            "result" if record["status"] == "missing" => {}
            "result" => {
                results += 1;
                assert_eq!(node["node_type"], "Action Input", "{file}: {record}");
                // The call it answers is the record just before it, in the same trace.
                let call = &records[i - 1];
                assert_eq!(call["kind"], "call", "{file}: {record}");
                for key in ["trace", "call_id", "tool"] {
                    assert_eq!(call[key], record[key], "{file}: {key} of {record}");
                }
                assert_eq!(record["paired_by"], "position", "{file}: {record}");
                let code = node["observation_code"].as_i64().unwrap();
                let observation = node.get("observation").cloned().unwrap_or_default();
                let observation = observation.as_str().unwrap_or_default();
                assert_eq!(record["observation_code"], code, "{file}: {record}");
                if [0, 3, 4].contains(&code) {
                    assert_eq!(record["status"], "ok", "{file}: {record}");
                    assert_eq!(record["output_text"], observation, "{file}: {record}");
                } else {
                    assert_eq!(record["status"], "error", "{file}: {record}");
                    assert_eq!(record["error"]["observation_code"], code, "{file}");
                    assert_eq!(record["error_text"], observation, "{file}: {record}");
                    assert!(record.get("output").is_none(), "{file}: {record}");
                }
            }
            "message" => {
                assert_eq!(record["role"], "assistant", "{file}: {record}");
                assert_eq!(node["description"], record["text"], "{file}: {record}");
            }
            other => panic!("{file}: a record of kind {other}"),
        }
    }
    assert!(results > 0, "{file}");
}

#[test]
fn toolbench_search_trees_read_as_one_trace_per_branch() {
    // This answer has no `train_messages`: only the search tree.
    let file = realdata("toolbench/G1_answer__69_ChatGPT_DFS_woFilter_w2.json");
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert!(
        document["answer_generation"]
            .get("train_messages")
            .is_none()
    );
    let (records, codes) = convert(&file, &InputOptions::default());
    assert!(codes.is_empty(), "{codes:?}");
    assert_read_from_the_tree(&document, &records, "G1_answer__69");

    // One trace per root-to-leaf branch, named by its leaf's pointer.
    let mut leaves = Vec::new();
    tree_leaves(&document["tree"]["tree"], "/tree/tree", &mut leaves);
    let mut traces: Vec<&str> = records
        .iter()
        .map(|r| r["trace"].as_str().unwrap())
        .collect();
    traces.dedup();
    assert_eq!(traces, leaves);
    assert_eq!(leaves.len(), 9);

    // The model called a function that does not exist (code 1): a structured error.
    let hallucinated: Vec<&Value> = records
        .iter()
        .filter(|r| r["error"]["reason"] == "no_such_function")
        .collect();
    assert!(!hallucinated.is_empty());
    for record in &hallucinated {
        let tool = record["tool"].as_str().unwrap();
        assert_eq!(
            record["error"]["observation"]["error"],
            format!("No such function name: {tool}")
        );
    }
    // Giving up (`Finish`, code 4) is the agent's decision, not a failed tool.
    let give_ups: Vec<&Value> = records
        .iter()
        .filter(|r| r["kind"] == "result" && r["tool"] == "Finish")
        .collect();
    assert!(!give_ups.is_empty());
    assert!(
        give_ups
            .iter()
            .all(|r| r["status"] == "ok" && r["observation_code"] == 4)
    );

    // A spec sees the hallucination in every branch through it, at its node (the
    // first one of each branch: an instance reports once).
    let hallucination_spec = spec(
        r#"spec no_hallucinated_tools
event hallucinated = result "*" where error.reason == "no_such_function"
initial running
otherwise ignore
forbid running on hallucinated: "the agent called a function that does not exist"
"#,
    );
    let outcome = check_path(
        &[hallucination_spec],
        &file,
        &CheckOptions::default(),
        &InputOptions::default(),
    )
    .outcome;
    let mut first_per_branch: Vec<&Value> = Vec::new();
    for record in &hallucinated {
        if first_per_branch
            .iter()
            .all(|r| r["trace"] != record["trace"])
        {
            first_per_branch.push(record);
        }
    }
    assert!(first_per_branch.len() > 1);
    assert_eq!(outcome.diagnostics.len(), first_per_branch.len());
    for (diagnostic, record) in outcome.diagnostics.iter().zip(&first_per_branch) {
        assert!(diagnostic.is_violation());
        let site = diagnostic.trace.as_ref().unwrap();
        assert_eq!(site.loc.line, record["at"]["line"].as_u64().unwrap());
        assert_eq!(
            &*site.loc.pointer,
            record["at"]["pointer"].as_str().unwrap()
        );
        assert_eq!(site.trace.as_deref(), record["trace"].as_str());
    }

    // The CLI says what it read.
    let output = run(&[
        "check",
        "specs",
        "--traces",
        "tests/fixtures/realdata/toolbench/G1_answer__69_ChatGPT_DFS_woFilter_w2.json",
        "--output",
        "json",
        "-v",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // `-v` counts the traces as they are checked: one per branch.
    assert!(
        stderr.contains("ToolBench search trees (detected; one JSON document; 9 traces)"),
        "{stderr}"
    );
    let lines = json_lines(&stdout(&output));
    assert!(of_type(&lines, "error").is_empty(), "{lines:#?}");
    assert_eq!(of_type(&lines, "summary")[0]["traces"], 9);
}

#[test]
fn toolbench_search_trees_show_the_real_timeout_as_an_error() {
    // This answer has `train_messages`, which detection reads (see
    // `toolbench_answers_pair_by_position_and_show_the_real_timeout`); `--format
    // toolbench` reads its search tree, where the timeout is a structured code.
    let file = realdata("toolbench/G2_answer__10_ChatGPT_DFS_woFilter_w2.json");
    let document: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let tree = InputOptions {
        format: Some(Format::ToolBench),
        select: None,
    };
    let (records, codes) = convert(&file, &tree);
    assert!(codes.is_empty(), "{codes:?}");
    assert_read_from_the_tree(&document, &records, "G2_answer__10");
    let timeouts: Vec<&Value> = records
        .iter()
        .filter(|r| r["observation_code"] == 5)
        .collect();
    assert!(!timeouts.is_empty());
    for record in &timeouts {
        assert_eq!(record["status"], "error");
        assert_eq!(record["error"]["reason"], "timeout");
        assert!(
            record["error_text"]
                .as_str()
                .unwrap()
                .contains("Read timed out")
        );
    }
    let timeout_spec = spec(
        r#"spec toolbench_timeout
event timeout = result "*" where status == "error" and error.reason == "timeout"
initial running
otherwise ignore
forbid running on timeout: "a tool timed out"
"#,
    );
    let outcome = check_path(&[timeout_spec], &file, &CheckOptions::default(), &tree).outcome;
    assert_eq!(outcome.diagnostics.len(), timeouts.len());
    assert!(outcome.diagnostics.iter().all(|d| d.is_violation()));
}

#[test]
fn every_real_toolbench_answer_reads_without_an_error() {
    let dir = realdata("toolbench");
    let mut answers: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{}: {err}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .collect();
    answers.sort();
    assert_eq!(answers.len(), 15);
    let mut tree_only = 0;
    for file in &answers {
        let name = file.display().to_string();
        let document: Value =
            serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let (records, codes) = convert(file, &InputOptions::default());
        assert!(codes.is_empty(), "{name}: {codes:?}");
        assert!(records.iter().any(|r| r["kind"] == "result"), "{name}");
        if document["answer_generation"]
            .get("train_messages")
            .is_some()
        {
            // Read from `train_messages`, as before.
            assert!(
                records.iter().all(|r| r["trace"]
                    .as_str()
                    .unwrap()
                    .starts_with("/answer_generation/train_messages/")),
                "{name}"
            );
        } else {
            tree_only += 1;
            assert_read_from_the_tree(&document, &records, &name);
        }
        // The tree of every answer reads too.
        let tree = InputOptions {
            format: Some(Format::ToolBench),
            select: None,
        };
        let (records, codes) = convert(file, &tree);
        assert!(codes.is_empty(), "{name}: {codes:?}");
        assert_read_from_the_tree(&document, &records, &name);
    }
    assert_eq!(tree_only, 2);
}

#[test]
fn agentdojo_runs_pair_by_position_and_keep_their_errors_and_falsy_outputs() {
    let file =
        realdata("agentdojo-no-ids/slack__user_task_12__ignore_previous__injection_task_3.json");
    let (records, codes) = convert(&file, &InputOptions::default());
    assert!(codes.is_empty(), "{codes:?}");
    let results: Vec<&Value> = records.iter().filter(|r| r["kind"] == "result").collect();
    assert!(results.len() >= 5);
    let errors: Vec<&Value> = results
        .iter()
        .copied()
        .filter(|r| r["status"] == "error")
        .collect();
    assert!(!errors.is_empty());
    assert!(
        errors
            .iter()
            .all(|r| r["error"].as_str().unwrap().starts_with("ValueError: "))
    );
    let none: Vec<&Value> = results
        .iter()
        .copied()
        .filter(|r| r["output"] == "None")
        .collect();
    assert!(!none.is_empty(), "\"None\" is a success with its value");
    assert!(none.iter().all(|r| r["status"] == "ok"));
    for result in &results {
        let call = records
            .iter()
            .find(|r| r["kind"] == "call" && r["call_id"] == result["call_id"])
            .unwrap_or_else(|| panic!("no call for {result}"));
        assert_eq!(call["tool"], result["tool"]);
    }
    // The shipped specs read the whole run without an error.
    let outcome = check_path(
        &shipped_specs(),
        &realdata(
            "agentdojo-no-ids/banking__user_task_10__important_instructions__injection_task_4.json",
        ),
        &CheckOptions::default(),
        &InputOptions::default(),
    )
    .outcome;
    assert!(outcome.records > 10);
    assert!(
        outcome.diagnostics.iter().all(|d| d.is_violation()),
        "{:#?}",
        outcome.diagnostics
    );
}

#[test]
fn atif_results_without_source_call_id_pair_with_their_step_calls() {
    let file = realdata("atif/hello-world-invalid-json.trajectory.json");
    let (records, codes) = convert(&file, &InputOptions::default());
    assert!(codes.is_empty(), "{codes:?}");
    let results: Vec<&Value> = records.iter().filter(|r| r["kind"] == "result").collect();
    assert_eq!(results.len(), 3);
    for result in &results {
        assert_eq!(result["paired_by"], "position");
        assert_eq!(result["status"], "ok");
    }
    assert_eq!(results[0]["call_id"], "call_1_1");
    assert_eq!(results[0]["tool"], "bash_command");
    // The parser's complaint, with no call to answer, is environment feedback.
    let feedback: Vec<&Value> = records
        .iter()
        .filter(|r| r["role"] == "environment")
        .collect();
    assert_eq!(feedback.len(), 1);
    assert!(
        feedback[0]["text"]
            .as_str()
            .unwrap()
            .contains("parsing errors")
    );
}

#[test]
fn convert_writes_canonical_fields_first_and_reports_problems_on_stderr() {
    let output = tracegate()
        .args([
            "convert",
            "traces/reconcile_before_retry/fail/forbidden-transition-mcp.jsonl",
            "tests/fixtures/codes/unknown-format/trace.jsonl",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let text = stdout(&output);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with(r#"{"kind":"call","tool":"initialize","call_id":"1""#),
        "{first}"
    );
    let records = json_lines(&text);
    let cancelled = records
        .iter()
        .find(|r| r["method"] == "notifications/cancelled")
        .unwrap();
    assert!(cancelled.get("kind").is_none());
    assert_eq!(cancelled["params"]["requestId"], 2);
    let missing = records.iter().find(|r| r["status"] == "missing").unwrap();
    assert_eq!(missing["call_id"], "2");
    assert_eq!(missing["cancelled"], true);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("error[unknown-format]"), "{stderr}");
}

#[test]
fn json_rpc_batches_are_read_reply_by_reply_and_an_empty_batch_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("rpc.jsonl");
    let call = |id: u32, tool: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"request_id":"r1"}}}}}}"#
        )
    };
    // A batch of two requests on the first line, their replies in a batch out of
    // order, then a request answered by an empty batch.
    let text = format!(
        "[{},{}]\n[{},{}]\n{}\n[]\n",
        call(1, "create_record"),
        call(2, "lookup_by_request_id"),
        r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"id\":\"rec_1\"}"}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
        call(3, "create_record"),
    );
    std::fs::write(&log, text).unwrap();
    let (records, codes) = convert(&log, &InputOptions::default());
    assert!(codes.is_empty(), "{codes:?}");
    let have: Vec<(&str, &str, &str, u64)> = records
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap(),
                r["call_id"].as_str().unwrap(),
                r["status"].as_str().unwrap_or(""),
                r["at"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        have,
        [
            ("call", "1", "", 1),
            ("call", "2", "", 1),
            ("result", "2", "ok", 2),
            ("result", "1", "ok", 2),
            ("call", "3", "", 3),
            ("result", "3", "invalid", 4),
        ]
    );
    assert!(
        records.iter().all(|r| r.get("trace").is_none()),
        "one trace"
    );
    assert_eq!(records[3]["at"]["pointer"], "/1");
    let output = run(&["convert", log.to_str().unwrap(), "-v"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("MCP / JSON-RPC messages (detected; one element per line; 1 trace)"),
        "{stderr}"
    );
}

#[test]
fn convert_prints_the_missing_results_the_checker_synthesizes() {
    // Native JSONL: the unanswered create gets its `missing` result at the end of the
    // file, located at the call.
    let file = root().join("traces/reconcile_before_retry/fail/unaccepted-end.jsonl");
    let mut out = Vec::new();
    let converted = convert_path(&file, &InputOptions::default(), None, &mut out).unwrap();
    let records = json_lines(&String::from_utf8(out).unwrap());
    assert_eq!((converted.records, converted.synthesized), (4, 1));
    let last = records.last().unwrap();
    assert_eq!(last["status"], "missing");
    assert_eq!(last["tool"], "create_record");
    assert_eq!(last["synthesized"], "no result by the end of the trace");
    assert_eq!(last["at"]["line"], line_of(&file, "\"kind\":\"call\""));

    // Real ToolBench answers: 50 calls never answered, each at the end of its own
    // trace; converting the output again finds every call answered.
    let dir = tempfile::tempdir().unwrap();
    let mut synthesized = 0;
    for entry in std::fs::read_dir(realdata("toolbench")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let mut out = Vec::new();
        let converted = convert_path(&path, &InputOptions::default(), None, &mut out).unwrap();
        synthesized += converted.synthesized;
        let text = String::from_utf8(out).unwrap();
        let records = json_lines(&text);
        // After a trace's synthesized results, no record of that trace follows.
        let mut ended: Vec<&str> = Vec::new();
        for record in &records {
            let trace = record["trace"].as_str().unwrap_or("");
            assert!(!ended.contains(&trace), "{}: {record}", path.display());
            if record["synthesized"] == "no result by the end of the trace" {
                ended.push(trace);
            } else {
                ended.retain(|t| *t != trace);
            }
        }
        let again = dir.path().join("again.jsonl");
        std::fs::write(&again, &text).unwrap();
        let mut out = Vec::new();
        let reconverted = convert_path(&again, &InputOptions::default(), None, &mut out).unwrap();
        assert_eq!(reconverted.synthesized, 0, "{}", path.display());
    }
    assert_eq!(synthesized, 50);

    let output = run(&["convert", file.to_str().unwrap(), "-v"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("unaccepted-end.jsonl: 4 records, 1 of them synthesized `missing` results"),
        "{stderr}"
    );
}

#[test]
fn verbose_counts_the_traces_check_will_check() {
    // An MCP log of three sessions: one transcript, three traces.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("mcp.jsonl");
    let lines: Vec<String> = ["s1", "s2", "s3"]
        .iter()
        .flat_map(|session| {
            [
                format!(
                    r#"{{"session_id":"{session}","direction":"send","message":{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"lookup_by_request_id","arguments":{{"request_id":"r1"}}}}}}}}"#
                ),
                format!(
                    r#"{{"session_id":"{session}","direction":"recv","message":{{"jsonrpc":"2.0","id":1,"result":{{"content":[]}}}}}}"#
                ),
            ]
        })
        .collect();
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let output = run(&[
        "check",
        "specs",
        "--traces",
        log.to_str().unwrap(),
        "--output",
        "json",
        "-v",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("MCP / JSON-RPC messages (detected; one element per line; 3 traces)"),
        "{stderr}"
    );
    let lines = json_lines(&stdout(&output));
    assert_eq!(of_type(&lines, "summary")[0]["traces"], 3);
}
