//! A byte scanner over JSON text read from a reader: it finds where values, keys and
//! separators are, and what line and byte offset each starts at, without parsing
//! anything. A value's bytes are handed to the caller (or skipped), so that a document
//! is read one piece at a time and held only a piece at a time.
//!
//! It trusts brackets and quotes; whether the pieces are valid JSON is for the parser
//! the caller hands them to.

use std::io::{self, BufRead};

pub(super) struct Scanner {
    input: Box<dyn BufRead>,
    /// Byte offset of the next unread byte.
    pub(super) offset: u64,
    /// Line of the next unread byte.
    pub(super) line: u64,
    /// Bytes of BOM before the document.
    pub(super) bom: u64,
    /// While set, every byte read is appended to it: the text of a value whose
    /// members are scanned one by one, and which may turn out to be wanted whole.
    pub(super) recording: Option<Vec<u8>>,
}

/// An error of a document read again after a first pass found it valid: it changed.
pub(super) fn changed(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the document changed while it was read: {what}"),
    )
}

/// Bytes that end a scalar: a separator, a closing bracket or white space.
const SCALAR_END: [bool; 256] = table(b",]} \t\r\n");

/// Bytes that matter between strings inside a container: quotes and brackets.
const STRUCTURE: [bool; 256] = table(b"\"{}[]");

/// A table that says of each byte whether it is one of `bytes`.
const fn table(bytes: &[u8]) -> [bool; 256] {
    let mut table = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        table[bytes[i] as usize] = true;
        i += 1;
    }
    table
}

impl Scanner {
    /// Starts reading `input`, past a BOM if it has one.
    pub(super) fn new(mut input: Box<dyn BufRead>) -> io::Result<Scanner> {
        let bom = if input.fill_buf()?.starts_with(b"\xEF\xBB\xBF") {
            input.consume(3);
            3
        } else {
            0
        };
        Ok(Scanner {
            input,
            offset: bom,
            line: 1,
            bom,
            recording: None,
        })
    }

    pub(super) fn peek(&mut self) -> io::Result<Option<u8>> {
        Ok(self.input.fill_buf()?.first().copied())
    }

    pub(super) fn advance(&mut self, n: usize) {
        // The bytes consumed are the buffer's first: they were just looked at.
        if let Some(recording) = &mut self.recording
            && let Ok(buf) = self.input.fill_buf()
        {
            recording.extend_from_slice(&buf[..n.min(buf.len())]);
        }
        self.input.consume(n);
        self.offset += n as u64;
    }

    /// The bytes read from the input and not yet consumed, at least one unless the
    /// input has ended: a value there can be read in place ([`Scanner::consume`]).
    pub(super) fn buffered(&mut self) -> io::Result<&[u8]> {
        self.input.fill_buf()
    }

    /// Consumes the first `n` bytes of [`Scanner::buffered`], as [`Scanner::value`]
    /// would have read them.
    pub(super) fn consume(&mut self, n: usize) -> io::Result<()> {
        let buf = self.input.fill_buf()?;
        self.line += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        self.advance(n);
        Ok(())
    }

    /// Skips white space, then the byte `byte` if it comes next: whether it did.
    pub(super) fn eat(&mut self, byte: u8) -> io::Result<bool> {
        self.skip_ws()?;
        if self.peek()? == Some(byte) {
            self.advance(1);
            return Ok(true);
        }
        Ok(false)
    }

    /// The next non-blank byte, not consumed.
    pub(super) fn next_byte(&mut self) -> io::Result<Option<u8>> {
        self.skip_ws()?;
        self.peek()
    }

    /// Whether nothing but white space is left.
    pub(super) fn rest_is_blank(&mut self) -> io::Result<bool> {
        Ok(self.next_byte()?.is_none())
    }

    pub(super) fn skip_ws(&mut self) -> io::Result<()> {
        self.skip_lines().map(|_| ())
    }

    /// Skips white space, as [`Scanner::skip_ws`] does: the offset at which the line
    /// it stops on starts (where it started, if it crossed no line end).
    pub(super) fn skip_lines(&mut self) -> io::Result<u64> {
        let mut line_start = self.offset;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(line_start);
            }
            let mut n = 0;
            let mut lines = 0;
            for &b in buf {
                match b {
                    b'\n' => {
                        lines += 1;
                        line_start = self.offset + n as u64 + 1;
                    }
                    b' ' | b'\t' | b'\r' => {}
                    _ => break,
                }
                n += 1;
            }
            let all = n == buf.len();
            self.line += lines;
            self.advance(n);
            if !all {
                return Ok(line_start);
            }
        }
    }

    /// Skips spaces, tabs and `\r` up to the end of the line: the offset at which the
    /// line's content ends, before its `\n` or `\r\n` (or a `\r` ending the input), as
    /// a line is read ([`crate::trace::reader::LineReader`]).
    pub(super) fn line_end(&mut self) -> io::Result<u64> {
        let mut cr = false;
        loop {
            let buf = self.input.fill_buf()?;
            let n = buf
                .iter()
                .position(|b| !matches!(b, b' ' | b'\t' | b'\r'))
                .unwrap_or(buf.len());
            if n > 0 {
                cr = buf[n - 1] == b'\r';
            }
            let all = n == buf.len();
            self.advance(n);
            if !all || n == 0 {
                return Ok(self.offset - u64::from(cr));
            }
        }
    }

    /// An object key (or any string) at the next non-blank byte, decoded.
    pub(super) fn key(&mut self, bytes: &mut Vec<u8>) -> io::Result<Option<String>> {
        if self.next_byte()? != Some(b'"') {
            return Ok(None);
        }
        bytes.clear();
        self.value(Some(bytes))?;
        Ok(serde_json::from_slice::<String>(bytes).ok())
    }

    /// Reads one JSON value's bytes into `out` (or past them, without `out`): a
    /// string, a container by its brackets (strings inside skipped), or a scalar up to
    /// its delimiter.
    pub(super) fn value(&mut self, out: Option<&mut Vec<u8>>) -> io::Result<()> {
        self.value_upto(out, usize::MAX).map(|_| ())
    }

    /// [`Scanner::value`], keeping no more than `cap` bytes in `out`: the value's
    /// length, which is more than `out` holds when it was cut short.
    pub(super) fn value_upto(
        &mut self,
        mut out: Option<&mut Vec<u8>>,
        cap: usize,
    ) -> io::Result<u64> {
        let start = self.offset;
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escape = false;
        let mut scalar = false;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                if scalar && depth == 0 {
                    return Ok(self.offset - start);
                }
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "the document ends inside a value",
                ));
            }
            let mut end = None;
            let mut i = 0;
            while i < buf.len() {
                if in_string {
                    if escape {
                        escape = false;
                        i += 1;
                    }
                    // The rest of a run of plain text, eight bytes at a time, then a
                    // byte at a time, up to the next quote or escape: strings are most
                    // of a transcript's bytes.
                    i = crate::json::plain_words(buf, i, false);
                    while i < buf.len() && !matches!(buf[i], b'"' | b'\\') {
                        i += 1;
                    }
                    match buf.get(i) {
                        Some(b'"') => {
                            in_string = false;
                            i += 1;
                            if depth == 0 {
                                end = Some(i);
                                break;
                            }
                        }
                        Some(_) => {
                            escape = true;
                            i += 1;
                        }
                        None => {}
                    }
                    continue;
                }
                if scalar {
                    match buf[i..].iter().position(|&b| SCALAR_END[usize::from(b)]) {
                        Some(at) => {
                            end = Some(i + at);
                            break;
                        }
                        None => {
                            i = buf.len();
                            continue;
                        }
                    }
                }
                // Between strings, inside a container: up to the next quote or bracket.
                if depth > 0 {
                    while i < buf.len() && !STRUCTURE[usize::from(buf[i])] {
                        i += 1;
                    }
                    let Some(&b) = buf.get(i) else {
                        continue;
                    };
                    i += 1;
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        _ => {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(i);
                                break;
                            }
                        }
                    }
                    continue;
                }
                match buf[i] {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    // A closing bracket where a value should start: taken as a value
                    // of its own, for the parser to refuse.
                    b'}' | b']' => {
                        end = Some(i + 1);
                        break;
                    }
                    // A scalar: its first byte, then up to its end.
                    _ => scalar = true,
                }
                i += 1;
            }
            let take = end.unwrap_or(buf.len());
            let chunk = &buf[..take];
            self.line += memchr::memchr_iter(b'\n', chunk).count() as u64;
            if let Some(out) = out.as_deref_mut() {
                let room = cap.saturating_sub(out.len());
                out.extend_from_slice(&chunk[..take.min(room)]);
            }
            self.advance(take);
            if end.is_some() {
                return Ok(self.offset - start);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`Scanner::value`] as it was written first, a byte at a time: the reference
    /// the table-driven scan must agree with.
    fn reference(scan: &mut Scanner, mut out: Option<&mut Vec<u8>>) -> io::Result<()> {
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escape = false;
        let mut scalar = false;
        loop {
            let buf = scan.input.fill_buf()?;
            if buf.is_empty() {
                if scalar && depth == 0 {
                    return Ok(());
                }
                return Err(io::Error::new(io::ErrorKind::InvalidData, "ends inside"));
            }
            let mut end = None;
            for (i, &b) in buf.iter().enumerate() {
                if in_string {
                    if escape {
                        escape = false;
                    } else if b == b'\\' {
                        escape = true;
                    } else if b == b'"' {
                        in_string = false;
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    continue;
                }
                if scalar {
                    if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                        end = Some(i);
                        break;
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    _ if depth == 0 => scalar = true,
                    _ => {}
                }
            }
            let take = end.unwrap_or(buf.len());
            scan.line += memchr::memchr_iter(b'\n', &buf[..take]).count() as u64;
            if let Some(out) = out.as_deref_mut() {
                out.extend_from_slice(&buf[..take]);
            }
            scan.advance(take);
            if end.is_some() {
                return Ok(());
            }
        }
    }

    /// Every value of `text` read one after another (white space and separators
    /// between them skipped as the readers skip them), through a buffer of `capacity`
    /// bytes: each value's bytes, or where reading failed, with the place it ended.
    fn values(text: &[u8], capacity: usize, old: bool) -> Vec<(Option<Vec<u8>>, u64, u64)> {
        let input = io::BufReader::with_capacity(capacity, io::Cursor::new(text.to_vec()));
        let mut scan = Scanner::new(Box::new(input)).expect("memory reads");
        let mut seen = Vec::new();
        while scan.next_byte().expect("memory reads").is_some() && seen.len() < 64 {
            let mut bytes = Vec::new();
            let read = match old {
                true => reference(&mut scan, Some(&mut bytes)),
                false => scan.value(Some(&mut bytes)),
            };
            seen.push((read.ok().map(|()| bytes), scan.offset, scan.line));
            // A value that stopped at a separator leaves it: step over it.
            if seen
                .last()
                .is_some_and(|(bytes, ..)| bytes.as_ref().is_none_or(Vec::is_empty))
            {
                scan.advance(1);
            }
            let _ = scan.eat(b',');
        }
        seen
    }

    proptest! {
        #[test]
        fn values_are_found_as_a_byte_at_a_time_finds_them(
            text in proptest::collection::vec(
                prop_oneof![
                    Just(b'"'), Just(b'\\'), Just(b'{'), Just(b'}'), Just(b'['), Just(b']'),
                    Just(b','), Just(b':'), Just(b' '), Just(b'\n'), Just(b'1'), Just(b'a'),
                    Just(0xc3), any::<u8>(),
                ],
                0..80,
            ),
            capacity in 1usize..24,
        ) {
            prop_assert_eq!(values(&text, capacity, false), values(&text, capacity, true));
        }
    }

    #[test]
    fn long_strings_and_escapes_across_buffers() {
        let text = br#"{"a": "plain text longer than a word \" with \\ escapes \u00e9", "b": [1, {"c": "x"}], "d": null} "tail" 12 ] }"#;
        for capacity in 1..40 {
            assert_eq!(
                values(text, capacity, false),
                values(text, capacity, true),
                "{capacity}"
            );
        }
    }
}
