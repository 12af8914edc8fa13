//! Anthropic Messages: `tool_use` / `tool_result` content blocks.
//!
//! - A message's `content` is a string (one message record) or a list of blocks, each
//!   read in order: `text` blocks are message records; `tool_use` (and the server and
//!   MCP-connector variants `server_tool_use`, `mcp_tool_use`) are calls with their
//!   `input` as `args`; `tool_result` (and `mcp_tool_result`, `*_tool_result`) are
//!   results of the call their `tool_use_id` names. Other blocks (thinking, images)
//!   are not records.
//! - `is_error: true` makes a result an error, whose `content` is the `error`;
//!   `is_error` absent or `false` is a success, whose `content` (a string, a list of
//!   blocks, or absent for an empty success) is the `output`. An `is_error` that is not
//!   a boolean makes the result `invalid`. A server tool's result whose content is an
//!   object of type `*_error` is an error.
//! - A `tool_use` that no `tool_result` ever answers gets its `missing` result at the
//!   next assistant message (the API requires the answer in the very next user turn).

use serde_json::Value;

use super::shared::{
    Map, Pairer, Target, describe, element_object, fields, put, put_content, put_invalid,
    read_messages, str_of,
};
use super::{Element, Out, Site};

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    read_messages(elements, out, WHY_MISSING, message);
}

/// Why a call gets a `missing` result at the next assistant message.
pub(super) const WHY_MISSING: &str = "no tool_result before the next assistant message";

/// Reads one message into `pairer`.
pub(super) fn message(element: &Element<'_>, pairer: &mut Pairer) {
    let site = &element.site;
    let Some(map) = element_object(element, "message", pairer) else {
        return;
    };
    let Some(role) = str_of(map, "role") else {
        return pairer.problem(site.clone(), "message has no string `role`");
    };
    if role == "assistant" {
        pairer.boundary();
    }
    content(map, role, site, pairer);
}

/// The records of a message's `content` (`map` is the message, at `site`): its text and
/// its blocks, in order.
pub(super) fn content(map: &Map, role: &str, site: &Site, pairer: &mut Pairer) {
    match map.get("content") {
        None | Some(Value::Null) => {}
        Some(Value::String(text)) => {
            if !text.is_empty() {
                pairer.record(site.clone(), text_record(role, text));
            }
        }
        Some(Value::Array(blocks)) => {
            for (i, block) in blocks.iter().enumerate() {
                self::block(block, role, site.child("content").child(i), pairer);
            }
        }
        Some(other) => pairer.problem(
            site.child("content"),
            format!(
                "field `content` is {}, expected a string or a list of blocks",
                describe(other)
            ),
        ),
    }
}

fn text_record(role: &str, text: &str) -> Map {
    let mut record = fields("message");
    put(&mut record, "role", role);
    put(&mut record, "text", text);
    record
}

fn block(block: &Value, role: &str, site: Site, pairer: &mut Pairer) {
    let Value::Object(map) = block else {
        return pairer.problem(
            site,
            format!("content block is {}, expected an object", describe(block)),
        );
    };
    let Some(ty) = str_of(map, "type") else {
        return pairer.problem(site, "content block has no string `type`");
    };
    match ty {
        "text" => {
            if let Some(text) = str_of(map, "text").filter(|t| !t.is_empty()) {
                pairer.record(site, text_record(role, text));
            }
        }
        "tool_use" | "server_tool_use" | "mcp_tool_use" => {
            let (Some(id), Some(name)) = (str_of(map, "id"), str_of(map, "name")) else {
                return pairer.problem(site, format!("`{ty}` block needs an `id` and a `name`"));
            };
            let mut record = fields("call");
            put(&mut record, "tool", name);
            if let Some(input) = map.get("input") {
                put(&mut record, "args", input.clone());
            }
            if let Some(server) = str_of(map, "server_name") {
                put(&mut record, "server", server);
            }
            pairer.call(site, record, Some(id.to_string()));
        }
        _ if ty == "tool_result" || ty.ends_with("_tool_result") => {
            let Some(id) = str_of(map, "tool_use_id") else {
                return pairer.problem(site, format!("`{ty}` block has no `tool_use_id`"));
            };
            let record = result(map);
            pairer.result(site, record, Target::Id(id.to_string()));
        }
        _ => {}
    }
}

fn result(map: &Map) -> Map {
    let mut record = fields("result");
    let content = map.get("content");
    let server_error = matches!(
        content,
        Some(Value::Object(c)) if str_of(c, "type").is_some_and(|t| t.ends_with("_error"))
    );
    match map.get("is_error") {
        Some(Value::Bool(true)) => error(&mut record, content),
        None | Some(Value::Bool(false)) if server_error => error(&mut record, content),
        None | Some(Value::Bool(false)) => {
            put(&mut record, "status", "ok");
            put_content(&mut record, "output", content);
        }
        Some(other) => {
            put_invalid(&mut record, "is_error", Some(other), "a boolean");
            put_content(&mut record, "output", content);
        }
    }
    record
}

fn error(record: &mut Map, content: Option<&Value>) {
    put(record, "status", "error");
    match content {
        Some(content) => put_content(record, "error", Some(content)),
        // The format said "error" and nothing more.
        None => put(record, "error", Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    #[track_caller]
    fn records(value: Value) -> Vec<Value> {
        read_ok(Format::Anthropic, value)
    }

    fn call_and(result: Value) -> Value {
        json!([
            {"role": "assistant", "content": [
                {"type": "text", "text": "creating"},
                {"type": "tool_use", "id": "toolu_1", "name": "create", "input": {"request_id": "r1"}}
            ]},
            {"role": "user", "content": [result]}
        ])
    }

    #[test]
    fn results_join_on_tool_use_id() {
        let have = records(call_and(
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "content": "{\"id\": \"rec_1\"}"}),
        ));
        assert_eq!(have.len(), 3);
        assert_eq!(have[0]["text"], "creating");
        assert_eq!(have[1]["args"], json!({"request_id": "r1"}));
        assert_eq!(have[2]["tool"], "create");
        assert_eq!(have[2]["call_id"], "toolu_1");
        assert_eq!(have[2]["status"], "ok");
        assert_eq!(have[2]["output"]["id"], "rec_1");
    }

    #[test]
    fn parallel_tool_uses_answered_out_of_order() {
        let have = records(json!([
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "a", "name": "get", "input": {"k": 1}},
                {"type": "tool_use", "id": "b", "name": "put", "input": {"k": 2}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "b", "content": "false"},
                {"type": "tool_result", "tool_use_id": "a", "content": [{"type": "text", "text": "[1, 2]"}]},
                {"type": "text", "text": "thanks"}
            ]}
        ]));
        assert_eq!(have.len(), 5);
        assert_eq!(have[2]["tool"], "put");
        assert_eq!(have[2]["output"], "false");
        assert_eq!(have[3]["tool"], "get");
        assert_eq!(have[3]["output"], json!([1, 2]));
        assert_eq!(have[4]["role"], "user");
    }

    #[test]
    fn is_error_decides_and_absent_means_success() {
        let have = records(call_and(
            json!({"type": "tool_result", "tool_use_id": "toolu_1",
            "is_error": true, "content": [{"type": "text", "text": "{\"category\": \"outcome_unknown\"}"}]}),
        ));
        assert_eq!(have[2]["status"], "error");
        assert_eq!(have[2]["error"]["category"], "outcome_unknown");
        assert!(have[2].get("output").is_none());

        let have = records(call_and(
            json!({"type": "tool_result", "tool_use_id": "toolu_1"}),
        ));
        assert_eq!(have[2]["status"], "ok");
        assert!(have[2].get("output").is_none(), "absent content: no output");

        let have = records(call_and(
            json!({"type": "tool_result", "tool_use_id": "toolu_1", "is_error": "yes"}),
        ));
        assert_eq!(have[2]["status"], "invalid");
    }

    #[test]
    fn falsy_contents_stay_successes() {
        for (content, want) in [
            (json!(""), json!("")),
            (json!([]), json!([])),
            (json!("0"), json!("0")),
            (json!("false"), json!("false")),
            (json!("None"), json!("None")),
            (json!("{}"), json!({})),
            (json!("null"), json!("null")),
        ] {
            let have = records(call_and(
                json!({"type": "tool_result", "tool_use_id": "toolu_1",
                "is_error": false, "content": content}),
            ));
            assert_eq!(have[2]["status"], "ok", "{content}");
            assert_eq!(have[2]["output"], want, "{content}");
        }
    }

    #[test]
    fn unanswered_tool_use_is_missing_at_the_next_assistant_turn() {
        let have = records(json!([
            {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "create", "input": {}}]},
            {"role": "user", "content": "still there?"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "create", "input": {}}]}
        ]));
        let statuses: Vec<&Value> = have.iter().map(|r| &r["status"]).collect();
        assert_eq!(statuses[2], "missing");
        assert_eq!(have[2]["call_id"], "a");
        assert_eq!(have.len(), 4);
    }

    #[test]
    fn malformed_blocks_are_reported_with_their_pointer() {
        let (have, problems) = read_as(
            Format::Anthropic,
            json!([
                {"role": "assistant", "content": [{"type": "tool_use", "name": "x"}, 7,
                    {"type": "tool_use", "id": "ok", "name": "y", "input": {}}]},
                {"role": "user", "content": 5}
            ]),
        );
        assert_eq!(have.len(), 1);
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/0/content/0", "/0/content/1", "/1/content"]);
    }
}
