//! rustc-style output: the offending trace line, the spec rule, and the path that led
//! there. Colour is the caller's decision (`styled`), made from whether the output is
//! a terminal and from `NO_COLOR`.

use std::fmt::Write as _;

use annotate_snippets::{Level, Message, Renderer, Snippet};

use super::{SourceResolver, trace_snippet};
use crate::diagnostic::{Diagnostic, SpecSite, Summary};
use crate::redact::redact;

/// Renders one diagnostic as a multi-line block ending in a blank line, quoting trace
/// text read through `resolver`.
pub fn render(diagnostic: &Diagnostic, styled: bool, resolver: &dyn SourceResolver) -> String {
    let renderer = if styled {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    // Everything the message borrows is built first, so it outlives the message.
    let parts = Parts::of(diagnostic, resolver);
    format!("{}\n\n", renderer.render(parts.message(diagnostic)))
}

/// The text a diagnostic's block shows, gathered before the message borrows it.
struct Parts {
    /// The trace file, the quoted record (if it could be read) and its line.
    trace: Option<(String, Option<String>, u64)>,
    trace_label: Option<String>,
    /// The spec file and the label of its annotation.
    spec: Option<(String, String)>,
    /// The spec file of each related place.
    related: Vec<String>,
    footers: Vec<String>,
}

impl Parts {
    fn of(diagnostic: &Diagnostic, resolver: &dyn SourceResolver) -> Parts {
        let trace = diagnostic.trace.as_ref().map(|site| {
            let origin = site.file.display().to_string();
            let snippet = (site.loc.line > 0)
                .then(|| trace_snippet(site, resolver))
                .flatten();
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
        let spec = diagnostic.spec.as_ref().map(|site| {
            let label = match diagnostic.violation {
                Some(_) => format!("rule of spec `{}`", site.spec),
                None => String::new(),
            };
            (site.source.path.display().to_string(), label)
        });
        Parts {
            trace,
            trace_label,
            spec,
            related: diagnostic
                .related
                .iter()
                .map(|(site, _)| site.source.path.display().to_string())
                .collect(),
            footers: footers(diagnostic),
        }
    }

    /// The message: the title, the trace line, the spec rule, related places, notes
    /// and the hint, in that order.
    fn message<'a>(&'a self, diagnostic: &'a Diagnostic) -> Message<'a> {
        let level = if diagnostic.is_warning() {
            Level::Warning
        } else {
            Level::Error
        };
        let mut message = level
            .title(&diagnostic.message)
            .id(diagnostic.code.as_str());
        if let Some((origin, snippet, line)) = &self.trace {
            let snippet = match snippet {
                Some(text) => Snippet::source(text)
                    .line_start(*line as usize)
                    .origin(origin)
                    .annotation(
                        Level::Error
                            .span(0..text.len())
                            .label(self.trace_label.as_deref().unwrap_or("")),
                    ),
                None => Snippet::source("").origin(origin),
            };
            message = message.snippet(snippet);
        }
        if let (Some(site), Some((origin, label))) = (&diagnostic.spec, &self.spec) {
            let level = if diagnostic.violation.is_some() {
                Level::Info
            } else {
                level
            };
            message = message.snippet(spec_snippet(
                site,
                origin,
                level
                    .span(clamp(site.span.range(), site.source.text.len()))
                    .label(label),
            ));
        }
        for ((site, label), origin) in diagnostic.related.iter().zip(&self.related) {
            let range = clamp(site.span.range(), site.source.text.len());
            message = message.snippet(spec_snippet(
                site,
                origin,
                Level::Info.span(range).label(label),
            ));
        }
        for footer in &self.footers {
            message = message.footer(Level::Note.title(footer));
        }
        if let Some(hint) = &diagnostic.hint {
            message = message.footer(Level::Help.title(hint));
        }
        message
    }
}

/// A spec's text, folded around one annotation.
fn spec_snippet<'a>(
    site: &'a SpecSite,
    origin: &'a str,
    annotation: annotate_snippets::Annotation<'a>,
) -> Snippet<'a> {
    Snippet::source(&site.source.text)
        .origin(origin)
        .fold(true)
        .annotation(annotation)
}

/// The notes under a diagnostic: which trace, where in the document, the instance's
/// key, its path and what its state allows.
fn footers(diagnostic: &Diagnostic) -> Vec<String> {
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
            let allowed: Vec<String> = detail.allowed.iter().map(|e| format!("`{e}`")).collect();
            footers.push(format!(
                "allowed in `{}`: {}",
                detail.state,
                allowed.join(", ")
            ));
        }
    }
    footers
}

/// `idle --create (line 1)--> pending --outcome_unknown (line 2)--> unknown`
fn path_text(detail: &crate::diagnostic::ViolationDetail) -> String {
    let mut out = String::new();
    if detail.path_elided > 0 {
        let _ = write!(out, "({} earlier moves) ", detail.path_elided);
    }
    for step in &detail.path {
        let _ = write!(
            out,
            "{} --{} (line {})--> ",
            step.state, step.event, step.line
        );
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

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use crate::diagnostic::render::MemoryResolver;
    use crate::diagnostic::{Code, TraceSite};
    use crate::trace::Location;

    fn malformed_at_line_two() -> Diagnostic {
        let mut diagnostic = Diagnostic::new(Code::MalformedRecord, "line is not a JSON object");
        diagnostic.trace = Some(TraceSite {
            file: Arc::from(Path::new("run.jsonl")),
            trace: None,
            loc: Location {
                line: 2,
                offset: 9,
                len: 6,
                ..Location::default()
            },
        });
        diagnostic
    }

    #[test]
    fn trace_text_comes_from_the_resolver() {
        let mut files = MemoryResolver::default();
        files.insert("run.jsonl", "{\"a\":1}\n\n[1, 2]\n");
        let have = render(&malformed_at_line_two(), false, &files);
        let want = "error[malformed-record]: line is not a JSON object\n --> run.jsonl:2:1\n  |\n2 | [1, 2]\n  | ^^^^^^\n  |\n\n";
        assert_eq!(have, want);
    }

    #[test]
    fn an_unreadable_trace_shows_only_its_name() {
        let have = render(&malformed_at_line_two(), false, &MemoryResolver::default());
        assert_eq!(
            have,
            "error[malformed-record]: line is not a JSON object\n--> run.jsonl\n |\n |\n\n"
        );
    }
}
