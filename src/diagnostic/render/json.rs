//! JSON Lines output: one object per diagnostic, then one summary object.
//!
//! This is a contract (README, "JSON output"): fields are only ever added. Every
//! object has a `type`: `"violation"`, `"error"`, `"warning"` (from `lint`, with the
//! same fields as `"error"`) or `"summary"` (which has a `warnings` count only in the
//! output of `lint`).

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Summary};
use crate::redact::redact;

#[derive(Serialize)]
struct Violation<'a> {
    r#type: &'static str,
    code: &'static str,
    spec: &'a str,
    rule: Option<Rule>,
    file: String,
    line: u64,
    pointer: &'a str,
    trace: Option<String>,
    key: Option<String>,
    state: &'a str,
    event: Option<&'a str>,
    message: String,
    allowed: &'a [String],
    path: Vec<Step<'a>>,
    path_elided: u64,
}

#[derive(Serialize)]
struct Rule {
    file: String,
    line: usize,
    column: usize,
}

#[derive(Serialize)]
struct Step<'a> {
    state: &'a str,
    event: &'a str,
    line: u64,
    /// Only in a joined check, where steps come from several files.
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
}

#[derive(Serialize)]
struct Error<'a> {
    r#type: &'static str,
    code: &'static str,
    file: Option<String>,
    line: Option<u64>,
    column: Option<usize>,
    pointer: Option<&'a str>,
    spec: Option<&'a str>,
    message: String,
    hint: Option<String>,
}

#[derive(Serialize)]
struct SummaryLine {
    r#type: &'static str,
    specs: usize,
    traces: u64,
    records: u64,
    /// `check` only: the `missing` results synthesized for unanswered calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    synthesized: Option<u64>,
    violations: u64,
    errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    warnings: Option<u64>,
}

/// One JSON line for `diagnostic` (without the newline).
pub fn render(diagnostic: &Diagnostic) -> String {
    let json = match (&diagnostic.violation, &diagnostic.trace) {
        (Some(detail), Some(site)) => serde_json::to_string(&Violation {
            r#type: "violation",
            code: diagnostic.code.as_str(),
            spec: diagnostic.spec.as_ref().map_or("", |s| s.spec.as_str()),
            rule: diagnostic.spec.as_ref().map(|s| {
                let (line, column) = s.line_col();
                Rule {
                    file: s.source.path.display().to_string(),
                    line,
                    column,
                }
            }),
            file: site.file.display().to_string(),
            line: site.loc.line,
            pointer: &site.loc.pointer,
            trace: site.trace.as_deref().map(|t| redact(t).into_owned()),
            key: detail.key.as_deref().map(|k| redact(k).into_owned()),
            state: &detail.state,
            event: detail.event.as_deref(),
            message: redact(&diagnostic.message).into_owned(),
            allowed: &detail.allowed,
            path: detail
                .path
                .iter()
                .map(|step| Step {
                    state: &step.state,
                    event: &step.event,
                    line: step.line,
                    file: step.file.as_ref().map(|file| file.display().to_string()),
                })
                .collect(),
            path_elided: detail.path_elided,
        }),
        _ => {
            let (file, line, column, pointer) = match (&diagnostic.trace, &diagnostic.spec) {
                (Some(site), _) => (
                    Some(site.file.display().to_string()),
                    (site.loc.line > 0).then_some(site.loc.line),
                    None,
                    Some(&*site.loc.pointer),
                ),
                (None, Some(spec)) => {
                    let (line, column) = spec.line_col();
                    (
                        Some(spec.source.path.display().to_string()),
                        Some(line as u64),
                        Some(column),
                        None,
                    )
                }
                (None, None) => (None, None, None, None),
            };
            serde_json::to_string(&Error {
                r#type: if diagnostic.is_warning() {
                    "warning"
                } else {
                    "error"
                },
                code: diagnostic.code.as_str(),
                file,
                line,
                column,
                pointer,
                spec: diagnostic
                    .spec
                    .as_ref()
                    .map(|s| s.spec.as_str())
                    .filter(|s| !s.is_empty()),
                message: redact(&diagnostic.message).into_owned(),
                hint: diagnostic.hint.as_deref().map(|h| redact(h).into_owned()),
            })
        }
    };
    json.expect("bug: diagnostics always serialize")
}

/// The closing summary line.
pub fn render_summary(summary: &Summary) -> String {
    summary_line(summary, Some(summary.synthesized), None)
}

/// The closing summary line of `lint`: the same object, with a `warnings` count.
pub fn render_lint_summary(summary: &Summary) -> String {
    summary_line(summary, None, Some(summary.warnings))
}

fn summary_line(summary: &Summary, synthesized: Option<u64>, warnings: Option<u64>) -> String {
    serde_json::to_string(&SummaryLine {
        r#type: "summary",
        specs: summary.specs,
        traces: summary.traces,
        records: summary.records,
        synthesized,
        violations: summary.violations,
        errors: summary.errors,
        warnings,
    })
    .expect("bug: the summary always serializes")
}
