//! The runtime API: `Monitor::allows` answers exactly what `feed` would report, changes
//! nothing, and `feed` reports a forbidden move at once.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tracegate::check::{CheckOptions, Monitor, check_path};
use tracegate::diagnostic::render::json;
use tracegate::machine::Machine;
use tracegate::spec::ast::Segment;
use tracegate::trace::adapters::{self, Entry, InputOptions, Opened};
use tracegate::trace::reader::DEFAULT_MAX_LINE_BYTES;
use tracegate::trace::{Location, Record, native};
use tracegate::{files, runtime};

use crate::util::root;

/// Every record of a trace file, read as the checker reads it, and how to split it.
fn records(path: &Path) -> (Vec<Record<'static>>, Option<Vec<Segment>>) {
    let options = InputOptions::default();
    match adapters::open(path, &options, DEFAULT_MAX_LINE_BYTES).expect("the file opens") {
        Opened::Native(_) => {
            let text = std::fs::read_to_string(path).expect("the file is text");
            let records = text
                .lines()
                .enumerate()
                .filter(|(_, line)| !line.trim().is_empty())
                .filter_map(|(i, line)| {
                    let loc = Location {
                        line: i as u64 + 1,
                        ..Location::default()
                    };
                    let record = native::decode_line(line, loc).ok()?;
                    let map = record.fields.keys().into_iter().map(|key| {
                        let raw = record.fields.raw_text(key).expect("a listed key");
                        (
                            key.to_string(),
                            serde_json::from_str(&raw).expect("a field is JSON"),
                        )
                    });
                    let mut owned = runtime::record_from_map(map.collect()).expect("valid");
                    owned.loc = record.loc;
                    Some(owned)
                })
                .collect();
            (records, None)
        }
        Opened::Read(reading) => {
            let trace_by = (reading.traces > 1).then(|| vec![Segment::Key("trace".into())]);
            let records = reading
                .entries
                .into_iter()
                .filter_map(|entry| match entry {
                    Entry::Record(record) => Some(record),
                    Entry::Problem(_) => None,
                })
                .collect();
            (records, trace_by)
        }
    }
}

/// The spec a directory of example traces is for.
fn spec_of(dir: &Path) -> Vec<Machine> {
    let name = dir.file_name().expect("a spec's directory").to_owned();
    let spec = root().join("specs").join(name).with_extension("tg");
    let (specs, errors) = files::load_specs(&[spec]);
    assert!(errors.is_empty(), "{}: the spec compiles", dir.display());
    specs
}

fn example_traces() -> Vec<(PathBuf, PathBuf)> {
    let mut found = Vec::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root().join("traces"))
        .expect("traces/ exists")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        for verdict in ["pass", "fail"] {
            // Walked as `check` walks them: trace files in sorted order, subdirectories
            // (the pairs of logs that are checked joined) included.
            let (traces, problems) = files::collect(&[dir.join(verdict)], files::is_trace_file);
            assert!(problems.is_empty(), "pass/ and fail/ exist: {problems:?}");
            found.extend(traces.into_iter().map(|trace| (trace, dir.clone())));
        }
    }
    found
}

#[test]
fn allows_answers_what_feed_reports_and_changes_nothing() {
    let traces = example_traces();
    assert!(traces.len() > 20, "the examples are found");
    let mut denials = 0;
    for (path, dir) in traces {
        let specs = spec_of(&dir);
        let (records, trace_by) = records(&path);
        let file: Arc<Path> = Arc::from(path.as_path());
        let mut monitor = Monitor::new(&specs, file.clone(), trace_by.clone());
        for record in records {
            let asked = monitor.allows(&record);
            let again = monitor.allows(&record);
            let got: Vec<String> = monitor.feed(record).iter().map(json::render).collect();
            let where_ = format!("{}", path.display());
            assert_eq!(asked.is_allowed(), got.is_empty(), "{where_}");
            assert_eq!(
                asked.denial().map(json::render),
                again.denial().map(json::render),
                "{where_}"
            );
            if let Some(denial) = asked.denial() {
                denials += 1;
                assert_eq!(json::render(denial), got[0], "{where_}");
                let violation = denial.violation.as_deref().expect("a violation");
                assert_eq!(asked.allowed_events(), violation.allowed.as_slice());
                assert_eq!(asked.code(), Some(denial.code));
                assert_eq!(asked.message(), Some(denial.message.as_str()));
            }
        }
        // Asking before every record left the verdicts exactly those of a plain check.
        let options = CheckOptions {
            trace_by,
            ..CheckOptions::default()
        };
        let want: Vec<String> = check_path(&specs, &path, &options, &InputOptions::default())
            .outcome
            .diagnostics
            .iter()
            .map(json::render)
            .collect();
        let have: Vec<String> = monitor
            .finish()
            .diagnostics
            .iter()
            .map(json::render)
            .collect();
        assert_eq!(have, want, "{}", path.display());
    }
    assert!(denials >= 10, "the failing examples are denied ({denials})");
}

fn reconcile() -> Arc<[Machine]> {
    let path = root().join("specs/reconcile_before_retry.tg");
    let (specs, errors) = files::load_specs(&[path]);
    assert!(errors.is_empty());
    specs.into()
}

#[test]
fn a_forbidden_call_is_denied_before_it_runs_and_reported_by_feed_at_once() {
    let mut monitor = Monitor::shared(reconcile(), Arc::from(Path::new("live")), None);
    let create = json!({"id": "c1", "type": "function",
        "function": {"name": "create_record", "arguments": "{\"request_id\": \"r1\"}"}});
    let mut call = runtime::openai_tool_call(&create).expect("a call");
    call.loc.line = 1;
    assert!(monitor.feed(call).is_empty());
    let timeout = json!({"role": "tool", "tool_call_id": "c1",
        "error": {"category": "outcome_unknown"}, "content": "timed out"});
    let mut result = runtime::openai_tool_result(&timeout).expect("a result");
    result.loc.line = 2;
    assert!(monitor.allows(&result).is_allowed());
    assert!(monitor.feed(result).is_empty());

    // A new request id after an unknown outcome: the blind re-create (the same id would
    // be an idempotent retry).
    let retry = json!({"type": "tool_use", "id": "t2", "name": "create_record",
        "input": {"request_id": "r2"}});
    let mut retry = runtime::anthropic_tool_use(&retry).expect("a call");
    retry.loc.line = 3;
    let answer = monitor.allows(&retry);
    assert_eq!(
        answer.code().map(|c| c.as_str()),
        Some("forbidden-transition")
    );
    assert_eq!(
        answer.message(),
        Some(
            "blind re-create: the first create may have committed; look it up by request id first"
        )
    );
    assert_eq!(answer.allowed_events(), ["retry", "lookup"]);
    let rule = answer.rule().expect("the forbid rule");
    assert_eq!(rule.line_col().0, 84);
    let path: Vec<(String, u64)> = answer
        .denial()
        .and_then(|d| d.violation.as_deref())
        .expect("a violation")
        .path
        .iter()
        .map(|step| (step.event.clone(), step.line))
        .collect();
    assert_eq!(
        path,
        [
            ("create".to_string(), 1),
            ("outcome_unknown".to_string(), 2)
        ]
    );

    // Had the runtime run it anyway, feed would say so at once.
    let fed: Vec<String> = monitor
        .feed(retry.clone())
        .iter()
        .map(|d| d.code.as_str().to_string())
        .collect();
    assert_eq!(fed, ["forbidden-transition"]);
    // The instance has stopped: nothing more is reported for it.
    assert!(monitor.allows(&retry).is_allowed());
    let reported = monitor.reported();
    let outcome = monitor.finish();
    assert_eq!(reported, 1);
    assert_eq!(outcome.diagnostics.len(), 1);
}

#[test]
fn a_lookup_first_is_allowed_and_an_mcp_result_pairs_with_its_request() {
    let mut monitor = Monitor::shared(reconcile(), Arc::from(Path::new("live")), None);
    let request = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "create_record", "arguments": {"request_id": "r1"}}});
    let reply = json!({"jsonrpc": "2.0", "id": 1,
        "result": {"isError": false, "structuredContent": {"id": "rec_1"}}});
    assert!(
        monitor
            .feed(runtime::mcp_request(&request).expect("a call"))
            .is_empty()
    );
    assert!(
        monitor
            .feed(runtime::mcp_result(&request, &reply).expect("a result"))
            .is_empty()
    );
    // The record exists: a note is allowed, another unrelated event is not.
    let note = runtime::record(json!({"kind": "call", "tool": "attach_note", "call_id": "n"}))
        .expect("a record");
    assert!(monitor.allows(&note).is_allowed());
    let stray = runtime::record(json!({"kind": "result", "tool": "create_record",
        "call_id": "x", "status": "ok"}))
    .expect("a record");
    let answer = monitor.allows(&stray);
    assert_eq!(answer.code().map(|c| c.as_str()), Some("unexpected-event"));
    assert_eq!(
        answer.message(),
        Some("event `created` is not allowed in state `done`")
    );
    assert_eq!(answer.allowed_events(), ["create", "lookup", "attach_note"]);
    let outcome = monitor.finish();
    assert!(outcome.diagnostics.is_empty());
}

#[test]
fn check_corpus_reports_what_the_command_line_prints() {
    let specs = [PathBuf::from("specs")];
    let traces = [PathBuf::from("traces")];
    // Paths relative to the root, as the command line is run: cargo runs the tests
    // from the package root.
    let report = runtime::check_corpus(
        &specs,
        &traces,
        &CheckOptions::default(),
        &InputOptions::default(),
    );
    let mut have: Vec<String> = report.diagnostics.iter().map(json::render).collect();
    have.push(json::render_summary(&report.summary));
    let output = crate::util::run(&["check", "specs", "--traces", "traces", "--output", "json"]);
    let want: Vec<String> = crate::util::stdout(&output)
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(have, want);
    assert_eq!(report.spec_errors, 0);
    assert!(report.summary.violations > 0);
}

#[test]
fn check_bytes_checks_content_as_the_file_would_be() {
    let (specs, errors) = runtime::load_specs(&[root().join("specs")]);
    assert!(errors.is_empty());
    for name in [
        "reconcile_before_retry/fail/forbidden-transition.jsonl",
        "human_refusal_ends_branch/fail/forbidden-transition-openai-responses.json",
    ] {
        let path = root().join("traces").join(name);
        let bytes = std::fs::read(&path).expect("the example exists");
        let options = CheckOptions::default();
        let have = runtime::check_bytes(
            &specs,
            Arc::from(path.as_path()),
            &bytes,
            &options,
            &InputOptions::default(),
        );
        let want = check_path(&specs, &path, &options, &InputOptions::default()).outcome;
        let render = |o: &tracegate::check::Outcome| -> Vec<String> {
            o.diagnostics.iter().map(json::render).collect()
        };
        assert_eq!(render(&have), render(&want), "{name}");
        assert!(!have.diagnostics.is_empty(), "{name} fails");
        assert_eq!((have.records, have.traces), (want.records, want.traces));
    }
}

#[test]
fn spec_text_errors_are_located_in_the_text() {
    let errors = runtime::load_spec_text(Path::new("inline.tg"), "event a = call a\npath a -> b\n")
        .expect_err("`b` is not an event");
    assert!(!errors.is_empty());
    let site = errors[0].spec.as_ref().expect("located in the spec");
    assert_eq!(site.source.path, Path::new("inline.tg"));
    assert_eq!(site.line_col().0, 2);
}
