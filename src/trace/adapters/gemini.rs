//! Gemini CLI session logs: `~/.gemini/tmp/<project>/chats/session-*.json`, one JSON
//! document per session, `{"sessionId", "projectHash", "startTime", "lastUpdated",
//! "messages": [...]}`, as the Gemini CLI's chat recording writes them.
//!
//! - A `user` message is a message record; a `gemini` message is the assistant's turn:
//!   its `content` is a message record, then each of its `toolCalls` is a call (`name`
//!   → `tool`, `args`, `id` → `call_id`) and, in the same element, its result:
//!   `status: "success"` is `ok` with the function response as `output`; `"error"` is an
//!   `error`; `"cancelled"` (the user declined or stopped it) is `missing` with
//!   `cancelled: true`, as a reply that never came. A call recorded before it finished
//!   (`scheduled`, `executing`, …) has no result: it is `missing` at the end.
//! - The output is the `functionResponse.response` of the result's parts: its
//!   `output` when it has one (text decoded when it is JSON of an object or array),
//!   else its `error`, else the response itself; `resultDisplay` is kept as it is.
//! - `info`, `error` and `warning` messages are the CLI's own notices, and `thoughts`
//!   the model's summaries of its thinking: not records.
//! - Every record gets its message's (or tool call's) `timestamp` as `time`.

use serde_json::Value;

use super::shared::{
    Map, Pairer, Target, describe, element_object, fields, id_text, message_text, put, put_args,
    put_content, put_invalid, read_messages, str_of,
};
use super::{Element, Out, Site};

/// Whether `map` is a Gemini CLI message record.
pub fn is_message(map: &Map) -> bool {
    if map.contains_key("role") || map.contains_key("message") {
        return false;
    }
    match str_of(map, "type") {
        Some("gemini") => map.contains_key("content") || map.contains_key("toolCalls"),
        Some("user" | "info" | "error" | "warning") => {
            map.contains_key("id") && map.contains_key("timestamp") && map.contains_key("content")
        }
        _ => false,
    }
}

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    read_messages(elements, out, WHY_MISSING, message);
}

/// Why a call gets a `missing` result at the next assistant message.
pub(super) const WHY_MISSING: &str = "no result before the next model turn";

/// Reads one message into `pairer`.
pub(super) fn message(element: &Element<'_>, pairer: &mut Pairer) {
    let site = &element.site;
    let Some(map) = element_object(element, "message", pairer) else {
        return;
    };
    let Some(ty) = str_of(map, "type") else {
        return pairer.problem(site.clone(), "message has no string `type`");
    };
    let role = match ty {
        "user" => "user",
        "gemini" => "assistant",
        // The CLI's own notices.
        _ => return,
    };
    if role == "assistant" {
        pairer.boundary();
    }
    let message_time = time(map);
    pairer.set_stamp(message_time.clone(), Map::new());
    if let Some(text) = message_text(map.get("content")).filter(|t| !t.is_empty()) {
        let mut record = fields("message");
        put(&mut record, "role", role);
        put(&mut record, "text", text);
        pairer.record(site.clone(), record);
    }
    match map.get("toolCalls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(calls)) => {
            for (i, call) in calls.iter().enumerate() {
                tool_call(
                    call,
                    site.child("toolCalls").child(i),
                    &message_time,
                    pairer,
                );
            }
        }
        Some(other) => pairer.problem(
            site.child("toolCalls"),
            format!(
                "field `toolCalls` is {}, expected an array",
                describe(other)
            ),
        ),
    }
}

fn time(map: &Map) -> Map {
    let mut stamp = Map::new();
    if let Some(time) = map.get("timestamp").filter(|t| !t.is_null()) {
        stamp.insert("time".into(), time.clone());
    }
    stamp
}

/// A tool call and, when it finished, its result; stamped with its own time, else its
/// message's.
fn tool_call(call: &Value, site: Site, message_time: &Map, pairer: &mut Pairer) {
    let Value::Object(map) = call else {
        return pairer.problem(
            site,
            format!("tool call is {}, expected an object", describe(call)),
        );
    };
    let (Some(id), Some(name)) = (map.get("id").and_then(id_text), str_of(map, "name")) else {
        return pairer.problem(site, "tool call needs an `id` and a `name`");
    };
    let own = time(map);
    let stamp = if own.is_empty() { message_time } else { &own };
    pairer.set_stamp(stamp.clone(), Map::new());
    let mut record = fields("call");
    put(&mut record, "tool", name);
    put_args(&mut record, map.get("args"));
    pairer.call(site.clone(), record, Some(id.clone()));
    if let Some(result) = result(map) {
        pairer.result(site, result, Target::Id(id));
    }
    pairer.set_stamp(message_time.clone(), Map::new());
}

/// The result a tool call record holds, if it finished.
fn result(map: &Map) -> Option<Map> {
    let mut record = fields("result");
    let response = response(map.get("result"));
    match map.get("status") {
        Some(Value::String(status)) => match status.as_str() {
            "success" => {
                put(&mut record, "status", "ok");
                put_content(&mut record, "output", response.as_ref());
            }
            "error" => {
                put(&mut record, "status", "error");
                let error = response
                    .or_else(|| map.get("resultDisplay").cloned())
                    .unwrap_or(Value::Null);
                put_content(&mut record, "error", Some(&error));
            }
            "cancelled" => {
                put(&mut record, "status", "missing");
                put(&mut record, "cancelled", true);
            }
            // Still running when the session was saved.
            _ => return None,
        },
        other => {
            put_invalid(&mut record, "status", other, "a string");
        }
    }
    if let Some(display) = map.get("resultDisplay").filter(|d| !d.is_null()) {
        put(&mut record, "resultDisplay", display.clone());
    }
    Some(record)
}

/// What a tool's result parts say: the `functionResponse.response`'s `output`, else its
/// `error`, else the response itself; a result that is not function response parts
/// is kept as it is.
fn response(result: Option<&Value>) -> Option<Value> {
    let result = result.filter(|r| !r.is_null())?;
    let parts: Vec<&Value> = match result {
        Value::Array(parts) => parts.iter().collect(),
        single => vec![single],
    };
    let found = parts
        .iter()
        .find_map(|part| part.get("functionResponse").and_then(|f| f.get("response")));
    Some(match found {
        Some(Value::Object(response)) => response
            .get("output")
            .or_else(|| response.get("error"))
            .cloned()
            .unwrap_or_else(|| Value::Object(response.clone())),
        Some(other) => other.clone(),
        None => result.clone(),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    fn session(messages: Value) -> Value {
        json!({"sessionId": "s1", "projectHash": "h", "startTime": "t0", "lastUpdated": "t9", "messages": messages})
    }

    fn tool_call(id: &str, status: &str, response: Value) -> Value {
        json!({"id": id, "name": "create_record", "args": {"request_id": "r1"}, "status": status, "timestamp": format!("t-{id}"),
               "result": [{"functionResponse": {"id": id, "name": "create_record", "response": response}}]})
    }

    #[test]
    fn tool_calls_are_a_call_and_its_result_by_status() {
        let have = read_ok(
            Format::Gemini,
            session(json!([
                {"id": "m1", "timestamp": "t1", "type": "user", "content": "file it"},
                {"id": "m2", "timestamp": "t2", "type": "gemini", "content": "Filing.", "thoughts": [{"subject": "s", "description": "d"}],
                 "toolCalls": [
                    tool_call("a", "success", json!({"output": "{\"id\": \"rec_1\"}"})),
                    tool_call("b", "error", json!({"error": "permission denied"})),
                    tool_call("c", "cancelled", json!({"error": "cancelled by user"})),
                    tool_call("d", "executing", json!({})),
                 ]},
                {"id": "m3", "timestamp": "t3", "type": "info", "content": "Request cancelled."},
                {"id": "m4", "timestamp": "t4", "type": "gemini", "content": "Done."}
            ])),
        );
        let summary: Vec<(&str, &str, &str)> = have
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap(),
                    r.get("call_id").and_then(Value::as_str).unwrap_or(""),
                    r.get("status").and_then(Value::as_str).unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("message", "", ""),
                ("message", "", ""),
                ("call", "a", ""),
                ("result", "a", "ok"),
                ("call", "b", ""),
                ("result", "b", "error"),
                ("call", "c", ""),
                ("result", "c", "missing"),
                ("call", "d", ""),
                // The call still running is missing at the next model turn.
                ("result", "d", "missing"),
                ("message", "", ""),
            ]
        );
        assert_eq!(have[0]["time"], "t1");
        assert_eq!(have[2]["time"], "t-a");
        assert_eq!(have[3]["output"]["id"], "rec_1");
        assert_eq!(have[5]["error"], "permission denied");
        assert_eq!(have[7]["cancelled"], true);
        assert_eq!(
            have[9]["synthesized"],
            "no result before the next model turn"
        );
        // One session document: one trace.
        assert!(have.iter().all(|r| r.get("trace").is_none()));
    }

    #[test]
    fn bad_tool_calls_are_located_problems() {
        let (records, problems) = read_as(
            Format::Gemini,
            session(json!([
                {"id": "m1", "timestamp": "t1", "type": "gemini", "content": "", "toolCalls": [{"name": "x"}, 3]}
            ])),
        );
        assert!(records.is_empty());
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            ["/messages/0/toolCalls/0", "/messages/0/toolCalls/1"]
        );
    }
}
