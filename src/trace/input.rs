//! One way to read a trace input of any format: open it, learn what it holds, and go
//! through its records and problems in input order.
//!
//! [`TraceInput::open`] recognizes what a file holds ([`adapters::open`]). Native JSONL
//! stays on the streaming path, decoded line by line into records that borrow the
//! line, so a file of any size is read in bounded memory; other formats are read whole
//! by their adapter. Either way [`TraceInput::for_each`] hands out one [`Item`] at a
//! time. Every consumer of traces (checking, coverage, shrinking, `convert`,
//! `lint --traces`, `graph --highlight`) reads them through this type.
//!
//! Not every input is a regular file. `-` is standard input; a named pipe, a process
//! substitution (`<(…)`) or `/dev/stdin` fed by a pipe is a stream, read to its end
//! before its format is detected ([`read_input`]). A pipe is opened without waiting
//! for a writer, so a named pipe nobody writes to reads as empty instead of blocking
//! the run. Devices (`/dev/zero`) and sockets are refused: they may never end. An
//! input that holds nothing at all is a problem ([`ProblemKind::Empty`]), never a
//! silent pass.

use std::io::{self, BufRead, BufReader, IsTerminal, Read};
use std::path::Path;
use std::sync::Arc;

use super::adapters::{self, Detected, Entry, Format, InputOptions, Layout, Opened, Problem};
use super::adapters::{ProblemKind, Reading};
use super::native;
use super::reader::{DEFAULT_MAX_LINE_BYTES, LineReader};
use super::record::Record;

/// An opened trace input, ready to be read once.
pub struct TraceInput<'a> {
    detected: Detected,
    body: Body<'a>,
    /// Whether an input with nothing in it is a problem: for files and streams a user
    /// named, not for text a program generated (an empty trace is a valid word).
    report_empty: bool,
    /// The whole text of a stream (standard input, a pipe), which cannot be read again:
    /// reports quote the records they point to from it ([`TraceInput::stream_text`]).
    stream: Option<SharedBytes>,
}

/// Bytes read once and shared between the reader and whoever quotes them.
#[derive(Debug, Clone)]
pub struct SharedBytes(Arc<Vec<u8>>);

impl AsRef<[u8]> for SharedBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

enum Body<'a> {
    /// Native records, one per line, decoded as they are read.
    Lines {
        reader: LineReader<Box<dyn BufRead + 'a>>,
        max_line_bytes: usize,
    },
    /// What an adapter read from the whole input.
    Read(Reading),
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
            let bytes = SharedBytes(Arc::new(read_input(path)?));
            let mut input = TraceInput::from_vec(bytes.clone(), options, max);
            input.stream = Some(bytes);
            input
        } else {
            match adapters::open(path, options, max)? {
                Opened::Native(detected) => {
                    let handle = std::fs::File::open(path)?;
                    TraceInput::lines(detected, BufReader::with_capacity(1 << 16, handle), max)
                }
                Opened::Read(reading) => TraceInput::read(reading),
            }
        };
        input.report_empty = true;
        Ok(input)
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
            Opened::Native(detected) => TraceInput::lines(detected, bytes, max),
            Opened::Read(reading) => TraceInput::read(reading),
        }
    }

    /// Reads `bytes`, the whole content of a stream, as [`TraceInput::from_bytes`] does.
    fn from_vec(bytes: SharedBytes, options: &InputOptions, max: usize) -> TraceInput<'static> {
        match adapters::open_bytes(bytes.as_ref(), options, max) {
            Opened::Native(detected) => TraceInput::lines(detected, io::Cursor::new(bytes), max),
            Opened::Read(reading) => TraceInput::read(reading),
        }
    }

    /// Streams native JSONL from `input`, without detecting its format (stdin, or
    /// text known to be native records).
    pub fn native<R: BufRead + 'a>(input: R, max_line_bytes: Option<usize>) -> TraceInput<'a> {
        let max = max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
        TraceInput::lines(native_detected(), input, max)
    }

    /// What an adapter has already read, as an input.
    pub fn read(reading: Reading) -> TraceInput<'a> {
        TraceInput {
            detected: reading.detected.clone(),
            body: Body::Read(reading),
            report_empty: false,
            stream: None,
        }
    }

    fn lines<R: BufRead + 'a>(detected: Detected, input: R, max: usize) -> TraceInput<'a> {
        TraceInput {
            detected,
            body: Body::Lines {
                reader: LineReader::with_max_line_bytes(Box::new(input), max),
                max_line_bytes: max,
            },
            report_empty: false,
            stream: None,
        }
    }

    /// The whole text of an input that is a stream, which cannot be read again; `None`
    /// for a file.
    pub fn stream_text(&self) -> Option<SharedBytes> {
        self.stream.clone()
    }

    /// What was recognized in the input.
    pub fn detected(&self) -> &Detected {
        &self.detected
    }

    /// Distinct traces an adapter found; with more than one, every record has a
    /// `trace` field naming its trace. Native input is one trace unless split.
    pub fn traces(&self) -> usize {
        match &self.body {
            Body::Lines { .. } => 1,
            Body::Read(reading) => reading.traces,
        }
    }

    /// What the adapter read, for a consumer that needs the input's structure
    /// (`shrink` cuts elements out of it); `None` for streamed native JSONL.
    pub fn reading(&self) -> Option<&Reading> {
        match &self.body {
            Body::Lines { .. } => None,
            Body::Read(reading) => Some(reading),
        }
    }

    /// What the adapter read, taken out of the input; `None` for native JSONL, which
    /// is streamed rather than read whole.
    pub fn into_reading(self) -> Option<Reading> {
        match self.body {
            Body::Lines { .. } => None,
            Body::Read(reading) => Some(reading),
        }
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
        let report_empty = self.report_empty;
        let mut seen = false;
        self.visit_all(|item| {
            seen = true;
            visit(item)
        })?;
        if seen || !report_empty {
            return Ok(());
        }
        visit(Item::Problem(Problem {
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

    fn visit_all<E>(self, mut visit: impl FnMut(Item<'_>) -> Result<(), E>) -> Result<(), E> {
        match self.body {
            Body::Lines {
                mut reader,
                max_line_bytes,
            } => loop {
                let line = match reader.next_line() {
                    Ok(Some(line)) => line,
                    Ok(None) => return Ok(()),
                    Err(err) => return visit(Item::Stopped(err)),
                };
                let loc = line.location();
                match native::decode(line, max_line_bytes) {
                    Ok(record) => visit(Item::Record(record))?,
                    Err(err) => visit(Item::Problem(Problem {
                        kind: ProblemKind::Malformed,
                        loc,
                        message: err.to_string(),
                        hint: None,
                    }))?,
                }
            },
            Body::Read(reading) => {
                for entry in reading.entries {
                    match entry {
                        Entry::Record(record) => visit(Item::Record(record))?,
                        Entry::Problem(problem) => visit(Item::Problem(problem))?,
                    }
                }
                Ok(())
            }
        }
    }
}

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
    let mut bytes = Vec::new();
    if is_stdin(path) {
        let stdin = io::stdin();
        if stdin.is_terminal() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "standard input is a terminal; pipe a trace into it",
            ));
        }
        stdin.lock().read_to_end(&mut bytes)?;
        return Ok(bytes);
    }
    let meta = std::fs::metadata(path)?;
    if meta.is_file() {
        return std::fs::read(path);
    }
    stream_check(&meta)?;
    open_pipe(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
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
