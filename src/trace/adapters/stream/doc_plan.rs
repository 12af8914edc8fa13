//! The first pass over a JSON document that is to be streamed: it reads the document
//! through once, holding one array element (or one small member) at a time, and
//! decides which array's elements the second pass reads one at a time, and as what.
//!
//! It streams what a search of the whole document ([`super::super::search`]) would
//! find in one array, or in the members of one object: the document itself when it is
//! an array (a message list, or runs each holding transcripts), or one array member of
//! its top-level object (a `messages`, `steps`, `loglines` or `runs` member beside the
//! run's id and metadata) or of an object below it (`{"data": {"messages": […]}}`, as
//! deep as the search looks), or, with a `--select` path of keys and indexes then
//! `[*]` (`runs[*].messages`), the array those steps lead to (or the members of the
//! object, in key order, as the path selects them), or with a path of keys and
//! indexes only (`data.messages`, `runs[2]`), the list or runs it selects, or what is
//! found in the object it selects as in a document. Transcripts found in several
//! members make the members of the innermost object holding them all the runs, read
//! one at a time and each searched as the search of that object searches it: that
//! search meets them in key order, so they are read in key order, each from where
//! this pass found it. The other members of the top-level object, and of the objects
//! below it, are kept (the small ones whole, an array as what the search needs of it),
//! so that the search's decisions about the object, and the name of the transcript
//! (its run's id), are those of the whole reading. Anything else (an OpenTelemetry
//! export or a ToolBench tree alone, a ToolBench answer, a document that is one
//! message, nothing found) is left to the whole reading, as is a document that is not
//! valid JSON or has a key twice: an error anywhere makes the whole file an error,
//! which must be known before any record is handed on.
//!
//! The second pass parses every element of the streamed array, so this one parses
//! them as little as its decisions need: each is checked by a scan that builds
//! nothing but a note of where its members are ([`Tape`]), from which it is read only
//! as far as saying its format takes ([`shallow_scanned`]: an object's keys, and the
//! few members the formats' tests read, parsed alone).
//! An element is parsed whole only while searching or selecting in it can still change
//! what is decided (in an array of runs, until one holds a transcript). A transcript
//! element is not searched as a run; an array of them that turns out to be no
//! transcript (most of its elements are not transcript elements) is searched again,
//! read from the file once more.

use std::io;
use std::path::Path;

use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use super::super::detect::{
    ListTally, ScannedList, Signal, object_signal, shallow_scanned, signal,
};
use super::super::document::{foreign_message, malformed, parse_unique};
use super::super::search::{self, SEARCH_DEPTH, Search};
use super::super::select::Step;
use super::super::shared::{Map, str_of};
use super::super::unique::{Tape, valid_without_duplicates_inside};
use super::super::{
    Format, InputOptions, Layout, Problem, Selector, codex, otel, responses, toolbench,
};
use super::run::{At, Lists, Pick, Walked, read_at, walk_object};
use super::scan::Scanner;
use super::{Elements, LARGE_RUN};
use crate::trace::Location;
use crate::trace::json_index::child_pointer;

/// How many levels of objects below the top-level object the first pass reads member
/// by member, looking for the array to stream (`{"data": {"run": {"messages": […]}}}`):
/// as deep as the search of the whole document looks into objects. An object deeper
/// down is parsed whole, as a small member is (the search finds nothing in it).
const NESTED_OBJECTS: usize = SEARCH_DEPTH;

/// How a document is streamed.
#[derive(Clone)]
pub(in super::super) struct DocPlan {
    /// The steps (keys, and indexes with `--select`) that lead from the top level to
    /// the streamed array (none: the top level is the array).
    pub(super) path: Vec<Step>,
    /// The array's JSON pointer.
    pub(super) pointer: String,
    pub(super) what: What,
    /// How the file is laid out: one document, or one line holding one.
    pub(super) layout: Layout,
    /// What names of transcripts start with: `line 3` for a document on one line of a
    /// file read as documents per line.
    pub(super) prefix: String,
    /// Where the whole document is, for a problem about all of it.
    pub(super) whole: Location,
    /// Whether a problem of the whole document comes at its end (a `--select` path
    /// that selects nothing, or no transcript): the findings of its records wait.
    pub(super) late: bool,
    /// The names of the document's members, when it is an object.
    names: Vec<String>,
}

impl DocPlan {
    /// The names of the document's members, when it is an object (none for an array).
    pub(in super::super) fn names(&self) -> impl Iterator<Item = &str> {
        self.names.iter().map(String::as_str)
    }
}

/// What the streamed array's elements are.
#[derive(Clone)]
pub(super) enum What {
    /// The elements of one transcript.
    List {
        format: Format,
        /// The transcript's name, as the search names it.
        name: String,
        /// With `--format`, the first element clearly of another format when none is
        /// clearly of the forced one: it is reported before any record.
        foreign: Option<Problem>,
        /// The call ids output items answer (Codex rollouts, Responses items).
        codex_answered: FxHashSet<String>,
        responses_answered: FxHashSet<String>,
    },
    /// Runs: each element is searched for transcripts (at `depth` in the document),
    /// or selected in by the rest of a `--select` path (the path and its rest). With
    /// `object`, the runs are members of an object rather than the elements of an
    /// array (transcripts were found in several of them).
    Runs {
        depth: usize,
        select: Option<(Selector, Selector)>,
        object: Option<Members>,
    },
}

/// The members of an object read as runs.
#[derive(Clone)]
pub(super) struct Members {
    /// What of the object names a list that is one of its members (its id members),
    /// as the search of the object names it.
    pub(super) names: Map,
    /// The members that hold transcripts, in key order (the order the search of the
    /// object meets them in, whatever the document's), each read from where it is.
    pub(super) places: Vec<Place>,
}

/// Where a member's value is in the document.
#[derive(Clone, Debug)]
pub(super) struct Place {
    pub(super) key: String,
    /// Its byte offset, line and length.
    pub(super) offset: u64,
    pub(super) line: u64,
    pub(super) len: u64,
}

/// What the first pass learned of one array, element by element.
struct Tally {
    list: ListTally,
    /// Whether an element is clearly an ATIF step.
    atif_step: bool,
    /// With `--format`: whether an element is clearly of it, and else the first
    /// element clearly of another format.
    own: bool,
    other: Option<(Location, Format)>,
    codex_answered: FxHashSet<String>,
    responses_answered: FxHashSet<String>,
    /// Whether a search of an element, as a run, finds a transcript.
    finds: bool,
    /// Whether an element was not searched, being a transcript element itself: the
    /// search matters only if the array is no transcript, and is then made again.
    unsearched: bool,
    /// With `--select`: whether the rest of the path selects anything in an element.
    selected: bool,
}

/// Where a `--select` path of keys and indexes has led in the first pass
/// ([`Pass::descend`]).
struct Descent {
    /// The JSON pointer of the value the path leads to.
    pointer: String,
    /// The objects and arrays on the way, outermost first, whose later members or
    /// elements are read once the value is.
    open: Vec<Open>,
    /// The members of the innermost object that name its transcript.
    parent: Map,
}

/// The arrays [`Pass::object`] read, with their tallies, and where each is by the
/// path to it.
struct Arrays<'a> {
    read: &'a [(Vec<Step>, Tally)],
    at: FxHashMap<&'a [Step], usize>,
}

impl<'a> Arrays<'a> {
    fn of(read: &'a [(Vec<Step>, Tally)]) -> Arrays<'a> {
        let at = read
            .iter()
            .enumerate()
            .map(|(i, (path, _))| (path.as_slice(), i))
            .collect();
        Arrays { read, at }
    }
}

/// A transcript the first pass found in an object ([`Pass::search_members`]).
struct Holder {
    /// The steps to the array or member that holds it.
    path: Vec<Step>,
    /// The array it is (an index into the arrays read) and how it streams; `None` for
    /// what is read whole alone (OpenTelemetry exports, a ToolBench tree, a transcript
    /// in a member the first pass parsed whole).
    array: Option<(usize, What)>,
}

/// An object or array a `--select` path goes through.
enum Open {
    /// An object, with the keys met so far.
    Object(FxHashSet<String>),
    Array,
}

/// What each element of an array is read for.
#[derive(Clone, Copy)]
enum Purpose<'a> {
    /// Only checked: valid JSON without a key twice.
    Check,
    /// Tallied, as a transcript or as runs searched at `depth`.
    Search { depth: usize },
    /// Tallied as runs the rest of a `--select` path selects in.
    Select(&'a Selector),
}

impl Tally {
    fn new(format: Option<Format>) -> Tally {
        Tally {
            list: ListTally::new(format),
            atif_step: false,
            own: false,
            other: None,
            codex_answered: FxHashSet::default(),
            responses_answered: FxHashSet::default(),
            finds: false,
            unsearched: false,
            selected: false,
        }
    }

    /// Whether an element that says `signal` of its format must be read whole for
    /// `purpose`: to be searched or selected in while that can still change what is
    /// decided (once an element has found a transcript, or been selected in and found
    /// one, no later element changes it). A transcript element is not searched as a
    /// run ([`Tally::unsearched`]).
    fn wants_whole(&mut self, signal: Signal, purpose: Purpose<'_>) -> bool {
        match purpose {
            Purpose::Check => false,
            Purpose::Search { .. } if self.finds => false,
            Purpose::Search { .. } if signal != Signal::None => {
                self.unsearched = true;
                false
            }
            Purpose::Search { .. } => true,
            Purpose::Select(_) => !(self.selected && self.finds),
        }
    }

    /// Tallies an element at `loc`: `value` as [`shallow`] reads it, which says
    /// `signal`, and `whole`, when [`Tally::wants_whole`] wanted it.
    fn add(
        &mut self,
        value: &Value,
        signal: Signal,
        whole: Option<&Value>,
        loc: impl FnOnce() -> Location,
        purpose: Purpose<'_>,
    ) {
        let format = self.list.wanted();
        self.list.add(signal);
        self.atif_step |= signal == Signal::Strong(Format::Atif);
        if let (Some(forced), false, Signal::Strong(found)) = (format, self.own, signal) {
            if found == forced {
                self.own = true;
                self.other = None;
            } else if self.other.is_none() {
                self.other = Some((loc(), found));
            }
        }
        self.codex_answered
            .extend(codex::answered(std::iter::once(value)));
        self.responses_answered
            .extend(responses::answered(std::iter::once(value)));
        let mut found = Vec::new();
        let mut search = Search {
            doc: 0,
            format,
            prefix: "",
            found: &mut found,
        };
        let Some(value) = whole else { return };
        match purpose {
            Purpose::Check => {}
            Purpose::Search { depth } => search.find(value, "", None, depth),
            Purpose::Select(rest) => {
                for (pointer, selected) in rest.select(value) {
                    self.selected = true;
                    search.selected(selected, &pointer, None);
                }
            }
        }
        self.finds |= !found.is_empty();
    }
}

/// Whether the search of `text`, an element (already checked: valid, no key twice)
/// searched as a run at `depth` with `--format`'s `format`, finds a transcript in one
/// of its array members: a list that [`ListTally`] takes for a transcript from the
/// shallow reading of each of its elements, which is what that search decides it from
/// ([`search::finds_with_a_list`] says when an object's search finds one then). Told
/// from a scan of the element, without parsing it; `false` when that does not tell
/// (the element is then parsed and searched).
pub(super) fn finds_in_members(
    tape: &mut Tape,
    text: &str,
    depth: usize,
    format: Option<Format>,
) -> bool {
    if depth >= SEARCH_DEPTH {
        return false;
    }
    let Some(run) = tape.scan(text, 3) else {
        return false;
    };
    let (mut finds, mut children) = (false, false);
    let read = run.members(|key, member| {
        children |= key == "children";
        // A ToolBench answer's `tree` may be skipped by the search.
        if finds || key == "tree" || !member.text().starts_with('[') {
            return;
        }
        let mut list = ScannedList::new(format);
        let all = member.elements(|element| list.add(element));
        finds = all && list.finds();
    });
    read && finds && search::finds_with_a_list(format, children)
}

/// What the rest of a `--select` path selects in a large object read a piece at a time,
/// told from the lists it tallied: whether it selects anything, and whether the search
/// of what it selects finds a transcript; `None` when they do not tell (the object is
/// then parsed, and selected in). The empty rest selects the object, searched as a
/// document: it finds a transcript when one of its lists is one. A key selects that
/// member, nothing when there is none; a list that is a transcript is one.
fn selects_in(rest: &Selector, walked: &Walked) -> Option<(bool, bool)> {
    fn in_object(step: &Step) -> &str {
        step.in_object().unwrap_or_default()
    }
    match Pick::selected(rest)? {
        Pick::Selected if walked.finds => Some((true, true)),
        Pick::Member([key]) if walked.finding.iter().any(|list| list == in_object(key)) => {
            Some((true, true))
        }
        Pick::Member([key, ..]) if walked.shallow.get(in_object(key)).is_none() => {
            Some((false, false))
        }
        _ => None,
    }
}

/// What the first pass found of a large element ([`Pass::large_element`]).
enum Large {
    /// An object, read a piece at a time.
    Walked(Walked),
    /// Anything else, read whole.
    Held,
    /// Not valid JSON, or a key twice.
    Invalid,
}

/// Reads the document at `path` through once and decides how it streams; `None` when
/// it is read whole (the reasons are in the module doc). `layout` is how detection
/// found the file laid out: one document, or one line holding one.
pub(in super::super) fn plan(
    path: &Path,
    options: &InputOptions,
    layout: Layout,
) -> io::Result<Option<DocPlan>> {
    let file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    let input = Box::new(io::BufReader::with_capacity(1 << 16, file));
    let mut pass = Pass {
        path,
        scan: Scanner::new(input)?,
        levels: 0,
        names: Vec::new(),
        options,
        bytes: Vec::new(),
        tape: Tape::default(),
        places: FxHashMap::default(),
    };
    // A document the scanner cannot follow is not valid JSON: it is read whole, which
    // says what is wrong and where.
    match pass.plan(layout, len) {
        Ok(plan) => Ok(plan),
        Err(err) if err.kind() == io::ErrorKind::InvalidData => Ok(None),
        Err(err) => Err(err),
    }
}

/// The steps to the streamed array, what its elements are, and whether a problem of
/// the whole document comes at its end.
type Planned = (Vec<Step>, What, bool);

struct Pass<'o> {
    path: &'o Path,
    scan: Scanner,
    /// How many containers the scanner is inside: a value scanned alone nests too
    /// deep where their levels and its own make 128, as it does inside the document.
    levels: usize,
    /// The names of the members of the document, when it is an object read whole.
    names: Vec<String>,
    options: &'o InputOptions,
    /// A buffer for keys, members and elements.
    bytes: Vec<u8>,
    /// The scan of the last element read, kept for the next.
    tape: Tape,
    /// Where the members of each object [`Pass::object`] read are, by the path to it
    /// (a map of members iterates in key order, as the search of the whole document
    /// does, and keeps no place).
    places: FxHashMap<Vec<Step>, Vec<Place>>,
}

impl Pass<'_> {
    fn plan(&mut self, layout: Layout, len: u64) -> io::Result<Option<DocPlan>> {
        let line_start = self.scan.skip_lines()?;
        let line = self.scan.line;
        let prefix = match layout {
            Layout::Document => String::new(),
            // A line of a file read line by line, whose BOM it would read as text.
            Layout::DocumentLines if self.scan.bom == 0 => format!("line {line}"),
            _ => return Ok(None),
        };
        let mut whole = Location {
            line: 1,
            offset: self.scan.bom,
            len: len - self.scan.bom,
            pointer: Default::default(),
        };
        let found = match &self.options.select {
            Some(selector) => match (selector.split_each(), selector.steps()) {
                (Some((steps, rest)), _) => self.selected(steps, selector, rest)?,
                (None, Some(steps)) if !steps.is_empty() => {
                    self.selected_value(steps.to_vec(), &prefix)?
                }
                // The empty path selects the whole document, which is searched as it
                // is without a path (only what is said when nothing is found differs,
                // and that is read whole).
                _ => match self.scan.next_byte()? {
                    Some(b'[') => self.top_array(&prefix)?,
                    Some(b'{') => self.object_searched(&[], "", &prefix)?,
                    _ => None,
                },
            },
            None => match self.scan.next_byte()? {
                Some(b'[') => self.top_array(&prefix)?,
                Some(b'{') => self.object_searched(&[], "", &prefix)?,
                _ => None,
            },
        };
        let Some((path, what, late)) = found else {
            return Ok(None);
        };
        if layout == Layout::DocumentLines {
            // The document is its line, as reading the file line by line has it.
            whole = Location {
                line,
                offset: line_start,
                len: self.scan.line_end()? - line_start,
                pointer: Default::default(),
            };
        }
        // Nothing may follow the document; a document on one line of a file read line
        // by line must be that line, alone.
        let one_line = self.scan.line == line;
        if !self.scan.rest_is_blank()? || (layout == Layout::DocumentLines && !one_line) {
            return Ok(None);
        }
        let mut pointer = String::new();
        for step in &path {
            pointer = child_pointer(&pointer, step.token());
        }
        Ok(Some(DocPlan {
            path,
            pointer,
            what,
            layout,
            prefix,
            whole,
            late,
            names: std::mem::take(&mut self.names),
        }))
    }

    /// A document that is an array: a transcript, or runs.
    fn top_array(&mut self, prefix: &str) -> io::Result<Option<Planned>> {
        let Some(tally) = self.array(&[], "", Purpose::Search { depth: 1 })? else {
            return Ok(None);
        };
        let what = self.list_or_runs(&tally, prefix, "", None, 1);
        Ok(what.map(|what| (Vec::new(), self.foreign(what, &tally), false)))
    }

    /// The object at the next byte, which `path` leads to (at `pointer`), searched as
    /// the top level of a document is (the document itself, or what a `--select` path
    /// selects): one of its array members, or an array member of an object below it,
    /// holds all that the search finds, or it is read whole.
    fn object_searched(
        &mut self,
        path: &[Step],
        pointer: &str,
        prefix: &str,
    ) -> io::Result<Option<Planned>> {
        let mut arrays = Vec::new();
        let Some(skeleton) = self.object(path, pointer, 0, &mut arrays)? else {
            return Ok(None);
        };
        let wants = |format: Format| self.options.format.is_none_or(|f| f == format);
        // As the search of the object goes (`Search::find` at depth 0). An empty array
        // stands for each array member: what is asked of them is only that they are
        // arrays, but for an ATIF trajectory's steps.
        if otel::is_export(&skeleton) || toolbench::is_tree(&skeleton) {
            return Ok(None);
        }
        let steps_path = [path, &[Step::Key("steps".to_string())]].concat();
        if let Some(i) = arrays.iter().position(|(path, _)| *path == steps_path) {
            let steps = &arrays[i].1;
            let atif = str_of(&skeleton, "schema_version").is_some_and(|v| v.starts_with("ATIF"))
                || steps.atif_step;
            if atif && wants(Format::Atif) {
                let what = What::List {
                    format: Format::Atif,
                    name: search::name(prefix, &child_pointer(pointer, "steps"), Some(&skeleton)),
                    foreign: None,
                    codex_answered: FxHashSet::default(),
                    responses_answered: FxHashSet::default(),
                };
                let what = self.foreign(what, steps);
                return Ok(Some((steps_path, what, false)));
            }
        }
        // A document that is one message: read whole (its content is no list).
        if object_signal(&skeleton) != Signal::None {
            return Ok(None);
        }
        let skip_tree =
            self.options.format.is_none() && toolbench::is_answer_with_messages(&skeleton);
        let mut found = Vec::new();
        if !self.search_members(
            &skeleton,
            path,
            pointer,
            0,
            skip_tree,
            &Arrays::of(&arrays),
            prefix,
            &mut found,
        ) {
            return Ok(None);
        }
        if found.len() > 1 {
            return Ok(members_as_runs(
                &skeleton,
                path,
                &found,
                skip_tree,
                &mut self.places,
            ));
        }
        let Some(Holder {
            array: Some((i, what)),
            ..
        }) = found.pop()
        else {
            return Ok(None);
        };
        let (path, tally) = arrays.swap_remove(i);
        let what = self.foreign(what, &tally);
        Ok(Some((path, what, false)))
    }

    /// The object at the next byte, at `pointer` (where `path` leads from the top
    /// level), `depth` levels down: each array member is read element by element and
    /// tallied in `arrays` (by the path that leads to it) and stands as an empty array
    /// in what is returned; an object member is read the same way, down to
    /// [`NESTED_OBJECTS`] levels, below which it is parsed whole with the other
    /// members. `None` when it is not valid JSON or has a key twice.
    fn object(
        &mut self,
        path: &[Step],
        pointer: &str,
        depth: usize,
        arrays: &mut Vec<(Vec<Step>, Tally)>,
    ) -> io::Result<Option<Map>> {
        self.enter();
        let mut skeleton = Map::new();
        let mut places = Vec::new();
        if self.leaves(b'}')? {
            return Ok(Some(skeleton));
        }
        loop {
            let Some(key) = self.scan.key(&mut self.bytes)? else {
                return Ok(None);
            };
            if skeleton.contains_key(&key) || !self.scan.eat(b':')? {
                return Ok(None);
            }
            let inner = || [path, &[Step::Key(key.clone())]].concat();
            let next = self.scan.next_byte()?;
            let (offset, line) = (self.scan.offset, self.scan.line);
            let value = match next {
                Some(b'[') => {
                    let (path, pointer) = (inner(), child_pointer(pointer, &key));
                    // The elements are at `depth + 2`: the search meets the array
                    // one level below this object.
                    let purpose = Purpose::Search { depth: depth + 2 };
                    let Some(tally) = self.array(&path, &pointer, purpose)? else {
                        return Ok(None);
                    };
                    arrays.push((path, tally));
                    Value::Array(Vec::new())
                }
                Some(b'{') if depth < NESTED_OBJECTS => {
                    let pointer = child_pointer(pointer, &key);
                    let Some(map) = self.object(&inner(), &pointer, depth + 1, arrays)? else {
                        return Ok(None);
                    };
                    Value::Object(map)
                }
                _ => {
                    let Some(value) = self.member()? else {
                        return Ok(None);
                    };
                    value
                }
            };
            places.push(Place {
                key: key.clone(),
                offset,
                line,
                len: self.scan.offset - offset,
            });
            skeleton.insert(key, value);
            if self.leaves(b'}')? {
                if self.levels == 0 {
                    self.names = places.iter().map(|place| place.key.clone()).collect();
                }
                self.places.insert(path.to_vec(), places);
                return Ok(Some(skeleton));
            }
            if !self.scan.eat(b',')? {
                return Ok(None);
            }
        }
    }

    /// Searches the members of `map` (the object `path` leads to, at `pointer`, `depth`
    /// levels down, read by [`Pass::object`]) as the search of the whole document goes
    /// (`Search::find` on each member in the map's order), noting in `found` where it
    /// finds a transcript: an array that holds one or runs (as an index into `arrays`),
    /// or a member read whole alone. False when the document is to be read whole: what
    /// the search decides from an array's elements, which an object below the top
    /// level does not keep (a ToolBench answer).
    #[allow(clippy::too_many_arguments)]
    fn search_members(
        &self,
        map: &Map,
        path: &[Step],
        pointer: &str,
        depth: usize,
        skip_tree: bool,
        arrays: &Arrays<'_>,
        prefix: &str,
        found: &mut Vec<Holder>,
    ) -> bool {
        let wants = |format: Format| self.options.format.is_none_or(|f| f == format);
        let array_at = |inner: &[Step]| arrays.at.get(inner).copied();
        // A ToolBench answer: whether its tree is searched depends on its lists.
        if matches!(map.get("answer_generation"), Some(Value::Object(_))) {
            return false;
        }
        if depth > 0 {
            // The search takes the object whole, when it wants its format; a tree it
            // does not want, it does not look into; an export it does not want, it
            // searches as any object, which is left to the whole reading.
            let (export, tree) = (otel::is_export(map), toolbench::is_tree(map));
            if (export && wants(Format::Otel)) || (tree && wants(Format::ToolBench)) {
                found.push(Holder {
                    path: path.to_vec(),
                    array: None,
                });
                return true;
            }
            if tree {
                return true;
            }
            if export {
                return false;
            }
            let steps_path = [path, &[Step::Key("steps".to_string())]].concat();
            if let Some(i) = array_at(&steps_path) {
                let atif = str_of(map, "schema_version").is_some_and(|v| v.starts_with("ATIF"))
                    || arrays.read[i].1.atif_step;
                if atif && wants(Format::Atif) {
                    let steps_pointer = child_pointer(pointer, "steps");
                    let what = What::List {
                        format: Format::Atif,
                        name: search::name(prefix, &steps_pointer, Some(map)),
                        foreign: None,
                        codex_answered: FxHashSet::default(),
                        responses_answered: FxHashSet::default(),
                    };
                    // The search takes the steps and nothing else of this object.
                    found.push(Holder {
                        path: steps_path,
                        array: Some((i, what)),
                    });
                    return true;
                }
            }
        }
        for (key, value) in map {
            if skip_tree && key == "tree" {
                continue;
            }
            let pointer = child_pointer(pointer, key);
            let inner = [path, &[Step::Key(key.clone())]].concat();
            if let Some(i) = array_at(&inner) {
                // An array deeper than the search looks holds nothing it finds.
                if depth + 1 > SEARCH_DEPTH {
                    continue;
                }
                // A list of OpenTelemetry exports or ToolBench trees is a transcript
                // its adapter reads whole.
                if matches!(
                    arrays.read[i].1.list.format(),
                    Some(Format::Otel | Format::ToolBench)
                ) {
                    found.push(Holder {
                        path: inner,
                        array: None,
                    });
                    continue;
                }
                let tally = &arrays.read[i].1;
                let what = self.list_or_runs(tally, prefix, &pointer, Some(map), depth + 2);
                if let Some(what) = what {
                    found.push(Holder {
                        path: inner,
                        array: Some((i, what)),
                    });
                }
                continue;
            }
            if let Value::Object(child) = value
                && depth < NESTED_OBJECTS
            {
                if !self.search_members(
                    child,
                    &inner,
                    &pointer,
                    depth + 1,
                    false,
                    arrays,
                    prefix,
                    found,
                ) {
                    return false;
                }
                continue;
            }
            let mut transcripts = Vec::new();
            Search {
                doc: 0,
                format: self.options.format,
                prefix,
                found: &mut transcripts,
            }
            .find(value, &pointer, Some(map), depth + 1);
            if !transcripts.is_empty() {
                // A transcript in a member parsed whole.
                found.push(Holder {
                    path: inner,
                    array: None,
                });
            }
        }
        true
    }

    /// What the search of an array (its elements at `depth`) at `pointer` finds: a
    /// transcript of a format read element by element, or runs that hold one; `None`
    /// for anything else.
    fn list_or_runs(
        &self,
        tally: &Tally,
        prefix: &str,
        pointer: &str,
        parent: Option<&Map>,
        depth: usize,
    ) -> Option<What> {
        match tally.list.format() {
            Some(Format::Otel | Format::ToolBench) => None,
            Some(format) => Some(What::List {
                format,
                name: search::name(prefix, pointer, parent),
                foreign: None,
                codex_answered: match format {
                    Format::Codex => tally.codex_answered.clone(),
                    _ => FxHashSet::default(),
                },
                responses_answered: match format {
                    Format::Responses => tally.responses_answered.clone(),
                    _ => FxHashSet::default(),
                },
            }),
            None if tally.finds => Some(What::Runs {
                depth,
                select: None,
                object: None,
            }),
            None => None,
        }
    }

    /// `what`, with the problem of a `--format` its transcript's elements are not of.
    fn foreign(&self, mut what: What, tally: &Tally) -> What {
        if let (What::List { foreign, .. }, Some(forced), false, Some((loc, other))) =
            (&mut what, self.options.format, tally.own, &tally.other)
        {
            *foreign = Some(malformed(loc.clone(), foreign_message(forced, *other)));
        }
        what
    }

    /// With `--select` `steps[*]rest`: the array the steps lead to, or the object's
    /// members (in key order, as the path selects them), as runs the rest selects in;
    /// the rest of the document is only checked.
    fn selected(
        &mut self,
        steps: Vec<Step>,
        selector: &Selector,
        rest: Selector,
    ) -> io::Result<Option<Planned>> {
        let Some(mut path) = self.descend(&steps)? else {
            return Ok(None);
        };
        let mut members = match self.scan.next_byte()? {
            Some(b'[') => None,
            Some(b'{') => Some(Members {
                names: Map::new(),
                places: Vec::new(),
            }),
            _ => return Ok(None),
        };
        let purpose = Purpose::Select(&rest);
        let Some(tally) = self.items(&steps, &path.pointer, purpose, members.as_mut())? else {
            return Ok(None);
        };
        if !self.ascend(&mut path)? {
            return Ok(None);
        }
        let object = members.map(|mut members| {
            members.places.sort_by(|a, b| a.key.cmp(&b.key));
            members
        });
        let what = What::Runs {
            depth: steps.len() + 1,
            select: Some((selector.clone(), rest)),
            object,
        };
        // Nothing selected, or no transcript in it, is said of the whole file at its end.
        let late = !tally.selected || !tally.finds;
        Ok(Some((steps, what, late)))
    }

    /// With a `--select` path of keys and indexes only (`data.messages`, `runs[2]`):
    /// the value the path leads to, as the whole reading takes what such a path
    /// selects. A list of one format is a transcript named after the object holding
    /// it; runs that hold one, and an object, are searched as a document is. The rest
    /// of the document is only checked. Anything else (a value that is no array or
    /// object, nothing, an array or object that holds no transcript) is left to the
    /// whole reading.
    fn selected_value(&mut self, steps: Vec<Step>, prefix: &str) -> io::Result<Option<Planned>> {
        let Some(mut path) = self.descend(&steps)? else {
            return Ok(None);
        };
        let planned = match self.scan.next_byte()? {
            Some(b'[') => {
                let purpose = Purpose::Search { depth: 1 };
                let Some(tally) = self.array(&steps, &path.pointer, purpose)? else {
                    return Ok(None);
                };
                // Named after the object holding it, whose id may come after it (an
                // array's element has no name).
                if !self.ascend(&mut path)? {
                    return Ok(None);
                }
                let what = self.list_or_runs(&tally, prefix, &path.pointer, Some(&path.parent), 1);
                return Ok(what.map(|what| (steps, self.foreign(what, &tally), false)));
            }
            Some(b'{') => self.object_searched(&steps, &path.pointer, prefix)?,
            _ => None,
        };
        if planned.is_none() || !self.ascend(&mut path)? {
            return Ok(None);
        }
        Ok(planned)
    }

    /// Reads from the top level down the members and elements `steps` name, to the
    /// start of the last one's value; `None` when the document does not lead there
    /// (a value on the way that is no object or array, or not the one the step takes,
    /// a key missing or twice, an array too short, text that is not JSON).
    fn descend(&mut self, steps: &[Step]) -> io::Result<Option<Descent>> {
        let mut path = Descent {
            pointer: String::new(),
            open: Vec::new(),
            parent: Map::new(),
        };
        for (level, step) in steps.iter().enumerate() {
            let open = match (self.scan.next_byte()?, step.in_object(), step.in_array()) {
                (Some(b'{'), Some(wanted), _) => {
                    self.enter();
                    let innermost = level + 1 == steps.len();
                    let mut seen = FxHashSet::default();
                    loop {
                        let Some(key) = self.scan.key(&mut self.bytes)? else {
                            return Ok(None);
                        };
                        if !seen.insert(key.clone()) || !self.scan.eat(b':')? {
                            return Ok(None);
                        }
                        if key == wanted {
                            break;
                        }
                        if !self.sibling(key, innermost, &mut path.parent)?
                            || !self.scan.eat(b',')?
                        {
                            return Ok(None);
                        }
                    }
                    Open::Object(seen)
                }
                (Some(b'['), _, Some(index)) => {
                    self.enter();
                    for _ in 0..index {
                        if self.scan.next_byte()? == Some(b']')
                            || !self.check_member()?
                            || !self.scan.eat(b',')?
                        {
                            return Ok(None);
                        }
                    }
                    if self.scan.next_byte()? == Some(b']') {
                        return Ok(None);
                    }
                    Open::Array
                }
                _ => return Ok(None),
            };
            path.pointer = child_pointer(&path.pointer, step.token());
            path.open.push(open);
        }
        Ok(Some(path))
    }

    /// Reads the rest of each object and array [`Pass::descend`] went down, from the
    /// innermost out, after the value its path leads to; false when they are not valid
    /// JSON or have a key twice.
    fn ascend(&mut self, path: &mut Descent) -> io::Result<bool> {
        let mut innermost = true;
        while let Some(open) = path.open.pop() {
            let (close, mut seen) = match open {
                Open::Object(seen) => (b'}', Some(seen)),
                Open::Array => (b']', None),
            };
            loop {
                if self.leaves(close)? {
                    break;
                }
                if !self.scan.eat(b',')? {
                    return Ok(false);
                }
                let read = match &mut seen {
                    Some(seen) => {
                        let Some(key) = self.scan.key(&mut self.bytes)? else {
                            return Ok(false);
                        };
                        seen.insert(key.clone())
                            && self.scan.eat(b':')?
                            && self.sibling(key, innermost, &mut path.parent)?
                    }
                    None => self.check_member()?,
                };
                if !read {
                    return Ok(false);
                }
            }
            innermost = false;
        }
        Ok(true)
    }

    /// Reads the member `key`, whose value is at the next byte, of an object on a
    /// `--select` path: checked, and kept in `parent` when it is of the innermost
    /// object and names its transcript (as the search names a list after its
    /// object's `id`, `run_id`, …). False when it is not valid JSON or has a key twice.
    fn sibling(&mut self, key: String, innermost: bool, parent: &mut Map) -> io::Result<bool> {
        if !(innermost && search::ID_KEYS.contains(&key.as_str())) {
            return self.check_member();
        }
        let Some(value) = self.member()? else {
            return Ok(false);
        };
        parent.insert(key, value);
        Ok(true)
    }

    /// The array at the next byte, at `pointer` (where `path` leads from the top
    /// level), read element by element for `purpose`; `None` when an element is not
    /// valid JSON or has a key twice. Each element is parsed only as far as the
    /// decisions need it: what it says of its format, and whole only to be searched
    /// or selected in while that can still change anything.
    fn array(
        &mut self,
        path: &[Step],
        pointer: &str,
        purpose: Purpose<'_>,
    ) -> io::Result<Option<Tally>> {
        self.items(path, pointer, purpose, None)
    }

    /// The array at the next byte, as [`Pass::array`] reads it; or, with `members`,
    /// the object there, whose member values are read as an array's elements are,
    /// noting in `members` where each is and the id members that name it.
    fn items(
        &mut self,
        path: &[Step],
        pointer: &str,
        purpose: Purpose<'_>,
        mut members: Option<&mut Members>,
    ) -> io::Result<Option<Tally>> {
        self.enter();
        let close = if members.is_some() { b'}' } else { b']' };
        let mut keys = FxHashSet::default();
        let mut tally = Tally::new(self.options.format);
        let mut index = 0;
        loop {
            if self.leaves(close)? {
                if let Purpose::Search { depth } = purpose
                    && members.is_none()
                    && tally.unsearched
                    && !tally.finds
                    && tally.list.format().is_none()
                {
                    tally.finds = self.search_again(path, pointer, depth)?;
                }
                return Ok(Some(tally));
            }
            match self.scan.next_byte()? {
                Some(b',') if index > 0 => {
                    self.scan.advance(1);
                    self.scan.skip_ws()?;
                }
                Some(_) if index == 0 => {}
                _ => return Ok(None),
            }
            let key = match members {
                None => None,
                Some(_) => {
                    let Some(key) = self.scan.key(&mut self.bytes)? else {
                        return Ok(None);
                    };
                    if !keys.insert(key.clone()) || !self.scan.eat(b':')? {
                        return Ok(None);
                    }
                    self.scan.skip_ws()?;
                    Some(key)
                }
            };
            let (offset, line) = (self.scan.offset, self.scan.line);
            // Only checked, or also noted for its shallow reading.
            let depth = usize::from(!matches!(purpose, Purpose::Check));
            // The element is scanned where it lies in the reader's buffer when it is
            // whole there (most are): one scan finds its end, checks it and notes its
            // members. Else its bytes are copied out first, and scanned.
            let buffered = self.scan.buffered()?;
            // (A large element is never whole in the buffer, but in tests, where it is
            // a few KiB.)
            let in_place = self
                .tape
                .scan_prefix_inside(buffered, depth, self.levels)
                .filter(|&end| end < LARGE_RUN);
            let (bytes, walked) = match in_place {
                Some(end) => (&buffered[..end], None),
                None => {
                    self.bytes.clear();
                    let len = self.scan.value_upto(Some(&mut self.bytes), LARGE_RUN)?;
                    let walked = match len > self.bytes.len() as u64 {
                        true => {
                            let at = At { offset, line };
                            // Its lists are tallied while that may still decide.
                            let decides = match purpose {
                                Purpose::Check => false,
                                Purpose::Search { .. } => !tally.finds,
                                Purpose::Select(_) => !(tally.finds && tally.selected),
                            };
                            let lists = match decides {
                                true => Lists::Tallied(self.options.format),
                                false => Lists::Skipped,
                            };
                            match self.large_element(at, len, lists)? {
                                Large::Walked(walked) => Some(walked),
                                Large::Held => None,
                                Large::Invalid => return Ok(None),
                            }
                        }
                        false => None,
                    };
                    (&self.bytes[..], walked)
                }
            };
            let (text, node) = match &walked {
                // A large object, read a piece at a time: its text is not at hand.
                Some(_) => ("", None),
                None => {
                    let Ok(text) = std::str::from_utf8(bytes) else {
                        return Ok(None);
                    };
                    let node = match in_place {
                        Some(_) => Some(self.tape.node(text)),
                        None => self.tape.scan_inside(text, depth, self.levels),
                    };
                    let Some(node) = node else {
                        return Ok(None);
                    };
                    (text, Some(node))
                }
            };
            let len = walked.as_ref().map_or(text.len(), |walked| walked.len);
            // The element's text, read again from the file when it was walked.
            let path = self.path;
            let whole_text = |walked: &Option<Walked>| -> io::Result<Option<Value>> {
                Ok(match walked {
                    Some(walked) => std::str::from_utf8(&read_at(path, offset, walked.len)?)
                        .ok()
                        .and_then(parse_unique),
                    None => parse_unique(text),
                })
            };
            if !matches!(purpose, Purpose::Check) {
                // The shallow reading is made from the scan's notes, without reading
                // the element's text again.
                let value = match (&walked, node) {
                    (Some(walked), _) => Some(walked.shallow.clone()),
                    (None, Some(node)) => shallow_scanned(node),
                    (None, None) => None,
                };
                let Some(value) = value else {
                    return Ok(None);
                };
                let signal = signal(&value);
                let whole = if !tally.wants_whole(signal, purpose) {
                    None
                } else if let Purpose::Search { depth } = purpose
                    && match &walked {
                        Some(walked) => depth < SEARCH_DEPTH && walked.finds,
                        None => finds_in_members(&mut self.tape, text, depth, self.options.format),
                    }
                {
                    // A run whose list says it is a transcript (the common run, however
                    // large) is not parsed to say so.
                    tally.finds = true;
                    None
                } else if let Purpose::Select(rest) = purpose
                    && let Some(walked) = &walked
                {
                    // Nor is a large run the rest of a `--select` path selects in: its
                    // lists say what that finds, or the findings wait for the end of
                    // the file (all that this decides, `late`).
                    if let Some((selected, finds)) = selects_in(rest, walked) {
                        tally.selected |= selected;
                        tally.finds |= finds;
                    }
                    None
                } else {
                    let Some(whole) = whole_text(&walked)? else {
                        return Ok(None);
                    };
                    Some(whole)
                };
                let loc = || Location {
                    line,
                    offset,
                    len: len as u64,
                    pointer: match &key {
                        Some(key) => child_pointer(pointer, key),
                        None => child_pointer(pointer, index),
                    }
                    .into(),
                };
                tally.add(&value, signal, whole.as_ref(), loc, purpose);
            }
            if let (Some(members), Some(key)) = (&mut members, key) {
                if search::ID_KEYS.contains(&key.as_str()) {
                    let Some(value) = whole_text(&walked)? else {
                        return Ok(None);
                    };
                    members.names.insert(key.clone(), value);
                }
                let len = len as u64;
                members.places.push(Place {
                    key,
                    offset,
                    line,
                    len,
                });
            }
            if in_place.is_some() {
                self.scan.consume(len)?;
            }
            index += 1;
        }
    }

    /// Reads an element of [`LARGE_RUN`] bytes or more at `at`, `len` bytes, which the
    /// scan went past keeping only its start, again from the file: an object a piece at
    /// a time ([`walk_object`]), tallying its lists when `lists` says to; anything else
    /// whole, into [`Pass::bytes`].
    fn large_element(&mut self, at: At, len: u64, lists: Lists) -> io::Result<Large> {
        let len = usize::try_from(len).map_err(|_| super::scan::changed("an element too long"))?;
        if self.bytes.first() == Some(&b'{') {
            return Ok(match walk_object(self.path, at, len, lists, self.levels)? {
                Some(walked) => Large::Walked(walked),
                None => Large::Invalid,
            });
        }
        self.bytes = read_at(self.path, at.offset, len)?;
        Ok(Large::Held)
    }

    /// Whether the search of an element of the array that `path` leads to (at
    /// `pointer`), as runs at `depth`, finds a transcript, read again from the file:
    /// for an array whose transcript elements were not searched the first time, and
    /// which turns out to be no transcript. (Rare: the elements of such an array are
    /// mostly not transcript elements, and each of those was searched.)
    fn search_again(&self, path: &[Step], pointer: &str, depth: usize) -> io::Result<bool> {
        let file = std::fs::File::open(self.path)?;
        let input = Box::new(io::BufReader::with_capacity(1 << 16, file));
        let mut elements = Elements::at(input, path, pointer.to_string())?;
        while let Some(element) = elements.next(None)? {
            let Some(value) = parse_unique(&element.text) else {
                return Err(super::scan::changed("an element is no longer valid JSON"));
            };
            if search::finds(&value, self.options.format, depth) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Steps into the container at the next byte.
    fn enter(&mut self) {
        self.scan.advance(1);
        self.levels += 1;
    }

    /// Steps out of a container if `close` is the next byte; whether it is.
    fn leaves(&mut self, close: u8) -> io::Result<bool> {
        let closes = self.scan.eat(close)?;
        self.levels -= usize::from(closes);
        Ok(closes)
    }

    /// The member value at the next byte, parsed; `None` when it is not valid JSON or
    /// has a key twice.
    fn member(&mut self) -> io::Result<Option<Value>> {
        self.bytes.clear();
        self.scan.skip_ws()?;
        self.scan.value(Some(&mut self.bytes))?;
        if !valid_without_duplicates_inside(&self.bytes, self.levels) {
            return Ok(None);
        }
        Ok(std::str::from_utf8(&self.bytes).ok().and_then(parse_unique))
    }

    /// Checks the member value at the next byte: valid JSON without a key twice (an
    /// array element by element).
    fn check_member(&mut self) -> io::Result<bool> {
        if self.scan.next_byte()? == Some(b'[') {
            return Ok(self.array(&[], "", Purpose::Check)?.is_some());
        }
        self.bytes.clear();
        self.scan.value(Some(&mut self.bytes))?;
        Ok(valid_without_duplicates_inside(&self.bytes, self.levels))
    }
}

/// With transcripts `found` in more than one place in the object `skeleton` (which
/// `path` leads to, searched as a document is): the innermost object that holds them
/// all, whose members that hold them are then read one at a time as runs, in key
/// order (as the search of the object meets them), each searched as that search
/// searches it. `None` when that is the object itself and its ToolBench search tree is
/// skipped (`skip_tree`), which runs would search.
fn members_as_runs(
    skeleton: &Map,
    path: &[Step],
    found: &[Holder],
    skip_tree: bool,
    places: &mut FxHashMap<Vec<Step>, Vec<Place>>,
) -> Option<Planned> {
    let mut common = found.first()?.path.as_slice();
    for holder in found {
        let same = common
            .iter()
            .zip(&holder.path)
            .take_while(|(a, b)| a == b)
            .count();
        common = &common[..same];
    }
    let below = common.get(path.len()..)?;
    if below.is_empty() && skip_tree {
        return None;
    }
    let mut object = skeleton;
    for step in below {
        match object.get(step.in_object()?) {
            Some(Value::Object(inner)) => object = inner,
            _ => return None,
        }
    }
    let names = object
        .iter()
        .filter(|(key, _)| search::ID_KEYS.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), value.clone()))
        .collect();
    let holding: FxHashSet<&str> = found
        .iter()
        .filter_map(|holder| holder.path.get(common.len())?.in_object())
        .collect();
    let mut places: Vec<Place> = places
        .remove(common)?
        .into_iter()
        .filter(|place| holding.contains(place.key.as_str()))
        .collect();
    places.sort_by(|a, b| a.key.cmp(&b.key));
    let what = What::Runs {
        depth: below.len() + 1,
        select: None,
        object: Some(Members { names, places }),
    };
    Some((common.to_vec(), what, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A chat transcript of two messages.
    const LIST: &str =
        r#"[{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]"#;

    /// What `--select path` asks.
    fn select(path: &str) -> InputOptions {
        InputOptions {
            format: None,
            select: Some(Selector::parse(path).expect("a path")),
        }
    }

    /// A path of keys.
    fn keys(keys: &[&str]) -> Vec<Step> {
        keys.iter().map(|key| Step::Key(key.to_string())).collect()
    }

    #[test]
    fn a_large_object_read_a_piece_at_a_time_is_read_as_its_scan_reads_it() {
        // Each object read from a file a piece at a time, against one scan of its
        // text: valid or not, its shallow reading, and whether its lists find a
        // transcript.
        let message = r#"{"role": "user", "content": "a"}"#;
        let texts = [
            r#"{"id": "r", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "x"}]}"#,
            "{\n  \"id\": 1,\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"a\"}\n  ]\n}",
            r#"{"tree": [{"role": "user", "content": "a"}], "n": null}"#,
            r#"{"node_type": "Action", "children": [], "messages": [{"role": "user", "content": "a"}]}"#,
            r#"{"messages": [{"role": "user", "content": [{"type": "tool_result", "content": "a"}]}]}"#,
            r#"{"content": [{"role": "user", "content": "a"}], "kind": "x"}"#,
            r#"{"type": {"a": [1, 2]}, "role": "user", "steps": [1, {"b": 2}]}"#,
            r#"{"xs": [1, 2], "ys": [{"role": "user", "content": "a"}]}"#,
            r#"{"r\u006fle": "user", "content": "a"}"#,
            r#"{"m": []}"#,
            "{}",
            "{ }",
            // Not valid, or a key twice, at any depth.
            r#"{"a": 1, "a": 2}"#,
            r#"{"m": [{"role": "user", "role": "x"}]}"#,
            r#"{"o": {"k": 1, "k": 2}}"#,
            r#"{"content": [{"k": 1, "k": 2}]}"#,
            r#"{"a": 1 "b": 2}"#,
            r#"{"m": [1,]}"#,
            r#"{"m": [,1]}"#,
            r#"{"m": [1 2]}"#,
            r#"{"a": 01}"#,
            r#"{"a": [}]"#,
            r#"{"a": tru}"#,
            r#"{"a":}"#,
            r#"{"a" 1}"#,
            r#"{1: 2}"#,
            // A line that is not JSON may not end where the line does.
            r#"{"a": [1, 2"#,
            r#"{"a": "open"#,
            r#"{"a": {"b": 1}"#,
            r#"{"a": 1,"#,
        ];
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("object.json");
        for text in texts {
            // After a line and some bytes, as an element of a document is.
            let before = format!("[{message},\n ");
            std::fs::write(&path, format!("{before}{text}]")).expect("written");
            let at = At {
                offset: before.len() as u64,
                line: 2,
            };
            // Its lists tallied with each `--format`, and not tallied.
            let tallied = formats().map(|format| (Lists::Tallied(format), format));
            for (lists, format) in tallied.chain([(Lists::Skipped, None)]) {
                let walked = walk_object(&path, at, text.len(), lists, 0).expect("reads");
                let mut tape = Tape::default();
                let scanned = tape.scan(text, 1).map(|node| shallow_scanned(node));
                match (walked, scanned) {
                    (Some(walked), Some(Some(shallow))) => {
                        assert_eq!(walked.shallow, shallow, "{text}");
                        let finds = match lists {
                            Lists::Tallied(_) => {
                                finds_in_members(&mut Tape::default(), text, 1, format)
                            }
                            Lists::Skipped => false,
                        };
                        assert_eq!(walked.finds, finds, "{text}, {format:?}");
                        assert_eq!(walked.len, text.len());
                    }
                    (None, None) => {}
                    (walked, scanned) => panic!(
                        "{text}: read a piece at a time {}, scanned {}",
                        walked.is_some(),
                        scanned.is_some()
                    ),
                }
            }
        }
    }

    /// No `--format`, and each.
    fn formats() -> impl Iterator<Item = Option<Format>> {
        std::iter::once(None).chain(Format::ALL.map(Some))
    }

    /// How the document `text`, written to a file, streams.
    fn planned(text: &str) -> Option<DocPlan> {
        planned_with(text, &InputOptions::default())
    }

    /// How the document `text`, written to a file, streams when read as `options` say.
    fn planned_with(text: &str, options: &InputOptions) -> Option<DocPlan> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("document.json");
        std::fs::write(&path, text).expect("the document is written");
        plan(&path, options, Layout::Document).expect("the document reads")
    }

    #[test]
    fn a_list_in_an_object_below_the_top_level_streams_without_a_path() {
        let list = LIST;
        let nest = |levels: usize| {
            let mut text = format!(r#"{{"messages": {list}, "task_id": "t-1"}}"#);
            for level in 0..levels {
                text = format!(r#"{{"id": {level}, "level{level}": {text}}}"#);
            }
            text
        };
        let plan = planned(&nest(2)).expect("streamed");
        assert_eq!(plan.path, keys(&["level1", "level0", "messages"]));
        match plan.what {
            What::List { name, .. } => assert_eq!(name, "/level1/level0/messages (task_id t-1)"),
            What::Runs { .. } => panic!("streamed as runs"),
        }
        // As deep as the search of the whole document finds a list, it streams; one
        // level further down, the search finds nothing, and the document is read whole
        // (to say so).
        assert!(planned(&nest(SEARCH_DEPTH - 1)).is_some());
        assert!(planned(&nest(SEARCH_DEPTH)).is_none());
        // Lists in two members: the members of the innermost object holding them are
        // read as runs, in key order, named after that object's id.
        for (text, path, pointer, depth) in [
            (
                format!(r#"{{"a": {{"messages": {list}}}, "b": {{"messages": {list}}}}}"#),
                keys(&[]),
                "",
                1,
            ),
            (
                format!(r#"{{"n": 1, "x": {{"b": {{"y": {list}}}, "id": 3, "a": {list}}}}}"#),
                keys(&["x"]),
                "/x",
                2,
            ),
        ] {
            let plan = planned(&text).expect("streamed");
            assert_eq!((plan.path, plan.pointer.as_str()), (path, pointer));
            match plan.what {
                What::Runs {
                    depth: d,
                    select: None,
                    object: Some(members),
                } => {
                    assert_eq!(d, depth);
                    assert_eq!(members.names.len(), usize::from(depth == 2));
                    let places: Vec<(&str, u64)> = members
                        .places
                        .iter()
                        .map(|place| (place.key.as_str(), place.line))
                        .collect();
                    assert_eq!(places, [("a", 1), ("b", 1)]);
                    for place in &members.places {
                        let at = place.offset as usize..(place.offset + place.len) as usize;
                        let value: Value = serde_json::from_str(&text[at]).expect("a value");
                        assert!(value.is_object() || value.is_array());
                    }
                }
                _ => panic!("not streamed as members: {text}"),
            }
        }
        // Read whole: an object that holds a ToolBench answer's lists, or an
        // OpenTelemetry export.
        for text in [
            format!(
                r#"{{"a": {{"answer_generation": {{"train_messages": [{list}]}}, "messages": {list}}}}}"#
            ),
            format!(r#"{{"a": {{"resourceSpans": [], "messages": {list}}}}}"#),
        ] {
            assert!(planned(&text).is_none(), "{text}");
        }
    }

    #[test]
    fn a_path_of_keys_streams_the_list_it_selects_named_after_its_object() {
        let list = LIST;
        // The id comes after the list, in the object holding it; an `id` elsewhere on
        // the way names nothing.
        let text = format!(
            r#"{{"id": "outer", "data": {{"meta": {{"id": "deep"}}, "messages": {list}, "task_id": "t-1"}}, "n": [1]}}"#
        );
        let plan = planned_with(&text, &select("data.messages")).expect("streamed");
        assert_eq!(plan.path, keys(&["data", "messages"]));
        assert_eq!(plan.pointer, "/data/messages");
        assert!(!plan.late);
        match plan.what {
            What::List { format, name, .. } => {
                assert_eq!(format, Format::OpenAi);
                assert_eq!(name, "/data/messages (task_id t-1)");
            }
            What::Runs { .. } => panic!("streamed as runs"),
        }
        // Runs under a path of keys are searched one by one, as the whole reading
        // searches what a path selects.
        let runs = format!(r#"{{"data": {{"runs": [{{"id": "r1", "messages": {list}}}]}}}}"#);
        let plan = planned_with(&runs, &select("data.runs")).expect("streamed");
        assert!(matches!(
            plan.what,
            What::Runs {
                depth: 1,
                select: None,
                object: None
            }
        ));
        // What is not a list of a transcript, runs or an object that holds one is read
        // whole: no value, a value that is no array, a list that holds no transcript,
        // a key twice.
        for (text, path) in [
            (text.as_str(), "data.nothing"),
            (text.as_str(), "data.task_id"),
            (r#"{"data": {"list": [1, 2]}}"#, "data.list"),
            (
                &format!(r#"{{"data": {{"messages": {list}, "task_id": 1, "task_id": 2}}}}"#),
                "data.messages",
            ),
        ] {
            assert!(
                planned_with(text, &select(path)).is_none(),
                "{path} in {text}"
            );
        }
    }

    #[test]
    fn a_path_with_indexes_or_to_an_object_streams_what_it_leads_to() {
        let list = LIST;
        let run = |id: usize| format!(r#"{{"messages": {list}, "task_id": "t-{id}"}}"#);
        let text = format!(
            r#"{{"data": [{}, {}, {}], "n": [1]}}"#,
            run(0),
            run(1),
            run(2)
        );
        let list_named = |plan: DocPlan, expected: &str| match plan.what {
            What::List { name, .. } => assert_eq!(name, expected),
            What::Runs { .. } => panic!("streamed as runs"),
        };
        // An index on the way, as a JSON pointer's token too.
        for path in ["data[1].messages", "/data/1/messages"] {
            let plan = planned_with(&text, &select(path)).expect("streamed");
            assert_eq!(plan.pointer, "/data/1/messages");
            list_named(plan, "/data/1/messages (task_id t-1)");
        }
        // A path ending at an object: searched as a document is, its list named after
        // the object holding it.
        for path in ["data[2]", "/data/2"] {
            let plan = planned_with(&text, &select(path)).expect("streamed");
            assert_eq!(
                plan.path,
                [
                    Step::Key("data".into()),
                    Step::Index(2),
                    Step::Key("messages".into())
                ]
                .map(|step| match step {
                    Step::Index(i) if path.starts_with('/') => Step::Key(i.to_string()),
                    step => step,
                })
            );
            list_named(plan, "/data/2/messages (task_id t-2)");
        }
        let object = format!(r#"{{"a": 1, "run": {}, "z": [2]}}"#, run(5));
        list_named(
            planned_with(&object, &select("run")).expect("streamed"),
            "/run/messages (task_id t-5)",
        );
        // Indexes then `[*]`: runs the rest selects in.
        let nested = format!(r#"[{{"runs": [{}, {}]}}]"#, run(0), run(1));
        let plan = planned_with(&nested, &select("[0].runs[*].messages")).expect("streamed");
        assert_eq!(plan.pointer, "/0/runs");
        assert!(matches!(
            plan.what,
            What::Runs {
                depth: 3,
                select: Some(_),
                object: None
            }
        ));
        // Read whole: an index past the end, an index on an object, a key on an array,
        // an object that holds no transcript, an element after it that is not JSON.
        for (text, path) in [
            (text.as_str(), "data[3]"),
            (text.as_str(), "data[3].messages"),
            (text.as_str(), "[0]"),
            (text.as_str(), "data.messages"),
            (text.as_str(), "n"),
            (r#"{"data": {"x": {"y": 1}}}"#, "data"),
            (
                &format!(r#"{{"data": [{}, {{"a": 1, "a": 2}}]}}"#, run(0)),
                "data[0]",
            ),
        ] {
            assert!(
                planned_with(text, &select(path)).is_none(),
                "{path} in {text}"
            );
        }
    }

    #[test]
    fn an_array_that_is_no_transcript_is_searched_again_in_its_messages() {
        // The first element is a chat message, not searched as a run the first time;
        // the array is no transcript (two of its three elements are no messages), so it
        // is searched again, and the list inside the message makes its elements runs.
        let text = r#"[{"role": "assistant", "content": "x", "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]}, {"a": 1}, {"b": 2}]"#;
        let what = planned(text).map(|plan| plan.what);
        assert!(
            matches!(
                what,
                Some(What::Runs {
                    depth: 1,
                    select: None,
                    object: None
                })
            ),
            "streamed as runs"
        );
        // Without the list inside the message, nothing is found: it is read whole.
        let text = r#"[{"role": "assistant", "content": "x"}, {"a": 1}, {"b": 2}]"#;
        assert!(planned(text).is_none());
    }

    /// Every value in `value` (itself included) that is an object, with its depth.
    fn objects<'v>(value: &'v Value, depth: usize, into: &mut Vec<(&'v Value, usize)>) {
        match value {
            Value::Object(map) => {
                into.push((value, depth));
                map.values().for_each(|v| objects(v, depth + 1, into));
            }
            Value::Array(items) => items.iter().for_each(|v| objects(v, depth + 1, into)),
            _ => {}
        }
    }

    #[test]
    fn a_run_said_to_find_a_transcript_from_its_scan_finds_one_when_searched() {
        // Every object of every repository document, at its depth: when the scan says
        // the search finds a transcript in it, the search of its value does.
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut told = std::collections::HashMap::new();
        for dir in ["traces", "tests/fixtures"] {
            let mut stack = vec![root.join(dir)];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir).unwrap() {
                    let path = entry.unwrap().path();
                    if path.is_dir() {
                        stack.push(path);
                        continue;
                    }
                    let Ok(text) = std::fs::read_to_string(&path) else {
                        continue;
                    };
                    let Ok(document) = serde_json::from_str::<Value>(&text) else {
                        continue;
                    };
                    let mut all = Vec::new();
                    objects(&document, 0, &mut all);
                    for (value, depth) in all {
                        let text = value.to_string();
                        for format in formats() {
                            if !finds_in_members(&mut Tape::default(), &text, depth, format) {
                                continue;
                            }
                            *told.entry(format).or_insert(0) += 1;
                            assert!(
                                search::finds(value, format, depth),
                                "{} at depth {depth}, {format:?}",
                                path.display()
                            );
                        }
                    }
                }
            }
        }
        // Without a format, and with each chat format.
        for (format, least) in [
            (None, 25),
            (Some(Format::OpenAi), 10),
            (Some(Format::Anthropic), 10),
            (Some(Format::Responses), 10),
        ] {
            assert!(
                told[&format] > least,
                "{told:?} objects told from their scan"
            );
        }
        // What the scan does not tell: a list that is no transcript, a `tree` a
        // ToolBench answer may skip, elements that are not objects, too deep.
        let plain = r#"{"id": 1, "messages": [{"role": "user", "content": "a"}]}"#;
        assert!(finds_in_members(&mut Tape::default(), plain, 1, None));
        assert!(!finds_in_members(
            &mut Tape::default(),
            plain,
            SEARCH_DEPTH,
            None
        ));
        for text in [
            r#"{"id": 1, "tags": [1, 2]}"#,
            r#"{"tree": [{"role": "user", "content": "a"}]}"#,
            r#"{"messages": ["a", "b"]}"#,
            r#"{"messages": [{"x": 1}, {"y": 2}, {"role": "user", "content": "a"}]}"#,
        ] {
            assert!(
                !finds_in_members(&mut Tape::default(), text, 1, None),
                "{text}"
            );
        }
        // A list of another format than the one given is none; a ToolBench search
        // tree is searched only by its format's search (or with none given), and
        // found whole.
        assert!(!finds_in_members(
            &mut Tape::default(),
            plain,
            1,
            Some(Format::Mcp)
        ));
        let tree = r#"{"node_type": "Action", "children": [], "messages": [{"role": "user", "content": "a"}]}"#;
        let value: Value = serde_json::from_str(tree).unwrap();
        assert!(!search::finds(&value, Some(Format::OpenAi), 1));
        for format in formats() {
            let finds = finds_in_members(&mut Tape::default(), tree, 1, format);
            assert!(!finds || search::finds(&value, format, 1), "{format:?}");
            assert_eq!(finds, format.is_none(), "{format:?}");
        }
    }
}
