//! JSON-RPC 2.0 / MCP logs: one message per line (or per array element), bare or in
//! an envelope `{"session_id", "direction", "timestamp", "message": {…}}`.
//!
//! - A request is a call. For `tools/call` the tool is `params.name` and the args
//!   `params.arguments`; any other method is a call of a tool named by the method, with
//!   `params` as args. Ids are unique per session and direction only, so requests and
//!   replies are joined by id within their session (a trace of its own when the log
//!   names sessions), a reply going the other way from its request when the log says
//!   which way each message went.
//! - A reply is classified by key presence, never truthiness (DESIGN.md §2): it is
//!   `ok` iff `result` is present, whatever its value (`null` included), and `error`
//!   is absent. It is `invalid` when both or neither are present, when `jsonrpc` is not
//!   `"2.0"`, when its id matches no open request (it is then attributed to the one
//!   open request, if there is exactly one), or when its error object's `code` is not
//!   an integer (`true` and `1.0` are not) or its `message` is not a string. A JSON-RPC
//!   `error` (a protocol error) is `status: "error"` with the error object as `error`.
//! - A `tools/call` result with `isError: true` is a tool error. A tool result's
//!   `output` is its `structuredContent` when it has one, else its `content` (text
//!   decoded when it is JSON of an object or array); `result` keeps the reply's
//!   `result` exactly as it came. Other methods' `output` is the `result` itself.
//! - Notifications are records without a `kind`, with their `method` and `params`.
//!   `notifications/cancelled` also gives the cancelled request its `missing` result
//!   there (the protocol says its reply will be ignored); a reply that still arrives
//!   is kept as a record without a `kind` (`ignored: true`).
//! - A request never answered gets its `missing` result from the checker, at the end
//!   of its trace.
//!
//! A log streamed line by line is read from each line's text where it can be
//! ([`Reader::line`]): one scan checks that the line is what its document would parse
//! and notes where the members of its outer objects are (a [`Tape`] kept from line to
//! line), so nothing is scanned twice; and the two messages nearly every log is made
//! of, a `tools/call` request and a reply with a `result` to an open request, become
//! records built as JSON text ([`Built`]), their values copied raw from the line, with
//! no `serde_json::Value` of the message (plain string ids, tool names, sessions and
//! times are read without the parser too).
//! Any other message is read from a value, and any other line from its document,
//! which says what is wrong with it. A first pass over a log, which needs only the
//! session of each line's records, reads the common line only as far as that
//! ([`Reader::line_session`]), after the same scan.

use std::borrow::Cow;
use std::sync::{Arc, LazyLock};

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::document::parse_unique;
use super::shared::{Map, describe, fields, id_text, put, put_content, str_of};
use super::unique::{Node, Tape};
use super::{Element, Out, Site};
use crate::trace::json_index::value_end;
use crate::trace::record::{Built, Known, RawJson, raw_string};
use crate::trace::{Kind, Location, Pointer, Status};

/// Whether `map` is a JSON-RPC message or an envelope holding one (or a batch).
pub fn is_message(map: &Map) -> bool {
    map.contains_key("jsonrpc")
        || ["message", "payload"]
            .iter()
            .any(|key| match map.get(*key) {
                Some(Value::Object(inner)) => inner.contains_key("jsonrpc"),
                Some(Value::Array(items)) => is_batch(items),
                _ => false,
            })
}

/// Whether `items` is a JSON-RPC batch: messages sent together in one array.
pub fn is_batch(items: &[Value]) -> bool {
    !items.is_empty()
        && items
            .iter()
            .all(|item| item.as_object().is_some_and(|m| m.contains_key("jsonrpc")))
}

/// Why an empty batch is not a message.
const EMPTY_BATCH: &str = "an empty batch `[]` is an invalid request in JSON-RPC 2.0, not a reply";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Direction {
    /// From the side that wrote the log (or client to server).
    Out,
    In,
}

impl Direction {
    fn parse(text: &str) -> Option<Direction> {
        const OUT: [&str; 10] = [
            "send",
            "sent",
            "out",
            "outgoing",
            "outbound",
            "tx",
            "request",
            "client_to_server",
            "client->server",
            "c2s",
        ];
        const IN: [&str; 11] = [
            "recv",
            "receive",
            "received",
            "in",
            "incoming",
            "inbound",
            "rx",
            "response",
            "server_to_client",
            "server->client",
            "s2c",
        ];
        // Compared without regard to ASCII case, with no lowercase copy made.
        let named = |names: &[&str]| names.iter().any(|name| name.eq_ignore_ascii_case(text));
        if named(&OUT) {
            Some(Direction::Out)
        } else if named(&IN) {
            Some(Direction::In)
        } else {
            None
        }
    }
}

struct Request {
    id: Value,
    direction: Option<Direction>,
    tool: String,
    /// A `tools/call` request's is the name itself, copied from no line.
    method: Cow<'static, str>,
    call_id: String,
    site: Site,
}

#[derive(Default)]
struct Session {
    open: Vec<Request>,
    cancelled: Vec<Request>,
}

/// Where a message sits and what its envelope says.
struct Context {
    site: Site,
    session: Option<String>,
    direction: Option<Direction>,
    time: Option<Value>,
}

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    let mut reader = Reader::default();
    for element in elements {
        reader.element(element, out);
    }
}

/// The pointers of an envelope's message, shared by every line's records.
static MESSAGE: LazyLock<Pointer> = LazyLock::new(|| Pointer::from("/message"));
static PAYLOAD: LazyLock<Pointer> = LazyLock::new(|| Pointer::from("/payload"));

/// Reads a log one message (or line) at a time, holding only the requests still open.
#[derive(Default)]
pub(super) struct Reader {
    sessions: FxHashMap<Option<String>, Session>,
    /// Where the last line read from its text had its members, kept for the next
    /// line's scan.
    tape: Tape,
}

impl Reader {
    /// Forgets session `session`, whose last line has been read: its requests still
    /// open stay unanswered, as at the end of the log (the checker gives them their
    /// `missing` results at the end of the trace).
    pub(super) fn end(&mut self, session: &Option<String>) {
        self.sessions.remove(session);
    }

    /// Reads one element of the log.
    pub(super) fn element(&mut self, element: &Element<'_>, out: &mut Out) {
        // A request's site is kept until its reply: pinned, in case the element's
        // document is streamed and gone by then.
        let site = out.pin(&element.site);
        let sessions = &mut self.sessions;
        match element.value {
            Value::Array(_) => handle(element.value, plain(site), sessions, out),
            Value::Object(map) if !map.contains_key("jsonrpc") => {
                let inner = ["message", "payload"].into_iter().find(|key| {
                    map.get(*key)
                        .is_some_and(|inner| inner.is_object() || inner.is_array())
                });
                let Some(key) = inner else {
                    return handle(element.value, plain(site), sessions, out);
                };
                let session = ["session_id", "sessionId", "session"]
                    .iter()
                    .find_map(|k| map.get(*k).and_then(id_text));
                let direction = ["direction", "dir"]
                    .iter()
                    .find_map(|k| str_of(map, k).and_then(Direction::parse));
                let time = ["timestamp", "time", "ts"]
                    .iter()
                    .find_map(|k| map.get(*k).filter(|t| !t.is_null()).cloned());
                let context = Context {
                    site: out.pin(&site.child(key)),
                    session,
                    direction,
                    time,
                };
                handle(&map[key], context, sessions, out);
            }
            _ => handle(element.value, plain(site), sessions, out),
        }
    }

    /// Reads `message`, the element at `site` of a line that is a batch, as reading the
    /// line whole reads each message of it ([`Reader::element`]): alone, with no
    /// session, direction or time. A large batch is read this way a message at a time.
    pub(super) fn batch_message(&mut self, message: &Value, site: Site, out: &mut Out) {
        handle(message, plain(site), &mut self.sessions, out);
    }

    /// [`Reader::batch_message`] of the message whose text is `text`, at `site` (pinned
    /// to where it is), read from its text as [`Reader::line`] reads a bare message:
    /// `false`, having read nothing, unless it is one of the two messages nearly every
    /// log is made of ([`fast_message`]).
    pub(super) fn batch_text(&mut self, text: &str, site: Site, out: &mut Out) -> bool {
        let Some(message) = self.tape.scan(text, NOTED) else {
            return false;
        };
        if !message.text().starts_with('{') {
            return false;
        }
        let mut context = plain(site);
        fast_message(message, &mut context, None, &mut self.sessions, out)
    }
}

impl Reader {
    /// Reads one line of a log, `text` at `loc` and document `doc`, without building
    /// a value of the whole line or locating anything by scanning it again: the common
    /// case of a valid line holding one message, bare or in an envelope, that names its
    /// tool properly. Returns `false`, having read nothing, for any other line, which
    /// [`Reader::element`] reads from the line's document (and reports what is wrong).
    pub(super) fn line(&mut self, text: &str, doc: usize, loc: &Location, out: &mut Out) -> bool {
        // One pass says the line is what its document would parse (valid JSON, no key
        // twice anywhere, within serde_json's limits), or the document says what is
        // wrong, and notes where the members of its outer objects are: nothing is
        // scanned twice.
        let Some(root) = self.tape.scan(text, NOTED) else {
            return false;
        };
        let mut envelope = Envelope::default();
        if !root.members(|name, value| envelope.set(name, value)) {
            return false;
        }
        let at = |pointer: &Pointer, start: usize, len: usize| Site {
            doc,
            pointer: pointer.clone(),
            pinned: Some(Arc::new(Location {
                line: loc.line,
                offset: loc.offset + start as u64,
                len: len as u64,
                pointer: pointer.clone(),
            })),
        };
        // The envelope's time, when it is a string without escapes: copied as it is
        // (it is what the decoded string prints), with no value made.
        let mut plain_time = None;
        let (message, mut context) = if envelope.jsonrpc {
            (root, plain(at(&Pointer::default(), 0, text.len())))
        } else {
            // As [`Reader::element`] reads an envelope: its first `message` or
            // `payload` that is an object (a batch, or no message, is read there).
            let inner = [("message", envelope.message), ("payload", envelope.payload)]
                .into_iter()
                .find_map(|(key, node)| {
                    let node = node?;
                    matches!(node.text().as_bytes().first(), Some(b'{' | b'['))
                        .then_some((key, node))
                });
            let Some((key, message)) = inner.filter(|(_, node)| node.text().starts_with('{'))
            else {
                return false;
            };
            let value = |node: Option<Node<'_>>| -> Option<Value> {
                serde_json::from_str(node?.text()).ok()
            };
            // Strings, the usual session and direction, are decoded without a `Value`.
            fn string(node: Option<Node<'_>>) -> Option<Cow<'_, str>> {
                let raw = node?.text();
                raw.starts_with('"')
                    .then(|| raw_string(RawJson::new(raw)))
                    .flatten()
            }
            let session = [envelope.session_id, envelope.session_id2, envelope.session]
                .into_iter()
                .find_map(|node| match string(node) {
                    Some(session) => Some(session.into_owned()),
                    None => value(node).as_ref().and_then(id_text),
                });
            let direction = [envelope.direction, envelope.dir]
                .into_iter()
                .find_map(|node| string(node).as_deref().and_then(Direction::parse));
            let time = [envelope.timestamp, envelope.time, envelope.ts]
                .into_iter()
                .flatten()
                .find(|node| node.text() != "null");
            plain_time = time
                .map(|node| node.text())
                .filter(|raw| raw.starts_with('"') && !raw.contains('\\'));
            let time = match plain_time {
                Some(_) => None,
                None => value(time),
            };
            let pointer = if key == "message" {
                &*MESSAGE
            } else {
                &*PAYLOAD
            };
            let site = at(pointer, message.offset(), message.text().len());
            (
                message,
                Context {
                    site,
                    session,
                    direction,
                    time,
                },
            )
        };
        if fast_message(message, &mut context, plain_time, &mut self.sessions, out) {
            return true;
        }
        if let Some(time) = plain_time {
            context.time = serde_json::from_str(time).ok();
        }
        let Some(Value::Object(message)) = parse_unique(message.text()) else {
            return false;
        };
        // Problems are located inside the message, which only its document can do.
        if located_problem(&message) {
            return false;
        }
        object(Cow::Owned(message), context, &mut self.sessions, out);
        true
    }
}

impl Reader {
    /// What a first pass over a log needs of one line, `text`, read more cheaply than
    /// [`Reader::line`] reads it: the session its records are of, for the common line
    /// (valid, holding one message, bare or in an envelope, that names its session,
    /// if any, by a string), with no record built and nothing kept. Any other line,
    /// or one this is unsure of, is [`LineSession::Unknown`]: reading it says.
    ///
    /// A line's records depend on nothing read before it: every message that is an
    /// object gives a record of the line's session (a request, a notification, any
    /// reply, answered or not), unless its `method` is not a string or it is a
    /// `tools/call` without its tool's name as a string, which are problems.
    pub(super) fn line_session<'t>(&'t mut self, text: &'t str) -> LineSession<'t> {
        // Only the message's members, and its `params`' for a `tools/call`, are read.
        let Some(root) = self.tape.scan(text, SURVEYED) else {
            return LineSession::Unknown;
        };
        let mut envelope = Envelope::default();
        if !root.members(|name, value| envelope.set(name, value)) {
            return LineSession::Unknown;
        }
        let (message, session) = if envelope.jsonrpc {
            (root, None)
        } else {
            // As [`Reader::line`] finds the message: an object, not a batch.
            let inner = [envelope.message, envelope.payload]
                .into_iter()
                .flatten()
                .find(|node| matches!(node.text().as_bytes().first(), Some(b'{' | b'[')));
            let Some(message) = inner.filter(|node| node.text().starts_with('{')) else {
                return LineSession::Unknown;
            };
            // The first of the session's members there names it when it is a string;
            // any other (a number names it too, `null` does not) is left to the reading.
            let named = [envelope.session_id, envelope.session_id2, envelope.session]
                .into_iter()
                .flatten()
                .next()
                .map(|node| node.text());
            let session = match named {
                None => None,
                Some(raw) if raw.starts_with('"') => match raw_string(RawJson::new(raw)) {
                    Some(name) => Some(name),
                    None => return LineSession::Unknown,
                },
                Some(_) => return LineSession::Unknown,
            };
            (message, session)
        };
        let (mut method, mut params) = (None, None);
        if !message.members(|name, value| match name {
            "method" => method = Some(value.text()),
            "params" => params = Some(value),
            _ => {}
        }) {
            return LineSession::Unknown;
        }
        let records = match method {
            // A reply, whatever it holds.
            None => true,
            // A method with an escape is left to the reading.
            Some(method) if !method.starts_with('"') || method.contains('\\') => false,
            Some(r#""tools/call""#) => {
                let mut named = false;
                let read = params.is_some_and(|params| {
                    params.members(|key, value| {
                        if key == "name" {
                            named = value.text().starts_with('"');
                        }
                    })
                });
                read && named
            }
            Some(_) => true,
        };
        match records {
            true => LineSession::Records(session),
            false => LineSession::Unknown,
        }
    }

    /// Forgets every session: after a line a first pass read in full, as what comes
    /// after it never depends on it there ([`Reader::line_session`]).
    pub(super) fn forget(&mut self) {
        self.sessions.clear();
    }
}

/// The session an enveloped line's records would be of, read without checking that
/// the line is valid JSON: `Some(session)` for a line that looks like an envelope
/// (an object with no top-level `jsonrpc`, whose `message` or `payload` is an object)
/// naming its session, by the first of `session_id`, `sessionId` and `session` it has,
/// with a string without escapes (`None`: it has none of them); `None` for any other
/// line, or one whose top-level names have escapes.
///
/// On a valid line that gives records, this is the session [`Reader::line`] and
/// [`Reader::element`] give them. On any other line it may name a session that line
/// gives no record of: a first pass that already knows the session has records uses it
/// only to place the session's end, which a line too late only delays (the session's
/// trace is then freed later, and nothing else changes). It never panics.
///
/// A line that names its session by `session_id` before its message is read only to
/// the message when nothing after it could change what a valid line gives
/// ([`nothing_decides_after`]): the common line is not read through.
pub(super) fn quick_session(text: &str) -> Option<Option<&str>> {
    let bytes = text.as_bytes();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    at += 1;
    // `session_id`, `sessionId`, `session`: the first present names the session.
    let mut sessions: [Option<&str>; 3] = [None; 3];
    let mut message = false;
    loop {
        at = skip_ws(bytes, at);
        if bytes.get(at) != Some(&b'"') {
            return None;
        }
        let mut name_end = at + 1;
        loop {
            name_end = crate::json::plain_words(bytes, name_end, false);
            match *bytes.get(name_end)? {
                b'"' => break,
                b'\\' => return None, // a name with an escape
                _ => name_end += 1,
            }
        }
        let name = text.get(at + 1..name_end)?;
        at = skip_ws(bytes, name_end + 1);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_ws(bytes, at + 1);
        let start = at;
        if matches!(name, "message" | "payload")
            && sessions[0].is_some()
            && nothing_decides_after(&bytes[start..])
        {
            // Named by `session_id` already, with nothing after that could change it.
            message = true;
            break;
        }
        at = skip_value(bytes, at)?;
        let value = text.get(start..at)?;
        match name {
            "jsonrpc" => return None,
            "message" | "payload" => message |= value.starts_with('{'),
            "session_id" => sessions[0] = Some(value),
            "sessionId" => sessions[1] = Some(value),
            "session" => sessions[2] = Some(value),
            _ => {}
        }
        at = skip_ws(bytes, at);
        match bytes.get(at)? {
            b',' => at += 1,
            b'}' => break,
            _ => return None,
        }
    }
    if !message {
        return None;
    }
    match sessions.into_iter().flatten().next() {
        None => Some(None),
        Some(raw) => {
            let name = raw.strip_prefix('"')?.strip_suffix('"')?;
            (!name.contains('\\')).then_some(Some(name))
        }
    }
}

/// Whether nothing from a message's object on (`rest`, from its `{`) could make a valid
/// line that names its session by `session_id` before it give records of no session or
/// of another: `rest` has no backslash, and the bytes `"jsonrpc"` only as the message's
/// first member's name. Without escapes, a top-level `jsonrpc` after the message would
/// be those bytes again, and a second `session_id` a key twice (an invalid line). Found
/// without skipping the message, which the common line ends with.
fn nothing_decides_after(rest: &[u8]) -> bool {
    const JSONRPC: &[u8] = b"\"jsonrpc\"";
    // Made once: making a searcher costs more than searching a line.
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(JSONRPC));
    let Some(inside) = rest.strip_prefix(b"{") else {
        return false;
    };
    let inside = &inside[skip_ws(inside, 0)..];
    let Some(after) = inside.strip_prefix(JSONRPC) else {
        return false;
    };
    memchr::memchr(b'\\', after).is_none() && FINDER.find(after).is_none()
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The end of the JSON value that starts at `at`, found without checking it: the
/// closing quote of a string, the bracket that closes a container (strings inside
/// skipped), or the end of a scalar; the end of the text when it ends first (then no
/// member can follow, which is all [`quick_session`] asks of it).
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    match *bytes.get(at)? {
        b'"' | b'{' | b'[' => Some(value_end(bytes, at, bytes.len())),
        _ => {
            let rest = bytes.get(at..)?;
            let len = rest
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .unwrap_or(rest.len());
            Some(at + len)
        }
    }
}

#[cfg(test)]
impl Reader {
    /// Reads `doc`, document `index` of a log, from its value, as reading the log
    /// whole does: what tests hold the other ways of reading a line to.
    pub(super) fn read_doc(
        &mut self,
        doc: &std::rc::Rc<super::document::Doc>,
        index: usize,
    ) -> Out {
        let mut out = Out {
            items: Vec::new(),
            current: Some(super::document::Current {
                doc: index,
                read: doc.clone(),
            }),
        };
        if let Some(value) = doc.value.as_ref().filter(|_| !doc.hides("")) {
            let site = Site::new(index, String::new());
            self.element(&Element { value, site }, &mut out);
        }
        out
    }
}

/// What [`Reader::line_session`] found of a line.
pub(super) enum LineSession<'t> {
    /// The line gives at least one record, and all of them are of this session
    /// (`None`: of no session).
    Records(Option<Cow<'t, str>>),
    /// Only reading the line says what it gives.
    Unknown,
}

/// How deep the containers of a line are whose members [`Reader::line_session`] reads:
/// an envelope, its message and the message's `params`.
const SURVEYED: usize = 3;

/// How deep the containers of a line are whose members [`Reader::line`] reads from its
/// scan: an envelope, its message, the message's `params` or `result`, the result's
/// `content`, and its parts.
const NOTED: usize = 5;

/// The members of a line's object that [`Reader::line`] reads: an envelope's, or
/// (`jsonrpc`) a bare message's.
#[derive(Default)]
struct Envelope<'t> {
    jsonrpc: bool,
    message: Option<Node<'t>>,
    payload: Option<Node<'t>>,
    session_id: Option<Node<'t>>,
    /// `sessionId`.
    session_id2: Option<Node<'t>>,
    session: Option<Node<'t>>,
    direction: Option<Node<'t>>,
    dir: Option<Node<'t>>,
    timestamp: Option<Node<'t>>,
    time: Option<Node<'t>>,
    ts: Option<Node<'t>>,
}

impl<'t> Envelope<'t> {
    fn set(&mut self, name: &str, value: Node<'t>) {
        let slot = match name {
            "jsonrpc" => {
                self.jsonrpc = true;
                return;
            }
            "message" => &mut self.message,
            "payload" => &mut self.payload,
            "session_id" => &mut self.session_id,
            "sessionId" => &mut self.session_id2,
            "session" => &mut self.session,
            "direction" => &mut self.direction,
            "dir" => &mut self.dir,
            "timestamp" => &mut self.timestamp,
            "time" => &mut self.time,
            "ts" => &mut self.ts,
            _ => return,
        };
        *slot = Some(value);
    }
}

/// The parts of a JSON-RPC message [`fast_message`] reads.
#[derive(Default)]
struct Parts<'t> {
    jsonrpc: Option<Node<'t>>,
    id: Option<Node<'t>>,
    method: Option<Node<'t>>,
    params: Option<Node<'t>>,
    result: Option<Node<'t>>,
    error: Option<Node<'t>>,
}

/// A request's id and its text (the `call_id`), as `id_text` gives it, when the id is
/// a string or an integer.
fn id_of(raw: &str) -> Option<(Value, Cow<'_, str>)> {
    // The usual ids, a short natural number or a string without escapes, are read
    // without the parser: their values and texts are what it would give, the text
    // borrowed (a reply's is not kept).
    let bytes = raw.as_bytes();
    if (1..=18).contains(&bytes.len()) && bytes.iter().all(u8::is_ascii_digit) {
        let n: u64 = raw.parse().ok()?;
        return Some((Value::from(n), Cow::Borrowed(raw)));
    }
    if let Some(text) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        if !text.contains('\\') {
            return Some((Value::String(text.to_string()), Cow::Borrowed(text)));
        }
    }
    let id: Value = serde_json::from_str(raw).ok()?;
    let text = id_text(&id)?;
    Some((id, Cow::Owned(text)))
}

/// Reads the two messages nearly every log is made of from their scanned text (valid
/// JSON without a key twice), building their records as JSON text ([`Built`]) with
/// the values copied raw from the line, as [`object`] reads them from a value: a
/// `tools/call` request with a string or integer id, and a reply of `"jsonrpc": "2.0"`
/// with a `result` (for a `tools/call`, an object with `structuredContent` and no
/// `isError` other than a boolean) and no `error`, to an open request. The record's
/// `time` is `plain_time` as written, else the context's. Returns `false`, having
/// read and changed nothing, for any other message, which the caller reads as a value.
fn fast_message(
    message: Node<'_>,
    context: &mut Context,
    plain_time: Option<&str>,
    sessions: &mut FxHashMap<Option<String>, Session>,
    out: &mut Out,
) -> bool {
    let mut parts = Parts::default();
    let known = message.members(|name, value| {
        let slot = match name {
            "jsonrpc" => &mut parts.jsonrpc,
            "id" => &mut parts.id,
            "method" => &mut parts.method,
            "params" => &mut parts.params,
            "result" => &mut parts.result,
            "error" => &mut parts.error,
            _ => return,
        };
        *slot = Some(value);
    });
    if !known {
        return false;
    }
    let Some((id, call_id)) = parts.id.and_then(|raw| id_of(raw.text())) else {
        return false;
    };
    // A reply's record holds its `result` twice (as itself and as the output in it).
    let mut record = Built::with_capacity(2 * message.text().len() + 64);
    // The record's canonical fields, as values: it is made without reading them again.
    let known;
    match parts.method.map(|method| method.text()) {
        Some(method) => {
            if method != r#""tools/call""# {
                return false;
            }
            let (mut name, mut arguments) = (None, None);
            let params = parts.params.is_some_and(|params| {
                params.members(|key, value| match key {
                    "name" => name = Some(value.text()),
                    "arguments" => arguments = Some(value.text()),
                    _ => {}
                })
            });
            let Some(tool) = name
                .filter(|name| params && name.starts_with('"'))
                .and_then(|name| raw_string(RawJson::new(name)))
            else {
                return false;
            };
            record.raw("kind", r#""call""#);
            record.string("tool", &tool);
            record.string("call_id", &call_id);
            if let Some(args) = arguments {
                record.raw("args", args);
            }
            record.raw("method", method);
            let (tool, call_id) = (tool.into_owned(), call_id.into_owned());
            known = Known {
                kind: Kind::Call,
                status: None,
                tool: tool.clone(),
                call_id: call_id.clone(),
            };
            session_of(sessions, &context.session).open.push(Request {
                id,
                direction: context.direction,
                tool,
                method: Cow::Borrowed("tools/call"),
                call_id,
                site: context.site.clone(),
            });
        }
        None => {
            if parts.jsonrpc.map(|v| v.text()) != Some(r#""2.0""#) || parts.error.is_some() {
                return false;
            }
            let Some(result) = parts.result else {
                return false;
            };
            let Some(session) = sessions.get_mut(&context.session) else {
                return false;
            };
            let answers = |r: &Request| {
                r.id == id
                    && (r.direction.is_none()
                        || context.direction.is_none()
                        || r.direction != context.direction)
            };
            let Some(index) = session.open.iter().position(answers) else {
                return false;
            };
            record.raw("kind", r#""result""#);
            let status = if session.open[index].method == "tools/call" {
                match tool_result(result, &mut record) {
                    Some(status) => status,
                    None => return false,
                }
            } else {
                record.raw("status", r#""ok""#);
                record.raw("output", result.text());
                Status::Ok
            };
            let request = session.open.remove(index);
            record.string("tool", &request.tool);
            record.string("call_id", &request.call_id);
            record.string("method", &request.method);
            known = Known {
                kind: Kind::Result,
                status: Some(status),
                tool: request.tool,
                call_id: request.call_id,
            };
        }
    }
    match (plain_time, &context.time) {
        (Some(time), _) => record.raw("time", time),
        (None, Some(time)) => record.value("time", time),
        (None, None) => {}
    }
    // The record is the line's last use of its site and its session's name.
    let site = std::mem::take(&mut context.site);
    out.built_in(context.session.take(), site, record, known);
    true
}

/// The status, output (or error) and `result` of a `tools/call` reply's `result`, as
/// [`reply`] and [`tool_output`] give them, when it is an object with
/// `structuredContent` and an `isError` that is a boolean or absent, with the status;
/// `None`, having set nothing, otherwise.
fn tool_result(result: Node<'_>, record: &mut Built) -> Option<Status> {
    let (mut is_error, mut structured, mut content) = (None, None, None);
    let object = result.members(|key, value| match key {
        "isError" => is_error = Some(value.text()),
        "structuredContent" => structured = Some(value.text()),
        "content" => content = Some(value),
        _ => {}
    });
    let failed = match is_error {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => return None,
    };
    let structured = structured.filter(|_| object)?;
    let key = if failed { "error" } else { "output" };
    // The parts' texts, one per line: the usual single part is not copied.
    let mut text: Option<Cow<'_, str>> = None;
    if let Some(content) = content.filter(|c| c.text().starts_with('[')) {
        let mut known = true;
        let scanned = content.elements(|part| match part_text(part) {
            Ok(Some(part)) => match &mut text {
                None => text = Some(part),
                Some(text) => {
                    let text = text.to_mut();
                    text.push('\n');
                    text.push_str(&part);
                }
            },
            Ok(None) => {}
            Err(Unknown) => known = false,
        });
        if !scanned || !known {
            return None;
        }
    }
    record.raw("status", if failed { r#""error""# } else { r#""ok""# });
    record.raw(key, structured);
    if let Some(text) = text.filter(|text| !text.is_empty()) {
        record.string(super::shared::text_key(key), &text);
    }
    record.raw("result", result.text());
    Some(if failed { Status::Error } else { Status::Ok })
}

/// A content part whose members were not noted, or whose names have escapes: only a
/// value of it says what its text is.
struct Unknown;

/// The text of one raw content part, as [`super::shared::parts_text`] reads a part: a
/// string, or an object of a text type (or none) with a string `text` or `content`.
fn part_text(part: Node<'_>) -> Result<Option<Cow<'_, str>>, Unknown> {
    let string = |raw| raw_string(RawJson::new(raw));
    let raw = part.text();
    if raw.starts_with('"') {
        return Ok(string(raw));
    }
    if !raw.starts_with('{') {
        return Ok(None);
    }
    let (mut ty, mut text, mut content) = (None, None, None);
    if !part.members(|key, value| match key {
        "type" => ty = Some(value.text()),
        "text" => text = Some(value.text()),
        "content" => content = Some(value.text()),
        _ => {}
    }) {
        return Err(Unknown);
    }
    let ty = ty.and_then(string);
    if !matches!(
        ty.as_deref(),
        Some("text" | "input_text" | "output_text") | None
    ) {
        return Ok(None);
    }
    Ok(text.and_then(string).or_else(|| content.and_then(string)))
}

/// Whether reading `message` gives a problem located inside it: a `method` that is not
/// a string, or a `tools/call` without its tool's name.
fn located_problem(message: &Map) -> bool {
    match message.get("method") {
        None => false,
        Some(Value::String(method)) if method == "tools/call" => !matches!(
            message.get("params").and_then(|p| p.get("name")),
            Some(Value::String(_))
        ),
        Some(Value::String(_)) => false,
        Some(_) => true,
    }
}

/// Takes member `key` out of `map`: moved when the map is owned, cloned when it is
/// borrowed from a document.
fn take(map: &mut Cow<'_, Map>, key: &str) -> Option<Value> {
    match map {
        Cow::Borrowed(map) => map.get(key).cloned(),
        Cow::Owned(map) => map.remove(key),
    }
}

fn plain(site: Site) -> Context {
    Context {
        site,
        session: None,
        direction: None,
        time: None,
    }
}

fn handle(
    message: &Value,
    context: Context,
    sessions: &mut FxHashMap<Option<String>, Session>,
    out: &mut Out,
) {
    match message {
        Value::Object(map) => object(Cow::Borrowed(map), context, sessions, out),
        // A batch: its messages are read one by one, in order, as if each had come
        // alone (JSON-RPC 2.0 §6), with the envelope's session, direction and time.
        Value::Array(batch) if !batch.is_empty() => {
            for (i, message) in batch.iter().enumerate() {
                let member = Context {
                    site: out.pin(&context.site.child(i)),
                    session: context.session.clone(),
                    direction: context.direction,
                    time: context.time.clone(),
                };
                handle(message, member, sessions, out);
            }
        }
        // Read as a malformed reply, so the request it stands in for is answered
        // `invalid` rather than left to look unanswered.
        Value::Array(_) => {
            let session = session_of(sessions, &context.session);
            let mut emit = emitter(&context, out);
            let mut empty = Cow::Owned(Map::new());
            reply(&mut empty, &context, session, &mut emit, Some(EMPTY_BATCH));
        }
        _ => out.problem(
            &context.site,
            format!(
                "JSON-RPC message is {}, expected an object",
                describe(message)
            ),
        ),
    }
}

/// The session `name`'s state, made on first use.
fn session_of<'s>(
    sessions: &'s mut FxHashMap<Option<String>, Session>,
    name: &Option<String>,
) -> &'s mut Session {
    // Looked up first, so the name is copied only for a new session.
    if !sessions.contains_key(name) {
        sessions.insert(name.clone(), Session::default());
    }
    sessions
        .get_mut(name)
        .expect("bug: the session was just made")
}

/// One message, an object.
fn object(
    mut map: Cow<'_, Map>,
    context: Context,
    sessions: &mut FxHashMap<Option<String>, Session>,
    out: &mut Out,
) {
    let method = match map.get("method") {
        None => None,
        Some(Value::String(method)) => Some(method.as_str()),
        Some(other) => {
            return out.problem(
                &context.site,
                format!("field `method` is {}, expected a string", describe(other)),
            );
        }
    };
    // A tool call must name its tool: `tools/call` is the method, not a tool.
    if method == Some("tools/call") {
        match map.get("params").and_then(|p| p.get("name")) {
            Some(Value::String(_)) => {}
            other => {
                let what = other.map_or("missing", describe);
                return out.problem(
                    &context.site.child("params"),
                    format!("`tools/call` field `params.name` is {what}, expected the tool's name as a string"),
                );
            }
        }
    }
    let method = method.map(str::to_string);
    let session = session_of(sessions, &context.session);
    let mut emit = emitter(&context, out);
    match (method, map.contains_key("id")) {
        (Some(method), true) => request(&mut map, &method, &context, session, &mut emit),
        (Some(method), false) => notification(&mut map, &method, &context, session, &mut emit),
        (None, _) => reply(&mut map, &context, session, &mut emit, None),
    }
}

/// Emits a record of the message's session, with its envelope's time.
fn emitter<'a>(context: &'a Context, out: &'a mut Out) -> impl FnMut(Map, &Site) + 'a {
    move |mut record: Map, site: &Site| {
        if let Some(time) = &context.time {
            record.insert("time".into(), time.clone());
        }
        out.record_in(context.session.clone(), site, record);
    }
}

fn request(
    map: &mut Cow<'_, Map>,
    method: &str,
    context: &Context,
    session: &mut Session,
    emit: &mut impl FnMut(Map, &Site),
) {
    let mut record = fields("call");
    let tool_name = (method == "tools/call")
        .then(|| {
            map.get("params")
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
        })
        .flatten()
        .map(str::to_string);
    let is_tool_call = tool_name.is_some();
    let tool = tool_name.unwrap_or_else(|| method.to_string());
    put(&mut record, "tool", tool.clone());
    let id = take(map, "id").expect("bug: a request has an id");
    let call_id = id_text(&id).unwrap_or_else(|| id.to_string());
    put(&mut record, "call_id", call_id.clone());
    let args = match is_tool_call {
        true => match map {
            Cow::Borrowed(map) => map.get("params").and_then(|p| p.get("arguments")).cloned(),
            Cow::Owned(map) => map
                .get_mut("params")
                .and_then(Value::as_object_mut)
                .and_then(|p| p.remove("arguments")),
        },
        false => take(map, "params"),
    };
    if let Some(args) = args {
        put(&mut record, "args", args);
    }
    put(&mut record, "method", method);
    emit(record, &context.site);
    session.open.push(Request {
        id,
        direction: context.direction,
        tool,
        method: Cow::Owned(method.to_string()),
        call_id,
        site: context.site.clone(),
    });
}

fn notification(
    map: &mut Cow<'_, Map>,
    method: &str,
    context: &Context,
    session: &mut Session,
    emit: &mut impl FnMut(Map, &Site),
) {
    let params = map.get("params");
    let mut record = Map::new();
    put(&mut record, "method", method);
    if let Some(params) = params {
        put(&mut record, "params", params.clone());
    }
    emit(record, &context.site);
    if method != "notifications/cancelled" {
        return;
    }
    let Some(id) = params.and_then(|p| p.get("requestId")) else {
        return;
    };
    // The canceller is the requester: the request went the same way.
    let found = session.open.iter().position(|r| {
        r.id == *id
            && (r.direction.is_none()
                || context.direction.is_none()
                || r.direction == context.direction)
    });
    let Some(index) = found else { return };
    let request = session.open.remove(index);
    let mut missing = fields("result");
    put(&mut missing, "tool", request.tool.clone());
    put(&mut missing, "call_id", request.call_id.clone());
    put(&mut missing, "status", "missing");
    put(&mut missing, "cancelled", true);
    if let Some(reason) = params.and_then(|p| p.get("reason")) {
        put(&mut missing, "reason", reason.clone());
    }
    put(&mut missing, "synthesized", "request cancelled");
    emit(missing, &request.site);
    session.cancelled.push(request);
}

/// A reply; `invalid` says why it is invalid whatever it holds.
fn reply(
    map: &mut Cow<'_, Map>,
    context: &Context,
    session: &mut Session,
    emit: &mut impl FnMut(Map, &Site),
    invalid: Option<&str>,
) {
    let id = map.get("id").cloned();
    let id = id.as_ref();
    let answers = |r: &Request| {
        id.is_some_and(|id| r.id == *id)
            && (r.direction.is_none()
                || context.direction.is_none()
                || r.direction != context.direction)
    };
    let mut record = fields("result");
    let mut reason: Option<String> = None;
    let request = match session.open.iter().position(answers) {
        Some(index) => Some(session.open.remove(index)),
        None => {
            if let Some(index) = session.cancelled.iter().position(answers) {
                // The protocol says to ignore it: a record, but no result.
                let request = session.cancelled.remove(index);
                let mut ignored = Map::new();
                put(&mut ignored, "tool", request.tool);
                put(&mut ignored, "call_id", request.call_id);
                put(&mut ignored, "ignored", true);
                put(
                    &mut ignored,
                    "reply",
                    Value::Object(std::mem::take(map).into_owned()),
                );
                return emit(ignored, &context.site);
            }
            reason = Some(match id {
                Some(id) => format!("reply id {id} matches no open request"),
                None => "reply has no `id`".to_string(),
            });
            // A reply with the wrong id most likely answers the one open request.
            let open: Vec<usize> = (0..session.open.len())
                .filter(|&i| {
                    let r = &session.open[i];
                    r.direction.is_none()
                        || context.direction.is_none()
                        || r.direction != context.direction
                })
                .collect();
            match open.as_slice() {
                [index] => {
                    if let Some(id) = id {
                        put(&mut record, "reply_id", id.clone());
                    }
                    Some(session.open.remove(*index))
                }
                _ => {
                    if let Some(id) = id.and_then(id_text) {
                        put(&mut record, "call_id", id);
                    }
                    None
                }
            }
        }
    };
    let is_tool_call = request.as_ref().is_some_and(|r| r.method == "tools/call");
    // The request is answered and dropped: its strings move into the reply's record.
    if let Some(request) = request {
        put(&mut record, "tool", request.tool);
        put(&mut record, "call_id", request.call_id);
        put(&mut record, "method", request.method.into_owned());
    }

    let reason = reply_problem(map, invalid, reason, is_tool_call);
    let result = take(map, "result");
    let error = take(map, "error");
    match reason {
        Some(reason) => {
            put(&mut record, "status", "invalid");
            put(&mut record, "invalid_reason", reason);
            if let Some(result) = result {
                put(&mut record, "output", result);
            }
            if let Some(error) = error {
                put(&mut record, "error", error);
            }
        }
        None => match (result, error) {
            (_, Some(error)) => {
                put(&mut record, "status", "error");
                put(&mut record, "error", error);
            }
            (Some(result), None) if is_tool_call => {
                let failed = result.get("isError") == Some(&Value::Bool(true));
                let key = if failed { "error" } else { "output" };
                put(&mut record, "status", if failed { "error" } else { "ok" });
                tool_output(&mut record, key, &result);
                put(&mut record, "result", result);
            }
            (Some(result), None) => {
                put(&mut record, "status", "ok");
                put(&mut record, "output", result);
            }
            (None, None) => unreachable!("a reply with neither is invalid"),
        },
    }
    emit(record, &context.site);
}

/// Why a reply is invalid, if it is: `invalid` and `reason` first, then what is wrong
/// with the reply itself.
fn reply_problem(
    map: &Map,
    invalid: Option<&str>,
    reason: Option<String>,
    is_tool_call: bool,
) -> Option<String> {
    let result = map.get("result");
    let error = map.get("error");
    invalid
        .map(str::to_string)
        .or(reason)
        .or_else(|| match map.get("jsonrpc") {
            Some(Value::String(v)) if v == "2.0" => None,
            Some(other) => Some(format!("`jsonrpc` is {other}, expected \"2.0\"")),
            None => Some("reply has no `jsonrpc`".to_string()),
        })
        .or_else(|| match (result, error) {
            (Some(_), Some(_)) => Some("reply has both `result` and `error`".to_string()),
            (None, None) => Some("reply has neither `result` nor `error`".to_string()),
            _ => None,
        })
        .or_else(|| error.and_then(error_problem))
        .or_else(|| {
            let flag = result?.get("isError")?;
            (is_tool_call && !flag.is_boolean())
                .then(|| format!("`isError` is {}, expected a boolean", describe(flag)))
        })
}

/// What is wrong with a JSON-RPC error object, if anything.
fn error_problem(error: &Value) -> Option<String> {
    let Value::Object(error) = error else {
        return Some(format!(
            "`error` is {}, expected an object",
            describe(error)
        ));
    };
    match error.get("code") {
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => {}
        Some(other) => {
            return Some(format!(
                "`error.code` is {} `{other}`, expected an integer",
                describe(other)
            ));
        }
        None => return Some("`error` has no `code`".to_string()),
    }
    match error.get("message") {
        Some(Value::String(_)) => None,
        Some(other) => Some(format!(
            "`error.message` is {}, expected a string",
            describe(other)
        )),
        None => Some("`error` has no `message`".to_string()),
    }
}

/// A `tools/call` result's value: `structuredContent`, else `content`, else the
/// result itself.
fn tool_output(record: &mut Map, key: &str, result: &Value) {
    let Value::Object(map) = result else {
        put(record, key, result.clone());
        return;
    };
    match (map.get("structuredContent"), map.get("content")) {
        (Some(structured), content) => {
            put(record, key, structured.clone());
            if let Some(Value::Array(parts)) = content {
                let (text, _) = super::shared::parts_text(parts);
                if !text.is_empty() {
                    put(record, &super::shared::text_key(key), text);
                }
            }
        }
        (None, Some(content)) => put_content(record, key, Some(content)),
        (None, None) => put(record, key, result.clone()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{Location, Out, Reader};
    use crate::trace::reader::LineContent;

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    #[track_caller]
    fn records(value: Value) -> Vec<Value> {
        read_ok(Format::Mcp, value)
    }

    fn call(id: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"name": "create_record", "arguments": {"request_id": "r1"}}})
    }

    #[track_caller]
    fn reply(reply: Value) -> Value {
        let have = records(json!([call(json!(1)), reply]));
        assert_eq!(have.len(), 2, "{have:#?}");
        assert_eq!(have[0]["tool"], "create_record");
        assert_eq!(have[0]["args"]["request_id"], "r1");
        have[1].clone()
    }

    #[test]
    fn success_is_key_presence_whatever_the_value() {
        for result in [
            json!(0),
            json!(false),
            json!(""),
            json!([]),
            json!({}),
            json!(null),
            json!("None"),
        ] {
            let have = reply(json!({"jsonrpc": "2.0", "id": 1, "result": result}));
            assert_eq!(have["status"], "ok", "{result}");
            assert_eq!(have["output"], result, "{result}");
            assert_eq!(have["result"], result, "{result}");
            assert_eq!(have["tool"], "create_record");
        }
        // An MCP tool result: its content is the output; the result stays whole.
        let result = json!({"content": [{"type": "text", "text": "{\"id\": \"rec_1\"}"}]});
        let have = reply(json!({"jsonrpc": "2.0", "id": 1, "result": result}));
        assert_eq!(have["output"]["id"], "rec_1");
        assert_eq!(have["result"], result);
        let have = reply(json!({"jsonrpc": "2.0", "id": 1,
            "result": {"content": [], "structuredContent": {"count": 0}}}));
        assert_eq!(have["output"], json!({"count": 0}));
    }

    #[test]
    fn errors_in_both_channels() {
        let have = reply(json!({"jsonrpc": "2.0", "id": 1,
            "result": {"isError": true, "content": [{"type": "text", "text": "{\"category\": \"outcome_unknown\"}"}]}}));
        assert_eq!(have["status"], "error");
        assert_eq!(have["error"]["category"], "outcome_unknown");
        let have = reply(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "timeout"}}),
        );
        assert_eq!(have["status"], "error");
        assert_eq!(have["error"]["code"], -32000);
        let have =
            reply(json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": false, "content": []}}));
        assert_eq!(have["status"], "ok");
        assert_eq!(have["output"], json!([]));
    }

    #[test]
    fn malformed_replies_are_invalid() {
        for (bad, why) in [
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": 1, "error": {"code": 1, "message": "m"}}),
                "both",
            ),
            (json!({"jsonrpc": "2.0", "id": 1}), "neither"),
            (json!({"jsonrpc": "1.0", "id": 1, "result": 1}), "`jsonrpc`"),
            (json!({"id": 1, "result": 1}), "no `jsonrpc`"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": true, "message": "m"}}),
                "`error.code`",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1.0, "message": "m"}}),
                "`error.code`",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": 5}}),
                "`error.message`",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "error": "boom"}),
                "`error` is a string",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {"isError": "true"}}),
                "`isError`",
            ),
            (
                json!({"jsonrpc": "2.0", "id": "1", "result": {}}),
                "matches no open request",
            ),
            (
                json!({"jsonrpc": "2.0", "id": 2, "result": {}}),
                "matches no open request",
            ),
        ] {
            let have = reply(bad.clone());
            assert_eq!(have["status"], "invalid", "{bad}");
            let reason = have["invalid_reason"].as_str().unwrap();
            assert!(reason.contains(why), "{bad}: {reason}");
            // Attributed to the one open request.
            assert_eq!(have["tool"], "create_record", "{bad}");
            // The returned value is never dropped.
            if let Some(result) = bad.get("result") {
                assert_eq!(&have["output"], result);
            }
        }
    }

    #[test]
    fn joins_by_id_within_sessions_and_methods_are_tools() {
        let have = records(json!([
            {"session_id": "s1", "direction": "send", "message": call(json!(1))},
            {"session_id": "s2", "direction": "send", "message": {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "file:///a"}}},
            {"session_id": "s2", "direction": "recv", "message": {"jsonrpc": "2.0", "id": 1, "result": {"contents": []}}},
            {"session_id": "s1", "direction": "recv", "message": {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}}
        ]));
        assert_eq!(have[1]["tool"], "resources/read");
        assert_eq!(have[1]["args"]["uri"], "file:///a");
        assert_eq!(have[2]["tool"], "resources/read");
        assert_eq!(have[2]["output"], json!({"contents": []}));
        assert_eq!(have[3]["tool"], "create_record");
        // Two sessions: two traces.
        assert_eq!(have[0]["trace"], "s1");
        assert_eq!(have[2]["trace"], "s2");
    }

    #[test]
    fn cancellation_is_visible_and_makes_the_result_missing() {
        let have = records(json!([
            call(json!(7)),
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "timeout"}},
            {"jsonrpc": "2.0", "id": 7, "result": {"content": []}}
        ]));
        assert_eq!(have.len(), 4);
        assert!(have[1].get("kind").is_none());
        assert_eq!(have[1]["method"], "notifications/cancelled");
        assert_eq!(have[2]["status"], "missing");
        assert_eq!(have[2]["call_id"], "7");
        assert_eq!(have[2]["cancelled"], true);
        assert!(have[3].get("kind").is_none());
        assert_eq!(have[3]["ignored"], true);
    }

    #[test]
    fn unanswered_requests_are_left_open_and_bad_messages_reported() {
        let (have, problems) = read_as(
            Format::Mcp,
            json!([call(json!(1)), 5, {"jsonrpc": "2.0", "method": 3}]),
        );
        assert_eq!(have.len(), 1);
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/1", "/2"]);
    }

    /// What reading `lines` gives, one line after another, as `(location, trace,
    /// record or problem)`: through [`Reader::line`] where it reads a line (with `fast`),
    /// else from the line's document, as the stream reads them.
    fn read_lines(lines: &[&str], fast: bool) -> (Vec<String>, usize) {
        use crate::trace::adapters::document::line_doc;
        use crate::trace::reader::LineReader;
        let text = lines.join("\n");
        let mut lines = LineReader::new(text.as_bytes());
        let mut reader = Reader::default();
        let mut have = Vec::new();
        let mut fast_lines = 0;
        let mut index = 0;
        while let Some(line) = lines.next_line().unwrap() {
            if let (true, LineContent::Text(text)) = (fast, line.content) {
                let mut out = Out::default();
                if reader.line(text, index, &line.location(), &mut out) {
                    fast_lines += 1;
                    index += 1;
                    for item in out.items {
                        let loc = item.site.pinned.as_deref().unwrap().clone();
                        have.push(format!("{loc:?} {:?} {:?}", item.trace, item.what));
                    }
                    continue;
                }
            }
            let mut problems = Vec::new();
            let Some(doc) = line_doc(line, 1 << 20, &mut problems) else {
                continue;
            };
            let doc = std::rc::Rc::new(doc);
            let out = reader.read_doc(&doc, index);
            for item in out.items {
                let loc = match &item.site.pinned {
                    Some(loc) => Location::clone(loc),
                    None => doc.location(&item.site.pointer),
                };
                have.push(format!("{loc:?} {:?} {:?}", item.trace, item.what));
            }
            index += 1;
        }
        (have, fast_lines)
    }

    #[test]
    fn lines_read_from_their_text_read_as_from_their_document() {
        let lines = [
            r#"{"session_id":"s1","direction":"send","timestamp":"t1","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"b":1,"a":[2]}}}}"#,
            r#"  { "sessionId" : 7 , "dir": "out", "ts": null, "time": 5, "payload" : {"jsonrpc":"2.0","id":"x","method":"resources/read","params":{"uri":"f"}} }  "#,
            r#"{"session_id":"s1","direction":"recv","timestamp":"t2","message":{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"done"}],"structuredContent":{"id":"r"},"isError":false}}}"#,
            r#"{"session":7,"direction":"in","message":{"jsonrpc":"2.0","id":"x","result":{"contents":[]}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get","arguments":{}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"late"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"get"}}"#,
            r#"{"jsonrpc":"2.0","id":9,"error":{"code":1.5,"message":"m"}}"#,
            r#"{"jsonrpc":"1.0","id":5,"result":{"isError":"yes"}}"#,
            // Read from their documents: a key twice (here, or nested in the envelope), a
            // batch, no tool name, a method that is not a string, invalid JSON, a scalar.
            r#"{"session_id":"s1","session_id":"s2","message":{"jsonrpc":"2.0","id":1,"result":1}}"#,
            r#"{"session_id":"s1","meta":{"a":1,"a":2},"message":{"jsonrpc":"2.0","id":1,"result":1}}"#,
            r#"{"session_id":"s1","message":{"jsonrpc":"2.0","id":1,"result":{"x":1,"x":2}}}"#,
            r#"{"session_id":"s1","message":[{"jsonrpc":"2.0","id":8,"method":"ping"}]}"#,
            r#"{"session_id":"s1","message":{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{}}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":8,"#,
            r#"5"#,
            r#"{"session_id":"s1","note":"no message"}"#,
        ];
        let (slow, _) = read_lines(&lines, false);
        let (fast, read_fast) = read_lines(&lines, true);
        assert_eq!(
            read_fast, 10,
            "the first ten lines are read from their text"
        );
        assert_eq!(fast, slow);
        assert!(slow.len() > 12, "{slow:#?}");
    }

    #[test]
    fn messages_built_from_their_text_read_as_from_their_document() {
        let lines = [
            // Requests: ids of both kinds, escapes, arguments of every kind or none.
            r#"{"jsonrpc":"2.0","id":"a\"1","method":"tools/call","params":{"name":"cr\u00e9er","arguments":{"x":[1,2.50,{"y":null}],"s":"a\nb"}}}"#,
            r#"{"session_id":"s1","direction":"send","timestamp":1700000000,"message":{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{"arguments":"text","name":"get"}}}"#,
            r#"{"session_id":"s1","direction":"send","message":{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get","arguments":null}}}"#,
            r#"{"session_id":"s1","direction":"send","message":{"id":9,"method":"tools/call","params":{"name":"get"}}}"#,
            r#"{"session_id":"s1","direction":"send","message":{"jsonrpc":"2.0","id":10,"method":"resources/read","params":{"uri":"f"}}}"#,
            // Replies: text parts of every shape beside the structured content, an
            // error flagged in the result, a reply to a request that is not a tool
            // call, and the ones read from a value (no structured content, an `isError`
            // that is not a boolean, an id no request has, an `error`).
            r#"{"jsonrpc":"2.0","id":"a\"1","result":{"content":[{"type":"text","text":"one\u0021"},"two",{"content":"three"},{"type":"image","text":"no"},{"type":"output_text","text":5},7],"structuredContent":{"id":"r1"},"isError":false}}"#,
            r#"{"session_id":"s1","direction":"recv","timestamp":"t","message":{"jsonrpc":"2.0","id":-7,"result":{"structuredContent":[],"isError":true,"content":[]}}}"#,
            r#"{"session_id":"s1","direction":"recv","message":{"jsonrpc":"2.0","id":10,"result":{"contents":[]}}}"#,
            r#"{"session_id":"s1","direction":"recv","message":{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"{\"id\": 1}"}]}}}"#,
            r#"{"session_id":"s1","direction":"recv","message":{"jsonrpc":"2.0","id":9,"result":{"structuredContent":{},"isError":"no"}}}"#,
            r#"{"session_id":"s1","direction":"recv","message":{"jsonrpc":"2.0","id":11,"result":{"structuredContent":{}}}}"#,
            r#"{"session_id":"s1","direction":"send","message":{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"get"}}}"#,
            r#"{"session_id":"s1","direction":"recv","message":{"jsonrpc":"2.0","id":12,"error":{"code":-1,"message":"m"}}}"#,
            // A name with an escape (read from a value), directions in capitals, times
            // that are not plain strings, an id too long for a short integer, and
            // content parts that are arrays or hold no text.
            r#"{"session_id":"s1","direction":"SEND","ts":1.50,"message":{"jsonrpc":"2.0","id":"plain","method":"tools/call","params":{"na\u006de":"get","arguments":{"k":"v"}}}}"#,
            r#"{"session_id":"s1","direction":"Recv","timestamp":"t\u0031","message":{"jsonrpc":"2.0","id":"plain","result":{"content":[{"type":"text","t\u0065xt":"esc"},{"type":"text","text":"plain"}],"structuredContent":{"ok":true}}}}"#,
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"method":"tools/call","params":{"name":"big"}}"#,
            r#"{"jsonrpc":"2.0","id":12345678901234567890,"result":{"structuredContent":1,"content":[[1],{"type":"text","text":{"x":1}},{"type":5,"content":"five"},""]}}"#,
            r#"{"session_id":"s2","direction":"send","time":"2025-01-01T00:00:00Z","message":{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"get","arguments":{"deep":[[[[[[1]]]]]]}}}}"#,
            r#"{"session_id":"s2","direction":"recv","time":"t\u00e9","message":{"jsonrpc":"2.0","id":0,"result":{"structuredContent":{"d":[[[[[[2]]]]]]},"content":[{"text":"a"},{"content":"b","text":7}]}}}"#,
        ];
        let (slow, _) = read_lines(&lines, false);
        let (fast, read_fast) = read_lines(&lines, true);
        assert_eq!(read_fast, lines.len(), "every line is read from its text");
        assert_eq!(fast, slow);
        assert_eq!(slow.len(), 19, "{slow:#?}");
    }

    #[test]
    fn batches_are_read_reply_by_reply_and_an_empty_one_is_invalid() {
        // Two requests in one batch, answered in another batch out of order, in an
        // envelope that names the session.
        let have = records(json!([
            {"session_id": "s1", "direction": "send", "message": [call(json!(1)), call(json!(2))]},
            {"session_id": "s1", "direction": "recv", "message": [
                {"jsonrpc": "2.0", "id": 2, "result": {"content": []}},
                {"jsonrpc": "2.0", "id": 1, "result": 0}
            ]}
        ]));
        assert_eq!(have.len(), 4, "{have:#?}");
        assert_eq!(have[2]["call_id"], "2");
        assert_eq!(have[2]["status"], "ok");
        assert_eq!(have[3]["call_id"], "1");
        assert_eq!(have[3]["output"], 0);
        let (have, problems) = read_as(Format::Mcp, json!([call(json!(1)), []]));
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(have.len(), 2);
        assert_eq!(have[1]["tool"], "create_record");
        assert_eq!(have[1]["status"], "invalid");
        assert!(
            have[1]["invalid_reason"]
                .as_str()
                .unwrap()
                .contains("empty batch")
        );
    }
}
