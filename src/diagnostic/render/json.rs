//! JSON Lines output: one object per diagnostic, then one summary object.
//!
//! This is a contract (README, "JSON output"): fields are only ever added. Every
//! object has a `type`: `"violation"`, `"error"`, `"warning"` (from `lint`, with the
//! same fields as `"error"`) or `"summary"` (which has a `warnings` count only in the
//! output of `lint`).

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Summary, TraceSite, ViolationDetail};
use crate::json::write_string_body;
use crate::redact::redact;

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
        (Some(detail), Some(site)) => return violation(diagnostic, detail, site),
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

/// A violation's line. Written member by member into one buffer, as a check can report
/// thousands of violations: the text is what serde_json writes for the same object
/// (members in this order, no spaces, strings escaped as serde_json escapes them; a
/// path as it displays, which is its lossy text).
fn violation(diagnostic: &Diagnostic, detail: &ViolationDetail, site: &TraceSite) -> String {
    let mut out = String::with_capacity(256 + 64 * detail.path.len());
    out.push_str(r#"{"type":"violation","code":"#);
    string(&mut out, diagnostic.code.as_str());
    out.push_str(r#","spec":"#);
    string(
        &mut out,
        diagnostic.spec.as_ref().map_or("", |s| s.spec.as_str()),
    );
    out.push_str(r#","rule":"#);
    match &diagnostic.spec {
        Some(spec) => {
            let (line, column) = spec.line_col();
            out.push_str(r#"{"file":"#);
            string(&mut out, &spec.source.path.to_string_lossy());
            out.push_str(r#","line":"#);
            number(&mut out, line as u64);
            out.push_str(r#","column":"#);
            number(&mut out, column as u64);
            out.push('}');
        }
        None => out.push_str("null"),
    }
    out.push_str(r#","file":"#);
    string(&mut out, &site.file.to_string_lossy());
    out.push_str(r#","line":"#);
    number(&mut out, site.loc.line);
    out.push_str(r#","pointer":"#);
    string(&mut out, &site.loc.pointer);
    out.push_str(r#","trace":"#);
    optional(&mut out, site.trace.as_deref().map(redact).as_deref());
    out.push_str(r#","key":"#);
    optional(&mut out, detail.key.as_deref().map(redact).as_deref());
    out.push_str(r#","state":"#);
    string(&mut out, &detail.state);
    out.push_str(r#","event":"#);
    optional(&mut out, detail.event.as_deref());
    out.push_str(r#","message":"#);
    string(&mut out, &redact(&diagnostic.message));
    out.push_str(r#","allowed":["#);
    for (i, event) in detail.allowed.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        string(&mut out, event);
    }
    out.push_str(r#"],"path":["#);
    for (i, step) in detail.path.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"state":"#);
        string(&mut out, &step.state);
        out.push_str(r#","event":"#);
        string(&mut out, &step.event);
        out.push_str(r#","line":"#);
        number(&mut out, step.line);
        // Only in a joined check, where steps come from several files.
        if let Some(file) = &step.file {
            out.push_str(r#","file":"#);
            string(&mut out, &file.to_string_lossy());
        }
        out.push('}');
    }
    out.push_str(r#"],"path_elided":"#);
    number(&mut out, detail.path_elided);
    out.push('}');
    out
}

/// `text` as a JSON string.
fn string(out: &mut String, text: &str) {
    out.push('"');
    write_string_body(text, |piece| out.push_str(piece));
    out.push('"');
}

/// `text` as a JSON string, or `null`.
fn optional(out: &mut String, text: Option<&str>) {
    match text {
        Some(text) => string(out, text),
        None => out.push_str("null"),
    }
}

fn number(out: &mut String, n: u64) {
    out.push_str(itoa::Buffer::new().format(n));
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

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::diagnostic::{Code, SpecSite, Step};
    use crate::source::{Span, SpecSource};
    use crate::trace::Location;

    /// A violation's line as serde_json writes it: what [`violation`] must match.
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
        path: Vec<ViolationStep<'a>>,
        path_elided: u64,
    }

    #[derive(Serialize)]
    struct Rule {
        file: String,
        line: usize,
        column: usize,
    }

    #[derive(Serialize)]
    struct ViolationStep<'a> {
        state: &'a str,
        event: &'a str,
        line: u64,
        #[serde(skip_serializing_if = "Option::is_none")]
        file: Option<String>,
    }

    fn by_serde(diagnostic: &Diagnostic) -> String {
        let (Some(detail), Some(site)) = (&diagnostic.violation, &diagnostic.trace) else {
            panic!("a violation");
        };
        serde_json::to_string(&Violation {
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
                .map(|step| ViolationStep {
                    state: &step.state,
                    event: &step.event,
                    line: step.line,
                    file: step.file.as_ref().map(|file| file.display().to_string()),
                })
                .collect(),
            path_elided: detail.path_elided,
        })
        .expect("a violation serializes")
    }

    #[test]
    fn violations_are_written_as_serde_json_writes_them() {
        let source = Arc::new(SpecSource::new(
            "specs/a \"b\"\\é.tg",
            "spec t\n\n  é forbid x\n",
        ));
        let token = "sk-abcdefghijklmnopqrstuvwxyz";
        let strange = "tab\there \"quoted\" back\\slash \u{1} é ☃ \u{2028}";
        let mut cases = Vec::new();
        for shape in 0..4 {
            let mut diagnostic = Diagnostic::new(
                if shape % 2 == 0 {
                    Code::ForbiddenTransition
                } else {
                    Code::UnacceptedEnd
                },
                if shape == 1 {
                    format!("message with {strange} and {token}")
                } else {
                    "blind re-create".to_string()
                },
            );
            diagnostic.spec =
                (shape != 2).then(|| SpecSite::new("t \"s\"", &source, Span::new(12, 20)));
            diagnostic.trace = Some(TraceSite {
                file: Arc::from(Path::new(if shape == 3 { strange } else { "t.jsonl" })),
                trace: (shape % 2 == 1).then(|| format!("run {strange} {token}")),
                loc: Location {
                    line: [1, 0, u64::MAX, 4096][shape],
                    pointer: if shape == 2 {
                        "/messages/3".into()
                    } else {
                        Default::default()
                    },
                    ..Location::default()
                },
            });
            diagnostic.violation = Some(Box::new(ViolationDetail {
                key: [
                    Some("req-1".to_string()),
                    None,
                    Some(format!("{strange} {token}")),
                    Some(String::new()),
                ][shape]
                    .clone(),
                state: format!("state{shape}"),
                event: (shape != 1).then(|| "create".to_string()),
                allowed: (0..shape).map(|i| format!("e\"{i}")).collect(),
                path: (0..shape * 2)
                    .map(|i| Step {
                        state: format!("s{i}"),
                        event: "ev\\ent".to_string(),
                        line: (i as u64) << 40,
                        file: (shape == 3 && i % 2 == 0)
                            .then(|| Arc::from(Path::new(&format!("part {i} \"é\".jsonl")))),
                    })
                    .collect(),
                path_elided: [0, 1, 64, u64::MAX][shape],
            }));
            cases.push(diagnostic);
        }
        // A file name that is not UTF-8 is written as it displays.
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let mut diagnostic = cases[3].clone();
            let bad = Path::new(std::ffi::OsStr::from_bytes(b"bad \xff\xfe name.jsonl"));
            if let Some(site) = diagnostic.trace.as_mut() {
                site.file = Arc::from(bad);
            }
            if let Some(detail) = diagnostic.violation.as_mut() {
                detail.path[0].file = Some(Arc::from(bad));
            }
            cases.push(diagnostic);
        }
        for diagnostic in &cases {
            assert_eq!(render(diagnostic), by_serde(diagnostic));
        }
        // The secret is masked wherever a violation echoes trace text.
        assert!(!render(&cases[1]).contains(token));
        assert!(!render(&cases[2]).contains(token));
    }
}
