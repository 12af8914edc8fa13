//! `tracegate help`: the program's help, a command's, or the spec language reference.

use std::io;

use crate::cli::args::long_help;
use crate::cli::config::HelpConfig;
use crate::cli::output::Output;

/// The spec language reference, embedded so `help spec` cannot drift from the docs.
pub const SPEC_REFERENCE: &str = include_str!("../../../specs/README.md");

pub fn run(config: HelpConfig, out: &mut Output<'_>) -> io::Result<()> {
    let text = match &config {
        HelpConfig::Program => long_help(None),
        HelpConfig::Spec => Some(SPEC_REFERENCE.to_string()),
        HelpConfig::Command(name) => long_help(Some(name)),
    };
    out.data(text.expect("bug: the configuration names only topics that exist"))
}
