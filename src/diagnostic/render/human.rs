//! rustc-style output: the offending trace line, the spec rule, and the path that led
//! there. Colour is the caller's decision (`styled`), made from whether the output is
//! a terminal and from `NO_COLOR`.

use std::fmt::Write as _;

use annotate_snippets::{Level, Message, Renderer, Snippet};

use super::trace_snippet;
use crate::diagnostic::{Diagnostic, Summary};
use crate::redact::redact;

/// Renders one diagnostic as a multi-line block ending in a blank line.
pub fn render(diagnostic: &Diagnostic, styled: bool) -> String {
    let renderer = if styled {
        Renderer::styled()
    } else {
        Renderer::plain()
    };

    // Everything the message borrows is built first, so it outlives the message.
    let trace_text = diagnostic.trace.as_ref().map(|site| {
        let origin = site.file.display().to_string();
        let snippet = (site.loc.line > 0).then(|| trace_snippet(site)).flatten();
        (origin, snippet, site.loc.line)
    });
    let trace_label = diagnostic
        .violation
        .as_ref()
        .map(|detail| match &detail.event {
            Some(event) => format!("`{event}` in state `{}`", detail.state),
            None => format!(
                "last event of the instance, which ended in `{}`",
                detail.state
            ),
        });
    let spec_origin = diagnostic
        .spec
        .as_ref()
        .map(|site| site.source.path.display().to_string());
    let spec_label = diagnostic
        .spec
        .as_ref()
        .map(|site| match diagnostic.violation {
            Some(_) => format!("rule of spec `{}`", site.spec),
            None => String::new(),
        });
    let related: Vec<(String, &str, std::ops::Range<usize>, &str)> = diagnostic
        .related
        .iter()
        .map(|(site, label)| {
            (
                site.source.path.display().to_string(),
                site.source.text.as_str(),
                clamp(site.span.range(), site.source.text.len()),
                label.as_str(),
            )
        })
        .collect();
    let mut footers = Vec::new();
    if let Some(site) = &diagnostic.trace {
        if let Some(trace) = &site.trace {
            footers.push(format!("trace: {}", redact(trace)));
        }
        if !site.loc.pointer.is_empty() {
            footers.push(format!("at: {}", site.loc.pointer));
        }
    }
    if let Some(detail) = &diagnostic.violation {
        if let Some(key) = &detail.key {
            footers.push(format!("key: {}", redact(key)));
        }
        footers.push(format!("path: {}", path_text(detail)));
        if detail.allowed.is_empty() {
            footers.push(format!("allowed in `{}`: no event", detail.state));
        } else {
            footers.push(format!(
                "allowed in `{}`: {}",
                detail.state,
                detail
                    .allowed
                    .iter()
                    .map(|e| format!("`{e}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    let hint = diagnostic.hint.as_deref();

    let level = if diagnostic.is_warning() {
        Level::Warning
    } else {
        Level::Error
    };
    let mut message: Message<'_> = level
        .title(&diagnostic.message)
        .id(diagnostic.code.as_str());
    if let Some((origin, snippet, line)) = &trace_text {
        match snippet {
            Some(text) => {
                message = message.snippet(
                    Snippet::source(text)
                        .line_start(*line as usize)
                        .origin(origin)
                        .annotation(
                            Level::Error
                                .span(0..text.len())
                                .label(trace_label.as_deref().unwrap_or("")),
                        ),
                );
            }
            None => {
                message = message.snippet(Snippet::source("").origin(origin));
            }
        }
    }
    if let (Some(site), Some(origin)) = (&diagnostic.spec, &spec_origin) {
        let level = if diagnostic.violation.is_some() {
            Level::Info
        } else {
            level
        };
        message = message.snippet(
            Snippet::source(&site.source.text)
                .origin(origin)
                .fold(true)
                .annotation(
                    level
                        .span(clamp(site.span.range(), site.source.text.len()))
                        .label(spec_label.as_deref().unwrap_or("")),
                ),
        );
    }
    for (origin, text, range, label) in &related {
        message = message.snippet(
            Snippet::source(text)
                .origin(origin)
                .fold(true)
                .annotation(Level::Info.span(range.clone()).label(label)),
        );
    }
    for footer in &footers {
        message = message.footer(Level::Note.title(footer));
    }
    if let Some(hint) = hint {
        message = message.footer(Level::Help.title(hint));
    }
    format!("{}\n\n", renderer.render(message))
}

/// `idle --create (line 1)--> pending --outcome_unknown (line 2)--> unknown`
fn path_text(detail: &crate::diagnostic::ViolationDetail) -> String {
    let mut out = String::new();
    if detail.path_elided > 0 {
        let _ = write!(out, "({} earlier moves) ", detail.path_elided);
    }
    for step in &detail.path {
        match &step.file {
            // A joined check: each step names its own file.
            Some(file) => {
                let _ = write!(
                    out,
                    "{} --{} ({}:{})--> ",
                    step.state,
                    step.event,
                    file.display(),
                    step.line
                );
            }
            None => {
                let _ = write!(
                    out,
                    "{} --{} (line {})--> ",
                    step.state, step.event, step.line
                );
            }
        }
    }
    out.push_str(&detail.state);
    if let Some(event) = &detail.event {
        let _ = write!(out, " ✗ {event}");
    }
    out
}

/// A span cut to the text, so a stale span can never make rendering panic.
fn clamp(range: std::ops::Range<usize>, len: usize) -> std::ops::Range<usize> {
    let start = range.start.min(len);
    start..range.end.clamp(start, len)
}

/// The closing line of a human report.
pub fn render_summary(summary: &Summary) -> String {
    let specs = plural(summary.specs as u64, "spec");
    let traces = plural(summary.traces, "trace");
    let records = plural(summary.records, "record");
    let verdict = match (summary.violations, summary.errors) {
        (0, 0) => "every trace conforms".to_string(),
        (v, 0) => plural(v, "violation"),
        (0, e) => plural(e, "error"),
        (v, e) => format!("{}, {}", plural(v, "violation"), plural(e, "error")),
    };
    format!("checked {traces} ({records}) against {specs}: {verdict}\n")
}

/// The closing line of a human `lint` report.
pub fn render_lint_summary(summary: &Summary) -> String {
    let specs = plural(summary.specs as u64, "spec");
    let against = if summary.traces > 0 {
        format!(
            " against {} ({})",
            plural(summary.traces, "trace file"),
            plural(summary.records, "record")
        )
    } else {
        String::new()
    };
    let verdict = match (summary.errors, summary.warnings) {
        (0, 0) => "no findings".to_string(),
        (0, w) => plural(w, "warning"),
        (e, 0) => plural(e, "error"),
        (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
    };
    format!("linted {specs}{against}: {verdict}\n")
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}
