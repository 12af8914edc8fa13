//! The command line: exit codes, `explain`, usage errors, human output.

use tracegate::diagnostic::Code;

use crate::util::{run, stdout, tracegate};

#[test]
fn explain_knows_every_code() {
    for &code in Code::ALL {
        let output = run(&["explain", code.as_str()]);
        assert_eq!(output.status.code(), Some(0), "{code}");
        let text = stdout(&output);
        assert!(text.contains("## What it means"), "{code}: {text}");
        assert!(text.contains("## Example"), "{code}: {text}");
    }
    let listing = stdout(&run(&["explain"]));
    for &code in Code::ALL {
        assert!(
            listing.contains(code.as_str()),
            "{code} missing from the list"
        );
    }
}

#[test]
fn explain_suggests_close_codes() {
    let output = run(&["explain", "forbiden-transition"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("did you mean `forbidden-transition`?"),
        "{stderr}"
    );
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["check", "--output", "yaml"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    let missing = run(&["check", "no/such/specs"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stdout(&missing).contains("error[unreadable-input]"),
        "{}",
        stdout(&missing)
    );
}

#[test]
fn a_conforming_run_exits_0() {
    let output = run(&[
        "check",
        "specs",
        "--traces",
        "traces/reconcile_before_retry/pass",
    ]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    assert!(stdout(&output).contains("every trace conforms"));
}

#[test]
fn human_output_shows_the_trace_line_the_rule_and_the_path() {
    let output = run(&[
        "check",
        "specs/reconcile_before_retry.tg",
        "--traces",
        "traces/reconcile_before_retry/fail",
    ]);
    assert_eq!(output.status.code(), Some(1));
    let text = stdout(&output);
    assert!(text.contains("error[forbidden-transition]"), "{text}");
    assert!(
        text.contains("--> traces/reconcile_before_retry/fail/"),
        "{text}"
    );
    assert!(
        text.contains("::: specs/reconcile_before_retry.tg"),
        "{text}"
    );
    assert!(text.contains("= note: path: "), "{text}");
    assert!(
        text.contains("forbid "),
        "the rule's source line is shown: {text}"
    );
    // Not a terminal: no colour codes.
    assert!(!text.contains('\u{1b}'), "{text}");
}

#[test]
fn secrets_in_trace_lines_are_not_echoed() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("leaky.jsonl");
    std::fs::write(
        &trace,
        "{\"kind\":\"call\",\"tool\":\"tick\",\"args\":{\"api_key\":\"sk-live-0123456789abcdefghij\"}}\n",
    )
    .unwrap();
    let spec = dir.path().join("strict.tg");
    std::fs::write(
        &spec,
        "event tock = call tock\ninitial s\ns -> s on tock\nevent tick = call tick\n",
    )
    .unwrap();
    let output = tracegate()
        .args([
            "check",
            spec.to_str().unwrap(),
            "--traces",
            trace.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("error[unexpected-event]"), "{text}");
    assert!(!text.contains("0123456789abcdefghij"), "{text}");
    assert!(text.contains("[redacted]"), "{text}");
}

/// Runs `check` on `traces` with stdout closed before it writes: what it exits with.
fn status_with_stdout_closed(traces: &std::path::Path) -> Option<i32> {
    use std::process::{Command, Stdio};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("tracegate"))
        .current_dir(crate::util::root())
        .env_clear()
        .args(["check", "specs/seed_protocol.tg", "--traces"])
        .arg(traces)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tracegate runs");
    // The report is far larger than a pipe holds, so the run meets the closed pipe
    // whether it starts writing before or after the reader goes away.
    drop(child.stdout.take());
    child.wait().expect("tracegate ends").code()
}

#[test]
fn a_closed_pipe_ends_the_run_with_the_status_of_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    let failing = std::fs::read_to_string(
        crate::util::root().join("traces/seed_protocol/fail/forbidden-transition.jsonl"),
    )
    .unwrap();
    for i in 0..300 {
        std::fs::write(dir.path().join(format!("fail-{i:03}.jsonl")), &failing).unwrap();
    }
    assert_eq!(status_with_stdout_closed(dir.path()), Some(1), "violations");
    std::fs::write(dir.path().join("broken.jsonl"), "{not json\n").unwrap();
    assert_eq!(status_with_stdout_closed(dir.path()), Some(2), "an error");
}

#[test]
fn usage_problems_are_usage_error_diagnostics_on_stderr() {
    for line in [
        &["check", "--select", "runs[*.messages"][..],
        &["coverage", "--min", "150"],
        &["shrink", "specs", "t.jsonl", "--violation", "0"],
        &["help", "chek"],
    ] {
        let output = run(line);
        assert_eq!(output.status.code(), Some(2), "{line:?}");
        assert_eq!(stdout(&output), "", "{line:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.starts_with("error[usage-error]: "),
            "{line:?}: {stderr}"
        );
    }
    let output = run(&["explain", "forbiden-transition"]);
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error[usage-error]: unknown code `forbiden-transition`\n \
         = help: did you mean `forbidden-transition`? `tracegate explain` lists them all\n\n"
    );
}
