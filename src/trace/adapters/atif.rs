//! ATIF trajectories (Agent Trajectory Interchange Format, Harbor): `steps[]`, each a
//! system prompt, a user message or an agent turn.
//!
//! - A step's `message` (a string or a list of content parts) is a message record; its
//!   role is the step's `source` (`agent` becomes `assistant`). Its `timestamp` is the
//!   `time` of every record of the step.
//! - `tool_calls[]` are calls (`tool_call_id`, `function_name`, `arguments`, an object
//!   or a JSON string).
//! - `observation.results[]` are results: of the call their `source_call_id` names, or,
//!   when it is left out (as many writers do), of the step's calls by position: the
//!   first unnamed result answers the first call no result named, and so on. A result
//!   left over is environment feedback: a message with role `environment`.
//! - ATIF has no error field: `status` is `"ok"` and the content is the output (text,
//!   decoded when it is JSON of an object or array).
//! - A call its step's observation does not answer (and no later result names) gets
//!   its `missing` result at the end of the step: the next step is the agent moving on.

use serde_json::Value;

use super::shared::{
    Map, Pairer, Target, describe, element_object, fields, id_text, message_text, put, put_args,
    put_content, str_of,
};
use super::{Element, Out, Site};

/// Why a call gets a `missing` result at the end of its step.
pub(super) const WHY_MISSING: &str = "no result in its step's observation";

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    let mut pairer = Pairer::new(WHY_MISSING);
    for element in elements {
        // The step before is over: its unanswered calls will not be answered.
        pairer.boundary();
        step(element, &mut pairer);
    }
    pairer.boundary();
    pairer.finish(out);
}

pub(super) fn step(element: &Element<'_>, pairer: &mut Pairer) {
    let site = &element.site;
    let Some(map) = element_object(element, "step", pairer) else {
        return;
    };
    let time = map.get("timestamp").filter(|t| !t.is_null()).cloned();
    let stamp = |record: &mut Map| {
        if let Some(time) = &time {
            record.insert("time".into(), time.clone());
        }
    };
    let role = match str_of(map, "source") {
        Some("agent") => "assistant",
        Some(source) => source,
        None => return pairer.problem(site.clone(), "step has no string `source`"),
    };
    if let Some(text) = message_text(map.get("message")).filter(|t| !t.is_empty()) {
        let mut record = fields("message");
        put(&mut record, "role", role);
        put(&mut record, "text", text);
        if let Some(id) = map.get("step_id") {
            record.insert("step_id".into(), id.clone());
        }
        stamp(&mut record);
        pairer.record(site.clone(), record);
    }
    let calls = step_calls(map, site, &stamp, pairer);
    step_results(map, site, calls, &stamp, pairer);
}

/// The step's `tool_calls` as calls; their ids, in order, for results that name none.
fn step_calls(
    map: &Map,
    site: &Site,
    stamp: &dyn Fn(&mut Map),
    pairer: &mut Pairer,
) -> Vec<String> {
    let mut calls: Vec<String> = Vec::new();
    match map.get("tool_calls") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, call) in items.iter().enumerate() {
                let call_site = site.child("tool_calls").child(i);
                let Value::Object(call) = call else {
                    pairer.problem(
                        call_site,
                        format!("tool call is {}, expected an object", describe(call)),
                    );
                    continue;
                };
                let id = call.get("tool_call_id").and_then(id_text);
                let (Some(id), Some(name)) = (id, str_of(call, "function_name")) else {
                    pairer.problem(
                        call_site,
                        "tool call needs a `tool_call_id` and a `function_name`",
                    );
                    continue;
                };
                let mut record = fields("call");
                put(&mut record, "tool", name);
                put_args(&mut record, call.get("arguments"));
                stamp(&mut record);
                calls.push(id.clone());
                pairer.call(call_site, record, Some(id));
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
    calls
}

/// The results of the step's `observation`: each answers the call its
/// `source_call_id` names, or the step's next unnamed call; one with neither is a
/// message from the environment.
fn step_results(
    map: &Map,
    site: &Site,
    calls: Vec<String>,
    stamp: &dyn Fn(&mut Map),
    pairer: &mut Pairer,
) {
    let observation = site.child("observation");
    let results = match map.get("observation") {
        None | Some(Value::Null) => return,
        Some(Value::Object(observation)) => observation.get("results"),
        Some(other) => {
            return pairer.problem(
                observation,
                format!(
                    "field `observation` is {}, expected an object",
                    describe(other)
                ),
            );
        }
    };
    let results = match results {
        None | Some(Value::Null) => return,
        Some(Value::Array(results)) => results,
        Some(other) => {
            return pairer.problem(
                observation.child("results"),
                format!("field `results` is {}, expected an array", describe(other)),
            );
        }
    };
    // Calls named by a result are not available to the unnamed ones.
    let named: Vec<String> = results
        .iter()
        .filter_map(|r| r.get("source_call_id").and_then(id_text))
        .collect();
    let mut unnamed_calls = calls.into_iter().filter(|id| !named.contains(id));
    for (i, result) in results.iter().enumerate() {
        let result_site: Site = observation.child("results").child(i);
        let Value::Object(result) = result else {
            pairer.problem(
                result_site,
                format!("result is {}, expected an object", describe(result)),
            );
            continue;
        };
        let target = match result.get("source_call_id").and_then(id_text) {
            Some(id) => Some(Target::Id(id)),
            None => unnamed_calls.next().map(Target::IdByPosition),
        };
        match target {
            Some(target) => {
                let mut record = fields("result");
                put(&mut record, "status", "ok");
                put_content(&mut record, "output", result.get("content"));
                stamp(&mut record);
                pairer.result(result_site, record, target);
            }
            None => {
                let Some(text) = message_text(result.get("content")) else {
                    continue;
                };
                let mut record = fields("message");
                put(&mut record, "role", "environment");
                put(&mut record, "text", text);
                stamp(&mut record);
                pairer.record(result_site, record);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    #[track_caller]
    fn records(steps: Value) -> Vec<Value> {
        read_ok(
            Format::Atif,
            json!({"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": steps}),
        )
    }

    #[test]
    fn results_pair_by_source_call_id_or_by_position() {
        let have = records(json!([
            {"step_id": 1, "source": "user", "message": "go"},
            {"step_id": 2, "source": "agent", "message": "", "timestamp": "2025-10-16T14:30:00Z",
             "tool_calls": [
                {"tool_call_id": "c1", "function_name": "a", "arguments": {"x": 1}},
                {"tool_call_id": "c2", "function_name": "b", "arguments": {}}
             ],
             "observation": {"results": [
                {"source_call_id": "c2", "content": "[]"},
                {"content": "{\"ok\": true}"}
             ]}}
        ]));
        assert_eq!(have.len(), 5);
        assert_eq!(have[0]["role"], "user");
        assert_eq!(have[1]["time"], "2025-10-16T14:30:00Z");
        assert_eq!(have[3]["call_id"], "c2");
        assert_eq!(have[3]["output"], json!([]));
        assert_eq!(have[4]["call_id"], "c1");
        assert_eq!(have[4]["paired_by"], "position");
        assert_eq!(have[4]["output"]["ok"], true);
        assert_eq!(have[4]["tool"], "a");
    }

    #[test]
    fn leftover_results_are_environment_messages_and_unanswered_calls_missing() {
        let have = records(json!([
            {"step_id": 1, "source": "agent", "message": "bad json",
             "observation": {"results": [{"content": "Previous response had parsing errors"}]}},
            {"step_id": 2, "source": "agent", "message": "",
             "tool_calls": [{"tool_call_id": "c1", "function_name": "create", "arguments": {}}],
             "observation": {"results": []}},
            {"step_id": 3, "source": "agent", "message": "",
             "tool_calls": [{"tool_call_id": "c2", "function_name": "create", "arguments": {}}]}
        ]));
        assert_eq!(have[1]["role"], "environment");
        assert_eq!(have[2]["kind"], "call");
        assert_eq!(have[3]["status"], "missing");
        assert_eq!(have[3]["call_id"], "c1");
        assert_eq!(have[4]["call_id"], "c2");
        // The trajectory ends with its last step: that step's call is missing too.
        assert_eq!(have[5]["status"], "missing");
    }

    #[test]
    fn falsy_contents_stay_successes() {
        for content in [json!(""), json!("0"), json!("None"), json!([]), json!(null)] {
            let have = records(json!([
                {"step_id": 1, "source": "agent", "message": "",
                 "tool_calls": [{"tool_call_id": "c", "function_name": "f", "arguments": {}}],
                 "observation": {"results": [{"source_call_id": "c", "content": content}]}}
            ]));
            assert_eq!(have[1]["status"], "ok");
            assert_eq!(have[1]["output"], content, "{content}");
        }
    }

    #[test]
    fn malformed_steps_are_reported() {
        let (have, problems) = read_as(
            Format::Atif,
            json!({"steps": [
                "x",
                {"step_id": 2, "source": "agent", "message": "m",
                 "tool_calls": [{"function_name": "f"}], "observation": []}
            ]}),
        );
        assert_eq!(have.len(), 1);
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            ["/steps/0", "/steps/1/tool_calls/0", "/steps/1/observation"]
        );
    }
}
