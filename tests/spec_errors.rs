//! One example per diagnostic code: `tests/fixtures/codes/<code>/` holds the spec(s)
//! and, where the code needs one, the trace that trigger exactly that code. The
//! violation codes are triggered by the shipped `traces/*/fail/` examples instead.

use std::collections::BTreeSet;

use tracegate::diagnostic::{Category, Code};

use crate::util::{fixture_command, human_codes, root, run, stdout};

/// The codes found by checking a fixture directory, as JSON Lines. A fixture whose code
/// is about the command line itself holds a `command` file (its arguments, one line)
/// instead of specs; such a code is reported on stderr, before anything is read.
fn codes_for(dir: &str) -> (Option<i32>, BTreeSet<String>, String) {
    let path = root().join("tests/fixtures/codes").join(dir);
    if let Some(args) = fixture_command(dir) {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&refs);
        assert!(
            output.stdout.is_empty(),
            "{dir}: a usage error writes nothing to stdout"
        );
        let text = String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8");
        return (output.status.code(), human_codes(&text), text);
    }
    let has_trace = std::fs::read_dir(&path)
        .unwrap()
        .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "jsonl"));
    let spec_arg = format!("tests/fixtures/codes/{dir}");
    let trace_arg = if has_trace {
        spec_arg.clone()
    } else {
        "tests/fixtures/ok.jsonl".to_string()
    };
    // A fixture may need flags (`--join`, `--verify-chain`): one per line in `args`.
    let flags = std::fs::read_to_string(path.join("args")).unwrap_or_default();
    let mut args = vec![
        "check", &spec_arg, "--traces", &trace_arg, "--output", "json",
    ];
    args.extend(flags.lines().map(str::trim).filter(|flag| !flag.is_empty()));
    let output = run(&args);
    let text = stdout(&output);
    let codes = text
        .lines()
        .filter_map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).unwrap();
            value["code"].as_str().map(str::to_string)
        })
        .collect();
    (output.status.code(), codes, text)
}

#[test]
fn each_fixture_triggers_exactly_its_code() {
    let dir = root().join("tests/fixtures/codes");
    let mut fixtures: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    fixtures.sort();
    assert!(!fixtures.is_empty());
    for name in &fixtures {
        let code = Code::from_name(name).unwrap_or_else(|| panic!("`{name}` is not a code"));
        let (status, codes, text) = codes_for(name);
        let want: BTreeSet<String> = match code {
            // The malformed-lines fixture also holds a real violation, still found.
            Code::MalformedRecord => ["malformed-record", "forbidden-transition"]
                .map(String::from)
                .into(),
            _ => [name.clone()].into(),
        };
        assert_eq!(codes, want, "{name}:\n{text}");
        // A warning `check` gives (rather than `lint`) leaves the exit status alone.
        let want_status = match code.category() {
            Category::Warning => 0,
            Category::Violation => 1,
            Category::Error => 2,
        };
        assert_eq!(status, Some(want_status), "{name}:\n{text}");
    }
}

#[test]
fn every_code_has_an_example() {
    let fixtures: BTreeSet<String> = std::fs::read_dir(root().join("tests/fixtures/codes"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let lint_fixtures: BTreeSet<String> = std::fs::read_dir(root().join("tests/fixtures/lint"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for &code in Code::ALL {
        let covered = match code {
            // Triggered by the shipped fail traces (tests/corpus.rs checks each).
            _ if code.category() == Category::Violation => true,
            // Lint warnings: tests/fixtures/lint/<code>/ (tests/lint.rs runs each); a
            // warning `check` gives: tests/fixtures/codes/<code>/, as an error's.
            _ if code.category() == Category::Warning => {
                lint_fixtures.contains(code.as_str()) || fixtures.contains(code.as_str())
            }
            // Triggered by a path that does not exist / an empty directory (below and
            // in tests/cli.rs).
            Code::UnreadableInput | Code::NoInput => true,
            // Triggered by a command line, not a spec or trace (tests/cli.rs).
            _ => fixtures.contains(code.as_str()),
        };
        assert!(covered, "no example triggers `{code}`");
    }
}

#[test]
fn an_empty_directory_is_no_input() {
    let empty = tempfile::tempdir().unwrap();
    let output = run(&["check", "specs", "--traces", empty.path().to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stdout(&output).contains("error[no-input]"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn spec_errors_have_spans_and_hints() {
    let output = run(&[
        "check",
        "tests/fixtures/codes/unknown-event",
        "--traces",
        "tests/fixtures/ok.jsonl",
    ]);
    let text = stdout(&output);
    assert!(
        text.contains("error[unknown-event]: unknown event `lokup`"),
        "{text}"
    );
    assert!(text.contains("did you mean `lookup`?"), "{text}");
    assert!(
        text.contains("tests/fixtures/codes/unknown-event/spec.tg:4:"),
        "{text}"
    );
}
