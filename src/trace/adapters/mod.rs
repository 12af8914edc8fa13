//! Trace formats: recognizing what a file holds, finding the transcripts in it, and
//! turning each into normalized records (DESIGN.md §2) located in the original file.
//!
//! A file is read in one of four layouts, decided from its first lines:
//! - native JSONL (one record per line), which the checker streams: [`Opened::Native`];
//! - one transcript element per line (an MCP log, an OpenAI message per line, …);
//! - one JSON document per line (each line a run with a `messages` list, an OTLP export);
//! - one JSON document (pretty-printed or not), read whole.
//!
//! In a document, transcripts are found where `--select` says, or by a search for the
//! common shapes: a message list at the root, an object holding one (`messages`,
//! `steps`, …), an array of runs each holding one. Each list becomes its own trace,
//! named by its JSON pointer (and its run's id field, when it has one). OpenTelemetry
//! spans are gathered from the whole file and split by trace id. A ToolBench search tree
//! is one transcript whose root-to-leaf branches are its traces.
//!
//! Each format's module turns its elements into records; this module gives every
//! record its trace, its position and its location.

pub mod anthropic;
pub mod atif;
pub mod mcp;
pub mod openai;
pub mod otel;
mod pieces;
pub mod responses;
pub mod select;
mod shared;
pub mod toolbench;

use std::cell::OnceCell;
use std::fmt;
use std::io::{self, Read};
use std::ops::Range;
use std::path::Path;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::Value;

pub use select::Selector;
use shared::{Map, describe, str_of};

use crate::trace::json_index::{JsonIndex, child_pointer};
use crate::trace::reader::{LineContent, LineReader};
use crate::trace::{Fields, Location, Record};

/// A trace format tracegate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Format {
    Native,
    OpenAi,
    Responses,
    Anthropic,
    Mcp,
    Otel,
    Atif,
    ToolBench,
}

impl Format {
    pub const ALL: [Format; 8] = [
        Format::Native,
        Format::OpenAi,
        Format::Responses,
        Format::Anthropic,
        Format::Mcp,
        Format::Otel,
        Format::Atif,
        Format::ToolBench,
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
        }
    }

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
    pub layout: Layout,
    /// The formats read, in the order first met.
    pub formats: Vec<Format>,
    /// Whether the format was given by `--format`.
    pub explicit: bool,
    /// Transcripts found (message lists, OTLP exports, …).
    pub transcripts: usize,
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
            let s = if self.transcripts == 1 { "" } else { "s" };
            write!(f, "; {} transcript{s}", self.transcripts)?;
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
}

#[derive(Debug, Clone)]
pub struct Problem {
    pub kind: ProblemKind,
    pub loc: Location,
    pub message: String,
    pub hint: Option<String>,
}

/// One normalized record or one problem, in input order.
#[derive(Debug)]
pub enum Entry {
    Record(Record<'static>),
    Problem(Problem),
}

/// An input read through an adapter.
#[derive(Debug)]
pub struct Reading {
    pub detected: Detected,
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
    Read(Reading),
}

/// A place in the input: a document (the file, or one line) and a JSON pointer in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub doc: usize,
    pub pointer: String,
}

impl Site {
    pub fn child(&self, token: impl fmt::Display) -> Site {
        Site {
            doc: self.doc,
            pointer: child_pointer(&self.pointer, token),
        }
    }
}

/// One element of a transcript.
#[derive(Debug, Clone)]
pub struct Element<'v> {
    pub value: &'v Value,
    pub site: Site,
}

/// What adapters write: records (a field map) and problems, each at a site.
#[derive(Debug, Default)]
pub struct Out {
    items: Vec<Emitted>,
}

#[derive(Debug)]
struct Emitted {
    site: Site,
    /// A trace within the transcript (an MCP session, an OpenTelemetry trace id).
    trace: Option<String>,
    what: Emit,
}

#[derive(Debug)]
enum Emit {
    Record(Map),
    Problem(String),
}

impl Out {
    pub fn record(&mut self, site: &Site, fields: Map) {
        self.record_in(None, site, fields);
    }

    /// A record of the sub-trace `trace` of the transcript.
    pub fn record_in(&mut self, trace: Option<String>, site: &Site, fields: Map) {
        self.items.push(Emitted {
            site: site.clone(),
            trace,
            what: Emit::Record(fields),
        });
    }

    pub fn problem(&mut self, site: &Site, message: impl Into<String>) {
        self.items.push(Emitted {
            site: site.clone(),
            trace: None,
            what: Emit::Problem(message.into()),
        });
    }
}

/// The text of one JSON document of the input, and where it is in the file.
struct Doc {
    text: String,
    /// Byte offset of the text in the file.
    offset: u64,
    /// Line of the text's first byte.
    line: u64,
    value: Option<Value>,
    index: OnceCell<JsonIndex>,
}

impl Doc {
    fn location(&self, pointer: &str) -> Location {
        let (range, line) = if pointer.is_empty() {
            (0..self.text.len(), self.line)
        } else {
            let index = self.index.get_or_init(|| JsonIndex::build(&self.text));
            let range = index.range(&self.text, pointer);
            let line = self.line + index.line_of(range.start) - 1;
            (range, line)
        };
        Location {
            line,
            offset: self.offset + range.start as u64,
            len: range.len() as u64,
            pointer: pointer.into(),
        }
    }

    fn whole(&self) -> Location {
        Location {
            line: self.line,
            offset: self.offset,
            len: self.text.len() as u64,
            pointer: Box::default(),
        }
    }
}

/// Opens `path` and reads it as `options` say (detecting the format when they don't).
/// Native JSONL is only recognized here, not read: the caller streams it.
pub fn open(path: &Path, options: &InputOptions, max_line_bytes: usize) -> io::Result<Opened> {
    open_source(Source::File(path), options, max_line_bytes)
}

/// Reads `bytes`, the whole content of a file, exactly as [`open`] reads the file (for
/// `shrink`, which checks many cut-down versions of one file without writing them).
pub fn open_bytes(bytes: &[u8], options: &InputOptions, max_line_bytes: usize) -> Opened {
    open_source(Source::Bytes(bytes), options, max_line_bytes)
        .expect("bug: reading bytes in memory cannot fail")
}

/// Where the input's bytes are. Detection reads the start of the input more than once,
/// so each reader starts from the beginning.
#[derive(Clone, Copy)]
enum Source<'a> {
    File(&'a Path),
    Bytes(&'a [u8]),
}

impl Source<'_> {
    fn reader(&self) -> io::Result<Box<dyn io::BufRead + '_>> {
        Ok(match self {
            Source::File(path) => Box::new(io::BufReader::new(std::fs::File::open(path)?)),
            Source::Bytes(bytes) => Box::new(*bytes),
        })
    }
}

fn open_source(
    source: Source<'_>,
    options: &InputOptions,
    max_line_bytes: usize,
) -> io::Result<Opened> {
    let layout = sniff(source, options, max_line_bytes)?;
    if layout == Layout::NativeLines {
        return Ok(Opened::Native(Detected {
            layout,
            formats: vec![Format::Native],
            explicit: options.format.is_some(),
            transcripts: 1,
        }));
    }
    let mut problems = Vec::new();
    let docs = match layout {
        Layout::Document => vec![read_document(source, &mut problems)?],
        _ => read_lines(source, max_line_bytes, &mut problems)?,
    };
    Ok(Opened::Read(read_docs(layout, &docs, options, problems)))
}

/// Reads JSON text that is already in memory (for tests and the library).
pub fn read_text(text: &str, options: &InputOptions) -> Reading {
    let mut problems = Vec::new();
    let doc = document(text.to_string(), 0, &mut problems);
    read_docs(Layout::Document, &[doc], options, problems)
}

/// The first lines of a file, parsed.
enum Peeked {
    Json(Value),
    /// Text that is not complete JSON; `open` says whether it ended too early.
    Broken {
        open: bool,
    },
    /// Over the line limit, or not UTF-8.
    Unreadable,
}

/// Decides the layout from the first one or two non-blank lines.
fn sniff(source: Source<'_>, options: &InputOptions, max_line_bytes: usize) -> io::Result<Layout> {
    if options.format == Some(Format::Native) {
        return Ok(Layout::NativeLines);
    }
    let mut reader = LineReader::with_max_line_bytes(source.reader()?, max_line_bytes);
    let mut peeked = Vec::new();
    while peeked.len() < 2 {
        let Some(line) = reader.next_line()? else {
            break;
        };
        peeked.push(match line.content {
            LineContent::Text(text) => match serde_json::from_str::<Value>(text) {
                Ok(value) => Peeked::Json(value),
                Err(err) => Peeked::Broken {
                    open: err.is_eof()
                        && matches!(text.trim_start().as_bytes().first(), Some(b'{' | b'[')),
                },
            },
            _ => Peeked::Unreadable,
        });
    }
    let explicit = options.format.is_some() || options.select.is_some();
    let by_value = |value: &Value| match value {
        // `--select` applies to documents.
        _ if options.select.is_some() => Layout::DocumentLines,
        Value::Object(_) => {
            if !explicit && matches!(signal(value), Signal::Strong(Format::Native)) {
                Layout::NativeLines
            } else if element_like(value, options.format) {
                Layout::ElementLines
            } else if explicit || has_transcripts(value) {
                Layout::DocumentLines
            } else {
                // Native event records may hold any fields.
                Layout::NativeLines
            }
        }
        Value::Array(_) => Layout::DocumentLines,
        _ if explicit => Layout::DocumentLines,
        _ => Layout::NativeLines,
    };
    Ok(match peeked.as_slice() {
        [] if explicit => Layout::Document,
        [] => Layout::NativeLines,
        [Peeked::Json(value), ..] => by_value(value),
        // A first line that does not close: a document spread over lines, or a
        // truncated record followed by others.
        [Peeked::Broken { open: true }, ..] if one_document(source)? => Layout::Document,
        [Peeked::Broken { .. }, Peeked::Json(value)] => by_value(value),
        // Neither of the first two lines is JSON on its own: a broken document, whose
        // error is best reported once, where it is.
        [Peeked::Broken { open: true }, Peeked::Broken { .. }] => Layout::Document,
        // One line only, broken: a document, reported once.
        [Peeked::Broken { .. }] => Layout::Document,
        // One line over the limit: a minified document, when it starts like one (it is
        // then read whole); else a native record, reported as too long.
        [Peeked::Unreadable] if explicit || starts_like_document(source)? => Layout::Document,
        _ if explicit => Layout::DocumentLines,
        _ => Layout::NativeLines,
    })
}

/// Whether the file's first bytes look like a document that holds transcripts: an
/// array, or an object with a transcript key near its start.
fn starts_like_document(source: Source<'_>) -> io::Result<bool> {
    let mut head = Vec::new();
    source.reader()?.take(4096).read_to_end(&mut head)?;
    let text = String::from_utf8_lossy(&head);
    let text = text.trim_start_matches('\u{feff}').trim_start();
    Ok(text.starts_with('[')
        || text.starts_with('{')
            && LIST_KEYS
                .iter()
                .any(|key| text.contains(&format!("\"{key}\""))))
}

/// Whether the file starts with one JSON value spread over several lines. Parsed from
/// the file without keeping anything, so memory stays bounded whatever its size.
fn one_document(source: Source<'_>) -> io::Result<bool> {
    let mut deserializer = serde_json::Deserializer::from_reader(source.reader()?);
    Ok(serde::de::IgnoredAny::deserialize(&mut deserializer).is_ok())
}

fn read_document(source: Source<'_>, problems: &mut Vec<Problem>) -> io::Result<Doc> {
    let mut bytes = Vec::new();
    source.reader()?.read_to_end(&mut bytes)?;
    let (skip, bytes) = match bytes.strip_prefix(b"\xEF\xBB\xBF") {
        Some(rest) => (3, rest.to_vec()),
        None => (0, bytes),
    };
    match String::from_utf8(bytes) {
        Ok(text) => Ok(document(text, skip, problems)),
        Err(err) => {
            let valid = err.utf8_error().valid_up_to();
            let text = String::from_utf8_lossy(err.as_bytes()).into_owned();
            let line = 1 + text.as_bytes()[..valid.min(text.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64;
            problems.push(malformed(
                Location {
                    line,
                    offset: skip + valid as u64,
                    len: 1,
                    pointer: Box::default(),
                },
                format!(
                    "the file is not valid UTF-8 (first bad byte at offset {})",
                    skip + valid as u64
                ),
            ));
            Ok(Doc {
                text,
                offset: skip,
                line: 1,
                value: None,
                index: OnceCell::new(),
            })
        }
    }
}

/// A whole-file document, parsed.
fn document(text: String, offset: u64, problems: &mut Vec<Problem>) -> Doc {
    let value = match serde_json::from_str::<Value>(&text) {
        Ok(value) => Some(value),
        Err(err) => {
            let line = err.line() as u64;
            let start = line_start(&text, err.line());
            problems.push(malformed(
                Location {
                    line,
                    offset: offset + start as u64,
                    len: text[start..].find('\n').unwrap_or(text.len() - start) as u64,
                    pointer: Box::default(),
                },
                format!("the file is not valid JSON: {err}"),
            ));
            None
        }
    };
    Doc {
        text,
        offset,
        line: 1,
        value,
        index: OnceCell::new(),
    }
}

fn line_start(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

fn read_lines(
    source: Source<'_>,
    max_line_bytes: usize,
    problems: &mut Vec<Problem>,
) -> io::Result<Vec<Doc>> {
    let mut reader = LineReader::with_max_line_bytes(source.reader()?, max_line_bytes);
    let mut docs = Vec::new();
    while let Some(line) = reader.next_line()? {
        let loc = line.location();
        let text = match line.content {
            LineContent::Text(text) => text,
            LineContent::InvalidUtf8 { valid_up_to } => {
                problems.push(malformed(
                    loc,
                    format!(
                        "line is not valid UTF-8 (first bad byte at column {})",
                        valid_up_to + 1
                    ),
                ));
                continue;
            }
            LineContent::TooLong => {
                problems.push(malformed(
                    loc,
                    format!(
                        "line is {} bytes, over the limit of {max_line_bytes} bytes",
                        line.len
                    ),
                ));
                continue;
            }
        };
        let value = match serde_json::from_str::<Value>(text) {
            Ok(value) => Some(value),
            Err(err) => {
                problems.push(malformed(
                    loc.clone(),
                    format!("line is not valid JSON: {err}"),
                ));
                None
            }
        };
        docs.push(Doc {
            text: text.to_string(),
            offset: loc.offset,
            line: loc.line,
            value,
            index: OnceCell::new(),
        });
    }
    Ok(docs)
}

fn malformed(loc: Location, message: String) -> Problem {
    Problem {
        kind: ProblemKind::Malformed,
        loc,
        message,
        hint: None,
    }
}

/// A transcript found in the input.
struct Found<'v> {
    format: Format,
    elements: Vec<Element<'v>>,
    /// Its name in reports: where it is, and its run's id.
    name: String,
}

fn read_docs(
    layout: Layout,
    docs: &[Doc],
    options: &InputOptions,
    mut problems: Vec<Problem>,
) -> Reading {
    let mut found: Vec<Found<'_>> = Vec::new();
    match layout {
        Layout::ElementLines => {
            let elements: Vec<Element<'_>> = docs
                .iter()
                .enumerate()
                .filter_map(|(doc, d)| {
                    Some(Element {
                        value: d.value.as_ref()?,
                        site: Site {
                            doc,
                            pointer: String::new(),
                        },
                    })
                })
                .collect();
            // The first line decided the layout: the first element with a format of
            // its own decides the format, whatever the other lines hold.
            let format = options
                .format
                .or_else(|| {
                    elements.iter().find_map(|e| match signal(e.value) {
                        Signal::Strong(format) => Some(format),
                        _ => None,
                    })
                })
                .unwrap_or(Format::OpenAi);
            found.push(Found {
                format,
                elements,
                name: String::new(),
            });
        }
        _ => {
            let many_docs = layout == Layout::DocumentLines;
            // Documents in which the search found nothing.
            let mut empty_docs = Vec::new();
            for (doc_index, doc) in docs.iter().enumerate() {
                let Some(value) = &doc.value else { continue };
                let prefix = if many_docs {
                    format!("line {}", doc.line)
                } else {
                    String::new()
                };
                let before = found.len();
                let mut search = Search {
                    doc: doc_index,
                    format: options.format,
                    prefix: &prefix,
                    found: &mut found,
                };
                match &options.select {
                    Some(selector) => {
                        let selected = selector.select(value);
                        for (pointer, selected_value) in &selected {
                            // The object holding a selected list names its run.
                            let parent = pointer
                                .rfind('/')
                                .and_then(|end| value.pointer(&pointer[..end]))
                                .and_then(Value::as_object);
                            search.selected(selected_value, pointer, parent);
                        }
                        if selected.is_empty() {
                            problems.push(Problem {
                                kind: ProblemKind::UnknownFormat,
                                loc: doc.whole(),
                                message: format!(
                                    "--select `{selector}` selects nothing in this {}",
                                    if many_docs { "line" } else { "file" }
                                ),
                                hint: Some(
                                    "a path is keys and indexes, with `[*]` for each element: `runs[*].messages`"
                                        .into(),
                                ),
                            });
                            continue;
                        }
                    }
                    None => search.find(value, "", None, 0),
                }
                if found.len() == before && options.select.is_none() {
                    if !is_empty_transcript(value) {
                        empty_docs.push(doc_index);
                    }
                } else if found.len() == before {
                    problems.push(Problem {
                        kind: ProblemKind::UnknownFormat,
                        loc: doc.whole(),
                        message: format!(
                            "what --select `{}` selects holds no transcript in {}",
                            options
                                .select
                                .as_ref()
                                .map(ToString::to_string)
                                .unwrap_or_default(),
                            tried(options.format)
                        ),
                        hint: None,
                    });
                }
            }
            match empty_docs.first() {
                None => {}
                // Nothing anywhere: the file is in no format we read.
                Some(&first) if found.is_empty() => {
                    problems.push(unknown_format(&docs[first], options.format));
                }
                // Lines without a transcript among lines with one are bad lines.
                Some(_) => {
                    for &index in &empty_docs {
                        problems.push(malformed(
                            docs[index].whole(),
                            "line holds no transcript, unlike the file's other lines".into(),
                        ));
                    }
                }
            }
        }
    }
    problems.sort_by_key(|problem| problem.loc.offset);

    let mut formats: Vec<Format> = Vec::new();
    for f in &found {
        if !formats.contains(&f.format) {
            formats.push(f.format);
        }
    }
    let detected = Detected {
        layout,
        formats,
        explicit: options.format.is_some(),
        transcripts: found.len(),
    };

    // Adapt each transcript; OpenTelemetry spans from the whole input go together, as
    // one trace may be exported in many batches.
    let mut emitted: Vec<(String, Emitted)> = Vec::new();
    let mut otel_elements: Vec<Element<'_>> = Vec::new();
    for transcript in &found {
        let mut out = Out::default();
        match transcript.format {
            Format::Otel => {
                otel_elements.extend(transcript.elements.iter().cloned());
                continue;
            }
            Format::Native => native_list(&transcript.elements, &mut out),
            Format::OpenAi => openai::read(&transcript.elements, &mut out),
            Format::Responses => responses::read(&transcript.elements, &mut out),
            Format::Anthropic => anthropic::read(&transcript.elements, &mut out),
            Format::Mcp => mcp::read(&transcript.elements, &mut out),
            Format::Atif => atif::read(&transcript.elements, &mut out),
            Format::ToolBench => toolbench::read(&transcript.elements, &mut out),
        }
        emitted.extend(out.items.into_iter().map(|e| (transcript.name.clone(), e)));
    }
    if !otel_elements.is_empty() {
        let mut out = Out::default();
        otel::read(&otel_elements, &mut out);
        emitted.extend(out.items.into_iter().map(|e| (String::new(), e)));
    }

    let (pieces, arrays) = pieces::find(layout, docs, &found);
    Reading {
        pieces,
        arrays,
        ..finish(docs, detected, emitted, problems)
    }
}

/// Gives records their trace, position and location.
fn finish(
    docs: &[Doc],
    detected: Detected,
    emitted: Vec<(String, Emitted)>,
    problems: Vec<Problem>,
) -> Reading {
    let name_of = |transcript: &str, item: &Emitted| match (&item.trace, transcript) {
        (None, name) => name.to_string(),
        (Some(sub), "") => sub.clone(),
        // A sub-trace named by a pointer (a ToolBench branch) reads like a list's name.
        (Some(sub), name) if sub.starts_with('/') => format!("{name} {sub}"),
        (Some(sub), name) => format!("{name} / {sub}"),
    };
    let mut names: FxHashMap<String, u64> = FxHashMap::default();
    for (transcript, item) in &emitted {
        if matches!(item.what, Emit::Record(_)) {
            names.entry(name_of(transcript, item)).or_insert(0);
        }
    }
    let traces = names.len();
    // Problems found while reading go before the first record after them; records keep
    // the order adapters emitted them in (a `missing` result sits where the agent moved
    // on, OpenTelemetry spans are in time order), which is not always file order.
    let mut early = problems.into_iter().peekable();
    let mut entries: Vec<Entry> = Vec::new();
    for (transcript, item) in emitted {
        let doc = &docs[item.site.doc];
        let loc = doc.location(&item.site.pointer);
        let name = name_of(&transcript, &item);
        while let Some(problem) = early.next_if(|p| p.loc.offset <= loc.offset) {
            entries.push(Entry::Problem(problem));
        }
        match item.what {
            Emit::Problem(message) => entries.push(Entry::Problem(malformed(loc, message))),
            Emit::Record(mut fields) => {
                let seq = names.entry(name.clone()).or_insert(0);
                if traces > 1 {
                    fields.insert("trace".into(), Value::String(name));
                }
                fields.insert("seq".into(), Value::from(*seq));
                *seq += 1;
                match Record::new(Fields::Owned(fields), loc.clone()) {
                    Ok(record) => entries.push(Entry::Record(record)),
                    Err(message) => {
                        entries.push(Entry::Problem(malformed(loc, message.to_string())))
                    }
                }
            }
        }
    }
    entries.extend(early.map(Entry::Problem));
    Reading {
        detected,
        entries,
        traces,
        pieces: Vec::new(),
        arrays: Vec::new(),
    }
}

fn unknown_format(doc: &Doc, format: Option<Format>) -> Problem {
    Problem {
        kind: ProblemKind::UnknownFormat,
        loc: doc.whole(),
        message: format!(
            "the file is JSON but holds no transcript in {}",
            tried(format)
        ),
        hint: Some(
            "say where the message lists are with --select PATH (e.g. `runs[*].messages`), or the format with --format NAME"
                .into(),
        ),
    }
}

/// Keys under which an empty list is an empty transcript, not an unknown format.
const LIST_KEYS: &[&str] = &[
    "messages",
    "steps",
    "items",
    "input",
    "output",
    "traj",
    "trajectory",
    "conversation",
    "history",
    "turns",
    "resourceSpans",
    "spans",
];

/// An empty list, or an object whose transcript list is empty: a run that recorded
/// nothing, which is not an error.
fn is_empty_transcript(value: &Value) -> bool {
    match value {
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => LIST_KEYS
            .iter()
            .any(|key| matches!(map.get(*key), Some(Value::Array(items)) if items.is_empty())),
        _ => false,
    }
}

/// The formats tried, for messages.
fn tried(format: Option<Format>) -> String {
    match format {
        Some(format) => format!("{} (--format {format})", format.describe()),
        None => "any format tracegate reads (tried native JSONL, OpenAI Chat Completions, \
                 OpenAI Responses, Anthropic Messages, MCP / JSON-RPC, OpenTelemetry OTLP \
                 spans, ATIF, ToolBench search trees)"
            .to_string(),
    }
}

/// Native records held in a JSON array: each element is a record as it is.
fn native_list(elements: &[Element<'_>], out: &mut Out) {
    for element in elements {
        match element.value {
            Value::Object(map) => out.record(&element.site, map.clone()),
            other => out.problem(
                &element.site,
                format!("record is {}, expected a JSON object", describe(other)),
            ),
        }
    }
}

/// What one element says about its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    Strong(Format),
    /// A chat message that any chat format could hold (`role` and text).
    Chat,
    None,
}

/// Responses item types other than `message`.
const RESPONSES_ITEMS: &[&str] = &[
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "mcp_call",
    "mcp_approval_request",
    "mcp_approval_response",
    "mcp_list_tools",
    "reasoning",
    "web_search_call",
    "file_search_call",
    "computer_call",
    "computer_call_output",
    "code_interpreter_call",
    "image_generation_call",
    "local_shell_call",
    "local_shell_call_output",
    "item_reference",
];

/// Anthropic content block types that only Anthropic uses.
const ANTHROPIC_BLOCKS: &[&str] = &[
    "tool_use",
    "tool_result",
    "thinking",
    "redacted_thinking",
    "server_tool_use",
    "mcp_tool_use",
    "mcp_tool_result",
    "web_search_tool_result",
];

fn signal(value: &Value) -> Signal {
    let Value::Object(map) = value else {
        return Signal::None;
    };
    if matches!(str_of(map, "kind"), Some("call" | "result" | "message")) {
        return Signal::Strong(Format::Native);
    }
    if mcp::is_message(map) {
        return Signal::Strong(Format::Mcp);
    }
    if otel::is_otlp(map) {
        return Signal::Strong(Format::Otel);
    }
    if map.contains_key("step_id") && map.contains_key("source") {
        return Signal::Strong(Format::Atif);
    }
    if let Some(ty) = str_of(map, "type") {
        if RESPONSES_ITEMS.contains(&ty) {
            return Signal::Strong(Format::Responses);
        }
    }
    if !matches!(map.get("role"), Some(Value::String(_))) {
        return Signal::None;
    }
    let role = str_of(map, "role").unwrap_or_default();
    if ["tool_calls", "function_call", "tool_call_id"]
        .iter()
        .any(|key| map.contains_key(*key))
        || matches!(role, "tool" | "function" | "developer")
    {
        return Signal::Strong(Format::OpenAi);
    }
    if let Some(Value::Array(parts)) = map.get("content") {
        for part in parts {
            let Some(ty) = part.get("type").and_then(Value::as_str) else {
                continue;
            };
            if ANTHROPIC_BLOCKS.contains(&ty) || ty.ends_with("_tool_result") {
                return Signal::Strong(Format::Anthropic);
            }
            if matches!(ty, "input_text" | "output_text" | "refusal") {
                return Signal::Strong(Format::Responses);
            }
        }
    }
    Signal::Chat
}

/// Whether `value` is one element of a transcript (of `format`, when given).
fn element_like(value: &Value, format: Option<Format>) -> bool {
    match (signal(value), format) {
        (Signal::Strong(Format::Otel), _) => false,
        (Signal::Strong(found), None) => found != Format::Native,
        (Signal::Strong(found), Some(wanted)) => found == wanted,
        (Signal::Chat, None) => true,
        (Signal::Chat, Some(wanted)) => {
            matches!(
                wanted,
                Format::OpenAi | Format::Responses | Format::Anthropic
            )
        }
        (Signal::None, _) => false,
    }
}

/// The format of a list of transcript elements, or `None` when it is not one: at least
/// half of its elements must look like transcript elements (one, when the format is
/// given). The first element with a
/// format of its own decides; a list of plain chat messages is read as OpenAI's.
fn list_format(items: &[&Value], format: Option<Format>) -> Option<Format> {
    if items.is_empty() {
        return None;
    }
    let mut like = 0;
    let mut first_strong = None;
    for item in items {
        match signal(item) {
            Signal::Strong(found) => {
                if format.is_none_or(|wanted| wanted == found) {
                    like += 1;
                    first_strong.get_or_insert(found);
                }
            }
            Signal::Chat => {
                if format.is_none_or(|wanted| {
                    matches!(
                        wanted,
                        Format::OpenAi | Format::Responses | Format::Anthropic
                    )
                }) {
                    like += 1;
                }
            }
            Signal::None => {}
        }
    }
    // Given the format, one element of it is enough; else, most elements must be.
    if like == 0 || (format.is_none() && like * 2 < items.len()) {
        return None;
    }
    Some(format.or(first_strong).unwrap_or(Format::OpenAi))
}

/// Whether a document holds a transcript somewhere (for telling a JSON Lines file of
/// runs from native records).
fn has_transcripts(value: &Value) -> bool {
    let mut found = Vec::new();
    Search {
        doc: 0,
        format: None,
        prefix: "",
        found: &mut found,
    }
    .find(value, "", None, 0);
    !found.is_empty()
}

/// Keys that name a run, tried in this order.
const ID_KEYS: &[&str] = &[
    "id",
    "task_id",
    "run_id",
    "session_id",
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
const SEARCH_DEPTH: usize = 12;

struct Search<'s, 'v> {
    doc: usize,
    format: Option<Format>,
    prefix: &'s str,
    found: &'s mut Vec<Found<'v>>,
}

impl<'v> Search<'_, 'v> {
    /// What `--select` chose: a list is a transcript; anything else is searched.
    fn selected(&mut self, value: &'v Value, pointer: &str, parent: Option<&'v Map>) {
        if let Value::Array(items) = value {
            let values: Vec<&Value> = items.iter().collect();
            if let Some(format) = list_format(&values, self.format) {
                return self.push_list(format, items, pointer, parent);
            }
        }
        self.find(value, pointer, parent, 0);
    }

    fn find(&mut self, value: &'v Value, pointer: &str, parent: Option<&'v Map>, depth: usize) {
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
                if let Some(Value::Array(steps)) = map.get("steps") {
                    let atif = str_of(map, "schema_version").is_some_and(|v| v.starts_with("ATIF"))
                        || steps
                            .iter()
                            .any(|s| signal(s) == Signal::Strong(Format::Atif));
                    if atif && wants(Format::Atif) {
                        let steps_pointer = child_pointer(pointer, "steps");
                        return self.push_list(Format::Atif, steps, &steps_pointer, Some(map));
                    }
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
            site: Site {
                doc: self.doc,
                pointer: pointer.to_string(),
            },
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

    /// `line 3 /runs/0/messages (task_id t-1)`.
    fn name(&self, pointer: &str, parent: Option<&Map>) -> String {
        let mut name = self.prefix.to_string();
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
    use serde_json::json;

    use super::*;

    fn formats_of(value: &Value) -> Vec<(Format, String, usize)> {
        let mut found = Vec::new();
        Search {
            doc: 0,
            format: None,
            prefix: "",
            found: &mut found,
        }
        .find(value, "", None, 0);
        found
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
