//! Lines read in batches, so that `seal` and `verify` can canonicalize and hash the
//! records of a batch on every core while the chain itself is linked in order.
//!
//! Canonicalizing a record and hashing it (for `seal`, hashing it up to where `prev`
//! goes) does not depend on the records before it; only the links do. A batch is
//! bounded in lines and bytes, so memory does not grow with the log.
//!
//! [`Lines`] cuts the input into lines exactly as [`crate::trace::reader::LineReader`]
//! does (line numbers, offsets, a leading BOM, `\r\n`, blank lines skipped, over-long
//! lines skipped unbuffered), but copies the input once, a block at a time, into the
//! batch, and checks UTF-8 once per batch rather than once per line.

use std::io::{self, BufRead};
use std::ops::Range;

use rayon::prelude::*;

use crate::trace::Location;
use crate::trace::native::unreadable_line;
use crate::trace::reader::{Line, LineContent, find_newline};

/// Lines per batch, about (a batch ends after the block that reaches this).
const BATCH_LINES: usize = 8192;
/// Bytes of text per batch, about (a batch always holds at least one line).
const BATCH_BYTES: usize = 4 << 20;
/// Bytes copied from the reader at a time, at most.
const BLOCK: usize = 64 << 10;
/// Lines one task works through: enough that splitting the work costs little.
const CHUNK: usize = 512;

/// The UTF-8 byte order mark some editors write at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Consecutive lines of one input, copied out of the reader.
#[derive(Debug, Default)]
pub(crate) struct Batch {
    /// The batch's bytes: its lines with their newlines, blank ones included. Lines
    /// that are not UTF-8 are blanked out, so that the rest can be lent as `str`.
    text: String,
    entries: Vec<Entry>,
    /// Whether the input ended in this batch.
    last: bool,
}

/// One non-blank line of a batch.
#[derive(Debug)]
pub(crate) struct Entry {
    /// Where the line is.
    pub(crate) loc: Location,
    /// The line's text in the batch, or why it cannot be read as text.
    content: Result<Range<usize>, String>,
}

/// Cuts an input into the lines of successive batches.
#[derive(Debug)]
pub(crate) struct Lines<R> {
    inner: R,
    max_line_bytes: usize,
    /// Bytes of a line not yet ended, carried to the next batch.
    carry: Vec<u8>,
    /// Lines started so far, blank ones included.
    lines: u64,
    /// Offset in the input of the first byte not yet in a line that was cut.
    offset: u64,
    /// An over-long line being skipped, past the bytes that are kept.
    skipping: Option<Skipped>,
    /// Lines and bytes per batch (fixed, but smaller in tests).
    batch_lines: usize,
    batch_bytes: usize,
}

/// What is known of an over-long line while its bytes are skipped.
#[derive(Debug, Clone, Copy)]
struct Skipped {
    /// Bytes so far, BOM included.
    total: u64,
    /// The length of its BOM (only the input's first line has one).
    bom: usize,
    last: u8,
}

impl<R: BufRead> Lines<R> {
    pub(crate) fn new(inner: R, max_line_bytes: usize) -> Self {
        Lines {
            inner,
            max_line_bytes,
            carry: Vec::new(),
            lines: 0,
            offset: 0,
            skipping: None,
            batch_lines: BATCH_LINES,
            batch_bytes: BATCH_BYTES,
        }
    }

    /// Bytes a line may hold before it is certainly too long: the limit, and a BOM
    /// before it and a `\r` after it (as the line reader keeps them).
    fn keep(&self) -> usize {
        self.max_line_bytes.saturating_add(BOM.len() + 1)
    }
}

impl Batch {
    /// Empties the batch and reads the next lines of `lines` into it. A read error
    /// ends the batch early and is returned with it: the lines before the error are
    /// still in the batch.
    pub(crate) fn fill<R: BufRead>(&mut self, lines: &mut Lines<R>) -> Option<io::Error> {
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        bytes.clear();
        self.entries.clear();
        self.last = false;
        // The text starts with the carried start of a line, which has no newline.
        bytes.extend_from_slice(&lines.carry);
        let (mut line_start, mut scanned) = (0, bytes.len());
        // The input offset of `bytes[0]`.
        let base = lines.offset;
        let mut stopped = None;
        // Only whole lines count towards the batch's size: a long line carried over
        // is read on until it ends.
        while self.entries.len() < lines.batch_lines && line_start < lines.batch_bytes {
            let available = match lines.inner.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => {
                    stopped = Some(err);
                    break;
                }
            };
            if available.is_empty() {
                self.last = true;
                // The last line may have no newline.
                if let Some(skipped) = lines.skipping.take() {
                    self.too_long(lines, skipped, base + line_start as u64);
                } else if line_start < bytes.len() {
                    let end = bytes.len();
                    self.line(lines, &bytes, base, line_start..end);
                    line_start = end;
                }
                break;
            }
            if let Some(mut skipped) = lines.skipping {
                let newline = find_newline(available);
                let count = newline.unwrap_or(available.len());
                if let Some(&last) = available[..count].last() {
                    skipped.last = last;
                }
                skipped.total += count as u64;
                lines.inner.consume(count + usize::from(newline.is_some()));
                if newline.is_none() {
                    lines.skipping = Some(skipped);
                    continue;
                }
                // The batch ends with the skipped line: its bytes are not in `bytes`,
                // so what follows it starts the next batch.
                lines.skipping = None;
                let start = base + line_start as u64;
                self.too_long(lines, skipped, start);
                lines.carry.clear();
                lines.offset = start + skipped.total + 1;
                bytes.truncate(line_start);
                self.set_text(bytes);
                return stopped;
            }
            let take = available.len().min(BLOCK);
            bytes.extend_from_slice(&available[..take]);
            lines.inner.consume(take);
            // Cut the complete lines of what was read.
            while let Some(at) = find_newline(&bytes[scanned..]) {
                let end = scanned + at;
                self.line(lines, &bytes, base, line_start..end);
                (line_start, scanned) = (end + 1, end + 1);
            }
            scanned = bytes.len();
            if bytes.len() - line_start > lines.keep() {
                // Certainly too long: count its bytes from here without keeping them.
                let at = base + line_start as u64;
                let bom = if at == 0 && bytes[line_start..].starts_with(BOM) {
                    BOM.len()
                } else {
                    0
                };
                lines.skipping = Some(Skipped {
                    total: (bytes.len() - line_start) as u64,
                    bom,
                    last: bytes[bytes.len() - 1],
                });
                bytes.truncate(line_start);
                scanned = line_start;
            }
        }
        lines.carry.clear();
        lines.carry.extend_from_slice(&bytes[line_start..]);
        bytes.truncate(line_start);
        lines.offset = base + line_start as u64;
        self.set_text(bytes);
        stopped
    }

    /// Keeps `bytes`, whole lines, as the batch's text. Nearly always it is all UTF-8,
    /// checked here once. Otherwise each line that is not becomes an unreadable line
    /// and is blanked out (as is any other part that is not, such as an over-long
    /// line), so that the rest can be lent as `str`.
    fn set_text(&mut self, bytes: Vec<u8>) {
        let mut bytes = match String::from_utf8(bytes) {
            Ok(text) => {
                self.text = text;
                return;
            }
            Err(err) => err.into_bytes(),
        };
        for entry in &mut self.entries {
            let Ok(range) = &entry.content else { continue };
            let line = &mut bytes[range.clone()];
            if let Err(err) = std::str::from_utf8(line) {
                let unreadable = Line {
                    number: entry.loc.line,
                    offset: entry.loc.offset,
                    len: entry.loc.len,
                    content: LineContent::InvalidUtf8 {
                        valid_up_to: err.valid_up_to(),
                    },
                };
                entry.content = Err(reason(&unreadable, 0));
                line.fill(b' ');
            }
        }
        for line in bytes.split_mut(|&b| b == b'\n') {
            if std::str::from_utf8(line).is_err() {
                line.fill(b' ');
            }
        }
        self.text = String::from_utf8(bytes).unwrap_or_else(|err| {
            debug_assert!(
                false,
                "bug: a batch is UTF-8 once its bad lines are blanked"
            );
            String::from_utf8_lossy(err.as_bytes()).into_owned()
        });
    }

    /// Adds the line `range` of `bytes` (without its newline), unless it is blank.
    fn line<R>(&mut self, lines: &mut Lines<R>, bytes: &[u8], base: u64, range: Range<usize>) {
        lines.lines += 1;
        let start = base + range.start as u64;
        let line = &bytes[range.clone()];
        let bom = if start == 0 && line.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let cr = usize::from(line.last() == Some(&b'\r') && line.len() > bom);
        let content = range.start + bom..range.end - cr;
        let loc = Location {
            line: lines.lines,
            offset: start + bom as u64,
            len: content.len() as u64,
            pointer: Default::default(),
        };
        if content.len() > lines.max_line_bytes {
            let line = Line {
                number: loc.line,
                offset: loc.offset,
                len: loc.len,
                content: LineContent::TooLong,
            };
            self.entries.push(Entry {
                loc,
                content: Err(reason(&line, lines.max_line_bytes)),
            });
            return;
        }
        let blank = bytes[content.clone()]
            .iter()
            .all(|&byte| matches!(byte, b' ' | b'\t' | b'\r'));
        if !blank {
            self.entries.push(Entry {
                loc,
                content: Ok(content),
            });
        }
    }

    /// Adds an over-long line whose bytes were skipped; it starts at input offset
    /// `start`.
    fn too_long<R>(&mut self, lines: &mut Lines<R>, skipped: Skipped, start: u64) {
        lines.lines += 1;
        let cr = u64::from(skipped.last == b'\r' && skipped.total > skipped.bom as u64);
        let line = Line {
            number: lines.lines,
            offset: start + skipped.bom as u64,
            len: skipped.total - skipped.bom as u64 - cr,
            content: LineContent::TooLong,
        };
        self.entries.push(Entry {
            loc: line.location(),
            content: Err(reason(&line, lines.max_line_bytes)),
        });
    }

    /// Whether the input ended in this batch (or before it).
    pub(crate) fn is_last(&self) -> bool {
        self.last
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

/// Why a line cannot be read as text, as the line reader's users say it.
fn reason(line: &Line<'_>, max: usize) -> String {
    unreadable_line(line, max)
        .map(|err| err.to_string())
        .unwrap_or_default()
}

/// Reads `lines` in batches on this thread while `work` runs over each batch, in order,
/// on another (and on every core through [`Batch::map_chunks`]); `take` gets each
/// batch's result here, in order. So reading (and whatever `take` does, such as
/// writing) overlaps the work on the batch before. `take` returns `Some` to stop early,
/// and that is the answer; a read error is returned after the results of the lines
/// before it. An input of one batch (most logs a test or a CI job seals or verifies)
/// has nothing to overlap, and starts no thread.
pub(crate) fn pipeline<R, T, S>(
    lines: &mut Lines<R>,
    mut work: impl FnMut(&Batch) -> T + Send,
    mut take: impl FnMut(&Batch, T) -> Option<S>,
) -> Result<Option<S>, io::Error>
where
    R: BufRead,
    T: Send,
{
    use std::sync::mpsc::sync_channel;
    let mut first = Batch::default();
    let stopped = first.fill(lines);
    if first.is_last() || stopped.is_some() {
        let result = work(&first);
        if let Some(answer) = take(&first, result) {
            return Ok(Some(answer));
        }
        return stopped.map_or(Ok(None), Err);
    }
    std::thread::scope(|scope| {
        // Two batches: one being read, one being worked on.
        let (to_work, inbox) = sync_channel::<Batch>(1);
        let (to_take, done) = sync_channel::<(Batch, T)>(1);
        if to_work.send(first).is_err() {
            panic!("bug: the batch worker stopped early");
        }
        scope.spawn(move || {
            for batch in inbox {
                let result = work(&batch);
                if to_take.send((batch, result)).is_err() {
                    return;
                }
            }
        });
        let mut spare = vec![Batch::default()];
        let (mut in_flight, mut read_all, mut stopped) = (1, false, None);
        loop {
            if !read_all {
                if let Some(mut batch) = spare.pop() {
                    stopped = batch.fill(lines);
                    read_all = batch.is_last() || stopped.is_some();
                    if to_work.send(batch).is_err() {
                        panic!("bug: the batch worker stopped early");
                    }
                    in_flight += 1;
                    continue;
                }
            }
            if in_flight == 0 {
                return stopped.map_or(Ok(None), Err);
            }
            let Ok((batch, result)) = done.recv() else {
                panic!("bug: the batch worker stopped early");
            };
            in_flight -= 1;
            if let Some(answer) = take(&batch, result) {
                return Ok(Some(answer));
            }
            spare.push(batch);
        }
    })
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use proptest::prelude::*;

    use super::*;
    use crate::trace::reader::LineReader;

    /// Every line as [`Lines`] cuts it: where, and its text or why it has none.
    fn cut(input: &[u8], capacity: usize, max: usize, limits: (usize, usize)) -> Vec<String> {
        let mut lines = Lines::new(BufReader::with_capacity(capacity, input), max);
        (lines.batch_lines, lines.batch_bytes) = limits;
        let mut batch = Batch::default();
        let mut have = Vec::new();
        loop {
            assert!(batch.fill(&mut lines).is_none(), "a slice reads");
            for entry in batch.entries() {
                have.push(format!("{:?} {:?}", entry.loc, batch.text(entry)));
            }
            if batch.is_last() {
                return have;
            }
        }
    }

    /// The same, as the line reader reads them.
    fn read(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = LineReader::with_max_line_bytes(input, max);
        let mut want = Vec::new();
        while let Some(line) = reader.next_line().expect("a slice reads") {
            let text = match line.content {
                LineContent::Text(text) => Ok(text),
                _ => Err(reason(&line, max)),
            };
            let text = text.as_ref().map(|t| *t).map_err(String::as_str);
            want.push(format!("{:?} {:?}", line.location(), text));
        }
        want
    }

    #[test]
    fn cuts_what_the_line_reader_reads() {
        let long = format!("{}\n", "x".repeat(300));
        for input in [
            &b""[..],
            b"\n\n  \n",
            b"{\"a\":1}",
            b"\xEF\xBB\xBF{\"a\":1}\r\n\r\n{}\n",
            b"\xEF\xBB\xBF",
            b"a\xFFb\n{}\r",
            b"\xFF\n\xEF\xBB\xBF\n\r",
            long.as_bytes(),
        ] {
            for (capacity, max) in [(1, 64), (3, 2), (7, 1000), (64, 0), (1 << 16, 64)] {
                assert_eq!(
                    cut(input, capacity, max, (BATCH_LINES, BATCH_BYTES)),
                    read(input, max),
                    "{input:?} read {capacity} at a time, lines of at most {max}"
                );
            }
        }
    }

    proptest! {
        #[test]
        fn cuts_any_input_as_the_line_reader_does(
            parts in prop::collection::vec(
                prop::sample::select(vec![
                    &b"{"[..], b"}", b"a", b" ", b"\t", b"\r", b"\n", b"\n", b"\xEF\xBB\xBF",
                    b"\xFF", b"\xC3\xA9", b"\xC3", b"xxxxxxxxxxxx",
                ]),
                0..60,
            ),
            capacity in 1usize..20,
            max in 0usize..16,
            batch_lines in 1usize..6,
            batch_bytes in 1usize..40,
        ) {
            let input = parts.concat();
            prop_assert_eq!(
                cut(&input, capacity, max, (batch_lines, batch_bytes)),
                read(&input, max)
            );
        }
    }
}
