//! Finding and loading input files: walking directories for specs and traces, and
//! compiling every spec found. Reads files; never prints.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, SpecSite};
use crate::machine::{Machine, SpecSource};

/// Whether `path` names a spec file (`*.tg`).
pub fn is_spec_file(path: &Path) -> bool {
    path.extension().is_some_and(|ext| ext == "tg")
}

/// Whether `path` names a trace file (`*.jsonl`, `*.json`).
pub fn is_trace_file(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext == "jsonl" || ext == "json")
}

/// The files named by `paths`: a file is taken as given; a directory is walked
/// (recursively, in sorted order) for files that `wanted` accepts. A path that does not
/// exist is an `unreadable-input` diagnostic.
pub fn collect(paths: &[PathBuf], wanted: fn(&Path) -> bool) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, wanted, &mut files, &mut errors),
            Ok(_) => files.push(path.clone()),
            Err(err) => errors.push(Diagnostic::unreadable(path, &err)),
        }
    }
    (files, errors)
}

fn walk(
    dir: &Path,
    wanted: fn(&Path) -> bool,
    files: &mut Vec<PathBuf>,
    errors: &mut Vec<Diagnostic>,
) {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(err) => return errors.push(Diagnostic::unreadable(dir, &err)),
    };
    let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    children.sort();
    for child in children {
        if child.is_dir() {
            walk(&child, wanted, files, errors);
        } else if wanted(&child) {
            files.push(child);
        }
    }
}

/// Reads and compiles every spec file. Returns the machines that compiled and a
/// diagnostic for every error in every file (and for two files with one spec name).
pub fn load_specs(paths: &[PathBuf]) -> (Vec<Machine>, Vec<Diagnostic>) {
    let mut machines: Vec<Machine> = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let text = match std::fs::read(path) {
            Ok(bytes) => match String::from_utf8(bytes) {
                Ok(text) => text,
                Err(err) => {
                    let mut diagnostic =
                        Diagnostic::unreadable(path, &std::io::Error::other(err.utf8_error()));
                    diagnostic.message = format!(
                        "`{}` is not valid UTF-8 (first bad byte at offset {})",
                        path.display(),
                        err.utf8_error().valid_up_to()
                    );
                    errors.push(diagnostic);
                    continue;
                }
            },
            Err(err) => {
                errors.push(Diagnostic::unreadable(path, &err));
                continue;
            }
        };
        let source = Arc::new(SpecSource {
            path: path.clone(),
            text,
        });
        match crate::spec::analyzer::load(source.clone()) {
            Ok(machine) => {
                if let Some(first) = machines.iter().find(|m| m.name == machine.name) {
                    let mut diagnostic = Diagnostic::new(
                        Code::DuplicateSpec,
                        format!(
                            "spec `{}` is declared in `{}` and in `{}`",
                            machine.name,
                            first.source.path.display(),
                            path.display()
                        ),
                    );
                    diagnostic.spec =
                        Some(SpecSite::new(&machine.name, &source, Default::default()));
                    diagnostic.hint =
                        Some("spec names identify specs in reports; rename one".into());
                    errors.push(diagnostic);
                } else {
                    machines.push(machine);
                }
            }
            Err(spec_errors) => {
                let name = path
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default();
                errors.extend(
                    spec_errors
                        .into_iter()
                        .map(|error| error.into_diagnostic(&name, &source)),
                );
            }
        }
    }
    (machines, errors)
}
