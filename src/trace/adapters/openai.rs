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

use serde_json::Value;

use super::shared::{
    Map, Pairer, Target, describe, element_object, fields, id_text, message_record, message_text,
    put, put_args, put_content, read_messages, str_of,
};
use super::{Element, Out};

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
