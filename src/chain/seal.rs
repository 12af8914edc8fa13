//! Sealing: adds `prev` and `hash` to each record of a JSONL log, in canonical form.

use std::io::{self, BufRead, Write};

use sha2::block_api::compress256;

use super::batch::{Lines, pipeline};
use super::canonical::{CanonicalError, MemberText, Scratch, Written, name_key};
use super::{Digest, GENESIS, HASH, PREV};
use crate::trace::Location;

const QUOTED_PREV: &str = "\"prev\"";
const QUOTED_HASH: &str = "\"hash\"";

/// Why a line cannot be sealed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// A line that is JSON but not an object.
    #[error("line is not a JSON object")]
    NotAnObject,
    /// A line with no canonical form.
    #[error("{0}")]
    Canonical(#[from] CanonicalError),
    /// A line that cannot be read as text: not UTF-8, or over the length limit.
    #[error("{0}")]
    Unreadable(String),
    /// Sealing it again would hide the chain it already carries.
    #[error(
        "record already has a `{field}` member: it looks sealed (use `--append` to continue a sealed log)"
    )]
    AlreadySealed {
        /// `prev` or `hash`.
        field: &'static str,
    },
}

/// Seals records one at a time, each linked to the one before.
#[derive(Debug)]
pub struct Sealer {
    prev: Digest,
    /// `prev` in hex, as it goes into the next record.
    prev_digits: [u8; 64],
    records: u64,
    scratch: Scratch,
}

impl Default for Sealer {
    fn default() -> Self {
        Sealer::after(GENESIS)
    }
}

impl Sealer {
    /// A sealer for a new log: its first record's `prev` is [`GENESIS`].
    pub fn new() -> Sealer {
        Sealer::default()
    }

    /// A sealer that continues a log whose last hash is `head`.
    pub fn after(head: Digest) -> Sealer {
        let mut prev_digits = [0u8; 64];
        head.write_hex(&mut prev_digits);
        Sealer {
            prev: head,
            prev_digits,
            records: 0,
            scratch: Scratch::default(),
        }
    }

    /// The hash of the last record sealed (or the one it continues from).
    pub fn head(&self) -> Digest {
        self.prev
    }

    /// Records sealed by this sealer.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Seals one record, a JSON object: writes its sealed, canonical line (without a
    /// newline) to `out` and returns its hash.
    pub fn seal(&mut self, text: &str, out: &mut Vec<u8>) -> Result<Digest, SealError> {
        out.clear();
        let prepared = prepare(text, &mut self.scratch, out);
        if prepared.is_err() {
            out.clear();
        }
        Ok(self.link(prepared?, out))
    }

    /// Links a prepared record to the one before: finishes its hash and writes it and
    /// `prev` into the record's sealed line in `lines`.
    fn link(&mut self, prepared: Prepared, lines: &mut [u8]) -> Digest {
        let Prepared {
            prefix,
            hash_hex,
            prev_hex,
            end,
        } = prepared;
        // The hashed form goes on with `prev`'s digits and what follows them.
        lines[prev_hex..prev_hex + 64].copy_from_slice(&self.prev_digits);
        let hash = prefix.finish(&lines[prev_hex..end]);
        hash.write_hex(&mut self.prev_digits);
        lines[hash_hex..hash_hex + 64].copy_from_slice(&self.prev_digits);
        self.prev = hash;
        self.records += 1;
        hash
    }
}

/// A record's sealed line, written with `hash` and `prev` still blank, and hashed up
/// to `prev`'s digits: all that does not depend on the records before it.
#[derive(Debug, Clone)]
struct Prepared {
    /// SHA-256 over the hashed form (the line without its `hash` member) up to the
    /// digits of `prev`.
    prefix: Prefix,
    /// Where the digits of `hash` go in the buffer the line is in.
    hash_hex: usize,
    /// Where the digits of `prev` go.
    prev_hex: usize,
    /// Where the line ends (before its newline).
    end: usize,
}

/// Writes the sealed line of `text`, a record to seal, to the end of `lines`, with
/// the digits of `hash` and `prev` left to [`Sealer::link`], and hashes it as far as
/// it can be without `prev`. A line that cannot be sealed leaves part of a line
/// behind.
fn prepare(text: &str, scratch: &mut Scratch, lines: &mut Vec<u8>) -> Result<Prepared, SealError> {
    // Nearly always the members are found in place; otherwise the record is written
    // in canonical form first (or refused, saying why).
    let start = lines.len();
    if let Some(members) = scratch.members(text) {
        return write_line(members.with_runs(), start, lines);
    }
    let Written { bytes, members } = scratch.object(text)?.ok_or(SealError::NotAnObject)?;
    let members = members.iter().map(|m| MemberText {
        key: name_key(&bytes[m.name.clone()]),
        name: &bytes[m.name.clone()],
        value: &bytes[m.value.clone()],
        run: Some(&bytes[m.range()]),
    });
    write_line(members, start, lines)
}

/// The [`name_key`]s of `hash` and `prev`.
const HASH_KEY: u64 = u64::from_be_bytes(*b"hash\0\0\0\0");
const PREV_KEY: u64 = u64::from_be_bytes(*b"prev\0\0\0\0");

/// Writes a sealed line from a record's canonical members, `hash` and `prev` in
/// their places with their digits blank, and hashes it up to `prev`'s digits.
///
/// Members are placed by their names' keys, which compare as their unquoted bytes do
/// (`hash` and `prev` are four bytes and no canonical name has a zero byte). Bytes are
/// exact here although members sort by UTF-16 code units: `hash` and `prev` are ASCII
/// letters, an escape in a name (a backslash, 0x5C) stands for a character below the
/// letters too, and a byte from 0x80 on sorts after them in UTF-16 as well.
fn write_line<'m>(
    members: impl Iterator<Item = MemberText<'m>>,
    start: usize,
    lines: &mut Vec<u8>,
) -> Result<Prepared, SealError> {
    let (mut hash_hex, mut prev_hex) = (None, None);
    lines.push(b'{');
    for MemberText {
        key,
        name,
        value,
        run,
    } in members
    {
        if name.len() == QUOTED_HASH.len() && (key == HASH_KEY || key == PREV_KEY) {
            let field = if key == HASH_KEY { HASH } else { PREV };
            return Err(SealError::AlreadySealed { field });
        }
        // `hash` and `prev` go before the first member that sorts after them.
        if hash_hex.is_none() && HASH_KEY < key {
            hash_hex = Some(write_chain_member(QUOTED_HASH, start, lines));
        }
        if prev_hex.is_none() && PREV_KEY < key {
            prev_hex = Some(write_chain_member(QUOTED_PREV, start, lines));
        }
        if lines.len() > start + 1 {
            lines.push(b',');
        }
        if let Some(run) = run {
            lines.extend_from_slice(run);
        } else {
            lines.extend_from_slice(name);
            lines.push(b':');
            lines.extend_from_slice(value);
        }
    }
    let hash_hex = hash_hex.unwrap_or_else(|| write_chain_member(QUOTED_HASH, start, lines));
    let prev_hex = prev_hex.unwrap_or_else(|| write_chain_member(QUOTED_PREV, start, lines));
    lines.push(b'}');
    // The hashed form is the line without `"hash":"…"` and the comma on one side of
    // it: the one before it, or after it when it is first (`prev` follows it).
    let member = hash_hex - QUOTED_HASH.len() - 2;
    let cut = if lines[member - 1] == b',' {
        member - 1..hash_hex + 65
    } else {
        member..hash_hex + 66
    };
    let mut prefix = Prefix::default();
    prefix.update(&lines[start..cut.start]);
    prefix.update(&lines[cut.end..prev_hex]);
    Ok(Prepared {
        prefix,
        hash_hex,
        prev_hex,
        end: lines.len(),
    })
}

/// SHA-256 of a record's hashed form as far as it is known, run over sha2's block
/// function: linking finishes it with `prev`'s digits, what follows them and the
/// padding, all in one call on blocks on the stack (nearly always: a record whose
/// members after `prev` are short).
#[derive(Debug, Clone)]
struct Prefix {
    state: [u32; 8],
    /// Bytes hashed: those in `state`, and those after them in `pending`.
    len: u64,
    /// The bytes past the last whole block.
    pending: [u8; 64],
}

impl Default for Prefix {
    fn default() -> Self {
        // SHA-256's initial hash value (FIPS 180-4, 5.3.3).
        const INITIAL: [u32; 8] = [
            0x6a09_e667,
            0xbb67_ae85,
            0x3c6e_f372,
            0xa54f_f53a,
            0x510e_527f,
            0x9b05_688c,
            0x1f83_d9ab,
            0x5be0_cd19,
        ];
        Prefix {
            state: INITIAL,
            len: 0,
            pending: [0; 64],
        }
    }
}

impl Prefix {
    /// Hashes `bytes` next.
    fn update(&mut self, mut bytes: &[u8]) {
        let filled = (self.len % 64) as usize;
        self.len += bytes.len() as u64;
        if filled > 0 {
            let take = (64 - filled).min(bytes.len());
            self.pending[filled..filled + take].copy_from_slice(&bytes[..take]);
            if filled + take < 64 {
                return;
            }
            bytes = &bytes[take..];
            compress256(&mut self.state, &[self.pending]);
        }
        let mut blocks = bytes.chunks_exact(64);
        for block in &mut blocks {
            let block: &[u8; 64] = block.try_into().expect("bug: a chunk of 64 bytes");
            compress256(&mut self.state, std::slice::from_ref(block));
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
    }

    /// The digest of what was hashed followed by `rest`.
    fn finish(mut self, rest: &[u8]) -> Digest {
        // The last blocks: the pending bytes, `rest`, a 1 bit, zeros, and the length
        // in bits in the last eight bytes.
        const MOST: usize = 4;
        let filled = (self.len % 64) as usize;
        let bytes = filled + rest.len();
        if bytes + 9 > MOST * 64 {
            self.update(rest);
            return self.finish(&[]);
        }
        let bits = (self.len + rest.len() as u64) * 8;
        let mut blocks = [[0u8; 64]; MOST];
        let count = (bytes + 9).div_ceil(64);
        let flat = blocks.as_flattened_mut();
        flat[..filled].copy_from_slice(&self.pending[..filled]);
        flat[filled..bytes].copy_from_slice(rest);
        flat[bytes] = 0x80;
        flat[count * 64 - 8..count * 64].copy_from_slice(&bits.to_be_bytes());
        compress256(&mut self.state, &blocks[..count]);
        let mut digest = [0u8; 32];
        for (bytes, word) in digest.chunks_exact_mut(4).zip(self.state) {
            bytes.copy_from_slice(&word.to_be_bytes());
        }
        Digest(digest)
    }
}

/// Writes the chain member `quoted` (`"hash"` or `"prev"`) with blank digits to the
/// line that starts at `start` in `lines`, and returns where its digits are.
fn write_chain_member(quoted: &str, start: usize, lines: &mut Vec<u8>) -> usize {
    const BLANK: [u8; 64] = [b'0'; 64];
    if lines.len() > start + 1 {
        lines.push(b',');
    }
    lines.extend_from_slice(quoted.as_bytes());
    lines.extend_from_slice(b":\"");
    let digits = lines.len();
    lines.extend_from_slice(&BLANK);
    lines.push(b'"');
    digits
}

/// Where and why sealing stopped.
#[derive(Debug, thiserror::Error)]
pub enum SealFailure {
    /// A line that cannot be sealed; the records before it were written.
    #[error("line {}: {error}", loc.line)]
    Record {
        /// Where the line is.
        loc: Location,
        /// Why it cannot be sealed.
        error: SealError,
    },
    /// Reading the input or writing the output failed.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// Seals every record of `input` (JSON Lines; blank lines are skipped) with `sealer`,
/// writing one sealed line per record to `out`. Stops at the first line that is not a
/// record; what was written before it is a valid sealed log.
///
/// Three stages overlap: this thread reads a batch of lines; the records of the batch
/// before are canonicalized and hashed up to `prev` on every core; and this thread
/// links the batch before that in order and writes it. Only the links (hashing each
/// record from `prev` on) are sequential.
pub fn seal<R: BufRead, W: Write + ?Sized>(
    input: R,
    out: &mut W,
    sealer: &mut Sealer,
    max_line_bytes: usize,
) -> Result<(), SealFailure> {
    let mut lines = Lines::new(input, max_line_bytes);
    let mut stopped = false;
    // Line buffers written out, for the next batch's chunks.
    let spare = std::sync::Mutex::new(Vec::<Vec<u8>>::new());
    let failure = pipeline(
        &mut lines,
        |batch| {
            // Past the first line that cannot be sealed, nothing more is.
            if stopped {
                return Vec::new();
            }
            let chunks = batch.map_chunks(|scratch: &mut Scratch, entries| {
                let spare = spare.lock().map(|mut spare| spare.pop());
                let mut lines = spare.ok().flatten().unwrap_or_default();
                // Room for the lines and their chain members, so they are not moved.
                let text: usize = entries.iter().map(|e| e.loc.len as usize).sum();
                lines.reserve(text + entries.len() * 160);
                let prepared = entries
                    .iter()
                    .map(|entry| {
                        let prepared = match batch.text(entry) {
                            Ok(text) => prepare(text, scratch, &mut lines),
                            Err(reason) => Err(SealError::Unreadable(reason.to_string())),
                        };
                        lines.push(b'\n');
                        prepared
                    })
                    .collect::<Vec<_>>();
                (lines, prepared)
            });
            stopped = chunks
                .iter()
                .any(|(_, prepared)| prepared.iter().any(Result::is_err));
            chunks
        },
        // Linked in order; the lines are written as they are, up to a failure: what was
        // sealed before it is a valid sealed log.
        |batch, chunks| {
            let mut entries = batch.entries().iter();
            let (mut failure, mut written) = (None, Ok(()));
            for (mut lines, prepared) in chunks {
                if failure.is_none() && written.is_ok() {
                    let mut linked = 0;
                    // `prepared` first: at its end, `zip` takes nothing more from
                    // `entries`.
                    for (prepared, entry) in prepared.into_iter().zip(entries.by_ref()) {
                        match prepared {
                            Ok(prepared) => {
                                linked = prepared.end + 1;
                                sealer.link(prepared, &mut lines);
                            }
                            Err(error) => {
                                let loc = entry.loc.clone();
                                failure = Some(SealFailure::Record { loc, error });
                                break;
                            }
                        }
                    }
                    written = out.write_all(&lines[..linked]);
                }
                // The buffers are used again, rather than new memory paged in for each.
                lines.clear();
                if let Ok(mut spare) = spare.lock() {
                    spare.push(lines);
                }
            }
            match written {
                Ok(()) => failure,
                Err(err) => Some(SealFailure::Io(err)),
            }
        },
    )?;
    failure.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::canonical;

    #[test]
    fn seals_in_canonical_form_with_prev_and_hash_in_place() {
        let mut sealer = Sealer::new();
        let mut out = Vec::new();
        let hash = sealer
            .seal(r#"{"time": "t", "event": "a", "id": 1.50}"#, &mut out)
            .expect("seals");
        let zeros = "0".repeat(64);
        let hashed = format!(r#"{{"event":"a","id":1.5,"prev":"{zeros}","time":"t"}}"#);
        assert_eq!(hash, Digest::of(hashed.as_bytes()));
        let want =
            format!(r#"{{"event":"a","hash":"{hash}","id":1.5,"prev":"{zeros}","time":"t"}}"#);
        assert_eq!(String::from_utf8(out.clone()).expect("UTF-8"), want);
        assert_eq!(sealer.head(), hash);

        let second = sealer.seal("{}", &mut out).expect("seals");
        let hashed = format!(r#"{{"prev":"{hash}"}}"#);
        assert_eq!(second, Digest::of(hashed.as_bytes()));
        assert_eq!(sealer.records(), 2);
    }

    #[test]
    fn prev_goes_in_its_place_wherever_that_is() {
        for text in [
            "{}",
            r#"{"a":1}"#,
            r#"{"z":1}"#,
            r#"{"z":1,"a":[],"q":{}}"#,
            r#"{"é":1}"#,
        ] {
            let mut sealer = Sealer::after(Digest::of(b"before"));
            let mut out = Vec::new();
            let hash = sealer.seal(text, &mut out).expect("seals");
            let mut record: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(text).expect("JSON");
            record.insert(PREV.into(), Digest::of(b"before").hex().into());
            let mut hashed = Vec::new();
            canonical::canonicalize(&serde_json::to_string(&record).expect("JSON"), &mut hashed)
                .expect("canonical");
            assert_eq!(hash, Digest::of(&hashed), "{text}");
            record.insert(HASH.into(), hash.hex().into());
            let mut sealed = Vec::new();
            canonical::canonicalize(&serde_json::to_string(&record).expect("JSON"), &mut sealed)
                .expect("canonical");
            assert_eq!(out, sealed, "{text}");
        }
    }

    #[test]
    fn chain_members_go_in_their_place_among_similar_names() {
        // Names on either side of `hash` and `prev`, sharing their letters, in any
        // order: the sealed line is the canonical form of the record with both.
        let text = r#"{"previous":1,"prev_":2,"pre":3,"hasp":4,"has":5,"hash0":6,"h":7,"hasha":8,"q":9,"prev\u0000":10,"ha\"sh":11,"hashé":12}"#;
        let mut sealer = Sealer::new();
        let mut out = Vec::new();
        let hash = sealer.seal(text, &mut out).expect("seals");
        let mut record: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(text).expect("JSON");
        record.insert(PREV.into(), GENESIS.hex().into());
        let mut hashed = Vec::new();
        canonical::canonicalize(&serde_json::to_string(&record).expect("JSON"), &mut hashed)
            .expect("canonical");
        assert_eq!(hash, Digest::of(&hashed));
        record.insert(HASH.into(), hash.hex().into());
        let mut sealed = Vec::new();
        canonical::canonicalize(&serde_json::to_string(&record).expect("JSON"), &mut sealed)
            .expect("canonical");
        assert_eq!(String::from_utf8(out), String::from_utf8(sealed));
    }

    #[test]
    fn prefix_hashes_as_sha256_does() {
        // Every length up to five blocks, cut in two at every point and finished with
        // every tail: short ones on the stack, long ones through `update`.
        let bytes: Vec<u8> = (0..330u32).map(|i| (i * 7 + i / 64) as u8).collect();
        for len in 0..bytes.len() {
            let text = &bytes[..len];
            let want = Digest::of(text);
            for cut in 0..=len {
                for tail in [0, len - cut] {
                    let mut prefix = Prefix::default();
                    prefix.update(&text[..cut]);
                    prefix.update(&text[cut..len - tail]);
                    assert_eq!(
                        prefix.finish(&text[len - tail..]),
                        want,
                        "{len} {cut} {tail}"
                    );
                }
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_seal() {
        let mut sealer = Sealer::new();
        let mut out = Vec::new();
        assert_eq!(sealer.seal("[1]", &mut out), Err(SealError::NotAnObject));
        assert_eq!(
            sealer.seal(r#"{"hash":"x"}"#, &mut out),
            Err(SealError::AlreadySealed { field: "hash" })
        );
        assert_eq!(
            sealer.seal(r#"{"prev":null}"#, &mut out),
            Err(SealError::AlreadySealed { field: "prev" })
        );
        assert!(matches!(
            sealer.seal("{", &mut out),
            Err(SealError::Canonical(_))
        ));
        assert_eq!(sealer.head(), GENESIS, "nothing was sealed");
    }

    #[test]
    fn seal_stops_at_the_first_bad_line() {
        let input = "{\"a\":1}\n\n{\"b\":2}\nnot json\n{\"c\":3}\n";
        let mut out = Vec::new();
        let mut sealer = Sealer::new();
        let failure =
            seal(input.as_bytes(), &mut out, &mut sealer, 1 << 20).expect_err("line 4 is not JSON");
        match failure {
            SealFailure::Record { loc, .. } => assert_eq!(loc.line, 4),
            other => panic!("{other}"),
        }
        assert_eq!(out.iter().filter(|&&b| b == b'\n').count(), 2);
    }
}
