//! Streamed reading of transcript files: records are handed on as the input is read,
//! never the whole input at once.
//!
//! These shapes stream:
//! - a file of one transcript element per line (an MCP log, a Claude Code session
//!   log, a Codex rollout, chat messages one per line), read line by line through
//!   its format's incremental adapter ([`Lines`]), which holds only what it has not
//!   handed on yet: an MCP log the requests still open; a turn-based transcript the
//!   records after a call still unanswered at the next assistant message (whether it
//!   gets a `missing` result there is known when the call is answered, or at the end).
//!   A Claude Code log or a Codex rollout gives its records thread by thread (session,
//!   sidechain), in the order the threads start, as reading the whole file does: the
//!   first thread streams, and every later one is held, as records, until the end of
//!   the file, since a later line may still belong to the first, unless a first pass
//!   (below) found where each thread ends: then a thread is finished at its last line
//!   and the next one streams, so a file of sessions one after the other holds only
//!   the session being read.
//!   What must be known before the first record is read in a first pass that keeps
//!   nothing ([`plan_lines`]): the format (the first element that says it), with
//!   `--format` whether an element is of the forced format, and for Codex rollouts and
//!   Responses items the ids of the calls output items answer.
//! - a JSON document, read one element of one array at a time. A first pass that keeps
//!   nothing but the small members of the top-level object ([`doc_plan`]) finds the
//!   array: a top-level list of messages or of runs; the one array member of the
//!   top-level object that holds the transcript (`messages` of an OpenAI or Anthropic
//!   chat, a Gemini CLI session; `steps` of an ATIF trajectory; `loglines` of a Claude
//!   Code export; `runs`, a Codex or Responses list), or of an object below it; or,
//!   with a `--select` path of keys and indexes then `[*]` (`runs[*].messages`), the
//!   array its steps lead to (or the object's members, in key order), and with one of
//!   keys and indexes only (`data[0]`), the list or runs it selects or found in the
//!   object it selects. Transcripts found in
//!   several members (`{"sessions": {"s-1": {…}, "s-2": {…}}}`) stream as the runs of
//!   the innermost object that holds them all: its members, one at a time, each
//!   searched as the search of that object searches it, read from where the first
//!   pass found them in the key order that search meets them in. A scanner finds each
//!   element's bytes, which are parsed and then either fed to the format's incremental
//!   adapter (a message list, as a file of lines is) or searched for transcripts (or
//!   selected in) and adapted as the whole document would be (runs), then dropped. The
//!   common run, an object whose one array member is a list of plain OpenAI messages
//!   beside scalar members (an id, a model), is not parsed: one scan checks it and notes
//!   where its members are ([`Tape`]), and its records are built from its text and
//!   located by the scan ([`Runs::read_plain`], [`openai::read_plain`]); any other run
//!   is parsed and searched. A run of a MiB or more is not held: the first pass and
//!   the scanner only measure it, and read it again from the file a piece at a time
//!   (one member's value, or one element of a list, at a time). One that is an object
//!   of one list of chat messages (OpenAI, Anthropic, Gemini CLI) beside scalar members
//!   and small members that hold no transcript (a `tools` list, a `metadata` object; with
//!   `--select`, the run or the member of it the rest of the path selects), as
//!   the tally of its messages' formats finds it, is read a few messages at a time
//!   ([`run::OpenRun`]): plain OpenAI messages from their text, once a first reading that
//!   keeps nothing has found every one plain (after a record is handed on, the run could
//!   no longer be read from its value instead) and whether it gives a record; any other
//!   list a message at a time, each parsed alone and read by its format's adapter as a
//!   document's message list is. A large run of any other shape is read whole from the
//!   file. A minified document on one line streams the same way.
//!   Still read whole: ToolBench trees; OpenTelemetry exports inside runs are held to
//!   the end.
//! - a file of JSON documents one per line, on more than one line, a line at a time
//!   ([`DocLines`]): each line's document is parsed, searched (or `--select`ed in) and
//!   adapted as reading the whole file does it, handed on, and dropped, and the traces
//!   named after its line then end; a line that is a plain run is read from its text,
//!   as a plain run of a document is ([`DocLines::read_plain`]), a large one a few
//!   messages at a time from the file ([`run::OpenRun`]): the line reader only measures
//!   a line of [`LARGE_RUN`] bytes or more ([`DocLines::read_large`]), which is read whole
//!   from the file when it is not such a run. A line that holds no transcript is a bad line
//!   once any line holds one, and the first of them says the file is in no format if
//!   none does: such lines are kept, as places, until a line with a transcript (they
//!   come before its records) or the end.
//! - An OpenTelemetry export (a document, an array of them, or one export request per
//!   line) is scanned span by span and never held ([`otlp`]): each span is parsed
//!   alone and dropped, keeping of a tool span only its place, start and trace. Its
//!   records are then made from each tool span read again, in start order, as a
//!   reading of the whole file hands them on, and each trace is ended after its last
//!   record.
//!
//! What comes out is exactly what reading the whole input gives ([`super::document`]):
//! the same records, problems, order, names, `seq` and locations. One thing needs the
//! whole input: whether it holds more than one trace, which decides whether records
//! carry a `trace` field. A chat transcript (OpenAI, Anthropic, Gemini CLI, Responses
//! items, ATIF steps) or a document's list of native records is one trace whatever it
//! holds: its records stream from the first. Those of an MCP, Claude Code or Codex log,
//! or of a document of runs, are held back until a second trace shows up (from then on
//! they stream) or the input ends. Before the records of a large run are handed on, a
//! first pass over the runs after it, which keeps nothing and stops at the second
//! trace, decides ([`Stream::decide_before_run`]). A file of lines still
//! undecided after its first MiB (or a Claude Code or Codex log of that size) is read
//! through once first, keeping
//! nothing but its count of traces and where each thread ends ([`Stream::survey`]);
//! from then on its records stream. That first pass builds no record of an MCP log's
//! common line: it reads the line only as far as the session of its records
//! ([`mcp::Reader::line_session`]), and any other line in full; a line of a session
//! already known to have records it only places, without checking it
//! ([`mcp::quick_session`]). A stream that cannot be read again (standard
//! input, a pipe) of such a log is read as it comes only until a file of it would be
//! read through first ([`Stream::decide_before_first_pass`]): still of one trace
//! there, it is copied to a temporary file and read from there as that file is; one
//! that a first pass must read from its start (a document, a Codex rollout,
//! Responses items) is copied first (`trace::spool`).
//!
//! One thing only a stream says: where a trace ends. Each run of a document of runs is
//! read through before the next, so once its records are handed on, its traces (named
//! after its place in the document, so no later run's) have ended, and the stream says so
//! ([`Handed::TraceEnd`]) when records name their trace: the checker then ends them at
//! once, and the stream forgets their names, so neither keeps anything per run read.
//! A file of lines whose first pass found where each trace ends says so too: a thread
//! of a Claude Code log or a Codex rollout once it is finished at its last line, a
//! session of an MCP log once its last line with a record is read (the adapter then
//! forgets the session's open requests, which the checker answers `missing` at the
//! end of the trace, as at the end of the file). A name two of the adapter's traces
//! share (records of no session and a session named `""`) ends only with the input.
//!
//! A document is streamed only when it has been read through once, without keeping
//! it, and found to be valid JSON without a duplicate key ([`valid_without_duplicates`]):
//! an error anywhere would make the whole file an error, which must be known before
//! any record of it is handed on.

pub(super) mod doc_plan;
pub(super) mod otlp;
mod run;
mod scan;

use std::borrow::Cow;
use std::collections::VecDeque;
use std::io::{self, BufRead};
use std::rc::Rc;

use memchr::memmem::Finder;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::Value;

use super::detect::{element_like, shallow_scanned};
use super::document::{
    Current, Doc, adapt, foreign_message, holds_nothing_at, is_empty_transcript, line_doc,
    malformed, no_transcript, parse_unique, selection_problem, selects_nothing_at, sub_trace_name,
    trace_name, unknown_format_at,
};
use super::responses::Answered;
use super::search::{self, Found, Search};
use super::select::Step;
use super::shared::{Answers, Learning, Map, Named, Pairer};
use super::unique::{Node, Tape};
use super::{
    Detected, Element, Emit, Emitted, Entry, Format, InputOptions, Layout, Out, Problem, Selector,
    Site, Source, anthropic, atif, claude_code, codex, gemini, mcp, openai, otel, responses,
};
use crate::trace::json_index::{child_pointer, skip_ws, value_end};
use crate::trace::reader::{Line, LineContent, LineReader};
use crate::trace::record::Known;
use crate::trace::spool::Spool;
use crate::trace::{Location, Pointer, Record};
use doc_plan::{DocPlan, Place, What};
use run::OpenRun;
use scan::{Scanner, changed};

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
    /// A problem of the transcript as a whole, handed on before its first record
    /// (`--format` naming another format than its elements').
    first: Option<Problem>,
    /// For a file, which can be read again: a stream of it from its start, for a first
    /// pass ([`Stream::survey`]).
    reopen: Option<Reopen>,
    /// For a stream that cannot be read again (standard input, a pipe): a stream of
    /// the same bytes from a file that holds all of them, read as that file is
    /// ([`Stream::decide_before_first_pass`]).
    pub(super) again: Option<Again>,
    /// Traces the first pass counted.
    surveyed: usize,
    /// A line of an MCP log that is a large batch, being read.
    batch: Option<OpenBatch>,
    /// Where in the input the last document read starts.
    offset: u64,
    /// The name of the transcript a streamed document's array is (empty for a file of
    /// lines, whose traces the adapter names).
    transcript: String,
    /// Whether a problem of the whole document comes at its end.
    late: bool,
    /// For a stream kept in a temporary file: the file, which stays open while the
    /// stream is read, as a first pass reopens it by a path that names its handle.
    spool: Option<Rc<Spool>>,
    /// What the common line of a log was read into, emptied and kept for the next.
    line_out: Out,
    /// For a document's list or a file of one element per line: its file, to look
    /// ahead at what its results answer when its records wait for a call
    /// ([`Lines::look_ahead`]).
    ahead: Option<Rc<std::path::Path>>,
}

type Reopen = Box<dyn FnOnce() -> io::Result<Option<Stream>>>;

/// A stream of the same bytes as another from the file at the path it is given.
pub(crate) type Again = Box<dyn FnOnce(&std::path::Path) -> io::Result<Option<Stream>>>;

/// Bytes of input after which a file whose records are still held back (it is not
/// known yet whether it holds more than one trace) or given thread by thread is read
/// through once first, so that its records stream from then on; and a file split by
/// `--trace-by`, to find where its traces end (`check::trace_ends`).
/// (Unit tests and fuzzing use a small one, to read small files both ways.)
pub(crate) const SURVEY_AFTER: u64 = if cfg!(any(test, fuzzing)) {
    2048
} else {
    1 << 20
};

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
    /// The tool spans of an OpenTelemetry export, read again in start order.
    Otel(otlp::Replay),
}

/// What turns documents into records.
enum Reader {
    Lines(Lines),
    Runs(Runs),
    /// Documents one per line, each searched and adapted alone.
    DocLines(DocLines),
    /// An OpenTelemetry export's replay hands on records itself.
    Otel,
}

/// The adapter of a file of one transcript element per line, read one element at a
/// time: the whole file is one transcript (one trace per session in a log of
/// sessions), and each adapter holds only what it has not handed on yet.
enum Lines {
    Mcp(mcp::Reader, SessionEnds),
    ClaudeCode(claude_code::Reader),
    Codex(codex::Reader),
    /// Chat messages (OpenAI, Anthropic, Gemini CLI), each read by its format's
    /// function.
    Messages(Pairer, fn(&Element<'_>, &mut Pairer)),
    /// OpenAI Responses items, with the built-in calls output items answer.
    Responses(Pairer, Answered),
    /// ATIF steps (of a trajectory's `steps`).
    Atif(Pairer),
    /// Native records (of a document's array).
    Native,
}

impl Lines {
    /// The adapter of a file of lines with what `plan` found; `None` for a format
    /// whose adapter reads its transcript whole.
    fn new(plan: LinePlan) -> Option<Lines> {
        match plan.format {
            Format::Atif | Format::Native => None,
            format => Lines::of(format, plan.codex_answered, plan.responses_answered),
        }
    }

    /// The adapter of a transcript in `format`, given the built-in calls output items
    /// answer in it; `None` for a format whose adapter reads its transcript whole.
    fn of(format: Format, codex_answered: Answered, responses_answered: Answered) -> Option<Lines> {
        Some(match format {
            Format::Mcp => Lines::Mcp(mcp::Reader::default(), SessionEnds::default()),
            Format::ClaudeCode => Lines::ClaudeCode(claude_code::Reader::default()),
            Format::Codex => Lines::Codex(codex::Reader::new(codex_answered)),
            Format::OpenAi => Lines::Messages(Pairer::new(openai::WHY_MISSING), openai::message),
            Format::Anthropic => {
                Lines::Messages(Pairer::new(anthropic::WHY_MISSING), anthropic::message)
            }
            Format::Gemini => Lines::Messages(Pairer::new(gemini::WHY_MISSING), gemini::message),
            Format::Responses => {
                Lines::Responses(Pairer::new(responses::WHY_MISSING), responses_answered)
            }
            Format::Atif => Lines::Atif(Pairer::new(atif::WHY_MISSING)),
            Format::Native => Lines::Native,
            Format::Otel | Format::ToolBench => return None,
        })
    }

    fn element(&mut self, element: &Element<'_>, out: &mut Out) {
        match self {
            Lines::Mcp(reader, _) => reader.element(element, out),
            Lines::ClaudeCode(reader) => reader.element(element, out),
            Lines::Codex(reader) => reader.element(element, out),
            Lines::Messages(pairer, message) => {
                message(element, pairer);
                pairer.flush_in(None, out);
            }
            Lines::Responses(pairer, answered) => {
                responses::item(element, answered.at(out.line()), pairer);
                pairer.flush_in(None, out);
            }
            Lines::Atif(pairer) => {
                // The step before is over: its unanswered calls will not be answered.
                pairer.boundary();
                atif::step(element, pairer);
                pairer.flush_in(None, out);
            }
            Lines::Native => super::document::native_list(std::slice::from_ref(element), out),
        }
    }

    /// Whether a record was read (of chat messages, Responses items or ATIF steps).
    fn recorded(&self) -> bool {
        match self {
            Lines::Messages(pairer, _) | Lines::Responses(pairer, _) | Lines::Atif(pairer) => {
                pairer.recorded()
            }
            Lines::Mcp(..) | Lines::ClaudeCode(_) | Lines::Codex(_) | Lines::Native => false,
        }
    }

    /// The pairer of a transcript whose calls and results it pairs itself.
    fn pairer(&mut self) -> Option<&mut Pairer> {
        match self {
            Lines::Messages(pairer, _) | Lines::Responses(pairer, _) | Lines::Atif(pairer) => {
                Some(pairer)
            }
            Lines::Mcp(..) | Lines::ClaudeCode(_) | Lines::Codex(_) | Lines::Native => None,
        }
    }

    /// The pairers of a transcript whose calls and results it pairs itself: its one,
    /// or one per thread (a Claude Code log's, a Codex rollout's), in the order the
    /// threads started.
    fn pairers(&mut self) -> Vec<&mut Pairer> {
        match self {
            Lines::Messages(pairer, _) | Lines::Responses(pairer, _) | Lines::Atif(pairer) => {
                vec![pairer]
            }
            Lines::ClaudeCode(reader) => reader.threads().pairers().collect(),
            Lines::Codex(reader) => reader.threads().pairers().collect(),
            Lines::Mcp(..) | Lines::Native => Vec::new(),
        }
    }

    /// Whether records wait for the answer of a call that a look ahead could tell
    /// ([`Pairer::waits_unknowing`]): its pairer's, or those of the thread last read
    /// into or at the head ([`threads::Threads::waits_unknowing`]).
    fn waits_unknowing(&mut self) -> bool {
        match self {
            Lines::Messages(pairer, _) | Lines::Responses(pairer, _) | Lines::Atif(pairer) => {
                pairer.waits_unknowing()
            }
            Lines::ClaudeCode(reader) => reader.threads().waits_unknowing(),
            Lines::Codex(reader) => reader.threads().waits_unknowing(),
            Lines::Mcp(..) | Lines::Native => false,
        }
    }

    /// A new adapter of the same transcript, which reads an element as this one would
    /// and notes what its results name ([`Lines::named`], [`run::answers_after`]).
    fn naming(&self) -> Option<Lines> {
        Some(match self {
            Lines::Messages(pairer, message) => Lines::Messages(pairer.naming(), *message),
            Lines::Responses(pairer, answered) => {
                Lines::Responses(pairer.naming(), answered.clone())
            }
            Lines::Atif(pairer) => Lines::Atif(pairer.naming()),
            Lines::ClaudeCode(reader) => Lines::ClaudeCode(reader.naming()),
            Lines::Codex(reader) => Lines::Codex(reader.naming()),
            Lines::Mcp(..) | Lines::Native => return None,
        })
    }

    /// Reads one element as an adapter [`Lines::naming`] made: the pairer its results
    /// were read into (by its index in [`Lines::pairers`]) and what they name. Nothing
    /// is held: each result is named by its element alone, whatever came before it
    /// (the pairer read into is made anew), and only a log's threads are kept, for
    /// where its later elements go.
    fn named(&mut self, element: &Element<'_>, out: &mut Out) -> Option<(usize, Vec<Named>)> {
        match self {
            Lines::ClaudeCode(reader) => reader.named(element, out),
            Lines::Codex(reader) => reader.named(element, out),
            _ => {
                self.element(element, out);
                let pairer = self.pairer()?;
                let named = pairer.take_named();
                *pairer = pairer.naming();
                Some((0, named))
            }
        }
    }

    /// When its transcript's records wait for the answer of a call and it is not known
    /// which ids the results still to be read name, reads those results, the rest of
    /// the transcript from `after` in `path` (`Where`), and says which ids they name
    /// ([`Pairer::learn_answers`]): the records then wait only for calls that one of
    /// them may answer. Once per pairer (a log's threads that started since learn when
    /// one of them waits so); a file that cannot be read to the end of the transcript
    /// is left waiting.
    fn look_ahead(&mut self, path: &std::path::Path, after: Where) {
        if !self.waits_unknowing() {
            return;
        }
        let Some(reading) = self.naming() else {
            return;
        };
        let coming = learn_ahead(self.pairers(), reading, path, after);
        match self {
            Lines::ClaudeCode(reader) => reader.threads().expect(coming),
            Lines::Codex(reader) => reader.threads().expect(coming),
            _ => {}
        }
    }

    /// What its pairer holds, not handed on yet.
    #[cfg(test)]
    fn held(&self) -> usize {
        match self {
            Lines::Messages(pairer, _) | Lines::Responses(pairer, _) | Lines::Atif(pairer) => {
                pairer.held()
            }
            Lines::Mcp(..) | Lines::ClaudeCode(_) | Lines::Codex(_) | Lines::Native => 0,
        }
    }

    /// Whether the transcript is one trace whatever it holds: only an MCP log (by
    /// session) and a Claude Code log or a Codex rollout (by thread) may hold more.
    fn one_trace(&self) -> bool {
        match self {
            Lines::Messages(..) | Lines::Responses(..) | Lines::Atif(_) | Lines::Native => true,
            Lines::Mcp(..) | Lines::ClaudeCode(_) | Lines::Codex(_) => false,
        }
    }

    /// Makes this the adapter of a first pass, which only counts.
    fn survey(&mut self) {
        match self {
            Lines::Mcp(_, ends) => ends.survey = true,
            Lines::ClaudeCode(reader) => reader.threads().survey(),
            Lines::Codex(reader) => reader.threads().survey(),
            Lines::Messages(..) | Lines::Responses(..) | Lines::Atif(_) | Lines::Native => {}
        }
    }

    /// Whether a first pass finds where each trace ends: each thread of a log given
    /// thread by thread, so that the later ones stream, and each session of an MCP log;
    /// a trace is then ended as soon as its last record is handed on.
    fn ends_found_first(&self) -> bool {
        matches!(
            self,
            Lines::Mcp(..) | Lines::ClaudeCode(_) | Lines::Codex(_)
        )
    }

    /// Takes where each trace ends from `survey`, the adapter of a first pass over the
    /// same input.
    fn learn_ends(&mut self, survey: &mut Lines) {
        match (self, survey) {
            (Lines::Mcp(_, ends), Lines::Mcp(_, found)) => ends.learn(found),
            (Lines::ClaudeCode(reader), Lines::ClaudeCode(found)) => {
                reader.threads().set_ends(found.threads().ends());
            }
            (Lines::Codex(reader), Lines::Codex(found)) => {
                reader.threads().set_ends(found.threads().ends());
            }
            _ => {}
        }
    }

    /// Traces known to be in the log so far, held or not: a log given thread by thread
    /// holds a later thread's records, but its count is known as it is read.
    fn traces(&mut self) -> usize {
        match self {
            Lines::ClaudeCode(reader) => reader.threads().traces(),
            Lines::Codex(reader) => reader.threads().traces(),
            Lines::Mcp(..)
            | Lines::Messages(..)
            | Lines::Responses(..)
            | Lines::Atif(_)
            | Lines::Native => 0,
        }
    }

    /// After a first pass over the transcript named `transcript`, when its adapter
    /// found its traces itself (an MCP log's sessions): how many there are, and the
    /// names more than one of the adapter's traces have. `None` when the records
    /// handed on say ([`Finisher::count`]).
    fn traces_found(&self, transcript: &str) -> Option<(usize, FxHashSet<String>)> {
        match self {
            Lines::Mcp(_, ends) => Some(ends.traces(transcript)),
            _ => None,
        }
    }

    /// Notes what reading document `index` emitted, `out`, before it is handed on: in
    /// a first pass over an MCP log, the sessions it has records of.
    fn read(&mut self, index: usize, out: &Out) {
        if let Lines::Mcp(_, ends) = self {
            ends.read(index, out);
        }
    }

    /// The adapter's traces (by their names within the transcript) that have ended
    /// once what reading document `index` emitted is handed on: no record of theirs
    /// follows. Known only after a first pass ([`Lines::learn_ends`]).
    fn ended(&mut self, index: usize) -> Vec<Option<String>> {
        match self {
            Lines::Mcp(reader, ends) => ends.ended(index, reader),
            Lines::ClaudeCode(reader) => reader.threads().take_ended(),
            Lines::Codex(reader) => reader.threads().take_ended(),
            Lines::Messages(..) | Lines::Responses(..) | Lines::Atif(_) | Lines::Native => {
                Vec::new()
            }
        }
    }

    fn finish(self, out: &mut Out) {
        match self {
            Lines::Mcp(..) | Lines::Native => {}
            Lines::ClaudeCode(reader) => reader.finish(out),
            Lines::Codex(reader) => reader.finish(out),
            Lines::Messages(pairer, _) | Lines::Responses(pairer, _) => pairer.finish(out),
            Lines::Atif(mut pairer) => {
                pairer.boundary();
                pairer.finish(out);
            }
        }
    }
}

/// Where each session of an MCP log ends: after the last line with a record of it,
/// which a first pass finds. Every record of an MCP log is handed on as its line is
/// read (a request never answered gets its `missing` result from the checker, at the
/// end of its trace), so a session has ended once its last line is read.
///
/// A first pass needs nothing else of the log: its traces are its sessions (one name
/// for the records of no session and a session named `""`), so it reads each common
/// line only as far as its session ([`mcp::Reader::line_session`]), builds no record,
/// and counts nothing apart. Once a session is known to have records, its lines are
/// only placed, their text not checked ([`mcp::quick_session`]): a line of it that
/// gives no record may then end it later than its last record, which only frees its
/// trace later.
#[derive(Default)]
struct SessionEnds {
    /// Whether this is a first pass, which finds the ends.
    survey: bool,
    /// In a first pass: the last document each named session has a record in (or, once
    /// it has one, a later document that names it).
    last: FxHashMap<String, usize>,
    /// In a first pass: the last document with a record of no session.
    unnamed: Option<usize>,
    /// After one: the sessions not ended yet, by the document after which they end,
    /// that first.
    ends: VecDeque<(usize, Option<String>)>,
}

impl SessionEnds {
    /// In a first pass: notes the sessions `out` has records of, emitted when
    /// document `index` was read; whether it has any.
    fn read(&mut self, index: usize, out: &Out) -> bool {
        if !self.survey {
            return false;
        }
        let mut noted = false;
        for item in &out.items {
            if matches!(item.what, super::Emit::Record(_)) {
                self.note(index, item.trace.as_deref());
                noted = true;
            }
        }
        noted
    }

    /// In a first pass: when a document read so far has a record of `session`, notes
    /// that document `index` may have one too, and says so.
    fn note_known(&mut self, index: usize, session: Option<&str>) -> bool {
        let last = match session {
            Some(name) => self.last.get_mut(name),
            None => self.unnamed.as_mut(),
        };
        last.map(|last| *last = index).is_some()
    }

    /// In a first pass: notes that document `index` has a record of `session` (or may
    /// have, for a session known to have records).
    fn note(&mut self, index: usize, session: Option<&str>) {
        if self.note_known(index, session) {
            return;
        }
        match session {
            Some(name) => {
                self.last.insert(name.to_string(), index);
            }
            None => self.unnamed = Some(index),
        }
    }

    /// In a first pass, once it is over: how many traces the sessions are in the
    /// transcript named `transcript`, and the names more than one session has.
    fn traces(&self, transcript: &str) -> (usize, FxHashSet<String>) {
        let mut names: FxHashMap<String, usize> = FxHashMap::default();
        let sessions = self.last.keys().map(|name| Some(name.as_str()));
        for session in sessions.chain(self.unnamed.map(|_| None)) {
            *names
                .entry(sub_trace_name(transcript, session))
                .or_default() += 1;
        }
        let shared = names
            .iter()
            .filter(|(_, sessions)| **sessions > 1)
            .map(|(name, _)| name.clone())
            .collect();
        (names.len(), shared)
    }

    /// Takes the ends `survey`, a first pass, found.
    fn learn(&mut self, survey: &mut SessionEnds) {
        let named = survey.last.drain().map(|(name, last)| (last, Some(name)));
        let unnamed = survey.unnamed.take().map(|last| (last, None));
        let mut ends: Vec<(usize, Option<String>)> = named.chain(unnamed).collect();
        ends.sort_unstable();
        self.ends = ends.into();
    }

    /// The sessions that end once document `index` is read, forgotten by `reader`.
    fn ended(&mut self, index: usize, reader: &mut mcp::Reader) -> Vec<Option<String>> {
        let mut ended = Vec::new();
        while self.ends.front().is_some_and(|(last, _)| *last <= index) {
            let (_, session) = self.ends.pop_front().expect("bug: an end just seen");
            reader.end(&session);
            ended.push(session);
        }
        ended
    }
}

/// Whether a file of one element per line in `format` streams once its format is
/// known, with nothing read ahead: not Codex rollouts and Responses items, whose
/// built-in calls' pairing needs every output item's call id first, nor the formats
/// whose adapters read a transcript whole.
pub(super) fn lines_stream(format: Format) -> bool {
    matches!(
        format,
        Format::Mcp | Format::ClaudeCode | Format::OpenAi | Format::Anthropic | Format::Gemini
    )
}

/// Where the rest of a transcript is in its file, for [`Lines::look_ahead`]: after an
/// element of a list, or in a file of one element per line from a place in a line
/// (with the file's longest line).
#[derive(Clone, Copy)]
enum Where {
    List(run::At),
    Lines(run::At, usize),
}

#[cfg(test)]
thread_local! {
    /// How many times, on this thread, the rest of a transcript was read ahead.
    pub(crate) static LOOKED_AHEAD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Tells each of `pairers` (a transcript's, by their index in [`Lines::pairers`]) that
/// does not know yet what the results still to be read name
/// ([`Pairer::learn_answers`]): the rest of its transcript, from `after` in `path`, each
/// element read as `reading` (an adapter like the one reading the transcript,
/// [`Lines::naming`]) reads it; nothing when the file cannot be read to the
/// transcript's end. Returns what the results of the threads that start later name
/// (a log's, [`threads::Threads::expect`]).
fn learn_ahead(
    pairers: Vec<&mut Pairer>,
    reading: Lines,
    path: &std::path::Path,
    after: Where,
) -> Vec<Answers> {
    #[cfg(test)]
    LOOKED_AHEAD.with(|looked| looked.set(looked.get() + 1));
    let learning = Learning::of(pairers.iter().map(|pairer| &**pairer));
    let learning = match after {
        Where::List(after) => run::answers_after(path, after, reading, learning),
        Where::Lines(from, max_line_bytes) => {
            answers_in_lines(path, from, max_line_bytes, reading, learning)
        }
    };
    match learning {
        Ok(learning) => learning.teach(pairers),
        Err(_) => Vec::new(),
    }
}

/// [`run::Ahead`] of the lines of `path` from `from` (in line `from.line`) to its end,
/// read as the file's reader reads them (a line that is not text, or too long, gives
/// nothing); an error when the file cannot be read to its end.
fn answers_in_lines(
    path: &std::path::Path,
    from: run::At,
    max_line_bytes: usize,
    reading: Lines,
    learning: Learning,
) -> io::Result<Learning> {
    let mut file = std::fs::File::open(path)?;
    io::Seek::seek(&mut file, io::SeekFrom::Start(from.offset))?;
    let input = Box::new(io::BufReader::with_capacity(1 << 16, file));
    let mut reader = LineReader::with_max_line_bytes(input, max_line_bytes);
    let mut ahead = run::Ahead::new(reading, learning, true);
    while let Some(line) = reader.next_line()? {
        if let LineContent::Text(text) = line.content {
            // Numbered from the line `from` is in.
            ahead.element(text, Some(from.line + line.number - 1));
        }
    }
    Ok(ahead.learning())
}

/// What streaming a file of one element per line needs to know before its first
/// record, found by [`plan_lines`].
#[derive(Clone)]
pub(super) struct LinePlan {
    /// The file's format: `--format`'s, or the first element's with a format of its
    /// own (OpenAI when none has).
    pub format: Format,
    /// Whether an element said the format (or `--format` did), rather than the
    /// default.
    pub decided: bool,
    /// With `--format`, the first element clearly of another format when none is
    /// clearly of the forced one: it is reported before any record.
    foreign: Option<Problem>,
    /// Whether a line before that element could not be read (not text, not JSON, a
    /// key twice), which reading the file says before it.
    unread_before_foreign: bool,
    /// The built-in calls output items answer, read as Codex rollout lines and as
    /// Responses items, by line: a built-in call answered anywhere is not given its own
    /// outcome. Shared by the reads of the file (a first pass and the check), not
    /// copied.
    codex_answered: Answered,
    responses_answered: Answered,
    /// Whether the lines read were enough, before the end of the input: a stream's
    /// head that is enough decides how the whole stream is read.
    pub enough: bool,
}

impl LinePlan {
    /// Whether the lines stream as they are read whole, as far as `--format` goes.
    /// When it fits no element, that is said where reading the file whole says it:
    /// after the problems of every line before the first element of another format,
    /// which a stream has not read yet when it hands on its first item. A file with
    /// such a problem is read whole.
    pub(super) fn fits(&self) -> bool {
        self.foreign.is_none() || !self.unread_before_foreign
    }
}

/// Reads `source`, a file of one element per line, as far as needed to know what
/// reading it needs ([`LinePlan`]), keeping no line: to the first element that says
/// its format, on to the end for the call ids a Codex or Responses file answers, or to
/// the first element of the `--format` given.
pub(super) fn plan_lines(
    source: Source<'_>,
    options: &InputOptions,
    max_line_bytes: usize,
) -> io::Result<LinePlan> {
    use super::detect::{Signal, signal};
    let forced = options.format;
    let mut plan = LinePlan {
        format: forced.unwrap_or(Format::OpenAi),
        decided: forced.is_some(),
        foreign: None,
        unread_before_foreign: false,
        codex_answered: Answered::default(),
        responses_answered: Answered::default(),
        enough: false,
    };
    // Which built-in calls an output item answers, as either format.
    let (mut codex_calls, mut responses_calls) = (BuiltinCalls::default(), BuiltinCalls::default());
    // With `--format`, whether an element of that format was met, and the first
    // element clearly of another.
    let mut own = forced.is_none();
    let mut other: Option<(Location, Format)> = None;
    let mut reader = LineReader::with_max_line_bytes(source.reader()?, max_line_bytes);
    while let Some(line) = reader.next_line()? {
        let LineContent::Text(text) = line.content else {
            plan.unread_before_foreign |= other.is_none();
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        // A large batch says its format, and holds no built-in call, without a value
        // of it. A line with a key twice is not read, but still says the file's format.
        let (value, unique, signal) = match large_batch(text) {
            Some(batch) => (None, true, batch.signal()),
            None => {
                let (value, unique) = match parse_unique(text) {
                    Some(value) => (value, true),
                    None => match serde_json::from_str::<Value>(text) {
                        Ok(value) => (value, false),
                        Err(_) => {
                            plan.unread_before_foreign |= other.is_none();
                            continue;
                        }
                    },
                };
                let signal = signal(&value);
                (Some(value), unique, signal)
            }
        };
        plan.unread_before_foreign |= !unique && other.is_none();
        let strong = match signal {
            Signal::Strong(format) => Some(format),
            _ => None,
        };
        if !plan.decided
            && let Some(format) = strong
        {
            plan.format = format;
            plan.decided = true;
        }
        if unique {
            if !own {
                match (strong, forced) {
                    (Some(format), Some(forced)) if format == forced => {
                        own = true;
                        other = None;
                    }
                    (Some(format), Some(_)) if other.is_none() => {
                        let loc = Location {
                            line: line.number,
                            offset: line.offset,
                            len: text.len() as u64,
                            pointer: Default::default(),
                        };
                        other = Some((loc, format));
                    }
                    _ => {}
                }
            }
            // Until the format is known, as either; then only as the one it is.
            let value = value.iter();
            if !plan.decided || plan.format == Format::Codex {
                let (calls, answers) = (
                    codex::builtin_calls(value.clone()),
                    codex::answered(value.clone()),
                );
                codex_calls.line(line.number, calls, answers);
            }
            if !plan.decided || plan.format == Format::Responses {
                let (calls, answers) = (
                    responses::builtin_calls(value.clone()),
                    responses::answered(value),
                );
                responses_calls.line(line.number, calls, answers);
            }
        }
        let answers = matches!(plan.format, Format::Codex | Format::Responses);
        if plan.decided && own && !answers {
            plan.enough = true;
            break;
        }
    }
    // Kept while the file is read: the lines of its built-in calls answered. Every
    // line that can be read counted, as the format was then undecided or this one.
    if plan.format == Format::Codex {
        let answered = |value: &Value| codex::answered(std::iter::once(value));
        plan.codex_answered = codex_calls.finish(source, max_line_bytes, answered)?;
    }
    if plan.format == Format::Responses {
        let answered = |value: &Value| responses::answered(std::iter::once(value));
        plan.responses_answered = responses_calls.finish(source, max_line_bytes, answered)?;
    }
    if let (Some(forced), Some((loc, format))) = (forced, other) {
        plan.foreign = Some(malformed(loc, foreign_message(forced, format)));
    }
    Ok(plan)
}

/// Which built-in calls of a file of one element per line an output item answers,
/// found line by line by [`plan_lines`]: as the lines of those calls, since a call is
/// paired with an output item that answers it anywhere in the file (before it, in
/// another session), and keeping the id of every call answered would hold them all.
///
/// A call is nearly always answered a few lines after it: while it waits among the
/// last [`PENDING_CALLS`] calls, an output item with its id marks its line answered
/// and its id is dropped. A call that waits longer, or that no later output answers
/// (a `web_search_call` carries its own outcome), keeps its id until the end, when a
/// second read of the file looks for outputs with the ids kept.
#[derive(Default)]
struct BuiltinCalls {
    /// The calls not yet answered among the last ones, by id: their lines.
    pending: FxHashMap<String, Vec<u64>>,
    /// How many lines `pending` holds.
    pending_lines: usize,
    /// The calls left to the second read.
    kept: Kept,
    /// The lines of the calls known to be answered.
    answered: Vec<u64>,
}

/// How many built-in calls [`BuiltinCalls`] waits for an answer to, line by line (in
/// tests, a few, so that their calls take both ways).
const PENDING_CALLS: usize = if cfg!(test) { 2 } else { 4096 };

impl BuiltinCalls {
    /// Line `number`, which holds the built-in calls `calls` and output items that
    /// answer the ids `answers` (a line holds one item, so one or the other).
    fn line(&mut self, number: u64, calls: FxHashSet<String>, answers: FxHashSet<String>) {
        for id in calls {
            self.pending.entry(id).or_default().push(number);
            self.pending_lines += 1;
        }
        for id in answers {
            if let Some(lines) = self.pending.remove(&id) {
                self.pending_lines -= lines.len();
                self.answered.extend(lines);
            }
            self.kept.take(&id, &mut self.answered);
        }
        if self.pending_lines > PENDING_CALLS {
            for (id, lines) in self.pending.drain() {
                self.kept.add(id, lines);
            }
            self.pending_lines = 0;
        }
    }

    /// The lines of the calls answered, once every line was given: the calls still
    /// waiting are looked up by a second read of `source` (only if there are any),
    /// which reads each line's answers as `answered` does. Only a line an output item
    /// may be on is parsed there: one with the bytes `_call_output` (every output
    /// item's type ends so), or with a `\u` escape, which may spell them.
    fn finish(
        mut self,
        source: Source<'_>,
        max_line_bytes: usize,
        answered: impl Fn(&Value) -> FxHashSet<String>,
    ) -> io::Result<Answered> {
        for (id, lines) in self.pending.drain() {
            self.kept.add(id, lines);
        }
        if !self.kept.is_empty() {
            let (output, escape) = (Finder::new("_call_output"), Finder::new("\\u"));
            let mut reader = LineReader::with_max_line_bytes(source.reader()?, max_line_bytes);
            while let Some(line) = reader.next_line()? {
                let LineContent::Text(text) = line.content else {
                    continue;
                };
                if output.find(text.as_bytes()).is_none() && escape.find(text.as_bytes()).is_none()
                {
                    continue;
                }
                // As the first read counts them: lines that parse, without a key twice.
                let Some(value) = parse_unique(text) else {
                    continue;
                };
                for id in answered(&value) {
                    self.kept.take(&id, &mut self.answered);
                }
                if self.kept.is_empty() {
                    break;
                }
            }
        }
        self.answered.sort_unstable();
        Ok(Answered::Lines(self.answered.into()))
    }
}

/// Built-in calls by id, kept for a second read: each id with its first call's line,
/// which is all but always its only one (a call id is meant to be unique), and the
/// lines of any further calls with it apart.
#[derive(Default)]
struct Kept {
    first: FxHashMap<Box<str>, u64>,
    /// By the line of the first call with their id.
    more: FxHashMap<u64, Vec<u64>>,
}

impl Kept {
    /// Keeps the calls on `lines` with the id `id`.
    fn add(&mut self, id: String, lines: Vec<u64>) {
        let mut lines = lines.into_iter();
        let first = match self.first.get(id.as_str()) {
            Some(&first) => first,
            None => {
                let Some(first) = lines.next() else { return };
                self.first.insert(id.into_boxed_str(), first);
                first
            }
        };
        if lines.len() > 0 {
            self.more.entry(first).or_default().extend(lines);
        }
    }

    /// Adds the lines of the calls with the id `id` to `lines`, keeping them no more.
    fn take(&mut self, id: &str, lines: &mut Vec<u64>) {
        if let Some(first) = self.first.remove(id) {
            lines.push(first);
            lines.extend(self.more.remove(&first).unwrap_or_default());
        }
    }

    fn is_empty(&self) -> bool {
        self.first.is_empty()
    }
}

/// How deep the containers of a run are whose members [`Runs::read_plain`] reads from
/// its scan: the run, its list, a message, its calls, a call, and its `function`.
const PLAIN_NOTED: usize = 6;

#[derive(Default)]
struct Runs {
    /// `--format`'s format, if given.
    format: Option<Format>,
    /// How deep in the document the runs are (1 for the elements of a top-level
    /// array), for the search.
    depth: usize,
    /// When the runs are the members of an object, what of it names a list that is
    /// one of them (its id members), as the search of the object names it.
    object: Option<Map>,
    /// What names of transcripts start with (`line 3` for a document on one line).
    prefix: String,
    /// With `--select [*]…`, what it selects in each run; and whether it selected
    /// anything.
    select: Option<(Selector, Selector)>,
    selected: bool,
    /// Whether any run held a transcript.
    found: bool,
    /// Whether the array has any element.
    any: bool,
    /// OpenTelemetry exports among the runs, read together at the end as the whole
    /// document's are.
    otel: Exports,
    /// Where the whole document is, for a problem about all of it.
    whole: Location,
    /// The scan of the last run read from its text, kept for the next.
    tape: Tape,
    /// The file being read, when a large run is handed on a few messages at a time
    /// ([`run::OpenRun`]), read again from its place in it: in a document of runs, whose
    /// next run is read only once this one is done.
    file: Option<Rc<std::path::Path>>,
    /// The large run being read.
    open: Option<OpenRun>,
}

/// How much of an input was read, for a first pass to read on from there.
#[derive(Clone, Copy)]
enum Read {
    /// Elements of a document's array (or members of its object).
    Elements(usize),
    /// Lines, up to and with this one.
    Lines(u64),
}

/// Bytes from which a run of a document of runs (or an element the first pass reads)
/// is measured but not held, and read again from the file a piece at a time: a few
/// messages at a time when it can be ([`run::OpenRun`]).
pub(crate) const LARGE_RUN: usize = if cfg!(any(test, fuzzing)) {
    2048
} else {
    1 << 20
};

/// Messages of an [`OpenRun`], or of an [`OpenBatch`], read at a time.
const RUN_MESSAGES_AT_ONCE: usize = if cfg!(any(test, fuzzing)) { 3 } else { 1024 };

/// Where `site`, of a run read from its text, was pinned (every such site is).
fn pinned(site: &mut Site) -> Location {
    match site.take_pinned() {
        Some(loc) => loc,
        None => {
            debug_assert!(false, "bug: a site of a run read from its text not pinned");
            Location::default()
        }
    }
}

/// Where a run is, for the sites of its records: its document's index, its first line
/// and its offset in the file.
#[derive(Clone, Copy)]
struct RunAt {
    index: usize,
    line: u64,
    offset: u64,
}

impl RunAt {
    /// The line of the byte at `start` in the text of a run at this place whose lines
    /// start at `newlines`.
    fn line_of(self, start: usize, newlines: &[usize]) -> u64 {
        self.line + newlines.partition_point(|&at| at < start) as u64
    }
    /// The site of the value at `start` of `len` bytes in the text of a run at this
    /// place whose lines start at `newlines`, at `pointer`, pinned to its location.
    fn site(self, (start, len): (usize, usize), pointer: String, newlines: &[usize]) -> Site {
        let pointer = Pointer::from(pointer);
        let loc = Location {
            line: self.line_of(start, newlines),
            offset: self.offset + start as u64,
            len: len as u64,
            pointer: pointer.clone(),
        };
        Site {
            doc: self.index,
            pointer,
            pinned: Some(std::sync::Arc::new(loc)),
        }
    }
}

impl Stream {
    /// Streams a file of one element per line from `input`, as `plan` says; `None`
    /// for a format whose adapter reads its transcript whole.
    pub(super) fn lines(
        input: Box<dyn BufRead>,
        mut plan: LinePlan,
        explicit: bool,
        max_line_bytes: usize,
    ) -> Option<Stream> {
        let format = plan.format;
        let first = plan.foreign.take();
        let mut stream = Stream::new(
            Docs::Lines {
                reader: LineReader::with_max_line_bytes(input, max_line_bytes),
                max_line_bytes,
            },
            Reader::Lines(Lines::new(plan)?),
            Layout::ElementLines,
            vec![format],
        );
        stream.detected.explicit = explicit;
        stream.first = first;
        Some(stream)
    }

    /// [`Stream::lines`] of the file at `path`, which a first pass may read again.
    pub(super) fn lines_of_file(
        path: &std::path::Path,
        plan: LinePlan,
        explicit: bool,
        max_line_bytes: usize,
    ) -> io::Result<Option<Stream>> {
        if !plan.fits() {
            return Ok(None);
        }
        let open = |plan| -> io::Result<Option<Stream>> {
            let file = std::fs::File::open(path)?;
            let input = Box::new(io::BufReader::with_capacity(1 << 16, file));
            let mut stream = Stream::lines(input, plan, explicit, max_line_bytes);
            if let Some(stream) = &mut stream {
                stream.ahead = Some(Rc::from(path));
            }
            Ok(stream)
        };
        let again = plan.clone();
        let Some(mut stream) = open(plan)? else {
            return Ok(None);
        };
        let path = path.to_path_buf();
        stream.reopen = Some(Box::new(move || {
            Stream::lines_of_file(&path, again, explicit, max_line_bytes)
        }));
        Ok(Some(stream))
    }

    /// Reads the file through once, keeping nothing but the count of its traces and
    /// where each thread ends, so that what is held back can be handed on and what
    /// follows streams: on a file of one trace, or of threads given one by one. A
    /// first pass that fails leaves things as they were.
    fn survey(&mut self) {
        let Reader::Lines(lines) = &mut self.reader else {
            return;
        };
        let surveyed = (&mut self.reopen, &mut self.surveyed);
        survey(lines, &mut self.finisher, surveyed);
    }

    /// Before the records of a large run are handed on, a few at a time, and when no
    /// record read so far has decided whether the input holds more than one trace:
    /// decides it from a first pass over the runs after it (the elements of a document
    /// of runs, or the lines of a file of documents), which keeps nothing but the names
    /// of their traces and stops at the second trace, and, if that does not decide,
    /// from the traces the run gives records of. The run, the last of what was `read`,
    /// is named `name`: its records are of that trace, or of its sub-traces (an MCP
    /// log's sessions, a Claude Code log's or a Codex rollout's threads). A first pass
    /// that fails leaves things as they were (the records wait).
    fn decide_before_run(&mut self, read: Read, name: &str) {
        let finisher = &self.finisher;
        if finisher.decided
            || finisher.count_only
            || finisher.first.as_deref().is_some_and(|first| first != name)
        {
            // Its first record decides, if nothing did.
            return;
        }
        let Some(reopen) = self.reopen.take() else {
            return;
        };
        let Ok(Some(mut survey)) = reopen() else {
            return;
        };
        survey.finisher.count_only = true;
        for known in self.finisher.names.keys() {
            survey.finisher.origins.insert(known.clone(), None);
        }
        let next_doc = self.next_doc;
        let read_on = |survey: &mut Stream| -> io::Result<()> {
            match (&mut survey.docs, read) {
                (Docs::Array(elements), Read::Elements(count)) => elements.skip(count)?,
                (Docs::Lines { reader, .. }, Read::Lines(number)) => {
                    while reader.next_line()?.is_some_and(|line| line.number < number) {}
                }
                _ => unreachable!("bug: an input read again is read otherwise"),
            }
            survey.next_doc = next_doc;
            while survey.finisher.traces() <= 1 {
                if !survey.read_doc()? {
                    survey.end();
                    break;
                }
            }
            Ok(())
        };
        if read_on(&mut survey).is_err() {
            return;
        }
        // The traces before it and after it; then its own, unless they hold it.
        let mut traces = survey.traces();
        if traces < 2 {
            match self.open_traces() {
                Ok(own) => {
                    let new = |own: &&String| !survey.finisher.origins.contains_key(*own);
                    traces += own.iter().filter(new).count();
                }
                Err(_) => return,
            }
        }
        self.surveyed = self.surveyed.max(traces);
        self.finisher.many = traces > 1;
        self.finisher.flush();
    }

    /// The traces the large run being read gives records of, by their names, up to
    /// two.
    fn open_traces(&self) -> io::Result<Vec<String>> {
        match &self.reader {
            Reader::Runs(runs) => runs.open_traces(),
            Reader::DocLines(lines) => lines.plain.open_traces(),
            Reader::Lines(_) | Reader::Otel => Ok(Vec::new()),
        }
    }

    /// Reads this stream, a first pass, through, keeping nothing but the count of its
    /// traces and the names two of its adapter's traces share, which it returns, and
    /// where each trace ends, which `lines`, the adapter of the stream to come over the
    /// same input, learns (nothing, if reading fails).
    fn read_through(mut self, lines: &mut Lines) -> io::Result<(usize, FxHashSet<String>)> {
        self.reopen = None;
        self.finisher.count_only = true;
        if let Reader::Lines(theirs) = &mut self.reader {
            theirs.survey();
        }
        while self.read_doc()? {}
        let mut found = None;
        if let Reader::Lines(theirs) = &mut self.reader {
            found = theirs.traces_found(&self.transcript);
            lines.learn_ends(theirs);
        }
        self.end();
        Ok(found.unwrap_or_else(|| {
            let shared = std::mem::take(&mut self.finisher.shared);
            (self.traces(), shared)
        }))
    }

    /// Streams the document at `path` as `plan`, its first pass, says: the elements
    /// of its array one at a time.
    pub(super) fn document(
        path: &std::path::Path,
        mut plan: DocPlan,
        format: Option<Format>,
    ) -> io::Result<Stream> {
        // A first pass may read it again (see [`Stream::survey`] and
        // [`Stream::decide_before_run`]).
        let again = plan.clone();
        let open = || -> io::Result<Box<dyn BufRead>> {
            Ok(Box::new(io::BufReader::with_capacity(
                1 << 16,
                std::fs::File::open(path)?,
            )))
        };
        let elements = match &mut plan.what {
            What::Runs {
                object: Some(members),
                ..
            } => Elements::members(
                std::fs::File::open(path)?,
                plan.pointer.clone(),
                std::mem::take(&mut members.places),
            ),
            _ => Elements::at(open()?, &plan.path, plan.pointer.clone())?,
        };
        let docs = Docs::Array(elements);
        let mut stream = match plan.what {
            What::List {
                format: list,
                name,
                foreign,
                codex_answered,
                responses_answered,
            } => {
                let (codex, responses) = (Rc::new(codex_answered), Rc::new(responses_answered));
                let lines = Lines::of(list, Answered::Ids(codex), Answered::Ids(responses))
                    .expect("bug: a document's list planned in a format read whole");
                let mut stream = Stream::new(docs, Reader::Lines(lines), plan.layout, vec![list]);
                stream.first = foreign;
                stream.transcript = name;
                stream.ahead = Some(Rc::from(path));
                stream
            }
            What::Runs {
                depth,
                select,
                object,
            } => Stream::new(
                docs,
                Reader::Runs(Runs {
                    whole: plan.whole,
                    format,
                    select,
                    depth,
                    object: object.map(|members| members.names),
                    prefix: plan.prefix,
                    file: Some(Rc::from(path)),
                    ..Runs::default()
                }),
                plan.layout,
                Vec::new(),
            ),
        };
        // A large run is measured, not kept, when it may be read a few messages at a
        // time: from its place in the file.
        if let (Docs::Array(elements), Reader::Runs(runs)) = (&mut stream.docs, &stream.reader)
            && runs.may_stream()
        {
            elements.large = runs.file.clone();
        }
        let path = path.to_path_buf();
        stream.reopen = Some(Box::new(move || {
            Stream::document(&path, again, format).map(Some)
        }));
        stream.detected.explicit = format.is_some();
        stream.late = plan.late;
        Ok(stream)
    }

    /// Streams an OpenTelemetry export whose first pass placed its tool spans, in
    /// `traces` traces: each trace is ended after its last record.
    pub(super) fn otel(
        replay: otlp::Replay,
        traces: usize,
        layout: Layout,
        format: Option<Format>,
    ) -> Stream {
        let mut stream = Stream::new(Docs::Otel(replay), Reader::Otel, layout, vec![Format::Otel]);
        stream.detected.explicit = format.is_some();
        // The first pass counted the traces: records name theirs from the first when
        // there is more than one.
        stream.finisher.decided = true;
        stream.finisher.many = traces > 1;
        stream.surveyed = traces;
        stream
    }

    /// Streams the file at `path` of JSON documents one per line, more than one: each
    /// line is read, searched and adapted as reading the whole file reads it, handed
    /// on and dropped.
    pub(super) fn doc_lines(
        path: &std::path::Path,
        first: FirstDoc,
        options: &InputOptions,
        max_line_bytes: usize,
    ) -> io::Result<Stream> {
        let file = std::fs::File::open(path)?;
        let input: Box<dyn BufRead> = Box::new(io::BufReader::with_capacity(1 << 16, file));
        let mut stream = Stream::new(
            Docs::Lines {
                reader: LineReader::with_max_line_bytes(input, kept_line_bytes(max_line_bytes)),
                max_line_bytes,
            },
            Reader::DocLines(DocLines {
                format: options.format,
                select: options.select.clone(),
                plain: Runs {
                    format: options.format,
                    // What a `--select` path selects in a line's document, as in a run.
                    select: options.select.clone().map(|path| (path.clone(), path)),
                    file: Some(Rc::from(path)),
                    ..Runs::default()
                },
                ..DocLines::default()
            }),
            Layout::DocumentLines,
            Vec::new(),
        );
        stream.detected.explicit = options.format.is_some();
        // A problem of the file as a whole (`--select` selecting nothing in a line, or
        // no line holding a transcript) may come after problems of lines: unless the
        // first line holds a transcript, and no other can then be said, findings wait
        // for the end, as reading the whole file has them.
        stream.late = options.select.is_some() || !first.holds_transcript;
        // A first pass may read it again ([`Stream::decide_before_run`]).
        let (path, options) = (path.to_path_buf(), options.clone());
        stream.reopen = Some(Box::new(move || {
            Stream::doc_lines(&path, first, &options, max_line_bytes).map(Some)
        }));
        Ok(stream)
    }

    /// Whether each record's findings are final as soon as it is checked: nothing is
    /// said of a streamed input as a whole after its first record, as its first pass
    /// (for a document) or its lines' own problems (for a file of lines) tell.
    pub fn findings_final(&self) -> bool {
        !self.late
    }

    fn new(docs: Docs, reader: Reader, layout: Layout, formats: Vec<Format>) -> Stream {
        let mut finisher = Finisher::default();
        // A transcript that is one trace whatever it holds has nothing to wait for: its
        // records stream from the first, with no first pass to count its traces.
        if let Reader::Lines(lines) = &reader {
            finisher.decided = lines.one_trace();
        }
        Stream {
            docs,
            reader,
            finisher,
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
            first: None,
            reopen: None,
            again: None,
            surveyed: 0,
            batch: None,
            offset: 0,
            transcript: String::new(),
            late: false,
            spool: None,
            line_out: Out::default(),
            ahead: None,
        }
    }

    /// Records and problems read and not handed on yet.
    #[cfg(test)]
    pub(crate) fn waiting(&self) -> usize {
        let held = match &self.reader {
            Reader::Lines(lines) => lines.held(),
            Reader::Runs(runs) => runs.held(),
            Reader::DocLines(lines) => lines.plain.held(),
            Reader::Otel => 0,
        };
        self.finisher.ready.len() + self.finisher.pending.as_ref().map_or(0, Vec::len) + held
    }

    /// Keeps `spool`, the temporary file this stream reads, open as long as the stream.
    pub(crate) fn hold(&mut self, spool: Rc<Spool>) {
        self.spool = Some(spool);
    }

    /// Reads on until it is known whether the input holds more than one trace.
    pub fn decide(&mut self) {
        while !self.finisher.decided && !self.ended {
            self.read_one();
        }
    }

    /// [`Stream::decide`] of a stream that cannot be read again (standard input, a
    /// pipe), which reads on only as far as a file of the same bytes is read before its
    /// first pass ([`SURVEY_AFTER`], or a large batch reached): past that, holding its
    /// records until it ends would hold them all. `None` when it is decided (or ended)
    /// there; else, having handed nothing on, how to read the same bytes from a file
    /// that holds all of them, as that file is read (with a first pass).
    pub(crate) fn decide_before_first_pass(&mut self) -> Option<Again> {
        while !self.finisher.decided && !self.ended {
            if self.again.is_some() && (self.offset >= SURVEY_AFTER || self.batch.is_some()) {
                return self.again.take();
            }
            self.read_one();
        }
        None
    }

    /// Distinct traces among the records so far: final once the input is read, and
    /// more than one as soon as [`Stream::decide`] has returned if it will be.
    pub fn traces(&self) -> usize {
        self.finisher.traces().max(self.surveyed)
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
            match self.next()? {
                Ok(Handed::Entry(entry)) => return Some(Ok(entry)),
                Ok(Handed::TraceEnd(_)) => {}
                Err(err) => return Some(Err(err)),
            }
        }
    }

    /// The next record or problem, or the end of a trace; `Err` when reading failed
    /// (nothing follows).
    pub(crate) fn next(&mut self) -> Option<Result<Handed, io::Error>> {
        loop {
            if let Some(handed) = self.finisher.ready.pop_front() {
                return Some(Ok(handed));
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
            Ok(true) if self.reopen.is_some() && self.offset >= SURVEY_AFTER => self.survey(),
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
        match &mut self.reader {
            Reader::Runs(runs) => {
                let runs = std::mem::take(runs);
                runs.finish(&mut self.finisher);
            }
            Reader::Lines(lines) => {
                let lines = std::mem::replace(lines, Lines::Native);
                let mut out = Out::default();
                lines.finish(&mut out);
                self.hand_on(&mut out, None);
            }
            Reader::DocLines(lines) => {
                let lines = std::mem::take(lines);
                lines.finish(&mut self.finisher);
            }
            Reader::Otel => {}
        }
        if let Some(problem) = self.first.take() {
            self.finisher.item_problem(problem);
        }
        self.finisher.drain_early(None);
        self.finisher.flush();
    }

    /// Reads the next document; `false` at the end of the input.
    fn read_doc(&mut self) -> io::Result<bool> {
        if self.batch.is_some() {
            self.read_batch();
            return Ok(true);
        }
        let index = self.next_doc;
        match (&mut self.docs, &mut self.reader) {
            (
                Docs::Lines {
                    reader,
                    max_line_bytes,
                },
                Reader::Lines(lines),
            ) => {
                let Some(line) = reader.next_line()? else {
                    return Ok(false);
                };
                // The common line is read from its text; any other from its document.
                if let (LineContent::Text(text), Lines::Mcp(mcp, ends)) =
                    (line.content, &mut *lines)
                {
                    // A large batch is read a few messages at a time, never held as
                    // one value.
                    if let Some(at) = large_batch(text).map(|batch| batch.at) {
                        let loc = line.location();
                        let text = String::from_utf8(reader.take_line()?)
                            .map_err(|_| io::Error::other("a line read changed"))?;
                        if ends.survey {
                            // What a line read in full leaves open, no later line needs.
                            mcp.forget();
                        } else if self.reopen.is_some() {
                            // Past the first MiB once it is read: a first pass now, so
                            // that its records need not wait to learn their traces.
                            let surveyed = (&mut self.reopen, &mut self.surveyed);
                            survey(lines, &mut self.finisher, surveyed);
                        }
                        self.next_doc += 1;
                        self.offset = loc.offset;
                        self.batch = Some(OpenBatch {
                            text,
                            loc,
                            index,
                            at,
                            read: 0,
                        });
                        self.read_batch();
                        return Ok(true);
                    }
                    // A first pass needs only the session of the common line's records;
                    // of a session known to have records, only where the line is.
                    if ends.survey {
                        let placed = match mcp::quick_session(text) {
                            Some(session) if ends.note_known(index, session) => true,
                            _ => match mcp.line_session(text) {
                                mcp::LineSession::Records(session) => {
                                    ends.note(index, session.as_deref());
                                    true
                                }
                                mcp::LineSession::Unknown => false,
                            },
                        };
                        if placed {
                            self.next_doc += 1;
                            self.offset = line.offset;
                            return Ok(true);
                        }
                        // What a line read in full leaves open, no later line needs.
                        mcp.forget();
                    }
                    // Handed on, `out` is empty again: its list is used again.
                    let mut out = std::mem::take(&mut self.line_out);
                    if mcp.line(text, index, &line.location(), &mut out) {
                        self.next_doc += 1;
                        self.offset = line.offset;
                        lines.read(index, &out);
                        self.hand_on(&mut out, None);
                        self.line_out = out;
                        self.end_traces(index);
                        return Ok(true);
                    }
                }
                let Some(doc) = self.finisher.line_doc(line, *max_line_bytes) else {
                    return Ok(true);
                };
                self.next_doc += 1;
                self.offset = doc.offset;
                // The rest of the line is its end.
                let end = run::At {
                    offset: doc.offset + doc.text.len() as u64,
                    line: doc.line,
                };
                let end = Where::Lines(end, *max_line_bytes);
                let doc = Rc::new(doc);
                if doc.hides("") {
                    return Ok(true);
                }
                self.element(index, &doc);
                if let (Some(path), Reader::Lines(lines)) = (&self.ahead, &mut self.reader) {
                    lines.look_ahead(path, end);
                }
                Ok(true)
            }
            (
                Docs::Lines {
                    reader,
                    max_line_bytes,
                },
                Reader::DocLines(lines),
            ) => {
                if lines.plain.open.is_some() {
                    lines.plain.read_open(&mut self.finisher)?;
                    return Ok(true);
                }
                let Some(line) = reader.next_line()? else {
                    return Ok(false);
                };
                // A large line, measured but not kept: read from the file as a run, or
                // else whole, as a line within the limit is.
                let held;
                let (line, large) = match (line.content, lines.plain.file.clone()) {
                    (LineContent::TooLong, Some(path)) if line.len <= *max_line_bytes as u64 => {
                        let loc = line.location();
                        if lines.read_large(index, &loc, &mut self.detected, &mut self.finisher)? {
                            self.next_doc += 1;
                            self.offset = loc.offset;
                            if let Some(name) = lines.plain.to_decide() {
                                self.decide_before_run(Read::Lines(loc.line), &name);
                            }
                            return Ok(true);
                        }
                        held = run::read_at(&path, line.offset, large_len(&line)?)?;
                        let content = run::line_content(&held);
                        (Line { content, ..line }, true)
                    }
                    _ => (line, false),
                };
                if !large
                    && let LineContent::Text(text) = line.content
                    && lines.read_plain(
                        index,
                        text,
                        &line.location(),
                        &mut self.detected,
                        &mut self.finisher,
                    )?
                {
                    self.next_doc += 1;
                    self.offset = line.offset;
                    let number = line.number;
                    if let Some(name) = lines.plain.to_decide() {
                        self.decide_before_run(Read::Lines(number), &name);
                    }
                    return Ok(true);
                }
                let Some(doc) = self.finisher.line_doc(line, *max_line_bytes) else {
                    return Ok(true);
                };
                self.next_doc += 1;
                self.offset = doc.offset;
                lines.read(index, Rc::new(doc), &mut self.detected, &mut self.finisher);
                Ok(true)
            }
            (Docs::Array(elements), Reader::Lines(_)) => {
                let Some(element) = elements.next(None)? else {
                    return Ok(false);
                };
                self.next_doc += 1;
                self.offset = element.offset;
                let end = run::At {
                    offset: element.offset + element.len as u64,
                    line: element.line,
                };
                let base = child_pointer(&elements.pointer, element.index);
                let doc = Rc::new(self.element_doc(element, base));
                self.element(index, &doc);
                if let (Some(path), Reader::Lines(lines)) = (&self.ahead, &mut self.reader) {
                    lines.look_ahead(path, Where::List(end));
                }
                Ok(true)
            }
            (Docs::Array(elements), Reader::Runs(runs)) => {
                if runs.open.is_some() {
                    runs.read_open(&mut self.finisher)?;
                    return Ok(true);
                }
                // A run that may be plain is scanned as its end is found, for
                // [`Runs::read_plain`].
                let tape = runs.may_be_plain().then_some((&mut runs.tape, PLAIN_NOTED));
                let Some(mut element) = elements.next(tape)? else {
                    return Ok(false);
                };
                self.next_doc += 1;
                runs.any = true;
                let base = match &element.key {
                    Some(key) => child_pointer(&elements.pointer, key),
                    None => child_pointer(&elements.pointer, element.index),
                };
                if runs.read_plain(
                    index,
                    &mut element,
                    &base,
                    &mut self.detected,
                    &mut self.finisher,
                )? {
                    elements.recycle(element.text);
                    if let Some(name) = runs.to_decide() {
                        let read = elements.count;
                        self.decide_before_run(Read::Elements(read), &name);
                    }
                    return Ok(true);
                }
                // A large run is read whole after all: from its place in the file.
                elements.hold(&mut element)?;
                let doc = Rc::new(element_doc(&mut self.finisher, element, base));
                runs.read(index, &doc, &mut self.detected, &mut self.finisher);
                Ok(true)
            }
            (Docs::Otel(replay), Reader::Otel) => match replay.next()? {
                Some(otlp::Replayed::Items(mut out)) => {
                    self.hand_on(&mut out, None);
                    Ok(true)
                }
                Some(otlp::Replayed::End(trace)) => {
                    self.finisher.end(trace);
                    Ok(true)
                }
                None => Ok(false),
            },
            _ => unreachable!("bug: a stream's documents and reader go together"),
        }
    }
}

impl Stream {
    /// Reads the next few messages of the large batch open ([`OpenBatch`]), each as
    /// reading its line whole reads it; after its last, ends the traces that end with
    /// its line.
    fn read_batch(&mut self) {
        let (Some(open), Reader::Lines(Lines::Mcp(mcp, ends))) =
            (&mut self.batch, &mut self.reader)
        else {
            return;
        };
        let (index, mut read, mut noted) = (open.index, open.read, false);
        let mut messages = Batch {
            text: &open.text,
            at: open.at,
        };
        for (start, message) in messages.by_ref().take(RUN_MESSAGES_AT_ONCE) {
            if noted {
                break;
            }
            let base = child_pointer("", read);
            read += 1;
            // The common message from its text, pinned to where it is; any other from
            // its value, as a document of its own.
            let pointer = Pointer::from(base.as_str());
            let loc = Location {
                line: open.loc.line,
                offset: open.loc.offset + start as u64,
                len: message.len() as u64,
                pointer: pointer.clone(),
            };
            let site = Site {
                doc: index,
                pointer,
                pinned: Some(std::sync::Arc::new(loc)),
            };
            let mut out = std::mem::take(&mut self.line_out);
            let read_from_text = mcp.batch_text(message, site, &mut out);
            if read_from_text {
                noted |= ends.read(index, &out);
                let finisher = (&mut self.first, &mut self.finisher);
                hand_on(finisher, &self.transcript, &mut out, None);
            }
            // Handed on, or never filled: its list is used again.
            self.line_out = out;
            if read_from_text {
                continue;
            }
            let message = Scanned {
                text: message.to_string(),
                offset: open.loc.offset + start as u64,
                line: open.loc.line,
                index: read - 1,
                key: None,
                taped: false,
                len: message.len(),
            };
            let doc = Rc::new(element_doc(&mut self.finisher, message, base));
            let Some(value) = &doc.value else { continue };
            let mut out = current(index, &doc);
            let site = out.pin(&Site::new(index, doc.base.clone()));
            mcp.batch_message(value, site, &mut out);
            noted |= ends.read(index, &out);
            let finisher = (&mut self.first, &mut self.finisher);
            hand_on(finisher, &self.transcript, &mut out, Some((&doc, index)));
        }
        (open.at, open.read) = (messages.at, read);
        if noted {
            // Every record of a batch is of no session: a first pass that has noted
            // one needs nothing more of it.
            open.at = open.text.len();
        }
        if open.at >= open.text.len() {
            self.batch = None;
            self.end_traces(index);
        }
    }

    /// Reads document `index`, one transcript element, through the adapter of lines.
    fn element(&mut self, index: usize, doc: &Rc<Doc>) {
        let Reader::Lines(lines) = &mut self.reader else {
            unreachable!("bug: an element read without an adapter of lines")
        };
        let Some(value) = &doc.value else { return };
        let mut out = current(index, doc);
        lines.element(
            &Element {
                value,
                site: Site::new(index, doc.base.clone()),
            },
            &mut out,
        );
        let known = lines.traces();
        lines.read(index, &out);
        self.hand_on(&mut out, Some((doc, index)));
        self.end_traces(index);
        if !self.finisher.decided && known > 1 {
            // A second thread with records: more than one trace, though its records
            // wait for the first thread's.
            self.surveyed = self.surveyed.max(known);
            self.finisher.many = true;
            self.finisher.flush();
        }
    }

    /// Ends the traces of a file of lines that have ended once document `index` is
    /// read and what it emitted handed on.
    fn end_traces(&mut self, index: usize) {
        let Reader::Lines(lines) = &mut self.reader else {
            return;
        };
        for sub in lines.ended(index) {
            self.finisher.ended(&self.transcript, sub.as_deref());
        }
    }

    fn element_doc(&mut self, element: Scanned, base: String) -> Doc {
        element_doc(&mut self.finisher, element, base)
    }

    /// Hands on what an adapter of lines emitted, while the line it read, document
    /// `index`, is at hand (`None` at the end, when every site is pinned).
    fn hand_on(&mut self, out: &mut Out, doc: Option<(&Doc, usize)>) {
        let finisher = (&mut self.first, &mut self.finisher);
        hand_on(finisher, &self.transcript, out, doc);
    }
}

/// [`Stream::survey`] of a file of lines read by `lines`, with its finisher, the
/// stream's way to read the file again from its start, and the count of its traces.
fn survey(
    lines: &mut Lines,
    finisher: &mut Finisher,
    (reopen, surveyed): (&mut Option<Reopen>, &mut usize),
) {
    if finisher.decided && !lines.ends_found_first() {
        return;
    }
    let Some(reopen) = reopen.take() else {
        return;
    };
    let Ok(Some(survey)) = reopen() else {
        return;
    };
    let Ok((traces, shared)) = survey.read_through(lines) else {
        return;
    };
    finisher.shared = shared;
    *surveyed = traces;
    if !finisher.decided {
        finisher.many = *surveyed > 1;
        finisher.flush();
    }
}

/// [`Stream::hand_on`], given the stream's problem of its first line (handed on before
/// its first item) and its finisher, for the transcript named `transcript`.
fn hand_on(
    (first, finisher): (&mut Option<Problem>, &mut Finisher),
    transcript: &str,
    out: &mut Out,
    doc: Option<(&Doc, usize)>,
) {
    if out.items.is_empty() {
        return;
    }
    if let Some(problem) = first.take() {
        finisher.item_problem(problem);
    }
    for item in out.items.drain(..) {
        finisher.emitted(transcript, item, |site| match (site.take_pinned(), doc) {
            (Some(loc), _) => loc,
            (None, Some((doc, index))) => locate(doc, index, site),
            (None, None) => {
                debug_assert!(false, "bug: a site of a line gone, not pinned");
                Location::default()
            }
        });
    }
}

/// The messages of `text`, a line of an MCP log, when it is a batch (an array) of
/// [`LARGE_RUN`] bytes or more, valid without a key twice, that holds at least one.
/// Read one at a time, such a line is never held as one value; any other line is read
/// whole (and says what is wrong with it).
fn large_batch(text: &str) -> Option<Batch<'_>> {
    // Asked of every line: most are told by their length alone.
    if text.len() < LARGE_RUN {
        return None;
    }
    let bytes = text.as_bytes();
    let open = skip_ws(bytes, 0, bytes.len());
    if bytes.get(open) != Some(&b'[') {
        return None;
    }
    let at = skip_ws(bytes, open + 1, bytes.len());
    if bytes.get(at) == Some(&b']') || !super::unique::valid_without_duplicates(bytes) {
        return None;
    }
    Some(Batch { text, at })
}

/// A line of an MCP log that is a large batch, being read a few messages at a time
/// ([`Stream::read_batch`]): held as text, never as one value.
struct OpenBatch {
    text: String,
    /// Where the line is.
    loc: Location,
    /// The line's document.
    index: usize,
    /// Where its next message starts in `text`; `text`'s length after its last.
    at: usize,
    /// Its messages read so far.
    read: usize,
}

/// The messages of a valid batch, each with where it starts in the line.
struct Batch<'t> {
    text: &'t str,
    /// Where the next message starts; past the end after the last.
    at: usize,
}

impl Batch<'_> {
    /// What the batch says of its format, as [`super::detect::signal`] says it of its
    /// value: MCP's when every message is an object with a `jsonrpc` member.
    fn signal(self) -> super::detect::Signal {
        use serde::de::IgnoredAny;
        let rpc = |message: &str| {
            serde_json::from_str::<FxHashMap<Cow<'_, str>, IgnoredAny>>(message)
                .is_ok_and(|members| members.contains_key("jsonrpc"))
        };
        match self.into_iter().all(|(_, message)| rpc(message)) {
            true => super::detect::Signal::Strong(Format::Mcp),
            false => super::detect::Signal::None,
        }
    }
}

impl<'t> Iterator for Batch<'t> {
    type Item = (usize, &'t str);

    fn next(&mut self) -> Option<(usize, &'t str)> {
        let bytes = self.text.as_bytes();
        let start = self.at;
        if start >= bytes.len() {
            return None;
        }
        let end = value_end(bytes, start, bytes.len());
        // Valid: each message is followed by a comma, or by the closing bracket.
        let next = skip_ws(bytes, end, bytes.len());
        self.at = match bytes.get(next) {
            Some(b',') => skip_ws(bytes, next + 1, bytes.len()),
            _ => bytes.len(),
        };
        Some((start, &self.text[start..end]))
    }
}

/// An array element read from a document, at `base`, as a document of its own.
fn element_doc(finisher: &mut Finisher, element: Scanned, base: String) -> Doc {
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
            finisher.problem(malformed(loc, message));
            None
        }
    };
    Doc {
        text: element.text,
        offset: element.offset,
        line: element.line,
        value,
        index: Default::default(),
        duplicates: Vec::new(),
        base,
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
        let mut search = Search {
            doc: index,
            format: self.format,
            prefix: &self.prefix,
            found: &mut found,
        };
        match &self.select {
            // As the search of the whole array goes: each element, one level down.
            None => search.find(value, &doc.base, self.object.as_ref(), self.depth),
            Some((_, rest)) => {
                for (pointer, selected) in rest.select(value) {
                    self.selected = true;
                    // The object holding a selected list names its run: the object
                    // whose member the run is, when the list is the run itself.
                    let parent = match pointer.rfind('/') {
                        Some(end) => value.pointer(&pointer[..end]).and_then(Value::as_object),
                        None => self.object.as_ref(),
                    };
                    search.selected(selected, &format!("{}{pointer}", doc.base), parent);
                }
            }
        }
        self.found |= !found.is_empty();
        adapt_found(
            found,
            (index, doc),
            self.format,
            &mut self.otel,
            detected,
            finisher,
        );
        self.end_traces(&doc.base, finisher);
    }

    /// Whether a run may be read as a plain one ([`Runs::read_plain`]).
    fn may_be_plain(&self) -> bool {
        self.plain_format() && self.select.is_none() && self.may_stream()
    }

    /// Whether plain OpenAI messages are read in this format: `--format openai` reads a
    /// plain run as the search finds it.
    fn plain_format(&self) -> bool {
        matches!(self.format, None | Some(Format::OpenAi))
    }

    /// Whether a run of `len` bytes is read a few messages at a time, if it can be.
    fn is_large(&self, len: usize) -> bool {
        self.may_stream() && len >= LARGE_RUN
    }

    /// Whether a large run may be read a few messages at a time ([`run::OpenRun`]), if
    /// its shape allows ([`Runs::open_large`]; with `--select`, when the rest of the
    /// path selects the run or one member of it): the search of a run reaches its list
    /// when the list is no deeper than it looks.
    fn may_stream(&self) -> bool {
        self.file.is_some() && self.depth < search::SEARCH_DEPTH
    }

    /// Reads run `index`, `element` at `base`, from its text when it is plain, as
    /// [`Runs::read`] reads it from its value: an object whose one array member holds
    /// plain OpenAI messages ([`openai::read_plain`]) and whose other members are not
    /// containers, searched for transcripts and nothing selected in it. When the run was
    /// scanned as it was read ([`Scanned::taped`]), that scan is used; else one scan
    /// checks the run (what its value would parse) and notes where its members are,
    /// down to each call's `function`; its records are built from the text and
    /// located by the scan. A large run is opened to be read from the file a few
    /// messages at a time instead, if it can be ([`Runs::open_large`]). Returns
    /// `false`, having read nothing, for any other run.
    fn read_plain(
        &mut self,
        index: usize,
        element: &mut Scanned,
        base: &str,
        detected: &mut Detected,
        finisher: &mut Finisher,
    ) -> io::Result<bool> {
        if self.is_large(element.len) {
            return self.open_large(index, element, base, detected, finisher);
        }
        if !self.may_be_plain() {
            return Ok(false);
        }
        let run = match element.taped {
            true => Some(self.tape.node(&element.text)),
            false => self.tape.scan(&element.text, PLAIN_NOTED),
        };
        let Some(run) = run else {
            return Ok(false);
        };
        // The search of the run finds the list in its one array member, but for the
        // arrays it reads as other formats; the other members, scalars, hold nothing
        // and may name the run.
        let mut list = None;
        let mut parent = Map::new();
        let mut plain = true;
        let read = run.members(|key, value| match value.text().as_bytes().first() {
            Some(b'[')
                if list.is_none() && !matches!(key, "steps" | "resourceSpans" | "children") =>
            {
                list = Some((key, value));
            }
            Some(b'[' | b'{') => plain = false,
            _ => {
                if let Ok(value) = serde_json::from_str(value.text()) {
                    parent.insert(key.to_string(), value);
                }
            }
        });
        let Some((key, messages)) = list.filter(|_| read && plain) else {
            return Ok(false);
        };
        let pointer = child_pointer(base, key);
        // Where each line of the run starts, for the lines of the records in it.
        let newlines: Vec<usize> = memchr::memchr_iter(b'\n', element.text.as_bytes()).collect();
        let at = RunAt {
            index,
            line: element.line,
            offset: element.offset,
        };
        let site_at = |node: Node<'_>, pointer: String| {
            at.site((node.offset(), node.text().len()), pointer, &newlines)
        };
        let mut out = Out::default();
        if !openai::read_plain(messages, &pointer, site_at, &mut out) {
            return Ok(false);
        }
        let name = search::name(&self.prefix, &pointer, Some(&parent));
        self.found_format(detected, Format::OpenAi);
        finisher.element = Some(Vec::new());
        for item in out.items {
            finisher.emitted(&name, item, pinned);
        }
        self.end_traces(base, finisher);
        Ok(true)
    }

    /// Notes that a run read from its text, a transcript in `format`, was found.
    fn found_format(&mut self, detected: &mut Detected, format: Format) {
        if !detected.formats.contains(&format) {
            detected.formats.push(format);
        }
        self.found = true;
    }

    /// Ends the traces of the run just read, `doc`: every record of theirs has been
    /// emitted, since a run is read through before the next. Only a trace named after
    /// the run's place in the document is ended, as no later run can name it: a list's
    /// name starts with its pointer, below the run's, and so does a ToolBench
    /// branch's; the traces of OpenTelemetry exports, named by trace id and read
    /// together at the end, are not the run's.
    fn end_traces(&self, base: &str, finisher: &mut Finisher) {
        let place = match (self.prefix.is_empty(), base.is_empty()) {
            (true, _) => base.to_string(),
            (false, true) => self.prefix.clone(),
            (false, false) => format!("{} {base}", self.prefix),
        };
        finisher.end_element_traces(&place);
    }

    /// What only the end of the document can tell: its OpenTelemetry spans, and
    /// whether it held any transcript.
    fn finish(mut self, finisher: &mut Finisher) {
        // A run is read through before the next: one still open here is one whose
        // reading failed, which the stream says.
        self.open = None;
        read_exports(&self.otel, false, finisher);
        match &self.select {
            None if !self.found && self.any => {
                finisher.problem(unknown_format_at(self.whole, self.format));
            }
            None => {}
            Some((selector, _)) if !self.selected => {
                // A document on a line of a file read line by line is that line.
                let line = !self.prefix.is_empty();
                finisher.problem(selects_nothing_at(self.whole, selector, line));
            }
            Some((selector, _)) if !self.found => {
                finisher.problem(holds_nothing_at(self.whole, selector, self.format));
            }
            Some(_) => {}
        }
    }
}

/// OpenTelemetry exports found in documents (each one's index, the document, and the
/// pointers of its exports), read together at the end as the whole input's are: one
/// trace may be exported in many batches.
type Exports = Vec<(usize, Rc<Doc>, Vec<String>)>;

/// Hands on what the transcripts `found` in document `index`, `doc`, give (read with
/// `--format`'s `format`), noting their formats and, in [`Finisher::element`], the
/// traces their records are in; OpenTelemetry exports are kept in `exports`, to be
/// read together at the end.
fn adapt_found(
    found: Vec<Found<'_>>,
    (index, doc): (usize, &Rc<Doc>),
    format: Option<Format>,
    exports: &mut Exports,
    detected: &mut Detected,
    finisher: &mut Finisher,
) {
    for transcript in &found {
        if !detected.formats.contains(&transcript.format) {
            detected.formats.push(transcript.format);
        }
    }
    let (otel, found): (Vec<Found<'_>>, Vec<Found<'_>>) =
        found.into_iter().partition(|f| f.format == Format::Otel);
    if !otel.is_empty() {
        let pointers = otel
            .iter()
            .flat_map(|f| f.elements.iter().map(|e| e.site.pointer.to_string()))
            .collect();
        exports.push((index, doc.clone(), pointers));
    }
    finisher.element = Some(Vec::new());
    for (name, item) in adapt(&found, format) {
        finisher.emitted(&name, item, |site| locate(doc, index, site));
    }
}

/// Reads the OpenTelemetry exports found in the documents read, and hands on what
/// they give; with `end`, each trace ends right after its last record.
fn read_exports(exports: &Exports, end: bool, finisher: &mut Finisher) {
    if exports.is_empty() {
        return;
    }
    let mut elements = Vec::new();
    for (index, doc, pointers) in exports {
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
    let docs: FxHashMap<usize, &Rc<Doc>> = exports.iter().map(|(i, doc, _)| (*i, doc)).collect();
    // Where each trace's last record is, when traces end there.
    let mut last: FxHashMap<String, usize> = FxHashMap::default();
    if end {
        for (at, item) in out.items.iter().enumerate() {
            if matches!(item.what, Emit::Record(_)) {
                last.insert(item.trace.clone().unwrap_or_default(), at);
            }
        }
    }
    for (at, item) in out.items.into_iter().enumerate() {
        let name = end.then(|| item.trace.clone().unwrap_or_default());
        finisher.emitted("", item, |site| {
            match (site.take_pinned(), docs.get(&site.doc)) {
                (Some(loc), _) => loc,
                (None, Some(doc)) => doc.location(&site.pointer),
                (None, None) => Location::default(),
            }
        });
        if let Some(name) = name
            && last.get(&name) == Some(&at)
        {
            finisher.end(name);
        }
    }
}

/// The reader of a file of JSON documents one per line, one line at a time: each
/// line's document is searched for transcripts as reading the whole file searches it,
/// adapted, handed on, and dropped; the traces named after its line then end.
#[derive(Default)]
struct DocLines {
    /// `--format`'s format, if given.
    format: Option<Format>,
    /// `--select`'s path, if given: what it selects in each line is read.
    select: Option<Selector>,
    /// Whether any line held a transcript.
    found: bool,
    /// Lines that hold no transcript, while no line has held one: each is a bad line
    /// among good ones once a later line holds a transcript, and the first says the
    /// file is in no format if none does.
    held: Vec<Location>,
    /// OpenTelemetry exports among the lines, read together at the end.
    otel: Exports,
    /// What reads a line that is a plain run from its text ([`Runs::read_plain`]).
    plain: Runs,
}

impl DocLines {
    /// Reads document `index`, the line `text` at `loc`, from its text when it is a
    /// plain run (an object whose one array member lists plain OpenAI messages, beside
    /// scalar members) that the search of the line's document would read as one, as
    /// [`DocLines::read`] reads it from its value; returns `false`, having read nothing,
    /// for any other line. (Lines held while no line has held a transcript are left to
    /// [`DocLines::read`], which says what they are before the first records.)
    fn read_plain(
        &mut self,
        index: usize,
        text: &str,
        loc: &Location,
        detected: &mut Detected,
        finisher: &mut Finisher,
    ) -> io::Result<bool> {
        if !self.reads_runs() || !text.trim_start().starts_with('{') {
            return Ok(false);
        }
        let Some(node) = self.plain.tape.scan(text, PLAIN_NOTED) else {
            return Ok(false);
        };
        // The search of a document looks at its top level as at no run: a document
        // that is one message is read as that message.
        match shallow_scanned(node) {
            Some(value) if !element_like(&value, self.format) => {}
            _ => return Ok(false),
        }
        let (text, len) = (text.to_string(), text.len());
        self.read_run(index, loc, (text, len), detected, finisher)
    }

    /// Reads document `index`, the line at `loc` of [`LARGE_RUN`] bytes or more, which
    /// the line reader measured but did not keep, from the file a message at a time
    /// when it is a run that can be so read ([`Runs::open_large`], which reads a run
    /// with any `--format`), as the search of its document would find it: an object,
    /// not one message, checked a piece at a time ([`run::walk_object`]). `false`,
    /// having read nothing, for any other line.
    fn read_large(
        &mut self,
        index: usize,
        loc: &Location,
        detected: &mut Detected,
        finisher: &mut Finisher,
    ) -> io::Result<bool> {
        let Ok(len) = usize::try_from(loc.len) else {
            return Ok(false);
        };
        let Some(path) = self.plain.file.clone() else {
            return Ok(false);
        };
        if !self.reads_large_runs() || !self.plain.is_large(len) {
            return Ok(false);
        }
        let at = run::At {
            offset: loc.offset,
            line: loc.line,
        };
        match run::walk_object(&path, at, len, run::Lists::Skipped, 0)? {
            Some(walked) if !element_like(&walked.shallow, self.format) => {}
            _ => return Ok(false),
        }
        self.read_run(index, loc, (String::new(), len), detected, finisher)
    }

    /// Whether a line may be read as a run from its text (or a large one from the
    /// file), as the search of its document would read it: without `--select` or a
    /// `--format` other than OpenAI's, and not while lines that hold no transcript
    /// wait for the first that does.
    fn reads_runs(&self) -> bool {
        self.select.is_none()
            && self.reads_large_runs()
            && matches!(self.format, None | Some(Format::OpenAi))
    }

    /// Whether a large line may be read as a run from the file: not while lines that
    /// hold no transcript wait for the first that does; with `--select`, when the path
    /// selects the line's document or a member its keys lead to ([`run::Pick`]).
    fn reads_large_runs(&self) -> bool {
        (self.found || self.held.is_empty())
            && self
                .select
                .as_ref()
                .is_none_or(|path| run::Pick::selected(path).is_some())
    }

    /// Reads document `index`, the line at `loc` of `len` bytes, whose text is given
    /// (scanned into the tape of [`DocLines::plain`]) or, when it is large, read again
    /// from the file, as a run ([`Runs::read_plain`]).
    fn read_run(
        &mut self,
        index: usize,
        loc: &Location,
        (text, len): (String, usize),
        detected: &mut Detected,
        finisher: &mut Finisher,
    ) -> io::Result<bool> {
        self.plain.prefix = format!("line {}", loc.line);
        let mut element = Scanned {
            taped: !text.is_empty(),
            text,
            offset: loc.offset,
            line: loc.line,
            index: 0,
            key: None,
            len,
        };
        self.plain.selected = false;
        if !self
            .plain
            .read_plain(index, &mut element, "", detected, finisher)?
        {
            return Ok(false);
        }
        if let Some(path) = &self.select
            && !self.plain.selected
        {
            // A line without the member the path selects, as its value would say.
            finisher.early_problem(selects_nothing_at(loc.clone(), path, true));
            return Ok(true);
        }
        self.found = true;
        Ok(true)
    }

    /// Finds and adapts the transcripts of document `index`, one line of the file.
    fn read(
        &mut self,
        index: usize,
        doc: Rc<Doc>,
        detected: &mut Detected,
        finisher: &mut Finisher,
    ) {
        let Some(value) = &doc.value else { return };
        let prefix = format!("line {}", doc.line);
        let mut found: Vec<Found<'_>> = Vec::new();
        let mut search = Search {
            doc: index,
            format: self.format,
            prefix: &prefix,
            found: &mut found,
        };
        match &self.select {
            None => {
                search.find(value, "", None, 0);
                if found.is_empty() && !is_empty_transcript(value) {
                    match self.found {
                        true => finisher.early_problem(no_transcript(doc.whole())),
                        false => self.held.push(doc.whole()),
                    }
                }
            }
            Some(selector) => {
                let selected = search.select_in(selector, value);
                let found_any = !found.is_empty();
                let problem = selection_problem(
                    doc.whole(),
                    selector,
                    (selected, found_any),
                    self.format,
                    true,
                );
                if let Some(problem) = problem {
                    finisher.early_problem(problem);
                }
            }
        }
        if found.is_empty() {
            return;
        }
        if !self.found {
            self.found = true;
            for loc in std::mem::take(&mut self.held) {
                finisher.early_problem(no_transcript(loc));
            }
        }
        // Elements with a duplicate key were reported where the line was read; they
        // are not handed to the adapters with a guessed value.
        for transcript in &mut found {
            transcript
                .elements
                .retain(|element| !doc.hides(&element.site.pointer));
        }
        adapt_found(
            found,
            (index, &doc),
            self.format,
            &mut self.otel,
            detected,
            finisher,
        );
        // Every trace named after this line has had all its records: no later line
        // names it (OpenTelemetry traces, named by trace id, are read at the end).
        finisher.end_element_traces(&prefix);
    }

    /// What only the end of the file can tell: its OpenTelemetry spans, and whether it
    /// held any transcript.
    fn finish(mut self, finisher: &mut Finisher) {
        // A run is read through before the next line: one still open here is one whose
        // reading failed, which the stream says.
        self.plain.open = None;
        read_exports(&self.otel, true, finisher);
        if let Some(first) = self.held.into_iter().next() {
            finisher.early_problem(unknown_format_at(first, self.format));
        }
    }
}

/// The longest line of a file of documents one per line that its reader keeps: a line
/// of [`LARGE_RUN`] bytes or more (within `max_line_bytes`) is measured, not kept, and
/// read again from the file ([`DocLines::read_large`]).
fn kept_line_bytes(max_line_bytes: usize) -> usize {
    max_line_bytes.min(LARGE_RUN - 1)
}

/// The length of a large line the reader measured but did not keep.
fn large_len(line: &Line<'_>) -> io::Result<usize> {
    usize::try_from(line.len).map_err(|_| changed("a long line"))
}

/// The first line of a file of JSON documents one per line, as [`Stream::doc_lines`]
/// needs to know it.
#[derive(Clone, Copy)]
pub(super) struct FirstDoc {
    /// Whether the first line's document holds a transcript (of `--format`'s format,
    /// when given).
    holds_transcript: bool,
    /// Whether another line follows it (a file of one line is one document, which
    /// streams, if it does, as a document does).
    pub(super) more: bool,
}

impl FirstDoc {
    /// Reads the first line, and sees whether a second follows, of the file at `path`
    /// read as `options` say. With `--select`, whether the line holds a transcript is
    /// not asked: the findings of such a file wait for its end whatever it holds.
    pub(super) fn read(
        path: &std::path::Path,
        options: &InputOptions,
        max_line_bytes: usize,
    ) -> io::Result<FirstDoc> {
        let format = options.format;
        let file = std::fs::File::open(path)?;
        let input: Box<dyn BufRead> = Box::new(io::BufReader::with_capacity(1 << 16, file));
        let mut reader = LineReader::with_max_line_bytes(input, kept_line_bytes(max_line_bytes));
        let mut holds_transcript = false;
        if options.select.is_some() {
            reader.next_line()?;
        } else if let Some(mut line) = reader.next_line()? {
            let held;
            if line.content == LineContent::TooLong && line.len <= max_line_bytes as u64 {
                let len = large_len(&line)?;
                let at = run::At {
                    offset: line.offset,
                    line: line.number,
                };
                // The common line, a run, is not parsed to say so (nor held).
                if run::walk_object(path, at, len, run::Lists::Tallied(format), 0)?
                    .is_some_and(|walked| walked.finds)
                {
                    return Ok(FirstDoc {
                        holds_transcript: true,
                        more: reader.next_line()?.is_some(),
                    });
                }
                held = run::read_at(path, line.offset, len)?;
                line.content = run::line_content(&held);
            }
            // The common line, a run, is not parsed to say so.
            holds_transcript = match line.content {
                LineContent::Text(text) => {
                    doc_plan::finds_in_members(&mut Tape::default(), text, 0, format)
                }
                _ => false,
            };
            if !holds_transcript
                && let Some(value) =
                    line_doc(line, max_line_bytes, &mut Vec::new()).and_then(|doc| doc.value)
            {
                holds_transcript = search::finds(&value, format, 0);
            }
        }
        Ok(FirstDoc {
            holds_transcript,
            more: reader.next_line()?.is_some(),
        })
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
    ready: VecDeque<Handed>,
    /// Traces whose records have all been handed on, and whose names are forgotten.
    retired: usize,
    /// While a run is read: the traces its records are in.
    element: Option<Vec<String>>,
    /// The first trace's name, until a second one is met.
    first: Option<String>,
    decided: bool,
    many: bool,
    /// Whether records are only counted, by trace, and nothing is handed on (a first
    /// pass).
    count_only: bool,
    /// In a first pass: every trace met, with the adapter's trace (its name within the
    /// transcript) whose records first had its name.
    origins: FxHashMap<String, Option<String>>,
    /// Names that records of more than one of the adapter's traces have (a file's
    /// session `""` and its records of no session), found by a first pass: such a
    /// trace ends only with the input.
    shared: FxHashSet<String>,
    /// Problems of lines read (not JSON, a key twice), waiting for the first item
    /// emitted at or after their place, before which reading the whole input puts
    /// them: an adapter may still hold records from before them.
    early: VecDeque<Problem>,
}

enum Pending {
    Problem(Problem),
    Record(String, super::Made, Location, Option<Known>),
    TraceEnd(String),
}

/// What a stream hands on ([`Stream::next`]).
#[derive(Debug)]
pub(crate) enum Handed {
    /// A record or a problem.
    Entry(Entry),
    /// No record of the trace of this name follows: all of them have been handed on.
    /// Said only of an input of more than one trace, whose records name theirs, and
    /// only when the adapter knows it (the end of a run in a document of runs).
    TraceEnd(String),
}

impl Finisher {
    /// Distinct traces among the records so far.
    fn traces(&self) -> usize {
        match self.count_only {
            // A first pass keeps its traces' names in `origins` only.
            true => self.origins.len(),
            false => self.names.len() + self.retired,
        }
    }

    fn hold(&mut self) -> Option<&mut Vec<Pending>> {
        if self.decided {
            return None;
        }
        Some(self.pending.get_or_insert_with(Vec::new))
    }

    fn problem(&mut self, problem: Problem) {
        if self.count_only {
            return;
        }
        match self.hold() {
            Some(pending) => pending.push(Pending::Problem(problem)),
            None => self.ready.push_back(Handed::Entry(Entry::Problem(problem))),
        }
    }

    /// Ends the traces of the element just read ([`Finisher::element`]) that are named
    /// after its place, `place` (a pointer, a line's `line N`, or both): the name is
    /// the place, or the place then a pointer or a run's id below it. No later element
    /// can name such a trace.
    fn end_element_traces(&mut self, place: &str) {
        for name in self.element.take().unwrap_or_default() {
            let own = name
                .strip_prefix(place)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', ' ']));
            if own {
                self.end(name);
            }
        }
    }

    /// The document on `line`, read with the limit `max_line_bytes`; a problem of the
    /// line (not JSON, a key twice) waits with the others of lines read, in line order.
    fn line_doc(&mut self, line: Line<'_>, max_line_bytes: usize) -> Option<Doc> {
        let mut problems = Vec::new();
        let doc = line_doc(line, max_line_bytes, &mut problems);
        self.early.extend(problems);
        doc
    }

    /// A problem of a line read, in its place among those waiting: after those at or
    /// before its offset, as reading the whole input sorts them.
    fn early_problem(&mut self, problem: Problem) {
        let at = self
            .early
            .partition_point(|p| p.loc.offset <= problem.loc.offset);
        self.early.insert(at, problem);
    }

    /// Hands on the problems of lines read up to `offset` (all with `None`).
    fn drain_early(&mut self, offset: Option<u64>) {
        while self
            .early
            .front()
            .is_some_and(|p| offset.is_none_or(|offset| p.loc.offset <= offset))
        {
            let problem = self.early.pop_front().expect("bug: a problem just seen");
            self.problem(problem);
        }
    }

    /// A problem an adapter found, in its place among the records.
    fn item_problem(&mut self, problem: Problem) {
        self.drain_early(Some(problem.loc.offset));
        self.problem(problem);
    }

    /// An item an adapter emitted for the transcript named `transcript`, located by
    /// `locate`.
    fn emitted(
        &mut self,
        transcript: &str,
        mut item: Emitted,
        locate: impl FnOnce(&mut Site) -> Location,
    ) {
        let loc = locate(&mut item.site);
        if let Emit::Placed(message) = item.what {
            // In its place among the problems of lines read, whatever was handed on.
            if !self.count_only {
                self.early_problem(malformed(loc, message));
            }
            return;
        }
        self.drain_early(Some(loc.offset));
        if self.count_only {
            match item.what {
                Emit::Problem(_) | Emit::Placed(_) => {}
                Emit::Record(_) => self.count(transcript, item.trace),
            }
            return;
        }
        let name = match item.what {
            // The sub-trace's name is the trace's: moved, not copied.
            Emit::Record(_) if transcript.is_empty() => item.trace.take().unwrap_or_default(),
            Emit::Record(_) => trace_name(transcript, &item),
            Emit::Problem(_) | Emit::Placed(_) => String::new(),
        };
        match item.what {
            Emit::Problem(message) => self.problem(malformed(loc, message)),
            Emit::Placed(_) => unreachable!("bug: a placed problem handed on"),
            Emit::Record(fields) => {
                if let Some(element) = &mut self.element {
                    if !element.contains(&name) {
                        element.push(name.clone());
                    }
                }
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
                    Some(pending) => pending.push(Pending::Record(name, fields, loc, item.known)),
                    None => self.record(name, fields, loc, item.known),
                }
            }
        }
    }

    /// In a first pass: counts a record of the adapter's trace `sub` of the transcript
    /// named `transcript`, and notes whether its name is another trace's too.
    fn count(&mut self, transcript: &str, sub: Option<String>) {
        let name = match transcript {
            "" => Cow::Borrowed(sub.as_deref().unwrap_or_default()),
            _ => Cow::Owned(sub_trace_name(transcript, sub.as_deref())),
        };
        match self.origins.get(name.as_ref()) {
            Some(origin) if *origin != sub => {
                self.shared.insert(name.into_owned());
            }
            Some(_) => {}
            None => {
                self.origins.insert(name.into_owned(), sub);
            }
        }
    }

    /// The adapter's trace `sub` of the transcript named `transcript` (a session, a
    /// thread) has emitted every record of its own: once they are handed on, its trace
    /// has ended, unless another of the adapter's traces has its name.
    fn ended(&mut self, transcript: &str, sub: Option<&str>) {
        let name = sub_trace_name(transcript, sub);
        if !self.shared.contains(&name) {
            self.end(name);
        }
    }

    /// Decides: what was held back is handed on, and nothing is held from now on.
    fn flush(&mut self) {
        self.decided = true;
        for pending in self.pending.take().unwrap_or_default() {
            match pending {
                Pending::Problem(problem) => {
                    self.ready.push_back(Handed::Entry(Entry::Problem(problem)))
                }
                Pending::Record(name, fields, loc, known) => self.record(name, fields, loc, known),
                Pending::TraceEnd(name) => self.retire(name),
            }
        }
    }

    /// Every record of the trace `name` has been emitted: once they are handed on, it
    /// has ended.
    fn end(&mut self, name: String) {
        match self.hold() {
            Some(pending) => pending.push(Pending::TraceEnd(name)),
            None => self.retire(name),
        }
    }

    /// Forgets the trace `name`, whose records have all been handed on, and says it
    /// has ended, when records name their trace. Its `seq` is needed no more; it is
    /// still counted.
    fn retire(&mut self, name: String) {
        if self.names.remove(&name).is_none() {
            return;
        }
        self.retired += 1;
        if self.many && !self.count_only {
            self.ready.push_back(Handed::TraceEnd(name));
        }
    }

    /// Hands on a record of the trace `name`, whose canonical fields are `known` if the
    /// adapter knew them.
    fn record(
        &mut self,
        name: String,
        mut fields: super::Made,
        loc: Location,
        known: Option<Known>,
    ) {
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
            fields.insert("trace", Value::String(name));
        }
        fields.insert("seq", Value::from(this));
        let entry = match known {
            Some(known) => Entry::Record(Record::known(fields.into_fields(), loc, known)),
            None => match Record::new(fields.into_fields(), loc.clone()) {
                Ok(record) => Entry::Record(record),
                Err(err) => Entry::Problem(malformed(loc, err.to_string())),
            },
        };
        self.ready.push_back(Handed::Entry(entry));
    }
}

/// The elements of a JSON array, read one at a time from a reader, or members of an
/// object, each with its place in the file.
struct Elements {
    source: ElementSource,
    /// The JSON pointer of the array or object.
    pointer: String,
    /// The key of the last member read.
    key: Option<String>,
    /// Elements read so far.
    count: usize,
    done: bool,
    /// Where the last element read starts, and its length.
    last_offset: u64,
    last_line: u64,
    last_len: usize,
    /// The text of an element read and done with, whose buffer the next one takes.
    spare: String,
    /// The file read, when an element of [`LARGE_RUN`] bytes or more is measured but
    /// not kept ([`Scanned::len`]), to be read again from its place if it is wanted
    /// whole ([`Elements::hold`]).
    large: Option<Rc<std::path::Path>>,
}

/// Where [`Elements`] reads from.
enum ElementSource {
    /// The elements of an array, scanned in turn.
    Array(Scanner),
    /// Members of an object, each read from its place in the file.
    Places {
        file: std::fs::File,
        places: std::vec::IntoIter<Place>,
    },
}

/// The largest buffer [`Elements::recycle`] keeps: one large element does not hold
/// its memory for the rest of the document.
const SPARE_LIMIT: usize = 1 << 20;

/// One element's text and place.
struct Scanned {
    text: String,
    offset: u64,
    line: u64,
    index: usize,
    /// The member's key, when it is an object's member.
    key: Option<String>,
    /// Whether the tape [`Elements::next`] was given holds the scan of `text`.
    taped: bool,
    /// Its length: more than `text` holds, which is then empty, when it is large and
    /// was measured but not kept.
    len: usize,
}

impl Elements {
    /// Starts reading the array that `path` leads to from the top level of the
    /// document `input` holds (the top level itself with no step), which a first pass
    /// found there.
    fn at(input: Box<dyn BufRead>, path: &[Step], pointer: String) -> io::Result<Elements> {
        let mut scan = Scanner::new(input)?;
        let mut bytes = Vec::new();
        for step in path {
            match (scan.next_byte()?, step.in_object(), step.in_array()) {
                (Some(b'{'), Some(wanted), _) => {
                    scan.advance(1);
                    loop {
                        let key = scan
                            .key(&mut bytes)?
                            .ok_or_else(|| changed("expected a key"))?;
                        if !scan.eat(b':')? {
                            return Err(changed("expected `:`"));
                        }
                        if key == wanted {
                            break;
                        }
                        scan.skip_ws()?;
                        scan.value(None)?;
                        if !scan.eat(b',')? {
                            return Err(changed("expected `,`"));
                        }
                    }
                }
                (Some(b'['), _, Some(index)) => {
                    scan.advance(1);
                    for _ in 0..index {
                        scan.skip_ws()?;
                        scan.value(None)?;
                        if !scan.eat(b',')? {
                            return Err(changed("expected `,`"));
                        }
                    }
                }
                _ => return Err(changed("expected the path's object or array")),
            }
        }
        if !scan.eat(b'[')? {
            return Err(changed("expected an array"));
        }
        Ok(Elements::of(ElementSource::Array(scan), pointer))
    }

    /// Reads the members of the object at `pointer` in `file` that are at `places`,
    /// in that order.
    fn members(file: std::fs::File, pointer: String, places: Vec<Place>) -> Elements {
        let places = places.into_iter();
        Elements::of(ElementSource::Places { file, places }, pointer)
    }

    fn of(source: ElementSource, pointer: String) -> Elements {
        Elements {
            source,
            pointer,
            key: None,
            count: 0,
            done: false,
            last_offset: 0,
            last_line: 0,
            last_len: 0,
            spare: String::new(),
            large: None,
        }
    }

    /// The next element, or `None` after the last.
    ///
    /// With a tape, the element is scanned into it where it lies in the reader's
    /// buffer when it is whole there (noting the items `depth` containers deep), in
    /// the pass that finds its end: `taped` says whether it was.
    fn next(&mut self, tape: Option<(&mut Tape, usize)>) -> io::Result<Option<Scanned>> {
        // In the buffer of the element before, when it was given back; else sized as
        // the last element was: elements are alike, so one allocation each.
        let mut bytes = std::mem::take(&mut self.spare).into_bytes();
        bytes.reserve(self.last_len);
        let Some((taped, len)) = self.next_into(&mut bytes, tape)? else {
            return Ok(None);
        };
        self.last_len = bytes.len();
        let text = String::from_utf8(bytes).map_err(|_| changed("not UTF-8"))?;
        Ok(Some(Scanned {
            text,
            offset: self.last_offset,
            line: self.last_line,
            index: self.count - 1,
            key: self.key.take(),
            taped,
            len,
        }))
    }

    /// Reads past the next `count` elements, keeping nothing of them; an array that ends
    /// before is one changed since its first pass.
    fn skip(&mut self, count: usize) -> io::Result<()> {
        for _ in 0..count {
            let scan = match &mut self.source {
                ElementSource::Array(scan) => scan,
                ElementSource::Places { places, .. } => {
                    if places.next().is_none() {
                        return Err(changed("fewer members"));
                    }
                    self.count += 1;
                    continue;
                }
            };
            if !at_element(scan, self.count)? {
                return Err(changed("fewer elements"));
            }
            scan.value(None)?;
            self.count += 1;
        }
        Ok(())
    }

    /// Reads the text of `element`, when it was measured but not kept, from its place
    /// in the file.
    fn hold(&mut self, element: &mut Scanned) -> io::Result<()> {
        if element.text.len() == element.len {
            return Ok(());
        }
        let path = self
            .large
            .as_ref()
            .ok_or_else(|| changed("an element not kept"))?;
        let bytes = run::read_at(path, element.offset, element.len)?;
        element.text = String::from_utf8(bytes).map_err(|_| changed("not UTF-8"))?;
        Ok(())
    }

    /// Gives back the text of an element that is done with, for the next one's bytes.
    fn recycle(&mut self, text: String) {
        if text.capacity() <= SPARE_LIMIT {
            self.spare = text;
        }
    }

    /// Reads the next element's bytes into `bytes` (cleared first), and scans them into
    /// `tape` when it can ([`Elements::next`]): whether it did, and the element's
    /// length (only measured, `bytes` left empty, when it is large and may be read
    /// again); `None` after the last.
    fn next_into(
        &mut self,
        bytes: &mut Vec<u8>,
        tape: Option<(&mut Tape, usize)>,
    ) -> io::Result<Option<(bool, usize)>> {
        let cap = match self.large {
            Some(_) => LARGE_RUN,
            None => usize::MAX,
        };
        bytes.clear();
        if self.done {
            return Ok(None);
        }
        let scan = match &mut self.source {
            ElementSource::Array(scan) => scan,
            ElementSource::Places { file, places } => {
                let Some(place) = places.next() else {
                    self.done = true;
                    return Ok(None);
                };
                use std::io::{Read as _, Seek as _};
                file.seek(io::SeekFrom::Start(place.offset))?;
                let len = usize::try_from(place.len).map_err(|_| changed("a member too long"))?;
                (self.last_offset, self.last_line) = (place.offset, place.line);
                self.key = Some(place.key);
                self.count += 1;
                if len >= cap {
                    return Ok(Some((false, len)));
                }
                bytes.resize(len, 0);
                file.read_exact(bytes)?;
                return Ok(Some((false, len)));
            }
        };
        if !at_element(scan, self.count)? {
            self.done = true;
            return Ok(None);
        }
        (self.last_offset, self.last_line) = (scan.offset, scan.line);
        let mut taped = false;
        if let Some((tape, depth)) = tape {
            let buffered = scan.buffered()?;
            if let Some(end) = tape.scan_prefix(buffered, depth) {
                bytes.extend_from_slice(&buffered[..end]);
                scan.consume(end)?;
                taped = true;
            }
        }
        let len = match taped {
            true => bytes.len(),
            false => usize::try_from(scan.value_upto(Some(bytes), cap)?)
                .map_err(|_| changed("an element too long"))?,
        };
        self.count += 1;
        if len >= cap {
            bytes.clear();
            return Ok(Some((false, len)));
        }
        Ok(Some((taped, len)))
    }
}

/// Moves `scan`, in an array after `read` of its elements, to the start of the next
/// element (past the `,` before it); `false` past the `]` after the last.
fn at_element(scan: &mut Scanner, read: usize) -> io::Result<bool> {
    match scan.next_byte()? {
        Some(b']') => {
            scan.advance(1);
            Ok(false)
        }
        Some(b',') if read > 0 => {
            scan.advance(1);
            scan.skip_ws()?;
            Ok(true)
        }
        Some(_) if read == 0 => Ok(true),
        _ => Err(changed("expected `,` or `]`")),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use rustc_hash::{FxHashMap, FxHashSet};

    use super::{LinePlan, Lines, Reader, SessionEnds, Stream};
    use crate::trace::adapters::document::line_doc;
    use crate::trace::adapters::{Emit, Format, mcp};
    use crate::trace::reader::LineReader;

    const MAX_LINE_BYTES: usize = 1 << 20;

    #[test]
    fn a_large_element_is_measured_and_read_again_only_when_wanted() {
        let messages = vec![r#"{"role": "user", "content": "hello"}"#; 100].join(", ");
        let large = format!(r#"{{"id": "r", "messages": [{messages}]}}"#);
        assert!(large.len() >= super::LARGE_RUN);
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("runs.json");
        std::fs::write(&path, format!("[{{\"a\": 1}},\n{large},\n{{\"b\": 2}}]")).expect("written");
        let file = std::fs::File::open(&path).expect("opens");
        let input = Box::new(std::io::BufReader::new(file));
        let mut elements = super::Elements::at(input, &[], String::new()).expect("an array");
        elements.large = Some(std::rc::Rc::from(path.as_path()));
        let mut next = || elements.next(None).expect("reads").expect("an element");
        assert_eq!(next().text, r#"{"a": 1}"#);
        let mut second = next();
        assert_eq!((second.text.as_str(), second.len), ("", large.len()));
        assert_eq!((second.line, second.offset), (2, 11));
        assert_eq!(next().text, r#"{"b": 2}"#);
        elements.hold(&mut second).expect("reads again");
        assert_eq!(second.text, large);
        assert!(elements.next(None).expect("reads").is_none());
    }

    /// Where each session of a log ends (after which document, that first), how many
    /// traces it holds, and the names two sessions share.
    type Found = (Vec<(usize, Option<String>)>, usize, FxHashSet<String>);

    /// What the MCP log `log` holds ([`Found`]), as reading every line in full from
    /// its document, through the adapter, finds it; each session ending after its last
    /// record, or after a later line that [`mcp::quick_session`] says is of it, as a
    /// first pass places it once the session is known to have records (a line that
    /// gives none only delays that end).
    fn read_in_full(log: &[u8]) -> Found {
        let mut lines = LineReader::with_max_line_bytes(log, MAX_LINE_BYTES);
        let mut reader = mcp::Reader::default();
        let mut last: FxHashMap<Option<String>, usize> = FxHashMap::default();
        let mut delayed: FxHashMap<Option<String>, usize> = FxHashMap::default();
        let mut index = 0;
        while let Some(line) = lines.next_line().expect("reading memory") {
            let quick = match &line.content {
                crate::trace::reader::LineContent::Text(text) => mcp::quick_session(text),
                _ => None,
            }
            .map(|session| session.map(str::to_string))
            .filter(|session| last.contains_key(session));
            let Some(doc) = line_doc(line, MAX_LINE_BYTES, &mut Vec::new()) else {
                continue;
            };
            if let Some(session) = quick {
                delayed.insert(session, index);
            }
            let out = reader.read_doc(&std::rc::Rc::new(doc), index);
            for item in out.items {
                if matches!(item.what, Emit::Record(_)) {
                    last.insert(item.trace, index);
                }
            }
            index += 1;
        }
        let mut ends: Vec<(usize, Option<String>)> = last
            .iter()
            .map(|(name, at)| (delayed.get(name).map_or(*at, |d| *d.max(at)), name.clone()))
            .collect();
        ends.sort_unstable();
        let names: FxHashSet<&str> = last.keys().map(|n| n.as_deref().unwrap_or("")).collect();
        let mut shared = FxHashSet::default();
        if last.contains_key(&None) && last.contains_key(&Some(String::new())) {
            shared.insert(String::new());
        }
        (ends, names.len(), shared)
    }

    /// The same, as a first pass over the log finds them for the stream to come.
    fn surveyed(log: &[u8]) -> Found {
        let stream = |log: &[u8]| {
            let plan = LinePlan {
                format: Format::Mcp,
                decided: true,
                foreign: None,
                unread_before_foreign: false,
                codex_answered: Default::default(),
                responses_answered: Default::default(),
                enough: true,
            };
            let input = Box::new(Cursor::new(log.to_vec()));
            Stream::lines(input, plan, false, MAX_LINE_BYTES).expect("an MCP log streams")
        };
        let mut main = stream(log);
        let Reader::Lines(lines) = &mut main.reader else {
            panic!("a log of lines is read by an adapter of lines")
        };
        let (traces, shared) = stream(log).read_through(lines).expect("reading memory");
        let Lines::Mcp(_, SessionEnds { ends, .. }) = lines else {
            panic!("an MCP log is read by the MCP adapter")
        };
        (ends.iter().cloned().collect(), traces, shared)
    }

    /// Lines of every kind an MCP log may hold, each one document.
    const LOG: &[&str] = &[
        // Requests and replies of interleaved sessions, some read by the cheap way.
        r#"{"session_id":"s1","direction":"send","timestamp":"t","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"a":1}}}}"#,
        r#"{"session_id":"s2","direction":"send","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create"}}}"#,
        r#"{"session_id":"s1","direction":"recv","message":{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"id":"r"},"isError":false}}}"#,
        // A session named with an escape is the same session.
        r#"{"session_id":"s\u0032","direction":"recv","message":{"jsonrpc":"2.0","id":1,"result":{"content":[]}}}"#,
        // Records of no session, and of a session named "".
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get"}}"#,
        r#"{"session_id":"","message":{"jsonrpc":"2.0","id":7,"method":"ping"}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"late"}}"#,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
        // Sessions named by numbers, by a later member when an earlier one names
        // nothing, or by nothing at all.
        r#"{"session_id":7,"message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get"}}}"#,
        r#"{"session_id":null,"sessionId":"s3","message":{"jsonrpc":"2.0","id":2,"result":1}}"#,
        r#"{"session_id":{"a":1},"session":true,"payload":{"jsonrpc":"2.0","id":3,"result":1}}"#,
        r#"{"sessionId":"s4","session":"s5","message":{"jsonrpc":"2.0","method":"notifications/progress"}}"#,
        // Replies to no request, without an id, invalid ones.
        r#"{"session_id":"s2","message":{"jsonrpc":"2.0","id":99,"result":{}}}"#,
        r#"{"session_id":"s2","message":{"jsonrpc":"2.0","result":{}}}"#,
        r#"{"session_id":"s2","message":{"jsonrpc":"1.0","id":1,"error":{"code":1.5}}}"#,
        // Batches: of requests, empty, with a member that is not a message.
        r#"{"session_id":"s6","message":[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}]}"#,
        r#"{"session_id":"s7","message":[]}"#,
        r#"{"session_id":"s8","message":[5]}"#,
        r#"[{"jsonrpc":"2.0","id":4,"method":"ping"}]"#,
        r#"[]"#,
        // Messages that are problems: a method that is not a string, a tool call
        // without its tool's name as a string, one named with an escape.
        r#"{"session_id":"s9","message":{"jsonrpc":"2.0","id":1,"method":5}}"#,
        r#"{"session_id":"s9","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}}"#,
        r#"{"session_id":"s9","message":{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{}}}"#,
        r#"{"session_id":"s9","message":{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"x"}}}"#,
        r#"{"session_id":"s10","message":{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}}"#,
        r#"{"session_id":"s10","message":{"jsonrpc":"2.0","id":1,"method":"tools/call"}}"#,
        // Envelopes with odd members: escaped names, a message that is not an object,
        // a payload beside it, no message at all.
        r#"{"sess\u0069on_id":"s11","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
        r#"{"session_id":"s11","message":{"jsonrpc":"2.0","id":1,"m\u0065thod":"ping"}}"#,
        r#"{"session_id":"s12","message":"text","payload":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
        r#"{"session_id":"s12","message":5,"payload":[]}"#,
        r#"{"session_id":"s13","note":"no message"}"#,
        r#"{"session_id":"s14","message":{"id":1}}"#,
        // Lines that are no message: a scalar, broken JSON, keys twice.
        r#"5"#,
        r#"{"session_id":"s15","message":{"jsonrpc":"2.0","id":1,"method":"ping""#,
        r#"{"session_id":"s15","session_id":"s16","message":{"jsonrpc":"2.0","id":1,"method":"ping"}}"#,
        r#"{"session_id":"s15","message":{"jsonrpc":"2.0","id":1,"method":"ping","params":{"a":1,"a":2}}}"#,
        "   ",
        // Lines a first pass may place without reading them through: a bare message
        // with a session member (of no session), a session member only inside the
        // message, members in every order, spaces, brackets and escapes in strings,
        // a batch beside a payload, and broken lines that name a session.
        r#"{"session_id":"s1","jsonrpc":"2.0","id":5,"method":"ping"}"#,
        r#"{"message":{"jsonrpc":"2.0","id":1,"method":"ping","params":{"session_id":"s1"}}}"#,
        r#"{"session":"s1","session_id":"s2","message":{"jsonrpc":"2.0","id":2,"method":"ping"}}"#,
        r#"{"sessionId":"s2","message":{"jsonrpc":"2.0","id":3,"method":"ping"},"session_id":"s1"}"#,
        r#" { "session_id" : "s2" , "message" : { "jsonrpc" : "2.0" , "id" : 4 , "method" : "ping" } } "#,
        r#"{"session_id":"s1","payload":{"jsonrpc":"2.0","id":6,"method":"ping"},"message":[{"jsonrpc":"2.0","id":7,"method":"ping"}]}"#,
        r#"{"session_id":"s2","message":{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"a\"b}{","arguments":{"x":"]]}}"}}}}"#,
        r#"{"x":"\\","session_id":"s1","message":{"jsonrpc":"2.0","id":9,"method":"ping"}}"#,
        r#"{"session_id":"s1","message":{"jsonrpc":"2.0","id":10,"method":"ping"}}garbage"#,
        r#"{"session_id":"s2","message":{"jsonrpc":"2.0","id":11,"method":"ping"}"#,
        r#"{"session_id":"s2","message":{"jsonrpc":"2.0","id":12,"method":5}}"#,
        r#"{"session_id":"s1","jsonrpc":"2.0","id":13,"method":"ping","message":{"a":1}}"#,
        // The first sessions again, so they end late.
        r#"{"session_id":"s1","direction":"send","message":{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}}"#,
        r#"{"session_id":"s2","direction":"recv","message":{"jsonrpc":"2.0","id":1,"result":{"content":[]}}}"#,
    ];

    fn log_of(lines: &[&str]) -> Vec<u8> {
        let mut log = lines.join("\n").into_bytes();
        // A line that is not UTF-8.
        log.extend_from_slice(b"\n{\"session_id\":\"s17\xff\"}\n");
        log
    }

    #[test]
    fn a_first_pass_finds_the_ends_and_traces_reading_the_log_in_full_finds() {
        let (want, traces, shared) = read_in_full(&log_of(LOG));
        assert_eq!(traces, 12, "{want:?}");
        assert_eq!(shared, FxHashSet::from_iter([String::new()]));
        assert_eq!(surveyed(&log_of(LOG)), (want, traces, shared));
        // Each session ending in turn at each place: the log rotated line by line.
        for turn in 1..LOG.len() {
            let mut lines = LOG.to_vec();
            lines.rotate_left(turn);
            let log = log_of(&lines);
            assert_eq!(surveyed(&log), read_in_full(&log), "rotated by {turn}");
        }
    }

    #[test]
    fn a_first_pass_reads_the_common_line_only_as_far_as_its_session() {
        let mut reader = mcp::Reader::default();
        let sessions: Vec<Option<Option<String>>> = LOG
            .iter()
            .map(|line| match reader.line_session(line) {
                mcp::LineSession::Records(session) => Some(session.map(|s| s.into_owned())),
                mcp::LineSession::Unknown => None,
            })
            .collect();
        let known: Vec<(usize, Option<&str>)> = sessions
            .iter()
            .enumerate()
            .filter_map(|(at, session)| Some((at, session.as_ref()?.as_deref())))
            .collect();
        let want = [
            (0, Some("s1")),
            (1, Some("s2")),
            (2, Some("s1")),
            (3, Some("s2")),
            (4, None),
            (5, Some("")),
            (6, None),
            (7, None),
            (11, Some("s4")),
            (12, Some("s2")),
            (13, Some("s2")),
            (14, Some("s2")),
            (28, Some("s12")),
            (31, Some("s14")),
            (37, None),
            (38, None),
            (39, Some("s2")),
            (40, Some("s1")),
            (41, Some("s2")),
            (43, Some("s2")),
            (44, Some("s1")),
            (48, None),
            (49, Some("s1")),
            (50, Some("s2")),
        ];
        assert_eq!(known, want);
    }

    #[test]
    fn a_line_placed_without_reading_it_through_is_of_the_session_reading_it_gives() {
        // Wherever both answer, the unchecked read agrees with the checked one.
        let mut reader = mcp::Reader::default();
        let mut agreed = 0;
        for line in LOG {
            let quick = mcp::quick_session(line);
            if let (Some(quick), mcp::LineSession::Records(session)) =
                (quick, reader.line_session(line))
            {
                assert_eq!(quick, session.as_deref(), "{line}");
                agreed += 1;
            }
        }
        assert_eq!(agreed, 18);
        // A bare message is of no session whatever members it has beside `jsonrpc`; a
        // session named only inside the message is none; an escaped or non-string
        // session, a batch alone, broken text: not known without reading.
        let cases = [
            (LOG[37], None),
            (LOG[38], Some(None)),
            (LOG[42], Some(Some("s1"))),
            (LOG[3], None),
            (LOG[8], None),
            (LOG[15], None),
            // Broken after the message, which it is read only to: placed in its session,
            // as it may be.
            (LOG[46], Some(Some("s2"))),
            (LOG[48], None),
            (r#"{"session_id":"s1","message":{"a":"\"#, None),
            (r#"{"session_id":"s1","message":{"#, None),
            (r#"{"#, None),
            ("", None),
            // Read only to the message when nothing after it could change the answer;
            // else through: a top-level `jsonrpc` after it, plain or escaped, a
            // `session_id` after it, a message that does not start with `jsonrpc`.
            (
                r#"{"session_id":"s1","message":{"jsonrpc":"2.0","id":1}}"#,
                Some(Some("s1")),
            ),
            (
                r#"{"session_id":"s1","message":{"jsonrpc":"2.0","id":1},"jsonrpc":"2.0"}"#,
                None,
            ),
            (
                r#"{"session_id":"s1","message":{"jsonrpc":"2.0","id":1},"json\u0072pc":"2.0"}"#,
                None,
            ),
            (
                r#"{"sessionId":"s2","message":{"jsonrpc":"2.0"},"session_id":"s1"}"#,
                Some(Some("s1")),
            ),
            (
                r#"{"session_id":"s1","message":{"id":1,"jsonrpc":"2.0"},"session":"s3"}"#,
                Some(Some("s1")),
            ),
        ];
        for (line, want) in cases {
            assert_eq!(mcp::quick_session(line), want, "{line}");
        }
        // A line cut short anywhere is placed nowhere, or where the whole line is (and
        // nothing panics).
        for line in LOG.iter().filter(|line| line.ends_with('}')) {
            let whole = mcp::quick_session(line);
            for end in (0..line.len()).filter(|&end| line.is_char_boundary(end)) {
                let cut = mcp::quick_session(&line[..end]);
                assert!(cut.is_none() || cut == whole, "{}", &line[..end]);
            }
        }
    }
}
