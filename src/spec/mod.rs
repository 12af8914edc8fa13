//! The spec language: syntax tree, parser, analyzer.
//!
//! `parse` turns source text into an [`ast::SpecFile`]; `analyzer::compile` resolves
//! names and builds a [`crate::machine::Machine`]. Both report every error they find,
//! each a [`SpecError`] with a stable [`Code`], a span and, where it helps, a hint.

pub mod analyzer;
pub mod ast;
pub mod fmt;
pub mod parser;

use crate::diagnostic::Code;
use ast::Span;

pub use analyzer::compile;
pub use parser::parse;

/// One error in a spec: a user's mistake, located by byte span in the spec's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecError {
    pub code: Code,
    pub message: String,
    pub span: Span,
    pub hint: Option<String>,
    /// Other places that explain the error (e.g. the first of two duplicates).
    pub related: Vec<(Span, String)>,
}

impl SpecError {
    pub fn new(code: Code, span: Span, message: impl Into<String>) -> SpecError {
        SpecError {
            code,
            message: message.into(),
            span,
            hint: None,
            related: Vec::new(),
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> SpecError {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_related(mut self, span: Span, label: impl Into<String>) -> SpecError {
        self.related.push((span, label.into()));
        self
    }
}
