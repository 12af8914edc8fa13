//! Every example that `tracegate explain CODE` prints is run, and must yield exactly that
//! code, so an explanation cannot drift from what the checker does.
//!
//! The example is read from the printed text: the indented lines (four spaces) that open
//! the `## Example` section, up to its first line of prose. In it,
//! - a block (lines between blank lines) that starts with `{` is a trace: one record per
//!   line, or else one JSON document;
//! - a block that starts with `tracegate ` is a command line;
//! - every other block is spec text; a new spec file starts at each `spec NAME` line
//!   (with the comment lines just above it), so one example can show two files.
//!
//! How each is run: a warning's specs are linted (with `--traces` if there is a trace);
//! any other code's specs are checked against the trace, or against one ordinary record
//! if the example has none; a trace with no spec is checked against the shipped `specs/`.
//! A command line runs in a scratch directory that holds a copy of the shipped `specs/`
//! and in which every other directory the command names (`NAME/`) exists and is empty,
//! which is the situation the explanations of the input codes describe; a trace shown
//! beside a command is written there as the `trace.jsonl` the command names (for codes
//! that need a flag, such as `--join` or `--verify-chain`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use tracegate::diagnostic::{Category, Code};

use crate::util::{human_codes, root, run, stdout, tracegate};

/// What an example holds.
#[derive(Debug, Default)]
struct Example {
    /// The spec files, each as its text.
    specs: Vec<String>,
    trace: Option<String>,
    command: Option<Vec<String>>,
}

/// The example that opens the `## Example` section of an explanation.
fn example(code: Code, text: &str) -> Result<Example, String> {
    let (_, section) = text
        .split_once("\n## Example\n")
        .unwrap_or_else(|| panic!("{code}: no `## Example` section"));
    let mut blocks: Vec<Vec<&str>> = vec![Vec::new()];
    for line in section.lines() {
        if line.trim().is_empty() {
            blocks.push(Vec::new());
        } else if let Some(code_line) = line.strip_prefix("    ") {
            blocks.last_mut().expect("one block").push(code_line);
        } else {
            break;
        }
    }
    blocks.retain(|block| !block.is_empty());
    if blocks.is_empty() {
        return Err(format!(
            "{code}: `## Example` does not open with an indented example"
        ));
    }

    let mut example = Example::default();
    let mut spec_lines: Vec<&str> = Vec::new();
    for block in blocks {
        if block[0].starts_with('{') {
            assert!(example.trace.is_none(), "{code}: two trace blocks");
            example.trace = Some(block.join("\n") + "\n");
        } else if let Some(command) = block[0].strip_prefix("tracegate ") {
            assert_eq!(block.len(), 1, "{code}: a command is one line");
            assert!(
                !command.contains(['"', '\'', '\\', '|', '>', '<', '&', ';']),
                "{code}: the command must not need a shell: {command}"
            );
            example.command = Some(command.split_whitespace().map(String::from).collect());
        } else {
            if !spec_lines.is_empty() {
                spec_lines.push("");
            }
            spec_lines.extend(block);
        }
    }
    example.specs = split_spec_files(&spec_lines);
    Ok(example)
}

/// Splits spec text into files, one starting at each `spec NAME` line (with the comment
/// lines just above it).
fn split_spec_files(lines: &[&str]) -> Vec<String> {
    let mut starts = vec![0];
    for (at, line) in lines.iter().enumerate() {
        if line.starts_with("spec ") {
            let mut start = at;
            while start > 0 && lines[start - 1].starts_with('#') {
                start -= 1;
            }
            if start > 0 {
                starts.push(start);
            }
        }
    }
    starts.push(lines.len());
    starts
        .windows(2)
        .map(|w| lines[w[0]..w[1]].join("\n").trim().to_string())
        .filter(|text| !text.is_empty())
        .map(|text| text + "\n")
        .collect()
}

/// The codes of a JSON Lines report.
fn json_codes(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| {
            let value: serde_json::Value = serde_json::from_str(line).expect("JSON Lines");
            value["code"].as_str().map(str::to_string)
        })
        .collect()
}

fn copy_shipped_specs(to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(root().join("specs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|x| x == "tg") {
            std::fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// Runs an example's command line in a scratch directory; returns the exit status, the
/// codes reported and the output.
fn run_command(args: &[String], trace: Option<&str>) -> (Option<i32>, BTreeSet<String>, String) {
    let scratch = tempfile::tempdir().unwrap();
    copy_shipped_specs(&scratch.path().join("specs"));
    // A trace shown beside a command is the `trace.jsonl` the command names.
    if let Some(trace) = trace {
        assert!(
            args.iter().any(|arg| arg == "trace.jsonl"),
            "a command shown with a trace names `trace.jsonl`: {args:?}"
        );
        std::fs::write(scratch.path().join("trace.jsonl"), trace).unwrap();
    }
    for arg in args {
        if arg.ends_with('/') && !arg.starts_with('-') {
            let dir = scratch.path().join(arg);
            if !dir.exists() {
                std::fs::create_dir_all(dir).unwrap();
            }
        }
    }
    let output = tracegate()
        .current_dir(scratch.path())
        .args(args)
        .output()
        .expect("tracegate runs");
    // A usage error is written to stderr, before anything is read; every other code of
    // a command example is part of the report on stdout.
    let text = stdout(&output) + &String::from_utf8(output.stderr).expect("stderr is UTF-8");
    (output.status.code(), human_codes(&text), text)
}

/// Writes an example's specs and trace to files and runs them as the module docs say.
fn run_files(code: Code, example: &Example) -> (Option<i32>, BTreeSet<String>, String) {
    let scratch = tempfile::tempdir().unwrap();
    let mut specs: Vec<PathBuf> = Vec::new();
    for (i, text) in example.specs.iter().enumerate() {
        let path = scratch.path().join(format!("example{}.tg", i + 1));
        std::fs::write(&path, text).unwrap();
        specs.push(path);
    }
    let trace = example.trace.as_ref().map(|text| {
        let per_line = text.lines().all(|line| line.starts_with('{'));
        let path = scratch.path().join(if per_line {
            "trace.jsonl"
        } else {
            "trace.json"
        });
        std::fs::write(&path, text).unwrap();
        path
    });
    if specs.is_empty() {
        specs.push(root().join("specs"));
    }
    let mut args: Vec<String> = Vec::new();
    if code.category() == Category::Warning {
        args.push("lint".to_string());
        args.extend(specs.iter().map(|p| p.display().to_string()));
        if let Some(trace) = &trace {
            args.extend(["--traces".to_string(), trace.display().to_string()]);
        }
    } else {
        args.push("check".to_string());
        args.extend(specs.iter().map(|p| p.display().to_string()));
        let trace = trace.unwrap_or_else(|| root().join("tests/fixtures/ok.jsonl"));
        args.extend(["--traces".to_string(), trace.display().to_string()]);
    }
    args.extend(["--output".to_string(), "json".to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = run(&refs);
    let text = stdout(&output);
    (output.status.code(), json_codes(&text), text)
}

#[test]
fn every_explain_example_yields_exactly_its_code() {
    let mut failures = Vec::new();
    for &code in Code::ALL {
        let printed = stdout(&run(&["explain", code.as_str()]));
        let example = match example(code, &printed) {
            Ok(example) => example,
            Err(problem) => {
                failures.push(problem);
                continue;
            }
        };
        let (status, codes, text) = match &example.command {
            Some(command) => {
                assert!(
                    example.specs.is_empty(),
                    "{code}: a command example runs the shipped specs"
                );
                let usage = code == Code::UsageError;
                let want = if usage { "coverage" } else { "check" };
                assert_eq!(command.first().map(String::as_str), Some(want), "{code}");
                run_command(command, example.trace.as_deref())
            }
            None => run_files(code, &example),
        };
        let want_status = match code.category() {
            Category::Violation => 1,
            Category::Error => 2,
            Category::Warning => 0,
        };
        if codes != BTreeSet::from([code.as_str().to_string()]) || status != Some(want_status) {
            failures.push(format!(
                "{code}: exit {status:?}, codes {codes:?}\n{example:#?}\n{text}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn examples_are_read_as_documented() {
    let text = "## Example\n    # a.tg\n    spec a\n    initial idle\n\n    # b.tg\n    spec a\n\n    {\"kind\":\"call\"}\n\nFix: this is prose.\n\n    not part of the example\n";
    let example = example(Code::DuplicateSpec, &format!("x\n{text}")).unwrap();
    assert_eq!(
        example.specs,
        ["# a.tg\nspec a\ninitial idle\n", "# b.tg\nspec a\n"]
    );
    assert_eq!(example.trace.as_deref(), Some("{\"kind\":\"call\"}\n"));
    assert!(example.command.is_none());

    let command = example_of("    tracegate check specs/ --traces runs/\n\nwhen ...\n");
    assert_eq!(
        command.command,
        Some(vec![
            "check".to_string(),
            "specs/".to_string(),
            "--traces".to_string(),
            "runs/".to_string()
        ])
    );
    assert_eq!(human_codes("error[no-input]: x\n  = note: error[x]\n"), {
        BTreeSet::from(["no-input".to_string()])
    });
}

fn example_of(section: &str) -> Example {
    example(Code::NoInput, &format!("x\n## Example\n{section}")).unwrap()
}
