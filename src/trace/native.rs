//! Native JSONL: one JSON object per line, decoded into a [`Record`].
//!
//! This is the hot path. A line's top-level members are decoded into borrowed raw
//! slices of the line ([`Fields::Raw`]) without building a `serde_json::Value`; a field
//! is parsed further only when a spec reads it. Every message for a line that is not a
//! usable record lives here, so they read alike.

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashSet;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::error::Category;

use crate::trace::json_index;
use crate::trace::reader::{Line, LineContent};
use crate::trace::record::{Fields, Location, RawJson, Record, RecordError};

/// The deepest nesting of arrays and objects a record may have, counting the record
/// itself. It is the most serde_json accepts when it parses a whole line into a value,
/// so every field of an accepted record can later be decoded.
pub const MAX_DEPTH: usize = 127;

/// With more keys than this, duplicates are found with a hash set rather than a scan.
const SCAN_KEYS: usize = 16;

std::thread_local! {
    /// An emptied list of members, given back by [`recycle`] when a record is done
    /// with, for the next line decoded on this thread: a checker decodes a line, checks
    /// it and drops it, millions of times, and reusing the list spares an allocation
    /// each time.
    static SPARE: std::cell::Cell<scan::Members<'static>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Hands the list of members of a record that is done with to the next line decoded
/// on this thread (see [`SPARE`]). Fields an adapter built are simply dropped.
pub(crate) fn recycle(fields: Fields<'_>) {
    if let Some(spare) = Spare::of(fields) {
        lend(spare);
    }
}

/// An emptied list of members, for the next line decoded on this thread or another
/// ([`lend`]).
pub(crate) struct Spare(scan::Members<'static>);

impl Spare {
    /// The list of members of a record that is done with, emptied; `None` for fields
    /// an adapter built, which are simply dropped.
    pub(crate) fn of(fields: Fields<'_>) -> Option<Spare> {
        let Fields::Raw(mut members) = fields else {
            return None;
        };
        members.clear();
        // Collecting an emptied list into one of the same layout keeps its buffer;
        // only the lifetime of what it may hold changes, which takes a map (`filter`
        // keeps the item type).
        #[allow(clippy::unnecessary_filter_map)]
        let members: scan::Members<'static> = members.into_iter().filter_map(|_| None).collect();
        Some(Spare(members))
    }
}

/// Makes `spare` the list the next line decoded on this thread reuses.
pub(crate) fn lend(spare: Spare) {
    // `with`, not `LocalKey::set`, which builds the cell's value anew each time.
    SPARE.with(|cell| cell.set(spare.0));
}

/// Decodes one line of native JSONL into a record, or says precisely why it is not one.
pub fn decode_line<'a>(text: &'a str, loc: Location) -> Result<Record<'a>, RecordError> {
    let fields = match scan::top_level(text) {
        Some((fields, Some(plain))) => {
            // Canonical fields already read, and valid: what `Record::new` would find.
            return Ok(Record {
                loc,
                kind: plain.kind,
                tool: plain.tool.map(Cow::Borrowed),
                call_id: plain.call_id.map(Cow::Borrowed),
                status: plain.status,
                fields: Fields::Raw(fields),
                inherited_args: None,
            });
        }
        Some((fields, None)) => fields,
        // Not a plain record: serde_json decodes it again, and says what is wrong.
        None => decode_fields(text)?,
    };
    Record::new(Fields::Raw(fields), loc)
}

/// The top-level members of `text` as serde_json reads them, or why it cannot.
fn decode_fields(text: &str) -> Result<Vec<(Cow<'_, str>, RawJson<'_>)>, RecordError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let names = match TopLevel::deserialize(&mut de).and_then(|top| de.end().map(|()| top)) {
        Ok(TopLevel(names)) => names,
        Err(err) => return Err(json_error(text, &err)),
    };
    // serde_json found one valid object with these names: their values are where a
    // scan of its text finds them.
    let values = member_values(text);
    debug_assert_eq!(names.len(), values.len(), "bug: {text}");
    for (name, value) in names.iter().zip(&values) {
        check_depth(text, name, value)?;
        check_readable(text, name, value)?;
    }
    Ok(names
        .into_iter()
        .zip(values)
        .map(|(name, value)| (name, RawJson::new(value)))
        .collect())
}

/// The values of the top-level members of `text`, in order, each exactly as written:
/// `text` is one JSON object serde_json has read without error.
///
/// serde_json could lend them itself (its `raw_value` feature), but that feature also
/// makes it read any object whose first member is named
/// `$serde_json::private::RawValue` as the JSON text in that member's value, in every
/// `serde_json::Value` parsed anywhere: a record could then say one thing and be read
/// as another.
fn member_values(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut values = Vec::new();
    // Past the opening brace.
    let mut at = scan::skip_ws(bytes, 0) + 1;
    loop {
        at = scan::skip_ws(bytes, at);
        match bytes.get(at) {
            Some(b',') => at = scan::skip_ws(bytes, at + 1),
            Some(b'"') => {}
            _ => return values,
        }
        // The name, its colon, and the value.
        at = scan::skip_ws(bytes, json_index::string_end(bytes, at));
        at = scan::skip_ws(bytes, at + 1);
        let end = json_index::value_end(bytes, at, bytes.len());
        values.push(text.get(at..end).unwrap_or_default());
        at = end;
    }
}

/// Decodes a line from a [`LineReader`](crate::trace::reader::LineReader) read with the
/// limit `max_line_bytes`: a record located at the whole line, or why the line is not one.
pub fn decode<'a>(line: Line<'a>, max_line_bytes: usize) -> Result<Record<'a>, RecordError> {
    match line.content {
        LineContent::Text(text) => decode_line(text, line.location()),
        _ => Err(unreadable_line(&line, max_line_bytes)
            .expect("bug: a line that is not text has a reason")),
    }
}

/// Why a line that is not text cannot be a record; `None` for a text line.
/// `max_line_bytes` is the limit the line was read with.
pub fn unreadable_line(line: &Line<'_>, max_line_bytes: usize) -> Option<RecordError> {
    match line.content {
        LineContent::Text(_) => None,
        LineContent::InvalidUtf8 { valid_up_to } => Some(RecordError::InvalidUtf8 {
            column: valid_up_to + 1,
        }),
        LineContent::TooLong => Some(RecordError::TooLong {
            len: line.len,
            limit: max_line_bytes,
        }),
    }
}

/// A user-facing message for a serde_json error on `line`.
fn json_error(line: &str, err: &serde_json::Error) -> RecordError {
    let message = without_position(err);
    let column = err.column();
    // serde_json's column is 1-based, except at the end of input, where it points at
    // the last character rather than just after it.
    let (category, at) = match err.classify() {
        Category::Eof => (Category::Eof, line.len()),
        category => (category, column.saturating_sub(1)),
    };
    // Deep nesting is reported where it starts, even if the line also breaks later
    // (as a line of ten thousand `[` does), since the depth is what the user must fix.
    if category != Category::Data {
        if let Some(index) = too_deep(line.as_bytes(), MAX_DEPTH).filter(|&index| index < at) {
            return RecordError::TooDeep { column: index + 1 };
        }
    }
    RecordError::Syntax(match category {
        // Our own visitor's messages (non-object records, duplicate keys) are complete.
        Category::Data => message,
        Category::Eof => format!(
            "line is not valid JSON: {message} at column {} (is the line truncated?)",
            at + 1
        ),
        Category::Syntax if message == "trailing characters" => format!(
            "line is not valid JSON: trailing characters at column {column} (expected one JSON object per line)"
        ),
        Category::Syntax | Category::Io => {
            format!("line is not valid JSON: {message} at column {column}")
        }
    })
}

/// serde_json's message without the " at line L column C" it appends, since a line's
/// position is reported separately.
fn without_position(err: &serde_json::Error) -> String {
    let full = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    match full.strip_suffix(&suffix) {
        Some(message) if err.line() != 0 => message.to_string(),
        _ => full,
    }
}

/// Fails when `value`, a field of the record `line`, nests deeper than [`MAX_DEPTH`].
/// serde_json keeps raw values without a depth limit, so without this check a deep
/// field would be accepted here and fail only when a spec reads it.
fn check_depth(line: &str, name: &str, value: &str) -> Result<(), RecordError> {
    // The record's own object is one level.
    const FIELD_LIMIT: usize = MAX_DEPTH - 1;
    let text = value.as_bytes();
    // Cheap filters first: too deep needs more than FIELD_LIMIT opening brackets.
    if text.len() <= 2 * FIELD_LIMIT
        || text.iter().filter(|&&b| b == b'[' || b == b'{').count() <= FIELD_LIMIT
    {
        return Ok(());
    }
    match too_deep(text, FIELD_LIMIT) {
        None => Ok(()),
        Some(index) => {
            // The raw value is a slice of the line, so its offset is known.
            let start = value.as_ptr() as usize - line.as_ptr() as usize;
            Err(RecordError::FieldTooDeep {
                field: name.to_string(),
                column: start + index + 1,
            })
        }
    }
}

/// Fails when `value`, a field of the record `line`, holds what serde_json skips as
/// valid JSON but cannot read as a value: a number beyond the range of a double
/// (`1e400`), or a string with half of a UTF-16 surrogate pair alone (`"\ud800"`). A guard
/// or key reading it would find nothing, and a transcript could pass a check by
/// writing a number too large to compare or a command no pattern can read.
fn check_readable(line: &str, name: &str, value: &str) -> Result<(), RecordError> {
    let bytes = value.as_bytes();
    // The raw value is a slice of the line, so its offset is known.
    let column = |at: usize| value.as_ptr() as usize - line.as_ptr() as usize + at + 1;
    let mut at = 0;
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'"' => {
                let end = json_index::string_end(bytes, at);
                let string = &bytes[at..end];
                if has_surrogate_escape(string) && serde_json::from_slice::<String>(string).is_err()
                {
                    return Err(RecordError::LoneSurrogate {
                        field: name.to_string(),
                        column: column(at),
                    });
                }
                at = end;
            }
            b'-' | b'0'..=b'9' => {
                let end = json_index::value_end(bytes, at, bytes.len());
                let number = &bytes[at..end];
                let exponent = number.iter().any(|&b| (b | 0x20) == b'e');
                if beyond_double(number, exponent) {
                    // A number of hundreds of digits is named by its start.
                    let shown = String::from_utf8_lossy(&number[..number.len().min(24)]);
                    let more = if number.len() > 24 { "…" } else { "" };
                    return Err(RecordError::NumberOutOfRange {
                        field: name.to_string(),
                        number: format!("{shown}{more}"),
                        column: column(at),
                    });
                }
                at = end;
            }
            _ => at += 1,
        }
    }
    Ok(())
}

/// Whether the JSON string `string` may have an escape of a surrogate code unit
/// (`\uD800` to `\uDFFF`), which only a pair of them makes a character.
fn has_surrogate_escape(string: &[u8]) -> bool {
    string.windows(4).any(|w| {
        w[0] == b'\\'
            && w[1] == b'u'
            && (w[2] | 0x20) == b'd'
            && matches!(w[3] | 0x20, b'8' | b'9' | b'a'..=b'f')
    })
}

/// A number of at most this many characters without an exponent is within the range of
/// a double (whose largest has 309 digits).
const LONGEST_DOUBLE: usize = 300;

/// Whether `number`, valid JSON (with an `exponent` or not), lies beyond the range of a
/// double, as serde_json reads numbers (it refuses them: "number out of range"). Only a
/// number with an exponent or a long run of digits can, and only such a one is parsed.
fn beyond_double(number: &[u8], exponent: bool) -> bool {
    (exponent || number.len() > LONGEST_DOUBLE) && serde_json::from_slice::<f64>(number).is_err()
}

/// The index of the first `[` or `{` in JSON `text` that opens more than `limit` levels,
/// skipping brackets inside strings. It does not validate `text`.
fn too_deep(text: &[u8], limit: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (index, &byte) in text.iter().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return Some(index);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

/// The fast path of [`decode_line`]: one pass over a line that validates it as JSON
/// and finds its top-level members, with no allocation beyond the list of members.
///
/// It accepts exactly what serde_json accepts, or gives up: anything unusual (a key
/// with an escape, a duplicate key, many keys, deep nesting, invalid JSON, a value that
/// is not an object) returns `None`, and the line is decoded again by serde_json,
/// which gives the answer and the message. So the two paths cannot disagree on a line
/// the fast one accepts, and every error message still comes from one place.
pub(crate) mod scan {
    use std::borrow::Cow;

    use super::SCAN_KEYS;
    use crate::trace::record::{Kind, RawJson, Status};

    /// The members of a line.
    pub(super) type Members<'a> = Vec<(Cow<'a, str>, RawJson<'a>)>;

    /// The canonical fields of a line, when each one present is a string without
    /// escapes that `Record::new` accepts as it is.
    #[derive(Default)]
    pub(super) struct Plain<'a> {
        pub(super) kind: Option<Kind>,
        pub(super) status: Option<Status>,
        pub(super) tool: Option<&'a str>,
        pub(super) call_id: Option<&'a str>,
    }

    /// Which canonical field a member's name is.
    #[derive(Clone, Copy)]
    enum Canonical {
        Kind,
        Status,
        Tool,
        CallId,
        /// Only checked to be a string.
        Role,
        /// Only checked to be a string.
        Text,
    }

    fn canonical(name: &[u8]) -> Option<Canonical> {
        match *name {
            [b'k', b'i', b'n', b'd'] => Some(Canonical::Kind),
            [b't', b'o', b'o', b'l'] => Some(Canonical::Tool),
            [b't', b'e', b'x', b't'] => Some(Canonical::Text),
            [b'r', b'o', b'l', b'e'] => Some(Canonical::Role),
            [b's', b't', b'a', b't', b'u', b's'] => Some(Canonical::Status),
            [b'c', b'a', b'l', b'l', b'_', b'i', b'd'] => Some(Canonical::CallId),
            _ => None,
        }
    }

    /// Nesting (inside a member's value) past which the fast path gives up; well
    /// under [`super::MAX_DEPTH`], so it never has to report depth itself.
    const DEPTH: usize = 64;

    /// The members of the object `text`, in order, with its canonical fields when they
    /// are plain, or `None` (see the module).
    pub(super) fn top_level(text: &str) -> Option<(Members<'_>, Option<Plain<'_>>)> {
        let bytes = text.as_bytes();
        let mut at = skip_ws(bytes, 0);
        if bytes.get(at) != Some(&b'{') {
            return None;
        }
        at = skip_ws(bytes, at + 1);
        let mut fields: Members<'_> = super::SPARE.take();
        fields.reserve(8);
        let mut plain = Some(Plain::default());
        // The canonical names met so far, one bit each, and the members whose names
        // are not canonical, one bit each: a name is a duplicate of a canonical one
        // by its bit, and is compared only with the others.
        let (mut canonical_seen, mut others) = (0u8, 0u16);
        if bytes.get(at) == Some(&b'}') {
            at += 1;
        } else {
            loop {
                if bytes.get(at) != Some(&b'"') {
                    return None;
                }
                let (end, escaped) = string(bytes, at)?;
                if escaped || fields.len() >= SCAN_KEYS {
                    return None;
                }
                let name = &text[at + 1..end - 1];
                let field = canonical(name.as_bytes());
                let duplicate = match field {
                    Some(field) => {
                        let bit = 1 << field as u8;
                        let seen = canonical_seen & bit != 0;
                        canonical_seen |= bit;
                        seen
                    }
                    // Lengths first: most names differ in length, and comparing those
                    // costs no call.
                    None => {
                        let seen = fields.iter().enumerate().any(|(i, (seen, _))| {
                            others & (1 << i) != 0 && seen.len() == name.len() && seen == name
                        });
                        others |= 1 << fields.len();
                        seen
                    }
                };
                if duplicate {
                    return None;
                }
                at = skip_ws(bytes, end);
                if bytes.get(at) != Some(&b':') {
                    return None;
                }
                let start = skip_ws(bytes, at + 1);
                let end = match field {
                    None => value(bytes, start)?,
                    Some(field) => {
                        let (end, escaped) = match bytes.get(start) {
                            Some(b'"') => string(bytes, start)?,
                            _ => (value(bytes, start)?, true),
                        };
                        if let Some(found) = plain.as_mut() {
                            let usable = !escaped && {
                                let text = &text[start + 1..end - 1];
                                match field {
                                    Canonical::Kind => {
                                        found.kind = Kind::parse(text);
                                        found.kind.is_some()
                                    }
                                    Canonical::Status => {
                                        found.status = Status::parse(text);
                                        found.status.is_some()
                                    }
                                    Canonical::Tool => {
                                        found.tool = Some(text);
                                        true
                                    }
                                    Canonical::CallId => {
                                        found.call_id = Some(text);
                                        true
                                    }
                                    Canonical::Role | Canonical::Text => true,
                                }
                            };
                            if !usable {
                                // Escaped, not a string, or not a known value:
                                // `Record::new` decides.
                                plain = None;
                            }
                        }
                        end
                    }
                };
                fields.push((Cow::Borrowed(name), RawJson::new(&text[start..end])));
                at = skip_ws(bytes, end);
                match bytes.get(at) {
                    Some(b',') => at = skip_ws(bytes, at + 1),
                    Some(b'}') => {
                        at += 1;
                        break;
                    }
                    _ => return None,
                }
            }
        }
        (skip_ws(bytes, at) == bytes.len()).then_some((fields, plain))
    }

    /// The index of the first byte at or after `at` that is not JSON whitespace.
    #[inline]
    pub(crate) fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = bytes.get(at) {
            at += 1;
        }
        at
    }

    /// The end of the valid string whose opening quote is at `at`, and whether it has
    /// an escape.
    ///
    /// Inlined where it is called: most strings are short and plain, and end within
    /// the first few words of the loop, so a call would cost as much as the scan.
    #[inline]
    pub(crate) fn string(bytes: &[u8], at: usize) -> Option<(usize, bool)> {
        let at = special(bytes, at + 1);
        match bytes.get(at) {
            Some(b'"') => Some((at + 1, false)),
            _ => string_rest(bytes, at),
        }
    }

    /// The first byte at or after `at` that is a quote, a backslash or a control
    /// character (the test serde_json uses), found eight bytes at a time; or where the
    /// last eight bytes begin.
    #[inline]
    fn special(bytes: &[u8], at: usize) -> usize {
        crate::json::plain_words(bytes, at, false)
    }

    /// [`string`] from `at`, inside the string, where a byte other than its closing
    /// quote was met (or fewer than eight bytes are left).
    #[inline(never)]
    fn string_rest(bytes: &[u8], mut at: usize) -> Option<(usize, bool)> {
        let mut escaped = false;
        loop {
            match *bytes.get(at)? {
                b'"' => return Some((at + 1, escaped)),
                b'\\' => {
                    escaped = true;
                    match *bytes.get(at + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                        b'u' => {
                            // Half of a surrogate pair is a character only with its
                            // other half right after it: a lone one is left to the
                            // general path, which refuses it.
                            at = match hex_escape(bytes, at)? {
                                0xD800..=0xDBFF => match hex_escape(bytes, at + 6)? {
                                    0xDC00..=0xDFFF => at + 12,
                                    _ => return None,
                                },
                                0xDC00..=0xDFFF => return None,
                                _ => at + 6,
                            };
                        }
                        _ => return None,
                    }
                }
                byte if byte < 0x20 => return None,
                _ => at += 1,
            }
            at = special(bytes, at);
        }
    }

    /// The code unit of the `\uXXXX` escape at `at`, if there is one.
    fn hex_escape(bytes: &[u8], at: usize) -> Option<u32> {
        let escape = bytes.get(at..at + 6)?;
        if escape[..2] != *b"\\u" || !escape[2..].iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        u32::from_str_radix(std::str::from_utf8(&escape[2..]).ok()?, 16).ok()
    }

    /// The end of the valid number that starts at `at`; `None` also for a number beyond
    /// the range of a double, which the general path refuses.
    fn number(bytes: &[u8], mut at: usize) -> Option<usize> {
        let start = at;
        let digits = |mut at: usize| {
            while bytes.get(at).is_some_and(u8::is_ascii_digit) {
                at += 1;
            }
            at
        };
        if bytes[at] == b'-' {
            at += 1;
        }
        match *bytes.get(at)? {
            b'0' => {
                at += 1;
                if bytes.get(at).is_some_and(u8::is_ascii_digit) {
                    return None;
                }
            }
            b'1'..=b'9' => at = digits(at + 1),
            _ => return None,
        }
        if bytes.get(at) == Some(&b'.') {
            let end = digits(at + 1);
            if end == at + 1 {
                return None;
            }
            at = end;
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            let end = digits(at);
            if end == at {
                return None;
            }
            return (!super::beyond_double(&bytes[start..end], true)).then_some(end);
        }
        (!super::beyond_double(&bytes[start..at], false)).then_some(at)
    }

    /// The end of the valid JSON value that starts at `at` (no whitespace before it),
    /// nested at most [`DEPTH`] levels.
    #[inline]
    pub(crate) fn value(bytes: &[u8], at: usize) -> Option<usize> {
        // Most values are scalars, which need none of a container's bookkeeping.
        match *bytes.get(at)? {
            b'{' | b'[' => container(bytes, at),
            b'"' => Some(string(bytes, at)?.0),
            b't' => literal(bytes, at, b"true"),
            b'f' => literal(bytes, at, b"false"),
            b'n' => literal(bytes, at, b"null"),
            b'-' | b'0'..=b'9' => number(bytes, at),
            _ => None,
        }
    }

    /// [`value`] for the object or array that starts at `at`.
    fn container(bytes: &[u8], mut at: usize) -> Option<usize> {
        // Whether each open container is an object.
        let mut objects = [false; DEPTH];
        let mut depth = 0;
        loop {
            // A value starts at `at`.
            match *bytes.get(at)? {
                open @ (b'{' | b'[') => {
                    if depth == DEPTH {
                        return None;
                    }
                    let object = open == b'{';
                    at = skip_ws(bytes, at + 1);
                    let close = if object { b'}' } else { b']' };
                    if bytes.get(at) == Some(&close) {
                        at += 1;
                    } else {
                        objects[depth] = object;
                        depth += 1;
                        if object {
                            at = key(bytes, at)?;
                        }
                        continue;
                    }
                }
                b'"' => at = string(bytes, at)?.0,
                b't' => at = literal(bytes, at, b"true")?,
                b'f' => at = literal(bytes, at, b"false")?,
                b'n' => at = literal(bytes, at, b"null")?,
                b'-' | b'0'..=b'9' => at = number(bytes, at)?,
                _ => return None,
            }
            // A value ended at `at`: close the containers it ends, up to the next one.
            loop {
                if depth == 0 {
                    return Some(at);
                }
                at = skip_ws(bytes, at);
                let object = objects[depth - 1];
                match *bytes.get(at)? {
                    b',' => {
                        at = skip_ws(bytes, at + 1);
                        if object {
                            at = key(bytes, at)?;
                        }
                        break;
                    }
                    b'}' if object => {
                        at += 1;
                        depth -= 1;
                    }
                    b']' if !object => {
                        at += 1;
                        depth -= 1;
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Past a member's key at `at`, its colon and the whitespace after it: where its
    /// value starts.
    fn key(bytes: &[u8], at: usize) -> Option<usize> {
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let at = skip_ws(bytes, string(bytes, at)?.0);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        Some(skip_ws(bytes, at + 1))
    }

    /// The end of `word` at `at`, if it is there.
    fn literal(bytes: &[u8], at: usize, word: &[u8]) -> Option<usize> {
        let end = at + word.len();
        (bytes.get(at..end)? == word).then_some(end)
    }
}

/// A record's top-level member names, in input order.
struct TopLevel<'a>(Vec<Cow<'a, str>>);

impl<'de> Deserialize<'de> for TopLevel<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // `deserialize_any`, not `deserialize_map`, so a non-object line gets a message
        // naming what it is.
        deserializer.deserialize_any(TopLevelVisitor)
    }
}

struct TopLevelVisitor;

fn not_an_object<E: de::Error>(what: &str) -> E {
    E::custom(format_args!("record is {what}, expected a JSON object"))
}

impl<'de> Visitor<'de> for TopLevelVisitor {
    type Value = TopLevel<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields: Vec<Cow<'de, str>> = Vec::with_capacity(8);
        // Filled only for records with many keys, where scanning would be quadratic.
        let mut seen: FxHashSet<Cow<'de, str>> = FxHashSet::default();
        while let Some(Key(name)) = map.next_key()? {
            let duplicate = if fields.len() < SCAN_KEYS {
                fields.contains(&name)
            } else {
                if seen.is_empty() {
                    seen.extend(fields.iter().cloned());
                }
                !seen.insert(name.clone())
            };
            if duplicate {
                return Err(de::Error::custom(format_args!("duplicate field `{name}`")));
            }
            map.next_value::<IgnoredAny>()?;
            fields.push(name);
        }
        Ok(TopLevel(fields))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // Read the array to its end, so that invalid JSON is reported as such.
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Err(not_an_object("an array"))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Err(not_an_object("a string"))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Err(not_an_object("a boolean"))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Err(not_an_object("a number"))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Err(not_an_object("a number"))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Err(not_an_object("a number"))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(not_an_object("null"))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Err(not_an_object("null"))
    }
}

/// An object key, borrowed from the line when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object key")
    }

    fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_str<E: de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(key.to_owned())))
    }

    fn visit_string<E: de::Error>(self, key: String) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(key)))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::spec::ast::Segment;
    use crate::trace::reader::LineReader;
    use crate::trace::record::{Kind, Status};

    #[track_caller]
    fn decode_ok(text: &str) -> Record<'_> {
        match decode_line(text, Location::default()) {
            Ok(record) => record,
            Err(err) => panic!("{text:?} did not decode: {err}"),
        }
    }

    #[track_caller]
    fn check_error(text: &str, want: &str) {
        match decode_line(text, Location::default()) {
            Ok(record) => panic!("{text:?} decoded to {record:?}, want error {want:?}"),
            Err(have) => assert_eq!(have.to_string(), want, "decoding {text:?}"),
        }
    }

    fn key(name: &str) -> Segment {
        Segment::Key(name.to_string())
    }

    #[test]
    fn decodes_canonical_fields() {
        let line = r#"{"kind": "call", "tool": "create_record", "call_id": "c1", "status": "ok", "args": {"request_id": "r1"}}"#;
        let loc = Location {
            line: 3,
            offset: 10,
            len: line.len() as u64,
            pointer: Default::default(),
        };
        let have = decode_line(line, loc.clone()).unwrap();
        assert_eq!(have.kind, Some(Kind::Call));
        assert_eq!(have.tool.as_deref(), Some("create_record"));
        assert!(matches!(have.tool, Some(Cow::Borrowed(_))));
        assert_eq!(have.call_id.as_deref(), Some("c1"));
        assert_eq!(have.status, Some(Status::Ok));
        assert_eq!(have.loc, loc);
        assert_eq!(
            have.fields.keys(),
            ["kind", "tool", "call_id", "status", "args"]
        );
        assert_eq!(
            have.get(&[key("args"), key("request_id")]).as_deref(),
            Some(&Value::from("r1"))
        );
    }

    #[test]
    fn a_recycled_list_of_members_is_reused_by_the_next_line() {
        let record = decode_ok(r#"{"kind":"call","tool":"a","args":{"x":1}}"#);
        let Fields::Raw(members) = &record.fields else {
            panic!("native records are raw")
        };
        let buffer = members.as_ptr();
        recycle(record.fields);
        let next = decode_ok(r#"{"kind":"result","tool":"b"}"#);
        let Fields::Raw(members) = &next.fields else {
            panic!("native records are raw")
        };
        assert_eq!(members.as_ptr(), buffer);
        assert_eq!(next.fields.keys(), ["kind", "tool"]);
    }

    #[test]
    fn integer_call_ids_are_kept_as_written() {
        assert_eq!(
            decode_ok(r#"{"call_id": 42}"#).call_id.as_deref(),
            Some("42")
        );
    }

    #[test]
    fn decodes_escaped_keys() {
        let have = decode_ok(r#"{"to\u006fl": "x", "a\"b": 1, "plain": 2}"#);
        assert_eq!(have.tool.as_deref(), Some("x"));
        assert_eq!(have.fields.keys(), ["tool", "a\"b", "plain"]);
        let Fields::Raw(fields) = &have.fields else {
            panic!("native records are raw")
        };
        assert!(matches!(fields[0].0, Cow::Owned(_)));
        assert!(matches!(fields[2].0, Cow::Borrowed("plain")));
    }

    #[test]
    fn leaves_nested_values_raw() {
        let have = decode_ok(r#"{"output":  {"items": [1, 2 ,3], "s": "x"} , "n": 1.50}"#);
        assert_eq!(
            have.fields.raw_text("output").as_deref(),
            Some(r#"{"items": [1, 2 ,3], "s": "x"}"#)
        );
        assert_eq!(have.fields.raw_text("n").as_deref(), Some("1.50"));
    }

    #[test]
    fn falsy_values_are_present() {
        for value in ["0", "false", r#""""#, "[]", "{}", "null"] {
            let line = format!(r#"{{"kind": "result", "output": {value}}}"#);
            let have = decode_ok(&line);
            assert!(have.has_field("output"), "output {value} is present");
            assert_eq!(have.fields.raw_text("output").as_deref(), Some(value));
            assert!(have.get(&[key("output")]).is_some(), "output {value}");
        }
    }

    #[test]
    fn reports_invalid_json() {
        check_error(
            r#"{"a": x}"#,
            "line is not valid JSON: expected value at column 7",
        );
        check_error(
            r#"{"kind": "call", "tool": "create_record""#,
            "line is not valid JSON: EOF while parsing an object at column 41 (is the line truncated?)",
        );
        check_error(
            r#"{"kind": "call""#,
            "line is not valid JSON: EOF while parsing an object at column 16 (is the line truncated?)",
        );
        check_error(
            r#"{"a": 1}{"b": 2}"#,
            "line is not valid JSON: trailing characters at column 9 (expected one JSON object per line)",
        );
        check_error(
            r#"{"a": 1,}"#,
            "line is not valid JSON: trailing comma at column 9",
        );
        check_error(
            &format!("{}x", "[".repeat(MAX_DEPTH)),
            "line is not valid JSON: expected value at column 128",
        );
        check_error(
            r#"[1, 2"#,
            "line is not valid JSON: EOF while parsing a list at column 6 (is the line truncated?)",
        );
    }

    #[test]
    fn reports_records_that_are_not_objects() {
        for (line, what) in [
            ("[1, {}]", "an array"),
            (r#""text""#, "a string"),
            (r#""te\nxt""#, "a string"),
            ("12", "a number"),
            ("-1", "a number"),
            ("1.5", "a number"),
            ("true", "a boolean"),
            ("null", "null"),
        ] {
            check_error(line, &format!("record is {what}, expected a JSON object"));
        }
    }

    #[test]
    fn reports_duplicate_fields() {
        check_error(r#"{"tool": "a", "tool": "b"}"#, "duplicate field `tool`");
        check_error(
            r#"{"tool": "a", "to\u006fl": "b"}"#,
            "duplicate field `tool`",
        );
        let many: Vec<String> = (0..40).map(|i| format!(r#""k{i}": {i}"#)).collect();
        let line = format!("{{{}, \"k7\": 0}}", many.join(", "));
        check_error(&line, "duplicate field `k7`");
        let line = format!("{{{}}}", many.join(", "));
        assert_eq!(decode_ok(&line).fields.keys().len(), 40);
    }

    #[test]
    fn reports_wrong_types_in_canonical_fields() {
        check_error(
            r#"{"tool": 5}"#,
            "field `tool` is a number `5`, expected a string",
        );
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let open = "[".repeat(10_000);
        check_error(
            &open,
            "record is nested too deeply at column 128 (the limit is 127 levels of arrays and objects)",
        );
        check_error(
            &format!(r#"{{"output": {open}"#),
            "record is nested too deeply at column 138 (the limit is 127 levels of arrays and objects)",
        );
        check_error(
            &format!(r#"{{"output": {open}}}"#),
            "record is nested too deeply at column 138 (the limit is 127 levels of arrays and objects)",
        );
        let closed = format!("{open}{}", "]".repeat(10_000));
        check_error(&closed, "record is an array, expected a JSON object");

        let line = format!(r#"{{"output": {closed}}}"#);
        check_error(
            &line,
            "field `output`: record is nested too deeply at column 138 (the limit is 127 levels of arrays and objects)",
        );
        let objects = format!("{}1{}", r#"{"a":"#.repeat(10_000), "}".repeat(10_000));
        let have = decode_line(&objects, Location::default()).unwrap_err();
        assert!(have.to_string().contains("nested too deeply"), "{have}");
    }

    #[test]
    fn numbers_beyond_a_double_are_refused_and_the_largest_are_read() {
        let beyond = |field: &str, number: &str, column: usize| {
            format!(
                "field `{field}`: the number `{number}` at column {column} is beyond the range of a double (no guard or key could compare it)"
            )
        };
        check_error(r#"{"n":1e400}"#, &beyond("n", "1e400", 6));
        check_error(
            r#"{"kind":"call","args":{"a":[1, {"b":"1e400","c":-1E+400}]}}"#,
            &beyond("args", "-1E+400", 49),
        );
        // Through serde_json too: a key with an escape is not for the fast path.
        check_error(r#"{"\u006e": [2, 1e309]}"#, &beyond("n", "1e309", 16));
        let digits = format!("1{}", "0".repeat(309));
        check_error(
            &format!(r#"{{"n":{digits}}}"#),
            &beyond("n", "100000000000000000000000…", 6),
        );
        // What a double holds is read, its largest, its smallest and what underflows
        // to zero included.
        for (number, want) in [
            ("1e308", 1e308),
            ("-1.7976931348623157e308", f64::MIN),
            ("1e-400", 0.0),
            ("2.5E+3", 2500.0),
        ] {
            for line in [
                format!(r#"{{"n":{number}}}"#),
                format!(r#"{{"\u006e":{number}}}"#),
            ] {
                let record = decode_ok(&line);
                let value = record.get(&[key("n")]).expect("a number");
                assert_eq!(value.as_f64(), Some(want), "{line}");
            }
        }
        let digits = format!("1{}", "0".repeat(308));
        assert!(
            decode_ok(&format!(r#"{{"n":{digits}}}"#))
                .get(&[key("n")])
                .is_some()
        );
        assert!(!agrees(r#"{"n": 1e400}"#), "the fast path gives up on it");
    }

    #[test]
    fn a_lone_half_of_a_surrogate_pair_is_refused_and_pairs_are_read() {
        let lone = |field: &str, column: usize| {
            format!(
                "field `{field}`: the string at column {column} escapes half of a UTF-16 surrogate pair without the other half, which is no character (no guard or key could read the string)"
            )
        };
        for (line, column) in [
            (r#"{"a":"\ud800"}"#, 6),
            (r#"{"a":"\udc00 x"}"#, 6),
            (r#"{"a":"x\ud800\u0041"}"#, 6),
            (r#"{"a":"\uD800\uD800"}"#, 6),
            (r#"{"a":["ok", {"b":"\ud83d"}]}"#, 18),
        ] {
            check_error(line, &lone("a", column));
            assert!(!agrees(line), "the fast path gives up on {line}");
            // Through serde_json too: a key with an escape is not for the fast path.
            let escaped = line.replacen(r#"{"a""#, r#"{"\u0061""#, 1);
            check_error(&escaped, &lone("a", column + 5));
        }
        // A pair is one character; an escaped backslash before `ud800` is no escape.
        for line in [
            r#"{"a":"\ud83d\ude00 ok"}"#,
            r#"{"a":"\uD83D\uDE00"}"#,
            r#"{"a":"\\ud800"}"#,
            r#"{"\u0061":"\ud83d\ude00"}"#,
        ] {
            let record = decode_ok(line);
            let want: Value = serde_json::from_str::<Value>(line).expect("valid")["a"].clone();
            assert_eq!(record.get(&[key("a")]).as_deref(), Some(&want), "{line}");
        }
        assert!(
            agrees(r#"{"a":"\ud83d\ude00 ok","b":"\\ud800"}"#),
            "a pair takes the fast path"
        );
    }

    #[test]
    fn the_deepest_record_accepted_can_be_read_whole() {
        let depth = MAX_DEPTH - 1;
        let field = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let line = format!(r#"{{"output": {field}}}"#);
        let have = decode_ok(&line);
        assert!(have.get(&[key("output")]).is_some());
        assert!(serde_json::from_str::<Value>(&line).is_ok());

        let field = format!("[{field}]");
        let line = format!(r#"{{"output": {field}}}"#);
        assert!(serde_json::from_str::<Value>(&line).is_err());
        check_error(
            &line,
            "field `output`: record is nested too deeply at column 138 (the limit is 127 levels of arrays and objects)",
        );
    }

    #[test]
    fn brackets_in_strings_do_not_nest() {
        let text = format!(
            r#"{{"output": ["{}\"{}"]}}"#,
            "[".repeat(300),
            "{".repeat(300)
        );
        assert!(decode_ok(&text).has_field("output"));
    }

    /// The fast path either gives up or agrees with serde_json, on every line.
    #[track_caller]
    fn agrees(line: &str) -> bool {
        let fast = scan::top_level(line);
        if let Some((fast, plain)) = &fast {
            if let Some(plain) = plain {
                let record = Record::new(Fields::Raw(fast.clone()), Location::default())
                    .expect("plain canonical fields are valid");
                assert_eq!(
                    (
                        record.kind,
                        record.status,
                        record.tool.as_deref(),
                        record.call_id.as_deref()
                    ),
                    (plain.kind, plain.status, plain.tool, plain.call_id),
                    "canonical fields of {line:?}"
                );
            }
            assert_eq!(
                decode_fields(line).as_ref(),
                Ok(fast),
                "the fast path accepted {line:?}"
            );
        }
        fast.is_some()
    }

    #[test]
    fn the_fast_path_takes_plain_records() {
        for line in [
            r#"{"kind":"call","tool":"t","call_id":"c1","args":{"a":[1,-2.5e+3,0.0,true,false,null,"x\"\u00e9\n",{}],"b":[]}}"#,
            r#" { "kind" : "result" , "output" : { "k" : [ ] } , "n" : -0 } "#,
            "{}",
            "{\"\u{e9}t\u{e9}\": \"\u{1f600}\", \"e\": 1E9, \"f\": 1e-0}",
        ] {
            assert!(agrees(line), "{line:?} was left to serde_json");
        }
    }

    #[test]
    fn the_fast_path_gives_up_on_what_serde_json_must_judge() {
        let deep = format!(r#"{{"a": {}{}}}"#, "[".repeat(100), "]".repeat(100));
        for line in [
            r#"{"a": 01}"#,
            r#"{"a": 1.}"#,
            r#"{"a": 1e}"#,
            r#"{"a": -}"#,
            r#"{"a": .5}"#,
            r#"{"a": +1}"#,
            r#"{"a": tru}"#,
            r#"{"a": nul}"#,
            r#"{"a": "\x"}"#,
            r#"{"a": "\u12g4"}"#,
            "{\"a\": \"tab\there\"}",
            r#"{"a": [1,]}"#,
            r#"{"a": {"b":1,}}"#,
            r#"{"a": {"b" 1}}"#,
            r#"{"a": {1: 2}}"#,
            r#"{"a": [1 2]}"#,
            r#"{"a": [}"#,
            r#"{"a": 1,}"#,
            r#"{"a": 1} x"#,
            r#"{"a": 1}{"#,
            r#"{"a": 1, "a": 2}"#,
            r#"{"\u0061": 1}"#,
            r#"{"a" 1}"#,
            r#"{"a": "unterminated}"#,
            r#"{"a": "x\"#,
            r#"["#,
            r#""x""#,
            "",
            &deep,
        ] {
            assert!(!agrees(line), "{line:?} was taken by the fast path");
        }
        let many: Vec<String> = (0..40).map(|i| format!(r#""k{i}": {i}"#)).collect();
        assert!(!agrees(&format!("{{{}}}", many.join(", "))));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4096))]

        /// Lines made of JSON's pieces, valid or not: the fast path never accepts a
        /// line serde_json refuses, nor reads one differently.
        #[test]
        fn the_fast_path_agrees_with_serde_json(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "{", "}", "[", "]", ",", ":", " ", "\"", "\"k\"", "\"kind\"", "\"s t\"",
                    "\\", "\\u00e9", "\\n", "\\q", "\t", "0", "-", "1", "12", ".", "5", "e",
                    "E", "+", "true", "false", "null", "nul", "\u{e9}", "\"a\":", "{\"a\":",
                ]),
                0..24,
            )
        ) {
            let line: String = pieces.concat();
            agrees(&line);
            agrees(&format!("{{\"x\": {line}}}"));
            agrees(&format!("{{\"x\": [{line}]}}"));
        }
    }

    #[test]
    fn decodes_lines_from_the_reader() {
        let input = b"{\"tool\": \"a\"}\n\n{\"tool\": \"b\", \"x\": \"\xff\"}\n";
        let mut reader = LineReader::with_max_line_bytes(&input[..], 64);
        let have = decode(reader.next_line().unwrap().unwrap(), 64).unwrap();
        assert_eq!(have.tool.as_deref(), Some("a"));
        assert_eq!((have.loc.line, have.loc.offset, have.loc.len), (1, 0, 13));
        let have = decode(reader.next_line().unwrap().unwrap(), 64).unwrap_err();
        assert_eq!(
            have.to_string(),
            "line is not valid UTF-8 (first bad byte at column 21)"
        );

        let mut reader = LineReader::with_max_line_bytes(&b"{\"tool\": \"a\"}"[..], 8);
        let have = decode(reader.next_line().unwrap().unwrap(), 8).unwrap_err();
        assert_eq!(
            have.to_string(),
            "line is 13 bytes, over the limit of 8 bytes"
        );
    }

    #[test]
    fn reports_unreadable_lines() {
        let line = Line {
            number: 4,
            offset: 0,
            len: 9,
            content: LineContent::InvalidUtf8 { valid_up_to: 6 },
        };
        assert_eq!(
            unreadable_line(&line, 16).map(|e| e.to_string()).as_deref(),
            Some("line is not valid UTF-8 (first bad byte at column 7)")
        );
        let line = Line {
            content: LineContent::TooLong,
            len: 108,
            ..line
        };
        assert_eq!(
            unreadable_line(&line, 16).map(|e| e.to_string()).as_deref(),
            Some("line is 108 bytes, over the limit of 16 bytes")
        );
        let line = Line {
            content: LineContent::Text("{}"),
            len: 2,
            ..line
        };
        assert_eq!(unreadable_line(&line, 16), None);
    }
}
