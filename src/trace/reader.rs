//! A streaming line reader for JSONL traces.
//!
//! Traces can be far bigger than memory, so lines are read one at a time through
//! [`BufRead::fill_buf`]: lent from the reader's own buffer when a line is whole in
//! it (most are), else copied into one reused buffer, each with the position a diagnostic
//! needs (1-based line number, byte offset and length). A line longer than the limit is
//! skipped up to its newline without being buffered, so memory stays bounded whatever
//! the input. Blank lines are not records and are skipped, but still counted.

use std::io::{self, BufRead};

use crate::trace::record::Location;

/// The longest line [`LineReader::new`] buffers, in bytes.
pub const DEFAULT_MAX_LINE_BYTES: usize = 64 * 1024 * 1024;

/// The UTF-8 byte order mark some editors write at the start of a file.
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// Bytes a line may hold beyond its content: a BOM before it and a `\r` after it. The
/// reader buffers up to the limit plus these, so any line within the limit is whole.
const FRAMING_BYTES: usize = BOM.len() + 1;

/// Reads non-blank lines from `R`, lending each one until the next call.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    max_line_bytes: usize,
    /// The current line's bytes, reused across lines, when it is not lent from the
    /// inner reader's own buffer.
    buf: Vec<u8>,
    /// Bytes of the inner reader's buffer lent as the current line (its newline
    /// included), consumed when the next line is read.
    lent: usize,
    /// Lines started so far, blank ones included.
    lines: u64,
    /// Byte offset of the next unread byte.
    offset: u64,
    /// Where the text of the line just read is, when it is held: in the inner reader's
    /// buffer (lent) or in `buf`.
    held: Option<Held>,
}

/// Where a line held is: `start..end` of the inner reader's buffer, or of the line
/// reader's own.
#[derive(Debug, Clone, Copy)]
struct Held {
    start: usize,
    end: usize,
    lent: bool,
}

/// One line of input, borrowed from the reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'b> {
    /// 1-based line number, counting blank lines too.
    pub number: u64,
    /// Byte offset of the line's content in the input (after a BOM, if any).
    pub offset: u64,
    /// Byte length of the line's content, without its `\n` or `\r\n`.
    pub len: u64,
    /// What the line holds.
    pub content: LineContent<'b>,
}

/// What a line holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineContent<'b> {
    /// The line, without its `\n` or `\r\n`.
    Text(&'b str),
    /// The line is not UTF-8; `valid_up_to` is the byte index (within the line) of the
    /// first bad byte.
    InvalidUtf8 {
        /// Index of the first bad byte.
        valid_up_to: usize,
    },
    /// The line is longer than the limit; the reader skipped it without buffering it.
    TooLong,
}

impl Line<'_> {
    /// The line's location, for a record that is the whole line.
    pub fn location(&self) -> Location {
        Location {
            line: self.number,
            offset: self.offset,
            len: self.len,
            pointer: Default::default(),
        }
    }
}

/// The shape of the line just read into the buffer, before its content is borrowed.
struct Scanned {
    number: u64,
    /// Offset of the line's first byte, BOM included.
    start: u64,
    /// Bytes of BOM at the start of the buffer.
    skip: usize,
    len: u64,
    too_long: bool,
    blank: bool,
    /// Whether the line is lent from the inner reader's buffer, not copied.
    lent: bool,
}

impl Scanned {
    /// The `number`th line, of `total` bytes without its newline from offset `start`,
    /// whose last byte is `last` and whose first bytes are `kept` (all of them when
    /// it is within the limit of `max` bytes and its framing).
    fn of(
        kept: &[u8],
        total: u64,
        last: Option<u8>,
        start: u64,
        number: u64,
        max: usize,
    ) -> Scanned {
        let skip = if start == 0 && kept.starts_with(BOM) {
            BOM.len()
        } else {
            0
        };
        let cr = u64::from(last == Some(b'\r') && total > skip as u64);
        let len = total - skip as u64 - cr;
        let too_long = len > max as u64;
        // A skipped over-long line is reported even if it is all whitespace: its bytes
        // were not kept, and such a line is not worth a second pass.
        let blank = !too_long
            && kept[skip..skip + len as usize]
                .iter()
                .all(|&byte| matches!(byte, b' ' | b'\t' | b'\r'));
        Scanned {
            number,
            start,
            skip,
            len,
            too_long,
            blank,
            lent: false,
        }
    }
}

impl<R: BufRead> LineReader<R> {
    /// A reader with the default line limit, [`DEFAULT_MAX_LINE_BYTES`].
    pub fn new(inner: R) -> Self {
        Self::with_max_line_bytes(inner, DEFAULT_MAX_LINE_BYTES)
    }

    /// A reader that reports lines longer than `max` bytes as [`LineContent::TooLong`].
    pub fn with_max_line_bytes(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            max_line_bytes: max,
            buf: Vec::new(),
            lent: 0,
            lines: 0,
            offset: 0,
            held: None,
        }
    }

    /// The longest line this reader buffers, in bytes.
    pub fn max_line_bytes(&self) -> usize {
        self.max_line_bytes
    }

    /// Next non-blank line. `Ok(None)` at end of input. Lines that are empty or only
    /// whitespace are skipped (they are not records).
    pub fn next_line(&mut self) -> io::Result<Option<Line<'_>>> {
        // The scans return plain data so that the loop holds no borrow of a buffer.
        let line = loop {
            self.inner.consume(std::mem::take(&mut self.lent));
            let line = match self.lend_line()? {
                Some(line) => line,
                None => match self.scan_line()? {
                    None => return Ok(None),
                    Some(line) => line,
                },
            };
            if !line.blank {
                break line;
            }
        };
        self.held = None;
        let content = if line.too_long {
            LineContent::TooLong
        } else {
            // Within the limit the whole line is at hand: lent, or buffered.
            let held = Held {
                start: line.skip,
                end: line.skip + line.len as usize,
                lent: line.lent,
            };
            self.held = Some(held);
            match std::str::from_utf8(self.held_bytes(held)?) {
                Ok(text) => LineContent::Text(text),
                Err(err) => LineContent::InvalidUtf8 {
                    valid_up_to: err.valid_up_to(),
                },
            }
        };
        Ok(Some(Line {
            number: line.number,
            offset: line.start + line.skip as u64,
            len: line.len,
            content,
        }))
    }

    /// The bytes of the line held at `held`. Inlined: on the path of every line read,
    /// a call costs about 30 instructions a line.
    #[inline(always)]
    fn held_bytes(&mut self, held: Held) -> io::Result<&[u8]> {
        match held.lent {
            true => self
                .inner
                .fill_buf()?
                .get(held.start..held.end)
                .ok_or_else(|| {
                    io::Error::other("the input's buffer changed while a line was read")
                }),
            false => Ok(&self.buf[held.start..held.end]),
        }
    }

    /// The bytes of the line [`LineReader::next_line`] gave last, owned: moved out of
    /// this reader's buffer when the line was copied there (a line longer than the
    /// inner reader's buffer), so that a long line is not held twice; else copied from
    /// the inner reader's buffer. Empty after a line too long to hold, or when taken
    /// already.
    pub fn take_line(&mut self) -> io::Result<Vec<u8>> {
        let Some(held) = self.held.take() else {
            return Ok(Vec::new());
        };
        if held.lent {
            return Ok(self.held_bytes(held)?.to_vec());
        }
        let mut line = std::mem::take(&mut self.buf);
        line.truncate(held.end);
        line.drain(..held.start);
        Ok(line)
    }

    /// The next line, blank or not, when all of it and its newline are in the inner
    /// reader's buffer: lent from there, not copied (most lines are). `None` when the
    /// line must be read by [`LineReader::scan_line`].
    fn lend_line(&mut self) -> io::Result<Option<Scanned>> {
        let available = loop {
            match self.inner.fill_buf() {
                Ok(available) => break available,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
        };
        // A line over the limit is lent too: its bytes are not copied, only measured.
        let Some(total) = find_newline(available) else {
            return Ok(None);
        };
        let bytes = &available[..total];
        let start = self.offset;
        self.lent = total + 1;
        self.offset += total as u64 + 1;
        self.lines += 1;
        let (last, number, max) = (bytes.last().copied(), self.lines, self.max_line_bytes);
        Ok(Some(Scanned {
            lent: true,
            ..Scanned::of(bytes, total as u64, last, start, number, max)
        }))
    }

    /// Reads the next line, blank or not, into the buffer; `None` at end of input.
    fn scan_line(&mut self) -> io::Result<Option<Scanned>> {
        self.buf.clear();
        let keep = self.max_line_bytes.saturating_add(FRAMING_BYTES);
        let mut total: u64 = 0;
        let mut last = None;
        let mut newline = false;
        loop {
            let available = match self.inner.fill_buf() {
                Ok(available) => available,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if available.is_empty() {
                break;
            }
            let room = keep.saturating_sub(self.buf.len());
            let (chunk_len, found) = if room > 0 {
                copy_line(&available[..available.len().min(room)], &mut self.buf)
            } else {
                // Past the limit, bytes are only counted, so memory stays bounded.
                match find_newline(available) {
                    Some(index) => (index, true),
                    None => (available.len(), false),
                }
            };
            if let Some(&byte) = available[..chunk_len].last() {
                last = Some(byte);
            }
            total += chunk_len as u64;
            self.inner.consume(chunk_len + usize::from(found));
            if found {
                newline = true;
                break;
            }
        }
        if total == 0 && !newline {
            return Ok(None);
        }

        let start = self.offset;
        self.offset += total + u64::from(newline);
        self.lines += 1;
        Ok(Some(Scanned::of(
            &self.buf,
            total,
            last,
            start,
            self.lines,
            self.max_line_bytes,
        )))
    }
}

/// Appends `bytes` up to their first newline to `buf`. Returns how many bytes that is
/// (newline excluded) and whether a newline ended them.
fn copy_line(bytes: &[u8], buf: &mut Vec<u8>) -> (usize, bool) {
    let (len, found) = match find_newline(bytes) {
        Some(index) => (index, true),
        None => (bytes.len(), false),
    };
    buf.extend_from_slice(&bytes[..len]);
    (len, found)
}

/// The first newline of `bytes`, found with the `memchr` crate's vector search: it
/// is on the path of every line read, where a byte loop (or the standard library's
/// word-at-a-time search) costs a tenth of checking the line.
pub(crate) fn find_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

#[cfg(test)]
mod tests {
    use std::io::BufReader;

    use super::*;

    /// An owned copy of a line, to collect and compare.
    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Want {
        Text(String),
        InvalidUtf8(usize),
        TooLong,
    }

    fn text(line: &str) -> Want {
        Want::Text(line.to_string())
    }

    /// Reads all of `input` through a buffer of `capacity` bytes, checking each line's
    /// offset and length against the input.
    #[track_caller]
    fn read_all(input: &[u8], capacity: usize, max: usize) -> Vec<(u64, Want)> {
        let mut reader =
            LineReader::with_max_line_bytes(BufReader::with_capacity(capacity, input), max);
        let mut have = Vec::new();
        while let Some(line) = reader.next_line().expect("reading a slice cannot fail") {
            let start = line.offset as usize;
            let end = start + line.len as usize;
            let rest = &input[end..];
            assert!(
                matches!(rest, [] | [b'\r'])
                    || rest.starts_with(b"\n")
                    || rest.starts_with(b"\r\n"),
                "line {} (capacity {capacity}) does not end at a line terminator",
                line.number
            );
            let want = match line.content {
                LineContent::Text(text) => {
                    assert_eq!(
                        &input[start..end],
                        text.as_bytes(),
                        "line {} (capacity {capacity})",
                        line.number
                    );
                    Want::Text(text.to_string())
                }
                LineContent::InvalidUtf8 { valid_up_to } => Want::InvalidUtf8(valid_up_to),
                LineContent::TooLong => Want::TooLong,
            };
            have.push((line.number, want));
        }
        assert!(
            reader.next_line().unwrap().is_none(),
            "end of input is sticky"
        );
        have
    }

    /// Checks `input` read through buffers of several sizes, so lines straddle buffer
    /// boundaries in every way.
    #[track_caller]
    fn check(input: &[u8], max: usize, want: &[(u64, Want)]) {
        for capacity in [1, 2, 3, 4, 7, 8192] {
            let have = read_all(input, capacity, max);
            assert_eq!(have, want, "capacity {capacity}");
        }
    }

    #[test]
    fn a_line_taken_is_its_text_whether_lent_or_copied() {
        let input = "\u{feff}{\"a\":1}\r\n\n  {\"b\": [2, 3]}  \nnot json\r\n\u{e9}\n{\"c\":4}";
        let want: Vec<&str> = input
            .trim_start_matches('\u{feff}')
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| line.trim_end_matches('\r'))
            .collect();
        // Through a buffer too small for a line (copied) and one that holds them all
        // (lent), each line taken, or every other line, the rest read on as before.
        for capacity in [1, 3, 8192] {
            for every in [1, 2] {
                let reader = BufReader::with_capacity(capacity, input.as_bytes());
                let mut reader = LineReader::new(reader);
                let mut have = Vec::new();
                while let Some(line) = reader.next_line().expect("reading a slice cannot fail") {
                    let LineContent::Text(text) = line.content else {
                        panic!("line {} is text", line.number);
                    };
                    let text = text.to_string();
                    if have.len() % every == 0 {
                        let taken = reader.take_line().expect("the line is at hand");
                        assert_eq!(taken, text.as_bytes(), "capacity {capacity}");
                        assert!(reader.take_line().expect("nothing").is_empty());
                    }
                    have.push(text);
                }
                assert_eq!(have, want, "capacity {capacity}, every {every}");
            }
        }
        // A line too long to hold is not taken, nor is the line before it.
        let input = &b"{\"a\":1}\n{\"b\": 22}\n"[..];
        let mut reader = LineReader::with_max_line_bytes(BufReader::new(input), 8);
        let line = reader.next_line().expect("a line").expect("a first line");
        assert_eq!(line.content, LineContent::Text("{\"a\":1}"));
        let line = reader.next_line().expect("a line").expect("a second line");
        assert_eq!(line.content, LineContent::TooLong);
        assert!(reader.take_line().expect("nothing").is_empty());
    }

    #[test]
    fn reads_lf_and_crlf_lines() {
        check(
            b"{\"a\":1}\r\n{\"b\":2}\n{\"c\":3}\r\n",
            DEFAULT_MAX_LINE_BYTES,
            &[
                (1, text("{\"a\":1}")),
                (2, text("{\"b\":2}")),
                (3, text("{\"c\":3}")),
            ],
        );
    }

    #[test]
    fn yields_a_final_line_without_newline() {
        check(
            b"{\"a\":1}\n{\"b\"",
            DEFAULT_MAX_LINE_BYTES,
            &[(1, text("{\"a\":1}")), (2, text("{\"b\""))],
        );
        check(b"{}\r", 16, &[(1, text("{}"))]);
    }

    #[test]
    fn skips_blank_lines_but_counts_them() {
        check(
            b"\n  \n{}\n\t\r\n\r\n{ }\n\n \t",
            DEFAULT_MAX_LINE_BYTES,
            &[(3, text("{}")), (6, text("{ }"))],
        );
    }

    #[test]
    fn empty_input_has_no_lines() {
        check(b"", 16, &[]);
        check(b"\n\n\r\n", 16, &[]);
    }

    #[test]
    fn skips_a_leading_bom_only() {
        let input = "\u{FEFF}{}\n\u{FEFF}{}\n";
        check(
            input.as_bytes(),
            DEFAULT_MAX_LINE_BYTES,
            &[(1, text("{}")), (2, text("\u{FEFF}{}"))],
        );
        let mut reader = LineReader::new(input.as_bytes());
        let have = reader.next_line().unwrap().unwrap();
        assert_eq!((have.offset, have.len), (3, 2));

        check("\u{FEFF}\n{}".as_bytes(), 16, &[(2, text("{}"))]);
        check("\u{FEFF}\r\n{}".as_bytes(), 16, &[(2, text("{}"))]);
    }

    #[test]
    fn reports_invalid_utf8_and_reads_on() {
        check(
            b"{\"a\":\"\xff\"}\r\n{}\n",
            DEFAULT_MAX_LINE_BYTES,
            &[(1, Want::InvalidUtf8(6)), (2, text("{}"))],
        );
    }

    #[test]
    fn skips_an_over_long_line_and_reads_on() {
        let long = format!("{{\"a\":\"{}\"}}", "x".repeat(100));
        let input = format!("{long}\r\n{{}}\n{long}");
        check(
            input.as_bytes(),
            16,
            &[(1, Want::TooLong), (2, text("{}")), (3, Want::TooLong)],
        );

        let mut reader = LineReader::with_max_line_bytes(input.as_bytes(), 16);
        let have = reader.next_line().unwrap().unwrap();
        assert_eq!((have.offset, have.len), (0, long.len() as u64));
    }

    #[test]
    fn limit_counts_content_only() {
        let exact = "{\"a\":\"xxxxxxxx\"}";
        assert_eq!(exact.len(), 16);
        let input = format!("\u{FEFF}{exact}\r\n{exact}\r\n{exact} \r\n");
        check(
            input.as_bytes(),
            16,
            &[(1, text(exact)), (2, text(exact)), (3, Want::TooLong)],
        );
    }

    #[test]
    fn over_long_lines_are_not_buffered() {
        let input = format!("{}\n{{}}\n", "x".repeat(1 << 20));
        let mut reader =
            LineReader::with_max_line_bytes(BufReader::with_capacity(4096, input.as_bytes()), 16);
        let have = reader.next_line().unwrap().unwrap();
        assert_eq!(have.content, LineContent::TooLong);
        assert_eq!(have.len, 1 << 20);
        assert!(
            reader.buf.capacity() < 4096,
            "buffered {} bytes",
            reader.buf.capacity()
        );
        let have = reader.next_line().unwrap().unwrap();
        assert_eq!((have.number, have.content), (2, LineContent::Text("{}")));
    }

    #[test]
    fn location_is_the_whole_line() {
        let mut reader = LineReader::new(&b"\n  {}  \r\n"[..]);
        let have = reader.next_line().unwrap().unwrap().location();
        let want = Location {
            line: 2,
            offset: 1,
            len: 6,
            pointer: Default::default(),
        };
        assert_eq!(have, want);
    }
}
