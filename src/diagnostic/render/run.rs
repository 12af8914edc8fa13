//! A whole `check` run as the renderers that need all of it at once see it (SARIF,
//! JUnit, the HTML report): the specs, every trace file with the specs it was checked
//! against, its time and its findings, and the problems of the run itself.
//!
//! It is plain data that the CLI fills in; renderers read no file and no clock, so the
//! same run renders to the same bytes.

use std::path::{Component, Path, PathBuf};

use crate::diagnostic::{Diagnostic, Summary};

/// One `check` run.
#[derive(Debug)]
pub struct Run<'a> {
    /// The version of tracegate that ran.
    pub version: &'a str,
    /// Every spec loaded, in load order.
    pub specs: Vec<SpecInfo<'a>>,
    /// Problems of the run as a whole: spec errors, unreadable paths, no input.
    pub problems: &'a [Diagnostic],
    /// Every trace file checked, in report order.
    pub files: Vec<FileRun<'a>>,
    /// The run's counts, as the closing summary reports them.
    pub summary: Summary,
    /// How file paths are written in reports.
    pub paths: &'a Paths,
}

/// What a report shows of a spec.
#[derive(Debug)]
pub struct SpecInfo<'a> {
    /// The spec's name.
    pub name: &'a str,
    /// Its file, as loaded.
    pub path: &'a Path,
    /// Its machine drawn as SVG, for the reports that show it (the HTML report).
    pub graph: Option<String>,
}

impl Run<'_> {
    /// Every diagnostic of the run, in report order.
    pub fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.problems
            .iter()
            .chain(self.files.iter().flat_map(|file| file.diagnostics))
    }
}

/// One trace file and what checking it gave.
#[derive(Debug)]
pub struct FileRun<'a> {
    /// The trace file, as found.
    pub path: &'a Path,
    /// Indexes into [`Run::specs`] of the specs it was checked against.
    pub specs: Vec<usize>,
    /// Wall-clock seconds it took to check (against all of `specs` at once).
    pub seconds: f64,
    /// What checking it found, in report order.
    pub diagnostics: &'a [Diagnostic],
}

/// How a report names files: relative to a root (the working directory, or `--sarif-root`)
/// with `/` separators, so that the names are the same on every machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paths {
    /// The directory relative paths are relative to (the working directory).
    pub base: PathBuf,
    /// The directory report names are relative to.
    pub root: PathBuf,
}

impl Paths {
    /// `path` as a report names it: relative to the root when it is under it (lexically,
    /// with `.` and `..` resolved), else absolute; `/`-separated either way.
    pub fn name(&self, path: &Path) -> String {
        let absolute = normalize(&self.base.join(path));
        let root = normalize(&self.base.join(&self.root));
        let shown = absolute.strip_prefix(&root).unwrap_or(&absolute);
        let parts: Vec<String> = shown
            .components()
            .filter_map(|c| match c {
                Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        if shown.is_absolute() {
            format!("/{}", parts.join("/"))
        } else {
            parts.join("/")
        }
    }
}

/// `path` with `.` dropped and `..` taken back, without asking the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A stable 64-bit hash (FNV-1a) of `parts`, as 16 hex digits: the same on every
/// machine and in every release, unlike `std`'s hasher.
pub fn fingerprint<'p>(parts: impl IntoIterator<Item = &'p str>) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        // A separator that cannot occur in text keeps `ab`+`c` apart from `a`+`bc`.
        for byte in part.bytes().chain([0xff]) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_relative_to_the_root_and_slash_separated() {
        let paths = Paths {
            base: PathBuf::from("/repo/sub"),
            root: PathBuf::from("/repo"),
        };
        assert_eq!(
            paths.name(Path::new("traces/a.jsonl")),
            "sub/traces/a.jsonl"
        );
        assert_eq!(paths.name(Path::new("./x/../t.jsonl")), "sub/t.jsonl");
        assert_eq!(paths.name(Path::new("/repo/t.jsonl")), "t.jsonl");
        assert_eq!(
            paths.name(Path::new("/elsewhere/t.jsonl")),
            "/elsewhere/t.jsonl"
        );
    }

    #[test]
    fn fingerprints_separate_their_parts() {
        assert_ne!(fingerprint(["ab", "c"]), fingerprint(["a", "bc"]));
        assert_eq!(fingerprint(["a"]), fingerprint(["a"]));
        assert_eq!(fingerprint(["a"]).len(), 16);
    }
}
