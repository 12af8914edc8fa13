//! tracegate: verify what AI agents do after a tool fails.
//!
//! A spec, written in a small language, says which sequences of tool calls and results
//! are allowed; tracegate replays recorded agent transcripts through that state machine
//! and reports every forbidden path with the trace line, the spec rule and the path that
//! led there.
//!
//! The pipeline, one module per stage, each returning plain data:
//!
//! ```text
//! trace files ─► trace::input ─► Record ─► check::Monitor ─► Diagnostic ─► diagnostic::render
//!  spec files ─► spec::parse ─► spec::ast ─► spec::analyzer ─► machine::Machine ─┘
//! ```
//!
//! [`trace::input::TraceInput`] is the one way to read a trace of any format; the
//! modules form layers, from JSON values ([`json`]) and spec spans ([`source`]) at the
//! bottom to the command line at the top (`ARCHITECTURE.md` in the repository describes
//! them).
//!
//! The same engine works one record at a time, for a runtime that wants to know whether
//! the agent's next step is allowed:
//!
//! ```
//! use std::path::Path;
//! use std::sync::Arc;
//!
//! use tracegate::check::Monitor;
//! use tracegate::machine::SpecSource;
//! use tracegate::trace::{Location, native};
//!
//! let source = Arc::new(SpecSource::new("seed.tg", r#"
//! event create          = call create_record
//! event outcome_unknown = result create_record where status == "error"
//! event lookup          = call lookup_by_request_id
//! event found           = result lookup_by_request_id where status == "ok"
//! path create -> outcome_unknown -> lookup -> found
//! forbid outcome_unknown on create: "blind re-create"
//! "#));
//! let specs = vec![tracegate::spec::analyzer::load(source).expect("the spec compiles")];
//!
//! let mut monitor = Monitor::new(&specs, Arc::from(Path::new("live")), None);
//! let lines = [
//!     r#"{"kind":"call","tool":"create_record","call_id":"1"}"#,
//!     r#"{"kind":"result","call_id":"1","status":"error","error":{"message":"timeout"}}"#,
//!     r#"{"kind":"call","tool":"create_record","call_id":"2"}"#,
//! ];
//! for (i, line) in lines.iter().enumerate() {
//!     let loc = Location { line: i as u64 + 1, ..Location::default() };
//!     monitor.feed(native::decode_line(line, loc).expect("a valid record"));
//! }
//! let outcome = monitor.finish();
//! assert_eq!(outcome.diagnostics.len(), 1);
//! assert_eq!(outcome.diagnostics[0].code.as_str(), "forbidden-transition");
//! assert_eq!(outcome.diagnostics[0].message, "blind re-create");
//! ```
//!
//! ## Exploring a spec, shrinking a failure, measuring a corpus
//!
//! [`explore`] answers three questions from the same machine. What does a spec forbid,
//! and what is the shortest way to trigger each violation? What does a trace that
//! triggers it look like? And which paths did a corpus of traces never exercise? Every
//! answer is data; the `explore`, `shrink` and `coverage` commands only print it.
//!
//! ```
//! use std::sync::Arc;
//!
//! use tracegate::check::CheckOptions;
//! use tracegate::explore::{self, Format, ShrinkOptions};
//! use tracegate::machine::SpecSource;
//!
//! let source = Arc::new(SpecSource::new("seed.tg", r#"
//! event create          = call create_record
//! event outcome_unknown = result create_record where status == "error"
//! event lookup          = call lookup_by_request_id
//! event found           = result lookup_by_request_id where status == "ok"
//! path create -> outcome_unknown -> lookup -> found
//! forbid outcome_unknown on create: "blind re-create"
//! otherwise ignore
//! "#));
//! let machine = tracegate::spec::analyzer::load(source).expect("the spec compiles");
//!
//! // The shortest path to every violation the spec can report.
//! let exploration = explore::explore(&machine, explore::DEFAULT_MAX_DEPTH).expect("a small search");
//! let blind = &exploration.counterexamples[0];
//! assert_eq!(
//!     blind.display_path(&machine),
//!     "create -> outcome_unknown -> create ✗"
//! );
//!
//! // A synthetic trace that triggers it, verified by the checker, in any format.
//! let trace = explore::counterexample_trace(&machine, blind, Format::Native)
//!     .expect("records can be synthesized");
//! let jsonl = trace.write(Format::Native).expect("native JSONL expresses everything");
//! assert_eq!(jsonl.lines().count(), 3);
//! assert_eq!(trace.expected.as_ref().map(|e| e.record), Some(2));
//!
//! // A long failing trace, shrunk back to the records that matter.
//! let mut long = String::new();
//! for i in 0..200 {
//!     long.push_str(&format!("{{\"kind\":\"message\",\"role\":\"assistant\",\"text\":\"step {i}\"}}\n"));
//! }
//! long.push_str(&jsonl);
//! let shrunk = explore::shrink(std::slice::from_ref(&machine), long.as_bytes(), &ShrinkOptions::default())
//!     .expect("the trace fails");
//! assert_eq!((shrunk.before, shrunk.after), (203, 3));
//!
//! // Which transitions a corpus exercised.
//! let coverage = explore::coverage_reader(
//!     std::slice::from_ref(&machine),
//!     Arc::from(std::path::Path::new("corpus.jsonl")),
//!     jsonl.as_bytes(),
//!     &CheckOptions::default(),
//! );
//! let spec = &coverage.specs[0];
//! assert_eq!(spec.transitions_ratio().covered, 2); // create, outcome_unknown
//! assert_eq!(spec.forbidden[0].count, 1);
//! ```

#![warn(missing_docs)]

pub mod chain;
pub mod check;
#[doc(hidden)]
pub mod cli;
pub mod diagnostic;
pub mod eval;
pub mod explore;
pub mod export;
pub mod files;
pub mod ingest;
pub mod joined;
pub mod json;
pub mod lint;
pub mod machine;
pub(crate) mod redact;
pub mod runtime;
pub mod source;
pub mod spec;
pub(crate) mod suggest;
pub mod time;
pub mod trace;
