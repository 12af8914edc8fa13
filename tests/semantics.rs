//! Checking semantics (DESIGN.md §4) on small specs written for the tests.

use crate::util::{check_text, codes_and_lines, spec};

const RECONCILE: &str = r#"spec reconcile
event create          = call create_record
event created         = result create_record where status == "ok"
event outcome_unknown = result create_record where status == "error" and error.category == "outcome_unknown"
event lookup          = call lookup_by_request_id
event found           = result lookup_by_request_id where status == "ok" and has output.id
event not_found       = result lookup_by_request_id where status == "ok" and not has output.id
event attach_note     = call attach_note

initial idle
accept idle, done

idle     -> pending  on create
pending  -> done     on created
pending  -> unknown  on outcome_unknown
unknown  -> checking on lookup
checking -> done     on found
checking -> idle     on not_found
done     -> done     on attach_note

forbid unknown on create: "blind re-create"
"#;

#[track_caller]
fn assert_findings(spec_text: &str, trace: &str, want: &[(&str, u64)]) {
    let machine = spec(spec_text);
    let outcome = check_text(std::slice::from_ref(&machine), trace);
    let have = codes_and_lines(&outcome);
    let want: Vec<(String, u64)> = want.iter().map(|(c, l)| (c.to_string(), *l)).collect();
    assert_eq!(have, want, "{:#?}", outcome.diagnostics);
}

#[test]
fn blind_recreate_is_forbidden_at_its_line() {
    let trace = r#"{"kind":"call","tool":"create_record","call_id":"1","args":{"request_id":"r1"}}
{"kind":"result","call_id":"1","status":"error","error":{"category":"outcome_unknown"}}
{"kind":"call","tool":"create_record","call_id":"2","args":{"request_id":"r2"}}
"#;
    let machine = spec(RECONCILE);
    let outcome = check_text(std::slice::from_ref(&machine), trace);
    assert_eq!(outcome.diagnostics.len(), 1, "{:#?}", outcome.diagnostics);
    let found = &outcome.diagnostics[0];
    assert_eq!(found.code.as_str(), "forbidden-transition");
    assert_eq!(found.message, "blind re-create");
    assert_eq!(found.trace.as_ref().unwrap().loc.line, 3);
    let detail = found.violation.as_ref().unwrap();
    assert_eq!(detail.state, "unknown");
    assert_eq!(detail.event.as_deref(), Some("create"));
    assert_eq!(detail.allowed, ["lookup"]);
    let path: Vec<_> = detail
        .path
        .iter()
        .map(|s| (s.state.as_str(), s.event.as_str(), s.line))
        .collect();
    assert_eq!(
        path,
        [("idle", "create", 1), ("pending", "outcome_unknown", 2)]
    );
    // The rule is the `forbid` line of the spec.
    let rule = found.spec.as_ref().unwrap();
    assert!(RECONCILE[rule.span.range()].starts_with("forbid unknown on create"));
}

#[test]
fn reconciled_retry_conforms() {
    let trace = r#"{"kind":"call","tool":"create_record","call_id":"1","args":{"request_id":"r1"}}
{"kind":"result","call_id":"1","status":"error","error":{"category":"outcome_unknown"}}
{"kind":"call","tool":"lookup_by_request_id","call_id":"2","args":{"request_id":"r1"}}
{"kind":"result","call_id":"2","status":"ok","output":{}}
{"kind":"call","tool":"create_record","call_id":"3","args":{"request_id":"r1"}}
{"kind":"result","call_id":"3","status":"ok","output":{"id":"x"}}
{"kind":"call","tool":"attach_note","call_id":"4"}
{"kind":"result","call_id":"4","status":"ok","output":null}
"#;
    assert_findings(RECONCILE, trace, &[]);
}

#[test]
fn unanswered_call_gets_a_missing_result_and_the_end_is_checked() {
    let spec_text = r#"event create  = call create_record
event created = result create_record where status == "ok"
event lost    = result create_record where status == "missing"
initial idle
accept idle, done
idle -> pending on create
pending -> done on created
pending -> unknown on lost
"#;
    // The reply never came: the synthetic result moves to `unknown`, which may not end
    // a trace; the violation is located at the call, the instance's last event.
    let trace = "{\"kind\":\"call\",\"tool\":\"create_record\",\"call_id\":\"a\"}\n{\"kind\":\"message\",\"role\":\"assistant\",\"text\":\"done!\"}\n";
    assert_findings(spec_text, trace, &[("unaccepted-end", 1)]);
}

#[test]
fn unaccepted_end_is_located_at_the_last_event() {
    let trace = r#"{"kind":"call","tool":"create_record","call_id":"1","args":{"request_id":"r1"}}
{"kind":"message","role":"assistant","text":"working"}
{"kind":"result","call_id":"1","status":"error","error":{"category":"outcome_unknown"}}
{"kind":"message","role":"assistant","text":"it probably failed"}
"#;
    assert_findings(RECONCILE, trace, &[("unaccepted-end", 3)]);
}

#[test]
fn otherwise_reject_names_allowed_events_and_ignore_skips() {
    let strict = r#"event a = call a
event b = call b
initial s
s -> t on a
t -> s on a
"#;
    let trace = "{\"kind\":\"call\",\"tool\":\"a\"}\n{\"kind\":\"call\",\"tool\":\"b\"}\n";
    let machine = spec(strict);
    let outcome = check_text(std::slice::from_ref(&machine), trace);
    assert_eq!(
        codes_and_lines(&outcome),
        [("unexpected-event".to_string(), 2)]
    );
    let detail = outcome.diagnostics[0].violation.as_ref().unwrap();
    assert_eq!(detail.allowed, ["a"]);
    assert_eq!(detail.state, "t");

    let lenient = format!("{strict}otherwise ignore\n");
    assert_findings(&lenient, trace, &[]);
}

#[test]
fn forbid_overrides_allow_and_star_covers_every_state() {
    let spec_text = r#"event go = call go
event stop = call stop
initial a
a -> b on go
b -> a on go
a -> a on stop
forbid * on stop: "never stop"
"#;
    let trace = "{\"kind\":\"call\",\"tool\":\"go\"}\n{\"kind\":\"call\",\"tool\":\"go\"}\n{\"kind\":\"call\",\"tool\":\"stop\"}\n";
    assert_findings(spec_text, trace, &[("forbidden-transition", 3)]);
}

#[test]
fn per_keys_slice_instances_and_keyless_records_reach_every_live_instance() {
    let spec_text = r#"per args.id
event open  = call open
event close = call close
event reset = message where text == "reset"
otherwise ignore
initial closed
accept closed
closed -> opened on open
opened -> closed on close
forbid opened on reset: "reset while open"
"#;
    // Two keys interleave; `x` is closed, `y` is still open when the keyless reset
    // arrives, so only `y`'s instance is violated.
    let trace = r#"{"kind":"call","tool":"open","args":{"id":"x"}}
{"kind":"call","tool":"open","args":{"id":"y"}}
{"kind":"call","tool":"close","args":{"id":"x"}}
{"kind":"message","role":"user","text":"reset"}
"#;
    let machine = spec(spec_text);
    let outcome = check_text(std::slice::from_ref(&machine), trace);
    assert_eq!(
        codes_and_lines(&outcome),
        [("forbidden-transition".to_string(), 4)]
    );
    let detail = outcome.diagnostics[0].violation.as_ref().unwrap();
    assert_eq!(detail.key.as_deref(), Some("y"));
}

#[test]
fn results_inherit_args_so_per_keys_route_them() {
    let spec_text = r#"per args.request_id
event create = call create
event done   = result create where status == "ok"
initial idle
accept idle, finished
idle -> waiting on create
waiting -> finished on done
"#;
    // Neither result carries `args`; each joins its call by `call_id` and is routed
    // to that call's key. Key `b` gets an error, which no event matches, so it never
    // finishes: the violation is at its last event, the call on line 2.
    let trace = r#"{"kind":"call","tool":"create","call_id":"1","args":{"request_id":"a"}}
{"kind":"call","tool":"create","call_id":"2","args":{"request_id":"b"}}
{"kind":"result","call_id":"1","status":"ok","output":0}
{"kind":"result","call_id":"2","status":"error","error":"boom"}
"#;
    let machine = spec(spec_text);
    let outcome = check_text(std::slice::from_ref(&machine), trace);
    assert_eq!(
        codes_and_lines(&outcome),
        [("unaccepted-end".to_string(), 2)]
    );
    assert_eq!(
        outcome.diagnostics[0]
            .violation
            .as_ref()
            .unwrap()
            .key
            .as_deref(),
        Some("b")
    );
}

#[test]
fn without_per_a_new_request_id_is_still_the_same_instance() {
    let trace = r#"{"kind":"call","tool":"create_record","call_id":"1","args":{"request_id":"r1"}}
{"kind":"result","call_id":"1","status":"error","error":{"category":"outcome_unknown"}}
{"kind":"call","tool":"create_record","call_id":"2","args":{"request_id":"brand-new"}}
"#;
    assert_findings(RECONCILE, trace, &[("forbidden-transition", 3)]);
}

#[test]
fn comparisons_are_json_typed_and_missing_is_not_null() {
    let spec_text = r#"event zero      = result t where output == 0
event falsy     = result t where output == false
event null_id   = result u where output.id == null
event no_id     = result u where not has output.id
event ne_on_missing = result v where output.id != 1
otherwise ignore
initial s
s -> s on zero, falsy, null_id, no_id, ne_on_missing
forbid s on falsy: "false matched"
forbid s on no_id: "missing id"
"#;
    // `0` is not `false`; `{"id": null}` has an id; `!=` holds on a missing path.
    let trace = r#"{"kind":"result","tool":"t","output":0}
{"kind":"result","tool":"u","output":{"id":null}}
{"kind":"result","tool":"v","output":{}}
{"kind":"result","tool":"t","output":false}
"#;
    assert_findings(spec_text, trace, &[("forbidden-transition", 4)]);
}

#[test]
fn a_record_matching_two_events_is_an_error_naming_both() {
    let spec_text = r#"event ok  = result t where status == "ok"
event any = result t where has output
initial s
s -> s on ok, any
"#;
    let trace = r#"{"kind":"result","tool":"t","status":"ok"}
{"kind":"result","tool":"t","status":"ok","output":1}
{"kind":"result","tool":"t","status":"ok","output":2}
"#;
    let machine = spec(spec_text);
    let outcome = check_text(std::slice::from_ref(&machine), trace);
    // Reported once per pair of events per file, at the first record.
    assert_eq!(
        codes_and_lines(&outcome),
        [("ambiguous-event".to_string(), 2)]
    );
    let message = &outcome.diagnostics[0].message;
    assert!(
        message.contains("`ok`") && message.contains("`any`"),
        "{message}"
    );
    assert_eq!(outcome.diagnostics[0].related.len(), 1);
}

#[test]
fn path_sugar_builds_the_seed_protocol() {
    let spec_text = r#"event create = call create
event outcome_unknown = result create where status == "error"
event lookup_by_request_id = call lookup
event found = result lookup where status == "ok"
event attach_note = call attach_note
path create -> outcome_unknown -> lookup_by_request_id -> found -> attach_note
forbid outcome_unknown on create: "blind re-create"
"#;
    let ok = r#"{"kind":"call","tool":"create","call_id":"1"}
{"kind":"result","call_id":"1","status":"error","error":"timeout"}
{"kind":"call","tool":"lookup","call_id":"2"}
{"kind":"result","call_id":"2","status":"ok","output":{"id":1}}
{"kind":"call","tool":"attach_note","call_id":"3"}
"#;
    assert_findings(spec_text, ok, &[]);
    let blind = r#"{"kind":"call","tool":"create","call_id":"1"}
{"kind":"result","call_id":"1","status":"error","error":"timeout"}
{"kind":"call","tool":"create","call_id":"2"}
"#;
    assert_findings(spec_text, blind, &[("forbidden-transition", 3)]);
}

#[test]
fn long_histories_are_cut_and_counted() {
    let spec_text = "event tick = call tick\nevent boom = call boom\ninitial s\ns -> s on tick\n";
    let mut trace = "{\"kind\":\"call\",\"tool\":\"tick\"}\n".repeat(100);
    trace.push_str("{\"kind\":\"call\",\"tool\":\"boom\"}\n");
    let machine = spec(spec_text);
    let outcome = check_text(std::slice::from_ref(&machine), &trace);
    assert_eq!(
        codes_and_lines(&outcome),
        [("unexpected-event".to_string(), 101)]
    );
    let detail = outcome.diagnostics[0].violation.as_ref().unwrap();
    assert_eq!(detail.path.len(), tracegate::diagnostic::PATH_LIMIT);
    assert_eq!(
        detail.path_elided,
        100 - tracegate::diagnostic::PATH_LIMIT as u64
    );
    assert_eq!(detail.path.last().unwrap().line, 100);
}

#[test]
fn trace_by_splits_one_file_into_traces() {
    use std::sync::Arc;
    use tracegate::check::{CheckOptions, check_reader};
    use tracegate::spec::ast::Segment;

    let machine = spec(RECONCILE);
    // Case A blindly re-creates; case B is clean. Interleaved in one file.
    let trace = r#"{"case":"A","kind":"call","tool":"create_record","call_id":"1"}
{"case":"B","kind":"call","tool":"create_record","call_id":"1"}
{"case":"A","kind":"result","call_id":"1","status":"error","error":{"category":"outcome_unknown"}}
{"case":"B","kind":"result","call_id":"1","status":"ok","output":{"id":"x"}}
{"case":"A","kind":"call","tool":"create_record","call_id":"2"}
{"kind":"message","role":"user","text":"no case"}
"#;
    let options = CheckOptions {
        trace_by: Some(vec![Segment::Key("case".into())]),
        ..CheckOptions::default()
    };
    let outcome = check_reader(
        std::slice::from_ref(&machine),
        Arc::from(std::path::Path::new("cases.jsonl")),
        trace.as_bytes(),
        &options,
    );
    assert_eq!(outcome.traces, 2);
    assert_eq!(
        codes_and_lines(&outcome),
        [
            ("forbidden-transition".to_string(), 5),
            ("malformed-record".to_string(), 6)
        ]
    );
    assert_eq!(
        outcome.diagnostics[0]
            .trace
            .as_ref()
            .unwrap()
            .trace
            .as_deref(),
        Some("A")
    );
}
