//! Detection: what a file holds, decided from its content (never its name). The
//! first lines decide the [`Layout`]; each element's own fields say which format it
//! belongs to ([`signal`]), and a list's elements together say which format the list
//! is in ([`list_format`]).

use std::io::{self, BufRead, Read};

use serde::Deserialize;
use serde_json::Value;

use super::document::LIST_KEYS;
use super::shared::{Map, str_of};
use super::sketch::{
    LINE_BYTES_HELD, LongLine, Sketch, first_byte, first_name, keys_str, long_array, long_line,
    long_line_keys, opens_no_batch, sketch_str,
};
use super::unique::Node;
use super::{Format, InputOptions, Layout, Source, claude_code, codex, gemini, mcp, otel};
use crate::trace::Location;
use crate::trace::reader::{LineContent, LineReader};

/// The first lines of a file, parsed.
enum Peeked {
    Json(Sketch),
    /// A long line that is a JSON array, read only as far as detection looks at one:
    /// whether it is a JSON-RPC batch.
    Array {
        batch: bool,
    },
    /// Text that is not complete JSON; `open` says whether it ended too early.
    Broken {
        open: bool,
    },
    /// Over the line limit, or not UTF-8.
    Unreadable,
}

impl Peeked {
    /// A line parsed, whose first byte that is not whitespace is `first`.
    fn parsed(result: serde_json::Result<Sketch>, first: Option<u8>) -> Peeked {
        match result {
            Ok(sketch) => Peeked::Json(sketch),
            Err(err) => Peeked::Broken {
                open: err.is_eof() && matches!(first, Some(b'{' | b'[')),
            },
        }
    }
}

/// Decides the layout from the first one or two non-blank lines. A line is read into
/// a [`Sketch`] (never a whole `serde_json::Value`), and one longer than
/// [`LINE_BYTES_HELD`] is parsed as it is read, not held: detection's memory does not
/// grow with the line.
pub(super) fn sniff(
    source: Source<'_>,
    options: &InputOptions,
    max_line_bytes: usize,
) -> io::Result<Layout> {
    match sniff_holding(
        source,
        options,
        max_line_bytes,
        LINE_BYTES_HELD,
        Reach::Line,
    )? {
        Sniffed::Layout(layout) => Ok(layout),
        Sniffed::DocumentLinesIf(_) => unreachable!("bug: a line read whole is decided"),
    }
}

/// What [`sniff_ahead`] decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sniffed {
    Layout(Layout),
    /// The first line is longer than [`LINE_BYTES_HELD`] and, if it is what it starts
    /// as, one document per line ([`Layout::DocumentLines`]), as the first pass of its
    /// reading as one finds; else [`sniff`] decides, reading it whole.
    DocumentLinesIf(Unread),
}

/// What a long first line [`sniff_ahead`] did not read through must be for the file
/// to be one document per line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unread {
    /// Valid JSON: with the options given, a document whatever it holds. It is an
    /// array whose first element is no JSON-RPC message, or any array when `--select`
    /// or a format other than MCP's is given (only MCP's reading takes a batch for a
    /// message), or an object when `--select` is given.
    Valid,
    /// Valid JSON that holds a transcript (of `--format`'s format, when given), no
    /// member of which may make it an element ([`ELEMENT_KEYS`]): it is an object whose
    /// first member's name is none of them, and `--select` was not given.
    Object,
}

/// The names without which an object is no element of any format: [`signal`] says
/// nothing of an object that has none of them (Native's `kind`; the envelopes', Gemini's
/// and Responses' `type`; MCP's `jsonrpc`, `message` and `payload`; OTLP's levels and
/// spans; ATIF's `step_id`; a chat message's `role`), and [`element_like`] then says no.
pub(super) const ELEMENT_KEYS: &[&str] = &[
    "kind",
    "type",
    "role",
    "jsonrpc",
    "message",
    "payload",
    "resourceSpans",
    "scopeSpans",
    "instrumentationLibrarySpans",
    "traceId",
    "step_id",
];

/// Whether an object with members of these names only is no element of any format.
pub(super) fn names_no_element<'a>(mut names: impl Iterator<Item = &'a str>) -> bool {
    names.all(|name| !ELEMENT_KEYS.contains(&name))
}

/// [`sniff`], but a long first line (a minified document) is not read through when its
/// start already says what it is if it is what it starts as ([`unread_start`]): an
/// array whose first element is no JSON-RPC message (read that far), or any array
/// when the options give no batch a meaning, is a document if it is valid JSON, as is
/// any array or object with `--select`; an object whose first member's name is none
/// of [`ELEMENT_KEYS`] (read that far) is a document if it is valid JSON, holds a
/// transcript (of `--format`'s format, when given) and has none of those names at all.
/// A document's first pass finds all of that as it reads the line, which is then not
/// parsed twice.
pub(super) fn sniff_ahead(
    source: Source<'_>,
    options: &InputOptions,
    max_line_bytes: usize,
) -> io::Result<Sniffed> {
    sniff_holding(
        source,
        options,
        max_line_bytes,
        LINE_BYTES_HELD,
        Reach::Start,
    )
}

/// How much of a long first line detection reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    Line,
    /// As far as an array's first element or an object's first member name, if that
    /// decides the layout of a line that is what it starts as.
    Start,
}

/// [`sniff`] or [`sniff_ahead`] as `reach` says, holding lines of at most `held` bytes
/// in memory.
fn sniff_holding(
    source: Source<'_>,
    options: &InputOptions,
    max_line_bytes: usize,
    held: usize,
    reach: Reach,
) -> io::Result<Sniffed> {
    if options.format == Some(Format::Native) {
        return Ok(Sniffed::Layout(Layout::NativeLines));
    }
    let explicit = options.format.is_some() || options.select.is_some();
    let held = max_line_bytes.min(held);
    let mut reader = LineReader::with_max_line_bytes(source.reader()?, held);
    let mut peeked = Vec::new();
    while peeked.len() < 2 {
        // A first line that does not close, at the start of a value that goes on past
        // it: a document spread over lines, whatever the second line holds (it may be
        // a whole run of it, which is then not parsed here).
        if let [Peeked::Broken { open: true }] = peeked.as_slice()
            && one_document(source)?
        {
            return Ok(Sniffed::Layout(Layout::Document));
        }
        let Some(line) = reader.next_line()? else {
            break;
        };
        peeked.push(match line.content {
            LineContent::Text(text) => {
                Peeked::parsed(sketch_str(text), text.trim_start().bytes().next())
            }
            LineContent::TooLong if line.len <= max_line_bytes as u64 => {
                // Whatever follows a first line that is valid JSON, it decides.
                if peeked.is_empty()
                    && reach == Reach::Start
                    && let Some(unread) = unread_start(source, options, line.offset, line.len)?
                {
                    return Ok(Sniffed::DocumentLinesIf(unread));
                }
                if let Some(batch) = long_array(source, line.offset, line.len)? {
                    Peeked::Array { batch }
                } else {
                    match long_line(source, line.offset, line.len)? {
                        // Blank lines do not count, however long.
                        LongLine::Blank => continue,
                        LongLine::NotUtf8 => Peeked::Unreadable,
                        LongLine::Parsed { result, first } => Peeked::parsed(result, first),
                    }
                }
            }
            _ => Peeked::Unreadable,
        });
    }
    let by_array = |batch: bool| match batch {
        // A JSON-RPC batch: the first of a log's messages.
        true if reads_batches(options) => Layout::ElementLines,
        _ => Layout::DocumentLines,
    };
    let by_value = |sketch: &Sketch| match &sketch.value {
        // `--select` applies to documents.
        _ if options.select.is_some() => Layout::DocumentLines,
        value @ Value::Object(_) => {
            if !explicit && matches!(signal(value), Signal::Strong(Format::Native)) {
                Layout::NativeLines
            } else if element_like(value, options.format) {
                Layout::ElementLines
            } else if explicit || sketch.found {
                Layout::DocumentLines
            } else {
                // Native event records may hold any fields.
                Layout::NativeLines
            }
        }
        Value::Array(items) => by_array(mcp::is_batch(items)),
        _ if explicit => Layout::DocumentLines,
        _ => Layout::NativeLines,
    };
    Ok(Sniffed::Layout(match peeked.as_slice() {
        [] if explicit => Layout::Document,
        [] => Layout::NativeLines,
        [Peeked::Json(sketch), ..] => by_value(sketch),
        [Peeked::Array { batch }, ..] => by_array(*batch),
        // A first line that does not close: a document spread over lines, or a
        // truncated record followed by others.
        [Peeked::Broken { open: true }, ..] if one_document(source)? => Layout::Document,
        [Peeked::Broken { .. }, Peeked::Json(sketch)] => by_value(sketch),
        [Peeked::Broken { .. }, Peeked::Array { batch }] => by_array(*batch),
        // Neither of the first two lines is JSON on its own: a broken document, whose
        // error is best reported once, where it is.
        [Peeked::Broken { open: true }, Peeked::Broken { .. }] => Layout::Document,
        // One line only, broken: a document, reported once.
        [Peeked::Broken { .. }] => Layout::Document,
        // One line over the limit: a minified document, when it starts like one (it is
        // then read whole); else a native record, reported as too long.
        [Peeked::Unreadable] if explicit || starts_like_document(source)? => Layout::Document,
        _ if explicit => Layout::DocumentLines,
        _ => Layout::NativeLines,
    }))
}

/// Whether a first line that is a JSON-RPC batch is the first of a log's messages when
/// read as `options` say: without `--select`, and with no format or MCP's.
fn reads_batches(options: &InputOptions) -> bool {
    options.select.is_none() && options.format.is_none_or(|f| f == Format::Mcp)
}

/// What the long first line of `len` bytes at byte `offset` of `source` must be, from
/// its start, for the file to be one document per line, when its start can say
/// ([`Unread`]): with `--select`, an array or an object; without, an array whose first
/// element is no JSON-RPC message ([`opens_no_batch`]), or any array when a format
/// other than MCP's is given; an object whose first member's name is none of
/// [`ELEMENT_KEYS`].
fn unread_start(
    source: Source<'_>,
    options: &InputOptions,
    offset: u64,
    len: u64,
) -> io::Result<Option<Unread>> {
    Ok(match first_byte(source, offset, len)? {
        Some(b'[') if !reads_batches(options) || opens_no_batch(source, offset, len)? => {
            Some(Unread::Valid)
        }
        Some(b'{') if options.select.is_some() => Some(Unread::Valid),
        Some(b'{')
            if first_name(source, offset, len)?
                .is_some_and(|name| names_no_element(std::iter::once(name.as_str()))) =>
        {
            Some(Unread::Object)
        }
        _ => None,
    })
}

/// Whether the file's first bytes look like a document that holds transcripts: an
/// array, or an object with a transcript key near its start.
fn starts_like_document(source: Source<'_>) -> io::Result<bool> {
    let mut head = Vec::new();
    source.reader()?.take(4096).read_to_end(&mut head)?;
    let text = String::from_utf8_lossy(&head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    Ok(text.starts_with('[')
        || text.starts_with('{')
            && LIST_KEYS
                .iter()
                .any(|key| text.contains(&format!("\"{key}\""))))
}

/// How much of a file [`one_document`] reads.
const HEAD_BYTES: u64 = 64 * 1024;

/// Whether the file starts with one JSON value spread over several lines. Decided from
/// its first 64 KiB: a file that long whose head is valid JSON so far (it ends inside
/// the value) is taken for a document, which its reading then checks whole. Nothing is
/// kept, and a large document is not parsed here and again when it is read.
fn one_document(source: Source<'_>) -> io::Result<bool> {
    let mut head = Vec::new();
    source.reader()?.take(HEAD_BYTES).read_to_end(&mut head)?;
    let whole = (head.len() as u64) < HEAD_BYTES;
    let mut deserializer = serde_json::Deserializer::from_slice(&head);
    Ok(
        match serde::de::IgnoredAny::deserialize(&mut deserializer) {
            Ok(_) => true,
            Err(err) => !whole && err.is_eof(),
        },
    )
}
/// What one element says about its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Signal {
    Strong(Format),
    /// A chat message that any chat format could hold (`role` and text).
    Chat,
    None,
}

/// Responses item types other than `message`.
const RESPONSES_ITEMS: &[&str] = &[
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "mcp_call",
    "mcp_approval_request",
    "mcp_approval_response",
    "mcp_list_tools",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "local_shell_call_output",
    "item_reference",
];

/// Anthropic content block types that only Anthropic uses.
const ANTHROPIC_BLOCKS: &[&str] = &[
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "mcp_tool_use",
    "mcp_tool_result",
    "web_search_tool_result",
];

/// The members of an object whose values [`signal`] (with the envelope and message
/// tests it makes) and the collections of answered call ids ([`codex::answered`],
/// [`super::responses::answered`]) read; of the others they ask only whether they are
/// there. Keep it in step with them: a test reads every example both ways.
pub(super) const READ_MEMBERS: &[&str] = &[
    "kind",
    "type",
    "role",
    "content",
    "message",
    "payload",
    "resourceSpans",
    "call_id",
];

/// `text`, one valid JSON value without a key twice ([`super::unique`]), parsed only
/// as far as [`signal`] and the collections of answered call ids read it: an object
/// keeps every key, but only the values of [`READ_MEMBERS`] (the others are null);
/// anything else is parsed whole. `None` if it does not parse.
pub(super) fn shallow(text: &str) -> Option<Value> {
    if !text.trim_start().starts_with('{') {
        return serde_json::from_str(text).ok();
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = serde::Deserializer::deserialize_map(&mut deserializer, Shallow).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// [`shallow`] of a value already scanned with the members of its outer object noted
/// ([`Tape::scan`](super::unique::Tape::scan) at least one deep): the object is made
/// from the members the scan found, parsing only the values [`READ_MEMBERS`] names,
/// so its text is not read again. Anything but an object, or an object with an escape
/// in a key, is read by [`shallow`].
pub(super) fn shallow_scanned(node: Node<'_>) -> Option<Value> {
    let mut map = serde_json::Map::new();
    let mut valid = true;
    let read = node.text().starts_with('{')
        && node.members(|key, value| {
            let value = match READ_MEMBERS.contains(&key) {
                true => serde_json::from_str(value.text()).unwrap_or_else(|_| {
                    valid = false;
                    Value::Null
                }),
                false => Value::Null,
            };
            map.insert(key.to_string(), value);
        });
    match read {
        true => valid.then_some(Value::Object(map)),
        false => shallow(node.text()),
    }
}

/// Builds the object [`shallow`] reads.
struct Shallow;

impl<'de> serde::de::Visitor<'de> for Shallow {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = serde_json::Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let value = if READ_MEMBERS.contains(&key.as_str()) {
                access.next_value::<Value>()?
            } else {
                access.next_value::<serde::de::IgnoredAny>()?;
                Value::Null
            };
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

pub(super) fn signal(value: &Value) -> Signal {
    match value {
        Value::Object(map) => object_signal(map),
        Value::Array(items) if mcp::is_batch(items) => Signal::Strong(Format::Mcp),
        _ => Signal::None,
    }
}

/// [`signal`] of an object.
pub(super) fn object_signal(map: &Map) -> Signal {
    if matches!(str_of(map, "kind"), Some("call" | "result" | "message")) {
        return Signal::Strong(Format::Native);
    }
    // Envelope formats: an envelope's own fields say what it is, before anything in
    // the message it wraps.
    if claude_code::is_envelope(map) {
        return Signal::Strong(Format::ClaudeCode);
    }
    if codex::is_envelope(map) {
        return Signal::Strong(Format::Codex);
    }
    if gemini::is_message(map) {
        return Signal::Strong(Format::Gemini);
    }
    if mcp::is_message(map) {
        return Signal::Strong(Format::Mcp);
    }
    if otel::is_otlp(map) {
        return Signal::Strong(Format::Otel);
    }
    if map.contains_key("step_id") && map.contains_key("source") {
        return Signal::Strong(Format::Atif);
    }
    if let Some(ty) = str_of(map, "type") {
        if RESPONSES_ITEMS.contains(&ty) {
            return Signal::Strong(Format::Responses);
        }
    }
    if !matches!(map.get("role"), Some(Value::String(_))) {
        return Signal::None;
    }
    let role = str_of(map, "role").unwrap_or_default();
    if ["tool_calls", "function_call", "tool_call_id"]
        .iter()
        .any(|key| map.contains_key(*key))
        || matches!(role, "tool" | "function" | "developer")
    {
        return Signal::Strong(Format::OpenAi);
    }
    if let Some(Value::Array(parts)) = map.get("content")
        && let Some(format) = parts.iter().find_map(part_format)
    {
        return Signal::Strong(format);
    }
    Signal::Chat
}

/// The format a chat message's content part says the message is in, by its `type`:
/// Anthropic's blocks, or the Responses API's text parts.
pub(super) fn part_format(part: &Value) -> Option<Format> {
    let ty = part.get("type").and_then(Value::as_str)?;
    if ANTHROPIC_BLOCKS.contains(&ty) || ty.ends_with("_tool_result") {
        return Some(Format::Anthropic);
    }
    if matches!(ty, "input_text" | "output_text" | "refusal") {
        return Some(Format::Responses);
    }
    None
}

/// Whether `value` is one element of a transcript (of `format`, when given).
pub(super) fn element_like(value: &Value, format: Option<Format>) -> bool {
    match (signal(value), format) {
        (Signal::Strong(Format::Otel), _) => false,
        (Signal::Strong(found), None) => found != Format::Native,
        (Signal::Strong(found), Some(wanted)) => found == wanted,
        (Signal::Chat, None) => true,
        (Signal::Chat, Some(wanted)) => {
            matches!(
                wanted,
                Format::OpenAi | Format::Responses | Format::Anthropic
            )
        }
        (Signal::None, _) => false,
    }
}

/// The format of a list of transcript elements, or `None` when it is not one: at least
/// half of its elements must look like transcript elements (one, when the format is
/// given). The first element with a
/// format of its own decides; a list of plain chat messages is read as OpenAI's.
pub(super) fn list_format(items: &[&Value], format: Option<Format>) -> Option<Format> {
    let mut tally = ListTally::new(format);
    for item in items {
        tally.add(signal(item));
    }
    tally.format()
}

/// [`list_format`] of a list met one element at a time, from each element's
/// [`signal`].
#[derive(Debug, Clone)]
pub(super) struct ListTally {
    /// `--format`'s format, if given.
    format: Option<Format>,
    len: usize,
    /// Elements that look like transcript elements (of `format`, when given).
    like: usize,
    first_strong: Option<Format>,
}

impl ListTally {
    pub(super) fn new(format: Option<Format>) -> ListTally {
        ListTally {
            format,
            len: 0,
            like: 0,
            first_strong: None,
        }
    }

    pub(super) fn add(&mut self, signal: Signal) {
        self.len += 1;
        let format = self.format;
        match signal {
            Signal::Strong(found) => {
                if format.is_none_or(|wanted| wanted == found) {
                    self.like += 1;
                    self.first_strong.get_or_insert(found);
                }
            }
            Signal::Chat => {
                if format.is_none_or(|wanted| {
                    matches!(
                        wanted,
                        Format::OpenAi | Format::Responses | Format::Anthropic
                    )
                }) {
                    self.like += 1;
                }
            }
            Signal::None => {}
        }
    }

    /// `--format`'s format, if given.
    pub(super) fn wanted(&self) -> Option<Format> {
        self.format
    }

    /// The list's format, if it is a transcript.
    pub(super) fn format(&self) -> Option<Format> {
        // Given the format, one element of it is enough; else, most elements must be.
        if self.like == 0 || (self.format.is_none() && self.like * 2 < self.len) {
            return None;
        }
        Some(self.format.or(self.first_strong).unwrap_or(Format::OpenAi))
    }
}

/// A list tallied from each element's scan ([`shallow_scanned`]), as the transcript
/// search tallies it from their shallow readings (with `--format`'s format, when
/// given): whether it is a transcript, unless an element cannot be read that way (then
/// it does not tell).
pub(super) struct ScannedList {
    tally: ListTally,
    told: bool,
}

impl ScannedList {
    pub(super) fn new(format: Option<Format>) -> ScannedList {
        ScannedList {
            tally: ListTally::new(format),
            told: true,
        }
    }

    /// Tallies the next element, scanned at least one deep. Its shallow reading does
    /// not fail (the scan accepts exactly what serde_json parses, and each value that
    /// reading parses is part of the element); were it to, the list would not be told
    /// a transcript, which leaves it to the search's exact reading.
    pub(super) fn add(&mut self, element: Node<'_>) {
        match shallow_scanned(element) {
            Some(value) => self.tally.add(signal(&value)),
            None => {
                debug_assert!(false, "bug: a scanned element its shallow reading refuses");
                self.told = false;
            }
        }
    }

    /// Whether the list is told to be a transcript.
    pub(super) fn finds(&self) -> bool {
        self.told && self.tally.format().is_some()
    }
}

/// Whether no line of a file read as native records names a `kind` or a `tool`: the
/// bytes `"kind"` and `"tool"` appear nowhere in it. Most native files have one on their
/// first line, so the scan stops there; only files that will warn are read to the end.
/// A word that appears as a value, or in a nested object, counts as present: the scan
/// errs towards no warning.
pub(super) fn names_no_kind_or_tool(source: Source<'_>) -> io::Result<bool> {
    const KEYS: [&[u8]; 2] = [b"\"kind\"", b"\"tool\""];
    let mut reader = source.reader()?;
    let mut window: Vec<u8> = Vec::with_capacity(1 << 16);
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            return Ok(true);
        }
        window.extend_from_slice(chunk);
        let read = chunk.len();
        reader.consume(read);
        if KEYS
            .iter()
            .any(|key| window.windows(key.len()).any(|w| w == *key))
        {
            return Ok(false);
        }
        // Keep the tail, in case a key straddles two reads.
        let keep = window.len().min(5);
        window.drain(..window.len() - keep);
    }
}

/// The formats a native record looks like it came from, by the fields it has: for
/// the warning on a file whose records specs will likely not match.
pub(super) fn resembles(value: &Value) -> Vec<Format> {
    let Value::Object(map) = value else {
        return Vec::new();
    };
    let has = |key: &str| map.contains_key(key);
    let mut formats = Vec::new();
    if has("message") || has("sessionId") || has("uuid") {
        formats.push(Format::ClaudeCode);
    }
    if has("payload") {
        formats.push(Format::Codex);
    }
    if has("role") || has("tool_calls") || has("function_call") {
        formats.push(Format::OpenAi);
    }
    if has("type") && (has("call_id") || has("arguments") || has("output")) {
        formats.push(Format::Responses);
    }
    if has("content") && !has("role") {
        formats.push(Format::Anthropic);
    }
    if has("method") || has("params") || has("result") || has("error") {
        formats.push(Format::Mcp);
    }
    if has("spanId") || has("span_id") || has("traceId") || has("trace_id") {
        formats.push(Format::Otel);
    }
    if has("step_id") || has("source") {
        formats.push(Format::Atif);
    }
    if has("toolCalls") {
        formats.push(Format::Gemini);
    }
    formats
}

/// The first line of a file that is a JSON value, and where it is, if any of the first
/// few is: the value as far as [`resembles`] reads it (an object's names, with null
/// values; null for anything else). A line longer than [`LINE_BYTES_HELD`] is parsed
/// as it is read, not held.
pub(super) fn first_value(
    source: Source<'_>,
    max_line_bytes: usize,
) -> io::Result<Option<(Value, Location)>> {
    first_value_holding(source, max_line_bytes, LINE_BYTES_HELD)
}

/// [`first_value`], holding lines of at most `held` bytes in memory.
fn first_value_holding(
    source: Source<'_>,
    max_line_bytes: usize,
    held: usize,
) -> io::Result<Option<(Value, Location)>> {
    let held = max_line_bytes.min(held);
    let mut reader = LineReader::with_max_line_bytes(source.reader()?, held);
    let mut lines = 0;
    while lines < 8 {
        let Some(line) = reader.next_line()? else {
            break;
        };
        let loc = line.location();
        let value = match line.content {
            LineContent::Text(text) => keys_str(text).ok(),
            LineContent::TooLong if line.len <= max_line_bytes as u64 => {
                match long_line_keys(source, line.offset, line.len)? {
                    // Blank lines do not count, however long.
                    LongLine::Blank => continue,
                    LongLine::NotUtf8 => None,
                    LongLine::Parsed { result, .. } => result.ok(),
                }
            }
            _ => None,
        };
        if let Some(value) = value {
            return Ok(Some((value, loc)));
        }
        lines += 1;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::super::sketch::corpus::{all_values, examples};
    use super::*;
    use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

    #[test]
    fn a_shallow_reading_says_what_a_whole_one_does_of_every_example() {
        let docs = examples();
        let mut values = Vec::new();
        docs.iter().for_each(|doc| all_values(doc, &mut values));
        let mut strong = 0;
        for value in &values {
            let text = serde_json::to_string(value).expect("a value prints");
            let have = shallow(&text).expect("valid JSON reads shallow");
            let mut tape = super::super::unique::Tape::default();
            let node = tape.scan(&text, 1).expect("valid JSON scans");
            assert_eq!(shallow_scanned(node).as_ref(), Some(&have), "{text}");
            assert_eq!(signal(&have), signal(value), "{text}");
            let once = |v| std::iter::once(v);
            assert_eq!(
                codex::answered(once(&have)),
                codex::answered(once(*value)),
                "{text}"
            );
            assert_eq!(
                super::super::responses::answered(once(&have)),
                super::super::responses::answered(once(*value)),
                "{text}"
            );
            strong += usize::from(matches!(signal(value), Signal::Strong(_)));
        }
        // Hundreds of elements of a format are among them.
        assert!(
            strong > 500,
            "{strong} elements of a format among {}",
            values.len()
        );
    }

    /// The layout as detection decided it from whole `serde_json::Value`s of the first
    /// lines, the reference [`sniff`] is held to.
    fn sniff_whole(
        source: Source<'_>,
        options: &InputOptions,
        max_line_bytes: usize,
    ) -> io::Result<Layout> {
        use super::super::search::has_transcripts;
        enum Whole {
            Json(Value),
            Broken { open: bool },
            Unreadable,
        }
        if options.format == Some(Format::Native) {
            return Ok(Layout::NativeLines);
        }
        let mut reader = LineReader::with_max_line_bytes(source.reader()?, max_line_bytes);
        let mut peeked = Vec::new();
        while peeked.len() < 2 {
            let Some(line) = reader.next_line()? else {
                break;
            };
            peeked.push(match line.content {
                LineContent::Text(text) => match serde_json::from_str::<Value>(text) {
                    Ok(value) => Whole::Json(value),
                    Err(err) => Whole::Broken {
                        open: err.is_eof()
                            && matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'[')),
                    },
                },
                _ => Whole::Unreadable,
            });
        }
        let explicit = options.format.is_some() || options.select.is_some();
        let by_value = |value: &Value| match value {
            _ if options.select.is_some() => Layout::DocumentLines,
            Value::Object(_) => {
                if !explicit && matches!(signal(value), Signal::Strong(Format::Native)) {
                    Layout::NativeLines
                } else if element_like(value, options.format) {
                    Layout::ElementLines
                } else if explicit || has_transcripts(value) {
                    Layout::DocumentLines
                } else {
                    Layout::NativeLines
                }
            }
            Value::Array(items)
                if mcp::is_batch(items) && options.format.is_none_or(|f| f == Format::Mcp) =>
            {
                Layout::ElementLines
            }
            Value::Array(_) => Layout::DocumentLines,
            _ if explicit => Layout::DocumentLines,
            _ => Layout::NativeLines,
        };
        Ok(match peeked.as_slice() {
            [] if explicit => Layout::Document,
            [] => Layout::NativeLines,
            [Whole::Json(value), ..] => by_value(value),
            [Whole::Broken { open: true }, ..] if one_document(source)? => Layout::Document,
            [Whole::Broken { .. }, Whole::Json(value)] => by_value(value),
            [Whole::Broken { open: true }, Whole::Broken { .. }] => Layout::Document,
            [Whole::Broken { .. }] => Layout::Document,
            [Whole::Unreadable] if explicit || starts_like_document(source)? => Layout::Document,
            _ if explicit => Layout::DocumentLines,
            _ => Layout::NativeLines,
        })
    }

    /// Every way of reading options detection distinguishes.
    fn all_options() -> Vec<InputOptions> {
        let mut all = vec![
            InputOptions::default(),
            InputOptions {
                format: None,
                select: Some(super::super::Selector::parse("messages").unwrap()),
            },
        ];
        all.extend(Format::ALL.into_iter().map(|format| InputOptions {
            format: Some(format),
            select: None,
        }));
        all
    }

    /// Asserts that [`sniff`], holding lines of any length or streaming them,
    /// decides as [`sniff_whole`] does for `bytes`, and [`sniff_ahead`] (holding a
    /// byte, so that every line is long) too, or else says what that decides of a
    /// valid first line; returns the layout, and whether `sniff_ahead` left it to the
    /// line's reading.
    fn sniffs_alike(bytes: &[u8], options: &InputOptions, max: usize) -> (Layout, bool) {
        let source = Source::Bytes(bytes);
        let want = sniff_whole(source, options, max).unwrap();
        let shown = || String::from_utf8_lossy(&bytes[..bytes.len().min(2000)]).into_owned();
        for held in [LINE_BYTES_HELD, 64, 1] {
            let have = sniff_holding(source, options, max, held, Reach::Line).unwrap();
            assert_eq!(
                have,
                Sniffed::Layout(want),
                "held {held}, max {max}, {options:?}: {}",
                shown()
            );
        }
        let ahead = match sniff_holding(source, options, max, 1, Reach::Start).unwrap() {
            Sniffed::Layout(have) => {
                assert_eq!(have, want, "ahead: {}", shown());
                false
            }
            Sniffed::DocumentLinesIf(unread) => {
                // What the first pass checks of the line before it stands.
                let holds = |value: &Value| match (unread, value) {
                    (Unread::Valid, Value::Array(_) | Value::Object(_)) => true,
                    (Unread::Object, Value::Object(map)) => {
                        names_no_element(map.keys().map(String::as_str))
                            && super::super::search::finds(value, options.format, 0)
                    }
                    _ => false,
                };
                assert!(
                    want == Layout::DocumentLines
                        || first_line_json(bytes, max).is_none_or(|v| !holds(&v)),
                    "ahead, {unread:?}, {want:?}, {options:?}: {}",
                    shown()
                );
                true
            }
        };
        (want, ahead)
    }

    /// The first line of `bytes` that is not blank, when it is valid JSON within `max`
    /// bytes.
    fn first_line_json(bytes: &[u8], max: usize) -> Option<Value> {
        let mut reader = LineReader::with_max_line_bytes(bytes, max);
        match reader.next_line().unwrap().map(|line| line.content) {
            Some(LineContent::Text(text)) => serde_json::from_str::<Value>(text).ok(),
            _ => None,
        }
    }

    /// Texts of `value` laid out as files are, whole and broken.
    fn files_of(
        value: &Value,
        next: &Value,
        c: &mut super::super::sketch::corpus::Choices,
    ) -> Vec<Vec<u8>> {
        let line = serde_json::to_string(value).unwrap();
        let next = serde_json::to_string(next).unwrap();
        let pretty = serde_json::to_string_pretty(value).unwrap();
        let cut = |text: &str, c: &mut super::super::sketch::corpus::Choices| {
            let mut at = c.below(text.len() as u64 + 1) as usize;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text[..at].to_string()
        };
        let mut files = vec![
            format!("{line}\n"),
            format!("{line}"),
            format!("{line}\n{next}\n"),
            format!("\u{feff}{line}\r\n{next}\r\n"),
            format!("  \n\t\r\n{}\n\n{next}", " ".repeat(100)),
            format!("{}\n{line}\n", " \t".repeat(80)),
            format!("{pretty}\n"),
            format!("{}\n{next}\n", cut(&line, c)),
            format!("{}\n", cut(&line, c)),
            format!("{}\n{}\n", cut(&pretty, c), cut(&next, c)),
            format!("  {}", cut(&line, c)),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect::<Vec<_>>();
        // Not UTF-8, on the first line or the second.
        let mut bad = format!("{line}\n{next}\n").into_bytes();
        let at = c.below(bad.len() as u64) as usize;
        bad.insert(at, 0xff);
        files.push(bad);
        // A character cut short at the end of a line.
        files.push(
            [
                &line.as_bytes()[..line.len() - 1],
                b"\xc3\n",
                next.as_bytes(),
            ]
            .concat(),
        );
        files
    }

    #[test]
    fn a_long_line_is_decided_as_a_held_one_of_every_example_and_made_up_value() {
        use super::super::sketch::corpus::{Choices, made_up};
        let docs = examples();
        let mut values = docs.clone();
        values.extend(made_up(400, &docs));
        let options = all_options();
        let mut c = Choices(7);
        let mut layouts = std::collections::BTreeMap::new();
        let mut ahead = 0;
        for (i, value) in values.iter().enumerate() {
            let next = &values[(i * 7 + 3) % values.len()];
            for bytes in files_of(value, next, &mut c) {
                for options in &options {
                    for max in [DEFAULT_MAX_LINE_BYTES, 300] {
                        let (layout, left) = sniffs_alike(&bytes, options, max);
                        *layouts.entry(format!("{layout:?}")).or_insert(0) += 1;
                        ahead += usize::from(left);
                    }
                }
            }
        }
        // Every layout is decided many times, and many from a first element alone.
        assert_eq!(layouts.len(), 4, "{layouts:?}");
        assert!(layouts.values().all(|&n| n > 500), "{layouts:?}");
        assert!(ahead > 500, "{ahead}");
    }

    #[test]
    fn an_object_without_an_element_name_says_nothing_of_its_format() {
        use super::super::sketch::corpus::made_up;
        fn objects<'v>(value: &'v Value, into: &mut Vec<&'v Map>) {
            match value {
                Value::Object(map) => {
                    into.push(map);
                    map.values().for_each(|v| objects(v, into));
                }
                Value::Array(items) => items.iter().for_each(|v| objects(v, into)),
                _ => {}
            }
        }
        let docs = examples();
        let mut values = docs.clone();
        values.extend(made_up(400, &docs));
        // Envelopes of JSON-RPC messages, and batches, under each name.
        let rpc = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"});
        for name in ["message", "payload"] {
            values.push(serde_json::json!({"session_id": "s", name: rpc}));
            values.push(serde_json::json!({"session_id": "s", name: [rpc, rpc]}));
        }
        let mut all = Vec::new();
        values.iter().for_each(|value| objects(value, &mut all));
        let (mut without, mut elements) = (0, 0);
        for map in all {
            if names_no_element(map.keys().map(String::as_str)) {
                without += 1;
                assert_eq!(object_signal(map), Signal::None, "{map:?}");
            } else if object_signal(map) != Signal::None {
                elements += 1;
            }
        }
        // Both kinds were met, many times.
        assert!(without > 1000 && elements > 1000, "{without} {elements}");
    }

    #[test]
    fn the_example_files_are_decided_alike_from_a_file() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let (files, _) = crate::files::collect(
            &[root.join("traces"), root.join("tests/fixtures")],
            crate::files::is_trace_file,
        );
        let options = all_options();
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            for options in &options {
                let (want, _) = sniffs_alike(&bytes, options, DEFAULT_MAX_LINE_BYTES);
                let have = sniff_holding(
                    Source::File(path),
                    options,
                    DEFAULT_MAX_LINE_BYTES,
                    1,
                    Reach::Line,
                );
                assert_eq!(have.unwrap(), Sniffed::Layout(want), "{}", path.display());
            }
        }
    }

    /// The first value as it was read before: each line parsed whole.
    fn first_value_whole(source: Source<'_>, max_line_bytes: usize) -> Option<(Value, Location)> {
        let mut reader = LineReader::with_max_line_bytes(source.reader().unwrap(), max_line_bytes);
        for _ in 0..8 {
            let line = reader.next_line().unwrap()?;
            let loc = line.location();
            if let LineContent::Text(text) = line.content
                && let Ok(value) = serde_json::from_str::<Value>(text)
            {
                return Some((value, loc));
            }
        }
        None
    }

    #[test]
    fn the_first_value_of_a_long_line_resembles_what_the_whole_one_does() {
        use super::super::sketch::corpus::{Choices, made_up};
        let docs = examples();
        let mut values = docs.clone();
        values.extend(made_up(300, &docs));
        let mut c = Choices(11);
        let mut found = 0;
        for (i, value) in values.iter().enumerate() {
            let next = &values[(i * 5 + 1) % values.len()];
            let mut files = files_of(value, next, &mut c);
            // Lines that are no JSON value before the first that is.
            files.push(
                format!("x\n{{\n\n\n]\n{}\n", serde_json::to_string(value).unwrap()).into_bytes(),
            );
            for bytes in files {
                let source = Source::Bytes(&bytes);
                for max in [DEFAULT_MAX_LINE_BYTES, 300] {
                    let want =
                        first_value_whole(source, max).map(|(value, loc)| (resembles(&value), loc));
                    for held in [LINE_BYTES_HELD, 64, 1] {
                        let have = first_value_holding(source, max, held)
                            .unwrap()
                            .map(|(value, loc)| (resembles(&value), loc));
                        assert_eq!(
                            have,
                            want,
                            "held {held}, max {max}: {}",
                            String::from_utf8_lossy(&bytes)
                        );
                    }
                    found += usize::from(want.is_some_and(|(formats, _)| !formats.is_empty()));
                }
            }
        }
        assert!(found > 1000, "{found} values resemble a format");
    }
}
