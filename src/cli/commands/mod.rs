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
pub mod seal;
pub mod shrink;
pub mod verify;

use std::path::{Path, PathBuf};

use crate::diagnostic::{Code, Diagnostic};
use crate::files;
use crate::machine::Machine;
use crate::trace::adapters::Detected;

use super::config::Input;
use super::output::Output;

/// Compiles the specs under `paths`: the machines, and every error (none found is one).
pub fn load_specs(paths: &[PathBuf]) -> (Vec<Machine>, Vec<Diagnostic>) {
    let (spec_files, mut errors) = files::collect(paths, files::is_spec_file);
    if spec_files.is_empty() && errors.is_empty() {
        errors.push(no_input("spec", paths, "`*.tg`"));
    }
    let (mut specs, spec_errors) = files::load_specs(&spec_files);
    errors.extend(spec_errors);
    mask_spec_strings(&mut specs);
    (specs, errors)
}

/// Masks secrets in the strings a spec shows people (`about`, `forbid` messages), once,
/// before any command prints or draws them: a drawing wraps long labels, which would
/// split a secret where a mask applied to the output could no longer find it.
pub fn mask_spec_strings(specs: &mut [Machine]) {
    for machine in specs {
        if let Some(about) = &mut machine.about {
            *about = crate::redact::redact(about).into_owned();
        }
        for rule in &mut machine.forbids {
            rule.message = crate::redact::redact(&rule.message).into_owned();
        }
    }
}

/// `no-input`: none of `paths` held a file of the kind wanted.
pub fn no_input(what: &str, paths: &[PathBuf], pattern: &str) -> Diagnostic {
    let list = paths
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut diagnostic = Diagnostic::new(Code::NoInput, format!("no {what} files found in {list}"));
    diagnostic.hint = Some(format!(
        "{what} files are {pattern}; name them on the command line or in a directory"
    ));
    diagnostic
}

/// With `--verbose`, says on stderr which format `path` was read as.
pub fn say_format(
    out: &mut Output<'_>,
    input: &Input,
    path: &Path,
    detected: Option<&Detected>,
) -> std::io::Result<()> {
    match (input.verbose, detected) {
        (true, Some(detected)) => out.note(&format!("tracegate: {}: {detected}\n", path.display())),
        _ => Ok(()),
    }
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
