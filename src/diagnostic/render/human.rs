//! rustc-style output: the offending trace line, the spec rule, and the path that led
//! there. Colour is the caller's decision (`styled`), made from whether the output is
//! a terminal and from `NO_COLOR`.
//!
//! A path of more than [`PATH_SHOWN_WHOLE`] moves is abbreviated in the middle: its first
//! and last [`PATH_ENDS`] moves around `… N more moves …`. JSON, SARIF and the HTML
//! report keep every move.
//!
//! Blocks are laid out by `annotate-snippets`, except the common one written plainly
//! (no colour; one trace line and spec rules of one short line each, in ASCII), which
//! `plain_block` writes itself, byte for byte as `annotate-snippets` would: that is
//! most of the cost of a report of many findings. A [`Renderer`] also remembers what
//! consecutive findings share (the open trace file, the quoted spec rule).

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use annotate_snippets::{Level, Message, Snippet};

use super::{CachedFileResolver, SourceResolver, cut_snippet, trace_snippet};
use crate::diagnostic::{Diagnostic, SpecSite, Summary};
use crate::redact::for_terminal;
use crate::source::SpecSource;

/// Renders one diagnostic as a multi-line block ending in a blank line, quoting trace
/// text read through `resolver`.
pub fn render(diagnostic: &Diagnostic, styled: bool, resolver: &dyn SourceResolver) -> String {
    let mut out = String::new();
    Renderer::default().render_into(&mut out, diagnostic, styled, resolver);
    out
}

/// Renders diagnostics one after another, reading trace text from the file system and
/// remembering what they share: a report of many findings quotes the same few spec
/// rules and reads the same files again and again.
#[derive(Debug, Default)]
pub struct Renderer {
    files: CachedFileResolver,
    /// Spec text already made safe to show, by source, span and label.
    specs: HashMap<SpecKey, Arc<SpecShown>>,
    /// Trace file names already made safe to show.
    origins: HashMap<Arc<Path>, Arc<str>>,
}

/// A quoted spec place: the source (held, so its address is not reused), its span and
/// the label.
#[derive(Debug)]
struct SpecKey(Arc<SpecSource>, usize, usize, String);

impl PartialEq for SpecKey {
    fn eq(&self, other: &SpecKey) -> bool {
        Arc::ptr_eq(&self.0, &other.0) && (self.1, self.2, &self.3) == (other.1, other.2, &other.3)
    }
}

impl Eq for SpecKey {}

impl std::hash::Hash for SpecKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        Arc::as_ptr(&self.0).hash(state);
        (self.1, self.2, &self.3).hash(state);
    }
}

impl Renderer {
    /// Appends the block of `diagnostic` to `out`, quoting trace text from the files it
    /// names.
    pub fn render(&mut self, out: &mut String, diagnostic: &Diagnostic, styled: bool) {
        let files = std::mem::take(&mut self.files);
        self.render_into(out, diagnostic, styled, &files);
        self.files = files;
    }

    /// [`Renderer::render`], quoting trace text read through `resolver` instead of
    /// from the files the diagnostic names.
    pub fn render_with(
        &mut self,
        out: &mut String,
        diagnostic: &Diagnostic,
        styled: bool,
        resolver: &dyn SourceResolver,
    ) {
        self.render_into(out, diagnostic, styled, resolver);
    }

    fn render_into(
        &mut self,
        out: &mut String,
        diagnostic: &Diagnostic,
        styled: bool,
        resolver: &dyn SourceResolver,
    ) {
        // Everything the message borrows is built first, so it outlives the message.
        let parts = Parts::of(diagnostic, resolver, self);
        if styled || !plain_block(out, &parts) {
            let renderer = if styled {
                annotate_snippets::Renderer::styled()
            } else {
                annotate_snippets::Renderer::plain()
            };
            let _ = write!(out, "{}", renderer.render(parts.message()));
        }
        out.push_str("\n\n");
    }

    fn spec_shown(&mut self, site: &SpecSite, label: &str) -> Arc<SpecShown> {
        let key = SpecKey(
            site.source.clone(),
            site.span.start,
            site.span.end,
            label.to_string(),
        );
        self.specs
            .entry(key)
            .or_insert_with(|| Arc::new(SpecShown::of(site, label)))
            .clone()
    }

    fn origin(&mut self, file: &Arc<Path>) -> Arc<str> {
        self.origins
            .entry(file.clone())
            .or_insert_with(|| Arc::from(line(&file.display().to_string())))
            .clone()
    }
}

/// One line of text from a trace, a spec or the command line, safe to show: secrets
/// masked, control characters escaped.
fn line(text: &str) -> String {
    for_terminal(text, false).into_owned()
}

/// The lines of a spec's text that `span` covers, made safe to show, with `span` moved
/// to where its text is in the result, and the number of the first line. Only those
/// lines are shown (the snippet is folded), so only they are scanned.
fn spec_text(
    source: &SpecSource,
    span: std::ops::Range<usize>,
) -> (String, std::ops::Range<usize>, usize) {
    let whole = source.text.as_str();
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
    let first_line = source.line_col(begin).0;
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
    /// The spec's text shown, with the level of its annotation.
    spec: Option<(Arc<SpecShown>, Level)>,
    /// Each related place.
    related: Vec<Arc<SpecShown>>,
    footers: Vec<String>,
    hint: Option<String>,
}

/// A spec's text as shown: its file, its safe text, the annotated range and label.
#[derive(Debug)]
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
        let (text, range, first_line) = spec_text(&site.source, range);
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
    fn of(diagnostic: &Diagnostic, resolver: &dyn SourceResolver, cache: &mut Renderer) -> Parts {
        let trace = diagnostic.trace.as_ref().map(|site| {
            let mut origin = cache.origin(&site.file).to_string();
            let kept = diagnostic
                .record_text
                .as_deref()
                .map(|bytes| cut_snippet(bytes, site.loc.len));
            let snippet = (site.loc.line > 0)
                .then(|| kept.or_else(|| trace_snippet(site, resolver)))
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
                    cache.spec_shown(site, &format!("rule of spec `{}`", site.spec)),
                    Level::Info,
                ),
                None => (cache.spec_shown(site, ""), level),
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
                .map(|(site, label)| cache.spec_shown(site, label))
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

/// The widest source line `annotate-snippets` shows without cutting it (its default
/// terminal width).
const UNCUT_WIDTH: usize = 140;

/// Whether `text` lays out one column per byte, as `annotate-snippets` would show it:
/// printable ASCII, and the ellipsis a cut snippet ends with.
fn one_column_per_char(text: &str) -> bool {
    text.chars().all(|c| matches!(c, ' '..='~' | '…'))
}

/// One annotated source line of a plain block, as [`plain_block`] writes it.
struct PlainSnippet<'p> {
    origin: &'p str,
    line: usize,
    text: Cow<'p, str>,
    /// Columns of the marks (one per char here).
    marks: std::ops::Range<usize>,
    mark: char,
    /// `info: ` for an annotation of level info; empty otherwise.
    prefix: &'static str,
    label: &'p str,
}

/// Writes the block of `parts` without colour, exactly as `annotate-snippets` lays it
/// out, when it is the common shape: every snippet one line of text that lays out one
/// column per char, short enough not to be cut, with no indentation to trim. Returns
/// `false`, having written nothing, for any other shape.
fn plain_block(out: &mut String, parts: &Parts) -> bool {
    let mut snippets: Vec<PlainSnippet<'_>> = Vec::with_capacity(2 + parts.related.len());
    if let Some((origin, snippet, line)) = &parts.trace {
        // The trace annotation spans its whole line, which is never cut when it does
        // not start with whitespace.
        let Some(text) = snippet else { return false };
        if text.is_empty() || text.starts_with(' ') || !one_column_per_char(text) {
            return false;
        }
        let Ok(line) = usize::try_from(*line) else {
            return false;
        };
        let marks = 0..text.chars().count();
        let text = if text.len() > UNCUT_WIDTH && !text.is_ascii() {
            // `annotate-snippets` compares the line's length in bytes with its width in
            // columns here, takes the line for cut, and writes `...` over its last three
            // columns. Only the ellipsis of a cut snippet is handled so.
            let Some(body) = text.strip_suffix('…').filter(|body| body.is_ascii()) else {
                return false;
            };
            Cow::Owned(format!("{}...", &body[..body.len() - 2]))
        } else {
            Cow::Borrowed(text.as_str())
        };
        snippets.push(PlainSnippet {
            origin,
            line,
            text,
            marks,
            mark: '^',
            prefix: "",
            label: parts.trace_label.as_deref().unwrap_or(""),
        });
    }
    let spec = parts.spec.iter().map(|(shown, level)| (shown, *level));
    let related = parts.related.iter().map(|shown| (shown, Level::Info));
    for (shown, level) in spec.chain(related) {
        let text = shown.text.as_str();
        let indent = text.len() - text.trim_start_matches(' ').len();
        if text.contains('\n')
            || !text.is_ascii()
            || !one_column_per_char(text)
            || text.len() > UNCUT_WIDTH
            || indent > 20
        {
            return false;
        }
        let start = shown.range.start.min(text.len());
        let end = shown.range.end.clamp(start, text.len());
        let (mark, prefix) = match level {
            Level::Error => ('^', ""),
            Level::Warning => ('-', ""),
            Level::Info => ('-', "info: "),
            _ => return false,
        };
        snippets.push(PlainSnippet {
            origin: &shown.origin,
            line: shown.first_line,
            text: Cow::Borrowed(text),
            // An empty span still gets one mark.
            marks: start..end.max(start + 1),
            mark,
            prefix,
            label: &shown.label,
        });
    }
    if snippets.is_empty()
        || parts.title.is_empty()
        || parts.footers.iter().any(String::is_empty)
        || parts.hint.as_ref().is_some_and(String::is_empty)
    {
        return false;
    }
    let width = snippets
        .iter()
        .map(|s| s.line)
        .max()
        .unwrap_or(0)
        .to_string()
        .len();
    let level = if parts.warning { "warning" } else { "error" };
    let _ = write!(out, "{level}[{}]: {}", parts.code, parts.title);
    for (index, snippet) in snippets.iter().enumerate() {
        let sigil = if index == 0 { "-->" } else { ":::" };
        let column = snippet.marks.start + 1;
        let _ = write!(
            out,
            "\n{:width$}{sigil} {}:{}:{column}\n{:width$} |\n{:>width$} | {}\n{:width$} | {:marks$}",
            "",
            snippet.origin,
            snippet.line,
            "",
            snippet.line,
            snippet.text,
            "",
            "",
            marks = snippet.marks.start,
        );
        out.extend(std::iter::repeat_n(snippet.mark, snippet.marks.len()));
        if !snippet.label.is_empty() {
            let _ = write!(out, " {}{}", snippet.prefix, snippet.label);
        }
        let _ = write!(out, "\n{:width$} |", "");
    }
    for footer in &parts.footers {
        let _ = write!(out, "\n{:width$} = note: {footer}", "");
    }
    if let Some(hint) = &parts.hint {
        let _ = write!(out, "\n{:width$} = help: {hint}", "");
    }
    true
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

/// A path longer than this many moves is shown abbreviated in the middle.
pub const PATH_SHOWN_WHOLE: usize = 12;
/// How many moves an abbreviated path shows at each end.
pub const PATH_ENDS: usize = 4;

/// `idle --create (line 1)--> pending --outcome_unknown (line 2)--> unknown`
///
/// A path of more than [`PATH_SHOWN_WHOLE`] moves shows its first and last
/// [`PATH_ENDS`] moves around `… N more moves …`, so that one long-lived instance does
/// not fill a screen; JSON, SARIF and the HTML report keep every move.
fn path_text(detail: &crate::diagnostic::ViolationDetail) -> String {
    let mut out = String::new();
    if detail.path_elided > 0 {
        let _ = write!(out, "({} earlier moves) ", detail.path_elided);
    }
    let steps = &detail.path;
    let gap = (steps.len() > PATH_SHOWN_WHOLE).then(|| PATH_ENDS..steps.len() - PATH_ENDS);
    for (index, step) in steps.iter().enumerate() {
        if let Some(gap) = &gap {
            if index == gap.start {
                let _ = write!(out, "{} … {} more moves … ", step.state, gap.len());
            }
            if gap.contains(&index) {
                continue;
            }
        }
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
    use crate::diagnostic::{Code, SpecSite, TraceSite};
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

    /// A violation at `line` of `run.jsonl` whose record is `record`, against the rule
    /// at `span` of `spec`, with `moves` moves behind it.
    fn violation(
        line: u64,
        record: &str,
        spec: &Arc<crate::source::SpecSource>,
        span: std::ops::Range<usize>,
        moves: usize,
    ) -> (Diagnostic, MemoryResolver) {
        use crate::diagnostic::{SpecSite, Step, ViolationDetail};
        let mut text = "\n".repeat(line as usize - 1);
        let offset = text.len() as u64;
        text.push_str(record);
        text.push('\n');
        let mut files = MemoryResolver::default();
        files.insert("run.jsonl", text);
        let mut diagnostic = Diagnostic::new(Code::ForbiddenTransition, "blind re-create");
        diagnostic.trace = Some(TraceSite {
            file: Arc::from(Path::new("run.jsonl")),
            trace: None,
            loc: Location {
                line,
                offset,
                len: record.len() as u64,
                ..Location::default()
            },
        });
        diagnostic.spec = Some(SpecSite::new(
            "reconcile",
            spec,
            crate::source::Span {
                start: span.start,
                end: span.end,
            },
        ));
        diagnostic.violation = Some(Box::new(ViolationDetail {
            key: Some("req-1".into()),
            state: "unknown".into(),
            event: Some("create".into()),
            allowed: vec!["lookup".into()],
            path: (0..moves)
                .map(|n| Step {
                    state: format!("s{n}"),
                    event: format!("e{n}"),
                    line: n as u64 + 1,
                    file: None,
                })
                .collect(),
            path_elided: 0,
        }));
        diagnostic.hint = Some("look it up first".into());
        (diagnostic, files)
    }

    /// What `annotate-snippets` makes of `diagnostic`, without colour.
    fn laid_out(diagnostic: &Diagnostic, files: &MemoryResolver) -> String {
        let parts = Parts::of(diagnostic, files, &mut Renderer::default());
        format!(
            "{}\n\n",
            annotate_snippets::Renderer::plain().render(parts.message())
        )
    }

    #[test]
    fn plain_blocks_are_what_annotate_snippets_lays_out() {
        let spec = Arc::new(crate::source::SpecSource::new(
            "specs/reconcile.tg",
            "spec reconcile\nevent create = call create_record\n    forbid unknown on create: \"blind\"\n\n",
        ));
        let rule = spec.text.find("forbid").expect("the rule");
        let short = r#"{"kind":"call","tool":"create_record"}"#;
        let long = format!(
            r#"{{"kind":"call","args":{{"note":"{}"}}}}"#,
            "x".repeat(300)
        );
        let unicode = r#"{"kind":"call","note":"café ☕"}"#;
        let wide = format!(r#"{{"note":"{}"}}"#, "y".repeat(140));
        let cut_unicode = format!(r#"{{"note":"é{}"}}"#, "z".repeat(300));
        let at_the_cut = format!(r#"{{"note":"{}"}}"#, "w".repeat(228));
        let mut plain = 0;
        let mut cases = 0;
        for line in [1, 9, 10, 99, 100, 12345] {
            let records = [
                short,
                &long,
                unicode,
                "   {\"kind\":\"call\"}",
                "\t{}",
                &wide,
                &cut_unicode,
                &at_the_cut,
            ];
            for record in records {
                for span in [rule..rule + 10, rule..rule, 0..4, rule - 4..rule + 2, 5..40] {
                    for moves in [0, 2, 13] {
                        let (mut diagnostic, files) =
                            violation(line, record, &spec, span.clone(), moves);
                        if moves == 13 {
                            // A lint warning: the spec alone, at level warning.
                            diagnostic.code = Code::UnusedEvent;
                            diagnostic.violation = None;
                            diagnostic.trace = None;
                        } else if moves == 0 {
                            // A spec error with a related place and no hint.
                            diagnostic.code = Code::SyntaxError;
                            diagnostic.violation = None;
                            diagnostic.hint = None;
                            let related = SpecSite::new(
                                "reconcile",
                                &spec,
                                crate::source::Span { start: 0, end: 4 },
                            );
                            diagnostic.related.push((related, "declared here".into()));
                        }
                        let want = laid_out(&diagnostic, &files);
                        let parts = Parts::of(&diagnostic, &files, &mut Renderer::default());
                        let mut have = String::new();
                        cases += 1;
                        if plain_block(&mut have, &parts) {
                            plain += 1;
                            have.push_str("\n\n");
                            assert_eq!(have, want, "line {line}, record {record:?}, span {span:?}");
                        }
                        assert_eq!(render(&diagnostic, false, &files), want);
                    }
                }
            }
        }
        // The common shapes are written plainly; the others are left to annotate-snippets.
        assert!(plain * 3 > cases, "{plain} of {cases} written plainly");
        assert!(plain < cases, "some shapes are not");
    }

    #[test]
    fn a_long_path_is_shown_by_its_ends() {
        let spec = Arc::new(crate::source::SpecSource::new(
            "s.tg",
            "forbid unknown on create: \"x\"\n",
        ));
        let (diagnostic, files) = violation(40, "{}", &spec, 0..6, 40);
        let have = render(&diagnostic, false, &files);
        let path = have
            .lines()
            .find(|l| l.contains("note: path: "))
            .expect("a path note");
        assert_eq!(
            path,
            "   = note: path: s0 --e0 (line 1)--> s1 --e1 (line 2)--> s2 --e2 (line 3)--> s3 --e3 (line 4)--> \
             s4 … 32 more moves … s36 --e36 (line 37)--> s37 --e37 (line 38)--> s38 --e38 (line 39)--> \
             s39 --e39 (line 40)--> unknown ✗ create"
        );
        let (diagnostic, files) = violation(40, "{}", &spec, 0..6, PATH_SHOWN_WHOLE);
        let have = render(&diagnostic, false, &files);
        assert!(
            have.contains("s11 --e11 (line 12)--> unknown ✗ create"),
            "{have}"
        );
        assert!(!have.contains("more moves"), "{have}");
    }

    #[test]
    fn a_kept_record_is_quoted_when_the_input_cannot_be_read_again() {
        let mut diagnostic = malformed_at_line_two();
        diagnostic.record_text = Some(b"[1, 2]".to_vec().into_boxed_slice());
        let have = render(&diagnostic, false, &MemoryResolver::default());
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
