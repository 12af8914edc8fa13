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

use crate::source::{Span, SpecSource};
use crate::trace::Location;
use crate::trace::adapters::{Problem, ProblemKind};

/// One finding: a violation of a spec by a trace, or an error in a spec or an input.
#[derive(Debug, Clone)]
pub struct Diagnostic {
    /// What kind of finding it is.
    pub code: Code,
    /// What is wrong, in one lowercase sentence.
    pub message: String,
    /// Where in a trace (or any input file) the finding is.
    pub trace: Option<TraceSite>,
    /// The spec rule involved, or where a spec error is.
    pub spec: Option<SpecSite>,
    /// Other spec places that explain the finding.
    pub related: Vec<(SpecSite, String)>,
    /// How to fix it, when there is something to say.
    pub hint: Option<String>,
    /// For a violation: the instance, its state and how it got there.
    pub violation: Option<Box<ViolationDetail>>,
    /// For a finding about how the run is set up rather than about one file (a `per`
    /// key or a `--trace-by` field that no record carries): what it says, the same text
    /// in every file that has it, so that a report of many files gives it once. Never
    /// rendered.
    pub same_in_every_file: Option<String>,
    /// The start of the text of the record `trace` points to (at most what a snippet
    /// shows), kept when its input cannot be read again: standard input, a pipe.
    /// Renderers quote it instead of reading the file.
    pub record_text: Option<Box<[u8]>>,
}

impl Diagnostic {
    /// A diagnostic with `code` and `message`, located nowhere yet.
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            message: message.into(),
            trace: None,
            spec: None,
            related: Vec::new(),
            hint: None,
            violation: None,
            same_in_every_file: None,
            record_text: None,
        }
    }

    /// An input that could not be read: `cannot read `path`: why`, located at the
    /// start of the file.
    pub fn unreadable(path: &Path, err: &std::io::Error) -> Diagnostic {
        let mut diagnostic = Diagnostic::unreadable_unlocated(path, err);
        diagnostic.trace = Some(TraceSite {
            file: Arc::from(path),
            trace: None,
            loc: Location::default(),
        });
        diagnostic
    }

    /// [`Diagnostic::unreadable`] located nowhere: for a spec file `fmt` reads whole,
    /// whose human output names the file in the message alone.
    pub(crate) fn unreadable_unlocated(path: &Path, err: &std::io::Error) -> Diagnostic {
        Diagnostic::new(
            Code::UnreadableInput,
            format!("cannot read `{}`: {err}", path.display()),
        )
    }

    /// A problem a trace input has (a malformed element, no known format), located in
    /// `file`.
    pub fn from_problem(file: &Arc<Path>, problem: Problem) -> Diagnostic {
        let code = match problem.kind {
            ProblemKind::Malformed => Code::MalformedRecord,
            ProblemKind::UnknownFormat => Code::UnknownFormat,
            ProblemKind::Untyped => Code::UntypedRecords,
            ProblemKind::Empty => Code::NoInput,
        };
        let mut diagnostic = Diagnostic::new(code, problem.message);
        diagnostic.hint = problem.hint;
        diagnostic.trace = Some(TraceSite {
            file: file.clone(),
            trace: None,
            loc: problem.loc,
        });
        diagnostic
    }

    /// Whether a trace violated a spec.
    pub fn is_violation(&self) -> bool {
        self.code.category() == Category::Violation
    }

    /// Whether it is a `lint` warning.
    pub fn is_warning(&self) -> bool {
        self.code.category() == Category::Warning
    }
}

/// A place in a trace file.
#[derive(Debug, Clone)]
pub struct TraceSite {
    /// The file (or the name given to an input that is not one).
    pub file: Arc<Path>,
    /// The trace's name within the file, when a file holds several.
    pub trace: Option<String>,
    /// Line, byte range and JSON pointer in the file.
    pub loc: Location,
}

/// A place in a spec: the spec's name, its source and a span in it. `spec` is empty
/// for a file that failed to parse before its name was known.
#[derive(Debug, Clone)]
pub struct SpecSite {
    /// The spec's name.
    pub spec: String,
    /// The spec's source.
    pub source: Arc<SpecSource>,
    /// The place in the source.
    pub span: Span,
}

impl SpecSite {
    /// `span` in the spec named `spec`, whose source is `source`.
    pub fn new(spec: &str, source: &Arc<SpecSource>, span: Span) -> SpecSite {
        SpecSite {
            spec: spec.to_string(),
            source: Arc::clone(source),
            span,
        }
    }

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
    /// The state the move left.
    pub state: String,
    /// The event that made it.
    pub event: String,
    /// The trace line of the record.
    pub line: u64,
    /// The file of `line`, when records come from several files (`check --join`).
    pub file: Option<Arc<Path>>,
}

/// Whole-run counts, for the summary.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Specs that compiled.
    pub specs: usize,
    /// Traces read.
    pub traces: u64,
    /// Records read.
    pub records: u64,
    /// `missing` results synthesized for calls no record answered (not in `records`).
    pub synthesized: u64,
    /// Violations found.
    pub violations: u64,
    /// Spec, input and usage errors.
    pub errors: u64,
    /// Lint warnings (only `lint` reports them).
    pub warnings: u64,
}
