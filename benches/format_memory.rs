//! Peak memory and throughput of `check` on each transcript format, against the size of
//! the file and of its largest transcript.
//!
//! Run with `cargo bench --bench format_memory` (add `-- --quick` for one timed run,
//! `-- --small` for inputs a tenth the size, and a word to run only the workloads whose
//! name holds it). Each workload is written to the system's temporary directory and
//! checked from its file, as `tracegate check` does, with the `--format` / `--select`
//! it names. For each it prints the file's size, its largest transcript's size, the
//! peak heap `check` held, and records/s.
//!
//! The target: no format needs more memory than a small multiple of its largest
//! transcript, plus 32 MB. (OpenTelemetry exports keep the place of each tool span,
//! about 340 bytes, to the end of the file, where they are read in start order, so
//! their peak follows the count of tool spans, not the largest trace.)
//!
//! Then MCP and Claude Code logs read as a stream (standard input, a pipe) gives
//! them, read once as they come (workload names end with `from a stream`).
//!
//! Then native JSONL split into traces by a field (`check --trace-by case`), the
//! traces one after another and ten at a time interleaved: checked from its file, as
//! `tracegate check` does (a first pass finds where each trace ends, and each is freed
//! there), beside the same bytes checked from a reader, which has no first pass and
//! holds every trace to the end (workload names start with `native --trace-by`).
//!
//! Then `check --join` of two witnesses in two formats (a Claude Code log and a Codex
//! rollout whose records interleave in time), each input streamed through its adapter
//! as `check --join` reads it, beside the same join with each input read whole by its
//! adapter first (how the join read a transcript format before it streamed them), in
//! the same run (workload names start with `join`).

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use tracegate::check::{CheckOptions, check_input, check_path};
use tracegate::machine::SpecSource;
use tracegate::trace::adapters::{Format, InputOptions, Selector};
use tracegate::trace::input::TraceInput;
use tracegate::trace::join::{JoinInput, TimeField};

#[path = "support/counting.rs"]
mod counting;
#[path = "support/measure.rs"]
mod measure;

use measure::{measure, write_file};

/// One instance per request id: a create must be answered before the next create of
/// the same id.
const SPEC: &str = r#"spec bench_format_memory
per args.request_id
event create  = call create_record
event created = result create_record where status == "ok"
event failed  = result create_record where status == "error"
initial idle
accept idle, done
idle    -> pending on create
pending -> done    on created
pending -> idle    on failed
done    -> pending on create
"#;

/// A generated input: its text, and the size of its largest transcript.
struct Input {
    text: String,
    largest: usize,
}

/// Writes `sessions` transcripts of about `bytes / sessions` bytes each, one after the
/// other, each by `open` (its first part), `op` (one call and its result, by number)
/// and `close`.
fn transcripts(
    bytes: usize,
    sessions: usize,
    mut open: impl FnMut(&mut String, usize),
    mut op: impl FnMut(&mut String, usize, usize),
    mut close: impl FnMut(&mut String, usize),
    between: &str,
) -> Input {
    let mut text = String::with_capacity(bytes + 4096);
    let per = bytes / sessions;
    let mut largest = 0;
    for session in 0..sessions {
        if session > 0 {
            text.push_str(between);
        }
        let start = text.len();
        open(&mut text, session);
        let mut n = 0;
        while text.len() - start < per {
            op(&mut text, session, n);
            n += 1;
        }
        close(&mut text, session);
        largest = largest.max(text.len() - start);
    }
    Input { text, largest }
}

/// A Claude Code session log: one envelope per line, an assistant `tool_use` and the
/// user's `tool_result` per call.
fn claude_code(bytes: usize, sessions: usize) -> Input {
    claude_code_unanswered(bytes, sessions, 0)
}

/// [`claude_code`] with a call of another tool after every `every`th call (none with
/// 0) that no `tool_result` answers: the session's records after it wait unless it is
/// known never answered.
fn claude_code_unanswered(bytes: usize, sessions: usize, every: usize) -> Input {
    transcripts(
        bytes,
        sessions,
        |out, s| {
            let _ = writeln!(
                out,
                r#"{{"type":"user","sessionId":"s{s}","uuid":"u{s}","parentUuid":null,"isSidechain":false,"timestamp":"2025-01-01T00:00:00Z","message":{{"role":"user","content":"Create the invoices of batch {s}."}}}}"#
            );
        },
        |out, s, n| {
            let _ = writeln!(
                out,
                r#"{{"type":"assistant","sessionId":"s{s}","uuid":"a{s}-{n}","parentUuid":"u{s}","isSidechain":false,"timestamp":"2025-01-01T00:00:01Z","message":{{"id":"msg_{s}_{n}","role":"assistant","content":[{{"type":"tool_use","id":"toolu_{s}_{n}","name":"create_record","input":{{"request_id":"req-{s}-{n}","title":"Invoice {n}","amount":{amount}}}}}]}}}}"#,
                amount = 100 + n % 900
            );
            let _ = writeln!(
                out,
                r#"{{"type":"user","sessionId":"s{s}","uuid":"r{s}-{n}","parentUuid":"a{s}-{n}","isSidechain":false,"timestamp":"2025-01-01T00:00:02Z","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{s}_{n}","content":"created rec_{s}_{n}"}}]}},"toolUseResult":{{"stdout":"rec_{s}_{n}","stderr":"","interrupted":false}}}}"#
            );
            if every > 0 && n % every == every - 1 {
                // A call of a tool the spec does not watch, never answered.
                let _ = writeln!(
                    out,
                    r#"{{"type":"assistant","sessionId":"s{s}","uuid":"n{s}-{n}","parentUuid":"r{s}-{n}","isSidechain":false,"timestamp":"2025-01-01T00:00:03Z","message":{{"id":"msg_n_{s}_{n}","role":"assistant","content":[{{"type":"tool_use","id":"toolu_n_{s}_{n}","name":"notify_owner","input":{{"record":"rec_{s}_{n}"}}}}]}}}}"#
                );
            }
        },
        |_, _| {},
        "",
    )
}

/// A Codex CLI rollout: a `session_meta` line, then a `function_call` and its
/// `function_call_output` per call.
fn codex(bytes: usize, sessions: usize) -> Input {
    transcripts(
        bytes,
        sessions,
        |out, s| {
            let _ = writeln!(
                out,
                r#"{{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{{"id":"s{s}","cwd":"/repo"}}}}"#
            );
        },
        |out, s, n| {
            let _ = writeln!(
                out,
                r#"{{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{{"type":"function_call","name":"create_record","call_id":"call_{s}_{n}","arguments":"{{\"request_id\": \"req-{s}-{n}\", \"title\": \"Invoice {n}\", \"amount\": {amount}}}"}}}}"#,
                amount = 100 + n % 900
            );
            let _ = writeln!(
                out,
                r#"{{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_{s}_{n}","output":"{{\"id\": \"rec_{s}_{n}\"}}"}}}}"#
            );
        },
        |_, _| {},
        "",
    )
}

/// One MCP `tools/call` request of session `s` and its reply, in envelopes.
fn mcp_op(out: &mut String, s: usize, n: usize) {
    let _ = writeln!(
        out,
        r#"{{"session_id":"s{s}","direction":"send","timestamp":"2025-01-01T00:00:01Z","message":{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"create_record","arguments":{{"request_id":"req-{s}-{n}","title":"Invoice {n}","amount":{amount}}}}}}}}}"#,
        amount = 100 + n % 900
    );
    let _ = writeln!(
        out,
        r#"{{"session_id":"s{s}","direction":"recv","timestamp":"2025-01-01T00:00:02Z","message":{{"jsonrpc":"2.0","id":{n},"result":{{"content":[{{"type":"text","text":"created rec_{s}_{n}"}}],"structuredContent":{{"id":"rec_{s}_{n}"}},"isError":false}}}}}}"#
    );
}

/// An MCP log of `sessions` sessions one after the other.
fn mcp(bytes: usize, sessions: usize) -> Input {
    transcripts(bytes, sessions, |_, _| {}, mcp_op, |_, _| {}, "")
}

/// An MCP log of `sessions` sessions, `together` at a time taking turns call by call:
/// each group's sessions interleave, and the groups follow one another.
fn mcp_interleaved(bytes: usize, sessions: usize, together: usize) -> Input {
    let mut text = String::with_capacity(bytes + 4096);
    let per = bytes / sessions;
    let mut largest = 0;
    for group in (0..sessions).step_by(together) {
        let members = group..(group + together).min(sessions);
        let start = text.len();
        let mut n = 0;
        while text.len() - start < per * members.len() {
            for s in members.clone() {
                mcp_op(&mut text, s, n);
            }
            n += 1;
        }
        // Each session's own lines, though spread over its group's.
        largest = largest.max((text.len() - start) / members.len());
    }
    Input { text, largest }
}

/// An MCP log of `sessions` sessions one after the other, as the `messages` of the one
/// run of an array of runs.
fn mcp_run(bytes: usize, sessions: usize) -> Input {
    let log = mcp(bytes, sessions);
    let messages: Vec<&str> = log.text.lines().collect();
    let text = format!(
        "[\n  {{\"id\": \"r0\", \"messages\": [\n    {}\n  ]}}\n]\n",
        messages.join(",\n    ")
    );
    Input {
        text,
        largest: log.largest,
    }
}

/// A JSON-RPC batch on one line, of half `bytes` (under the line limit): bare
/// `tools/call` requests, each followed by its reply. One transcript.
fn mcp_batch(bytes: usize) -> Input {
    let mut text = String::with_capacity(bytes / 2 + 4096);
    text.push('[');
    let mut n = 0;
    while text.len() < bytes / 2 {
        let _ = write!(
            text,
            r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"create_record","arguments":{{"request_id":"req-{n}","title":"Invoice {n}","amount":{amount}}}}}}},{{"jsonrpc":"2.0","id":{n},"result":{{"content":[{{"type":"text","text":"created rec_{n}"}}],"structuredContent":{{"id":"rec_{n}"}},"isError":false}}}},"#,
            amount = 100 + n % 900
        );
        n += 1;
    }
    text.pop();
    text.push_str("]\n");
    Input {
        largest: text.len(),
        text,
    }
}

/// One OpenAI Chat Completions call (an assistant message) and its tool message,
/// separated by `sep`.
fn openai_op(out: &mut String, s: usize, n: usize, sep: &str) {
    let _ = write!(
        out,
        r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "call_{s}_{n}", "type": "function", "function": {{"name": "create_record", "arguments": "{{\"request_id\": \"req-{s}-{n}\", \"title\": \"Invoice {n}\", \"amount\": {amount}}}"}}}}]}}{sep}{{"role": "tool", "tool_call_id": "call_{s}_{n}", "content": "{{\"id\": \"rec_{s}_{n}\", \"created\": true}}"}}"#,
        amount = 100 + n % 900
    );
}

/// OpenAI Chat Completions messages, one per line: one transcript.
fn openai_lines(bytes: usize) -> Input {
    transcripts(
        bytes,
        1,
        |out, _| out.push_str("{\"role\": \"user\", \"content\": \"Create the invoices.\"}\n"),
        |out, s, n| {
            openai_op(out, s, n, "\n");
            out.push('\n');
        },
        |_, _| {},
        "",
    )
}

/// An object-wrapped OpenAI document, `{"id", "messages": [...]}`: one transcript.
fn openai_object(bytes: usize) -> Input {
    transcripts(
        bytes,
        1,
        |out, _| {
            out.push_str("{\"id\": \"run-0\", \"model\": \"gpt-4o\", \"messages\": [\n  {\"role\": \"user\", \"content\": \"Create the invoices.\"}")
        },
        |out, s, n| {
            out.push_str(",\n  ");
            openai_op(out, s, n, ",\n  ");
        },
        |out, _| out.push_str("\n]}\n"),
        "",
    )
}

/// An OpenAI run-array document: a top-level array of `runs` runs, each
/// `{"id", "messages"}`.
fn openai_runs(bytes: usize, runs: usize) -> Input {
    let mut input = openai_runs_laid_out(bytes, runs, ("[\n", "  "), ",\n", "");
    input.text.push_str("\n]\n");
    input
}

/// What a Chat Completions request records beside its messages: the definition of its
/// tool and a `metadata` object.
const REQUEST_MEMBERS: &str = r#""model": "gpt-4o", "tools": [{"type": "function", "function": {"name": "create_record", "description": "Create an invoice record.", "parameters": {"type": "object", "properties": {"request_id": {"type": "string"}, "title": {"type": "string"}}, "required": ["request_id"]}}}], "metadata": {"tags": ["invoices"]}, "#;

/// The runs of [`openai_runs`] as a Chat Completions request records them, with
/// [`REQUEST_MEMBERS`] before their messages.
fn openai_runs_with_tools(bytes: usize, runs: usize) -> Input {
    let mut input = openai_runs_laid_out(bytes, runs, ("[\n", "  "), ",\n", REQUEST_MEMBERS);
    input.text.push_str("\n]\n");
    input
}

/// The runs of [`openai_runs`] as an agent with many tools records them: a `tools` list
/// of about 2 MB before each one's messages.
fn openai_runs_with_many_tools(bytes: usize, runs: usize) -> Input {
    let tool = |n: usize| {
        format!(
            r#"{{"type": "function", "function": {{"name": "tool_{n}", "description": "One of the agent's tools.", "parameters": {{"type": "object", "properties": {{"request_id": {{"type": "string"}}}}}}}}}}"#
        )
    };
    let tools: Vec<String> = (0..2_000_000 / tool(0).len()).map(tool).collect();
    let members = format!(r#""model": "gpt-4o", "tools": [{}], "#, tools.join(", "));
    let mut input = openai_runs_laid_out(bytes, runs, ("[\n", "  "), ",\n", &members);
    input.text.push_str("\n]\n");
    input
}

/// The runs of [`openai_runs`], one JSON document per line.
fn openai_run_lines(bytes: usize, runs: usize) -> Input {
    let mut input = openai_runs_laid_out(bytes, runs, ("", ""), "\n", "");
    input.text.push('\n');
    input
}

/// `runs` OpenAI runs, `between` between them, the first after `start` and each after
/// `indent`, `members` before each one's messages.
fn openai_runs_laid_out(
    bytes: usize,
    runs: usize,
    (start, indent): (&str, &str),
    between: &str,
    members: &str,
) -> Input {
    transcripts(
        bytes,
        runs,
        |out, s| {
            if s == 0 {
                out.push_str(start);
            }
            let _ = write!(
                out,
                "{indent}{{\"id\": \"run-{s}\", {members}\"messages\": [{{\"role\": \"user\", \"content\": \"Create the invoices of batch {s}.\"}}"
            );
        },
        |out, s, n| {
            out.push_str(", ");
            openai_op(out, s, n, ", ");
        },
        |out, _| out.push_str("]}"),
        between,
    )
}

/// An array of `runs` Anthropic runs, each `{"id", "messages"}`: an assistant message
/// with a text block and a `tool_use`, then the user's `tool_result`, per call.
fn anthropic_runs(bytes: usize, runs: usize) -> Input {
    let mut input = transcripts(
        bytes,
        runs,
        |out, s| {
            out.push_str(if s == 0 { "[\n  " } else { "  " });
            let _ = write!(
                out,
                "{{\"id\": \"run-{s}\", \"messages\": [{{\"role\": \"user\", \"content\": \"Create the invoices of batch {s}.\"}}"
            );
        },
        |out, s, n| {
            let _ = write!(
                out,
                r#", {{"role": "assistant", "content": [{{"type": "text", "text": "Creating invoice {n}."}}, {{"type": "tool_use", "id": "toolu_{s}_{n}", "name": "create_record", "input": {{"request_id": "req-{s}-{n}", "title": "Invoice {n}", "amount": {amount}}}}}]}}, {{"role": "user", "content": [{{"type": "tool_result", "tool_use_id": "toolu_{s}_{n}", "content": "{{\"id\": \"rec_{s}_{n}\", \"created\": true}}"}}]}}"#,
                amount = 100 + n % 900
            );
        },
        |out, _| out.push_str("]}"),
        ",\n",
    );
    input.text.push_str("\n]\n");
    input
}

/// `seconds` after 2025-01-01T00:00:00Z, in RFC 3339 (up to 27 days on).
fn stamp(seconds: usize) -> String {
    let (day, h, m, s) = (
        1 + seconds / 86_400,
        seconds / 3600 % 24,
        seconds / 60 % 60,
        seconds % 60,
    );
    format!("2025-01-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

/// Two witnesses of `sessions` sessions each, about `bytes` each, for a join: a Claude
/// Code log and a Codex rollout, each in time order, whose records interleave in time
/// (the log's call `k` at second `4k`, its result at `4k + 1`; the rollout's at
/// `4k + 2` and `4k + 3`). Request ids differ between them.
fn join_inputs(bytes: usize, sessions: usize) -> (Input, Input) {
    let mut k = 0;
    let log = transcripts(
        bytes,
        sessions,
        |_, _| {},
        |out, s, n| {
            let (call, result) = (stamp(4 * k), stamp(4 * k + 1));
            k += 1;
            let _ = writeln!(
                out,
                r#"{{"type":"assistant","sessionId":"s{s}","uuid":"a{s}-{n}","parentUuid":null,"isSidechain":false,"timestamp":"{call}","message":{{"id":"msg_{s}_{n}","role":"assistant","content":[{{"type":"tool_use","id":"toolu_{s}_{n}","name":"create_record","input":{{"request_id":"cc-{s}-{n}","title":"Invoice {n}","amount":{amount}}}}}]}}}}"#,
                amount = 100 + n % 900
            );
            let _ = writeln!(
                out,
                r#"{{"type":"user","sessionId":"s{s}","uuid":"r{s}-{n}","parentUuid":"a{s}-{n}","isSidechain":false,"timestamp":"{result}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{s}_{n}","content":"created rec_{s}_{n}"}}]}},"toolUseResult":{{"stdout":"rec_{s}_{n}","stderr":"","interrupted":false}}}}"#
            );
        },
        |_, _| {},
        "",
    );
    let mut k = 0;
    let mut opened = usize::MAX;
    let rollout = transcripts(
        bytes,
        sessions,
        |_, _| {},
        |out, s, n| {
            let (call, result) = (stamp(4 * k + 2), stamp(4 * k + 3));
            k += 1;
            if opened != s {
                opened = s;
                let _ = writeln!(
                    out,
                    r#"{{"timestamp":"{call}","type":"session_meta","payload":{{"id":"cx{s}","cwd":"/repo"}}}}"#
                );
            }
            let _ = writeln!(
                out,
                r#"{{"timestamp":"{call}","type":"response_item","payload":{{"type":"function_call","name":"create_record","call_id":"call_{s}_{n}","arguments":"{{\"request_id\": \"cx-{s}-{n}\", \"title\": \"Invoice {n}\", \"amount\": {amount}}}"}}}}"#,
                amount = 100 + n % 900
            );
            let _ = writeln!(
                out,
                r#"{{"timestamp":"{result}","type":"response_item","payload":{{"type":"function_call_output","call_id":"call_{s}_{n}","output":"{{\"id\": \"rec_{s}_{n}\"}}"}}}}"#
            );
        },
        |_, _| {},
        "",
    );
    (log, rollout)
}

/// A top-level list of OpenAI Chat Completions messages, `[{"role": …}, …]`: one
/// transcript.
fn openai_list(bytes: usize) -> Input {
    transcripts(
        bytes,
        1,
        |out, _| out.push_str("[\n  {\"role\": \"user\", \"content\": \"Create the invoices.\"}"),
        |out, s, n| {
            out.push_str(",\n  ");
            openai_op(out, s, n, ",\n  ");
        },
        |out, _| out.push_str("\n]\n"),
        "",
    )
}

/// An object of OpenAI runs, `{"runs": [{"id", "messages": [...]}, …]}`, of `runs`
/// runs.
fn openai_object_runs(bytes: usize, runs: usize) -> Input {
    let mut input = openai_runs(bytes, runs);
    input.text = format!(
        "{{\"model\": \"gpt-4o\", \"runs\": {}}}\n",
        input.text.trim_end()
    );
    input
}

/// `sessions` OpenAI runs in an object keyed by session id, the ids not in key order
/// (`{"model", "sessions": {"<id>": {"id", "messages": [...]}, …}}`), as an export of
/// sessions keyed by a random id is.
fn openai_sessions(bytes: usize, sessions: usize) -> Input {
    // A fixed scramble of the session numbers, so that the keys are out of order.
    let key = |s: usize| {
        (s as u64)
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .rotate_left(17)
    };
    let mut input = transcripts(
        bytes,
        sessions,
        |out, s| {
            let _ = write!(
                out,
                "  \"{:016x}\": {{\"id\": \"run-{s}\", \"messages\": [{{\"role\": \"user\", \"content\": \"Create the invoices of batch {s}.\"}}",
                key(s)
            );
        },
        |out, s, n| {
            out.push_str(", ");
            openai_op(out, s, n, ", ");
        },
        |out, _| out.push_str("]}"),
        ",\n",
    );
    input.text = format!(
        "{{\"model\": \"gpt-4o\", \"sessions\": {{\n{}\n}}}}\n",
        input.text
    );
    input
}

/// A Gemini CLI session, `{"sessionId", …, "messages": [...]}`: a model turn with one
/// tool call and its result per call.
fn gemini(bytes: usize) -> Input {
    transcripts(
        bytes,
        1,
        |out, _| {
            out.push_str("{\"sessionId\": \"s0\", \"projectHash\": \"p\", \"startTime\": \"2025-01-01T00:00:00Z\", \"messages\": [\n  {\"id\": \"m0\", \"timestamp\": \"2025-01-01T00:00:00Z\", \"type\": \"user\", \"content\": \"Create the invoices.\"}")
        },
        |out, _, n| {
            let _ = write!(
                out,
                r#",
  {{"id": "g{n}", "timestamp": "2025-01-01T00:00:01Z", "type": "gemini", "content": "", "toolCalls": [{{"id": "call_{n}", "name": "create_record", "args": {{"request_id": "req-{n}", "title": "Invoice {n}", "amount": {amount}}}, "status": "success", "timestamp": "2025-01-01T00:00:02Z", "result": [{{"functionResponse": {{"id": "call_{n}", "name": "create_record", "response": {{"output": "{{\"id\": \"rec_{n}\"}}"}}}}}}]}}]}}"#,
                amount = 100 + n % 900
            );
        },
        |out, _| out.push_str("\n]}\n"),
        "",
    )
}

/// An ATIF trajectory, `{"schema_version", "session_id", "steps": [...]}`: an agent step
/// with one call and its observation per call.
fn atif(bytes: usize) -> Input {
    transcripts(
        bytes,
        1,
        |out, _| {
            out.push_str("{\"schema_version\": \"ATIF-v1.6\", \"session_id\": \"s0\", \"agent\": {\"name\": \"a\", \"version\": \"1\"}, \"steps\": [\n  {\"step_id\": 0, \"source\": \"user\", \"message\": \"Create the invoices.\"}")
        },
        |out, _, n| atif_step(out, "  ", &format!("call_{n}"), n),
        |out, _| out.push_str("\n]}\n"),
        "",
    )
}

/// The agent step of call `n` (its id `call`), after a comma and a newline and `indent`.
fn atif_step(out: &mut String, indent: &str, call: &str, n: usize) {
    let _ = write!(
        out,
        r#",
{indent}{{"step_id": {step}, "source": "agent", "message": "", "tool_calls": [{{"tool_call_id": "{call}", "function_name": "create_record", "arguments": {{"request_id": "req-{n}", "title": "Invoice {n}", "amount": {amount}}}}}], "observation": {{"results": [{{"source_call_id": "{call}", "content": "{{\"id\": \"rec_{n}\"}}"}}]}}}}"#,
        step = n + 1,
        amount = 100 + n % 900
    );
}

/// `runs` runs in an array, one object each: `open` writes it up to its list's first
/// element, `op` one call and its result (by number), then the list and the run end.
fn runs_array(
    bytes: usize,
    runs: usize,
    mut open: impl FnMut(&mut String, usize),
    op: impl FnMut(&mut String, usize, usize),
) -> Input {
    let mut input = transcripts(
        bytes,
        runs,
        |out, s| {
            if s == 0 {
                out.push_str("[\n");
            }
            open(out, s);
        },
        op,
        |out, _| out.push_str("\n  ]}"),
        ",\n",
    );
    input.text.push_str("\n]\n");
    input
}

/// ATIF trajectories as [`atif`] writes one, in an array of runs.
fn atif_runs(bytes: usize, runs: usize) -> Input {
    runs_array(
        bytes,
        runs,
        |out, s| {
            let _ = write!(
                out,
                "  {{\"schema_version\": \"ATIF-v1.6\", \"session_id\": \"s{s}\", \"agent\": {{\"name\": \"a\", \"version\": \"1\"}}, \"steps\": [\n    {{\"step_id\": 0, \"source\": \"user\", \"message\": \"Create the invoices of batch {s}.\"}}"
            );
        },
        |out, s, n| atif_step(out, "    ", &format!("call_{s}_{n}"), n),
    )
}

/// Runs of OpenAI Responses items (a request's `input`) in an array: a
/// `function_call`, its `function_call_output` and an assistant `message` per call.
fn responses_runs(bytes: usize, runs: usize) -> Input {
    runs_array(
        bytes,
        runs,
        |out, s| {
            let _ = write!(
                out,
                "  {{\"id\": \"resp-{s}\", \"model\": \"gpt-4o\", \"input\": [\n    {{\"role\": \"user\", \"content\": \"Create the invoices of batch {s}.\"}}"
            );
        },
        |out, s, n| {
            let _ = write!(
                out,
                r#",
    {{"type": "function_call", "id": "fc_{s}_{n}", "call_id": "call_{s}_{n}", "name": "create_record", "arguments": "{{\"request_id\": \"req-{n}\", \"title\": \"Invoice {n}\"}}"}},
    {{"type": "function_call_output", "call_id": "call_{s}_{n}", "output": "{{\"id\": \"rec_{n}\"}}"}},
    {{"type": "message", "role": "assistant", "content": [{{"type": "output_text", "text": "Created rec_{n}."}}]}}"#
            );
        },
    )
}

/// A Claude Code export, `{"loglines": [...]}`: the envelopes of one session.
fn claude_code_export(bytes: usize) -> Input {
    let lines = claude_code(bytes, 1);
    let envelopes: Vec<&str> = lines.text.lines().collect();
    let text = format!("{{\"loglines\": [\n  {}\n]}}\n", envelopes.join(",\n  "));
    Input {
        largest: text.len(),
        text,
    }
}

/// OpenTelemetry GenAI spans in OTLP JSON, as a batching exporter writes them: export
/// requests of about 1 MB, each one resource of one scope. Each trace (an agent turn)
/// is a chat span with a long prompt and completion, an `execute_tool` span of
/// `create_record` and a second chat span, which lands in the next export request, so
/// that a trace is spread over two. Export requests one per line (the collector's file
/// exporter), or (`document`) all of them as the resources of one pretty-printed
/// export. The largest transcript is the largest trace.
fn otel(bytes: usize, document: bool) -> Input {
    const PER_EXPORT: usize = 1_000_000;
    let prompt =
        "Create the invoice for the customer, then look it up by its request id. ".repeat(30);
    let completion = "I will create the record now and report its id. ".repeat(10);
    let chat = |out: &mut String, trace: usize, span: usize, start: u64| {
        let _ = write!(
            out,
            r#"{{"traceId":"{trace:032x}","spanId":"{span:016x}","name":"chat gpt-4o","kind":3,"startTimeUnixNano":"{start}","endTimeUnixNano":"{end}","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"chat"}}}},{{"key":"gen_ai.request.model","value":{{"stringValue":"gpt-4o"}}}},{{"key":"gen_ai.prompt","value":{{"stringValue":"{prompt}"}}}},{{"key":"gen_ai.completion","value":{{"stringValue":"{completion}"}}}}],"status":{{}}}}"#,
            end = start + 900_000_000,
        );
    };
    let tool = |out: &mut String, trace: usize, start: u64| {
        let _ = write!(
            out,
            r#"{{"traceId":"{trace:032x}","spanId":"{span:016x}","name":"execute_tool create_record","kind":1,"startTimeUnixNano":"{start}","endTimeUnixNano":"{end}","attributes":[{{"key":"gen_ai.operation.name","value":{{"stringValue":"execute_tool"}}}},{{"key":"gen_ai.tool.name","value":{{"stringValue":"create_record"}}}},{{"key":"gen_ai.tool.call.id","value":{{"stringValue":"call_{trace}"}}}},{{"key":"gen_ai.tool.call.arguments","value":{{"stringValue":"{{\"request_id\": \"req-{trace}\", \"title\": \"Invoice {trace}\", \"amount\": {amount}}}"}}}},{{"key":"gen_ai.tool.call.result","value":{{"stringValue":"{{\"id\": \"rec_{trace}\"}}"}}}}],"status":{{"code":1}}}}"#,
            span = trace * 4 + 1,
            end = start + 200_000_000,
            amount = 100 + trace % 900,
        );
    };
    let (open, sep, close) = match document {
        true => (
            "  {\"resource\": {\"attributes\": [{\"key\": \"service.name\", \"value\": {\"stringValue\": \"agent\"}}]}, \"scopeSpans\": [{\"scope\": {\"name\": \"agent\"}, \"spans\": [\n      ",
            ",\n      ",
            "\n  ]}]}",
        ),
        false => (
            "{\"resourceSpans\": [{\"resource\": {\"attributes\": [{\"key\": \"service.name\", \"value\": {\"stringValue\": \"agent\"}}]}, \"scopeSpans\": [{\"scope\": {\"name\": \"agent\"}, \"spans\": [",
            ",",
            "]}]}]}",
        ),
    };
    let mut text = String::with_capacity(bytes + PER_EXPORT + 4096);
    if document {
        text.push_str("{\"resourceSpans\": [\n");
    }
    // The traces whose last chat span goes into the next export request.
    let mut open_traces: Vec<usize> = Vec::new();
    let mut trace = 0;
    let mut largest = 0;
    let mut exports = 0;
    while text.len() < bytes {
        if exports > 0 && document {
            text.push_str(",\n");
        }
        exports += 1;
        let start = text.len();
        text.push_str(open);
        let mut first = true;
        let mut span = |text: &mut String| {
            if !first {
                text.push_str(sep);
            }
            first = false;
            text.len()
        };
        for done in std::mem::take(&mut open_traces) {
            span(&mut text);
            chat(
                &mut text,
                done,
                done * 4 + 2,
                1_700_000_000_000_000_000 + done as u64 * 1_000_000_000 + 500_000_000,
            );
        }
        while text.len() - start < PER_EXPORT {
            let at = 1_700_000_000_000_000_000 + trace as u64 * 1_000_000_000;
            let begin = span(&mut text);
            chat(&mut text, trace, trace * 4, at);
            span(&mut text);
            tool(&mut text, trace, at + 100_000_000);
            largest = largest.max(2 * (text.len() - begin));
            open_traces.push(trace);
            trace += 1;
        }
        text.push_str(close);
        if !document {
            text.push('\n');
        }
    }
    if !open_traces.is_empty() {
        text.push_str(if document { ",\n" } else { "" });
        text.push_str(open);
        for (i, done) in open_traces.into_iter().enumerate() {
            if i > 0 {
                text.push_str(sep);
            }
            chat(
                &mut text,
                done,
                done * 4 + 2,
                1_700_000_000_000_000_000 + done as u64 * 1_000_000_000 + 500_000_000,
            );
        }
        text.push_str(close);
        if !document {
            text.push('\n');
        }
    }
    if document {
        text.push_str("\n]}\n");
    }
    Input { text, largest }
}

/// [`otel`]'s export document minified onto one line, as an exporter that writes one
/// request per file writes it: the file is one line that detection must not hold.
/// OpenTelemetry export requests in a JSON array, one per line of it.
fn otel_array(bytes: usize) -> Input {
    let input = otel(bytes, false);
    let exports: Vec<&str> = input.text.lines().collect();
    Input {
        text: format!("[\n{}\n]\n", exports.join(",\n")),
        largest: input.largest,
    }
}

fn otel_one_line(bytes: usize) -> Input {
    let input = otel(bytes, true);
    // Every newline of the document is layout (a JSON string holds none), and so is
    // the indentation after it.
    let mut text: String = input.text.lines().map(str::trim).collect();
    text.push('\n');
    Input {
        text,
        largest: input.largest,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let small = args.iter().any(|a| a == "--small");
    let only: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let runs = if quick { 1 } else { 3 };
    let mb = if small { 10_000_000 } else { 100_000_000 };
    let source = Arc::new(SpecSource::new("bench_format_memory.tg", SPEC.to_string()));
    let specs = vec![tracegate::spec::analyzer::load(source).expect("the benchmark spec compiles")];
    let dir = std::env::temp_dir().join(format!(
        "tracegate-bench-format-memory-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&dir).expect("the temporary directory can be made");
    let select = |path: &str| Some(Selector::parse(path).expect("the selector parses"));
    let selected = |path: &str| InputOptions {
        format: None,
        select: select(path),
    };
    // Each run's message list, in an array of runs.
    let each_list = selected("[*].messages");
    let detected = InputOptions::default();
    let forced = |format| InputOptions {
        format: Some(format),
        select: None,
    };

    type Workload = (&'static str, fn(usize) -> Input, InputOptions);
    let workloads: Vec<Workload> = vec![
        (
            "claude-code 1 session",
            |b| claude_code(b, 1),
            detected.clone(),
        ),
        (
            "claude-code 100 sessions",
            |b| claude_code(b, 100),
            detected.clone(),
        ),
        (
            "claude-code 1 session, calls never answered",
            |b| claude_code_unanswered(b, 1, 9),
            detected.clone(),
        ),
        ("codex 1 session", |b| codex(b, 1), detected.clone()),
        ("codex 100 sessions", |b| codex(b, 100), detected.clone()),
        ("mcp 1 session", |b| mcp(b, 1), detected.clone()),
        ("mcp 100 sessions", |b| mcp(b, 100), detected.clone()),
        (
            "mcp 100 sessions, 10 interleaved",
            |b| mcp_interleaved(b, 100, 10),
            detected.clone(),
        ),
        (
            "mcp 100 sessions in one large run",
            |b| mcp_run(b, 100),
            detected.clone(),
        ),
        ("mcp batch on one line", mcp_batch, detected.clone()),
        ("openai lines", openai_lines, detected.clone()),
        ("openai object", openai_object, detected.clone()),
        ("openai runs", |b| openai_runs(b, 1000), detected.clone()),
        (
            "openai one large run",
            |b| openai_runs(b, 1),
            detected.clone(),
        ),
        (
            "openai one large run with tools",
            |b| openai_runs_with_tools(b, 1),
            detected.clone(),
        ),
        (
            "openai one large run with many tools",
            |b| openai_runs_with_many_tools(b, 1),
            detected.clone(),
        ),
        (
            "openai one large run --select",
            |b| openai_runs_with_tools(b, 1),
            each_list.clone(),
        ),
        (
            "openai two large lines --select",
            |b| openai_run_lines(b, 2),
            selected("messages"),
        ),
        (
            "openai one large run --format",
            |b| openai_runs_with_tools(b, 1),
            forced(Format::OpenAi),
        ),
        (
            "openai two large runs",
            |b| openai_runs(b, 2),
            detected.clone(),
        ),
        (
            "anthropic runs",
            |b| anthropic_runs(b, 1000),
            detected.clone(),
        ),
        (
            "anthropic one large run",
            |b| anthropic_runs(b, 1),
            detected.clone(),
        ),
        (
            "anthropic one large run --format",
            |b| anthropic_runs(b, 1),
            forced(Format::Anthropic),
        ),
        (
            "openai runs --select",
            |b| openai_runs(b, 1000),
            each_list.clone(),
        ),
        (
            "openai runs --format",
            |b| openai_runs(b, 1000),
            forced(Format::OpenAi),
        ),
        (
            "openai runs one per line",
            |b| openai_run_lines(b, 1000),
            detected.clone(),
        ),
        ("openai list", openai_list, detected.clone()),
        (
            "openai object runs",
            |b| openai_object_runs(b, 1000),
            detected.clone(),
        ),
        (
            "openai object runs --select",
            |b| openai_object_runs(b, 1000),
            selected("runs[*].messages"),
        ),
        (
            "openai object runs --select index",
            |b| openai_object_runs(b, 1000),
            selected("runs[500]"),
        ),
        (
            "openai sessions by id",
            |b| openai_sessions(b, 1000),
            detected.clone(),
        ),
        ("gemini session", gemini, detected.clone()),
        ("atif trajectory", atif, detected.clone()),
        (
            "atif one large trajectory in runs",
            |b| atif_runs(b, 1),
            detected.clone(),
        ),
        (
            "responses one large run",
            |b| responses_runs(b, 1),
            detected.clone(),
        ),
        ("claude-code export", claude_code_export, detected.clone()),
        (
            "claude-code --format",
            |b| claude_code(b, 1),
            forced(Format::ClaudeCode),
        ),
        ("otel export lines", |b| otel(b, false), detected.clone()),
        ("otel export document", |b| otel(b, true), detected.clone()),
        ("otel export one line", otel_one_line, detected.clone()),
        ("otel export array", otel_array, detected.clone()),
    ];

    println!(
        "{:<42} {:>8} {:>10} {:>9} {:>8} {:>12} {:>10} {:>8}",
        "workload", "file MB", "largest MB", "records", "s", "records/s", "peak MB", "peak/lg"
    );
    let wanted = |name: &str| only.is_empty() || only.iter().any(|o| name.contains(o.as_str()));
    for (name, generate, input_options) in workloads {
        if wanted(name) {
            workload(name, generate(mb), &dir, runs, |path| {
                let checked = check_path(&specs, path, &CheckOptions::default(), &input_options);
                (checked.outcome.records, checked.outcome.diagnostics.len())
            });
        }
    }
    // Logs read as a stream (standard input, a pipe) gives them: read once, as they
    // come, through `TraceInput::open_reader`.
    type Streamed = (&'static str, fn(usize) -> Input);
    let streamed: [Streamed; 3] = [
        ("mcp 1 session from a stream", |b| mcp(b, 1)),
        ("mcp 100 sessions from a stream", |b| mcp(b, 100)),
        ("claude-code 1 session from a stream", |b| claude_code(b, 1)),
    ];
    for (name, generate) in streamed {
        if wanted(name) {
            workload(name, generate(mb), &dir, runs, |path| {
                let file = std::fs::File::open(path).expect("the input opens");
                let input = TraceInput::open_reader(Box::new(file), &detected, None)
                    .expect("the stream opens");
                let stdin = Arc::from(Path::new("-"));
                let outcome = check_input(&specs, stdin, input, &CheckOptions::default(), None);
                (outcome.records, outcome.diagnostics.len())
            });
        }
    }
    if only.is_empty()
        || only
            .iter()
            .any(|o| "native --trace-by".contains(o.as_str()))
    {
        trace_by(&dir, &specs, mb, runs);
    }
    if only.is_empty() || only.iter().any(|o| "join".contains(o.as_str())) {
        join(&dir, &specs, mb, runs);
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "\nlargest = the largest transcript's bytes; peak = most heap `check` held at once \
         (counted); records/s best of {runs}."
    );
}

/// Writes `input` to a file, checks it `runs` times with `check` (which returns the
/// records read and the findings), and prints its row.
fn workload(
    name: &str,
    input: Input,
    dir: &Path,
    runs: usize,
    mut check: impl FnMut(&Path) -> (u64, usize),
) {
    let path = write_file(dir, "input.json", input.text.as_bytes());
    let file_mb = input.text.len() as f64 / 1e6;
    let largest_mb = input.largest as f64 / 1e6;
    drop(input);
    let mut read = (0, 0);
    let figures = measure(runs, || read = check(&path));
    assert_eq!(read.1, 0, "{name}: the generated input conforms");
    row(name, file_mb, largest_mb, read.0, &figures);
}

/// Prints a workload's row: its sizes, records/s and peak heap.
fn row(name: &str, file_mb: f64, largest_mb: f64, records: u64, figures: &measure::Figures) {
    let peak_mb = figures.peak_bytes as f64 / 1e6;
    println!(
        "{:<42} {:>8.1} {:>10.1} {:>9} {:>8.2} {:>12.0} {:>10.1} {:>7.1}x",
        name,
        file_mb,
        largest_mb,
        records,
        figures.seconds,
        records as f64 / figures.seconds,
        peak_mb,
        peak_mb / largest_mb,
    );
}

/// Native records of `traces` traces named by their `case` field, `together` of them
/// at a time taking turns line by line: in each, calls and their results.
fn cases(bytes: usize, traces: usize, together: usize) -> Input {
    let per = bytes / traces;
    let mut text = String::with_capacity(bytes + 4096);
    let mut largest = 0;
    for group in (0..traces).step_by(together) {
        let members: Vec<usize> = (group..(group + together).min(traces)).collect();
        let mut sizes = vec![0; members.len()];
        let mut n = 0;
        while sizes.iter().any(|&size| size < per) {
            for (i, case) in members.iter().enumerate() {
                let start = text.len();
                let _ = writeln!(
                    text,
                    r#"{{"case":"case-{case}","kind":"call","tool":"create_record","call_id":"c{n}","args":{{"request_id":"req-{case}-{n}","title":"Invoice {n}","amount":{amount}}}}}"#,
                    amount = 100 + n % 900
                );
                let _ = writeln!(
                    text,
                    r#"{{"case":"case-{case}","kind":"result","tool":"create_record","call_id":"c{n}","status":"ok","output":{{"id":"rec_{case}_{n}"}}}}"#
                );
                sizes[i] += text.len() - start;
            }
            n += 1;
        }
        largest = largest.max(sizes.iter().copied().max().unwrap_or(0));
    }
    Input { text, largest }
}

/// `check --trace-by case` of native records, from the file (a first pass finds where
/// each trace ends) and from a reader (no first pass: every trace is held to the end).
fn trace_by(dir: &Path, specs: &[tracegate::machine::Machine], mb: usize, runs: usize) {
    use tracegate::check::check_reader;
    use tracegate::json::Segment;
    let options = CheckOptions {
        trace_by: Some(vec![Segment::Key("case".into())]),
        ..CheckOptions::default()
    };
    for (name, together) in [("", 1), (", 10 interleaved", 10)] {
        let input = cases(mb, 20_000, together);
        let path = write_file(dir, "cases.jsonl", input.text.as_bytes());
        let file_mb = input.text.len() as f64 / 1e6;
        let largest_mb = input.largest as f64 / 1e6;
        drop(input);
        for (how, from_file) in [("file", true), ("reader", false)] {
            let mut read = (0, 0, 0);
            let figures = measure(runs, || {
                let outcome = if from_file {
                    check_path(specs, &path, &options, &InputOptions::default()).outcome
                } else {
                    let file = std::fs::File::open(&path).expect("the input opens");
                    let reader = std::io::BufReader::with_capacity(1 << 16, file);
                    check_reader(specs, Arc::from(path.as_path()), reader, &options)
                };
                read = (outcome.records, outcome.traces, outcome.diagnostics.len());
            });
            assert_eq!(read.1, 20_000, "every case is a trace");
            assert_eq!(read.2, 0, "the generated input conforms");
            let name = format!("native --trace-by{name}, {how}");
            row(&name, file_mb, largest_mb, read.0, &figures);
        }
    }
}

/// A joined check of a Claude Code log and a Codex rollout, streamed as `check --join`
/// reads them, and with each read whole by its adapter first.
fn join(dir: &Path, specs: &[tracegate::machine::Machine], mb: usize, runs: usize) {
    let (log, rollout) = join_inputs(mb, 100);
    let file_mb = (log.text.len() + rollout.text.len()) as f64 / 1e6;
    let largest_mb = log.largest.max(rollout.largest) as f64 / 1e6;
    let paths = [
        write_file(dir, "log.jsonl", log.text.as_bytes()),
        write_file(dir, "rollout.jsonl", rollout.text.as_bytes()),
    ];
    drop((log, rollout));
    let options = InputOptions::default();
    type Inputs = Vec<(Arc<Path>, JoinInput<Box<dyn std::io::BufRead + Send>>)>;
    let streamed = || -> Inputs {
        paths
            .iter()
            .map(|path| {
                let input =
                    tracegate::trace::join::open(path, &options, None).expect("the input opens");
                assert!(matches!(input, JoinInput::Stream(_)), "{input:?}");
                (Arc::from(path.as_path()), input)
            })
            .collect()
    };
    let whole = || -> Inputs {
        paths
            .iter()
            .map(|path| {
                let reading = TraceInput::open(path, &options, None)
                    .expect("the input opens")
                    .into_reading()
                    .expect("a transcript is read by its adapter");
                (
                    Arc::from(path.as_path()),
                    JoinInput::Read(Box::new(reading)),
                )
            })
            .collect()
    };
    let check = |inputs| {
        let outcome = tracegate::joined::check_joined(
            specs,
            inputs,
            TimeField::default(),
            &CheckOptions::default(),
        );
        assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
        outcome.records
    };
    let mut records = 0;
    let stream = measure(runs, || records = check(streamed()));
    let read = measure(runs, || assert_eq!(check(whole()), records));
    for (name, figures) in [
        ("join streamed", stream),
        ("join read whole (before)", read),
    ] {
        row(name, file_mb, largest_mb, records, &figures);
    }
}
