//! The project file, `tracegate.toml`: which specs apply to which traces, and how
//! those traces are read. `tracegate check` with no spec or trace argument looks for
//! it from the working directory upward and checks exactly the pairs it scopes.
//!
//! ```toml
//! [[scope]]
//! specs = ["specs/seed_protocol.tg"]      # spec files or directories
//! traces = ["traces/seed_protocol/**"]    # globs of trace files
//! trace-by = "case"                       # optional: --trace-by
//! format = "auto"                         # optional: --format
//! select = "runs[*].messages"             # optional: --select
//! ```
//!
//! Paths and globs are relative to the file's directory. A glob matches trace files
//! (`*.jsonl`, `*.json`) found under its literal leading directories.

use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::check::CheckOptions;
use crate::trace::adapters::{self, InputOptions, Selector};

/// The name looked for.
pub const FILE_NAME: &str = "tracegate.toml";

/// A project file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    scope: Vec<ScopeFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
struct ScopeFile {
    specs: Vec<String>,
    traces: Vec<String>,
    trace_by: Option<String>,
    format: Option<String>,
    select: Option<String>,
}

/// A validated project file.
#[derive(Debug)]
pub struct Project {
    /// The file, as found.
    pub file: PathBuf,
    pub scopes: Vec<Scope>,
}

/// Specs, the trace files they apply to, and how those are read.
#[derive(Debug)]
pub struct Scope {
    /// Spec files or directories.
    pub specs: Vec<PathBuf>,
    /// The directories to walk for trace files: each glob's literal leading part.
    pub roots: Vec<PathBuf>,
    globs: GlobSet,
    /// The directory globs are relative to.
    dir: PathBuf,
    pub check: CheckOptions,
    pub input: InputOptions,
}

impl Scope {
    /// Whether the trace file `path` (as walked from [`Scope::roots`]) is in scope.
    pub fn contains(&self, path: &Path) -> bool {
        let relative = path.strip_prefix(&self.dir).unwrap_or(path);
        self.globs.is_match(relative)
    }
}

/// The project file that applies in `dir`: the first `tracegate.toml` in it or a
/// directory above.
pub fn find(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .map(|d| d.join(FILE_NAME))
        .find(|file| file.is_file())
}

/// Reads and validates the project file `file`. Paths in it are made relative to
/// `cwd` when they can be, so that reports name files as the command line would.
/// Every problem is a message.
pub fn load(file: &Path, cwd: &Path) -> Result<Project, Vec<String>> {
    let name = file.display();
    let text = std::fs::read_to_string(file).map_err(|err| vec![format!("{name}: {err}")])?;
    let parsed: File = toml::from_str(&text).map_err(|err| {
        let at = err
            .span()
            .map(|span| {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                format!(":{line}")
            })
            .unwrap_or_default();
        vec![format!("{name}{at}: {}", err.message())]
    })?;
    let dir = relative(file.parent().unwrap_or(Path::new(".")), cwd);
    let mut problems = Vec::new();
    if parsed.scope.is_empty() {
        problems.push(format!(
            "{name}: no `[[scope]]`: it scopes no spec to any trace"
        ));
    }
    let mut scopes = Vec::new();
    for (n, scope) in parsed.scope.into_iter().enumerate() {
        let at = format!("{name}: scope {}", n + 1);
        if scope.specs.is_empty() || scope.traces.is_empty() {
            problems.push(format!(
                "{at}: `specs` and `traces` each need at least one entry"
            ));
        }
        let mut builder = GlobSetBuilder::new();
        let mut roots = Vec::new();
        for pattern in &scope.traces {
            match Glob::new(pattern) {
                Ok(glob) => {
                    builder.add(glob);
                    roots.push(dir.join(literal_prefix(pattern)));
                }
                Err(err) => problems.push(format!("{at}: invalid glob `{pattern}`: {err}")),
            }
        }
        let globs = builder.build().unwrap_or_else(|_| GlobSet::empty());
        let trace_by = scope.trace_by.as_deref().and_then(|text| {
            crate::spec::parser::parse_path(text)
                .map(|path| path.segments)
                .map_err(|err| problems.push(format!("{at}: invalid `trace-by` path: {err}")))
                .ok()
        });
        let format = match scope.format.as_deref() {
            None | Some("auto") => None,
            Some(text) => match adapters::Format::ALL.iter().find(|f| f.name() == text) {
                Some(&format) => Some(format),
                None => {
                    let names: Vec<&str> = adapters::Format::ALL.iter().map(|f| f.name()).collect();
                    problems.push(format!(
                        "{at}: unknown `format` `{text}` (auto, {})",
                        names.join(", ")
                    ));
                    None
                }
            },
        };
        let select = scope.select.as_deref().and_then(|text| {
            Selector::parse(text)
                .map_err(|err| problems.push(format!("{at}: invalid `select` path: {err}")))
                .ok()
        });
        roots.sort();
        roots.dedup();
        scopes.push(Scope {
            specs: scope.specs.iter().map(|s| dir.join(s)).collect(),
            roots,
            globs,
            dir: dir.clone(),
            check: CheckOptions {
                trace_by,
                max_line_bytes: None,
                provenance_limit: None,
                decode_ahead: false,
            },
            input: InputOptions { format, select },
        });
    }
    if problems.is_empty() {
        Ok(Project {
            file: file.to_path_buf(),
            scopes,
        })
    } else {
        Err(problems)
    }
}

/// `dir` relative to `cwd` (`../..` for an ancestor), when both are absolute; else
/// `dir` as it is.
fn relative(dir: &Path, cwd: &Path) -> PathBuf {
    if !(dir.is_absolute() && cwd.is_absolute()) {
        return dir.to_path_buf();
    }
    let (dirs, cwds): (Vec<_>, Vec<_>) = (dir.components().collect(), cwd.components().collect());
    let common = dirs.iter().zip(&cwds).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..cwds.len() {
        out.push("..");
    }
    for part in &dirs[common..] {
        out.push(part);
    }
    out
}

/// The leading components of a glob that hold no glob syntax: the directory to walk.
fn literal_prefix(pattern: &str) -> PathBuf {
    let mut prefix = PathBuf::new();
    let parts: Vec<&str> = pattern.split('/').collect();
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if last || part.contains(['*', '?', '[', '{']) {
            // A literal last part is a file name: walk it as given.
            if last && !part.contains(['*', '?', '[', '{']) {
                prefix.push(part);
            }
            break;
        }
        prefix.push(part);
    }
    if prefix.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        prefix
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project(text: &str) -> Result<Project, Vec<String>> {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let file = dir.path().join(FILE_NAME);
        std::fs::write(&file, text).expect("writes the project file");
        load(&file, dir.path())
    }

    #[test]
    fn a_scope_matches_its_globs_relative_to_the_file() {
        let project = project(
            "[[scope]]\nspecs = [\"specs/a.tg\"]\ntraces = [\"traces/a/**/*.jsonl\", \"t.json\"]\ntrace-by = \"case\"\nformat = \"openai\"\n",
        )
        .expect("a valid project file");
        let scope = &project.scopes[0];
        assert_eq!(scope.specs, [PathBuf::from("specs/a.tg")]);
        assert_eq!(
            scope.roots,
            [PathBuf::from("t.json"), PathBuf::from("traces/a")]
        );
        assert!(scope.contains(Path::new("traces/a/pass/x.jsonl")));
        assert!(!scope.contains(Path::new("traces/b/pass/x.jsonl")));
        assert!(!scope.contains(Path::new("traces/a/x.json")));
        assert!(scope.check.trace_by.is_some());
        assert_eq!(scope.input.format, Some(adapters::Format::OpenAi));
    }

    #[test]
    fn every_problem_is_reported_with_its_scope() {
        let problems =
            project("[[scope]]\nspecs = []\ntraces = [\"[\"]\nformat = \"nope\"\nselect = \"[\"\n")
                .expect_err("an invalid project file");
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(
            problems.iter().all(|p| p.contains("scope 1: ")),
            "{problems:?}"
        );
        let problems = project("[[scope]]\nspecs = [\"a\"]\nspec = 1\n").expect_err("unknown key");
        assert!(problems[0].contains(":3: "), "{problems:?}");
        let problems = project("").expect_err("an empty file scopes nothing");
        assert!(problems[0].ends_with("no `[[scope]]`: it scopes no spec to any trace"));
        let duplicated = "[[scope]]\nspecs = [\"a\"]\nspecs = [\"b\"]\ntraces = [\"t\"]\n";
        let problems = project(duplicated).expect_err("a duplicated key");
        assert!(problems[0].contains(":3: "), "{problems:?}");
        let truncated = "[[scope]]\nspecs = [\"a\"";
        assert!(project(truncated).is_err());
    }

    #[test]
    fn the_directory_is_named_from_the_working_directory() {
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b/c/d")),
            PathBuf::from("../..")
        );
        assert_eq!(
            relative(Path::new("/a/b"), Path::new("/a/b")),
            PathBuf::new()
        );
        assert_eq!(
            relative(Path::new("/a/x"), Path::new("/a/b")),
            PathBuf::from("../x")
        );
    }

    #[test]
    fn literal_prefixes_are_what_to_walk() {
        assert_eq!(literal_prefix("traces/a/**"), PathBuf::from("traces/a"));
        assert_eq!(literal_prefix("**/*.jsonl"), PathBuf::from("."));
        assert_eq!(literal_prefix("t/x.jsonl"), PathBuf::from("t/x.jsonl"));
    }
}
