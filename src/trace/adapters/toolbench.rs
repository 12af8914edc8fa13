//! ToolBench answers read from their DFSDT search tree (`tree.tree` of an answer file).
//!
//! ToolBench's depth-first search writes every node it expanded: `Thought`, `Action`
//! (its `description` is the tool's name) and `Action Input` (its `description` is the
//! arguments, a JSON string). The environment's reply is not a node of its own: it is
//! the `observation` text and the `observation_code` of the `Action Input` node the
//! call was run for. A node's `children` are the continuations the search tried from
//! there; the root (depth 0, the empty start state) holds nothing but its children.
//!
//! - Each root-to-leaf branch is one trace, named by the JSON pointer of its leaf: a
//!   branch is exactly the conversation the model had at that leaf (ToolBench builds a
//!   node's messages from its ancestors only), so a node on a shared prefix is read once
//!   in every branch through it, at its own place in the file.
//! - An `Action` and the `Action Input` after it are one call (`tool` the action,
//!   `args` the parsed input), located at the `Action` node; the observation is its
//!   result, located at the `Action Input` node. There are no call ids: both get a
//!   synthetic one and `paired_by: "position"`.
//! - `observation_code` is a structured signal and sets `status`: 0 (a normal
//!   response), 3 (`Finish` with a final answer, accepted) and 4 (`Finish` giving up,
//!   accepted) are `"ok"`, with the observation as `output`; any other integer is
//!   `"error"`, with `error: {"observation_code", "reason", "observation"}`; a code
//!   that is not an integer, or an observation without one, is `"invalid"`. The
//!   observation text is in `output_text` / `error_text` and, when it is JSON of an
//!   object or array (ToolBench's `{"error": …, "response": …}`), decoded. Every
//!   result keeps `observation_code`.
//! - `Thought` nodes (and any other node with text, such as `Reflection`) are the
//!   model's own words: `message` records with role `assistant` and their `node_type`.
//! - An `Action` that no `Action Input` follows is a call without arguments or result;
//!   an `Action Input` that was never run has no result. Either call gets its
//!   `missing` result where the branch moves on, or at the end of the branch.
//!
//! Answers that also hold `answer_generation.train_messages` are read from those
//! messages unless `--format toolbench` asks for the tree (see `is_answer_with_messages`).

use serde_json::Value;

use super::shared::{Map, Pairer, Target, describe, fields, put, put_args, put_content, str_of};
use super::{Element, Out, Site};

/// The node types ToolBench's tree writer uses.
const NODE_TYPES: &[&str] = &[
    "Action Input",
    "Action",
    "Thought",
    "Final Answer",
    "Reflection",
];

/// What ToolBench's environment meant by each error code, named after the error texts
/// its server sends (7 is `Unauthorized error...`, 8 `Unsubscribed error...`, whatever
/// the comments beside them say).
const REASONS: &[(i64, &str)] = &[
    (1, "no_such_function"),
    (2, "invalid_input"),
    (5, "timeout"),
    (6, "api_not_working"),
    (7, "unauthorized"),
    (8, "unsubscribed"),
    (9, "too_many_requests"),
    (10, "rate_limit"),
    (11, "error_in_response"),
    (12, "request_error"),
];

/// Codes of a reply that did what was asked: a normal response, and `Finish`'s
/// acknowledgements of a final answer (3) and of giving up to restart (4). The agent's
/// own decision to finish or give up is not a tool failure.
const OK_CODES: &[i64] = &[0, 3, 4];

/// Whether `map` is the root node of a ToolBench search tree.
pub fn is_tree(map: &Map) -> bool {
    matches!(map.get("children"), Some(Value::Array(_)))
        && str_of(map, "node_type").is_some_and(|ty| NODE_TYPES.contains(&ty))
}

/// Whether `map` is a ToolBench answer whose `train_messages` hold the transcript.
/// Detection reads those messages, as it always has, and leaves its `tree` alone; the
/// tree is read for answers without them, or when `--format toolbench` says so.
pub fn is_answer_with_messages(map: &Map) -> bool {
    let holds_tree = map
        .get("tree")
        .and_then(Value::as_object)
        .and_then(|wrapper| wrapper.get("tree"))
        .and_then(Value::as_object)
        .is_some_and(is_tree);
    let holds_messages = map
        .get("answer_generation")
        .and_then(|answer| answer.get("train_messages"))
        .is_some_and(|lists| matches!(lists, Value::Array(lists) if !lists.is_empty()));
    holds_tree && holds_messages
}

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    for element in elements {
        let Value::Object(root) = element.value else {
            out.problem(
                &element.site,
                format!(
                    "search tree is {}, expected an object",
                    describe(element.value)
                ),
            );
            continue;
        };
        let mut walk = Walk {
            out: &mut *out,
            path: Vec::new(),
        };
        // The root is the start state: no node type of its own, no observation.
        if let Some(children) = walk.children(root, &element.site) {
            for (i, child) in children.iter().enumerate() {
                walk.node(child, element.site.child("children").child(i));
            }
        }
    }
}

/// What one node gives each branch through it.
enum Step {
    /// Text of the model's: a `message` record.
    Message(Site, Map),
    /// A call of this tool, whose arguments the next `Action Input` gives.
    Action(Site, String),
    /// A call's arguments (the node's `description`) and, when it was run, its result.
    Input {
        site: Site,
        args: Option<Value>,
        result: Option<Map>,
    },
    /// A node that gives nothing: malformed (and reported), or empty.
    Nothing,
}

struct Walk<'o> {
    out: &'o mut Out,
    /// The steps from the root's child to the node being walked.
    path: Vec<Step>,
}

impl Walk<'_> {
    /// Reads a node and its subtree. Recursion is bounded by serde_json's nesting limit
    /// (128 levels, two per tree level).
    fn node(&mut self, value: &Value, site: Site) {
        let Value::Object(map) = value else {
            self.out.problem(
                &site,
                format!("tree node is {}, expected an object", describe(value)),
            );
            self.path.push(Step::Nothing);
            self.branch(&site);
            self.path.pop();
            return;
        };
        let step = self.step(map, &site);
        self.path.push(step);
        match self.children(map, &site) {
            Some(children) if !children.is_empty() => {
                for (i, child) in children.iter().enumerate() {
                    self.node(child, site.child("children").child(i));
                }
            }
            _ => self.branch(&site),
        }
        self.path.pop();
    }

    /// A node's `children`, reporting a value that is not a list (the node is then a
    /// leaf). Absent children make a leaf too.
    fn children<'v>(&mut self, map: &'v Map, site: &Site) -> Option<&'v [Value]> {
        match map.get("children") {
            None | Some(Value::Null) => None,
            Some(Value::Array(children)) => Some(children),
            Some(other) => {
                self.out.problem(
                    &site.child("children"),
                    format!("field `children` is {}, expected an array", describe(other)),
                );
                None
            }
        }
    }

    /// What a node gives, reporting what is wrong with it (once, however many branches
    /// go through it).
    fn step(&mut self, map: &Map, site: &Site) -> Step {
        let node_type = match map.get("node_type") {
            Some(Value::String(ty)) => ty.as_str(),
            Some(other) => {
                self.out.problem(
                    site,
                    format!(
                        "field `node_type` is {}, expected a string",
                        describe(other)
                    ),
                );
                return Step::Nothing;
            }
            None => {
                self.out.problem(site, "tree node has no `node_type`");
                return Step::Nothing;
            }
        };
        match node_type {
            "Action" => match map.get("description") {
                Some(Value::String(tool)) if !tool.is_empty() => {
                    Step::Action(site.clone(), tool.clone())
                }
                other => {
                    let what = match other {
                        None => "absent",
                        Some(Value::String(_)) => "empty",
                        Some(value) => describe(value),
                    };
                    self.out.problem(
                        site,
                        format!("`Action` node's `description` (the tool) is {what}, expected a tool name"),
                    );
                    Step::Nothing
                }
            },
            "Action Input" => {
                match self.path.last() {
                    Some(Step::Action(..)) => {}
                    // The action was malformed, and already reported.
                    Some(Step::Nothing) => return Step::Nothing,
                    _ => {
                        self.out
                            .problem(site, "`Action Input` node does not follow an `Action` node");
                        return Step::Nothing;
                    }
                }
                Step::Input {
                    site: site.clone(),
                    args: map.get("description").cloned(),
                    result: result(map),
                }
            }
            _ => match str_of(map, "description").filter(|text| !text.is_empty()) {
                Some(text) => {
                    let mut record = fields("message");
                    put(&mut record, "role", "assistant");
                    put(&mut record, "text", text);
                    put(&mut record, "node_type", node_type);
                    Step::Message(site.clone(), record)
                }
                None => Step::Nothing,
            },
        }
    }

    /// Emits the branch ending at `leaf`, as one trace.
    fn branch(&mut self, leaf: &Site) {
        let mut pairer = Pairer::new("the search went on without an observation");
        // An action waiting for its input.
        let mut action: Option<(&Site, &str)> = None;
        let call = |pairer: &mut Pairer, (site, tool): (&Site, &str), args: Option<&Value>| {
            let mut record = fields("call");
            put(&mut record, "tool", tool);
            put_args(&mut record, args);
            pairer.call(site.clone(), record, None);
        };
        for step in &self.path {
            match step {
                Step::Message(site, record) => {
                    if let Some(open) = action.take() {
                        call(&mut pairer, open, None);
                    }
                    pairer.boundary();
                    pairer.record(site.clone(), record.clone());
                }
                Step::Action(site, tool) => {
                    if let Some(open) = action.take() {
                        call(&mut pairer, open, None);
                    }
                    pairer.boundary();
                    action = Some((site, tool));
                }
                Step::Input { site, args, result } => {
                    if let Some(open) = action.take() {
                        call(&mut pairer, open, args.as_ref());
                        if let Some(result) = result {
                            let tool = Some(open.1.to_string());
                            pairer.result(site.clone(), result.clone(), Target::Position(tool));
                        }
                    }
                }
                Step::Nothing => {}
            }
        }
        if let Some(open) = action.take() {
            call(&mut pairer, open, None);
        }
        pairer.finish_in(Some(&leaf.pointer), &mut *self.out);
    }
}

/// The result an `Action Input` node holds, if the call was run.
fn result(map: &Map) -> Option<Map> {
    let code = map.get("observation_code");
    // ToolBench leaves out an empty observation (and only an empty one): with a code,
    // an absent observation is the empty text the environment returned.
    let observation = match (map.get("observation"), code) {
        (None, None) => return None,
        (Some(observation), _) => observation.clone(),
        (None, Some(_)) => Value::String(String::new()),
    };
    let mut record = fields("result");
    let number = match code {
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(n.as_i64()),
        _ => None,
    };
    match (code, number) {
        (Some(code), Some(number)) => {
            record.insert("observation_code".into(), code.clone());
            if number.is_some_and(|n| OK_CODES.contains(&n)) {
                put(&mut record, "status", "ok");
                put_content(&mut record, "output", Some(&observation));
            } else {
                put(&mut record, "status", "error");
                let mut error = Map::new();
                error.insert("observation_code".into(), code.clone());
                if let Some((_, reason)) = REASONS.iter().find(|(c, _)| Some(*c) == number) {
                    put(&mut error, "reason", *reason);
                }
                // The observation, decoded as every text output is, beside the code.
                let mut decoded = Map::new();
                put_content(&mut decoded, "observation", Some(&observation));
                if let Some(value) = decoded.remove("observation") {
                    error.insert("observation".into(), value);
                }
                put(&mut record, "error", error);
                if let Some(text) = decoded.remove("observation_text") {
                    record.insert("error_text".into(), text);
                }
            }
        }
        (code, _) => {
            put(&mut record, "status", "invalid");
            let reason = match code {
                Some(code) => {
                    record.insert("observation_code".into(), code.clone());
                    let what = match code {
                        Value::Number(n) => n.to_string(),
                        other => describe(other).to_string(),
                    };
                    format!("`observation_code` is {what}, expected an integer")
                }
                None => "observation has no `observation_code`".to_string(),
            };
            put(&mut record, "invalid_reason", reason);
            put_content(&mut record, "output", Some(&observation));
        }
    }
    Some(record)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    /// A node of `node_type` with `description` and `children`.
    fn node(node_type: &str, description: &str, children: Vec<Value>) -> Value {
        json!({"node_type": node_type, "description": description, "children": children})
    }

    /// An `Action Input` node that was run: `observation` and its code.
    fn input(args: &str, observation: &str, code: Value, children: Vec<Value>) -> Value {
        let mut value = node("Action Input", args, children);
        value["observation"] = json!(observation);
        value["observation_code"] = code;
        value
    }

    /// An answer holding `children` under the root of its tree.
    fn answer(children: Vec<Value>) -> Value {
        json!({
            "win": false,
            "answer_generation": {"valid_data": false, "final_answer": "", "chain": []},
            "tree": {"size": 1, "max_length": 1, "tree": node("Action Input", "", children)}
        })
    }

    fn call_then(tool: &str, run: Value) -> Value {
        node("Action", tool, vec![run])
    }

    #[track_caller]
    fn records(value: Value) -> Vec<Value> {
        read_ok(Format::ToolBench, value)
    }

    fn summary(records: &[Value]) -> Vec<(String, String, String, String)> {
        records
            .iter()
            .map(|r| {
                let text = |key: &str| r[key].as_str().unwrap_or_default().to_string();
                (text("trace"), text("kind"), text("tool"), text("status"))
            })
            .collect()
    }

    #[test]
    fn an_action_and_its_input_are_a_call_and_the_observation_its_result() {
        let have = records(answer(vec![node(
            "Thought",
            "look it up",
            vec![call_then(
                "search_for_news",
                input(
                    "{\n  \"q\": \"rust\"\n}",
                    "{\"error\": \"\", \"response\": \"[]\"}",
                    json!(0),
                    vec![],
                ),
            )],
        )]));
        assert_eq!(have.len(), 3, "{have:#?}");
        assert_eq!(have[0]["kind"], "message");
        assert_eq!(have[0]["role"], "assistant");
        assert_eq!(have[0]["text"], "look it up");
        assert_eq!(have[0]["node_type"], "Thought");
        assert_eq!(have[1]["kind"], "call");
        assert_eq!(have[1]["tool"], "search_for_news");
        assert_eq!(have[1]["args"], json!({"q": "rust"}));
        assert_eq!(have[1]["call_id"], "pos-1");
        assert_eq!(have[1]["paired_by"], "position");
        assert_eq!(have[2]["kind"], "result");
        assert_eq!(have[2]["tool"], "search_for_news");
        assert_eq!(have[2]["call_id"], "pos-1");
        assert_eq!(have[2]["paired_by"], "position");
        assert_eq!(have[2]["status"], "ok");
        assert_eq!(have[2]["observation_code"], 0);
        assert_eq!(have[2]["output"], json!({"error": "", "response": "[]"}));
        assert_eq!(
            have[2]["output_text"],
            "{\"error\": \"\", \"response\": \"[]\"}"
        );
        assert!(have[2].get("error").is_none());
    }

    #[test]
    fn each_branch_is_a_trace_named_by_its_leaf() {
        // One call, then two continuations: a retry and a give-up.
        let have = records(answer(vec![call_then(
            "create",
            input(
                "{}",
                "{\"error\": \"Timeout error...\", \"response\": \"\"}",
                json!(5),
                vec![
                    call_then("create", input("{}", "{\"error\": \"\"}", json!(0), vec![])),
                    call_then(
                        "Finish",
                        input(
                            "{\"return_type\": \"give_up_and_restart\"}",
                            "{\"response\":\"chose to give up and restart\"}",
                            json!(4),
                            vec![],
                        ),
                    ),
                ],
            ),
        )]));
        let first = "/tree/tree/children/0/children/0/children/0/children/0";
        let second = "/tree/tree/children/0/children/0/children/1/children/0";
        let row = |trace: &str, kind: &str, tool: &str, status: &str| {
            (trace.into(), kind.into(), tool.into(), status.into())
        };
        assert_eq!(
            summary(&have),
            [
                row(first, "call", "create", ""),
                row(first, "result", "create", "error"),
                row(first, "call", "create", ""),
                row(first, "result", "create", "ok"),
                row(second, "call", "create", ""),
                row(second, "result", "create", "error"),
                row(second, "call", "Finish", ""),
                row(second, "result", "Finish", "ok"),
            ]
        );
        // Ids restart in each trace: the shared first call is `pos-1` in both.
        assert_eq!(have[4]["call_id"], "pos-1");
        assert_eq!(have[7]["call_id"], "pos-2");
        assert_eq!(have[7]["observation_code"], 4);
        // Records are numbered within their own trace.
        assert_eq!(have[4]["seq"], 0);
    }

    #[test]
    fn status_comes_from_the_observation_code() {
        let timeout = "{\"error\": \"Timeout error...HTTPConnectionPool(host='172.19.0.1', port=7890): Read timed out. (read timeout=30)\", \"response\": \"\"}";
        for (code, status, reason) in [
            (json!(0), "ok", None),
            (json!(3), "ok", None),
            (json!(4), "ok", None),
            (json!(1), "error", Some("no_such_function")),
            (json!(5), "error", Some("timeout")),
            (json!(6), "error", Some("api_not_working")),
            (json!(7), "error", Some("unauthorized")),
            (json!(8), "error", Some("unsubscribed")),
            (json!(9), "error", Some("too_many_requests")),
            (json!(10), "error", Some("rate_limit")),
            (json!(11), "error", Some("error_in_response")),
            (json!(12), "error", Some("request_error")),
            (json!(42), "error", None),
            (json!("5"), "invalid", None),
            (json!(5.0), "invalid", None),
            (json!(true), "invalid", None),
            (json!(null), "invalid", None),
        ] {
            let have = records(answer(vec![call_then(
                "cep",
                input("{}", timeout, code.clone(), vec![]),
            )]));
            let result = &have[1];
            assert_eq!(result["status"], status, "{code}");
            assert_eq!(result["observation_code"], code, "{code}");
            match status {
                "ok" => {
                    assert_eq!(result["output"]["error"].as_str().unwrap()[..7], *"Timeout");
                    assert!(result.get("error").is_none(), "{code}");
                }
                "error" => {
                    assert!(result.get("output").is_none(), "{code}");
                    assert_eq!(result["error"]["observation_code"], code);
                    assert_eq!(result["error"]["reason"].as_str(), reason, "{code}");
                    assert_eq!(result["error"]["observation"]["response"], "");
                    assert!(
                        result["error"]["observation"]["error"]
                            .as_str()
                            .unwrap()
                            .starts_with("Timeout error")
                    );
                    assert_eq!(result["error_text"], timeout);
                }
                _ => {
                    assert!(
                        result["invalid_reason"]
                            .as_str()
                            .unwrap()
                            .contains("expected an integer"),
                        "{code}"
                    );
                    assert_eq!(result["output_text"], timeout);
                }
            }
        }
    }

    #[test]
    fn observations_keep_falsy_values_and_text() {
        // An absent observation with a code is the empty text ToolBench leaves out.
        let mut empty = input("{}", "", json!(0), vec![]);
        empty.as_object_mut().unwrap().remove("observation");
        for (run, output) in [
            (empty, json!("")),
            (input("{}", "None", json!(0), vec![]), json!("None")),
            (input("{}", "[]", json!(0), vec![]), json!([])),
            // ToolBench's own malformed JSON stays text.
            (
                input(
                    "{}",
                    "{error:\"must have \"return_type\"\"}",
                    json!(0),
                    vec![],
                ),
                json!("{error:\"must have \"return_type\"\"}"),
            ),
        ] {
            let have = records(answer(vec![call_then("t", run)]));
            assert_eq!(have[1]["status"], "ok");
            assert_eq!(have[1]["output"], output);
        }
        let have = records(answer(vec![call_then(
            "t",
            input("{}", "plain text", json!(2), vec![]),
        )]));
        assert_eq!(have[1]["error"]["observation"], "plain text");
        assert_eq!(have[1]["error"]["reason"], "invalid_input");
        assert_eq!(have[1]["error_text"], "plain text");
        // An observation without a code is a reply that cannot be classified.
        let mut uncoded = input("{}", "x", json!(0), vec![]);
        uncoded.as_object_mut().unwrap().remove("observation_code");
        let have = records(answer(vec![call_then("t", uncoded)]));
        assert_eq!(have[1]["status"], "invalid");
        assert_eq!(
            have[1]["invalid_reason"],
            "observation has no `observation_code`"
        );
    }

    #[test]
    fn unparsable_arguments_are_kept_and_flagged() {
        let have = records(answer(vec![call_then(
            "t",
            input("{\"q\": ", "{}", json!(0), vec![]),
        )]));
        assert_eq!(have[0]["args"], "{\"q\": ");
        assert!(
            have[0]["args_error"]
                .as_str()
                .unwrap()
                .contains("not valid JSON")
        );
    }

    #[test]
    fn calls_never_run_are_missing_where_the_branch_moves_on() {
        // An action with no input, then a thought; an input never run, at the end.
        let have = records(answer(vec![node(
            "Action",
            "create",
            vec![node(
                "Thought",
                "no input given",
                vec![call_then("lookup", node("Action Input", "{}", vec![]))],
            )],
        )]));
        let statuses: Vec<(&str, &str)> = have
            .iter()
            .map(|r| {
                (
                    r["kind"].as_str().unwrap(),
                    r["status"].as_str().unwrap_or_default(),
                )
            })
            .collect();
        assert_eq!(
            statuses,
            [
                ("call", ""),
                ("result", "missing"),
                ("message", ""),
                ("call", "")
            ]
        );
        assert!(have[0].get("args").is_none());
        assert_eq!(have[1]["tool"], "create");
        assert_eq!(have[1]["call_id"], "pos-1");
        assert_eq!(have[3]["args"], json!({}));
    }

    #[test]
    fn malformed_nodes_are_reported_once_with_their_pointer_and_the_rest_read() {
        let (have, problems) = read_as(
            Format::ToolBench,
            answer(vec![
                // A node that is not an object.
                json!(42),
                // An action with no tool: reported once; its input is not reported
                // again, and both branches under it are still read.
                json!({"node_type": "Action", "description": 7, "children": [
                    input("{}", "{}", json!(0), vec![
                        call_then("a", input("{}", "{}", json!(0), vec![])),
                        call_then("b", input("{}", "{}", json!(0), vec![])),
                    ]),
                ]}),
                // An input with no action before it, and children that are no list.
                json!({"node_type": "Thought", "description": "t", "children": [
                    input("{}", "{}", json!(0), vec![]),
                    {"node_type": "Action", "description": "c", "children": "none"},
                    {"description": "no type", "children": []},
                ]}),
            ]),
        );
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/tree/tree/children/0",
                "/tree/tree/children/1",
                "/tree/tree/children/2/children/0",
                "/tree/tree/children/2/children/1/children",
                "/tree/tree/children/2/children/2",
            ],
            "{problems:#?}"
        );
        assert!(problems[0].1.contains("a number"), "{problems:#?}");
        assert!(problems[1].1.contains("a number"), "{problems:#?}");
        assert!(
            problems[2].1.contains("does not follow an `Action`"),
            "{problems:#?}"
        );
        let tools: Vec<(&str, &str)> = have
            .iter()
            .filter(|r| r["kind"] == "call")
            .map(|r| (r["trace"].as_str().unwrap(), r["tool"].as_str().unwrap()))
            .collect();
        assert_eq!(
            tools,
            [
                (
                    "/tree/tree/children/1/children/0/children/0/children/0",
                    "a"
                ),
                (
                    "/tree/tree/children/1/children/0/children/1/children/0",
                    "b"
                ),
                ("/tree/tree/children/2/children/1", "c"),
            ]
        );
    }

    #[test]
    fn detection_finds_tree_only_answers_and_leaves_train_messages_answers_alone() {
        use crate::trace::adapters::{InputOptions, read_text};

        let tree_only = answer(vec![call_then("t", input("{}", "{}", json!(0), vec![]))]);
        let reading = read_text(&tree_only.to_string(), &InputOptions::default());
        assert_eq!(reading.detected.formats, [Format::ToolBench]);
        assert_eq!(reading.traces, 1);

        let mut with_messages = tree_only.clone();
        with_messages["answer_generation"]["train_messages"] = json!([[
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": null, "function_call": {"name": "t", "arguments": "{}"}}
        ]]);
        let reading = read_text(&with_messages.to_string(), &InputOptions::default());
        assert_eq!(reading.detected.formats, [Format::OpenAi]);
        // `--format toolbench` reads the tree of any answer.
        let options = InputOptions {
            format: Some(Format::ToolBench),
            select: None,
        };
        let reading = read_text(&with_messages.to_string(), &options);
        assert_eq!(reading.detected.formats, [Format::ToolBench]);
        // Empty `train_messages` hold nothing: the tree is read.
        with_messages["answer_generation"]["train_messages"] = json!([]);
        let reading = read_text(&with_messages.to_string(), &InputOptions::default());
        assert_eq!(reading.detected.formats, [Format::ToolBench]);
    }
}
