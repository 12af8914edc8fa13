//! Claude Code session logs: `~/.claude/projects/<project>/<session>.jsonl`, one
//! envelope per line, or the exported JSON form, a `loglines` array of the same
//! envelopes.
//!
//! - An envelope is `{"type": "user" | "assistant" | "system" | "summary" | …,
//!   "message": {an Anthropic message}, "uuid", "parentUuid", "sessionId",
//!   "timestamp", "isSidechain", "toolUseResult", …}`. Only `user` and `assistant`
//!   envelopes hold a message; the others (summaries, system notices, snapshots) are
//!   not records.
//! - The message is read as Anthropic Messages are ([`super::anthropic`]): `tool_use`
//!   blocks are calls, `tool_result` blocks (in the next `user` envelopes) their
//!   results, joined on `tool_use_id` across lines; `is_error: true` is the error
//!   status; text is a message record.
//! - One trace per `sessionId`. Sidechain envelopes (`isSidechain: true`: a sub-agent
//!   the `Task` tool started) are a trace of their own per sub-agent, named
//!   `<session> sidechain <agentId>` (or the uuid of the thread's first envelope when
//!   there is no `agentId`), and their records say `"sidechain": true`: a sub-agent's
//!   calls are another agent's conversation, and mixing them into the main thread
//!   would interleave two agents' protocols.
//! - Every record gets the envelope's `timestamp` as `time` and its `uuid`; a result
//!   gets the envelope's `toolUseResult` (Claude Code's structured view of the tool's
//!   outcome: `stdout`, `stderr`, `interrupted`, `filePath`, …) as it is, so guards can
//!   read `toolUseResult.interrupted`.
//! - Claude Code writes one API message over several lines when it holds several
//!   blocks (the lines share `message.id`); the agent moves on (where a call that is
//!   never answered gets its `missing` result) only at a new assistant message.

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::shared::{Map, Named, Pairer, describe, id_text, str_of};
use super::threads::{self, Threads};
use super::{Element, Out, anthropic};

/// Envelope fields that only Claude Code writes beside a `message`.
const ENVELOPE_KEYS: &[&str] = &[
    "sessionId",
    "uuid",
    "parentUuid",
    "isSidechain",
    "toolUseResult",
    "userType",
];

/// Whether `map` is a Claude Code envelope: a `user` or `assistant` line around a
/// message with a role, a `summary` line pointing at its leaf, a file-history snapshot,
/// or any other typed line with Claude Code's envelope fields (system notices, queue
/// operations, progress). A log may start with any of them.
pub fn is_envelope(map: &Map) -> bool {
    let Some(ty) = str_of(map, "type") else {
        return false;
    };
    match ty {
        "user" | "assistant" if matches!(map.get("message"), Some(Value::Object(m)) if m.contains_key("role")) => {
            true
        }
        "summary" => map.contains_key("leafUuid"),
        "file-history-snapshot" => map.contains_key("snapshot") && map.contains_key("messageId"),
        _ => ENVELOPE_KEYS.iter().any(|key| map.contains_key(*key)),
    }
}

/// One trace of the log: the main thread of a session, or one sidechain.
pub(super) struct Thread {
    name: Option<String>,
    pairer: Pairer,
    /// The `message.id` of the last assistant envelope, to tell a new message from
    /// the next line of the same one.
    last_assistant: Option<String>,
}

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    let mut reader = Reader::default();
    for element in elements {
        reader.element(element, out);
    }
    reader.finish(out);
}

/// A log read one envelope at a time. Its records are given thread by thread, in the
/// order the threads start ([`Threads`]).
#[derive(Default)]
pub(super) struct Reader {
    threads: Threads<Thread>,
    by_name: FxHashMap<Option<String>, usize>,
    /// The sidechain thread each sidechain envelope's uuid belongs to.
    sidechain_of: FxHashMap<String, String>,
}

impl threads::Thread for Thread {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    fn pairer(&mut self) -> &mut Pairer {
        &mut self.pairer
    }
}

impl Reader {
    /// Reads one envelope, handing on what is final.
    pub(super) fn element(&mut self, element: &Element<'_>, out: &mut Out) {
        let read = self.read(element, out);
        self.threads.after(read, element.site.doc, out);
    }

    /// The threads, to make this a first pass, tell it where threads end, or look
    /// ahead for them.
    pub(super) fn threads(&mut self) -> &mut Threads<Thread> {
        &mut self.threads
    }

    /// A reader of the rest of the log like this one, for a look ahead: it reads each
    /// envelope into the thread this one would, whose pairer notes what its results name
    /// ([`Reader::named`]).
    pub(super) fn naming(&self) -> Reader {
        Reader {
            threads: self.threads.naming(|thread| Thread {
                name: thread.name.clone(),
                pairer: thread.pairer.naming(),
                last_assistant: thread.last_assistant.clone(),
            }),
            by_name: self.by_name.clone(),
            sidechain_of: self.sidechain_of.clone(),
        }
    }

    /// Reads one envelope for a look ahead ([`Reader::naming`]): the thread it is of, and
    /// what its results name; nothing is held.
    pub(super) fn named(
        &mut self,
        element: &Element<'_>,
        out: &mut Out,
    ) -> Option<(usize, Vec<Named>)> {
        let read = self.read(element, out);
        self.threads.take_named(read)
    }

    fn read(&mut self, element: &Element<'_>, out: &mut Out) -> Option<usize> {
        let site = &element.site;
        let Value::Object(map) = element.value else {
            out.placed(
                site,
                format!(
                    "log line is {}, expected an object",
                    describe(element.value)
                ),
            );
            return None;
        };
        let ty = match map.get("type") {
            Some(Value::String(ty)) => ty.as_str(),
            Some(other) => {
                out.placed(
                    site,
                    format!("field `type` is {}, expected a string", describe(other)),
                );
                return None;
            }
            None => {
                out.placed(site, "log line has no `type`");
                return None;
            }
        };
        if !matches!(ty, "user" | "assistant") {
            return None;
        }
        let Some(Value::Object(message)) = map.get("message") else {
            out.placed(site, format!("`{ty}` line has no `message` object"));
            return None;
        };
        let name = trace_name(map, &mut self.sidechain_of);
        let threads = &mut self.threads;
        let index = *self.by_name.entry(name.clone()).or_insert_with(|| {
            threads.push(Thread {
                name,
                pairer: Pairer::new("no tool_result before the next assistant message"),
                last_assistant: None,
            })
        });
        let thread = threads.get_mut(index);
        let role = str_of(message, "role").unwrap_or(ty);
        if role == "assistant" {
            let id = message.get("id").and_then(id_text);
            if id.is_none() || id != thread.last_assistant {
                thread.pairer.boundary();
            }
            thread.last_assistant = id;
        }
        thread.pairer.set_stamp(stamp(map), result_stamp(map));
        anthropic::content(message, role, &site.child("message"), &mut thread.pairer);
        Some(index)
    }

    /// Hands on the rest, thread by thread.
    pub(super) fn finish(self, out: &mut Out) {
        self.threads.finish(out);
    }
}

/// The trace an envelope belongs to: its session, or its session's sidechain.
fn trace_name(map: &Map, sidechain_of: &mut FxHashMap<String, String>) -> Option<String> {
    let session = str_of(map, "sessionId").map(str::to_string);
    if map.get("isSidechain") != Some(&Value::Bool(true)) {
        return session;
    }
    let uuid = str_of(map, "uuid").map(str::to_string);
    let agent = match str_of(map, "agentId") {
        Some(agent) => agent.to_string(),
        None => {
            // A sidechain thread is the chain of envelopes from its first one.
            let parent = str_of(map, "parentUuid").and_then(|p| sidechain_of.get(p));
            match (parent, &uuid) {
                (Some(root), _) => root.clone(),
                (None, Some(uuid)) => uuid.clone(),
                (None, None) => String::new(),
            }
        }
    };
    if let Some(uuid) = uuid {
        sidechain_of.insert(uuid, agent.clone());
    }
    let sidechain = if agent.is_empty() {
        "sidechain".to_string()
    } else {
        format!("sidechain {agent}")
    };
    Some(match session {
        Some(session) => format!("{session} {sidechain}"),
        None => sidechain,
    })
}

/// What every record of an envelope gets: its time, its uuid, and whether it is a
/// sidechain's.
fn stamp(map: &Map) -> Map {
    let mut stamp = Map::new();
    if let Some(time) = map.get("timestamp").filter(|t| !t.is_null()) {
        stamp.insert("time".into(), time.clone());
    }
    if let Some(uuid) = map.get("uuid").filter(|u| !u.is_null()) {
        stamp.insert("uuid".into(), uuid.clone());
    }
    if map.get("isSidechain") == Some(&Value::Bool(true)) {
        stamp.insert("sidechain".into(), Value::Bool(true));
    }
    stamp
}

/// What a result gets besides: the envelope's `toolUseResult`, as it is.
fn result_stamp(map: &Map) -> Map {
    let mut stamp = Map::new();
    if let Some(result) = map.get("toolUseResult") {
        stamp.insert("toolUseResult".into(), result.clone());
    }
    stamp
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    #[track_caller]
    fn records(lines: Value) -> Vec<Value> {
        read_ok(Format::ClaudeCode, json!({ "loglines": lines }))
    }

    fn user(uuid: &str, content: Value) -> Value {
        json!({"type": "user", "sessionId": "s1", "uuid": uuid, "timestamp": format!("t-{uuid}"), "message": {"role": "user", "content": content}})
    }

    fn assistant(uuid: &str, id: &str, content: Value) -> Value {
        json!({"type": "assistant", "sessionId": "s1", "uuid": uuid, "timestamp": format!("t-{uuid}"), "message": {"id": id, "role": "assistant", "content": content}})
    }

    #[test]
    fn calls_and_results_pair_across_lines_with_the_envelope_fields() {
        let mut result_line = user(
            "u3",
            json!([{"type": "tool_result", "tool_use_id": "toolu_1", "is_error": true, "content": "exit 1"}]),
        );
        result_line["toolUseResult"] =
            json!({"stdout": "", "stderr": "boom", "interrupted": false});
        let have = records(json!([
            {"type": "summary", "summary": "s", "leafUuid": "u3"},
            user("u1", json!("run it")),
            assistant("u2", "msg_1", json!([{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make"}}])),
            result_line,
            {"type": "system", "sessionId": "s1", "content": "compacted"},
        ]));
        assert_eq!(have.len(), 3, "{have:#?}");
        assert_eq!(have[0]["kind"], "message");
        assert_eq!(have[0]["time"], "t-u1");
        assert_eq!(have[1]["kind"], "call");
        assert_eq!(have[1]["args"]["command"], "make");
        assert_eq!(have[1]["uuid"], "u2");
        assert_eq!(have[2]["tool"], "Bash");
        assert_eq!(have[2]["status"], "error");
        assert_eq!(have[2]["error"], "exit 1");
        assert_eq!(have[2]["time"], "t-u3");
        assert_eq!(have[2]["toolUseResult"]["stderr"], "boom");
        // The call does not carry the result's tool outcome.
        assert!(have[1].get("toolUseResult").is_none());
    }

    #[test]
    fn sessions_and_sidechains_are_traces_of_their_own() {
        let mut side = assistant(
            "a1",
            "msg_s",
            json!([{"type": "tool_use", "id": "toolu_s", "name": "Grep", "input": {}}]),
        );
        side["isSidechain"] = json!(true);
        side["parentUuid"] = Value::Null;
        let mut side_answer = user(
            "a2",
            json!([{"type": "tool_result", "tool_use_id": "toolu_s", "content": "found"}]),
        );
        side_answer["isSidechain"] = json!(true);
        side_answer["parentUuid"] = json!("a1");
        let mut other = user("o1", json!("hello"));
        other["sessionId"] = json!("s2");
        let have = records(json!([user("u1", json!("hi")), side, side_answer, other]));
        let traces: Vec<&str> = have.iter().map(|r| r["trace"].as_str().unwrap()).collect();
        assert_eq!(
            traces,
            [
                "/loglines / s1",
                "/loglines / s1 sidechain a1",
                "/loglines / s1 sidechain a1",
                "/loglines / s2"
            ]
        );
        assert_eq!(have[1]["sidechain"], true);
        assert_eq!(have[2]["status"], "ok");
        assert_eq!(have[2]["tool"], "Grep");
    }

    #[test]
    fn one_message_over_several_lines_is_one_turn() {
        // Two calls of one API message on two lines; the first is never answered: it
        // is missing at the next assistant message, not before the second call.
        let have = records(json!([
            assistant(
                "u1",
                "msg_1",
                json!([{"type": "tool_use", "id": "a", "name": "get", "input": {}}])
            ),
            assistant(
                "u2",
                "msg_1",
                json!([{"type": "tool_use", "id": "b", "name": "get", "input": {}}])
            ),
            user(
                "u3",
                json!([{"type": "tool_result", "tool_use_id": "b", "content": "ok"}])
            ),
            assistant("u4", "msg_2", json!([{"type": "text", "text": "done"}])),
        ]));
        let kinds: Vec<(&str, &str)> = have
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap(),
                    r.get("status").and_then(Value::as_str).unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("call", ""),
                ("call", ""),
                ("result", "ok"),
                ("result", "missing"),
                ("message", "")
            ]
        );
        assert_eq!(have[3]["call_id"], "a");
        assert!(
            have[3].get("time").is_none(),
            "a synthesized result has no time"
        );
    }

    #[test]
    fn a_log_is_recognized_whatever_line_it_starts_with() {
        use serde_json::Map;
        let object = |value: Value| -> Map<String, Value> {
            let Value::Object(map) = value else {
                unreachable!()
            };
            map
        };
        for first in [
            json!({"type": "summary", "summary": "s", "leafUuid": "u9"}),
            json!({"type": "file-history-snapshot", "messageId": "m1", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": false}),
            json!({"type": "queue-operation", "operation": "enqueue", "timestamp": "t", "sessionId": "s1"}),
            json!({"type": "system", "subtype": "compact_boundary", "sessionId": "s1", "uuid": "u1", "content": "c"}),
            user("u1", json!("hi")),
        ] {
            assert!(super::is_envelope(&object(first.clone())), "{first}");
        }
        // Other formats' typed objects are not envelopes.
        for other in [
            json!({"type": "message", "role": "user", "content": "hi"}),
            json!({"type": "user", "content": "hi", "id": "m1", "timestamp": "t"}),
            json!({"kind": "call", "tool": "t", "type": "user"}),
        ] {
            assert!(!super::is_envelope(&object(other.clone())), "{other}");
        }
    }

    #[test]
    fn a_line_without_a_message_is_a_located_problem() {
        let (records, problems) = read_as(
            Format::ClaudeCode,
            json!({"loglines": [{"type": "user", "sessionId": "s", "message": {"role": "user", "content": "x"}}, {"type": "assistant", "sessionId": "s"}, 3]}),
        );
        assert_eq!(records.len(), 1);
        assert_eq!(
            problems,
            [
                (
                    "/loglines/1".to_string(),
                    "`assistant` line has no `message` object".to_string()
                ),
                (
                    "/loglines/2".to_string(),
                    "log line is a number, expected an object".to_string()
                )
            ]
        );
    }
}
