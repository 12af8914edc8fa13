//! `tracegate fmt`: specs in the canonical layout, written in place, or (`--check`)
//! a diff on stdout for each file that is not. Problems go to stderr.

use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

use super::no_input;
use crate::cli::Exit;
use crate::cli::args::OutputFormat;
use crate::cli::config::{FmtConfig, FmtTarget};
use crate::cli::output::{Output, Stream};
use crate::diagnostic::Diagnostic;
use crate::files;
use crate::machine::SpecSource;
use crate::spec::fmt::{format_source, unified_diff};

/// One spec text, formatted.
enum Formatted {
    /// The canonical layout of the text (which may be the text itself).
    Text(String),
    /// The text does not parse: its errors.
    Invalid(Vec<Diagnostic>),
}

pub fn run(config: FmtConfig, out: &mut Output<'_>) -> io::Result<()> {
    match &config.target {
        FmtTarget::Stdin => stdin(&config, out),
        FmtTarget::Paths(paths) => files(&config, paths, out),
    }
}

fn stdin(config: &FmtConfig, out: &mut Output<'_>) -> io::Result<()> {
    let mut text = String::new();
    io::stdin().read_to_string(&mut text)?;
    match format(PathBuf::from("<stdin>"), "", text.clone()) {
        Formatted::Text(formatted) if config.check => diff(out, "<stdin>", &text, &formatted),
        Formatted::Text(formatted) => out.data(formatted),
        Formatted::Invalid(errors) => out.diagnostics(Stream::Stderr, OutputFormat::Human, &errors),
    }
}

fn files(config: &FmtConfig, paths: &[PathBuf], out: &mut Output<'_>) -> io::Result<()> {
    let (spec_files, missing) = files::collect(paths, files::is_spec_file);
    out.diagnostics(Stream::Stderr, OutputFormat::Human, &missing)?;
    if spec_files.is_empty() && missing.is_empty() {
        out.problem(&no_input("spec", paths, "`*.tg`"))?;
    }
    for path in &spec_files {
        let text = match crate::trace::input::read_input(path)
            .and_then(|bytes| String::from_utf8(bytes).map_err(std::io::Error::other))
        {
            Ok(text) => text,
            Err(err) => {
                let mut diagnostic = Diagnostic::unreadable_unlocated(path, &err);
                diagnostic.hint = Some("spec files are UTF-8 text".into());
                out.problem(&diagnostic)?;
                continue;
            }
        };
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        match format(path.clone(), &name, text.clone()) {
            Formatted::Text(formatted) if formatted == text => {}
            Formatted::Text(formatted) if config.check => {
                diff(out, &path.display().to_string(), &text, &formatted)?;
            }
            // A pipe cannot be rewritten in place: its formatted text goes to stdout.
            Formatted::Text(formatted) if !path.is_file() => out.data(formatted)?,
            Formatted::Text(formatted) => {
                std::fs::write(path, formatted)?;
                out.note(&format!("formatted {}\n", path.display()))?;
            }
            Formatted::Invalid(errors) => {
                out.diagnostics(Stream::Stderr, OutputFormat::Human, &errors)?;
            }
        }
    }
    Ok(())
}

/// The library's part: the canonical layout of `text`, or its errors located in the
/// spec `name` read from `path`.
fn format(path: PathBuf, name: &str, text: String) -> Formatted {
    match format_source(&text) {
        Ok(formatted) => Formatted::Text(formatted),
        Err(errors) => {
            let source = Arc::new(SpecSource::new(path, text));
            Formatted::Invalid(
                errors
                    .into_iter()
                    .map(|error| error.into_diagnostic(name, &source))
                    .collect(),
            )
        }
    }
}

/// `--check` found `text` unformatted: its diff on stdout, and the run fails.
fn diff(out: &mut Output<'_>, name: &str, text: &str, formatted: &str) -> io::Result<()> {
    if text == formatted {
        return Ok(());
    }
    out.raise(Exit::Violations);
    out.data(unified_diff(name, text, formatted))
}
