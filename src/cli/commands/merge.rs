//! `tracegate merge`: the reports of a run split with `check --shard K/N` (or
//! `coverage --shard K/N`), merged into the one report a single run would have written
//! (see
//! [`crate::diagnostic::render::merge`] and [`crate::explore::merge`]).

use std::io;

use crate::cli::Exit;
use crate::cli::args::MergeFormat;
use crate::cli::config::MergeConfig;
use crate::cli::output::Output;
use crate::diagnostic::Diagnostic;
use crate::diagnostic::render::merge::{self, Part};
use crate::explore;

pub fn run(config: MergeConfig, out: &mut Output<'_>) -> io::Result<()> {
    let mut texts = Vec::with_capacity(config.files.len());
    for file in &config.files {
        match std::fs::read_to_string(file) {
            Ok(text) => texts.push((file.display().to_string(), text)),
            Err(err) => return out.problem(&Diagnostic::unreadable(file, &err)),
        }
    }
    let parts: Vec<Part<'_>> = texts
        .iter()
        .map(|(name, text)| Part { name, text })
        .collect();
    let merged = match config.format {
        MergeFormat::Json => merge::json_lines(&parts),
        MergeFormat::Sarif => merge::sarif(&parts),
        MergeFormat::Junit => merge::junit(&parts),
        MergeFormat::Coverage => explore::merge::coverage(&parts, config.min).map(|merged| {
            // The parts could not judge `--min`: the merge does, as `coverage` would.
            if merged.below {
                out.raise(Exit::Violations);
            }
            merged.text
        }),
    };
    match merged {
        Ok(text) => out.data(text),
        Err(message) => out.failure(&format!("cannot merge: {message}")),
    }
}
