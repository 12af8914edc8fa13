//! `shrink`: a long, real-looking trace with one buried violation comes down to the
//! records that make it; `per` keys; what cannot be shrunk; the command.

use std::fmt::Write as _;

use tracegate::diagnostic::Code;
use tracegate::explore::{self, ShrinkError, ShrinkOptions};
use tracegate::files;
use tracegate::machine::Machine;

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
