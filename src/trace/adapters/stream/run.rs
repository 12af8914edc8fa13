//! A large run of a document of runs, read from its file a message at a time
//! ([`OpenRun`]): what is held while it is read is one message, never the run.
//!
//! A run of [`super::LARGE_RUN`] bytes or more is not kept when it is met (the
//! elements of a document only measure it, [`super::Elements`]; a line of a file of
//! documents is the line reader's): it is read again from its place in the file, in
//! passes that each keep one message at a time. The first finds its members
//! ([`shape`]): scalars, which may name it, one list, and members under
//! [`super::LARGE_RUN`] bytes in which the run's search finds no transcript (a `tools`
//! list, a `metadata` object), each parsed alone and passed over; a larger list beside
//! another is read again an element at a time for whether the search finds one in it
//! ([`finds_in_large_list`]), and passed over when it finds none. The next checks the list's
//! messages as the search of the run's value would find them: plain OpenAI messages
//! ([`check_plain`]), or the format the tally of their formats says ([`list_format`]),
//! each message scanned alone, which also finds whether it is valid without a key
//! twice. A list whose traces a first pass ends (an MCP log's sessions, a Claude Code
//! log's or a Codex rollout's threads) is read once more for where each has its last
//! message, and a Codex rollout's in the same pass for the calls its output items
//! answer ([`run_reading`]). Only then is a record handed on, read by a last pass
//! a few messages at a time ([`Runs::read_open`]): once one is, the run can no longer
//! be read from its value instead. With `--select` `…[*]rest`, the same when the rest selects the run
//! ([`Pick::Selected`]) or a member that its keys lead to through objects, which is
//! then the list ([`Pick::Member`]).
//! A run of any other shape is read whole, as a smaller one is.

use std::io::{self, Read as _, Seek as _};
use std::path::Path;
use std::rc::Rc;

use rustc_hash::FxHashSet;
use serde_json::Value;

use super::scan::{Scanner, changed};
use super::{
    Detected, Finisher, Lines, RUN_MESSAGES_AT_ONCE, RunAt, Runs, Scanned, at_element, element_doc,
    locate, pinned,
};
use crate::trace::Location;
use crate::trace::adapters::detect::{
    ELEMENT_KEYS, ListTally, READ_MEMBERS, ScannedList, Signal, shallow_scanned, signal,
};
use crate::trace::adapters::document::{
    Current, Doc, foreign_message, malformed, parse_unique, sub_trace_name,
};
use crate::trace::adapters::responses::{self, Answered};
use crate::trace::adapters::select::Step;
use crate::trace::adapters::shared::{Learning, Map, Pairer};
use crate::trace::adapters::unique::{Node, Tape};
use crate::trace::adapters::{Element, Emit, Format, Out, Selector, Site, codex, openai, search};
use crate::trace::json_index::child_pointer;
use crate::trace::reader::LineContent;

/// Where a value starts in a file: its byte offset and its line.
#[derive(Debug, Clone, Copy)]
pub(super) struct At {
    pub(super) offset: u64,
    pub(super) line: u64,
}

/// A scanner of the file at `path` from `at`, up to `len` bytes when given.
fn open_at(path: &Path, at: At, len: Option<u64>) -> io::Result<Scanner> {
    let mut file = std::fs::File::open(path)?;
    file.seek(io::SeekFrom::Start(at.offset))?;
    let input: Box<dyn io::BufRead> = match len {
        Some(len) => Box::new(io::BufReader::with_capacity(1 << 16, file.take(len))),
        None => Box::new(io::BufReader::with_capacity(1 << 16, file)),
    };
    let mut scan = Scanner::new(input)?;
    // Past a BOM, which only the file's first bytes can be.
    scan.offset += at.offset;
    scan.line = at.line;
    Ok(scan)
}

/// The `len` bytes at `offset` in `path`.
pub(super) fn read_at(path: &Path, offset: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    file.seek(io::SeekFrom::Start(offset))?;
    let mut bytes = vec![0; len];
    io::Read::read_exact(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// What a large line read again from the file ([`read_at`]) holds, as the line reader
/// would have said it.
pub(super) fn line_content(bytes: &[u8]) -> LineContent<'_> {
    match std::str::from_utf8(bytes) {
        Ok(text) => LineContent::Text(text),
        Err(err) => LineContent::InvalidUtf8 {
            valid_up_to: err.valid_up_to(),
        },
    }
}

/// What a large run that can be read a message at a time is made of: an object of
/// one list beside scalar members and members that hold no transcript.
pub(super) struct Shape {
    /// The scalar members of the object holding the list, which may name it (a
    /// container names nothing).
    parent: Map,
    /// The names that lead to its list from the run (one, but for a `--select` path of
    /// several keys), and where the list is.
    keys: Vec<String>,
    list: At,
    /// Whether the list is the `steps` of the object the search met, which the search
    /// takes as an ATIF trajectory's when the object or a step says ATIF.
    steps: bool,
}

/// What [`shape`] found of a large run.
pub(super) enum Picked {
    /// Its list, to be read a few messages at a time.
    List(Shape),
    /// Nothing a `--select` path selects: the run has no such member.
    Nothing,
    /// Another shape: the run is read whole.
    Whole,
}

/// Which member of a large run holds its transcript.
#[derive(Clone, Copy)]
pub(super) enum Pick<'a> {
    /// The list the search of the run finds, the run `depth` levels down in its
    /// document.
    Search { depth: usize },
    /// The list the search finds in a run that a `--select` path (`runs[*]`) selects:
    /// searched as a document is, so it must not be one message to the search either.
    Selected,
    /// The member a `--select` path's keys (`runs[*].messages`, `runs[*].data.messages`:
    /// one or more, each but the last an object's) select: the list, whatever the other
    /// members hold.
    Member(&'a [Step]),
}

impl Pick<'_> {
    /// What the `rest` of a `--select` path `…[*]rest` selects in each run, when a large
    /// run can be read a few messages at a time for it: the run itself, or a member
    /// that keys lead to.
    pub(super) fn selected(rest: &Selector) -> Option<Pick<'_>> {
        match rest.steps()? {
            [] => Some(Pick::Selected),
            keys if keys.iter().all(|step| matches!(step, Step::Key(_))) => {
                Some(Pick::Member(keys))
            }
            _ => None,
        }
    }
}

/// The members of the run at `at` in `path`, read without keeping its list; the run is
/// read whole ([`Picked::Whole`]) when the search of the run's value (with `--format`'s
/// `format`) would find any other shape than one array member beside scalars and
/// members it finds no transcript in (a `tools` list, a `metadata` object), or when a
/// name has an escape or comes twice, which the reading of its value then says. A
/// member under [`super::LARGE_RUN`] bytes is parsed and searched as the run's search
/// would search it; a larger one can only be a list: the list when it is the only one,
/// else read again an element at a time for whether the search finds a transcript in
/// it ([`finds_in_large_list`]), the list when it is the one that does. The members that make the run
/// itself something else to the search (`steps`, `resourceSpans`, `children`) are never
/// the list nor passed over; nor, for a run searched as a document
/// ([`Pick::Selected`]), is any member that could make it one message
/// ([`ELEMENT_KEYS`]). With [`Pick::Member`], the list is the member its keys lead to,
/// through objects, or the list in the object they lead to (found as in a run searched
/// as a document); the run is read whole when that is neither, or the way to it goes
/// through anything else; a run without it gives no list ([`Picked::Nothing`]): the
/// path selects nothing there.
fn shape(path: &Path, at: At, format: Option<Format>, pick: Pick<'_>) -> io::Result<Picked> {
    let mut scan = open_at(path, at, None)?;
    members(&mut scan, path, format, pick)
}

/// [`shape`] of the object at the next byte of `scan`, read to its end.
fn members(
    scan: &mut Scanner,
    path: &Path,
    format: Option<Format>,
    pick: Pick<'_>,
) -> io::Result<Picked> {
    let depth = match pick {
        Pick::Search { depth } => depth,
        Pick::Selected | Pick::Member(_) => 0,
    };
    if !scan.eat(b'{')? {
        return Ok(Picked::Whole);
    }
    if scan.eat(b'}')? {
        return Ok(Picked::Whole);
    }
    let (mut name, mut value) = (Vec::new(), Vec::new());
    let mut names = FxHashSet::default();
    let (mut list, mut parent) = (None, Map::new());
    let mut steps = false;
    // Arrays of `LARGE_RUN` bytes or more, any of which may be the list.
    let mut large = Vec::new();
    // What a key of a `--select` path found below: the list, or nothing.
    let mut below = None;
    loop {
        let mut key = scan
            .key(&mut name)?
            .ok_or_else(|| changed("expected a key"))?;
        if name.contains(&b'\\') || !names.insert(key.clone()) {
            return Ok(Picked::Whole);
        }
        if !scan.eat(b':')? {
            return Err(changed("expected `:`"));
        }
        if matches!(pick, Pick::Selected) && ELEMENT_KEYS.contains(&key.as_str()) {
            return Ok(Picked::Whole);
        }
        let next = scan.next_byte()?;
        let at = At {
            offset: scan.offset,
            line: scan.line,
        };
        let container = matches!(next, Some(b'[' | b'{'));
        let is_list = match pick {
            Pick::Member([first, inner @ ..]) if first.in_object() == Some(key.as_str()) => {
                // An object the last key selects is searched as a document is.
                let pick = match inner {
                    [] => Pick::Selected,
                    _ => Pick::Member(inner),
                };
                match (inner, next) {
                    ([], Some(b'[')) => {
                        scan.value(None)?;
                        true
                    }
                    (_, Some(b'{')) => {
                        // Read to its end but when the run is to be read whole.
                        below = Some(match members(scan, path, format, pick)? {
                            Picked::List(mut shape) => {
                                shape.keys.insert(0, std::mem::take(&mut key));
                                Picked::List(shape)
                            }
                            Picked::Nothing => Picked::Nothing,
                            Picked::Whole => return Ok(Picked::Whole),
                        });
                        false
                    }
                    _ => return Ok(Picked::Whole),
                }
            }
            _ if !container => {
                value.clear();
                scan.value(Some(&mut value))?;
                if let Ok(value) = serde_json::from_slice(&value) {
                    parent.insert(std::mem::take(&mut key), value);
                }
                false
            }
            // Not what the path selects: never searched.
            Pick::Member(_) => {
                scan.value(None)?;
                false
            }
            // An ATIF trajectory's steps, if the run is one: then its transcript, whatever
            // they hold (told once they are read: [`search::says_atif`], [`Listed::atif_step`]).
            _ if key == "steps"
                && next == Some(b'[')
                && format.is_none_or(|format| format == Format::Atif) =>
            {
                if list.is_some() {
                    return Ok(Picked::Whole);
                }
                scan.value(None)?;
                steps = true;
                true
            }
            _ if matches!(key.as_str(), "steps" | "resourceSpans" | "children") => {
                return Ok(Picked::Whole);
            }
            Pick::Search { .. } | Pick::Selected => {
                value.clear();
                let len = scan.value_upto(Some(&mut value), super::LARGE_RUN - 1)?;
                if len > value.len() as u64 {
                    // Too large to hold: a list, whether a transcript is told below.
                    if next != Some(b'[') {
                        return Ok(Picked::Whole);
                    }
                    large.push((std::mem::take(&mut key), at));
                    false
                } else {
                    // Held whole, it is passed over when the search finds nothing in it.
                    let passed = match serde_json::from_slice::<Value>(&value) {
                        Ok(member) => !search::finds(&member, format, depth + 1),
                        Err(_) => return Ok(Picked::Whole),
                    };
                    if !passed && (next != Some(b'[') || list.is_some()) {
                        return Ok(Picked::Whole);
                    }
                    !passed
                }
            }
        };
        if is_list {
            list = Some((key, at));
        }
        if scan.eat(b',')? {
            continue;
        }
        if scan.eat(b'}')? {
            break;
        }
        return Err(changed("expected `,` or `}`"));
    }
    let list = match (list, large.len()) {
        (list, 0) => list,
        // The one list: read as the run's, whatever it holds.
        (None, 1) => large.pop(),
        _ if steps => return Ok(Picked::Whole),
        // A list beside another: each large one read an element at a time for whether
        // the search finds a transcript in it, and passed over when it finds none (a
        // long `tools` list beside the messages).
        (list, _) => {
            let mut lists: Vec<(String, At)> = list.into_iter().collect();
            for (key, at) in large {
                if finds_in_large_list(path, at, format, depth + 1)? {
                    lists.push((key, at));
                }
            }
            match lists.len() {
                1 => lists.pop(),
                _ => return Ok(Picked::Whole),
            }
        }
    };
    Ok(match (below, list) {
        (Some(found), _) => found,
        (None, Some((key, list))) => Picked::List(Shape {
            parent,
            keys: vec![key],
            list,
            steps,
        }),
        (None, None) if matches!(pick, Pick::Member(_)) => Picked::Nothing,
        (None, None) => Picked::Whole,
    })
}

/// Whether the search of a run would find a transcript in its array at `at` in `path`,
/// `depth` levels down in the run's document ([`search::finds`]), read an element at a
/// time: its elements tallied as a list's format is, and each searched.
fn finds_in_large_list(
    path: &Path,
    at: At,
    format: Option<Format>,
    depth: usize,
) -> io::Result<bool> {
    if depth > search::SEARCH_DEPTH {
        return Ok(false);
    }
    let mut elements = Messages::open(path, at)?;
    let mut tally = ListTally::new(format);
    while let Some((text, _)) = elements.next()? {
        let element: Value = serde_json::from_str(text).map_err(|_| changed("expected a value"))?;
        if search::finds(&element, format, depth + 1) {
            return Ok(true);
        }
        tally.add(signal(&element));
    }
    Ok(tally.format().is_some())
}

/// What the first pass needs of a large object, found without holding it: it is valid
/// without a key twice, and this is its length, its [`shallow_scanned`] reading, and
/// whether [`finds_in_members`](super::doc_plan::finds_in_members) would find a
/// transcript in one of its lists (when its lists were tallied), and the names of the
/// lists that are transcripts.
pub(super) struct Walked {
    pub(super) len: usize,
    pub(super) shallow: Value,
    pub(super) finds: bool,
    pub(super) finding: Vec<String>,
}

/// Whether [`walk_object`] tallies an object's lists, and with which `--format`.
#[derive(Clone, Copy)]
pub(super) enum Lists {
    Skipped,
    Tallied(Option<Format>),
}

/// Reads the object of `len` bytes at `at` in `path` a piece at a time, holding one
/// member's value, or one element of an array member, at a time: each is checked valid
/// without a key twice, as are the object's own names; the object's shallow reading is
/// made of its names and the values of [`READ_MEMBERS`] (parsed; a list of those is
/// held whole); with [`Lists::Tallied`], each array member but a `tree` is tallied as
/// [`finds_in_members`](super::doc_plan::finds_in_members) tallies it. `None` when it
/// is not valid (nested too deep where its levels and the `above` containers it is
/// inside make 128).
pub(super) fn walk_object(
    path: &Path,
    at: At,
    len: usize,
    lists: Lists,
    above: usize,
) -> io::Result<Option<Walked>> {
    // Read no further than its end: a line that is not JSON may not end where it does.
    let mut scan = open_at(path, at, Some(len as u64))?;
    match walk(&mut scan, at, len, lists, above) {
        Err(err) if err.kind() == io::ErrorKind::InvalidData => Ok(None),
        walked => walked,
    }
}

/// [`walk_object`] of the object `scan` is at.
fn walk(
    scan: &mut Scanner,
    at: At,
    len: usize,
    lists: Lists,
    above: usize,
) -> io::Result<Option<Walked>> {
    let tallied = |key: &str| match lists {
        Lists::Tallied(format) if key != "tree" => Some(ScannedList::new(format)),
        _ => None,
    };
    let (mut name, mut bytes) = (Vec::new(), Vec::new());
    let mut tape = Tape::default();
    let mut shallow = serde_json::Map::new();
    let mut finding = Vec::new();
    if !scan.eat(b'{')? {
        return Ok(None);
    }
    if !scan.eat(b'}')? {
        loop {
            let Some(key) = scan.key(&mut name)? else {
                return Ok(None);
            };
            if shallow.contains_key(&key) || !scan.eat(b':')? {
                return Ok(None);
            }
            let read = READ_MEMBERS.contains(&key.as_str());
            if scan.next_byte()? == Some(b'[') && !read {
                scan.advance(1);
                let mut list = tallied(&key);
                let mut count = 0;
                while at_element(scan, count)? {
                    bytes.clear();
                    scan.value(Some(&mut bytes))?;
                    let Ok(text) = std::str::from_utf8(&bytes) else {
                        return Ok(None);
                    };
                    // Inside the object and its list.
                    let Some(element) =
                        tape.scan_inside(text, usize::from(list.is_some()), above + 2)
                    else {
                        return Ok(None);
                    };
                    if let Some(list) = &mut list {
                        list.add(element);
                    }
                    count += 1;
                }
                if list.is_some_and(|list| list.finds()) {
                    finding.push(key.clone());
                }
                shallow.insert(key, Value::Null);
            } else {
                bytes.clear();
                scan.skip_ws()?;
                scan.value(Some(&mut bytes))?;
                let Ok(text) = std::str::from_utf8(&bytes) else {
                    return Ok(None);
                };
                // Noted down to its elements' members, for a list to be tallied.
                let Some(member) = tape.scan_inside(text, 2, above + 1) else {
                    return Ok(None);
                };
                if text.starts_with('[')
                    && let Some(mut list) = tallied(&key)
                {
                    member.elements(|element| list.add(element));
                    if list.finds() {
                        finding.push(key.clone());
                    }
                }
                let value = match read {
                    true => match serde_json::from_slice(&bytes) {
                        Ok(value) => value,
                        Err(_) => return Ok(None),
                    },
                    false => Value::Null,
                };
                shallow.insert(key, value);
            }
            if scan.eat(b',')? {
                continue;
            }
            if scan.eat(b'}')? {
                break;
            }
            return Ok(None);
        }
    }
    // Where the first scan found its end (a line's may be blanks after it).
    let end = at.offset + len as u64;
    while scan.offset < end && matches!(scan.peek()?, Some(b' ' | b'\t' | b'\r')) {
        scan.advance(1);
    }
    if scan.offset != end {
        return Ok(None);
    }
    let finds = match lists {
        Lists::Tallied(format) => {
            !finding.is_empty()
                && search::finds_with_a_list(format, shallow.contains_key("children"))
        }
        Lists::Skipped => false,
    };
    let shallow = Value::Object(shallow);
    Ok(Some(Walked {
        len,
        shallow,
        finds,
        finding,
    }))
}

/// The messages of a run's list, read one at a time from its file.
pub(super) struct Messages {
    scan: Scanner,
    /// Messages read so far.
    count: usize,
    done: bool,
    /// The text of the last message read.
    text: Vec<u8>,
}

impl Messages {
    /// The messages of the list at `list` in `path`.
    fn open(path: &Path, list: At) -> io::Result<Messages> {
        let mut scan = open_at(path, list, None)?;
        if !scan.eat(b'[')? {
            return Err(changed("expected the run's list"));
        }
        Ok(Messages {
            scan,
            count: 0,
            done: false,
            text: Vec::new(),
        })
    }

    /// The messages after the one that ends at `after` in `path`, to the end of its
    /// list.
    fn after(path: &Path, after: At) -> io::Result<Messages> {
        Ok(Messages {
            scan: open_at(path, after, None)?,
            count: 1,
            done: false,
            text: Vec::new(),
        })
    }

    /// Where the next message, or the list's end, is looked for.
    fn at(&self) -> At {
        At {
            offset: self.scan.offset,
            line: self.scan.line,
        }
    }

    /// Whether no message is left.
    fn at_end(&mut self) -> io::Result<bool> {
        Ok(self.done || self.scan.next_byte()? == Some(b']'))
    }

    /// The next message's text and where it is; `None` after the last.
    fn next(&mut self) -> io::Result<Option<(&str, At)>> {
        if self.done {
            return Ok(None);
        }
        if !at_element(&mut self.scan, self.count)? {
            self.done = true;
            return Ok(None);
        }
        let at = At {
            offset: self.scan.offset,
            line: self.scan.line,
        };
        self.text.clear();
        self.scan.value(Some(&mut self.text))?;
        self.count += 1;
        let text = std::str::from_utf8(&self.text).map_err(|_| changed("not UTF-8"))?;
        Ok(Some((text, at)))
    }
}

/// A large run whose records are handed on a few messages at a time, read from its
/// file.
pub(super) struct OpenRun {
    messages: Messages,
    /// Where its list is in the file, to be read again.
    list: At,
    /// The next message's index, and the list's pointer.
    i: usize,
    pointer: String,
    /// The trace its records are in, and the run's place in the document.
    name: String,
    base: String,
    /// Whether it gives any record, when known (of a plain run).
    recorded: Option<bool>,
    /// Its document's index.
    index: usize,
    /// Where each line of the message being read starts in its text.
    newlines: Vec<usize>,
    how: HowRead,
}

/// How an [`OpenRun`]'s messages are read.
enum HowRead {
    /// Plain OpenAI messages, checked plain ([`check_plain`]) before any record was
    /// handed on, so that none can turn out to need the run's value: built from their
    /// text, each scanned alone into `message`.
    Plain { pairer: Pairer, message: Tape },
    /// Any other chat messages, each parsed alone and read by its format's adapter as a
    /// document's message list is ([`super::Stream::element`]), as document `doc` (a
    /// number of the run's own, by which the adapter tells the message being read).
    Parsed {
        lines: Lines,
        format: Format,
        doc: usize,
    },
}

/// Whether every message of the list at `list` in `path` (at `pointer`) is plain
/// ([`openai::read_plain`] reads the list from its text), found by reading them so
/// without keeping what is built: `None` when one is not (or there is none), else
/// whether the list gives any record.
fn check_plain(path: &Path, list: At, pointer: &str) -> io::Result<Option<bool>> {
    /// Messages read into one throwaway pairer: whether one is plain does not depend
    /// on the others, and what is built is dropped this often.
    const AT_ONCE: usize = 1024;
    let mut messages = Messages::open(path, list)?;
    let mut tape = Tape::default();
    let (mut any, mut recorded) = (false, false);
    let mut pairer = Pairer::new(openai::WHY_MISSING);
    let mut i = 0;
    while let Some((text, _)) = messages.next()? {
        any = true;
        let mut site_at = |_: Node<'_>, pointer: String| Site::new(0, pointer);
        let pointer = child_pointer(pointer, i);
        if !openai::plain_alone(text, &mut tape, pointer, &mut site_at, &mut pairer) {
            return Ok(None);
        }
        i += 1;
        if i % AT_ONCE == 0 {
            recorded |= pairer.recorded();
            pairer = Pairer::new(openai::WHY_MISSING);
        }
    }
    Ok(any.then_some(recorded || pairer.recorded()))
}

/// A message of a list read as `--format` says that is clearly of another format: its
/// index, where it is, its length and that format.
type Foreign = (usize, At, usize, Format);

/// What [`list_format`] finds of a large run's list.
struct Listed {
    /// Its format, as the search of its run would find it from its messages' values.
    format: Option<Format>,
    /// With `--format`, the first message that is clearly of another format, when none
    /// is of the format given.
    foreign: Option<Foreign>,
    /// Whether a message says it is an ATIF step, which makes an object's `steps` an
    /// ATIF trajectory's ([`search::atif_steps`]).
    atif_step: bool,
    /// The call ids its output items answer ([`responses::answered`]), which decide
    /// how a Responses list's built-in calls are paired.
    answered: FxHashSet<String>,
}

/// What the list at `list` in `path` is, as the search of its run would find it from
/// its messages' values ([`super::super::detect::list_format`]), read from each
/// message scanned alone only as far as saying its format takes; `None` when a message
/// does not say, or one is not valid without a key twice. With `--format`'s `format`,
/// also the first message that is clearly of another format, when none is of
/// `format`: the reading of the whole document says so ([`foreign_message`]).
fn list_format(path: &Path, list: At, format: Option<Format>) -> io::Result<Option<Listed>> {
    let mut messages = Messages::open(path, list)?;
    let mut tape = Tape::default();
    let mut tally = ListTally::new(format);
    let (mut own, mut other, mut atif_step, mut i) = (false, None, false, 0);
    let mut answered = FxHashSet::default();
    while let Some((text, at)) = messages.next()? {
        let Some(message) = tape.scan(text, 1) else {
            return Ok(None);
        };
        let Some(value) = shallow_scanned(message) else {
            return Ok(None);
        };
        let said = signal(&value);
        if let (Some(forced), Signal::Strong(found)) = (format, &said) {
            match *found == forced {
                true => own = true,
                false => _ = other.get_or_insert((i, at, text.len(), *found)),
            }
        }
        atif_step |= said == Signal::Strong(Format::Atif);
        answered.extend(responses::answered(std::iter::once(&value)));
        tally.add(said);
        i += 1;
    }
    Ok(Some(Listed {
        format: tally.format(),
        foreign: other.filter(|_| !own),
        atif_step,
        answered,
    }))
}

/// The adapter of a large run's messages in `format`, whose output items answer the
/// call ids `answered` (a Responses list's items, or a Codex rollout's): chat
/// messages, Responses items and ATIF steps, one trace whatever they hold, and an MCP
/// log, a Claude Code log or a Codex rollout, which may hold many (by session, by
/// thread).
fn run_messages(format: Format, answered: FxHashSet<String>) -> Option<Lines> {
    let answered = Answered::Ids(Rc::new(answered));
    match format {
        Format::Codex => Lines::of(format, answered, Answered::default()),
        Format::OpenAi
        | Format::Anthropic
        | Format::Gemini
        | Format::Responses
        | Format::Atif
        | Format::Mcp
        | Format::ClaudeCode => Lines::of(format, Answered::default(), answered),
        Format::Native | Format::Otel | Format::ToolBench => None,
    }
}

/// What the results of a transcript's elements still to be read name, read one
/// element at a time ([`Pairer::learn_answers`], [`Learning`]).
pub(super) struct Ahead {
    /// An adapter like the one reading the transcript ([`Lines::naming`]), which reads
    /// each element as it would and says what its results name ([`Lines::named`]).
    reading: Lines,
    learning: Learning,
    out: Out,
    /// Whether an element with a key twice is read (as an element of a document or a
    /// large run is, both checked before) or passed over (as a line is).
    unique: bool,
}

impl Ahead {
    /// Read by `reading`, for `learning`; `unique`: a line's elements.
    pub(super) fn new(reading: Lines, learning: Learning, unique: bool) -> Ahead {
        Ahead {
            reading,
            learning,
            out: Out::default(),
            unique,
        }
    }

    /// Reads the next element, `text`, as the reading reads it: one that does not
    /// parse gives nothing, nor, for a line, one with a key twice. A line's number
    /// `line` is what the reading of a Responses log or a Codex rollout knows its
    /// built-in calls by.
    pub(super) fn element(&mut self, text: &str, line: Option<u64>) {
        let value = match self.unique {
            true => parse_unique(text),
            false => serde_json::from_str(text).ok(),
        };
        let Some(value) = value else {
            return;
        };
        self.out.current = line.map(|line| Current {
            doc: 0,
            read: Rc::new(Doc {
                text: String::new(),
                offset: 0,
                line,
                value: None,
                index: Default::default(),
                duplicates: Vec::new(),
                base: String::new(),
            }),
        });
        let site = Site::new(0, String::new());
        let element = Element {
            value: &value,
            site,
        };
        let named = self.reading.named(&element, &mut self.out);
        self.out.items.clear();
        if let Some((index, named)) = named {
            self.learning.note(index, named);
        }
    }

    pub(super) fn learning(self) -> Learning {
        self.learning
    }
}

/// [`Ahead`] of the messages after the one that ends at `after` in `path`, to the end
/// of their list; an error when the list cannot be read to its end.
pub(super) fn answers_after(
    path: &Path,
    after: At,
    reading: Lines,
    learning: Learning,
) -> io::Result<Learning> {
    let mut messages = Messages::after(path, after)?;
    let mut ahead = Ahead::new(reading, learning, false);
    while let Some((text, _)) = messages.next()? {
        ahead.element(text, None);
    }
    Ok(ahead.learning())
}

/// The adapter that reads the large run's list at `list` in `path` in `format`
/// ([`run_messages`]), told what one first pass over the list finds, each message
/// parsed alone, when it needs one: the call ids a Codex rollout's output items answer
/// ([`codex::answered`], as the reading of the run's value finds them before it reads a
/// line; another list's are `answered`), and where each trace ends when a first pass
/// tells it ([`Lines::learn_ends`]: an MCP log's sessions, a Claude Code log's or a
/// Codex rollout's threads, numbered as [`Runs::read_open`] numbers the messages), so
/// that a thread is handed on and its trace ended at its last message rather than at
/// the run's end.
fn run_reading(
    path: &Path,
    list: At,
    format: Format,
    answered: FxHashSet<String>,
) -> io::Result<Option<Lines>> {
    let survey = run_messages(format, FxHashSet::default()).filter(Lines::ends_found_first);
    let Some(mut survey) = survey else {
        return Ok(run_messages(format, answered));
    };
    survey.survey();
    let codex = format == Format::Codex;
    let mut answered = if codex {
        FxHashSet::default()
    } else {
        answered
    };
    let mut messages = Messages::open(path, list)?;
    let mut out = Out::default();
    let mut doc = 0;
    while let Some((text, _)) = messages.next()? {
        doc += 1;
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            continue;
        };
        if codex {
            answered.extend(codex::answered(std::iter::once(&value)));
        }
        let site = Site::new(doc, String::new());
        survey.element(
            &Element {
                value: &value,
                site,
            },
            &mut out,
        );
        survey.read(doc, &out);
        out.items.clear();
    }
    let mut reading = run_messages(format, answered);
    if let Some(reading) = &mut reading {
        reading.learn_ends(&mut survey);
    }
    Ok(reading)
}

/// The traces the messages of the list at `list` in `path`, in `format`, give
/// records of, by their names within the run (`None`: the run's own), in the order
/// their first records come, read one at a time as [`HowRead::Parsed`] reads them, up
/// to the message that gives the `enough`th (the first, in a format of one trace).
fn parsed_traces(
    path: &Path,
    list: At,
    format: Format,
    enough: usize,
) -> io::Result<Vec<Option<String>>> {
    let mut traces: Vec<Option<String>> = Vec::new();
    let Some(mut lines) = run_messages(format, FxHashSet::default()) else {
        return Ok(traces);
    };
    // Looked up in a set: a log may have many sessions.
    let mut seen: FxHashSet<Option<String>> = FxHashSet::default();
    let mut note = |trace: Option<String>, traces: &mut Vec<Option<String>>| {
        if !seen.contains(&trace) {
            seen.insert(trace.clone());
            traces.push(trace);
        }
    };
    let mut note_records = |out: &mut Out, traces: &mut Vec<Option<String>>| {
        for item in out.items.drain(..) {
            if matches!(item.what, Emit::Record(_)) {
                note(item.trace, traces);
            }
        }
    };
    let mut messages = Messages::open(path, list)?;
    let mut out = Out::default();
    let mut i = 0;
    while let Some((text, _)) = messages.next()? {
        if let Ok(value) = serde_json::from_str::<Value>(text) {
            let site = Site::new(i, i.to_string());
            lines.element(
                &Element {
                    value: &value,
                    site,
                },
                &mut out,
            );
            note_records(&mut out, &mut traces);
        }
        // A pairer's records wait for their answers: it says it holds one (of the
        // run's own trace, the only one it has).
        if lines.recorded() && traces.is_empty() {
            traces.push(None);
        }
        // A transcript of one trace has no other once it has a record.
        if traces.len() >= enough || (lines.one_trace() && !traces.is_empty()) {
            return Ok(traces);
        }
        i += 1;
    }
    // A log given thread by thread holds its later threads' records to its end.
    lines.finish(&mut out);
    note_records(&mut out, &mut traces);
    Ok(traces)
}

impl Runs {
    /// Opens the large run `element` (document `index`, at `base`) of the file being
    /// read, to be read a few messages at a time ([`Runs::read_open`]), when it is an
    /// object whose one list holds a transcript ([`run_messages`]: chat messages,
    /// Responses items, ATIF steps, MCP messages, Claude Code or Codex envelopes) beside
    /// scalar members and members that hold no transcript ([`shape`]), which the search
    /// of the run would find (or the rest of a `--select` path selects, [`Pick`]), as
    /// the tally of its messages' formats says; `false`, having read nothing, for any
    /// other run. A first pass only counts its traces ([`parsed_traces`]).
    pub(super) fn open_large(
        &mut self,
        index: usize,
        element: &Scanned,
        base: &str,
        detected: &mut Detected,
        finisher: &mut Finisher,
    ) -> io::Result<bool> {
        let Some(path) = self.file.clone() else {
            return Ok(false);
        };
        let at = At {
            offset: element.offset,
            line: element.line,
        };
        let pick = match &self.select {
            None => Pick::Search { depth: self.depth },
            Some((_, rest)) => match Pick::selected(rest) {
                Some(pick) => pick,
                None => return Ok(false),
            },
        };
        let Shape {
            parent,
            keys,
            list,
            steps,
        } = match shape(&path, at, self.format, pick)? {
            Picked::List(shape) => shape,
            Picked::Whole => return Ok(false),
            Picked::Nothing => {
                // As the run's value says: nothing selected, nothing read.
                self.end_traces(base, finisher);
                return Ok(true);
            }
        };
        let pointer = keys.iter().fold(base.to_string(), |pointer, key| {
            child_pointer(&pointer, key)
        });
        let plain = match self.plain_format() && !steps {
            true => check_plain(&path, list, &pointer)?,
            false => None,
        };
        let (how, format, recorded) = match plain {
            Some(recorded) => {
                let pairer = Pairer::new(openai::WHY_MISSING);
                let message = Tape::default();
                (
                    HowRead::Plain { pairer, message },
                    Format::OpenAi,
                    Some(recorded),
                )
            }
            None => {
                let Some(listed) = list_format(&path, list, self.format)? else {
                    return Ok(false);
                };
                let format = match (steps, listed.format) {
                    // The search stops at an ATIF trajectory: its steps are its
                    // transcript, whatever they hold.
                    (true, _) if search::says_atif(&parent) || listed.atif_step => Format::Atif,
                    (true, _) | (false, None) => return Ok(false),
                    (false, Some(format)) => format,
                };
                let foreign = listed.foreign;
                // A first pass only counts the run's traces ([`parsed_traces`]), which
                // needs nothing its reading is told.
                let lines = match finisher.count_only {
                    true => run_messages(format, FxHashSet::default()),
                    false => run_reading(&path, list, format, listed.answered)?,
                };
                let Some(lines) = lines else {
                    return Ok(false);
                };
                // Said before the list's records, as the whole reading says it.
                if let (Some(forced), Some((i, at, len, other))) = (self.format, foreign) {
                    let loc = Location {
                        line: at.line,
                        offset: at.offset,
                        len: len as u64,
                        pointer: child_pointer(&pointer, i).into(),
                    };
                    finisher.item_problem(malformed(loc, foreign_message(forced, other)));
                }
                let doc = 0;
                (HowRead::Parsed { lines, format, doc }, format, None)
            }
        };
        let name = search::name(&self.prefix, &pointer, Some(&parent));
        self.found_format(detected, format);
        self.selected |= self.select.is_some();
        if finisher.count_only {
            // All a first pass needs: its traces, and their names.
            let traces = match recorded {
                Some(recorded) => recorded.then_some(None).into_iter().collect(),
                None => parsed_traces(&path, list, format, usize::MAX)?,
            };
            for sub in traces {
                finisher.count(&name, sub);
            }
            return Ok(true);
        }
        finisher.element = Some(Vec::new());
        self.open = Some(OpenRun {
            messages: Messages::open(&path, list)?,
            list,
            i: 0,
            pointer,
            name,
            base: base.to_string(),
            recorded,
            index,
            newlines: Vec::new(),
            how,
        });
        Ok(true)
    }

    /// The trace of the run just opened, unless it is known to give no record: whether
    /// the input holds more than one trace may have to be decided before its records
    /// are handed on ([`super::Stream::decide_before_run`]).
    pub(super) fn to_decide(&self) -> Option<String> {
        let open = self.open.as_ref()?;
        (open.recorded != Some(false)).then(|| open.name.clone())
    }

    /// The traces the open run gives records of, by their names, up to two.
    pub(super) fn open_traces(&self) -> io::Result<Vec<String>> {
        let (Some(open), Some(path)) = (&self.open, &self.file) else {
            return Ok(Vec::new());
        };
        let subs = match (&open.recorded, &open.how) {
            (Some(recorded), _) => recorded.then_some(None).into_iter().collect(),
            (None, HowRead::Parsed { format, .. }) => parsed_traces(path, open.list, *format, 2)?,
            (None, HowRead::Plain { .. }) => Vec::new(),
        };
        let name = |sub: Option<String>| sub_trace_name(&open.name, sub.as_deref());
        Ok(subs.into_iter().map(name).collect())
    }

    /// What the open run's pairer holds, not handed on yet.
    #[cfg(test)]
    pub(super) fn held(&self) -> usize {
        match self.open.as_ref().map(|open| &open.how) {
            Some(HowRead::Plain { pairer, .. }) => pairer.held(),
            Some(HowRead::Parsed { lines, .. }) => lines.held(),
            None => 0,
        }
    }

    /// Reads the next few messages of the open run and hands on what is final of its
    /// records; at its end, ends its traces.
    pub(super) fn read_open(&mut self, finisher: &mut Finisher) -> io::Result<()> {
        let Some(open) = self.open.as_mut() else {
            return Ok(());
        };
        let OpenRun {
            messages,
            i,
            pointer,
            name,
            index,
            newlines,
            how,
            ..
        } = open;
        for _ in 0..RUN_MESSAGES_AT_ONCE {
            let Some((text, at)) = messages.next()? else {
                break;
            };
            // Each message is placed as the run's value would place it.
            let pointer = child_pointer(pointer, *i);
            *i += 1;
            newlines.clear();
            newlines.extend(memchr::memchr_iter(b'\n', text.as_bytes()));
            let run_at = RunAt {
                index: *index,
                line: at.line,
                offset: at.offset,
            };
            match how {
                HowRead::Plain { pairer, message } => {
                    let mut site_at = |inner: Node<'_>, pointer| {
                        run_at.site((inner.offset(), inner.text().len()), pointer, newlines)
                    };
                    if !openai::plain_alone(text, message, pointer, &mut site_at, pairer) {
                        return Err(changed("a message is no longer plain"));
                    }
                }
                HowRead::Parsed { lines, doc, .. } => {
                    // Each message a document of its own, as an element of a list is.
                    let element = Scanned {
                        text: text.to_string(),
                        offset: at.offset,
                        line: at.line,
                        index: *i - 1,
                        key: None,
                        taped: false,
                        len: text.len(),
                    };
                    let message = Rc::new(element_doc(finisher, element, pointer));
                    *doc += 1;
                    let Some(value) = &message.value else {
                        continue;
                    };
                    let mut out = super::current(*doc, &message);
                    let site = Site::new(*doc, message.base.clone());
                    lines.element(&Element { value, site }, &mut out);
                    for item in out.items {
                        finisher.emitted(name, item, |site| match site.take_pinned() {
                            Some(loc) => loc,
                            None => locate(&message, *doc, site),
                        });
                    }
                    // Its traces that had their last message have ended.
                    for sub in lines.ended(*doc) {
                        finisher.ended(name, sub.as_deref());
                    }
                    // Looked ahead after the message that made it wait, as a document's
                    // list and the whole reading look (a log's problems, handed on at
                    // once, fall among its records as they do there).
                    if let Some(path) = &self.file {
                        lines.look_ahead(path, super::Where::List(messages.at()));
                    }
                }
            }
        }
        let ended = messages.at_end()?;
        if !ended && let Some(path) = &self.file {
            match how {
                HowRead::Plain { pairer, .. } if pairer.waits_unknowing() => {
                    // Read as `openai::message` reads them: plain messages give the same.
                    let reading = Lines::Messages(pairer.naming(), openai::message);
                    let after = super::Where::List(messages.at());
                    super::learn_ahead(vec![pairer], reading, path, after);
                }
                HowRead::Plain { .. } | HowRead::Parsed { .. } => {}
            }
        }
        let mut out = Out::default();
        match how {
            HowRead::Plain { pairer, .. } if ended => {
                std::mem::replace(pairer, Pairer::new(openai::WHY_MISSING)).finish(&mut out);
            }
            HowRead::Plain { pairer, .. } => pairer.flush_in(None, &mut out),
            HowRead::Parsed { lines, .. } if ended => {
                std::mem::replace(lines, Lines::Native).finish(&mut out);
            }
            HowRead::Parsed { .. } => {}
        }
        for item in out.items {
            finisher.emitted(name, item, pinned);
        }
        if !ended {
            return Ok(());
        }
        if let Some(open) = self.open.take() {
            self.end_traces(&open.base, finisher);
        }
        Ok(())
    }
}
