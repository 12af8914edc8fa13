//! The normalized record: the one shape every adapter produces and every spec reads.
//!
//! A record keeps its fields as the input had them. On the hot path (native JSONL) the
//! top-level fields stay borrowed raw JSON slices of the line, and a field is decoded
//! only when a guard or a `per` key reads it. The canonical fields the checker needs for
//! every record (`kind`, `tool`, `call_id`, `status`) are validated and extracted once.
//! Adapters of transcript formats build their records either as an object of values or,
//! on their fast paths, as JSON text ([`Built`]): values copied raw from the input and
//! the few they make written beside them, read as a line's raw fields are.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::Arc;

use serde_json::Value;

use crate::json::{JsonType, Segment, json_cmp, json_eq};
use crate::trace::json_index::{string_end, value_end};
use crate::trace::native::scan;

/// Why a line or an object is not a usable record. The message says precisely what is
/// wrong, in the words every report uses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The line is not one JSON object: invalid JSON, another kind of value, or an
    /// object with a duplicate key.
    #[error("{0}")]
    Syntax(String),
    /// The record nests arrays and objects deeper than the limit.
    #[error(
        "record is nested too deeply at column {column} (the limit is {limit} levels of arrays and objects)",
        limit = crate::trace::native::MAX_DEPTH
    )]
    TooDeep {
        /// 1-based column of the bracket that goes too deep.
        column: usize,
    },
    /// A field of the record nests deeper than the limit.
    #[error(
        "field `{field}`: record is nested too deeply at column {column} (the limit is {limit} levels of arrays and objects)",
        limit = crate::trace::native::MAX_DEPTH
    )]
    FieldTooDeep {
        /// The field.
        field: String,
        /// 1-based column of the bracket that goes too deep.
        column: usize,
    },
    /// A field of the record holds a number beyond the range of a double.
    #[error(
        "field `{field}`: the number `{number}` at column {column} is beyond the range of a double (no guard or key could compare it)"
    )]
    NumberOutOfRange {
        /// The field.
        field: String,
        /// The number as written (its first 24 characters and `…` when longer).
        number: String,
        /// 1-based column of its first character.
        column: usize,
    },
    /// A field of the record holds a string with half of a UTF-16 surrogate pair alone.
    #[error(
        "field `{field}`: the string at column {column} escapes half of a UTF-16 surrogate pair without the other half, which is no character (no guard or key could read the string)"
    )]
    LoneSurrogate {
        /// The field.
        field: String,
        /// 1-based column of the string's opening quote.
        column: usize,
    },
    /// The line is not UTF-8.
    #[error("line is not valid UTF-8 (first bad byte at column {column})")]
    InvalidUtf8 {
        /// 1-based column of the first bad byte.
        column: usize,
    },
    /// The line is longer than the reader's limit.
    #[error("line is {len} bytes, over the limit of {limit} bytes")]
    TooLong {
        /// The line's length in bytes.
        len: u64,
        /// The limit it was read with.
        limit: usize,
    },
    /// A canonical field has the wrong type or value.
    #[error("field `{field}` is {found}, expected {expected}")]
    Field {
        /// The field's name.
        field: &'static str,
        /// What it holds, described.
        found: String,
        /// What it must hold.
        expected: &'static str,
    },
}

/// What a record is, from its `kind` field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A tool call.
    Call,
    /// A tool's result.
    Result,
    /// A message (user or assistant text, refusals, approvals).
    Message,
}

impl Kind {
    /// The kind a `kind` field names; `None` for any other text.
    pub fn parse(text: &str) -> Option<Kind> {
        match text {
            "call" => Some(Kind::Call),
            "result" => Some(Kind::Result),
            "message" => Some(Kind::Message),
            _ => None,
        }
    }

    /// The kind as the `kind` field spells it.
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
    /// The tool succeeded.
    Ok,
    /// The format signalled an error.
    Error,
    /// A malformed reply.
    Invalid,
    /// Synthesized: the call got no result by the end of its trace.
    Missing,
}

impl Status {
    /// The status a `status` field names; `None` for any other text.
    pub fn parse(text: &str) -> Option<Status> {
        match text {
            "ok" => Some(Status::Ok),
            "error" => Some(Status::Error),
            "invalid" => Some(Status::Invalid),
            "missing" => Some(Status::Missing),
            _ => None,
        }
    }

    /// The status as the `status` field spells it.
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
    pub pointer: Pointer,
}

/// A JSON pointer as a [`Location`] keeps it: shared, so that copying a location (the
/// checker keeps where each call and each instance was last seen) allocates nothing;
/// the empty pointer of a whole line holds nothing at all.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Pointer(Option<Arc<str>>);

impl Pointer {
    /// The pointer's text.
    pub fn as_str(&self) -> &str {
        self.0.as_deref().unwrap_or_default()
    }
}

impl std::ops::Deref for Pointer {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for Pointer {
    fn from(text: &str) -> Pointer {
        Pointer((!text.is_empty()).then(|| Arc::from(text)))
    }
}

impl From<String> for Pointer {
    fn from(text: String) -> Pointer {
        Pointer((!text.is_empty()).then(|| Arc::from(text)))
    }
}

impl std::fmt::Debug for Pointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Pointer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The raw JSON text of one value, a slice of its line, known to be valid JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawJson<'a>(&'a str);

impl<'a> RawJson<'a> {
    /// Wraps `text`, which the caller has checked is one valid JSON value.
    pub(crate) fn new(text: &'a str) -> RawJson<'a> {
        RawJson(text)
    }

    /// The value's JSON text.
    pub fn get(self) -> &'a str {
        self.0
    }
}

/// A record's fields: borrowed raw JSON from a line, or an owned object built by an
/// adapter.
#[derive(Debug, Clone)]
pub enum Fields<'a> {
    /// Top-level members as raw JSON slices of the line, in line order.
    Raw(Vec<(Cow<'a, str>, RawJson<'a>)>),
    /// A JSON object an adapter built.
    Owned(serde_json::Map<String, Value>),
    /// An object an adapter built as JSON text.
    Built(Built),
}

/// An object an adapter built as JSON text: each member's value is raw JSON, copied
/// from the input or written by the adapter, in one string. Read as a line's raw
/// fields are ([`Fields::Raw`]): nothing is decoded that no guard or key reads, and it
/// is one allocation for the text and one for the members, not a tree of values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Built {
    text: String,
    /// Each member's name and where its value is in `text`, in the order set.
    members: Vec<(Cow<'static, str>, Range<usize>)>,
}

/// The canonical fields of a call or a result an adapter built ([`Built`]), as values:
/// its `kind`, `status` (or none), `tool` and `call_id`, each what its member's JSON
/// says, with no `role` or `text` member. A record made with them
/// ([`Record::known`]) takes them as they are, reading nothing again and copying
/// neither its tool nor its call id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Known {
    pub kind: Kind,
    pub status: Option<Status>,
    pub tool: String,
    pub call_id: String,
}

impl Built {
    /// An empty object, with room for about `bytes` bytes of values.
    pub fn with_capacity(bytes: usize) -> Built {
        Built {
            text: String::with_capacity(bytes),
            // Room for a result's dozen members: a record is made once and read once.
            members: Vec::with_capacity(12),
        }
    }

    /// An empty object with room for `members` members: for an object kept a while,
    /// whose members are known.
    pub(crate) fn with_members(members: usize) -> Built {
        Built {
            text: String::new(),
            members: Vec::with_capacity(members),
        }
    }

    /// Sets member `key` to `raw`, which the caller has checked is one valid JSON
    /// value (a slice of a parsed input, say). A member set again is replaced.
    pub(crate) fn raw(&mut self, key: impl Into<Cow<'static, str>>, raw: &str) {
        let start = self.text.len();
        self.text.push_str(raw);
        self.set(key.into(), start);
    }

    /// Sets member `key` to the JSON string of `text`.
    pub fn string(&mut self, key: impl Into<Cow<'static, str>>, text: &str) {
        let start = self.text.len();
        write_json_string(&mut self.text, text);
        self.set(key.into(), start);
    }

    /// Sets member `key` to `value`.
    pub fn value(&mut self, key: impl Into<Cow<'static, str>>, value: &Value) {
        let start = self.text.len();
        match value {
            Value::String(text) => write_json_string(&mut self.text, text),
            // A natural number, a `seq` say, is written without the formatting
            // machinery: its digits are what serde_json prints for it.
            Value::Number(n) if n.is_u64() => {
                let n = n.as_u64().expect("bug: a natural number");
                self.text.push_str(itoa::Buffer::new().format(n));
            }
            other => {
                use std::fmt::Write as _;
                let _ = write!(self.text, "{other}");
            }
        }
        self.set(key.into(), start);
    }

    fn set(&mut self, key: Cow<'static, str>, start: usize) {
        let range = start..self.text.len();
        match self
            .members
            .iter_mut()
            .find(|(name, _)| same_name(name, &key))
        {
            Some((_, old)) => *old = range,
            None => self.members.push((key, range)),
        }
    }

    /// The raw JSON of member `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.members
            .iter()
            .find(|(name, _)| same_name(name, key))
            .map(|(_, range)| &self.text[range.clone()])
    }

    /// The members as `(name, raw JSON)`, in the order they were first set.
    pub fn members(&self) -> impl Iterator<Item = (&str, &str)> {
        self.members
            .iter()
            .map(|(name, range)| (name.as_ref(), &self.text[range.clone()]))
    }

    /// The object decoded: for readers that need values, not the hot path.
    pub fn to_map(&self) -> serde_json::Map<String, Value> {
        self.members()
            .map(|(name, raw)| {
                let value = serde_json::from_str(raw).expect("bug: a built member is valid JSON");
                (name.to_string(), value)
            })
            .collect()
    }
}

/// Whether two member names are the same: lengths first, then byte by byte, for
/// names are short and most differ in their first byte, where a call to compare
/// them would cost more than the comparison.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).all(|(a, b)| a == b)
}

/// Appends `text` to `out` as a JSON string, escaped as serde_json writes it (so a
/// built member's text is what an owned object's value prints).
fn write_json_string(out: &mut String, text: &str) {
    out.reserve(text.len() + 2);
    out.push('"');
    crate::json::write_string_body(text, |piece| out.push_str(piece));
    out.push('"');
}

impl Fields<'_> {
    fn contains(&self, key: &str) -> bool {
        match self {
            Fields::Raw(fields) => fields.iter().any(|(name, _)| same_name(name, key)),
            Fields::Owned(map) => map.contains_key(key),
            Fields::Built(built) => built.get(key).is_some(),
        }
    }

    /// The field names, in input order.
    pub fn keys(&self) -> Vec<&str> {
        match self {
            Fields::Raw(fields) => fields.iter().map(|(name, _)| name.as_ref()).collect(),
            Fields::Owned(map) => map.keys().map(String::as_str).collect(),
            Fields::Built(built) => built.members().map(|(name, _)| name).collect(),
        }
    }

    /// The fields as one object, however they are held: for readers that need
    /// values, not the hot path.
    pub fn to_map(&self) -> serde_json::Map<String, Value> {
        match self {
            Fields::Raw(fields) => fields
                .iter()
                .map(|(name, raw)| {
                    let value =
                        serde_json::from_str(raw.get()).expect("bug: a raw member is valid JSON");
                    (name.to_string(), value)
                })
                .collect(),
            Fields::Owned(map) => map.clone(),
            Fields::Built(built) => built.to_map(),
        }
    }

    /// The raw JSON text of a top-level field (owned fields are serialized).
    pub fn raw_text(&self, key: &str) -> Option<Cow<'_, str>> {
        match self {
            Fields::Raw(fields) => fields
                .iter()
                .find(|(name, _)| same_name(name, key))
                .map(|(_, raw)| Cow::Borrowed(raw.get())),
            Fields::Owned(map) => map.get(key).map(|v| Cow::Owned(v.to_string())),
            Fields::Built(built) => built.get(key).map(Cow::Borrowed),
        }
    }
}

/// One normalized record.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    /// Where the record is in its input.
    pub loc: Location,
    /// The `kind` field; `None` for native event records without one.
    pub kind: Option<Kind>,
    /// The `tool` field (a result may inherit it from its call).
    pub tool: Option<Cow<'a, str>>,
    /// The `call_id` field: a string, or an integer's text.
    pub call_id: Option<Cow<'a, str>>,
    /// The `status` field.
    pub status: Option<Status>,
    /// Every field, the canonical ones included.
    pub fields: Fields<'a>,
    /// A result's call arguments as raw JSON text, when the result itself carries no
    /// `args`. Kept as text so a call's arguments are decoded only if a spec reads them.
    pub inherited_args: Option<Cow<'a, str>>,
}

impl<'a> Record<'a> {
    /// Validates the canonical fields of `fields` and builds the record. The error
    /// message says which field is wrong and how.
    pub fn new(fields: Fields<'a>, loc: Location) -> Result<Record<'a>, RecordError> {
        let canonical = Canonical::find(&fields);
        let kind = match canonical_text(canonical.kind, "kind")? {
            None => None,
            Some(text) => Some(Kind::parse(&text).ok_or_else(|| RecordError::Field {
                field: "kind",
                found: Value::String(text.into_owned()).to_string(),
                expected: r#""call", "result" or "message""#,
            })?),
        };
        let status = match canonical_text(canonical.status, "status")? {
            None => None,
            Some(text) => Some(Status::parse(&text).ok_or_else(|| RecordError::Field {
                field: "status",
                found: Value::String(text.into_owned()).to_string(),
                expected: r#""ok", "error", "invalid" or "missing""#,
            })?),
        };
        let tool = canonical_str(canonical.tool, "tool")?;
        let call_id = call_id_of(canonical.call_id)?;
        canonical_text(canonical.role, "role")?;
        canonical_text(canonical.text, "text")?;
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

    /// The record of `fields`, whose canonical fields are `known`: what [`Record::new`]
    /// makes of them, without reading them.
    pub(crate) fn known(fields: Fields<'a>, loc: Location, known: Known) -> Record<'a> {
        let record = Record {
            loc,
            kind: Some(known.kind),
            tool: Some(Cow::Owned(known.tool)),
            call_id: Some(Cow::Owned(known.call_id)),
            status: known.status,
            fields,
            inherited_args: None,
        };
        debug_assert!(
            Record::new(record.fields.clone(), record.loc.clone()).is_ok_and(|read| {
                (read.kind, read.status, &read.tool, &read.call_id)
                    == (record.kind, record.status, &record.tool, &record.call_id)
            }),
            "bug: the known fields of a record are not what it holds"
        );
        record
    }

    /// Whether the record has a top-level field `key` (present, even if `null`).
    pub fn has_field(&self, key: &str) -> bool {
        self.fields.contains(key) || (key == "args" && self.inherited_args.is_some())
    }

    /// The value at `path`, or `None` when any step of it is missing. A `null` value is
    /// found: missing and null are different answers. Raw fields are navigated without
    /// decoding what the path does not reach.
    pub fn lookup(&self, path: &[Segment]) -> Option<Found<'_>> {
        let (first, rest) = path.split_first()?;
        let Segment::Key(key) = first else {
            return None;
        };
        match &self.fields {
            Fields::Raw(fields) => {
                if let Some((_, raw)) = fields.iter().find(|(name, _)| same_name(name, key)) {
                    return raw_descend(raw.get(), rest).map(Found::Raw);
                }
            }
            Fields::Owned(map) => {
                if let Some(value) = map.get(key.as_str()) {
                    return value_descend(value, rest).map(Found::Value);
                }
            }
            Fields::Built(built) => {
                if let Some(raw) = built.get(key) {
                    return raw_descend(raw, rest).map(Found::Raw);
                }
            }
        }
        if key == "args" {
            return raw_descend(self.inherited_args.as_deref()?, rest).map(Found::Raw);
        }
        let value = self.synthetic(key)?;
        rest.is_empty().then_some(Found::Owned(value))
    }

    /// Appends to `key` the value at `path` as an instance key spells it: a string as
    /// its text, any other value as JSON. `false` when the path is missing or holds a
    /// number serde_json cannot represent; `key` may then hold part of it.
    pub(crate) fn push_key(&self, path: &[Segment], key: &mut String) -> bool {
        // The common key, one member of a raw top-level object (`args.request_id`),
        // is read without the general lookup.
        let object = match (path, &self.fields) {
            ([Segment::Key(field), Segment::Key(name)], Fields::Raw(fields)) => Some((
                field,
                name,
                fields
                    .iter()
                    .find(|(have, _)| same_name(have, field))
                    .map(|(_, raw)| raw.get()),
            )),
            ([Segment::Key(field), Segment::Key(name)], Fields::Built(built)) => {
                Some((field, name, built.get(field)))
            }
            _ => None,
        };
        if let Some((field, name, object)) = object {
            let object = match object {
                Some(object) => object,
                None if field == "args" => match self.inherited_args.as_deref() {
                    Some(args) => args,
                    None => return false,
                },
                // Neither a field nor a canonical value the record implies (those have
                // no members).
                None => return false,
            };
            return raw_member(object, name).is_some_and(|found| Found::Raw(found).push_key(key));
        }
        self.lookup(path).is_some_and(|found| found.push_key(key))
    }

    /// The value at `path`, decoded; see [`Record::lookup`].
    pub fn get(&self, path: &[Segment]) -> Option<Cow<'_, Value>> {
        self.lookup(path)?.into_value()
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

fn value_descend<'v>(mut value: &'v Value, path: &[Segment]) -> Option<&'v Value> {
    for segment in path {
        value = step(value, segment)?;
    }
    Some(value)
}

/// Follows `path` inside the raw JSON `text` (known to be valid), skipping what the
/// path does not reach, and returns the raw text of the value it ends at.
fn raw_descend<'t>(mut text: &'t str, path: &[Segment]) -> Option<&'t str> {
    for segment in path {
        text = match segment {
            Segment::Key(key) => raw_member(text, key)?,
            Segment::Index(index) => raw_element(text, *index)?,
        };
    }
    Some(text)
}

/// The raw value of member `key` of the raw object `text` (the last one, if the key is
/// repeated, as in a decoded `serde_json::Value`), or `None` if `text` is not an object
/// or has no such member.
///
/// `text` is valid JSON (it was validated when its line was read); it is on the hot
/// path of every guard and `per` key, so nothing is validated again: a scalar is
/// skipped to the byte that ends it, a string or a container by the decoder's own
/// scanner, which also says whether a key has escapes (only those are decoded).
fn raw_member<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let bytes = text.as_bytes();
    let name = key.as_bytes();
    let mut at = scan::skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    let mut found = None;
    loop {
        at = scan::skip_ws(bytes, at);
        if bytes.get(at) != Some(&b'"') {
            // `}`: the end of the object.
            return found.map(|(start, end)| &text[start..end]);
        }
        // A member whose name is spelt as `key`'s bytes is `key` when those need no
        // escape: names are compared in place, and only a name with an escape is
        // decoded. (With a quote or a backslash, the same bytes may end the name
        // early or be an escape.)
        let after = at + 1 + name.len();
        let (key_end, matches) = if bytes.get(after) == Some(&b'"')
            && bytes
                .get(at + 1..after)
                .is_some_and(|have| same_bytes(have, name))
            && plain_name(name)
        {
            (after + 1, true)
        } else {
            let (end, escaped) = string_of_valid(bytes, at);
            (end, escaped && key_matches(&text[at..end], key))
        };
        at = scan::skip_ws(bytes, key_end) + 1; // past `:`
        at = scan::skip_ws(bytes, at);
        let end = match bytes.get(at) {
            Some(b'"') => string_of_valid(bytes, at).0,
            Some(b'{' | b'[') => skip_value(bytes, at),
            _ => scalar_end(bytes, at),
        };
        if matches {
            found = Some((at, end));
        }
        at = scan::skip_ws(bytes, end);
        if bytes.get(at) == Some(&b',') {
            at += 1;
        }
    }
}

/// The end of the string whose opening quote is at `at` in valid JSON text, and
/// whether it has an escape. Plain strings, most of them, are skipped eight bytes at a
/// time up to their closing quote, in place: valid JSON holds no control character
/// in a string, so a quote or a backslash ends the run. Inlined into the loop over
/// members, where a call costs as much as skipping a short string.
#[inline(always)]
fn string_of_valid(bytes: &[u8], at: usize) -> (usize, bool) {
    let mut end = crate::json::plain_words(bytes, at + 1, false);
    loop {
        match bytes.get(end) {
            Some(b'"') => return (end + 1, false),
            Some(b'\\') => return (string_end(bytes, at), true),
            Some(_) => end += 1,
            None => return (bytes.len(), false),
        }
    }
}

/// Whether `name` has neither a quote nor a backslash (nor a control character),
/// checked eight bytes at a time.
#[inline]
fn plain_name(name: &[u8]) -> bool {
    let at = crate::json::plain_words(name, 0, false);
    name[at..]
        .iter()
        .all(|&b| b != b'"' && b != b'\\' && b >= 0x20)
}

/// Whether `a` and `b`, of the same length, hold the same bytes: eight at a time,
/// without a call, for member names are short.
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let word = |bytes: &[u8], at: usize| {
        u64::from_le_bytes(bytes[at..at + 8].try_into().expect("bug: an 8-byte chunk"))
    };
    let mut at = 0;
    while at + 8 <= a.len() {
        if word(a, at) != word(b, at) {
            return false;
        }
        at += 8;
    }
    a[at..].iter().zip(&b[at..]).all(|(a, b)| a == b)
}

/// The end of the number, `true`, `false` or `null` at `at` of valid JSON text: the
/// first byte that cannot be part of it, found without checking what was checked
/// when its line was read.
#[inline]
fn scalar_end(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

/// The end of the valid JSON value at `at`.
fn skip_value(bytes: &[u8], at: usize) -> usize {
    scan::value(bytes, at).unwrap_or_else(|| value_end(bytes, at, bytes.len()))
}

/// The raw element `index` of the raw array `text`.
fn raw_element(text: &str, index: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut at = scan::skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    at += 1;
    let mut current = 0;
    loop {
        at = scan::skip_ws(bytes, at);
        if bytes.get(at).is_none_or(|&b| b == b']') {
            return None;
        }
        let end = match bytes.get(at) {
            Some(b'"' | b'{' | b'[') => skip_value(bytes, at),
            _ => scalar_end(bytes, at),
        };
        if current == index {
            return Some(&text[at..end]);
        }
        current += 1;
        at = scan::skip_ws(bytes, end);
        if bytes.get(at) == Some(&b',') {
            at += 1;
        }
    }
}

/// Whether the raw JSON string `raw` (with its quotes) spells `key`.
fn key_matches(raw: &str, key: &str) -> bool {
    let inner = &raw[1..raw.len() - 1];
    if has_backslash(inner) {
        serde_json::from_str::<String>(raw).is_ok_and(|decoded| decoded == key)
    } else {
        inner == key
    }
}

/// Whether `text` has a backslash: a loop for the short texts of most fields, where
/// calling `memchr` costs more than it saves.
fn has_backslash(text: &str) -> bool {
    if text.len() < 32 {
        text.bytes().any(|b| b == b'\\')
    } else {
        text.contains('\\')
    }
}

/// A value found in a record by [`Record::lookup`].
#[derive(Debug, Clone, PartialEq)]
pub enum Found<'r> {
    /// Raw JSON text from the input, not yet decoded.
    Raw(&'r str),
    /// A value inside an adapter's object.
    Value(&'r Value),
    /// A canonical value the record implies (e.g. a result's inherited `tool`).
    Owned(Value),
}

impl<'r> Found<'r> {
    /// The decoded value, keeping the borrow of the record.
    pub fn into_value(self) -> Option<Cow<'r, Value>> {
        match self {
            Found::Raw(text) => serde_json::from_str(text).ok().map(Cow::Owned),
            Found::Value(value) => Some(Cow::Borrowed(value)),
            Found::Owned(value) => Some(Cow::Owned(value)),
        }
    }

    /// The decoded value. `None` only for raw numbers serde_json cannot represent
    /// (e.g. `1e400`).
    pub fn to_value(&self) -> Option<Cow<'_, Value>> {
        match self {
            Found::Raw(text) => serde_json::from_str(text).ok().map(Cow::Owned),
            Found::Value(value) => Some(Cow::Borrowed(value)),
            Found::Owned(value) => Some(Cow::Borrowed(value)),
        }
    }

    /// The string, if the value is one.
    pub fn as_str(&self) -> Option<Cow<'_, str>> {
        match self {
            Found::Raw(text) => raw_str(text),
            Found::Value(value) => value.as_str().map(Cow::Borrowed),
            Found::Owned(value) => value.as_str().map(Cow::Borrowed),
        }
    }

    /// Appends the value to `key` as an instance key spells it (see
    /// [`Record::push_key`]); `false` for a raw number serde_json cannot represent.
    fn push_key(&self, key: &mut String) -> bool {
        if let Found::Raw(text) = self
            && let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'))
            && !has_backslash(inner)
        {
            // A string without escapes is its own text.
            key.push_str(inner);
            return true;
        }
        match self.as_str() {
            Some(text) => key.push_str(&text),
            None => match self.to_value() {
                Some(value) => key.push_str(&value.to_string()),
                None => return false,
            },
        }
        true
    }

    /// The value's JSON type.
    pub fn json_type(&self) -> JsonType {
        match self {
            Found::Raw(text) => match text.trim_start().as_bytes().first() {
                Some(b'{') => JsonType::Object,
                Some(b'[') => JsonType::Array,
                Some(b'"') => JsonType::String,
                Some(b't' | b'f') => JsonType::Bool,
                Some(b'n') => JsonType::Null,
                _ => JsonType::Number,
            },
            Found::Value(value) => JsonType::of(value),
            Found::Owned(value) => JsonType::of(value),
        }
    }

    /// JSON-typed equality with a literal (see [`json_eq`]); strings
    /// and scalars are compared without decoding the found value into a tree.
    pub fn eq_literal(&self, literal: &Value) -> bool {
        if let Found::Raw(text) = self {
            let text = text.trim();
            match literal {
                Value::String(want) => return raw_str(text).is_some_and(|have| have == *want),
                Value::Bool(true) => return text == "true",
                Value::Bool(false) => return text == "false",
                Value::Null => return text == "null",
                _ if JsonType::of(literal) != self.json_type() => return false,
                _ => {}
            }
        }
        self.to_value()
            .is_some_and(|value| json_eq(&value, literal))
    }

    /// Ordering against a literal: numbers with numbers, strings with strings.
    pub fn cmp_literal(&self, literal: &Value) -> Option<std::cmp::Ordering> {
        match literal {
            Value::String(want) => self.as_str().map(|have| have.as_ref().cmp(want.as_str())),
            Value::Number(_) if self.json_type() == JsonType::Number => {
                json_cmp(self.to_value()?.as_ref(), literal)
            }
            _ => None,
        }
    }
}

/// A raw JSON string's text, borrowed when it has no escapes.
fn raw_str(text: &str) -> Option<Cow<'_, str>> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    if !has_backslash(inner) {
        // Valid JSON, so the quotes delimit the whole string and nothing inside needs
        // decoding.
        return Some(Cow::Borrowed(inner));
    }
    serde_json::from_str::<String>(text).ok().map(Cow::Owned)
}

fn step<'v>(value: &'v Value, segment: &Segment) -> Option<&'v Value> {
    match (value, segment) {
        (Value::Object(map), Segment::Key(key)) => map.get(key),
        (Value::Array(items), Segment::Index(index)) => items.get(*index),
        _ => None,
    }
}

/// The canonical fields of a record, as found in its fields, before validation.
#[derive(Default)]
struct Canonical<'a, 'v> {
    kind: Option<Slot<'a, 'v>>,
    status: Option<Slot<'a, 'v>>,
    tool: Option<Slot<'a, 'v>>,
    call_id: Option<Slot<'a, 'v>>,
    role: Option<Slot<'a, 'v>>,
    text: Option<Slot<'a, 'v>>,
}

#[derive(Clone, Copy)]
enum Slot<'a, 'v> {
    Raw(RawJson<'a>),
    Value(&'v Value),
    /// Raw JSON of a [`Built`] object, which the record owns.
    Built(&'v str),
}

impl<'a, 'v> Canonical<'a, 'v> {
    /// Finds the canonical fields in one pass over the record's fields.
    fn find(fields: &'v Fields<'a>) -> Canonical<'a, 'v> {
        let mut found = Canonical::default();
        match fields {
            Fields::Raw(raw) => {
                for (name, value) in raw {
                    if let Some(slot) = found.slot(name) {
                        *slot = Some(Slot::Raw(*value));
                    }
                }
            }
            Fields::Owned(map) => {
                for (name, value) in map {
                    if let Some(slot) = found.slot(name) {
                        *slot = Some(Slot::Value(value));
                    }
                }
            }
            Fields::Built(built) => {
                for (name, raw) in built.members() {
                    if let Some(slot) = found.slot(name) {
                        *slot = Some(Slot::Built(raw));
                    }
                }
            }
        }
        found
    }

    fn slot(&mut self, name: &str) -> Option<&mut Option<Slot<'a, 'v>>> {
        // Every field of every record passes here: compare by length first and then
        // as fixed-size arrays, which compile to a single integer comparison each.
        match *name.as_bytes() {
            [b'k', b'i', b'n', b'd'] => Some(&mut self.kind),
            [b't', b'o', b'o', b'l'] => Some(&mut self.tool),
            [b't', b'e', b'x', b't'] => Some(&mut self.text),
            [b'r', b'o', b'l', b'e'] => Some(&mut self.role),
            [b's', b't', b'a', b't', b'u', b's'] => Some(&mut self.status),
            [b'c', b'a', b'l', b'l', b'_', b'i', b'd'] => Some(&mut self.call_id),
            _ => None,
        }
    }
}

/// A canonical field that must be a string when present.
fn canonical_str<'a>(
    slot: Option<Slot<'a, '_>>,
    name: &'static str,
) -> Result<Option<Cow<'a, str>>, RecordError> {
    if let Some(Slot::Raw(value)) = slot {
        return raw_string(value)
            .map(Some)
            .ok_or_else(|| wrong_type(name, value.get(), "a string"));
    }
    // Any other text lives only as long as the fields: copied.
    Ok(canonical_text(slot, name)?.map(|text| Cow::Owned(text.into_owned())))
}

/// A canonical field that must be a string when present, read only to be checked or
/// matched: borrowed from the fields wherever it has no escapes, so checking a built
/// record's `kind` copies nothing.
fn canonical_text<'a: 'v, 'v>(
    slot: Option<Slot<'a, 'v>>,
    name: &'static str,
) -> Result<Option<Cow<'v, str>>, RecordError> {
    match slot {
        None => Ok(None),
        Some(Slot::Raw(value)) => raw_string(value)
            .map(Some)
            .ok_or_else(|| wrong_type(name, value.get(), "a string")),
        Some(Slot::Built(text)) => raw_str(text)
            .map(Some)
            .ok_or_else(|| wrong_type(name, text, "a string")),
        Some(Slot::Value(Value::String(text))) => Ok(Some(Cow::Borrowed(text))),
        Some(Slot::Value(other)) => Err(wrong_type(name, &other.to_string(), "a string")),
    }
}

/// `call_id` may be a string or an integer (JSON-RPC ids are either).
fn call_id_of<'a>(slot: Option<Slot<'a, '_>>) -> Result<Option<Cow<'a, str>>, RecordError> {
    const NAME: &str = "call_id";
    const EXPECTED: &str = "a string or an integer";
    match slot {
        None => Ok(None),
        Some(Slot::Raw(value)) => {
            let text = value.get();
            if let Some(id) = raw_string(value) {
                Ok(Some(id))
            } else if is_integer_text(text) {
                Ok(Some(Cow::Borrowed(text)))
            } else {
                Err(wrong_type(NAME, text, EXPECTED))
            }
        }
        Some(Slot::Built(text)) => {
            if let Some(id) = raw_str(text) {
                Ok(Some(Cow::Owned(id.into_owned())))
            } else if is_integer_text(text) {
                Ok(Some(Cow::Owned(text.to_string())))
            } else {
                Err(wrong_type(NAME, text, EXPECTED))
            }
        }
        Some(Slot::Value(Value::String(text))) => Ok(Some(Cow::Owned(text.clone()))),
        Some(Slot::Value(Value::Number(n))) if n.is_i64() || n.is_u64() => {
            Ok(Some(Cow::Owned(n.to_string())))
        }
        Some(Slot::Value(other)) => Err(wrong_type(NAME, &other.to_string(), EXPECTED)),
    }
}

fn is_integer_text(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Decodes a raw JSON string, borrowing when it has no escapes.
pub fn raw_string(raw: RawJson<'_>) -> Option<Cow<'_, str>> {
    raw_str(raw.get())
}

fn wrong_type(name: &'static str, text: &str, expected: &'static str) -> RecordError {
    RecordError::Field {
        field: name,
        found: describe_json(text),
        expected,
    }
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
        assert_eq!(
            err.to_string(),
            "field `tool` is a number `5`, expected a string"
        );
        assert!(matches!(err, RecordError::Field { field: "tool", .. }));

        let Value::Object(map) = serde_json::json!({"kind": "event"}) else {
            unreachable!()
        };
        let err = Record::new(Fields::Owned(map), Location::default()).unwrap_err();
        assert!(
            err.to_string().contains("field `kind` is \"event\""),
            "{err}"
        );
    }

    #[track_caller]
    fn assert_descends_like_value(text: &str) {
        let value: Value = serde_json::from_str(text).expect("test JSON is valid");
        let mut paths: Vec<Vec<Segment>> = vec![vec![]];
        let mut i = 0;
        while i < paths.len() {
            let path = paths[i].clone();
            match value_descend(&value, &path) {
                Some(Value::Object(map)) => {
                    for name in map.keys().chain(["missing".to_string()].iter()) {
                        let mut next = path.clone();
                        next.push(Segment::Key(name.clone()));
                        paths.push(next);
                    }
                }
                Some(Value::Array(items)) => {
                    for index in 0..=items.len() {
                        let mut next = path.clone();
                        next.push(Segment::Index(index));
                        paths.push(next);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        for path in paths {
            let have =
                raw_descend(text, &path).map(|raw| serde_json::from_str::<Value>(raw).unwrap());
            let want = value_descend(&value, &path).cloned();
            assert_eq!(have, want, "path {path:?} in {text}");
        }
    }

    #[test]
    fn raw_navigation_agrees_with_decoded_values() {
        assert_descends_like_value(r#"{"a": {"b": [1, {"c": null}, "x]}\"y"]}, "d": true}"#);
        assert_descends_like_value(r#" { "k\u0065y" : 1 , "key" : [ ] , "e" : { } } "#);
        assert_descends_like_value(r#"{"dup": 1, "dup": {"x": -2.5e3}}"#);
        assert_descends_like_value(r#"[[], [[0]], {"}": "{"}, false, null]"#);
        assert_descends_like_value(r#""not a container""#);
        // Names that need escapes, names that are prefixes of others, and values of
        // every kind after them.
        assert_descends_like_value(
            r#"{"a\":":1, "a": 2, "a\\": 3, "ab": [1, "x\"y", -0.5e+3], "a\"": {"b": null}, "\u0061b": true}"#,
        );
        assert_descends_like_value(r#"{"request_id":"r-1","title":"T","request_id":"r-2"}"#);
    }

    #[test]
    fn a_name_is_not_found_in_the_bytes_that_follow_a_shorter_one() {
        // The bytes `a":` begin the member `"a":"b"`, and are followed by a quote.
        let text = r#"{"a":"b"}"#;
        assert_eq!(raw_descend(text, &[key("a\":")]), None);
        assert_eq!(raw_descend(text, &[key("a")]), Some(r#""b""#));
        // `a\` spelt in place is an escape, not the name `a\`.
        let text = r#"{"a\"":1}"#;
        assert_eq!(raw_descend(text, &[key("a\\")]), None);
        assert_eq!(raw_descend(text, &[key("a\"")]), Some("1"));
    }

    /// What an instance key spells for the value at `path`, read through the general
    /// lookup: the reference [`Record::push_key`] must agree with.
    fn key_by_lookup(record: &Record<'_>, path: &[Segment]) -> Option<String> {
        let found = record.lookup(path)?;
        match found.as_str() {
            Some(text) => Some(text.into_owned()),
            None => Some(found.to_value()?.to_string()),
        }
    }

    #[test]
    fn a_key_spells_the_value_its_path_finds() {
        let lines = [
            r#"{"kind":"call","tool":"t","args":{"request_id":"r-1","n":7,"o":{"a":[1, "x"]}}}"#,
            r#"{"args":{"request_id":"r\u002d2","request_id":"r-3","n":1e300,"o":null}}"#,
            r#"{"args":{"title":"T","request_id":"esc\"aped"},"tool":"t"}"#,
            r#"{"args":"not an object","output":{"id":false}}"#,
            r#"{"kind":"result","tool":"t"}"#,
        ];
        let paths: Vec<Vec<Segment>> = [
            &["args", "request_id"][..],
            &["args", "n"],
            &["args", "o"],
            &["args", "missing"],
            &["output", "id"],
            &["tool", "x"],
            &["args"],
            &["tool"],
        ]
        .iter()
        .map(|names| names.iter().map(|name| key(name)).collect())
        .collect();
        let mut inherited =
            crate::trace::native::decode_line(lines[4], Location::default()).expect("valid");
        inherited.inherited_args = Some(Cow::Borrowed(r#"{"request_id": "from-call"}"#));
        let mut built = Built::with_capacity(0);
        built.raw("args", r#"{"request_id": 5, "n": "five"}"#);
        let built = Record::new(Fields::Built(built), Location::default()).expect("valid");
        // Native decoding refuses a number beyond a double's range; a built record may
        // still hold one, which no key spells.
        let mut beyond = Built::with_capacity(0);
        beyond.raw("args", r#"{"request_id": 1e400, "n": -1e400}"#);
        let beyond = Record::new(Fields::Built(beyond), Location::default()).expect("valid");
        let mut records: Vec<Record<'_>> = lines
            .iter()
            .map(|line| crate::trace::native::decode_line(line, Location::default()))
            .collect::<Result<_, _>>()
            .expect("the test's lines are records");
        records.push(inherited);
        records.push(built);
        records.push(beyond);
        records.push(owned(
            serde_json::json!({"args": {"request_id": "owned", "n": [1]}}),
        ));
        for record in &records {
            for path in &paths {
                let mut have = String::from("before");
                let found = record.push_key(path, &mut have);
                let want = key_by_lookup(record, path).map(|key| format!("before{key}"));
                assert_eq!(
                    found.then_some(have),
                    want,
                    "{path:?} in {:?}",
                    record.fields
                );
            }
        }
    }

    #[test]
    fn a_built_string_is_written_as_serde_json_writes_it() {
        let text: String = (0u8..0x80)
            .map(char::from)
            .chain(['é', '\u{2028}'])
            .collect();
        let mut built = Built::default();
        built.string("text", &text);
        let want = serde_json::to_string(&text).expect("a string serializes");
        assert_eq!(built.get("text"), Some(want.as_str()));
        built.value("value", &Value::String(text.clone()));
        assert_eq!(built.get("value"), Some(want.as_str()));
        // Every byte that needs an escape at every place in and around the eight
        // bytes read at once, among plain and multi-byte characters.
        for special in ['"', '\\', '\n', '\u{1}', '\u{1f}', 'é', '\u{7f}'] {
            for before in 0..20 {
                for after in [0, 1, 7, 8, 9, 17] {
                    let text = format!("{}{special}{}", "a".repeat(before), "é".repeat(after));
                    let mut built = Built::default();
                    built.string("text", &text);
                    let want = serde_json::to_string(&text).expect("a string serializes");
                    assert_eq!(built.get("text"), Some(want.as_str()), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn a_built_number_is_written_as_serde_json_writes_it() {
        for value in [
            serde_json::json!(0),
            serde_json::json!(7),
            serde_json::json!(10),
            serde_json::json!(1_000_000),
            serde_json::json!(u64::MAX),
            serde_json::json!(-1),
            serde_json::json!(i64::MIN),
            serde_json::json!(1.5),
            serde_json::json!(-0.0),
        ] {
            let mut built = Built::default();
            built.value("n", &value);
            assert_eq!(built.get("n"), Some(value.to_string().as_str()));
        }
    }

    #[test]
    fn a_built_object_reads_as_the_same_object_of_values() {
        let mut built = Built::with_capacity(0);
        built.string("kind", "result");
        built.string("tool", "cr\"éer\n\u{1}");
        built.raw("call_id", "17");
        built.raw("output", r#"{"items": [10, {"id": null}], "n": 1.50}"#);
        built.value("status", &serde_json::json!("ok"));
        built.value("seq", &serde_json::json!(3));
        built.string("text", "first");
        // Set again: replaced, in its place.
        built.string("text", "second");
        let want = serde_json::json!({
            "kind": "result", "tool": "cr\"éer\n\u{1}", "call_id": 17,
            "output": {"items": [10, {"id": null}], "n": 1.5}, "status": "ok", "seq": 3,
            "text": "second"
        });
        assert_eq!(Value::Object(built.to_map()), want);
        let names: Vec<&str> = built.members().map(|(name, _)| name).collect();
        assert_eq!(
            names,
            ["kind", "tool", "call_id", "output", "status", "seq", "text"]
        );

        let have = Record::new(Fields::Built(built), Location::default()).expect("valid record");
        let want = owned(want);
        assert_eq!(have.kind, want.kind);
        assert_eq!(have.status, want.status);
        assert_eq!(have.tool, want.tool);
        assert_eq!(have.call_id.as_deref(), Some("17"));
        assert_eq!(have.call_id, want.call_id);
        for path in [
            vec![key("output"), key("items"), Segment::Index(1), key("id")],
            vec![key("output"), key("n")],
            vec![key("output"), key("missing")],
            vec![key("text")],
            vec![key("seq")],
        ] {
            assert_eq!(have.get(&path), want.get(&path), "{path:?}");
        }
        assert!(have.has_field("output") && !have.has_field("args"));
        assert_eq!(have.fields.raw_text("call_id").as_deref(), Some("17"));
        assert_eq!(have.fields.keys().len(), 7);
    }

    #[test]
    fn a_built_canonical_field_of_the_wrong_type_is_an_error() {
        let mut built = Built::with_capacity(0);
        built.string("kind", "call");
        built.raw("tool", "5");
        let err = Record::new(Fields::Built(built), Location::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "field `tool` is a number `5`, expected a string"
        );
    }

    #[test]
    fn results_read_inherited_args() {
        let mut record = owned(serde_json::json!({"kind": "result", "tool": "t"}));
        assert!(!record.has_field("args"));
        record.inherited_args = Some(Cow::Borrowed(r#"{"request_id": "r1"}"#));
        assert!(record.has_field("args"));
        assert_eq!(
            record.get(&[key("args"), key("request_id")]).as_deref(),
            Some(&serde_json::json!("r1"))
        );
    }
}
