//! The `tracegate` binary: parse the command line, run it, exit with its status.

use std::process::ExitCode;

use tracegate::cli::{self, Exit};

fn main() -> ExitCode {
    let exit = cli::run(cli::parse());
    ExitCode::from(match exit {
        Exit::Success => 0,
        Exit::Violations => 1,
        Exit::Error => 2,
    })
}
