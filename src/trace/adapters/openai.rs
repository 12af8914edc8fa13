//! OpenAI Chat Completions message lists.
//!
//! - An assistant message's `tool_calls[]` are calls: `id`, `function.name`, and
//!   `function.arguments`, a JSON string that is parsed (one that does not parse stays
//!   a string, flagged by `args_error`). Its text (`content`, a string or a list of
//!   parts) is a message record; so is a `refusal`.
//! - A `role: "tool"` message is the result of the call its `tool_call_id` names. Its
//!   content is text: the format has no error field, so `status` is `"ok"` and the text
//!   is the output (JSON text of an object or array is decoded; `output_text` keeps the
//!   string).
//! - The legacy shape, `function_call` on the assistant message and `role: "function"`
//!   results with no ids, pairs by position: a result answers the oldest open call of
//!   its `name`. So do AgentDojo's runs (`tool_calls[].function` a name, `args` an
//!   object, `id: null`, and the call repeated in the tool message's `tool_call`); their
//!   tool messages carry an `error` field, `null` or the exception text, which is a
//!   structured error signal and sets `status: "error"`.
//! - User, system and developer messages are message records.
//!
//! The API requires every call to be answered before the next assistant message, so a
//! call that no result ever answers gets its `missing` result there.
//!
//! A list of plain messages (string or null content, calls with a `function` object
//! and string ids, nothing else; [`read_plain`]) found in a scanned run of a streamed
//! document is read from its text, its records built as JSON text with the values
//! copied raw, as its value would be read; anything else is read from its value.

use serde_json::Value;

use super::shared::{
    Map, Pairer, Target, describe, element_object, fields, id_text, message_record, message_text,
    put, put_args, put_content, read_messages, str_of,
};
use super::unique::{Node, Tape, decoded_string, valid_without_duplicates};
use super::{Element, Out, Site};
use crate::trace::json_index::child_pointer;
use crate::trace::record::Built;

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    read_messages(elements, out, WHY_MISSING, message);
}

/// Why a call gets a `missing` result at the next assistant message.
pub(super) const WHY_MISSING: &str = "no result before the next assistant message";

/// Reads one message into `pairer`.
pub(super) fn message(element: &Element<'_>, pairer: &mut Pairer) {
    let site = &element.site;
    let Some(map) = element_object(element, "message", pairer) else {
        return;
    };
    let role = match map.get("role") {
        Some(Value::String(role)) => role.as_str(),
        Some(other) => {
            return pairer.problem(
                site.clone(),
                format!("field `role` is {}, expected a string", describe(other)),
            );
        }
        None => return pairer.problem(site.clone(), "message has no `role`"),
    };
    match role {
        "tool" => tool_result(element, map, pairer),
        "function" => {
            let mut record = fields("result");
            let name = str_of(map, "name").map(str::to_string);
            if let Some(name) = &name {
                put(&mut record, "tool", name.clone());
            }
            put(&mut record, "status", "ok");
            put_content(&mut record, "output", map.get("content"));
            pairer.result(site.clone(), record, Target::Position(name));
        }
        _ => {
            if role == "assistant" {
                pairer.boundary();
            }
            text_message(element, map, role, pairer);
            if role == "assistant" {
                calls(element, map, pairer);
            }
        }
    }
}

fn text_message(element: &Element<'_>, map: &Map, role: &str, pairer: &mut Pairer) {
    let text = message_text(map.get("content")).filter(|t| !t.is_empty());
    let refusal = str_of(map, "refusal");
    let Some(mut record) = message_record(role, text, refusal) else {
        return;
    };
    if let Some(name) = str_of(map, "name") {
        put(&mut record, "name", name);
    }
    pairer.record(element.site.clone(), record);
}

fn calls(element: &Element<'_>, map: &Map, pairer: &mut Pairer) {
    let site = &element.site;
    match map.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, call) in calls.iter().enumerate() {
                tool_call(call, site.child("tool_calls").child(i), pairer);
            }
        }
        Some(other) => pairer.problem(
            site.child("tool_calls"),
            format!(
                "field `tool_calls` is {}, expected an array",
                describe(other)
            ),
        ),
    }
    match map.get("function_call") {
        None | Some(Value::Null) => {}
        Some(Value::Object(call)) => {
            let site = site.child("function_call");
            match str_of(call, "name") {
                Some(name) => {
                    let mut record = fields("call");
                    put(&mut record, "tool", name);
                    put_args(&mut record, call.get("arguments"));
                    pairer.call(site, record, None);
                }
                None => pairer.problem(site, "`function_call` has no `name`"),
            }
        }
        Some(other) => pairer.problem(
            site.child("function_call"),
            format!(
                "field `function_call` is {}, expected an object",
                describe(other)
            ),
        ),
    }
}

fn tool_call(call: &Value, site: super::Site, pairer: &mut Pairer) {
    let Value::Object(call) = call else {
        return pairer.problem(
            site,
            format!("tool call is {}, expected an object", describe(call)),
        );
    };
    let mut record = fields("call");
    match (call.get("function"), call.get("custom")) {
        // The API's shape: {"function": {"name", "arguments"}}.
        (Some(Value::Object(function)), _) => {
            let Some(name) = str_of(function, "name") else {
                return pairer.problem(site, "tool call has no `function.name`");
            };
            put(&mut record, "tool", name);
            put_args(&mut record, function.get("arguments"));
        }
        // AgentDojo's: {"function": NAME, "args": {...}}.
        (Some(Value::String(name)), _) => {
            put(&mut record, "tool", name.clone());
            put_args(&mut record, call.get("args"));
        }
        // A custom tool: free text input, kept as it is.
        (None, Some(Value::Object(custom))) => {
            let Some(name) = str_of(custom, "name") else {
                return pairer.problem(site, "custom tool call has no `custom.name`");
            };
            put(&mut record, "tool", name);
            if let Some(input) = custom.get("input") {
                put(&mut record, "args", input.clone());
            }
        }
        _ => return pairer.problem(site, "tool call has no `function`"),
    }
    let id = call.get("id").and_then(id_text);
    pairer.call(site, record, id);
}

fn tool_result(element: &Element<'_>, map: &Map, pairer: &mut Pairer) {
    let mut record = fields("result");
    // The tool's name, when the message names it (frameworks add `name`; AgentDojo
    // repeats the call).
    let name = str_of(map, "name")
        .or_else(|| {
            map.get("tool_call")
                .and_then(|call| call.get("function"))
                .and_then(Value::as_str)
        })
        .map(str::to_string);
    if let Some(name) = &name {
        put(&mut record, "tool", name.clone());
    }
    match map.get("error") {
        Some(error) if !error.is_null() => {
            put(&mut record, "status", "error");
            put_content(&mut record, "error", Some(error));
            if let Some(text) = message_text(map.get("content")).filter(|t| !t.is_empty()) {
                put(&mut record, "output_text", text);
            }
        }
        _ => {
            put(&mut record, "status", "ok");
            put_content(&mut record, "output", map.get("content"));
        }
    }
    let target = match map.get("tool_call_id").and_then(id_text) {
        Some(id) => Target::Id(id),
        None => Target::Position(name),
    };
    pairer.result(element.site.clone(), record, target);
}

/// Reads a message list from its scan (valid JSON without a key twice, its members
/// noted down to the members of each call's `function`), `messages` at `pointer`, when
/// every message is plain: an object of `role` (a string without escapes, not
/// `function`), `content` (absent, `null` or a string), `tool_calls` (each an object
/// whose `function` is an object with a string `name`, and `arguments` absent or JSON,
/// as it is or as a string; its `id` absent, `null` or a string), `tool_call_id`
/// (absent, `null` or a string), `name` and `refusal`, and nothing else. The search
/// finds such a list a transcript of OpenAI messages, and each message is read as
/// [`message`] reads its value, its records built as JSON text ([`Built`]) with the
/// values copied raw, at the sites `site_at` makes of a node and its pointer. Returns
/// `false`, having emitted nothing, for any other list, which is read from its value.
pub(super) fn read_plain<'t>(
    messages: Node<'t>,
    pointer: &str,
    mut site_at: impl FnMut(Node<'t>, String) -> Site,
    out: &mut Out,
) -> bool {
    let mut plain = Vec::new();
    let mut all = true;
    let listed = messages.elements(|node| match Plain::of(node) {
        Some(message) => plain.push(message),
        None => all = false,
    });
    if !listed || !all || plain.is_empty() {
        return false;
    }
    let mut pairer = Pairer::new(WHY_MISSING);
    for (i, message) in plain.iter().enumerate() {
        let pointer = child_pointer(pointer, i);
        if !plain_message(message, pointer, &mut site_at, &mut pairer) {
            return false;
        }
    }
    pairer.finish(out);
    true
}

/// How deep the containers of a message are whose members [`plain_alone`] notes when
/// it scans it alone: the message, its calls, a call, and its `function`.
pub(super) const MESSAGE_NOTED: usize = 4;

/// [`plain_message`] of the message `text`, scanned alone into `tape`, at `pointer`;
/// `false` when it is not plain (or not valid without a key twice). A large list's
/// messages are read so, one at a time, with sites that `site_at` makes of a node of
/// the message and its pointer.
pub(super) fn plain_alone(
    text: &str,
    tape: &mut Tape,
    pointer: String,
    site_at: &mut impl FnMut(Node<'_>, String) -> Site,
    pairer: &mut Pairer,
) -> bool {
    tape.scan(text, MESSAGE_NOTED)
        .and_then(Plain::of)
        .is_some_and(|message| plain_message(&message, pointer, site_at, pairer))
}

/// A plain message's members ([`read_plain`]), as raw JSON.
struct Plain<'t> {
    node: Node<'t>,
    role: &'t str,
    content: Option<&'t str>,
    tool_calls: Option<Node<'t>>,
    tool_call_id: Option<&'t str>,
    name: Option<&'t str>,
    refusal: Option<&'t str>,
}

impl<'t> Plain<'t> {
    /// The members of `node`, when it is an object of a plain message's members only,
    /// whose role is a string without escapes.
    fn of(node: Node<'t>) -> Option<Plain<'t>> {
        let (mut role, mut content, mut tool_calls) = (None, None, None);
        let (mut tool_call_id, mut name, mut refusal) = (None, None, None);
        let mut other = false;
        let read = node.members(|key, value| match key {
            "role" => role = Some(value.text()),
            "content" => content = Some(value.text()),
            "tool_calls" => tool_calls = Some(value),
            "tool_call_id" => tool_call_id = Some(value.text()),
            "name" => name = Some(value.text()),
            "refusal" => refusal = Some(value.text()),
            _ => other = true,
        });
        if !read || other {
            return None;
        }
        Some(Plain {
            node,
            role: plain_string(role?)?,
            content,
            tool_calls,
            tool_call_id,
            name,
            refusal,
        })
    }
}

/// The text of a raw JSON string that has no escapes.
fn plain_string(raw: &str) -> Option<&str> {
    let text = raw.strip_prefix('"')?.strip_suffix('"')?;
    (!text.contains('\\')).then_some(text)
}

/// Whether a raw JSON value is a string.
fn is_string(raw: &&str) -> bool {
    raw.starts_with('"')
}

/// The text of a raw JSON string, decoded.
fn decoded(raw: &str) -> Option<String> {
    decoded_string(raw).map(|text| text.into_owned())
}

/// JSON's white space, around a value.
const JSON_SPACE: &[char] = &[' ', '\t', '\n', '\r'];

/// [`message`] of a plain message at `pointer`; `false` when something in it is not
/// read here after all.
fn plain_message<'t>(
    message: &Plain<'t>,
    pointer: String,
    site_at: &mut impl FnMut(Node<'t>, String) -> Site,
    pairer: &mut Pairer,
) -> bool {
    match message.role {
        "function" => false,
        "tool" => plain_result(message, site_at(message.node, pointer), pairer),
        role => {
            let assistant = role == "assistant";
            if assistant {
                pairer.boundary();
            }
            let Some(record) = plain_text(message) else {
                return false;
            };
            if let Some(record) = record {
                pairer.record(site_at(message.node, pointer.clone()), record);
            }
            !assistant || plain_calls(message, &pointer, site_at, pairer)
        }
    }
}

/// The record [`text_message`] makes of a plain message, if any; `None` for content
/// that is a list of parts.
fn plain_text(message: &Plain<'_>) -> Option<Option<Built>> {
    let text = match message.content {
        Some(raw) if raw.starts_with('[') => return None,
        // A string is empty exactly when it is written `""`: an escape is a character.
        Some(raw) if is_string(&raw) && raw != r#""""# => Some(raw),
        _ => None,
    };
    let refusal = message.refusal.filter(is_string);
    if text.is_none() && refusal.is_none() {
        return Some(None);
    }
    let mut record = Built::with_capacity(text.map_or(0, str::len) + 64);
    record.raw("kind", r#""message""#);
    record.string("role", message.role);
    if let Some(text) = text {
        record.raw("text", text);
    }
    if let Some(refusal) = refusal {
        record.raw("refusal", refusal);
    }
    if let Some(name) = message.name.filter(is_string) {
        record.raw("name", name);
    }
    Some(Some(record))
}

/// [`calls`] of a plain assistant message at `pointer`.
fn plain_calls<'t>(
    message: &Plain<'t>,
    pointer: &str,
    site_at: &mut impl FnMut(Node<'t>, String) -> Site,
    pairer: &mut Pairer,
) -> bool {
    let Some(calls) = message.tool_calls else {
        return true;
    };
    if calls.text() == "null" {
        return true;
    }
    let pointer = child_pointer(pointer, "tool_calls");
    let mut read = true;
    let mut i = 0;
    let listed = calls.elements(|call| {
        read = read && plain_call(call, child_pointer(&pointer, i), site_at, pairer);
        i += 1;
    });
    listed && read
}

/// [`tool_call`] of a call at `pointer` whose `function` is an object.
fn plain_call<'t>(
    call: Node<'t>,
    pointer: String,
    site_at: &mut impl FnMut(Node<'t>, String) -> Site,
    pairer: &mut Pairer,
) -> bool {
    // Of a call's members, [`tool_call`] reads only these two once `function` is an
    // object.
    let (mut id, mut function) = (None, None);
    let read = call.members(|key, value| match key {
        "id" => id = Some(value.text()),
        "function" => function = Some(value),
        _ => {}
    });
    let Some(function) = function.filter(|f| read && f.text().starts_with('{')) else {
        return false;
    };
    let (mut name, mut arguments) = (None, None);
    let read = function.members(|key, value| match key {
        "name" => name = Some(value.text()),
        "arguments" => arguments = Some(value.text()),
        _ => {}
    });
    let Some(name) = name.filter(|name| read && is_string(name)) else {
        return false;
    };
    let id = match id {
        None | Some("null") => None,
        Some(raw) if is_string(&raw) => match decoded(raw) {
            Some(id) => Some(id),
            None => return false,
        },
        Some(_) => return false,
    };
    let mut record = Built::with_capacity(arguments.map_or(0, str::len) + 64);
    record.raw("kind", r#""call""#);
    record.raw("tool", name);
    match arguments {
        None => {}
        // JSON text in a string is the arguments; text that is not JSON, or has a key
        // twice, is read from the value, which says so or keeps the last.
        Some(raw) if is_string(&raw) => match decoded_string(raw) {
            Some(text) if valid_without_duplicates(text.as_bytes()) => {
                record.raw("args", text.trim_matches(JSON_SPACE));
            }
            _ => return false,
        },
        Some(raw) => record.raw("args", raw),
    }
    pairer.call(site_at(call, pointer), record, id);
    true
}

/// [`tool_result`] of a plain tool message, at `site`.
fn plain_result(message: &Plain<'_>, site: Site, pairer: &mut Pairer) -> bool {
    let name = message.name.filter(is_string);
    let target = match message.tool_call_id {
        None | Some("null") => match name.map(decoded) {
            Some(None) => return false,
            name => Target::Position(name.flatten()),
        },
        Some(raw) if is_string(&raw) => match decoded(raw) {
            Some(id) => Target::Id(id),
            None => return false,
        },
        Some(_) => return false,
    };
    let mut record = Built::with_capacity(2 * message.content.map_or(0, str::len) + 64);
    record.raw("kind", r#""result""#);
    if let Some(name) = name {
        record.raw("tool", name);
    }
    record.raw("status", r#""ok""#);
    match message.content {
        None => {}
        // As [`put_content`] stores text: JSON text of an object or array is the
        // output, decoded; any other text stays text.
        Some(raw) if is_string(&raw) => {
            let Some(text) = decoded_string(raw) else {
                return false;
            };
            let container = text.trim_start().starts_with(['{', '[']);
            if container && valid_without_duplicates(text.as_bytes()) {
                record.raw("output", text.trim_matches(JSON_SPACE));
            } else if container && serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() {
                // JSON with a key twice (or beyond the limits): read from the value.
                return false;
            } else {
                record.raw("output", raw);
            }
            record.raw("output_text", raw);
        }
        // A list of parts, but for an empty one, which is kept as it is.
        Some(raw)
            if raw.starts_with('[')
                && !raw[1..raw.len() - 1].trim_matches(JSON_SPACE).is_empty() =>
        {
            return false;
        }
        Some(raw) => record.raw("output", raw),
    }
    pairer.result(site, record, target);
    true
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    #[track_caller]
    fn records(value: Value) -> Vec<Value> {
        read_ok(Format::OpenAi, value)
    }

    fn records_of(value: Value) -> (Vec<Value>, Vec<(String, String)>) {
        read_as(Format::OpenAi, value)
    }

    #[test]
    fn pairs_parallel_calls_by_id_out_of_order() {
        let have = records(json!([
            {"role": "user", "content": "two lookups"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "get", "arguments": "{\"k\": 1}"}},
                {"id": "b", "type": "function", "function": {"name": "put", "arguments": "{\"k\": 2}"}}
            ]},
            {"role": "tool", "tool_call_id": "b", "content": "done"},
            {"role": "tool", "tool_call_id": "a", "content": "{\"v\": 1}"}
        ]));
        assert_eq!(have.len(), 5);
        assert_eq!(have[1]["args"], json!({"k": 1}));
        assert_eq!(have[3]["tool"], "put");
        assert_eq!(have[3]["call_id"], "b");
        assert_eq!(have[3]["output"], "done");
        assert_eq!(have[4]["tool"], "get");
        assert_eq!(have[4]["output"], json!({"v": 1}));
        assert_eq!(have[4]["output_text"], "{\"v\": 1}");
    }

    #[test]
    fn falsy_outputs_stay_successes() {
        for content in [
            json!(""),
            json!("0"),
            json!("false"),
            json!("[]"),
            json!("{}"),
            json!("null"),
            json!("None"),
            json!([]),
        ] {
            let have = records(json!([
                {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "t", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "a", "content": content}
            ]));
            assert_eq!(have[1]["status"], "ok", "{content}");
            let want = match content.as_str() {
                Some("[]") => json!([]),
                Some("{}") => json!({}),
                _ => content.clone(),
            };
            assert_eq!(have[1]["output"], want, "{content}");
        }
    }

    #[test]
    fn unparsable_arguments_are_kept_and_flagged() {
        let have = records(json!([
            {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "t", "arguments": "{\"x\": "}}]}
        ]));
        assert_eq!(have[0]["args"], "{\"x\": ");
        assert!(
            have[0]["args_error"]
                .as_str()
                .unwrap()
                .contains("not valid JSON")
        );
    }

    #[test]
    fn legacy_function_calls_pair_by_position() {
        let have = records(json!([
            {"role": "assistant", "content": null, "function_call": {"name": "search", "arguments": "{\"q\": \"a\"}"}},
            {"role": "function", "name": "search", "content": "{\"error\": \"\", \"response\": \"r1\"}"},
            {"role": "assistant", "content": null, "function_call": {"name": "search", "arguments": "{\"q\": \"b\"}"}},
            {"role": "function", "name": "search", "content": "second"}
        ]));
        assert_eq!(have.len(), 4);
        assert_eq!(have[0]["call_id"], "pos-1");
        assert_eq!(have[1]["call_id"], "pos-1");
        assert_eq!(have[1]["paired_by"], "position");
        assert_eq!(have[1]["output"]["response"], "r1");
        assert_eq!(have[3]["call_id"], "pos-2");
        assert_eq!(have[3]["output"], "second");
    }

    #[test]
    fn unanswered_calls_are_missing_at_the_next_assistant_message() {
        let have = records(json!([
            {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "create", "arguments": "{}"}}]},
            {"role": "assistant", "content": "trying again"},
            {"role": "assistant", "tool_calls": [{"id": "b", "function": {"name": "create", "arguments": "{}"}}]}
        ]));
        let kinds: Vec<(&str, &str)> = have
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap(),
                    r["status"].as_str().unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("call", ""),
                ("result", "missing"),
                ("message", ""),
                ("call", "")
            ]
        );
        assert_eq!(have[1]["call_id"], "a");
        assert_eq!(have[1]["tool"], "create");
    }

    #[test]
    fn agentdojo_errors_are_structured() {
        let have = records(json!([
            {"role": "assistant", "content": [{"type": "text", "content": "paying"}],
             "tool_calls": [{"function": "pay", "args": {"id": 3}, "id": null}]},
            {"role": "tool", "content": [{"type": "text", "content": ""}], "tool_call_id": null,
             "tool_call": {"function": "pay", "args": {"id": 3}, "id": null},
             "error": "ValueError: Transaction with ID 3 not found."},
            {"role": "assistant", "tool_calls": [{"function": "list", "args": {}, "id": null}]},
            {"role": "tool", "content": [{"type": "text", "content": "None"}], "tool_call_id": null,
             "tool_call": {"function": "list", "args": {}, "id": null}, "error": null}
        ]));
        assert_eq!(have[0]["text"], "paying");
        assert_eq!(have[1]["args"], json!({"id": 3}));
        assert_eq!(have[2]["status"], "error");
        assert_eq!(
            have[2]["error"],
            "ValueError: Transaction with ID 3 not found."
        );
        assert_eq!(have[2]["call_id"], have[1]["call_id"]);
        assert!(have[2].get("output").is_none());
        assert_eq!(have[4]["status"], "ok");
        assert_eq!(have[4]["output"], "None");
    }

    /// What reading messages emitted, in order: each item's pointer, trace and record
    /// (as a value) or problem.
    fn emitted(out: super::Out) -> Vec<String> {
        use super::super::{Emit, Made};
        out.items
            .into_iter()
            .map(|item| {
                let what = match item.what {
                    Emit::Record(Made::Map(map)) => Value::Object(map).to_string(),
                    Emit::Record(Made::Built(built)) => Value::Object(built.to_map()).to_string(),
                    Emit::Problem(message) | Emit::Placed(message) => format!("problem: {message}"),
                };
                format!("{} {:?} {what}", item.site.pointer, item.trace)
            })
            .collect()
    }

    /// `text`, a message list, read from its scan ([`super::read_plain`]) if it is
    /// plain, and from its value.
    fn both_ways(text: &str) -> (Option<Vec<String>>, Vec<String>) {
        use super::super::unique::Tape;
        use super::super::{Element, Out, Site};
        let mut tape = Tape::default();
        let node = tape.scan(text, 5).expect("a valid list");
        let mut fast = Out::default();
        let plain = super::read_plain(node, "/m", |_, pointer| Site::new(0, pointer), &mut fast);
        let fast = emitted(fast);
        assert!(plain || fast.is_empty(), "emitted, then not plain: {text}");
        let value: Value = serde_json::from_str(text).expect("a valid list");
        let elements: Vec<Element<'_>> = value
            .as_array()
            .expect("a list")
            .iter()
            .enumerate()
            .map(|(i, value)| Element {
                value,
                site: Site::new(0, format!("/m/{i}")),
            })
            .collect();
        let mut slow = Out::default();
        super::read(&elements, &mut slow);
        (plain.then_some(fast), emitted(slow))
    }

    /// Messages, each read between a user's and an assistant's (the next turn, where
    /// unanswered calls get their `missing` result), and all of them in one list:
    /// from the text when they are plain, and from the value always, with the same
    /// records, problems and sites.
    #[test]
    fn plain_messages_read_from_their_text_as_from_their_value() {
        let call = |id: &str, arguments: &str| {
            format!(
                r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": {id}, "type": "function", "function": {{"name": "create", "arguments": {arguments}}}}}]}}"#
            )
        };
        let result = |id: &str, content: &str| {
            format!(r#"{{"role": "tool", "tool_call_id": {id}, "content": {content}}}"#)
        };
        let plain: Vec<String> = vec![
            r#"{"role": "user", "content": "plain text"}"#.into(),
            r#"{"role": "system", "content": "caf\u00e9 \"q\" \\ \n \ud83d\ude00 é"}"#.into(),
            r#"{"role": "developer", "content": "be brief", "name": "ops"}"#.into(),
            r#"{"role": "critic", "content": "an unknown role is a message"}"#.into(),
            r#"{"role": "user", "content": ""}"#.into(),
            r#"{"role": "user", "content": null}"#.into(),
            r#"{"role": "user"}"#.into(),
            r#"{"role": "user", "content": 5, "name": 3}"#.into(),
            r#"{"role": "assistant", "content": "sure", "refusal": null, "tool_calls": null}"#
                .into(),
            r#"{"role": "assistant", "content": null, "refusal": "I can't do that"}"#.into(),
            r#"{"role": "assistant", "content": "", "refusal": "no", "name": "bot\u0021"}"#.into(),
            r#"{"role": "assistant", "content": "x", "tool_calls": []}"#.into(),
            call(r#""c1""#, r#""{\"request_id\": \"r-1\", \"n\": 1}""#),
            call(
                r#""c\"odd\u00e9 id""#,
                r#""  {\"t\": \"caf\\u00e9\", \"q\": \"\\\"\"} ""#,
            ),
            call(r#""""#, r#""[1, 2]""#),
            call(r#""c2""#, r#""5""#),
            call(r#""c3""#, r#""\"text\"""#),
            call(r#""c4""#, r#"{"already": ["an", "object"]}"#),
            call(r#""c5""#, "null"),
            call(r#""c6""#, "7"),
            call("null", r#""{}""#),
            r#"{"role": "assistant", "tool_calls": [{"function": {"name": "create"}}, {"id": "c7", "index": 1, "function": {"name": "lookup", "arguments": "{}", "extra": 1}, "extra": [1]}]}"#.into(),
            result(r#""c1""#, r#""{\"id\": \"rec-1\", \"category\": \"ok\"}""#),
            result(r#""c1""#, r#""a second answer""#),
            result(r#""c\"odd\u00e9 id""#, r#""  [1, {\"a\": \"\\u00e9\"}]  ""#),
            result(r#""c2""#, r#""{not json""#),
            result(r#""c3""#, r#""0""#),
            result(r#""c4""#, r#""""#),
            result(r#""c5""#, "null"),
            result(r#""c6""#, "[]"),
            result(r#""c7""#, "[ \n ]"),
            result(r#""nobody""#, r#"{"an": "object"}"#),
            result("null", r#""by position""#),
            r#"{"role": "tool", "name": "create", "content": "named, by position"}"#.into(),
            r#"{"role": "tool", "name": 4, "content": "a name that is no string"}"#.into(),
        ];
        let not_plain: Vec<String> = vec![
            r#"{"role": "user", "content": [{"type": "text", "text": "parts"}]}"#.into(),
            r#"{"role": "user", "content": []}"#.into(),
            r#"{"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "{\"a\": 1}"}]}"#.into(),
            r#"{"role": "tool", "tool_call_id": "c1", "content": "{\"a\": 1, \"a\": 2}"}"#.into(),
            r#"{"role": "tool", "tool_call_id": 12, "content": "an integer id"}"#.into(),
            r#"{"role": "tool", "tool_call_id": "c1", "error": null, "content": "AgentDojo"}"#.into(),
            call("12", r#""{}""#),
            call("1.5", r#""{}""#),
            call(r#""c1""#, r#""{\"x\": ""#),
            call(r#""c1""#, r#""not json at all""#),
            call(r#""c1""#, r#""{\"a\": 1, \"a\": 2}""#),
            call(r#""c1""#, r#""[1e400]""#),
            r#"{"role": "assistant", "content": null, "function_call": {"name": "search", "arguments": "{}"}}"#.into(),
            r#"{"role": "function", "name": "search", "content": "legacy"}"#.into(),
            r#"{"role": "assistant", "content": [{"type": "text", "content": "paying"}], "tool_calls": [{"function": "pay", "args": {"id": 3}, "id": null}]}"#.into(),
            r#"{"role": "assistant", "tool_calls": [{"function": "pay", "args": {"id": 3}, "id": null}]}"#.into(),
            r#"{"role": "assistant", "tool_calls": [{"custom": {"name": "grep", "input": "x"}, "id": "c9"}]}"#.into(),
            r#"{"role": "assistant", "tool_calls": [{"id": "c9", "function": {"arguments": "{}"}}]}"#.into(),
            r#"{"role": "assistant", "tool_calls": [{"id": "c9", "function": {"name": 5}}]}"#.into(),
            r#"{"role": "assistant", "tool_calls": ["x"]}"#.into(),
            r#"{"role": "assistant", "tool_calls": "x"}"#.into(),
            r#"{"role": "assistant", "tool_calls": [{"id": "c9", "function": {"n\u0061me": "x"}}]}"#.into(),
            r#"{"role": "assistant", "content": "hi", "audio": null}"#.into(),
            r#"{"r\u006fle": "user", "content": "an escaped key"}"#.into(),
            r#"{"role": "us\u0065r", "content": "an escaped role"}"#.into(),
            r#"{"role": 5, "content": "no string"}"#.into(),
            r#"{"content": "no role"}"#.into(),
            r#"{"kind": "call", "role": "user"}"#.into(),
            "42".into(),
        ];
        let around = |message: &str| {
            format!(
                r#"[{{"role": "user", "content": "go"}}, {message}, {{"role": "assistant", "content": "next"}}]"#
            )
        };
        for message in &plain {
            let (fast, slow) = both_ways(&around(message));
            assert_eq!(fast, Some(slow), "{message}");
        }
        for message in &not_plain {
            let (fast, slow) = both_ways(&around(message));
            assert_eq!(fast, None, "read from its text: {message}");
            // What the value gives: the messages around it, and what it says.
            assert!(slow.len() >= 2, "{message}: {slow:#?}");
        }
        // All the plain ones in one list (pairing across messages), written compactly
        // and spread over lines.
        let all = format!("[{}]", plain.join(","));
        let (fast, slow) = both_ways(&all);
        assert_eq!(fast.as_ref(), Some(&slow));
        assert!(slow.len() > 30, "{slow:#?}");
        let value: Value = serde_json::from_str(&all).expect("valid JSON");
        let spread = serde_json::to_string_pretty(&value).expect("it prints");
        let (fast, slow) = both_ways(&spread);
        assert_eq!(fast, Some(slow));
        // One message that is not plain makes the whole list read from its value.
        for message in &not_plain {
            let (fast, _) = both_ways(&format!("[{}, {message}]", plain.join(",")));
            assert_eq!(fast, None, "{message}");
        }
        // An empty list is no transcript: the search decides, from its value.
        assert_eq!(both_ways("[]").0, None);
    }

    #[test]
    fn malformed_messages_are_reported_and_the_rest_read() {
        let (have, problems) = records_of(json!([
            42,
            {"content": "no role"},
            {"role": "assistant", "tool_calls": [{"id": "a", "function": {"arguments": "{}"}}, "x",
                {"id": "b", "function": {"name": "ok", "arguments": "{}"}}]}
        ]));
        assert_eq!(have.len(), 1);
        assert_eq!(have[0]["tool"], "ok");
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/0", "/1", "/2/tool_calls/0", "/2/tool_calls/1"]);
    }
}
