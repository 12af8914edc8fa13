use std::io::ErrorKind;
use std::process::ExitCode;

use clap::Parser;
use tracegate::cli::{Cli, Exit, run};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let exit = match run(cli, &mut out) {
        Ok(exit) => exit,
        // A closed pipe (`tracegate check | head`) is the reader's choice, not a failure.
        Err(err) if err.kind() == ErrorKind::BrokenPipe => Exit::Success,
        Err(err) => {
            eprintln!("error: {err}");
            Exit::Error
        }
    };
    ExitCode::from(exit.code() as u8)
}
