//! A small harness around the real `tracegate` executable and the library.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use tracegate::check::{CheckOptions, Outcome, check_reader};
use tracegate::machine::{Machine, SpecSource};

/// The repository root, where `specs/` and `traces/` are.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `tracegate` binary, run from the repository root with a cleared environment
/// (so the user's NO_COLOR, terminal or locale cannot change what it prints).
pub fn tracegate() -> assert_cmd::Command {
    let mut command = assert_cmd::Command::cargo_bin("tracegate").expect("the binary is built");
    command.env_clear().current_dir(root());
    command
}

/// Runs the binary with `args` and returns its output, whatever the exit status.
pub fn run(args: &[&str]) -> Output {
    tracegate().args(args).output().expect("tracegate runs")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

/// Compiles a spec from text, panicking with its errors if it does not compile.
#[track_caller]
pub fn spec(text: &str) -> Machine {
    let source = Arc::new(SpecSource::new(PathBuf::from("test.tg"), text.to_string()));
    match tracegate::spec::analyzer::load(source) {
        Ok(machine) => machine,
        Err(errors) => panic!("spec does not compile: {errors:#?}\n{text}"),
    }
}

/// Checks native JSONL text against `specs`.
pub fn check_text(specs: &[Machine], trace: &str) -> Outcome {
    check_reader(
        specs,
        Arc::from(Path::new("trace.jsonl")),
        trace.as_bytes(),
        &CheckOptions::default(),
    )
}

/// Each diagnostic of an outcome as `(code, line)`.
pub fn codes_and_lines(outcome: &Outcome) -> Vec<(String, u64)> {
    outcome
        .diagnostics
        .iter()
        .map(|d| {
            (
                d.code.as_str().to_string(),
                d.trace.as_ref().map_or(0, |t| t.loc.line),
            )
        })
        .collect()
}

/// The arguments in `tests/fixtures/codes/<code>/command`, for a code that is about the
/// command line itself and so has no spec or trace to trigger it.
pub fn fixture_command(code: &str) -> Option<Vec<String>> {
    let path = root()
        .join("tests/fixtures/codes")
        .join(code)
        .join("command");
    let text = std::fs::read_to_string(path).ok()?;
    Some(text.split_whitespace().map(String::from).collect())
}

/// The codes a human report names (`error[CODE]` or `warning[CODE]` at a line start).
pub fn human_codes(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line
                .strip_prefix("error[")
                .or_else(|| line.strip_prefix("warning["))?;
            Some(rest.split_once(']')?.0.to_string())
        })
        .collect()
}
