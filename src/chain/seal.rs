//! Sealing: adds `prev` and `hash` to each record of a JSONL log, in canonical form.

use std::io::{self, BufRead, Write};
use std::ops::Range;

use sha2::Digest as _;

use super::batch::{Lines, pipeline};
use super::canonical::{CanonicalError, Scratch, Written};
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
    records: u64,
    scratch: Scratch,
    canonical: Vec<u8>,
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
        Sealer {
            prev: head,
            records: 0,
            scratch: Scratch::default(),
            canonical: Vec::new(),
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
        let mut canonical = std::mem::take(&mut self.canonical);
        canonical.clear();
        let prepared = prepare(text, &mut self.scratch, &mut canonical);
        out.clear();
        let hash = prepared.map(|prepared| self.finish(prepared, &canonical, out));
        self.canonical = canonical;
        hash
    }

    /// Links a prepared record (its canonical form in `canonical`) to the one before:
    /// finishes its hash and appends its sealed line, without a newline, to `out`.
    fn finish(&mut self, prepared: Prepared, canonical: &[u8], out: &mut Vec<u8>) -> Digest {
        let Prepared {
            range,
            mut hasher,
            hash_at,
            prev_at,
        } = prepared;
        let canonical = &canonical[range];
        let prev = self.prev.json();
        let prev_member = [QUOTED_PREV.as_bytes(), b":", &prev];
        // The hashed form: the canonical record with `prev` in its place. The part
        // before that place is already in `hasher`.
        if prev_at.lead {
            hasher.update(b",");
        }
        for part in prev_member {
            hasher.update(part);
        }
        if prev_at.trail {
            hasher.update(b",");
        }
        hasher.update(&canonical[prev_at.offset..]);
        let hash = Digest(hasher.finalize().into());
        // The sealed line: `hash` and `prev` both in their places (`hash` sorts first).
        let hash_json = hash.json();
        let hash_member = [QUOTED_HASH.as_bytes(), b":", &hash_json];
        out.extend_from_slice(&canonical[..hash_at.offset]);
        if hash_at.lead {
            out.push(b',');
        }
        hash_member
            .iter()
            .for_each(|part| out.extend_from_slice(part));
        if hash_at.trail {
            out.push(b',');
        }
        out.extend_from_slice(&canonical[hash_at.offset..prev_at.offset]);
        // In an otherwise empty record, `prev` follows `hash`.
        if prev_at.lead || (!hash_at.lead && !hash_at.trail) {
            out.push(b',');
        }
        prev_member
            .iter()
            .for_each(|part| out.extend_from_slice(part));
        if prev_at.trail {
            out.push(b',');
        }
        out.extend_from_slice(&canonical[prev_at.offset..]);
        self.prev = hash;
        self.records += 1;
        hash
    }
}

/// Where a chain member goes in a canonical record.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// The byte of the canonical record it is inserted before.
    offset: usize,
    /// Whether a comma goes before it (it follows a member).
    lead: bool,
    /// Whether a comma goes after it (it is first, before other members).
    trail: bool,
}

/// A record canonicalized, and hashed up to where `prev` goes: all that does not
/// depend on the records before it.
#[derive(Debug, Clone)]
struct Prepared {
    /// The canonical record, in the buffer it was written to.
    range: Range<usize>,
    /// SHA-256 over the canonical record up to where `prev` goes.
    hasher: sha2::Sha256,
    hash_at: Place,
    prev_at: Place,
}

/// Canonicalizes `text`, a record to seal, appending its canonical form to
/// `canonical`, and hashes it as far as it can be without `prev`.
fn prepare(
    text: &str,
    scratch: &mut Scratch,
    canonical: &mut Vec<u8>,
) -> Result<Prepared, SealError> {
    let Written { bytes, members } = scratch.object(text)?.ok_or(SealError::NotAnObject)?;
    for member in members {
        let name = &bytes[member.name.clone()];
        for (field, quoted) in [(HASH, QUOTED_HASH), (PREV, QUOTED_PREV)] {
            if name.len() == quoted.len() && name == quoted.as_bytes() {
                return Err(SealError::AlreadySealed { field });
            }
        }
    }
    let place = |quoted: &str| {
        let at = members
            .iter()
            .position(|m| sorts_before(quoted, &bytes[m.name.clone()]))
            .unwrap_or(members.len());
        let offset = match (at.checked_sub(1), members.first()) {
            (Some(before), _) => members[before].value.end,
            (None, Some(first)) => first.name.start,
            (None, None) => 1,
        };
        // After a member, the comma that follows it is already in the tail; first of
        // several, the new member needs one of its own.
        Place {
            offset,
            lead: at > 0,
            trail: at == 0 && !members.is_empty(),
        }
    };
    let (hash_at, prev_at) = (place(QUOTED_HASH), place(QUOTED_PREV));
    let mut hasher = sha2::Sha256::new();
    hasher.update(&bytes[..prev_at.offset]);
    let start = canonical.len();
    canonical.extend_from_slice(bytes);
    Ok(Prepared {
        range: start..canonical.len(),
        hasher,
        hash_at,
        prev_at,
    })
}

/// Whether the chain member `quoted` (`"hash"` or `"prev"`) sorts before the canonical
/// name `name`. Their names are ASCII letters, so comparing unquoted bytes is exact: an
/// escape in `name` (a backslash, 0x5C) stands for a character below the letters too,
/// and a byte from 0x80 on sorts after them in UTF-16 as well.
fn sorts_before(quoted: &str, name: &[u8]) -> bool {
    fn unquote(name: &[u8]) -> &[u8] {
        name.get(1..name.len().saturating_sub(1))
            .unwrap_or_default()
    }
    unquote(quoted.as_bytes()) < unquote(name)
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
/// record; what was written before it is a valid sealed log. The records are
/// canonicalized and hashed up to `prev` in parallel, a batch at a time, and linked
/// in order.
pub fn seal<R: BufRead, W: Write + ?Sized>(
    input: R,
    out: &mut W,
    sealer: &mut Sealer,
    max_line_bytes: usize,
) -> Result<(), SealFailure> {
    let mut lines = Lines::new(input, max_line_bytes);
    let mut stopped = false;
    let failure = pipeline(
        &mut lines,
        |batch| {
            let mut sealed = Vec::new();
            // Past the first line that cannot be sealed, nothing more is.
            if stopped {
                return (sealed, None);
            }
            let chunks = batch.map_chunks(|scratch: &mut Scratch, entries| {
                let mut canonical = Vec::new();
                let prepared = entries
                    .iter()
                    .map(|entry| match batch.text(entry) {
                        Ok(text) => prepare(text, scratch, &mut canonical),
                        Err(reason) => Err(SealError::Unreadable(reason.to_string())),
                    })
                    .collect::<Vec<_>>();
                (canonical, prepared)
            });
            let mut entries = batch.entries().iter();
            for (canonical, prepared) in chunks {
                // `prepared` first: at its end, `zip` takes nothing more from `entries`.
                for (prepared, entry) in prepared.into_iter().zip(entries.by_ref()) {
                    match prepared {
                        Ok(prepared) => {
                            sealer.finish(prepared, &canonical, &mut sealed);
                            sealed.push(b'\n');
                        }
                        Err(error) => {
                            stopped = true;
                            let loc = entry.loc.clone();
                            return (sealed, Some(SealFailure::Record { loc, error }));
                        }
                    }
                }
            }
            (sealed, None)
        },
        // What was sealed before a failure is written: it is a valid sealed log.
        |_, (sealed, failure)| match out.write_all(&sealed) {
            Ok(()) => failure,
            Err(err) => Some(SealFailure::Io(err)),
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
