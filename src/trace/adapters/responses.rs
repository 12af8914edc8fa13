//! OpenAI Responses API items (a request's `input`, a response's `output`, or both
//! concatenated).
//!
//! - `message` items (and bare `{role, content}` input messages) are message records.
//! - `function_call` is a call joined to its `function_call_output` on `call_id` (not
//!   the item's `id`, kept as `item_id`); `arguments` is a JSON string, parsed. The
//!   output is text with no error field: `status` is `"ok"`. `custom_tool_call` and its
//!   output work alike, with the free-text `input` as `args`.
//! - `mcp_call` is a call and its result in one item: `error` (a string, not null) or
//!   a `failed` status makes it an error; else its `output` (null included) is the
//!   output. One still running (`in_progress`, `calling`, or no output) has no result
//!   (it is `missing` at the end).
//! - `mcp_approval_request` / `mcp_approval_response` are a `request_approval` call and
//!   its result, `output: {"approved": true|false, "reason"?}`: `approve: false` is a
//!   human refusal a spec can match (`output.approved == false`).
//! - Built-in tool calls (`web_search_call`, `local_shell_call`, …) are calls of the tool
//!   named by their type; those without an output item get their result from their
//!   `status`.
//! - A call that no output ever answers gets its `missing` result at the next assistant
//!   message.

use std::rc::Rc;

use rustc_hash::FxHashSet;
use serde_json::Value;

use super::shared::{
    Map, Pairer, Target, describe, fields, id_text, message_record, message_text, put, put_args,
    put_content, put_invalid, str_of,
};
use super::{Element, Out};

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    let answered = answered(elements.iter().map(|e| e.value));
    let mut pairer = Pairer::new(WHY_MISSING);
    for element in elements {
        item(element, Here::Ids(&answered), &mut pairer);
    }
    pairer.finish(out);
}

/// Why a call gets a `missing` result at the next assistant message.
pub(super) const WHY_MISSING: &str = "no output before the next assistant message";

/// The call ids that output items answer. Built-in calls answered by an output item
/// are paired with it; the others carry their own outcome.
pub(super) fn answered<'v>(items: impl Iterator<Item = &'v Value>) -> FxHashSet<String> {
    items
        .filter_map(|value| {
            let map = value.as_object()?;
            let ty = str_of(map, "type")?;
            ty.ends_with("_call_output")
                .then(|| map.get("call_id").and_then(id_text))?
        })
        .collect()
}

/// Which built-in calls an output item answers (in a Codex rollout or a Responses
/// transcript): a built-in call answered somewhere is paired with its output; the
/// others carry their own outcome.
#[derive(Clone, Debug)]
pub(super) enum Answered {
    /// The ids output items answer ([`answered`]), or those of them that are ids of
    /// built-in calls.
    Ids(Rc<FxHashSet<String>>),
    /// In a file of one item per line, the lines, in order, of the built-in calls an
    /// output item answers: a call's place rather than its id, since a first pass that
    /// kept the ids of every call answered would hold them all.
    Lines(Rc<[u64]>),
}

impl Default for Answered {
    fn default() -> Self {
        Answered::Ids(Rc::default())
    }
}

impl Answered {
    /// What is known of the item on line `line` (of a file of lines; any line for
    /// [`Answered::Ids`]).
    pub(super) fn at(&self, line: u64) -> Here<'_> {
        match self {
            Answered::Ids(ids) => Here::Ids(ids),
            Answered::Lines(lines) => Here::Line(lines, line),
        }
    }
}

/// What [`item`] knows of whether an output item answers a built-in call it reads.
#[derive(Clone, Copy)]
pub(super) enum Here<'a> {
    /// The ids answered.
    Ids(&'a FxHashSet<String>),
    /// The lines of the built-in calls answered, and the line of the item read.
    Line(&'a [u64], u64),
}

impl Here<'_> {
    /// Whether the built-in call `id`, the item read, is answered.
    fn answers(self, id: &str) -> bool {
        match self {
            Here::Ids(ids) => ids.contains(id),
            Here::Line(lines, line) => lines.binary_search(&line).is_ok(),
        }
    }
}

/// Whether an item of type `ty` is a built-in call (`web_search_call`,
/// `local_shell_call`, …: every `*_call` but function, custom tool and MCP calls).
fn is_builtin_call(ty: &str) -> bool {
    ty.ends_with("_call") && !matches!(ty, "function_call" | "custom_tool_call" | "mcp_call")
}

/// The id of a built-in call item: its `call_id`, or its `id`.
fn builtin_id(map: &Map) -> Option<String> {
    map.get("call_id")
        .and_then(id_text)
        .or_else(|| map.get("id").and_then(id_text))
}

/// The ids of the built-in calls among `items`, the only calls whose pairing
/// [`answered`] decides: of the ids it gives, only these need be kept.
pub(super) fn builtin_calls<'v>(items: impl Iterator<Item = &'v Value>) -> FxHashSet<String> {
    items
        .filter_map(|value| {
            let map = value.as_object()?;
            let ty = str_of(map, "type")?;
            is_builtin_call(ty).then(|| builtin_id(map))?
        })
        .collect()
}

/// One item, read into `pairer`.
pub(super) fn item(element: &Element<'_>, answered: Here<'_>, pairer: &mut Pairer) {
    let site = element.site.clone();
    let Value::Object(map) = element.value else {
        return pairer.problem(
            site,
            format!("item is {}, expected an object", describe(element.value)),
        );
    };
    let ty = match map.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        None if map.contains_key("role") => "message",
        Some(other) => {
            return pairer.problem(
                site,
                format!("field `type` is {}, expected a string", describe(other)),
            );
        }
        None => return pairer.problem(site, "item has no `type`"),
    };
    match ty {
        "message" => message(element, map, pairer),
        "function_call" | "custom_tool_call" => {
            let Some(name) = str_of(map, "name") else {
                return pairer.problem(site, format!("`{ty}` item has no `name`"));
            };
            let Some(call_id) = map.get("call_id").and_then(id_text) else {
                return pairer.problem(site, format!("`{ty}` item has no `call_id`"));
            };
            let mut record = fields("call");
            put(&mut record, "tool", name);
            if ty == "function_call" {
                put_args(&mut record, map.get("arguments"));
            } else if let Some(input) = map.get("input") {
                put(&mut record, "args", input.clone());
            }
            item_id(&mut record, map);
            pairer.call(site, record, Some(call_id));
        }
        "mcp_call" => mcp_call(element, map, pairer),
        "mcp_approval_request" => {
            let Some(id) = map.get("id").and_then(id_text) else {
                return pairer.problem(site, "`mcp_approval_request` item has no `id`");
            };
            let mut args = Map::new();
            if let Some(name) = map.get("name") {
                args.insert("tool".into(), name.clone());
            }
            if let Some(server) = map.get("server_label") {
                args.insert("server".into(), server.clone());
            }
            let mut parsed = Map::new();
            put_args(&mut parsed, map.get("arguments"));
            if let Some(arguments) = parsed.remove("args") {
                args.insert("arguments".into(), arguments);
            }
            let mut record = fields("call");
            put(&mut record, "tool", "request_approval");
            put(&mut record, "args", args);
            if let Some(error) = parsed.remove("args_error") {
                record.insert("args_error".into(), error);
            }
            pairer.call(site, record, Some(id));
        }
        "mcp_approval_response" => {
            let Some(id) = map.get("approval_request_id").and_then(id_text) else {
                return pairer.problem(
                    site,
                    "`mcp_approval_response` item has no `approval_request_id`",
                );
            };
            let mut record = fields("result");
            put(&mut record, "tool", "request_approval");
            let mut output = Map::new();
            match map.get("approve") {
                Some(Value::Bool(approve)) => {
                    put(&mut record, "status", "ok");
                    output.insert("approved".into(), Value::Bool(*approve));
                }
                other => {
                    put_invalid(&mut record, "approve", other, "a boolean");
                }
            }
            if let Some(reason) = map.get("reason").filter(|r| !r.is_null()) {
                output.insert("reason".into(), reason.clone());
            }
            put(&mut record, "output", output);
            item_id(&mut record, map);
            pairer.result(site, record, Target::Id(id));
        }
        _ if ty.ends_with("_call_output") => {
            let Some(call_id) = map.get("call_id").and_then(id_text) else {
                return pairer.problem(site, format!("`{ty}` item has no `call_id`"));
            };
            let mut record = fields("result");
            put(&mut record, "status", "ok");
            put_content(&mut record, "output", map.get("output"));
            item_id(&mut record, map);
            pairer.result(site, record, Target::Id(call_id));
        }
        _ if is_builtin_call(ty) => builtin_call(element, map, ty, answered, pairer),
        // Reasoning, tool listings, references: not records.
        _ => {}
    }
}

fn item_id(record: &mut Map, map: &Map) {
    if let Some(id) = map.get("id").filter(|id| !id.is_null()) {
        record.insert("item_id".into(), id.clone());
    }
}

fn message(element: &Element<'_>, map: &Map, pairer: &mut Pairer) {
    let Some(role) = str_of(map, "role") else {
        return pairer.problem(element.site.clone(), "message item has no string `role`");
    };
    if role == "assistant" {
        pairer.boundary();
    }
    let content = map.get("content");
    let text = message_text(content).filter(|t| !t.is_empty());
    let refusal = match content {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("refusal"))
            .filter_map(|p| p.get("refusal").and_then(Value::as_str))
            .next(),
        _ => None,
    };
    if let Some(record) = message_record(role, text, refusal) {
        pairer.record(element.site.clone(), record);
    }
}

fn mcp_call(element: &Element<'_>, map: &Map, pairer: &mut Pairer) {
    let site = element.site.clone();
    let (Some(id), Some(name)) = (map.get("id").and_then(id_text), str_of(map, "name")) else {
        return pairer.problem(site, "`mcp_call` item needs an `id` and a `name`");
    };
    let mut call = fields("call");
    put(&mut call, "tool", name);
    put_args(&mut call, map.get("arguments"));
    if let Some(server) = str_of(map, "server_label") {
        put(&mut call, "server", server);
    }
    pairer.call(site.clone(), call, Some(id.clone()));

    let mut result = fields("result");
    let status = str_of(map, "status");
    if matches!(status, Some("in_progress" | "calling")) {
        // Still running when recorded: no result (it is `missing` at the end).
        return;
    }
    match map.get("error") {
        Some(error) if !error.is_null() => {
            put(&mut result, "status", "error");
            put_content(&mut result, "error", Some(error));
        }
        _ => match (status, map.get("output")) {
            (Some(status @ ("failed" | "incomplete")), _) => {
                put(&mut result, "status", "error");
                put(&mut result, "error", status);
            }
            (_, Some(output)) => {
                put(&mut result, "status", "ok");
                put_content(&mut result, "output", Some(output));
            }
            _ => return,
        },
    }
    pairer.result(site, result, Target::Id(id));
}

fn builtin_call(
    element: &Element<'_>,
    map: &Map,
    ty: &str,
    answered: Here<'_>,
    pairer: &mut Pairer,
) {
    let site = element.site.clone();
    let Some(id) = builtin_id(map) else {
        return pairer.problem(site, format!("`{ty}` item has no `call_id` or `id`"));
    };
    let mut call = fields("call");
    put(&mut call, "tool", ty.trim_end_matches("_call"));
    if let Some(args) = map.get("action").or_else(|| map.get("arguments")) {
        put_args(&mut call, Some(args));
    }
    item_id(&mut call, map);
    pairer.call(site.clone(), call, Some(id.clone()));
    if answered.answers(&id) {
        return;
    }
    let mut result = fields("result");
    match str_of(map, "status") {
        Some("completed") => {
            put(&mut result, "status", "ok");
            if let Some(output) = ["output", "outputs", "results", "result"]
                .iter()
                .find_map(|key| map.get(*key))
            {
                put_content(&mut result, "output", Some(output));
            }
        }
        Some(status @ ("failed" | "incomplete")) => {
            put(&mut result, "status", "error");
            put(&mut result, "error", status);
        }
        _ => return,
    }
    pairer.result(site, result, Target::Id(id));
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    #[track_caller]
    fn records(value: Value) -> Vec<Value> {
        read_ok(Format::Responses, value)
    }

    #[test]
    fn function_calls_join_on_call_id_not_item_id() {
        let have = records(json!([
            {"role": "user", "content": "go"},
            {"type": "function_call", "id": "fc_1", "call_id": "call_A", "name": "get", "arguments": "{\"k\": 1}"},
            {"type": "function_call", "id": "fc_2", "call_id": "call_B", "name": "get", "arguments": "{\"k\": 2}"},
            {"type": "function_call_output", "call_id": "call_B", "output": "0"},
            {"type": "function_call_output", "id": "fc_1", "call_id": "call_A", "output": "{\"v\": []}"}
        ]));
        assert_eq!(have.len(), 5);
        assert_eq!(have[1]["call_id"], "call_A");
        assert_eq!(have[1]["item_id"], "fc_1");
        assert_eq!(have[3]["call_id"], "call_B");
        assert_eq!(have[3]["output"], "0");
        assert_eq!(have[3]["tool"], "get");
        assert_eq!(have[4]["call_id"], "call_A");
        assert_eq!(have[4]["output"], json!({"v": []}));
    }

    #[test]
    fn falsy_outputs_stay_successes() {
        for (output, want) in [
            (json!("0"), json!("0")),
            (json!("false"), json!("false")),
            (json!(""), json!("")),
            (json!("[]"), json!([])),
            (json!("{}"), json!({})),
            (json!("null"), json!("null")),
            (json!("None"), json!("None")),
            (json!([]), json!([])),
        ] {
            let have = records(json!([
                {"type": "function_call", "call_id": "c", "name": "t", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c", "output": output}
            ]));
            assert_eq!(have[1]["status"], "ok", "{output}");
            assert_eq!(have[1]["output"], want, "{output}");
        }
    }

    #[test]
    fn mcp_calls_carry_their_outcome() {
        let have = records(json!([
            {"type": "mcp_call", "id": "mcp_1", "server_label": "crm", "name": "create_record",
             "arguments": "{\"request_id\": \"r1\"}", "output": null, "error": "timeout after dispatch"},
            {"type": "mcp_call", "id": "mcp_2", "server_label": "crm", "name": "count",
             "arguments": "{}", "output": "0", "error": null},
            {"type": "mcp_call", "id": "mcp_3", "server_label": "crm", "name": "clear",
             "arguments": "{}", "output": null, "error": null, "status": "completed"}
        ]));
        assert_eq!(have.len(), 6);
        assert_eq!(have[0]["server"], "crm");
        assert_eq!(have[1]["status"], "error");
        assert_eq!(have[1]["error"], "timeout after dispatch");
        assert_eq!(have[3]["status"], "ok");
        assert_eq!(have[3]["output"], "0");
        assert_eq!(have[5]["status"], "ok");
        assert_eq!(have[5]["output"], Value::Null);
    }

    #[test]
    fn approval_refusals_are_request_approval_results() {
        let have = records(json!([
            {"type": "mcp_approval_request", "id": "apr_1", "server_label": "db", "name": "drop_table",
             "arguments": "{\"table\": \"events\"}"},
            {"type": "mcp_approval_response", "approval_request_id": "apr_1", "approve": false,
             "reason": "auditors still read it"}
        ]));
        assert_eq!(have[0]["tool"], "request_approval");
        assert_eq!(have[0]["args"]["tool"], "drop_table");
        assert_eq!(have[0]["args"]["arguments"]["table"], "events");
        assert_eq!(have[1]["tool"], "request_approval");
        assert_eq!(have[1]["call_id"], "apr_1");
        assert_eq!(have[1]["status"], "ok");
        assert_eq!(have[1]["output"]["approved"], false);
    }

    #[test]
    fn unanswered_calls_are_missing_at_the_next_assistant_message() {
        let have = records(json!([
            {"type": "function_call", "call_id": "a", "name": "create", "arguments": "{}"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "retrying"}]},
            {"type": "function_call", "call_id": "b", "name": "create", "arguments": "{}"}
        ]));
        assert_eq!(have[1]["status"], "missing");
        assert_eq!(have[1]["call_id"], "a");
        assert_eq!(have[2]["text"], "retrying");
    }

    #[test]
    fn malformed_items_are_reported() {
        let (have, problems) = read_as(
            Format::Responses,
            json!([
                {"type": "function_call", "name": "x", "arguments": "{}"},
                "text",
                {"type": "function_call", "call_id": "c", "name": "y", "arguments": "{"}
            ]),
        );
        assert_eq!(have.len(), 1);
        assert!(have[0]["args_error"].is_string());
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/0", "/1"]);
    }
}
