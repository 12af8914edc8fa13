//! `tracegate graph`: a spec's machine drawn, on stdout or in a file; problems on
//! stderr.

use std::io;

use crate::cli::Exit;
use crate::cli::args::OutputFormat;
use crate::cli::config::GraphConfig;
use crate::cli::output::{Output, Stream};
use crate::diagnostic::Diagnostic;
use crate::export;
use crate::files;

pub fn run(config: GraphConfig, out: &mut Output<'_>) -> io::Result<()> {
    match draw(&config) {
        Ok(text) => match &config.output {
            Some(path) => std::fs::write(path, crate::redact::redact(&text).as_bytes()),
            None => out.report(&text),
        },
        Err(problems) => {
            // A spec path with no spec in it and no error is still a failure.
            out.raise(Exit::Error);
            out.diagnostics(Stream::Stderr, OutputFormat::Human, &problems)
        }
    }
}

/// The library's part: compile the spec, walk the trace, draw.
fn draw(config: &GraphConfig) -> Result<String, Vec<Diagnostic>> {
    let (mut specs, spec_errors) = files::load_specs(std::slice::from_ref(&config.spec));
    super::mask_spec_strings(&mut specs);
    let Some(machine) = specs.first().filter(|_| spec_errors.is_empty()) else {
        return Err(spec_errors);
    };
    let walk = match &config.highlight {
        None => None,
        Some(trace) => Some(export::highlight::trace_walk(machine, trace).map_err(|d| vec![*d])?),
    };
    Ok(export::render(machine, config.format, walk.as_ref()))
}
