//! Specs that see data across records: `bind` and `$VAR`, path-to-path comparison,
//! arithmetic, durations and instants, provenance and secrets, checked end to end.

use crate::util::{check_text, codes_and_lines, spec};

fn lines(spec_text: &str, trace: &str) -> Vec<(String, u64)> {
    codes_and_lines(&check_text(&[spec(spec_text)], trace))
}

const RESPONSE: &str = r#"spec response
event request  = call fetch bind rid = args.request_id
event matching = result fetch where output.request_id == $rid
event other    = result fetch where output.request_id != $rid
otherwise ignore
initial idle
idle    -> waiting on request
waiting -> idle    on matching
forbid waiting on other: "the response answers another request"
"#;

#[test]
fn a_bound_value_is_compared_on_a_later_record() {
    let trace = r#"{"kind":"call","tool":"fetch","call_id":"1","args":{"request_id":"a"}}
{"kind":"result","call_id":"1","status":"ok","output":{"request_id":"a"}}
{"kind":"call","tool":"fetch","call_id":"2","args":{"request_id":"b"}}
{"kind":"result","call_id":"2","status":"ok","output":{"request_id":"a"}}
"#;
    assert_eq!(
        lines(RESPONSE, trace),
        [("forbidden-transition".to_string(), 4)]
    );
}

#[test]
fn a_forbidden_move_binds_nothing_and_variables_belong_to_the_instance() {
    let text = r#"spec keyed
event first = call write where not has $seen bind seen = args.value
event again = call write where has $seen and args.value == $seen
event other = call write where has $seen and args.value != $seen
per args.key
initial idle
idle -> idle on first, again
forbid idle on other: "a second value for one key"
"#;
    // Key `a` binds 1; key `b` binds 2 independently; `a` then sees 3: violation.
    let trace = r#"{"kind":"call","tool":"write","args":{"key":"a","value":1}}
{"kind":"call","tool":"write","args":{"key":"b","value":2}}
{"kind":"call","tool":"write","args":{"key":"a","value":1}}
{"kind":"call","tool":"write","args":{"key":"b","value":2}}
{"kind":"call","tool":"write","args":{"key":"a","value":3}}
"#;
    assert_eq!(
        lines(text, trace),
        [("forbidden-transition".to_string(), 5)]
    );
}

#[test]
fn counting_with_arithmetic() {
    let text = r#"spec budget
event first = call ask where not has $n bind n = 1
event more  = call ask where has $n and $n < 2 bind n = $n + 1
event over  = call ask where $n >= 2
initial idle
idle -> idle on first, more
forbid idle on over: "more than two approval prompts"
"#;
    let ask = "{\"kind\":\"call\",\"tool\":\"ask\"}\n";
    assert!(lines(text, &ask.repeat(2)).is_empty());
    assert_eq!(
        lines(text, &ask.repeat(3)),
        [("forbidden-transition".to_string(), 3)]
    );
}

#[test]
fn no_coercion_in_arithmetic_or_comparison() {
    let text = r#"spec typed
event narrower = call fetch where args.limit * 2 <= 10
event any      = call fetch where not (args.limit * 2 <= 10)
initial idle
idle -> idle on narrower
forbid idle on any: "too wide"
"#;
    // A string limit makes the comparison false, so `not (...)` holds: flagged.
    let trace = r#"{"kind":"call","tool":"fetch","args":{"limit":5}}
{"kind":"call","tool":"fetch","args":{"limit":"5"}}
"#;
    assert_eq!(
        lines(text, trace),
        [("forbidden-transition".to_string(), 2)]
    );
}

#[test]
fn durations_and_instants() {
    let text = r#"spec wait
event limited = result fetch where status == "error" bind at = time, wait = output.retry_after
event early   = call fetch where time < $at + $wait * 1s
event later   = call fetch where time >= $at + $wait * 1s
otherwise ignore
initial idle
idle    -> waiting on limited
waiting -> idle    on later
forbid waiting on early: "retried before retry-after"
"#;
    let trace = |second: &str| {
        format!(
            r#"{{"kind":"call","tool":"fetch","call_id":"1","time":"2026-01-01T00:00:00Z"}}
{{"kind":"result","call_id":"1","status":"error","output":{{"retry_after":30}},"time":"2026-01-01T00:00:01Z"}}
{{"kind":"call","tool":"fetch","call_id":"2","time":"{second}"}}
"#
        )
    };
    assert!(lines(text, &trace("2026-01-01T00:00:31Z")).is_empty());
    assert_eq!(
        lines(text, &trace("2026-01-01T00:00:30.999Z")),
        [("forbidden-transition".to_string(), 3)]
    );
    // Not RFC 3339: both comparisons are false, the call is no event at all.
    assert!(lines(text, &trace("soon")).is_empty());
}

const IDS: &str = r#"spec ids
event write    = call update_invoice where args.id in outputs of "list_*" or args.id in messages from user
event recalled = call update_invoice where not (args.id in outputs of "list_*" or args.id in messages from user)
initial idle
idle -> idle on write
forbid * on recalled: "an id that no earlier output of this run returned"
"#;

#[test]
fn provenance_is_typed_strictly_earlier_and_per_trace() {
    let trace = r#"{"kind":"call","tool":"list_invoices","call_id":"1"}
{"kind":"result","call_id":"1","status":"ok","output":{"items":[{"id":"inv_4242","n":7}],"note":"also see inv_9999, closed"}}
{"kind":"call","tool":"update_invoice","args":{"id":"inv_4242"}}
{"kind":"call","tool":"update_invoice","args":{"id":"inv_9999"}}
{"kind":"call","tool":"update_invoice","args":{"id":7}}
{"kind":"message","role":"user","text":"please fix inv_1234."}
{"kind":"call","tool":"update_invoice","args":{"id":"inv_1234"}}
{"kind":"call","tool":"update_invoice","args":{"id":"7"}}
"#;
    assert_eq!(lines(IDS, trace), [("forbidden-transition".to_string(), 8)]);
    // The same id, never listed in this trace, is recalled from nowhere.
    let alone = r#"{"kind":"call","tool":"update_invoice","args":{"id":"inv_4242"}}
"#;
    assert_eq!(lines(IDS, alone), [("forbidden-transition".to_string(), 1)]);
}

#[test]
fn a_record_never_vouches_for_itself() {
    let text = r#"spec self_cite
event cited = result "*" where output.id in outputs
event fresh = result "*" where not (output.id in outputs)
initial idle
idle -> idle on cited
forbid * on fresh: "new id"
"#;
    let trace = r#"{"kind":"result","tool":"a","status":"ok","output":{"id":"abcd"}}
{"kind":"result","tool":"a","status":"ok","output":{"id":"abcd"}}
"#;
    assert_eq!(
        lines(text, trace),
        [("forbidden-transition".to_string(), 1)]
    );
}

#[test]
fn secrets_anywhere_in_a_record_and_never_echoed() {
    let text = r#"spec secrets
event leak = record where secret in record
initial idle
forbid * on leak: "a credential in a record"
"#;
    let trace = r#"{"kind":"call","tool":"deploy","args":{"id":"3f2b8c1e-9d4a-4b7e-8c2f-1a2b3c4d5e6f"}}
{"kind":"call","tool":"deploy","args":{"config":"{\"headers\": {\"Authorization\": \"Bearer abcdefghijklmnopqrstuv\"}}"}}
"#;
    let machine = spec(text);
    let outcome = check_text(std::slice::from_ref(&machine), trace);
    assert_eq!(
        codes_and_lines(&outcome),
        [("forbidden-transition".to_string(), 2)]
    );
    let message = format!("{:?}", outcome.diagnostics[0].violation);
    assert!(!message.contains("abcdefghijklmnopqrstuv"), "{message}");
}

#[test]
fn reports_of_a_leaked_credential_never_show_it() {
    let token = "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8";
    let trace = "traces/no_secrets_in_records/fail/forbidden-transition-openai.json";
    assert!(
        std::fs::read_to_string(crate::util::root().join(trace))
            .unwrap()
            .contains(token)
    );
    for output in ["human", "json"] {
        let run = crate::util::run(&[
            "check",
            "specs/no_secrets_in_records.tg",
            "--traces",
            trace,
            "--output",
            output,
        ]);
        assert_eq!(run.status.code(), Some(1));
        let text = crate::util::stdout(&run);
        assert!(text.contains("forbidden-transition"), "{text}");
        assert!(!text.contains(token), "{output}: {text}");
    }
}
