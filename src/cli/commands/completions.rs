//! `tracegate completions SHELL` and `tracegate man`: generated from the clap command,
//! so they name exactly the flags that exist.

use std::io;

use crate::cli::args::{self, Shell};
use crate::cli::output::Output;

pub fn run(shell: Shell, out: &mut Output<'_>) -> io::Result<()> {
    use clap_complete::Shell as Target;
    let target = match shell {
        Shell::Bash => Target::Bash,
        Shell::Zsh => Target::Zsh,
        Shell::Fish => Target::Fish,
        Shell::Powershell => Target::PowerShell,
    };
    let mut command = args::command();
    let mut script = Vec::new();
    clap_complete::generate(target, &mut command, "tracegate", &mut script);
    out.data(script)
}

pub fn man(out: &mut Output<'_>) -> io::Result<()> {
    let mut page = Vec::new();
    clap_mangen::Man::new(args::command()).render(&mut page)?;
    out.data(page)
}
