//! Codex CLI rollouts: `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, one envelope
//! `{"timestamp", "type", "payload"}` per line.
//!
//! - `session_meta` names the session: its `payload.id` is the trace's name. A file
//!   holding several sessions (a resumed or forked one) gives one trace per session;
//!   the lines after a `session_meta` belong to its session.
//! - `response_item` payloads are OpenAI Responses items, read as that format is
//!   ([`super::responses`]): `function_call` / `function_call_output` and
//!   `custom_tool_call` / `custom_tool_call_output` joined on `call_id`;
//!   `local_shell_call` is a call of the tool `local_shell` with its `action` as
//!   `args`, answered by the output item with its `call_id`; messages are message
//!   records. `reasoning` items are skipped: they are the model's summaries of its
//!   own thinking (often encrypted), not something the agent did or was told.
//! - A Codex tool output is text with no structured error field (the exit code is in
//!   the text, or in its JSON `metadata.exit_code`), so every output is `status: "ok"`
//!   and a spec reads the outcome from `output`.
//! - `event_msg` lines repeat what the response items say for the terminal UI (the
//!   user's message, the agent's message, token counts) and `turn_context` lines hold
//!   settings: neither is a record.
//! - Every record gets the envelope's `timestamp` as `time`.

use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use super::responses::Answered;
use super::shared::{Map, Named, Pairer, describe, id_text, str_of};
use super::threads::{self, Threads};
use super::{Element, Out, responses};

/// The envelope types of a rollout line.
const LINE_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// Whether `map` is a rollout line: a known `type` around an object `payload`.
pub fn is_envelope(map: &Map) -> bool {
    str_of(map, "type").is_some_and(|ty| LINE_TYPES.contains(&ty))
        && matches!(map.get("payload"), Some(Value::Object(_)))
}

pub(super) struct Session {
    name: Option<String>,
    pairer: Pairer,
    /// Whether a record was read into it yet (a `session_meta` before any names it).
    used: bool,
}

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    let answered = answered(elements.iter().map(|e| e.value));
    let mut reader = Reader::new(Answered::Ids(Rc::new(answered)));
    for element in elements {
        reader.element(element, out);
    }
    reader.finish(out);
}

/// The call ids that the output items of rollout `lines` answer: a built-in call
/// answered by one is paired with it ([`responses::answered`]).
pub(super) fn answered<'v>(lines: impl Iterator<Item = &'v Value>) -> FxHashSet<String> {
    responses::answered(items(lines))
}

/// The ids of the built-in calls of rollout `lines` ([`responses::builtin_calls`]).
pub(super) fn builtin_calls<'v>(lines: impl Iterator<Item = &'v Value>) -> FxHashSet<String> {
    responses::builtin_calls(items(lines))
}

/// The Responses items of rollout `lines`: the payloads of its `response_item` lines.
fn items<'v>(lines: impl Iterator<Item = &'v Value>) -> impl Iterator<Item = &'v Value> {
    lines.filter_map(|line| {
        let map = line.as_object()?;
        (str_of(map, "type") == Some("response_item"))
            .then(|| map.get("payload"))
            .flatten()
    })
}

/// A rollout read one line at a time. Its records are given session by session, in
/// the order the sessions start ([`Threads`]).
pub(super) struct Reader {
    /// The built-in calls output items answer, over the whole rollout.
    answered: Answered,
    sessions: Threads<Session>,
    by_name: FxHashMap<String, usize>,
    current: usize,
}

impl threads::Thread for Session {
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    fn pairer(&mut self) -> &mut Pairer {
        &mut self.pairer
    }
}

impl Reader {
    /// A reader of a rollout whose output items answer the calls `answered` names.
    pub(super) fn new(answered: Answered) -> Reader {
        let mut sessions = Threads::default();
        sessions.push(Session {
            name: None,
            pairer: Pairer::new(responses::WHY_MISSING),
            used: false,
        });
        Reader {
            answered,
            sessions,
            by_name: FxHashMap::default(),
            current: 0,
        }
    }

    /// Reads one line, handing on what is final.
    pub(super) fn element(&mut self, element: &Element<'_>, out: &mut Out) {
        let read = self.read(element, out);
        self.sessions.after(read, element.site.doc, out);
    }

    /// The sessions, to make this a first pass, tell it where sessions end, or look
    /// ahead for them.
    pub(super) fn threads(&mut self) -> &mut Threads<Session> {
        &mut self.sessions
    }

    /// A reader of the rest of the rollout like this one, for a look ahead: it reads each
    /// line into the session this one would, whose pairer notes what its results name
    /// ([`Reader::named`]).
    pub(super) fn naming(&self) -> Reader {
        Reader {
            answered: self.answered.clone(),
            sessions: self.sessions.naming(|session| Session {
                name: session.name.clone(),
                pairer: session.pairer.naming(),
                used: session.used,
            }),
            by_name: self.by_name.clone(),
            current: self.current,
        }
    }

    /// Reads one line for a look ahead ([`Reader::naming`]): the session it is of, and
    /// what its results name; nothing is held.
    pub(super) fn named(
        &mut self,
        element: &Element<'_>,
        out: &mut Out,
    ) -> Option<(usize, Vec<Named>)> {
        let read = self.read(element, out);
        self.sessions.take_named(read)
    }

    /// Reads one line; the session it read a record into, if any.
    fn read(&mut self, element: &Element<'_>, out: &mut Out) -> Option<usize> {
        let sessions = &mut self.sessions;
        let site = &element.site;
        let Value::Object(map) = element.value else {
            out.placed(
                site,
                format!(
                    "rollout line is {}, expected an object",
                    describe(element.value)
                ),
            );
            return None;
        };
        let (Some(ty), Some(payload)) = (str_of(map, "type"), map.get("payload")) else {
            out.placed(site, "rollout line needs a string `type` and a `payload`");
            return None;
        };
        match ty {
            "session_meta" => {
                let Some(id) = payload.get("id").and_then(id_text) else {
                    out.placed(&site.child("payload"), "`session_meta` has no `id`");
                    return None;
                };
                let current = self.current;
                let open = sessions.get_mut(current);
                self.current = match self.by_name.get(&id) {
                    Some(&index) => index,
                    None if !open.used && open.name.is_none() => {
                        open.name = Some(id.clone());
                        self.by_name.insert(id, current);
                        current
                    }
                    None => {
                        let index = sessions.push(Session {
                            name: Some(id.clone()),
                            pairer: Pairer::new(responses::WHY_MISSING),
                            used: false,
                        });
                        self.by_name.insert(id, index);
                        index
                    }
                };
                None
            }
            "response_item" => {
                let session = sessions.get_mut(self.current);
                session.used = true;
                let mut stamp = Map::new();
                if let Some(time) = map.get("timestamp").filter(|t| !t.is_null()) {
                    stamp.insert("time".into(), time.clone());
                }
                session.pairer.set_stamp(stamp, Map::new());
                let item = Element {
                    value: payload,
                    site: site.child("payload"),
                };
                let here = self.answered.at(out.line());
                responses::item(&item, here, &mut session.pairer);
                Some(self.current)
            }
            // Terminal UI events, turn settings, compaction summaries.
            _ => None,
        }
    }

    /// Hands on the rest, session by session.
    pub(super) fn finish(self, out: &mut Out) {
        self.sessions.finish(out);
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    fn line(ty: &str, payload: Value) -> Value {
        json!({"timestamp": "2025-10-29T00:59:38.317Z", "type": ty, "payload": payload})
    }

    #[test]
    fn response_items_are_read_as_responses_items() {
        let have = read_ok(
            Format::Codex,
            json!([
                line("session_meta", json!({"id": "019a2d7a", "cwd": "/repo"})),
                line(
                    "response_item",
                    json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]})
                ),
                line(
                    "event_msg",
                    json!({"type": "user_message", "message": "fix it"})
                ),
                line("turn_context", json!({"model": "gpt-5-codex"})),
                line(
                    "response_item",
                    json!({"type": "reasoning", "summary": [], "encrypted_content": "…"})
                ),
                line(
                    "response_item",
                    json!({"type": "function_call", "name": "shell", "call_id": "call_1", "arguments": "{\"command\": [\"bash\", \"-lc\", \"make\"]}"})
                ),
                line(
                    "response_item",
                    json!({"type": "function_call_output", "call_id": "call_1", "output": "{\"output\": \"ok\", \"metadata\": {\"exit_code\": 2}}"})
                ),
                line(
                    "response_item",
                    json!({"type": "local_shell_call", "call_id": "call_2", "status": "completed", "action": {"type": "exec", "command": ["ls"]}})
                ),
                line(
                    "response_item",
                    json!({"type": "function_call_output", "call_id": "call_2", "output": "a\nb"})
                ),
                line(
                    "response_item",
                    json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": "call_3", "input": "*** Begin Patch"})
                ),
                line(
                    "response_item",
                    json!({"type": "custom_tool_call_output", "call_id": "call_3", "output": "Done"})
                ),
            ]),
        );
        let summary: Vec<(&str, &str)> = have
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap(),
                    r.get("tool").and_then(Value::as_str).unwrap_or(""),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("message", ""),
                ("call", "shell"),
                ("result", "shell"),
                ("call", "local_shell"),
                ("result", "local_shell"),
                ("call", "apply_patch"),
                ("result", "apply_patch"),
            ]
        );
        assert_eq!(have[1]["args"]["command"][2], "make");
        assert_eq!(have[2]["status"], "ok");
        assert_eq!(have[2]["output"]["metadata"]["exit_code"], 2);
        assert_eq!(have[3]["args"]["command"], json!(["ls"]));
        assert_eq!(have[4]["output"], "a\nb");
        assert!(have.iter().all(|r| r["time"] == "2025-10-29T00:59:38.317Z"));
        // One session: no trace field.
        assert!(have.iter().all(|r| r.get("trace").is_none()));
    }

    #[test]
    fn each_session_is_a_trace() {
        let have = read_ok(
            Format::Codex,
            json!([
                line("session_meta", json!({"id": "s1"})),
                line(
                    "response_item",
                    json!({"type": "message", "role": "user", "content": "a"})
                ),
                line("session_meta", json!({"id": "s2"})),
                line(
                    "response_item",
                    json!({"type": "message", "role": "user", "content": "b"})
                ),
            ]),
        );
        let traces: Vec<&str> = have.iter().map(|r| r["trace"].as_str().unwrap()).collect();
        assert_eq!(traces, ["s1", "s2"]);
    }

    #[test]
    fn bad_lines_are_located_problems() {
        let (records, problems) = read_as(
            Format::Codex,
            json!([
                line("session_meta", json!({"cwd": "/"})),
                {"type": "response_item"},
                line("response_item", json!({"type": "function_call", "call_id": "c"})),
            ]),
        );
        assert!(records.is_empty());
        assert_eq!(
            problems,
            [
                (
                    "/0/payload".to_string(),
                    "`session_meta` has no `id`".to_string()
                ),
                (
                    "/1".to_string(),
                    "rollout line needs a string `type` and a `payload`".to_string()
                ),
                (
                    "/2/payload".to_string(),
                    "`function_call` item has no `name`".to_string()
                ),
            ]
        );
    }
}
