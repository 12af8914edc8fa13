//! The spec language: syntax tree, parser, analyzer.
//!
//! `parse` turns source text into an [`ast::SpecFile`]; `analyzer::compile` resolves
//! names and builds a [`crate::machine::Machine`]. Both report every error they find,
//! each a [`SpecError`] with a stable [`Code`], a span and, where it helps, a hint.

pub mod analyzer;
pub mod ast;
pub mod fmt;
pub(crate) mod parser;

use std::sync::Arc;

use crate::diagnostic::{Code, Diagnostic, SpecSite};
use crate::source::{Span, SpecSource};

pub use analyzer::compile;
pub use parser::{parse, parse_path};

/// One finding located in a spec: an error that keeps it from compiling (from the
/// parser or the analyzer) or a doubtful construct `lint` warns about; its [`Code`]
/// says which. Located by byte span in the spec's source; [`SpecFinding::into_diagnostic`]
/// is the one way it becomes a [`Diagnostic`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecFinding {
    /// What kind of finding it is.
    pub code: Code,
    /// What is wrong, in one lowercase sentence.
    pub message: String,
    /// Where it is.
    pub span: Span,
    /// How to fix it, when there is something to say.
    pub hint: Option<String>,
    /// Other places that explain the finding (e.g. the first of two duplicates).
    pub related: Vec<(Span, String)>,
}

/// The parser's and the analyzer's name for a [`SpecFinding`]: every finding they
/// report is an error.
pub type SpecError = SpecFinding;

impl SpecFinding {
    /// A finding with `code` at `span`.
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> SpecFinding {
        SpecFinding {
            code,
            message: message.into(),
            span,
            hint: None,
            related: Vec::new(),
        }
    }

    /// The finding with a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> SpecFinding {
        self.hint = Some(hint.into());
        self
    }

    /// The finding with one more related place.
    pub fn with_related(mut self, span: Span, label: impl Into<String>) -> SpecFinding {
        self.related.push((span, label.into()));
        self
    }

    /// The finding as a diagnostic located in the spec named `spec` (empty for a file
    /// that failed to parse before its name was known) whose source is `source`.
    pub fn into_diagnostic(self, spec: &str, source: &Arc<SpecSource>) -> Diagnostic {
        let mut diagnostic = Diagnostic::new(self.code, self.message);
        diagnostic.spec = Some(SpecSite::new(spec, source, self.span));
        diagnostic.hint = self.hint;
        diagnostic.related = self
            .related
            .into_iter()
            .map(|(span, label)| (SpecSite::new(spec, source, span), label))
            .collect();
        diagnostic
    }
}
