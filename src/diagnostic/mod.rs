//! Diagnostics: the data model of findings, apart from how they are rendered.
//!
//! The checker and the spec loader produce [`Diagnostic`]s; the renderers in
//! [`render`] turn them into human text or JSON Lines. Locations are kept as data
//! (byte offsets, line numbers, spans); snippets are read only when rendering.

pub mod code;
pub mod explain;
pub mod render;

use std::path::Path;
use std::sync::Arc;

pub use code::{Category, Code};

use crate::machine::SpecSource;
use crate::spec::ast::Span;
use crate::trace::Location;

/// One finding: a violation of a spec by a trace, or an error in a spec or an input.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    pub code: Code,
    pub message: String,
    /// Where in a trace (or any input file) the finding is.
    pub trace: Option<TraceSite>,
    /// The spec rule involved, or where a spec error is.
    pub spec: Option<SpecSite>,
    /// Other spec places that explain the finding.
    pub related: Vec<(SpecSite, String)>,
    pub hint: Option<String>,
    pub violation: Option<Box<ViolationDetail>>,
}

impl Diagnostic {
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            trace: None,
            spec: None,
            related: Vec::new(),
            hint: None,
            violation: None,
        }
    }

    pub fn is_violation(&self) -> bool {
        self.code.category() == Category::Violation
    }

    pub fn is_warning(&self) -> bool {
        self.code.category() == Category::Warning
    }
}

/// A place in a trace file.
#[derive(Debug, Clone)]
pub struct TraceSite {
    pub file: Arc<Path>,
    /// The trace's name within the file, when a file holds several.
    pub trace: Option<String>,
    pub loc: Location,
}

/// A place in a spec: the spec's name, its source and a span in it. `spec` is empty
/// for a file that failed to parse before its name was known.
#[derive(Debug, Clone)]
pub struct SpecSite {
    pub spec: String,
    pub source: Arc<SpecSource>,
    pub span: Span,
}

impl SpecSite {
    /// 1-based line and column of the span's start.
    pub fn line_col(&self) -> (usize, usize) {
        self.source.line_col(self.span.start)
    }
}

/// What a violation adds to a diagnostic: the instance, its state and how it got there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViolationDetail {
    /// The instance's `per` key, if the spec has one.
    pub key: Option<String>,
    /// The state the instance was in.
    pub state: String,
    /// The offending event; `None` for a trace that ended in the wrong state.
    pub event: Option<String>,
    /// The events with a transition from `state`.
    pub allowed: Vec<String>,
    /// The moves that led to `state`, oldest first (the last [`PATH_LIMIT`] of them).
    pub path: Vec<Step>,
    /// How many earlier moves were dropped from `path` to bound memory.
    pub path_elided: u64,
}

/// How many moves of an instance's history are kept for its report.
pub const PATH_LIMIT: usize = 64;

/// One move of an instance: in `state`, `event` at trace line `line`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub state: String,
    pub event: String,
    pub line: u64,
    /// The file of `line`, when records come from several files (`check --join`).
    pub file: Option<Arc<Path>>,
}

/// Whole-run counts, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub specs: usize,
    pub traces: u64,
    pub records: u64,
    pub violations: u64,
    pub errors: u64,
    /// Lint warnings (only `lint` reports them).
    pub warnings: u64,
}
