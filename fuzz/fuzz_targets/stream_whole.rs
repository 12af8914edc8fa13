//! Streamed and whole readings agree: the same bytes read as a regular file (streamed:
//! a document in two passes, a file of lines as it comes), as a stream (a pipe: read as
//! it comes, or copied to a temporary file) and from memory (read whole)
//! give the same items in the same order (a record's fields compared as an object,
//! however the adapter holds them), and what was recognized at the end is the
//! same. The first byte picks the format, as in `trace_input`, and a `--select` path
//! (none for the bytes below the formats' count, as a seed starts).
#![no_main]

use std::collections::BTreeMap;
use std::io::Write as _;

use libfuzzer_sys::fuzz_target;
use tracegate::trace::adapters::{Format, InputOptions, ProblemKind, Selector};
use tracegate::trace::input::{Item, TraceInput};

/// The `--select` paths a second choice in the first byte picks from (after none):
/// keys only, keys then `[*]`, an object, indexes on the way or at the end, each
/// member of an object, the whole document, each run of a document's runs or their
/// lists (`messages`, an ATIF trajectory's `steps`), or a list keys lead to in each run.
const SELECT: [&str; 15] = [
    "data.messages",
    "messages",
    "data.runs",
    "runs[*].messages",
    "data",
    "runs[1]",
    "[0].messages",
    "data[0].runs[*]",
    "data[*].messages",
    "$",
    "runs[*]",
    "[*].messages",
    "[*].data.messages",
    "[*]",
    "[*].steps",
];

/// Every item of `input` as text, and what was recognized once it was read.
fn read(input: TraceInput<'_>) -> (Vec<String>, String) {
    let at_end = input.detected_at_end();
    let mut items = Vec::new();
    input.for_each(|item| {
        items.push(match item {
            Item::Record(record) => format!(
                "record at {:?}: kind {:?}, tool {:?}, call id {:?}, status {:?}, fields {:?}, inherited args {:?}",
                record.loc,
                record.kind,
                record.tool,
                record.call_id,
                record.status,
                // In name order: an adapter may give the same fields as raw slices
                // of a line, as text it built or as a value it built, which the
                // checker reads alike.
                record.fields.to_map().into_iter().collect::<BTreeMap<_, _>>(),
                record.inherited_args
            ),
            // A file that holds nothing says so; bytes handed over do not.
            Item::Problem(problem) if problem.kind == ProblemKind::Empty => return,
            Item::Problem(problem) => format!("{problem:?}"),
            Item::Stopped(err) => format!("stopped: {err}"),
            // Only a stream knows where a trace ends.
            Item::TraceEnd(_) => return,
        })
    });
    (items, format!("{:?}", at_end.get()))
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, bytes)) = data.split_first() else {
        return;
    };
    let choices = Format::ALL.len() + 1;
    let format = Format::ALL.get(usize::from(pick) % choices).copied();
    let select = (usize::from(pick) / choices % (SELECT.len() + 1))
        .checked_sub(1)
        .map(|i| Selector::parse(SELECT[i]).expect("the paths parse"));
    let options = InputOptions { format, select };
    let whole = read(TraceInput::from_bytes(bytes, &options, Some(1 << 16)));
    let mut file = tempfile::NamedTempFile::new().expect("a temporary file");
    file.write_all(bytes).expect("the bytes are written");
    file.flush().expect("the bytes are written");
    let streamed = match TraceInput::open(file.path(), &options, Some(1 << 16)) {
        Ok(input) => read(input),
        Err(err) => panic!("a regular file opens: {err}"),
    };
    assert_eq!(
        streamed, whole,
        "streamed (left) and whole (right) readings differ"
    );
    // As a pipe gives them, a few bytes at a time.
    let piped = match TraceInput::open_reader(
        Box::new(Trickle(bytes.to_vec().into())),
        &options,
        Some(1 << 16),
    ) {
        Ok(input) => read(input),
        Err(err) => panic!("a stream in memory opens: {err}"),
    };
    assert_eq!(
        piped, whole,
        "piped (left) and whole (right) readings differ"
    );
});

/// A reader that gives at most 1,000 bytes a read, as a pipe may.
struct Trickle(std::collections::VecDeque<u8>);

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(1000);
        std::io::Read::read(&mut self.0, &mut buf[..n])
    }
}
