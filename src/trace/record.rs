//! The normalized record: the one shape every adapter produces and every spec reads.
//!
//! A record keeps its fields as the input had them. On the hot path (native JSONL) the
//! top-level fields stay borrowed raw JSON slices of the line, and a field is decoded
//! only when a guard or a `per` key reads it. The canonical fields the checker needs for
//! every record (`kind`, `tool`, `call_id`, `status`) are validated and extracted once.

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::spec::ast::Segment;

/// What a record is, from its `kind` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    Call,
    Result,
    Message,
}

impl Kind {
    pub fn parse(text: &str) -> Option<Kind> {
        match text {
            "call" => Some(Kind::Call),
            "result" => Some(Kind::Result),
            "message" => Some(Kind::Message),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Call => "call",
            Kind::Result => "result",
            Kind::Message => "message",
        }
    }
}

/// A result's outcome, taken only from structured signals of the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Ok,
    Error,
    /// A malformed reply.
    Invalid,
    /// Synthesized: the call got no result by the end of its trace.
    Missing,
}

impl Status {
    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "ok" => Some(Status::Ok),
            "error" => Some(Status::Error),
            "invalid" => Some(Status::Invalid),
            "missing" => Some(Status::Missing),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Invalid => "invalid",
            Status::Missing => "missing",
        }
    }
}

/// Where a record is in its input file. The file itself is known to whoever reads it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Location {
    /// 1-based line number.
    pub line: u64,
    /// Byte offset of the record's first byte in the file.
    pub offset: u64,
    /// Length of the record's source text in bytes.
    pub len: u64,
    /// JSON pointer to the record inside the line's document; empty for a whole line.
    pub pointer: Box<str>,
}

/// A record's fields: borrowed raw JSON from a line, or an owned object built by an
/// adapter.
#[derive(Debug, Clone)]
pub enum Fields<'a> {
    Raw(Vec<(Cow<'a, str>, &'a RawValue)>),
    Owned(serde_json::Map<String, Value>),
}

impl Fields<'_> {
    fn get_top(&self, key: &str) -> Option<Cow<'_, Value>> {
        match self {
            Fields::Raw(fields) => fields
                .iter()
                .find(|(name, _)| name == key)
                // The raw slice was validated as JSON when the line was read, and
                // serde_json's own recursion limit applies again here.
                .and_then(|(_, raw)| serde_json::from_str::<Value>(raw.get()).ok())
                .map(Cow::Owned),
            Fields::Owned(map) => map.get(key).map(Cow::Borrowed),
        }
    }

    fn contains(&self, key: &str) -> bool {
        match self {
            Fields::Raw(fields) => fields.iter().any(|(name, _)| name == key),
            Fields::Owned(map) => map.contains_key(key),
        }
    }

    /// The field names, in input order.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            Fields::Raw(fields) => fields.iter().map(|(name, _)| name.as_ref()).collect(),
            Fields::Owned(map) => map.keys().map(String::as_str).collect(),
        }
    }

    /// The raw JSON text of a top-level field (owned fields are serialized).
    pub fn raw_text(&self, key: &str) -> Option<Cow<'_, str>> {
        match self {
            Fields::Raw(fields) => fields
                .iter()
                .find(|(name, _)| name == key)
                .map(|(_, raw)| Cow::Borrowed(raw.get())),
            Fields::Owned(map) => map.get(key).map(|v| Cow::Owned(v.to_string())),
        }
    }
}

/// One normalized record.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    pub loc: Location,
    pub kind: Option<Kind>,
    pub tool: Option<Cow<'a, str>>,
    pub call_id: Option<Cow<'a, str>>,
    pub status: Option<Status>,
    pub fields: Fields<'a>,
    /// A result's call arguments as raw JSON text, when the result itself carries no
    /// `args`. Kept as text so a call's arguments are decoded only if a spec reads them.
    pub inherited_args: Option<Arc<str>>,
}

impl<'a> Record<'a> {
    /// Validates the canonical fields of `fields` and builds the record. The error
    /// message says which field is wrong and how.
    pub fn new(fields: Fields<'a>, loc: Location) -> Result<Record<'a>, String> {
        let kind = match canonical_str(&fields, "kind")? {
            None => None,
            Some(text) => Some(Kind::parse(&text).ok_or_else(|| {
                format!(
                    "field `kind` is {}, expected \"call\", \"result\" or \"message\"",
                    Value::String(text.into_owned())
                )
            })?),
        };
        let status = match canonical_str(&fields, "status")? {
            None => None,
            Some(text) => Some(Status::parse(&text).ok_or_else(|| {
                format!(
                    "field `status` is {}, expected \"ok\", \"error\", \"invalid\" or \"missing\"",
                    Value::String(text.into_owned())
                )
            })?),
        };
        let tool = canonical_str(&fields, "tool")?;
        let call_id = call_id_of(&fields)?;
        for name in ["role", "text"] {
            canonical_str(&fields, name)?;
        }
        Ok(Record {
            loc,
            kind,
            tool,
            call_id,
            status,
            fields,
            inherited_args: None,
        })
    }

    /// Whether the record has a top-level field `key` (present, even if `null`).
    pub fn has_field(&self, key: &str) -> bool {
        self.fields.contains(key) || (key == "args" && self.inherited_args.is_some())
    }

    /// The value at `path`, or `None` when any step of it is missing. A `null` value is
    /// `Some(Value::Null)`: missing and null are different answers.
    pub fn get(&self, path: &[Segment]) -> Option<Cow<'_, Value>> {
        let (first, rest) = path.split_first()?;
        let Segment::Key(key) = first else {
            return None;
        };
        let top = match self.fields.get_top(key) {
            Some(value) => value,
            None if key == "args" => {
                Cow::Owned(serde_json::from_str(self.inherited_args.as_deref()?).ok()?)
            }
            None => self.synthetic(key).map(Cow::Owned)?,
        };
        descend(top, rest)
    }

    /// Canonical values a record has even when its fields don't spell them (e.g. the
    /// tool of a result, inherited from its call).
    fn synthetic(&self, key: &str) -> Option<Value> {
        match key {
            "kind" => self.kind.map(|k| Value::String(k.as_str().into())),
            "tool" => self.tool.as_ref().map(|t| Value::String(t.to_string())),
            "call_id" => self.call_id.as_ref().map(|c| Value::String(c.to_string())),
            "status" => self.status.map(|s| Value::String(s.as_str().into())),
            _ => None,
        }
    }
}

fn descend<'v>(value: Cow<'v, Value>, path: &[Segment]) -> Option<Cow<'v, Value>> {
    match value {
        Cow::Borrowed(mut current) => {
            for segment in path {
                current = step(current, segment)?;
            }
            Some(Cow::Borrowed(current))
        }
        Cow::Owned(owned) => {
            let mut current = &owned;
            for segment in path {
                current = step(current, segment)?;
            }
            Some(Cow::Owned(current.clone()))
        }
    }
}

fn step<'v>(value: &'v Value, segment: &Segment) -> Option<&'v Value> {
    match (value, segment) {
        (Value::Object(map), Segment::Key(key)) => map.get(key),
        (Value::Array(items), Segment::Index(index)) => items.get(*index),
        _ => None,
    }
}

/// A canonical field that must be a string when present.
fn canonical_str<'a>(fields: &Fields<'a>, name: &str) -> Result<Option<Cow<'a, str>>, String> {
    match fields {
        Fields::Raw(raw) => match raw.iter().find(|(key, _)| key == name) {
            None => Ok(None),
            Some((_, value)) => raw_string(value)
                .map(Some)
                .ok_or_else(|| wrong_type(name, value.get(), "a string")),
        },
        Fields::Owned(map) => match map.get(name) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(Cow::Owned(text.clone()))),
            Some(other) => Err(wrong_type(name, &other.to_string(), "a string")),
        },
    }
}

/// `call_id` may be a string or an integer (JSON-RPC ids are either).
fn call_id_of<'a>(fields: &Fields<'a>) -> Result<Option<Cow<'a, str>>, String> {
    const NAME: &str = "call_id";
    const EXPECTED: &str = "a string or an integer";
    match fields {
        Fields::Raw(raw) => match raw.iter().find(|(key, _)| key == NAME) {
            None => Ok(None),
            Some((_, value)) => {
                let text = value.get();
                if let Some(id) = raw_string(value) {
                    Ok(Some(id))
                } else if is_integer_text(text) {
                    Ok(Some(Cow::Borrowed(text)))
                } else {
                    Err(wrong_type(NAME, text, EXPECTED))
                }
            }
        },
        Fields::Owned(map) => match map.get(NAME) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(Cow::Owned(text.clone()))),
            Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {
                Ok(Some(Cow::Owned(n.to_string())))
            }
            Some(other) => Err(wrong_type(NAME, &other.to_string(), EXPECTED)),
        },
    }
}

fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Decodes a raw JSON string, borrowing when it has no escapes.
pub fn raw_string<'a>(raw: &'a RawValue) -> Option<Cow<'a, str>> {
    let text = raw.get();
    if !text.starts_with('"') {
        return None;
    }
    match serde_json::from_str::<&'a str>(text) {
        Ok(borrowed) => Some(Cow::Borrowed(borrowed)),
        Err(_) => serde_json::from_str::<String>(text).ok().map(Cow::Owned),
    }
}

fn wrong_type(name: &str, text: &str, expected: &str) -> String {
    format!(
        "field `{name}` is {}, expected {expected}",
        describe_json(text)
    )
}

/// A short description of a JSON value for error messages: its type, and the value
/// itself when it is short.
pub fn describe_json(text: &str) -> String {
    let ty = match text.trim_start().as_bytes().first() {
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    };
    if text.len() <= 24 && ty != "null" {
        format!("{ty} `{text}`")
    } else {
        ty.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(name: &str) -> Segment {
        Segment::Key(name.to_string())
    }

    fn owned(value: Value) -> Record<'static> {
        let Value::Object(map) = value else {
            panic!("test records are objects")
        };
        Record::new(Fields::Owned(map), Location::default()).expect("valid record")
    }

    #[test]
    fn missing_is_distinct_from_null() {
        let record = owned(serde_json::json!({"output": {"id": null}}));
        assert_eq!(
            record.get(&[key("output"), key("id")]).as_deref(),
            Some(&Value::Null)
        );
        assert_eq!(record.get(&[key("output"), key("other")]), None);
        assert_eq!(record.get(&[key("nothing")]), None);
    }

    #[test]
    fn indexes_arrays_and_not_objects() {
        let record = owned(serde_json::json!({"output": {"items": [10, 20], "0": "zero"}}));
        let items = [key("output"), key("items"), Segment::Index(1)];
        assert_eq!(record.get(&items).as_deref(), Some(&serde_json::json!(20)));
        assert_eq!(record.get(&[key("output"), Segment::Index(0)]), None);
    }

    #[test]
    fn rejects_wrong_types_in_canonical_fields() {
        let Value::Object(map) = serde_json::json!({"kind": "call", "tool": 5}) else {
            unreachable!()
        };
        let err = Record::new(Fields::Owned(map), Location::default()).unwrap_err();
        assert_eq!(err, "field `tool` is a number `5`, expected a string");

        let Value::Object(map) = serde_json::json!({"kind": "event"}) else {
            unreachable!()
        };
        let err = Record::new(Fields::Owned(map), Location::default()).unwrap_err();
        assert!(err.contains("field `kind` is \"event\""), "{err}");
    }

    #[test]
    fn results_read_inherited_args() {
        let mut record = owned(serde_json::json!({"kind": "result", "tool": "t"}));
        assert!(!record.has_field("args"));
        record.inherited_args = Some(Arc::from(r#"{"request_id": "r1"}"#));
        assert!(record.has_field("args"));
        assert_eq!(
            record.get(&[key("args"), key("request_id")]).as_deref(),
            Some(&serde_json::json!("r1"))
        );
    }
}
