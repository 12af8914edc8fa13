//! OpenTelemetry GenAI spans in OTLP JSON (`resourceSpans[].scopeSpans[].spans[]`, as
//! the OTLP/HTTP JSON encoding and the collector's file exporter write them).
//!
//! - Each `execute_tool` span (`gen_ai.operation.name`, or, in older conventions, a
//!   span with `gen_ai.tool.name` and no operation) is a call and its result: tool
//!   `gen_ai.tool.name` (else the span name after `execute_tool `), call id
//!   `gen_ai.tool.call.id` (else the span id), args `gen_ai.tool.call.arguments`, output
//!   `gen_ai.tool.call.result` (JSON strings are parsed, like other formats' text).
//!   Other spans are not records.
//! - The result is an error when the span's status code is 2 (`STATUS_CODE_ERROR`) or
//!   it has an `error.type`. Its `error` gathers `type` (`error.type`), `message` (the
//!   status message), every other `error.*` attribute under its own name, and the
//!   `exception` event's attributes.
//! - Attribute values are OTLP's typed wrappers (`stringValue`, `intValue` as a string
//!   or a number, `doubleValue`, `boolValue`, `arrayValue`, `kvlistValue`, `bytesValue`);
//!   the result's `attributes` holds them all, decoded. Ids are hex, or base64 as some
//!   exporters write them, and become lowercase hex. Times are nanoseconds since the
//!   epoch, as numbers or decimal strings, and become RFC 3339 `time`s.
//! - Spans are ordered by start time; each trace id is a trace of its own.
//!
//! The spans are read one at a time ([`Gather`]): from the export's value when a
//! document is read whole ([`read`]), or as an export is scanned span by span
//! (`stream::otlp`). Either way a span that is no tool call is dropped as soon as it is
//! read, and only the tool spans' records wait for the end, to be ordered.

use serde_json::Value;

use super::shared::{Map, describe, fields, put, put_args, put_content, str_of};
use super::{Element, Out, Site};

/// Whether `map` is OTLP trace data at any level (export, resource spans, scope
/// spans, span).
pub fn is_otlp(map: &Map) -> bool {
    is_export(map)
        || map.contains_key("scopeSpans")
        || map.contains_key("instrumentationLibrarySpans")
        || (map.contains_key("traceId") && map.contains_key("spanId"))
}

/// Whether `map` is an OTLP trace export (`ExportTraceServiceRequest`).
pub fn is_export(map: &Map) -> bool {
    matches!(map.get("resourceSpans"), Some(Value::Array(_)))
}

/// The keys of OTLP's nesting, outermost first: an object holding one of them is a
/// container of the next level, anything else is a span.
pub(super) const LEVELS: [&str; 4] = [
    "resourceSpans",
    "scopeSpans",
    "instrumentationLibrarySpans",
    "spans",
];

pub fn read(elements: &[Element<'_>], out: &mut Out) {
    let mut gather = Gather::default();
    for element in elements {
        collect(element.value, &element.site, None, &mut gather);
    }
    gather.finish(out);
}

/// What reading OTLP data gathers, span by span, until the end of the input: the
/// problems of its nesting, in the order they are met; the problems of its spans;
/// and what each `execute_tool` span becomes (or, read from a file, only where it
/// is: [`Gather::span_placed`]). Any other span is dropped as soon as it is read. The
/// records are ordered by start time only at the end ([`Gather::finish`]), as one
/// trace may be exported in many batches.
#[derive(Default)]
pub(super) struct Gather {
    /// Problems of the nesting (an element that is not an object, a level that is no
    /// array), in the order the walk meets them.
    nesting: Out,
    /// Problems of spans, in the order of the spans.
    spans: Out,
    tools: Vec<ToolSpan>,
}

impl Gather {
    /// A problem of the nesting at `site`.
    pub(super) fn problem(&mut self, site: &Site, message: impl Into<String>) {
        self.nesting.problem(site, message);
    }

    /// Reads the span `map` at `site`, of a resource whose `service.name` is
    /// `service`: a tool span is kept as its call and result, any other dropped. What
    /// it gives is at `site`, or at a member of the span, which `pin` may locate.
    pub(super) fn span(
        &mut self,
        map: &Map,
        site: &Site,
        service: Option<&Value>,
        pin: impl Fn(&Site) -> Site,
    ) {
        let before = self.spans.items.len();
        let tool = tool_span(map, site, service, &mut self.spans);
        for item in &mut self.spans.items[before..] {
            item.site = pin(&item.site);
        }
        if let Some(mut tool) = tool {
            tool.site = pin(&tool.site);
            self.tools.push(tool);
        }
    }

    /// [`Gather::span`] for a reading that keeps no records: a tool span's problems
    /// are kept, and what it is is not, but its start time and trace, returned, by
    /// which the reading orders it and ends its trace before reading it again
    /// ([`Gather::again`]).
    pub(super) fn span_placed(
        &mut self,
        map: &Map,
        site: &Site,
        service: Option<&Value>,
        pin: impl Fn(&Site) -> Site,
    ) -> Option<(u64, String)> {
        let before = self.spans.items.len();
        let tool = tool_span(map, site, service, &mut self.spans);
        for item in &mut self.spans.items[before..] {
            item.site = pin(&item.site);
        }
        tool.map(|tool| (tool.start.unwrap_or(0), tool.trace))
    }

    /// A tool span [`Gather::span_placed`] placed, read again: its call and result,
    /// into `out`. Its problems were kept the first time.
    pub(super) fn again(
        map: &Map,
        site: &Site,
        service: Option<&Value>,
        pin: impl Fn(&Site) -> Site,
        out: &mut Out,
    ) -> bool {
        let Some(tool) = tool_span(map, site, service, &mut Out::default()) else {
            return false;
        };
        let site = pin(&tool.site);
        let trace = Some(tool.trace);
        out.record_in(trace.clone(), &site, tool.call);
        out.record_in(trace, &site, tool.result);
        true
    }

    /// The problems gathered: those of the nesting, then those of the spans.
    pub(super) fn problems(self) -> Out {
        let mut out = self.nesting;
        out.items.extend(self.spans.items);
        out
    }

    /// Hands on what was gathered: the problems of the nesting, then those of the
    /// spans, then each tool span's call and result, ordered by start time.
    pub(super) fn finish(self, out: &mut Out) {
        out.items.extend(self.nesting.items);
        out.items.extend(self.spans.items);
        let mut tools = self.tools;
        // Stable: spans that start together keep their order in the file.
        tools.sort_by_key(|t| t.start.unwrap_or(0));
        for tool in tools {
            let trace = Some(tool.trace.clone());
            out.record_in(trace.clone(), &tool.site, tool.call);
            out.record_in(trace, &tool.site, tool.result);
        }
    }
}

/// The `service.name` of the resource of the OTLP container `map`, else `inherited`,
/// its parent's.
pub(super) fn service_of(map: &Map, inherited: Option<&Value>) -> Option<Value> {
    map.get("resource")
        .and_then(|r| r.get("attributes"))
        .and_then(|a| attributes(a).ok())
        .and_then(|a| a.get("service.name").cloned())
        .or_else(|| inherited.cloned())
}

fn collect(value: &Value, site: &Site, service: Option<&Value>, gather: &mut Gather) {
    let Value::Object(map) = value else {
        return gather.problem(
            site,
            format!("OTLP element is {}, expected an object", describe(value)),
        );
    };
    if let Some(key) = LEVELS.into_iter().find(|key| map.contains_key(*key)) {
        let service = service_of(map, service);
        match &map[key] {
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    collect(item, &site.child(key).child(i), service.as_ref(), gather);
                }
            }
            other => gather.problem(
                &site.child(key),
                format!("field `{key}` is {}, expected an array", describe(other)),
            ),
        }
        return;
    }
    gather.span(map, site, service, Site::clone);
}

struct ToolSpan {
    trace: String,
    start: Option<u64>,
    site: Site,
    call: Map,
    result: Map,
}

fn tool_span(map: &Map, site: &Site, service: Option<&Value>, out: &mut Out) -> Option<ToolSpan> {
    let attrs = match map.get("attributes") {
        None => Map::new(),
        Some(value) => match attributes(value) {
            Ok(attrs) => attrs,
            Err(error) => {
                out.problem(&site.child("attributes"), error.to_string());
                return None;
            }
        },
    };
    let operation = attrs.get("gen_ai.operation.name").and_then(Value::as_str);
    let tool_name = attrs.get("gen_ai.tool.name").and_then(Value::as_str);
    let is_tool = match operation {
        Some(op) => op == "execute_tool",
        None => tool_name.is_some(),
    };
    if !is_tool {
        return None;
    }
    let Some(trace) = map.get("traceId").and_then(|id| hex_id(id, 16)) else {
        out.problem(site, "span has no valid `traceId`");
        return None;
    };
    let span_name = str_of(map, "name");
    let tool = tool_name.or_else(|| {
        span_name
            .and_then(|n| n.strip_prefix("execute_tool "))
            .map(str::trim)
    });
    let Some(tool) = tool else {
        out.problem(site, "`execute_tool` span has no `gen_ai.tool.name`");
        return None;
    };
    let span_id = map.get("spanId").and_then(|id| hex_id(id, 8));
    let call_id = match attrs.get("gen_ai.tool.call.id") {
        Some(Value::String(id)) => Some(id.clone()),
        Some(Value::Number(n)) => Some(n.to_string()),
        _ => span_id.clone(),
    };
    let start = map.get("startTimeUnixNano").and_then(nanos);
    let end = map.get("endTimeUnixNano").and_then(nanos);

    let mut common = Map::new();
    put(&mut common, "tool", tool);
    if let Some(id) = &call_id {
        put(&mut common, "call_id", id.clone());
    }
    put(&mut common, "trace_id", trace.clone());
    if let Some(id) = &span_id {
        put(&mut common, "span_id", id.clone());
    }
    if let Some(service) = service {
        put(&mut common, "service", service.clone());
    }

    let mut call = fields("call");
    call.extend(common.clone());
    put_args(&mut call, attrs.get("gen_ai.tool.call.arguments"));
    if let Some(start) = start {
        put(&mut call, "time", rfc3339(start));
    }

    let mut result = fields("result");
    result.extend(common);
    let status = map.get("status").and_then(Value::as_object);
    let code_error = status.and_then(|s| s.get("code")).is_some_and(|code| {
        matches!(code, Value::Number(n) if n.as_u64() == Some(2))
            || matches!(code.as_str(), Some("STATUS_CODE_ERROR" | "ERROR"))
    });
    let output = attrs.get("gen_ai.tool.call.result");
    if code_error || attrs.contains_key("error.type") {
        put(&mut result, "status", "error");
        put(
            &mut result,
            "error",
            error_of(&attrs, status, map.get("events")),
        );
    } else {
        put(&mut result, "status", "ok");
    }
    match output {
        Some(Value::String(_)) => put_content(&mut result, "output", output),
        Some(other) => put(&mut result, "output", other.clone()),
        None => {}
    }
    if let Some(end) = end {
        put(&mut result, "time", rfc3339(end));
    }
    put(&mut result, "attributes", attrs);
    Some(ToolSpan {
        trace,
        start,
        site: site.clone(),
        call,
        result,
    })
}

fn error_of(attrs: &Map, status: Option<&Map>, events: Option<&Value>) -> Map {
    let mut error = Map::new();
    for (key, value) in attrs {
        if let Some(name) = key.strip_prefix("error.") {
            error.insert(name.to_string(), value.clone());
        }
    }
    if let Some(message) = status
        .and_then(|s| str_of(s, "message"))
        .filter(|m| !m.is_empty())
    {
        error.insert("message".into(), Value::String(message.to_string()));
    }
    let exception = events.and_then(Value::as_array).and_then(|events| {
        events
            .iter()
            .find(|e| e.get("name").and_then(Value::as_str) == Some("exception"))
    });
    if let Some(exception) = exception {
        if let Some(Ok(attrs)) = exception.get("attributes").map(attributes) {
            let mut fields = Map::new();
            for (key, value) in attrs {
                let name = key.strip_prefix("exception.").unwrap_or(&key).to_string();
                fields.insert(name, value);
            }
            error.insert("exception".into(), Value::Object(fields));
        }
    }
    error
}

/// Why an `attributes` field cannot be decoded.
#[derive(Debug, thiserror::Error)]
enum AttributesError {
    #[error("attribute has no string `key`")]
    NoKey,
    #[error("field `attributes` is {0}, expected an array")]
    NotAList(&'static str),
}

/// Decodes an OTLP attribute list (`[{"key", "value": {typed}}]`), or a plain object
/// of attributes as some exporters write them.
fn attributes(value: &Value) -> Result<Map, AttributesError> {
    match value {
        Value::Array(items) => {
            let mut map = Map::new();
            for item in items {
                let Some(key) = item.get("key").and_then(Value::as_str) else {
                    return Err(AttributesError::NoKey);
                };
                let value = item.get("value").map_or(Value::Null, any_value);
                map.insert(key.to_string(), value);
            }
            Ok(map)
        }
        Value::Object(map) => Ok(map.iter().map(|(k, v)| (k.clone(), any_value(v))).collect()),
        other => Err(AttributesError::NotAList(describe(other))),
    }
}

/// An OTLP `AnyValue` as plain JSON. A value that is not a typed wrapper is kept.
fn any_value(value: &Value) -> Value {
    let Value::Object(map) = value else {
        return value.clone();
    };
    if map.is_empty() {
        return Value::Null;
    }
    if map.len() != 1 {
        return value.clone();
    }
    let (key, inner) = map.iter().next().expect("one entry");
    match key.as_str() {
        "stringValue" | "boolValue" | "bytesValue" => inner.clone(),
        "intValue" => match inner {
            Value::String(text) => text
                .parse::<i64>()
                .map(Value::from)
                .unwrap_or_else(|_| inner.clone()),
            other => other.clone(),
        },
        "doubleValue" => match inner {
            Value::String(text) => text
                .parse::<f64>()
                .ok()
                .and_then(|f| serde_json::Number::from_f64(f).map(Value::Number))
                .unwrap_or_else(|| inner.clone()),
            other => other.clone(),
        },
        "arrayValue" => Value::Array(
            inner
                .get("values")
                .and_then(Value::as_array)
                .map(|values| values.iter().map(any_value).collect())
                .unwrap_or_default(),
        ),
        "kvlistValue" => Value::Object(
            inner
                .get("values")
                .and_then(Value::as_array)
                .map(|values| {
                    values
                        .iter()
                        .filter_map(|kv| {
                            let key = kv.get("key")?.as_str()?;
                            Some((
                                key.to_string(),
                                kv.get("value").map_or(Value::Null, any_value),
                            ))
                        })
                        .collect()
                })
                .unwrap_or_default(),
        ),
        _ => value.clone(),
    }
}

/// A trace or span id (`bytes` long) as lowercase hex, from hex or base64.
fn hex_id(value: &Value, bytes: usize) -> Option<String> {
    let text = value.as_str()?.trim();
    if text.is_empty() {
        return None;
    }
    if text.len() == bytes * 2 && text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Some(text.to_ascii_lowercase());
    }
    match base64_decode(text) {
        Some(decoded) if decoded.len() == bytes => {
            Some(decoded.iter().map(|b| format!("{b:02x}")).collect())
        }
        _ => Some(text.to_string()),
    }
}

/// Standard or URL-safe base64, padding optional.
fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let mut bits: u32 = 0;
    let mut count = 0;
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    for byte in text.trim_end_matches('=').bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

/// Nanoseconds since the epoch, from a number or a decimal string.
fn nanos(value: &Value) -> Option<u64> {
    match value {
        Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64)),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    }
}

/// `2024-11-07T10:02:51.123456789Z` (fraction only when there is one).
fn rfc3339(nanos: u64) -> String {
    let secs = nanos / 1_000_000_000;
    let frac = nanos % 1_000_000_000;
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let mut text = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    if frac > 0 {
        let digits = format!("{frac:09}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text.push('Z');
    text
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::trace::adapters::Format;
    use crate::trace::adapters::tests_support::{read_as, read_ok};

    fn attr(key: &str, value: Value) -> Value {
        json!({"key": key, "value": value})
    }

    fn span(trace: &str, id: &str, start: Value, attrs: Vec<Value>, status: Value) -> Value {
        json!({"traceId": trace, "spanId": id, "name": "execute_tool", "kind": 1,
               "startTimeUnixNano": start, "endTimeUnixNano": "1700000001000000000",
               "attributes": attrs, "status": status})
    }

    fn export(spans: Vec<Value>) -> Value {
        json!({"resourceSpans": [{"resource": {"attributes": [attr("service.name", json!({"stringValue": "agent"}))]},
               "scopeSpans": [{"scope": {"name": "s"}, "spans": spans}]}]})
    }

    const TRACE: &str = "5B8EFFF798038103D269B633813FC60C";

    fn tool(name: &str, call: &str, extra: Vec<Value>) -> Vec<Value> {
        let mut attrs = vec![
            attr(
                "gen_ai.operation.name",
                json!({"stringValue": "execute_tool"}),
            ),
            attr("gen_ai.tool.name", json!({"stringValue": name})),
            attr("gen_ai.tool.call.id", json!({"stringValue": call})),
        ];
        attrs.extend(extra);
        attrs
    }

    #[test]
    fn tool_spans_are_calls_and_results_in_start_order() {
        let have = read_ok(
            Format::Otel,
            export(vec![
                span(
                    TRACE,
                    "EEE19B7EC3C1B174",
                    json!("1700000000500000000"),
                    tool(
                        "second",
                        "c2",
                        vec![attr("gen_ai.tool.call.result", json!({"stringValue": "0"}))],
                    ),
                    json!({}),
                ),
                span(
                    TRACE,
                    "EEE19B7EC3C1B173",
                    json!(1700000000000000000u64),
                    tool(
                        "first",
                        "c1",
                        vec![
                            attr(
                                "gen_ai.tool.call.arguments",
                                json!({"stringValue": "{\"request_id\": \"r1\"}"}),
                            ),
                            attr(
                                "gen_ai.tool.call.result",
                                json!({"stringValue": "{\"id\": \"rec_1\"}"}),
                            ),
                        ],
                    ),
                    json!({"code": 1}),
                ),
                {
                    let mut chat = span(
                        TRACE,
                        "EEE19B7EC3C1B175",
                        json!("1"),
                        vec![attr(
                            "gen_ai.operation.name",
                            json!({"stringValue": "chat"}),
                        )],
                        json!({}),
                    );
                    chat["name"] = json!("chat gpt-4o");
                    chat
                },
            ]),
        );
        assert_eq!(have.len(), 4);
        assert_eq!(have[0]["tool"], "first");
        assert_eq!(have[0]["args"]["request_id"], "r1");
        assert_eq!(have[0]["time"], "2023-11-14T22:13:20Z");
        assert_eq!(have[0]["trace_id"], TRACE.to_ascii_lowercase());
        assert_eq!(have[0]["span_id"], "eee19b7ec3c1b173");
        assert_eq!(have[0]["service"], "agent");
        assert_eq!(have[1]["status"], "ok");
        assert_eq!(have[1]["output"]["id"], "rec_1");
        assert_eq!(have[2]["tool"], "second");
        assert_eq!(have[3]["output"], "0");
        assert_eq!(have[3]["call_id"], "c2");
    }

    #[test]
    fn errors_from_status_and_error_type() {
        let have = read_ok(
            Format::Otel,
            export(vec![
                span(
                    TRACE,
                    "EEE19B7EC3C1B173",
                    json!("1"),
                    tool(
                        "create_record",
                        "c1",
                        vec![
                            attr("error.type", json!({"stringValue": "timeout"})),
                            attr("error.category", json!({"stringValue": "outcome_unknown"})),
                        ],
                    ),
                    json!({"code": "STATUS_CODE_ERROR", "message": "upstream timed out"}),
                ),
                span(
                    TRACE,
                    "EEE19B7EC3C1B174",
                    json!("2"),
                    tool("x", "c2", vec![]),
                    json!({"code": 2}),
                ),
            ]),
        );
        assert_eq!(have[1]["status"], "error");
        assert_eq!(have[1]["error"]["type"], "timeout");
        assert_eq!(have[1]["error"]["category"], "outcome_unknown");
        assert_eq!(have[1]["error"]["message"], "upstream timed out");
        assert_eq!(have[3]["status"], "error");
    }

    #[test]
    fn typed_values_base64_ids_and_traces() {
        // "W47/95gDgQPSabYzgT/GDA==" is TRACE in base64.
        let spans = vec![
            span(
                "W47/95gDgQPSabYzgT/GDA==",
                "7uGbfsPBsXM=",
                json!("5"),
                tool(
                    "t",
                    "c1",
                    vec![attr(
                        "gen_ai.tool.call.result",
                        json!({"kvlistValue": {"values": [
                         {"key": "n", "value": {"intValue": "0"}},
                         {"key": "ok", "value": {"boolValue": false}},
                         {"key": "l", "value": {"arrayValue": {"values": []}}}]}}),
                    )],
                ),
                json!({}),
            ),
            span(
                "0af7651916cd43dd8448eb211c80319c",
                "b7ad6b7169203331",
                json!("6"),
                tool("t", "c2", vec![]),
                json!({}),
            ),
        ];
        let have = read_ok(Format::Otel, export(spans));
        assert_eq!(have[0]["trace_id"], TRACE.to_ascii_lowercase());
        assert_eq!(have[0]["span_id"], "eee19b7ec3c1b173");
        assert_eq!(have[1]["output"], json!({"n": 0, "ok": false, "l": []}));
        assert_eq!(have[0]["trace"], TRACE.to_ascii_lowercase());
        assert_eq!(have[2]["trace"], "0af7651916cd43dd8448eb211c80319c");
    }

    #[test]
    fn falsy_results_stay_successes() {
        for (value, want) in [
            (json!({"intValue": "0"}), json!(0)),
            (json!({"intValue": 0}), json!(0)),
            (json!({"boolValue": false}), json!(false)),
            (json!({"stringValue": ""}), json!("")),
            (json!({"stringValue": "None"}), json!("None")),
            (json!({"stringValue": "[]"}), json!([])),
            (json!({"arrayValue": {"values": []}}), json!([])),
            (json!({"kvlistValue": {"values": []}}), json!({})),
            (json!({}), json!(null)),
        ] {
            let have = read_ok(
                Format::Otel,
                export(vec![span(
                    TRACE,
                    "EEE19B7EC3C1B173",
                    json!("1"),
                    tool(
                        "t",
                        "c1",
                        vec![attr("gen_ai.tool.call.result", value.clone())],
                    ),
                    json!({"code": 0}),
                )]),
            );
            assert_eq!(have[1]["status"], "ok", "{value}");
            assert_eq!(have[1]["output"], want, "{value}");
        }
    }

    #[test]
    fn bad_spans_are_reported() {
        let (have, problems) = read_as(
            Format::Otel,
            export(vec![
                json!(3),
                span(
                    "",
                    "EEE19B7EC3C1B173",
                    json!("1"),
                    tool("t", "c", vec![]),
                    json!({}),
                ),
                {
                    let mut s = span(TRACE, "EEE19B7EC3C1B174", json!("1"), vec![], json!({}));
                    s["attributes"] = json!("x");
                    s
                },
            ]),
        );
        assert!(have.is_empty());
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/resourceSpans/0/scopeSpans/0/spans/0",
                "/resourceSpans/0/scopeSpans/0/spans/1",
                "/resourceSpans/0/scopeSpans/0/spans/2/attributes"
            ]
        );
    }

    #[test]
    fn times_and_ids() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(951_782_400_000_000_001),
            "2000-02-29T00:00:00.000000001Z"
        );
        assert_eq!(
            rfc3339(1_700_000_000_123_000_000),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(base64_decode("AQID"), Some(vec![1, 2, 3]));
        assert_eq!(base64_decode("AQI"), Some(vec![1, 2]));
        assert_eq!(base64_decode("*"), None);
    }
}
