//! Lines read in batches, so that `seal` and `verify` can canonicalize and hash the
//! records of a batch on every core while the chain itself is linked in order.
//!
//! Canonicalizing a record and hashing it (for `seal`, hashing it up to where `prev`
//! goes) does not depend on the records before it; only the links do. A batch is
//! bounded in lines and bytes, so memory does not grow with the log.

use std::io::{self, BufRead};
use std::ops::Range;

use rayon::prelude::*;

use crate::trace::Location;
use crate::trace::native::unreadable_line;
use crate::trace::reader::{LineContent, LineReader};

/// Lines per batch, at most.
const BATCH_LINES: usize = 8192;
/// Bytes of text per batch, about (a batch always holds at least one line).
const BATCH_BYTES: usize = 4 << 20;
/// Lines one task works through: enough that splitting the work costs little.
const CHUNK: usize = 512;

/// Consecutive lines of one input, copied out of the reader.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    text: String,
    entries: Vec<Entry>,
}

/// One non-blank line of a batch.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Where the line is.
    pub(crate) loc: Location,
    /// The line's text in the batch, or why it cannot be read as text.
    content: Result<Range<usize>, String>,
}

impl Batch {
    /// Empties the batch and reads the next lines of `reader` into it. A read error
    /// ends the batch early and is returned with it: the lines before the error are
    /// still in the batch.
    pub(crate) fn fill<R: BufRead>(&mut self, reader: &mut LineReader<R>) -> Option<io::Error> {
        self.text.clear();
        self.entries.clear();
        let max = reader.max_line_bytes();
        while self.entries.len() < BATCH_LINES && self.text.len() < BATCH_BYTES {
            let line = match reader.next_line() {
                Ok(Some(line)) => line,
                Ok(None) => return None,
                Err(err) => return Some(err),
            };
            let loc = line.location();
            let content = match line.content {
                LineContent::Text(text) => {
                    let start = self.text.len();
                    self.text.push_str(text);
                    Ok(start..self.text.len())
                }
                _ => Err(unreadable_line(&line, max)
                    .map(|err| err.to_string())
                    .unwrap_or_default()),
            };
            self.entries.push(Entry { loc, content });
        }
        None
    }

    /// The lines read.
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// A line's text, or why it has none.
    pub(crate) fn text<'b>(&'b self, entry: &'b Entry) -> Result<&'b str, &'b str> {
        match &entry.content {
            Ok(range) => Ok(&self.text[range.clone()]),
            Err(reason) => Err(reason),
        }
    }

    /// Runs `work` over the lines in chunks, in parallel when there is more than one
    /// chunk, each task with its own scratch state; the results are in line order.
    pub(crate) fn map_chunks<S, T>(&self, work: impl Fn(&mut S, &[Entry]) -> T + Sync) -> Vec<T>
    where
        S: Default,
        T: Send,
    {
        if self.entries.len() <= CHUNK {
            // A short log starts no threads.
            return vec![work(&mut S::default(), &self.entries)];
        }
        self.entries
            .par_chunks(CHUNK)
            .map_init(S::default, |scratch, chunk| work(scratch, chunk))
            .collect()
    }
}
