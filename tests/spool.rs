//! A stream that a first pass must read (a JSON document, a Codex rollout) is copied
//! to a temporary file and read from there as its file is: from standard input, a
//! named pipe, `/dev/stdin` or a process substitution, what tracegate prints is what
//! it prints for the file, snippets quoted from anywhere in the stream included. A
//! temporary file that cannot be made or written is a clear error. An MCP log is read as
//! it comes until a file of its bytes would be read through first (its first MiB read
//! with the records all of one trace so far): then it is copied too, and read as its
//! file is; where no copy can be made, it is read on as it comes. Either way, its
//! findings and records are those of its file.

use std::path::Path;
use std::process::Output;

use crate::util::tracegate;

/// One create at a time per request id: a second create of an id still pending is a
/// violation.
const SPEC: &str = "spec one_create_at_a_time
per args.request_id
event create  = call create_record
event created = result create_record where status == \"ok\"
initial idle
accept idle, done
idle    -> pending on create
pending -> done    on created
";

/// An OpenAI chat call of `create_record` for `request_id`, with id `id`.
fn call(id: &str, request_id: &str) -> String {
    format!(
        r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "type": "function", "function": {{"name": "create_record", "arguments": "{{\"request_id\": \"{request_id}\"}}"}}}}]}}"#
    )
}

/// An OpenAI `{"id", "messages": [...]}` document of about `bytes` bytes: a create
/// repeated while pending near its start and again near its end, answered creates
/// between.
fn openai_document(bytes: usize) -> String {
    let mut messages = vec![
        r#"{"role": "user", "content": "go"}"#.to_string(),
        call("first-1", "early"),
        call("first-2", "early"),
    ];
    let mut n = 0;
    while messages.iter().map(String::len).sum::<usize>() < bytes {
        messages.push(call(&format!("c{n}"), &format!("req-{n}")));
        messages.push(format!(
            r#"{{"role": "tool", "tool_call_id": "c{n}", "content": "{{\"id\": \"rec-{n}\"}}"}}"#
        ));
        n += 1;
    }
    messages.push(call("last-1", "late"));
    messages.push(call("last-2", "late"));
    format!(
        "{{\"id\": \"run-1\", \"messages\": [\n  {}\n]}}\n",
        messages.join(",\n  ")
    )
}

/// A Codex rollout of about `bytes` bytes, one session: each create answered, but the
/// first and the last ones answered only after a second create of the same id.
fn codex_rollout(bytes: usize) -> String {
    let line = |ty: &str, payload: String| {
        format!(
            "{{\"timestamp\":\"2025-01-01T00:00:00Z\",\"type\":\"{ty}\",\"payload\":{payload}}}\n"
        )
    };
    let create = |id: &str, request_id: &str| {
        line(
            "response_item",
            format!(
                r#"{{"type":"function_call","name":"create_record","call_id":"{id}","arguments":"{{\"request_id\": \"{request_id}\"}}"}}"#
            ),
        )
    };
    let output = |id: &str| {
        line(
            "response_item",
            format!(r#"{{"type":"function_call_output","call_id":"{id}","output":"ok"}}"#),
        )
    };
    let mut text = line("session_meta", r#"{"id":"s1","cwd":"/repo"}"#.to_string());
    text += &create("first-1", "early");
    text += &create("first-2", "early");
    let mut n = 0;
    while text.len() < bytes {
        text += &create(&format!("c{n}"), &format!("req-{n}"));
        text += &output(&format!("c{n}"));
        n += 1;
    }
    text += &create("last-1", "late");
    text += &create("last-2", "late");
    text
}

/// A directory with the spec and `name` holding `text`.
fn scratch(name: &str, text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    std::fs::write(dir.path().join("spec.tg"), SPEC).expect("the spec is written");
    std::fs::write(dir.path().join(name), text).expect("the trace is written");
    dir
}

/// Exit code, stdout and stderr, as one text to compare.
fn shown(output: &Output) -> String {
    format!(
        "exit {:?}\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `tracegate ARGS… NAME` in `dir`, `NAME` a file there.
fn from_file(dir: &Path, args: &[&str], name: &str) -> Output {
    tracegate()
        .current_dir(dir)
        .args(args)
        .arg(name)
        .output()
        .expect("tracegate runs")
}

/// `tracegate ARGS… -` in `dir`, with the file `name` written to standard input, a
/// pipe.
fn from_stdin(dir: &Path, args: &[&str], name: &str) -> Output {
    tracegate()
        .current_dir(dir)
        .args(args)
        .arg("-")
        .write_stdin(std::fs::read(dir.join(name)).expect("the file is read"))
        .output()
        .expect("tracegate runs")
}

/// `tracegate ARGS… <stream>` run by bash in `dir`, the file `name` fed through
/// `stream`: `/dev/stdin` from a pipe, a named pipe, or a process substitution.
#[cfg(unix)]
fn from_shell(dir: &Path, args: &[&str], name: &str, stream: &str) -> Output {
    let binary = assert_cmd::cargo::cargo_bin("tracegate");
    let args = args.join(" ");
    let script = match stream {
        "/dev/stdin" => format!("cat {name} | '{}' {args} /dev/stdin", binary.display()),
        "pipe" => format!(
            "rm -f pipe; mkfifo pipe; cat {name} > pipe & '{}' {args} pipe; status=$?; wait; exit $status",
            binary.display()
        ),
        _ => format!("'{}' {args} <(cat {name})", binary.display()),
    };
    std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env_clear()
        .output()
        .expect("bash runs")
}

/// What the file's run prints, with its name made `shown_as`.
fn as_named(output: &Output, name: &str, shown_as: &str) -> String {
    shown(output).replace(name, shown_as)
}

/// Asserts that `args` print for the file `name` in `dir` on standard input what they
/// print for it by path (named `-` instead), and returns what that was.
fn stdin_reads_as_file(dir: &Path, args: &[&str], name: &str) -> String {
    let want = as_named(&from_file(dir, args, name), name, "-");
    let have = shown(&from_stdin(dir, args, name));
    assert_eq!(have, want, "{args:?}");
    have
}

/// The name a process substitution has (`/dev/fd/63` or so), from a run's output.
fn substituted_name(text: &str) -> String {
    let at = text.find("/dev/fd/").expect("the input is named");
    let end = text[at..].find([':', '"']).expect("the name ends");
    text[at..at + end].to_string()
}

const CHECK_JSON: &[&str] = &["check", "spec.tg", "--output", "json", "--traces"];
const CHECK: &[&str] = &["check", "spec.tg", "--traces"];

#[test]
fn a_long_document_on_standard_input_reads_as_its_file() {
    // Past the first bytes that decide the format, and past the last MiB a stream
    // read as it comes keeps to quote from.
    let dir = scratch("doc.json", &openai_document(3 << 20));
    for args in [CHECK_JSON, &["convert"][..]] {
        stdin_reads_as_file(dir.path(), args, "doc.json");
    }
    let human = stdin_reads_as_file(dir.path(), CHECK, "doc.json");
    assert!(human.starts_with("exit Some(1)"), "{human}");
    // Both violations, each with its record quoted.
    assert!(human.contains("--> -:4:1"), "{human}");
    assert!(
        human.contains(r#"| {"id": "first-2", "type": "function""#),
        "{human}"
    );
    assert!(
        human.contains(r#"| {"id": "last-2", "type": "function""#),
        "{human}"
    );
}

#[test]
fn a_long_codex_rollout_on_standard_input_reads_as_its_file() {
    let dir = scratch("rollout.jsonl", &codex_rollout(3 << 20));
    for args in [CHECK_JSON, &["convert"][..]] {
        stdin_reads_as_file(dir.path(), args, "rollout.jsonl");
    }
    let human = stdin_reads_as_file(dir.path(), CHECK, "rollout.jsonl");
    assert!(human.contains("--> -:3:1"), "{human}");
    for id in ["first-2", "last-2"] {
        let quoted =
            format!(r#"| {{"type":"function_call","name":"create_record","call_id":"{id}""#);
        assert!(human.contains(&quoted), "{human}");
    }
}

/// Asserts that `args` print for the file `name` in `dir`, fed through each of
/// `streams` (see [`from_shell`]), what they print for it by path, named as the stream
/// is; returns what they printed.
#[cfg(unix)]
fn streams_read_as_file(dir: &Path, args: &[&str], name: &str, streams: &[&str]) -> Vec<String> {
    let file = from_file(dir, args, name);
    let mut printed = Vec::new();
    for &stream in streams {
        let have = shown(&from_shell(dir, args, name, stream));
        let shown_as = match stream {
            "substitution" => substituted_name(&have),
            name => name.to_string(),
        };
        assert_eq!(have, as_named(&file, name, &shown_as), "{stream}");
        printed.push(have);
    }
    printed
}

#[cfg(unix)]
#[test]
fn a_long_document_through_a_pipe_reads_as_its_file() {
    let dir = scratch("doc.json", &openai_document(3 << 20));
    let streams = ["/dev/stdin", "pipe", "substitution"];
    for have in streams_read_as_file(dir.path(), CHECK, "doc.json", &streams) {
        assert!(have.contains("first-2"), "{have}");
    }
}

#[test]
fn a_join_reads_a_long_rollout_on_standard_input_as_its_file() {
    let dir = scratch("rollout.jsonl", &codex_rollout(3 << 20));
    std::fs::write(
        dir.path().join("other.jsonl"),
        "{\"time\":\"2025-01-01T00:00:00Z\",\"kind\":\"call\",\"tool\":\"create_record\",\"args\":{\"request_id\":\"early\"}}\n",
    )
    .expect("the log is written");
    let json = &[
        "check",
        "spec.tg",
        "--join",
        "--output",
        "json",
        "--traces",
        "other.jsonl",
    ];
    let human = &["check", "spec.tg", "--join", "--traces", "other.jsonl"];
    let have = stdin_reads_as_file(dir.path(), json, "rollout.jsonl");
    assert!(have.contains("\"file\":\"-\""), "{have}");
    let have = stdin_reads_as_file(dir.path(), human, "rollout.jsonl");
    // The other log's create comes first: the rollout's first one is the second.
    assert!(have.contains("--> -:2:1"), "{have}");
    assert!(have.contains("\"call_id\":\"first-1\""), "{have}");
}

/// An MCP log of one line of about `bytes` bytes, a JSON-RPC batch: a create repeated
/// while pending at its start and again at its end, answered creates between.
fn mcp_batch(bytes: usize) -> String {
    let call = |id: &str, request_id: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/call","params":{{"name":"create_record","arguments":{{"request_id":"{request_id}"}}}}}}"#
        )
    };
    let mut messages = vec![call("first-1", "early"), call("first-2", "early")];
    let mut n = 0;
    while messages.iter().map(String::len).sum::<usize>() < bytes {
        messages.push(call(&format!("c{n}"), &format!("req-{n}")));
        messages.push(format!(
            r#"{{"jsonrpc":"2.0","id":"c{n}","result":{{"content":[{{"type":"text","text":"created"}}],"structuredContent":{{"id":"rec-{n}"}}}}}}"#
        ));
        n += 1;
    }
    messages.push(call("last-1", "late"));
    messages.push(call("last-2", "late"));
    format!("[{}]\n", messages.join(","))
}

#[test]
fn a_large_mcp_batch_on_standard_input_reads_as_its_file() {
    // Over 1 MiB: read a few messages at a time from its text, by path and as it comes.
    let dir = scratch("batch.json", &mcp_batch(3 << 20));
    for args in [CHECK, &["convert"][..]] {
        stdin_reads_as_file(dir.path(), args, "batch.json");
    }
    let have = stdin_reads_as_file(dir.path(), CHECK_JSON, "batch.json");
    assert!(have.starts_with("exit Some(1)"), "{have}");
    // The second create of each id, where it is in the line.
    for (key, at) in [("early", 1), ("late", 25321)] {
        let found = format!(r#""line":1,"pointer":"/{at}","trace":null,"key":"{key}""#);
        assert!(have.contains(&found), "{have}");
    }
}

/// [`mcp_batch`]'s messages one per line: an MCP log of one trace.
fn mcp_lines(bytes: usize) -> String {
    let batch: Vec<serde_json::Value> =
        serde_json::from_str(&mcp_batch(bytes)).expect("the batch is JSON");
    batch.iter().map(|message| format!("{message}\n")).collect()
}

#[test]
fn a_long_mcp_log_of_one_trace_on_standard_input_is_copied_and_reads_as_its_file() {
    // Past the last MiB a stream read as it comes keeps to quote from: the early
    // violation is quoted from the copy.
    let dir = scratch("log.jsonl", &mcp_lines(3 << 20));
    for args in [CHECK_JSON, &["convert"][..]] {
        stdin_reads_as_file(dir.path(), args, "log.jsonl");
    }
    let human = stdin_reads_as_file(dir.path(), CHECK, "log.jsonl");
    assert!(human.starts_with("exit Some(1)"), "{human}");
    assert!(human.contains("--> -:2:1"), "{human}");
    assert!(
        human.contains(r#"2 | {"id":"first-2","jsonrpc":"2.0","method":"tools/call""#),
        "{human}"
    );
    #[cfg(unix)]
    streams_read_as_file(dir.path(), CHECK, "log.jsonl", &["pipe", "substitution"]);
    // With no temporary file, it is read as it comes: the same findings.
    let missing = dir.path().join("no-such-dir");
    let output = tracegate()
        .current_dir(dir.path())
        .env("TMPDIR", &missing)
        .args(CHECK_JSON)
        .arg("-")
        .write_stdin(std::fs::read(dir.path().join("log.jsonl")).unwrap())
        .output()
        .unwrap();
    let want = as_named(
        &from_file(dir.path(), CHECK_JSON, "log.jsonl"),
        "log.jsonl",
        "-",
    );
    assert_eq!(shown(&output), want);
}

#[test]
fn convert_quotes_the_lines_of_a_stream_s_problems_as_for_its_file() {
    // Read as it comes (short, two sessions) and copied (long, one session).
    let broken = "{\"session_id\":\"s1\",\"message\":{\"jsonrpc\":\"2.0\",\"id\":";
    let short = format!(
        "{}{broken}\n{{\"session_id\":\"s2\",\"message\":{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}}}}\n",
        mcp_lines(1000)
    );
    let long = format!("{broken}\n{}{broken}\n", mcp_lines(3 << 20));
    for text in [short, long] {
        let dir = scratch("log.jsonl", &text);
        let have = stdin_reads_as_file(dir.path(), &["convert"], "log.jsonl");
        assert!(have.starts_with("exit Some(2)"), "{have}");
        assert!(have.contains(&format!("| {broken}")), "{have}");
    }
    // A warning about the whole input quotes its first record too.
    let dir = scratch("untyped.jsonl", "{\"name\":\"create_record\"}\n");
    let have = stdin_reads_as_file(dir.path(), &["convert"], "untyped.jsonl");
    assert!(have.contains("warning[untyped-records]"), "{have}");
    assert!(have.contains(r#"| {"name":"create_record"}"#), "{have}");
}

/// [`openai_document`] as a run array on three lines: `[`, the run minified, `]`.
fn minified_runs(bytes: usize) -> String {
    let run: serde_json::Value =
        serde_json::from_str(&openai_document(bytes)).expect("the document is JSON");
    format!("[\n{run}\n]\n")
}

#[test]
fn a_large_document_on_a_few_lines_on_standard_input_is_streamed_as_its_file() {
    // The first bytes read to decide its format hold all of it: past 1 MiB it is
    // still copied to a temporary file and streamed, not parsed whole from memory.
    let dir = scratch("runs.json", &minified_runs(2 << 20));
    for args in [CHECK_JSON, CHECK] {
        let have = stdin_reads_as_file(dir.path(), args, "runs.json");
        assert!(have.starts_with("exit Some(1)"), "{have}");
    }
    let missing = dir.path().join("no-such-dir");
    let output = tracegate()
        .current_dir(dir.path())
        .env("TMPDIR", &missing)
        .args(["check", "spec.tg", "--traces", "-"])
        .write_stdin(std::fs::read(dir.path().join("runs.json")).unwrap())
        .output()
        .unwrap();
    let text = shown(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("which could not be created"), "{text}");
}

#[test]
fn a_temporary_file_that_cannot_be_made_is_a_clear_error() {
    let dir = scratch("doc.json", &openai_document(1 << 20));
    std::fs::write(dir.path().join("short.json"), openai_document(100)).unwrap();
    let missing = dir.path().join("no-such-dir");
    let run = |name: &str| {
        tracegate()
            .current_dir(dir.path())
            .env("TMPDIR", &missing)
            .args(["check", "spec.tg", "--traces", "-"])
            .write_stdin(std::fs::read(dir.path().join(name)).unwrap())
            .output()
            .unwrap()
    };
    let output = run("doc.json");
    let text = shown(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("error[unreadable-input]: cannot read `-`"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "temporary file in `{}`, which could not be created",
            missing.display()
        )),
        "{text}"
    );
    // A stream that ends within its first bytes needs no temporary file.
    let output = run("short.json");
    assert_eq!(output.status.code(), Some(1), "{}", shown(&output));
}

#[cfg(unix)]
#[test]
fn a_temporary_file_that_cannot_be_written_is_a_clear_error() {
    let dir = scratch("doc.json", &openai_document(1 << 20));
    std::fs::write(dir.path().join("fail.jsonl"), "{\"kind\":\"call\",\"tool\":\"create_record\",\"args\":{\"request_id\":\"a\"}}\n{\"kind\":\"call\",\"tool\":\"create_record\",\"args\":{\"request_id\":\"a\"}}\n").unwrap();
    let binary = assert_cmd::cargo::cargo_bin("tracegate");
    // Files may grow to 256 KiB, and a write past that fails (`File too large`)
    // instead of killing the writer.
    let script = format!(
        "trap '' XFSZ; ulimit -f 256; cat doc.json | '{}' check spec.tg --traces - fail.jsonl",
        binary.display()
    );
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(dir.path())
        .env_clear()
        .env("TMPDIR", dir.path())
        .output()
        .expect("bash runs");
    let text = shown(&output);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(
        text.contains("error[unreadable-input]: cannot read `-`"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "temporary file in `{}`, which could not be written",
            dir.path().display()
        )),
        "{text}"
    );
    // The other input is still checked, and the temporary file is gone.
    assert!(text.contains("--> fail.jsonl:2"), "{text}");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left.len(), 3, "{left:?}");
}

#[test]
fn a_file_named_dash_is_never_quoted_for_standard_input() {
    let dir = scratch(
        "log.jsonl",
        "{\"time\":\"2025-01-01T00:00:00Z\",\"kind\":\"call\",\"tool\":\"create_record\",\"args\":{\"request_id\":\"a\"}}\n{\"time\":\"2025-01-01T00:00:01Z\",\"kind\":\"call\",\"tool\":\"create_record\",\"args\":{\"request_id\":\"a\"}}\n",
    );
    std::fs::write(dir.path().join("-"), "NOT-THE-INPUT ".repeat(100)).unwrap();
    let runs: [&[&str]; 3] = [
        &["check", "spec.tg", "--report", "r.html", "--traces"],
        &["check", "spec.tg", "--join", "--traces"],
        &[
            "check", "spec.tg", "--join", "--report", "r.html", "--traces",
        ],
    ];
    for args in runs {
        let output = from_stdin(dir.path(), args, "log.jsonl");
        let text = shown(&output);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {text}");
        assert!(text.contains("--> -:2"), "{args:?}: {text}");
        // The record is quoted from standard input itself.
        let quoted = "| {\"time\":\"2025-01-01T00:00:01Z\",\"kind\":\"call\"";
        assert!(text.contains(quoted), "{args:?}: {text}");
        let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap_or_default();
        for shown in [&text, &html] {
            assert!(!shown.contains("NOT-THE-INPUT"), "{args:?}: {shown}");
        }
        let _ = std::fs::remove_file(dir.path().join("r.html"));
    }
}
