//! Where things are in a spec: its source text and byte spans into it.
//!
//! Spans are byte offsets; line and column are computed only when a diagnostic is
//! rendered ([`SpecSource::line_col`]). A bottom layer: the syntax tree, the machine
//! and diagnostics all locate spec text with these types.

use std::path::PathBuf;
use std::sync::OnceLock;

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
///
/// Made with [`SpecSource::new`]; the text is not changed after that (where each line
/// starts is found once, on the first [`SpecSource::line_col`]).
#[derive(Debug)]
pub struct SpecSource {
    /// The file the text was read from (or a name for text that has no file).
    pub path: PathBuf,
    /// The whole source text.
    pub text: String,
    /// The byte offset where each line after the first starts, found on first use.
    line_starts: OnceLock<Vec<usize>>,
}

impl SpecSource {
    /// The source `text`, read from `path` (or named so).
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>) -> SpecSource {
        SpecSource {
            path: path.into(),
            text: text.into(),
            line_starts: OnceLock::new(),
        }
    }

    /// 1-based line and column (in chars) of a byte offset.
    ///
    /// The line is found by a binary search over where lines start, so that a file of
    /// many lines with a diagnostic on each (say a trace given where a spec was
    /// expected) is located in `n log n`, not `n²`.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let starts = self.line_starts.get_or_init(|| {
            memchr::memchr_iter(b'\n', self.text.as_bytes())
                .map(|i| i + 1)
                .collect()
        });
        // Lines starting at or before the offset, after the first.
        let line = starts.partition_point(|&start| start <= offset);
        let line_start = if line == 0 { 0 } else { starts[line - 1] };
        (line + 1, self.text[line_start..offset].chars().count() + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_chars() {
        let source = SpecSource::new("x.tg", "ab\ncé d\n");
        assert_eq!(source.line_col(0), (1, 1));
        assert_eq!(source.line_col(3), (2, 1));
        assert_eq!(source.line_col(7), (2, 4));
        assert_eq!(source.line_col(9), (3, 1));
        assert_eq!(source.line_col(100), (3, 1));
    }
}
