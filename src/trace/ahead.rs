//! Native JSONL decoded on a second thread, ahead of the thread that checks it.
//!
//! Reading and decoding lines is a third of what checking native records costs, and
//! it depends on nothing the checker holds. So when a core is spare, a second thread
//! reads the lines of a file in batches, decodes each batch into records that borrow
//! its text, and hands the batch on; the thread that checks takes the items in input
//! order, exactly as it would have decoded them, and gives the batch's buffer back to
//! be filled again. At most [`AHEAD`] batches wait, so memory stays bounded however
//! long the file; a batch holds whole lines, so one line longer than a batch makes it
//! that long, as the line reader's own buffer does.
//!
//! Only inputs that end are read this way (files, bytes in memory): a batch is handed
//! on when it is full, so on a live stream records would wait for the lines after them.

use std::io::{self, BufRead};
use std::ops::Range;
use std::sync::mpsc;

use super::input::{Item, line_item};
use super::native::{self, Spare};
use super::reader::{Line, LineContent, LineReader};

/// A batch is handed on once it holds this many lines, or [`BATCH_BYTES`] of text.
const BATCH_LINES: usize = 4096;

/// A batch is handed on once it holds this much text, or [`BATCH_LINES`] lines.
const BATCH_BYTES: usize = 1024 * 1024;

/// Batches decoded and not yet checked, at most.
const AHEAD: usize = 2;

/// Lines read from the input, their text in one buffer.
#[derive(Default)]
struct Block {
    text: String,
    lines: Vec<Kept>,
}

/// A line of a [`Block`]: a [`Line`] whose text is a range of the block's.
struct Kept {
    number: u64,
    offset: u64,
    len: u64,
    content: KeptContent,
}

enum KeptContent {
    Text(Range<usize>),
    InvalidUtf8 { valid_up_to: usize },
    TooLong,
}

impl Block {
    fn clear(&mut self) {
        self.text.clear();
        self.lines.clear();
    }

    fn is_full(&self) -> bool {
        self.lines.len() >= BATCH_LINES || self.text.len() >= BATCH_BYTES
    }

    fn keep(&mut self, line: Line<'_>) {
        let content = match line.content {
            LineContent::Text(text) => {
                let start = self.text.len();
                self.text.push_str(text);
                KeptContent::Text(start..self.text.len())
            }
            LineContent::InvalidUtf8 { valid_up_to } => KeptContent::InvalidUtf8 { valid_up_to },
            LineContent::TooLong => KeptContent::TooLong,
        };
        self.lines.push(Kept {
            number: line.number,
            offset: line.offset,
            len: line.len,
            content,
        });
    }

    /// Each line decoded, in order, reusing the lists in `spares`.
    fn items(&self, max_line_bytes: usize, mut spares: Vec<Spare>) -> Vec<Item<'_>> {
        self.lines
            .iter()
            .map(|kept| {
                if let Some(spare) = spares.pop() {
                    native::lend(spare);
                }
                let content = match &kept.content {
                    KeptContent::Text(range) => LineContent::Text(&self.text[range.clone()]),
                    &KeptContent::InvalidUtf8 { valid_up_to } => {
                        LineContent::InvalidUtf8 { valid_up_to }
                    }
                    KeptContent::TooLong => LineContent::TooLong,
                };
                let line = Line {
                    number: kept.number,
                    offset: kept.offset,
                    len: kept.len,
                    content,
                };
                line_item(line, max_line_bytes)
            })
            .collect()
    }
}

type Items<'a> = Vec<Item<'a>>;

self_cell::self_cell!(
    /// A block and its lines decoded: items that borrow the block's text.
    struct Batch {
        owner: Block,
        #[covariant]
        dependent: Items,
    }
);

impl Batch {
    /// The block of a batch the checking thread is done with, and the lists of members
    /// of its records, for the next lines decoded. The records are dropped here, on
    /// the thread that made them: freed on the other, every list would take the lock
    /// of this thread's allocator arena, and the two threads would contend for it.
    fn emptied(mut self) -> (Block, Vec<Spare>) {
        let mut spares = Vec::new();
        self.with_dependent_mut(|_, items| {
            for item in items.drain(..) {
                if let Item::Record(record) = item {
                    spares.extend(Spare::of(record.fields));
                }
            }
        });
        (self.into_owner(), spares)
    }
}

/// A batch the checking thread is done with, on its way back to be filled again.
enum Back {
    /// Its items still to be dropped.
    Batch(Batch),
    /// Emptied ([`Batch::emptied`]).
    Emptied((Block, Vec<Spare>)),
}

/// What the decoding thread hands on.
enum Sent {
    Batch(Batch),
    /// Reading failed after the batches before: nothing follows.
    Stopped(io::Error),
}

/// Hands every line of `reader` to `visit` as an item, in order, decoded on a second
/// thread; stops at the first error `visit` returns.
pub(super) fn visit<R, E>(
    reader: LineReader<R>,
    max_line_bytes: usize,
    mut visit: impl FnMut(&mut Item<'_>) -> Result<(), E>,
) -> Result<(), E>
where
    R: BufRead + Send,
{
    let (hand_on, batches) = mpsc::sync_channel(AHEAD);
    let (give_back, spare) = mpsc::channel();
    std::thread::scope(|scope| {
        scope.spawn(move || decode(reader, max_line_bytes, hand_on, spare));
        // Leaving early drops `batches`, which ends the decoding thread: this closure
        // must own it, or the scope would wait for that thread while it waits for room.
        let batches = batches;
        let mut next = batches.recv();
        while let Ok(sent) = next {
            let mut batch = match sent {
                Sent::Batch(batch) => batch,
                Sent::Stopped(err) => return visit(&mut Item::Stopped(err)),
            };
            batch.with_dependent_mut(|_, items| items.iter_mut().try_for_each(&mut visit))?;
            // Whichever thread would wait empties the batch for reuse: this one when
            // the next batch is not decoded yet, else the decoding thread. Sends fail
            // only once the decoding thread has ended.
            next = match batches.try_recv() {
                Ok(sent) => {
                    let _ = give_back.send(Back::Batch(batch));
                    Ok(sent)
                }
                Err(_) => {
                    let _ = give_back.send(Back::Emptied(batch.emptied()));
                    batches.recv()
                }
            };
        }
        Ok(())
    })
}

/// The decoding thread: reads `reader` into blocks (reusing those of the batches that
/// come back on `spare`) and hands each on decoded, until the input ends or nobody
/// takes them.
fn decode<R: BufRead>(
    mut reader: LineReader<R>,
    max_line_bytes: usize,
    hand_on: mpsc::SyncSender<Sent>,
    spare: mpsc::Receiver<Back>,
) {
    loop {
        let (mut block, spares) = match spare.try_recv() {
            Ok(Back::Batch(batch)) => batch.emptied(),
            Ok(Back::Emptied(emptied)) => emptied,
            Err(_) => Default::default(),
        };
        block.clear();
        let mut stopped = None;
        let mut ended = false;
        while !block.is_full() {
            match reader.next_line() {
                Ok(Some(line)) => block.keep(line),
                Ok(None) => {
                    ended = true;
                    break;
                }
                Err(err) => {
                    stopped = Some(err);
                    break;
                }
            }
        }
        if !block.lines.is_empty() {
            let batch = Batch::new(block, |block| block.items(max_line_bytes, spares));
            if hand_on.send(Sent::Batch(batch)).is_err() {
                return;
            }
        }
        if let Some(err) = stopped {
            let _ = hand_on.send(Sent::Stopped(err));
            return;
        }
        if ended {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use super::{BATCH_BYTES, BATCH_LINES};
    use crate::trace::input::TraceInput;

    /// Every item of `input`, as its debug form shows it.
    fn items(input: TraceInput<'_>) -> Vec<String> {
        let mut all = Vec::new();
        input.for_each(|item| all.push(format!("{item:?}")));
        all
    }

    /// The items of `bytes` read as native JSONL on one thread, and decoded ahead.
    fn both(bytes: &[u8], max: Option<usize>) -> (Vec<String>, Vec<String>) {
        (
            items(TraceInput::native(bytes, max)),
            items(TraceInput::native_ahead(bytes, max)),
        )
    }

    /// Lines of every kind: records, blank lines, broken JSON, a CRLF ending, a line
    /// that is not UTF-8, an escaped string (an owned value), a line longer than a
    /// batch, and, with `max` at 400,000 bytes, a line longer than that.
    fn mixed(lines: usize) -> Vec<u8> {
        let mut bytes = b"\xEF\xBB\xBF".to_vec();
        for i in 0..lines {
            let line: Vec<u8> = match i % 9 {
                0 => format!(r#"{{"kind":"call","tool":"t","call_id":"c{i}","args":{{"n":{i}}}}}"#)
                    .into(),
                1 => b"   ".to_vec(),
                2 => format!(r#"{{"kind":"result","tool":"t","call_id":"c{i}""#).into(),
                3 => format!("{{\"kind\":\"message\",\"n\":{i}}}\r").into(),
                4 => b"{\"tool\":\"\xff\"}".to_vec(),
                5 => format!(r#"{{"tool":"a\u00e9\n{i}","kind":"call"}}"#).into(),
                6 if i % 1000 == 6 => format!(
                    r#"{{"kind":"call","pad":"{}"}}"#,
                    "x".repeat(BATCH_BYTES + i)
                )
                .into(),
                7 if i % 2000 == 7 => format!(r#"{{"pad":"{}"}}"#, "y".repeat(500_000)).into(),
                _ => {
                    format!(r#"{{"kind":"result","tool":"t","status":"ok","output":[{i}]}}"#).into()
                }
            };
            bytes.extend_from_slice(&line);
            bytes.push(b'\n');
        }
        bytes.extend_from_slice(br#"{"kind":"call","tool":"last, without a newline"}"#);
        bytes
    }

    #[test]
    fn items_decoded_ahead_are_those_one_thread_reads_in_the_same_order() {
        let bytes = mixed(5 * BATCH_LINES + 17);
        let (one, ahead) = both(&bytes, Some(400_000));
        assert!(one.len() > 4 * BATCH_LINES, "{} items", one.len());
        for problem in ["Malformed", "not valid UTF-8", "over the limit"] {
            assert!(
                one.iter().any(|item| item.contains(problem)),
                "no {problem:?}"
            );
        }
        assert_eq!(one, ahead);
    }

    #[test]
    fn empty_and_one_line_inputs_read_alike() {
        for bytes in [
            &b""[..],
            b"\n\n",
            b"{}",
            b"{\"kind\":\"call\"}\n",
            b"\xEF\xBB\xBF",
        ] {
            let (one, ahead) = both(bytes, None);
            assert_eq!(one, ahead, "{bytes:?}");
        }
    }

    /// Reads `bytes`, then fails.
    struct Failing<'a>(&'a [u8]);

    impl Read for Failing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("the disk went away"));
            }
            let n = self.0.read(buf)?;
            Ok(n)
        }
    }

    #[test]
    fn a_read_that_fails_stops_both_after_the_same_items() {
        let bytes = mixed(3 * BATCH_LINES);
        // Part-way through a line, past the first batches.
        let mut newlines = bytes.iter().enumerate().filter(|&(_, &b)| b == b'\n');
        let (end, _) = newlines.nth(2 * BATCH_LINES).unwrap();
        let cut = &bytes[..end - 5];
        let reader = || BufReader::with_capacity(4096, Failing(cut));
        let one = items(TraceInput::native(reader(), None));
        let ahead = items(TraceInput::native_ahead(reader(), None));
        assert!(one.len() > BATCH_LINES);
        assert!(
            one.last().unwrap().contains("the disk went away"),
            "{:?}",
            one.last()
        );
        assert_eq!(one, ahead);
    }

    #[test]
    fn stopping_early_ends_the_decoding_thread() {
        // On a thread of its own, so that a decoding thread left waiting fails the test
        // instead of hanging it.
        let (done, stopped) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let bytes = mixed(20 * BATCH_LINES);
            let mut seen = 0;
            let stopped = TraceInput::native_ahead(&bytes[..], None).try_for_each(|_| {
                seen += 1;
                if seen == BATCH_LINES + 3 {
                    Err(seen)
                } else {
                    Ok(())
                }
            });
            done.send(stopped)
        });
        let stopped = stopped.recv_timeout(std::time::Duration::from_secs(60));
        assert_eq!(stopped, Ok(Err(BATCH_LINES + 3)), "the reading did not end");
    }

    #[test]
    fn only_inputs_that_end_are_decoded_ahead() {
        let options = Default::default();
        let bytes = mixed(10);
        assert!(TraceInput::from_bytes(&bytes, &options, None).decode_ahead());
        assert!(!TraceInput::native(&bytes[..], None).decode_ahead());
        let openai = br#"{"messages":[{"role":"user","content":"hi"}]}"#;
        assert!(!TraceInput::from_bytes(openai, &options, None).decode_ahead());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Any bytes, cut into lines of any length: the same items, in the same order.
        #[test]
        fn any_lines_read_alike(
            lines in proptest::collection::vec(
                proptest::collection::vec(
                    proptest::sample::select(vec![
                        &b"{"[..], b"}", b"\"kind\":", b"\"call\"", b"\"tool\":\"t\"", b",",
                        b"\xff", b"\r", b" ", b"\"\\u00e9\"", b"1e400", b"[", b"]",
                    ]),
                    0..12,
                ),
                0..3000,
            ),
            max in 8usize..64,
        ) {
            let mut bytes = Vec::new();
            for line in &lines {
                bytes.extend(line.concat());
                bytes.push(b'\n');
            }
            let (one, ahead) = both(&bytes, Some(max));
            proptest::prop_assert_eq!(one, ahead);
        }
    }
}
