//! The human output of every diagnostic code, pinned byte for byte: one insta snapshot
//! per code (`tests/snapshots/integration__human_output__<code>.snap`), holding the exit
//! status, stdout and stderr of the real binary run on that code's example.
//!
//! The example of a code is found from the code's category, never from a hand-kept list:
//! - a violation: the first shipped trace named `traces/<spec>/fail/<code>.jsonl`,
//!   checked against `specs/<spec>.tg`;
//! - a warning: `tests/fixtures/lint/<code>/`, linted (with its traces, if it has any),
//!   or for a warning `check` gives, as an error's example;
//! - an error: `tests/fixtures/codes/<code>/`, checked against its own trace or, if it has
//!   none, `tests/fixtures/ok.jsonl` (as `spec_errors.rs` runs it).
//!
//! Snapshots are never written by a plain `cargo test` in CI (insta refuses to when `CI`
//! is set); after an intended change of output, review it with `cargo insta review`.

use std::path::Path;
use std::process::Output;

use tracegate::diagnostic::{Category, Code};

use crate::util::{root, run};

const SNAPSHOT_PREFIX: &str = "integration__human_output__";

fn has_trace(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .unwrap()
        .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "jsonl"))
}

fn is_dir(relative: &str) -> bool {
    root().join(relative).is_dir()
}

/// The command line that shows `code` on its example, or `None` if it has none.
fn example_args(code: Code) -> Option<Vec<String>> {
    let name = code.as_str();
    let args = match code.category() {
        Category::Violation => {
            let mut specs: Vec<String> = std::fs::read_dir(root().join("traces"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            specs.sort();
            let spec = specs.into_iter().find(|spec| {
                root()
                    .join(format!("traces/{spec}/fail/{name}.jsonl"))
                    .is_file()
            })?;
            vec![
                "check".to_string(),
                format!("specs/{spec}.tg"),
                "--traces".to_string(),
                format!("traces/{spec}/fail/{name}.jsonl"),
            ]
        }
        // A warning `check` gives (not `lint`) has its example where errors have theirs.
        Category::Warning if !is_dir(&format!("tests/fixtures/lint/{name}")) => {
            checked_example(name)?
        }
        Category::Warning => {
            let dir = format!("tests/fixtures/lint/{name}");
            let mut args = vec!["lint".to_string(), dir.clone()];
            if has_trace(&root().join(&dir)) {
                args.extend(["--traces".to_string(), dir]);
            }
            args
        }
        Category::Error => checked_example(name)?,
    };
    Some(args)
}

/// The command line of `tests/fixtures/codes/<name>/`: its `command`, or a check of its
/// specs against its trace (or an ordinary record) with the flags in its `args`.
fn checked_example(name: &str) -> Option<Vec<String>> {
    let dir = format!("tests/fixtures/codes/{name}");
    if !is_dir(&dir) {
        return None;
    }
    if let Some(args) = crate::util::fixture_command(name) {
        return Some(args);
    }
    let traces = if has_trace(&root().join(&dir)) {
        dir.clone()
    } else {
        "tests/fixtures/ok.jsonl".to_string()
    };
    let mut args = vec![
        "check".to_string(),
        dir.clone(),
        "--traces".to_string(),
        traces,
    ];
    // Flags a fixture needs (`--join`, `--verify-chain`), one per line, as
    // `spec_errors.rs` runs it.
    let flags = std::fs::read_to_string(root().join(&dir).join("args")).unwrap_or_default();
    args.extend(
        flags
            .lines()
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(String::from),
    );
    Some(args)
}

/// Exit status, stdout and stderr as one text. The end markers keep a missing or extra
/// final newline visible, which a bare snapshot of the text would not.
fn transcript(args: &[String], output: &Output) -> String {
    let status = output
        .status
        .code()
        .map_or("killed by a signal".to_string(), |c| c.to_string());
    format!(
        "$ tracegate {}\nexit status: {status}\n--- stdout ---\n{}[end of stdout]\n--- stderr ---\n{}[end of stderr]\n",
        args.join(" "),
        String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8"),
        String::from_utf8(output.stderr.clone()).expect("stderr is UTF-8"),
    )
}

#[test]
fn human_output_of_every_code() {
    let mut missing = Vec::new();
    for &code in Code::ALL {
        let Some(args) = example_args(code) else {
            missing.push(code.as_str());
            continue;
        };
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&refs);
        let text = transcript(&args, &output);
        // The example must show its own code, or the snapshot pins the wrong thing.
        let label = match code.category() {
            Category::Warning => "warning",
            Category::Violation | Category::Error => "error",
        };
        assert!(
            text.contains(&format!("{label}[{code}]")),
            "{code}: its example does not report it:\n{text}"
        );
        insta::assert_snapshot!(code.as_str(), text);
    }
    assert!(missing.is_empty(), "codes with no example: {missing:?}");
}

#[test]
fn every_code_has_a_committed_snapshot_and_no_snapshot_is_stale() {
    let dir = root().join("tests/snapshots");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|file| {
            file.strip_prefix(SNAPSHOT_PREFIX)
                .and_then(|rest| rest.strip_suffix(".snap"))
                .map(str::to_string)
        })
        .collect();
    names.sort();
    let mut codes: Vec<String> = Code::ALL.iter().map(|c| c.as_str().to_string()).collect();
    codes.sort();
    assert_eq!(
        names, codes,
        "tests/snapshots/{SNAPSHOT_PREFIX}<code>.snap must exist for exactly the codes"
    );
}
