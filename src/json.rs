//! JSON values as the spec language sees them: paths into a value, the six JSON
//! types, and equality and ordering without coercion.
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

/// Writes `text` as the body of a JSON string (without its quotes), handing each
/// piece to `push`: runs of characters as they are, and an escape for `"`, `\` and
/// every control character — the short ones (`\b \f \n \r \t`) where JSON has
/// them, `\u00xx` in lower-case hex otherwise. That is exactly what serde_json writes
/// and what ECMAScript's `JSON.stringify` writes (RFC 8785 §3.2.2.2), so a string
/// written here reads back as serde_json's own output and is already canonical.
pub fn write_string_body(text: &str, mut push: impl FnMut(&str)) {
    let mut plain = 0;
    for (i, byte) in text.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x0c => "\\f",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => continue,
        };
        push(&text[plain..i]);
        plain = i + 1;
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
