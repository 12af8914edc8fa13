//! RFC 8785 (JSON Canonicalization Scheme) straight from JSON text to canonical bytes.
//!
//! The canonical form has no whitespace, object members sorted by the UTF-16 code
//! units of their names, strings with only the escapes RFC 8785 §3.2.2.2 requires, and
//! numbers written as ECMAScript's `Number.prototype.toString` writes the IEEE 754
//! double they denote (§3.2.2.3). Duplicate member names and lone surrogates are
//! errors, as I-JSON (RFC 7493) requires.
//!
//! The text is never decoded into a `serde_json::Value`: a string without escapes and
//! a short integer are already canonical and are copied as they are, which keeps
//! `seal` and `verify` close to the speed of hashing itself.

use std::ops::Range;

use crate::json::skip_plain;

/// How deep arrays and objects may nest; deeper input is refused rather than risking
/// the stack.
pub const MAX_DEPTH: usize = 128;

/// Why a text has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CanonicalError {
    /// The text is not JSON.
    #[error("invalid JSON at byte {at}: {what}")]
    Syntax {
        /// Byte offset of the problem.
        at: usize,
        /// What was wrong there.
        what: &'static str,
    },
    /// A number too large for a double, which RFC 8785 cannot write.
    #[error("number `{text}` is not a finite IEEE 754 double")]
    NumberOutOfRange {
        /// The number as written.
        text: String,
    },
    /// An object names one member twice, so it has no one canonical form.
    #[error("member name {name} appears twice in one object")]
    DuplicateKey {
        /// The member name, as JSON.
        name: String,
    },
    /// A `\uD800`-style escape with no partner: not a Unicode string.
    #[error("string has a lone surrogate escape at byte {at}")]
    LoneSurrogate {
        /// Byte offset of the escape.
        at: usize,
    },
    /// Arrays and objects nested deeper than the limit.
    #[error("nesting deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// A member of the top-level object, as written to the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// The member's canonical name, quotes included, in the output.
    pub name: Range<usize>,
    /// The canonical value, in the output.
    pub value: Range<usize>,
}

/// A canonical object as written: its members in canonical order, and where it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// The members, in canonical order.
    pub members: Vec<Member>,
    /// Where the object ends in the output.
    pub end: usize,
}

impl Member {
    /// The whole member, `"name":value`, in the output.
    pub fn range(&self) -> Range<usize> {
        self.name.start..self.value.end
    }
}

/// Writes the canonical form of `text`, a JSON value, to `out` (which is cleared).
pub fn canonicalize(text: &str, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
    out.clear();
    let mut parser = Parser::new(text, Buffers::default());
    parser.ws();
    parser.value(out, 0)?;
    parser.end()
}

/// Canonicalizes `text`, a JSON object, into `out` (cleared first) and returns its
/// top-level members as written, in canonical order. `Ok(None)` when `text` is valid
/// JSON but not an object.
pub fn canonicalize_object(
    text: &str,
    out: &mut Vec<u8>,
) -> Result<Option<Object>, CanonicalError> {
    let mut scratch = Scratch::default();
    let Some(written) = scratch.object(text)? else {
        canonicalize(text, out)?;
        return Ok(None);
    };
    out.clear();
    out.extend_from_slice(written.bytes);
    Ok(Some(Object {
        members: written.members.to_vec(),
        end: out.len(),
    }))
}

/// Buffers reused from one record to the next, so that canonicalizing a log does not
/// allocate per record.
#[derive(Debug, Default)]
pub struct Scratch {
    out: Vec<u8>,
    buffers: Buffers,
    /// The top-level members [`Scratch::members`] found, in the text's order.
    slots: Vec<Slot>,
    /// Their names' [`name_key`]s and their indices in `slots`, sorted into canonical
    /// order (small, so that sorting moves little).
    order: Vec<(u64, usize)>,
}

/// A top-level member [`Scratch::members`] found: its canonical name and value.
#[derive(Debug, Clone, Copy)]
struct Slot {
    name: Piece,
    value: Piece,
}

/// Where a canonical name or value is: in the text read, or written to the scratch
/// buffer (when the text's own spelling is not canonical).
#[derive(Debug, Clone, Copy)]
struct Piece {
    in_text: bool,
    start: usize,
    end: usize,
}

impl Piece {
    /// The piece's bytes: in `text`, or in `written`, the scratch buffer.
    fn bytes<'b>(&self, text: &'b [u8], written: &'b [u8]) -> &'b [u8] {
        let source = if self.in_text { text } else { written };
        &source[self.start..self.end]
    }
}

/// The top-level members of an object, in canonical order, each name and value in
/// canonical form, as [`Scratch::members`] found them.
#[derive(Debug, Clone, Copy)]
pub struct Members<'s> {
    text: &'s [u8],
    written: &'s [u8],
    slots: &'s [Slot],
    order: &'s [(u64, usize)],
}

impl<'s> Members<'s> {
    /// Each member's canonical name (quoted) and value, in canonical order.
    pub fn iter(&self) -> impl Iterator<Item = (&'s [u8], &'s [u8])> + Clone + '_ {
        self.order.iter().map(|&(_, at)| {
            let slot = self.slots[at];
            (self.bytes(slot.name), self.bytes(slot.value))
        })
    }

    /// [`Members::iter`], each member with its whole `"name":value` when that is one
    /// run of the text (compact JSON), so that it is copied at once.
    pub(crate) fn with_runs(&self) -> impl Iterator<Item = MemberText<'s>> + '_ {
        self.order.iter().map(|&(key, at)| {
            let Slot { name, value } = self.slots[at];
            let run = (name.in_text && value.in_text && value.start == name.end + 1)
                .then(|| &self.text[name.start..value.end]);
            MemberText {
                key,
                name: self.bytes(name),
                value: self.bytes(value),
                run,
            }
        })
    }

    fn bytes(&self, piece: Piece) -> &'s [u8] {
        piece.bytes(self.text, self.written)
    }
}

/// A member's canonical name (quoted) and value, and the whole member when it is
/// written as one run (`"name":value`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MemberText<'s> {
    /// The name's [`name_key`].
    pub(crate) key: u64,
    pub(crate) name: &'s [u8],
    pub(crate) value: &'s [u8],
    pub(crate) run: Option<&'s [u8]>,
}

/// An object as [`Scratch::object`] wrote it.
#[derive(Debug, Clone, Copy)]
pub struct Written<'s> {
    /// The canonical form.
    pub bytes: &'s [u8],
    /// Its top-level members, in canonical order, as ranges of `bytes`.
    pub members: &'s [Member],
}

/// A parser's working memory: the members of the objects being written (innermost
/// last), and room to reorder an object's members.
#[derive(Debug, Default)]
struct Buffers {
    members: Vec<Member>,
    body: Vec<u8>,
}

impl Scratch {
    /// Canonicalizes `text`, a JSON object, and returns its canonical form with its
    /// top-level members. `Ok(None)` when `text` is valid JSON but not an object.
    ///
    /// A text that is already canonical (what `seal` writes) is only checked, not
    /// copied: its canonical form is the text itself.
    pub fn object<'s>(&'s mut self, text: &'s str) -> Result<Option<Written<'s>>, CanonicalError> {
        self.buffers.members.clear();
        if Verbatim::check(text, &mut self.buffers.members).is_some() {
            return Ok(Some(Written {
                bytes: text.as_bytes(),
                members: &self.buffers.members,
            }));
        }
        self.out.clear();
        self.out.reserve(text.len());
        let mut parser = Parser::new(text, std::mem::take(&mut self.buffers));
        parser.buffers.members.clear();
        parser.ws();
        let result = if parser.peek() == Some(b'{') {
            parser
                .object(&mut self.out, 0)
                .and_then(|()| parser.end())
                .map(|()| true)
        } else {
            parser
                .value(&mut self.out, 0)
                .and_then(|()| parser.end())
                .map(|()| false)
        };
        self.buffers = parser.buffers;
        Ok(result?.then_some(Written {
            bytes: &self.out,
            members: &self.buffers.members,
        }))
    }
}

impl Scratch {
    /// The top-level members of `text`, a JSON object, in canonical order and form,
    /// without writing the object: a name or value already canonical (nearly all) is
    /// left where it is in `text`, and only the others are written, to the scratch
    /// buffer. So `seal` copies each record once, straight into its sealed line.
    ///
    /// `None` whenever this cannot tell, for any reason (not an object, not JSON, a
    /// duplicate name, …): [`Scratch::object`] then says exactly why, or writes it.
    /// Whatever this returns, [`Scratch::object`] writes the same members.
    pub fn members<'s>(&'s mut self, text: &'s str) -> Option<Members<'s>> {
        self.find_members(text)?;
        Some(Members {
            text: text.as_bytes(),
            written: &self.out,
            slots: &self.slots,
            order: &self.order,
        })
    }

    /// Finds the members [`Scratch::members`] returns.
    fn find_members(&mut self, text: &str) -> Option<()> {
        self.slots.clear();
        self.order.clear();
        self.out.clear();
        let bytes = text.as_bytes();
        let mut pos = skip_ws(bytes, 0);
        if bytes.get(pos) != Some(&b'{') {
            return None;
        }
        pos = skip_ws(bytes, pos + 1);
        // Whether every name sorts by its bytes: none has an escape or a character
        // from U+E000 on (as `Parser::object` sorts).
        let mut bytewise = true;
        if bytes.get(pos) == Some(&b'}') {
            pos += 1;
        } else {
            loop {
                if bytes.get(pos) != Some(&b'"') {
                    return None;
                }
                let (name, key);
                if let Some((end, plain_key)) = plain_name(bytes, pos) {
                    let piece = Piece {
                        in_text: true,
                        start: pos,
                        end,
                    };
                    (name, key, pos) = (piece, plain_key, end);
                } else {
                    (name, pos) =
                        self.piece(text, pos, |check| check.string(), |p, out| p.string(out))?;
                    let quoted = name.bytes(bytes, &self.out);
                    bytewise &= quoted.iter().all(|&b| b != b'\\' && b < 0xEE);
                    key = name_key(quoted);
                }
                pos = skip_ws(bytes, pos);
                if bytes.get(pos) != Some(&b':') {
                    return None;
                }
                pos = skip_ws(bytes, pos + 1);
                let value;
                if let Some(end) = plain_string(bytes, pos) {
                    let piece = Piece {
                        in_text: true,
                        start: pos,
                        end,
                    };
                    (value, pos) = (piece, end);
                } else {
                    (value, pos) =
                        self.piece(text, pos, |check| check.value(1), |p, out| p.value(out, 1))?;
                }
                self.order.push((key, self.slots.len()));
                self.slots.push(Slot { name, value });
                pos = skip_ws(bytes, pos);
                match bytes.get(pos) {
                    Some(b',') => pos = skip_ws(bytes, pos + 1),
                    Some(b'}') => {
                        pos += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        if skip_ws(bytes, pos) != bytes.len() {
            return None;
        }
        let (out, slots, order) = (&self.out, &self.slots, &mut self.order);
        // Nearly always every name sorts by its bytes and no two share their first
        // eight bytes: then the keys alone decide the order, and no name is read.
        if bytewise {
            if !order.windows(2).all(|pair| pair[0].0 < pair[1].0) {
                order.sort_unstable();
            }
            if order.windows(2).all(|pair| pair[0].0 != pair[1].0) {
                return Some(());
            }
        }
        let name = |&(_, at): &(u64, usize)| unquote(slots[at].name.bytes(bytes, out));
        // Names that sort by their bytes compare by their keys first, so that a name is
        // read only when two share their first eight bytes.
        let compare = |a: &(u64, usize), b: &(u64, usize)| {
            if !bytewise {
                compare_quoted(name(a), name(b))
            } else if a.0 != b.0 {
                a.0.cmp(&b.0)
            } else {
                name(a).cmp(name(b))
            }
        };
        if !order
            .windows(2)
            .all(|pair| compare(&pair[0], &pair[1]).is_lt())
        {
            order.sort_unstable_by(compare);
            // A duplicate name: left to `Scratch::object`, which names it.
            if order
                .windows(2)
                .any(|pair| pair[0].0 == pair[1].0 && name(&pair[0]) == name(&pair[1]))
            {
                return None;
            }
        }
        Some(())
    }

    /// The canonical form of the name or value at `pos` of `text`: the text itself
    /// when `check` accepts it, else what `write` writes to the scratch buffer. Also
    /// where it ends.
    fn piece(
        &mut self,
        text: &str,
        pos: usize,
        check: impl FnOnce(&mut Verbatim<'_>) -> Option<()>,
        write: impl FnOnce(&mut Parser<'_>, &mut Vec<u8>) -> Result<(), CanonicalError>,
    ) -> Option<(Piece, usize)> {
        let mut verbatim = Verbatim {
            bytes: text.as_bytes(),
            pos,
        };
        if check(&mut verbatim).is_some() {
            let piece = Piece {
                in_text: true,
                start: pos,
                end: verbatim.pos,
            };
            return Some((piece, verbatim.pos));
        }
        let mut parser = Parser::new(text, std::mem::take(&mut self.buffers));
        parser.pos = pos;
        let start = self.out.len();
        let written = write(&mut parser, &mut self.out);
        let end = parser.pos;
        self.buffers = parser.buffers;
        written.ok()?;
        let piece = Piece {
            in_text: false,
            start,
            end: self.out.len(),
        };
        Some((piece, end))
    }
}

/// The first byte at or after `pos` that is not JSON whitespace.
fn skip_ws(bytes: &[u8], mut pos: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(pos) {
        pos += 1;
    }
    pos
}

/// [`compare_names`] for names without their quotes.
fn compare_quoted(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // Escapes spell characters below U+0020 (and `"`, `\\`) with a higher byte: decode.
    if a.contains(&b'\\') || b.contains(&b'\\') {
        return name_units(a).cmp(name_units(b));
    }
    match a.iter().zip(b).find(|(x, y)| x != y) {
        Some((&x, &y)) if (0xEE..=0xEF).contains(&x) && y >= 0xF0 => std::cmp::Ordering::Greater,
        Some((&x, &y)) if x >= 0xF0 && (0xEE..=0xEF).contains(&y) => std::cmp::Ordering::Less,
        _ => a.cmp(b),
    }
}

/// Checks that a text is an object already in canonical form, without writing
/// anything: no whitespace, members in order, strings with only the escapes RFC 8785
/// writes, numbers as ECMAScript writes them. It says `None` as soon as anything is
/// not (or not certainly) canonical, invalid JSON included, and leaves the verdict to
/// [`Parser`]; so whatever it accepts, [`Parser`] writes back unchanged.
struct Verbatim<'t> {
    bytes: &'t [u8],
    pos: usize,
}

impl Verbatim<'_> {
    /// The top-level members of `text`, pushed on `members`, when `text` is a
    /// canonical object.
    fn check(text: &str, members: &mut Vec<Member>) -> Option<()> {
        let mut check = Verbatim {
            bytes: text.as_bytes(),
            pos: 0,
        };
        check.object(0, Some(members))?;
        (check.pos == check.bytes.len()).then_some(())
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(depth, None),
            b'[' => self.array(depth),
            b'"' => self.string(),
            b'-' | b'0'..=b'9' => self.number(),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        self.bytes[self.pos..]
            .starts_with(word)
            .then(|| self.pos += word.len())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        if depth >= MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.value(depth + 1)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// An object whose member names are in increasing byte order, which is their
    /// canonical order when no name has an escape or a character from U+E000 on (a
    /// name that has is left to [`Parser`]). The top level's members go to `members`.
    fn object(&mut self, depth: usize, mut members: Option<&mut Vec<Member>>) -> Option<()> {
        if depth >= MAX_DEPTH || self.peek()? != b'{' {
            return None;
        }
        self.pos += 1;
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        let (mut last, mut last_key): (&[u8], u64) = (&[], 0);
        let mut first = true;
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let name_start = self.pos;
            let key = if let Some((end, key)) = plain_name(self.bytes, name_start) {
                self.pos = end;
                key
            } else {
                self.string()?;
                let name = &self.bytes[name_start + 1..self.pos - 1];
                if name.iter().any(|&b| b == b'\\' || b >= 0xEE) {
                    return None;
                }
                unquoted_key(name)
            };
            let name = &self.bytes[name_start + 1..self.pos - 1];
            // In order: compared by their keys, and whole only when those are equal.
            if !first && (key < last_key || (key == last_key && name <= last)) {
                return None;
            }
            (last, last_key, first) = (name, key, false);
            let name_end = self.pos;
            if self.peek()? != b':' {
                return None;
            }
            self.pos += 1;
            let value_start = self.pos;
            // Most values are strings without escapes: taken at once.
            match plain_string(self.bytes, value_start) {
                Some(end) => self.pos = end,
                None => self.value(depth + 1)?,
            }
            if let Some(members) = members.as_deref_mut() {
                members.push(Member {
                    name: name_start..name_end,
                    value: value_start..self.pos,
                });
            }
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string whose escapes are the ones [`write_char`] writes.
    fn string(&mut self) -> Option<()> {
        self.pos += 1;
        loop {
            self.pos = skip_plain(self.bytes, self.pos);
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' => {
                    let escape = self.bytes.get(self.pos + 1..)?;
                    self.pos += match escape.first()? {
                        b'"' | b'\\' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                        // `\u00xx`, lower-case, for a control character without a
                        // short escape.
                        b'u' => {
                            let hex = escape.get(1..5)?;
                            let code = u8::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16)
                                .ok()?;
                            let short = matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d);
                            let lower = hex[2..]
                                .iter()
                                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
                            if &hex[..2] != b"00" || code >= 0x20 || short || !lower {
                                return None;
                            }
                            6
                        }
                        _ => return None,
                    };
                }
                _ => return None,
            }
        }
    }

    /// A number as [`Parser::number`] copies it: an integer of at most 15 digits other
    /// than `-0`, or a decimal that [`already_canonical_decimal`] accepts.
    fn number(&mut self) -> Option<()> {
        let negative = self.peek()? == b'-';
        self.pos += usize::from(negative);
        let int_start = self.pos;
        match self.peek()? {
            b'0' => self.pos += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let int_digits = self.pos - int_start;
        match self.peek() {
            Some(b'.') => {
                self.pos += 1;
                let frac_start = self.pos;
                self.digits();
                if self.pos == frac_start || matches!(self.peek(), Some(b'e' | b'E')) {
                    return None;
                }
                let (int, frac) = (int_start..int_start + int_digits, frac_start..self.pos);
                canonical_decimal_digits(&self.bytes[int], &self.bytes[frac]).then_some(())
            }
            Some(b'e' | b'E') => None,
            _ => {
                let minus_zero = negative && self.bytes[int_start] == b'0';
                (int_digits <= 15 && !minus_zero).then_some(())
            }
        }
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

/// Compares two canonical member names (quoted, as written) by UTF-16 code units, as
/// RFC 8785 §3.2.3 orders members.
pub fn compare_names(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    // Without their quotes: a closing quote (0x22) sorts above ` ` and `!`, which would
    // put `"a b"` before `"a"`.
    compare_quoted(unquote(a), unquote(b))
}

/// A canonical name without its quotes.
fn unquote(name: &[u8]) -> &[u8] {
    name.get(1..name.len().saturating_sub(1))
        .unwrap_or_default()
}

/// The first eight bytes of a canonical name (quoted, as written) without its quotes,
/// padded with zero bytes, as a big-endian number. A canonical name has no zero byte
/// (control characters are escaped), so two names' keys compare as their unquoted
/// bytes do wherever the keys differ; equal keys are equal names when both are at most
/// eight bytes long.
pub(crate) fn name_key(quoted: &[u8]) -> u64 {
    unquoted_key(unquote(quoted))
}

/// A member name at `start` (its opening quote) of `bytes` that is plain ASCII: no
/// escape, no control character, nothing from 0x80 on. Such a name is canonical as it
/// is and sorts by its bytes. Returns where it ends (past its closing quote) and its
/// [`name_key`]; `None` for any other name (or not a name), left to the general path.
#[inline]
fn plain_name(bytes: &[u8], start: usize) -> Option<(usize, u64)> {
    let mut at = crate::json::plain_words(bytes, start + 1, true);
    while let Some(&byte) = bytes.get(at) {
        if byte == b'"' || byte == b'\\' || !(0x20..0x80).contains(&byte) {
            break;
        }
        at += 1;
    }
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let len = at - start - 1;
    // The eight bytes from the name's start in one load, and those past its end
    // masked off, when the text goes on that far (nearly always: a value follows).
    let key = match bytes.get(start + 1..start + 9) {
        Some(word) => {
            let word = u64::from_be_bytes(word.try_into().expect("bug: an 8-byte slice"));
            if len >= 8 {
                word
            } else {
                word & !(u64::MAX >> (8 * len))
            }
        }
        None => unquoted_key(&bytes[start + 1..at]),
    };
    Some((at + 1, key))
}

/// A string at `pos` of `bytes` without escapes or control characters, which is
/// canonical as it is (the text is UTF-8): where it ends, past its closing quote.
/// `None` for any other value, left to the general path.
#[inline]
fn plain_string(bytes: &[u8], pos: usize) -> Option<usize> {
    if bytes.get(pos) != Some(&b'"') {
        return None;
    }
    let end = skip_plain(bytes, pos + 1);
    (bytes.get(end) == Some(&b'"')).then_some(end + 1)
}

/// [`name_key`] of a name without its quotes.
fn unquoted_key(name: &[u8]) -> u64 {
    if let Some(first) = name.first_chunk::<8>() {
        return u64::from_be_bytes(*first);
    }
    // Byte by byte: a copy of a few bytes would be a call to `memcpy`.
    name.iter()
        .enumerate()
        .fold(0, |key, (i, &byte)| key | u64::from(byte) << (56 - 8 * i))
}

/// The UTF-16 code units of a canonical name (unquoted, with canonical escapes only).
fn name_units(name: &[u8]) -> impl Iterator<Item = u16> + '_ {
    // Canonical output is UTF-8 by construction.
    let text = std::str::from_utf8(name).unwrap_or_default();
    let mut chars = text.chars();
    std::iter::from_fn(move || {
        let c = chars.next()?;
        if c != '\\' {
            return Some(c);
        }
        Some(match chars.next()? {
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let hex: String = chars.by_ref().take(4).collect();
                u32::from_str_radix(&hex, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{0}')
            }
            other => other,
        })
    })
    .flat_map(|c| {
        let mut units = [0u16; 2];
        let n = c.encode_utf16(&mut units).len();
        units.into_iter().take(n)
    })
}

struct Parser<'t> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    buffers: Buffers,
}

impl<'t> Parser<'t> {
    fn new(text: &'t str, buffers: Buffers) -> Self {
        Parser {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            buffers,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn error(&self, what: &'static str) -> CanonicalError {
        CanonicalError::Syntax { at: self.pos, what }
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn end(&mut self) -> Result<(), CanonicalError> {
        self.ws();
        if self.pos == self.bytes.len() {
            Ok(())
        } else {
            Err(self.error("trailing characters after the value"))
        }
    }

    fn expect(&mut self, byte: u8, what: &'static str) -> Result<(), CanonicalError> {
        if self.peek() == Some(byte) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(what))
        }
    }

    fn value(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), CanonicalError> {
        match self.peek() {
            Some(b'{') => {
                // A nested object's members are needed only while it is written.
                let base = self.buffers.members.len();
                let written = self.object(out, depth);
                self.buffers.members.truncate(base);
                written
            }
            Some(b'[') => self.array(out, depth),
            Some(b'"') => self.string(out),
            Some(b'-' | b'0'..=b'9') => self.number(out),
            Some(b't') => self.literal(out, b"true"),
            Some(b'f') => self.literal(out, b"false"),
            Some(b'n') => self.literal(out, b"null"),
            Some(_) => Err(self.error("expected a value")),
            None => Err(self.error("unexpected end of input")),
        }
    }

    fn literal(&mut self, out: &mut Vec<u8>, word: &[u8]) -> Result<(), CanonicalError> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            out.extend_from_slice(word);
            Ok(())
        } else {
            Err(self.error("expected `true`, `false` or `null`"))
        }
    }

    fn array(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), CanonicalError> {
        if depth >= MAX_DEPTH {
            return Err(CanonicalError::TooDeep);
        }
        self.pos += 1;
        out.push(b'[');
        self.ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            out.push(b']');
            return Ok(());
        }
        loop {
            self.ws();
            self.value(out, depth + 1)?;
            self.ws();
            match self.peek() {
                Some(b',') => {
                    self.pos += 1;
                    out.push(b',');
                }
                Some(b']') => {
                    self.pos += 1;
                    out.push(b']');
                    return Ok(());
                }
                _ => return Err(self.error("expected `,` or `]` in an array")),
            }
        }
    }

    /// An object, whose members are sorted after they are written. Its members are
    /// left on `self.buffers.members`, from the length it had on entry, in canonical
    /// order.
    fn object(&mut self, out: &mut Vec<u8>, depth: usize) -> Result<(), CanonicalError> {
        if depth >= MAX_DEPTH {
            return Err(CanonicalError::TooDeep);
        }
        self.pos += 1;
        let start = out.len();
        out.push(b'{');
        let base = self.buffers.members.len();
        self.ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.ws();
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a member name"));
                }
                if self.buffers.members.len() > base {
                    out.push(b',');
                }
                let name_start = out.len();
                self.string(out)?;
                let name = name_start..out.len();
                self.ws();
                self.expect(b':', "expected `:` after a member name")?;
                out.push(b':');
                self.ws();
                let value_start = out.len();
                self.value(out, depth + 1)?;
                self.buffers.members.push(Member {
                    name,
                    value: value_start..out.len(),
                });
                self.ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    _ => return Err(self.error("expected `,` or `}` in an object")),
                }
            }
        }
        let Buffers { members, body } = &mut self.buffers;
        let members = &mut members[base..];
        // Names without escapes or characters from U+E000 on (nearly all) sort by their
        // bytes, which is cheaper than decoding them on every comparison.
        let bytewise = members
            .iter()
            .all(|m| out[m.name.clone()].iter().all(|&b| b != b'\\' && b < 0xEE));
        let sorted = members.windows(2).all(|pair| {
            let (a, b) = (&out[pair[0].name.clone()], &out[pair[1].name.clone()]);
            if bytewise {
                unquote(a) < unquote(b)
            } else {
                compare_names(a, b).is_lt()
            }
        });
        if sorted {
            // The common case: written in canonical order, commas and all.
            out.push(b'}');
            return Ok(());
        }
        if bytewise {
            members.sort_unstable_by(|a, b| {
                unquote(&out[a.name.clone()]).cmp(unquote(&out[b.name.clone()]))
            });
        } else {
            members
                .sort_unstable_by(|a, b| compare_names(&out[a.name.clone()], &out[b.name.clone()]));
        }
        if let Some(pair) = members
            .windows(2)
            .find(|pair| out[pair[0].name.clone()] == out[pair[1].name.clone()])
        {
            let name = String::from_utf8_lossy(&out[pair[0].name.clone()]).into_owned();
            return Err(CanonicalError::DuplicateKey { name });
        }
        // Reorder: copy the written members aside and write them back in canonical order.
        let body_start = start + 1;
        body.clear();
        body.extend_from_slice(&out[body_start..]);
        out.truncate(body_start);
        let local = |r: &Range<usize>| r.start - body_start..r.end - body_start;
        for (i, member) in members.iter_mut().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let name_start = out.len();
            out.extend_from_slice(&body[local(&member.name)]);
            out.push(b':');
            let value_start = out.len();
            out.extend_from_slice(&body[local(&member.value)]);
            *member = Member {
                name: name_start..value_start - 1,
                value: value_start..out.len(),
            };
        }
        out.push(b'}');
        Ok(())
    }

    fn string(&mut self, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
        self.pos += 1;
        out.push(b'"');
        loop {
            let run = self.pos;
            self.pos = skip_plain(self.bytes, self.pos);
            out.extend_from_slice(&self.bytes[run..self.pos]);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    out.push(b'"');
                    return Ok(());
                }
                Some(b'\\') => {
                    let c = self.escape()?;
                    write_char(c, out);
                }
                Some(_) => return Err(self.error("control character in a string")),
                None => return Err(self.error("unterminated string")),
            }
        }
    }

    /// Decodes one escape sequence (at a `\`), joining surrogate pairs.
    fn escape(&mut self) -> Result<char, CanonicalError> {
        let at = self.pos;
        self.pos += 1;
        let c = match self.peek() {
            Some(b'"') => '"',
            Some(b'\\') => '\\',
            Some(b'/') => '/',
            Some(b'b') => '\u{8}',
            Some(b'f') => '\u{c}',
            Some(b'n') => '\n',
            Some(b'r') => '\r',
            Some(b't') => '\t',
            Some(b'u') => {
                self.pos += 1;
                let high = self.hex4()?;
                return match high {
                    0xD800..=0xDBFF => {
                        if self.bytes[self.pos..].starts_with(b"\\u") {
                            self.pos += 2;
                            let low = self.hex4()?;
                            if !(0xDC00..=0xDFFF).contains(&low) {
                                return Err(CanonicalError::LoneSurrogate { at });
                            }
                            let code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00);
                            char::from_u32(code).ok_or(CanonicalError::LoneSurrogate { at })
                        } else {
                            Err(CanonicalError::LoneSurrogate { at })
                        }
                    }
                    0xDC00..=0xDFFF => Err(CanonicalError::LoneSurrogate { at }),
                    code => char::from_u32(code).ok_or(CanonicalError::LoneSurrogate { at }),
                };
            }
            _ => return Err(self.error("invalid escape in a string")),
        };
        self.pos += 1;
        Ok(c)
    }

    fn hex4(&mut self) -> Result<u32, CanonicalError> {
        let digits = self
            .text
            .get(self.pos..self.pos + 4)
            .filter(|d| d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| self.error("expected four hex digits after `\\u`"))?;
        self.pos += 4;
        u32::from_str_radix(digits, 16).map_err(|_| self.error("invalid `\\u` escape"))
    }

    fn number(&mut self, out: &mut Vec<u8>) -> Result<(), CanonicalError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => self.pos += 1,
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.error("expected a digit")),
        }
        let int_end = self.pos;
        let mut plain = true;
        if self.peek() == Some(b'.') {
            plain = false;
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit after `.`"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            plain = false;
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.error("expected a digit in an exponent"));
            }
            self.digits();
        }
        let text = &self.text[start..self.pos];
        // An integer of at most 15 digits is exactly a double and is written as it is,
        // except negative zero.
        let digits = int_end - start - usize::from(text.starts_with('-'));
        if plain && digits <= 15 {
            if text == "-0" {
                out.push(b'0');
            } else {
                out.extend_from_slice(text.as_bytes());
            }
            return Ok(());
        }
        if !plain && already_canonical_decimal(text) {
            out.extend_from_slice(text.as_bytes());
            return Ok(());
        }
        let value: f64 = text.parse().map_err(|_| self.error("invalid number"))?;
        if !value.is_finite() {
            return Err(CanonicalError::NumberOutOfRange {
                text: text.to_string(),
            });
        }
        write_number(value, out);
        Ok(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }
}

/// Whether a JSON number with a fraction and no exponent (`12.5`, `-0.00025`) is
/// already what ECMAScript writes for its double: at most 15 significant digits (so it
/// is the shortest text that round-trips: no other decimal that short denotes the same
/// double), no trailing zero in the fraction, and at least 10^-6 in magnitude (smaller
/// ones are written with an exponent).
fn already_canonical_decimal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let Some((int, frac)) = digits.split_once('.') else {
        return false;
    };
    !frac.contains(['e', 'E']) && canonical_decimal_digits(int.as_bytes(), frac.as_bytes())
}

/// [`already_canonical_decimal`] for a number's digits before and after its `.`.
fn canonical_decimal_digits(int: &[u8], frac: &[u8]) -> bool {
    if frac.last() == Some(&b'0') {
        return false;
    }
    let significant = if int == b"0" {
        let zeros = frac.iter().take_while(|&&b| b == b'0').count();
        if zeros > 5 || zeros == frac.len() {
            return false;
        }
        frac.len() - zeros
    } else {
        int.len() + frac.len()
    };
    significant <= 15
}

/// Writes `text` as a canonical JSON string.
pub fn write_string(text: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    crate::json::write_string_body(text, |piece| out.extend_from_slice(piece.as_bytes()));
    out.push(b'"');
}

/// Writes one character of a string's body in canonical form.
fn write_char(c: char, out: &mut Vec<u8>) {
    let mut buf = [0u8; 4];
    crate::json::write_string_body(c.encode_utf8(&mut buf), |piece| {
        out.extend_from_slice(piece.as_bytes());
    });
}

/// Writes a finite double as ECMAScript's `Number.prototype.toString` does
/// (ECMA-262, Number::toString, radix 10), which RFC 8785 §3.2.2.3 adopts. `ryu-js`
/// implements exactly that, including the choice of the even digit when two shortest
/// candidates are equally close (where Rust's own formatting differs).
pub fn write_number(value: f64, out: &mut Vec<u8>) {
    let mut buffer = ryu_js::Buffer::new();
    out.extend_from_slice(buffer.format_finite(value).as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn canonical(text: &str) -> String {
        let mut out = Vec::new();
        canonicalize(text, &mut out).unwrap_or_else(|e| panic!("{text}: {e}"));
        String::from_utf8(out).expect("canonical output is UTF-8")
    }

    fn number(value: f64) -> String {
        let mut out = Vec::new();
        write_number(value, &mut out);
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn numbers_follow_ecmascript() {
        // RFC 8785 Appendix B, as IEEE 754 bit patterns and their canonical text.
        let cases: &[(u64, &str)] = &[
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for &(bits, want) in cases {
            assert_eq!(number(f64::from_bits(bits)), want, "bits {bits:#018x}");
        }
    }

    #[test]
    fn rfc_8785_example() {
        // RFC 8785 §3.2.2, the example of its introduction.
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50,
                      2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        let want = r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#;
        assert_eq!(canonical(input), want);
    }

    #[test]
    fn members_sort_by_utf16_code_units() {
        // RFC 8785 §3.2.3: U+1F600 (surrogates D83D DE00) sorts before U+FB33.
        let input = "{\"\u{20ac}\":1,\"\\r\":2,\"\u{fb33}\":3,\"1\":4,\"\u{1f600}\":5,\"\u{80}\":6,\"\u{f6}\":7}";
        let want = "{\"\\r\":2,\"1\":4,\"\u{80}\":6,\"\u{f6}\":7,\"\u{20ac}\":1,\"\u{1f600}\":5,\"\u{fb33}\":3}";
        assert_eq!(canonical(input), want);
    }

    #[test]
    fn a_name_sorts_before_its_extensions() {
        assert_eq!(
            canonical(r#"{"a b":1,"a!":2,"a":3,"\u0001":4,"":5}"#),
            r#"{"":5,"\u0001":4,"a":3,"a b":1,"a!":2}"#
        );
        assert_eq!(canonical(r#"{"a":3,"a b":1}"#), r#"{"a":3,"a b":1}"#);
    }

    #[test]
    fn decimals_that_are_already_canonical_are_copied() {
        for (text, canonical_text) in [
            ("12.5", "12.5"),
            ("-0.000001", "-0.000001"),
            ("0.0000001", "1e-7"),
            ("1.50", "1.5"),
            ("0.0", "0"),
            ("-0.0", "0"),
            ("123456789012.345", "123456789012.345"),
            ("1234567890123.4567", "1234567890123.4568"),
            ("0.30000000000000004", "0.30000000000000004"),
        ] {
            assert_eq!(canonical(text), canonical_text, "{text}");
            let value: f64 = text.parse().expect("a number");
            let mut out = Vec::new();
            write_number(value, &mut out);
            assert_eq!(
                String::from_utf8(out).expect("ASCII"),
                canonical_text,
                "{text}"
            );
        }
    }

    #[test]
    fn short_integers_are_copied_and_long_ones_are_doubles() {
        assert_eq!(
            canonical("[-0, 10, 123456789012345]"),
            "[0,10,123456789012345]"
        );
        assert_eq!(canonical("12345678901234567890"), "12345678901234567000");
        assert_eq!(canonical("1.0"), "1");
        assert_eq!(canonical("-1.5e3"), "-1500");
    }

    #[test]
    fn refuses_what_has_no_canonical_form() {
        let mut out = Vec::new();
        for (text, want) in [
            (
                "{\"a\":1,\"a\":2}",
                "member name \"a\" appears twice in one object",
            ),
            ("1e400", "number `1e400` is not a finite IEEE 754 double"),
            (
                "\"\\ud800\"",
                "string has a lone surrogate escape at byte 1",
            ),
            (
                "\"\\udc00x\"",
                "string has a lone surrogate escape at byte 1",
            ),
            ("[1,]", "invalid JSON at byte 3: expected a value"),
            (
                "01",
                "invalid JSON at byte 1: trailing characters after the value",
            ),
            (
                "{\"a\" 1}",
                "invalid JSON at byte 5: expected `:` after a member name",
            ),
        ] {
            let have = canonicalize(text, &mut out).map_err(|e| e.to_string());
            assert_eq!(have, Err(want.to_string()), "{text}");
        }
        let deep = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert_eq!(canonicalize(&deep, &mut out), Err(CanonicalError::TooDeep));
    }

    #[test]
    fn objects_report_their_members_in_canonical_order() {
        let mut out = Vec::new();
        let object = canonicalize_object(r#"{"z": 1, "hash": "ab", "a": [1, 2]}"#, &mut out)
            .expect("valid")
            .expect("an object");
        let names: Vec<&[u8]> = object
            .members
            .iter()
            .map(|m| &out[m.name.clone()])
            .collect();
        assert_eq!(names, [&b"\"a\""[..], b"\"hash\"", b"\"z\""]);
        assert_eq!(&out[..object.end], br#"{"a":[1,2],"hash":"ab","z":1}"#);
        assert_eq!(&out[object.members[1].value.clone()], br#""ab""#);

        let object = canonicalize_object(r#"{"a":2,"b":1}"#, &mut out)
            .expect("valid")
            .expect("an object");
        assert_eq!(out, br#"{"a":2,"b":1}"#);
        assert_eq!(&out[object.members[1].range()], br#""b":1"#);
        assert_eq!(canonicalize_object("[1]", &mut out), Ok(None));
    }

    #[test]
    fn members_sharing_their_first_eight_bytes_sort_whole() {
        // Found in place, sorted by their keys and then whole: the same members, in
        // the same order, as the canonicalizer writes (which sorts without keys).
        for text in [
            r#"{"latency_us":1,"latency_ms":2,"latency":3,"latenc":4,"latency_":5}"#,
            r#"{"abcdefghZ":1,"abcdefghA":2,"abcdefgh":3,"abcdefg":4}"#,
            r#"{"b":1,"abcdefgh\u0001":2,"abcdefgh\n":3,"abcdefgh":4,"a":5}"#,
            r#"{"zz":1,"é":2,"a":3,"😀x":4,"😀":5}"#,
            r#"{"abcdefghX":1, "abcdefghX":2}"#,
        ] {
            let mut scratch = Scratch::default();
            let have: Option<Vec<(Vec<u8>, Vec<u8>)>> = scratch.members(text).map(|members| {
                members
                    .iter()
                    .map(|(n, v)| (n.to_vec(), v.to_vec()))
                    .collect()
            });
            let mut out = Vec::new();
            let want = canonicalize_object(text, &mut out).map(|object| {
                let object = object.expect("an object");
                object
                    .members
                    .iter()
                    .map(|m| (out[m.name.clone()].to_vec(), out[m.value.clone()].to_vec()))
                    .collect::<Vec<_>>()
            });
            match (have, want) {
                (Some(have), Ok(want)) => assert_eq!(have, want, "{text}"),
                // A duplicate is left to the canonicalizer, which names it.
                (None, Err(CanonicalError::DuplicateKey { .. })) => {}
                (have, want) => panic!("{text}: {have:?} vs {want:?}"),
            }
        }
    }

    #[test]
    fn what_is_already_canonical_is_checked_not_copied() {
        let verbatim = |text: &str| Verbatim::check(text, &mut Vec::new()).is_some();
        // Canonical records are taken as they are.
        for text in [
            "{}",
            r#"{"a":[1,-2.5,0.000001,true,false,null,{}],"b":{"c":"\u001f\n\"é"}}"#,
            r#"{"event":"a","hash":"00","id":123456789012345,"prev":"11","time":"t"}"#,
            r#"{"abcdefg":1,"abcdefgh":2,"abcdefghA":3,"abcdefghZ":4,"abcdefgi":5}"#,
        ] {
            assert!(verbatim(text), "{text}");
        }
        // Out of order past the first eight bytes of their names.
        assert!(!verbatim(r#"{"abcdefghZ":1,"abcdefghA":2}"#));
        assert!(!verbatim(r#"{"abcdefgh":1,"abcdefgh":2}"#));
        assert!(!verbatim(r#"{"abcdefgi":1,"abcdefghZ":2}"#));
        // Whatever is accepted, the canonicalizer writes back unchanged; these are
        // the near misses it must leave to the canonicalizer.
        for text in [
            r#"{"b":1,"a":2}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a": 1}"#,
            r#"{"a":1.50}"#,
            r#"{"a":1e3}"#,
            r#"{"a":-0}"#,
            r#"{"a":1234567890123456}"#,
            r#"{"a":"\/"}"#,
            r#"{"a":"\u0041"}"#,
            r#"{"a":"\u001F"}"#,
            r#"{"a":"\u000a"}"#,
            r#"{"a":"\u00+f"}"#,
            r#"{"\u0061":1}"#,
            r#"{"a":01}"#,
            r#"{"a":1}x"#,
            r#"[1]"#,
            "{\"a\":\"\u{1}\"}",
        ] {
            assert!(!verbatim(text), "{text}");
            let mut scratch = Scratch::default();
            let mut out = Vec::new();
            let canonical = canonicalize(text, &mut out).map(|()| out.clone());
            let written = scratch.object(text).map(|w| w.map(|w| w.bytes.to_vec()));
            match (canonical, written) {
                (Ok(canonical), Ok(Some(written))) => assert_eq!(canonical, written, "{text}"),
                (Ok(_), Ok(None)) => assert!(!text.starts_with('{'), "{text}"),
                (Err(a), Err(b)) => assert_eq!(a, b, "{text}"),
                (a, b) => panic!("{text}: {a:?} vs {b:?}"),
            }
        }
    }

    /// Texts at the edges of the fast paths: plain ASCII names of every length up to
    /// past eight bytes, names ending where the text ends, escapes, control and
    /// non-ASCII characters in names, members out of order or in order only past their
    /// first eight bytes, duplicates, numbers, nesting, and `hash`/`prev` anywhere.
    const EDGES: &[&str] = &[
        r#"{"a":1}"#,
        r#"{"":1}"#,
        r#"{"":1,"a":2}"#,
        r#"{"a":2,"":1}"#,
        r#"{"abcdefg":1,"abcdefgh":2,"abcdefghi":3}"#,
        r#"{"abcdefghi":3,"abcdefgh":2,"abcdefg":1}"#,
        r#"{"abcdefgh":1}"#,
        r#"{"z":{"abcdefgh":1}}"#,
        r#"{"abcdefghB":1,"abcdefghA":2}"#,
        r#"{"b":1,"a":{"d":[1,2.5,{"f":null,"e":true}],"c":"x"}}"#,
        r#"{"a":1,"a":2}"#,
        r#"{"abcdefghij":1,"abcdefghij":2}"#,
        r#"{"a":1, "b":2}"#,
        r#"{ "a" : 1 }"#,
        r#"{"a\"b":1,"a":2}"#,
        r#"{"a\u0062":1,"ab":2}"#,
        r#"{"\u0001":1,"\n":2,"a":3}"#,
        r#"{"\/":1}"#,
        r#"{"é":1,"e":2,"f":3}"#,
        r#"{"😀":1,"\ufb33":2,"\u20ac":3}"#,
        "{\"a\u{7f}\":1,\"a\":2}",
        "{\"a\u{1}\":1}",
        r#"{"a":-0,"b":1.50,"c":1e3,"d":0.000001,"e":1e-7,"f":12345678901234567890}"#,
        r#"{"hash":"x","prev":"y"}"#,
        r#"{"prev":"y","hash":"x","a":1}"#,
        r#"{"z":1,"prev":"y","a":2,"hash":"x"}"#,
        r#"{"hasha":1,"has":2,"hash":3,"hash\u0000":4}"#,
        r#"{"a":"\u00e9\t","b":"\u001F"}"#,
        "{\"b\":\"é 😀\",\"a\":\"\u{7f}\"}",
        "{\"b\":\"\u{1f}\",\"a\":1}",
        r#"{"b":"x\"y","a":"\/"}"#,
        r#"{"a":1}  "#,
        r#"{"a":1"#,
        r#"{"a:1}"#,
        r#"{"a":1,}"#,
        r#"{"a"#,
        r#"{""#,
        r#"[{"a":1}]"#,
    ];

    #[test]
    fn the_fast_paths_agree_with_the_general_canonicalizer_at_their_edges() {
        for &text in EDGES {
            let mut want = Vec::new();
            let want = canonicalize(text, &mut want).map(|()| want);
            // Checked in place or written: the general canonicalizer's bytes, or its
            // error.
            let mut scratch = Scratch::default();
            let written = scratch.object(text).map(|w| w.map(|w| w.bytes.to_vec()));
            match (&want, written) {
                (Ok(want), Ok(Some(have))) => assert_eq!(&have, want, "{text}"),
                (Ok(_), Ok(None)) => assert!(!text.starts_with('{'), "{text}"),
                (Err(a), Err(b)) => assert_eq!(a, &b, "{text}"),
                (a, b) => panic!("{text}: {a:?} vs {b:?}"),
            }
            // Found in place: the same members, or `None` where the general path has to
            // say why.
            let members = scratch.members(text).map(|members| {
                let mut joined = b"{".to_vec();
                for (i, (name, value)) in members.iter().enumerate() {
                    if i > 0 {
                        joined.push(b',');
                    }
                    joined.extend_from_slice(name);
                    joined.push(b':');
                    joined.extend_from_slice(value);
                }
                joined.push(b'}');
                joined
            });
            match (&want, members) {
                (Ok(want), Some(have)) => assert_eq!(&have, want, "{text}"),
                (Ok(_), None) => assert!(!text.starts_with('{'), "{text}"),
                (Err(_), None) => {}
                (Err(want), Some(have)) => panic!("{text}: {want:?} vs {have:?}"),
            }
        }
    }

    #[test]
    fn plain_names_have_the_key_of_their_bytes() {
        for text in [
            r#""":1"#,
            r#""a":1"#,
            r#""abcdefg":1"#,
            r#""abcdefgh":1"#,
            r#""abcdefghi":1"#,
            r#""a""#,
            r#""abcdefghijklmnop""#,
        ] {
            let (end, key) = plain_name(text.as_bytes(), 0).expect("a plain name");
            assert_eq!(key, name_key(&text.as_bytes()[..end]), "{text}");
            assert_eq!(text.as_bytes()[end - 1], b'"', "{text}");
        }
        for text in [r#""é":1"#, r#""a\"b":1"#, "\"a\u{1}\":1", r#""a"#, "x"] {
            assert_eq!(plain_name(text.as_bytes(), 0), None, "{text}");
        }
        // Values: any string without escapes or control characters, non-ASCII included.
        assert_eq!(plain_string("\"é 😀 /\",1".as_bytes(), 0), Some(11));
        assert_eq!(plain_string(br#""""#, 0), Some(2));
        for text in [&br#""a\nb""#[..], b"\"a\x01\"", br#""a"#, b"1"] {
            assert_eq!(plain_string(text, 0), None, "{text:?}");
        }
    }
}
