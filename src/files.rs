//! Finding and loading input files: walking directories for specs and traces, and
//! compiling every spec found. Reads files; never prints.
//!
//! `-` (standard input) and pipes are taken as given; devices and sockets are
//! reported, as reading them may never end; a directory reached again through a
//! symbolic link is reported once and not walked again, so a link cycle is finite.

use std::collections::BTreeSet;
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

/// The files named by `paths`: a file (or `-`, standard input, or a pipe) is taken
/// as given; a directory is walked (recursively, in sorted order) for files that
/// `wanted` accepts. A path that does not exist, a device, a socket and a symbolic
/// link back into a directory being walked are `unreadable-input` diagnostics.
pub fn collect(paths: &[PathBuf], wanted: fn(&Path) -> bool) -> (Vec<PathBuf>, Vec<Diagnostic>) {
    let mut walk = Walk {
        wanted,
        files: Vec::new(),
        errors: Vec::new(),
        walked: BTreeSet::new(),
    };
    for path in paths {
        if crate::trace::input::is_stdin(path) {
            walk.files.push(path.clone());
            continue;
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk.dir(path),
            Ok(meta) => walk.file(path, &meta),
            Err(err) => walk.errors.push(Diagnostic::unreadable(path, &err)),
        }
    }
    (walk.files, walk.errors)
}

struct Walk {
    wanted: fn(&Path) -> bool,
    files: Vec<PathBuf>,
    errors: Vec<Diagnostic>,
    /// The directories walked, by canonical path.
    walked: BTreeSet<PathBuf>,
}

impl Walk {
    fn file(&mut self, path: &Path, meta: &std::fs::Metadata) {
        if meta.is_file() {
            return self.files.push(path.to_path_buf());
        }
        // A pipe is read as a stream; anything else (a device, a socket) is refused.
        match crate::trace::input::stream_check(meta) {
            Ok(()) => self.files.push(path.to_path_buf()),
            Err(err) => self.errors.push(Diagnostic::unreadable(path, &err)),
        }
    }

    fn dir(&mut self, dir: &Path) {
        match std::fs::canonicalize(dir) {
            Ok(real) if !self.walked.insert(real.clone()) => {
                let err = std::io::Error::other(format!(
                    "a symbolic link leads back to `{}`, which is already walked; it is not walked again",
                    real.display()
                ));
                return self.errors.push(Diagnostic::unreadable(dir, &err));
            }
            Ok(_) => {}
            Err(err) => return self.errors.push(Diagnostic::unreadable(dir, &err)),
        }
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) => return self.errors.push(Diagnostic::unreadable(dir, &err)),
        };
        let mut children: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        children.sort();
        for child in children {
            match std::fs::metadata(&child) {
                Ok(meta) if meta.is_dir() => self.dir(&child),
                Ok(meta) if (self.wanted)(&child) => self.file(&child, &meta),
                Ok(_) => {}
                // A dangling or looping link named like a wanted file is reported.
                Err(err) if (self.wanted)(&child) => {
                    self.errors.push(Diagnostic::unreadable(&child, &err))
                }
                Err(_) => {}
            }
        }
    }
}

/// Reads and compiles every spec file. Returns the machines that compiled and a
/// diagnostic for every error in every file (and for two files with one spec name).
pub fn load_specs(paths: &[PathBuf]) -> (Vec<Machine>, Vec<Diagnostic>) {
    let mut machines: Vec<Machine> = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        let text = match crate::trace::input::read_input(path) {
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
        let source = Arc::new(SpecSource::new(path.clone(), text));
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
