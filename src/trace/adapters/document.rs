//! Document reading: the input's JSON documents (the whole file, or one per line),
//! the transcripts in them handed to their format's adapter, and the adapters' output
//! turned into located records, each with its trace and position.

use crate::trace::json_index::child_pointer;
use std::cell::OnceCell;
use std::io::{self, Read};

use rustc_hash::FxHashMap;
use serde_json::Value;

use super::detect::{Signal, signal};
use super::search::{Found, Search};
use super::shared::describe;
use super::{
    Detected, Element, Emit, Emitted, Entry, Format, InputOptions, Layout, Out, Problem,
    ProblemKind, Reading, Selector, Site, Source, anthropic, atif, claude_code, codex, gemini, mcp,
    openai, otel, pieces, responses, toolbench,
};
use crate::trace::json_index::JsonIndex;
use crate::trace::reader::{Line, LineContent, LineReader};
use crate::trace::{Location, Record};

/// The text of one JSON document of the input, and where it is in the file.
pub(super) struct Doc {
    pub(super) text: String,
    /// Byte offset of the text in the file.
    pub(super) offset: u64,
    /// Line of the text's first byte.
    pub(super) line: u64,
    pub(super) value: Option<Value>,
    pub(super) index: OnceCell<JsonIndex>,
    /// The JSON pointers of the objects that hold a key twice. The elements that hold
    /// one of them, or sit inside one, are reported and never read (fail closed):
    /// which of the two values was meant is unknown, and guessing could hide a call.
    pub(super) duplicates: Vec<String>,
    /// The JSON pointer of the text in the file's document: empty, unless the text is
    /// one element of a document streamed element by element (`/3`).
    pub(super) base: String,
}

/// The document an adapter is reading when documents are streamed one at a time.
pub(crate) struct Current {
    /// Its index, as sites name it.
    pub(super) doc: usize,
    pub(super) read: std::rc::Rc<Doc>,
}

impl std::fmt::Debug for Current {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Current").field("doc", &self.doc).finish()
    }
}

impl Doc {
    /// Whether the value at `pointer` holds, or sits inside, an object with a key
    /// twice: it is not read.
    pub(super) fn hides(&self, pointer: &str) -> bool {
        self.duplicates
            .iter()
            .any(|dup| encloses(pointer, dup) || encloses(dup, pointer))
    }

    pub(super) fn location(&self, pointer: &str) -> Location {
        let inner = pointer.strip_prefix(self.base.as_str()).unwrap_or(pointer);
        let member = match self.index.get() {
            // A member of the top-level object (an envelope's `message`) is found by
            // scanning the top level, without indexing the whole text. Not an element of
            // a top-level array: a document's many elements would each scan from its
            // start, where the index, built once, finds each at once.
            None if inner.len() > 1
                && !inner[1..].contains('/')
                && self.text.trim_start().starts_with('{') =>
            {
                crate::trace::json_index::member_range(&self.text, inner)
            }
            _ => None,
        };
        let (range, line) = if let Some(range) = member {
            let before = &self.text.as_bytes()[..range.start];
            let lines = before.iter().filter(|&&b| b == b'\n').count() as u64;
            (range, self.line + lines)
        } else if inner.is_empty() {
            (0..self.text.len(), self.line)
        } else {
            let index = self.index.get_or_init(|| JsonIndex::build(&self.text));
            let range = index.range(&self.text, inner);
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

    pub(super) fn whole(&self) -> Location {
        Location {
            line: self.line,
            offset: self.offset,
            len: self.text.len() as u64,
            pointer: Default::default(),
        }
    }
}

pub(super) fn read_document(source: Source<'_>, problems: &mut Vec<Problem>) -> io::Result<Doc> {
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
                    pointer: Default::default(),
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
                duplicates: Vec::new(),
                base: String::new(),
            })
        }
    }
}

/// A whole-file document, parsed.
pub(super) fn document(text: String, offset: u64, problems: &mut Vec<Problem>) -> Doc {
    if let Some(value) = parse_unique(&text) {
        return Doc {
            text,
            offset,
            line: 1,
            value: Some(value),
            index: OnceCell::new(),
            duplicates: Vec::new(),
            base: String::new(),
        };
    }
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
                    pointer: Default::default(),
                },
                format!("the file is not valid JSON: {err}"),
            ));
            None
        }
    };
    let mut duplicates = Vec::new();
    if value.is_some()
        && let Err(err) = duplicate_keys(&text)
    {
        duplicates = duplicate_objects(&text);
        let start = line_start(&text, err.line());
        problems.push(malformed(
            Location {
                line: err.line() as u64,
                offset: offset + start as u64,
                len: text[start..].find('\n').unwrap_or(text.len() - start) as u64,
                pointer: Default::default(),
            },
            duplicate_message(&err),
        ));
    }
    Doc {
        text,
        offset,
        line: 1,
        value,
        index: OnceCell::new(),
        duplicates,
        base: String::new(),
    }
}

/// Whether the JSON pointer `outer` is `inner` or one of its ancestors.
fn encloses(outer: &str, inner: &str) -> bool {
    inner
        .strip_prefix(outer)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn line_start(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

pub(super) fn read_lines(
    source: Source<'_>,
    max_line_bytes: usize,
    problems: &mut Vec<Problem>,
) -> io::Result<Vec<Doc>> {
    let mut reader = LineReader::with_max_line_bytes(source.reader()?, max_line_bytes);
    let mut docs = Vec::new();
    while let Some(line) = reader.next_line()? {
        docs.extend(line_doc(line, max_line_bytes, problems));
    }
    Ok(docs)
}

/// One line of the input as a document, its problems (not UTF-8, too long, not JSON,
/// a key twice) added to `problems`; `None` when its text is unusable.
pub(super) fn line_doc(
    line: Line<'_>,
    max_line_bytes: usize,
    problems: &mut Vec<Problem>,
) -> Option<Doc> {
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
            return None;
        }
        LineContent::TooLong => {
            problems.push(malformed(
                loc,
                format!(
                    "line is {} bytes, over the limit of {max_line_bytes} bytes",
                    line.len
                ),
            ));
            return None;
        }
    };
    if let Some(value) = parse_unique(text) {
        return Some(Doc {
            text: text.to_string(),
            offset: loc.offset,
            line: loc.line,
            value: Some(value),
            index: OnceCell::new(),
            duplicates: Vec::new(),
            base: String::new(),
        });
    }
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
    let mut duplicates = Vec::new();
    if value.is_some()
        && let Err(err) = duplicate_keys(text)
    {
        duplicates = duplicate_objects(text);
        problems.push(malformed(loc.clone(), duplicate_message(&err)));
    }
    Some(Doc {
        text: text.to_string(),
        offset: loc.offset,
        line: loc.line,
        value,
        index: OnceCell::new(),
        duplicates,
        base: String::new(),
    })
}

/// Checks that no object in `text` (valid JSON) has a key twice. serde_json's `Value`
/// keeps the last of two members with one key, so a transcript could hide a call's
/// real tool behind a second `name`; native records reject duplicates the same way.
/// The error names the key and the object's JSON pointer, at the line and column of
/// the second member.
fn duplicate_keys(text: &str) -> Result<(), serde_json::Error> {
    use serde::de::DeserializeSeed;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    Unique {
        pointer: String::new(),
        found: None,
    }
    .deserialize(&mut deserializer)
}

/// The JSON pointers of every object in `text` (valid JSON) that has a key twice, in
/// document order. Only run on text [`duplicate_keys`] rejected.
fn duplicate_objects(text: &str) -> Vec<String> {
    use serde::de::DeserializeSeed;
    let found = std::cell::RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let walked = Unique {
        pointer: String::new(),
        found: Some(&found),
    }
    .deserialize(&mut deserializer);
    let mut found = found.into_inner();
    // Valid JSON cannot fail the walk; if it did, nothing of the text is read.
    if walked.is_err() || found.is_empty() {
        found = vec![String::new()];
    }
    found
}

/// `text` parsed, when it is valid JSON without a key twice, in one pass; `None`
/// otherwise, and the slower reading that says what is wrong, and where, is left to
/// the caller.
pub(super) fn parse_unique(text: &str) -> Option<Value> {
    use serde::de::DeserializeSeed;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = Distinct.deserialize(&mut deserializer).ok()?;
    deserializer.end().ok()?;
    Some(value)
}

/// A visitor that builds a JSON value as `serde_json::Value` does and fails on an
/// object with a key twice, where `Value` would keep the last. It says nothing of
/// where: [`Unique`] does, on the rare text it fails.
struct Distinct;

impl<'de> serde::de::DeserializeSeed<'de> for Distinct {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Distinct {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Distinct)? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let twice = || serde::de::Error::custom("duplicate key");
        let mut members = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            // One search of the members for both the check and the insertion.
            match members.entry(key) {
                serde_json::map::Entry::Occupied(_) => return Err(twice()),
                serde_json::map::Entry::Vacant(slot) => {
                    slot.insert(map.next_value_seed(Distinct)?);
                }
            }
        }
        Ok(Value::Object(members))
    }
}

/// What [`duplicate_keys`] found, with its column (the line is the problem's).
fn duplicate_message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let message = text
        .rsplit_once(" at line ")
        .map_or(text.as_str(), |(m, _)| m);
    format!("{message} (column {})", err.column())
}

/// A visitor that walks a JSON value and fails on an object with a key twice, or, with
/// `found`, notes every such object there and walks on.
struct Unique<'f> {
    /// Where the value is, as a JSON pointer.
    pointer: String,
    found: Option<&'f std::cell::RefCell<Vec<String>>>,
}

impl<'de> serde::de::DeserializeSeed<'de> for Unique<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Unique<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut index = 0usize;
        while seq
            .next_element_seed(Unique {
                pointer: child_pointer(&self.pointer, index),
                found: self.found,
            })?
            .is_some()
        {
            index += 1;
        }
        Ok(())
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<String> = Vec::new();
        let mut noted = false;
        while let Some(key) = map.next_key::<String>()? {
            if keys.contains(&key) {
                let Some(found) = self.found else {
                    let at = if self.pointer.is_empty() {
                        "/"
                    } else {
                        &self.pointer
                    };
                    return Err(serde::de::Error::custom(format_args!(
                        "duplicate key `{key}` in the object at `{at}`: which value is meant is ambiguous"
                    )));
                };
                if !noted {
                    found.borrow_mut().push(self.pointer.clone());
                    noted = true;
                }
            }
            map.next_value_seed(Unique {
                pointer: child_pointer(&self.pointer, &key),
                found: self.found,
            })?;
            keys.push(key);
        }
        Ok(())
    }
}

pub(super) fn malformed(loc: Location, message: String) -> Problem {
    Problem {
        kind: ProblemKind::Malformed,
        loc,
        message,
        hint: None,
    }
}

/// Finds the transcripts in `docs`, adapts each, and locates what the adapters give.
pub(super) fn read_docs(
    layout: Layout,
    docs: &[Doc],
    options: &InputOptions,
    mut problems: Vec<Problem>,
) -> Reading {
    let mut found = match layout {
        Layout::ElementLines => vec![element_lines(docs, options)],
        _ => search_docs(layout, docs, options, &mut problems),
    };
    // Elements with a duplicate key were reported where the documents were read; they
    // are not handed to the adapters with a guessed value.
    for transcript in &mut found {
        transcript
            .elements
            .retain(|element| !docs[element.site.doc].hides(&element.site.pointer));
    }
    problems.sort_by_key(|problem| problem.loc.offset);
    let detected = detected(layout, options, &found);
    let emitted = adapt(&found, options.format);
    let (pieces, arrays) = pieces::find(layout, docs, &found);
    Reading {
        pieces,
        arrays,
        ..finish(docs, detected, emitted, problems)
    }
}

/// The first element of `elements` that is clearly of another format than `forced`,
/// and that format, when no element is clearly of `forced`: a `--format` that does
/// not fit the file would otherwise drop what it cannot read without a word.
fn foreign<'e, 'v>(
    elements: &'e [Element<'v>],
    forced: Format,
) -> Option<(&'e Element<'v>, Format)> {
    let mut first = None;
    for element in elements {
        match super::detect::signal(element.value) {
            super::detect::Signal::Strong(format) if format == forced => return None,
            super::detect::Signal::Strong(format) => {
                first.get_or_insert((element, format));
            }
            _ => {}
        }
    }
    first
}

/// What is said of a transcript read as `forced` whose elements are clearly `other`.
pub(super) fn foreign_message(forced: Format, other: Format) -> String {
    format!(
        "--format {forced} reads this transcript as {}, but its elements are {} (--format {other}): what {forced} does not know, such as their tool calls, is not read",
        forced.describe(),
        other.describe()
    )
}

/// A file of one transcript element per line: one transcript of every line.
fn element_lines<'v>(docs: &'v [Doc], options: &InputOptions) -> Found<'v> {
    let elements: Vec<Element<'_>> = docs
        .iter()
        .enumerate()
        .filter_map(|(doc, d)| {
            Some(Element {
                value: d.value.as_ref()?,
                site: Site::new(doc, String::new()),
            })
        })
        .collect();
    // The first line decided the layout: the first element with a format of its own
    // decides the format, whatever the other lines hold.
    let format = options
        .format
        .or_else(|| {
            elements.iter().find_map(|e| match signal(e.value) {
                Signal::Strong(format) => Some(format),
                _ => None,
            })
        })
        .unwrap_or(Format::OpenAi);
    Found {
        format,
        elements,
        name: String::new(),
    }
}

/// The transcripts of every document, where `--select` says or by search; documents
/// that hold none are reported.
fn search_docs<'v>(
    layout: Layout,
    docs: &'v [Doc],
    options: &InputOptions,
    problems: &mut Vec<Problem>,
) -> Vec<Found<'v>> {
    let many_docs = layout == Layout::DocumentLines;
    let mut found = Vec::new();
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
        let Some(selector) = &options.select else {
            search.find(value, "", None, 0);
            if found.len() == before && !is_empty_transcript(value) {
                empty_docs.push(doc_index);
            }
            continue;
        };
        let selected = search.select_in(selector, value);
        let found_any = found.len() > before;
        problems.extend(selection_problem(
            doc.whole(),
            selector,
            (selected, found_any),
            options.format,
            many_docs,
        ));
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
                problems.push(no_transcript(docs[index].whole()));
            }
        }
    }
    found
}

/// A line without a transcript in a file whose other lines hold one.
pub(super) fn no_transcript(loc: Location) -> Problem {
    malformed(
        loc,
        "line holds no transcript, unlike the file's other lines".into(),
    )
}

/// What is said of the document (a line when `many_docs`) at `loc` in which
/// `selector` selected something or not, and found a transcript or not: nothing once
/// it found one.
pub(super) fn selection_problem(
    loc: Location,
    selector: &Selector,
    (selected, found): (bool, bool),
    format: Option<Format>,
    many_docs: bool,
) -> Option<Problem> {
    match (selected, found) {
        (false, _) => Some(selects_nothing_at(loc, selector, many_docs)),
        (true, false) => Some(holds_nothing_at(loc, selector, format)),
        (true, true) => None,
    }
}

/// What `--select` selects holds no transcript, in the document at `loc`.
pub(super) fn holds_nothing_at(
    loc: Location,
    selector: &Selector,
    format: Option<Format>,
) -> Problem {
    Problem {
        kind: ProblemKind::UnknownFormat,
        loc,
        message: format!(
            "what --select `{selector}` selects holds no transcript in {}",
            tried(format)
        ),
        hint: None,
    }
}

/// `--select` selects nothing in the document (a line when `many_docs`) at `loc`.
pub(super) fn selects_nothing_at(loc: Location, selector: &Selector, many_docs: bool) -> Problem {
    Problem {
        kind: ProblemKind::UnknownFormat,
        loc,
        message: format!(
            "--select `{selector}` selects nothing in this {}",
            if many_docs { "line" } else { "file" }
        ),
        hint: Some(
            "a path is keys and indexes, with `[*]` for each element: `runs[*].messages`".into(),
        ),
    }
}

/// What was recognized, for `--verbose`.
fn detected(layout: Layout, options: &InputOptions, found: &[Found<'_>]) -> Detected {
    let mut formats: Vec<Format> = Vec::new();
    for f in found {
        if !formats.contains(&f.format) {
            formats.push(f.format);
        }
    }
    Detected {
        layout,
        formats,
        explicit: options.format.is_some(),
        // Counted from the records, once they are read.
        traces: 0,
        warning: None,
    }
}

/// Hands each transcript to its format's adapter: what they emit, with the name of
/// the transcript it came from. OpenTelemetry spans from the whole input go together,
/// as one trace may be exported in many batches.
pub(super) fn adapt(found: &[Found<'_>], forced: Option<Format>) -> Vec<(String, Emitted)> {
    let mut emitted: Vec<(String, Emitted)> = Vec::new();
    let mut otel_elements: Vec<Element<'_>> = Vec::new();
    for transcript in found {
        let mut out = Out::default();
        if let Some(forced) = forced
            && let Some((element, other)) = foreign(&transcript.elements, forced)
        {
            out.problem(&element.site, foreign_message(forced, other));
        }
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
            Format::ClaudeCode => claude_code::read(&transcript.elements, &mut out),
            Format::Codex => codex::read(&transcript.elements, &mut out),
            Format::Gemini => gemini::read(&transcript.elements, &mut out),
        }
        emitted.extend(out.items.into_iter().map(|e| (transcript.name.clone(), e)));
    }
    if !otel_elements.is_empty() {
        let mut out = Out::default();
        otel::read(&otel_elements, &mut out);
        emitted.extend(out.items.into_iter().map(|e| (String::new(), e)));
    }
    emitted
}

/// Gives records their trace, position and location.
pub(super) fn finish(
    docs: &[Doc],
    detected: Detected,
    emitted: Vec<(String, Emitted)>,
    problems: Vec<Problem>,
) -> Reading {
    let name_of = |transcript: &str, item: &Emitted| trace_name(transcript, item);
    let mut names: FxHashMap<String, u64> = FxHashMap::default();
    for (transcript, item) in &emitted {
        if matches!(item.what, Emit::Record(_)) {
            names.entry(name_of(transcript, item)).or_insert(0);
        }
    }
    let traces = names.len();
    let locate = |item: &Emitted| match &item.site.pinned {
        Some(loc) => Location::clone(loc),
        None => docs[item.site.doc].location(&item.site.pointer),
    };
    // Problems found while reading, and those an adapter places by where they are
    // ([`Out::placed`]), go before the first record after them; records keep the order
    // adapters emitted them in (a `missing` result sits where the agent moved on,
    // OpenTelemetry spans are in time order), which is not always file order.
    let mut placed: Vec<Problem> = Vec::new();
    for (_, item) in &emitted {
        if let Emit::Placed(message) = &item.what {
            placed.push(malformed(locate(item), message.clone()));
        }
    }
    let mut early = problems;
    if !placed.is_empty() {
        early.extend(placed);
        // Stable: at one offset, a line's problem before an adapter's.
        early.sort_by_key(|problem| problem.loc.offset);
    }
    let mut early = early.into_iter().peekable();
    let mut entries: Vec<Entry> = Vec::new();
    for (transcript, item) in emitted {
        if matches!(item.what, Emit::Placed(_)) {
            continue;
        }
        let loc = locate(&item);
        let name = name_of(&transcript, &item);
        while let Some(problem) = early.next_if(|p| p.loc.offset <= loc.offset) {
            entries.push(Entry::Problem(problem));
        }
        match item.what {
            Emit::Problem(message) => entries.push(Entry::Problem(malformed(loc, message))),
            Emit::Placed(_) => unreachable!("bug: a placed problem among the emitted"),
            Emit::Record(mut fields) => {
                let seq = names.entry(name.clone()).or_insert(0);
                if traces > 1 {
                    fields.insert("trace", Value::String(name));
                }
                fields.insert("seq", Value::from(*seq));
                *seq += 1;
                match Record::new(fields.into_fields(), loc.clone()) {
                    Ok(record) => entries.push(Entry::Record(record)),
                    Err(err) => entries.push(Entry::Problem(malformed(loc, err.to_string()))),
                }
            }
        }
    }
    entries.extend(early.map(Entry::Problem));
    Reading {
        detected: Detected { traces, ..detected },
        entries,
        traces,
        pieces: Vec::new(),
        arrays: Vec::new(),
    }
}

/// The name of the trace an emitted item belongs to, in the transcript named
/// `transcript`.
pub(super) fn trace_name(transcript: &str, item: &Emitted) -> String {
    sub_trace_name(transcript, item.trace.as_deref())
}

/// The name of the sub-trace `sub` of the transcript named `transcript` (the
/// transcript's own with none).
pub(super) fn sub_trace_name(transcript: &str, sub: Option<&str>) -> String {
    match (sub, transcript) {
        (None, name) => name.to_string(),
        (Some(sub), "") => sub.to_string(),
        // A sub-trace named by a pointer (a ToolBench branch) reads like a list's name.
        (Some(sub), name) if sub.starts_with('/') => format!("{name} {sub}"),
        (Some(sub), name) => format!("{name} / {sub}"),
    }
}

fn unknown_format(doc: &Doc, format: Option<Format>) -> Problem {
    unknown_format_at(doc.whole(), format)
}

/// No transcript in any format tried, in the document at `loc`.
pub(super) fn unknown_format_at(loc: Location, format: Option<Format>) -> Problem {
    Problem {
        kind: ProblemKind::UnknownFormat,
        loc,
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
pub(super) const LIST_KEYS: &[&str] = &[
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
pub(super) fn is_empty_transcript(value: &Value) -> bool {
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
                 spans, ATIF, ToolBench search trees, Claude Code session logs, Codex CLI \
                 rollouts, Gemini CLI sessions)"
            .to_string(),
    }
}

/// Native records held in a JSON array: each element is a record as it is.
pub(super) fn native_list(elements: &[Element<'_>], out: &mut Out) {
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
