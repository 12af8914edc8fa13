//! Detection's reading of a line: a [`Sketch`] of its JSON value, which keeps only
//! what detection reads of it, so that deciding the layout of a file whose first line
//! is a whole minified document (tens of megabytes) costs a pass over its text and a
//! few kilobytes, not a parsed copy of it. A line longer than [`LINE_BYTES_HELD`] is
//! parsed as it is read ([`long_line`]), without being held either.
//!
//! A sketch is parsed by the same parser as a `serde_json::Value` (every value through
//! `deserialize_any`), so a line is valid, or fails with the same error, exactly when
//! it would as a `Value`.

use std::io::{self, BufRead, Read};

use rustc_hash::FxHashSet;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use super::detect::{ListTally, Signal, element_like, part_format, signal};
use super::search::{SEARCH_DEPTH, atif_steps};
use super::shared::Map;
use super::{Format, Source, otel, toolbench};

/// The longest line detection holds in memory, in bytes (1 MiB): a longer one, up to
/// the line limit, is parsed as it is read from the file. (2 KiB in tests and fuzzing,
/// where every reading of a file then meets long lines.)
pub(super) const LINE_BYTES_HELD: usize = if cfg!(any(test, fuzzing)) {
    2048
} else {
    1 << 20
};

/// What detection knows of one JSON value.
#[derive(Debug)]
pub(super) struct Sketch {
    /// The value as far as [`signal`], [`element_like`], `mcp::is_batch` and the
    /// search's tests of an object read it: an object keeps only its
    /// [`KEPT_MEMBERS`]; an array only the elements that decide those tests
    /// ([`Kept`]); a long string its two ends ([`kept_string`]); nothing below
    /// [`KEPT_LEVELS`] levels of a member.
    pub(super) value: Value,
    /// Whether the transcript search (`search::has_transcripts`, with the value at
    /// the depth it was parsed at) finds a transcript in the value.
    pub(super) found: bool,
    /// Levels of containers in `value` (0 for a scalar).
    height: usize,
}

/// The members of an object whose values detection's tests read: [`signal`] with the
/// envelope and message tests it makes (`claude_code::is_envelope`,
/// `codex::is_envelope`, `gemini::is_message`, `mcp::is_message`, `otel::is_otlp`),
/// and the search's tests of an object (`otel::is_export`, `toolbench::is_tree`,
/// `toolbench::is_answer_with_messages`, [`atif_steps`]). Of any other member only
/// what the search finds below it counts. Keep it in step with them: a test reads
/// every example both ways.
const KEPT_MEMBERS: &[&str] = &[
    // signal
    "kind",
    "type",
    "role",
    "content",
    "tool_calls",
    "function_call",
    "tool_call_id",
    "step_id",
    "source",
    // Claude Code envelopes
    "message",
    "leafUuid",
    "snapshot",
    "messageId",
    "sessionId",
    "uuid",
    "parentUuid",
    "isSidechain",
    "toolUseResult",
    "userType",
    // Codex, Gemini CLI, MCP
    "payload",
    "toolCalls",
    "id",
    "timestamp",
    "jsonrpc",
    // OpenTelemetry
    "resourceSpans",
    "scopeSpans",
    "instrumentationLibrarySpans",
    "traceId",
    "spanId",
    // ToolBench, ATIF
    "children",
    "node_type",
    "tree",
    "answer_generation",
    "train_messages",
    "steps",
    "schema_version",
];

/// How many levels of a kept member's value its object keeps. The deepest read of any
/// test is five levels below the object it tests (an ATIF trajectory's step's
/// content part's `type`); below that, a container is kept empty.
const KEPT_LEVELS: usize = 6;

/// The longest string kept whole, in bytes. Every name the tests compare a string
/// with is shorter, and they look at no more of a string than its first four bytes
/// (`ATIF…`) and its last twelve (`…_tool_result`).
const KEPT_STRING: usize = 64;

/// `text` as a sketch keeps it: whole up to [`KEPT_STRING`] bytes; else its first and
/// last 16 bytes (or a little more, to end on characters) around a NUL, which no
/// name the tests compare with holds: so it equals none of them, as the whole string
/// did, and starts and ends as it did.
fn kept_string(text: &str) -> String {
    if text.len() <= KEPT_STRING {
        return text.to_string();
    }
    let mut head = 16;
    while !text.is_char_boundary(head) {
        head += 1;
    }
    let mut tail = text.len() - 16;
    while !text.is_char_boundary(tail) {
        tail -= 1;
    }
    format!("{}\0{}", &text[..head], &text[tail..])
}

/// `value` with its containers `levels` deep emptied, so that it is at most
/// `levels + 1` levels of containers deep.
fn cut(value: Value, levels: usize) -> Value {
    match value {
        Value::Object(_) if levels == 0 => Value::Object(Map::new()),
        Value::Array(_) if levels == 0 => Value::Array(Vec::new()),
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, cut(value, levels - 1)))
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|v| cut(v, levels - 1)).collect())
        }
        scalar => scalar,
    }
}

/// `sketch`'s value as its parent keeps it: at most [`KEPT_LEVELS`] levels deep.
fn kept(sketch: Sketch) -> (Value, usize) {
    if sketch.height > KEPT_LEVELS {
        (cut(sketch.value, KEPT_LEVELS - 1), KEPT_LEVELS)
    } else {
        (sketch.value, sketch.height)
    }
}

/// Parses `text` into a [`Sketch`]: an error exactly when `serde_json::from_str`
/// into a `Value` gives one, of the same kind.
pub(super) fn sketch_str(text: &str) -> serde_json::Result<Sketch> {
    parse_str(SketchSeed::TOP, text)
}

/// Parses `text`, one JSON value, with `seed`.
fn parse_str<T>(
    seed: impl for<'de> DeserializeSeed<'de, Value = T>,
    text: &str,
) -> serde_json::Result<T> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = seed.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(value)
}

/// `text` parsed as `detect::first_value` reads a line: a value that keeps only an
/// object's names.
pub(super) fn keys_str(text: &str) -> serde_json::Result<Value> {
    parse_str(TopKeys, text)
}

/// What a line too long to hold gave.
pub(super) enum LongLine<T> {
    /// Only spaces, tabs and carriage returns: not a line that counts.
    Blank,
    /// Not UTF-8.
    NotUtf8,
    /// Parsed; `first` is its first byte that is not JSON whitespace.
    Parsed {
        result: serde_json::Result<T>,
        first: Option<u8>,
    },
}

/// Reads the line of `len` bytes at byte `offset` of `source` (its text, without its
/// line ending) into a [`Sketch`], as [`sketch_str`] reads a line held in memory.
pub(super) fn long_line(source: Source<'_>, offset: u64, len: u64) -> io::Result<LongLine<Sketch>> {
    parse_long(source, offset, len, SketchSeed::TOP)
}

/// Reads the line of `len` bytes at byte `offset` of `source` as [`keys_str`] reads
/// a line held in memory.
pub(super) fn long_line_keys(
    source: Source<'_>,
    offset: u64,
    len: u64,
) -> io::Result<LongLine<Value>> {
    parse_long(source, offset, len, TopKeys)
}

/// Reads the line of `len` bytes at byte `offset` of `source` with `seed`, parsing it
/// as it is read: the bytes read are checked as UTF-8 on the way, and a line that
/// fails to parse is still read to its end, to tell a line that is not UTF-8 from one
/// that is not JSON.
fn parse_long<T>(
    source: Source<'_>,
    offset: u64,
    len: u64,
    seed: impl for<'de> DeserializeSeed<'de, Value = T>,
) -> io::Result<LongLine<T>> {
    let mut body = LineBody {
        inner: source.reader_at(offset)?,
        left: len,
        pending: [0; 4],
        pending_len: 0,
        utf8: true,
        blank: true,
        first: None,
    };
    let result = {
        let buffered = io::BufReader::with_capacity(64 * 1024, &mut body);
        let mut deserializer = serde_json::Deserializer::from_reader(buffered);
        seed.deserialize(&mut deserializer)
            .and_then(|value| deserializer.end().map(|()| value))
    };
    if let Err(err) = &result
        && err.is_io()
    {
        return Err(io::Error::other(err.to_string()));
    }
    // The rest of the line, for the UTF-8 and blank checks.
    let mut scratch = vec![0; 64 * 1024];
    while body.read(&mut scratch)? > 0 {}
    Ok(if body.blank {
        LongLine::Blank
    } else if !body.utf8 || body.pending_len > 0 {
        LongLine::NotUtf8
    } else {
        LongLine::Parsed {
            result,
            first: body.first,
        }
    })
}

/// Bytes of a long line [`long_array`] reads at a time.
const ARRAY_CHUNK: usize = 1 << 20;

/// The most bytes of one element [`long_array`] holds before it leaves the line to
/// [`long_line`] (4 MiB; 4 KiB in tests and fuzzing, where the readings of longer
/// elements are then met too).
const ARRAY_ELEMENT_HELD: usize = if cfg!(any(test, fuzzing)) {
    4096
} else {
    4 << 20
};

/// Levels of containers an element may nest for [`long_array`] to read it: fewer than
/// serde_json's limit of 128 less the array's own level, so that an element it reads
/// on its own fails exactly where it would inside the line.
const ARRAY_ELEMENT_LEVELS: usize = 100;

/// Whether the line of `len` bytes at byte `offset` of `source` is a JSON array, and
/// if so whether it is a JSON-RPC batch (every element an object with a `jsonrpc`
/// member, at least one): all detection asks of an array. `Some` only when the line is
/// an array that [`long_line`] would parse, so saying exactly what it would; `None` for
/// any other line, or when this cannot tell (an element longer than 4 MiB or nested
/// deeper than 100 levels), for [`long_line`] to read.
///
/// A minified document of tens of megabytes, `[{…},{…},…]`, is parsed here one element
/// at a time from a buffer, as a `Value` is parsed but keeping nothing, at several times
/// the speed of a [`Sketch`] parsed as the line is read.
pub(super) fn long_array(source: Source<'_>, offset: u64, len: u64) -> io::Result<Option<bool>> {
    long_array_in(source, offset, len, ARRAY_CHUNK, ARRAY_ELEMENT_HELD)
}

/// [`long_array`], reading `chunk` bytes at a time and holding at most `held` of one
/// element.
fn long_array_in(
    source: Source<'_>,
    offset: u64,
    len: u64,
    chunk: usize,
    held: usize,
) -> io::Result<Option<bool>> {
    let Some(mut window) = Window::opening(source, offset, len, chunk, b'[')? else {
        return Ok(None);
    };
    let (mut elements, mut batch) = (0usize, true);
    if window.next_byte()? == Some(b']') {
        window.at += 1;
    } else {
        loop {
            let rpc = match window.element(held)? {
                Some(Ok(rpc)) => rpc,
                Some(Err(TooLong)) => {
                    // An element too long to hold: the line is read again as it is
                    // parsed, keeping nothing.
                    drop(window);
                    return match parse_long(source, offset, len, Array)? {
                        LongLine::Parsed {
                            result: Ok(batch), ..
                        } => Ok(Some(batch)),
                        _ => Ok(None),
                    };
                }
                None => return Ok(None),
            };
            (elements, batch) = (elements + 1, batch && rpc);
            match window.next_byte()? {
                Some(b',') => window.at += 1,
                Some(b']') => {
                    window.at += 1;
                    break;
                }
                _ => return Ok(None),
            }
        }
    }
    // Nothing but white space may follow.
    if window.next_byte()?.is_some() {
        return Ok(None);
    }
    Ok(Some(elements > 0 && batch))
}

/// Whether the line of `len` bytes at byte `offset` of `source` starts as a JSON
/// array whose first element is no JSON-RPC message (not an object with a `jsonrpc`
/// member): it is no object, or an object, nested at most 100 levels, without that
/// member. Of such a line that is valid JSON, [`long_array`] says it is no batch;
/// whether it is valid, this does not read on to know. It reads the first byte of an
/// element that is no object; an object to its end, held when it is whole within
/// 4 MiB (then also what follows it), else parsed as it is read, keeping nothing.
pub(super) fn opens_no_batch(source: Source<'_>, offset: u64, len: u64) -> io::Result<bool> {
    opens_no_batch_in(source, offset, len, ARRAY_CHUNK, ARRAY_ELEMENT_HELD)
}

/// [`opens_no_batch`], reading `chunk` bytes at a time and holding at most `held` of
/// the element.
fn opens_no_batch_in(
    source: Source<'_>,
    offset: u64,
    len: u64,
    chunk: usize,
    held: usize,
) -> io::Result<bool> {
    let Some(mut window) = Window::opening(source, offset, len, chunk, b'[')? else {
        return Ok(false);
    };
    match window.next_byte()? {
        Some(b'{') => {}
        // An empty array, or none.
        Some(b']') | None => return Ok(false),
        Some(_) => return Ok(true),
    }
    Ok(match window.element(held)? {
        Some(Ok(rpc)) => !rpc && matches!(window.next_byte()?, Some(b',' | b']')),
        Some(Err(TooLong)) => window.element_streamed()? == Some(false),
        None => false,
    })
}

/// The first byte that is not JSON white space of the line of `len` bytes at byte
/// `offset` of `source`; `None` for a blank line.
pub(super) fn first_byte(source: Source<'_>, offset: u64, len: u64) -> io::Result<Option<u8>> {
    Window::new(source, offset, len, 4096)?.next_byte()
}

/// The most bytes of a first member's name [`first_name`] holds.
const NAME_HELD: usize = 64 << 10;

/// The name of the first member of the object the line of `len` bytes at byte `offset`
/// of `source` starts with, as a `Value` reads it (escapes decoded); `None` when the
/// line starts with no object, or with one that has no member or a name not read whole
/// within 64 KiB. Reads no further than that name.
pub(super) fn first_name(source: Source<'_>, offset: u64, len: u64) -> io::Result<Option<String>> {
    let Some(mut window) = Window::opening(source, offset, len, NAME_HELD, b'{')? else {
        return Ok(None);
    };
    if window.next_byte()? != Some(b'"') {
        return Ok(None);
    }
    Ok(window.value::<String>(NAME_HELD)?.and_then(Result::ok))
}

/// The part of a line being read that [`long_array`] holds.
struct Window<'a> {
    input: io::Take<Box<dyn BufRead + 'a>>,
    bytes: Vec<u8>,
    /// Where reading is in `bytes`.
    at: usize,
    /// Whether `bytes` holds the rest of the line.
    ended: bool,
    chunk: usize,
}

impl<'a> Window<'a> {
    /// A window on the line of `len` bytes at byte `offset` of `source`, read `chunk`
    /// bytes at a time.
    fn new(source: Source<'a>, offset: u64, len: u64, chunk: usize) -> io::Result<Window<'a>> {
        Ok(Window {
            input: source.reader_at(offset)?.take(len),
            bytes: Vec::new(),
            at: 0,
            ended: false,
            chunk,
        })
    }

    /// A window on the line of `len` bytes at byte `offset` of `source`, read `chunk`
    /// bytes at a time, past the `open` its text starts with (after white space);
    /// `None` when it does not start with it.
    fn opening(
        source: Source<'a>,
        offset: u64,
        len: u64,
        chunk: usize,
        open: u8,
    ) -> io::Result<Option<Window<'a>>> {
        let mut window = Window::new(source, offset, len, chunk)?;
        if window.next_byte()? != Some(open) {
            return Ok(None);
        }
        window.at += 1;
        Ok(Some(window))
    }

    /// Reads more of the line, dropping the bytes read already: about `chunk` bytes,
    /// or as many as are held, so that an element read again as its bytes come costs
    /// at most twice its length.
    fn more(&mut self) -> io::Result<()> {
        self.bytes.drain(..self.at);
        self.at = 0;
        let want = self.bytes.len() + self.chunk.max(self.bytes.len());
        while self.bytes.len() < want {
            let available = self.input.fill_buf()?;
            if available.is_empty() {
                self.ended = true;
                break;
            }
            let n = available.len().min(want - self.bytes.len());
            self.bytes.extend_from_slice(&available[..n]);
            self.input.consume(n);
        }
        Ok(())
    }

    /// The next byte that is not JSON white space, not consumed.
    fn next_byte(&mut self) -> io::Result<Option<u8>> {
        loop {
            while let Some(&byte) = self.bytes.get(self.at) {
                if !matches!(byte, b' ' | b'\t' | b'\r' | b'\n') {
                    return Ok(Some(byte));
                }
                self.at += 1;
            }
            if self.ended {
                return Ok(None);
            }
            self.more()?;
        }
    }

    /// Parses the array element at the next byte as a `Value` would be: whether it is
    /// an object with a `jsonrpc` member; [`TooLong`] when it goes on past `held`
    /// bytes. `None` when it is not valid JSON, or not certainly as it would be read
    /// inside the line.
    fn element(&mut self, held: usize) -> io::Result<Option<Result<bool, TooLong>>> {
        Ok(self
            .value::<Element>(held)?
            .map(|element| element.map(|Element(rpc)| rpc)))
    }

    /// [`Window::element`] of an element too long to hold: parsed as the rest of the
    /// line is read, keeping nothing, and not read past its end. Leaves the window
    /// read to an unknown point.
    fn element_streamed(&mut self) -> io::Result<Option<bool>> {
        let held = std::mem::take(&mut self.bytes);
        let rest = (&held[self.at..]).chain(&mut self.input);
        let reader = io::BufReader::with_capacity(64 * 1024, rest);
        let mut deserializer = serde_json::Deserializer::from_reader(reader);
        match <Element as serde::Deserialize>::deserialize(&mut deserializer) {
            Ok(Element(rpc)) => Ok(Some(rpc)),
            Err(err) if err.is_io() => Err(io::Error::other(err.to_string())),
            Err(_) => Ok(None),
        }
    }

    /// Parses the value at the next byte as a `T`, as [`Window::element`] parses an
    /// element.
    fn value<T: serde::de::DeserializeOwned>(
        &mut self,
        held: usize,
    ) -> io::Result<Option<Result<T, TooLong>>> {
        if self.next_byte()?.is_none() {
            return Ok(None);
        }
        loop {
            let bytes = &self.bytes[self.at..];
            let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
            match values.next() {
                // A value that ends where the bytes held do may go on past them (a
                // number cut short); one that ends before is whole.
                Some(Ok(value)) if values.byte_offset() < bytes.len() || self.ended => {
                    self.at += values.byte_offset();
                    return Ok(Some(Ok(value)));
                }
                Some(Ok(_)) => {}
                Some(Err(err)) if err.is_eof() => {}
                _ => return Ok(None),
            }
            if self.ended {
                return Ok(None);
            }
            if bytes.len() >= held {
                return Ok(Some(Err(TooLong)));
            }
            self.more()?;
        }
    }
}

/// An array element longer than [`long_array`] holds.
struct TooLong;

/// A JSON array read as a `Value` is, keeping only whether it is a JSON-RPC batch
/// (every element an object with a `jsonrpc` member, at least one); any other value
/// is an error.
#[derive(Clone, Copy)]
struct Array;

impl<'de> DeserializeSeed<'de> for Array {
    type Value = bool;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Array {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<bool, A::Error> {
        let (mut elements, mut batch) = (0usize, true);
        while let Some(Element(rpc)) = access.next_element()? {
            (elements, batch) = (elements + 1, batch && rpc);
        }
        Ok(elements > 0 && batch)
    }
}

/// An array element read as a `Value` is, keeping only whether it is an object with a
/// `jsonrpc` member.
struct Element(bool);

/// What skips a value inside an array element (a member, or an element of it): it may
/// nest [`ARRAY_ELEMENT_LEVELS`] containers with the element's own.
const ELEMENT_INSIDE: Skip = Skip {
    levels: ARRAY_ELEMENT_LEVELS - 1,
};

impl<'de> serde::Deserialize<'de> for Element {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Element, D::Error> {
        struct Top;
        impl<'de> Visitor<'de> for Top {
            type Value = bool;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any valid JSON value")
            }

            fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
                Ok(false)
            }

            fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
                Ok(false)
            }

            fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
                Ok(false)
            }

            fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
                Ok(false)
            }

            fn visit_str<E>(self, _: &str) -> Result<bool, E> {
                Ok(false)
            }

            fn visit_unit<E>(self) -> Result<bool, E> {
                Ok(false)
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<bool, A::Error> {
                while access.next_element_seed(ELEMENT_INSIDE)?.is_some() {}
                Ok(false)
            }

            fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<bool, A::Error> {
                let mut rpc = false;
                while let Some(is_rpc) = access.next_key_seed(Named("jsonrpc"))? {
                    access.next_value_seed(ELEMENT_INSIDE)?;
                    rpc |= is_rpc;
                }
                Ok(rpc)
            }
        }
        deserializer.deserialize_any(Top).map(Element)
    }
}

/// A member name, read as a `Value`'s is: whether it is the given one.
#[derive(Clone, Copy)]
struct Named(&'static str);

impl<'de> DeserializeSeed<'de> for Named {
    type Value = bool;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Named {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, name: &str) -> Result<bool, E> {
        Ok(name == self.0)
    }
}

/// Parses a JSON value keeping only, of an object, its names (each with a null value):
/// all that [`super::detect::resembles`] reads. Anything else is null.
#[derive(Clone, Copy)]
struct TopKeys;

impl<'de> DeserializeSeed<'de> for TopKeys {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopKeys {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_str<E>(self, _: &str) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        while access.next_element_seed(Skip::ANY)?.is_some() {}
        Ok(Value::Null)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            access.next_value_seed(Skip::ANY)?;
            map.insert(key, Value::Null);
        }
        Ok(Value::Object(map))
    }
}

/// Parses a JSON value as a `Value` is parsed (numbers and strings read, not only
/// skipped, so that it fails where a `Value` does) and keeps nothing of it. Containers
/// nested more than `levels` deep inside it are an error too ([`Skip::ANY`]: only
/// serde_json's own limit).
#[derive(Clone, Copy)]
struct Skip {
    levels: usize,
}

impl Skip {
    const ANY: Skip = Skip { levels: usize::MAX };

    /// What skips a value inside a container this skips.
    fn inner<E: serde::de::Error>(self) -> Result<Skip, E> {
        match self.levels.checked_sub(1) {
            Some(levels) => Ok(Skip { levels }),
            None => Err(E::custom("nested deeper than this reading goes")),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Skip {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Skip {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let inner = self.inner::<A::Error>()?;
        while access.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<(), A::Error> {
        let inner = self.inner::<A::Error>()?;
        while access.next_key_seed(Skip::ANY)?.is_some() {
            access.next_value_seed(inner)?;
        }
        Ok(())
    }
}

/// The text of one line, read up to its length, with what detection asks of its
/// bytes noted on the way.
struct LineBody<'a> {
    inner: Box<dyn BufRead + 'a>,
    /// Bytes of the line not read yet.
    left: u64,
    /// The start of a UTF-8 sequence that the bytes read so far end inside.
    pending: [u8; 4],
    pending_len: usize,
    /// Whether the bytes read so far are UTF-8 (but for `pending`).
    utf8: bool,
    /// Whether every byte read so far is a space, a tab or a carriage return.
    blank: bool,
    /// The first byte that is not JSON whitespace.
    first: Option<u8>,
}

impl LineBody<'_> {
    fn note(&mut self, mut bytes: &[u8]) {
        self.blank = self.blank && bytes.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r'));
        if self.first.is_none() {
            self.first = bytes
                .iter()
                .copied()
                .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n'));
        }
        if !self.utf8 {
            return;
        }
        // A sequence begun in the bytes before: finished one byte at a time.
        while self.pending_len > 0 {
            let Some((&byte, rest)) = bytes.split_first() else {
                return;
            };
            bytes = rest;
            self.pending[self.pending_len] = byte;
            self.pending_len += 1;
            match std::str::from_utf8(&self.pending[..self.pending_len]) {
                Ok(_) => self.pending_len = 0,
                Err(err) if err.error_len().is_some() => {
                    self.utf8 = false;
                    return;
                }
                Err(_) => {}
            }
        }
        if let Err(err) = std::str::from_utf8(bytes) {
            match err.error_len() {
                Some(_) => self.utf8 = false,
                None => {
                    let rest = &bytes[err.valid_up_to()..];
                    self.pending[..rest.len()].copy_from_slice(rest);
                    self.pending_len = rest.len();
                }
            }
        }
    }
}

impl Read for LineBody<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 || buf.is_empty() {
            return Ok(0);
        }
        let available = self.inner.fill_buf()?;
        if available.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file ended early: it changed while it was read",
            ));
        }
        let n = available
            .len()
            .min(buf.len())
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        buf[..n].copy_from_slice(&available[..n]);
        self.inner.consume(n);
        self.left -= n as u64;
        self.note(&buf[..n]);
        Ok(n)
    }
}

/// Parses one value into a [`Sketch`]; `depth` is the value's depth in the line, and
/// `read` whether what holds it reads its value (the line's own value, an array's
/// element, an object's member among [`KEPT_MEMBERS`]), or only whether the search
/// finds something in it. A value not read keeps no string, and an array not read is
/// only checked, not sketched, from where what the search finds in it is known.
#[derive(Clone, Copy)]
struct SketchSeed {
    depth: usize,
    read: bool,
}

impl SketchSeed {
    const TOP: SketchSeed = SketchSeed {
        depth: 0,
        read: true,
    };

    fn leaf(value: Value) -> Sketch {
        Sketch {
            value,
            found: false,
            height: 0,
        }
    }

    /// The seed of an element of the array this seed reads.
    fn element(self) -> SketchSeed {
        SketchSeed {
            depth: self.depth + 1,
            read: true,
        }
    }

    /// The seed of the member `name` of the object this seed reads.
    fn member(self, name: &str) -> SketchSeed {
        SketchSeed {
            depth: self.depth + 1,
            read: KEPT_MEMBERS.contains(&name),
        }
    }

    /// Whether the search, at this depth, goes into the value at all.
    fn searched(self) -> bool {
        self.depth <= SEARCH_DEPTH
    }
}

impl<'de> DeserializeSeed<'de> for SketchSeed {
    type Value = Sketch;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Sketch, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for SketchSeed {
    type Value = Sketch;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any valid JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Sketch, E> {
        Ok(Self::leaf(Value::Bool(value)))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Sketch, E> {
        Ok(Self::leaf(Value::Number(value.into())))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Sketch, E> {
        Ok(Self::leaf(Value::Number(value.into())))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Sketch, E> {
        Ok(Self::leaf(
            Number::from_f64(value).map_or(Value::Null, Value::Number),
        ))
    }

    fn visit_str<E>(self, value: &str) -> Result<Sketch, E> {
        Ok(Self::leaf(match self.read {
            true => Value::String(kept_string(value)),
            false => Value::Null,
        }))
    }

    fn visit_unit<E>(self) -> Result<Sketch, E> {
        Ok(Self::leaf(Value::Null))
    }

    fn visit_none<E>(self) -> Result<Sketch, E> {
        Ok(Self::leaf(Value::Null))
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Sketch, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Sketch, A::Error> {
        let mut tally = ListTally::new(None);
        let mut found = false;
        let mut kept_items = Kept::default();
        loop {
            // An array whose value is not read says only whether the search finds
            // something in it: nothing, below the search's depth; something, once an
            // element holds something. The rest is only checked.
            if !self.read && (found || !self.searched()) {
                while access.next_element_seed(Skip::ANY)?.is_some() {}
                break;
            }
            let Some(item) = access.next_element_seed(self.element())? else {
                break;
            };
            let item_signal = signal(&item.value);
            tally.add(item_signal);
            found |= item.found;
            kept_items.add(item, item_signal);
        }
        // The search takes a list whose elements look like a transcript's, else
        // searches each element.
        let found = self.searched() && (found || tally.format().is_some());
        let height = kept_items.height + 1;
        Ok(Sketch {
            value: Value::Array(kept_items.items),
            found,
            height,
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Sketch, A::Error> {
        let mut map = Map::new();
        let mut height = 0;
        // The members below which the search finds a transcript, by name: of a name
        // given twice, the last value counts, as in a parsed object.
        let mut found = FxHashSet::<String>::default();
        while let Some(key) = access.next_key::<String>()? {
            let child = access.next_value_seed(self.member(&key))?;
            if child.found {
                found.insert(key.clone());
            } else if !found.is_empty() {
                found.remove(&key);
            }
            if KEPT_MEMBERS.contains(&key.as_str()) {
                let (value, child_height) = kept(child);
                height = height.max(child_height);
                map.insert(key, value);
            }
        }
        let value = Value::Object(map);
        let found = self.searched() && {
            let map = value.as_object().expect("an object");
            // As `Search::find` tests an object, with no format asked for.
            otel::is_export(map)
                || toolbench::is_tree(map)
                || atif_steps(map).is_some()
                || (self.depth == 0 && element_like(&value, None))
                || {
                    let skip_tree = toolbench::is_answer_with_messages(map);
                    found.iter().any(|key| !(skip_tree && key == "tree"))
                }
        };
        Ok(Sketch {
            value,
            found,
            height: height + 1,
        })
    }
}

/// The elements of an array that its sketch keeps, in their order: those that decide
/// what the tests read of an array. The first (whether it is empty); the first that is
/// not a JSON-RPC message (whether it is a batch, `mcp::is_batch`); the first content
/// part that says a format ([`part_format`], which [`signal`] takes from the first);
/// the first ATIF step ([`atif_steps`] asks whether there is one).
#[derive(Default)]
struct Kept {
    items: Vec<Value>,
    height: usize,
    other: bool,
    part: bool,
    atif: bool,
}

impl Kept {
    fn add(&mut self, item: Sketch, item_signal: Signal) {
        let first = self.items.is_empty();
        let other = !self.other
            && !item
                .value
                .as_object()
                .is_some_and(|m| m.contains_key("jsonrpc"));
        let part = !self.part && part_format(&item.value).is_some();
        let atif = !self.atif && item_signal == Signal::Strong(Format::Atif);
        self.other |= other;
        self.part |= part;
        self.atif |= atif;
        if first || other || part || atif {
            let (value, height) = kept(item);
            self.height = self.height.max(height);
            self.items.push(value);
        }
    }
}

/// Values to test detection with, for this module's tests and detection's: the
/// examples', and values made up of the names and words detection looks for.
#[cfg(test)]
pub(super) mod corpus {
    use serde_json::{Value, json};

    /// A seeded sequence of choices.
    pub(crate) struct Choices(pub(crate) u64);

    impl Choices {
        /// A number below `n`.
        pub(crate) fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % n
        }

        /// Whether a one-in-`n` chance came up.
        pub(crate) fn one_in(&mut self, n: u64) -> bool {
            self.below(n) == 0
        }

        pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
            &items[self.below(items.len() as u64) as usize]
        }
    }

    /// The JSON values of every example (a document, or each line of a JSON Lines
    /// file).
    pub(crate) fn examples() -> Vec<Value> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (files, unreadable) = crate::files::collect(
            &[root.join("traces"), root.join("tests/fixtures")],
            crate::files::is_trace_file,
        );
        assert!(unreadable.is_empty());
        let mut docs = Vec::new();
        for path in &files {
            let text = std::fs::read_to_string(path).unwrap_or_default();
            match serde_json::from_str::<Value>(&text) {
                Ok(value) => docs.push(value),
                Err(_) => docs.extend(text.lines().filter_map(|l| serde_json::from_str(l).ok())),
            }
        }
        assert!(docs.len() > 200, "{} example values", docs.len());
        docs
    }

    /// `value` and every value inside it.
    pub(crate) fn all_values<'v>(value: &'v Value, out: &mut Vec<&'v Value>) {
        out.push(value);
        match value {
            Value::Object(map) => map.values().for_each(|v| all_values(v, out)),
            Value::Array(items) => items.iter().for_each(|v| all_values(v, out)),
            _ => {}
        }
    }

    /// Member names detection reads, list names, and others.
    const NAMES: &[&str] = &[
        "kind",
        "type",
        "role",
        "content",
        "tool_calls",
        "function_call",
        "tool_call_id",
        "step_id",
        "source",
        "message",
        "leafUuid",
        "snapshot",
        "messageId",
        "sessionId",
        "uuid",
        "payload",
        "toolCalls",
        "id",
        "timestamp",
        "jsonrpc",
        "resourceSpans",
        "scopeSpans",
        "traceId",
        "spanId",
        "children",
        "node_type",
        "tree",
        "answer_generation",
        "train_messages",
        "steps",
        "schema_version",
        "messages",
        "items",
        "input",
        "output",
        "traj",
        "runs",
        "loglines",
        "spans",
        "data",
        "x",
        "method",
        "params",
        "result",
    ];

    /// Words detection compares strings with, and others.
    const WORDS: &[&str] = &[
        "call",
        "result",
        "message",
        "user",
        "assistant",
        "tool",
        "function",
        "developer",
        "system",
        "gemini",
        "info",
        "summary",
        "file-history-snapshot",
        "response_item",
        "session_meta",
        "tool_use",
        "tool_result",
        "input_text",
        "refusal",
        "web_search_tool_result",
        "function_call",
        "Action",
        "Thought",
        "ATIF-v1.6",
        "2.0",
        "hello",
    ];

    /// A made-up value, `depth` levels of containers deep at most: now and then one of
    /// `examples`.
    pub(crate) fn value(c: &mut Choices, depth: u64, examples: &[Value]) -> Value {
        let container = depth > 0 && c.below(4) != 0;
        match c.below(if container { 8 } else { 12 }) {
            0 if !examples.is_empty() => c.pick(examples).clone(),
            0..=3 if container => {
                let n = c.below(5);
                let mut map = serde_json::Map::new();
                for _ in 0..n {
                    let name = c.pick(NAMES).to_string();
                    map.insert(name, value(c, depth - 1, examples));
                }
                Value::Object(map)
            }
            _ if container => {
                let n = c.below(5);
                Value::Array((0..n).map(|_| value(c, depth - 1, examples)).collect())
            }
            0..=5 => json!(c.pick(WORDS)),
            6 => json!(format!("ATIF {}", "long ".repeat(20))),
            7 => json!(format!("{}_tool_result", "é".repeat(40))),
            8 => json!(c.below(1000)),
            9 => json!(-1.5),
            10 => json!(true),
            _ => Value::Null,
        }
    }

    /// Made-up values, some wrapping examples in lists, runs and deep nesting.
    pub(crate) fn made_up(count: u64, examples: &[Value]) -> Vec<Value> {
        let mut values = Vec::new();
        for seed in 0..count {
            let mut c = Choices(seed);
            let depth = 4 + c.below(4);
            let mut made = value(&mut c, depth, examples);
            // Now and then, deeper than the search goes, or just as deep.
            if c.below(6) == 0 {
                for _ in 0..10 + c.below(4) {
                    made = match c.below(2) {
                        0 => {
                            let name = *c.pick(NAMES);
                            json!({ name: made })
                        }
                        _ => json!([made]),
                    };
                }
            }
            values.push(made);
        }
        values
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::corpus::{all_values, examples, made_up};
    use super::*;
    use crate::trace::adapters::mcp;
    use crate::trace::adapters::search::has_transcripts;

    /// Asserts that a sketch of `value` says what `value` says to every test
    /// detection makes of a line.
    fn same(value: &Value) {
        let text = serde_json::to_string(value).expect("a value prints");
        let sketch = sketch_str(&text).expect("valid JSON sketches");
        assert_eq!(signal(&sketch.value), signal(value), "{text}");
        for format in Format::ALL.into_iter().map(Some).chain([None]) {
            assert_eq!(
                element_like(&sketch.value, format),
                element_like(value, format),
                "{format:?} {text}"
            );
        }
        assert_eq!(sketch.found, has_transcripts(value), "{text}");
        if let (Value::Array(kept), Value::Array(items)) = (&sketch.value, value) {
            assert_eq!(mcp::is_batch(kept), mcp::is_batch(items), "{text}");
        }
    }

    #[test]
    fn a_sketch_says_what_the_whole_value_does_of_every_example() {
        let docs = examples();
        let mut values = Vec::new();
        docs.iter().for_each(|doc| all_values(doc, &mut values));
        let mut found = 0;
        for value in &values {
            same(value);
            found += usize::from(has_transcripts(value));
        }
        // Hundreds of them hold transcripts.
        assert!(found > 300, "{found} of {} hold transcripts", values.len());
    }

    #[test]
    fn a_sketch_says_what_the_whole_value_does_of_made_up_values() {
        let docs = examples();
        let (mut found, mut batches, mut deep) = (0, 0, 0);
        for value in made_up(3000, &docs) {
            same(&value);
            found += usize::from(has_transcripts(&value));
            batches += usize::from(matches!(&value, Value::Array(items) if mcp::is_batch(items)));
            let text = serde_json::to_string(&value).unwrap();
            deep += usize::from(text.starts_with("[[[[[[[[[[") || text.starts_with("{\""));
        }
        // Both answers are common.
        assert!(
            (500..2500).contains(&found),
            "{found} of 3000 hold transcripts"
        );
        assert!(batches > 0 && deep > 100, "{batches} batches, {deep} deep");
    }

    #[test]
    fn a_name_given_twice_counts_by_its_last_value() {
        let list = r#"[{"role":"user","content":"hi"}]"#;
        for (text, found) in [
            (format!(r#"{{"messages":{list},"messages":1}}"#), false),
            (format!(r#"{{"messages":1,"messages":{list}}}"#), true),
            (format!(r#"{{"a":{list},"b":{list},"a":2}}"#), true),
            (
                r#"{"resourceSpans":[],"resourceSpans":{}}"#.to_string(),
                false,
            ),
        ] {
            let value: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(has_transcripts(&value), found, "{text}");
            assert_eq!(sketch_str(&text).unwrap().found, found, "{text}");
        }
    }

    #[test]
    fn long_strings_keep_their_ends() {
        let text = format!("ATIF{}é_tool_result", "ü".repeat(100));
        let kept = kept_string(&text);
        assert!(kept.len() < 40, "{kept}");
        assert!(
            kept.starts_with("ATIF") && kept.ends_with("é_tool_result"),
            "{kept}"
        );
        assert!(kept.contains('\0'));
        assert_eq!(kept_string("tool_use"), "tool_use");
    }

    #[test]
    fn a_sketch_fails_where_a_value_does_and_alike() {
        for text in [
            "",
            "{",
            "[1,",
            r#"{"a":"#,
            r#"{"a":1}x"#,
            "1e400",
            r#""\ud800""#,
            "[1,]",
            r#"{"a" 1}"#,
            "tru",
            r#""a"#,
            "\u{a0}{}",
            &"[".repeat(200),
            r#"{"a":1,}"#,
            // After an element in which the search finds a transcript, the rest of an
            // array whose value is not read is only checked, as strictly.
            r#"{"runs":[{"messages":[{"role":"user","content":"hi"}]},1e400]}"#,
            r#"{"runs":[{"messages":[{"role":"user","content":"hi"}]},{"a":"\ud800"}]}"#,
            r#"{"runs":[{"messages":[{"role":"user","content":"hi"}]},[1,]]}"#,
            &format!(
                r#"{{"runs":[{{"messages":[{{"role":"user","content":"hi"}}]}},{}]}}"#,
                "[".repeat(130)
            ),
        ] {
            let whole = serde_json::from_str::<Value>(text).err();
            let sketched = sketch_str(text).err();
            assert_eq!(
                whole.as_ref().map(|e| (e.classify(), e.to_string())),
                sketched.as_ref().map(|e| (e.classify(), e.to_string())),
                "{text}"
            );
        }
    }

    /// Levels of containers in `value`.
    fn levels(value: &Value) -> usize {
        match value {
            Value::Array(items) => 1 + items.iter().map(levels).max().unwrap_or(0),
            Value::Object(map) => 1 + map.values().map(levels).max().unwrap_or(0),
            _ => 0,
        }
    }

    /// Asserts that [`long_array_in`] says of `text`, read `chunk` bytes at a time
    /// holding `held` of an element, what a `Value` parsed from it does: whether it is
    /// an array and a JSON-RPC batch. It answers every valid array that does not nest
    /// too deep (`Some`), and nothing else; returns its answer.
    fn reads_array_alike(text: &str, chunk: usize, held: usize) -> Option<bool> {
        let have = long_array_in(
            Source::Bytes(text.as_bytes()),
            0,
            text.len() as u64,
            chunk,
            held,
        )
        .expect("bytes read");
        let want = match serde_json::from_str::<Value>(text) {
            // A valid array nested deeper may be left to the sketch.
            Ok(array @ Value::Array(_))
                if have.is_some() || levels(&array) <= ARRAY_ELEMENT_LEVELS =>
            {
                array.as_array().map(|items| mcp::is_batch(items))
            }
            _ => None,
        };
        assert_eq!(have, want, "read {chunk} at a time, holding {held}: {text}");
        opens_alike(text, chunk, held);
        have
    }

    /// Asserts that [`opens_no_batch_in`] says of `text`, read `chunk` bytes at a time
    /// holding `held` of its first element, only what [`long_array`] says of a valid
    /// line (no batch), and says it of every valid array whose first element is no
    /// JSON-RPC message when the array does not nest too deep, whether it holds the
    /// element or not.
    fn opens_alike(text: &str, chunk: usize, held: usize) {
        let source = Source::Bytes(text.as_bytes());
        let opens = opens_no_batch_in(source, 0, text.len() as u64, chunk, held).expect("read");
        // Of a line that is not a valid array, reading it decides.
        let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let rpc = |item: &Value| item.as_object().is_some_and(|m| m.contains_key("jsonrpc"));
        let no_batch = items.first().is_some_and(|first| !rpc(first));
        if opens {
            assert!(!mcp::is_batch(&items), "said to be no batch: {text}");
        }
        let complete = levels(&Value::Array(items)) <= ARRAY_ELEMENT_LEVELS;
        if complete {
            assert_eq!(opens, no_batch, "read {chunk} at a time: {text}");
        }
    }

    /// JSON text of values made of scalars (some that no `Value` holds), arrays and
    /// objects whose names include `jsonrpc`, spelled plainly and escaped.
    fn json_text() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let leaf = prop::sample::select(vec![
            "1",
            "23",
            "-0.5e9",
            "0",
            "true",
            "false",
            "null",
            "\"a\"",
            "\"\\u00e9\"",
            "1e400",
            "\"\\ud800\"",
            "12345678901234567890",
        ])
        .prop_map(String::from);
        leaf.prop_recursive(4, 40, 6, |inner| {
            let name = prop::sample::select(vec![
                "\"jsonrpc\"",
                "\"a\"",
                "\"json\\u0072pc\"",
                "\"jsonrpc2\"",
                "\"jsonrp\"",
            ]);
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec((name, inner), 0..5).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(n, v)| format!("{n}:{v}"))
                        .collect();
                    format!("{{{}}}", members.join(" , "))
                }),
            ]
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        #[test]
        fn any_line_reads_as_an_array_as_a_value_does(
            elements in proptest::collection::vec(json_text(), 0..6),
            spaced in proptest::bool::ANY,
            // A change: none, the line cut short there, or a fragment put in there.
            change in 0usize..3,
            at in 0usize..400,
            fragment in proptest::sample::select(vec!["]", ",", "x", " ", "{", "\"", "1", "[1]"]),
            chunk in 1usize..9,
            held in 1usize..48,
        ) {
            let sep = if spaced { " , " } else { "," };
            let mut text = format!("[{}]", elements.join(sep));
            let at = at.min(text.len());
            match change {
                1 => text.truncate(at),
                2 => text.insert_str(at, fragment),
                _ => {}
            }
            reads_array_alike(&text, chunk, held);
        }
    }

    #[test]
    fn a_long_array_reads_as_a_value_does() {
        let deep = |levels: usize| format!("[{}{}]", "[".repeat(levels), "]".repeat(levels));
        let mut texts: Vec<String> = [
            "[]",
            " [ ] ",
            "[1]",
            "[1,2]",
            "[123456789,-0.5e-3, 1E2 ,true,false,null]",
            r#"["a","\u00e9\n",{}]"#,
            r#"[{"jsonrpc":"2.0","id":1}]"#,
            r#"[{"jsonrpc":"2.0"}, {"id":1,"jsonrpc":null}]"#,
            r#"[{"json\u0072pc":"2.0"}]"#,
            r#"[{"jsonrpc":1,"jsonrpc":2}]"#,
            r#"[{"jsonrpc":1},2]"#,
            r#"[{"jsonrpc":1},{"a":{"jsonrpc":1}}]"#,
            r#"[{"a":{"jsonrpc":1}}]"#,
            r#"[{"jsonrpc2":1}]"#,
            r#"[[{"jsonrpc":1}]]"#,
            "[1]\r",
            "\t[1]\t\r",
            // Not arrays, or not valid.
            "{}",
            "1",
            "",
            "  ",
            "[",
            "[1",
            "[1,",
            "[1,]",
            "[,1]",
            "[1 2]",
            "[1]]",
            "[1] x",
            "[1]x",
            "[01]",
            "[-]",
            "[1.]",
            "[1e400]",
            r#"["\ud800"]"#,
            r#"["a]"#,
            r#"[{"a":1}{}]"#,
            r#"[{"a" 1}]"#,
            "[tru]",
            "[true",
            "[nul",
            "[1]\u{a0}",
        ]
        .map(String::from)
        .to_vec();
        // At and around the nesting limit: read alone, an element may nest one level
        // more than inside the line.
        texts.extend([98, 99, 100, 101, 125, 126, 127, 128].map(deep));
        texts.push(format!("[{}]", "1".repeat(300)));
        texts.push(format!("[\"{}\",{}]", "x".repeat(300), "2".repeat(40)));
        // Arrays of every example, of made-up values, and cut short.
        let docs = examples();
        let mut values = docs.clone();
        values.extend(made_up(200, &docs));
        for (i, value) in values.iter().enumerate() {
            let next = &values[(i * 7 + 3) % values.len()];
            let text = serde_json::to_string(&[value, next]).unwrap();
            let cut = (i * 31) % text.len();
            if text.is_char_boundary(cut) {
                texts.push(text[..cut].to_string());
            }
            texts.push(text);
            if let Value::Array(_) = value {
                texts.push(serde_json::to_string(value).unwrap());
            }
        }
        // Batches of the examples' JSON-RPC messages, and one that is not quite.
        let mut inner = Vec::new();
        docs.iter().for_each(|doc| all_values(doc, &mut inner));
        let messages: Vec<&Value> = inner
            .into_iter()
            .filter(|v| v.as_object().is_some_and(|m| m.contains_key("jsonrpc")))
            .collect();
        for pair in messages.chunks(2) {
            texts.push(serde_json::to_string(pair).unwrap());
            texts.push(serde_json::to_string(&[pair[0], &Value::Null]).unwrap());
        }
        let (mut arrays, mut batches) = (0, 0);
        for text in &texts {
            for (chunk, held) in [(1, 1), (2, 5), (3, 64), (7, 1 << 20), (1 << 20, 1 << 20)] {
                let answer = reads_array_alike(text, chunk, held);
                arrays += usize::from(answer.is_some());
                batches += usize::from(answer == Some(true));
            }
        }
        // Both answers come often, and so do lines that are not arrays.
        assert!(
            arrays > 1000 && batches > 50,
            "{arrays} arrays, {batches} batches"
        );
        assert!(
            arrays < texts.len() * 5 - 500,
            "{arrays} of {} lines",
            texts.len() * 5
        );
    }
}
