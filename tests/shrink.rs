//! `shrink`: a long, real-looking trace with one buried violation comes down to the
//! records that make it; `per` keys; what cannot be shrunk; the command; traces in
//! every other format that can be cut, shrunk to a file of that format.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use tracegate::diagnostic::Code;
use tracegate::explore::{self, ShrinkError, ShrinkOptions, Written};
use tracegate::files;
use tracegate::machine::Machine;
use tracegate::trace::adapters::{self, Format, InputOptions, Layout, Opened};
use tracegate::trace::reader::DEFAULT_MAX_LINE_BYTES;

use crate::util::{check_text, codes_and_lines, root, run, spec, stdout};

fn reconcile() -> Machine {
    let (mut specs, errors) = files::load_specs(&[root().join("specs/reconcile_before_retry.tg")]);
    assert!(errors.is_empty(), "{errors:#?}");
    specs.remove(0)
}

/// A day of an agent's work on tickets: each round a user asks, the agent searches,
/// creates a record, notes it, and reports. In round `buried` the create times out
/// after dispatch, and three rounds of unrelated work later the agent creates again
/// without looking the first one up. Returns the trace and the lines (1-based) of the
/// two creates' call and result.
fn day_of_work(rounds: usize, buried: usize) -> (String, Vec<usize>) {
    let mut lines: Vec<String> = Vec::new();
    let mut wanted = Vec::new();
    let mut call = 0;
    let mut next_id = || {
        call += 1;
        format!("call_{call:05}")
    };
    for round in 0..rounds {
        lines.push(format!(
            r#"{{"kind":"message","role":"user","text":"Ticket {round}: please file the incident for host web-{round}."}}"#
        ));
        let search = next_id();
        lines.push(format!(
            r#"{{"kind":"call","tool":"search_docs","call_id":"{search}","args":{{"query":"runbook web-{round}"}}}}"#
        ));
        lines.push(format!(
            r#"{{"kind":"result","tool":"search_docs","call_id":"{search}","status":"ok","output":{{"hits":[{{"title":"Runbook {round}"}}]}}}}"#
        ));
        let create = next_id();
        lines.push(format!(
            r#"{{"kind":"call","tool":"create_record","call_id":"{create}","args":{{"request_id":"req_{round:05}","title":"web-{round} down"}}}}"#
        ));
        if round == buried {
            wanted.push(lines.len());
            lines.push(format!(
                r#"{{"kind":"result","tool":"create_record","call_id":"{create}","status":"error","error":{{"category":"outcome_unknown","code":"timeout","message":"upstream timed out after dispatch"}}}}"#
            ));
            wanted.push(lines.len());
            // Unrelated work in between: reads and chat, no events of the spec.
            for k in 0..3 {
                let read = next_id();
                lines.push(format!(
                    r#"{{"kind":"call","tool":"get_metrics","call_id":"{read}","args":{{"host":"web-{round}","window":{k}}}}}"#
                ));
                lines.push(format!(
                    r#"{{"kind":"result","tool":"get_metrics","call_id":"{read}","status":"ok","output":{{"p99_ms":{}}}}}"#,
                    100 + k
                ));
                lines.push(format!(
                    r#"{{"kind":"message","role":"assistant","text":"Checking metrics, window {k}."}}"#
                ));
            }
            let again = next_id();
            wanted.push(lines.len() + 1);
            lines.push(format!(
                r#"{{"kind":"call","tool":"create_record","call_id":"{again}","args":{{"request_id":"req_{round:05}b","title":"web-{round} down"}}}}"#
            ));
            wanted.push(lines.len() + 1);
            lines.push(format!(
                r#"{{"kind":"result","tool":"create_record","call_id":"{again}","status":"ok","output":{{"id":"rec_{round}b"}}}}"#
            ));
        } else {
            lines.push(format!(
                r#"{{"kind":"result","tool":"create_record","call_id":"{create}","status":"ok","output":{{"id":"rec_{round}"}}}}"#
            ));
        }
        let note = next_id();
        lines.push(format!(
            r#"{{"kind":"call","tool":"attach_note","call_id":"{note}","args":{{"text":"see runbook {round}"}}}}"#
        ));
        lines.push(format!(
            r#"{{"kind":"result","tool":"attach_note","call_id":"{note}","status":"ok","output":null}}"#
        ));
        lines.push(format!(
            r#"{{"kind":"message","role":"assistant","text":"Filed the incident for web-{round}."}}"#
        ));
    }
    let mut text = String::new();
    for line in &lines {
        let _ = writeln!(text, "{line}");
    }
    (text, wanted)
}

#[test]
fn a_buried_violation_in_thousands_of_records_shrinks_to_the_two_creates() {
    let machine = reconcile();
    let (trace, wanted) = day_of_work(400, 237);
    let original = check_text(std::slice::from_ref(&machine), &trace);
    assert_eq!(original.records, 400 * 8 + 11);
    assert_eq!(
        codes_and_lines(&original).len(),
        1,
        "{:#?}",
        original.diagnostics
    );
    assert_eq!(original.diagnostics[0].code, Code::ForbiddenTransition);

    let shrunk = explore::shrink(
        std::slice::from_ref(&machine),
        trace.as_bytes(),
        &ShrinkOptions::default(),
    )
    .expect("the trace fails");
    assert_eq!((shrunk.before, shrunk.after), (3211, 4));
    // The kept lines are the original lines, unchanged: each create with its result.
    let all: Vec<&str> = trace.lines().collect();
    let want: String = wanted
        .iter()
        .map(|&line| format!("{}\n", all[line - 1]))
        .collect();
    assert_eq!(String::from_utf8(shrunk.text.clone()).unwrap(), want);
    // The cheap cuts leave ddmin little to do.
    assert!(shrunk.tests < 40, "{} checks", shrunk.tests);

    let again = check_text(std::slice::from_ref(&machine), &want);
    assert_eq!(
        codes_and_lines(&again),
        [("forbidden-transition".to_string(), 3)]
    );
    assert_eq!(shrunk.violation.code, Code::ForbiddenTransition);
    assert_eq!(
        shrunk.violation.spec.as_ref().map(|s| s.span),
        original.diagnostics[0].spec.as_ref().map(|s| s.span)
    );
}

#[test]
fn shrinking_keeps_one_key_of_a_sliced_spec() {
    let machine = spec(
        r#"spec per_key
per args.id
event open  = call open
event close = call close
otherwise ignore
initial closed
closed -> opened on open
opened -> closed on close
forbid opened on open: "opened twice"
"#,
    );
    // Keys `a`, `b` and `c` interleave; only `b` is opened twice.
    let trace = r#"{"kind":"call","tool":"open","call_id":"1","args":{"id":"a"}}
{"kind":"call","tool":"open","call_id":"2","args":{"id":"b"}}
{"kind":"message","role":"assistant","text":"working"}
{"kind":"call","tool":"open","call_id":"3","args":{"id":"c"}}
{"kind":"call","tool":"close","call_id":"4","args":{"id":"a"}}
{"kind":"call","tool":"open","call_id":"5","args":{"id":"a"}}
{"kind":"call","tool":"open","call_id":"6","args":{"id":"b"}}
{"kind":"call","tool":"close","call_id":"7","args":{"id":"c"}}
"#;
    let shrunk = explore::shrink(
        std::slice::from_ref(&machine),
        trace.as_bytes(),
        &ShrinkOptions::default(),
    )
    .unwrap();
    assert_eq!(
        String::from_utf8(shrunk.text).unwrap(),
        "{\"kind\":\"call\",\"tool\":\"open\",\"call_id\":\"2\",\"args\":{\"id\":\"b\"}}\n\
         {\"kind\":\"call\",\"tool\":\"open\",\"call_id\":\"6\",\"args\":{\"id\":\"b\"}}\n"
    );
    assert_eq!(shrunk.violation.code, Code::ForbiddenTransition);
    assert_eq!(
        shrunk.violation.violation.as_ref().unwrap().key.as_deref(),
        Some("b")
    );
}

#[test]
fn the_violation_to_keep_can_be_chosen() {
    let machine = spec(
        r#"event a = call a
event b = call b
initial s
s -> t on a
forbid t on b: "b after a"
"#,
    );
    // Two traces in one file (by `case`): the first has an unexpected `b`, the second
    // a forbidden one.
    let trace = r#"{"kind":"call","tool":"b","case":"1"}
{"kind":"call","tool":"a","case":"2"}
{"kind":"call","tool":"b","case":"2"}
"#;
    let mut options = ShrinkOptions::default();
    options.check.trace_by = Some(vec![tracegate::spec::ast::Segment::Key("case".into())]);
    let first =
        explore::shrink(std::slice::from_ref(&machine), trace.as_bytes(), &options).unwrap();
    assert_eq!(first.violation.code, Code::UnexpectedEvent);
    assert_eq!(first.after, 1);

    options.code = Some(Code::ForbiddenTransition);
    let forbidden =
        explore::shrink(std::slice::from_ref(&machine), trace.as_bytes(), &options).unwrap();
    assert_eq!(forbidden.violation.code, Code::ForbiddenTransition);
    assert_eq!(forbidden.after, 2);

    options.code = None;
    options.index = 5;
    let err =
        explore::shrink(std::slice::from_ref(&machine), trace.as_bytes(), &options).unwrap_err();
    assert_eq!(
        err,
        ShrinkError::NoSuchViolation {
            found: 2,
            wanted: 6
        }
    );
    options.index = 0;
    options.code = Some(Code::UnacceptedEnd);
    let err =
        explore::shrink(std::slice::from_ref(&machine), trace.as_bytes(), &options).unwrap_err();
    assert_eq!(err, ShrinkError::NoSuchCode(Code::UnacceptedEnd));
}

#[test]
fn a_conforming_trace_has_nothing_to_shrink() {
    let machine = reconcile();
    let trace =
        std::fs::read(root().join("traces/reconcile_before_retry/pass/created-then-note.jsonl"))
            .unwrap();
    let err = explore::shrink(
        std::slice::from_ref(&machine),
        &trace,
        &ShrinkOptions::default(),
    )
    .unwrap_err();
    assert_eq!(err, ShrinkError::NoViolation);
}

#[test]
fn shrink_writes_the_minimal_trace_and_reports_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("min.jsonl");
    let output = run(&[
        "shrink",
        "specs/reconcile_before_retry.tg",
        "traces/reconcile_before_retry/fail/forbidden-transition.jsonl",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(0));
    let summary = stdout(&output);
    assert!(
        summary.starts_with(
            "shrank traces/reconcile_before_retry/fail/forbidden-transition.jsonl from 6 records"
        ),
        "{summary}"
    );
    assert!(summary.contains(" to 4 records "), "{summary}");
    assert!(
        summary.contains("forbidden-transition of `reconcile_before_retry`"),
        "{summary}"
    );
    let shrunk = std::fs::read_to_string(&out).unwrap();
    assert_eq!(shrunk.lines().count(), 4);
    let checked = run(&[
        "check",
        "specs/reconcile_before_retry.tg",
        "--traces",
        out.to_str().unwrap(),
    ]);
    assert_eq!(checked.status.code(), Some(1));

    // Without -o the trace goes to standard output and the summary to standard error.
    let piped = run(&[
        "shrink",
        "specs/reconcile_before_retry.tg",
        "traces/reconcile_before_retry/fail/forbidden-transition.jsonl",
    ]);
    assert_eq!(stdout(&piped), shrunk);
    assert!(String::from_utf8_lossy(&piped.stderr).starts_with("shrank "));

    let conforming = run(&[
        "shrink",
        "specs/reconcile_before_retry.tg",
        "traces/reconcile_before_retry/pass/created-then-note.jsonl",
    ]);
    assert_eq!(conforming.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&conforming.stderr).contains("nothing to shrink"));
}

// --- Traces in other formats: cut element by element, written in their own format ---

/// How a file reads: its layout and formats, as `check` detects them.
fn detected(path: &Path) -> (Layout, Vec<Format>) {
    match adapters::open(path, &InputOptions::default(), DEFAULT_MAX_LINE_BYTES).unwrap() {
        Opened::Native(detected) => (detected.layout, detected.formats),
        Opened::Read(reading) => (reading.detected.layout, reading.detected.formats),
    }
}

/// A violation as `check --output json` reports it: code, spec and rule position.
type Finding = (String, String, u64, u64);

/// What `tracegate check` (format detected) says of `path` against the reconcile spec:
/// its findings, and the records it read. It must say nothing but violations.
#[track_caller]
fn verdict(path: &Path) -> (Vec<Finding>, u64) {
    let output = run(&[
        "check",
        "specs/reconcile_before_retry.tg",
        "--traces",
        path.to_str().unwrap(),
        "--output",
        "json",
    ]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let mut findings = Vec::new();
    let mut records = None;
    for line in stdout(&output).lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        match value["type"].as_str() {
            Some("violation") => findings.push((
                value["code"].as_str().unwrap().to_string(),
                value["spec"].as_str().unwrap().to_string(),
                value["rule"]["line"].as_u64().unwrap(),
                value["rule"]["column"].as_u64().unwrap(),
            )),
            Some("summary") => {
                assert_eq!(value["errors"], 0, "{line}");
                records = value["records"].as_u64();
            }
            _ => panic!("not a violation: {line}"),
        }
    }
    (findings, records.expect("a summary"))
}

/// Writes `trace` as `name`, shrinks it with `tracegate shrink`, and asserts the result
/// is a file in the same format (read the same way), smaller in records and bytes, that
/// `tracegate check` rejects with the same one violation at the same rule. Returns the
/// shrunk file's text.
#[track_caller]
fn shrinks_in_its_own_format(name: &str, trace: &str, format: Format) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join(name);
    std::fs::write(&input, trace).unwrap();
    let output = dir.path().join(format!("shrunk-{name}"));
    let shrunk = run(&[
        "shrink",
        "specs/reconcile_before_retry.tg",
        input.to_str().unwrap(),
        "-o",
        output.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&shrunk.stderr);
    assert_eq!(shrunk.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("native JSONL"), "{stderr}");

    let want_read = detected(&input);
    assert_eq!(want_read.1, [format], "the test trace reads as {format}");
    assert_eq!(detected(&output), want_read);
    let (want, records_before) = verdict(&input);
    assert_eq!(want.len(), 1, "{want:?}");
    assert_eq!(want[0].0, "forbidden-transition");
    let (have, records_after) = verdict(&output);
    assert_eq!(have, want);
    let text = std::fs::read_to_string(&output).unwrap();
    assert!(
        records_after < records_before && text.len() < trace.len(),
        "{records_before} -> {records_after} records, {} -> {} bytes",
        trace.len(),
        text.len()
    );
    assert!(
        stdout(&shrunk).contains(&format!(" to {records_after} records ")),
        "{}",
        stdout(&shrunk)
    );
    text
}

/// An example trace of the reconcile spec's blind re-create, parsed.
fn example(name: &str) -> Value {
    let path = root().join("traces/reconcile_before_retry/fail").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `list` with `per` rounds of irrelevant elements spliced in before each of the
/// positions `at` (`list.len()` for the end); `round(i)` gives the i-th round.
fn pad(
    list: &[Value],
    at: &[usize],
    per: usize,
    round: impl Fn(usize) -> Vec<Value>,
) -> Vec<Value> {
    let mut out = Vec::new();
    let mut next = 0;
    for i in 0..=list.len() {
        if at.contains(&i) {
            for _ in 0..per {
                out.extend(round(next));
                next += 1;
            }
        }
        out.extend(list.get(i).cloned());
    }
    out
}

#[test]
fn an_openai_trace_shrinks_to_an_openai_trace() {
    let mut doc = example("forbidden-transition-openai.json");
    let messages = doc["messages"].as_array().unwrap().clone();
    // The blind re-create is an assistant message with two parallel calls: the create and
    // a metrics read, whose reply comes after the create's.
    let mut messages = messages;
    messages[4]["tool_calls"]
        .as_array_mut()
        .unwrap()
        .push(json!({"id": "call_par", "type": "function", "function": {"name": "get_metrics", "arguments": "{\"host\": \"api-eu-2\"}"}}));
    messages.insert(
        6,
        json!({"role": "tool", "tool_call_id": "call_par", "content": "{\"p99_ms\": 950}"}),
    );
    // An earlier create that succeeded: seen by the spec, but not needed.
    let earlier = [
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_early", "type": "function", "function": {"name": "create_record", "arguments": "{\"request_id\": \"req_early\", \"title\": \"Disk full on db-1\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_early", "content": "{\"id\": \"rec_1\"}"}),
    ];
    messages.splice(2..2, earlier);
    let round = |i: usize| {
        vec![
            json!({"role": "user", "content": format!("Round {i}: how is web-{i} doing?")}),
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": format!("pad_{i}_a"), "type": "function", "function": {"name": "get_metrics", "arguments": format!("{{\"host\": \"web-{i}\"}}")}},
                {"id": format!("pad_{i}_b"), "type": "function", "function": {"name": "search_docs", "arguments": "{\"query\": \"latency\"}"}}
            ]}),
            json!({"role": "tool", "tool_call_id": format!("pad_{i}_b"), "content": "no runbook"}),
            json!({"role": "tool", "tool_call_id": format!("pad_{i}_a"), "content": "{\"p99_ms\": 120}"}),
            json!({"role": "assistant", "content": format!("web-{i} looks fine.")}),
        ]
    };
    doc["messages"] = Value::Array(pad(&messages, &[2, 6, messages.len()], 8, round));
    let trace = serde_json::to_string_pretty(&doc).unwrap();

    let text = shrinks_in_its_own_format("long-openai.json", &trace, Format::OpenAi);
    let shrunk: Value = serde_json::from_str(&text).unwrap();
    // The message with two calls stays whole, with both replies; no padding is left.
    let kept: Vec<String> = shrunk["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kept, ["assistant", "assistant", "tool", "tool"], "{text}");
    assert!(
        text.contains("\"call_par\"") && text.contains("950"),
        "{text}"
    );
    assert!(
        !text.contains("pad_") && !text.contains("req_early"),
        "{text}"
    );
    // What is left is the input's own text: the run's fields and each message as it was.
    assert!(text.contains("\"model\": \"gpt-4o-2024-08-06\""), "{text}");
}

#[test]
fn an_openai_responses_trace_shrinks_to_an_openai_responses_trace() {
    let items = example("forbidden-transition-openai-responses.json");
    let items = items.as_array().unwrap();
    let round = |i: usize| {
        vec![
            json!({"role": "user", "content": format!("Round {i}: how is web-{i} doing?")}),
            json!({"type": "function_call", "id": format!("fc_pad_{i}"), "call_id": format!("pad_{i}"), "name": "get_metrics", "arguments": format!("{{\"host\": \"web-{i}\"}}")}),
            json!({"type": "function_call_output", "call_id": format!("pad_{i}"), "output": "{\"p99_ms\": 120}"}),
            json!({"type": "reasoning", "id": format!("rs_pad_{i}"), "summary": []}),
            json!({"type": "message", "id": format!("msg_pad_{i}"), "role": "assistant", "content": [{"type": "output_text", "text": format!("web-{i} looks fine.")}]}),
        ]
    };
    let items = pad(items, &[1, 3, items.len()], 8, round);
    let trace = serde_json::to_string_pretty(&Value::Array(items)).unwrap();

    let text = shrinks_in_its_own_format("long-responses.json", &trace, Format::Responses);
    // The two creates, the second one's output, and one assistant message between them
    // (any one): without it the first create is not over before the second.
    let kept: Vec<String> = serde_json::from_str::<Vec<Value>>(&text)
        .unwrap()
        .iter()
        .map(|item| item["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kept,
        [
            "function_call",
            "message",
            "function_call",
            "function_call_output"
        ],
        "{text}"
    );
    assert!(!text.contains("get_metrics"), "{text}");
}

#[test]
fn an_anthropic_trace_shrinks_to_an_anthropic_trace() {
    let mut doc = example("forbidden-transition-anthropic.json");
    let mut messages = doc["messages"].as_array().unwrap().clone();
    // The blind re-create comes with a second tool use in the same message, and both
    // results in one user message.
    messages[3]["content"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "tool_use", "id": "toolu_par", "name": "get_metrics", "input": {"host": "api-eu-2"}}));
    messages[4]["content"].as_array_mut().unwrap().push(
        json!({"type": "tool_result", "tool_use_id": "toolu_par", "content": "{\"p99_ms\": 950}"}),
    );
    let round = |i: usize| {
        vec![
            json!({"role": "user", "content": format!("Round {i}: how is web-{i} doing?")}),
            json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": "Look at the metrics.", "signature": "sig"},
                {"type": "tool_use", "id": format!("pad_{i}_a"), "name": "get_metrics", "input": {"host": format!("web-{i}")}},
                {"type": "tool_use", "id": format!("pad_{i}_b"), "name": "search_docs", "input": {"query": "latency"}}
            ]}),
            json!({"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": format!("pad_{i}_a"), "content": "{\"p99_ms\": 120}"},
                {"type": "tool_result", "tool_use_id": format!("pad_{i}_b"), "content": "no runbook"}
            ]}),
            json!({"role": "assistant", "content": format!("web-{i} looks fine.")}),
        ]
    };
    doc["messages"] = Value::Array(pad(&messages, &[0, 3, messages.len()], 8, round));
    let trace = serde_json::to_string_pretty(&doc).unwrap();

    let text = shrinks_in_its_own_format("long-anthropic.json", &trace, Format::Anthropic);
    assert!(!text.contains("pad_"), "{text}");
    assert!(
        text.contains("\"toolu_par\"") && text.contains("950"),
        "{text}"
    );
    assert!(text.contains("\"system\": "), "{text}");
}

#[test]
fn an_mcp_log_shrinks_to_an_mcp_log() {
    let path = root().join("traces/reconcile_before_retry/fail/forbidden-transition-mcp.jsonl");
    let lines: Vec<Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let round = |i: usize| {
        vec![
            json!({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call", "params": {"name": "get_metrics", "arguments": {"host": format!("web-{i}")}}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": i, "progress": 1}}),
            json!({"jsonrpc": "2.0", "id": 100 + i, "result": {"content": [{"type": "text", "text": "{\"p99_ms\": 120}"}]}}),
        ]
    };
    let lines = pad(&lines, &[3, 5, lines.len()], 10, round);
    let mut trace = String::new();
    for line in &lines {
        let _ = writeln!(trace, "{line}");
    }

    let text = shrinks_in_its_own_format("long-mcp.jsonl", &trace, Format::Mcp);
    // Whole lines go; the kept ones are the input's lines.
    for line in text.lines() {
        assert!(trace.lines().any(|l| l == line), "{line}");
        assert!(!line.contains("get_metrics"), "{text}");
    }
}

#[test]
fn an_opentelemetry_export_shrinks_to_an_opentelemetry_export() {
    let mut doc = example("forbidden-transition-otel.json");
    let spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap()
        .clone();
    let attribute = |key: &str, value: &str| json!({"key": key, "value": {"stringValue": value}});
    // Padding spans in time order around the two creates (which start at …502 and …540
    // seconds).
    let round = |i: usize| {
        let start = match i {
            0..=7 => 1_730_977_400 + i as u64,
            8..=15 => 1_730_977_533 + (i as u64 - 8) / 2,
            _ => 1_730_977_600 + i as u64,
        };
        let nanos = |s: u64, ms: u64| (s * 1_000_000_000 + ms * 1_000_000).to_string();
        vec![
            json!({"traceId": "5b8efff798038103d269b633813fc60c", "spanId": format!("b0000000000000{i:02x}"), "parentSpanId": "a1b2c3d4e5f60001", "name": "chat gpt-4o", "kind": 3,
                "startTimeUnixNano": nanos(start, 0), "endTimeUnixNano": nanos(start, 100),
                "attributes": [attribute("gen_ai.operation.name", "chat")], "status": {}}),
            json!({"traceId": "5b8efff798038103d269b633813fc60c", "spanId": format!("c0000000000000{i:02x}"), "parentSpanId": "a1b2c3d4e5f60001", "name": "execute_tool get_metrics", "kind": 1,
                "startTimeUnixNano": nanos(start, 200), "endTimeUnixNano": nanos(start, 300),
                "attributes": [
                    attribute("gen_ai.operation.name", "execute_tool"),
                    attribute("gen_ai.tool.name", "get_metrics"),
                    attribute("gen_ai.tool.call.id", &format!("pad_{i}")),
                    attribute("gen_ai.tool.call.arguments", &format!("{{\"host\": \"web-{i}\"}}")),
                    attribute("gen_ai.tool.call.result", "{\"p99_ms\": 120}"),
                ], "status": {"code": 1}}),
        ]
    };
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] =
        Value::Array(pad(&spans, &[1, 2, spans.len()], 8, round));
    let trace = serde_json::to_string_pretty(&doc).unwrap();

    let text = shrinks_in_its_own_format("long-otel.json", &trace, Format::Otel);
    assert!(
        !text.contains("pad_") && !text.contains("chat gpt-4o"),
        "{text}"
    );
    assert!(text.contains("\"service.name\""), "{text}");
}

#[test]
fn an_atif_trajectory_shrinks_to_an_atif_trajectory() {
    let mut doc = example("forbidden-transition-atif.json");
    let steps = doc["steps"].as_array().unwrap().clone();
    let round = |i: usize| {
        vec![
            json!({"step_id": 0, "source": "user", "message": format!("Round {i}: how is web-{i} doing?")}),
            json!({"step_id": 0, "source": "agent", "message": "Checking the metrics.",
                "tool_calls": [{"tool_call_id": format!("pad_{i}"), "function_name": "get_metrics", "arguments": {"host": format!("web-{i}")}}],
                "observation": {"results": [{"source_call_id": format!("pad_{i}"), "content": "{\"p99_ms\": 120}"}]}}),
        ]
    };
    let mut steps = pad(&steps, &[0, 2, steps.len()], 8, round);
    for (i, step) in steps.iter_mut().enumerate() {
        step["step_id"] = json!(i + 1);
    }
    doc["steps"] = Value::Array(steps);
    let trace = serde_json::to_string_pretty(&doc).unwrap();

    let text = shrinks_in_its_own_format("long-atif.json", &trace, Format::Atif);
    assert!(!text.contains("pad_"), "{text}");
    assert!(text.contains("\"schema_version\": \"ATIF-v1.6\""), "{text}");
}

#[test]
fn a_document_that_is_one_message_is_shrunk_as_native_records() {
    let machine = reconcile();
    // One Anthropic response: nothing in it can go on its own.
    let response = json!({"role": "assistant", "content": [
        {"type": "text", "text": "Filing it twice."},
        {"type": "tool_use", "id": "t1", "name": "create_record", "input": {"request_id": "r1"}},
        {"type": "tool_use", "id": "t2", "name": "create_record", "input": {"request_id": "r2"}}
    ]});
    let shrunk = explore::shrink_file(
        std::slice::from_ref(&machine),
        serde_json::to_string_pretty(&response).unwrap().as_bytes(),
        &InputOptions::default(),
        &ShrinkOptions::default(),
    )
    .unwrap();
    assert_eq!(shrunk.written, Written::Records { left_out: 0 });
    assert_eq!(shrunk.violation.code, Code::UnexpectedEvent);
    let text = String::from_utf8(shrunk.text).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(
        text.lines().all(|l| l.starts_with("{\"kind\":\"call\"")),
        "{text}"
    );
}

#[test]
fn shrinking_keeps_the_record_that_bound_the_value_compared() {
    let output = run(&[
        "shrink",
        "specs/narrow_before_retry.tg",
        "traces/narrow_before_retry/fail/forbidden-transition.jsonl",
    ]);
    assert_eq!(output.status.code(), Some(0));
    let shrunk = stdout(&output);
    // The refusal that bound `$window` (720) stays with its call; the retry with the
    // same window is the violation; the first refusal (1440) and the prompt go.
    let lines: Vec<&str> = shrunk.lines().collect();
    assert_eq!(lines.len(), 3, "{shrunk}");
    assert!(lines[1].contains("window_too_large"), "{shrunk}");
    assert!(lines.iter().all(|l| !l.contains("1440")), "{shrunk}");
}
