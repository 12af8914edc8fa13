//! Text for explore, shrink and coverage results: human-readable reports and JSON
//! Lines. Pure: every function returns a string; the CLI's `explore`, `shrink` and
//! `coverage` commands write it.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{Value, json};

use super::coverage::{Coverage, Ratio, SpecCoverage};
use super::paths::{AllowedPath, Counterexample, Step, Unreached, Violation, path_text};
use super::shrink::Shrunk;
use crate::machine::{EventId, Machine, StateId};
use crate::spec::ast::Span;
use crate::spec::fmt::pad;

/// What became of a path's synthetic trace, when traces were asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Emitted {
    /// Written to this file; the checker locates the violation `at` this line or JSON
    /// pointer.
    Written {
        /// The file's name.
        file: String,
        /// The line or JSON pointer the checker locates the violation at.
        at: Option<String>,
    },
    /// Could not be built or expressed; why.
    Failed(String),
}

/// `file:line:column` of a span in a spec.
pub fn rule_location(machine: &Machine, span: Span) -> String {
    let (line, column) = machine.source.line_col(span.start);
    format!("{}:{line}:{column}", machine.source.path.display())
}

fn rule_json(machine: &Machine, span: Span) -> Value {
    let (line, column) = machine.source.line_col(span.start);
    json!({
        "file": machine.source.path.display().to_string(),
        "line": line,
        "column": column,
        "text": machine.source.text.get(span.range()).unwrap_or_default().lines().next().unwrap_or_default(),
    })
}

fn event_names(machine: &Machine, events: &[EventId]) -> Vec<String> {
    events
        .iter()
        .map(|&e| machine.events[e].name.clone())
        .collect()
}

/// The states a path goes through, starting with the initial state.
fn state_names(machine: &Machine, steps: &[Step], start: StateId) -> Vec<String> {
    std::iter::once(start)
        .chain(steps.iter().map(|s| s.to))
        .map(|s| machine.state(s).name.clone())
        .collect()
}

fn emitted_human(emitted: Option<&Emitted>) -> String {
    match emitted {
        None => String::new(),
        Some(Emitted::Written { file, at: Some(at) }) => {
            format!("\n      trace {file} (rejected at {at})")
        }
        Some(Emitted::Written { file, at: None }) => format!("\n      trace {file}"),
        Some(Emitted::Failed(why)) => format!("\n      no trace: {why}"),
    }
}

fn emitted_json(emitted: Option<&Emitted>) -> (Value, Value, Value) {
    match emitted {
        None => (Value::Null, Value::Null, Value::Null),
        Some(Emitted::Written { file, at }) => (json!(file), json!(at), Value::Null),
        Some(Emitted::Failed(why)) => (Value::Null, Value::Null, json!(why)),
    }
}

/// A spec's counterexamples, for people.
pub fn counterexamples_human(
    machine: &Machine,
    found: &[(Counterexample, Option<Emitted>)],
    unreached: &[Unreached],
    max_depth: usize,
) -> String {
    let mut out = String::new();
    let count = |v: fn(&Violation) -> bool| found.iter().filter(|(c, _)| v(&c.violation)).count();
    let _ = writeln!(
        out,
        "{} ({}): {} forbidden {}, {} non-accepting {}, {} unexpected {}",
        machine.name,
        machine.source.path.display(),
        count(|v| matches!(v, Violation::Forbidden(_))),
        noun(count(|v| matches!(v, Violation::Forbidden(_))), "move"),
        count(|v| *v == Violation::UnacceptedEnd),
        noun(count(|v| *v == Violation::UnacceptedEnd), "end"),
        count(|v| *v == Violation::Unexpected),
        noun(count(|v| *v == Violation::Unexpected), "event"),
    );
    let mut last_code = None;
    for (counterexample, emitted) in found {
        let code = counterexample.code();
        if last_code != Some(code) {
            let _ = writeln!(out, "  {code}");
            last_code = Some(code);
        }
        // An unaccepted end's path already says where the trace ends.
        let message = match counterexample.violation {
            Violation::UnacceptedEnd => String::new(),
            _ => format!(" {}", counterexample.message(machine)),
        };
        let _ = writeln!(
            out,
            "    {}{message}\n      rule {}{}",
            counterexample.display_path(machine),
            rule_location(machine, counterexample.rule(machine)),
            emitted_human(emitted.as_ref()),
        );
    }
    for item in unreached {
        let what = match item.event {
            Some(event) => format!(
                "`{}` in state `{}`",
                machine.events[event].name,
                machine.state(item.state).name
            ),
            None => format!("ending in state `{}`", machine.state(item.state).name),
        };
        let why = if item.beyond_depth {
            format!("needs more than {max_depth} events (raise --max-depth)")
        } else {
            "no path reaches the state".to_string()
        };
        let _ = writeln!(
            out,
            "  {} {what}: not reached, {why}",
            item.violation.code()
        );
    }
    out.push('\n');
    out
}

/// A spec's counterexamples as JSON Lines.
pub fn counterexamples_json(
    machine: &Machine,
    found: &[(Counterexample, Option<Emitted>)],
    unreached: &[Unreached],
) -> String {
    let mut out = String::new();
    for (counterexample, emitted) in found {
        let (trace, at, error) = emitted_json(emitted.as_ref());
        let line = json!({
            "type": "counterexample",
            "spec": machine.name,
            "code": counterexample.code().as_str(),
            "path": event_names(machine, &counterexample.events()),
            "states": state_names(machine, &counterexample.steps, machine.initial),
            "state": machine.state(counterexample.state).name,
            "event": counterexample.event.map(|e| machine.events[e].name.clone()),
            "message": counterexample.message(machine),
            "rule": rule_json(machine, counterexample.rule(machine)),
            "display": counterexample.display_path(machine),
            "trace": trace,
            "at": at,
            "error": error,
        });
        let _ = writeln!(out, "{line}");
    }
    for item in unreached {
        // The rule a counterexample for it would name (it has no path).
        let rule = Counterexample {
            violation: item.violation,
            steps: Vec::new(),
            state: item.state,
            event: item.event,
        }
        .rule(machine);
        let line = json!({
            "type": "unreached",
            "spec": machine.name,
            "code": item.violation.code().as_str(),
            "state": machine.state(item.state).name,
            "event": item.event.map(|e| machine.events[e].name.clone()),
            "rule": rule_json(machine, rule),
            "reason": if item.beyond_depth { "beyond-max-depth" } else { "unreachable" },
        });
        let _ = writeln!(out, "{line}");
    }
    out
}

/// A spec's allowed paths, for people.
pub fn allowed_human(
    machine: &Machine,
    paths: &[(AllowedPath, Option<Emitted>)],
    truncated: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} ({}): {} allowed {}{}",
        machine.name,
        machine.source.path.display(),
        paths.len(),
        noun(paths.len(), "path"),
        if truncated {
            " (stopped at --limit)"
        } else {
            ""
        }
    );
    for (path, emitted) in paths {
        let _ = writeln!(
            out,
            "    {} ✓ ends in `{}`{}",
            path_text(machine, &path.steps),
            machine.state(path.end()).name,
            emitted_human(emitted.as_ref())
        );
    }
    out.push('\n');
    out
}

/// A spec's allowed paths as JSON Lines.
pub fn allowed_json(
    machine: &Machine,
    paths: &[(AllowedPath, Option<Emitted>)],
    truncated: bool,
) -> String {
    let mut out = String::new();
    for (path, emitted) in paths {
        let (trace, _, error) = emitted_json(emitted.as_ref());
        let line = json!({
            "type": "allowed",
            "spec": machine.name,
            "path": event_names(machine, &path.events()),
            "states": state_names(machine, &path.steps, machine.initial),
            "end": machine.state(path.end()).name,
            "trace": trace,
            "error": error,
        });
        let _ = writeln!(out, "{line}");
    }
    if truncated {
        let _ = writeln!(
            out,
            "{}",
            json!({"type": "truncated", "spec": machine.name, "paths": paths.len()})
        );
    }
    out
}

fn noun(count: usize, word: &str) -> String {
    if count == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

fn ratio_text(r: Ratio) -> String {
    format!("{}/{} ({:.1}%)", r.covered, r.total, r.percent())
}

/// A ratio as coverage reports write it (also what `merge --format coverage` recomputes).
pub(crate) fn ratio_json(r: Ratio) -> Value {
    json!({"covered": r.covered, "total": r.total, "percent": (r.percent() * 10.0).round() / 10.0})
}

/// Coverage as tables, one block per spec.
pub fn coverage_human(specs: &[Machine], coverage: &Coverage, min: Option<f64>) -> String {
    let mut out = String::new();
    for (machine, spec) in specs.iter().zip(&coverage.specs) {
        spec_coverage_human(&mut out, machine, spec);
    }
    let _ = writeln!(
        out,
        "{} {} in {} {}",
        coverage.records,
        noun(coverage.records as usize, "record"),
        coverage.traces,
        noun(coverage.traces as usize, "trace"),
    );
    for error in &coverage.errors {
        let _ = writeln!(
            out,
            "error[{}]: {}{}",
            error.code,
            error.message,
            error
                .trace
                .as_ref()
                .map(|t| format!(" ({}:{})", t.file.display(), t.loc.line))
                .unwrap_or_default()
        );
    }
    if let Some(min) = min {
        let below = coverage.below(min);
        if below.is_empty() {
            let _ = writeln!(
                out,
                "every spec has at least {min}% of its transitions exercised"
            );
        } else {
            for spec in below {
                let _ = writeln!(
                    out,
                    "below --min {min}%: `{}` has {} of its transitions exercised",
                    spec.spec,
                    ratio_text(spec.transitions_ratio())
                );
            }
        }
    }
    out
}

fn spec_coverage_human(out: &mut String, machine: &Machine, spec: &SpecCoverage) {
    let mut table = String::new();
    spec_coverage_table(&mut table, machine, spec);
    // Padded columns leave spaces at the ends of lines.
    for line in table.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push('\n');
}

fn spec_coverage_table(out: &mut String, machine: &Machine, spec: &SpecCoverage) {
    let _ = writeln!(
        out,
        "{}: transitions {}, states {}, forbidden moves {}",
        spec.spec,
        ratio_text(spec.transitions_ratio()),
        ratio_text(spec.states_ratio()),
        ratio_text(spec.forbidden_ratio()),
    );
    let state = |id: StateId| machine.state(id).name.as_str();
    let event = |id: EventId| machine.events[id].name.as_str();
    let width = |names: &mut dyn Iterator<Item = usize>| names.max().unwrap_or(0).max(5);
    let state_w = width(&mut machine.state_ids().map(|s| state(s).len()));
    let event_w = width(&mut (0..machine.events.len()).map(|e| event(e).len()));
    if !spec.transitions.is_empty() {
        let _ = writeln!(
            out,
            "  transitions\n    {:>7}  {}  {}  to",
            "count",
            pad("from", state_w),
            pad("event", event_w)
        );
        for t in &spec.transitions {
            let _ = writeln!(
                out,
                "    {:>7}  {}  {}  {}{}",
                t.count,
                pad(state(t.from), state_w),
                pad(event(t.event), event_w),
                state(t.to),
                if t.count == 0 { "  (never)" } else { "" }
            );
        }
    }
    let _ = writeln!(out, "  states\n    {:>7}  state", "visits");
    for s in &spec.states {
        let _ = writeln!(
            out,
            "    {:>7}  {}{}",
            s.visits,
            state(s.state),
            if s.visits == 0 { "  (never)" } else { "" }
        );
    }
    if !spec.forbidden.is_empty() {
        let _ = writeln!(
            out,
            "  forbidden moves\n    {:>7}  {}  {}",
            "count",
            pad("state", state_w),
            pad("event", event_w)
        );
        for f in &spec.forbidden {
            let note = match (&f.shortest, f.count) {
                (_, n) if n > 0 => String::new(),
                (Some(path), _) => format!("  (never; shortest: {})", path.display_path(machine)),
                (None, _) => "  (never; no path reaches the state)".to_string(),
            };
            let _ = writeln!(
                out,
                "    {:>7}  {}  {}{note}",
                f.count,
                pad(state(f.state), state_w),
                pad(event(f.event), event_w)
            );
        }
    }
}

/// Coverage as JSON Lines: one object per spec, then a summary.
pub fn coverage_json(specs: &[Machine], coverage: &Coverage, min: Option<f64>) -> String {
    let mut out = String::new();
    for (machine, spec) in specs.iter().zip(&coverage.specs) {
        let state = |id: StateId| machine.state(id).name.clone();
        let event = |id: EventId| machine.events[id].name.clone();
        let line = json!({
            "type": "coverage",
            "spec": spec.spec,
            "transitions": {
                "ratio": ratio_json(spec.transitions_ratio()),
                "items": spec.transitions.iter().map(|t| json!({
                    "from": state(t.from),
                    "event": event(t.event),
                    "to": state(t.to),
                    "count": t.count,
                    "rule": rule_json(machine, t.rule),
                })).collect::<Vec<_>>(),
            },
            "states": {
                "ratio": ratio_json(spec.states_ratio()),
                "items": spec.states.iter().map(|s| json!({
                    "state": state(s.state),
                    "visits": s.visits,
                })).collect::<Vec<_>>(),
            },
            "forbidden": {
                "ratio": ratio_json(spec.forbidden_ratio()),
                "items": spec.forbidden.iter().map(|f| json!({
                    "state": state(f.state),
                    "event": event(f.event),
                    "count": f.count,
                    "message": machine.forbids[f.rule].message,
                    "rule": rule_json(machine, machine.forbids[f.rule].span),
                    "shortest": f.shortest.as_ref().map(|c| event_names(machine, &c.events())),
                })).collect::<Vec<_>>(),
            },
        });
        let _ = writeln!(out, "{line}");
    }
    // In `check`'s shape, as the errors met before the corpus is read.
    for error in &coverage.errors {
        let _ = writeln!(out, "{}", crate::diagnostic::render::json::render(error));
    }
    let below: Vec<&str> = min
        .map(|min| {
            coverage
                .below(min)
                .iter()
                .map(|s| s.spec.as_str())
                .collect()
        })
        .unwrap_or_default();
    let line = json!({
        "type": "summary",
        "specs": coverage.specs.len(),
        "records": coverage.records,
        "traces": coverage.traces,
        "errors": coverage.errors.len(),
        "min": min,
        "below": below,
    });
    let _ = writeln!(out, "{line}");
    out
}

/// One line on what shrinking did.
pub fn shrink_summary(shrunk: &Shrunk, input: &Path, output: Option<&Path>) -> String {
    let violation = &shrunk.violation;
    let rule = violation
        .spec
        .as_ref()
        .map(|site| {
            let (line, column) = site.line_col();
            format!(
                " of `{}` ({}:{line}:{column})",
                site.spec,
                site.source.path.display()
            )
        })
        .unwrap_or_default();
    format!(
        "shrank {} from {} {} ({} bytes) to {} {} ({} bytes, {:.1}%) in {} checks{}: {}{rule}: {}\n",
        input.display(),
        shrunk.before,
        noun(shrunk.before, "record"),
        shrunk.bytes_before,
        shrunk.after,
        noun(shrunk.after, "record"),
        shrunk.text.len(),
        shrunk.ratio(),
        shrunk.tests,
        output
            .map(|p| format!(" into {}", p.display()))
            .unwrap_or_default(),
        violation.code,
        violation.message,
    )
}
