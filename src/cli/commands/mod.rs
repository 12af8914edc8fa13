//! One module per command. Each takes its validated configuration, calls the library
//! in one place, and hands what came back to the [`Output`].
//! What several commands share lives here: loading specs and the `no-input` finding.

pub mod chain;
pub mod check;
pub mod completions;
pub mod convert;
pub mod coverage;
pub mod explain;
pub mod explore;
pub mod fmt;
pub mod graph;
pub mod help;
pub mod lint;
pub mod merge;
pub mod seal;
pub mod shrink;
pub mod verify;

use std::path::{Path, PathBuf};

use crate::trace::adapters::Detected;

use super::config::Input;
use super::output::Output;

// Loading specs (with their `about` and `forbid` strings masked) and the `no-input`
// finding are the library's, shared with the runtime and the Python package.
pub(crate) use crate::runtime::{load_specs, mask_spec_strings, no_input};

/// With `--verbose`, says on stderr which format `path` was read as.
pub fn say_format(
    out: &mut Output<'_>,
    input: &Input,
    path: &Path,
    detected: Option<&Detected>,
) -> std::io::Result<()> {
    match (input.verbose, detected) {
        (true, Some(detected)) => out.note(&format_note(path, detected)),
        _ => Ok(()),
    }
}

/// What `--verbose` says about the format `path` was read as, with its line ending.
pub fn format_note(path: &Path, detected: &Detected) -> String {
    format!("tracegate: {}: {detected}\n", path.display())
}

/// How reports name files: relative to `root` (`--sarif-root`), or to the working
/// directory.
pub fn report_paths(
    root: Option<&PathBuf>,
) -> std::io::Result<crate::diagnostic::render::run::Paths> {
    let cwd = std::env::current_dir()?;
    Ok(crate::diagnostic::render::run::Paths {
        root: root.cloned().unwrap_or_else(|| cwd.clone()),
        base: cwd,
    })
}
