//! The shipped library: every spec in `specs/` compiles; every trace in
//! `traces/<spec>/pass/` conforms to every spec; every trace in `traces/<spec>/fail/`
//! yields exactly one violation, from `<spec>`, of the code its file name starts with.

use std::path::{Path, PathBuf};

use tracegate::check::{CheckOptions, check_path};
use tracegate::diagnostic::Code;
use tracegate::files;

use crate::util::{root, run, stdout};

fn shipped_specs() -> Vec<tracegate::machine::Machine> {
    let (paths, errors) = files::collect(&[root().join("specs")], files::is_spec_file);
    assert!(errors.is_empty(), "{errors:#?}");
    let (specs, errors) = files::load_specs(&paths);
    assert!(errors.is_empty(), "shipped specs must compile: {errors:#?}");
    assert_eq!(specs.len(), paths.len());
    specs
}

fn traces_in(kind: &str) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for spec_dir in sorted_dirs(&root().join("traces")) {
        let spec = spec_dir.file_name().unwrap().to_string_lossy().into_owned();
        let dir = spec_dir.join(kind);
        if dir.is_dir() {
            let (paths, errors) = files::collect(&[dir], files::is_trace_file);
            assert!(errors.is_empty(), "{errors:#?}");
            found.extend(paths.into_iter().map(|p| (spec.clone(), p)));
        }
    }
    found
}

fn sorted_dirs(dir: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("traces/ exists")
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

#[test]
fn every_spec_has_pass_and_fail_examples() {
    let specs = shipped_specs();
    assert!(specs.len() >= 6, "the library ships at least six specs");
    for spec in &specs {
        let dir = root().join("traces").join(&spec.name);
        for kind in ["pass", "fail"] {
            let (paths, _) = files::collect(&[dir.join(kind)], files::is_trace_file);
            assert!(
                !paths.is_empty(),
                "no {kind} traces for spec `{}`",
                spec.name
            );
        }
    }
}

#[test]
fn pass_traces_conform_to_every_spec() {
    let specs = shipped_specs();
    let passes = traces_in("pass");
    assert!(!passes.is_empty());
    for (_, path) in passes {
        let outcome =
            check_path(&specs, &path, &CheckOptions::default(), &Default::default()).outcome;
        assert!(
            outcome.diagnostics.is_empty(),
            "{} should conform: {:#?}",
            path.display(),
            outcome.diagnostics
        );
        assert!(outcome.records > 0, "{} has no records", path.display());
    }
}

#[test]
fn fail_traces_yield_exactly_the_violation_their_name_says() {
    let specs = shipped_specs();
    let fails = traces_in("fail");
    assert!(!fails.is_empty());
    let mut codes_seen = std::collections::BTreeSet::new();
    for (spec, path) in fails {
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        let want = Code::ALL
            .iter()
            .copied()
            .filter(|code| stem.starts_with(code.as_str()))
            .max_by_key(|code| code.as_str().len())
            .unwrap_or_else(|| panic!("{} is not named after a code", path.display()));
        let outcome =
            check_path(&specs, &path, &CheckOptions::default(), &Default::default()).outcome;
        let found: Vec<_> = outcome
            .diagnostics
            .iter()
            .map(|d| (d.code, d.spec.as_ref().map(|s| s.spec.clone())))
            .collect();
        assert_eq!(
            found,
            [(want, Some(spec.clone()))],
            "{} should yield one `{want}` from `{spec}`: {:#?}",
            path.display(),
            outcome.diagnostics
        );
        codes_seen.insert(want);
    }
    for code in [
        Code::ForbiddenTransition,
        Code::UnexpectedEvent,
        Code::UnacceptedEnd,
    ] {
        assert!(codes_seen.contains(&code), "no fail example for `{code}`");
    }
}

#[test]
fn default_check_runs_the_shipped_library() {
    // `tracegate check` with no arguments: specs/ against traces/.
    let output = run(&["check", "--output", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stdout(&output));
    let text = stdout(&output);
    let summary: serde_json::Value =
        serde_json::from_str(text.lines().last().unwrap()).expect("summary line");
    assert_eq!(summary["type"], "summary");
    assert_eq!(summary["errors"], 0);
    assert_eq!(summary["violations"], traces_in("fail").len());
    assert_eq!(summary["specs"], shipped_specs().len());
}

#[test]
fn the_shipped_traces_exercise_every_transition_of_every_spec() {
    // Every recovery path a shipped spec allows has an example a reader can open.
    let output = run(&["coverage", "specs", "--traces", "traces", "--min", "100"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}
