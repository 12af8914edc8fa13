//! OpenTelemetry exports read span by span: a document that is one OTLP JSON export
//! request (`{"resourceSpans": [...]}`) or an array of them, or a file of one export
//! request per line, as the collector's file exporter writes them.
//!
//! The file is scanned once ([`Scanner`]), down OTLP's nesting (`resourceSpans[]`,
//! `scopeSpans[]` or `instrumentationLibrarySpans[]`, `spans[]`), and never held: a
//! resource or scope is kept only as far as its members before its list of spans (its
//! `resource`, whose `service.name` its spans inherit), and each span is parsed alone,
//! handed to the adapter ([`otel::Gather`]) and dropped. Of a tool span, only where
//! its text is, its start time, its trace and its resource's service are kept
//! ([`Placed`]); any other span (a chat span with its prompts, most of an export's
//! bytes) leaves nothing but its problems. Then ([`Replay`]) the problems are handed
//! on, and the tool spans in start order, as reading the whole file orders them (one
//! trace may be exported in many batches): each is read again from the file and
//! becomes its call and result, and its trace ends right after its last one, so that
//! the checker frees it. Memory follows the tool spans' places and the traces open
//! at once, not the file nor its records.
//!
//! What comes out is exactly what reading the whole file gives
//! ([`super::super::document`]): the same records, problems, order, names, `seq` and
//! locations. Whatever this reading does not follow exactly as the whole reading
//! does is left to it, as soon as it is met, before anything is handed on: text that
//! is not valid JSON or has a key twice (which makes the whole file an error), a
//! document whose first member is not `resourceSpans` or that holds more than one
//! value, an array of exports one of which is no export or has another member, lines
//! that are not each one export (or an array of them) or that may be over the line
//! limit, a `resource` after its spans, a level of the nesting after a lower one in
//! the same object (the whole reading walks the higher), nesting deeper than OTLP's,
//! `--select` or a `--format` other than `otel`, and, with `--format otel`, an export
//! with members beside `resourceSpans` (which may make it look like another format's
//! element, which that reading reports).

use std::io;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashSet;
use serde_json::Value;

use super::super::document::{Doc, parse_unique};
use super::super::otel::{self, Gather, LEVELS};
use super::super::shared::describe;
use super::super::{Format, InputOptions, Layout, Out, Site};
use super::Stream;
use super::scan::{Scanner, changed};
use crate::trace::Location;

/// How deep OTLP elements may nest before the whole reading takes over: an export's
/// spans are three levels down.
const MAX_LEVELS: usize = 8;

/// Reads the file at `path`, laid out as `layout`, as OTLP exports span by span; `None`
/// when it is to be read whole (see the module doc), having handed nothing on.
pub(in super::super) fn read(
    path: &Path,
    options: &InputOptions,
    layout: Layout,
    max_line_bytes: usize,
) -> io::Result<Option<Stream>> {
    if options.select.is_some() || options.format.is_some_and(|f| f != Format::Otel) {
        return Ok(None);
    }
    if !starts_as_export(path)? {
        return Ok(None);
    }
    let file = std::fs::File::open(path)?;
    let input = Box::new(io::BufReader::with_capacity(1 << 16, file));
    let mut walk = Walk {
        scan: Scanner::new(input)?,
        gather: Gather::default(),
        placed: Vec::new(),
        bytes: Vec::new(),
        doc: 0,
        forced: options.format.is_some(),
    };
    match walk.read(layout, max_line_bytes) {
        Ok(()) => {}
        Err(err) if err.kind() == io::ErrorKind::InvalidData => return Ok(None),
        Err(err) => return Err(err),
    }
    let problems = walk.gather.problems();
    if problems.items.iter().any(|item| item.site.pinned.is_none()) {
        debug_assert!(
            false,
            "bug: an OTLP site not located while its span was read"
        );
        return Ok(None);
    }
    let replay = Replay::new(std::fs::File::open(path)?, walk.placed, problems);
    let traces = replay.traces();
    Ok(Some(Stream::otel(replay, traces, layout, options.format)))
}

/// A tool span as the first pass placed it: where its text is, to read it again,
/// and what orders it and ends its trace.
struct Placed {
    /// Its start time (0 without one), by which tool spans are ordered.
    start: u64,
    /// Its trace.
    trace: String,
    /// Where its text starts (byte offset and line) and how long it is.
    at: (u64, u64),
    len: usize,
    /// Its place in its document, not located.
    site: Site,
    /// The `service.name` of its resource.
    service: Option<Arc<Value>>,
}

/// The second reading of an export: the problems the first pass found, then each
/// tool span, read again from the file in start order, as its call and result,
/// each trace ended after its last.
pub(in super::super) struct Replay {
    file: std::fs::File,
    /// The problems, until they are handed on.
    problems: Option<Out>,
    /// The tool spans in start order (spans that start together in file order), each
    /// with whether it is the last of its trace.
    placed: std::iter::Zip<std::vec::IntoIter<Placed>, std::vec::IntoIter<bool>>,
    /// How many traces the tool spans are in.
    traces: usize,
    /// The trace whose last tool span was just read, to be ended next.
    ended: Option<String>,
    text: Vec<u8>,
}

/// What the second reading of an export hands on next.
pub(in super::super) enum Replayed {
    /// Problems, or a tool span's call and result.
    Items(Out),
    /// The trace of this name has no more records.
    End(String),
}

impl Replay {
    fn new(file: std::fs::File, mut placed: Vec<Placed>, problems: Out) -> Replay {
        // Stable: spans that start together keep their order in the file, as reading
        // the whole file orders them.
        placed.sort_by_key(|p| p.start);
        let mut seen = FxHashSet::default();
        let mut last: Vec<bool> = placed
            .iter()
            .rev()
            .map(|p| seen.insert(p.trace.as_str()))
            .collect();
        last.reverse();
        let traces = seen.len();
        drop(seen);
        Replay {
            file,
            problems: Some(problems),
            placed: placed.into_iter().zip(last),
            traces,
            ended: None,
            text: Vec::new(),
        }
    }

    /// How many traces the tool spans are in.
    pub(in super::super) fn traces(&self) -> usize {
        self.traces
    }

    /// What comes next; `None` at the end.
    pub(in super::super) fn next(&mut self) -> io::Result<Option<Replayed>> {
        if let Some(problems) = self.problems.take()
            && !problems.items.is_empty()
        {
            return Ok(Some(Replayed::Items(problems)));
        }
        if let Some(trace) = self.ended.take() {
            return Ok(Some(Replayed::End(trace)));
        }
        let Some((placed, last)) = self.placed.next() else {
            return Ok(None);
        };
        let out = self.again(&placed)?;
        if last {
            self.ended = Some(placed.trace);
        }
        Ok(Some(Replayed::Items(out)))
    }

    /// The tool span `placed`, read again from the file: its call and result.
    fn again(&mut self, placed: &Placed) -> io::Result<Out> {
        use std::io::{Read as _, Seek as _};
        self.file.seek(io::SeekFrom::Start(placed.at.0))?;
        self.text.resize(placed.len, 0);
        self.file.read_exact(&mut self.text)?;
        let text = std::str::from_utf8(&self.text).map_err(|_| changed("a span is not UTF-8"))?;
        let Some(Value::Object(map)) = parse_unique(text) else {
            return Err(changed("a span is no longer an object"));
        };
        let doc = span_doc(text.to_string(), placed.at, &placed.site);
        let site = pinned(placed.site.clone(), placed.at, placed.len);
        let mut out = Out::default();
        let service = placed.service.as_deref();
        if !Gather::again(&map, &site, service, |site| pin_in(&doc, site), &mut out) {
            return Err(changed("a tool span is no longer one"));
        }
        Ok(out)
    }
}

/// Whether the file at `path` starts as an export whose first member is
/// `resourceSpans`, or as an array of them, judged from its first bytes: any other
/// document is left to the other readings having cost a read of a few hundred bytes.
fn starts_as_export(path: &Path) -> io::Result<bool> {
    use std::io::Read as _;
    let mut head = Vec::new();
    std::fs::File::open(path)?
        .take(512)
        .read_to_end(&mut head)?;
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&head);
    let head = head.trim_ascii_start();
    // A document may be an array of exports.
    let head = head.strip_prefix(b"[").unwrap_or(head);
    Ok(head
        .trim_ascii_start()
        .strip_prefix(b"{")
        .is_some_and(|rest| rest.trim_ascii_start().starts_with(b"\"resourceSpans\"")))
}

/// The input is not one this reading follows: it is read whole.
fn unfit() -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, "read whole")
}

struct Walk {
    scan: Scanner,
    gather: Gather,
    /// The tool spans met, in file order.
    placed: Vec<Placed>,
    /// A buffer for keys and values.
    bytes: Vec<u8>,
    /// The document being read: the file's one, or a line's.
    doc: usize,
    /// Whether `--format otel` was given: the whole reading then checks that the
    /// export says it is OTLP, which one with no member but `resourceSpans` does.
    forced: bool,
}

impl Walk {
    fn read(&mut self, layout: Layout, max_line_bytes: usize) -> io::Result<()> {
        match layout {
            Layout::Document => {
                self.document()?;
                match self.scan.rest_is_blank()? {
                    true => Ok(()),
                    false => Err(unfit()),
                }
            }
            // A line read by itself would not skip a BOM.
            Layout::DocumentLines if self.scan.bom == 0 => {
                // Where the last export ends: a line is at most as long as what lies
                // between the end of one and the start of the next.
                let mut last_end = 0;
                while self.scan.next_byte()?.is_some() {
                    let line = self.scan.line;
                    self.document()?;
                    let end = self.scan.offset;
                    let one_line = self.scan.line == line;
                    self.scan.skip_ws()?;
                    let alone = self.scan.peek()?.is_none() || self.scan.line > line;
                    let longest = self.scan.offset - last_end;
                    if !one_line || !alone || longest >= max_line_bytes as u64 {
                        return Err(unfit());
                    }
                    last_end = end;
                    self.doc += 1;
                }
                match self.doc {
                    0 => Err(unfit()),
                    _ => Ok(()),
                }
            }
            _ => Err(unfit()),
        }
    }

    /// Document [`Walk::doc`]: one export request, or an array of them.
    fn document(&mut self) -> io::Result<()> {
        match self.scan.next_byte()? {
            Some(b'[') => self.exports(),
            _ => self.export(Site::new(self.doc, String::new()), self.forced),
        }
    }

    /// A document that is an array of export requests, each with no member but
    /// `resourceSpans` (which makes it an OTLP element whatever else is looked for, as
    /// the whole reading's list of them is; any other element, or none, is read whole).
    fn exports(&mut self) -> io::Result<()> {
        self.scan.advance(1);
        let mut index = 0;
        loop {
            match self.scan.next_byte()? {
                Some(b']') if index > 0 => {
                    self.scan.advance(1);
                    return Ok(());
                }
                Some(b',') if index > 0 => self.scan.advance(1),
                Some(_) if index == 0 => {}
                _ => return Err(unfit()),
            }
            self.export(Site::new(self.doc, String::new()).child(index), true)?;
            index += 1;
        }
    }

    /// One export request at `site`: an object whose first member is `resourceSpans`,
    /// a list (anything else is read whole), and its only member when `alone`.
    fn export(&mut self, site: Site, alone: bool) -> io::Result<()> {
        if self.scan.next_byte()? != Some(b'{') {
            return Err(unfit());
        }
        self.scan.advance(1);
        let first = self.scan.key(&mut self.bytes)?;
        if first.as_deref() != Some("resourceSpans")
            || !self.scan.eat(b':')?
            || self.scan.next_byte()? != Some(b'[')
        {
            return Err(unfit());
        }
        self.level(site.child("resourceSpans"), "resourceSpans", None, 0)?;
        if alone {
            return match self.scan.eat(b'}')? {
                true => Ok(()),
                false => Err(unfit()),
            };
        }
        self.rest_of(vec!["resourceSpans".to_string()], 0)
    }

    /// The members of an object after its level (the `rank`th of [`LEVELS`]), whose
    /// keys so far are `keys`, up to its end: only checked.
    fn rest_of(&mut self, mut keys: Vec<String>, rank: usize) -> io::Result<()> {
        loop {
            if self.scan.eat(b'}')? {
                return Ok(());
            }
            if !self.scan.eat(b',')? {
                return Err(unfit());
            }
            let key = self.scan.key(&mut self.bytes)?.ok_or_else(unfit)?;
            let higher = LEVELS
                .iter()
                .position(|l| *l == key)
                .is_some_and(|r| r < rank);
            // The whole reading would walk a higher level, or take the service from a
            // resource its spans, read already, did not have.
            if higher || key == "resource" || keys.contains(&key) || !self.scan.eat(b':')? {
                return Err(unfit());
            }
            self.value()?;
            keys.push(key);
        }
    }

    /// The OTLP element at `site`, the next value, of a resource whose service is
    /// `service`, `depth` levels down.
    fn element(&mut self, site: Site, service: Option<&Value>, depth: usize) -> io::Result<()> {
        if depth > MAX_LEVELS {
            return Err(unfit());
        }
        let at = self.place()?;
        match self.scan.peek()? {
            Some(b'{') => self.object(site, at, service, depth),
            Some(_) => {
                let (value, len) = self.value()?;
                let site = pinned(site, at, len);
                let message = format!("OTLP element is {}, expected an object", describe(&value));
                self.gather.problem(&site, message);
                Ok(())
            }
            None => Err(unfit()),
        }
    }

    /// An OTLP object at `site`, starting at `at`: a container of the next level when
    /// it has a level's key, a span otherwise. Its text is kept while its members are
    /// read until a level's key shows it is a container: a span is then parsed from it.
    fn object(
        &mut self,
        site: Site,
        at: (u64, u64),
        service: Option<&Value>,
        depth: usize,
    ) -> io::Result<()> {
        self.scan.recording = Some(Vec::new());
        self.scan.advance(1);
        if !self.scan.eat(b'}')? {
            loop {
                let key = self.scan.key(&mut self.bytes)?.ok_or_else(unfit)?;
                if !self.scan.eat(b':')? {
                    return Err(unfit());
                }
                if let Some(rank) = LEVELS.iter().position(|l| *l == key) {
                    return self.container(site, key, rank, service, depth);
                }
                self.scan.skip_ws()?;
                self.scan.value(None)?;
                if self.scan.eat(b'}')? {
                    break;
                }
                if !self.scan.eat(b',')? {
                    return Err(unfit());
                }
            }
        }
        let text = self.scan.recording.take().expect("bug: a span's text kept");
        let text = String::from_utf8(text).map_err(|_| unfit())?;
        let Some(Value::Object(map)) = parse_unique(&text) else {
            return Err(unfit());
        };
        let len = text.len();
        let doc = span_doc(text, at, &site);
        let located = pinned(site.clone(), at, len);
        let placed = self
            .gather
            .span_placed(&map, &located, service, |site| pin_in(&doc, site));
        if let Some((start, trace)) = placed {
            // One resource's spans share its service.
            let service = match self.placed.last() {
                Some(last) if last.service.as_deref() == service => last.service.clone(),
                _ => service.cloned().map(Arc::new),
            };
            self.placed.push(Placed {
                start,
                trace,
                at,
                len,
                site,
                service,
            });
        }
        Ok(())
    }

    /// The rest of a container at `site` whose members so far were kept (its text
    /// from `{`) up to `key`, its level, the `rank`th of [`LEVELS`].
    fn container(
        &mut self,
        site: Site,
        key: String,
        rank: usize,
        service: Option<&Value>,
        depth: usize,
    ) -> io::Result<()> {
        // The members before the level, as an object whose level is null: checked, and
        // read for the resource's service.
        let mut head = self
            .scan
            .recording
            .take()
            .expect("bug: a container's text kept");
        head.extend_from_slice(b"null}");
        let head = String::from_utf8(head).map_err(|_| unfit())?;
        let Some(Value::Object(head)) = parse_unique(&head) else {
            return Err(unfit());
        };
        let service = otel::service_of(&head, service);
        self.level(site.child(&key), &key, service.as_ref(), depth)?;
        self.rest_of(head.keys().cloned().collect(), rank)
    }

    /// The value of level `key` of a container, at `site`: each element of its list,
    /// of a resource whose service is `service`, `depth` levels down.
    fn level(
        &mut self,
        site: Site,
        key: &str,
        service: Option<&Value>,
        depth: usize,
    ) -> io::Result<()> {
        let at = self.place()?;
        if self.scan.peek()? != Some(b'[') {
            let (value, len) = self.value()?;
            let site = pinned(site, at, len);
            let message = format!("field `{key}` is {}, expected an array", describe(&value));
            self.gather.problem(&site, message);
            return Ok(());
        }
        self.scan.advance(1);
        if self.scan.eat(b']')? {
            return Ok(());
        }
        for i in 0.. {
            self.element(site.child(i), service, depth + 1)?;
            if self.scan.eat(b']')? {
                break;
            }
            if !self.scan.eat(b',')? {
                return Err(unfit());
            }
        }
        Ok(())
    }

    /// Where the next value starts: its byte offset and line.
    fn place(&mut self) -> io::Result<(u64, u64)> {
        self.scan.skip_ws()?;
        Ok((self.scan.offset, self.scan.line))
    }

    /// The next value, parsed, and its length in bytes.
    fn value(&mut self) -> io::Result<(Value, usize)> {
        self.scan.skip_ws()?;
        self.bytes.clear();
        self.scan.value(Some(&mut self.bytes))?;
        let text = std::str::from_utf8(&self.bytes).map_err(|_| unfit())?;
        let value = parse_unique(text).ok_or_else(unfit)?;
        Ok((value, self.bytes.len()))
    }
}

/// A span's text, which starts at `at` (offset and line), as a document of its own
/// at `site`, to locate its members in.
fn span_doc(text: String, at: (u64, u64), site: &Site) -> Doc {
    Doc {
        text,
        offset: at.0,
        line: at.1,
        value: None,
        index: Default::default(),
        duplicates: Vec::new(),
        base: site.pointer.to_string(),
    }
}

/// `site`, located in the span `doc` if it is not yet.
fn pin_in(doc: &Doc, site: &Site) -> Site {
    match &site.pinned {
        Some(_) => site.clone(),
        None => Site {
            pinned: Some(Arc::new(doc.location(&site.pointer))),
            ..site.clone()
        },
    }
}

/// `site`, located at `at` (offset and line), `len` bytes long.
fn pinned(site: Site, (offset, line): (u64, u64), len: usize) -> Site {
    let loc = Location {
        line,
        offset,
        len: len as u64,
        pointer: site.pointer.clone(),
    };
    Site {
        pinned: Some(Arc::new(loc)),
        ..site
    }
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::super::super::{
        Entry, InputOptions, Layout, Opened, Streamed, open_bytes, open_streamed,
    };
    use super::super::Handed;
    use crate::json::Segment;
    use crate::trace::adapters::Choices;

    const MAX_LINE_BYTES: usize = 1 << 20;

    /// Trace ids as exporters write them: hex in either case, base64, and bad ones.
    const TRACE_IDS: &[&str] = &[
        "5B8EFFF798038103D269B633813FC60C",
        "5b8efff798038103d269b633813fc60c",
        "W47/95gDgQPSabYzgT/GDA==",
        "0af7651916cd43dd8448eb211c80319c",
        "0af7651916cd43dd8448eb211c80319d",
        "",
    ];

    fn attr(key: &str, value: &str) -> String {
        format!(r#"{{"key":"{key}","value":{value}}}"#)
    }

    /// One span, tool or not, good or bad, with white space `ws` between members.
    fn span(c: &mut Choices, n: usize, ws: &str) -> String {
        let mut members = Vec::new();
        if !c.one_in(12) {
            let id = TRACE_IDS[c.below(TRACE_IDS.len() as u64) as usize];
            members.push(format!(r#""traceId":"{id}""#));
        }
        members.push(match c.below(3) {
            0 => format!(r#""spanId":"{n:016x}""#),
            1 => r#""spanId":"7uGbfsPBsXM=""#.to_string(),
            _ => format!(r#""spanId":"{:016X}""#, n * 7),
        });
        // Few start times, so that spans start together.
        match c.below(4) {
            0 => members.push(format!(r#""startTimeUnixNano":{}"#, c.below(5))),
            1 => members.push(format!(
                r#""startTimeUnixNano":"17000000{:02}000000000""#,
                c.below(6)
            )),
            2 => members.push(format!(r#""startTimeUnixNano":"{}""#, c.below(5))),
            _ => {}
        }
        members.push(r#""endTimeUnixNano":"1700000100123000000""#.to_string());
        let tool = format!("tool_{}", c.below(3));
        let mut attrs = Vec::new();
        let kind = c.below(8);
        match kind {
            // A chat span with a long prompt.
            0 | 1 => {
                attrs.push(attr("gen_ai.operation.name", r#"{"stringValue":"chat"}"#));
                let prompt =
                    "Create the record, then look it up. ".repeat(1 + c.below(40) as usize);
                attrs.push(attr(
                    "gen_ai.prompt",
                    &format!(r#"{{"stringValue":"{prompt}"}}"#),
                ));
                members.push(r#""name":"chat gpt-4o""#.to_string());
            }
            // Older conventions: a tool name and no operation.
            2 => {
                attrs.push(attr(
                    "gen_ai.tool.name",
                    &format!(r#"{{"stringValue":"{tool}"}}"#),
                ));
            }
            // A tool named only by the span's name, or by nothing.
            3 => {
                attrs.push(attr(
                    "gen_ai.operation.name",
                    r#"{"stringValue":"execute_tool"}"#,
                ));
                if !c.one_in(3) {
                    members.push(format!(r#""name":"execute_tool {tool}""#));
                }
            }
            _ => {
                attrs.push(attr(
                    "gen_ai.operation.name",
                    r#"{"stringValue":"execute_tool"}"#,
                ));
                attrs.push(attr(
                    "gen_ai.tool.name",
                    &format!(r#"{{"stringValue":"{tool}"}}"#),
                ));
                members.push(r#""name":"execute_tool""#.to_string());
            }
        }
        if kind >= 2 {
            if !c.one_in(3) {
                attrs.push(attr(
                    "gen_ai.tool.call.id",
                    &format!(r#"{{"stringValue":"call_{n}"}}"#),
                ));
            }
            attrs.push(attr(
                "gen_ai.tool.call.arguments",
                &format!(
                    r#"{{"stringValue":"{{\"request_id\": \"r{}\"}}"}}"#,
                    c.below(4)
                ),
            ));
            match c.below(5) {
                0 => attrs.push(attr(
                    "gen_ai.tool.call.result",
                    r#"{"stringValue":"{\"id\": \"rec_1\"}"}"#,
                )),
                1 => attrs.push(attr("gen_ai.tool.call.result", r#"{"intValue":"0"}"#)),
                2 => attrs.push(attr(
                    "gen_ai.tool.call.result",
                    r#"{"kvlistValue":{"values":[{"key":"ok","value":{"boolValue":false}}]}}"#,
                )),
                _ => {}
            }
            if c.one_in(4) {
                attrs.push(attr("error.type", r#"{"stringValue":"timeout"}"#));
                attrs.push(attr(
                    "error.category",
                    r#"{"stringValue":"outcome_unknown"}"#,
                ));
            }
        }
        let attributes = match c.below(12) {
            // Attributes that cannot be read, as a plain object, or with no key.
            0 => r#""x""#.to_string(),
            1 => r#"{"gen_ai.tool.name":{"stringValue":"plain"}}"#.to_string(),
            2 if kind >= 2 => format!("[{}, {{\"value\": 1}}]", attrs.join(",")),
            _ => format!("[{}]", attrs.join(&format!(",{ws}"))),
        };
        members.push(format!(r#""attributes":{attributes}"#));
        match c.below(4) {
            0 => members.push(r#""status":{"code":2,"message":"upstream timed out"}"#.to_string()),
            1 => members.push(r#""status":{"code":"STATUS_CODE_ERROR"}"#.to_string()),
            _ => members.push(r#""status":{}"#.to_string()),
        }
        if c.one_in(5) {
            members.push(
                r#""events":[{"name":"exception","attributes":[{"key":"exception.message","value":{"stringValue":"boom"}}]}]"#
                    .to_string(),
            );
        }
        // Members in any order.
        let turn = c.below(members.len() as u64) as usize;
        members.rotate_left(turn);
        format!("{{{ws}{}{ws}}}", members.join(&format!(",{ws}")))
    }

    /// An element of a list of spans: mostly spans, now and then no object.
    fn element(c: &mut Choices, n: usize, ws: &str) -> String {
        match c.below(25) {
            0 => "3".to_string(),
            1 => r#"["a", {"b": null}]"#.to_string(),
            2 => "null".to_string(),
            _ => span(c, n, ws),
        }
    }

    /// One export request, its spans numbered from `*n`.
    fn export(c: &mut Choices, n: &mut usize, ws: &str) -> String {
        let mut resources = Vec::new();
        for r in 0..c.below(4) {
            let mut scopes = Vec::new();
            for _ in 0..1 + c.below(3) {
                let mut spans = Vec::new();
                for _ in 0..c.below(7) {
                    spans.push(element(c, *n, ws));
                    *n += 1;
                }
                let spans = match c.below(20) {
                    0 => r#"{"not": "a list"}"#.to_string(),
                    _ => format!("[{ws}{}{ws}]", spans.join(&format!(",{ws}"))),
                };
                let scope = match c.below(3) {
                    0 => String::new(),
                    _ => format!(r#""scope":{{"name":"agent","version":"1"}},{ws}"#),
                };
                let schema = match c.below(2) {
                    0 => String::new(),
                    _ => format!(r#",{ws}"schemaUrl":"https://opentelemetry.io/schemas/1.26.0""#),
                };
                scopes.push(format!("{{{ws}{scope}\"spans\":{spans}{schema}{ws}}}"));
            }
            let level = match c.below(4) {
                0 => "instrumentationLibrarySpans",
                _ => "scopeSpans",
            };
            let resource = match c.below(4) {
                0 => String::new(),
                1 => format!(r#""resource":{{"attributes":[]}},{ws}"#),
                _ => format!(
                    r#""resource":{{"attributes":[{}]}},{ws}"#,
                    attr("service.name", &format!(r#"{{"stringValue":"svc{r}"}}"#))
                ),
            };
            let scopes = match c.below(25) {
                0 => "7".to_string(),
                _ => format!("[{ws}{}{ws}]", scopes.join(&format!(",{ws}"))),
            };
            resources.push(format!("{{{ws}{resource}\"{level}\":{scopes}{ws}}}"));
        }
        format!(
            "{{{ws}\"resourceSpans\":[{ws}{}{ws}]{ws}}}",
            resources.join(&format!(",{ws}"))
        )
    }

    /// What reading `text` from a file gives (streamed where it streams), and what
    /// reading it whole gives, as text to compare; and whether it was streamed.
    pub(super) fn both(text: &[u8], options: &InputOptions) -> (String, String, bool) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("export.json");
        std::fs::write(&path, text).unwrap();
        let show = |opened: Opened| match opened {
            Opened::Read(reading) => format!(
                "{:?}\n{:?}\n{}",
                reading.detected, reading.entries, reading.traces
            ),
            Opened::Native(detected) => format!("native {detected:?}"),
        };
        let layout = super::super::super::detect::sniff(
            super::super::super::Source::File(&path),
            options,
            MAX_LINE_BYTES,
        )
        .unwrap();
        let streamed = matches!(layout, Layout::Document | Layout::DocumentLines)
            && super::read(&path, options, layout, MAX_LINE_BYTES)
                .unwrap()
                .is_some();
        let have = match open_streamed(&path, options, MAX_LINE_BYTES).unwrap() {
            Streamed::Opened(opened) => show(opened),
            // What a stream hands on, as a reading would hold it; where traces end
            // only a stream knows.
            Streamed::Stream(mut stream) => {
                let trace = |entry: &Entry| match entry {
                    Entry::Record(record) => record
                        .get(&[Segment::Key("trace".into())])
                        .and_then(|name| name.as_str().map(str::to_string)),
                    Entry::Problem(_) => None,
                };
                let mut entries = Vec::new();
                let mut ended = Vec::new();
                while let Some(handed) = stream.next() {
                    match handed.unwrap() {
                        Handed::Entry(entry) => {
                            let name = trace(&entry);
                            assert!(
                                name.is_none_or(|name| !ended.contains(&name)),
                                "a record after its trace ended"
                            );
                            entries.push(entry);
                        }
                        // Each trace ends right after its last record.
                        Handed::TraceEnd(name) => {
                            assert_eq!(entries.last().and_then(trace), Some(name.clone()));
                            ended.push(name);
                        }
                    }
                }
                // With more than one trace, every trace ended before the input did.
                if stream.traces() > 1 {
                    assert_eq!(ended.len(), stream.traces());
                }
                format!(
                    "{:?}\n{:?}\n{}",
                    stream.detected(),
                    entries,
                    stream.traces()
                )
            }
        };
        let want = show(open_bytes(text, options, MAX_LINE_BYTES));
        (have, want, streamed)
    }

    #[test]
    fn exports_read_span_by_span_give_what_reading_them_whole_gives() {
        let (mut streamed, mut arrays, mut arrays_streamed) = (0, 0, 0);
        for seed in 0..400 {
            let mut c = Choices(seed);
            let mut n = 0;
            let ws = ["", " ", "\n  ", "\r\n\t"][c.below(4) as usize];
            let shape = c.below(4);
            let text = match shape {
                // A document.
                0 => {
                    let bom = if c.one_in(5) { "\u{feff}" } else { "" };
                    format!("{bom}{ws}{}\n", export(&mut c, &mut n, ws))
                }
                // A document that is an array of exports.
                1 => {
                    let exports: Vec<String> = (0..1 + c.below(4))
                        .map(|_| export(&mut c, &mut n, ws))
                        .collect();
                    format!("[{ws}{}{ws}]\n", exports.join(&format!(",{ws}")))
                }
                // Export requests one per line, with blank lines and CRLF now and then.
                _ => {
                    let mut text = String::new();
                    for _ in 0..1 + c.below(5) {
                        let line = match c.below(4) {
                            0 => format!(
                                "[{},{}]",
                                export(&mut c, &mut n, ""),
                                export(&mut c, &mut n, "")
                            ),
                            _ => export(&mut c, &mut n, ""),
                        };
                        let end = ["\n", "\r\n", "\n\n  \n"][c.below(3) as usize];
                        let _ = write!(text, "{line}{end}");
                    }
                    text
                }
            };
            let (have, want, fit) = both(text.as_bytes(), &InputOptions::default());
            assert_eq!(have, want, "seed {seed}:\n{text}");
            streamed += usize::from(fit);
            if shape == 1 {
                arrays += 1;
                arrays_streamed += usize::from(fit);
            }
        }
        // Most are streamed, arrays of exports too: the others are those it leaves to
        // the whole reading.
        assert!(streamed > 330, "{streamed} streamed");
        assert!(
            arrays_streamed * 4 > arrays * 3,
            "{arrays_streamed} of {arrays} arrays"
        );
    }
}

#[cfg(test)]
mod left_whole {
    use super::super::super::InputOptions;
    use super::tests::both;

    const SPAN: &str = r#"{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","startTimeUnixNano":"1","attributes":[{"key":"gen_ai.tool.name","value":{"stringValue":"t"}}]}"#;

    #[test]
    fn what_this_reading_does_not_follow_is_read_whole_alike() {
        let deep = format!(
            r#"{{"resourceSpans":[{}{SPAN}{}]}}"#,
            r#"{"spans":["#.repeat(200),
            "]}".repeat(200)
        );
        let cases = [
            // A key twice, in a span, in a scope, at the top.
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{}]}}]}}]}}"#,
                SPAN.replace(
                    r#""startTimeUnixNano":"1","#,
                    r#""startTimeUnixNano":"1","startTimeUnixNano":"2","#
                )
            ),
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"scope":{{}},"scope":1,"spans":[{SPAN}]}}]}}]}}"#
            ),
            format!(r#"{{"resourceSpans":[],"resourceSpans":[{{"spans":[{SPAN}]}}]}}"#),
            // Not JSON, inside a span and between them.
            format!(
                r#"{{"resourceSpans":[{{"spans":[{}]}}]}}"#,
                SPAN.replace("\"1\"", "1x")
            ),
            format!(r#"{{"resourceSpans":[{{"spans":[{SPAN} {SPAN}]}}]}}"#),
            format!(r#"{{"resourceSpans":[{{"spans":[{SPAN}]}}]}}"#).replace("]}]}", "]}]"),
            // A resource after its spans; a lower level before a higher one.
            format!(
                r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{SPAN}]}}],"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"late"}}}}]}}}}]}}"#
            ),
            format!(
                r#"{{"resourceSpans":[{{"spans":[{SPAN}],"scopeSpans":[{{"spans":[{SPAN}]}}]}}]}}"#
            ),
            // Another member first, at the top; two documents; two exports on a line.
            format!(r#"{{"schema":1,"resourceSpans":[{{"spans":[{SPAN}]}}]}}"#),
            format!("{{\"resourceSpans\":[{{\"spans\":[{SPAN}]}}]}}\n[1]\n"),
            format!(
                "{{\"resourceSpans\":[]}}\n{{\"resourceSpans\":[{{\"spans\":[{SPAN}]}}]}} {{\"resourceSpans\":[]}}\n"
            ),
            // An export spread over lines among exports one per line; a line that is no
            // export.
            format!("{{\"resourceSpans\":[]}}\n{{\"resourceSpans\":\n[{{\"spans\":[{SPAN}]}}]}}\n"),
            format!("{{\"resourceSpans\":[{{\"spans\":[{SPAN}]}}]}}\n{{\"messages\":[]}}\n"),
            // Nesting deeper than OTLP's, and than JSON parsers allow.
            deep,
            // Not UTF-8 inside a span's string.
            format!(
                r#"{{"resourceSpans":[{{"spans":[{}]}}]}}"#,
                SPAN.replace("\"t\"", "\"t\u{0}\"")
            ),
        ];
        for (i, text) in cases.iter().enumerate() {
            let (have, want, streamed) = both(text.as_bytes(), &InputOptions::default());
            assert!(!streamed, "case {i} streamed: {text}");
            assert_eq!(have, want, "case {i}: {text}");
        }
        let mut bad = format!(r#"{{"resourceSpans":[{{"spans":[{SPAN}]}}]}}"#).into_bytes();
        let at = bad.len() - 10;
        bad.insert(at, 0xff);
        let (have, want, streamed) = both(&bad, &InputOptions::default());
        assert!(!streamed);
        assert_eq!(have, want);
    }

    #[test]
    fn with_select_or_another_format_the_export_is_read_whole() {
        let text = format!(r#"{{"resourceSpans":[{{"spans":[{SPAN}]}}]}}"#);
        let selected = InputOptions {
            format: None,
            select: Some(crate::trace::adapters::Selector::parse("resourceSpans[0]").unwrap()),
        };
        let forced = |format| InputOptions {
            format: Some(format),
            select: None,
        };
        use crate::trace::adapters::Format;
        // With another member, which may make the export look like another format's
        // element (a native record), that `--format otel` then reports.
        let odd = format!("{{\"resourceSpans\":[{{\"spans\":[{SPAN}]}}],\n\"kind\":\"call\"}}");
        for (text, options, streams) in [
            (&text, selected, false),
            (&text, forced(Format::OpenAi), false),
            (&text, forced(Format::Otel), true),
            (&odd, forced(Format::Otel), false),
            (&odd, InputOptions::default(), true),
        ] {
            let (have, want, streamed) = both(text.as_bytes(), &options);
            assert_eq!(streamed, streams, "{options:?} {text}");
            assert_eq!(have, want, "{options:?} {text}");
        }
    }
}
