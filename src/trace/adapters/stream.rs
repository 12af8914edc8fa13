//! Streamed reading of transcript files: records are handed on as the input is read,
//! never the whole input at once.
//!
//! Two shapes stream:
//! - a log of one JSON-RPC / MCP message per line, read line by line through the MCP
//!   adapter's [`mcp::Reader`], which holds only the requests still open;
//! - a document whose top level is an array of runs, read one run at a time: a
//!   scanner finds each element's bytes, which are parsed, searched for transcripts and
//!   adapted as the whole document would be, then dropped.
//!
//! What comes out is exactly what reading the whole input gives ([`super::document`]):
//! the same records, problems, order, names, `seq` and locations. One thing needs the
//! whole input: whether it holds more than one trace, which decides whether records
//! carry a `trace` field. Records are held back until a second trace shows up (from
//! then on they stream) or the input ends, so a file of one transcript is held whole
//! as records, and a file of many holds little more than its first trace.
//!
//! A document is streamed only when it has been read through once, without keeping
//! it, and found to be valid JSON without a duplicate key ([`valid_without_duplicates`]):
//! an error anywhere would make the whole file an error, which must be known before
//! any record of it is handed on.

use std::collections::VecDeque;
use std::io::{self, BufRead};
use std::rc::Rc;

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::document::{
    Current, Doc, adapt, line_doc, malformed, trace_name, unknown_format_at,
    valid_without_duplicates,
};
use super::search::{Found, Search};
use super::shared::Map;
use super::{
    Detected, Element, Emit, Emitted, Entry, Format, Layout, Out, Problem, Site, mcp, otel,
};
use crate::trace::reader::{LineContent, LineReader};
use crate::trace::{Fields, Location, Record};

/// A transcript input being streamed.
pub struct Stream {
    docs: Docs,
    reader: Reader,
    finisher: Finisher,
    detected: Detected,
    /// Documents read so far; the next one's index.
    next_doc: usize,
    /// An error that stopped reading, handed on after what came before it.
    failed: Option<io::Error>,
    ended: bool,
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("detected", &self.detected)
            .finish_non_exhaustive()
    }
}

/// Where the documents come from.
enum Docs {
    Lines {
        reader: LineReader<Box<dyn BufRead>>,
        max_line_bytes: usize,
    },
    Array(Elements),
}

/// What turns documents into records.
enum Reader {
    Mcp(mcp::Reader),
    Runs(Runs),
}

#[derive(Default)]
struct Runs {
    /// Whether any run held a transcript.
    found: bool,
    /// Whether the array has any element.
    any: bool,
    /// OpenTelemetry exports among the runs, read together at the end as the whole
    /// document's are (one trace may be exported in many batches): each run's
    /// document and the pointers of its exports.
    otel: Vec<(usize, Rc<Doc>, Vec<String>)>,
    /// Where the whole document is, for a problem about all of it.
    whole: Location,
}

impl Stream {
    /// Streams an MCP / JSON-RPC log, one message per line, from `input`.
    pub(super) fn mcp(input: Box<dyn BufRead>, max_line_bytes: usize) -> Stream {
        Stream::new(
            Docs::Lines {
                reader: LineReader::with_max_line_bytes(input, max_line_bytes),
                max_line_bytes,
            },
            Reader::Mcp(mcp::Reader::default()),
            Layout::ElementLines,
            vec![Format::Mcp],
        )
    }

    /// Streams the document at `path`, whose top level is an array of runs, one run
    /// at a time; `None` when it is not such a document or not valid (it is then read
    /// whole, which reports its errors).
    pub(super) fn runs(path: &std::path::Path) -> io::Result<Option<Stream>> {
        let open = || -> io::Result<Box<dyn BufRead>> {
            Ok(Box::new(io::BufReader::with_capacity(
                1 << 16,
                std::fs::File::open(path)?,
            )))
        };
        // Read through once: every element must be valid JSON without a key twice, and
        // nothing but white space may follow the array. Each element is held only
        // while it is checked.
        let mut check = Elements::new(open()?)?;
        let mut first = true;
        // One buffer for every element: each is only checked, then dropped.
        let mut text = Vec::new();
        loop {
            match check.next_into(&mut text) {
                Ok(true) => {}
                Ok(false) if !first && check.rest_is_blank()? => break,
                // Not an array, an empty one, or not valid: read whole, which reports
                // what is wrong.
                Ok(false) | Err(_) => return Ok(None),
            };
            if first {
                // A first element that is a message, not a run: the array may be a
                // message list, which is decided over all its elements.
                let run = serde_json::from_slice::<Value>(&text).is_ok_and(|value| {
                    value.is_object() && !super::detect::element_like(&value, None)
                });
                if !run {
                    return Ok(None);
                }
                first = false;
            }
            if std::str::from_utf8(&text).is_err() || !valid_without_duplicates(&text) {
                return Ok(None);
            }
        }
        let elements = Elements::new(open()?)?;
        let len = std::fs::metadata(path)?.len();
        let whole = Location {
            line: 1,
            offset: elements.skip,
            len: len - elements.skip,
            pointer: Box::default(),
        };
        Ok(Some(Stream::new(
            Docs::Array(elements),
            Reader::Runs(Runs {
                whole,
                ..Runs::default()
            }),
            Layout::Document,
            Vec::new(),
        )))
    }

    fn new(docs: Docs, reader: Reader, layout: Layout, formats: Vec<Format>) -> Stream {
        Stream {
            docs,
            reader,
            finisher: Finisher::default(),
            detected: Detected {
                layout,
                formats,
                explicit: false,
                traces: 0,
                warning: None,
            },
            next_doc: 0,
            failed: None,
            ended: false,
        }
    }

    /// Reads on until it is known whether the input holds more than one trace.
    pub fn decide(&mut self) {
        while !self.finisher.decided && !self.ended {
            self.read_one();
        }
    }

    /// Distinct traces among the records so far: final once the input is read, and
    /// more than one as soon as [`Stream::decide`] has returned if it will be.
    pub fn traces(&self) -> usize {
        self.finisher.names.len()
    }

    /// What was recognized in the input so far (final once it is read).
    pub fn detected(&self) -> Detected {
        Detected {
            traces: self.traces(),
            ..self.detected.clone()
        }
    }

    /// The next record or problem; `Err` when reading failed (nothing follows).
    pub fn next_entry(&mut self) -> Option<Result<Entry, io::Error>> {
        loop {
            if let Some(entry) = self.finisher.ready.pop_front() {
                return Some(Ok(entry));
            }
            if self.ended {
                return self.failed.take().map(Err);
            }
            self.read_one();
        }
    }

    /// Reads one document, or ends the input.
    fn read_one(&mut self) {
        match self.read_doc() {
            Ok(true) => {}
            Ok(false) => self.end(),
            Err(err) => {
                self.failed = Some(err);
                self.end();
            }
        }
    }

    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Reader::Runs(runs) = &mut self.reader {
            let runs = std::mem::take(runs);
            runs.finish(&mut self.finisher);
        }
        self.finisher.flush();
    }

    /// Reads the next document; `false` at the end of the input.
    fn read_doc(&mut self) -> io::Result<bool> {
        let index = self.next_doc;
        match (&mut self.docs, &mut self.reader) {
            (
                Docs::Lines {
                    reader,
                    max_line_bytes,
                },
                Reader::Mcp(mcp),
            ) => {
                let Some(line) = reader.next_line()? else {
                    return Ok(false);
                };
                // The common line is read from its text; any other from its document.
                if let LineContent::Text(text) = line.content {
                    let mut out = Out::default();
                    if mcp.line(text, index, &line.location(), &mut out) {
                        self.next_doc += 1;
                        for item in out.items {
                            self.finisher.emitted("", item, |site| {
                                Location::clone(
                                    site.pinned.as_ref().expect(
                                        "bug: a message read from its line is located there",
                                    ),
                                )
                            });
                        }
                        return Ok(true);
                    }
                }
                let mut problems = Vec::new();
                let doc = line_doc(line, *max_line_bytes, &mut problems);
                for problem in problems {
                    self.finisher.problem(problem);
                }
                let Some(doc) = doc else { return Ok(true) };
                self.next_doc += 1;
                let doc = Rc::new(doc);
                let Some(value) = doc.value.as_ref().filter(|_| !doc.hides("")) else {
                    return Ok(true);
                };
                let mut out = current(index, &doc);
                mcp.element(
                    &Element {
                        value,
                        site: Site::new(index, String::new()),
                    },
                    &mut out,
                );
                for item in out.items {
                    self.finisher
                        .emitted("", item, |site| locate(&doc, index, site));
                }
                Ok(true)
            }
            (Docs::Array(elements), Reader::Runs(runs)) => {
                let Some(element) = elements.next()? else {
                    return Ok(false);
                };
                self.next_doc += 1;
                runs.any = true;
                let base = format!("/{}", element.index);
                let value = match serde_json::from_str::<Value>(&element.text) {
                    Ok(value) => Some(value),
                    // Read through before streaming, so only a file changed since.
                    Err(err) => {
                        let loc = Location {
                            line: element.line,
                            offset: element.offset,
                            len: element.text.len() as u64,
                            pointer: base.clone().into(),
                        };
                        let message = format!("the file is not valid JSON: {err}");
                        self.finisher.problem(malformed(loc, message));
                        None
                    }
                };
                let doc = Rc::new(Doc {
                    text: element.text,
                    offset: element.offset,
                    line: element.line,
                    value,
                    index: Default::default(),
                    duplicates: Vec::new(),
                    base,
                });
                runs.read(index, &doc, &mut self.detected, &mut self.finisher);
                Ok(true)
            }
            _ => unreachable!("bug: a stream's documents and reader go together"),
        }
    }
}

/// An `Out` for adapting document `index`.
fn current(index: usize, doc: &Rc<Doc>) -> Out {
    Out {
        items: Vec::new(),
        current: Some(Current {
            doc: index,
            read: doc.clone(),
        }),
    }
}

/// Where `site` is: where it was pinned, or in `doc` (document `index`).
fn locate(doc: &Doc, index: usize, site: &Site) -> Location {
    match &site.pinned {
        Some(loc) => Location::clone(loc),
        None => {
            debug_assert_eq!(site.doc, index, "bug: a site of a document gone");
            doc.location(&site.pointer)
        }
    }
}

impl Runs {
    /// Finds and adapts the transcripts of one run, document `index`.
    fn read(
        &mut self,
        index: usize,
        doc: &Rc<Doc>,
        detected: &mut Detected,
        finisher: &mut Finisher,
    ) {
        let Some(value) = &doc.value else { return };
        let mut found: Vec<Found<'_>> = Vec::new();
        // As the search of the whole array goes: each element, one level down.
        Search {
            doc: index,
            format: None,
            prefix: "",
            found: &mut found,
        }
        .find(value, &doc.base, None, 1);
        for transcript in &found {
            if !detected.formats.contains(&transcript.format) {
                detected.formats.push(transcript.format);
            }
        }
        self.found |= !found.is_empty();
        let (exports, found): (Vec<Found<'_>>, Vec<Found<'_>>) =
            found.into_iter().partition(|f| f.format == Format::Otel);
        if !exports.is_empty() {
            let pointers = exports
                .iter()
                .flat_map(|f| f.elements.iter().map(|e| e.site.pointer.clone()))
                .collect();
            self.otel.push((index, doc.clone(), pointers));
        }
        for (name, item) in adapt(&found, None) {
            finisher.emitted(&name, item, |site| locate(doc, index, site));
        }
    }

    /// What only the end of the document can tell: its OpenTelemetry spans, and
    /// whether it held any transcript.
    fn finish(self, finisher: &mut Finisher) {
        if !self.otel.is_empty() {
            let mut elements = Vec::new();
            for (index, doc, pointers) in &self.otel {
                let Some(value) = &doc.value else { continue };
                for pointer in pointers {
                    let inner = pointer.strip_prefix(doc.base.as_str()).unwrap_or(pointer);
                    if let Some(value) = value.pointer(inner) {
                        elements.push(Element {
                            value,
                            site: Site::new(*index, pointer.clone()),
                        });
                    }
                }
            }
            let mut out = Out::default();
            otel::read(&elements, &mut out);
            let docs: FxHashMap<usize, &Rc<Doc>> =
                self.otel.iter().map(|(i, doc, _)| (*i, doc)).collect();
            for item in out.items {
                finisher.emitted("", item, |site| match (&site.pinned, docs.get(&site.doc)) {
                    (Some(loc), _) => Location::clone(loc),
                    (None, Some(doc)) => doc.location(&site.pointer),
                    (None, None) => Location::default(),
                });
            }
        }
        if !self.found && self.any {
            finisher.problem(unknown_format_at(self.whole, None));
        }
    }
}

/// Gives records their trace, position and location, as the whole input's reading
/// does, holding them back until it is known whether there is more than one trace.
#[derive(Default)]
struct Finisher {
    /// Every trace met, and the next `seq` of each.
    names: FxHashMap<String, u64>,
    /// What waits for the second trace (or the end): `None` once it is decided.
    pending: Option<Vec<Pending>>,
    /// What is ready to be handed on.
    ready: VecDeque<Entry>,
    /// The first trace's name, until a second one is met.
    first: Option<String>,
    decided: bool,
    many: bool,
}

enum Pending {
    Problem(Problem),
    Record(String, Map, Location),
}

impl Finisher {
    fn hold(&mut self) -> Option<&mut Vec<Pending>> {
        if self.decided {
            return None;
        }
        Some(self.pending.get_or_insert_with(Vec::new))
    }

    fn problem(&mut self, problem: Problem) {
        match self.hold() {
            Some(pending) => pending.push(Pending::Problem(problem)),
            None => self.ready.push_back(Entry::Problem(problem)),
        }
    }

    /// An item an adapter emitted for the transcript named `transcript`, located by
    /// `locate`.
    fn emitted(&mut self, transcript: &str, mut item: Emitted, locate: impl Fn(&Site) -> Location) {
        let loc = locate(&item.site);
        let name = match item.what {
            // The sub-trace's name is the trace's: moved, not copied.
            Emit::Record(_) if transcript.is_empty() => item.trace.take().unwrap_or_default(),
            Emit::Record(_) => trace_name(transcript, &item),
            Emit::Problem(_) => String::new(),
        };
        match item.what {
            Emit::Problem(message) => self.problem(malformed(loc, message)),
            Emit::Record(fields) => {
                if !self.names.contains_key(&name) {
                    self.names.insert(name.clone(), 0);
                    match &self.first {
                        None => self.first = Some(name.clone()),
                        Some(_) if !self.decided => {
                            self.many = true;
                            self.flush();
                        }
                        Some(_) => {}
                    }
                }
                match self.hold() {
                    Some(pending) => pending.push(Pending::Record(name, fields, loc)),
                    None => self.record(name, fields, loc),
                }
            }
        }
    }

    /// Decides: what was held back is handed on, and nothing is held from now on.
    fn flush(&mut self) {
        self.decided = true;
        for pending in self.pending.take().unwrap_or_default() {
            match pending {
                Pending::Problem(problem) => self.ready.push_back(Entry::Problem(problem)),
                Pending::Record(name, fields, loc) => self.record(name, fields, loc),
            }
        }
    }

    fn record(&mut self, name: String, mut fields: Map, loc: Location) {
        let this = match self.names.get_mut(&name) {
            Some(seq) => {
                *seq += 1;
                *seq - 1
            }
            None => {
                self.names.insert(name.clone(), 1);
                0
            }
        };
        if self.many {
            fields.insert("trace".into(), Value::String(name));
        }
        fields.insert("seq".into(), Value::from(this));
        let entry = match Record::new(Fields::Owned(fields), loc.clone()) {
            Ok(record) => Entry::Record(record),
            Err(err) => Entry::Problem(malformed(loc, err.to_string())),
        };
        self.ready.push_back(entry);
    }
}

/// The elements of a top-level JSON array, read one at a time from a reader, each
/// with its place in the file.
struct Elements {
    input: Box<dyn BufRead>,
    /// Byte offset of the next unread byte.
    offset: u64,
    /// Line of the next unread byte.
    line: u64,
    /// Elements read so far.
    count: usize,
    /// Bytes of BOM before the document.
    skip: u64,
    done: bool,
    /// Where the last element read starts, and its length.
    last_offset: u64,
    last_line: u64,
    last_len: usize,
}

/// One element's text and place.
struct Scanned {
    text: String,
    offset: u64,
    line: u64,
    index: usize,
}

fn skip_bom(input: &mut dyn BufRead) -> io::Result<u64> {
    let head = input.fill_buf()?;
    if head.starts_with(b"\xEF\xBB\xBF") {
        input.consume(3);
        return Ok(3);
    }
    Ok(0)
}

fn invalid(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("the document changed while it was read: {what}"),
    )
}

impl Elements {
    /// Starts reading the array `input` holds (a BOM and white space may come first).
    fn new(mut input: Box<dyn BufRead>) -> io::Result<Elements> {
        let skip = skip_bom(&mut input)?;
        let mut elements = Elements {
            input,
            offset: skip,
            line: 1,
            count: 0,
            skip,
            done: false,
            last_offset: 0,
            last_line: 0,
            last_len: 0,
        };
        elements.skip_ws()?;
        if elements.peek()? != Some(b'[') {
            elements.done = true;
        } else {
            elements.advance(1);
        }
        Ok(elements)
    }

    /// Whether nothing but white space is left.
    fn rest_is_blank(&mut self) -> io::Result<bool> {
        self.skip_ws()?;
        Ok(self.peek()?.is_none())
    }

    fn peek(&mut self) -> io::Result<Option<u8>> {
        Ok(self.input.fill_buf()?.first().copied())
    }

    fn advance(&mut self, n: usize) {
        self.input.consume(n);
        self.offset += n as u64;
    }

    fn skip_ws(&mut self) -> io::Result<()> {
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Ok(());
            }
            let mut n = 0;
            let mut lines = 0;
            for &b in buf {
                match b {
                    b'\n' => lines += 1,
                    b' ' | b'\t' | b'\r' => {}
                    _ => break,
                }
                n += 1;
            }
            let all = n == buf.len();
            self.line += lines;
            self.advance(n);
            if !all {
                return Ok(());
            }
        }
    }

    /// The next element, or `None` after the last.
    fn next(&mut self) -> io::Result<Option<Scanned>> {
        // Sized as the last element was: runs are alike, so one allocation each.
        let mut bytes = Vec::with_capacity(self.last_len);
        if !self.next_into(&mut bytes)? {
            return Ok(None);
        }
        self.last_len = bytes.len();
        let text = String::from_utf8(bytes).map_err(|_| invalid("not UTF-8"))?;
        Ok(Some(Scanned {
            text,
            offset: self.last_offset,
            line: self.last_line,
            index: self.count - 1,
        }))
    }

    /// Reads the next element's bytes into `bytes` (cleared first); `false` after the
    /// last.
    fn next_into(&mut self, bytes: &mut Vec<u8>) -> io::Result<bool> {
        bytes.clear();
        if self.done {
            return Ok(false);
        }
        self.skip_ws()?;
        match self.peek()? {
            Some(b']') => {
                self.done = true;
                self.advance(1);
                return Ok(false);
            }
            Some(b',') if self.count > 0 => {
                self.advance(1);
                self.skip_ws()?;
            }
            Some(_) if self.count == 0 => {}
            _ => return Err(invalid("expected `,` or `]`")),
        }
        (self.last_offset, self.last_line) = (self.offset, self.line);
        self.value(bytes)?;
        self.count += 1;
        Ok(true)
    }

    /// Reads one JSON value's bytes into `out`: a string, a container by its
    /// brackets (strings inside skipped), or a scalar up to its delimiter.
    fn value(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        let mut depth = 0usize;
        let mut in_string = false;
        let mut escape = false;
        let mut scalar = false;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                return Err(invalid("it ends inside an element"));
            }
            let mut end = None;
            for (i, &b) in buf.iter().enumerate() {
                if in_string {
                    if escape {
                        escape = false;
                    } else if b == b'\\' {
                        escape = true;
                    } else if b == b'"' {
                        in_string = false;
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    continue;
                }
                if scalar {
                    if matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n') {
                        end = Some(i);
                        break;
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = Some(i + 1);
                            break;
                        }
                    }
                    _ if depth == 0 => scalar = true,
                    _ => {}
                }
            }
            let take = end.unwrap_or(buf.len());
            let chunk = &buf[..take];
            self.line += chunk.iter().filter(|&&b| b == b'\n').count() as u64;
            out.extend_from_slice(chunk);
            self.advance(take);
            if end.is_some() {
                return Ok(());
            }
        }
    }
}
