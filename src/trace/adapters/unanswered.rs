//! Calls that no result answers by the end of their trace, and the `missing` results
//! they get there (DESIGN.md §4). The checker synthesizes them as it ends each trace;
//! `convert` uses this to print them where the specs see them, so that it shows exactly
//! what specs see.
//!
//! Calls are paired with results as the checker pairs them: by `call_id`, a reused id
//! answered in order; calls without an id by the next result for the same tool.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::Entry;
use crate::trace::{Fields, Kind, Location, Record};

/// Why a result was synthesized at the end of a trace, for its `synthesized` field.
pub const AT_END: &str = "no result by the end of the trace";

/// Open calls per trace, in the order the traces were first met.
#[derive(Debug, Default)]
pub struct Unanswered {
    traces: Vec<Trace>,
    index: FxHashMap<Option<String>, usize>,
    /// Whether records are split into traces by their `trace` field (a file of many
    /// transcripts); else the whole input is one trace.
    by_trace_field: bool,
}

#[derive(Debug, Default)]
struct Trace {
    name: Option<String>,
    by_id: FxHashMap<String, VecDeque<Call>>,
    anonymous: FxHashMap<Option<String>, VecDeque<Call>>,
    made: u64,
    /// The next `seq` of the trace, when its records are numbered.
    next_seq: Option<u64>,
}

#[derive(Debug)]
struct Call {
    order: u64,
    tool: Option<String>,
    call_id: Option<String>,
    /// How the adapter paired the call (`position`), which its result says too.
    paired_by: Option<Value>,
    loc: Location,
}

impl Unanswered {
    /// `by_trace_field`: records name their trace in a `trace` field.
    pub fn new(by_trace_field: bool) -> Unanswered {
        Unanswered {
            by_trace_field,
            ..Unanswered::default()
        }
    }

    /// Takes note of a record: a call opens, a result closes its call. Returns the
    /// number of the record's trace (traces are numbered from 0 in the order met).
    pub fn see(&mut self, record: &Record<'_>) -> usize {
        let name = if self.by_trace_field {
            trace_name(record)
        } else {
            None
        };
        let index = match self.index.get(&name) {
            Some(&index) => index,
            None => {
                let index = self.traces.len();
                self.index.insert(name.clone(), index);
                self.traces.push(Trace {
                    name,
                    ..Trace::default()
                });
                index
            }
        };
        let trace = &mut self.traces[index];
        if let Some(seq) = decoded(&record.fields, "seq").and_then(|seq| seq.as_u64()) {
            trace.next_seq = Some(seq + 1);
        }
        let tool = record.tool.as_deref().map(str::to_string);
        let call_id = record.call_id.as_deref().map(str::to_string);
        match record.kind {
            Some(Kind::Call) => {
                let paired_by = decoded(&record.fields, "paired_by");
                let call = Call {
                    order: trace.made,
                    tool: tool.clone(),
                    call_id: call_id.clone(),
                    paired_by,
                    loc: record.loc.clone(),
                };
                trace.made += 1;
                match call_id {
                    Some(id) => trace.by_id.entry(id).or_default().push_back(call),
                    None => trace.anonymous.entry(tool).or_default().push_back(call),
                }
            }
            // A call's place goes with its answer, so that only open calls are kept.
            Some(Kind::Result) => match call_id {
                Some(id) => close(&mut trace.by_id, &id),
                None => close(&mut trace.anonymous, &tool),
            },
            _ => {}
        }
        index
    }

    /// The number of the trace named `name` (see [`Unanswered::see`]), if a record of
    /// it was seen.
    pub fn trace_named(&self, name: &Option<String>) -> Option<usize> {
        self.index.get(name).copied()
    }

    /// Whether trace number `trace` has a call no result has answered yet.
    pub fn has_open(&self, trace: usize) -> bool {
        let trace = &self.traces[trace];
        !(trace.by_id.is_empty() && trace.anonymous.is_empty())
    }

    /// The `missing` results of the calls of trace number `trace` still open, in the
    /// order they were made, now that the trace has ended; its open calls are
    /// forgotten.
    pub fn end(&mut self, trace: usize) -> Vec<Record<'static>> {
        self.traces[trace].missing()
    }
}

/// Closes the oldest open call under `key`, forgetting the key once none is open.
fn close<K: Eq + std::hash::Hash>(open: &mut FxHashMap<K, VecDeque<Call>>, key: &K) {
    if let Some(queue) = open.get_mut(key) {
        queue.pop_front();
        if queue.is_empty() {
            open.remove(key);
        }
    }
}

impl Trace {
    /// The `missing` results of the calls still open, which are forgotten.
    fn missing(&mut self) -> Vec<Record<'static>> {
        let mut open: Vec<Call> = std::mem::take(&mut self.by_id)
            .into_values()
            .chain(std::mem::take(&mut self.anonymous).into_values())
            .flatten()
            .collect();
        open.sort_by_key(|call| call.order);
        let mut seq = self.next_seq;
        open.into_iter()
            .map(|call| {
                let mut fields = serde_json::Map::new();
                fields.insert("kind".into(), Value::from("result"));
                if let Some(tool) = call.tool {
                    fields.insert("tool".into(), Value::from(tool));
                }
                if let Some(id) = call.call_id {
                    fields.insert("call_id".into(), Value::from(id));
                }
                fields.insert("status".into(), Value::from("missing"));
                if let Some(paired_by) = call.paired_by {
                    fields.insert("paired_by".into(), paired_by);
                }
                if let Some(name) = &self.name {
                    fields.insert("trace".into(), Value::from(name.clone()));
                }
                if let Some(next) = seq.as_mut() {
                    fields.insert("seq".into(), Value::from(*next));
                    *next += 1;
                }
                fields.insert("synthesized".into(), Value::from(AT_END));
                Record::new(Fields::Owned(fields), call.loc)
                    .expect("bug: a synthesized result is a valid record")
            })
            .collect()
    }
}

/// The `trace` field of a record, as the checker names traces by it.
fn trace_name(record: &Record<'_>) -> Option<String> {
    decoded(&record.fields, "trace").map(|value| match value {
        Value::String(text) => text,
        other => other.to_string(),
    })
}

/// Member `key` of the fields an adapter made (never raw: adapters own their fields).
fn decoded(fields: &Fields<'_>, key: &str) -> Option<Value> {
    match fields {
        Fields::Owned(map) => map.get(key).cloned(),
        Fields::Built(built) => serde_json::from_str(built.get(key)?).ok(),
        Fields::Raw(_) => None,
    }
}

/// `entries` with the `missing` results of the calls no result answers placed where
/// the checker synthesizes them: after the last record of their trace. `many_traces`:
/// the records name their trace. Returns how many were synthesized.
pub fn with_missing(entries: Vec<Entry>, many_traces: bool) -> (Vec<Entry>, u64) {
    let mut unanswered = Unanswered::new(many_traces);
    // The index of each trace's last record, by trace number.
    let mut last: Vec<usize> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        if let Entry::Record(record) = entry {
            let trace = unanswered.see(record);
            match last.get_mut(trace) {
                Some(at) => *at = i,
                None => last.push(i),
            }
        }
    }
    let mut missing: FxHashMap<usize, Vec<Record<'static>>> = FxHashMap::default();
    let mut count = 0;
    for (trace, &at) in last.iter().enumerate() {
        let records = unanswered.end(trace);
        if !records.is_empty() {
            count += records.len() as u64;
            missing.insert(at, records);
        }
    }
    let mut out = Vec::with_capacity(entries.len() + count as usize);
    for (i, entry) in entries.into_iter().enumerate() {
        out.push(entry);
        if let Some(records) = missing.remove(&i) {
            out.extend(records.into_iter().map(Entry::Record));
        }
    }
    (out, count)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn record(value: Value) -> Record<'static> {
        let Value::Object(map) = value else {
            unreachable!()
        };
        Record::new(Fields::Owned(map), Location::default()).unwrap()
    }

    fn kinds(entries: &[Entry]) -> Vec<String> {
        entries
            .iter()
            .map(|e| match e {
                Entry::Record(r) => format!(
                    "{:?} {} {}",
                    r.kind,
                    r.call_id.as_deref().unwrap_or("-"),
                    r.status.map_or("-".to_string(), |s| format!("{s:?}"))
                ),
                Entry::Problem(_) => "problem".to_string(),
            })
            .collect()
    }

    #[test]
    fn answered_calls_are_forgotten_and_open_ones_kept_in_order() {
        let mut unanswered = Unanswered::new(false);
        for n in 0..1000 {
            let id = format!("c{n}");
            unanswered.see(&record(json!({"kind": "call", "tool": "t", "call_id": id})));
            unanswered.see(&record(json!({"kind": "call", "tool": "u"})));
            unanswered.see(&record(
                json!({"kind": "result", "tool": "t", "call_id": id}),
            ));
            unanswered.see(&record(json!({"kind": "result", "tool": "u"})));
        }
        // A reused id is answered in order; the second call stays open.
        unanswered.see(&record(
            json!({"kind": "call", "tool": "t", "call_id": "again"}),
        ));
        unanswered.see(&record(
            json!({"kind": "call", "tool": "t", "call_id": "again"}),
        ));
        unanswered.see(&record(
            json!({"kind": "result", "tool": "t", "call_id": "again"}),
        ));
        unanswered.see(&record(json!({"kind": "call", "tool": "u"})));
        let trace = &unanswered.traces[0];
        assert_eq!(trace.by_id.len(), 1, "only the open id is kept");
        assert_eq!(trace.anonymous.len(), 1, "only the open tool is kept");
        let missing = unanswered.end(0);
        let open: Vec<_> = missing
            .iter()
            .map(|r| (r.tool.as_deref(), r.call_id.as_deref(), r.loc.line))
            .collect();
        assert_eq!(open, [(Some("t"), Some("again"), 0), (Some("u"), None, 0)]);
    }

    #[test]
    fn open_calls_get_missing_results_at_the_end_of_their_own_trace() {
        let entries = vec![
            Entry::Record(record(
                json!({"kind": "call", "tool": "a", "call_id": "1", "trace": "t1", "seq": 0}),
            )),
            Entry::Record(record(
                json!({"kind": "call", "tool": "b", "call_id": "2", "trace": "t2", "seq": 0}),
            )),
            Entry::Record(record(
                json!({"kind": "result", "tool": "b", "call_id": "2", "status": "ok", "trace": "t2", "seq": 1}),
            )),
            Entry::Record(record(json!({"kind": "message", "trace": "t1", "seq": 1}))),
            Entry::Record(record(
                json!({"kind": "call", "tool": "c", "trace": "t2", "seq": 2}),
            )),
        ];
        let (have, count) = with_missing(entries, true);
        assert_eq!(count, 2);
        assert_eq!(
            kinds(&have),
            [
                "Some(Call) 1 -",
                "Some(Call) 2 -",
                "Some(Result) 2 Ok",
                "Some(Message) - -",
                // t1 ends with its message: its open call is missing there.
                "Some(Result) 1 Missing",
                "Some(Call) - -",
                "Some(Result) - Missing",
            ]
        );
        let Entry::Record(missing) = &have[4] else {
            unreachable!()
        };
        let Fields::Owned(map) = &missing.fields else {
            unreachable!()
        };
        assert_eq!(map["trace"], "t1");
        assert_eq!(map["seq"], 2);
        assert_eq!(map["tool"], "a");
        assert_eq!(map["synthesized"], AT_END);
    }

    #[test]
    fn results_close_calls_by_id_or_by_tool() {
        let entries = vec![
            Entry::Record(record(json!({"kind": "call", "tool": "a", "call_id": "x"}))),
            Entry::Record(record(json!({"kind": "call", "tool": "a", "call_id": "x"}))),
            Entry::Record(record(json!({"kind": "call", "tool": "b"}))),
            Entry::Record(record(
                json!({"kind": "result", "call_id": "x", "status": "ok"}),
            )),
            Entry::Record(record(
                json!({"kind": "result", "tool": "b", "status": "error"}),
            )),
        ];
        let (have, count) = with_missing(entries, false);
        assert_eq!(count, 1, "the reused id is answered once");
        assert_eq!(kinds(&have).last().unwrap(), "Some(Result) x Missing");
    }
}
