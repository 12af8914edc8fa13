//! JSON documents stream element by element (one run or one message list at a time),
//! and what they give is exactly what reading them whole gives: every document in the
//! repository (example traces, fixtures, real-data samples) is converted and checked
//! from its file, where it streams, and from standard input, where a document is read
//! whole, and the outputs are compared byte for byte. Set `TRACEGATE_MORE_DOCUMENTS`
//! to a directory to compare its documents too.

use std::path::{Path, PathBuf};

use tracegate::trace::adapters::InputOptions;
use tracegate::trace::input::TraceInput;

use crate::util::{root, tracegate};

/// Every `*.json` file under `dir`, sorted.
fn documents(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            documents(&path, into);
        } else if path.extension().is_some_and(|e| e == "json") {
            into.push(path);
        }
    }
}

/// What `tracegate ARGS… FILE` prints on stdout, exit code included, and the same with
/// the file on standard input, its name made the file's. (Problems are compared in
/// `check --output json`; the human rendering on stderr quotes the file's text, which
/// standard input does not keep.)
fn file_and_stdin(args: &[&str], path: &Path) -> (String, String) {
    let shown = path.display().to_string();
    let run = |traces: &str, stdin: Option<Vec<u8>>| {
        let mut command = tracegate();
        command.args(args).arg(traces);
        if let Some(bytes) = stdin {
            command.write_stdin(bytes);
        }
        let output = command.output().expect("tracegate runs");
        format!(
            "exit {:?}\n{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
        )
    };
    let from_file = run(&shown, None);
    let bytes = std::fs::read(path).expect("the document is readable");
    let from_stdin = run("-", Some(bytes)).replace(
        "\"file\":\"-\"",
        &format!("\"file\":{}", serde_json::to_string(&shown).unwrap()),
    );
    (from_file, from_stdin)
}

#[test]
fn every_document_streams_as_it_reads_whole() {
    let mut paths = Vec::new();
    documents(&root().join("traces"), &mut paths);
    documents(&root().join("tests/fixtures"), &mut paths);
    if let Some(more) = std::env::var_os("TRACEGATE_MORE_DOCUMENTS") {
        documents(Path::new(&more), &mut paths);
    }
    let mut checked = Vec::new();
    for path in &paths {
        let input = TraceInput::open(path, &InputOptions::default(), None).expect("it opens");
        // Native JSONL, which streams either way, is not a document.
        if input.detected().layout == tracegate::trace::adapters::Layout::NativeLines {
            continue;
        }
        checked.push(path);
        let (file, stdin) = file_and_stdin(&["convert"], path);
        assert_eq!(file, stdin, "convert {}", path.display());
        let check = ["check", "specs", "--output", "json", "--traces"];
        let (file, stdin) = file_and_stdin(&check, path);
        assert_eq!(file, stdin, "check {}", path.display());
    }
    assert!(!checked.is_empty(), "no document found");
}

/// A file of JSON documents one per line streams from its file a line at a time; from
/// standard input, this small, it is read whole. Both give the same records, problems
/// and findings in the same order, with `--select` and `--format` too: lines that hold
/// no transcript before the first that does and after it, lines that are not JSON,
/// keys twice, an empty transcript, runs with violations, and files where no line
/// holds a transcript (the file's problem comes before its lines' problems, as the
/// whole reading reports a file's problems first).
#[test]
fn documents_one_per_line_stream_as_they_read_whole() {
    // A run's plain OpenAI messages, as a list; the run itself, named `id`.
    let list = |n: usize| {
        let run = run_messages(n);
        let start = run.find('[').expect("a run holds a list");
        run[start..run.len() - 1].to_string()
    };
    let run = |id: &str, n: usize| format!("{{\"id\": \"{id}\", \"messages\": {}}}", list(n));
    let files = [
        vec![run("r0", 0), run("r1", 1), run("r2", 2)],
        vec![
            "[1, 2]".to_string(),
            "not json".into(),
            "{\"a\": 1}".into(),
            run("r1", 1),
            "{\"a\": 1, \"a\": 2}".into(),
            "[]".into(),
            "{\"b\": {\"c\": true}}".into(),
            run("r5", 5),
            "[1, 2".into(),
        ],
        vec!["not json".into(), "[1, 2]".into(), "{\"a\": 1}".into()],
        vec!["[1]".into(), "{\"messages\": 3}".into(), run("r3", 3)],
        // Plain runs, read from their text, and a line that is one message (its
        // `messages` member is not read as a run's) between them.
        vec![
            run("r0", 0),
            format!(
                "{{\"role\": \"user\", \"content\": \"hi\", \"messages\": {}}}",
                list(4)
            ),
            run("r2", 2),
            format!("{{\"n\": 7, \"messages\": {}, \"id\": \"r3\"}}", list(3)),
            // Not plain: a member that is a container, a list that is no transcript.
            format!(
                "{{\"id\": \"r4\", \"meta\": {{}}, \"messages\": {}}}",
                list(4)
            ),
            "{\"id\": \"r5\", \"messages\": [1, 2]}".into(),
        ],
        // `--select messages` selects nothing in the third line, after a line that is
        // not JSON.
        vec![
            run("r0", 0),
            "not json".into(),
            "{\"a\": 1}".into(),
            run("r3", 3),
        ],
    ];
    let dir = tempfile::tempdir().expect("a temporary directory");
    for (n, lines) in files.iter().enumerate() {
        let path = dir.path().join(format!("lines-{n}.jsonl"));
        std::fs::write(&path, lines.join("\n") + "\n").expect("the file is written");
        let input = TraceInput::open(&path, &InputOptions::default(), None).expect("it opens");
        assert!(input.reading().is_none(), "{} streams", path.display());
        for extra in [&[][..], &["--select", "messages"], &["--format", "openai"]] {
            let convert = [&["convert"], extra].concat();
            let (file, stdin) = file_and_stdin(&convert, &path);
            assert_eq!(file, stdin, "convert {extra:?} {}", path.display());
            let check = [
                &["check", "specs", "--output", "json"][..],
                extra,
                &["--traces"],
            ]
            .concat();
            let (file, stdin) = file_and_stdin(&check, &path);
            assert_eq!(file, stdin, "check {extra:?} {}", path.display());
        }
    }
}

/// The OpenAI messages of run `run`: three creates, the last unanswered in every third
/// run; in every other run a lookup of the first record, and in some of those a
/// create after it.
fn run_messages(run: usize) -> String {
    let call = |id: &str, tool: &str, args: &str| {
        let args = serde_json::to_string(args).expect("a string");
        format!(
            r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "type": "function", "function": {{"name": "{tool}", "arguments": {args}}}}}]}}"#
        )
    };
    let reply = |id: &str, content: &str| {
        let content = serde_json::to_string(content).expect("a string");
        format!(r#"{{"role": "tool", "tool_call_id": "{id}", "content": {content}}}"#)
    };
    let mut messages = vec![r#"{"role": "user", "content": "Create the invoices."}"#.to_string()];
    for n in 0..3 {
        let id = format!("c-{n}");
        let args = format!(r#"{{"request_id": "req-{run}-{n}"}}"#);
        messages.push(call(&id, "create_record", &args));
        if !(run % 3 == 1 && n == 2) {
            messages.push(reply(&id, &format!(r#"{{"id": "rec-{run}-{n}"}}"#)));
        }
    }
    if run % 2 == 0 {
        messages.push(call(
            "l-0",
            "lookup",
            &format!(r#"{{"id": "rec-{run}-0"}}"#),
        ));
        messages.push(reply("l-0", r#"{"found": true}"#));
        if run % 5 == 4 {
            messages.push(call("c-9", "create_record", r#"{"request_id": "again"}"#));
            messages.push(reply("c-9", r#"{"id": "rec-again"}"#));
        }
    }
    format!(
        r#"{{"id": "run-{run}", "messages": [{}]}}"#,
        messages.join(", ")
    )
}

/// Every create is answered (a call left unanswered gets a `missing` result, a
/// violation at the end of its run).
pub(crate) const ANSWERED: &str = r#"spec answered
per args.request_id
event create  = call create_record
event created = result create_record where status == "ok"
event lost    = result create_record where status == "missing"
initial idle
accept idle, done
idle    -> pending on create
pending -> done    on created
forbid pending on lost: "the reply never came"
"#;

/// A created record is looked up before the run ends, and nothing is created after
/// (a run without a lookup ends unaccepted).
pub(crate) const LOOKED_UP: &str = r#"spec looked_up
event create = call create_record
event lookup = call lookup
initial idle
accept idle, checked
idle    -> created on create
created -> created on create
created -> checked on lookup
"#;

/// A lookup names a record an output showed; an unanswered create leaves it in a
/// state that may not end a run. Its events read provenance, so each is classified
/// per instance.
const CITED: &str = r#"spec cited
event lookup = call lookup where args.id in outputs of create_record
event lost   = result create_record where status == "missing"
initial idle
accept idle
idle -> idle on lookup
idle -> gone on lost
"#;

/// A `per` key no record carries: whether a `missing` result lacks it decides the
/// findings of other records, so a run that ends with one waits for the input's end.
const MISSPELT: &str = r#"spec misspelt
per args.request
event lost = result create_record where status == "missing"
initial idle
idle -> idle on lost
"#;

/// Two events a `missing` result matches both: it is reported once in the input,
/// so a run that ends with one waits for the input's end too.
const TWICE: &str = r#"spec twice
event lost  = result create_record where status == "missing"
event other = result create_record where status != "ok"
initial idle
idle -> idle on lost, other
"#;

/// The spec sets a trace's early end is checked with: one whose traces end at once
/// (named `ending`), one with a `per` key no record carries (its traces wait for the
/// end of the input, `missing-key`), and one whose ends are ambiguous until reported
/// (`ambiguous-event`).
pub(crate) fn spec_sets(
    ending: &'static str,
) -> [(&'static str, &'static [&'static str], Option<&'static str>); 3] {
    [
        (ending, &[ANSWERED, LOOKED_UP, CITED], None),
        (
            "a key never carried",
            &[ANSWERED, LOOKED_UP, MISSPELT],
            Some("missing-key"),
        ),
        (
            "an ambiguous end",
            &[ANSWERED, CITED, TWICE],
            Some("ambiguous-event"),
        ),
    ]
}

#[test]
fn runs_that_end_are_checked_to_their_end_at_once_and_report_as_read_whole() {
    use std::cell::RefCell;
    use tracegate::check::{CheckOptions, Observation, check_input, check_path_observed};
    use tracegate::trace::adapters::Selector;

    let dir = tempfile::tempdir().expect("a temporary directory");
    let runs: Vec<String> = (0..60).map(run_messages).collect();
    let array = format!("[\n{}\n]\n", runs.join(",\n"));
    let object = format!("{{\"model\": \"m\", \"runs\": {}}}", array.trim_end());
    let selected = InputOptions {
        format: None,
        select: Some(Selector::parse("runs[*].messages").expect("the selector parses")),
    };
    let shapes = [
        ("a list of runs", &array, InputOptions::default()),
        ("an object of runs", &object, InputOptions::default()),
        ("an object of runs, selected in", &object, selected),
    ];
    let spec_sets = spec_sets("runs end at once");
    for (shape, text, options) in &shapes {
        let path = dir.path().join("runs.json");
        std::fs::write(&path, text).expect("the document is written");
        for (set, texts, waits_for) in &spec_sets {
            let specs: Vec<_> = texts.iter().map(|text| crate::util::spec(text)).collect();
            // Which trace each move was in, and whether it was a `missing` result's.
            let moves = RefCell::new(Vec::new());
            let observer = Box::new(|seen: &Observation<'_>| {
                moves.borrow_mut().push((seen.trace, seen.at_end))
            });
            let streamed = check_path_observed(
                &specs,
                &path,
                &CheckOptions::default(),
                options,
                Some(observer),
            )
            .outcome;
            let input = TraceInput::open(&path, options, None).expect("it opens");
            let reading = input.into_reading().expect("a document is adapted");
            let whole = check_input(
                &specs,
                std::sync::Arc::from(path.as_path()),
                TraceInput::read(reading),
                &CheckOptions::default(),
                None,
            );
            let what = format!("{shape}, {set}");
            let have: Vec<String> = streamed
                .diagnostics
                .iter()
                .map(|d| format!("{d:?}"))
                .collect();
            let want: Vec<String> = whole.diagnostics.iter().map(|d| format!("{d:?}")).collect();
            assert_eq!(have, want, "{what}");
            let counts =
                |o: &tracegate::check::Outcome| (o.records, o.traces, o.synthesized, o.matched);
            assert_eq!(counts(&streamed), counts(&whole), "{what}");
            assert_eq!(streamed.traces, 60, "{what}");
            // A run that goes on after its unanswered create has the adapter answer it
            // `missing` in place; one that ends with it, the checker at its end.
            assert_eq!(streamed.synthesized, 10, "{what}");
            let codes: Vec<&str> = streamed
                .diagnostics
                .iter()
                .map(|d| d.code.as_str())
                .collect();
            for code in ["forbidden-transition", "unexpected-event", "unaccepted-end"] {
                assert!(codes.contains(&code), "{what}: no {code} in {codes:?}");
            }
            // The findings at the ends of runs come after every other, as the end of
            // the input reports them.
            let first_end = codes
                .iter()
                .position(|c| *c == "unaccepted-end")
                .expect("an end");
            assert!(
                !codes[first_end..].contains(&"unexpected-event"),
                "{what}: {codes:?}"
            );
            // Whether run 1's `missing` result was checked when the run ended, before
            // the next run's records, or only when the input ended. (In the ambiguous
            // set, run 4 has the same record in place, reported as it is read: the
            // runs after it need not wait.)
            let moves = moves.into_inner();
            let ended_early = moves
                .windows(2)
                .any(|pair| pair[0] == (1, true) && !pair[1].1 && pair[1].0 > 1);
            match waits_for {
                None => assert!(ended_early, "{what}: run 1 did not end before the input"),
                Some(code) => {
                    assert!(!ended_early, "{what}: run 1 ended before the input");
                    assert!(codes.contains(code), "{what}: no {code} in {codes:?}");
                }
            }
        }
    }
}

/// Runs of OpenAI messages of every shape (plain ones, read from the run's text, and
/// others, read from its value, alone or beside plain ones in a run), written on one
/// line and spread over many, stream as they read whole: the same records, problems,
/// names and locations.
#[test]
fn runs_of_every_kind_of_message_stream_as_they_read_whole() {
    let messages = [
        r#"{"role": "user", "content": "caf\u00e9 \"q\" \\ \ud83d\ude00 é", "name": "ann"}"#,
        r#"{"role": "assistant", "content": null, "refusal": "no"}"#,
        r#"{"role": "assistant", "content": "", "tool_calls": null}"#,
        r#"{"role": "assistant", "tool_calls": [{"id": "c\"1", "function": {"name": "create_record", "arguments": " {\"request_id\": \"r\\u00e9\"} "}}, {"function": {"name": "create_record", "arguments": "5"}}]}"#,
        r#"{"role": "tool", "tool_call_id": "c\"1", "content": "  [1, {\"a\": 2}] "}"#,
        r#"{"role": "tool", "name": "create_record", "content": "{not json"}"#,
        r#"{"role": "tool", "tool_call_id": "nobody", "content": null}"#,
        r#"{"role": "user", "content": [{"type": "text", "text": "parts"}]}"#,
        r#"{"role": "assistant", "tool_calls": [{"id": 7, "function": {"name": "create_record", "arguments": "{}"}}]}"#,
        r#"{"role": "assistant", "tool_calls": [{"id": "c2", "function": {"name": "create_record", "arguments": "{\"request_id\": 1, \"request_id\": 2}"}}]}"#,
        r#"{"role": "assistant", "tool_calls": [{"id": "c3", "function": {"name": "create_record", "arguments": "not json"}}]}"#,
        r#"{"role": "assistant", "content": null, "function_call": {"name": "create_record", "arguments": "{}"}}"#,
        r#"{"role": "function", "name": "create_record", "content": "legacy"}"#,
        r#"{"role": "assistant", "tool_calls": [{"function": "create_record", "args": {"request_id": "d"}, "id": null}]}"#,
        r#"{"role": "tool", "tool_call_id": null, "tool_call": {"function": "create_record"}, "error": "ValueError"}"#,
        r#"{"role": "assistant", "tool_calls": ["x", {"id": "c4"}]}"#,
        r#"{"content": "no role"}"#,
    ];
    let mut runs = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        // Each message alone after a plain run's, and the plain runs around it.
        let plain = run_messages(i);
        let end = plain.rfind(']').expect("a list");
        runs.push(format!("{}, {message}{}", &plain[..end], &plain[end..]));
        runs.push(format!(
            r#"{{"id": {i}, "model": "m", "messages": [{message}]}}"#
        ));
        runs.push(plain);
    }
    runs.push(r#"{"id": "no list", "model": "m"}"#.to_string());
    runs.push(r#"{"id": "empty", "messages": []}"#.to_string());
    runs.push(r#"{"id": "two", "messages": [], "steps": [], "meta": {"a": 1}}"#.to_string());
    let dir = tempfile::tempdir().expect("a temporary directory");
    let compact = format!("[{}]", runs.join(", "));
    let value: serde_json::Value = serde_json::from_str(&compact).expect("valid JSON");
    let spread = serde_json::to_string_pretty(&value).expect("it prints");
    let object = format!("{{\"model\": \"m\", \"runs\": {compact}}}\n");
    for (name, text) in [("compact", compact), ("spread", spread), ("object", object)] {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, text).expect("the document is written");
        let input = TraceInput::open(&path, &InputOptions::default(), None).expect("it opens");
        assert!(input.reading().is_none(), "{name} is streamed");
        let (file, stdin) = file_and_stdin(&["convert"], &path);
        assert_eq!(file, stdin, "convert {name}");
        assert!(file.matches("\"kind\":\"call\"").count() > 60, "{file}");
        let check = ["check", "specs", "--output", "json", "--traces"];
        let (file, stdin) = file_and_stdin(&check, &path);
        assert_eq!(file, stdin, "check {name}");
    }
}
