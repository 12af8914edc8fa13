//! One way to read a trace input of any format: open it, learn what it holds, and go
//! through its records and problems in input order.
//!
//! [`TraceInput::open`] recognizes what a file holds ([`adapters::open`]). Native JSONL
//! stays on the streaming path, decoded line by line into records that borrow the
//! line, so a file of any size is read in bounded memory; files of one transcript
//! element per line and run-array documents stream through their adapters
//! ([`adapters::Stream`]); an OpenTelemetry export is scanned span by span, keeping
//! only its tool spans' records, which come at its end; other formats are read whole
//! by their adapter. Either way [`TraceInput::for_each`] hands out one [`Item`] at a
//! time. Every consumer of traces (checking, coverage, shrinking, `convert`,
//! `lint --traces`, `graph --highlight`) reads them through this type.
//!
//! Not every input is a regular file. `-` is standard input; a named pipe, a process
//! substitution (`<(…)`) or `/dev/stdin` fed by a pipe is a stream. Its first bytes
//! decide its format: native records and files of transcript lines read as they come;
//! any other input that is longer than those first bytes, or than 1 MiB when they
//! hold all of it (a JSON document on a few lines, a Codex rollout), is copied to a
//! temporary file (`trace::spool`) and read from there exactly as a regular file of
//! the same bytes is, in bounded memory; so is a file of transcript lines whose
//! records are still held back where its file would be read through first (they wait
//! to learn whether it holds more than one trace), from the bytes read so far, kept
//! until then, and the rest of the stream. A pipe is
//! opened without waiting for a writer, so a named pipe nobody writes to reads as
//! empty instead of blocking the run. Devices (`/dev/zero`) and sockets are refused:
//! they may never end. An input that holds nothing at all is a problem
//! ([`ProblemKind::Empty`]), never a silent pass.

use std::cell::RefCell;
use std::io::{self, BufRead, BufReader, IsTerminal, Read};
use std::path::Path;
use std::rc::Rc;

use super::adapters::{self, Detected, Entry, Format, InputOptions, Layout, Opened, Problem};
use super::adapters::{Handed, ProblemKind, Reading, Stream, StreamOpened, Streamed, Unstreamed};
use super::ahead;
use super::native;
use super::reader::{DEFAULT_MAX_LINE_BYTES, Line, LineReader};
use super::record::Record;
use super::spool::Spool;

/// An opened trace input, ready to be read once.
pub struct TraceInput<'a> {
    detected: Detected,
    body: Body<'a>,
    /// Whether an input with nothing in it is a problem: for files and streams a user
    /// named, not for text a program generated (an empty trace is a valid word).
    report_empty: bool,
    /// What was recognized, as it is once the input is read.
    at_end: DetectedAtEnd,
    /// For a stream (standard input, a pipe), which cannot be read again: its last
    /// bytes, so that a finding can quote the record it points to.
    recent: Option<RecentBytes>,
}

/// The last bytes read from a stream, at least [`RecentBytes::KEEP`] of them, with
/// where they start in the stream: a finding made while its record is read quotes it
/// from here, in bounded memory however long the stream. A stream kept in a temporary
/// file (`trace::spool`) keeps no window: any of its bytes are read back from the file.
#[derive(Debug, Clone, Default)]
pub struct RecentBytes(Rc<RefCell<Window>>);

#[derive(Debug, Default)]
struct Window {
    /// Stream offset of `bytes[0]`.
    start: u64,
    bytes: Vec<u8>,
    /// Whether every byte since the stream's start is kept: until it is known whether
    /// the stream is copied to a temporary file.
    from_start: bool,
    /// Where the whole stream is, once it is spooled.
    spool: Option<Rc<Spool>>,
}

impl RecentBytes {
    /// Bytes kept at least; the window is cut back to this once it holds twice as many.
    pub const KEEP: usize = 1 << 20;

    /// The stream's bytes from `offset`, at most `len` of them; `None` once they have
    /// left the window.
    pub fn get(&self, offset: u64, len: usize) -> Option<Box<[u8]>> {
        let window = self.0.borrow();
        if let Some(spool) = &window.spool {
            return spool.read(offset, len);
        }
        let from = usize::try_from(offset.checked_sub(window.start)?).ok()?;
        let rest = window.bytes.get(from..)?;
        Some(rest[..len.min(rest.len())].into())
    }

    fn keep(&self, read: &[u8]) {
        let mut window = self.0.borrow_mut();
        if window.spool.is_some() {
            return;
        }
        window.bytes.extend_from_slice(read);
        if !window.from_start && window.bytes.len() >= 2 * Self::KEEP {
            let cut = window.bytes.len() - Self::KEEP;
            window.bytes.drain(..cut);
            window.start += cut as u64;
        }
    }

    /// A window that keeps every byte of the stream until [`RecentBytes::forget_start`]
    /// or [`RecentBytes::take_all`].
    fn from_start() -> RecentBytes {
        let recent = RecentBytes::default();
        recent.0.borrow_mut().from_start = true;
        recent
    }

    /// Whether the stream is read back from a temporary file.
    #[cfg(test)]
    fn is_spooled(&self) -> bool {
        self.0.borrow().spool.is_some()
    }

    /// From now on, only the last bytes are kept.
    fn forget_start(&self) {
        self.0.borrow_mut().from_start = false;
    }

    /// Every byte read so far, taken out of a window that has kept all of them
    /// ([`RecentBytes::from_start`]); from now on, only the last bytes are kept.
    fn take_all(&self) -> Vec<u8> {
        let mut window = self.0.borrow_mut();
        debug_assert!(
            window.from_start && window.start == 0,
            "bug: the window lost its start"
        );
        window.from_start = false;
        std::mem::take(&mut window.bytes)
    }

    /// All the bytes of a stream kept in `spool`.
    pub(crate) fn of_spool(spool: Rc<Spool>) -> RecentBytes {
        let recent = RecentBytes::default();
        recent.spooled(spool);
        recent
    }

    /// From now on, the stream's bytes are read back from `spool`, which holds all of
    /// them: the window is dropped.
    fn spooled(&self, spool: Rc<Spool>) {
        *self.0.borrow_mut() = Window {
            spool: Some(spool),
            ..Window::default()
        };
    }
}

/// A reader that keeps what it reads in a [`RecentBytes`] window. The stream it reads
/// is shared with its opener, which may take it to copy the rest of it to a temporary
/// file (then this reader is at its end).
struct Keeping {
    inner: Rc<RefCell<Option<Box<dyn Read>>>>,
    recent: RecentBytes,
}

impl Read for Keeping {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = match self.inner.borrow_mut().as_mut() {
            Some(inner) => inner.read(buf)?,
            None => 0,
        };
        self.recent.keep(&buf[..n]);
        Ok(n)
    }
}

/// What was recognized in an input, complete once the input has been read: a streamed
/// transcript learns its formats and traces as it goes.
#[derive(Debug, Clone)]
pub struct DetectedAtEnd(Rc<RefCell<Detected>>);

impl DetectedAtEnd {
    fn new(detected: &Detected) -> DetectedAtEnd {
        DetectedAtEnd(Rc::new(RefCell::new(detected.clone())))
    }

    /// What was recognized: final once the input it came from has been read.
    pub fn get(&self) -> Detected {
        self.0.borrow().clone()
    }
}

enum Body<'a> {
    /// Native records, one per line, decoded as they are read.
    Lines {
        reader: Lines<'a>,
        max_line_bytes: usize,
    },
    /// A transcript format read as it streams ([`Stream`]).
    Stream(Box<Stream>),
    /// What an adapter read from the whole input.
    Read(Reading),
}

/// The line reader of native records: one that can move to another thread (a file,
/// bytes in memory), so that its lines can be decoded there ([`ahead`]), or one that
/// stays on the reader's (a stream, or any reader a caller gave).
enum Lines<'a> {
    Movable {
        reader: LineReader<Box<dyn BufRead + Send + 'a>>,
        /// Whether its lines are decoded on a second thread ([`ahead`]).
        ahead: bool,
    },
    Here(LineReader<Box<dyn BufRead + 'a>>),
}

/// One element of a trace input, in input order.
#[derive(Debug)]
pub enum Item<'r> {
    /// A normalized record.
    Record(Record<'r>),
    /// An element that is not a usable record, or an input in no known format.
    Problem(Problem),
    /// Reading failed part-way; nothing after this item is read.
    Stopped(io::Error),
    /// The trace of this name, which records name in their `trace` field, has ended:
    /// no record of it follows. Said only when the adapter knows it, of an input of
    /// more than one trace: at the end of each run of a streamed document of runs, and
    /// after the last line of each thread or session of a streamed log whose first pass
    /// found where each ends.
    TraceEnd(String),
}

/// What an adapter reads from a transcript input ([`TraceInput::into_adapted`]).
#[derive(Debug)]
pub enum Adapted {
    /// A transcript read as it streams: [`Stream::next_entry`] hands on its records
    /// and problems, in the order reading it whole gives them.
    Stream(Box<Stream>),
    /// What an adapter read from the whole input.
    Read(Box<Reading>),
}

/// An entry a [`Stream`] handed on, or, when reading failed part-way, a problem saying
/// so (nothing follows it).
pub fn entry_or_stopped(next: io::Result<Entry>) -> Entry {
    next.unwrap_or_else(|err| {
        Entry::Problem(Problem {
            kind: ProblemKind::Malformed,
            loc: Default::default(),
            message: format!("reading stopped: {err}"),
            hint: None,
        })
    })
}

impl std::fmt::Debug for TraceInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceInput")
            .field("detected", &self.detected)
            .finish_non_exhaustive()
    }
}

/// What native JSONL read without detection is.
fn native_detected() -> Detected {
    Detected {
        layout: Layout::NativeLines,
        formats: vec![Format::Native],
        explicit: false,
        traces: 1,
        warning: None,
    }
}

impl<'a> TraceInput<'a> {
    /// Opens the trace file at `path`, detecting its format unless `options` names it.
    /// Lines longer than `max_line_bytes` (`None`: the default) are problems, not
    /// records. An error means the file could not be read at all.
    pub fn open(
        path: &Path,
        options: &InputOptions,
        max_line_bytes: Option<usize>,
    ) -> io::Result<TraceInput<'static>> {
        let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        let mut input = if !is_regular_file(path)? {
            TraceInput::open_stream(stream_reader(path)?, options, max)?
        } else {
            TraceInput::open_file(path, options, max)?
        };
        input.report_empty = true;
        Ok(input)
    }

    /// Opens the regular file at `path`, streaming it when its format streams.
    fn open_file(
        path: &Path,
        options: &InputOptions,
        max: usize,
    ) -> io::Result<TraceInput<'static>> {
        Ok(match adapters::open_streamed(path, options, max)? {
            Streamed::Opened(Opened::Native(detected)) => {
                let handle = std::fs::File::open(path)?;
                TraceInput::movable_lines(detected, BufReader::with_capacity(1 << 16, handle), max)
            }
            Streamed::Stream(stream) => TraceInput::stream(stream),
            Streamed::Opened(Opened::Read(reading)) => TraceInput::read(reading),
        })
    }

    /// Opens the stream `read` reads (bytes read once, as they come) as [`TraceInput::open`]
    /// opens standard input: detected from its first bytes, then read as it comes or
    /// through a temporary file. An error means it could not be read at all.
    pub fn open_reader(
        read: Box<dyn Read>,
        options: &InputOptions,
        max_line_bytes: Option<usize>,
    ) -> io::Result<TraceInput<'static>> {
        let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        let mut input = TraceInput::open_stream(read, options, max)?;
        input.report_empty = true;
        Ok(input)
    }

    /// Opens the stream `read` reads (standard input, a pipe): its first bytes decide
    /// its format, then it is read as it comes (native records, files of transcript
    /// lines), or, past its first bytes, through a temporary file as a regular file is
    /// (other formats). A file of transcript lines whose records are still held back
    /// where a file's first pass would read it through (it is not known yet whether it
    /// holds more than one trace) is copied to a temporary file too, and read from
    /// there as that file is, rather than held whole.
    fn open_stream(
        read: Box<dyn Read>,
        options: &InputOptions,
        max: usize,
    ) -> io::Result<TraceInput<'static>> {
        let recent = RecentBytes::from_start();
        let pipe = Rc::new(RefCell::new(Some(read)));
        let keeping = Keeping {
            inner: pipe.clone(),
            recent: recent.clone(),
        };
        let mut reader: Box<dyn BufRead> = Box::new(BufReader::with_capacity(1 << 16, keeping));
        let head = read_head(&mut reader, max, |head| {
            adapters::decided_by_first_line(head, options)
        })?;
        let mut input = match adapters::open_stream(head, reader, options, max)? {
            StreamOpened::Native(detected, input) => {
                recent.forget_start();
                TraceInput::lines(detected, input, max)
            }
            StreamOpened::Stream(mut stream) => match stream.decide_before_first_pass() {
                None => {
                    recent.forget_start();
                    TraceInput::stream(stream)
                }
                Some(again) => match spill(&recent, &pipe)? {
                    Some(spool) => {
                        drop(stream);
                        match again(spool.path())? {
                            Some(mut stream) => {
                                stream.hold(spool);
                                TraceInput::stream(Box::new(stream))
                            }
                            None => TraceInput::open_spool(spool, options, max)?,
                        }
                    }
                    // No copy can be made: its records are held until it is decided.
                    None => TraceInput::stream(stream),
                },
            },
            StreamOpened::Whole(Unstreamed { head, mut rest }) => {
                recent.forget_start();
                // All of it is at hand already: read from memory when it is small. A
                // large document that the head took whole (it is on a few lines) is
                // spooled, as any other, to be streamed rather than parsed whole.
                if head.len() <= WHOLE_AT_HAND && rest.fill_buf()?.is_empty() {
                    TraceInput::from_vec(head, options, max)
                } else {
                    let spool = Rc::new(Spool::new()?);
                    recent.spooled(spool.clone());
                    spool.fill(&head, &mut rest)?;
                    drop((head, rest));
                    TraceInput::open_spool(spool, options, max)?
                }
            }
        };
        input.recent = Some(recent);
        Ok(input)
    }

    /// Opens what `spool` holds as a regular file of the same bytes is opened; a
    /// streamed transcript keeps the spool, which it may read again.
    pub(crate) fn open_spool(
        spool: Rc<Spool>,
        options: &InputOptions,
        max: usize,
    ) -> io::Result<TraceInput<'static>> {
        let mut input = TraceInput::open_file(spool.path(), options, max)?;
        if let Body::Stream(stream) = &mut input.body {
            stream.hold(spool);
        }
        Ok(input)
    }

    /// A streamed transcript, read on until it is known whether it holds more than
    /// one trace.
    fn stream(mut stream: Box<Stream>) -> TraceInput<'static> {
        stream.decide();
        let detected = stream.detected();
        TraceInput {
            at_end: DetectedAtEnd::new(&detected),
            detected,
            body: Body::Stream(stream),
            report_empty: false,
            recent: None,
        }
    }

    /// Reads `bytes`, the whole content of a trace file, exactly as [`TraceInput::open`]
    /// reads the file.
    pub fn from_bytes(
        bytes: &'a [u8],
        options: &InputOptions,
        max_line_bytes: Option<usize>,
    ) -> TraceInput<'a> {
        let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        match adapters::open_bytes(bytes, options, max) {
            Opened::Native(detected) => TraceInput::movable_lines(detected, bytes, max),
            Opened::Read(reading) => TraceInput::read(reading),
        }
    }

    /// Reads `bytes`, the whole content of a stream, as [`TraceInput::from_bytes`] does.
    fn from_vec(bytes: Vec<u8>, options: &InputOptions, max: usize) -> TraceInput<'static> {
        match adapters::open_bytes(&bytes, options, max) {
            Opened::Native(detected) => {
                TraceInput::movable_lines(detected, io::Cursor::new(bytes), max)
            }
            Opened::Read(reading) => TraceInput::read(reading),
        }
    }

    /// Streams native JSONL from `input`, without detecting its format (stdin, or
    /// text known to be native records).
    pub fn native<R: BufRead + 'a>(input: R, max_line_bytes: Option<usize>) -> TraceInput<'a> {
        let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        TraceInput::lines(native_detected(), input, max)
    }

    /// [`TraceInput::native`], decoding the records on a second thread ahead of the
    /// one that reads the items ([`TraceInput::decode_ahead`]): for input that ends (a
    /// file, bytes in memory), not a live stream, whose lines would wait for a batch
    /// to fill.
    pub fn native_ahead<R: BufRead + Send + 'a>(
        input: R,
        max_line_bytes: Option<usize>,
    ) -> TraceInput<'a> {
        let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        let mut input = TraceInput::movable_lines(native_detected(), input, max);
        input.decode_ahead();
        input
    }

    /// What an adapter has already read, as an input.
    pub fn read(reading: Reading) -> TraceInput<'a> {
        TraceInput {
            detected: reading.detected.clone(),
            at_end: DetectedAtEnd::new(&reading.detected),
            body: Body::Read(reading),
            report_empty: false,
            recent: None,
        }
    }

    fn lines<R: BufRead + 'a>(detected: Detected, input: R, max: usize) -> TraceInput<'a> {
        let reader = Lines::Here(LineReader::with_max_line_bytes(Box::new(input), max));
        TraceInput::lines_of(detected, reader, max)
    }

    /// [`TraceInput::lines`] from a reader whose lines may be decoded on a second
    /// thread ([`TraceInput::decode_ahead`]).
    fn movable_lines<R: BufRead + Send + 'a>(
        detected: Detected,
        input: R,
        max: usize,
    ) -> TraceInput<'a> {
        let reader = Lines::Movable {
            reader: LineReader::with_max_line_bytes(Box::new(input), max),
            ahead: false,
        };
        TraceInput::lines_of(detected, reader, max)
    }

    fn lines_of(detected: Detected, reader: Lines<'a>, max: usize) -> TraceInput<'a> {
        TraceInput {
            at_end: DetectedAtEnd::new(&detected),
            detected,
            body: Body::Lines {
                reader,
                max_line_bytes: max,
            },
            report_empty: false,
            recent: None,
        }
    }

    /// Decodes native records on a second thread, ahead of the one that reads the
    /// items: the same items in the same order, with reading and decoding off the
    /// reader's core. Only a native input read from a file or from bytes in memory
    /// (and [`TraceInput::native_ahead`]) is read this way, since its lines are
    /// handed on in batches; says whether this input will be.
    pub fn decode_ahead(&mut self) -> bool {
        match &mut self.body {
            Body::Lines {
                reader: Lines::Movable { ahead, .. },
                ..
            } => {
                *ahead = true;
                true
            }
            _ => false,
        }
    }

    /// For a stream, which cannot be read again, the window of its last bytes that
    /// findings quote their records from; `None` for a file.
    pub fn recent_bytes(&self) -> Option<RecentBytes> {
        self.recent.clone()
    }

    /// What was recognized in the input, as far as it is known before reading it. A
    /// streamed transcript learns its formats and its count of traces as it is read:
    /// [`TraceInput::detected_at_end`] gives them after.
    pub fn detected(&self) -> &Detected {
        &self.detected
    }

    /// A handle on what was recognized in the input, complete once the input has been
    /// read ([`TraceInput::for_each`]).
    pub fn detected_at_end(&self) -> DetectedAtEnd {
        self.at_end.clone()
    }

    /// Distinct traces an adapter found; with more than one, every record has a
    /// `trace` field naming its trace. Native input is one trace unless split.
    pub fn traces(&self) -> usize {
        match &self.body {
            Body::Lines { .. } => 1,
            Body::Stream(stream) => stream.traces(),
            Body::Read(reading) => reading.traces,
        }
    }

    /// Whether each finding is final as soon as it is made: nothing is said of the
    /// input as a whole once its records come. So it is of native JSONL and a file of
    /// one element per line (their problems are each a line's), and of a streamed
    /// document, whose first pass found what it holds; a document read whole may find
    /// a problem of the file anywhere (a `--select` that selects nothing in a later
    /// line), so its findings wait for the end of the file.
    pub fn findings_final(&self) -> bool {
        match &self.body {
            Body::Stream(stream) => stream.findings_final(),
            Body::Lines { .. } | Body::Read(_) => matches!(
                self.detected.layout,
                Layout::NativeLines | Layout::ElementLines
            ),
        }
    }

    /// What the adapter read, for a consumer that needs the input's structure
    /// (`shrink` cuts elements out of it); `None` for streamed native JSONL.
    pub fn reading(&self) -> Option<&Reading> {
        match &self.body {
            Body::Lines { .. } | Body::Stream(_) => None,
            Body::Read(reading) => Some(reading),
        }
    }

    /// What the adapter reads, taken out of the input as it is: a streamed transcript
    /// still to be read ([`Adapted::Stream`]), or what an adapter read whole; `None`
    /// for native JSONL.
    pub fn into_adapted(self) -> Option<Adapted> {
        match self.body {
            Body::Lines { .. } => None,
            Body::Stream(stream) => Some(Adapted::Stream(stream)),
            Body::Read(reading) => Some(Adapted::Read(Box::new(reading))),
        }
    }

    /// What the adapter read, taken out of the input; `None` for native JSONL, which
    /// is streamed rather than read whole. A streamed transcript is read to its end
    /// here (without the elements `shrink` cuts, which only a whole reading finds); a
    /// read that fails part-way ends it with a problem saying so.
    pub fn into_reading(self) -> Option<Reading> {
        Some(match self.into_adapted()? {
            Adapted::Stream(mut stream) => {
                let entries = std::iter::from_fn(|| stream.next_entry())
                    .map(entry_or_stopped)
                    .collect();
                let detected = stream.detected();
                Reading {
                    traces: detected.traces,
                    detected,
                    entries,
                    pieces: Vec::new(),
                    arrays: Vec::new(),
                }
            }
            Adapted::Read(reading) => *reading,
        })
    }

    /// Hands every record and problem to `visit`, in input order. A record lends its
    /// line only until `visit` returns, so memory stays bounded for native JSONL.
    pub fn for_each(self, mut visit: impl FnMut(Item<'_>)) {
        let done: Result<(), std::convert::Infallible> = self.try_for_each(|item| {
            visit(item);
            Ok(())
        });
        let Ok(()) = done;
    }

    /// [`TraceInput::for_each`], stopping at the first error `visit` returns. A file or
    /// stream ([`TraceInput::open`]) with nothing in it gives one [`ProblemKind::Empty`]
    /// problem.
    pub fn try_for_each<E>(
        self,
        mut visit: impl FnMut(Item<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        self.try_for_each_in_place(|item| {
            visit(std::mem::replace(item, Item::TraceEnd(String::new())))
        })
    }

    /// [`TraceInput::try_for_each`], lending each item where it lies instead of moving
    /// it: a record is large, and the checker reads millions of them.
    pub(crate) fn try_for_each_in_place<E>(
        self,
        mut visit: impl FnMut(&mut Item<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let report_empty = self.report_empty;
        let mut seen = false;
        self.visit_all(|item| {
            seen = true;
            visit(item)
        })?;
        if seen || !report_empty {
            return Ok(());
        }
        visit(&mut Item::Problem(Problem {
            kind: ProblemKind::Empty,
            loc: Default::default(),
            message: "the trace input is empty: it holds no record, so nothing was checked".into(),
            hint: Some(
                "an empty or blank file, or a pipe closed before anything was written to it, \
                 is no trace; a named pipe is read when tracegate reaches it, so its writer \
                 must already have it open"
                    .into(),
            ),
        }))
    }

    fn visit_all<E>(self, mut visit: impl FnMut(&mut Item<'_>) -> Result<(), E>) -> Result<(), E> {
        let at_end = self.at_end;
        match self.body {
            Body::Lines {
                reader:
                    Lines::Movable {
                        reader,
                        ahead: true,
                    },
                max_line_bytes,
            } => ahead::visit(reader, max_line_bytes, visit),
            Body::Lines {
                reader: Lines::Movable { reader, .. },
                max_line_bytes,
            } => visit_lines(reader, max_line_bytes, visit),
            Body::Lines {
                reader: Lines::Here(reader),
                max_line_bytes,
            } => visit_lines(reader, max_line_bytes, visit),
            Body::Stream(mut stream) => {
                while let Some(next) = stream.next() {
                    match next {
                        Ok(Handed::Entry(Entry::Record(record))) => {
                            visit(&mut Item::Record(record))?
                        }
                        Ok(Handed::Entry(Entry::Problem(problem))) => {
                            visit(&mut Item::Problem(problem))?
                        }
                        Ok(Handed::TraceEnd(name)) => visit(&mut Item::TraceEnd(name))?,
                        Err(err) => visit(&mut Item::Stopped(err))?,
                    }
                }
                *at_end.0.borrow_mut() = stream.detected();
                Ok(())
            }
            Body::Read(reading) => {
                for entry in reading.entries {
                    match entry {
                        Entry::Record(record) => visit(&mut Item::Record(record))?,
                        Entry::Problem(problem) => visit(&mut Item::Problem(problem))?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// Hands every line of `reader` to `visit` as an item, decoded as it is read.
fn visit_lines<R: BufRead, E>(
    mut reader: LineReader<R>,
    max_line_bytes: usize,
    mut visit: impl FnMut(&mut Item<'_>) -> Result<(), E>,
) -> Result<(), E> {
    loop {
        match reader.next_line() {
            Ok(Some(line)) => {
                let mut item = line_item(line, max_line_bytes);
                visit(&mut item)?;
                // Its list of members, for the next line.
                if let Item::Record(record) = item {
                    native::recycle(record.fields);
                }
            }
            Ok(None) => return Ok(()),
            Err(err) => return visit(&mut Item::Stopped(err)),
        }
    }
}

/// A native line decoded: its record, or the problem that keeps it from being one.
/// `max_line_bytes` is the limit the line was read with.
pub(super) fn line_item(line: Line<'_>, max_line_bytes: usize) -> Item<'_> {
    let loc = line.location();
    match native::decode(line, max_line_bytes) {
        Ok(record) => Item::Record(record),
        Err(err) => Item::Problem(Problem {
            kind: ProblemKind::Malformed,
            loc,
            message: err.to_string(),
            hint: None,
        }),
    }
}

/// The first bytes of a stream, enough to detect its format: at least 64 KiB and eight
/// lines, or all of it if it is shorter; no more than twice the line limit beyond that,
/// whatever its lines. Reading stops early once `decided` says the bytes read so far
/// decide the format (a live stream is then not waited on); it is asked until it gives
/// a final answer (`Some`).
fn read_head(
    input: &mut dyn BufRead,
    max_line_bytes: usize,
    decided: impl Fn(&[u8]) -> Option<bool>,
) -> io::Result<Vec<u8>> {
    const HEAD: usize = 64 * 1024;
    const LINES: usize = 8;
    let cap = HEAD.saturating_add(max_line_bytes.saturating_mul(2));
    let mut head = Vec::new();
    let mut lines = 0;
    let mut asking = true;
    while head.len() < cap && (head.len() < HEAD || lines < LINES) {
        let chunk = input.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        let take = chunk.len().min(cap - head.len());
        lines += chunk[..take].iter().filter(|&&b| b == b'\n').count();
        head.extend_from_slice(&chunk[..take]);
        input.consume(take);
        if asking && lines > 0 {
            match decided(&head) {
                Some(true) => break,
                Some(false) => asking = false,
                None => {}
            }
        }
    }
    Ok(head)
}

/// The most bytes of a stream that is not read as it comes (a document) that are read
/// from memory, when the head read to detect its format holds all of it; a larger one
/// is spooled and streamed from there.
const WHOLE_AT_HAND: usize = 1 << 20;

/// Whether `path` names a regular file (which is read, and may be read again, from
/// the file system) rather than standard input (`-`), a pipe or a device.
fn is_regular_file(path: &Path) -> io::Result<bool> {
    if is_stdin(path) {
        return Ok(false);
    }
    Ok(std::fs::metadata(path)?.is_file())
}

/// Whether `path` is `-`, standard input.
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// The whole content of the input `path` names: a regular file, standard input (`-`)
/// or a pipe (named, `/dev/stdin`, a process substitution), read to its end. A pipe
/// is opened without waiting for a writer: with none, it reads as empty. A terminal, a
/// device or a socket is an error, as reading it may never end.
pub fn read_input(path: &Path) -> io::Result<Vec<u8>> {
    if !is_stdin(path) && std::fs::metadata(path)?.is_file() {
        return std::fs::read(path);
    }
    let mut bytes = Vec::new();
    stream_reader(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The whole of the stream `path` names (standard input, `-`, or a pipe), copied to a
/// temporary file ([`read_input`] without holding it in memory).
pub(crate) fn spool_input(path: &Path) -> io::Result<Rc<Spool>> {
    let mut reader = BufReader::with_capacity(1 << 16, stream_reader(path)?);
    let spool = Spool::new()?;
    spool.fill(&[], &mut reader)?;
    Ok(Rc::new(spool))
}

/// Copies a stream, all of whose bytes read so far `recent` kept, to a temporary file:
/// those bytes, then the rest of `pipe`, to its end; `recent` then reads from the copy.
/// `None`, having read nothing more, when no temporary file can be made (the stream is
/// then read on as it comes, its records held until it is known how many traces it
/// holds).
fn spill(
    recent: &RecentBytes,
    pipe: &RefCell<Option<Box<dyn Read>>>,
) -> io::Result<Option<Rc<Spool>>> {
    let read = recent.take_all();
    let Ok(spool) = Spool::new() else {
        recent.keep(&read);
        return Ok(None);
    };
    let spool = Rc::new(spool);
    recent.spooled(spool.clone());
    let rest = pipe
        .borrow_mut()
        .take()
        .unwrap_or_else(|| Box::new(io::empty()));
    spool.fill(&read, &mut BufReader::with_capacity(1 << 16, rest))?;
    Ok(Some(spool))
}

/// A reader of the stream `path` names: standard input (`-`) or a pipe. A terminal, a
/// device or a socket is an error, as reading it may never end.
fn stream_reader(path: &Path) -> io::Result<Box<dyn Read>> {
    if is_stdin(path) {
        let stdin = io::stdin();
        if stdin.is_terminal() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "standard input is a terminal; pipe a trace into it",
            ));
        }
        return Ok(Box::new(stdin.lock()));
    }
    stream_check(&std::fs::metadata(path)?)?;
    Ok(Box::new(open_pipe(path)?))
}

/// An error for a file that is neither a regular file nor a pipe.
#[cfg(unix)]
pub fn stream_check(meta: &std::fs::Metadata) -> io::Result<()> {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    let what = if kind.is_fifo() || kind.is_file() {
        return Ok(());
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file or a pipe"
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("it is {what}, which may never end; only files and pipes are read"),
    ))
}

#[cfg(not(unix))]
pub fn stream_check(meta: &std::fs::Metadata) -> io::Result<()> {
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a directory",
        ));
    }
    Ok(())
}

/// Opens a pipe for reading without blocking until a writer opens it, then makes reads
/// block again, so that they wait for data and end at the writer's close.
#[cfg(unix)]
fn open_pipe(path: &Path) -> io::Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file` for the duration of the calls;
    // F_GETFL and F_SETFL only read and set its status flags.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

#[cfg(not(unix))]
fn open_pipe(path: &Path) -> io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::adapters::{Choices, Selector};

    /// What `input` hands out, as `record LINE` and `problem LINE: MESSAGE`.
    fn items(input: TraceInput<'_>) -> Vec<String> {
        let mut seen = Vec::new();
        input.for_each(|item| {
            seen.push(match item {
                Item::Record(record) => format!("record {}", record.loc.line),
                Item::Problem(problem) => {
                    format!("problem {}: {}", problem.loc.line, problem.message)
                }
                Item::Stopped(err) => format!("stopped: {err}"),
                // Reading whole says nothing of ends, which only a stream knows.
                Item::TraceEnd(_) => return,
            })
        });
        seen
    }

    #[test]
    fn native_lines_stream_records_and_problems_in_order() {
        let text = b"{\"kind\":\"call\",\"tool\":\"a\"}\n[1]\n\n{\"kind\":\"message\"}\n";
        let input = TraceInput::from_bytes(text, &InputOptions::default(), None);
        assert_eq!(input.detected().layout, Layout::NativeLines);
        assert_eq!(input.traces(), 1);
        assert!(input.reading().is_none());
        assert_eq!(
            items(input),
            [
                "record 1",
                "problem 2: record is an array, expected a JSON object",
                "record 4",
            ]
        );
    }

    #[test]
    fn documents_are_read_by_their_adapter() {
        let text = br#"[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"{}"}]"#;
        let input = TraceInput::from_bytes(text, &InputOptions::default(), None);
        assert_eq!(input.detected().formats, [Format::OpenAi]);
        assert!(input.reading().is_some());
        let seen = items(input);
        assert!(seen.len() >= 2, "{seen:?}");
        assert!(
            seen.iter().all(|item| item.starts_with("record")),
            "{seen:?}"
        );
    }

    /// Everything `input` hands out, in full: each record's fields and location, each
    /// problem's kind, location and message; then what was recognized.
    fn everything(input: TraceInput<'_>) -> (Vec<String>, String) {
        let at_end = input.detected_at_end();
        let mut seen = Vec::new();
        input.for_each(|item| {
            seen.push(match item {
                Item::Record(record) => {
                    let fields = match &record.fields {
                        crate::trace::Fields::Owned(map) => {
                            serde_json::Value::Object(map.clone()).to_string()
                        }
                        crate::trace::Fields::Built(built) => {
                            serde_json::Value::Object(built.to_map()).to_string()
                        }
                        crate::trace::Fields::Raw(_) => "raw".to_string(),
                    };
                    format!("record {fields} at {:?}", record.loc)
                }
                Item::Problem(problem) => format!(
                    "problem {:?} at {:?}: {} ({:?})",
                    problem.kind, problem.loc, problem.message, problem.hint
                ),
                Item::Stopped(err) => format!("stopped: {err}"),
                // Reading whole says nothing of ends, which only a stream knows.
                Item::TraceEnd(_) => return,
            })
        });
        (seen, at_end.get().to_string())
    }

    /// Reads `text` from a file, where it streams, and whole from memory, and asserts
    /// both give the same.
    #[track_caller]
    fn streams_as_read_whole(text: &str, traces: usize) {
        streams_as_read_whole_with(text, traces, &InputOptions::default());
    }

    #[track_caller]
    fn streams_as_read_whole_with(text: &str, traces: usize, options: &InputOptions) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.json");
        std::fs::write(&path, text).unwrap();
        let streamed = TraceInput::open(&path, options, None).unwrap();
        assert!(
            matches!(streamed.body, Body::Stream(_)),
            "not streamed: {text}"
        );
        assert_eq!(streamed.traces() > 1, traces > 1);
        let whole = TraceInput::from_bytes(text.as_bytes(), options, None);
        assert!(whole.reading().is_some());
        let streamed = everything(streamed);
        let whole = everything(whole);
        assert_eq!(streamed, whole);
        assert!(
            streamed.1.contains(&format!("{traces} trace")),
            "{}",
            streamed.1
        );
    }

    /// An MCP log over `sessions` sessions: requests, replies, a cancellation, a
    /// batch, and bad lines among them.
    fn mcp_log(sessions: usize) -> String {
        let mut text = String::new();
        for s in 0..sessions {
            let env = |dir: &str, message: &str| {
                format!(
                    "{{\"session_id\":\"s{s}\",\"direction\":\"{dir}\",\"timestamp\":\"2025-01-01T00:00:0{s}Z\",\"message\":{message}}}\n"
                )
            };
            text += &env(
                "send",
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{"id":"r-1"}}}"#,
            );
            text += &env(
                "send",
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup","arguments":{}}}"#,
            );
            text += "not json\n\n";
            text += &env(
                "recv",
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"id\":7}"}]}}"#,
            );
            text += &env(
                "send",
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"slow"}}"#,
            );
            text += &env(
                "send",
                r#"[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"create","arguments":{}}},{"jsonrpc":"2.0","id":4,"method":"ping"}]"#,
            );
            text += &env(
                "send",
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            );
            text += &env("recv", r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
        }
        text
    }

    #[test]
    fn mcp_logs_stream_as_they_read_whole() {
        streams_as_read_whole(&mcp_log(1), 1);
        streams_as_read_whole(&mcp_log(3), 3);
        // Plain messages, one trace.
        let plain = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"x\"}}\n[]\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
        streams_as_read_whole(plain, 1);
    }

    /// A JSON-RPC batch of `messages` bare messages on one line, joined by `comma`:
    /// requests and their replies (some with an error), and messages that give
    /// problems: a method that is no string, a `tools/call` without a name, a reply to
    /// an id never asked, a cancellation. With `odd`, a fifth of the requests are never
    /// answered and some elements are no message (a number, a batch inside the batch,
    /// an empty one), which make a first line that holds them no batch to detection.
    fn mcp_batch(messages: usize, comma: &str, odd: bool) -> String {
        let mut batch = Vec::new();
        for k in 0..messages {
            batch.push(format!(
                r#"{{"jsonrpc":"2.0","id":{k},"method":"tools/call","params":{{"name":"create","arguments":{{"id":"r-{k}"}}}}}}"#
            ));
            let problem = match k % 9 {
                1 if odd => "7".to_string(),
                2 => format!(r#"{{"jsonrpc":"2.0","id":"m-{k}","method":5}}"#),
                3 => format!(
                    r#"{{"jsonrpc":"2.0","id":"t-{k}","method":"tools/call","params":{{}}}}"#
                ),
                4 if odd => format!(
                    r#"[{{"jsonrpc":"2.0","id":"n-{k}","method":"ping"}},{{"jsonrpc":"2.0","id":"n-{k}","result":{{}}}}]"#
                ),
                5 if odd => "[]".to_string(),
                6 => format!(r#"{{"jsonrpc":"2.0","id":"u-{k}","result":{{"content":[]}}}}"#),
                7 => format!(
                    r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{k}}}}}"#
                ),
                _ => String::new(),
            };
            batch.extend((!problem.is_empty()).then_some(problem));
            batch.push(match k % 5 {
                0 if odd => continue,
                1 => format!(
                    r#"{{"jsonrpc":"2.0","id":{k},"error":{{"code":-32000,"message":"boom {k}"}}}}"#
                ),
                _ => format!(
                    r#"{{"jsonrpc":"2.0","id":{k},"result":{{"content":[{{"type":"text","text":"done {k}"}}],"structuredContent":{{"id":"rec-{k}"}},"isError":false}}}}"#
                ),
            });
        }
        format!("[{}]", batch.join(comma))
    }

    #[test]
    fn a_large_batch_on_a_line_of_an_mcp_log_is_read_a_message_at_a_time_as_it_reads_whole() {
        let (batch, odd) = (mcp_batch(60, ",", false), mcp_batch(60, ",", true));
        assert!(batch.len() >= adapters::LARGE_RUN);
        let spaced = format!("  {}  ", mcp_batch(60, " ,\t", true));
        // A message with a key twice, and a batch cut short: read whole, as before,
        // which says what is wrong with them.
        let twice = batch.replacen(r#""name":"create""#, r#""name":"create","name":"b""#, 1);
        let cut = &batch[..batch.len() * 2 / 3];
        let log = mcp_log(2);
        for text in [
            format!("{batch}\n"),
            format!("\u{feff}{batch}"),
            format!("{batch}\n{spaced}\n{odd}\n"),
            format!("{log}{odd}\n{}", mcp_log(1)),
            format!("{batch}\n{log}"),
            // Read as a document: detection takes a first line with elements that are
            // no message for no batch.
            format!("{odd}\n{log}"),
            format!("{twice}\n{log}"),
            format!("{log}{cut}\n{batch}\n"),
        ] {
            for format in [None, Some(Format::Mcp), Some(Format::OpenAi)] {
                reads_alike(&text, format, None);
            }
            reads_alike(&text, None, Some("[*]"));
        }
        streams_as_read_whole(&format!("{batch}\n"), 1);
        streams_as_read_whole(&format!("{log}{odd}\n{}", mcp_log(1)), 3);
        // Its messages are handed on as they are read, a few at a time: read whole,
        // the batch's hundreds of records would all wait for its end.
        let long = format!("{}\n", mcp_batch(400, ",", false));
        let waiting = most_waiting(&long, &InputOptions::default());
        assert!(waiting < 10, "{waiting} waiting");
    }

    #[test]
    fn a_stream_is_detected_from_its_head_and_read_on_from_the_rest() {
        let options = InputOptions::default();
        // An MCP log longer than the head, and native records.
        let mcp = mcp_log(400);
        let native: String = (0..4000)
            .map(|i| format!("{{\"kind\":\"call\",\"tool\":\"t\",\"call_id\":\"c{i}\"}}\n"))
            .collect();
        for (text, streamed) in [(&mcp, true), (&native, false)] {
            let mut reader: Box<dyn BufRead> = Box::new(BufReader::with_capacity(
                4096,
                io::Cursor::new(text.clone().into_bytes()),
            ));
            let head = read_head(&mut reader, DEFAULT_MAX_LINE_BYTES, |_| Some(false)).unwrap();
            assert!(head.len() >= 64 * 1024 && head.len() < text.len());
            let input = match adapters::open_stream(head, reader, &options, DEFAULT_MAX_LINE_BYTES)
                .unwrap()
            {
                StreamOpened::Native(detected, input) => {
                    TraceInput::lines(detected, input, DEFAULT_MAX_LINE_BYTES)
                }
                StreamOpened::Stream(stream) => TraceInput::stream(stream),
                StreamOpened::Whole(_) => panic!("a stream of a streaming format read whole"),
            };
            assert_eq!(matches!(input.body, Body::Stream(_)), streamed);
            let whole = TraceInput::from_bytes(text.as_bytes(), &options, None);
            let (seen, detected) = everything(input);
            assert_eq!((seen, detected), everything(whole));
        }
    }

    #[test]
    fn a_stream_still_undecided_where_a_file_is_read_through_first_is_copied_and_read_as_it() {
        let options = InputOptions::default();
        // One session past the first pass's threshold (2048 bytes in tests), as
        // envelopes, as plain messages, as a Claude Code session, and as a large batch.
        let one_session = mcp_log(1).repeat(12);
        let plain: String = (0..60)
            .map(|i| format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"method\":\"tools/call\",\"params\":{{\"name\":\"x\"}}}}\n{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}\n"))
            .collect();
        let claude_code: String = claude_code_log()
            .lines()
            .filter(|l| l.contains("\"s1\"") && !l.contains("isSidechain\":true"))
            .map(|l| format!("{l}\n"))
            .collect::<String>()
            .repeat(8);
        let batch = mcp_batch(400, ",", false);
        // Held no further than a file is read before its first pass: a second session
        // early, and a log shorter than the threshold.
        let sessions = mcp_log(12);
        let short = mcp_log(1);
        assert!(short.len() < 2048 && one_session.len() > 2 * 2048);
        for (text, copied) in [
            (&one_session, true),
            (&plain, true),
            (&claude_code, true),
            (&batch, true),
            (&sessions, false),
            (&short, false),
        ] {
            let reader = Box::new(io::Cursor::new(text.clone().into_bytes()));
            let input = TraceInput::open_stream(reader, &options, DEFAULT_MAX_LINE_BYTES).unwrap();
            assert!(matches!(input.body, Body::Stream(_)), "{text}");
            let recent = input.recent.clone().expect("a stream keeps its last bytes");
            assert_eq!(recent.is_spooled(), copied, "{text}");
            // Quoted from anywhere in it.
            if copied {
                assert_eq!(recent.get(0, 1).as_deref(), Some(&text.as_bytes()[..1]));
            }
            let whole = TraceInput::from_bytes(text.as_bytes(), &options, None);
            assert_eq!(everything(input), everything(whole), "{text}");
        }
    }

    /// A Claude Code log: a session whose main thread and sidechain interleave, with a
    /// call answered late, one never answered, bad lines, and a second session.
    fn claude_code_log() -> String {
        let line = |session: &str, uuid: &str, side: bool, ty: &str, message: &str| {
            format!(
                "{{\"type\":\"{ty}\",\"sessionId\":\"{session}\",\"uuid\":\"{uuid}\",\"isSidechain\":{side},\"timestamp\":\"t-{uuid}\",\"message\":{message}}}\n"
            )
        };
        let call = |id: &str, msg: &str| {
            format!(
                r#"{{"id":"{msg}","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"create","input":{{"request_id":"{id}"}}}}]}}"#
            )
        };
        let result = |id: &str| {
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"ok"}}]}}"#
            )
        };
        let mut text = String::new();
        text += "{\"type\":\"summary\",\"summary\":\"s\",\"leafUuid\":\"u9\"}\n";
        text += &line(
            "s1",
            "u1",
            false,
            "user",
            r#"{"role":"user","content":"go"}"#,
        );
        text += &line("s1", "u2", false, "assistant", &call("a", "m1"));
        text += &line("s1", "x1", true, "assistant", &call("x", "mx"));
        text += "not json\n";
        text += &line("s1", "u3", false, "assistant", &call("b", "m2"));
        text += &line("s1", "u4", false, "user", &result("a"));
        text += &line("s1", "x2", true, "user", &result("x"));
        text += "{\"type\":\"assistant\",\"sessionId\":\"s1\"}\n";
        text += &line("s1", "u5", false, "assistant", &call("c", "m3"));
        text += &line("s1", "u6", false, "user", &result("c"));
        text += &line(
            "s2",
            "v1",
            false,
            "user",
            r#"{"role":"user","content":"hi"}"#,
        );
        text += &line(
            "s1",
            "u7",
            false,
            "assistant",
            r#"{"id":"m4","role":"assistant","content":[{"type":"text","text":"done"}]}"#,
        );
        text
    }

    #[test]
    fn a_forced_format_that_fits_no_line_is_read_whole() {
        // Found by fuzzing (stream_whole): with `--format claude-code`, a line with a
        // key twice, a string, a line that is no JSON, then an MCP message. Reading the
        // file whole says the format fits no element after the problems of every line
        // up to that message; a stream would have said it with the first item it
        // handed on, before the third line's.
        let text = [
            r#"{"type":"","":{},"uuid":{},"":""}"#,
            r#""""#,
            "s",
            r#"{"jsonrpc":"l","ps":{"":{}}}"#,
        ]
        .join("\n");
        let options = InputOptions {
            format: Some(Format::ClaudeCode),
            select: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, &text).unwrap();
        let input = TraceInput::open(&path, &options, None).unwrap();
        assert!(input.reading().is_some(), "read whole");
        let whole = everything(TraceInput::from_bytes(text.as_bytes(), &options, None));
        assert_eq!(everything(input), whole);
        // A line read into no thread is placed by where it is: the string (line 2)
        // before the line that is no JSON (line 3), and the message's own problem
        // before what is said of it.
        let lines = &whole.0;
        assert!(whole.0[1].contains("log line is a string"), "{lines:#?}");
        assert!(whole.0[3].contains("log line has no `type`"), "{lines:#?}");
        assert!(
            whole.0[4].contains("--format claude-code reads this transcript"),
            "{lines:#?}"
        );
    }

    #[test]
    fn line_formats_stream_as_they_read_whole() {
        let forced = |format| InputOptions {
            format: Some(format),
            select: None,
        };
        streams_as_read_whole(&claude_code_log(), 4);
        // One session: one trace, no `trace` field.
        let one: String = claude_code_log()
            .lines()
            .filter(|l| !l.contains("\"s2\"") && !l.contains("isSidechain\":true"))
            .map(|l| format!("{l}\n"))
            .collect();
        streams_as_read_whole(&one, 1);
        // Codex: two sessions, a built-in call answered by a later output item, a
        // function call never answered.
        let codex = |ty: &str, payload: &str| {
            format!("{{\"timestamp\":\"t\",\"type\":\"{ty}\",\"payload\":{payload}}}\n")
        };
        let mut rollout = String::new();
        rollout += &codex("session_meta", r#"{"id":"r1"}"#);
        rollout += &codex(
            "response_item",
            r#"{"type":"local_shell_call","call_id":"l1","status":"completed","action":{"command":["ls"]}}"#,
        );
        rollout += &codex(
            "response_item",
            r#"{"type":"function_call","name":"create","call_id":"f1","arguments":"{}"}"#,
        );
        rollout += &codex(
            "response_item",
            r#"{"type":"message","role":"assistant","content":"next"}"#,
        );
        rollout += &codex("session_meta", r#"{"id":"r2"}"#);
        rollout += &codex(
            "response_item",
            r#"{"type":"function_call","name":"create","call_id":"f2","arguments":"{}"}"#,
        );
        rollout += &codex("session_meta", r#"{"id":"r1"}"#);
        rollout += &codex(
            "response_item",
            r#"{"type":"local_shell_call_output","call_id":"l1","output":"a"}"#,
        );
        streams_as_read_whole(&rollout, 2);
        // Which built-in calls are answered: a call answered soon after it, one waiting
        // long (in tests, past two others), an output before its call, one whose type
        // or call id is spelled with escapes, before or after its call, one on a line
        // with a key twice (not read), a call known by its `id`, two calls with one id,
        // and an output of a function call that no built-in call shares.
        let mut answers = rollout.clone();
        for payload in [
            r#"{"type":"local_shell_call_output","call_id":"l2","output":"early"}"#,
            r#"{"type":"local_shell_call","call_id":"l2","status":"completed","action":{"command":["pwd"]}}"#,
            r#"{"type":"local_shell_call","call_id":"l3","status":"completed","action":{"command":["id"]}}"#,
            r#"{"type":"local_shell\u005fcall_output","call_id":"l3","output":"b"}"#,
            r#"{"type":"local_shell_call","call_id":"l4","status":"completed","action":{"command":["df"]}}"#,
            r#"{"type":"function_call_output","call_id":"l\u0034","output":"c"}"#,
            r#"{"type":"local_shell_call","call_id":"l5","status":"completed","action":{"command":["du"]}}"#,
            r#"{"type":"function_call_output","call_id":"l5","call_id":"l5","output":"d"}"#,
            r#"{"type":"web_search_call","id":"w1","status":"completed"}"#,
            r#"{"type":"web_search_call","id":"w2","status":"completed"}"#,
            r#"{"type":"message","role":"assistant","content":"then"}"#,
            r#"{"type":"custom_tool_call_output","call_id":"w2","output":"e"}"#,
            r#"{"type":"function_call_output","call_id":"f2","output":"f"}"#,
            r#"{"type":"function_call_output","call_id":"l\u0037","output":"g"}"#,
            r#"{"type":"local_shell\u005fcall_output","call_id":"l8","output":"h"}"#,
            r#"{"type":"local_shell_call","call_id":"l7","status":"completed","action":{"command":["w"]}}"#,
            r#"{"type":"local_shell_call","call_id":"l8","status":"completed","action":{"command":["v"]}}"#,
            r#"{"type":"local_shell_call","call_id":"l9","status":"completed","action":{"command":["u"]}}"#,
            r#"{"type":"web_search_call","id":"w3","status":"completed"}"#,
            r#"{"type":"web_search_call","id":"w4","status":"completed"}"#,
            r#"{"type":"local_shell_call","call_id":"l9","status":"failed","action":{"command":["t"]}}"#,
            r#"{"type":"web_search_call","id":"w5","status":"completed"}"#,
            r#"{"type":"web_search_call","id":"w6","status":"completed"}"#,
            r#"{"type":"function_call_output","call_id":"l9","output":"i"}"#,
            r#"{"type":"message","role":"assistant","content":"last"}"#,
        ] {
            answers += &codex("response_item", payload);
        }
        streams_as_read_whole(&answers, 2);
        streams_as_read_whole_with(&answers, 2, &forced(Format::Codex));
        let items: String = answers
            .lines()
            .filter(|line| line.contains("response_item"))
            .map(|line| {
                let payload = &line[line.find("\"payload\":").unwrap() + 10..line.len() - 1];
                format!("{payload}\n")
            })
            .collect();
        streams_as_read_whole(&items, 1);
        // Chat messages, one per line, with a call never answered and a bad line.
        let chat = concat!(
            "{\"role\":\"user\",\"content\":\"hi\"}\n",
            "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"create\",\"arguments\":\"{}\"}}]}\n",
            "[1,2]\n",
            "{\"role\":\"assistant\",\"content\":\"done\"}\n",
            "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"late\",\"role\":\"x\"}\n",
        );
        streams_as_read_whole(chat, 1);
        // A forced format the lines are not in: said before the first record.
        streams_as_read_whole_with(chat, 1, &forced(Format::Anthropic));
        streams_as_read_whole_with(&claude_code_log(), 4, &forced(Format::ClaudeCode));
        streams_as_read_whole_with(&rollout, 2, &forced(Format::Codex));
    }

    #[test]
    fn long_logs_read_through_first_stream_as_they_read_whole() {
        // Past the first pass's threshold: sessions one after the other, one with a
        // sidechain, one with a bad line, and one whose session comes back at the end.
        let mut log = String::new();
        for session in 0..6 {
            let one: String = claude_code_log()
                .replace("\"s1\"", &format!("\"s1-{session}\""))
                .replace("\"s2\"", "\"s1-0\"");
            log += &one;
        }
        assert!(log.len() > 4 * 2048);
        streams_as_read_whole(&log, 18);
        // One session only: no `trace` field, and records handed on before the end.
        let single: String = log
            .lines()
            .filter(|l| l.contains("\"s1-0\"") && !l.contains("isSidechain\":true"))
            .map(|l| format!("{l}\n"))
            .chain((0..40).map(|i| {
                format!("{{\"type\":\"user\",\"sessionId\":\"s1-0\",\"uuid\":\"z{i}\",\"message\":{{\"role\":\"user\",\"content\":\"padding padding padding padding padding {i}\"}}}}\n")
            }))
            .collect();
        streams_as_read_whole(&single, 1);
        // Codex sessions one after the other.
        let codex = |ty: &str, payload: String| {
            format!("{{\"timestamp\":\"t\",\"type\":\"{ty}\",\"payload\":{payload}}}\n")
        };
        let mut rollout = String::new();
        for s in 0..30 {
            rollout += &codex("session_meta", format!(r#"{{"id":"r{s}"}}"#));
            rollout += &codex(
                "response_item",
                format!(
                    r#"{{"type":"function_call","name":"create","call_id":"f{s}","arguments":"{{}}"}}"#
                ),
            );
            rollout += &codex(
                "response_item",
                format!(r#"{{"type":"function_call_output","call_id":"f{s}","output":"ok"}}"#),
            );
        }
        streams_as_read_whole(&rollout, 30);
    }

    #[test]
    fn run_arrays_stream_as_they_read_whole() {
        let run = |id: &str, tool: &str| {
            format!(
                r#"{{"id": "{id}", "messages": [
    {{"role": "user", "content": "hi"}},
    {{"role": "assistant", "content": null, "tool_calls": [{{"id": "c1", "type": "function", "function": {{"name": "{tool}", "arguments": "{{\"a\": 1}}"}}}}]}},
    {{"role": "tool", "tool_call_id": "c1", "content": "{{\"ok\": true}}"}}
  ]}}"#
            )
        };
        let two = format!(
            "\u{feff}[\n  {},\n  {}\n]\n",
            run("r1", "create"),
            run("r2", "lookup")
        );
        streams_as_read_whole(&two, 2);
        let one = format!("[{}]", run("r1", "create"));
        streams_as_read_whole(&one, 1);
        // A run without a transcript among runs with one, and a run of a bad shape.
        let mixed = format!(
            "[{}, {{\"id\": \"r2\", \"note\": [1, \"]\"]}}, {}, {{\"id\": \"r4\", \"messages\": [{{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{{\"id\": \"c9\", \"type\": \"function\", \"function\": {{\"arguments\": \"{{}}\"}}}}]}}]}}]",
            run("r1", "create"),
            run("r3", "create")
        );
        streams_as_read_whole(&mixed, 2);
        // With --format: the format the runs are in, and another one.
        for format in [Format::OpenAi, Format::Anthropic] {
            let forced = InputOptions {
                format: Some(format),
                select: None,
            };
            streams_as_read_whole_with(&two, 2, &forced);
        }
        // With --select `[*]…`: each run's list, a path that selects nothing, one
        // whose lists hold no transcript.
        for path in ["[*].messages", "[*].nothing", "[*].id"] {
            let select = InputOptions {
                format: None,
                select: Some(Selector::parse(path).unwrap()),
            };
            let traces = if path == "[*].messages" { 2 } else { 0 };
            streams_as_read_whole_with(&two, traces, &select);
        }
        // No transcript anywhere: the whole file is in no known format.
        let nothing = "[{\"id\": 1, \"x\": {\"y\": [true]}}, {\"id\": 2}]";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nothing.json");
        std::fs::write(&path, nothing).unwrap();
        let streamed = everything(TraceInput::open(&path, &InputOptions::default(), None).unwrap());
        let whole = everything(TraceInput::from_bytes(
            nothing.as_bytes(),
            &InputOptions::default(),
            None,
        ));
        assert_eq!(streamed, whole);
        assert!(streamed.0[0].contains("UnknownFormat"), "{streamed:?}");
    }

    /// A plain OpenAI run `id` of `calls` calls (every fifth never answered, every
    /// seventh with a result that is not JSON), after a user message with `greeting`
    /// (an empty one gives no record): beyond `LARGE_RUN` bytes from a few calls on.
    fn plain_run(id: &str, calls: usize, greeting: &str) -> String {
        let mut messages = vec![format!(r#"{{"role": "user", "content": "{greeting}"}}"#)];
        for n in 0..calls {
            messages.push(format!(
                r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}-{n}", "type": "function", "function": {{"name": "create", "arguments": "{{\"request_id\": \"r-{n}\", \"title\": \"Invoice {n}\"}}"}}}}]}}"#
            ));
            match n % 35 {
                k if k % 5 == 4 => {}
                k if k % 7 == 6 => messages.push(format!(
                    r#"{{"role": "tool", "tool_call_id": "{id}-{n}", "content": "timed out"}}"#
                )),
                _ => messages.push(format!(
                    r#"{{"role": "tool", "tool_call_id": "{id}-{n}", "content": "{{\"id\": \"rec-{n}\"}}"}}"#
                )),
            }
        }
        format!(
            "{{\"id\": \"{id}\", \"model\": \"m\", \"messages\": [\n    {}\n  ]}}",
            messages.join(",\n    ")
        )
    }

    /// An Anthropic run `id` of `calls` calls, each after a text block, every fourth
    /// answered with an error, every sixth never answered.
    fn anthropic_run(id: &str, calls: usize) -> String {
        let mut messages = vec![r#"{"role": "user", "content": "go"}"#.to_string()];
        for n in 0..calls {
            messages.push(format!(
                r#"{{"role": "assistant", "content": [{{"type": "text", "text": "step {n}"}}, {{"type": "tool_use", "id": "{id}-{n}", "name": "create", "input": {{"request_id": "r-{n}"}}}}]}}"#
            ));
            if n % 6 != 5 {
                let error = if n % 4 == 3 {
                    r#", "is_error": true"#
                } else {
                    ""
                };
                messages.push(format!(
                    r#"{{"role": "user", "content": [{{"type": "tool_result", "tool_use_id": "{id}-{n}", "content": "done {n}"{error}}}]}}"#
                ));
            }
        }
        format!(
            "{{\"id\": \"{id}\", \"model\": \"claude\", \"messages\": [\n    {}\n  ]}}",
            messages.join(",\n    ")
        )
    }

    /// `runs` ([`plain_run`], [`anthropic_run`]) as a file of documents one per line.
    fn document_lines(runs: &[String]) -> String {
        let line = |run: &String| run.replace("\n    ", "").replace("\n  ", "");
        let lines: Vec<String> = runs.iter().map(line).collect();
        format!("{}\n", lines.join("\n"))
    }

    #[test]
    fn large_runs_of_any_chat_format_stream_as_they_read_whole() {
        let big = |id: &str| anthropic_run(id, 40);
        assert!(big("r").len() >= adapters::LARGE_RUN);
        // A list that is no transcript: runs of numbers.
        let numbers = format!(
            r#"{{"id": "n", "messages": [{}]}}"#,
            (0..2000)
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        // An OpenAI run with a content list, read by its adapter from each message's
        // value.
        let parts = plain_run("p", 60, "hi").replace(
            r#""content": "hi""#,
            r#""content": [{"type": "text", "text": "hi"}]"#,
        );
        for (runs, traces) in [
            (vec![big("a")], 1),
            (vec![big("a"), anthropic_run("b", 1)], 2),
            (vec![plain_run("o", 60, "hi"), big("a")], 2),
            (vec![parts.clone()], 1),
            (vec![numbers.clone(), big("a")], 1),
            (vec![big("a"), numbers.clone()], 1),
        ] {
            let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
            streams_as_read_whole(&array, traces);
            // A file of documents whose first line holds no transcript is read whole.
            if runs[0] != numbers {
                streams_as_read_whole(&document_lines(&runs), traces);
            }
        }
        // With `--format`: the runs' format, and another one.
        let two = format!("[{}, {}]", big("a"), big("b"));
        for (format, traces) in [(Format::Anthropic, 2), (Format::OpenAi, 2)] {
            let forced = InputOptions {
                format: Some(format),
                select: None,
            };
            streams_as_read_whole_with(&two, traces, &forced);
        }
    }

    #[test]
    fn large_plain_runs_stream_as_they_read_whole() {
        let big = |id: &str| plain_run(id, 60, "hi");
        let small = |id: &str| plain_run(id, 2, "hi");
        // Runs that give no record: an empty greeting and no call.
        let silent = |id: &str| plain_run(id, 0, "");
        assert!(small("r").len() < adapters::LARGE_RUN && big("r").len() >= adapters::LARGE_RUN);
        // Large, and read from its value: a legacy function result at its end.
        let not_plain = big("f").replace(
            "\n  ]}",
            ",\n    {\"role\": \"function\", \"name\": \"create\", \"content\": \"ok\"}\n  ]}",
        );
        for (runs, traces) in [
            (vec![big("a")], 1),
            (vec![big("a"), small("b")], 2),
            (vec![small("a"), big("b")], 2),
            (vec![big("a"), big("b"), big("c")], 3),
            (vec![silent("a"), big("b")], 1),
            (vec![big("a"), silent("b")], 1),
            (vec![silent("a"), big("b"), silent("c"), silent("d")], 1),
            (vec![big("same"), small("same")], 2),
            (vec![big("a"), "[1, 2]".to_string(), "\"x\"".to_string()], 1),
            (vec![big("a"), not_plain.clone()], 2),
        ] {
            let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
            streams_as_read_whole(&array, traces);
            let compact = format!("[{}]", runs.join(","));
            streams_as_read_whole(&compact.replace("\n    ", ""), traces);
            let object = format!("{{\"version\": 1, \"runs\": {array}}}");
            streams_as_read_whole(&object, traces);
            // A file of documents one per line.
            streams_as_read_whole(&document_lines(&runs), traces);
        }
        // Keyed by session, out of key order, and as `--select` finds them.
        let sessions = format!(
            r#"{{"sessions": {{"b": {}, "a": {}, "c": {}}}}}"#,
            big("b"),
            big("a"),
            silent("c")
        );
        streams_as_read_whole(&sessions, 2);
        let one_session = format!(r#"{{"sessions": {{"b": {}}}}}"#, big("b"));
        streams_as_read_whole(&one_session, 1);
    }

    /// `run` (a [`plain_run`] or [`anthropic_run`]) with `members` added before its
    /// list.
    fn with_members(run: &str, members: &str) -> String {
        run.replacen(", \"messages\":", &format!(", {members}, \"messages\":"), 1)
    }

    #[test]
    fn large_runs_with_members_that_hold_no_transcript_stream_as_they_read_whole() {
        let tools = r#""tools": [{"type": "function", "function": {"name": "create", "parameters": {"type": "object", "properties": {"request_id": {"type": "string"}}}}}]"#;
        let metadata = r#""metadata": {"user": "u-1", "tags": ["a", "b"], "limits": {"calls": 9}}"#;
        // Members the search finds a transcript in: the run holds two, read whole.
        let history = r#""history": [{"role": "user", "content": "earlier"}]"#;
        let nested = r#""previous": {"messages": [{"role": "user", "content": "before"}]}"#;
        // A list that is a transcript only with `--format` (one message in four).
        let examples =
            r#""examples": [{"a": 1}, {"b": 2}, {"c": 3}, {"role": "user", "content": "x"}]"#;
        // A container where a name is looked for (the run's `id`, made an object
        // below), and a member too large to be held (it can only be the list; so can
        // the messages: read whole).
        let id = r#""run_id": "r-7""#;
        let large = format!(
            r#""notes": [{}]"#,
            (0..adapters::LARGE_RUN / 2)
                .map(|n| format!("{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        assert!(large.len() >= adapters::LARGE_RUN);
        // Lists too large to be held beside the messages, each read an element at a
        // time: one the search finds nothing in is passed over (the messages stream);
        // one that is a transcript (of `--format`'s format), or holds one deeper, makes
        // the run one of two transcripts (read whole).
        let many = |key: &str, element: &str, last: &str| {
            let elements = vec![element; adapters::LARGE_RUN / element.len() + 1];
            format!(r#""{key}": [{}{last}]"#, elements.join(", "))
        };
        let tool = r#"{"type": "function", "function": {"name": "create", "parameters": {"type": "object"}}}"#;
        let large_tools = many("tools", tool, "");
        let large_history = many("history", r#"{"role": "user", "content": "earlier"}"#, "");
        let large_nested = many(
            "archive",
            r#"{"n": 1}"#,
            r#", {"previous": {"messages": [{"role": "user", "content": "before"}]}}"#,
        );
        let large_examples = many(
            "examples",
            r#"{"a": 1}"#,
            r#", {"role": "user", "content": "x"}"#,
        );
        for members in [
            large_tools.clone(),
            large_history,
            large_nested,
            large_examples,
            format!("{large_tools}, {}", many("more_tools", tool, "")),
            tools.to_string(),
            metadata.to_string(),
            format!("{tools}, {metadata}"),
            history.to_string(),
            nested.to_string(),
            examples.to_string(),
            id.to_string(),
            large,
            r#""tools": [], "meta": {}"#.to_string(),
        ] {
            let mut plain = with_members(&plain_run("a", 60, "hi"), &members);
            let mut anthropic = with_members(&anthropic_run("b", 40), &members);
            if members == id {
                plain = plain.replacen(r#""id": "a""#, r#""id": {"x": "a"}"#, 1);
                anthropic = anthropic.replacen(r#""id": "b""#, r#""id": ["b"]"#, 1);
            }
            assert!(anthropic.len() >= adapters::LARGE_RUN);
            for (runs, traces) in [
                (vec![plain.clone()], 1),
                (vec![anthropic.clone()], 1),
                (vec![plain.clone(), plain_run("c", 2, "hi")], 2),
                (vec![anthropic.clone(), plain.clone()], 2),
            ] {
                // Each run with a member that holds a transcript holds two.
                let holds = members.contains("history") || members.contains("previous");
                let traces = traces
                    + runs
                        .iter()
                        .filter(|run| holds && run.contains(&members))
                        .count();
                let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
                streams_as_read_whole(&array, traces);
                let object = format!("{{\"version\": 1, \"runs\": {array}}}");
                streams_as_read_whole(&object, traces);
                streams_as_read_whole(&document_lines(&runs), traces);
                for format in [Format::OpenAi, Format::Anthropic] {
                    reads_alike(&array, Some(format), None);
                }
                // As `--select` paths find them: each run or a member of it (read a
                // few messages at a time), or deeper (read whole).
                for path in SELECT_RUNS {
                    reads_alike(&array, None, Some(path));
                    reads_alike(&object, None, Some(&format!("runs{path}")));
                }
                reads_alike(&array, Some(Format::OpenAi), Some("[*].messages"));
            }
        }
        // Beside a large `tools` list, before or after them, the messages are read a few
        // at a time: read whole, the run's hundred records would wait for its end.
        let run = plain_run("a", 60, "hi");
        let last = format!("{}, {large_tools}}}", &run[..run.len() - 1]);
        for run in [with_members(&run, &large_tools), last] {
            let array = format!("[{run}, {}]", plain_run("c", 2, "hi"));
            streams_as_read_whole(&array, 2);
            let waiting = most_waiting(&array, &InputOptions::default());
            assert!(waiting < 20, "{waiting} waiting");
        }
        // Members that make the run something else to the search: an ATIF trajectory,
        // whose steps it reads instead of the messages, an OpenTelemetry export, a
        // ToolBench tree; a message and a JSON-RPC message in an envelope's place (the
        // runs are read as an MCP log's lines).
        let steps = r#""schema_version": "ATIF-v1.6", "steps": [{"x": 1}]"#;
        let message = r#""message": {"role": "user", "content": "hi"}, "payload": {"jsonrpc": "2.0", "id": 1, "method": "ping"}"#;
        let export = r#""resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "create"}}]}]}]}]"#;
        let tree = r#""node_type": "Action", "children": []"#;
        for members in [steps, message, export, tree] {
            let runs = [
                with_members(&plain_run("a", 60, "hi"), members),
                plain_run("c", 2, "hi"),
            ];
            let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
            for text in [array.clone(), document_lines(&runs)] {
                reads_alike(&text, None, None);
                reads_alike(&text, Some(Format::OpenAi), None);
            }
            for path in SELECT_RUNS {
                reads_alike(&array, None, Some(path));
            }
        }
        // A large run of small members and no list holds no transcript, which a line
        // of a file of documents says of itself.
        let members: Vec<String> = (0..12)
            .map(|i| format!(r#""m{i}": {{"text": "{}"}}"#, "x".repeat(250)))
            .collect();
        let listless = format!(r#"{{"id": "x", {}}}"#, members.join(", "));
        assert!(listless.len() >= adapters::LARGE_RUN);
        let runs = [plain_run("a", 2, "hi"), listless];
        let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
        for text in [array.clone(), document_lines(&runs)] {
            reads_alike(&text, None, None);
        }
        for path in SELECT_RUNS {
            reads_alike(&array, None, Some(path));
        }
    }

    #[test]
    fn large_runs_whose_list_a_select_path_of_keys_reaches_stream_as_they_read_whole() {
        // A run's list one and two objects down, beside scalars (which name it),
        // containers and the run's own members.
        let run = plain_run("a", 400, "hi");
        assert!(run.len() >= adapters::LARGE_RUN);
        let data = |run: &str| {
            format!(
                r#"{{"id": "outer", "n": 1, "data": {run}, "extra": {{"k": [1]}}, "tags": ["x"]}}"#
            )
        };
        let small = data(&plain_run("b", 1, "hi"));
        let inner = data(&format!(r#"{{"id": "i", "inner": {run}, "z": null}}"#));
        // Not what a path of keys reads through: a name twice, an escaped name, a list
        // or a scalar where an object is looked for.
        let twice = data(&run.replacen("{", r#"{"id": "again", "#, 1));
        let escaped = data(&run.replacen("\"messages\"", "\"m\\u0065ssages\"", 1));
        let listed = format!(r#"{{"id": "l", "data": [{run}]}}"#);
        let scalar = format!(r#"{{"id": "s", "data": 1, "other": {run}}}"#);
        let paths = [
            "[*].data.messages",
            "[*].data.inner.messages",
            "[*].data.missing",
            "[*].missing.messages",
            "[*].data.id",
            "[*].extra.k",
            "[*].data.inner",
            "[*].data",
            "[*].id.messages",
            "[*].data.0",
            "[*].data.messages[0]",
            "[*][\"data\"][\"messages\"]",
        ];
        for large in [data(&run), inner, twice, escaped, listed, scalar] {
            let runs = [large, small.clone()];
            let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
            let object = format!("{{\"runs\": {array}}}");
            for path in paths {
                reads_alike(&array, None, Some(path));
                reads_alike(&object, None, Some(&format!("runs{path}")));
                reads_alike(&array, Some(Format::OpenAi), Some(path));
            }
            // One per line, each line's document selected in: large lines too.
            let lines = document_lines(&runs);
            for path in paths {
                let path = path.trim_start_matches("[*]").trim_start_matches('.');
                let path = if path.is_empty() { "$" } else { path };
                reads_alike(&lines, None, Some(path));
            }
        }
        // A run itself one per line, beside a line without the list and a message.
        let message = r#"{"role": "user", "content": "hi", "messages": []}"#;
        let lines = document_lines(&[
            run.clone(),
            plain_run("b", 1, "hi"),
            r#"{"id": "c"}"#.to_string(),
            message.to_string(),
            with_members(&run, r#""tools": [1], "meta": {"k": 1}"#),
        ]);
        for path in [
            "messages",
            "$",
            "missing",
            "id",
            "messages[1]",
            "tools",
            "meta.k",
        ] {
            reads_alike(&lines, None, Some(path));
            reads_alike(&lines, Some(Format::Anthropic), Some(path));
        }
    }

    /// A run `id` of Responses items, `calls` function calls each answered (every
    /// seventh with an error text) and followed by an assistant message; every fifth
    /// with a `web_search_call` before it, answered by an output item after it (every
    /// tenth), before it (every fifteenth) or by none; an MCP call and an approval
    /// refused; every tenth call and the last, when `unanswered`, never answered.
    fn responses_run(id: &str, calls: usize, unanswered: bool) -> String {
        let mut items = vec![r#"{"role": "user", "content": "go"}"#.to_string()];
        for n in 0..calls {
            let search = format!(
                r#"{{"type": "web_search_call", "id": "{id}-ws{n}", "status": "completed"}}"#
            );
            let searched = format!(
                r#"{{"type": "web_search_call_output", "call_id": "{id}-ws{n}", "output": "found"}}"#
            );
            match n % 30 {
                0 | 10 | 20 => items.extend([search, searched]),
                15 => items.extend([searched, search]),
                5 | 25 => items.push(search),
                _ => {}
            }
            items.push(format!(
                r#"{{"type": "function_call", "id": "fc-{n}", "call_id": "{id}-{n}", "name": "create", "arguments": "{{\"request_id\": \"r-{n}\"}}"}}"#
            ));
            if !(unanswered && (n % 10 == 3 || n + 1 == calls)) {
                let output = match n % 7 {
                    6 => "error: timed out".to_string(),
                    _ => format!(r#"{{\"id\": \"rec-{n}\"}}"#),
                };
                items.push(format!(
                    r#"{{"type": "function_call_output", "call_id": "{id}-{n}", "output": "{output}"}}"#
                ));
            }
            items.push(format!(
                r#"{{"type": "message", "role": "assistant", "content": [{{"type": "output_text", "text": "step {n}"}}]}}"#
            ));
        }
        items.extend([
            r#"{"type": "mcp_call", "id": "m-1", "name": "lookup", "arguments": "{}", "output": "none"}"#.to_string(),
            format!(r#"{{"type": "mcp_approval_request", "id": "{id}-a", "server_label": "db", "name": "drop", "arguments": "{{}}"}}"#),
            format!(r#"{{"type": "mcp_approval_response", "approval_request_id": "{id}-a", "approve": false}}"#),
        ]);
        format!(
            "{{\"id\": \"{id}\", \"model\": \"m\", \"input\": [\n    {}\n  ]}}",
            items.join(",\n    ")
        )
    }

    /// An ATIF trajectory `id` of `calls` agent steps after a user step, each with a
    /// call and its observation (every sixth call unobserved); `schema` says where its
    /// `schema_version` is (`before` or `after` its steps, or nowhere: its steps then
    /// say ATIF alone).
    fn atif_run(id: &str, calls: usize, schema: &str) -> String {
        let mut steps = vec![r#"{"step_id": 1, "source": "user", "message": "go"}"#.to_string()];
        for n in 0..calls {
            let observation = match n % 6 {
                5 => String::new(),
                _ => format!(
                    r#", "observation": {{"results": [{{"source_call_id": "{id}-{n}", "content": "{{\"id\": \"rec-{n}\"}}"}}]}}"#
                ),
            };
            steps.push(format!(
                r#"{{"step_id": {}, "source": "agent", "message": "step {n}", "tool_calls": [{{"tool_call_id": "{id}-{n}", "function_name": "create", "arguments": {{"request_id": "r-{n}"}}}}]{observation}}}"#,
                n + 2
            ));
        }
        let version = r#""schema_version": "ATIF-v1.6", "#;
        let (before, after) = match schema {
            "before" => (version, ""),
            "after" => ("", r#", "schema_version": "ATIF-v1.6""#),
            _ => ("", ""),
        };
        format!(
            "{{{before}\"session_id\": \"{id}\", \"agent\": {{\"name\": \"a\"}}, \"steps\": [\n    {}\n  ], \"final_metrics\": {{\"steps\": {}}}{after}}}",
            steps.join(",\n    "),
            calls + 1
        )
    }

    #[test]
    fn large_runs_of_responses_items_and_atif_steps_stream_as_they_read_whole() {
        let responses = responses_run("a", 150, true);
        assert!(responses.len() >= adapters::LARGE_RUN);
        let small = responses_run("b", 2, false);
        let mut runs = vec![
            vec![responses.clone(), small.clone()],
            vec![responses_run("c", 150, false)],
        ];
        for schema in ["before", "after", "none"] {
            let atif = atif_run("t", 150, schema);
            assert!(atif.len() >= adapters::LARGE_RUN);
            runs.push(vec![atif, atif_run("u", 2, schema)]);
        }
        // Steps that do not say ATIF, in a run that does not either: a list of chat
        // messages to the search, read whole. And a trajectory with a member the
        // search would find a transcript in were it not one: read whole too.
        let chat_steps = plain_run("p", 60, "hi").replacen("\"messages\"", "\"steps\"", 1);
        runs.push(vec![chat_steps, plain_run("q", 1, "hi")]);
        let history = r#""history": [{"role": "user", "content": "earlier"}]"#;
        let with_history =
            atif_run("h", 150, "before").replacen("\"steps\"", &format!("{history}, \"steps\""), 1);
        runs.push(vec![with_history]);
        for runs in &runs {
            let traces = if runs.len() == 2 { 2 } else { 1 };
            let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
            let object = format!("{{\"version\": 1, \"runs\": {array}}}");
            let lines = document_lines(runs);
            if !runs[0].contains("\"id\": \"p\"") {
                streams_as_read_whole(&array, traces);
                streams_as_read_whole(&object, traces);
                streams_as_read_whole(&lines, traces);
            }
            for format in [Format::Responses, Format::Atif, Format::OpenAi] {
                reads_alike(&array, Some(format), None);
                reads_alike(&lines, Some(format), None);
            }
            for path in SELECT_RUNS
                .iter()
                .chain(&["[*].input", "[*].steps", "[*].steps[1]"])
            {
                reads_alike(&array, None, Some(path));
                reads_alike(&object, None, Some(&format!("runs{path}")));
            }
            reads_alike(&array, Some(Format::Atif), Some("[*]"));
            reads_alike(&lines, None, Some("steps"));
            reads_alike(&lines, None, Some("input"));
        }
    }

    /// `--select` paths of each run of an array: what they select in a run is read a
    /// few messages at a time when it is the run or its list, else whole.
    const SELECT_RUNS: [&str; 8] = [
        "[*]",
        "[*].messages",
        "/*/messages",
        "[*].tools",
        "[*].missing",
        "[*].id",
        "[*].messages[0]",
        "[*][\"messages\"]",
    ];

    /// Reads `text` from a file and whole from memory, with `--format`'s `format` and
    /// `--select`'s `select`, and asserts both give the same, however it is read.
    #[track_caller]
    fn reads_alike(text: &str, format: Option<Format>, select: Option<&str>) {
        let options = InputOptions {
            format,
            select: select.map(|path| Selector::parse(path).unwrap()),
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.json");
        std::fs::write(&path, text).unwrap();
        let streamed = TraceInput::open(&path, &options, None).unwrap();
        let whole = TraceInput::from_bytes(text.as_bytes(), &options, None);
        assert_eq!(
            everything(streamed),
            everything(whole),
            "{format:?} {select:?}: {text}"
        );
    }

    #[test]
    fn a_large_plain_run_is_handed_on_before_it_is_read_through() {
        let (a, b) = (plain_run("a", 400, "hi"), plain_run("b", 1, "hi"));
        // Beside a list of tool definitions and an object, which hold no transcript.
        let members = r#""tools": [{"type": "function", "function": {"name": "create"}}], "meta": {"k": [1]}"#;
        let (c, d) = (with_members(&a, members), anthropic_run("d", 400));
        let d = with_members(&d, members);
        let select = |path: &str| InputOptions {
            format: None,
            select: Some(Selector::parse(path).unwrap()),
        };
        let detect = InputOptions::default();
        let format = |format: Format| InputOptions {
            format: Some(format),
            select: None,
        };
        for (text, trace, options) in [
            (format!("[{a}, {b}]"), "/0/messages (id a)", &detect),
            // With the format given.
            (
                format!("[{c}, {b}]"),
                "/0/messages (id a)",
                &format(Format::OpenAi),
            ),
            (
                document_lines(&[d.clone(), b.clone()]),
                "line 1 /messages (id d)",
                &format(Format::Anthropic),
            ),
            (
                document_lines(&[a.clone(), b.clone()]),
                "line 1 /messages (id a)",
                &detect,
            ),
            (format!("[{c}, {b}]"), "/0/messages (id a)", &detect),
            (
                document_lines(&[c.clone(), b.clone()]),
                "line 1 /messages (id a)",
                &detect,
            ),
            (format!("[{d}, {b}]"), "/0/messages (id d)", &detect),
            // As a `--select` path finds them: the runs, or their lists.
            (format!("[{c}, {b}]"), "/0/messages (id a)", &select("[*]")),
            (
                format!("[{c}, {b}]"),
                "/0/messages (id a)",
                &select("[*].messages"),
            ),
            (
                format!("{{\"runs\": [{d}, {b}]}}"),
                "/runs/0/messages (id d)",
                &select("runs[*].messages"),
            ),
            // A line's list, or one keys lead to.
            (
                document_lines(&[c.clone(), b.clone()]),
                "line 1 /messages (id a)",
                &select("messages"),
            ),
            (
                document_lines(&[format!("{{\"data\": {c}}}"), format!("{{\"data\": {b}}}")]),
                "line 1 /data/messages (id a)",
                &select("data.messages"),
            ),
            // Or a list keys lead to, or that is in the object they lead to, named by
            // the object holding it.
            (
                format!("[{{\"n\": 1, \"data\": {c}}}, {{\"data\": {b}}}]"),
                "/0/data/messages (id a)",
                &select("[*].data.messages"),
            ),
            (
                format!("[{{\"n\": 1, \"data\": {c}}}, {{\"data\": {b}}}]"),
                "/0/data/messages (id a)",
                &select("[*].data"),
            ),
            // Responses items, and an ATIF trajectory's steps whether its schema says so
            // before them, after them, or only its steps do.
            (
                format!("[{}, {b}]", responses_run("r", 400, true)),
                "/0/input (id r)",
                &detect,
            ),
            (
                format!("[{}, {b}]", atif_run("t", 400, "before")),
                "/0/steps (session_id t)",
                &detect,
            ),
            (
                document_lines(&[atif_run("t", 400, "after"), atif_run("u", 1, "after")]),
                "line 1 /steps (session_id t)",
                &format(Format::Atif),
            ),
            (
                format!("[{}, {b}]", atif_run("t", 400, "none")),
                "/0/steps (session_id t)",
                &select("[*]"),
            ),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("runs.json");
            std::fs::write(&path, &text).unwrap();
            let input = TraceInput::open(&path, options, None).unwrap();
            let Body::Stream(mut stream) = input.body else {
                panic!("not streamed");
            };
            stream.decide();
            // Decided before the first run's records are handed on: two traces, so
            // they name theirs.
            assert_eq!(stream.traces(), 2);
            let first = stream.next().unwrap().unwrap();
            let Handed::Entry(Entry::Record(record)) = first else {
                panic!("not a record: {first:?}");
            };
            assert_eq!(record.fields.to_map()["trace"], trace);
            // The run's 400 calls give about 800 records; a few messages' worth wait.
            assert!(stream.waiting() < 20, "{} waiting", stream.waiting());
        }
    }

    /// The lines of `log` that are JSON values without a key twice, as the list `key`
    /// of a run `id`, on one line.
    fn log_run(id: &str, key: &str, log: &str) -> String {
        let lines: Vec<&str> = log
            .lines()
            .filter(|line| serde_json::from_str::<serde_json::Value>(line).is_ok())
            .filter(|line| !line.contains(r#""name":"a","name":"b""#))
            .collect();
        format!(r#"{{"id": "{id}", "{key}": [{}]}}"#, lines.join(", "))
    }

    /// A Codex rollout of `sessions` sessions of `calls` function calls each, a fifth
    /// never answered and some answered three calls later, with built-in calls
    /// answered at once, two calls later, or never, and lines that give problems;
    /// `back`: the first session goes on after the others.
    fn codex_rollout(sessions: usize, calls: usize, back: bool) -> String {
        let line = |ty: &str, payload: &str| {
            format!("{{\"timestamp\":\"t\",\"type\":\"{ty}\",\"payload\":{payload}}}\n")
        };
        let item = |payload: String| line("response_item", &payload);
        let mut text = String::new();
        for s in (0..sessions).chain(back.then_some(0)) {
            text += &line("session_meta", &format!(r#"{{"id":"r{s}"}}"#));
            for n in 0..calls {
                if n % 4 == 0 {
                    text += &item(format!(
                        r#"{{"type":"local_shell_call","call_id":"l{s}-{n}","status":"completed","action":{{"command":["ls"]}}}}"#
                    ));
                }
                if n % 8 == 0 {
                    text += &item(format!(
                        r#"{{"type":"local_shell_call_output","call_id":"l{s}-{n}","output":"a"}}"#
                    ));
                }
                if n % 8 == 6 {
                    let earlier = n - 2;
                    text += &item(format!(
                        r#"{{"type":"local_shell_call_output","call_id":"l{s}-{earlier}","output":"b"}}"#
                    ));
                }
                text += &item(format!(
                    r#"{{"type":"function_call","name":"create","call_id":"f{s}-{n}","arguments":"{{\"request_id\":\"q{n}\"}}"}}"#
                ));
                if n % 5 != 2 && n % 9 != 4 {
                    text += &item(format!(
                        r#"{{"type":"function_call_output","call_id":"f{s}-{n}","output":"ok"}}"#
                    ));
                }
                if n % 9 == 7 {
                    let earlier = n - 3;
                    text += &item(format!(
                        r#"{{"type":"function_call_output","call_id":"f{s}-{earlier}","output":"late"}}"#
                    ));
                }
                text += &item(
                    r#"{"type":"message","role":"assistant","content":[{"type":"output_text","text":"next"}]}"#
                        .to_string(),
                );
                if n % 7 == 2 {
                    text += "{\"timestamp\":\"t\",\"type\":\"response_item\"}\n";
                }
            }
        }
        text
    }

    #[test]
    fn large_runs_of_mcp_claude_code_and_codex_logs_stream_as_they_read_whole() {
        // Sessions and threads that interleave: held by the reading until they end.
        let claude: String = (0..8).map(|_| claude_code_log()).collect();
        let logs = [
            (log_run("m", "messages", &mcp_log(12)), Format::Mcp),
            (log_run("c", "loglines", &claude), Format::ClaudeCode),
            (
                log_run("x", "events", &codex_rollout(3, 12, true)),
                Format::Codex,
            ),
        ];
        let small = [
            log_run("n", "messages", &mcp_log(1)),
            log_run("d", "loglines", &claude_code_log()),
            log_run("y", "events", &codex_rollout(1, 1, false)),
        ];
        for ((large, format), small) in logs.iter().zip(&small) {
            assert!(large.len() >= adapters::LARGE_RUN);
            for runs in [
                vec![large.clone(), small.clone()],
                vec![large.clone()],
                vec![small.clone(), large.clone(), large.clone()],
            ] {
                let array = format!("[\n  {}\n]\n", runs.join(",\n  "));
                let object = format!("{{\"version\": 1, \"runs\": {array}}}");
                let lines = document_lines(&runs);
                for text in [&array, &object, &lines] {
                    for format in [None, Some(*format), Some(Format::OpenAi)] {
                        reads_alike(text, format, None);
                    }
                }
                for path in
                    SELECT_RUNS
                        .iter()
                        .chain(&["[*].loglines", "[*].events", "[*].events[2]"])
                {
                    reads_alike(&array, None, Some(path));
                    reads_alike(&object, None, Some(&format!("runs{path}")));
                }
                reads_alike(&lines, None, Some("loglines"));
            }
        }
        // A large run's sessions one after another: each is handed on as it is read and
        // ended at its last message, and a call never answered holds nothing back (the
        // run looks ahead), where read whole every record of the run would wait for its
        // end (hundreds).
        let sequential = [
            (log_run("m", "messages", &mcp_log(40)), &small[0], 41),
            (
                log_run("x", "events", &codex_rollout(8, 12, false)),
                &small[2],
                9,
            ),
        ];
        for (run, small, traces) in &sequential {
            let array = format!("[{run}, {small}]");
            streams_as_read_whole(&array, *traces);
            let waiting = most_waiting(&array, &InputOptions::default());
            assert!(waiting < 10, "{waiting} waiting: {}", &run[..60]);
        }
    }

    /// A Claude Code log of `turns` turns of session `s1`'s main thread and of a
    /// sub-agent's sidechain, and of session `s2` from halfway, the threads' turns
    /// taken `together` or each thread's one after another: in each thread calls never
    /// answered, answered four turns later and answered only at its end, and lines that
    /// give problems among them.
    fn claude_code_turns(turns: usize, together: bool) -> String {
        let line = |session: &str, uuid: String, side: bool, ty: &str, message: String| {
            let agent = if side { r#""agentId":"ag1","# } else { "" };
            format!(
                "{{\"type\":\"{ty}\",\"sessionId\":\"{session}\",\"uuid\":\"{uuid}\",\"isSidechain\":{side},{agent}\"timestamp\":\"t-{uuid}\",\"message\":{message}}}\n"
            )
        };
        let call = |id: &str| {
            format!(
                r#"{{"id":"msg-{id}","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"create","input":{{"request_id":"{id}"}}}}]}}"#
            )
        };
        let result = |id: &str| {
            format!(
                r#"{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"done {id}"}}]}}"#
            )
        };
        // Each thread's lines, turn by turn: `s2` starts halfway.
        let threads = [
            ("s1", false, "m", 0),
            ("s1", true, "x", 0),
            ("s2", false, "n", turns / 2),
        ];
        let mut blocks: Vec<Vec<String>> = Vec::new();
        for (session, side, tag, from) in threads {
            let mut block = vec![String::new(); turns + 1];
            for (t, lines) in block.iter_mut().enumerate().take(turns).skip(from) {
                let id = format!("{tag}{t}");
                let (asked, answered) = (format!("a-{id}"), format!("r-{id}"));
                *lines += &line(session, asked, side, "assistant", call(&id));
                // Never answered, answered four turns later, or at the very end.
                if !matches!(t % 10, 3 | 5) && t != from + 1 {
                    *lines += &line(session, answered, side, "user", result(&id));
                }
                if t % 10 == 9 {
                    let earlier = format!("{tag}{}", t - 4);
                    *lines += &line(session, format!("l-{id}"), side, "user", result(&earlier));
                }
                // A line that gives a problem, handed on at once, among the records.
                if t % 7 == 2 {
                    *lines += "{\"type\":\"assistant\",\"sessionId\":\"s1\"}\n";
                }
            }
            let id = format!("{tag}{}", from + 1);
            block[turns] = line(session, format!("e-{id}"), side, "user", result(&id));
            blocks.push(block);
        }
        let mut text = String::new();
        match together {
            true => (0..=turns).for_each(|t| blocks.iter().for_each(|block| text += &block[t])),
            false => blocks.iter().for_each(|block| text += &block.concat()),
        }
        text
    }

    #[test]
    fn the_threads_of_a_log_look_ahead_and_pair_as_the_whole_reading_does() {
        // Each thread of a Claude Code log and each session of a Codex rollout, one
        // after another, waits for a call never answered early on: without a look at
        // the results to come, its later records would wait for the end of the log
        // (hundreds).
        let claude = claude_code_turns(60, false);
        let codex = codex_rollout(3, 40, false);
        let small = log_run("small", "events", &codex_rollout(1, 1, false));
        // Threads that take turns: a later one waits for those before it to end, as
        // the whole reading gives them thread by thread; a line's problem falls among
        // the records where it is in the file, whatever waits.
        for log in [claude_code_turns(60, true), codex_rollout(3, 40, true)] {
            streams_as_read_whole(&log, 3);
            let lines: Vec<&str> = log.lines().collect();
            streams_as_read_whole(&format!("[\n{}\n]\n", lines.join(",\n")), 3);
            reads_alike(&log[..log.len() * 2 / 3], None, None);
        }
        for (log, traces) in [(&claude, 3), (&codex, 3)] {
            streams_as_read_whole(log, traces);
            // Once in the first pass (which finds where each thread ends) and once in
            // the reading, not once for each thread that waits so: the threads that
            // start later learn what the first look found.
            let looks = || adapters::LOOKED_AHEAD.with(std::cell::Cell::get);
            let before = looks();
            let most = most_waiting(log, &InputOptions::default());
            assert!(most < 30, "{most} waiting: {}", &log[..100]);
            assert_eq!(looks() - before, 2, "{}", &log[..100]);
            // The same as a document's list, and as a large run beside a small one.
            let lines: Vec<&str> = log.lines().collect();
            let list = format!("[\n{}\n]\n", lines.join(",\n"));
            streams_as_read_whole(&list, traces);
            let most = most_waiting(&list, &InputOptions::default());
            assert!(most < 30, "{most} waiting: {}", &log[..100]);
            let run = log_run("big", "events", log);
            assert!(run.len() >= adapters::LARGE_RUN);
            let runs = format!("[{run}, {small}]");
            streams_as_read_whole(&runs, traces + 1);
            let most = most_waiting(&runs, &InputOptions::default());
            assert!(most < 30, "{most} waiting: {}", &log[..100]);
            // Cut short: the look ahead reads what there is.
            reads_alike(&log[..log.len() * 2 / 3], None, None);
            reads_alike(&list[..list.len() * 2 / 3], None, None);
        }
    }

    /// Reads `text` from a file, where it streams, to its end, and returns the most
    /// records and problems that ever waited to be handed on (in its adapter or after).
    fn most_waiting(text: &str, options: &InputOptions) -> usize {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("transcript.json");
        std::fs::write(&path, text).unwrap();
        let input = TraceInput::open(&path, options, None).unwrap();
        let Body::Stream(mut stream) = input.body else {
            panic!("not streamed");
        };
        stream.decide();
        let mut most = stream.waiting();
        while let Some(handed) = stream.next() {
            handed.unwrap();
            most = most.max(stream.waiting());
        }
        most
    }

    /// The elements of `list`, a pretty JSON array of objects, one per line.
    fn per_line(list: &str) -> String {
        let inner = list.trim().trim_start_matches('[').trim_end_matches(']');
        let elements: Vec<&str> = inner.split(",\n").map(str::trim).collect();
        format!("{}\n", elements.join("\n"))
    }

    #[test]
    fn records_after_a_call_never_answered_are_handed_on_as_they_are_read() {
        // Every tenth Responses call, every sixth ATIF call, every fifth plain OpenAI
        // call and every sixth Anthropic call is never answered, or one call is
        // answered only at the end: without a look at the results to come, each
        // transcript's records would wait from the first to its end (hundreds).
        let responses = responses_run("r", 400, true);
        let atif = atif_run("t", 400, "before");
        let (plain, anthropic) = (plain_run("p", 400, "hi"), anthropic_run("a", 400));
        let legacy = |name: &str| {
            format!(
                r#"{{"role": "assistant", "content": null, "function_call": {{"name": "{name}", "arguments": "{{}}"}}}}"#
            )
        };
        let said = r#"{"role": "assistant", "content": "next"}"#;
        let searched = r#"{"role": "function", "name": "search", "content": "found"}"#;
        // A call answered at the very end, after every other.
        let call = |id: &str| {
            format!(
                r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "type": "function", "function": {{"name": "create", "arguments": "{{}}"}}}}]}}"#
            )
        };
        let answer =
            |id: &str| format!(r#"{{"role": "tool", "tool_call_id": "{id}", "content": "done"}}"#);
        let answered_last: String = [call("first"), said.to_string()]
            .into_iter()
            .chain((0..300).flat_map(|i| {
                [
                    call(&format!("c{i}")),
                    answer(&format!("c{i}")),
                    said.to_string(),
                ]
            }))
            .chain([answer("first")])
            .map(|line| line + "\n")
            .collect();
        // A call by position answered only at the end, after calls of another tool.
        let looked_up = r#"{"role": "function", "name": "lookup", "content": "found"}"#;
        let looked_up_last: String = [legacy("lookup"), said.to_string()]
            .into_iter()
            .chain(
                (0..300).flat_map(|_| [legacy("search"), searched.to_string(), said.to_string()]),
            )
            .chain([looked_up.to_string()])
            .map(|line| line + "\n")
            .collect();
        let by_position: String = (0..300)
            .map(|_| {
                format!(
                    "{}\n{said}\n{}\n{searched}\n{said}\n",
                    legacy("lookup"),
                    legacy("search")
                )
            })
            .collect();
        let list = |run: &str, key: &str| {
            let start = run.find(&format!("\"{key}\": [")).unwrap() + key.len() + 4;
            run[start..run.rfind(']').unwrap() + 1].to_string()
        };
        let detect = InputOptions::default();
        let atif_format = InputOptions {
            format: Some(Format::Atif),
            select: None,
        };
        for (text, options) in [
            // A document's list: alone, or in an object.
            (list(&responses, "input"), &detect),
            (atif.clone(), &detect),
            (atif.clone(), &atif_format),
            (
                format!("{{\"messages\": {}}}", list(&plain, "messages")),
                &detect,
            ),
            (list(&anthropic, "messages"), &detect),
            // Messages one per line; legacy calls by position, `lookup` never
            // answered and `search` answered (a later result for another tool
            // answers none of them).
            (per_line(&list(&plain, "messages")), &detect),
            (by_position.clone(), &detect),
            (answered_last.clone(), &detect),
            (looked_up_last, &detect),
            (per_line(&list(&anthropic, "messages")), &detect),
            // A large run, read a few messages at a time.
            (
                format!("[{responses}, {}]", responses_run("s", 1, true)),
                &detect,
            ),
            (format!("[{atif}]"), &detect),
            (format!("[{plain}]"), &detect),
            (format!("[{anthropic}]"), &detect),
            (document_lines(std::slice::from_ref(&anthropic)), &detect),
        ] {
            let most = most_waiting(&text, options);
            assert!(most < 30, "{most} waiting: {}", &text[..200]);
        }
    }

    #[test]
    fn a_look_at_the_results_to_come_pairs_as_the_whole_reading_does() {
        let call = |id: &str| {
            format!(
                r#"{{"role": "assistant", "content": null, "tool_calls": [{{"id": "{id}", "type": "function", "function": {{"name": "create", "arguments": "{{}}"}}}}]}}"#
            )
        };
        let answer = |id: &str| {
            format!(r#"{{"role": "tool", "tool_call_id": "{id}", "content": "done {id}"}}"#)
        };
        let said = r#"{"role": "assistant", "content": "next"}"#.to_string();
        let padding = |n: usize| -> Vec<String> {
            (0..n)
                .flat_map(|i| {
                    [
                        call(&format!("p{i}")),
                        answer(&format!("p{i}")),
                        said.clone(),
                    ]
                })
                .collect()
        };
        // A call answered far later, after the agent moved on several times; one
        // answered by the next result, after the agent moved on; a call
        // id answered, then used again by a call answered later still; calls by
        // position (a legacy `function_call`), one answered late and one never; a
        // call never answered; and the same before a cut.
        let positional = r#"{"role": "assistant", "content": null, "function_call": {"name": "lookup", "arguments": "{}"}}"#.to_string();
        let positional_answer =
            r#"{"role": "function", "name": "lookup", "content": "found"}"#.to_string();
        let mut messages = vec![call("never"), said.clone()];
        messages.extend(padding(3));
        // Answered by the first result after it, once the agent moved on.
        messages.extend([call("next"), said.clone(), answer("next")]);
        messages.extend([call("late"), said.clone()]);
        // Two calls open with one id, one answer: to the older one.
        messages.extend([call("dup"), said.clone(), call("dup"), said.clone()]);
        messages.extend(padding(30));
        messages.push(answer("dup"));
        messages.extend([
            call("again"),
            answer("again"),
            said.clone(),
            call("again"),
            said.clone(),
        ]);
        messages.extend(padding(30));
        messages.extend([
            answer("late"),
            answer("again"),
            positional.clone(),
            said.clone(),
        ]);
        messages.extend(padding(10));
        messages.extend([positional_answer.clone(), positional.clone(), said.clone()]);
        // Two calls by position of one tool open, one answer: to the older one.
        messages.extend([positional.clone(), said.clone()]);
        messages.extend(padding(5));
        messages.extend([positional_answer, said.clone()]);
        // A result that names no tool answers the oldest call by position of any.
        let search = r#"{"role": "assistant", "content": null, "function_call": {"name": "search", "arguments": "{}"}}"#;
        messages.extend([
            positional.clone(),
            said.clone(),
            search.to_string(),
            said.clone(),
        ]);
        messages.extend(padding(5));
        messages.extend([
            r#"{"role": "function", "content": "unnamed"}"#.to_string(),
            said.clone(),
        ]);
        messages.extend(padding(10));
        let text = array(&messages);
        assert!(text.len() >= adapters::LARGE_RUN);
        streams_as_read_whole(&format!("{text}\n"), 1);
        streams_as_read_whole(&format!("{}\n", messages.join("\n")), 1);
        let cut = messages.join("\n");
        reads_alike(&cut[..cut.len() * 2 / 3], None, None);
        let run = format!(r#"{{"id": "x", "messages": {}}}"#, text.replace('\n', ""));
        let runs = [run.clone(), plain_run("y", 1, "hi")];
        streams_as_read_whole(&format!("[{}]\n", runs.join(", ")), 2);
        streams_as_read_whole(&document_lines(&runs), 2);
        reads_alike(&format!("[{run}]\n"), Some(Format::OpenAi), None);
        // A list cut short: the look ahead cannot read it to its end.
        let cut = &text[..text.len() * 2 / 3];
        reads_alike(cut, None, None);
        reads_alike(&format!("[{}", &run[..run.len() * 2 / 3]), None, None);
        // Responses items one per line: a built-in call whose output came before it
        // is told answered by its line (and gets its `missing` result).
        let responses = responses_run("r", 150, true);
        let start = responses.find("\"input\": [").unwrap() + 9;
        let items = &responses[start..responses.rfind(']').unwrap() + 1];
        streams_as_read_whole(&per_line(items), 1);
        // ATIF: a later step's observation answers an earlier step's call.
        let steps = [
            r#"{"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c1", "function_name": "create", "arguments": {}}]}"#.to_string(),
            r#"{"step_id": 2, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c2", "function_name": "create", "arguments": {}}]}"#.to_string(),
            r#"{"step_id": 3, "source": "agent", "message": "", "observation": {"results": [{"source_call_id": "c1", "content": "late"}]}}"#.to_string(),
        ];
        let mut all = steps.to_vec();
        all.extend((4..60).map(|i| {
            format!(
                r#"{{"step_id": {i}, "source": "agent", "message": "{}"}}"#,
                "x".repeat(40)
            )
        }));
        let trajectory = format!(
            r#"{{"schema_version": "ATIF-v1.6", "session_id": "s", "steps": {}}}"#,
            array(&all)
        );
        assert!(trajectory.len() >= adapters::LARGE_RUN);
        streams_as_read_whole(&trajectory, 1);
        streams_as_read_whole(&format!("[{trajectory}, {trajectory}]"), 2);
    }

    /// An ATIF trajectory of one call, never answered.
    const TRAJECTORY: &str = r#"{"schema_version": "ATIF-v1.6", "session_id": "s-1", "steps": [{"step_id": 1, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c1", "function_name": "create", "arguments": {}}]}]}"#;

    /// An OpenTelemetry export of one tool span.
    const EXPORT: &str = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "spanId": "s", "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "create"}}]}]}]}]}"#;

    /// OpenAI chat messages: a call answered, one never answered, and an element that
    /// is no message.
    fn chat_messages() -> Vec<String> {
        [
            r#"{"role": "user", "content": "hi"}"#,
            r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "create", "arguments": "{\"request_id\": \"r-1\"}"}}]}"#,
            r#"{"role": "tool", "tool_call_id": "c1", "content": "{\"ok\": true}"}"#,
            "[1, 2]",
            r#"{"role": "assistant", "content": null, "tool_calls": [{"id": "c2", "type": "function", "function": {"name": "create", "arguments": "{}"}}]}"#,
            r#"{"role": "assistant", "content": "done"}"#,
        ]
        .map(String::from)
        .to_vec()
    }

    /// `elements` as a pretty JSON array.
    fn array(elements: &[String]) -> String {
        format!("[\n  {}\n]", elements.join(",\n  "))
    }

    #[test]
    fn documents_of_every_shape_stream_as_they_read_whole() {
        let chat = array(&chat_messages());
        // A message list, alone or in an object with the run's id and metadata before
        // and after it.
        streams_as_read_whole(&format!("{chat}\n"), 1);
        let object = format!(
            "{{\n  \"id\": \"run-1\",\n  \"messages\": {chat},\n  \"model\": \"m\", \"usage\": {{\"total\": 3}}\n}}\n"
        );
        streams_as_read_whole(&object, 1);
        let run = |id: usize| {
            format!("{{\"id\": \"run-{id}\", \"messages\": {chat}, \"tags\": [\"a\"]}}")
        };
        // An object of runs, with members that hold no transcript around them.
        let runs = format!(
            "{{\"model\": \"m\", \"runs\": {}, \"tools\": [{{\"name\": \"create\"}}], \"version\": 2}}",
            array(&[run(1), run(2), run(3)])
        );
        streams_as_read_whole(&runs, 3);
        for (path, traces) in [
            ("runs[*].messages", 3),
            ("runs[*].nothing", 0),
            ("/runs/*", 3),
        ] {
            let select = InputOptions {
                format: None,
                select: Some(Selector::parse(path).unwrap()),
            };
            streams_as_read_whole_with(&runs, traces, &select);
        }
        let nested = format!(
            "{{\"data\": {{\"id\": 7, \"runs\": {}}}, \"n\": 1}}",
            array(&[run(1), run(2)])
        );
        let select = InputOptions {
            format: None,
            select: Some(Selector::parse("data.runs[*].messages").unwrap()),
        };
        streams_as_read_whole_with(&nested, 2, &select);
        let select = InputOptions {
            format: None,
            select: Some(Selector::parse("[0].runs[*].messages").unwrap()),
        };
        let listed = format!("[{{\"id\": 7, \"runs\": {}}}, 5]", array(&[run(1), run(2)]));
        streams_as_read_whole_with(&listed, 2, &select);
        // A document on one line, where the path selects nothing: said of the line.
        let select = InputOptions {
            format: None,
            select: Some(Selector::parse("[*].x").unwrap()),
        };
        for text in ["[{\"a\": 1}, {\"b\": 2}]\n", "\n \n  [{\"a\": 1}] \t\r\n\n"] {
            streams_as_read_whole_with(text, 0, &select);
        }
        // A list or runs in an object below the top level (named after the object
        // holding it, its id before or after the list), found without --select.
        let wrapped = format!(
            "{{\"meta\": {{\"v\": [1]}}, \"data\": {{\"messages\": {chat}, \"run_id\": \"r-9\"}}, \"n\": 1}}"
        );
        streams_as_read_whole(&wrapped, 1);
        let deeper = format!(
            "{{\"export\": {{\"v\": 2, \"conversation\": {{\"run\": {object}}}}}, \"n\": [1]}}"
        );
        streams_as_read_whole(&deeper, 1);
        streams_as_read_whole(&format!("{{\"data\": {nested}}}"), 2);
        // Transcripts in several members: the innermost object holding them all is
        // read member by member, each member searched as a run (named after the
        // object's id, wherever it is).
        let sessions = format!(
            "{{\"v\": 1, \"data\": {{\"sessions\": {{\"s-1\": {object}, \"s-2\": {object}, \"s-3\": {{\"messages\": []}}}}}}}}"
        );
        for path in [
            None,
            Some("data"),
            Some("data.sessions"),
            Some("data.sessions[*]"),
            Some("data.sessions[*].messages"),
            Some("/data/sessions/*/messages"),
            Some("$"),
        ] {
            // In key order, and not.
            for text in [&sessions, &sessions.replace("s-1", "s-9")] {
                for format in [None, Some(Format::OpenAi), Some(Format::Anthropic)] {
                    let options = InputOptions {
                        format,
                        select: path.map(|path| Selector::parse(path).unwrap()),
                    };
                    streams_as_read_whole_with(text, 2, &options);
                }
            }
        }
        for (text, traces) in [
            (sessions, 2),
            (
                format!("{{\"a\": {chat}, \"n\": 2, \"b\": {chat}, \"id\": \"x\"}}"),
                2,
            ),
            (
                format!("{{\"b\": {chat}, \"run\": {{\"messages\": {chat}}}}}"),
                2,
            ),
            // Out of key order: read in key order, as the search meets them.
            (
                format!("{{\"run\": {{\"messages\": {chat}}}, \"b\": {chat}}}"),
                2,
            ),
            (
                format!(
                    "{{\"z\": {object}, \"n\": [1, 2], \"y\": {runs}, \"x\": {chat}, \"id\": 7}}"
                ),
                5,
            ),
            (
                format!("{{\"a\": {{\"messages\": {chat}}}, \"a b\": {{\"messages\": {chat}}}}}"),
                2,
            ),
            (
                format!("{{\"exports\": [{EXPORT}, {EXPORT}], \"messages\": {chat}}}"),
                2,
            ),
            (format!("{{\"export\": {EXPORT}, \"runs\": {runs}}}"), 4),
            (
                format!("{{\"x\": {{\"run_id\": 5, \"a\": {chat}, \"b\": {runs}}}}}"),
                4,
            ),
        ] {
            streams_as_read_whole(&text, traces);
        }
        // As deep as the search looks: the list eleven objects down, an ATIF
        // trajectory twelve down, each object with a member before and after.
        let nest = |mut text: String, levels: usize| {
            for level in 0..levels {
                text = format!("{{\"a{level}\": 1, \"level{level}\": {text}, \"z\": [{level}]}}");
            }
            text
        };
        streams_as_read_whole(&nest(wrapped.clone(), 10), 1);
        streams_as_read_whole(&nest(TRAJECTORY.to_string(), 12), 1);
        // --select of keys and indexes, ending at a list, runs or an object (searched as
        // a document is), or the empty path: the same lists and runs, and with --format
        // the list's own and another.
        for (text, path, traces) in [
            (&wrapped, "data.messages", 1),
            (&wrapped, "/data/messages", 1),
            (&nested, "data.runs", 2),
            (&object, "messages", 1),
            (&runs, "runs[1].messages", 1),
            (&runs, "/runs/2/messages", 1),
            (&runs, "runs[0]", 1),
            (&nested, "data", 2),
            (&nested, "data.runs[1]", 1),
            (&wrapped, "data", 1),
            (&runs, "$", 3),
            (&object, "", 1),
            (&chat, "$", 1),
        ] {
            for format in [None, Some(Format::OpenAi), Some(Format::Anthropic)] {
                let select = InputOptions {
                    format,
                    select: Some(Selector::parse(path).unwrap()),
                };
                streams_as_read_whole_with(text, traces, &select);
            }
        }
        // --format: the list's own, and another one, which is said before any record.
        for format in [Format::OpenAi, Format::Anthropic] {
            let forced = InputOptions {
                format: Some(format),
                select: None,
            };
            streams_as_read_whole_with(&object, 1, &forced);
            streams_as_read_whole_with(&runs, 3, &forced);
        }
        // A Gemini CLI session.
        let gemini = r#"{
  "sessionId": "g-1", "projectHash": "p", "startTime": "t",
  "messages": [
    {"id": "m0", "timestamp": "t0", "type": "user", "content": "go"},
    {"id": "m1", "timestamp": "t1", "type": "gemini", "content": "", "toolCalls": [{"id": "c1", "name": "create", "args": {"request_id": "r-1"}, "status": "success", "timestamp": "t2", "result": [{"functionResponse": {"id": "c1", "name": "create", "response": {"output": "ok"}}}]}]},
    {"id": "m2", "timestamp": "t3", "type": "gemini", "content": "", "toolCalls": [{"id": "c2", "name": "create", "args": {}, "status": "executing", "timestamp": "t4"}]},
    {"id": "m3", "timestamp": "t5", "type": "info", "content": "note"}
  ],
  "lastUpdated": "t9"
}"#;
        streams_as_read_whole(gemini, 1);
        // An ATIF trajectory: results by id and by position, a call never answered.
        let atif = r#"{"schema_version": "ATIF-v1.6", "session_id": "s-1", "agent": {"name": "a"}, "steps": [
  {"step_id": 1, "source": "user", "message": "go"},
  {"step_id": 2, "source": "agent", "message": "", "tool_calls": [{"tool_call_id": "c1", "function_name": "create", "arguments": {"request_id": "r-1"}}, {"tool_call_id": "c2", "function_name": "lookup", "arguments": "{}"}], "observation": {"results": [{"content": "{\"id\": 1}"}]}},
  {"step_id": 3, "source": "agent", "message": "done", "observation": {"results": [{"source_call_id": "c2", "content": "late"}, {"content": "feedback"}]}},
  {"step_id": 4, "source": "system"}
]}"#;
        streams_as_read_whole(atif, 1);
        // A Claude Code export of two sessions, one with a sidechain; and one long
        // enough to be read through first.
        let envelopes = |log: String| -> Vec<String> {
            log.lines()
                .filter(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
                .map(String::from)
                .collect()
        };
        let export = format!("{{\"loglines\": {}}}", array(&envelopes(claude_code_log())));
        streams_as_read_whole(&export, 4);
        let mut long = String::new();
        for session in 0..6 {
            long += &claude_code_log()
                .replace("\"s1\"", &format!("\"s1-{session}\""))
                .replace("\"s2\"", "\"s1-0\"");
        }
        let export = format!("{{\"loglines\": {}}}", array(&envelopes(long)));
        assert!(export.len() > 4 * 2048);
        streams_as_read_whole(&export, 18);
        // A Codex rollout and Responses items held in a document.
        let codex = [
            r#"{"timestamp": "t", "type": "session_meta", "payload": {"id": "r1"}}"#,
            r#"{"timestamp": "t", "type": "response_item", "payload": {"type": "local_shell_call", "call_id": "l1", "status": "completed", "action": {"command": ["ls"]}}}"#,
            r#"{"timestamp": "t", "type": "response_item", "payload": {"type": "function_call", "name": "create", "call_id": "f1", "arguments": "{}"}}"#,
            r#"{"timestamp": "t", "type": "response_item", "payload": {"type": "local_shell_call_output", "call_id": "l1", "output": "a"}}"#,
        ]
        .map(String::from);
        streams_as_read_whole(&format!("{{\"rollout\": {}}}", array(&codex)), 1);
        let responses = [
            r#"{"role": "user", "content": "go"}"#,
            r#"{"type": "function_call", "call_id": "f1", "name": "create", "arguments": "{}"}"#,
            r#"{"type": "web_search_call", "id": "w1", "status": "completed"}"#,
            r#"{"type": "function_call_output", "call_id": "f1", "output": "ok"}"#,
        ]
        .map(String::from);
        streams_as_read_whole(&array(&responses), 1);
        // Native records in an array.
        let native = array(&[
            r#"{"kind": "call", "tool": "create"}"#.to_string(),
            "3".to_string(),
            r#"{"kind": "result", "tool": "create", "status": "ok"}"#.to_string(),
        ]);
        streams_as_read_whole(&native, 1);
    }

    #[test]
    fn opentelemetry_exports_stream_as_they_read_whole() {
        let span = |trace: u8, span: u8, start: u64, tool: &str| {
            format!(
                r#"{{"traceId": "{trace:032x}", "spanId": "{span:016x}", "startTimeUnixNano": "{start}", "attributes": [{{"key": "gen_ai.tool.name", "value": {{"stringValue": "{tool}"}}}}, {{"key": "gen_ai.tool.call.arguments", "value": {{"stringValue": "{{\"request_id\": \"r-{trace}\"}}"}}}}]}}"#
            )
        };
        let resource = |spans: &[String]| {
            format!(
                r#"{{"resource": {{"attributes": [{{"key": "service.name", "value": {{"stringValue": "agent"}}}}]}}, "scopeSpans": [{{"spans": [{}]}}]}}"#,
                spans.join(", ")
            )
        };
        // Three traces over two batches, out of start order, one span that starts
        // with another, and one that is no object.
        let first = resource(&[span(1, 1, 30, "create"), span(2, 2, 10, "create")]);
        let second = resource(&[
            span(1, 3, 40, "lookup"),
            span(3, 4, 10, "create"),
            "7".into(),
        ]);
        let document = format!("{{\"resourceSpans\": [\n{first},\n{second}\n]}}\n");
        streams_as_read_whole(&document, 3);
        let lines =
            format!("{{\"resourceSpans\": [{first}]}}\n{{\"resourceSpans\": [{second}]}}\n");
        streams_as_read_whole(&lines, 3);
        // One trace: its records name none.
        let one = format!(
            "{{\"resourceSpans\": [{}]}}",
            resource(&[span(1, 1, 30, "create")])
        );
        streams_as_read_whole(&one, 1);
    }

    #[test]
    fn an_mcp_log_of_broken_lines_streams_as_it_reads_whole() {
        // Found by fuzzing (stream_whole): lines that are not JSON, not UTF-8 or cut
        // short among requests and replies, some read from their text, some as
        // documents; both readings give the same records and problems.
        let bytes = include_bytes!("../../tests/fixtures/mcp_broken_lines.jsonl");
        let options = InputOptions {
            format: Some(Format::Mcp),
            select: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, bytes).unwrap();
        let streamed = everything(TraceInput::open(&path, &options, Some(1 << 16)).unwrap());
        let whole = everything(TraceInput::from_bytes(bytes, &options, Some(1 << 16)));
        assert_eq!(streamed, whole);
        assert_eq!(streamed.0.len(), 62, "{:#?}", streamed.0);
        assert!(streamed.0.iter().any(|item| item.starts_with("record")));
    }

    /// A JSON value of transcripts (chats, runs, OpenTelemetry exports, ATIF
    /// trajectories, a ToolBench answer and tree) and other members, `depth` levels of
    /// objects and arrays at most, with keys from a few (in any order, so that members
    /// holding transcripts come out of key order too).
    fn generated(c: &mut Choices, depth: u64) -> String {
        let chat = array(&chat_messages());
        let export = r#"{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": "b7ad6b7169203331", "startTimeUnixNano": "5", "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "create"}}, {"key": "gen_ai.tool.call.arguments", "value": {"stringValue": "{}"}}]}]}]}]}"#;
        let answer = include_str!(
            "../../tests/fixtures/realdata/toolbench/G1_answer__10_ChatGPT_DFS_woFilter_w2.json"
        );
        let leaf = |c: &mut Choices| match c.below(12) {
            0 | 1 => chat.clone(),
            2 => format!("{{\"id\": \"r{}\", \"messages\": {chat}}}", c.below(100)),
            3 => export.to_string(),
            4 => format!("\"text {}\"", c.below(10)),
            5 => c.below(1000).to_string(),
            6 => "[]".to_string(),
            7 => "{}".to_string(),
            8 => TRAJECTORY.to_string(),
            9 => answer.trim().to_string(),
            10 => r#"{"node_type": "Action", "description": "", "children": []}"#.to_string(),
            _ => "null".to_string(),
        };
        if depth == 0 {
            return leaf(c);
        }
        match c.below(6) {
            0..=2 => {
                let mut members = Vec::new();
                let mut keys = vec!["a", "b", "id", "messages", "runs", "data", "z", "run_id"];
                for _ in 0..1 + c.below(4) {
                    let key = keys.remove(c.below(keys.len() as u64) as usize);
                    members.push(format!("\"{key}\": {}", generated(c, depth - 1)));
                }
                format!("{{{}}}", members.join(", "))
            }
            3 => {
                let elements: Vec<String> = (0..1 + c.below(3))
                    .map(|_| generated(c, depth - 1))
                    .collect();
                format!("[{}]", elements.join(",\n "))
            }
            _ => leaf(c),
        }
    }

    #[test]
    fn generated_documents_and_paths_stream_as_they_read_whole() {
        const PATHS: [&str; 12] = [
            "a",
            "a.b",
            "a[*]",
            "[*]",
            "[0]",
            "data.runs",
            "a[0].messages",
            "b[*].messages",
            "$",
            "runs[*].messages",
            "/a/b",
            "data[*]",
        ];
        let (mut cases, mut streamed) = (0, 0);
        for seed in 0..600 {
            let mut c = Choices(seed);
            let depth = 1 + c.below(5);
            let text = generated(&mut c, depth);
            let select = match c.below(3) {
                0 => Some(Selector::parse(c.pick::<&str>(&PATHS)).unwrap()),
                _ => None,
            };
            let format = match c.below(6) {
                0 => Some(Format::OpenAi),
                1 => Some(Format::Otel),
                _ => None,
            };
            let options = InputOptions { format, select };
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("doc.json");
            std::fs::write(&path, &text).unwrap();
            let input = TraceInput::open(&path, &options, None).unwrap();
            let stream = matches!(input.body, Body::Stream(_));
            let whole = TraceInput::from_bytes(text.as_bytes(), &options, None);
            // A file that holds nothing says so; bytes handed over do not.
            let mut read = everything(input);
            read.0.retain(|item| !item.starts_with("problem Empty"));
            let whole = everything(whole);
            assert_eq!(read, whole, "seed {seed}, {options:?}:\n{text}");
            // Of the documents (not native records) that hold a transcript.
            let transcript = whole.0.iter().any(|item| item.starts_with("record"));
            if transcript && !whole.1.starts_with("native") {
                cases += 1;
                streamed += usize::from(stream);
            }
        }
        // Most of them stream; the others are read whole for what they hold: a
        // ToolBench answer or tree, an OpenTelemetry export alone below the top level
        // or one `--select` leads to, an array of exports and other transcripts.
        assert!(streamed * 5 > cases * 3, "{streamed} of {cases} streamed");
    }

    #[test]
    fn documents_larger_than_the_read_buffer_stream_as_they_read_whole() {
        // Runs of many sizes, and numbers between them, so that elements and numbers
        // straddle the ends of the 64 KiB the first pass scans elements in place from.
        let chat = chat_messages().join(",");
        let mut elements = Vec::new();
        for i in 0..400 {
            let pad = "x".repeat(i * 37 % 1500);
            elements.push(format!(
                "{{\"id\": \"run-{i}\", \"note\": \"{pad}\", \"messages\": [{chat}]}}"
            ));
            elements.push(format!("{}", 10_u64.pow((i % 12) as u32) + i as u64));
        }
        let text = format!("[{}]\n", elements.join(",\n "));
        assert!(text.len() > 4 << 16);
        streams_as_read_whole(&text, 400);
        // Read as plain runs with the format given too.
        let openai = InputOptions {
            format: Some(Format::OpenAi),
            select: None,
        };
        streams_as_read_whole_with(&text, 400, &openai);
        // Plain runs further down, in an object.
        let nested = format!(
            "{{\"id\": 1, \"data\": {{\"runs\": {}}}}}\n",
            text.trim_end()
        );
        streams_as_read_whole(&nested, 400);
        streams_as_read_whole_with(&nested, 400, &openai);
    }

    #[test]
    fn minified_documents_stream_as_they_read_whole() {
        let chat = chat_messages().join(",");
        // On a line of its own: a document per line, of one line.
        streams_as_read_whole(&format!("{{\"id\": \"r\", \"messages\": [{chat}]}}\n"), 1);
        let runs: Vec<String> = (0..3)
            .map(|i| format!("{{\"id\": {i}, \"messages\": [{chat}]}}"))
            .collect();
        streams_as_read_whole(&format!("\n\n{{\"runs\": [{}]}}", runs.join(",")), 3);
        streams_as_read_whole(&format!("[{}]\n", runs.join(",")), 3);
        // Two lines: each a document, read one line at a time.
        streams_as_read_whole(&format!("[{}]\n[{}]\n", runs[0], runs[1]), 2);
    }

    /// Every `*.json` file under `dir`, in name order.
    fn json_files(dir: &std::path::Path, into: &mut Vec<std::path::PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                json_files(&path, into);
            } else if path.extension().is_some_and(|e| e == "json") {
                into.push(path);
            }
        }
    }

    /// How many traces reading `text` whole finds.
    fn traces_read_whole(text: &str) -> usize {
        TraceInput::from_bytes(text.as_bytes(), &InputOptions::default(), None).traces()
    }

    #[test]
    fn documents_one_per_line_stream_as_they_read_whole() {
        // Every document of the repository on a line of its own (in every format, an
        // OpenTelemetry export and ToolBench trees among them), in order, and in
        // another order with some twice.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut paths = Vec::new();
        json_files(&root.join("traces"), &mut paths);
        json_files(&root.join("tests/fixtures"), &mut paths);
        let mut lines: Vec<String> = paths
            .iter()
            .filter_map(|path| {
                let value: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(path).unwrap()).ok()?;
                Some(value.to_string())
            })
            .collect();
        assert!(lines.len() > 40, "{} documents", lines.len());
        let text = lines.join("\n") + "\n";
        let traces = traces_read_whole(&text);
        assert!(traces > 60, "{traces} traces");
        streams_as_read_whole(&text, traces);
        let half = lines.len() / 2;
        lines.rotate_left(half);
        let text = format!("{}\n{}", lines.join("\n"), lines[..9].join("\n"));
        streams_as_read_whole(&text, traces_read_whole(&text));

        // Lines that hold no transcript before and after lines that do (bad lines once
        // one does), lines that are not JSON, an empty transcript, keys twice, an
        // OpenTelemetry export among runs, calls never answered, blank lines.
        let chat = chat_messages().join(",");
        let run = |id: &str| format!("{{\"id\": \"{id}\", \"messages\": [{chat}]}}");
        // (A first line that is an array makes the file documents per line; an object
        // that holds no transcript would make it native records.)
        let messy = [
            "[1, 2]".to_string(),
            "not json".into(),
            "{\"a\": 1}".into(),
            "[]".into(),
            "{\"b\": {\"c\": [1, 2]}}".into(),
            run("r1"),
            String::new(),
            "{\"a\": 1, \"a\": 2}".into(),
            EXPORT.into(),
            format!("[{chat}]"),
            r#"{"messages": [{"role": "user", "content": "hi", "content": "twice"}]}"#.into(),
            "{\"d\": true}".into(),
            run("r2"),
            "[1, 2".into(),
        ]
        .join("\n");
        streams_as_read_whole(&messy, 4);
        // No line holds a transcript: the file is in no format, said of the first that
        // is JSON, after the line before it that is not.
        streams_as_read_whole("not json\n[1, 2]\n{\"a\": 1}\n{\"b\": 2}\n", 0);
    }

    #[test]
    fn documents_that_stream_only_whole_are_read_whole() {
        let chat = array(&chat_messages());
        for text in [
            // An OpenTelemetry export below the top level, the one transcript (read
            // whole by its adapter).
            format!("{{\"data\": {{\"n\": 1, \"export\": {EXPORT}}}}}"),
            // A ToolBench answer, whose lists decide whether its tree is searched.
            format!(
                "{{\"answer_generation\": {{\"train_messages\": [{chat}]}}, \"messages\": {chat}}}"
            ),
            // A transcript further down than the search looks (it finds nothing).
            (0..12).fold(format!("{{\"messages\": {chat}}}"), |text, level| {
                format!("{{\"level{level}\": {text}}}")
            }),
            // A key twice.
            format!("{{\"id\": 1, \"messages\": {chat}, \"id\": 2}}"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("doc.json");
            std::fs::write(&path, &text).unwrap();
            let input = TraceInput::open(&path, &InputOptions::default(), None).unwrap();
            assert!(input.reading().is_some(), "read whole: {text}");
        }
    }

    #[test]
    fn an_invalid_document_is_read_whole_and_reported_once() {
        let text = "[{\"id\": \"r1\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]},\n {\"id\": \"r2\", \"messages\": [}]";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.json");
        std::fs::write(&path, text).unwrap();
        let input = TraceInput::open(&path, &InputOptions::default(), None).unwrap();
        assert!(input.reading().is_some(), "read whole");
        let (seen, _) = everything(input);
        assert_eq!(seen.len(), 1, "{seen:?}");
        assert!(seen[0].contains("not valid JSON"), "{seen:?}");
    }

    #[test]
    fn a_document_nested_to_the_limit_streams_as_it_reads_whole() {
        // serde_json's limit is 127 containers in all: a value the first pass checks
        // on its own (an element, a member, a large run's message or member) counts
        // the containers it is inside. Found when a file of 128 levels streamed from a
        // path and was invalid read from memory.
        let chat = chat_messages().join(", ");
        let run = format!("{{\"id\": \"r\", \"messages\": [{chat}]}}");
        // Runs larger than the first pass holds, read a piece at a time.
        let messages = [chat.as_str(); 12].join(", ");
        let large = format!("{{\"id\": \"big\", \"messages\": [{messages}, DEEP]}}");
        let large_member =
            format!("{{\"id\": \"big\", \"messages\": [{messages}], \"meta\": DEEP}}");
        // Each shape with `DEEP` where the deep value goes, and a `--select` path.
        let shapes = [
            (format!("[{run}, DEEP]\n"), None),
            (format!("{{\"runs\": [{run}, DEEP]}}"), None),
            (format!("{{\"runs\": [{run}], \"meta\": DEEP}}"), None),
            (
                format!("{{\"a\": {{\"b\": {{\"runs\": [{run}], \"x\": DEEP}}}}}}"),
                None,
            ),
            (format!("{{\"s1\": {run}, \"s2\": DEEP}}"), None),
            (format!("[{run}, {large}]"), None),
            (format!("[{run}, {large_member}]"), None),
            (format!("{large}\n{run}\n"), None),
            (
                format!("{{\"data\": {{\"x\": DEEP, \"runs\": [{run}, {run}]}}}}"),
                Some("data.runs[1]"),
            ),
            (
                format!("{{\"data\": {{\"runs\": [DEEP, {run}]}}}}"),
                Some("data.runs[1]"),
            ),
        ];
        for (shape, select) in &shapes {
            let options = InputOptions {
                format: None,
                select: select.map(|path| crate::trace::adapters::Selector::parse(path).unwrap()),
            };
            let mut invalid = Vec::new();
            for levels in 118..=128 {
                for deep in [
                    format!("{}{}", "[".repeat(levels), "]".repeat(levels)),
                    format!("{}1{}", "{\"d\": ".repeat(levels), "}".repeat(levels)),
                ] {
                    let text = shape.replace("DEEP", &deep);
                    let dir = tempfile::tempdir().unwrap();
                    let path = dir.path().join("deep.json");
                    std::fs::write(&path, &text).unwrap();
                    let streamed = everything(TraceInput::open(&path, &options, None).unwrap());
                    let whole = everything(TraceInput::from_bytes(text.as_bytes(), &options, None));
                    assert_eq!(streamed, whole, "{levels} levels: {shape}");
                    invalid.push(whole.0.iter().any(|item| item.contains("recursion limit")));
                }
            }
            // Both sides of the limit were read.
            assert!(
                invalid.contains(&true) && invalid.contains(&false),
                "{invalid:?}: {shape}"
            );
        }
    }

    #[test]
    fn a_long_first_line_streams_as_it_reads_whole() {
        // Over the 1 MiB detection holds, a line that is an array whose first element
        // is no JSON-RPC message is taken for a document per line before it is read
        // through; a line that then turns out not to be valid JSON is decided again.
        let chat = chat_messages().join(",");
        let runs: Vec<String> = (0..2400)
            .map(|i| format!("{{\"id\":\"r{i}\",\"messages\":[{chat}]}}"))
            .collect();
        let (half, rest) = runs.split_at(1200);
        let (half, rest) = (half.join(","), rest.join(","));
        let array = format!("[{half},{rest}]");
        assert!(array.len() > 1 << 20);
        let rpc = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"create","arguments":{}}}"#;
        let deep = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
        let texts = [
            array.clone(),
            format!("{array}\n"),
            format!("\u{feff}{array}\n"),
            format!("{array}\n{}\n", runs[0]),
            format!("{array}\n{array}\n"),
            array[..array.len() - 10].to_string(),
            format!("{}\n{}\n", &array[..array.len() - 10], runs[0]),
            format!("[{half},1e400,{rest}]"),
            format!("[{half},\"\\ud800\",{rest}]"),
            format!("[{half},{rest},]"),
            format!("{array} x\n{}\n", runs[1]),
            format!("[{half},{},{rest}]", deep(125)),
            format!("[{half},{},{rest}]", deep(126)),
            format!("[{half},{rpc},{rest}]"),
            format!("[{rpc},{half}]\n{rpc}\n"),
            format!("[1,{half}]"),
            // Objects: a document if valid, holding a transcript, with no member that
            // may make it an element.
            format!("{{\"runs\":{array}}}"),
            format!("{{\"runs\":{array}}}\n{}\n", runs[0]),
            format!("{{\"runs\":{array},\"n\":1e400}}"),
            format!("{{\"runs\":{array},\"n\":1}} x"),
            format!("{{\"runs\":[{half},{},{rest}]}}", deep(125)),
            format!("{{\"runs\":[{half},{},{rest}]}}", deep(124)),
            format!("{{\"runs\":{array},\"kind\":\"call\",\"tool\":\"t\"}}"),
            format!("{{\"runs\":{array},\"message\":[{rpc},{rpc}]}}"),
            format!("{{\"runs\":{array},\"role\":\"user\",\"content\":\"hi\"}}"),
            format!("{{\"type\":\"x\",\"runs\":{array}}}"),
            format!("{{\"big\":{array}}}"),
            format!("{{\"a\":[{half}],\"b\":[{rest}]}}"),
            format!("{{\"n\":[{}]}}", vec!["1"; 600_000].join(",")),
        ];
        for text in &texts {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("long.json");
            std::fs::write(&path, text).unwrap();
            let options = InputOptions::default();
            let streamed = everything(TraceInput::open(&path, &options, None).unwrap());
            let whole = everything(TraceInput::from_bytes(text.as_bytes(), &options, None));
            let start = &text[text.len() - 100..];
            assert_eq!(streamed, whole, "...{start}");
        }
    }

    #[test]
    fn reading_stops_at_the_first_error_of_the_visitor() {
        let text = b"{\"a\":1}\n{\"a\":2}\n{\"a\":3}\n";
        let input = TraceInput::native(&text[..], None);
        let mut lines = Vec::new();
        let stopped = input.try_for_each(|item| {
            if let Item::Record(record) = item {
                lines.push(record.loc.line);
                if record.loc.line == 2 {
                    return Err("enough");
                }
            }
            Ok(())
        });
        assert_eq!(stopped, Err("enough"));
        assert_eq!(lines, [1, 2]);
    }
}
