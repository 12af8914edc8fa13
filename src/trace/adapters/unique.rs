//! Whether JSON text is one valid value without a key twice, found by one scan of the
//! text that builds nothing: no value, no copy of a key (unless it has escapes), one
//! list of the keys of the objects being scanned, reused by all of them.
//!
//! It accepts exactly what [`super::document::parse_unique`] parses (serde_json's
//! grammar and limits: control characters and lone surrogates in strings, numbers out
//! of `f64`'s range and values nested 128 deep are errors) and says nothing of where
//! or what is wrong: a caller that gets `false` reads the text the slow way, which
//! does.
//!
//! The same scan can also note where the members and elements of the outer
//! containers are ([`Tape`]), so that a reader of small documents (an MCP log's
//! lines) finds the values it wants without scanning the text again; a tape is kept
//! and reused from one text to the next, so scanning a line allocates nothing.

use std::borrow::Cow;

use rustc_hash::FxHashSet;

/// How deep serde_json nests containers: the 128th is an error.
const MAX_DEPTH: usize = 128;

/// How many keys of one object are searched in a list; more go into a set.
const LISTED: usize = 16;

/// Whether `text` is one valid JSON value (with white space around it) in which no
/// object has a key twice. Strings must be valid UTF-8; elsewhere only ASCII is valid.
pub(super) fn valid_without_duplicates(text: &[u8]) -> bool {
    valid_without_duplicates_inside(text, 0)
}

/// [`valid_without_duplicates`] of `text` found inside `above` containers of a larger
/// text, which nests too deep where their levels and its own make 128.
pub(super) fn valid_without_duplicates_inside(text: &[u8], above: usize) -> bool {
    thread_local! {
        // The scan's lists, kept for the next text: a call allocates nothing once they
        // have grown to the texts' size.
        static TAPE: std::cell::RefCell<Tape> = std::cell::RefCell::default();
    }
    TAPE.with(|tape| match tape.try_borrow_mut() {
        Ok(mut tape) => {
            let valid = tape.scan_bytes(text, 0, above);
            // What an unusually wide or deep text grew is not kept.
            if tape.keys.capacity() > 1 << 10 || tape.decoded.capacity() > 1 << 16 {
                *tape = Tape::default();
            }
            valid
        }
        // Never nested, but a new tape would do as well.
        Err(_) => Tape::default().scan_bytes(text, 0, above),
    })
}

/// Where the items of a JSON text's outer containers are, as one scan found them
/// ([`Tape::scan`]), and the scan's own lists, kept for the next text.
#[derive(Debug, Default)]
pub(super) struct Tape {
    /// The members and elements of the containers nested at most `depth` deep, in the
    /// order of the text: an item is followed by the items inside its value.
    items: Vec<Item>,
    /// How deep the containers whose items are noted are nested (the outermost is 1).
    depth: usize,
    /// Where the text's value is.
    root: (usize, usize),
    /// The keys of the objects being scanned, the innermost object's last.
    keys: Vec<Key>,
    /// The decoded text of the keys that have escapes.
    decoded: Vec<u8>,
}

/// A member of an object, or an element of an array, that a scan noted.
#[derive(Debug, Clone, Copy)]
struct Item {
    /// Where the member's name is, between its quotes; empty for an element.
    name: (usize, usize),
    /// Whether the name has an escape.
    escaped: bool,
    /// Where its value is.
    value: (usize, usize),
    /// The index of the first item after the items inside its value.
    end: usize,
}

/// A key of an object being scanned: its text as written, or decoded (it had escapes)
/// in [`Tape::decoded`].
#[derive(Debug, Clone, Copy)]
struct Key {
    start: usize,
    end: usize,
    decoded: bool,
    /// Its first eight bytes (zeros past its end): keys of up to eight bytes, most of
    /// them, are compared by this number alone.
    head: u64,
}

/// The first eight bytes of `bytes`, zeros past its end, as a number.
#[inline]
fn head(bytes: &[u8]) -> u64 {
    match bytes.first_chunk::<8>() {
        Some(first) => u64::from_le_bytes(*first),
        // A short key: a byte at a time, with no call to copy it.
        None => bytes
            .iter()
            .rev()
            .fold(0, |head, &byte| head << 8 | u64::from(byte)),
    }
}

/// [`head`] of `text[start..end]`, read as one word from `text` when eight bytes are
/// there from `start` (a short key is followed by its quote and more), its bytes past
/// `end` masked off.
#[inline]
fn head_in(text: &[u8], start: usize, end: usize) -> u64 {
    let len = end - start;
    match text.get(start..).and_then(<[u8]>::first_chunk::<8>) {
        Some(word) if len < 8 => u64::from_le_bytes(*word) & ((1 << (8 * len)) - 1),
        _ => head(&text[start..end]),
    }
}

impl Tape {
    /// Scans `text` as [`valid_without_duplicates`] does, noting the items of the
    /// containers nested at most `depth` deep; the value it found, or `None` when
    /// `text` is not valid.
    pub(super) fn scan<'t>(&'t mut self, text: &'t str, depth: usize) -> Option<Node<'t>> {
        self.scan_inside(text, depth, 0)
    }

    /// [`Tape::scan`] of `text` found inside `above` containers of a larger text: it
    /// nests too deep where their levels and its own make 128, as it would inside
    /// that text. (`depth` counts from `text`'s own value.)
    pub(super) fn scan_inside<'t>(
        &'t mut self,
        text: &'t str,
        depth: usize,
        above: usize,
    ) -> Option<Node<'t>> {
        if !self.scan_bytes(text.as_bytes(), depth, above) {
            return None;
        }
        Some(self.node(text))
    }

    /// A scan of `text`, found inside `above` containers, into this tape, its lists
    /// emptied, noting the items of the containers nested at most `depth` deep.
    fn start<'t, 's>(&'s mut self, text: &'t [u8], depth: usize, above: usize) -> Scan<'t, 's> {
        self.items.clear();
        self.keys.clear();
        self.decoded.clear();
        self.depth = depth;
        Scan {
            text,
            at: 0,
            above,
            tape: self,
        }
    }

    /// Scans the one value at the start of `text` (no white space before it), which
    /// more text follows, as [`Tape::scan`] does: its length, or `None` when it is not
    /// valid or reaches the end of `text` (where a number, or the text, may go on).
    /// [`Tape::node`] then gives the value.
    pub(super) fn scan_prefix(&mut self, text: &[u8], depth: usize) -> Option<usize> {
        self.scan_prefix_inside(text, depth, 0)
    }

    /// [`Tape::scan_prefix`] of a value found inside `above` containers, as
    /// [`Tape::scan_inside`] scans one.
    pub(super) fn scan_prefix_inside(
        &mut self,
        text: &[u8],
        depth: usize,
        above: usize,
    ) -> Option<usize> {
        let mut scan = self.start(text, depth, above);
        scan.value(0)?;
        let end = scan.at;
        if end >= text.len() {
            return None;
        }
        self.root = (0, end);
        Some(end)
    }

    /// The value [`Tape::scan_prefix`] found, `text` being its text.
    pub(super) fn node<'t>(&'t self, text: &'t str) -> Node<'t> {
        Node {
            tape: self,
            text,
            value: self.root,
            items: (0, self.items.len()),
            depth: 1,
        }
    }

    fn scan_bytes(&mut self, text: &[u8], depth: usize, above: usize) -> bool {
        let mut scan = self.start(text, depth, above);
        scan.space();
        let start = scan.at;
        let valid = scan.value(0).is_some();
        let end = scan.at;
        scan.space();
        let valid = valid && scan.at == text.len();
        self.root = (start, end);
        valid
    }
}

/// A value of a scanned text: its raw JSON, and the items inside it when it is a
/// container the scan noted the items of.
#[derive(Debug, Clone, Copy)]
pub(super) struct Node<'t> {
    tape: &'t Tape,
    text: &'t str,
    value: (usize, usize),
    /// The indexes of the items inside it.
    items: (usize, usize),
    /// How deep it is nested, as a container (the text's value is 1).
    depth: usize,
}

impl<'t> Node<'t> {
    /// The value's raw JSON text.
    pub(super) fn text(&self) -> &'t str {
        &self.text[self.value.0..self.value.1]
    }

    /// Where the value starts in the scanned text.
    pub(super) fn offset(&self) -> usize {
        self.value.0
    }

    /// Hands each member of the object to `each` as `(name, value)`, in order.
    /// Returns `false`, maybe having handed some, when the value is not an object, its
    /// members were not noted, or a name has an escape (the caller then reads the text
    /// the slow way).
    pub(super) fn members(&self, mut each: impl FnMut(&'t str, Node<'t>)) -> bool {
        self.items(b'{', |item, node| {
            if item.escaped {
                return false;
            }
            each(&self.text[item.name.0..item.name.1], node);
            true
        })
    }

    /// Hands each element of the array to `each`, as [`Node::members`] does members.
    pub(super) fn elements(&self, mut each: impl FnMut(Node<'t>)) -> bool {
        self.items(b'[', |_, node| {
            each(node);
            true
        })
    }

    fn items(&self, open: u8, mut each: impl FnMut(&Item, Node<'t>) -> bool) -> bool {
        if self.text.as_bytes().get(self.value.0) != Some(&open) || self.depth > self.tape.depth {
            return false;
        }
        let mut at = self.items.0;
        while at < self.items.1 {
            let item = &self.tape.items[at];
            let node = Node {
                tape: self.tape,
                text: self.text,
                value: item.value,
                items: (at + 1, item.end),
                depth: self.depth + 1,
            };
            if !each(item, node) {
                return false;
            }
            at = item.end;
        }
        true
    }
}

/// `None` is invalid text; why is not kept.
type Scanned = Option<()>;

struct Scan<'t, 's> {
    text: &'t [u8],
    /// The next byte to read.
    at: usize,
    /// How many containers of a larger text the text is inside.
    above: usize,
    tape: &'s mut Tape,
}

impl<'t> Scan<'t, '_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

    #[inline]
    fn space(&mut self) {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    /// The value at `at` (no white space before it), inside `depth` containers.
    fn value(&mut self, depth: usize) -> Scanned {
        match self.peek()? {
            b'{' => self.object(depth + 1),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(drop),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    fn literal(&mut self, word: &[u8]) -> Scanned {
        let end = self.at + word.len();
        (self.text.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// The bytes of `key`.
    fn key_bytes<'k>(text: &'k [u8], decoded: &'k [u8], key: Key) -> &'k [u8] {
        let all = if key.decoded { decoded } else { text };
        &all[key.start..key.end]
    }

    /// Notes an item starting here (when its container is noted): its index.
    fn open_item(&mut self, noted: bool, name: (usize, usize), escaped: bool) -> usize {
        let index = self.tape.items.len();
        if noted {
            self.tape.items.push(Item {
                name,
                escaped,
                value: (self.at, self.at),
                end: index + 1,
            });
        }
        index
    }

    /// Notes where the item at `index`, whose value ends here, ends.
    fn close_item(&mut self, noted: bool, index: usize) {
        if noted {
            let end = self.tape.items.len();
            let item = &mut self.tape.items[index];
            item.value.1 = self.at;
            item.end = end;
        }
    }

    /// An object, the `depth`th container in.
    fn object(&mut self, depth: usize) -> Scanned {
        if self.opened(depth, b'}')? {
            return Some(());
        }
        let noted = depth <= self.tape.depth;
        let first = self.tape.keys.len();
        // The keys decoded here are dropped with the object's keys.
        let decoded_from = self.tape.decoded.len();
        // An object of more than `LISTED` keys moves them into a set, so that a wide
        // object costs a hash per key rather than a search of all the keys before it.
        let mut many: Option<FxHashSet<Cow<'t, [u8]>>> = None;
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let (start, end, escaped) = self.string()?;
            let mut key = if escaped {
                let from = self.tape.decoded.len();
                decode_into(&self.text[start..end], &mut self.tape.decoded);
                Key {
                    start: from,
                    end: self.tape.decoded.len(),
                    decoded: true,
                    head: 0,
                }
            } else {
                Key {
                    start,
                    end,
                    decoded: false,
                    head: 0,
                }
            };
            let bytes = Self::key_bytes(self.text, &self.tape.decoded, key);
            key.head = match key.decoded {
                true => head(bytes),
                false => head_in(self.text, start, end),
            };
            match &mut many {
                Some(set) => {
                    let bytes = match key.decoded {
                        true => Cow::Owned(bytes.to_vec()),
                        false => Cow::Borrowed(&self.text[start..end]),
                    };
                    if !set.insert(bytes) {
                        return None;
                    }
                }
                None => {
                    let (text, decoded) = (self.text, &self.tape.decoded);
                    let seen = self.tape.keys[first..].iter().any(|&other| {
                        other.head == key.head
                            && other.end - other.start == bytes.len()
                            && (bytes.len() <= 8 || Self::key_bytes(text, decoded, other) == bytes)
                    });
                    if seen {
                        return None;
                    }
                    self.tape.keys.push(key);
                    if self.tape.keys.len() - first > LISTED {
                        let set = self.tape.keys.drain(first..).map(|key| {
                            let bytes = Self::key_bytes(text, decoded, key);
                            match key.decoded {
                                true => Cow::Owned(bytes.to_vec()),
                                false => Cow::Borrowed(&text[key.start..key.end]),
                            }
                        });
                        many = Some(set.collect());
                    }
                }
            }
            self.space();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            self.space();
            let index = self.open_item(noted, (start, end), escaped);
            self.value(depth)?;
            self.close_item(noted, index);
            if self.closed(b'}')? {
                self.tape.keys.truncate(first);
                self.tape.decoded.truncate(decoded_from);
                return Some(());
            }
        }
    }

    /// An array, the `depth`th container in.
    fn array(&mut self, depth: usize) -> Scanned {
        if self.opened(depth, b']')? {
            return Some(());
        }
        let noted = depth <= self.tape.depth;
        loop {
            let index = self.open_item(noted, (self.at, self.at), false);
            self.value(depth)?;
            self.close_item(noted, index);
            if self.closed(b']')? {
                return Some(());
            }
        }
    }

    /// Steps into the container that starts here, the `depth`th in, and past the
    /// spaces after its opening; whether it is empty (then it is stepped over, up to
    /// `close`). `None` when it nests too deep.
    fn opened(&mut self, depth: usize, close: u8) -> Option<bool> {
        if self.above + depth >= MAX_DEPTH {
            return None;
        }
        self.at += 1;
        self.space();
        let empty = self.peek()? == close;
        self.at += usize::from(empty);
        Some(empty)
    }

    /// Steps past what follows a container's item: a comma and spaces (`false`: an
    /// item follows), or `close` (`true`: the container ended). `None` for anything
    /// else.
    fn closed(&mut self, close: u8) -> Option<bool> {
        self.space();
        match self.peek()? {
            b',' => {
                self.at += 1;
                self.space();
                Some(false)
            }
            byte if byte == close => {
                self.at += 1;
                Some(true)
            }
            _ => None,
        }
    }

    /// A string: where its text is, between its quotes, and whether it has an escape.
    ///
    /// Always inlined where it is called: most strings are short keys, and a call
    /// costs about as much as scanning one (left to the compiler, the object loop
    /// called it: 2.5 % more instructions on an MCP log's common lines).
    #[inline(always)]
    fn string(&mut self) -> Option<(usize, usize, bool)> {
        self.at += 1;
        let start = self.at;
        let mut ascii = true;
        let mut escaped = false;
        loop {
            // Plain ASCII eight bytes at a time, up to a byte the match below decides.
            self.at = crate::json::plain_words(self.text, self.at, true);
            match *self.text.get(self.at)? {
                b'"' => break,
                b'\\' => {
                    escaped = true;
                    self.escape()?;
                }
                0..=0x1f => return None,
                0x80.. => {
                    ascii = false;
                    self.at += 1;
                }
                _ => self.at += 1,
            }
        }
        let end = self.at;
        self.at += 1;
        // Escapes are ASCII and decode to whole characters, so the text between them
        // is valid UTF-8 exactly when the decoded string is.
        if !ascii && std::str::from_utf8(&self.text[start..end]).is_err() {
            return None;
        }
        Some((start, end, escaped))
    }

    /// An escape, at its backslash: what serde_json accepts in a string, where a
    /// surrogate must be a leading one followed by an escaped trailing one.
    fn escape(&mut self) -> Scanned {
        let kind = *self.text.get(self.at + 1)?;
        self.at += 2;
        match kind {
            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(()),
            b'u' => match self.hex()? {
                0xDC00..=0xDFFF => None,
                0xD800..=0xDBFF => {
                    if self.text.get(self.at..self.at + 2)? != b"\\u" {
                        return None;
                    }
                    self.at += 2;
                    (0xDC00..=0xDFFF).contains(&self.hex()?).then_some(())
                }
                _ => Some(()),
            },
            _ => None,
        }
    }

    /// Four hex digits, as a number.
    fn hex(&mut self) -> Option<u16> {
        let digits = self.text.get(self.at..self.at + 4)?;
        self.at += 4;
        digits.iter().try_fold(0u16, |n, &b| {
            let digit = (b as char).to_digit(16)?;
            Some(n << 4 | digit as u16)
        })
    }

    fn number(&mut self) -> Scanned {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        // A leading zero is the whole integer part: after `01`, the `1` is out of place.
        let digits = match self.peek()? {
            b'0' => {
                self.at += 1;
                1
            }
            _ => self.digits()?,
        };
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits()?;
            integer = false;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            self.digits()?;
            integer = false;
        }
        // A short integer is always in range; serde_json says whether any other
        // number is (one that overflows `f64` is an error).
        if integer && digits <= 18 {
            return Some(());
        }
        serde_json::from_slice::<serde_json::Value>(&self.text[start..self.at])
            .ok()
            .map(drop)
    }

    /// One or more digits; how many.
    fn digits(&mut self) -> Option<usize> {
        let start = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        (self.at > start).then_some(self.at - start)
    }
}

/// Appends the UTF-8 bytes of a string's `raw` text, whose escapes are valid, to `out`.
fn decode_into(raw: &[u8], out: &mut Vec<u8>) {
    let mut i = 0;
    let hex = |at: usize| {
        raw[at..at + 4]
            .iter()
            .fold(0u32, |n, &b| n << 4 | (b as char).to_digit(16).unwrap_or(0))
    };
    while i < raw.len() {
        if raw[i] != b'\\' {
            out.push(raw[i]);
            i += 1;
            continue;
        }
        let simple = match raw[i + 1] {
            b'b' => Some(b'\x08'),
            b'f' => Some(b'\x0c'),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'u' => None,
            other => Some(other),
        };
        if let Some(byte) = simple {
            out.push(byte);
            i += 2;
            continue;
        }
        let mut code = hex(i + 2);
        i += 6;
        if (0xD800..=0xDBFF).contains(&code) {
            code = 0x1_0000 + ((code - 0xD800) << 10 | (hex(i + 2) - 0xDC00));
            i += 6;
        }
        let c = char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER);
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
}

/// The text of a JSON string a scan found valid, `raw` with its quotes, decoded:
/// borrowed when it has no escape, else the runs between escapes copied whole.
/// `None` when `raw` is not a string.
pub(super) fn decoded_string(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    let bytes = inner.as_bytes();
    let Some(first) = memchr::memchr(b'\\', bytes) else {
        return Some(Cow::Borrowed(inner));
    };
    let mut out = Vec::with_capacity(bytes.len());
    let mut from = 0;
    let mut at = first;
    loop {
        out.extend_from_slice(&bytes[from..at]);
        // An escape is two bytes, or six for a `\u` one, twelve for a surrogate pair.
        let len = match bytes.get(at + 1) {
            Some(b'u') => match bytes.get(at + 2..at + 6) {
                Some(hex) if hex.first().is_some_and(|&b| b == b'd' || b == b'D') => {
                    let second = hex.get(1).copied().unwrap_or(b'0');
                    match second {
                        b'8'..=b'9' | b'a' | b'b' | b'A' | b'B' => 12,
                        _ => 6,
                    }
                }
                _ => 6,
            },
            _ => 2,
        };
        let escape = bytes.get(at..at + len)?;
        decode_into(escape, &mut out);
        from = at + len;
        match memchr::memchr(b'\\', &bytes[from..]) {
            Some(next) => at = from + next,
            None => break,
        }
    }
    out.extend_from_slice(&bytes[from..]);
    String::from_utf8(out).ok().map(Cow::Owned)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use serde_json::Value;

    use super::super::document::parse_unique;
    use super::{Node, Tape, head, head_in, valid_without_duplicates};

    #[test]
    fn a_head_is_the_first_eight_bytes_then_zeros() {
        let text = b"abcdefghij\xff\x01";
        for len in 0..=text.len() {
            let mut first = [0u8; 8];
            let n = len.min(8);
            first[..n].copy_from_slice(&text[..n]);
            assert_eq!(head(&text[..len]), u64::from_le_bytes(first), "{len} bytes");
        }
        // Read in place, whatever follows the key and wherever it ends.
        for start in 0..text.len() {
            for end in start..=text.len() {
                let want = head(&text[start..end]);
                assert_eq!(head_in(text, start, end), want, "{start}..{end}");
            }
        }
    }

    /// Whether the scan says what parsing says of `text`, with and without noting
    /// members, on a fresh tape and on one reused from the texts before.
    #[track_caller]
    fn agrees(text: &str) {
        let want = parse_unique(text);
        assert_eq!(
            valid_without_duplicates(text.as_bytes()),
            want.is_some(),
            "{text:?}"
        );
        TAPE.with_borrow_mut(|tape| {
            for depth in [0, 1, 3, 200] {
                let node = tape.scan(text, depth);
                assert_eq!(
                    node.is_some(),
                    want.is_some(),
                    "{text:?} noted {depth} deep"
                );
                if let (Some(node), Some(want)) = (node, &want) {
                    same_tree(node, want, depth, text);
                }
            }
        });
    }

    thread_local! {
        /// One tape for all the texts a test scans, as a reader keeps one.
        static TAPE: std::cell::RefCell<Tape> = std::cell::RefCell::default();
    }

    /// Whether `node` and its noted members and elements are the parts of `want`.
    #[track_caller]
    fn same_tree(node: Node<'_>, want: &Value, depth: usize, text: &str) {
        let have: Value = serde_json::from_str(node.text()).expect("a node is valid JSON");
        assert_eq!(&have, want, "{text:?}");
        assert_eq!(
            &text[node.offset()..node.offset() + node.text().len()],
            node.text()
        );
        let noted = node.depth <= depth;
        match want {
            Value::Object(map) => {
                let mut members = Vec::new();
                let read = node.members(|name, value| members.push((name, value)));
                // An object's members are all handed on, unless they were not noted or
                // a name is escaped (which a reader cannot compare as written).
                let escaped = node.text().contains("\\");
                assert!(read || !noted || escaped, "{text:?}");
                assert!(!read || noted, "{text:?}");
                if read {
                    assert_eq!(members.len(), map.len(), "{text:?}");
                    for (name, value) in members {
                        same_tree(value, &map[name], depth, text);
                    }
                }
                assert!(!node.elements(|_| {}), "an object has no elements");
            }
            Value::Array(items) => {
                let mut elements = Vec::new();
                let read = node.elements(|element| elements.push(element));
                assert_eq!(read, noted, "{text:?}");
                if read {
                    assert_eq!(elements.len(), items.len(), "{text:?}");
                    for (element, want) in elements.into_iter().zip(items) {
                        same_tree(element, want, depth, text);
                    }
                }
                assert!(!node.members(|_, _| {}), "an array has no members");
            }
            _ => {
                assert!(!node.members(|_, _| {}) && !node.elements(|_| {}));
            }
        }
    }

    /// Strings decode as serde_json decodes them.
    #[test]
    fn strings_decode_as_parsing_does() {
        for raw in [
            r#""""#,
            r#""plain""#,
            r#""caf\u00e9 \"q\" \\ \/ \b\f\n\r\t end""#,
            r#""\ud83d\ude00\uD83D\uDE00 \u0000 \uffff \uDBFF\uDFFF""#,
            r#""\u00e9""#,
            r#""x\n""#,
            "\"h\u{e9}llo \\u00e9 \u{1f600}\"",
        ] {
            assert!(valid_without_duplicates(raw.as_bytes()), "{raw}");
            let want: String = serde_json::from_str(raw).expect("a string");
            assert_eq!(
                super::decoded_string(raw).as_deref(),
                Some(want.as_str()),
                "{raw}"
            );
        }
        assert_eq!(super::decoded_string("12"), None);
    }

    #[test]
    fn accepts_and_rejects_as_parsing_does() {
        for text in [
            r#"{"a": 1, "b": [true, false, null, "x", -0.5e-3, 0, 12345678901234567890]}"#,
            r#"  [ ]  "#,
            r#"{}"#,
            r#""caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t""#,
            "\"h\u{e9}llo\"",
            r#"{"a": 1, "a": 2}"#,
            r#"{"a": 1, "\u0061": 2}"#,
            r#"{"a": {"b": 1}, "b": {"a": 1, "b": 2}}"#,
            r#"{"a": {"b": 1, "b": 1}}"#,
            r#"[{"a": 1}, {"a": 2}]"#,
            r#"{"\n": 1, "\u000a": 2}"#,
            r#"{"\ud83d\ude00": 1, "😀": 2}"#,
            r#"[1, 2,]"#,
            r#"{"a": 1,}"#,
            r#"{"a" 1}"#,
            r#"{a: 1}"#,
            r#"[01]"#,
            r#"[1.]"#,
            r#"[.5]"#,
            r#"[-]"#,
            r#"[1e]"#,
            r#"[1e+]"#,
            r#"[1E+5, 1e-400, 0e99999]"#,
            r#"[1e400]"#,
            r#"[-1e309]"#,
            &format!("[{}]", "9".repeat(400)),
            &format!("[{}]", "9".repeat(30)),
            r#"["\ud800"]"#,
            r#"["\udc00"]"#,
            r#"["\ud800\u0041"]"#,
            r#"["\ud800x"]"#,
            r#"["\x"]"#,
            r#"["\u12g4"]"#,
            "[\"\u{1}\"]",
            "[\"\t\"]",
            r#"[tru]"#,
            r#"[nul"#,
            r#"{"a": 1} x"#,
            r#"{"a": 1} {}"#,
            "",
            "   ",
            r#"["unterminated]"#,
        ] {
            agrees(text);
        }
        // serde_json nests at most 127 containers deep.
        for depth in [126, 127, 128, 129] {
            agrees(&format!("{}{}", "[".repeat(depth), "]".repeat(depth)));
            let objects = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
            agrees(&objects);
        }
        // Wide objects: keys past the listed ones are found in a set, at any place.
        let wide = |keys: &[usize]| {
            let members: Vec<String> = keys
                .iter()
                .map(|k| format!(r#""k{k}": {{"a": 1, "a2": [{k}]}}"#))
                .collect();
            format!("{{{}}}", members.join(", "))
        };
        let distinct: Vec<usize> = (0..100_000).collect();
        assert!(valid_without_duplicates(wide(&distinct).as_bytes()));
        for (early, late) in [(0, 5), (3, 16), (16, 17), (2, 99_999), (50_000, 99_999)] {
            let mut keys = distinct.clone();
            keys[late] = early;
            assert!(
                !valid_without_duplicates(wide(&keys).as_bytes()),
                "k{early} again at {late}"
            );
        }
        agrees(&wide(&(0..40).chain([7]).collect::<Vec<_>>()));
        // Not UTF-8 inside a string, and outside one.
        assert!(!valid_without_duplicates(b"[\"\xff\"]"));
        assert!(!valid_without_duplicates(b"[\"\xc3\"]"));
        assert!(!valid_without_duplicates(b"[1]\xff"));
        assert!(valid_without_duplicates("[\"\u{e9}\"]".as_bytes()));
    }

    /// Pieces of JSON text, valid and not, joined at random.
    fn piece() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ":",
            ",",
            " ",
            "\n",
            r#""a""#,
            r#""b""#,
            r#""\u0061""#,
            r#""\ud800""#,
            r#""\ud83d\ude00""#,
            r#""\n""#,
            "\"\u{e9}\"",
            "\"\u{1}\"",
            "1",
            "-0.5e3",
            "01",
            "1e400",
            "true",
            "nul",
            "null",
            r#""a":1"#,
            r#""a":"#,
            "\"",
        ])
    }

    /// JSON values whose objects may hold a key twice.
    fn value() -> impl Strategy<Value = String> {
        let leaf = prop::sample::select(vec!["1", "-2.5", "null", "true", r#""s""#, r#""\"""#]);
        leaf.prop_map(str::to_string)
            .prop_recursive(4, 32, 4, |inner| {
                prop_oneof![
                    prop::collection::vec(inner.clone(), 0..4)
                        .prop_map(|items| format!("[{}]", items.join(","))),
                    prop::collection::vec(
                        (prop::sample::select(vec!["a", "b", "c", r"\u0062"]), inner),
                        0..4
                    )
                    .prop_map(|members| {
                        let members: Vec<String> = members
                            .iter()
                            .map(|(key, value)| format!("\"{key}\": {value}"))
                            .collect();
                        format!("{{{}}}", members.join(", "))
                    }),
                ]
            })
    }

    proptest! {
        #[test]
        fn pieces_scan_as_they_parse(pieces in prop::collection::vec(piece(), 0..24)) {
            agrees(&pieces.concat());
        }

        #[test]
        fn values_scan_as_they_parse(text in value()) {
            agrees(&text);
        }
    }
}
