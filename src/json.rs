//! JSON values as the spec language sees them: paths into a value, the six JSON
//! types, and equality and ordering without coercion; and JSON strings as every
//! writer of JSON text here writes them (built records, canonical JSON).
//!
//! The lowest layer: records (`trace`), guards (`machine`) and the syntax tree
//! (`spec::ast`) all build on these, and this module imports none of them.

use std::cmp::Ordering;

use serde_json::Value;

/// One step of a path into a JSON value: an object member or an array element.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    /// `.key` or `["key"]`.
    Key(String),
    /// `[index]`.
    Index(usize),
}

/// The type of a JSON value, as `PATH is TYPE` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JsonType {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// Any number, integer or not.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

impl JsonType {
    /// Every type, in the order the language lists them.
    pub const ALL: [JsonType; 6] = [
        JsonType::Null,
        JsonType::Bool,
        JsonType::Number,
        JsonType::String,
        JsonType::Array,
        JsonType::Object,
    ];

    /// The type's name in the spec language.
    pub fn keyword(self) -> &'static str {
        match self {
            JsonType::Null => "null",
            JsonType::Bool => "bool",
            JsonType::Number => "number",
            JsonType::String => "string",
            JsonType::Array => "array",
            JsonType::Object => "object",
        }
    }

    /// The type of `value`.
    pub fn of(value: &Value) -> JsonType {
        match value {
            Value::Null => JsonType::Null,
            Value::Bool(_) => JsonType::Bool,
            Value::Number(_) => JsonType::Number,
            Value::String(_) => JsonType::String,
            Value::Array(_) => JsonType::Array,
            Value::Object(_) => JsonType::Object,
        }
    }
}

/// A comparison between a value and a literal: `==`, `!=`, `<`, `<=`, `>`, `>=`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
}

impl CompareOp {
    /// The operator as written.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Eq => "==",
            CompareOp::Ne => "!=",
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
        }
    }
}

/// JSON equality without coercion: values of different types are never equal, and
/// numbers compare by value (`1 == 1.0`).
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => json_cmp(a, b) == Some(Ordering::Equal),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, p)| y.get(key).is_some_and(|q| json_eq(p, q)))
        }
        _ => a == b,
    }
}

/// Ordering between two numbers or two strings; `None` for anything else.
pub fn json_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(p), Some(q)) = (x.as_i64(), y.as_i64()) {
                Some(p.cmp(&q))
            } else if let (Some(p), Some(q)) = (x.as_u64(), y.as_u64()) {
                Some(p.cmp(&q))
            } else {
                x.as_f64()?.partial_cmp(&y.as_f64()?)
            }
        }
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// The index of the first byte at or after `at` that ends a plain run of a string: a
/// `"`, a `\\` or a control character (or the end). Eight bytes at a time, since most of
/// a record's bytes are in strings: what needs no escape in JSON text.
pub fn skip_plain(bytes: &[u8], at: usize) -> usize {
    let mut at = plain_words(bytes, at, false);
    while at < bytes.len() && !STRING_STOP[usize::from(bytes[at])] {
        at += 1;
    }
    at
}

/// [`skip_plain`] as far as eight bytes at a time go: it stops at the first word of
/// eight that holds a byte ending the run (at that byte), or where fewer than eight
/// bytes are left; also at a byte that is not ASCII when `ascii`.
#[inline]
pub fn plain_words(bytes: &[u8], mut at: usize, ascii: bool) -> usize {
    const ONES: u64 = u64::MAX / 255;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let chars = u64::from_le_bytes(chunk.try_into().expect("bug: an 8-byte chunk"));
        // Bytes below 0x20: subtracting 0x20 borrows into the high bit of exactly
        // those (bytes of 0x80 and above are excluded by `!chars`).
        let control = chars.wrapping_sub(ONES * 0x20) & !chars;
        let quote = chars ^ (ONES * u64::from(b'"'));
        let quote = quote.wrapping_sub(ONES) & !quote;
        let backslash = chars ^ (ONES * u64::from(b'\\'));
        let backslash = backslash.wrapping_sub(ONES) & !backslash;
        let high = if ascii { chars } else { 0 };
        let found = (control | quote | backslash | high) & (ONES << 7);
        if found != 0 {
            return at + found.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    at
}

/// Bytes that end a run of a string that can be copied as it is.
const STRING_STOP: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    while i < 0x20 {
        table[i] = true;
        i += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table
};

/// Writes `text` as the body of a JSON string (without its quotes), handing each
/// piece to `push`: runs of characters as they are, and an escape for `"`, `\` and
/// every control character — the short ones (`\b \f \n \r \t`) where JSON has
/// them, `\u00xx` in lower-case hex otherwise. That is exactly what serde_json writes
/// and what ECMAScript's `JSON.stringify` writes (RFC 8785 §3.2.2.2), so a string
/// written here reads back as serde_json's own output and is already canonical.
pub fn write_string_body(text: &str, mut push: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let (mut plain, mut i) = (0, 0);
    loop {
        i = skip_plain(bytes, i);
        let Some(&byte) = bytes.get(i) else {
            break;
        };
        i += 1;
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            _ => "",
        };
        push(&text[plain..i - 1]);
        plain = i;
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let unicode = [
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ];
            push(std::str::from_utf8(&unicode).unwrap_or_default());
        } else {
            push(escape);
        }
    }
    push(&text[plain..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let mut every_ascii: String = (0u8..0x80).map(char::from).collect();
        every_ascii.push_str("é ☃ 𝄞 \u{2028}");
        for text in [
            every_ascii.as_str(),
            "",
            "plain",
            "\"",
            "a\\b",
            "\u{1f}\u{7f}",
        ] {
            let mut written = String::from("\"");
            write_string_body(text, |piece| written.push_str(piece));
            written.push('"');
            let serde = serde_json::to_string(text).expect("a string serializes");
            assert_eq!(written, serde, "{text:?}");
        }
        // Every byte that needs an escape at every place in and around the eight bytes
        // scanned at once, among plain and multi-byte characters.
        for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é', '\u{7f}'] {
            for before in 0..20 {
                for after in [0, 1, 7, 8, 9, 17] {
                    let text = format!("{}{special}{}", "a".repeat(before), "é".repeat(after));
                    let mut written = String::from("\"");
                    write_string_body(&text, |piece| written.push_str(piece));
                    written.push('"');
                    let serde = serde_json::to_string(&text).expect("a string serializes");
                    assert_eq!(written, serde, "{text:?}");
                }
            }
        }
    }
    use serde_json::json;

    #[test]
    fn equality_is_json_typed() {
        assert!(!json_eq(&json!(0), &json!(false)));
        assert!(!json_eq(&json!(""), &json!(null)));
        assert!(!json_eq(&json!("1"), &json!(1)));
        assert!(json_eq(&json!(1), &json!(1.0)));
        assert!(json_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(!json_eq(&json!([1]), &json!([1, 1])));
    }

    #[test]
    fn ordering_only_within_numbers_and_strings() {
        assert_eq!(json_cmp(&json!(2), &json!(10)), Some(Ordering::Less));
        assert_eq!(json_cmp(&json!(-1), &json!(u64::MAX)), Some(Ordering::Less));
        assert_eq!(json_cmp(&json!(2.5), &json!(2)), Some(Ordering::Greater));
        assert_eq!(json_cmp(&json!("b"), &json!("a")), Some(Ordering::Greater));
        assert_eq!(json_cmp(&json!("2"), &json!(1)), None);
        assert_eq!(json_cmp(&json!(true), &json!(false)), None);
    }
}
