//! The bad-input matrix: inputs nobody vetted (empty files, streams, devices, link
//! cycles, secrets, control characters, duplicate keys, missing keys) each give a
//! located diagnostic and the right exit status, and never stop the other records and
//! files from being checked.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::util::{human_codes, root, stdout, tracegate};

/// A spec that forbids a second `create` after a failed one, per request id.
const SPEC: &str = r#"spec no_blind_retry
about "a failed create is not retried blindly"

event create = call "create"
event failed = result "create" where status == "error"
event lookup = call "lookup"

initial idle
otherwise ignore

idle -> created on create
created -> unknown on failed
unknown -> idle on lookup
forbid unknown on create: "blind re-create after a failed create"
"#;

/// A native trace that violates [`SPEC`] at line 3.
const FAIL: &str = concat!(
    r#"{"kind":"call","tool":"create","call_id":"c1","args":{"id":"r-1"}}"#,
    "\n",
    r#"{"kind":"result","tool":"create","call_id":"c1","status":"error"}"#,
    "\n",
    r#"{"kind":"call","tool":"create","call_id":"c2","args":{"id":"r-1"}}"#,
    "\n",
);

/// A scratch directory holding the spec and the failing trace.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Scratch {
        let scratch = Scratch {
            dir: tempfile::tempdir().expect("a temporary directory"),
        };
        scratch.write("spec.tg", SPEC);
        scratch.write("fail.jsonl", FAIL);
        scratch
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).expect("the scratch file is written");
        path
    }

    /// `check spec.tg --traces ARGS…`, with `stdin` fed when given.
    fn check(&self, traces: &[&str], stdin: Option<&str>) -> Output {
        self.check_with(traces, &[], stdin)
    }

    fn check_with(&self, traces: &[&str], extra: &[&str], stdin: Option<&str>) -> Output {
        let mut command = tracegate();
        command
            .current_dir(self.dir.path())
            .arg("check")
            .arg("spec.tg")
            .arg("--traces")
            .args(traces)
            .args(extra)
            .timeout(std::time::Duration::from_secs(20));
        if let Some(text) = stdin {
            command.write_stdin(text.to_string());
        }
        command.output().expect("tracegate runs")
    }
}

fn code(output: &Output) -> i32 {
    output.status.code().expect("the run exits with a status")
}

/// The report, stdout and stderr together.
fn report(output: &Output) -> String {
    format!(
        "{}{}",
        stdout(output),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The blind re-create of [`FAIL`] was found, at line 3.
#[track_caller]
fn assert_fail_checked(text: &str) {
    assert!(
        text.contains("blind re-create after a failed create"),
        "the failing trace was not checked:\n{text}"
    );
    assert!(
        text.contains(":3\n") || text.contains(":3:1") || text.contains("\"line\":3"),
        "the violation is not at line 3:\n{text}"
    );
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let made = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
}

// ---- no silent pass ---------------------------------------------------------------

#[test]
fn an_empty_trace_file_is_no_input_and_the_others_are_checked() {
    let scratch = Scratch::new();
    scratch.write("empty.jsonl", "");
    let output = scratch.check(&["empty.jsonl", "fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(human_codes(&text).contains("no-input"), "{text}");
    assert!(text.contains("--> empty.jsonl"), "{text}");
    assert_fail_checked(&text);
}

#[test]
fn a_blank_trace_file_is_no_input() {
    let scratch = Scratch::new();
    scratch.write("blank.jsonl", "\n   \n\t\n");
    let output = scratch.check(&["blank.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(human_codes(&text).contains("no-input"), "{text}");
    assert!(text.contains("--> blank.jsonl"), "{text}");
    assert!(!text.contains("every trace conforms"), "{text}");
}

#[test]
fn an_empty_transcript_document_is_reported_in_every_forced_format() {
    let scratch = Scratch::new();
    scratch.write("empty.json", "");
    for format in [
        "openai",
        "anthropic",
        "mcp",
        "otel",
        "openai-responses",
        "native",
    ] {
        let output = scratch.check_with(&["empty.json", "fail.jsonl"], &["--format", format], None);
        let text = report(&output);
        assert_eq!(code(&output), 2, "{format}: {text}");
        assert!(text.contains("--> empty.json"), "{format}: {text}");
        assert!(!text.contains("every trace conforms"), "{format}: {text}");
    }
}

// ---- streams ----------------------------------------------------------------------

#[test]
fn a_dash_reads_standard_input() {
    let scratch = Scratch::new();
    let output = scratch.check(&["-"], Some(FAIL));
    let text = report(&output);
    assert_eq!(code(&output), 1, "{text}");
    assert_fail_checked(&text);
    assert!(text.contains("(3 records + 1 synthesized)"), "{text}");
}

#[test]
fn an_empty_standard_input_is_no_input() {
    let scratch = Scratch::new();
    let output = scratch.check(&["-", "fail.jsonl"], Some(""));
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(human_codes(&text).contains("no-input"), "{text}");
    assert_fail_checked(&text);
}

#[cfg(unix)]
#[test]
fn dev_stdin_fed_by_a_pipe_is_read_to_its_end() {
    let scratch = Scratch::new();
    let output = scratch.check(&["/dev/stdin"], Some(FAIL));
    let text = report(&output);
    assert_eq!(code(&output), 1, "{text}");
    assert_fail_checked(&text);
}

#[cfg(unix)]
#[test]
fn standard_input_in_another_format_is_detected() {
    let scratch = Scratch::new();
    let mcp = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"id":"r-1"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"id":"r-1"}}}"#,
        "\n",
    );
    for path in ["-", "/dev/stdin"] {
        let output = scratch.check(&[path], Some(mcp));
        let text = report(&output);
        assert_eq!(code(&output), 1, "{path}: {text}");
        assert!(text.contains("blind re-create"), "{path}: {text}");
    }
}

#[cfg(unix)]
#[test]
fn a_process_substitution_is_read_as_a_stream() {
    let scratch = Scratch::new();
    let binary = assert_cmd::cargo::cargo_bin("tracegate");
    let script = format!(
        "'{}' check spec.tg --traces <(cat fail.jsonl); echo \"status=$?\"; '{}' convert <(cat fail.jsonl)",
        binary.display(),
        binary.display()
    );
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(script)
        .current_dir(scratch.dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("bash runs");
    let text = report(&output);
    assert_fail_checked(&text);
    assert!(text.contains("status=1"), "{text}");
    let (_, converted) = text.split_once("status=1").expect("the check's status");
    assert_eq!(
        converted.matches(r#""kind":"call""#).count(),
        2,
        "convert wrote the records:\n{text}"
    );
}

#[cfg(unix)]
#[test]
fn a_named_pipe_with_a_writer_is_read_to_its_end() {
    let scratch = Scratch::new();
    let fifo = scratch.path("pipe.jsonl");
    mkfifo(&fifo);
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(fifo, FAIL).expect("the pipe is written"))
    };
    let output = scratch.check(&["pipe.jsonl"], None);
    writer.join().expect("the writer ends");
    let text = report(&output);
    assert_eq!(code(&output), 1, "{text}");
    assert_fail_checked(&text);
}

#[cfg(unix)]
#[test]
fn a_named_pipe_without_a_writer_does_not_block_the_run() {
    let scratch = Scratch::new();
    mkfifo(&scratch.path("pipe.jsonl"));
    let output = scratch.check(&["pipe.jsonl", "fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(human_codes(&text).contains("no-input"), "{text}");
    assert!(text.contains("--> pipe.jsonl"), "{text}");
    assert_fail_checked(&text);
}

#[cfg(unix)]
#[test]
fn a_named_pipe_among_the_specs_does_not_block_the_run() {
    let scratch = Scratch::new();
    mkfifo(&scratch.path("pipe.tg"));
    let output = tracegate()
        .current_dir(scratch.dir.path())
        .args(["check", "spec.tg", "pipe.tg", "--traces", "fail.jsonl"])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .expect("tracegate runs");
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
}

#[cfg(unix)]
#[test]
fn a_device_is_refused_and_the_others_are_checked() {
    let scratch = Scratch::new();
    for device in ["/dev/zero", "/dev/null"] {
        let output = scratch.check(&[device, "fail.jsonl"], None);
        let text = report(&output);
        assert_eq!(code(&output), 2, "{device}: {text}");
        assert!(human_codes(&text).contains("unreadable-input"), "{text}");
        assert!(text.contains("it is a device"), "{text}");
        assert_fail_checked(&text);
    }
}

#[cfg(unix)]
#[test]
fn a_socket_is_refused() {
    let scratch = Scratch::new();
    let socket = scratch.path("sock.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).expect("a socket");
    let output = scratch.check(&["sock.jsonl", "fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(text.contains("it is a socket"), "{text}");
    assert_fail_checked(&text);
}

#[cfg(unix)]
#[test]
fn a_symlink_cycle_is_reported_and_each_trace_is_checked_once() {
    let scratch = Scratch::new();
    let dir = scratch.path("traces");
    std::fs::create_dir(&dir).expect("a directory");
    std::fs::write(dir.join("fail.jsonl"), FAIL).expect("written");
    std::os::unix::fs::symlink(&dir, dir.join("again")).expect("a link");
    std::os::unix::fs::symlink("loop-b.jsonl", dir.join("loop-a.jsonl")).expect("a link");
    std::os::unix::fs::symlink("loop-a.jsonl", dir.join("loop-b.jsonl")).expect("a link");
    let output = scratch.check(&["traces"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "forbidden-transition"), 1, "{text}");
    assert!(text.contains("leads back to"), "{text}");
    assert!(text.contains("loop-a.jsonl"), "{text}");
}

// ---- secrets ----------------------------------------------------------------------

/// Secrets of every kind, each with a part of it that may not reach any output.
const SECRETS: &[(&str, &str)] = &[
    ("sk-proj-abcdefghijklmnop1234", "ijklmnop1234"),
    (
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
        "eyJzdWIiOiIxIn0",
    ),
    ("https://user:hunter2pass@example.com", "hunter2pass"),
    (
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "MDENG/bPxRfiCYEX",
    ),
    ("ghp_abcdefghijklmnopqrstuvwxyz0123", "qrstuvwxyz0123"),
    ("postgres://admin:Pa55word-x@db:5432/app", "Pa55word-x"),
];

#[track_caller]
fn assert_no_secret(text: &str) {
    for (secret, part) in SECRETS {
        assert!(!text.contains(part), "`{secret}` leaked:\n{text}");
    }
}

/// How many findings with `code` a report holds, in either output mode.
fn count(text: &str, code: &str) -> usize {
    text.matches(&format!("[{code}]")).count()
        + text.matches(&format!("\"code\":\"{code}\"")).count()
}

#[test]
fn secrets_in_keys_trace_names_and_snippets_are_masked_in_every_output_mode() {
    let scratch = Scratch::new();
    let mut trace = String::new();
    for (i, (secret, _)) in SECRETS.iter().enumerate() {
        let secret = secret.replace('"', "");
        trace.push_str(&format!(
            "{{\"case\":\"{secret}\",\"kind\":\"call\",\"tool\":\"create\",\"call_id\":\"a{i}\",\"args\":{{\"note\":\"{secret}\"}}}}\n{{\"case\":\"{secret}\",\"kind\":\"result\",\"tool\":\"create\",\"call_id\":\"a{i}\",\"status\":\"error\"}}\n{{\"case\":\"{secret}\",\"kind\":\"call\",\"tool\":\"create\",\"call_id\":\"b{i}\"}}\n"
        ));
    }
    scratch.write("secrets.jsonl", &trace);
    for output_mode in ["human", "json"] {
        let output = scratch.check_with(
            &["secrets.jsonl"],
            &["--trace-by", "case", "--output", output_mode],
            None,
        );
        let text = report(&output);
        assert_eq!(code(&output), 1, "{text}");
        assert_eq!(
            count(&text, "forbidden-transition"),
            SECRETS.len(),
            "{text}"
        );
        assert_no_secret(&text);
    }
}

#[test]
fn a_secret_quoted_in_a_malformed_record_message_is_masked() {
    let scratch = Scratch::new();
    scratch.write(
        "bad.jsonl",
        &format!("{{\"kind\":\"sk-proj-abcdefghijklmnop1234\"}}\n{FAIL}"),
    );
    for output_mode in ["human", "json"] {
        let output = scratch.check_with(&["bad.jsonl"], &["--output", output_mode], None);
        let text = report(&output);
        assert_eq!(code(&output), 2, "{text}");
        assert!(text.contains("malformed-record"), "{text}");
        assert!(text.contains("blind re-create"), "{text}");
        assert_no_secret(&text);
    }
}

#[test]
fn secrets_in_spec_strings_are_masked() {
    let scratch = Scratch::new();
    let spec = SPEC
        .replace(
            "a failed create is not retried blindly",
            "key sk-proj-abcdefghijklmnop1234",
        )
        .replace(
            "blind re-create after a failed create",
            "blind re-create, see https://user:hunter2pass@example.com",
        );
    scratch.write("spec.tg", &spec);
    for output_mode in ["human", "json"] {
        let output = scratch.check_with(&["fail.jsonl"], &["--output", output_mode], None);
        let text = report(&output);
        assert_eq!(code(&output), 1, "{text}");
        assert!(text.contains("blind re-create"), "{text}");
        assert_no_secret(&text);
    }
}

#[test]
fn shrink_masks_secrets_in_the_trace_it_writes_and_says_so() {
    let scratch = Scratch::new();
    let trace = FAIL.replace(
        r#""args":{"id":"r-1"}"#,
        r#""args":{"id":"r-1","auth":"Bearer abcdefgh12345678"}"#,
    );
    scratch.write("secret.jsonl", &trace);
    let run = |extra: &[&str]| {
        tracegate()
            .current_dir(scratch.dir.path())
            .args(["shrink", "spec.tg", "secret.jsonl", "-o", "small.jsonl"])
            .args(extra)
            .output()
            .expect("tracegate runs")
    };
    let output = run(&[]);
    let written = std::fs::read_to_string(scratch.path("small.jsonl")).expect("written");
    assert!(!written.contains("efgh12345678"), "{written}");
    assert!(written.contains("[redacted]"), "{written}");
    assert!(report(&output).contains("masked"), "{}", report(&output));
    let output = run(&["--keep-secrets"]);
    let written = std::fs::read_to_string(scratch.path("small.jsonl")).expect("written");
    assert!(written.contains("abcdefgh12345678"), "{written}");
    assert!(
        report(&output).contains("--keep-secrets writes them unmasked"),
        "{}",
        report(&output)
    );
}

// ---- terminal safety --------------------------------------------------------------

/// What a hostile input may try to write to a terminal.
const CONTROLS: &[char] = &['\x1b', '\x07', '\r', '\x7f', '\u{9b}', '\x08'];

#[track_caller]
fn assert_no_control(text: &str) {
    for c in CONTROLS {
        assert!(
            !text.contains(*c),
            "control character {:?} written:\n{}",
            c,
            text.escape_debug()
        );
    }
}

#[test]
fn control_characters_from_a_trace_are_escaped_in_human_output() {
    let scratch = Scratch::new();
    let hostile = r#"\u001b]0;pwned\u0007\r\u001b[2Kevery trace conforms\u009b\u007f\b"#;
    let trace = format!(
        "{{\"case\":\"{hostile}\",\"kind\":\"call\",\"tool\":\"create\",\"call_id\":\"c1\",\"args\":{{\"id\":\"{hostile}\"}}}}\n{{\"case\":\"{hostile}\",\"kind\":\"result\",\"tool\":\"create\",\"call_id\":\"c1\",\"status\":\"error\"}}\n{{\"case\":\"{hostile}\",\"kind\":\"call\",\"tool\":\"create\",\"call_id\":\"c2\"}}\n{{\"kind\":\"{hostile}\"}}\n"
    );
    scratch.write("hostile.jsonl", &trace);
    let output = scratch.check_with(&["hostile.jsonl"], &["--trace-by", "case"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{}", text.escape_debug());
    assert!(text.contains("blind re-create"), "{}", text.escape_debug());
    assert!(text.contains("\\x1b"), "{}", text.escape_debug());
    assert_no_control(&text);
}

#[test]
fn control_characters_from_a_spec_are_escaped_in_human_output() {
    let scratch = Scratch::new();
    let spec = SPEC.replace(
        "blind re-create after a failed create",
        "blind re-create\\u001b[2J\\r\\u0007",
    );
    scratch.write("spec.tg", &spec);
    let output = scratch.check(&["fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 1, "{}", text.escape_debug());
    assert!(text.contains("blind re-create"), "{}", text.escape_debug());
    assert_no_control(&text);
}

#[cfg(unix)]
#[test]
fn control_characters_in_a_file_name_are_escaped() {
    let scratch = Scratch::new();
    scratch.write("evil\x1b[2J\r.jsonl", FAIL);
    let output = tracegate()
        .current_dir(scratch.dir.path())
        .args(["check", "spec.tg", "--traces", "."])
        .output()
        .expect("tracegate runs");
    let text = report(&output);
    assert_eq!(code(&output), 1, "{}", text.escape_debug());
    assert_no_control(&text);
}

// ---- missing keys -----------------------------------------------------------------

/// [`SPEC`] with one instance per request id.
fn keyed_spec(path: &str) -> String {
    SPEC.replace("initial idle", &format!("per {path}\ninitial idle"))
}

#[test]
fn a_misspelt_per_path_is_one_finding_with_did_you_mean() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &keyed_spec("args.requst_id"));
    let trace = FAIL.replace(r#""id":"r-1""#, r#""request_id":"r-1""#);
    scratch.write("fail.jsonl", &trace);
    let output = scratch.check(&["fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "missing-key"), 1, "{text}");
    assert!(text.contains("did you mean `args.request_id`"), "{text}");
    assert!(text.contains("fail.jsonl:1:1"), "{text}");
    assert!(!text.contains("every trace conforms"), "{text}");
}

#[test]
fn a_per_path_no_file_carries_is_one_finding_for_the_run() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &keyed_spec("args.requst_id"));
    scratch.write("again.jsonl", FAIL);
    let output = scratch.check(&["fail.jsonl", "again.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "missing-key"), 1, "{text}");
    assert!(text.contains("--> fail.jsonl:1:1"), "{text}");
    assert!(
        text.contains("(and in 1 other file, not reported again)"),
        "{text}"
    );
}

#[test]
fn a_per_tuple_whose_paths_never_occur_together_is_reported() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &keyed_spec("args.id, args.tenant"));
    let output = scratch.check(&["fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "missing-key"), 1, "{text}");
    assert!(text.contains("`args.tenant`"), "{text}");
}

#[test]
fn a_record_without_the_key_and_no_live_instance_is_located_and_the_rest_checked() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &keyed_spec("args.id"));
    let trace = format!(
        "{}\n{FAIL}",
        r#"{"kind":"call","tool":"create","call_id":"c0","args":{}}"#
    );
    scratch.write("fail.jsonl", &trace);
    for output_mode in ["human", "json"] {
        let output = scratch.check_with(&["fail.jsonl"], &["--output", output_mode], None);
        let text = report(&output);
        assert_eq!(code(&output), 2, "{text}");
        assert_eq!(count(&text, "missing-key"), 1, "{text}");
        assert!(
            text.contains("fail.jsonl:1:1") || text.contains(r#""line":1"#),
            "{text}"
        );
        assert_eq!(count(&text, "forbidden-transition"), 1, "{text}");
    }
}

#[test]
fn a_record_without_the_key_goes_to_the_live_instances() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &keyed_spec("args.id"));
    // The failed result inherits its call's args; the lookup without a key goes to the
    // live instance, which it moves back to `idle`, so the second create is allowed.
    let trace = [
        r#"{"kind":"call","tool":"create","call_id":"c1","args":{"id":"r-1"}}"#,
        r#"{"kind":"result","tool":"create","call_id":"c1","status":"error"}"#,
        r#"{"kind":"call","tool":"lookup","call_id":"c2","args":{}}"#,
        r#"{"kind":"call","tool":"create","call_id":"c3","args":{"id":"r-1"}}"#,
    ]
    .join("\n");
    scratch.write("pass.jsonl", &trace);
    let output = scratch.check(&["pass.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 0, "{text}");
    assert!(text.contains("(4 records + 2 synthesized)"), "{text}");
}

#[test]
fn a_trace_by_field_no_record_has_is_one_finding_with_did_you_mean() {
    let scratch = Scratch::new();
    let trace = FAIL.replace(r#"{"kind""#, r#"{"case":"a","kind""#);
    scratch.write("cases.jsonl", &trace);
    let output = scratch.check_with(&["cases.jsonl", "fail.jsonl"], &["--trace-by", "cse"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "usage-error"), 1, "one for the run:\n{text}");
    assert!(
        text.contains("(and in 1 other file, not reported again)"),
        "{text}"
    );
    assert_eq!(count(&text, "malformed-record"), 0, "{text}");
    assert!(text.contains("did you mean `case`"), "{text}");
}

#[test]
fn a_trace_by_field_some_records_lack_is_located_at_each() {
    let scratch = Scratch::new();
    let trace = FAIL.replacen(r#"{"kind""#, r#"{"case":"a","kind""#, 2);
    scratch.write("cases.jsonl", &trace);
    let output = scratch.check_with(&["cases.jsonl"], &["--trace-by", "case"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "malformed-record"), 1, "{text}");
    assert!(text.contains("cases.jsonl:3:1"), "{text}");
}

// ---- duplicate keys, forced formats -----------------------------------------------

/// A transcript in `format` with a duplicate key, and the key.
const DUPLICATES: &[(&str, &str, &str)] = &[
    (
        "native",
        "dup.jsonl",
        r#"{"kind":"call","tool":"create","tool":"lookup","call_id":"c1"}"#,
    ),
    (
        "mcp",
        "dup.jsonl",
        concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{}}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","name":"lookup","arguments":{}}}"#,
        ),
    ),
    (
        "openai",
        "dup.json",
        r#"[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"create","name":"lookup","arguments":"{}"}}]}]"#,
    ),
    (
        "anthropic",
        "dup.json",
        r#"{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"create","input":{},"name":"lookup"}]}]}"#,
    ),
    (
        "openai-responses",
        "dup.json",
        r#"[{"type":"function_call","call_id":"c1","name":"create","name":"lookup","arguments":"{}"}]"#,
    ),
];

#[test]
fn duplicate_keys_are_a_located_error_in_every_format() {
    let scratch = Scratch::new();
    for (format, name, text) in DUPLICATES {
        scratch.write(name, text);
        for forced in [None, Some(*format)] {
            let extra: Vec<&str> = forced.map_or(vec![], |f| vec!["--format", f]);
            let traces = [*name, "fail.jsonl"];
            // fail.jsonl is native; forcing a transcript format is only for the file.
            let traces = if forced.is_some() && *format != "native" {
                &traces[..1]
            } else {
                &traces[..]
            };
            let output = scratch.check_with(traces, &extra, None);
            let text = report(&output);
            assert_eq!(code(&output), 2, "{format} {forced:?}: {text}");
            assert!(
                text.contains("duplicate") && text.contains(&format!("--> {name}:")),
                "{format} {forced:?}: {text}"
            );
            if traces.len() == 2 {
                assert_fail_checked(&text);
            }
        }
    }
}

/// An MCP log whose third line is a blind re-create that a second `name` (the last,
/// which a JSON reader would keep) disguises as a lookup, the move that would make it
/// allowed.
const DISGUISED: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"id":"r-1"}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"create","arguments":{"id":"r-1"},"name":"lookup"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#,
    "\n",
);

#[test]
fn a_record_with_a_duplicate_key_is_reported_and_never_read_with_a_guessed_value() {
    let scratch = Scratch::new();
    scratch.write("dup.jsonl", DISGUISED);
    let output = scratch.check_with(&["dup.jsonl"], &["--output", "json"], None);
    let text = report(&output);
    // The run fails: the line is a located error, not a lookup that allows the create.
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "malformed-record"), 1, "{text}");
    assert!(text.contains("duplicate key `name`"), "{text}");
    assert!(text.contains("\"line\":3"), "{text}");
    // What the specs see: no record of line 3, with either name.
    let converted = tracegate()
        .current_dir(scratch.dir.path())
        .args(["convert", "dup.jsonl"])
        .output()
        .expect("convert runs");
    let records = stdout(&converted);
    assert!(records.contains("\"call_id\":\"1\""), "{records}");
    assert!(!records.contains("\"line\":3"), "{records}");
    assert!(!records.contains("lookup"), "{records}");
    // In a document, only the element with the duplicate is left out.
    let document = r#"[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"create","arguments":"{}"}}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c2","type":"function","function":{"name":"create","name":"lookup","arguments":"{}"}}]}]"#;
    scratch.write("dup.json", document);
    let converted = tracegate()
        .current_dir(scratch.dir.path())
        .args(["convert", "dup.json"])
        .output()
        .expect("convert runs");
    let records = stdout(&converted);
    assert!(records.contains("\"call_id\":\"c1\""), "{records}");
    assert!(!records.contains("c2"), "{records}");
    assert!(!records.contains("lookup"), "{records}");
}

#[test]
fn a_duplicate_key_in_a_spec_literal_is_a_syntax_error() {
    let scratch = Scratch::new();
    scratch.write(
        "spec.tg",
        &SPEC.replace(
            r#"event lookup = call "lookup""#,
            r#"event lookup = call "lookup" where args == {"a": 1, "a": 2}"#,
        ),
    );
    let output = scratch.check(&["fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(
        text.contains("error[syntax-error]: duplicate key `a`"),
        "{text}"
    );
    assert!(text.contains("spec.tg:6:"), "{text}");
    let output = tracegate()
        .current_dir(scratch.dir.path())
        .args(["fmt", "--check", "spec.tg"])
        .output()
        .expect("tracegate runs");
    assert_eq!(code(&output), 2, "{}", report(&output));
}

#[test]
fn a_forced_format_that_does_not_fit_the_file_says_so() {
    let scratch = Scratch::new();
    let anthropic =
        root().join("traces/reconcile_before_retry/fail/forbidden-transition-anthropic.json");
    std::fs::copy(anthropic, scratch.path("anthropic.json")).expect("copied");
    let output = scratch.check_with(&["anthropic.json"], &["--format", "openai"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(
        text.contains("but its elements are Anthropic Messages (--format anthropic)"),
        "{text}"
    );
    assert!(text.contains("--> anthropic.json:6:1"), "{text}");
    // A forced format that finds no transcript at all says so too.
    let output = scratch.check_with(&["anthropic.json"], &["--format", "mcp"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(human_codes(&text).contains("unknown-format"), "{text}");
}

#[test]
fn an_mcp_tool_call_whose_name_is_not_a_string_is_located_and_the_rest_checked() {
    let scratch = Scratch::new();
    let mcp = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"boom"}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5,"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create","arguments":{}}}"#,
    ]
    .join("\n");
    scratch.write("mcp.jsonl", &mcp);
    let output = scratch.check(&["mcp.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert!(
        text.contains("`tools/call` field `params.name` is a number"),
        "{text}"
    );
    assert!(text.contains("mcp.jsonl:3:"), "{text}");
    assert!(!text.contains("tool `tools/call`"), "{text}");
    assert_eq!(count(&text, "forbidden-transition"), 1, "{text}");
}

// ---- every command masks ------------------------------------------------------------

/// [`SPEC`] keyed by `args.id`, whose `about` and forbid message hold secrets.
fn secret_spec() -> String {
    keyed_spec("args.id")
        .replace(
            "a failed create is not retried blindly",
            "token ghp_abcdefghijklmnopqrstuvwxyz0123",
        )
        .replace(
            "blind re-create after a failed create",
            "blind re-create; key sk-proj-abcdefghijklmnop1234",
        )
}

#[test]
fn graph_explore_coverage_and_lint_mask_spec_and_trace_secrets() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &secret_spec());
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl";
    scratch.write("jwt.jsonl", &FAIL.replace("r-1", jwt));
    let runs: &[&[&str]] = &[
        &[
            "graph",
            "spec.tg",
            "--highlight",
            "jwt.jsonl",
            "--format",
            "json",
        ],
        &[
            "graph",
            "spec.tg",
            "--highlight",
            "jwt.jsonl",
            "--format",
            "dot",
        ],
        &["explore", "spec.tg"],
        &["explore", "spec.tg", "--emit", "out"],
        &["coverage", "spec.tg", "--traces", "jwt.jsonl"],
        &[
            "coverage",
            "spec.tg",
            "--traces",
            "jwt.jsonl",
            "--output",
            "json",
        ],
        &[
            "check",
            "spec.tg",
            "--traces",
            "jwt.jsonl",
            "--output",
            "json",
        ],
        &["shrink", "spec.tg", "jwt.jsonl"],
    ];
    for args in runs {
        let output = tracegate()
            .current_dir(scratch.dir.path())
            .args(*args)
            .output()
            .expect("tracegate runs");
        let text = report(&output);
        assert!(!text.is_empty(), "{args:?} wrote nothing");
        assert_no_secret(&text);
        assert!(!text.contains("qrstuvwxyz0123"), "{args:?}:\n{text}");
    }
    for entry in walk(&scratch.path("out")) {
        let text = std::fs::read_to_string(&entry).expect("an emitted trace");
        assert_no_secret(&text);
    }
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a directory").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    assert!(
        !files.is_empty() || dir.ends_with("out"),
        "nothing in {dir:?}"
    );
    files
}

#[test]
fn lint_with_traces_reports_a_per_key_no_record_carries() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &keyed_spec("args.di"));
    let output = tracegate()
        .current_dir(scratch.dir.path())
        .args(["lint", "spec.tg", "--traces", "fail.jsonl"])
        .output()
        .expect("tracegate runs");
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_eq!(count(&text, "missing-key"), 1, "{text}");
    assert!(text.contains("did you mean `args.id`"), "{text}");
}

#[test]
fn control_characters_in_notes_are_escaped() {
    let scratch = Scratch::new();
    scratch.write("evil\x1b]0;x\x07.jsonl", FAIL);
    let output = tracegate()
        .current_dir(scratch.dir.path())
        .args(["check", "spec.tg", "--traces", ".", "-v"])
        .output()
        .expect("tracegate runs");
    let text = report(&output);
    assert_eq!(code(&output), 1, "{}", text.escape_debug());
    assert!(
        text.contains("evil\\x1b]0;x\\x07.jsonl"),
        "{}",
        text.escape_debug()
    );
    assert_no_control(&text);
}

#[cfg(unix)]
#[test]
fn a_transcript_document_through_a_pipe_is_read_in_its_format() {
    let anthropic =
        root().join("traces/reconcile_before_retry/fail/forbidden-transition-anthropic.json");
    let text = std::fs::read_to_string(anthropic).expect("the shipped trace");
    // One thread, so that `-` is read before `/dev/stdin`: with two, both read the same
    // pipe at once and either may get the document.
    let output = tracegate()
        .args(["check", "specs", "-j", "1", "--traces", "-", "/dev/stdin"])
        .write_stdin(text)
        .output()
        .expect("tracegate runs");
    let report = report(&output);
    // Standard input is read once: `-` has the document, `/dev/stdin` then holds nothing.
    assert_eq!(code(&output), 2, "{report}");
    assert_eq!(count(&report, "forbidden-transition"), 1, "{report}");
    assert!(report.contains("--> -:"), "{report}");
    assert_eq!(count(&report, "no-input"), 1, "{report}");
}

#[test]
fn secrets_inside_json_text_held_in_a_string_are_masked_in_snippets() {
    let scratch = Scratch::new();
    let trace = FAIL.replace(
        r#""call_id":"c2","args":{"id":"r-1"}}"#,
        r#""call_id":"c2","args":{"id":"r-1"},"error":{"detail":"{\"password\": \"pa\\\"ss-w0rd-long\", \"aws\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\"}"},"output_text":"secret=topsecret42 from postgres://admin:Pa55word-x@db:5432/app"}"#,
    );
    let trace = format!("{trace}{}\n", r#"{"kind":"sk-proj-abcdefghijklmnop1234"}"#);
    scratch.write("nested.jsonl", &trace);
    let output = scratch.check(&["nested.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 2, "{text}");
    assert_fail_checked(&text);
    assert_no_secret(&text);
    for part in ["ss-w0rd-long", "topsecret42"] {
        assert!(!text.contains(part), "`{part}` leaked:\n{text}");
    }
    assert!(
        text.contains("[redacted]"),
        "the line was not shown:\n{text}"
    );
}

#[cfg(unix)]
#[test]
fn shrink_and_fmt_do_not_block_on_a_named_pipe_without_a_writer() {
    let scratch = Scratch::new();
    mkfifo(&scratch.path("pipe.jsonl"));
    mkfifo(&scratch.path("pipe.tg"));
    let runs: &[&[&str]] = &[
        &["shrink", "spec.tg", "pipe.jsonl"],
        &["fmt", "pipe.tg", "spec.tg"],
        &["lint", "spec.tg", "--traces", "pipe.jsonl"],
        &[
            "coverage",
            "spec.tg",
            "--traces",
            "pipe.jsonl",
            "fail.jsonl",
        ],
        &["convert", "pipe.jsonl", "fail.jsonl"],
    ];
    for args in runs {
        let output = tracegate()
            .current_dir(scratch.dir.path())
            .args(*args)
            .timeout(std::time::Duration::from_secs(20))
            .output()
            .expect("tracegate runs");
        assert!(
            output.status.code().is_some(),
            "{args:?} was killed: {}",
            report(&output)
        );
    }
}

#[test]
fn a_record_without_the_key_after_every_instance_stopped_is_not_reported_again() {
    let scratch = Scratch::new();
    scratch.write("spec.tg", &keyed_spec("args.id"));
    let trace = format!(
        "{FAIL}{}\n",
        r#"{"kind":"call","tool":"create","call_id":"c9","args":{}}"#
    );
    scratch.write("fail.jsonl", &trace);
    let output = scratch.check(&["fail.jsonl"], None);
    let text = report(&output);
    assert_eq!(code(&output), 1, "{text}");
    assert_eq!(count(&text, "missing-key"), 0, "{text}");
    assert_eq!(count(&text, "forbidden-transition"), 1, "{text}");
}

#[test]
fn a_member_named_like_serde_jsons_private_token_is_read_as_written() {
    // With its `raw_value` feature, serde_json reads an object whose first member has
    // this name as the JSON text in that member's value: these arguments would have
    // become the number 1, and the message an error saying the file is not JSON.
    let token = "$serde_json::private::RawValue";
    let scratch = Scratch::new();
    let mcp = scratch.write(
        "mcp.jsonl",
        &format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"create","arguments":{{"{token}":"1"}}}}}}"#
        ),
    );
    let openai = scratch.write(
        "openai.json",
        &format!(
            r#"{{"messages":[{{"role":"user","content":"hi"}},{{"{token}":"x","role":"assistant","content":null,"tool_calls":[{{"id":"c1","type":"function","function":{{"name":"create","arguments":"{{\"{token}\":\"1\"}}"}}}}]}}]}}"#
        ),
    );
    let written = format!(r#""args":{{"{token}":"1"}}"#);
    for path in [mcp, openai] {
        let output = tracegate()
            .arg("convert")
            .arg(&path)
            .output()
            .expect("tracegate runs");
        let text = stdout(&output);
        assert_eq!(code(&output), 0, "{path:?}: {}", report(&output));
        assert_eq!(text.matches(&written).count(), 1, "{path:?}: {text}");
    }
}

#[test]
fn values_serde_json_skips_but_cannot_read_are_errors_not_values_no_guard_sees() {
    // serde_json skips `1e400` and `"\ud800…"` as valid JSON but cannot read them as
    // values: a guard comparing one would find nothing, and the second call of each
    // trace would pass the rule written against it.
    let cases = [
        (
            r#"event large = call "transfer" where args.amount > 1000"#,
            r#""tool":"transfer","args":{"amount":5000}"#,
            r#""tool":"transfer","args":{"amount":1e400}"#,
            "the number `1e400`",
        ),
        (
            r#"event large = call "shell" where args.cmd matches /rm -rf/"#,
            r#""tool":"shell","args":{"cmd":"rm -rf /tmp/a"}"#,
            r#""tool":"shell","args":{"cmd":"\ud800 rm -rf /"}"#,
            "surrogate pair",
        ),
    ];
    for (event, first, second, says) in cases {
        let scratch = Scratch::new();
        scratch.write(
            "spec.tg",
            &format!(
                "spec once\n{event}\ninitial idle\notherwise ignore\nidle -> seen on large\nforbid seen on large: \"a second one\"\n"
            ),
        );
        let line = |id: &str, rest: &str| format!(r#"{{"kind":"call","call_id":"{id}",{rest}}}"#);
        scratch.write(
            "fail.jsonl",
            &format!("{}\n{}\n", line("c1", first), line("c2", second)),
        );
        let output = scratch.check(&["fail.jsonl"], None);
        let text = report(&output);
        assert_eq!(code(&output), 2, "{text}");
        assert_eq!(count(&text, "malformed-record"), 1, "{text}");
        assert!(text.contains("fail.jsonl:2:"), "{text}");
        assert!(text.contains(says), "{text}");
        assert!(!text.contains("every trace conforms"), "{text}");
    }
}
