//! Trace formats: recognizing what a file holds, finding the transcripts in it, and
//! turning each into normalized records (DESIGN.md §2) located in the original file.
//!
//! A file is read in one of four layouts, decided from its first lines:
//! - native JSONL (one record per line), which the checker streams: [`Opened::Native`];
//! - one transcript element per line (an MCP log, a Claude Code session log, a Codex
//!   rollout, an OpenAI message per line, …);
//! - one JSON document per line (each line a run with a `messages` list, an OTLP export);
//! - one JSON document (pretty-printed or not), read whole.
//!
//! In a document, transcripts are found where `--select` says, or by a search for the
//! common shapes: a message list at the root, an object holding one (`messages`,
//! `steps`, …), an array of runs each holding one. Each list becomes its own trace,
//! named by its JSON pointer (and its run's id field, when it has one). OpenTelemetry
//! spans are gathered from the whole file and split by trace id (an export, or a file
//! of export requests one per line, is read span by span without holding it: `stream`).
//! A ToolBench search tree is one transcript whose root-to-leaf branches are its traces.
//!
//! The work is split by stage: `detect` decides the layout and each element's format
//! from the content; `search` finds the transcripts in a document; `document` reads
//! the documents, hands each transcript to its format's module, which turns its
//! elements into records, and gives every record its trace, position and location.
//! This module holds the types they share and the entry points.

pub(crate) mod anthropic;
pub(crate) mod atif;
pub(crate) mod claude_code;
pub(crate) mod codex;
mod detect;
mod document;
pub(crate) mod gemini;
pub(crate) mod mcp;
pub(crate) mod openai;
pub(crate) mod otel;
mod pieces;
pub(crate) mod responses;
mod search;
pub(crate) mod select;
mod shared;
mod sketch;
mod stream;
#[cfg(test)]
pub(crate) use stream::LOOKED_AHEAD;
mod threads;
pub(crate) mod toolbench;
pub(crate) mod unanswered;
mod unique;

use std::fmt;
use std::io::{self, Read as _};
use std::ops::Range;
use std::path::Path;

use serde_json::Value;

use detect::{Sniffed, Unread, sniff, sniff_ahead};
use document::{Doc, document, read_docs, read_document, read_lines};
use search::Found;
pub use select::{Selector, SelectorError};
use shared::Map;
/// The seeded choices tests generate inputs with.
#[cfg(test)]
pub(crate) use sketch::corpus::Choices;
#[cfg(test)]
pub(crate) use stream::LARGE_RUN;
pub use stream::Stream;
pub(crate) use stream::{Handed, SURVEY_AFTER};

use crate::trace::json_index::child_pointer;
use crate::trace::record::{Built, Known};
use crate::trace::{Fields, Location, Pointer, Record};

/// A trace format tracegate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    /// tracegate's own JSONL records (DESIGN.md §2).
    Native,
    /// OpenAI Chat Completions messages.
    OpenAi,
    /// OpenAI Responses items.
    Responses,
    /// Anthropic Messages.
    Anthropic,
    /// MCP / JSON-RPC messages.
    Mcp,
    /// OpenTelemetry GenAI spans (OTLP JSON).
    Otel,
    /// ATIF trajectories.
    Atif,
    /// ToolBench search trees.
    ToolBench,
    /// Claude Code session logs.
    ClaudeCode,
    /// Codex CLI rollouts.
    Codex,
    /// Gemini CLI sessions.
    Gemini,
}

impl Format {
    /// Every format, in the order `--format` lists them.
    pub const ALL: [Format; 11] = [
        Format::Native,
        Format::OpenAi,
        Format::Responses,
        Format::Anthropic,
        Format::Mcp,
        Format::Otel,
        Format::Atif,
        Format::ToolBench,
        Format::ClaudeCode,
        Format::Codex,
        Format::Gemini,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "native",
            Format::OpenAi => "openai",
            Format::Responses => "openai-responses",
            Format::Anthropic => "anthropic",
            Format::Mcp => "mcp",
            Format::Otel => "otel",
            Format::Atif => "atif",
            Format::ToolBench => "toolbench",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::Gemini => "gemini-cli",
        }
    }

    /// The format `--format NAME` names, if any.
    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }

    /// What the format is, for people.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Native => "native JSONL records",
            Format::OpenAi => "OpenAI Chat Completions messages",
            Format::Responses => "OpenAI Responses items",
            Format::Anthropic => "Anthropic Messages",
            Format::Mcp => "MCP / JSON-RPC messages",
            Format::Otel => "OpenTelemetry GenAI spans (OTLP JSON)",
            Format::Atif => "ATIF trajectories",
            Format::ToolBench => "ToolBench search trees",
            Format::ClaudeCode => "Claude Code session logs",
            Format::Codex => "Codex CLI rollouts",
            Format::Gemini => "Gemini CLI sessions",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How to read inputs: `--format` and `--select`.
#[derive(Debug, Clone, Default)]
pub struct InputOptions {
    /// `None` detects the format from the content.
    pub format: Option<Format>,
    /// Where in a document the transcripts are (`--select`); `None` searches for them.
    pub select: Option<Selector>,
}

/// How a file is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Native records, one per line: streamed by the checker.
    NativeLines,
    /// One transcript element (message, item, JSON-RPC message) per line.
    ElementLines,
    /// One JSON document per line.
    DocumentLines,
    /// One JSON document.
    Document,
}

/// What was recognized in a file, for `--verbose`.
#[derive(Debug, Clone)]
pub struct Detected {
    /// How the file is laid out.
    pub layout: Layout,
    /// The formats read, in the order first met.
    pub formats: Vec<Format>,
    /// Whether the format was given by `--format`.
    pub explicit: bool,
    /// Traces found, as the checker will check them: a message list, an MCP session,
    /// a search tree's branch, a Claude Code session each count one.
    pub traces: usize,
    /// A warning about how the file was read: native records none of which has `kind`
    /// or `tool` ([`ProblemKind::Untyped`]).
    pub warning: Option<Problem>,
}

impl fmt::Display for Detected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.formats.iter().map(|f| f.describe()).collect();
        let names = if names.is_empty() {
            "no transcript".to_string()
        } else {
            names.join(" and ")
        };
        let how = if self.explicit {
            "as --format says"
        } else {
            "detected"
        };
        let layout = match self.layout {
            Layout::NativeLines => "one record per line",
            Layout::ElementLines => "one element per line",
            Layout::DocumentLines => "one JSON document per line",
            Layout::Document => "one JSON document",
        };
        write!(f, "{names} ({how}; {layout}")?;
        if self.layout != Layout::NativeLines {
            let s = if self.traces == 1 { "" } else { "s" };
            write!(f, "; {} trace{s}", self.traces)?;
        }
        f.write_str(")")
    }
}

/// What kind of problem an input has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// An element that is not usable (`malformed-record`).
    Malformed,
    /// No transcript in any known format (`unknown-format`).
    UnknownFormat,
    /// A file read as native records in which no record has `kind` or `tool`
    /// (`untyped-records`): a warning, as specs will likely match nothing in it.
    Untyped,
    /// An input that holds nothing at all: an empty or blank file, a pipe closed
    /// before writing (`no-input`).
    Empty,
}

/// A problem with an input: an unusable element, no known format, or a doubtful file.
#[derive(Debug, Clone)]
pub struct Problem {
    /// What kind of problem it is, which decides its diagnostic code.
    pub kind: ProblemKind,
    /// Where in the file it is.
    pub loc: Location,
    /// What is wrong, for people.
    pub message: String,
    /// How to fix it, when there is a likely fix.
    pub hint: Option<String>,
}

/// One normalized record or one problem, in input order.
#[derive(Debug)]
pub enum Entry {
    /// A normalized record.
    Record(Record<'static>),
    /// An element that is not a usable record, or an input in no known format.
    Problem(Problem),
}

/// An input read through an adapter.
#[derive(Debug)]
pub struct Reading {
    /// What was recognized in the input.
    pub detected: Detected,
    /// The records and problems, in input order.
    pub entries: Vec<Entry>,
    /// Distinct traces among the records. With more than one, every record has a
    /// `trace` field naming its trace.
    pub traces: usize,
    /// The transcripts' elements that can be removed whole, in file order: for
    /// `shrink`, which cuts a file down by removing elements and keeps the rest of its
    /// text as it is. A record is located inside the element it was read from (a
    /// `missing` result an adapter gives an unanswered call, inside the call's). None
    /// when a document is one element, or a search tree.
    pub pieces: Vec<Piece>,
    /// The byte ranges (brackets included) of the JSON arrays that pieces are members
    /// of. Every member of such an array is a piece.
    pub arrays: Vec<Range<u64>>,
}

/// A transcript element that can be removed whole: a message, an item, a step, a span,
/// a JSON-RPC message, or the line holding one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// Its bytes in the file (without a line's `\n`).
    pub bytes: Range<u64>,
    /// The array it is a member of, as an index into [`Reading::arrays`]; `None` when
    /// it is a whole line of the file.
    pub array: Option<usize>,
}

/// What opening a file gave.
#[derive(Debug)]
pub enum Opened {
    /// Native JSONL: the caller streams the file.
    Native(Detected),
    /// Any other format, read whole by its adapter.
    Read(Reading),
}

/// What opening a file to stream it gave ([`open_streamed`]).
// One per file opened, moved once: its size does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub(crate) enum Streamed {
    /// As [`open`] opens it.
    Opened(Opened),
    /// A transcript format that streams: an MCP log, a document that is an array of
    /// runs.
    Stream(Box<Stream>),
}

/// A place in the input: a document (the file, or one line) and a JSON pointer in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Site {
    /// The document's index among the documents read.
    pub doc: usize,
    /// The JSON pointer of the value in the document.
    pub pointer: Pointer,
    /// Where the site is in the file, worked out while its document was at hand
    /// ([`Out::pin`]): a streamed input keeps no document once it is read, and an
    /// adapter may emit at a site it kept (an MCP request's, when it is cancelled).
    pub pinned: Option<std::sync::Arc<Location>>,
}

impl Site {
    /// Its pinned location, taken: moved out of the site when nothing else holds it
    /// (the site of a record made from a line's text, say), copied otherwise.
    pub fn take_pinned(&mut self) -> Option<Location> {
        self.pinned.take().map(std::sync::Arc::unwrap_or_clone)
    }

    /// The site at `pointer` in document `doc`.
    pub fn new(doc: usize, pointer: String) -> Site {
        Site {
            doc,
            pointer: pointer.into(),
            pinned: None,
        }
    }

    /// The site of `token` (a key or an index) under this one.
    pub fn child(&self, token: impl fmt::Display) -> Site {
        Site::new(self.doc, child_pointer(&self.pointer, token))
    }
}

/// One element of a transcript.
#[derive(Debug, Clone)]
pub(crate) struct Element<'v> {
    /// The element's JSON value.
    pub value: &'v Value,
    /// Where it is.
    pub site: Site,
}

/// What adapters write: records (a field map) and problems, each at a site.
#[derive(Debug, Default)]
pub(crate) struct Out {
    items: Vec<Emitted>,
    /// The document being read, when documents are read one at a time (a streamed
    /// input): sites an adapter keeps are pinned to their place in it.
    current: Option<document::Current>,
}

#[derive(Debug)]
struct Emitted {
    site: Site,
    /// A trace within the transcript (an MCP session, an OpenTelemetry trace id).
    trace: Option<String>,
    what: Emit,
    /// A built record's canonical fields, when the adapter gave them as values.
    known: Option<Known>,
}

#[derive(Debug)]
enum Emit {
    Record(Made),
    Problem(String),
    /// A problem of an element read into no trace (a line of a log of threads that is
    /// no record of any), placed among the records by where it is in the file, as a
    /// line that is not JSON is ([`Out::placed`]).
    Placed(String),
}

/// A record's fields as an adapter made them: an object of values, or one written as
/// JSON text on a fast path ([`Built`]). A built object is boxed: a record kept as
/// values (a transcript read whole keeps one per call) then costs a word more than its
/// map, not a built object's two strings.
#[derive(Clone)]
pub(crate) enum Made {
    Map(Map),
    Built(Box<Built>),
}

impl From<Map> for Made {
    fn from(map: Map) -> Made {
        Made::Map(map)
    }
}

impl From<Built> for Made {
    fn from(built: Built) -> Made {
        Made::Built(Box::new(built))
    }
}

impl Made {
    /// Whether member `key` is set.
    pub fn contains(&self, key: &str) -> bool {
        match self {
            Made::Map(map) => map.contains_key(key),
            Made::Built(built) => built.get(key).is_some(),
        }
    }

    /// The value of member `key` (decoded from a built object's text).
    pub fn get(&self, key: &str) -> Option<std::borrow::Cow<'_, Value>> {
        match self {
            Made::Map(map) => map.get(key).map(std::borrow::Cow::Borrowed),
            Made::Built(built) => {
                let value = serde_json::from_str(built.get(key)?)
                    .expect("bug: a built member is valid JSON");
                Some(std::borrow::Cow::Owned(value))
            }
        }
    }

    /// Sets member `key` to `from`'s, when `from` has it: copied as text from one
    /// built object to another, as a value otherwise.
    pub fn copy(&mut self, key: &'static str, from: &Made) {
        match (&mut *self, from) {
            (Made::Built(to), Made::Built(from)) => {
                if let Some(raw) = from.get(key) {
                    to.raw(key, raw);
                }
            }
            _ => {
                if let Some(value) = from.get(key) {
                    self.insert(key, value.into_owned());
                }
            }
        }
    }

    /// Members `keys` only, those it has, as a built object: a member of a built
    /// object keeps its text, one of a map is written as [`Built::value`] writes it, so
    /// that [`Made::copy`] and [`Made::get`] read from it what they read from `self`.
    pub fn only(&self, keys: &[&'static str]) -> Made {
        let mut only = Built::with_members(keys.len());
        for &key in keys {
            match self {
                Made::Map(map) => {
                    if let Some(value) = map.get(key) {
                        only.value(key, value);
                    }
                }
                Made::Built(built) => {
                    if let Some(raw) = built.get(key) {
                        only.raw(key, raw);
                    }
                }
            }
        }
        Made::Built(Box::new(only))
    }

    /// Sets member `key` to `value`, replacing it if it is set.
    pub fn insert(&mut self, key: &'static str, value: Value) {
        match self {
            Made::Map(map) => {
                map.insert(key.into(), value);
            }
            Made::Built(built) => built.value(key, &value),
        }
    }

    /// The fields of the record.
    pub fn into_fields(self) -> Fields<'static> {
        match self {
            Made::Map(map) => Fields::Owned(map),
            Made::Built(built) => Fields::Built(*built),
        }
    }
}

/// Shown as the object it is, however it was made: a fast path and a slow one that
/// make the same record look the same.
impl fmt::Debug for Made {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Made::Map(map) => map.fmt(f),
            Made::Built(built) => built.to_map().fmt(f),
        }
    }
}

impl Out {
    /// A record of the transcript, at `site`.
    pub fn record(&mut self, site: &Site, fields: Map) {
        self.record_in(None, site, fields);
    }

    /// A record of the sub-trace `trace` of the transcript.
    pub fn record_in(&mut self, trace: Option<String>, site: &Site, fields: Map) {
        self.made_in(trace, site, Made::Map(fields));
    }

    /// A record of the sub-trace `trace`, made either way.
    pub fn made_in(&mut self, trace: Option<String>, site: &Site, fields: Made) {
        self.items.push(Emitted {
            site: site.clone(),
            trace,
            what: Emit::Record(fields),
            known: None,
        });
    }

    /// A record of the sub-trace `trace`, built as JSON text, whose canonical fields
    /// are `known`.
    pub fn built_in(&mut self, trace: Option<String>, site: Site, fields: Built, known: Known) {
        self.items.push(Emitted {
            site,
            trace,
            what: Emit::Record(Made::Built(Box::new(fields))),
            known: Some(known),
        });
    }

    /// `site`, located now if its document is the one being streamed, so that the
    /// adapter may keep it and emit at it after the document is gone.
    pub fn pin(&self, site: &Site) -> Site {
        match &self.current {
            Some(current) if current.doc == site.doc && site.pinned.is_none() => Site {
                pinned: Some(std::sync::Arc::new(current.read.location(&site.pointer))),
                ..site.clone()
            },
            _ => site.clone(),
        }
    }

    /// The line the document being read starts on, when documents are read one at a
    /// time (a line of a file of lines is one); else 0.
    pub(super) fn line(&self) -> u64 {
        self.current.as_ref().map_or(0, |current| current.read.line)
    }

    /// A problem (`malformed-record`) at `site`.
    pub fn problem(&mut self, site: &Site, message: impl Into<String>) {
        self.emit_problem(site, Emit::Problem(message.into()));
    }

    /// A problem at `site` of an element read into no trace of a log of threads,
    /// placed among the records by where it is in the file (before the first record
    /// handed on after it that is further on), not where reading it falls among them:
    /// records around it may wait (a later thread for the threads before it, a call
    /// for its answer) longer in one reading than another, as what is known of the rest
    /// of the log differs (a file read twice, a stream read once).
    pub fn placed(&mut self, site: &Site, message: impl Into<String>) {
        self.emit_problem(site, Emit::Placed(message.into()));
    }

    fn emit_problem(&mut self, site: &Site, what: Emit) {
        self.items.push(Emitted {
            site: site.clone(),
            trace: None,
            what,
            known: None,
        });
    }
}

/// Opens `path` and reads it as `options` say (detecting the format when they don't).
/// Native JSONL is only recognized here, not read: the caller streams it.
pub fn open(path: &Path, options: &InputOptions, max_line_bytes: usize) -> io::Result<Opened> {
    match open_source(Source::File(path), options, max_line_bytes, false)? {
        Streamed::Opened(opened) => Ok(opened),
        Streamed::Stream(_) => unreachable!("bug: a file opened whole streams"),
    }
}

/// [`open`], streaming the formats that stream ([`Stream`]) instead of reading them
/// whole.
pub(crate) fn open_streamed(
    path: &Path,
    options: &InputOptions,
    max_line_bytes: usize,
) -> io::Result<Streamed> {
    open_source(Source::File(path), options, max_line_bytes, true)
}

/// Reads `bytes`, the whole content of a file, exactly as [`open`] reads the file (for
/// `shrink`, which checks many cut-down versions of one file without writing them).
pub fn open_bytes(bytes: &[u8], options: &InputOptions, max_line_bytes: usize) -> Opened {
    match open_source(Source::Bytes(bytes), options, max_line_bytes, false) {
        Ok(Streamed::Opened(opened)) => opened,
        Ok(Streamed::Stream(_)) => unreachable!("bug: bytes in memory are read whole"),
        Err(_) => unreachable!("bug: reading bytes in memory cannot fail"),
    }
}

/// Where the input's bytes are. Detection reads the start of the input more than once,
/// so each reader starts from the beginning.
#[derive(Clone, Copy)]
pub(super) enum Source<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

impl<'a> Source<'a> {
    fn reader(&self) -> io::Result<Box<dyn io::BufRead + 'a>> {
        Ok(match self {
            Source::File(path) => Box::new(io::BufReader::new(std::fs::File::open(path)?)),
            Source::Bytes(bytes) => Box::new(*bytes),
        })
    }

    /// A reader of the input from byte `offset` on (a file is opened there, not read
    /// up to it).
    fn reader_at(&self, offset: u64) -> io::Result<Box<dyn io::BufRead + 'a>> {
        Ok(match self {
            Source::File(path) => {
                let mut file = std::fs::File::open(path)?;
                io::Seek::seek(&mut file, io::SeekFrom::Start(offset))?;
                Box::new(io::BufReader::new(file))
            }
            Source::Bytes(bytes) => {
                let start = usize::try_from(offset).map_or(bytes.len(), |o| o.min(bytes.len()));
                Box::new(&bytes[start..])
            }
        })
    }
}

fn open_source(
    source: Source<'_>,
    options: &InputOptions,
    max_line_bytes: usize,
    stream: bool,
) -> io::Result<Streamed> {
    // Whether a document's streamed reading was tried under the layout already.
    let mut tried = false;
    let layout = match source {
        Source::File(path) if stream => match sniff_ahead(source, options, max_line_bytes)? {
            Sniffed::Layout(layout) => layout,
            // A minified document's first pass finds what the rest of its line is as
            // it reads it: detection does not parse it first.
            Sniffed::DocumentLinesIf(unread) => {
                let layout = Layout::DocumentLines;
                let stream = match unread {
                    Unread::Valid => document_stream(path, options, layout, max_line_bytes)?,
                    // (An OTLP export starts with `resourceSpans`: not read as one.)
                    Unread::Object => match stream::doc_plan::plan(path, options, layout)? {
                        Some(plan) if detect::names_no_element(plan.names()) => {
                            Some(Box::new(Stream::document(path, plan, options.format)?))
                        }
                        _ => None,
                    },
                };
                if let Some(stream) = stream {
                    return Ok(Streamed::Stream(stream));
                }
                let decided = sniff(source, options, max_line_bytes)?;
                tried = decided == layout;
                decided
            }
        },
        _ => sniff(source, options, max_line_bytes)?,
    };
    if layout == Layout::NativeLines {
        let detected = native_detected(source, options, max_line_bytes)?;
        return Ok(Streamed::Opened(Opened::Native(detected)));
    }
    if let Source::File(path) = source
        && stream
    {
        match layout {
            Layout::ElementLines => {
                let plan = stream::plan_lines(source, options, max_line_bytes)?;
                let explicit = options.format.is_some();
                if let Some(stream) = Stream::lines_of_file(path, plan, explicit, max_line_bytes)? {
                    return Ok(Streamed::Stream(Box::new(stream)));
                }
            }
            Layout::Document | Layout::DocumentLines => {
                if !tried
                    && let Some(stream) = document_stream(path, options, layout, max_line_bytes)?
                {
                    return Ok(Streamed::Stream(stream));
                }
                // Documents one per line, more than one: a line at a time.
                if layout == Layout::DocumentLines {
                    let first = stream::FirstDoc::read(path, options, max_line_bytes)?;
                    if first.more {
                        let stream = Stream::doc_lines(path, first, options, max_line_bytes)?;
                        return Ok(Streamed::Stream(Box::new(stream)));
                    }
                }
            }
            Layout::NativeLines => {}
        }
    }
    let mut problems = Vec::new();
    let docs = match layout {
        Layout::Document => vec![read_document(source, &mut problems)?],
        _ => read_lines(source, max_line_bytes, &mut problems)?,
    };
    Ok(Streamed::Opened(Opened::Read(read_docs(
        layout, &docs, options, problems,
    ))))
}

/// The file at `path`, laid out as `layout` (one document, or documents one per line),
/// read as an OTLP export span by span or as a document transcript by transcript;
/// `None` when it is to be read otherwise. Either reading checks the whole file before
/// it hands anything on: `None` for a file that is not valid JSON.
fn document_stream(
    path: &Path,
    options: &InputOptions,
    layout: Layout,
    max_line_bytes: usize,
) -> io::Result<Option<Box<Stream>>> {
    if let Some(stream) = stream::otlp::read(path, options, layout, max_line_bytes)? {
        return Ok(Some(Box::new(stream)));
    }
    match stream::doc_plan::plan(path, options, layout)? {
        Some(plan) => Ok(Some(Box::new(Stream::document(
            path,
            plan,
            options.format,
        )?))),
        None => Ok(None),
    }
}

/// Whether an input read as `options` say may stream: with the format detected and
/// no `--select`. A forced format is checked against every element of a transcript
/// before it is read (`foreign`), and `--select` reads documents whole.
fn streams(options: &InputOptions) -> bool {
    options.format.is_none() && options.select.is_none()
}

/// What native records read from `source` are, with the warning for a file none of
/// whose records has `kind` or `tool`.
fn native_detected(
    source: Source<'_>,
    options: &InputOptions,
    max_line_bytes: usize,
) -> io::Result<Detected> {
    let warning = match options.format {
        None if detect::names_no_kind_or_tool(source)? => {
            let first = detect::first_value(source, max_line_bytes)?;
            first.map(|(value, loc)| untyped(&detect::resembles(&value), loc))
        }
        _ => None,
    };
    Ok(Detected {
        layout: Layout::NativeLines,
        formats: vec![Format::Native],
        explicit: options.format.is_some(),
        traces: 1,
        warning,
    })
}

/// Opens a stream (standard input, a pipe) whose first bytes, `head`, were read to
/// detect its format; `rest` is what follows them. Native records and files of
/// transcript lines whose head says all that reading them needs stream as they come;
/// anything else is handed back unread ([`StreamOpened::Whole`]), to be read as a
/// file is.
pub fn open_stream(
    head: Vec<u8>,
    rest: Box<dyn io::BufRead>,
    options: &InputOptions,
    max_line_bytes: usize,
) -> io::Result<StreamOpened> {
    let source = Source::Bytes(&head);
    let layout = sniff(source, options, max_line_bytes)?;
    if layout == Layout::NativeLines {
        let detected = native_detected(source, options, max_line_bytes)?;
        let input: Box<dyn io::BufRead> = Box::new(io::Cursor::new(head).chain(rest));
        return Ok(StreamOpened::Native(detected, input));
    }
    if layout == Layout::ElementLines {
        // The head must say all that reading the stream needs: what follows it is
        // read once, as it comes.
        let plan = stream::plan_lines(source, options, max_line_bytes)?;
        if plan.enough && plan.fits() && stream::lines_stream(plan.format) {
            let input: Box<dyn io::BufRead> = Box::new(io::Cursor::new(head).chain(rest));
            let explicit = options.format.is_some();
            let again = plan.clone();
            if let Some(mut stream) = Stream::lines(input, plan, explicit, max_line_bytes) {
                // The same plan reads the same bytes from a file, should they be
                // copied to one.
                stream.again = Some(Box::new(move |path| {
                    Stream::lines_of_file(path, again, explicit, max_line_bytes)
                }));
                return Ok(StreamOpened::Stream(Box::new(stream)));
            }
            unreachable!("bug: a format whose lines stream read whole");
        }
    }
    Ok(StreamOpened::Whole(Unstreamed { head, rest }))
}

/// Whether the first line of `head`, a stream's first bytes, already decides how the
/// stream is read, whatever follows: a complete native record with a `kind` (native
/// records, no `untyped-records` warning), a JSON-RPC message (an MCP log), or an
/// element that says its format and needs nothing read ahead (a Claude Code envelope,
/// a chat message). A live
/// stream whose writer sends a few records and waits is then checked at once, rather
/// than after the 64 KiB that detection otherwise reads. Only for detected formats.
///
/// `None` while `head` holds no complete non-blank line yet; once it does, the answer
/// is final, so the head's reader asks no more.
pub fn decided_by_first_line(head: &[u8], options: &InputOptions) -> Option<bool> {
    if !streams(options) {
        return Some(false);
    }
    let head = head.strip_prefix("\u{feff}".as_bytes()).unwrap_or(head);
    let line = head
        .split_inclusive(|&b| b == b'\n')
        .find(|line| !line.trim_ascii().is_empty())
        .filter(|line| line.ends_with(b"\n"))?;
    // Only an object decides: a long batch is not parsed to learn that it does not.
    if line.trim_ascii_start().first() != Some(&b'{') {
        return Some(false);
    }
    Some(match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(value @ serde_json::Value::Object(_)) => match detect::signal(&value) {
            detect::Signal::Strong(Format::Native) => true,
            detect::Signal::Strong(format) => stream::lines_stream(format),
            _ => false,
        },
        _ => false,
    })
}

/// What opening a stream gave.
pub enum StreamOpened {
    /// Native records: the head, then the rest, read line by line.
    Native(Detected, Box<dyn io::BufRead>),
    /// A transcript format that streams.
    Stream(Box<Stream>),
    /// Anything else, which is read as a file of the same bytes is.
    Whole(Unstreamed),
}

/// A stream that cannot be read as it comes: what [`open_stream`] read of it, and the
/// rest.
pub struct Unstreamed {
    /// The first bytes, read to detect the format.
    pub head: Vec<u8>,
    /// What follows them, unread.
    pub rest: Box<dyn io::BufRead>,
}

/// The warning for a file read as native records none of which has `kind` or `tool`,
/// naming the formats its records resemble, located at its first record.
fn untyped(resembles: &[Format], first_line: Location) -> Problem {
    let hint = match resembles {
        [] => "give each record a `kind` (`call`, `result`, `message`) and a `tool`, or, if the \
               file is a transcript in a format tracegate reads, say which with --format NAME"
            .to_string(),
        formats => {
            let names: Vec<String> = formats
                .iter()
                .map(|f| format!("{} (--format {f})", f.describe()))
                .collect();
            format!(
                "its records look like {}; if the file is one of these, say so with --format",
                names.join(" or ")
            )
        }
    };
    Problem {
        kind: ProblemKind::Untyped,
        loc: first_line,
        message: "no record in this file has a `kind` or a `tool`, and none matched an event \
                  of any spec: read as native records, specs that match calls, results or \
                  messages see nothing in it"
            .into(),
        hint: Some(hint),
    }
}

/// Reads JSON text that is already in memory (for tests and the library).
pub fn read_text(text: &str, options: &InputOptions) -> Reading {
    let mut problems = Vec::new();
    let doc = document(text.to_string(), 0, &mut problems);
    read_docs(Layout::Document, &[doc], options, problems)
}

/// Helpers for the adapters' unit tests.
#[cfg(test)]
pub(crate) mod tests_support {
    use serde_json::Value;

    use super::{Entry, Format, InputOptions, read_text};
    use crate::trace::Fields;

    /// Reads `value` as a JSON document in `format`: the records as JSON objects, and
    /// the problems as `(pointer, message)`.
    pub fn read_as(format: Format, value: Value) -> (Vec<Value>, Vec<(String, String)>) {
        let text = serde_json::to_string_pretty(&value).unwrap();
        let options = InputOptions {
            format: Some(format),
            select: None,
        };
        let mut records = Vec::new();
        let mut problems = Vec::new();
        for entry in read_text(&text, &options).entries {
            match entry {
                Entry::Record(record) => match record.fields {
                    Fields::Owned(map) => records.push(Value::Object(map)),
                    Fields::Built(built) => records.push(Value::Object(built.to_map())),
                    Fields::Raw(_) => unreachable!("adapters own their fields"),
                },
                Entry::Problem(problem) => {
                    problems.push((problem.loc.pointer.to_string(), problem.message))
                }
            }
        }
        (records, problems)
    }

    /// The records, asserting there is no problem.
    #[track_caller]
    pub fn read_ok(format: Format, value: Value) -> Vec<Value> {
        let (records, problems) = read_as(format, value);
        assert!(problems.is_empty(), "{problems:#?}");
        records
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_is_decided_by_a_first_line_that_says_its_format() {
        let detected = InputOptions::default();
        let native = b"{\"kind\":\"call\",\"tool\":\"create\"}\n{\"ki";
        let mcp = b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"a\"}}\n";
        assert_eq!(decided_by_first_line(native, &detected), Some(true));
        assert_eq!(decided_by_first_line(mcp, &detected), Some(true));
        // A line not yet ended, or only blank lines so far: not known yet.
        assert_eq!(decided_by_first_line(&native[..20], &detected), None);
        assert_eq!(decided_by_first_line(b"\n \n{\"kind\"", &detected), None);
        // A record without `kind`, a document, a forced format: the head is read on.
        assert_eq!(
            decided_by_first_line(b"{\"tool\":\"create\"}\n", &detected),
            Some(false)
        );
        assert_eq!(
            decided_by_first_line(b"[\n{\"kind\":\"call\"}\n", &detected),
            Some(false)
        );
        let forced = InputOptions {
            format: Some(Format::Native),
            select: None,
        };
        assert_eq!(decided_by_first_line(native, &forced), Some(false));
    }

    #[test]
    fn read_text_locates_records_in_the_file() {
        let text = "{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi\"},\n    {\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"c1\", \"type\": \"function\", \"function\": {\"name\": \"get\", \"arguments\": \"{}\"}}]}\n  ]\n}\n";
        let reading = read_text(text, &InputOptions::default());
        let records: Vec<&Record<'_>> = reading
            .entries
            .iter()
            .map(|e| match e {
                Entry::Record(r) => r,
                Entry::Problem(p) => panic!("{p:?}"),
            })
            .collect();
        assert_eq!(records.len(), 2);
        assert_eq!(records[0].loc.line, 3);
        assert_eq!(&*records[0].loc.pointer, "/messages/0");
        assert_eq!(records[1].loc.line, 4);
        assert_eq!(&*records[1].loc.pointer, "/messages/1/tool_calls/0");
        let start = records[1].loc.offset as usize;
        assert!(text[start..].starts_with("{\"id\": \"c1\""));
        assert_eq!(reading.traces, 1);
    }
}
