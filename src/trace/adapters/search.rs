//! Transcript search: where in a JSON document the transcripts are. A message list at
//! the root, an object holding one (`messages`, `steps`, …), an array of runs each
//! holding one; an OTLP export or a ToolBench search tree is taken whole. Each list
//! found is named by its JSON pointer and its run's id field.

use serde_json::Value;

use super::detect::{Signal, element_like, list_format, signal};
use super::shared::{self, Map, str_of};
use super::{Element, Format, Selector, Site, otel, toolbench};
use crate::trace::json_index::child_pointer;

/// Whether the search of an object, with `--format`'s `format`, finds a transcript
/// when one of its array members is one: it searches its members, or stops at it
/// having found one (an OTLP export, an ATIF trajectory, a ToolBench search tree with
/// no format given), but for a ToolBench search tree with another format given, in
/// which it finds nothing. Told from whether the object has a `children` member (a
/// tree has).
pub(super) fn finds_with_a_list(format: Option<Format>, children: bool) -> bool {
    format.is_none_or(|format| format == Format::ToolBench) || !children
}

/// A transcript found in the input.
pub(super) struct Found<'v> {
    pub(super) format: Format,
    pub(super) elements: Vec<Element<'v>>,
    /// Its name in reports: where it is, and its run's id.
    pub(super) name: String,
}

/// Whether a document holds a transcript somewhere: what detection tells a JSON Lines
/// file of runs from native records by (it reads this from a sketch of the line,
/// `sketch::Sketch::found`; its tests compare the two).
#[cfg(test)]
pub(super) fn has_transcripts(value: &Value) -> bool {
    finds(value, None, 0)
}

/// Whether the search of `value`, met `depth` levels down in a document (0: the
/// document itself), finds a transcript (of `format`, when given).
pub(super) fn finds(value: &Value, format: Option<Format>, depth: usize) -> bool {
    let mut found = Vec::new();
    Search {
        doc: 0,
        format,
        prefix: "",
        found: &mut found,
    }
    .find(value, "", None, depth);
    !found.is_empty()
}

/// Every transcript a search finds in `value`, read as the document at index 0.
#[cfg(test)]
fn search_all(value: &Value) -> Vec<Found<'_>> {
    let mut found = Vec::new();
    Search {
        doc: 0,
        format: None,
        prefix: "",
        found: &mut found,
    }
    .find(value, "", None, 0);
    found
}

/// Keys that name a run, tried in this order.
pub(super) const ID_KEYS: &[&str] = &[
    "id",
    "task_id",
    "run_id",
    "session_id",
    "sessionId",
    "conversation_id",
    "thread_id",
    "trace_id",
    "case_id",
    "sample_id",
    "episode_id",
    "user_task_id",
    "query_id",
];

/// How deep the search for transcripts goes.
pub(super) const SEARCH_DEPTH: usize = 12;

pub(super) struct Search<'s, 'v> {
    pub(super) doc: usize,
    pub(super) format: Option<Format>,
    pub(super) prefix: &'s str,
    pub(super) found: &'s mut Vec<Found<'v>>,
}

impl<'v> Search<'_, 'v> {
    /// Searches what `selector` selects in `value`, a whole document, as
    /// [`Search::selected`] does (the object holding a selected list names its run);
    /// returns whether it selected anything.
    pub(super) fn select_in(&mut self, selector: &Selector, value: &'v Value) -> bool {
        let selected = selector.select(value);
        for (pointer, selected_value) in &selected {
            let parent = pointer
                .rfind('/')
                .and_then(|end| value.pointer(&pointer[..end]))
                .and_then(Value::as_object);
            self.selected(selected_value, pointer, parent);
        }
        !selected.is_empty()
    }

    /// What `--select` chose: a list is a transcript; anything else is searched.
    pub(super) fn selected(&mut self, value: &'v Value, pointer: &str, parent: Option<&'v Map>) {
        if let Value::Array(items) = value {
            let values: Vec<&Value> = items.iter().collect();
            if let Some(format) = list_format(&values, self.format) {
                return self.push_list(format, items, pointer, parent);
            }
        }
        self.find(value, pointer, parent, 0);
    }

    pub(super) fn find(
        &mut self,
        value: &'v Value,
        pointer: &str,
        parent: Option<&'v Map>,
        depth: usize,
    ) {
        if depth > SEARCH_DEPTH {
            return;
        }
        match value {
            Value::Object(map) => {
                let wants = |format: Format| self.format.is_none_or(|f| f == format);
                if otel::is_export(map) && wants(Format::Otel) {
                    let element = self.element(value, pointer);
                    self.found.push(Found {
                        format: Format::Otel,
                        elements: vec![element],
                        name: String::new(),
                    });
                    return;
                }
                if toolbench::is_tree(map) {
                    // The root of a ToolBench search tree: read whole by its adapter,
                    // which names each branch by its leaf's pointer.
                    if wants(Format::ToolBench) {
                        let element = self.element(value, pointer);
                        self.found.push(Found {
                            format: Format::ToolBench,
                            elements: vec![element],
                            name: self.prefix.to_string(),
                        });
                    }
                    return;
                }
                if let Some(steps) = atif_steps(map)
                    && wants(Format::Atif)
                {
                    let steps_pointer = child_pointer(pointer, "steps");
                    return self.push_list(Format::Atif, steps, &steps_pointer, Some(map));
                }
                if depth == 0 && element_like(value, self.format) {
                    // A document that is one message (an Anthropic response, one
                    // JSON-RPC message).
                    let values = [value];
                    if let Some(format) = list_format(&values, self.format) {
                        let element = self.element(value, pointer);
                        self.found.push(Found {
                            format,
                            elements: vec![element],
                            name: self.name(pointer, parent),
                        });
                        return;
                    }
                }
                // A ToolBench answer with `train_messages` is read from them, not from
                // its search tree, unless the tree is asked for.
                let skip_tree = self.format.is_none() && toolbench::is_answer_with_messages(map);
                for (key, child) in map {
                    if skip_tree && key == "tree" {
                        continue;
                    }
                    self.find(child, &child_pointer(pointer, key), Some(map), depth + 1);
                }
            }
            Value::Array(items) => {
                let values: Vec<&Value> = items.iter().collect();
                if let Some(format) = list_format(&values, self.format) {
                    return self.push_list(format, items, pointer, parent);
                }
                for (i, child) in items.iter().enumerate() {
                    self.find(child, &child_pointer(pointer, i), None, depth + 1);
                }
            }
            _ => {}
        }
    }

    fn element(&self, value: &'v Value, pointer: &str) -> Element<'v> {
        Element {
            value,
            site: Site::new(self.doc, pointer.to_string()),
        }
    }

    fn push_list(
        &mut self,
        format: Format,
        items: &'v [Value],
        pointer: &str,
        parent: Option<&'v Map>,
    ) {
        let elements = items
            .iter()
            .enumerate()
            .map(|(i, value)| self.element(value, &child_pointer(pointer, i)))
            .collect();
        let name = self.name(pointer, parent);
        self.found.push(Found {
            format,
            elements,
            name,
        });
    }

    fn name(&self, pointer: &str, parent: Option<&Map>) -> String {
        name(self.prefix, pointer, parent)
    }
}

/// The steps of `map`, if it is an ATIF trajectory: a `steps` list, with a
/// `schema_version` that says ATIF or a step that looks like one.
pub(super) fn atif_steps(map: &Map) -> Option<&Vec<Value>> {
    let Some(Value::Array(steps)) = map.get("steps") else {
        return None;
    };
    let atif = says_atif(map)
        || steps
            .iter()
            .any(|s| signal(s) == Signal::Strong(Format::Atif));
    atif.then_some(steps)
}

/// Whether an object's `schema_version` says it is an ATIF trajectory (else one of its
/// steps must, [`atif_steps`]).
pub(super) fn says_atif(map: &Map) -> bool {
    str_of(map, "schema_version").is_some_and(|version| version.starts_with("ATIF"))
}

/// The name of the list at `pointer`, whose parent object is `parent`, in a document
/// whose names start with `prefix`: `line 3 /runs/0/messages (task_id t-1)`.
pub(super) fn name(prefix: &str, pointer: &str, parent: Option<&Map>) -> String {
    let mut name = prefix.to_string();
    if !pointer.is_empty() {
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(pointer);
    }
    let id = parent.and_then(|map| {
        ID_KEYS.iter().find_map(|key| {
            let value = map.get(*key)?;
            shared::id_text(value).map(|id| (*key, id))
        })
    });
    if let Some((key, id)) = id {
        if !name.is_empty() {
            name.push(' ');
        }
        name.push_str(&format!("({key} {id})"));
    }
    name
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn formats_of(value: &Value) -> Vec<(Format, String, usize)> {
        search_all(value)
            .into_iter()
            .map(|f| (f.format, f.name, f.elements.len()))
            .collect()
    }

    #[test]
    fn finds_the_common_shapes() {
        let chat =
            json!([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]);
        assert_eq!(formats_of(&chat), [(Format::OpenAi, String::new(), 2)]);
        let object = json!({"model": "m", "messages": chat.clone()});
        assert_eq!(
            formats_of(&object),
            [(Format::OpenAi, "/messages".to_string(), 2)]
        );
        let runs = json!([
            {"task_id": "t-1", "traj": [{"role": "user", "content": "a"}]},
            {"task_id": 2, "traj": [{"role": "user", "content": "b"}]},
        ]);
        assert_eq!(
            formats_of(&runs),
            [
                (Format::OpenAi, "/0/traj (task_id t-1)".to_string(), 1),
                (Format::OpenAi, "/1/traj (task_id 2)".to_string(), 1)
            ]
        );
        let nested = json!({"answer": {"train": [[{"role": "system", "content": "s"}], [{"role": "user", "content": "u"}]]}});
        assert_eq!(formats_of(&nested).len(), 2);
        let anthropic = json!({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {}}]}]});
        assert_eq!(formats_of(&anthropic)[0].0, Format::Anthropic);
        let responses = json!([{"role": "user", "content": "x"}, {"type": "function_call", "call_id": "c", "name": "n", "arguments": "{}"}]);
        assert_eq!(formats_of(&responses)[0].0, Format::Responses);
        let atif = json!({"schema_version": "ATIF-v1.6", "session_id": "s", "steps": [{"step_id": 1, "source": "user", "message": "m"}]});
        assert_eq!(
            formats_of(&atif),
            [(Format::Atif, "/steps (session_id s)".to_string(), 1)]
        );
        let otlp = json!({"resourceSpans": []});
        assert_eq!(formats_of(&otlp)[0].0, Format::Otel);
        let rpc = json!([{"jsonrpc": "2.0", "id": 1, "method": "tools/call"}]);
        assert_eq!(formats_of(&rpc)[0].0, Format::Mcp);
    }

    #[test]
    fn other_json_holds_nothing() {
        for value in [
            json!({"name": "x", "values": [1, 2]}),
            json!([]),
            json!([{"a": 1}, {"b": 2}]),
            json!("text"),
            json!({"tools": [{"name": "t", "description": "d"}]}),
        ] {
            assert!(formats_of(&value).is_empty(), "{value}");
        }
    }
}
