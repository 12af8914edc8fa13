//! Whether JSON text is one valid value without a key twice, found by one scan of the
//! text that builds nothing: no value, no copy of a key (unless it has escapes), one
//! list of the keys of the objects being scanned, reused by all of them.
//!
//! It accepts exactly what [`super::document::parse_unique`] parses (serde_json's
//! grammar and limits: control characters and lone surrogates in strings, numbers out
//! of `f64`'s range and values nested 128 deep are errors) and says nothing of where
//! or what is wrong: a caller that gets `false` reads the text the slow way, which
//! does.

use std::borrow::Cow;

use rustc_hash::FxHashSet;

/// How deep serde_json nests containers: the 128th is an error.
const MAX_DEPTH: usize = 128;

/// How many keys of one object are searched in a list; more go into a set.
const LISTED: usize = 16;

/// Whether `text` is one valid JSON value (with white space around it) in which no
/// object has a key twice. Strings must be valid UTF-8; elsewhere only ASCII is valid.
pub(super) fn valid_without_duplicates(text: &[u8]) -> bool {
    let mut scan = Scan {
        text,
        at: 0,
        keys: Vec::new(),
    };
    scan.space();
    scan.value(0).is_some() && {
        scan.space();
        scan.at == text.len()
    }
}

/// `None` is invalid text; why is not kept.
type Scanned = Option<()>;

struct Scan<'t> {
    text: &'t [u8],
    /// The next byte to read.
    at: usize,
    /// The keys of the objects being scanned, decoded, the innermost object's last.
    keys: Vec<Cow<'t, [u8]>>,
}

impl<'t> Scan<'t> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }

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
            b'"' => self.string(false).map(drop),
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

    /// An object, the `depth`th container in.
    fn object(&mut self, depth: usize) -> Scanned {
        if self.opened(depth, b'}')? {
            return Some(());
        }
        let first = self.keys.len();
        // An object of more than `LISTED` keys moves them into a set, so that a wide
        // object costs a hash per key rather than a search of all the keys before it.
        let mut many: Option<FxHashSet<Cow<'t, [u8]>>> = None;
        loop {
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string(true)?;
            match &mut many {
                Some(set) => {
                    if !set.insert(key) {
                        return None;
                    }
                }
                None => {
                    if self.keys[first..].contains(&key) {
                        return None;
                    }
                    self.keys.push(key);
                    if self.keys.len() - first > LISTED {
                        many = Some(self.keys.drain(first..).collect());
                    }
                }
            }
            self.space();
            if self.peek()? != b':' {
                return None;
            }
            self.at += 1;
            self.space();
            self.value(depth)?;
            if self.closed(b'}')? {
                self.keys.truncate(first);
                return Some(());
            }
        }
    }

    /// An array, the `depth`th container in.
    fn array(&mut self, depth: usize) -> Scanned {
        if self.opened(depth, b']')? {
            return Some(());
        }
        loop {
            self.value(depth)?;
            if self.closed(b']')? {
                return Some(());
            }
        }
    }

    /// Steps into the container that starts here, the `depth`th in, and past the
    /// spaces after its opening; whether it is empty (then it is stepped over, up to
    /// `close`). `None` when it nests too deep.
    fn opened(&mut self, depth: usize, close: u8) -> Option<bool> {
        if depth >= MAX_DEPTH {
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

    /// A string; with `key`, its decoded bytes (borrowed when it has no escape), else
    /// nothing.
    fn string(&mut self, key: bool) -> Option<Cow<'t, [u8]>> {
        self.at += 1;
        let start = self.at;
        let mut ascii = true;
        let mut escaped = false;
        loop {
            // Plain ASCII eight bytes at a time, up to a byte the match below decides.
            self.at = crate::trace::native::scan::plain_run(self.text, self.at, true);
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
        let raw = &self.text[start..self.at];
        self.at += 1;
        // Escapes are ASCII and decode to whole characters, so the text between them
        // is valid UTF-8 exactly when the decoded string is.
        if !ascii && std::str::from_utf8(raw).is_err() {
            return None;
        }
        Some(match (key, escaped) {
            (false, _) => Cow::Borrowed(&[]),
            (true, false) => Cow::Borrowed(raw),
            (true, true) => Cow::Owned(decode(raw)),
        })
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

/// The UTF-8 bytes of a string's `raw` text, whose escapes are valid.
fn decode(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len());
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
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::document::parse_unique;
    use super::valid_without_duplicates;

    /// Whether the scan says what parsing says of `text`.
    #[track_caller]
    fn agrees(text: &str) {
        let want = parse_unique(text).is_some();
        assert_eq!(valid_without_duplicates(text.as_bytes()), want, "{text:?}");
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
