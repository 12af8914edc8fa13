//! Logs of many traces read line by line (a Claude Code log's sessions, a Codex
//! rollout's sessions, an MCP log's sessions, and native records split by
//! `--trace-by`) end each trace once its last line is read, as a document of runs ends
//! each run's: the checker checks that trace's end then and frees it, and what it
//! finds is reported where the end of the file would report it. Each log here is over
//! a MiB, so that a first pass finds where each trace ends.

use std::cell::RefCell;
use std::path::Path;

use tracegate::check::{CheckOptions, Observation, Outcome, check_input, check_path_observed};
use tracegate::json::Segment;
use tracegate::trace::adapters::InputOptions;
use tracegate::trace::input::{Item, TraceInput};

use crate::documents::{ANSWERED, LOOKED_UP, spec_sets};

/// Lines of a log in one format: a trace's opening lines (with `padding` bytes of
/// text), a call and its reply.
struct Log {
    name: &'static str,
    open: fn(&str, &str) -> String,
    call: fn(&str, &str, &str, &str) -> String,
    reply: fn(&str, &str, &str) -> String,
    /// Whether the adapter gives a call unanswered at the next turn its `missing`
    /// result there (else the checker does, at the end of the trace).
    turns: bool,
    /// The field that names each record's trace, for records that the user splits
    /// into traces (`--trace-by`) rather than the adapter.
    trace_by: Option<&'static str>,
}

fn claude_open(trace: &str, padding: &str) -> String {
    format!(
        r#"{{"type":"user","sessionId":"{trace}","uuid":"u-{trace}","message":{{"role":"user","content":"Create the invoices. {padding}"}}}}"#
    )
}

fn claude_call(trace: &str, id: &str, tool: &str, args: &str) -> String {
    format!(
        r#"{{"type":"assistant","sessionId":"{trace}","uuid":"a-{trace}-{id}","message":{{"id":"msg-{trace}-{id}","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"{tool}","input":{args}}}]}}}}"#
    )
}

fn claude_reply(trace: &str, id: &str, output: &str) -> String {
    let output = serde_json::to_string(output).expect("a string");
    format!(
        r#"{{"type":"user","sessionId":"{trace}","uuid":"r-{trace}-{id}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":{output}}}]}}}}"#
    )
}

fn codex_open(trace: &str, padding: &str) -> String {
    format!(
        r#"{{"type":"session_meta","payload":{{"id":"{trace}"}}}}
{{"type":"response_item","payload":{{"type":"message","role":"user","content":"Create the invoices. {padding}"}}}}"#
    )
}

fn codex_call(_: &str, id: &str, tool: &str, args: &str) -> String {
    let args = serde_json::to_string(args).expect("a string");
    format!(
        r#"{{"type":"response_item","payload":{{"type":"function_call","name":"{tool}","call_id":"{id}","arguments":{args}}}}}"#
    )
}

fn codex_reply(_: &str, id: &str, output: &str) -> String {
    let output = serde_json::to_string(output).expect("a string");
    format!(
        r#"{{"type":"response_item","payload":{{"type":"function_call_output","call_id":"{id}","output":{output}}}}}"#
    )
}

fn mcp_open(trace: &str, padding: &str) -> String {
    format!(
        r#"{{"session_id":"{trace}","direction":"recv","message":{{"jsonrpc":"2.0","method":"notifications/message","params":{{"data":"{padding}"}}}}}}"#
    )
}

fn mcp_call(trace: &str, id: &str, tool: &str, args: &str) -> String {
    format!(
        r#"{{"session_id":"{trace}","direction":"send","message":{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}}}"#
    )
}

fn mcp_reply(trace: &str, id: &str, output: &str) -> String {
    format!(
        r#"{{"session_id":"{trace}","direction":"recv","message":{{"jsonrpc":"2.0","id":"{id}","result":{{"content":[],"structuredContent":{output}}}}}}}"#
    )
}

fn native_open(trace: &str, padding: &str) -> String {
    format!(
        r#"{{"case":"{trace}","kind":"message","role":"user","text":"Create the invoices. {padding}"}}"#
    )
}

fn native_call(trace: &str, id: &str, tool: &str, args: &str) -> String {
    format!(r#"{{"case":"{trace}","kind":"call","tool":"{tool}","call_id":"{id}","args":{args}}}"#)
}

fn native_reply(trace: &str, id: &str, output: &str) -> String {
    format!(
        r#"{{"case":"{trace}","kind":"result","call_id":"{id}","status":"ok","output":{output}}}"#
    )
}

const LOGS: [Log; 4] = [
    Log {
        name: "a Claude Code log",
        open: claude_open,
        call: claude_call,
        reply: claude_reply,
        turns: true,
        trace_by: None,
    },
    Log {
        name: "a Codex rollout",
        open: codex_open,
        call: codex_call,
        reply: codex_reply,
        turns: false,
        trace_by: None,
    },
    Log {
        name: "an MCP log",
        open: mcp_open,
        call: mcp_call,
        reply: mcp_reply,
        turns: false,
        trace_by: None,
    },
    Log {
        name: "native records split by --trace-by",
        open: native_open,
        call: native_call,
        reply: native_reply,
        turns: false,
        trace_by: Some("case"),
    },
];

/// The lines of trace `run` of `log`, as the runs of `documents.rs` go: three creates,
/// the last unanswered in every third trace; in every other trace a lookup of the
/// first record, and in some of those a create after it.
fn trace_lines(log: &Log, run: usize) -> Vec<String> {
    let trace = format!("s{run}");
    let padding = "x".repeat(40_000);
    let mut lines = vec![(log.open)(&trace, &padding)];
    for n in 0..3 {
        let id = format!("c-{run}-{n}");
        let args = format!(r#"{{"request_id": "req-{run}-{n}"}}"#);
        lines.push((log.call)(&trace, &id, "create_record", &args));
        if !(run % 3 == 1 && n == 2) {
            let output = format!(r#"{{"id": "rec-{run}-{n}"}}"#);
            lines.push((log.reply)(&trace, &id, &output));
        }
    }
    if run % 2 == 0 {
        let id = format!("l-{run}");
        let args = format!(r#"{{"id": "rec-{run}-0"}}"#);
        lines.push((log.call)(&trace, &id, "lookup", &args));
        lines.push((log.reply)(&trace, &id, r#"{"found": true}"#));
        if run % 5 == 4 {
            let id = format!("c-{run}-9");
            let args = r#"{"request_id": "again"}"#;
            lines.push((log.call)(&trace, &id, "create_record", args));
            lines.push((log.reply)(&trace, &id, r#"{"id": "rec-again"}"#));
        }
    }
    lines
}

/// A log of 60 traces, one after the other, or (`together`) two at a time taking
/// turns line by line. (A Codex rollout's lines belong to the session of the
/// `session_meta` before them, so its sessions do not take turns.)
fn log_text(log: &Log, together: bool) -> String {
    let traces: Vec<Vec<String>> = (0..60).map(|run| trace_lines(log, run)).collect();
    let mut lines = Vec::new();
    for pair in traces.chunks(2) {
        if !together {
            lines.extend(pair.iter().flatten().cloned());
            continue;
        }
        let longest = pair.iter().map(Vec::len).max().unwrap_or(0);
        for i in 0..longest {
            lines.extend(pair.iter().filter_map(|trace| trace.get(i)).cloned());
        }
    }
    lines.join("\n") + "\n"
}

/// What checking `path` streamed and read whole found, and the moves the streamed
/// check made: each move's trace, and whether it was a `missing` result the checker
/// synthesized at the end of a trace.
fn streamed_and_whole(
    specs: &[tracegate::machine::Machine],
    path: &Path,
    trace_by: Option<&str>,
) -> (Outcome, Outcome, Vec<(usize, bool)>) {
    let options = InputOptions::default();
    let check = CheckOptions {
        trace_by: trace_by.map(|field| vec![Segment::Key(field.into())]),
        ..CheckOptions::default()
    };
    let moves = RefCell::new(Vec::new());
    let observer = Box::new(|seen: &Observation<'_>| {
        moves.borrow_mut().push((seen.trace, seen.at_end));
    });
    let streamed = check_path_observed(specs, path, &check, &options, Some(observer)).outcome;
    // Native records are read from a reader, which has no first pass; a transcript, by
    // its adapter at once.
    let whole = match trace_by {
        Some(_) => TraceInput::native(
            std::io::BufReader::new(std::fs::File::open(path).expect("it opens")),
            None,
        ),
        None => TraceInput::read(
            TraceInput::open(path, &options, None)
                .expect("it opens")
                .into_reading()
                .expect("a log is adapted"),
        ),
    };
    let whole = check_input(specs, std::sync::Arc::from(path), whole, &check, None);
    (streamed, whole, moves.into_inner())
}

#[test]
fn threads_and_sessions_that_end_are_checked_to_their_end_at_once_and_report_as_read_whole() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let spec_sets = spec_sets("traces end at once");
    for log in &LOGS {
        for together in [false, true] {
            if together && log.name == "a Codex rollout" {
                continue;
            }
            let text = log_text(log, together);
            assert!(text.len() > 2 << 20, "a first pass reads it");
            let path = dir.path().join("log.jsonl");
            std::fs::write(&path, &text).expect("the log is written");
            for (set, texts, waits_for) in &spec_sets {
                let specs: Vec<_> = texts.iter().map(|text| crate::util::spec(text)).collect();
                let (streamed, whole, moves) = streamed_and_whole(&specs, &path, log.trace_by);
                let what = format!("{}, together: {together}, {set}", log.name);
                let have: Vec<String> = streamed
                    .diagnostics
                    .iter()
                    .map(|d| format!("{d:?}"))
                    .collect();
                let want: Vec<String> =
                    whole.diagnostics.iter().map(|d| format!("{d:?}")).collect();
                assert_eq!(have, want, "{what}");
                let counts = |o: &Outcome| (o.records, o.traces, o.synthesized, o.matched);
                assert_eq!(counts(&streamed), counts(&whole), "{what}");
                assert_eq!(streamed.traces, 60, "{what}");
                let codes: Vec<&str> = streamed
                    .diagnostics
                    .iter()
                    .map(|d| d.code.as_str())
                    .collect();
                // (The ambiguous set has no spec that a create after a lookup surprises.)
                let unexpected = texts.contains(&LOOKED_UP) || log.turns;
                for code in ["forbidden-transition", "unexpected-event", "unaccepted-end"] {
                    if code != "unexpected-event" || unexpected {
                        assert!(codes.contains(&code), "{what}: no {code} in {codes:?}");
                    }
                }
                // A trace that goes on after its unanswered create has a turn-based
                // adapter answer it `missing` in place; one that ends with it (trace 1
                // among them), the checker at its end.
                let synthesized = if log.turns { 10 } else { 20 };
                assert_eq!(streamed.synthesized, synthesized, "{what}");
                // Whether trace 1's `missing` result was checked when its last line
                // was read (or, for the traces read before the first pass, right
                // after it), before a later trace's records, or only at the end.
                let end = moves.iter().position(|m| *m == (1, true));
                let ended_early = end.is_some_and(|end| {
                    moves[end..]
                        .iter()
                        .any(|&(trace, at_end)| trace > 1 && !at_end)
                });
                // In the ambiguous set, a turn-based log's trace 4 has the same record
                // in place, handed on with trace 1's records after the first pass and
                // reported as it is read: then trace 1 need not wait.
                let waits_for = waits_for.filter(|_| !(log.turns && *set == "an ambiguous end"));
                match waits_for {
                    None => assert!(ended_early, "{what}: trace 1 did not end before the log"),
                    Some(code) => {
                        assert!(!ended_early, "{what}: trace 1 ended before the log");
                        assert!(codes.contains(&code), "{what}: no {code} in {codes:?}");
                    }
                }
            }
        }
    }
}

/// The records and trace ends `path` hands out, in order: `r TRACE` and `end TRACE`.
fn handed(path: &Path) -> Vec<String> {
    let input = TraceInput::open(path, &InputOptions::default(), None).expect("it opens");
    let mut seen = Vec::new();
    input.for_each(|item| match item {
        Item::Record(record) => {
            let trace = record.fields.raw_text("trace").unwrap_or_default();
            seen.push(format!("r {trace}"));
        }
        Item::TraceEnd(name) => seen.push(format!("end \"{name}\"")),
        Item::Problem(problem) => panic!("{problem:?}"),
        Item::Stopped(err) => panic!("{err}"),
    });
    seen
}

#[test]
fn each_trace_ends_once_after_its_last_record_and_before_the_log_does() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    // (The checker ends `--trace-by` traces, not the adapter.)
    for log in LOGS.iter().filter(|log| log.trace_by.is_none()) {
        for together in [false, true] {
            if together && log.name == "a Codex rollout" {
                continue;
            }
            let path = dir.path().join("log.jsonl");
            std::fs::write(&path, log_text(log, together)).expect("the log is written");
            let seen = handed(&path);
            let what = format!("{}, together: {together}", log.name);
            for run in 0..60 {
                let record = format!("r \"s{run}\"");
                let end = format!("end \"s{run}\"");
                let last = seen.iter().rposition(|s| *s == record).expect("a record");
                let ends: Vec<usize> = (0..seen.len()).filter(|&i| seen[i] == end).collect();
                assert_eq!(ends.len(), 1, "{what}: s{run} ends once");
                assert!(ends[0] > last, "{what}: s{run} ends after its records");
            }
            // The first traces end long before the log does: once a first pass has
            // found where they end, a MiB in.
            let first = seen
                .iter()
                .position(|s| s.starts_with("end"))
                .expect("an end");
            assert!(first < seen.len() / 2, "{what}: first end at {first}");
        }
    }
}

#[test]
fn a_name_two_sessions_share_ends_only_with_the_log() {
    // Bare messages are of no session, named as a session named "" is: their trace
    // goes on after its first session's last line, so neither ends before the log.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let log = &LOGS[2];
    let mut lines: Vec<String> = Vec::new();
    let padding = "x".repeat(40_000);
    lines.push(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create_record","arguments":{"request_id":"bare"}}}"#
            .to_string(),
    );
    for run in 0..40 {
        lines.extend(trace_lines(log, run));
    }
    lines.push((log.open)("", &padding));
    lines.push((log.call)(
        "",
        "c-late",
        "create_record",
        r#"{"request_id": "late"}"#,
    ));
    let path = dir.path().join("log.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").expect("the log is written");
    let seen = handed(&path);
    assert!(!seen.contains(&"end \"\"".to_string()), "{:?}", &seen[..3]);
    assert!(seen.contains(&"end \"s0\"".to_string()));
    let specs = vec![crate::util::spec(ANSWERED), crate::util::spec(LOOKED_UP)];
    let (streamed, whole, _) = streamed_and_whole(&specs, &path, None);
    let show =
        |o: &Outcome| -> Vec<String> { o.diagnostics.iter().map(|d| format!("{d:?}")).collect() };
    assert_eq!(show(&streamed), show(&whole));
    assert_eq!(streamed.traces, 41);
    assert_eq!(
        (streamed.records, streamed.synthesized),
        (whole.records, whole.synthesized)
    );
}
