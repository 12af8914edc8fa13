//! Findings stream out: a violation is reported when its record is read, not when the
//! input ends, and many files report in file order whichever finishes first.
//!
//! No test here times anything: each waits, with a generous bound, for an event that
//! must come before another it controls (the writer of a stream closing it).

use std::cell::Cell;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use tracegate::check::{
    CheckOptions, Event, Observation, Report, check_input_reported, check_path,
    check_path_reported, in_file_order,
};
use tracegate::diagnostic::Diagnostic;
use tracegate::trace::adapters::{InputOptions, Selector};
use tracegate::trace::input::TraceInput;

use crate::util::{root, spec};

/// Long enough for any machine to check one record; a finding held to the end of its
/// input would never come within it, as the input does not end until it has come.
const BOUND: Duration = Duration::from_secs(60);

/// Hands each finding on to a channel as it is reported.
struct Forward(mpsc::Sender<Diagnostic>);

impl Report for Forward {
    fn diagnostic(&mut self, diagnostic: Diagnostic) {
        let _ = self.0.send(diagnostic);
    }
}

fn seed_protocol() -> tracegate::machine::Machine {
    let text = std::fs::read_to_string(root().join("specs/seed_protocol.tg")).expect("the spec");
    spec(&text)
}

#[cfg(unix)]
#[test]
fn a_violation_is_reported_while_its_stream_is_still_open() {
    use std::os::unix::net::UnixStream;
    let trace = std::fs::read_to_string(
        root().join("traces/seed_protocol/fail/forbidden-transition.jsonl"),
    )
    .expect("the trace");
    let lines: Vec<&str> = trace.lines().collect();
    let (mut writer, reader) = UnixStream::pair().expect("a socket pair");
    let (found, findings) = mpsc::channel();
    let checker = std::thread::spawn(move || {
        let specs = [seed_protocol()];
        let input = TraceInput::native(BufReader::new(reader), None);
        check_input_reported(
            &specs,
            Arc::from(Path::new("stream.jsonl")),
            input,
            &CheckOptions::default(),
            None,
            &mut Forward(found),
        )
    });
    // The third record is the forbidden retry; the writer keeps the stream open after it.
    for line in &lines[..3] {
        writeln!(writer, "{line}").expect("the checker reads");
    }
    let first = findings
        .recv_timeout(BOUND)
        .expect("the violation is reported before its stream ends");
    assert_eq!(first.code.as_str(), "forbidden-transition");
    assert_eq!(first.trace.as_ref().map(|t| t.loc.line), Some(3));
    writeln!(writer, "{}", lines[3]).expect("the checker reads");
    drop(writer);
    let outcome = checker.join().expect("the checker ends with its input");
    assert_eq!(outcome.records, 4);
    assert!(
        outcome.diagnostics.is_empty(),
        "every finding went to the report"
    );
    let rest: Vec<Diagnostic> = findings.try_iter().collect();
    // Streamed or collected, the same findings in the same order.
    let collected = check_path(
        &[seed_protocol()],
        &root().join("traces/seed_protocol/fail/forbidden-transition.jsonl"),
        &CheckOptions::default(),
        &Default::default(),
    );
    let streamed: Vec<String> = std::iter::once(&first)
        .chain(&rest)
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    let whole: Vec<String> = collected
        .outcome
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.code, d.message))
        .collect();
    assert_eq!(streamed, whole);
}

#[test]
fn files_report_in_file_order_whichever_finishes_first() {
    // File 0 finishes only after file 2 has: its events must still come first.
    let (two_done, wait_for_two) = mpsc::channel::<()>();
    let wait_for_two = std::sync::Mutex::new(wait_for_two);
    let mut seen = Vec::new();
    in_file_order(
        4,
        Some(3),
        |index, report: &mut dyn Report| {
            if index == 0 {
                let gate = wait_for_two.lock().expect("one waiter");
                gate.recv_timeout(BOUND)
                    .expect("file 2 is checked meanwhile");
            }
            let mut diagnostic = Diagnostic::new(tracegate::diagnostic::Code::UsageError, "");
            diagnostic.message = format!("file {index}");
            report.diagnostic(diagnostic);
            if index == 2 {
                two_done.send(()).expect("file 0 waits");
            }
            index * 10
        },
        |event| match event {
            Event::Diagnostic(index, d) => seen.push(format!("{index}: {}", d.message)),
            Event::Done(index, value) => seen.push(format!("{index} done {value}")),
            Event::Reading(_) | Event::Idle => {}
        },
    );
    assert_eq!(
        seen,
        [
            "0: file 0",
            "0 done 0",
            "1: file 1",
            "1 done 10",
            "2: file 2",
            "2 done 20",
            "3: file 3",
            "3 done 30"
        ]
    );
}

/// A named pipe whose writer holds it open until dropped.
#[cfg(unix)]
struct HeldPipe {
    _end: std::fs::File,
}

#[cfg(unix)]
fn held_pipe(path: &Path, text: &str) -> HeldPipe {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).expect("a path");
    // SAFETY: `name` is a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0, "mkfifo");
    // Read and write: opening does not wait for a reader, and the pipe has a writer
    // from now on, so tracegate reads until this end is dropped.
    let mut end = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .expect("the pipe opens");
    end.write_all(text.as_bytes())
        .expect("the pipe takes a record");
    HeldPipe { _end: end }
}

/// Starts `tracegate check specs/seed_protocol.tg --output json --traces TRACES…` and
/// hands each line of its stdout on as it is written, to be waited for with a bound.
#[cfg(unix)]
fn check_json(
    traces: &[&Path],
) -> (
    std::process::Child,
    mpsc::Receiver<String>,
    std::thread::JoinHandle<()>,
) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tracegate"))
        .current_dir(root())
        .env_clear()
        .args([
            "check",
            "specs/seed_protocol.tg",
            "--output",
            "json",
            "--traces",
        ])
        .args(traces)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("tracegate runs");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (lines, from) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    (child, from, reader)
}

#[cfg(unix)]
#[test]
fn a_pipe_held_open_waits_but_the_files_before_it_are_already_reported() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pipe = dir.path().join("held.jsonl");
    let ok = std::fs::read_to_string(root().join("traces/seed_protocol/pass/create-ok.jsonl"))
        .expect("a conforming trace");
    let held = held_pipe(&pipe, &ok);
    let failing = root().join("traces/seed_protocol/fail/forbidden-transition.jsonl");
    let (mut child, from, reader) = check_json(&[failing.as_path(), pipe.as_path()]);
    let first = from
        .recv_timeout(BOUND)
        .expect("the first file's violation is written while the pipe is held open");
    assert!(
        first.contains("\"code\":\"forbidden-transition\"")
            && first.contains("forbidden-transition.jsonl"),
        "{first}"
    );
    drop(held);
    let status = child
        .wait()
        .expect("tracegate ends once the pipe is closed");
    reader.join().expect("stdout is read to its end");
    let rest: Vec<String> = from.try_iter().collect();
    assert_eq!(status.code(), Some(1), "{rest:?}");
    let summary = rest.last().expect("a summary line");
    assert!(
        summary.contains("\"traces\":2") && summary.contains("\"violations\":1"),
        "the held pipe was checked too, once closed: {summary}"
    );
}

/// The whole way through the command line: a violation written to a named pipe is on
/// stdout while the pipe's writer still holds it open: the stream's first line decides
/// its format, its records are checked as they come, and the finding is written at once.
#[cfg(unix)]
#[test]
fn a_violation_in_a_pipe_held_open_is_on_stdout_before_the_pipe_ends() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pipe = dir.path().join("live.jsonl");
    let trace = std::fs::read_to_string(
        root().join("traces/seed_protocol/fail/forbidden-transition.jsonl"),
    )
    .expect("the trace");
    let first_three: String = trace.lines().take(3).map(|l| format!("{l}\n")).collect();
    let held = held_pipe(&pipe, &first_three);
    let (mut child, from, reader) = check_json(&[pipe.as_path()]);
    let first = from
        .recv_timeout(BOUND)
        .expect("the violation is written while the pipe is still open");
    assert!(
        first.contains("\"code\":\"forbidden-transition\""),
        "{first}"
    );
    drop(held);
    let status = child
        .wait()
        .expect("tracegate ends once the pipe is closed");
    reader.join().expect("stdout is read to its end");
    assert_eq!(status.code(), Some(1));
}

/// A Claude Code log in a named pipe: a violation of the first session is on stdout
/// while the pipe's writer still holds it open. The second session's first line says
/// the log holds more than one trace; the first session's records are then handed on
/// as its calls are answered.
#[cfg(unix)]
#[test]
fn a_violation_in_a_claude_code_log_held_open_is_on_stdout_before_the_log_ends() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let pipe = dir.path().join("session.jsonl");
    let envelope = |session: &str, uuid: &str, ty: &str, message: &str| {
        format!(
            r#"{{"type":"{ty}","sessionId":"{session}","uuid":"{uuid}","timestamp":"2025-01-01T00:00:00Z","message":{message}}}"#
        ) + "\n"
    };
    let create = |id: &str, request: &str| {
        format!(
            r#"{{"id":"m-{id}","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"create_record","input":{{"request_id":"{request}"}}}}]}}"#
        )
    };
    let timed_out = r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":"{\"category\": \"outcome_unknown\"}"}]}"#;
    let text = [
        envelope("s1", "u1", "user", r#"{"role":"user","content":"file it"}"#),
        envelope("s2", "v1", "user", r#"{"role":"user","content":"hello"}"#),
        envelope("s1", "u2", "assistant", &create("t1", "r1")),
        envelope("s1", "u3", "user", timed_out),
        // The blind re-create, under a new request id.
        envelope("s1", "u4", "assistant", &create("t2", "r2")),
    ]
    .concat();
    let held = held_pipe(&pipe, &text);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_tracegate"))
        .current_dir(root())
        .env_clear()
        .args(["check", "specs", "--output", "json", "--traces"])
        .arg(&pipe)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("tracegate runs");
    let stdout = child.stdout.take().expect("stdout is piped");
    let (lines, from) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let first = from
        .recv_timeout(BOUND)
        .expect("the violation is written while the log is still open");
    assert!(
        first.contains("\"code\":\"forbidden-transition\"") && first.contains("\"line\":5"),
        "{first}"
    );
    drop(held);
    let status = child
        .wait()
        .expect("tracegate ends once the pipe is closed");
    reader.join().expect("stdout is read to its end");
    let rest: Vec<String> = from.try_iter().collect();
    assert_eq!(status.code(), Some(1), "{rest:?}");
    let summary = rest.last().expect("a summary line");
    assert!(summary.contains("\"traces\":2"), "{summary}");
}

/// A create must get its reply before the same request id is created again.
const CREATE_ONCE: &str = r#"spec create_once
per args.request_id
event create  = call create_record
event created = result create_record where status == "ok"
initial idle
accept idle, done
idle    -> pending on create
pending -> done    on created
forbid pending on create: "re-created before the reply"
"#;

/// The OpenAI messages of one run: `calls` creates, each answered, the first of them
/// retried before its reply when `retry`.
fn run_messages(run: usize, calls: usize, retry: bool) -> Vec<String> {
    let call = |id: &str, n: usize| {
        format!(
            r#"{{"id": "{id}", "type": "function", "function": {{"name": "create_record", "arguments": "{{\"request_id\": \"req-{run}-{n}\", \"title\": \"Invoice {n} of run {run}\"}}"}}}}"#
        )
    };
    let reply = |id: &str, n: usize| {
        format!(
            r#"{{"role": "tool", "tool_call_id": "{id}", "content": "{{\"id\": \"rec-{run}-{n}\"}}"}}"#
        )
    };
    let mut messages = vec![r#"{"role": "user", "content": "Create the invoices."}"#.to_string()];
    for n in 0..calls {
        let mut ids = vec![format!("call-{n}")];
        if retry && n == 0 {
            ids.push("call-0-again".to_string());
        }
        let calls: Vec<String> = ids.iter().map(|id| call(id, n)).collect();
        messages.push(format!(
            r#"{{"role": "assistant", "content": null, "tool_calls": [{}]}}"#,
            calls.join(", ")
        ));
        messages.extend(ids.iter().map(|id| reply(id, n)));
    }
    messages
}

/// Runs of `calls` creates each, as `{"id", "messages"}` objects; the first run
/// retries its first create.
fn runs(count: usize, calls: usize) -> String {
    let runs: Vec<String> = (0..count)
        .map(|run| {
            let messages = run_messages(run, calls, run == 0).join(", ");
            format!(r#"{{"id": "run-{run}", "messages": [{messages}]}}"#)
        })
        .collect();
    format!("[\n{}\n]", runs.join(",\n"))
}

/// Bytes this thread has read from files so far (Linux counts them per thread).
fn bytes_read_by_this_thread() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/thread-self/io").ok()?;
    io.lines()
        .find_map(|line| line.strip_prefix("rchar:"))
        .and_then(|n| n.trim().parse().ok())
}

/// Keeps each finding with how far the checker had got when it came: the largest
/// offset of a record checked so far, and the bytes its thread had read by then.
struct Reached<'c> {
    read: &'c Cell<u64>,
    findings: Vec<(u64, Option<u64>, Diagnostic)>,
}

impl Report for Reached<'_> {
    fn diagnostic(&mut self, diagnostic: Diagnostic) {
        let bytes = bytes_read_by_this_thread();
        self.findings.push((self.read.get(), bytes, diagnostic));
    }
}

#[test]
fn a_streamed_documents_findings_come_before_it_is_read_to_its_end() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let specs = [spec(CREATE_ONCE)];
    let one_list = || run_messages(0, 12_000, true).join(",\n  ");
    let select = |path: &str| InputOptions {
        format: None,
        select: Some(Selector::parse(path).expect("the selector parses")),
    };
    let shapes = [
        (
            "an object with a message list",
            format!(
                "{{\"id\": \"run-0\", \"messages\": [\n  {}\n]}}\n",
                one_list()
            ),
            InputOptions::default(),
        ),
        (
            "a message list",
            format!("[\n  {}\n]\n", one_list()),
            InputOptions::default(),
        ),
        ("a list of runs", runs(400, 30), InputOptions::default()),
        (
            "an object of runs",
            format!("{{\"model\": \"m\", \"runs\": {}}}", runs(400, 30)),
            InputOptions::default(),
        ),
        (
            "an object of runs, selected in",
            format!("{{\"model\": \"m\", \"runs\": {}}}", runs(400, 30)),
            select("runs[*].messages"),
        ),
    ];
    for (shape, text, options) in shapes {
        let path = dir.path().join("document.json");
        std::fs::write(&path, &text).expect("the document is written");
        let read = Cell::new(0);
        let observer = Box::new(|seen: &Observation<'_>| read.set(read.get().max(seen.loc.offset)));
        let mut report = Reached {
            read: &read,
            findings: Vec::new(),
        };
        let before = bytes_read_by_this_thread();
        let checked = check_path_reported(
            &specs,
            &path,
            &CheckOptions::default(),
            &options,
            Some(observer),
            None,
            &mut report,
        );
        assert!(
            checked.outcome.records > 20_000,
            "{shape}: {} records",
            checked.outcome.records
        );
        let (reached, bytes, first) = report.findings.first().expect("a finding");
        assert_eq!(
            first.code.as_str(),
            "forbidden-transition",
            "{shape}: {first:?}"
        );
        let len = text.len() as u64;
        assert!(
            *reached < len / 20,
            "{shape}: the first finding came with the checker at byte {reached} of {len}"
        );
        // The file was read once through (the first pass, which validates it and finds
        // what it holds), and the second pass had only begun: nothing read it through
        // again before the finding.
        if let (Some(before), Some(bytes)) = (before, bytes) {
            let read = bytes - before;
            assert!(
                read < len + len / 20,
                "{shape}: the first finding came after {read} bytes read of a file of {len}"
            );
        }
        // Streamed, the same findings as collected at the end.
        let whole = check_path(&specs, &path, &CheckOptions::default(), &options);
        let have: Vec<String> = report
            .findings
            .iter()
            .map(|(_, _, d)| format!("{d:?}"))
            .collect();
        let want: Vec<String> = whole
            .outcome
            .diagnostics
            .iter()
            .map(|d| format!("{d:?}"))
            .collect();
        assert_eq!(have, want, "{shape}");
    }
}
