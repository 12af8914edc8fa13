//! rustc-style output: the offending trace line, the spec rule, and the path that led
//! there. Colour is the caller's decision (`styled`), made from whether the output is
//! a terminal and from `NO_COLOR`.

use std::fmt::Write as _;

use annotate_snippets::{Level, Message, Renderer, Snippet};

use super::{SourceResolver, trace_snippet};
use crate::diagnostic::{Diagnostic, SpecSite, Summary};
use crate::redact::for_terminal;

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
    format!("{}\n\n", renderer.render(parts.message()))
}

/// One line of text from a trace, a spec or the command line, safe to show: secrets
/// masked, control characters escaped.
fn line(text: &str) -> String {
    for_terminal(text, false).into_owned()
}

/// The lines of a spec's text that `span` covers, made safe to show, with `span` moved
/// to where its text is in the result, and the number of the first line. Only those
/// lines are shown (the snippet is folded), so only they are scanned.
fn spec_text(whole: &str, span: std::ops::Range<usize>) -> (String, std::ops::Range<usize>, usize) {
    let boundary = |mut at: usize| {
        while !whole.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let span = boundary(span.start)..boundary(span.end);
    let begin = whole[..span.start].rfind('\n').map_or(0, |at| at + 1);
    let end = whole[span.end..]
        .find('\n')
        .map_or(whole.len(), |at| span.end + at);
    let first_line = whole.as_bytes()[..begin]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1;
    let text = &whole[begin..end];
    let span = span.start - begin..span.end - begin;
    let safe = for_terminal(text, true).into_owned();
    let at = |mut offset: usize| {
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let mut offset = for_terminal(&text[..offset], true).len().min(safe.len());
        while !safe.is_char_boundary(offset) {
            offset -= 1;
        }
        offset
    };
    let (start, end) = (at(span.start), at(span.end));
    (safe, start..end.max(start), first_line)
}

/// The text a diagnostic's block shows, gathered before the message borrows it.
struct Parts {
    title: String,
    code: &'static str,
    warning: bool,
    /// The trace file, the quoted record (if it could be read) and its line.
    trace: Option<(String, Option<String>, u64)>,
    trace_label: Option<String>,
    /// The spec file, its text, the annotated range and the label, with the level of
    /// the annotation.
    spec: Option<(SpecShown, Level)>,
    /// Each related place.
    related: Vec<SpecShown>,
    footers: Vec<String>,
    hint: Option<String>,
}

/// A spec's text as shown: its file, its safe text, the annotated range and label.
struct SpecShown {
    origin: String,
    text: String,
    range: std::ops::Range<usize>,
    label: String,
    first_line: usize,
}

impl SpecShown {
    fn of(site: &SpecSite, label: &str) -> SpecShown {
        let range = clamp(site.span.range(), site.source.text.len());
        let (text, range, first_line) = spec_text(&site.source.text, range);
        SpecShown {
            origin: line(&site.source.path.display().to_string()),
            text,
            range,
            label: line(label),
            first_line,
        }
    }
}

impl Parts {
    fn of(diagnostic: &Diagnostic, resolver: &dyn SourceResolver) -> Parts {
        let trace = diagnostic.trace.as_ref().map(|site| {
            let mut origin = line(&site.file.display().to_string());
            let snippet = (site.loc.line > 0)
                .then(|| trace_snippet(site, resolver))
                .flatten()
                .map(|text| line(&text));
            // Text that cannot be read again (standard input, a pipe) is still located.
            if snippet.is_none() && site.loc.line > 0 {
                origin = format!("{origin}:{}", site.loc.line);
            }
            (origin, snippet, site.loc.line)
        });
        let trace_label = diagnostic
            .violation
            .as_ref()
            .map(|detail| match &detail.event {
                Some(event) => line(&format!("`{event}` in state `{}`", detail.state)),
                None => line(&format!(
                    "last event of the instance, which ended in `{}`",
                    detail.state
                )),
            });
        let warning = diagnostic.is_warning();
        let level = if warning {
            Level::Warning
        } else {
            Level::Error
        };
        let spec = diagnostic
            .spec
            .as_ref()
            .map(|site| match diagnostic.violation {
                Some(_) => (
                    SpecShown::of(site, &format!("rule of spec `{}`", site.spec)),
                    Level::Info,
                ),
                None => (SpecShown::of(site, ""), level),
            });
        Parts {
            title: line(&diagnostic.message),
            code: diagnostic.code.as_str(),
            warning,
            trace,
            trace_label,
            spec,
            related: diagnostic
                .related
                .iter()
                .map(|(site, label)| SpecShown::of(site, label))
                .collect(),
            footers: footers(diagnostic).iter().map(|f| line(f)).collect(),
            hint: diagnostic.hint.as_deref().map(line),
        }
    }

    /// The message: the title, the trace line, the spec rule, related places, notes
    /// and the hint, in that order.
    fn message(&self) -> Message<'_> {
        let level = if self.warning {
            Level::Warning
        } else {
            Level::Error
        };
        let mut message = level.title(&self.title).id(self.code);
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
        if let Some((shown, level)) = &self.spec {
            message = message.snippet(spec_snippet(shown, *level));
        }
        for shown in &self.related {
            message = message.snippet(spec_snippet(shown, Level::Info));
        }
        for footer in &self.footers {
            message = message.footer(Level::Note.title(footer));
        }
        if let Some(hint) = &self.hint {
            message = message.footer(Level::Help.title(hint));
        }
        message
    }
}

/// A spec's text, folded around one annotation.
fn spec_snippet(shown: &SpecShown, level: Level) -> Snippet<'_> {
    Snippet::source(&shown.text)
        .line_start(shown.first_line)
        .origin(&shown.origin)
        .fold(true)
        .annotation(level.span(shown.range.clone()).label(&shown.label))
}

/// The notes under a diagnostic: which trace, where in the document, the instance's
/// key, its path and what its state allows.
fn footers(diagnostic: &Diagnostic) -> Vec<String> {
    let mut footers = Vec::new();
    if let Some(site) = &diagnostic.trace {
        if let Some(trace) = &site.trace {
            footers.push(format!("trace: {trace}"));
        }
        if !site.loc.pointer.is_empty() {
            footers.push(format!("at: {}", site.loc.pointer));
        }
    }
    if let Some(detail) = &diagnostic.violation {
        if let Some(key) = &detail.key {
            footers.push(format!("key: {key}"));
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
    let mut records = plural(summary.records, "record");
    if summary.synthesized > 0 {
        // Specs saw these too; saying so keeps the count honest without changing it
        // (`records` are the records read: the synthesized ones come on top).
        records.push_str(&format!(" + {} synthesized", summary.synthesized));
    }
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
    fn a_trace_that_cannot_be_read_again_shows_its_name_and_line() {
        let have = render(&malformed_at_line_two(), false, &MemoryResolver::default());
        assert_eq!(
            have,
            "error[malformed-record]: line is not a JSON object\n--> run.jsonl:2\n |\n |\n\n"
        );
    }
}
