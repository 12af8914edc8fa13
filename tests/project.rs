//! `tracegate.toml`: specs scoped to trace globs, found from the working directory
//! upward, used only when the command line names no spec and no trace.

use std::path::Path;

use crate::util::{root, tracegate};

/// A project with two specs that forbid a second call of their tool, and traces that
/// repeat both tools: checked against both specs, each trace gives two violations;
/// scoped, one.
fn project(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a scratch directory");
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("mkdir");
        std::fs::write(path, text).expect("write");
    };
    for tool in ["alpha", "beta"] {
        write(
            &format!("specs/{tool}.tg"),
            &format!(
                "spec once_{tool}\nevent go = call {tool}\ninitial idle\nidle -> done on go\nforbid done on go: \"twice\"\n"
            ),
        );
    }
    let trace = "{\"kind\":\"call\",\"tool\":\"alpha\"}\n{\"kind\":\"call\",\"tool\":\"beta\"}\n{\"kind\":\"call\",\"tool\":\"alpha\"}\n{\"kind\":\"call\",\"tool\":\"beta\"}\n";
    write("traces/alpha/t.jsonl", trace);
    write("traces/beta/t.jsonl", trace);
    write("traces/other/t.jsonl", trace);
    write("tracegate.toml", toml);
    std::fs::create_dir_all(dir.path().join("deep/below")).expect("mkdir");
    dir
}

const SCOPED: &str = "[[scope]]\nspecs = [\"specs/alpha.tg\"]\ntraces = [\"traces/alpha/**\"]\n\n[[scope]]\nspecs = [\"specs/beta.tg\"]\ntraces = [\"traces/beta/*.jsonl\"]\n";

/// `check --output json` in `dir`: the violations as (spec, file), and stderr.
fn violations(dir: &Path, args: &[&str]) -> (Vec<(String, String)>, String) {
    let out = tracegate()
        .current_dir(dir)
        .args(["check", "--output", "json"])
        .args(args)
        .output()
        .expect("runs");
    let found = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).expect("JSON"))
        .filter(|v| v["type"] == "violation")
        .map(|v| {
            (
                v["spec"].as_str().expect("spec").to_string(),
                v["file"].as_str().expect("file").to_string(),
            )
        })
        .collect();
    (found, String::from_utf8(out.stderr).expect("UTF-8"))
}

#[test]
fn only_the_scoped_pairs_are_checked_and_verbose_says_what_was_not() {
    let dir = project(SCOPED);
    let (found, stderr) = violations(dir.path(), &["-v"]);
    assert_eq!(
        found,
        [
            ("once_alpha".to_string(), "traces/alpha/t.jsonl".to_string()),
            ("once_beta".to_string(), "traces/beta/t.jsonl".to_string()),
        ]
    );
    assert!(
        stderr.contains("traces/alpha/t.jsonl: not checked against `once_beta`"),
        "{stderr}"
    );
}

#[test]
fn the_project_file_is_found_from_below_and_names_files_from_there() {
    let dir = project(SCOPED);
    let (found, _) = violations(&dir.path().join("deep/below"), &[]);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found
            .iter()
            .all(|(_, file)| file.starts_with("../../traces/")),
        "{found:?}"
    );
}

#[test]
fn naming_specs_or_traces_sets_the_project_file_aside() {
    let dir = project(SCOPED);
    let (found, _) = violations(dir.path(), &["specs", "--traces", "traces"]);
    assert_eq!(found.len(), 6, "every spec against every trace: {found:?}");
}

#[test]
fn scope_options_apply_to_their_traces() {
    // `--trace-by case` splits the file into two traces, each calling alpha once.
    let dir = project(
        "[[scope]]\nspecs = [\"specs/alpha.tg\"]\ntraces = [\"split/*.jsonl\"]\ntrace-by = \"case\"\n",
    );
    std::fs::create_dir_all(dir.path().join("split")).expect("mkdir");
    std::fs::write(
        dir.path().join("split/t.jsonl"),
        "{\"kind\":\"call\",\"tool\":\"alpha\",\"case\":1}\n{\"kind\":\"call\",\"tool\":\"alpha\",\"case\":2}\n",
    )
    .expect("write");
    let (found, _) = violations(dir.path(), &[]);
    assert_eq!(found, []);
}

#[test]
fn an_invalid_project_file_is_a_usage_error() {
    let dir =
        project("[[scope]]\nspecs = [\"specs/alpha.tg\"]\ntraces = [\"[\"]\nformat = \"nope\"\n");
    let out = tracegate()
        .current_dir(dir.path())
        .arg("check")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).expect("UTF-8");
    assert!(stderr.contains("error[usage-error]"), "{stderr}");
    assert!(
        stderr.contains("invalid glob `[`") && stderr.contains("unknown `format` `nope`"),
        "{stderr}"
    );
}

#[test]
fn the_shipped_library_pairs_each_spec_with_its_own_traces() {
    let (found, _) = violations(&root(), &[]);
    assert!(!found.is_empty());
    for (spec, file) in &found {
        assert!(
            file.starts_with(&format!("traces/{spec}/")),
            "{spec} × {file}"
        );
    }
}

/// `coverage --output json` in `dir`: each spec's name with its transitions taken, and
/// the summary's record count.
fn coverage(dir: &Path) -> (Vec<(String, u64)>, u64) {
    let out = tracegate()
        .current_dir(dir)
        .args(["coverage", "--output", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let lines: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON"))
        .collect();
    let specs = lines
        .iter()
        .filter(|v| v["type"] == "coverage")
        .map(|v| {
            let taken = v["transitions"]["items"][0]["count"]
                .as_u64()
                .expect("a count");
            (v["spec"].as_str().expect("spec").to_string(), taken)
        })
        .collect();
    let summary = lines.last().expect("a summary");
    (specs, summary["records"].as_u64().expect("records"))
}

#[test]
fn coverage_with_no_argument_measures_what_the_project_file_scopes() {
    let dir = project(SCOPED);
    // Each spec sees the one trace its scope names (two moves of its tool), never
    // `traces/other/`; from a directory below, the same file is found.
    let want = (
        vec![("once_alpha".to_string(), 1), ("once_beta".to_string(), 1)],
        8,
    );
    assert_eq!(coverage(dir.path()), want);
    assert_eq!(coverage(&dir.path().join("deep/below")), want);
    // Naming what to measure sets the file aside: every spec on every trace.
    let out = tracegate()
        .current_dir(dir.path())
        .args([
            "coverage", "specs", "--traces", "traces", "--output", "json",
        ])
        .output()
        .expect("runs");
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(text.contains(r#""records":12"#), "{text}");
}
