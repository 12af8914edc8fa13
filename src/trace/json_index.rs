//! Where the elements of a JSON document are: byte ranges and lines for JSON pointers.
//!
//! Adapters read a JSON document as a `serde_json::Value`, which forgets positions; a
//! report must still point at the original element ("line 12, `/messages/3`"). The
//! index is built by one scan of the document's text. It keeps a node for every object
//! and array (not for scalars, which would cost memory for no use: arrays of token ids
//! are common), and the offset of every line start. A pointer that ends at a scalar is
//! found by rescanning its parent, which only problem reports need.
//!
//! The scanner assumes the text is valid JSON (it is run after `serde_json` accepted
//! it); on other text it still returns, with approximate ranges, and never panics.

use std::ops::Range;

/// Byte ranges of the containers of one JSON document, by JSON pointer.
#[derive(Debug, Default)]
pub struct JsonIndex {
    nodes: Vec<Node>,
    /// Byte offsets where lines 2, 3, … start.
    line_starts: Vec<usize>,
}

#[derive(Debug)]
struct Node {
    range: Range<usize>,
    is_array: bool,
    /// Container children only, in document order (array indexes ascending).
    children: Vec<(Step, usize)>,
}

#[derive(Debug, PartialEq, Eq)]
enum Step {
    Index(usize),
    Key(Box<str>),
}

/// An open container during the scan.
struct Open {
    node: usize,
    is_array: bool,
    /// Elements seen so far (arrays).
    count: usize,
    /// Where the key of the member being read is, quoted (objects): decoded only if
    /// its value is a container, as scalars get no node.
    key: Option<Range<usize>>,
}

impl JsonIndex {
    /// Scans `text`, a JSON document.
    pub fn build(text: &str) -> JsonIndex {
        let bytes = text.as_bytes();
        let mut index = JsonIndex::default();
        let mut stack: Vec<Open> = Vec::new();
        let mut at = 0;
        // Whether the next string in an object is a key.
        let mut expect_key = false;
        while at < bytes.len() {
            match bytes[at] {
                b'\n' => {
                    index.line_starts.push(at + 1);
                    at += 1;
                }
                b'"' => {
                    let end = string_end(bytes, at);
                    if expect_key {
                        if let Some(open) = stack.last_mut() {
                            open.key = Some(at..end);
                        }
                        expect_key = false;
                    } else {
                        note_scalar(&mut stack);
                    }
                    at = end;
                }
                b'{' | b'[' => {
                    let node = index.nodes.len();
                    let is_array = bytes[at] == b'[';
                    index.nodes.push(Node {
                        range: at..bytes.len(),
                        is_array,
                        children: Vec::new(),
                    });
                    if let Some(open) = stack.last_mut() {
                        let step = if open.is_array {
                            open.count += 1;
                            Step::Index(open.count - 1)
                        } else {
                            Step::Key(
                                open.key
                                    .take()
                                    .map(|key| decode_key(&text[key]))
                                    .unwrap_or_default(),
                            )
                        };
                        index.nodes[open.node].children.push((step, node));
                    }
                    stack.push(Open {
                        node,
                        is_array,
                        count: 0,
                        key: None,
                    });
                    expect_key = !is_array;
                    at += 1;
                }
                b'}' | b']' => {
                    if let Some(open) = stack.pop() {
                        index.nodes[open.node].range.end = at + 1;
                    }
                    expect_key = false;
                    at += 1;
                }
                b',' => {
                    expect_key = stack.last().is_some_and(|open| !open.is_array);
                    at += 1;
                }
                b':' | b' ' | b'\t' | b'\r' => at += 1,
                _ => {
                    // A number, `true`, `false` or `null`.
                    note_scalar(&mut stack);
                    while at < bytes.len() && !is_delimiter(bytes[at]) {
                        at += 1;
                    }
                }
            }
        }
        index
    }

    /// The byte range of the value at `pointer` (RFC 6901). A pointer that leads
    /// nowhere gives the range of the deepest value on its way that exists.
    pub fn range(&self, text: &str, pointer: &str) -> Range<usize> {
        let Some(root) = self.nodes.first() else {
            return 0..text.len();
        };
        let mut node = root;
        let mut tokens = tokens(pointer).peekable();
        while let Some(token) = tokens.next() {
            let step = self.child(node, &token);
            match step {
                Some(child) => node = &self.nodes[child],
                None => {
                    // A scalar, or nothing: only the last token may name a scalar.
                    if tokens.peek().is_none() {
                        if let Some(range) = scalar_in(text, node.range.clone(), &token) {
                            return range;
                        }
                    }
                    return node.range.clone();
                }
            }
        }
        node.range.clone()
    }

    /// The 1-based line of byte `offset`.
    pub fn line_of(&self, offset: usize) -> u64 {
        self.line_starts.partition_point(|&start| start <= offset) as u64 + 1
    }

    fn child(&self, node: &Node, token: &str) -> Option<usize> {
        if node.is_array {
            let wanted: usize = token.parse().ok()?;
            let found = node
                .children
                .binary_search_by(|(step, _)| match step {
                    Step::Index(index) => index.cmp(&wanted),
                    Step::Key(_) => std::cmp::Ordering::Less,
                })
                .ok()?;
            Some(node.children[found].1)
        } else {
            // The last member with a key wins, as in serde_json.
            node.children
                .iter()
                .rev()
                .find(|(step, _)| matches!(step, Step::Key(key) if **key == *token))
                .map(|(_, child)| *child)
        }
    }
}

/// The byte range of the value at `pointer`, a pointer of one token (`/message`), in
/// `text`, one JSON document, by scanning its top level only; `None` when the root is
/// not a container or has no such member (the index then answers).
pub fn member_range(text: &str, pointer: &str) -> Option<Range<usize>> {
    let mut tokens = tokens(pointer);
    let token = tokens.next()?;
    if tokens.next().is_some() {
        return None;
    }
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, 0, bytes.len());
    if !matches!(bytes.get(start), Some(b'{' | b'[')) {
        return None;
    }
    let end = value_end(bytes, start, bytes.len());
    scalar_in(text, start..end, &token)
}

/// The unescaped reference tokens of a JSON pointer.
pub fn pointer_tokens(pointer: &str) -> impl Iterator<Item = String> + '_ {
    tokens(pointer).map(std::borrow::Cow::into_owned)
}

/// [`pointer_tokens`], borrowed from the pointer when they have no escape: records are
/// located by pointer on the hot path of every transcript format.
fn tokens(pointer: &str) -> impl Iterator<Item = std::borrow::Cow<'_, str>> + '_ {
    pointer
        .split('/')
        .skip(1)
        .map(|token| match token.contains('~') {
            true => token.replace("~1", "/").replace("~0", "~").into(),
            false => token.into(),
        })
}

/// Appends one reference token to a JSON pointer, escaping `~` and `/`.
pub fn push_token(pointer: &mut String, token: &str) {
    pointer.push('/');
    // Most tokens, keys and indexes, have nothing to escape.
    if !token.contains(['~', '/']) {
        pointer.push_str(token);
        return;
    }
    for c in token.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// `pointer` with one more token.
pub fn child_pointer(pointer: &str, token: impl std::fmt::Display) -> String {
    let token = token.to_string();
    let mut out = String::with_capacity(pointer.len() + 1 + token.len());
    out.push_str(pointer);
    push_token(&mut out, &token);
    out
}

fn note_scalar(stack: &mut [Open]) {
    if let Some(open) = stack.last_mut() {
        if open.is_array {
            open.count += 1;
        } else {
            open.key = None;
        }
    }
}

fn is_delimiter(byte: u8) -> bool {
    matches!(
        byte,
        b',' | b'}' | b']' | b':' | b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'{' | b'['
    )
}

/// The index just past the string starting at `start` (a `"`).
pub(crate) fn string_end(bytes: &[u8], start: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The high bit of each zero byte of `v` (and maybe of bytes after the first, which
    // the lowest bit set never is).
    let zeros = |v: u64| v.wrapping_sub(ONES) & !v & HIGHS;
    let mut at = start + 1;
    loop {
        // Eight bytes at a time up to the next `"` or `\`: a time, an id or a name is
        // read without a loop over each of its bytes.
        while let Some(chunk) = bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(chunk.try_into().expect("bug: an 8-byte chunk"));
            let stop =
                zeros(word ^ (ONES * u64::from(b'"'))) | zeros(word ^ (ONES * u64::from(b'\\')));
            if stop != 0 {
                at += (stop.trailing_zeros() / 8) as usize;
                break;
            }
            at += 8;
        }
        match bytes.get(at) {
            Some(b'\\') => at += 2,
            Some(b'"') => return at + 1,
            Some(_) => at += 1,
            None => return bytes.len(),
        }
    }
}

fn decode_key(quoted: &str) -> Box<str> {
    if quoted.contains('\\') {
        serde_json::from_str::<String>(quoted)
            .unwrap_or_default()
            .into()
    } else {
        quoted
            .get(1..quoted.len().saturating_sub(1))
            .unwrap_or_default()
            .into()
    }
}

/// The range of the scalar member or element `token` of the container at `range`, by
/// rescanning the container's top level.
fn scalar_in(text: &str, range: Range<usize>, token: &str) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let open = *bytes.get(range.start)?;
    let is_array = open == b'[';
    let wanted_index: Option<usize> = if is_array { token.parse().ok() } else { None };
    let mut at = range.start + 1;
    let mut index = 0;
    let mut found = None;
    let end = range.end.min(bytes.len());
    while at < end {
        at = skip_ws(bytes, at, end);
        if at >= end || matches!(bytes[at], b'}' | b']') {
            break;
        }
        let matched;
        if !is_array {
            let key_end = string_end(bytes, at);
            matched = *decode_key(text.get(at..key_end)?) == *token;
            at = skip_ws(bytes, key_end, end);
            at += usize::from(at < end && bytes[at] == b':');
            at = skip_ws(bytes, at, end);
        } else {
            matched = wanted_index == Some(index);
        }
        let value_end = value_end(bytes, at, end);
        if matched {
            // Later duplicates win, as in serde_json.
            found = Some(at..value_end);
        }
        index += 1;
        at = skip_ws(bytes, value_end, end);
        at += usize::from(at < end && bytes[at] == b',');
    }
    found
}

pub(crate) fn skip_ws(bytes: &[u8], mut at: usize, end: usize) -> usize {
    while at < end && matches!(bytes[at], b' ' | b'\t' | b'\r' | b'\n') {
        at += 1;
    }
    at
}

/// The index just past the value starting at `start`. `bytes` is valid JSON up to
/// `end`; values are skipped by their brackets, not parsed.
pub(crate) fn value_end(bytes: &[u8], start: usize, end: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut at = start;
            while at < end {
                match bytes[at] {
                    b'"' => {
                        at = string_end(bytes, at);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return at + 1;
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
            end
        }
        _ => {
            let mut at = start;
            while at < end && !is_delimiter(bytes[at]) {
                at += 1;
            }
            at
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_end_at_their_first_unescaped_quote() {
        // What a loop over each byte finds, wherever the quote or escape falls in the
        // eight-byte words.
        let naive = |bytes: &[u8], start: usize| {
            let mut at = start + 1;
            while at < bytes.len() {
                match bytes[at] {
                    b'\\' => at += 2,
                    b'"' => return at + 1,
                    _ => at += 1,
                }
            }
            bytes.len()
        };
        for text in [
            r#""""#,
            r#""2025-04-01T00:00:00.000000Z","#,
            r#""a\"b","#,
            r#""0123456\\"x"#,
            r#""01234567\"89abcdef\"","#,
            r#""é\u00e9\\\"""#,
            r#""unterminated"#,
            r#""ends in \"#,
            "\"01234567",
        ] {
            let bytes = text.as_bytes();
            for start in 0..bytes.len() {
                if bytes[start] == b'"' {
                    assert_eq!(
                        string_end(bytes, start),
                        naive(bytes, start),
                        "{text} at {start}"
                    );
                }
            }
        }
    }

    #[track_caller]
    fn check(text: &str, pointer: &str, want: &str) {
        let index = JsonIndex::build(text);
        let range = index.range(text, pointer);
        assert_eq!(&text[range], want, "pointer {pointer:?}");
    }

    #[test]
    fn finds_containers_and_scalars() {
        let text = r#"{"a": [1, {"b": [true, null]}, "x"], "c~/d": {"e": "f"}, "n": 12.5}"#;
        check(text, "", text);
        check(text, "/a", r#"[1, {"b": [true, null]}, "x"]"#);
        check(text, "/a/1", r#"{"b": [true, null]}"#);
        check(text, "/a/1/b/1", "null");
        check(text, "/a/0", "1");
        check(text, "/a/2", r#""x""#);
        check(text, "/c~0~1d", r#"{"e": "f"}"#);
        check(text, "/c~0~1d/e", r#""f""#);
        check(text, "/n", "12.5");
        // Nowhere: the deepest container on the way.
        check(text, "/a/7", r#"[1, {"b": [true, null]}, "x"]"#);
        check(text, "/zz/1", text);
    }

    #[test]
    fn strings_with_brackets_and_escapes_do_not_confuse_it() {
        let text = "[\"[{\\\"\", {\"k\\u0021\": [\"]\"]}, {\"z\": 1}]";
        check(text, "/1", "{\"k\\u0021\": [\"]\"]}");
        check(text, "/1/k!", "[\"]\"]");
        check(text, "/2", "{\"z\": 1}");
        check(text, "/0", "\"[{\\\"\"");
    }

    #[test]
    fn members_of_the_top_level_are_found_without_an_index() {
        let text = r#" {"a": 1, "message": {"b": [1, {"c": 2}]}, "a~/b": "x", "n": null}"#;
        for pointer in ["/a", "/message", "/a~0~1b", "/n"] {
            let index = JsonIndex::build(text);
            assert_eq!(
                member_range(text, pointer),
                Some(index.range(text, pointer))
            );
        }
        assert_eq!(member_range(text, "/zz"), None);
        assert_eq!(member_range(text, "/message/b"), None);
        assert_eq!(member_range("[1, [2]]", "/1"), Some(4..7));
    }

    #[test]
    fn lines() {
        let text = "[\n  {\"a\": 1},\n\n  {\"b\": [\n 2]}\n]";
        let index = JsonIndex::build(text);
        let range = index.range(text, "/1/b");
        assert_eq!(index.line_of(range.start), 4);
        assert_eq!(index.line_of(index.range(text, "/0").start), 2);
        assert_eq!(index.line_of(0), 1);
    }

    #[test]
    fn pointers_round_trip() {
        let mut pointer = String::new();
        push_token(&mut pointer, "a/b");
        push_token(&mut pointer, "~x");
        assert_eq!(pointer, "/a~1b/~0x");
        assert_eq!(pointer_tokens(&pointer).collect::<Vec<_>>(), ["a/b", "~x"]);
    }

    #[test]
    fn never_panics_on_garbage() {
        for text in ["", "]", "{\"a\"", "[[[", "\"unterminated", "{]", "[1,,]"] {
            let index = JsonIndex::build(text);
            let _ = index.range(text, "/0/a");
            let _ = index.line_of(3);
        }
    }
}
