//! `tracegate explain`: what a diagnostic code means, or the list of codes.

use std::io;

use crate::cli::config::ExplainConfig;
use crate::cli::output::Output;
use crate::diagnostic::{Code, explain};

pub fn run(config: ExplainConfig, out: &mut Output<'_>) -> io::Result<()> {
    let text = match config.code {
        None => Code::ALL
            .iter()
            .map(|code| format!("{:<26} {}\n", code.as_str(), code.summary()))
            .collect(),
        Some(code) => format!(
            "# {code}\n\n{}\n\n{}\n",
            code.summary(),
            explain::explain(code).trim_end()
        ),
    };
    out.data(text)
}
