//! Asking before acting: records built from the shapes agent SDKs hand a runtime, so
//! that it can ask a [`Monitor`](crate::check::Monitor) about the tool call it is about
//! to make, and tell it about the result it got.
//!
//! Each constructor reads its shape through the same adapter that reads recorded
//! transcripts of that format ([`crate::trace::adapters`]), so a live call and the same
//! call in a stored transcript give the same record and the same verdict. A record built
//! here has no place in a file: its [`Location`] is empty until the caller numbers it
//! (the line is what a violation's path shows), and it has no `seq`.
//!
//! ```
//! use std::path::Path;
//! use std::sync::Arc;
//!
//! use serde_json::json;
//! use tracegate::check::Monitor;
//! use tracegate::machine::SpecSource;
//! use tracegate::runtime;
//!
//! let source = Arc::new(SpecSource::new("refund.tg", r#"
//! event refund       = call issue_refund
//! event refund_fails = result issue_refund where status == "error"
//! event check        = call get_refund_status
//! path refund -> refund_fails -> check
//! forbid refund_fails on refund: "refund retried before its status was checked"
//! otherwise ignore
//! "#));
//! let specs: Arc<[_]> = vec![tracegate::spec::analyzer::load(source).expect("the spec compiles")].into();
//! let mut monitor = Monitor::shared(specs, Arc::from(Path::new("live")), None);
//!
//! // The model asks for a refund (an OpenAI tool call); nothing forbids it.
//! let call = json!({"id": "call_1", "type": "function",
//!     "function": {"name": "issue_refund", "arguments": "{\"order\": 7}"}});
//! let record = runtime::openai_tool_call(&call).expect("a tool call");
//! assert!(monitor.allows(&record).is_allowed());
//! assert!(monitor.feed(record).is_empty());
//!
//! // The tool fails.
//! let reply = json!({"role": "tool", "tool_call_id": "call_1", "error": "gateway timeout",
//!     "content": "gateway timeout"});
//! assert!(monitor.feed(runtime::openai_tool_result(&reply).expect("a tool message")).is_empty());
//!
//! // The model asks again, this time as an Anthropic `tool_use` block: the runtime asks
//! // first and does not run it.
//! let again = json!({"type": "tool_use", "id": "toolu_2", "name": "issue_refund",
//!     "input": {"order": 7}});
//! let answer = monitor.allows(&runtime::anthropic_tool_use(&again).expect("a tool_use block"));
//! assert!(!answer.is_allowed());
//! assert_eq!(answer.code().map(|c| c.as_str()), Some("forbidden-transition"));
//! assert_eq!(answer.message(), Some("refund retried before its status was checked"));
//! assert_eq!(answer.allowed_events(), ["check"]);
//!
//! // Asking changed nothing: checking the status is still the way forward.
//! let status = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
//!     "params": {"name": "get_refund_status", "arguments": {"order": 7}}});
//! assert!(monitor.feed(runtime::mcp_request(&status).expect("a request")).is_empty());
//!
//! // The end of the conversation gives the end-of-trace verdicts, after those `feed`
//! // already returned.
//! let already = monitor.reported();
//! let outcome = monitor.finish();
//! assert!(outcome.diagnostics[already..].is_empty());
//! ```
//!
//! The module also checks whole traces for a host that is not the command line (the
//! Python package, a task of a distributed engine): [`check_corpus`] is what
//! `tracegate check` does, as data, and [`check_bytes`] checks one trace file's content
//! wherever it was stored.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::check::{CheckOptions, Outcome, check_input};
use crate::diagnostic::{Code, Diagnostic, Summary};
use crate::files;
use crate::machine::{Machine, SpecSource};
use crate::trace::adapters::{self, Entry, Format, InputOptions};
use crate::trace::input::TraceInput;
use crate::trace::record::describe_json;
use crate::trace::{Fields, Kind, Location, Record};

/// Why a value could not be made into a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordError {
    message: String,
}

impl RecordError {
    fn new(message: impl Into<String>) -> RecordError {
        RecordError {
            message: message.into(),
        }
    }

    /// What is wrong with the value, as a sentence for a report.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for RecordError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RecordError {}

/// A native record (DESIGN.md §2) from a JSON object:
/// `{"kind": "call", "tool": "lookup", "call_id": "1", "args": {…}}`.
pub fn record(value: Value) -> Result<Record<'static>, RecordError> {
    match value {
        Value::Object(map) => record_from_map(map),
        other => Err(RecordError::new(format!(
            "record is {}, expected an object",
            describe_json(&other.to_string())
        ))),
    }
}

/// [`record`], from an object's fields.
pub fn record_from_map(map: Map<String, Value>) -> Result<Record<'static>, RecordError> {
    Record::new(Fields::Owned(map), Location::default())
        .map_err(|err| RecordError::new(err.to_string()))
}

/// The call in one element of an OpenAI Chat Completions assistant message's
/// `tool_calls` (`{"id", "type": "function", "function": {"name", "arguments"}}`).
pub fn openai_tool_call(call: &Value) -> Result<Record<'static>, RecordError> {
    let message = json!([{"role": "assistant", "tool_calls": [call]}]);
    through(Format::OpenAi, message, Kind::Call, "tool call")
}

/// The result in an OpenAI Chat Completions `role: "tool"` message; it answers the
/// call its `tool_call_id` names.
pub fn openai_tool_result(message: &Value) -> Result<Record<'static>, RecordError> {
    through(
        Format::OpenAi,
        json!([message]),
        Kind::Result,
        "tool message",
    )
}

/// The call in an Anthropic Messages `tool_use` content block
/// (`{"type": "tool_use", "id", "name", "input"}`).
pub fn anthropic_tool_use(block: &Value) -> Result<Record<'static>, RecordError> {
    let message = json!([{"role": "assistant", "content": [block]}]);
    through(Format::Anthropic, message, Kind::Call, "tool_use block")
}

/// The result in an Anthropic Messages `tool_result` content block
/// (`{"type": "tool_result", "tool_use_id", "content", "is_error"}`).
pub fn anthropic_tool_result(block: &Value) -> Result<Record<'static>, RecordError> {
    let message = json!([{"role": "user", "content": [block]}]);
    through(
        Format::Anthropic,
        message,
        Kind::Result,
        "tool_result block",
    )
}

/// The call in an MCP (JSON-RPC) request: for `tools/call`, the tool `params.name`
/// with the args `params.arguments`.
pub fn mcp_request(request: &Value) -> Result<Record<'static>, RecordError> {
    through(
        Format::Mcp,
        json!([request]),
        Kind::Call,
        "JSON-RPC request",
    )
}

/// The result in an MCP (JSON-RPC) reply to `request`: a reply says nothing of the
/// method it answers, so the request is read first, as in a log.
pub fn mcp_result(request: &Value, reply: &Value) -> Result<Record<'static>, RecordError> {
    through(
        Format::Mcp,
        json!([request, reply]),
        Kind::Result,
        "JSON-RPC reply",
    )
}

/// Reads `transcript` as `format` and returns its last record, which must be of `kind`.
fn through(
    format: Format,
    transcript: Value,
    kind: Kind,
    what: &str,
) -> Result<Record<'static>, RecordError> {
    let options = InputOptions {
        format: Some(format),
        select: None,
    };
    let reading = adapters::read_text(&transcript.to_string(), &options);
    let mut last = None;
    for entry in reading.entries {
        match entry {
            Entry::Record(record) => last = Some(record),
            Entry::Problem(problem) => {
                return Err(RecordError::new(format!("{what}: {}", problem.message)));
            }
        }
    }
    match last {
        // The record's place and position (`seq`) are in the transcript built here,
        // which means nothing to the caller.
        Some(mut record) if record.kind == Some(kind) => {
            record.loc = Location::default();
            if let Fields::Owned(map) = &mut record.fields {
                map.remove("seq");
            }
            Ok(record)
        }
        Some(_) | None => Err(RecordError::new(format!(
            "{what} holds no {} (the {} reader found none)",
            kind.as_str(),
            format.describe()
        ))),
    }
}

/// Compiles the specs under `paths` (files, or directories walked for `*.tg`): the
/// machines, and every error (finding no spec file is one).
pub fn load_specs(paths: &[PathBuf]) -> (Vec<Machine>, Vec<Diagnostic>) {
    let (spec_files, mut errors) = files::collect(paths, files::is_spec_file);
    if spec_files.is_empty() && errors.is_empty() {
        errors.push(no_input("spec", paths, "`*.tg`"));
    }
    let (mut specs, spec_errors) = files::load_specs(&spec_files);
    errors.extend(spec_errors);
    mask_spec_strings(&mut specs);
    (specs, errors)
}

/// Masks secrets in the strings a spec shows people (`about`, `forbid` messages), once,
/// before anything prints or draws them: a drawing wraps long labels, which would
/// split a secret where a mask applied to the output could no longer find it.
pub(crate) fn mask_spec_strings(specs: &mut [Machine]) {
    for machine in specs {
        if let Some(about) = &mut machine.about {
            *about = crate::redact::redact(about).into_owned();
        }
        for rule in &mut machine.forbids {
            rule.message = crate::redact::redact(&rule.message).into_owned();
        }
    }
}

/// Compiles a spec given as text; `path` names it in diagnostics.
pub fn load_spec_text(path: &Path, text: &str) -> Result<Machine, Vec<Diagnostic>> {
    let source = Arc::new(SpecSource::new(path.to_path_buf(), text.to_string()));
    crate::spec::analyzer::load(source.clone()).map_err(|errors| {
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        errors
            .into_iter()
            .map(|error| error.into_diagnostic(&name, &source))
            .collect()
    })
}

/// Checks the content of one trace file, in any format tracegate reads, exactly as
/// `tracegate check` checks the file `file`.
pub fn check_bytes(
    specs: &[Machine],
    file: Arc<Path>,
    bytes: &[u8],
    options: &CheckOptions,
    input: &InputOptions,
) -> Outcome {
    let opened = TraceInput::from_bytes(bytes, input, options.max_line_bytes);
    check_input(specs, file, opened, options, None)
}

/// What `tracegate check` reports: every diagnostic in the order it prints them, and
/// the summary it ends with.
#[derive(Debug, Default)]
pub struct CorpusReport {
    /// Every diagnostic, in the order `tracegate check` prints them.
    pub diagnostics: Vec<Diagnostic>,
    /// The counts `tracegate check` ends its report with.
    pub summary: Summary,
    /// How many of the first diagnostics are about the specs (none found, one that
    /// does not compile). With any, no trace was checked.
    pub spec_errors: usize,
}

impl CorpusReport {
    fn add(&mut self, diagnostic: Diagnostic) {
        if diagnostic.is_violation() {
            self.summary.violations += 1;
        } else if diagnostic.is_warning() {
            self.summary.warnings += 1;
        } else {
            self.summary.errors += 1;
        }
        self.diagnostics.push(diagnostic);
    }
}

/// `tracegate check SPECS TRACES` as data: spec errors first (a spec that does not
/// compile checks nothing), then each trace file's findings, files in the order
/// given and directories walked in sorted order.
pub fn check_corpus(
    spec_paths: &[PathBuf],
    trace_paths: &[PathBuf],
    options: &CheckOptions,
    input: &InputOptions,
) -> CorpusReport {
    let mut report = CorpusReport::default();
    let (specs, spec_errors) = load_specs(spec_paths);
    report.summary.specs = specs.len();
    let fail_closed = !spec_errors.is_empty() || specs.is_empty();
    report.spec_errors = spec_errors.len();
    spec_errors.into_iter().for_each(|d| report.add(d));
    let (trace_files, missing) = files::collect(trace_paths, files::is_trace_file);
    let nothing = trace_files.is_empty() && missing.is_empty();
    missing.into_iter().for_each(|d| report.add(d));
    if nothing {
        report.add(no_input("trace", trace_paths, "`*.jsonl` or `*.json`"));
    }
    if fail_closed {
        return report;
    }
    for checked in crate::check::check_paths(&specs, &trace_files, options, input) {
        report.summary.records += checked.outcome.records;
        report.summary.synthesized += checked.outcome.synthesized;
        report.summary.traces += checked.outcome.traces;
        checked
            .outcome
            .diagnostics
            .into_iter()
            .for_each(|d| report.add(d));
    }
    report
}

/// `no-input`: none of `paths` held a file of the kind wanted.
pub(crate) fn no_input(what: &str, paths: &[PathBuf], pattern: &str) -> Diagnostic {
    let list = paths
        .iter()
        .map(|p| format!("`{}`", p.display()))
        .collect::<Vec<_>>()
        .join(", ");
    let mut diagnostic = Diagnostic::new(Code::NoInput, format!("no {what} files found in {list}"));
    diagnostic.hint = Some(format!(
        "{what} files are {pattern}; name them on the command line or in a directory"
    ));
    diagnostic
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn fields(record: &Record<'_>) -> Value {
        let Fields::Owned(map) = &record.fields else {
            panic!("adapters build owned fields");
        };
        Value::Object(map.clone())
    }

    #[test]
    fn an_openai_tool_call_parses_its_arguments() {
        let call = json!({"id": "c1", "type": "function",
            "function": {"name": "lookup", "arguments": "{\"q\": 1}"}});
        let have = openai_tool_call(&call).expect("a call");
        assert_eq!(
            fields(&have),
            json!({"kind": "call", "tool": "lookup", "args": {"q": 1}, "call_id": "c1"})
        );
        assert_eq!(have.loc, Location::default());
    }

    #[test]
    fn an_openai_tool_message_is_a_result_of_its_call() {
        let message = json!({"role": "tool", "tool_call_id": "c1", "content": "{\"n\": 2}"});
        let have = openai_tool_result(&message).expect("a result");
        assert_eq!(
            fields(&have),
            json!({"kind": "result", "status": "ok", "output": {"n": 2},
                "output_text": "{\"n\": 2}", "call_id": "c1"})
        );
    }

    #[test]
    fn anthropic_blocks_become_a_call_and_an_error() {
        let block = json!({"type": "tool_use", "id": "t1", "name": "pay", "input": {"x": 1}});
        let have = anthropic_tool_use(&block).expect("a call");
        assert_eq!(
            fields(&have),
            json!({"kind": "call", "tool": "pay", "args": {"x": 1}, "call_id": "t1"})
        );
        let block = json!({"type": "tool_result", "tool_use_id": "t1", "is_error": true,
            "content": "declined"});
        let have = anthropic_tool_result(&block).expect("a result");
        assert_eq!(have.status, Some(crate::trace::Status::Error));
        assert_eq!(have.call_id.as_deref(), Some("t1"));
    }

    #[test]
    fn an_mcp_reply_is_read_with_its_request() {
        let request = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
            "params": {"name": "search", "arguments": {"q": "x"}}});
        let call = mcp_request(&request).expect("a call");
        assert_eq!(call.tool.as_deref(), Some("search"));
        let reply = json!({"jsonrpc": "2.0", "id": 4,
            "result": {"isError": true, "content": [{"type": "text", "text": "down"}]}});
        let result = mcp_result(&request, &reply).expect("a result");
        assert_eq!(result.kind, Some(Kind::Result));
        assert_eq!(result.tool.as_deref(), Some("search"));
        assert_eq!(result.status, Some(crate::trace::Status::Error));
    }

    #[test]
    fn shapes_that_hold_no_call_say_so() {
        let have = openai_tool_call(&json!({"id": "c1"})).expect_err("no function");
        assert_eq!(have.message(), "tool call: tool call has no `function`");
        let have = anthropic_tool_use(&json!({"type": "text", "text": "hi"})).expect_err("text");
        assert_eq!(
            have.message(),
            "tool_use block holds no call (the Anthropic Messages reader found none)"
        );
        let have = record(json!([1])).expect_err("not an object");
        assert_eq!(
            have.message(),
            "record is an array `[1]`, expected an object"
        );
        let have = record(json!({"kind": "step"})).expect_err("bad kind");
        assert_eq!(
            have.message(),
            "field `kind` is \"step\", expected \"call\", \"result\" or \"message\""
        );
    }
}
