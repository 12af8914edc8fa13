//! `tracegate explore`: for each spec, the shortest path to every violation it can
//! report (or, with `--allowed`, the paths it allows), and with `--emit` a synthetic
//! trace for each, written under the directory given.

use std::io;
use std::path::Path;

use super::load_specs;
use crate::cli::Exit;
use crate::cli::args::OutputFormat;
use crate::cli::config::ExploreConfig;
use crate::cli::output::{Output, Stream};
use crate::diagnostic::{Code, Diagnostic};
use crate::explore::render::{self, Emitted};
use crate::explore::{self, SynthError, SyntheticTrace};
use crate::machine::Machine;

pub fn run(config: ExploreConfig, out: &mut Output<'_>) -> io::Result<()> {
    let (specs, errors) = load_specs(&config.specs);
    if !errors.is_empty() {
        return out.diagnostics(Stream::Stdout, config.output, &errors);
    }
    for machine in &specs {
        let (text, failed) = if config.allowed {
            allowed(&config, machine)
        } else {
            match explore::explore(machine, config.max_depth) {
                Ok(exploration) => counterexamples(&config, machine, &exploration),
                Err(too_large) => {
                    // Refused before any path is built: say so, and go on to the next spec.
                    let mut problem = Diagnostic::new(
                        Code::UsageError,
                        format!("spec `{}`: {too_large}", machine.name),
                    );
                    problem.hint = Some(format!(
                        "the limit bounds memory; the default depth is {}",
                        explore::DEFAULT_MAX_DEPTH
                    ));
                    out.problem(&problem)?;
                    continue;
                }
            }
        };
        if failed {
            out.raise(Exit::Violations);
        }
        out.report(&text)?;
    }
    Ok(())
}

/// The counterexamples of one spec, with their traces emitted: the report, and whether
/// a trace could not be built or written.
fn counterexamples(
    config: &ExploreConfig,
    machine: &Machine,
    exploration: &explore::Exploration,
) -> (String, bool) {
    let mut failed = false;
    let found: Vec<_> = exploration
        .counterexamples
        .iter()
        .map(|c| {
            let mut name = format!("{}-{}", c.code(), machine.state(c.state).name);
            if let Some(event) = c.event {
                name.push('-');
                name.push_str(&machine.events[event].name);
            }
            let emitted = config.emit.as_deref().map(|dir| {
                let trace = explore::counterexample_trace(machine, c, config.format);
                emit(config, dir, machine, "fail", &file_name(&name), trace)
            });
            failed |= matches!(emitted, Some(Emitted::Failed(_)));
            (c.clone(), emitted)
        })
        .collect();
    let text = match config.output {
        OutputFormat::Human => {
            render::counterexamples_human(machine, &found, &exploration.unreached, config.max_depth)
        }
        OutputFormat::Json => render::counterexamples_json(machine, &found, &exploration.unreached),
    };
    (text, failed)
}

/// The allowed paths of one spec, with their traces emitted: the report, and whether a
/// trace could not be built or written.
fn allowed(config: &ExploreConfig, machine: &Machine) -> (String, bool) {
    let allowed = explore::allowed(machine, config.max_depth, config.limit);
    let width = allowed.paths.len().to_string().len().max(3);
    let mut failed = false;
    let paths: Vec<_> = allowed
        .paths
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let emitted = config.emit.as_deref().map(|dir| {
                let events: Vec<&str> = path
                    .events()
                    .iter()
                    .map(|&e| machine.events[e].name.as_str())
                    .collect();
                let name = file_name(&format!("{:0width$}-{}", i + 1, events.join("-")));
                let trace = explore::allowed_trace(machine, path, config.format);
                emit(config, dir, machine, "pass", &name, trace)
            });
            failed |= matches!(emitted, Some(Emitted::Failed(_)));
            (path.clone(), emitted)
        })
        .collect();
    let text = match config.output {
        OutputFormat::Human => render::allowed_human(machine, &paths, allowed.truncated),
        OutputFormat::Json => render::allowed_json(machine, &paths, allowed.truncated),
    };
    (text, failed)
}

/// Writes a synthetic trace to `DIR/<spec>/<kind>/<name>.<ext>`, or says why there is
/// none.
fn emit(
    config: &ExploreConfig,
    dir: &Path,
    machine: &Machine,
    kind: &str,
    name: &str,
    trace: Result<SyntheticTrace, SynthError>,
) -> Emitted {
    let written = trace.map_err(|err| err.to_string()).and_then(|trace| {
        let text = trace.write(config.format).map_err(|err| err.to_string())?;
        let dir = dir.join(&machine.name).join(kind);
        let file = dir.join(format!("{name}.{}", config.format.extension()));
        std::fs::create_dir_all(&dir)
            // Spec literals may hold secrets; an emitted trace is shared like any other.
            .and_then(|()| std::fs::write(&file, crate::redact::redact(&text).as_bytes()))
            .map_err(|err| format!("cannot write `{}`: {err}", file.display()))?;
        Ok(Emitted::Written {
            file: file.display().to_string(),
            at: trace
                .violation_site(config.format)
                .map(|site| site.to_string()),
        })
    });
    written.unwrap_or_else(Emitted::Failed)
}

/// A file name from state and event names (which are identifiers), kept short.
fn file_name(name: &str) -> String {
    const MAX: usize = 100;
    let mut name: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() > MAX {
        let mut cut = MAX;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    name
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn file_names_keep_identifiers_and_stay_short() {
        assert_eq!(
            file_name("forbidden-transition-idle-a.b"),
            "forbidden-transition-idle-a_b"
        );
        let long = "é".repeat(80);
        let cut = file_name(&long);
        assert!(cut.len() <= 100 && cut.chars().all(|c| c == 'é'), "{cut}");
    }
}
