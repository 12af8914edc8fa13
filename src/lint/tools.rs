//! Tool names, compared between specs and traces (`unmatched-tool`, `unseen-tool`).
//!
//! A spec mentions a tool by naming it in an event (`call create_record`), by a glob or
//! regex that matches it (other than one that matches every name), or by testing the
//! `tool` field against it in a guard. A traced tool that no spec mentions is invisible
//! to every spec; a tool a spec names that no trace uses is a rule the corpus never
//! exercises. Either is often a typo, so each comes with a "did you mean".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Linted;
use crate::diagnostic::{Code, Diagnostic, SpecSite, TraceSite};
use crate::machine::{Machine, ToolMatcher};
use crate::spec::ast::{Expr, ItemKind, Segment, ToolPattern};
use crate::suggest::did_you_mean;
use crate::trace::adapters::InputOptions;
use crate::trace::input::{Item, TraceInput};
use crate::trace::{Kind, Record};

/// The tools that calls and results in the traces name.
#[derive(Debug, Default)]
pub struct ToolUsage {
    /// Tool name → how many records name it, and where it first occurs.
    pub tools: BTreeMap<String, (u64, TraceSite)>,
    /// Trace files read.
    pub files: u64,
    /// Records read.
    pub records: u64,
}

/// Reads trace files (in any format tracegate reads) for the tool names their calls and
/// results use. Elements that are not usable records are skipped (`check` reports
/// them); a file that cannot be read is an `unreadable-input` diagnostic.
///
/// A file read as native records none of which has a `kind` or a `tool` gets the
/// `untyped-records` warning when no record of it matches an event of `specs`.
pub fn scan(paths: &[PathBuf], specs: &[Machine]) -> (ToolUsage, Vec<Diagnostic>) {
    let mut usage = ToolUsage::default();
    let mut errors = Vec::new();
    for path in paths {
        let file: Arc<Path> = Arc::from(path.as_path());
        let opened = match TraceInput::open(path, &InputOptions::default(), None) {
            Ok(opened) => opened,
            Err(err) => {
                errors.push(Diagnostic::unreadable(path, &err));
                continue;
            }
        };
        usage.files += 1;
        let warning = opened.detected().warning.clone();
        let mut matched = false;
        opened.for_each(|item| match item {
            Item::Record(record) => {
                matched = matched || specs.iter().any(|m| m.first_two(&record).0.is_some());
                usage.note(&record, &file)
            }
            Item::Problem(_) | Item::TraceEnd(_) => {}
            Item::Stopped(err) => errors.push(Diagnostic::unreadable(path, &err)),
        });
        if let (Some(warning), false) = (warning, matched) {
            errors.push(Diagnostic::from_problem(&file, warning));
        }
    }
    (usage, errors)
}

impl ToolUsage {
    /// Counts one record, and the tool it names if it is a call or a result.
    fn note(&mut self, record: &Record<'_>, file: &Arc<Path>) {
        self.records += 1;
        let (Some(Kind::Call | Kind::Result), Some(tool)) = (record.kind, &record.tool) else {
            return;
        };
        let entry = self.tools.entry(tool.to_string()).or_insert_with(|| {
            (
                0,
                TraceSite {
                    file: file.clone(),
                    trace: None,
                    loc: record.loc.clone(),
                },
            )
        });
        entry.0 += 1;
    }
}

/// Whether a tool matcher matches every name (`"*"`, `/.*/`), so mentions nothing.
fn matches_everything(matcher: &ToolMatcher) -> bool {
    matcher.matches("") && matcher.matches("zz\u{1}-no-such-tool")
}

/// Whether any event of `specs` mentions `tool`.
fn mentioned(specs: &[Linted<'_>], tool: &str) -> bool {
    specs.iter().any(|spec| {
        let by_pattern = spec.machine.events.iter().any(|event| {
            event
                .matcher
                .tool
                .as_ref()
                .is_some_and(|m| !matches_everything(m) && m.matches(tool))
        });
        by_pattern || guard_names(spec).iter().any(|name| name == tool)
    })
}

/// The tool names written in `tool == "..."` and `tool in [...]` tests of a spec.
fn guard_names(spec: &Linted<'_>) -> Vec<String> {
    fn walk(expr: &Expr, out: &mut Vec<String>) {
        let is_tool = |segments: &[Segment]| matches!(segments, [Segment::Key(k)] if k == "tool");
        match expr {
            Expr::Or(a, b) | Expr::And(a, b) => {
                walk(a, out);
                walk(b, out);
            }
            Expr::Not(inner, _) | Expr::Group(inner, _) => walk(inner, out),
            Expr::Compare { path, value, .. } if is_tool(&path.segments) => {
                out.extend(value.value.as_str().map(str::to_string));
            }
            Expr::In { path, values, .. } if is_tool(&path.segments) => {
                out.extend(
                    values
                        .iter()
                        .filter_map(|v| v.value.as_str().map(str::to_string)),
                );
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    for item in &spec.file.items {
        if let ItemKind::Event(decl) = &item.kind {
            if let Some(guard) = &decl.pattern.guard {
                walk(guard, &mut out);
            }
        }
    }
    out
}

/// `unmatched-tool` and `unseen-tool` for these specs against these traces.
pub fn tool_lints(specs: &[Linted<'_>], usage: &ToolUsage) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    // Names the specs spell out, as "did you mean" candidates for traced tools.
    let mut named: Vec<String> = Vec::new();
    for spec in specs {
        for item in &spec.file.items {
            if let ItemKind::Event(decl) = &item.kind {
                if let Some(ToolPattern::Name(name, _)) = &decl.pattern.tool {
                    named.push(name.clone());
                }
            }
        }
        named.extend(guard_names(spec));
    }
    named.sort();
    named.dedup();

    for (tool, (count, site)) in &usage.tools {
        if mentioned(specs, tool) {
            continue;
        }
        let records = if *count == 1 {
            "1 record".to_string()
        } else {
            format!("{count} records")
        };
        let mut diagnostic = Diagnostic::new(
            Code::UnmatchedTool,
            format!("tool `{tool}` occurs in the traces ({records}), but no event mentions it"),
        );
        diagnostic.trace = Some(site.clone());
        diagnostic.hint = Some(
            match did_you_mean(tool, named.iter().map(String::as_str)) {
                Some(close) => format!("did you mean `{close}`? a spec names that tool"),
                None => "its records are invisible to every spec; name the tool in an event if a spec should see them".to_string(),
            },
        );
        diagnostics.push(diagnostic);
    }

    for spec in specs {
        for item in &spec.file.items {
            let ItemKind::Event(decl) = &item.kind else {
                continue;
            };
            let Some(ToolPattern::Name(name, span)) = &decl.pattern.tool else {
                continue;
            };
            if usage.tools.contains_key(name) {
                continue;
            }
            let mut diagnostic = Diagnostic::new(
                Code::UnseenTool,
                format!(
                    "event `{}` names tool `{name}`, which occurs in no trace",
                    decl.name.name
                ),
            );
            diagnostic.spec = Some(SpecSite {
                spec: spec.machine.name.clone(),
                source: Arc::clone(&spec.machine.source),
                span: *span,
            });
            diagnostic.hint = Some(
                match did_you_mean(name, usage.tools.keys().map(String::as_str)) {
                    Some(close) => format!("did you mean `{close}`? the traces use that tool"),
                    None => "the event never fires on these traces; check the name, or add traces that use the tool".to_string(),
                },
            );
            diagnostics.push(diagnostic);
        }
    }
    diagnostics
}
