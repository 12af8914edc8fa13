//! Where things are in a spec: its source text and byte spans into it.
//!
//! Spans are byte offsets; line and column are computed only when a diagnostic is
//! rendered ([`SpecSource::line_col`]). A bottom layer: the syntax tree, the machine
//! and diagnostics all locate spec text with these types.

use std::path::PathBuf;

/// A byte range `start..end` in a spec's source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span {
    /// The first byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl Span {
    /// The span `start..end`.
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both `self` and `other`.
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The span as a range, for slicing the source.
    pub fn range(self) -> std::ops::Range<usize> {
        self.start..self.end
    }
}

/// A spec's source text and where it came from, for locating and rendering rules.
#[derive(Debug)]
pub struct SpecSource {
    /// The file the text was read from (or a name for text that has no file).
    pub path: PathBuf,
    /// The whole source text.
    pub text: String,
}

impl SpecSource {
    /// 1-based line and column (in chars) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..offset];
        // Newlines found with vector instructions: a check renders a violation's rule
        // location once per violation, and there may be thousands.
        let line = memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1;
        let line_start = memchr::memrchr(b'\n', before.as_bytes()).map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        let source = SpecSource {
            path: PathBuf::from("x.tg"),
            text: "ab\ncé d\n".to_string(),
        };
        assert_eq!(source.line_col(0), (1, 1));
        assert_eq!(source.line_col(3), (2, 1));
        assert_eq!(source.line_col(7), (2, 4));
    }
}
