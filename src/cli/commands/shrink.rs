//! `tracegate shrink`: a failing trace cut down to the fewest records that still yield
//! the same violation at the same rule; the trace on stdout (or in a file), the
//! summary beside it.

use std::io;

use super::load_specs;
use crate::cli::args::OutputFormat;
use crate::cli::config::ShrinkConfig;
use crate::cli::output::{Output, Stream};
use crate::diagnostic::Diagnostic;
use crate::explore::{self, Written, render};

pub fn run(config: ShrinkConfig, out: &mut Output<'_>) -> io::Result<()> {
    let (specs, errors) = load_specs(std::slice::from_ref(&config.spec));
    if !errors.is_empty() {
        return out.diagnostics(Stream::Stdout, OutputFormat::Human, &errors);
    }
    let text = match crate::trace::input::read_input(&config.trace) {
        Ok(text) => text,
        Err(err) => {
            let diagnostic = Diagnostic::unreadable(&config.trace, &err);
            return out.diagnostics(Stream::Stdout, OutputFormat::Human, &[diagnostic]);
        }
    };
    let shrunk = match explore::shrink_file(&specs, &text, &config.input.options, &config.shrink) {
        Ok(shrunk) => shrunk,
        Err(err) => return out.failure(&format!("{}: {err}", config.trace.display())),
    };
    let trace = config.trace.display();
    if let Written::Records { left_out } = shrunk.written {
        if left_out > 0 {
            out.note(&format!(
                "note: {trace}: {left_out} element(s) that are not records are left out\n"
            ))?;
        }
        out.note(&format!(
            "note: {trace} has no element that can be removed on its own: it is shrunk as its normalized records, written as native JSONL\n"
        ))?;
    }
    let text = masked(&shrunk.text, config.keep_secrets, &trace.to_string(), out)?;
    let summary = render::shrink_summary(&shrunk, &config.trace, config.output.as_deref());
    match &config.output {
        Some(path) => match std::fs::write(path, &text) {
            Ok(()) => out.report(&summary),
            Err(err) => out.failure(&format!("cannot write `{}`: {err}", path.display())),
        },
        None => {
            out.data(&text)?;
            out.note(&summary)
        }
    }
}

/// The shrunk trace with its secrets masked, unless `keep` (`--keep-secrets`); says on
/// stderr what was done when the trace held any.
fn masked(text: &[u8], keep: bool, trace: &str, out: &mut Output<'_>) -> io::Result<Vec<u8>> {
    let Ok(utf8) = std::str::from_utf8(text) else {
        return Ok(text.to_vec());
    };
    if !crate::redact::contains_secret(utf8) {
        return Ok(text.to_vec());
    }
    if keep {
        out.note(&format!(
            "warning: {trace}: the shrunk trace holds secrets and --keep-secrets writes them unmasked; do not share it\n"
        ))?;
        return Ok(text.to_vec());
    }
    out.note(&format!(
        "note: {trace}: secrets in the shrunk trace are masked (`…[redacted]`); --keep-secrets writes them as they are\n"
    ))?;
    Ok(crate::redact::redact(utf8).into_owned().into_bytes())
}
