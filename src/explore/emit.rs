//! Writers for synthetic traces: normalized records out, a trace file's text in one of
//! the formats tracegate reads.
//!
//! Each format carries less than a native record can: OpenAI Chat Completions has no
//! error field for tool results, MCP and OpenTelemetry spans carry no conversation
//! messages, a span always ends (so every call is answered). [`Format::accepts`] says
//! which records a format can express faithfully — a record it accepts reads back as
//! the same normalized record — and the synthesizer chooses among the records an event
//! admits with that in mind. A record a format cannot express is an error, never a
//! silent approximation.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use super::synth::JsonRecord;

/// A trace format that tracegate can write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Format {
    /// Native JSONL: one normalized record per line.
    Native,
    /// OpenAI Chat Completions: `{"messages": [...]}` with assistant `tool_calls` and
    /// `role: "tool"` replies.
    Openai,
    /// Anthropic Messages: `{"messages": [...]}` with `tool_use` and `tool_result`
    /// blocks.
    Anthropic,
    /// MCP: JSON-RPC `tools/call` requests and their responses, one message per line.
    Mcp,
    /// OpenTelemetry GenAI: OTLP JSON with one `execute_tool` span per call.
    Otel,
}

/// What a format cannot express, so records cannot be written in it (the message
/// names the format and the record's trouble).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Inexpressible(String);

impl Format {
    /// Every format a synthetic trace can be written in.
    pub const ALL: [Format; 5] = [
        Format::Native,
        Format::Openai,
        Format::Anthropic,
        Format::Mcp,
        Format::Otel,
    ];

    /// The name `explore --format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "native",
            Format::Openai => "openai",
            Format::Anthropic => "anthropic",
            Format::Mcp => "mcp",
            Format::Otel => "otel",
        }
    }

    /// The file extension traces of this format are written with.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Native | Format::Mcp => "jsonl",
            Format::Openai | Format::Anthropic | Format::Otel => "json",
        }
    }

    /// Whether every result must answer a call written before it (a native result may
    /// stand alone).
    pub fn results_need_calls(self) -> bool {
        self != Format::Native
    }

    /// Whether every call must be answered (a span always has an end).
    pub fn answers_every_call(self) -> bool {
        self == Format::Otel
    }

    /// Whether the format has turns: a call that no result ever answers gets its
    /// `missing` result at the next assistant message, where the reply can no longer
    /// come (OpenAI and Anthropic require it in the very next turn), not at the end.
    pub fn has_turns(self) -> bool {
        matches!(self, Format::Openai | Format::Anthropic)
    }

    /// The records a reader of this format gives for `records` as written: in a format
    /// with turns, a call that is never answered gets a `missing` result before the next
    /// assistant message (a call, or an assistant text), as the readers place it. The
    /// second value maps each index of `records` to its index in the result.
    pub fn as_read(self, records: &[JsonRecord]) -> (Vec<JsonRecord>, Vec<usize>) {
        if !self.has_turns() {
            return (records.to_vec(), (0..records.len()).collect());
        }
        let why = match self {
            Format::Anthropic => "no tool_result before the next assistant message",
            _ => "no result before the next assistant message",
        };
        let answered: Vec<String> = records
            .iter()
            .filter(|r| str_of(r, "kind") == "result")
            .map(call_id)
            .collect();
        let mut out = Vec::new();
        let mut index = Vec::new();
        let mut pending: Vec<&JsonRecord> = Vec::new();
        for record in records {
            let kind = str_of(record, "kind");
            if kind == "call" || (kind == "message" && str_of(record, "role") == "assistant") {
                for call in pending.drain(..) {
                    let mut missing = Map::new();
                    missing.insert("kind".into(), json!("result"));
                    for key in ["tool", "call_id"] {
                        if let Some(value) = call.get(key) {
                            missing.insert(key.into(), value.clone());
                        }
                    }
                    missing.insert("status".into(), json!("missing"));
                    missing.insert("synthesized".into(), json!(why));
                    out.push(missing);
                }
            }
            index.push(out.len());
            out.push(record.clone());
            if kind == "call" && !answered.contains(&call_id(record)) {
                pending.push(record);
            }
        }
        (out, index)
    }

    /// Whether the format can express `record` so that it reads back as the same
    /// normalized record; the error says what it cannot express.
    pub fn accepts(self, record: &JsonRecord) -> Result<(), Inexpressible> {
        if self == Format::Native {
            return Ok(());
        }
        let format = self.name();
        let only = |allowed: &[&str]| -> Result<(), Inexpressible> {
            match record.keys().find(|k| !allowed.contains(&k.as_str())) {
                Some(field) => Err(Inexpressible(format!(
                    "{format} cannot carry a field `{field}` on this record"
                ))),
                None => Ok(()),
            }
        };
        let status = record.get("status").and_then(Value::as_str);
        match record.get("kind").and_then(Value::as_str) {
            None => Err(Inexpressible(format!(
                "{format} has no records without a `kind`"
            ))),
            Some("call") => {
                only(&["kind", "tool", "call_id", "args"])?;
                if !record.get("tool").is_some_and(Value::is_string) {
                    return Err(Inexpressible(format!(
                        "{format} cannot express a call without a tool"
                    )));
                }
                if !record.get("args").is_some_and(Value::is_object) {
                    return Err(Inexpressible(format!(
                        "{format} calls always carry an object of arguments"
                    )));
                }
                Ok(())
            }
            Some("result") => {
                let has = |field: &str| record.contains_key(field);
                let shape = match (self, status) {
                    // An Anthropic success may have no content at all.
                    (Format::Anthropic, Some("ok")) => !has("error"),
                    (_, Some("ok")) => has("output") && !has("error"),
                    (Format::Anthropic | Format::Mcp | Format::Otel, Some("error")) => {
                        has("error") && !has("output")
                    }
                    // Anthropic: an `is_error` that is not a boolean.
                    (Format::Anthropic, Some("invalid")) => !has("error"),
                    (Format::Mcp, Some("invalid")) => !has("output") && !has("error"),
                    _ => false,
                };
                if !shape {
                    let what = match status {
                        Some(status) => format!("status `{status}`"),
                        None => "no status".to_string(),
                    };
                    return Err(Inexpressible(format!(
                        "{format} cannot express a tool result with {what}{}",
                        match (status, has("output"), has("error")) {
                            (Some("ok"), false, _) => " and no output",
                            (Some("ok"), _, true) | (Some("error"), true, _) => {
                                " and both an output and an error"
                            }
                            (Some("error"), _, false) => " and no error",
                            _ => "",
                        }
                    )));
                }
                only(&["kind", "tool", "call_id", "status", "output", "error"])?;
                if self == Format::Otel {
                    if let Some(error) = record.get("error") {
                        otel_error(error)?;
                    }
                }
                if self != Format::Native {
                    for field in ["output", "error"] {
                        if let Some(value) = record.get(field) {
                            if as_text(value).is_none() {
                                return Err(Inexpressible(format!(
                                    "{format} carries a tool's {field} as text, which reads back as a string or as the object or array it spells, not as {value}"
                                )));
                            }
                        }
                    }
                }
                Ok(())
            }
            Some("message") => {
                let roles: &[&str] = match self {
                    Format::Openai => &["user", "assistant", "system", "developer"],
                    Format::Anthropic => &["user", "assistant"],
                    _ => {
                        return Err(Inexpressible(format!(
                            "{format} carries no conversation messages"
                        )));
                    }
                };
                only(&["kind", "role", "text"])?;
                match (
                    record.get("role").and_then(Value::as_str),
                    record.get("text"),
                ) {
                    (Some(role), Some(Value::String(_))) if roles.contains(&role) => Ok(()),
                    _ => Err(Inexpressible(format!(
                        "{format} messages have a role ({}) and a text",
                        roles.join(", ")
                    ))),
                }
            }
            Some(other) => Err(Inexpressible(format!("{format} has no `{other}` records"))),
        }
    }

    /// The text of a trace file holding `records`, in order. Fails when a record cannot
    /// be expressed, or a result answers no call written before it.
    pub fn write(self, records: &[JsonRecord]) -> Result<String, Inexpressible> {
        for record in records {
            if !(self.has_turns() && implied(record)) {
                self.accepts(record)?;
            }
        }
        match self {
            Format::Native => Ok(records.iter().map(native_line).collect()),
            Format::Openai => openai(records),
            Format::Anthropic => anthropic(records),
            Format::Mcp => mcp(records),
            Format::Otel => otel(records),
        }
    }
}

/// Where a record is in a written trace file, as the checker locates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecordSite {
    /// A line (1-based) of a file with one element per line.
    Line(u64),
    /// A JSON pointer into a file holding one document.
    Pointer(String),
}

impl std::fmt::Display for RecordSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordSite::Line(line) => write!(f, "line {line}"),
            RecordSite::Pointer(pointer) => write!(f, "{pointer}"),
        }
    }
}

impl Format {
    /// Where each of `records` is in the text [`Format::write`] gives for them (a
    /// `missing` result a format with turns implies is at its call, as readers place
    /// it).
    pub fn sites(self, records: &[JsonRecord]) -> Vec<RecordSite> {
        let mut sites = Vec::with_capacity(records.len());
        let mut written = 0usize;
        let mut spans = 0usize;
        let mut calls: Vec<(String, RecordSite)> = Vec::new();
        for record in records {
            let kind = str_of(record, "kind");
            if self.has_turns() && implied(record) {
                let id = call_id(record);
                let site = calls
                    .iter()
                    .rev()
                    .find(|(open, _)| *open == id)
                    .map_or(RecordSite::Pointer(String::new()), |(_, site)| site.clone());
                sites.push(site);
                continue;
            }
            let site = match self {
                Format::Native | Format::Mcp => RecordSite::Line(written as u64 + 1),
                Format::Openai if kind == "call" => {
                    RecordSite::Pointer(format!("/messages/{written}/tool_calls/0"))
                }
                Format::Openai => RecordSite::Pointer(format!("/messages/{written}")),
                Format::Anthropic if kind == "message" => {
                    RecordSite::Pointer(format!("/messages/{written}"))
                }
                Format::Anthropic => RecordSite::Pointer(format!("/messages/{written}/content/0")),
                Format::Otel => {
                    if kind == "call" {
                        spans += 1;
                    }
                    let span = calls
                        .iter()
                        .rev()
                        .find(|(open, _)| *open == call_id(record))
                        .filter(|_| kind == "result")
                        .map(|(_, site)| site.clone());
                    span.unwrap_or_else(|| {
                        RecordSite::Pointer(format!(
                            "/resourceSpans/0/scopeSpans/0/spans/{}",
                            spans.saturating_sub(1)
                        ))
                    })
                }
            };
            if kind == "call" {
                calls.push((call_id(record), site.clone()));
            }
            written += 1;
            sites.push(site);
        }
        sites
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One native JSONL line, canonical fields first so it reads like a recorder's output.
pub fn native_line(record: &JsonRecord) -> String {
    const FIRST: [&str; 9] = [
        "kind", "tool", "call_id", "role", "text", "args", "status", "output", "error",
    ];
    let mut line = String::from("{");
    let keys = FIRST
        .iter()
        .copied()
        .filter(|key| record.contains_key(*key))
        .chain(
            record
                .keys()
                .map(String::as_str)
                .filter(|key| !FIRST.contains(key)),
        );
    for (i, key) in keys.enumerate() {
        if i > 0 {
            line.push(',');
        }
        let _ = write!(line, "{}:{}", Value::String(key.to_string()), record[key]);
    }
    line.push_str("}\n");
    line
}

fn str_of<'r>(record: &'r JsonRecord, field: &str) -> &'r str {
    record
        .get(field)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

fn call_id(record: &JsonRecord) -> String {
    match record.get("call_id") {
        Some(Value::String(id)) => id.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Checks that every result answers a call written before it (by `call_id`), and
/// returns each result's call index.
fn answered_calls(records: &[JsonRecord], format: Format) -> Result<(), Inexpressible> {
    let mut open: Vec<String> = Vec::new();
    for record in records
        .iter()
        .filter(|r| !(format.has_turns() && implied(r)))
    {
        match str_of(record, "kind") {
            "call" => open.push(call_id(record)),
            "result" => {
                let id = call_id(record);
                let Some(index) = open.iter().position(|open| *open == id) else {
                    return Err(Inexpressible(format!(
                        "{format} cannot express a tool result that answers no call (`call_id` {id:?})"
                    )));
                };
                open.remove(index);
            }
            _ => {}
        }
    }
    if format == Format::Otel {
        // A span is a call and its result: the reader gives them one after the other.
        for pair in records.windows(2) {
            if str_of(&pair[1], "kind") == "result"
                && !(str_of(&pair[0], "kind") == "call" && call_id(&pair[0]) == call_id(&pair[1]))
            {
                return Err(Inexpressible(
                    "otel cannot express a result that does not directly follow its call (a span is both)"
                        .to_string(),
                ));
            }
        }
    }
    if format.answers_every_call() && !open.is_empty() {
        return Err(Inexpressible(format!(
            "{format} cannot express a call that gets no reply (every span ends)"
        )));
    }
    Ok(())
}

/// Tool output as the text a tool message carries: an object or array as its JSON
/// (readers decode such text), a string as itself. `None` for anything else, and for
/// a string that looks like JSON of an object or array (it would read back decoded).
fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::Object(_) | Value::Array(_) => Some(value.to_string()),
        Value::String(text) => {
            let trimmed = text.trim_start();
            let container = (trimmed.starts_with('{') || trimmed.starts_with('['))
                && serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_object() || v.is_array());
            (!container).then(|| text.clone())
        }
        _ => None,
    }
}

fn json_text(value: &Value) -> String {
    value.to_string()
}

/// Whether a record is a `missing` result a format with turns implies (by the absence
/// of a reply before the next assistant message): it is not written.
fn implied(record: &JsonRecord) -> bool {
    str_of(record, "kind") == "result" && str_of(record, "status") == "missing"
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).expect("bug: JSON values serialize");
    text.push('\n');
    text
}

fn openai(records: &[JsonRecord]) -> Result<String, Inexpressible> {
    answered_calls(records, Format::Openai)?;
    let mut messages = Vec::new();
    for record in records.iter().filter(|r| !implied(r)) {
        messages.push(match str_of(record, "kind") {
            "call" => json!({
                "role": "assistant",
                "content": null,
                "tool_calls": [{
                    "id": call_id(record),
                    "type": "function",
                    "function": {
                        "name": str_of(record, "tool"),
                        "arguments": json_text(&record["args"]),
                    },
                }],
            }),
            "result" => json!({
                "role": "tool",
                "tool_call_id": call_id(record),
                "content": as_text(&record["output"]),
            }),
            _ => json!({"role": str_of(record, "role"), "content": str_of(record, "text")}),
        });
    }
    Ok(pretty(&json!({ "messages": messages })))
}

fn anthropic(records: &[JsonRecord]) -> Result<String, Inexpressible> {
    answered_calls(records, Format::Anthropic)?;
    let mut messages = Vec::new();
    for record in records.iter().filter(|r| !implied(r)) {
        messages.push(match str_of(record, "kind") {
            "call" => json!({
                "role": "assistant",
                "content": [{
                    "type": "tool_use",
                    "id": call_id(record),
                    "name": str_of(record, "tool"),
                    "input": record["args"],
                }],
            }),
            "result" => {
                let mut block = Map::new();
                block.insert("type".into(), json!("tool_result"));
                block.insert("tool_use_id".into(), json!(call_id(record)));
                let (body, is_error) = match str_of(record, "status") {
                    "error" => (record.get("error"), json!(true)),
                    // A malformed reply: `is_error` that is not a boolean.
                    "invalid" => (record.get("output"), Value::Null),
                    _ => (record.get("output"), json!(false)),
                };
                if let Some(body) = body {
                    block.insert("content".into(), json!(as_text(body)));
                }
                block.insert("is_error".into(), is_error);
                json!({"role": "user", "content": [block]})
            }
            _ => json!({"role": str_of(record, "role"), "content": str_of(record, "text")}),
        });
    }
    Ok(pretty(&json!({ "messages": messages })))
}

/// Whether an error is a JSON-RPC error object: an integer `code`, a string `message`,
/// and at most `data` besides.
fn jsonrpc_error(error: &Value) -> bool {
    let Value::Object(map) = error else {
        return false;
    };
    map.get("code").is_some_and(|c| c.is_i64() || c.is_u64())
        && map.get("message").is_some_and(Value::is_string)
        && map
            .keys()
            .all(|k| ["code", "message", "data"].contains(&k.as_str()))
}

fn mcp(records: &[JsonRecord]) -> Result<String, Inexpressible> {
    answered_calls(records, Format::Mcp)?;
    let mut out = String::new();
    for record in records {
        let id = record.get("call_id").cloned().unwrap_or(Value::Null);
        let message = match str_of(record, "kind") {
            "call" => json!({
                "jsonrpc": "2.0",
                "id": id,
                "method": "tools/call",
                "params": {"name": str_of(record, "tool"), "arguments": record["args"]},
            }),
            _ => match str_of(record, "status") {
                "ok" => {
                    let output = &record["output"];
                    let mut result = Map::new();
                    result.insert(
                        "content".into(),
                        json!([{"type": "text", "text": as_text(output)}]),
                    );
                    if output.is_object() {
                        result.insert("structuredContent".into(), output.clone());
                    }
                    result.insert("isError".into(), json!(false));
                    json!({"jsonrpc": "2.0", "id": id, "result": result})
                }
                "error" if jsonrpc_error(&record["error"]) => {
                    json!({"jsonrpc": "2.0", "id": id, "error": record["error"]})
                }
                "error" => json!({
                    "jsonrpc": "2.0",
                    "id": id,
                    "result": {
                        "content": [{"type": "text", "text": as_text(&record["error"])}],
                        "isError": true,
                    },
                }),
                // A reply with neither `result` nor `error` is malformed: `invalid`.
                _ => json!({"jsonrpc": "2.0", "id": id}),
            },
        };
        out.push_str(&message.to_string());
        out.push('\n');
    }
    Ok(out)
}

/// A span's error attributes and status message for a normalized error: an object
/// whose `message` (a string) is the status message and whose other fields, scalars,
/// are `error.*` attributes (`type` is `error.type`), as the reader gathers them back.
fn otel_error(error: &Value) -> Result<(Vec<Value>, Option<&str>), Inexpressible> {
    let shape = || {
        "otel cannot express this error: a span carries an error as `error.*` attributes and a status message, so it must be an object of strings, numbers and booleans".to_string()
    };
    let Value::Object(map) = error else {
        return Err(Inexpressible(shape()));
    };
    let mut attributes = Vec::new();
    let mut message = None;
    for (key, value) in map {
        let typed = match value {
            Value::String(text) if key == "message" => {
                message = Some(text.as_str());
                continue;
            }
            Value::String(text) => json!({"stringValue": text}),
            Value::Bool(b) => json!({"boolValue": b}),
            Value::Number(n) if n.is_i64() || n.is_u64() => json!({"intValue": n.to_string()}),
            Value::Number(n) => json!({"doubleValue": n}),
            _ => return Err(Inexpressible(shape())),
        };
        attributes.push(json!({"key": format!("error.{key}"), "value": typed}));
    }
    Ok((attributes, message))
}

fn attribute(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

fn otel(records: &[JsonRecord]) -> Result<String, Inexpressible> {
    answered_calls(records, Format::Otel)?;
    // One millisecond per record from a fixed start, so order and times are stable.
    const START_NANOS: u64 = 1_700_000_000_000_000_000;
    let time = |index: usize| (START_NANOS + (index as u64 + 1) * 1_000_000).to_string();
    let mut spans: Vec<(String, Value)> = Vec::new();
    for (index, record) in records.iter().enumerate() {
        let id = call_id(record);
        match str_of(record, "kind") {
            "call" => {
                let number = spans.len() + 1;
                spans.push((
                    id.clone(),
                    json!({
                        "traceId": "5b8efff798038103d269b633813fc60c",
                        "spanId": format!("{number:016x}"),
                        "name": format!("execute_tool {}", str_of(record, "tool")),
                        "kind": 1,
                        "startTimeUnixNano": time(index),
                        "attributes": [
                            attribute("gen_ai.operation.name", "execute_tool"),
                            attribute("gen_ai.tool.name", str_of(record, "tool")),
                            attribute("gen_ai.tool.call.id", &id),
                            attribute("gen_ai.tool.call.arguments", &json_text(&record["args"])),
                        ],
                    }),
                ));
            }
            _ => {
                let (_, span) = spans
                    .iter_mut()
                    .find(|(open, span)| *open == id && span.get("endTimeUnixNano").is_none())
                    .expect("bug: answered_calls checked every result has its call");
                let Value::Object(span) = span else {
                    unreachable!("spans are objects")
                };
                span.insert("endTimeUnixNano".into(), json!(time(index)));
                let attributes = span["attributes"]
                    .as_array_mut()
                    .expect("bug: span attributes are an array");
                match record.get("error") {
                    None => {
                        let output = as_text(&record["output"])
                            .expect("bug: accepts checked the output is text");
                        attributes.push(attribute("gen_ai.tool.call.result", &output));
                        span.insert("status".into(), json!({"code": 1}));
                    }
                    Some(error) => {
                        let (error_attributes, message) = otel_error(error)?;
                        attributes.extend(error_attributes);
                        let mut status = json!({"code": 2});
                        if let Some(message) = message {
                            status["message"] = json!(message);
                        }
                        span.insert("status".into(), status);
                    }
                }
            }
        }
    }
    let spans: Vec<Value> = spans.into_iter().map(|(_, span)| span).collect();
    Ok(pretty(&json!({
        "resourceSpans": [{
            "resource": {"attributes": [attribute("service.name", "tracegate-explore")]},
            "scopeSpans": [{"scope": {"name": "tracegate"}, "spans": spans}],
        }],
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(value: Value) -> JsonRecord {
        let Value::Object(map) = value else {
            panic!("records are objects")
        };
        map
    }

    #[test]
    fn native_lines_put_canonical_fields_first() {
        let line = native_line(&record(
            json!({"zeta": 1, "status": "ok", "kind": "result", "tool": "t", "call_id": "c1"}),
        ));
        assert_eq!(
            line,
            "{\"kind\":\"result\",\"tool\":\"t\",\"call_id\":\"c1\",\"status\":\"ok\",\"zeta\":1}\n"
        );
    }

    #[test]
    fn formats_refuse_what_they_cannot_express() {
        let error_result = record(
            json!({"kind": "result", "tool": "t", "call_id": "c", "status": "error", "error": {"code": "x"}}),
        );
        assert!(Format::Native.accepts(&error_result).is_ok());
        assert!(Format::Anthropic.accepts(&error_result).is_ok());
        let err = Format::Openai.accepts(&error_result).unwrap_err();
        assert_eq!(
            err.to_string(),
            "openai cannot express a tool result with status `error`"
        );
        // Spans carry errors as flat `error.*` attributes.
        assert!(Format::Otel.accepts(&error_result).is_ok());
        let nested = record(
            json!({"kind": "result", "tool": "t", "call_id": "c", "status": "error", "error": {"detail": {"a": 1}}}),
        );
        assert!(Format::Otel.accepts(&nested).is_err());
        let message = record(json!({"kind": "message", "role": "user", "text": "no"}));
        assert!(Format::Openai.accepts(&message).is_ok());
        assert!(Format::Mcp.accepts(&message).is_err());
        let number = record(
            json!({"kind": "result", "tool": "t", "call_id": "c", "status": "ok", "output": 1}),
        );
        assert!(Format::Native.accepts(&number).is_ok());
        assert!(
            Format::Openai
                .accepts(&number)
                .unwrap_err()
                .to_string()
                .contains("as text")
        );
        let orphan = [record(
            json!({"kind": "result", "tool": "t", "call_id": "c", "status": "ok", "output": {"a": 1}}),
        )];
        assert!(Format::Native.write(&orphan).is_ok());
        assert!(
            Format::Openai
                .write(&orphan)
                .unwrap_err()
                .to_string()
                .contains("answers no call")
        );
    }

    #[test]
    fn outputs_are_text_only_when_they_read_back_the_same() {
        assert_eq!(as_text(&json!({"a": 1})).as_deref(), Some("{\"a\":1}"));
        assert_eq!(as_text(&json!("done")).as_deref(), Some("done"));
        assert_eq!(as_text(&json!("{\"a\": 1}")), None);
        assert_eq!(as_text(&json!(0)), None);
    }

    #[test]
    fn unanswered_calls_are_missing_at_the_next_turn() {
        let records = [
            record(json!({"kind": "call", "tool": "a", "call_id": "1", "args": {}})),
            record(json!({"kind": "call", "tool": "b", "call_id": "2", "args": {}})),
            record(
                json!({"kind": "result", "tool": "b", "call_id": "2", "status": "ok", "output": {}}),
            ),
        ];
        let (read, index) = Format::Openai.as_read(&records);
        assert_eq!(index, [0, 2, 3]);
        assert_eq!(read[1]["status"], "missing");
        assert_eq!(read[1]["call_id"], "1");
        let (read, _) = Format::Native.as_read(&records);
        assert_eq!(read.len(), 3);
        // The implied result is not written: the call simply has no reply.
        let text = Format::Openai
            .write(&Format::Openai.as_read(&records).0)
            .unwrap();
        assert_eq!(text.matches("\"role\": \"tool\"").count(), 1);
    }
}
