//! Sealing: adds `prev` and `hash` to each record of a JSONL log, in canonical form.

use std::io::{self, BufRead, Write};

use super::canonical::{self, CanonicalError, Member};
use super::{Digest, GENESIS, HASH, PREV};
use crate::trace::Location;
use crate::trace::native::unreadable_line;
use crate::trace::reader::{LineContent, LineReader};

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
    scratch: Vec<u8>,
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
            scratch: Vec::new(),
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
        let object = canonical::canonicalize_object(text, &mut self.scratch)?
            .ok_or(SealError::NotAnObject)?;
        let bytes = &self.scratch;
        let members = &object.members;
        for member in members {
            let name = &bytes[member.name.clone()];
            for (field, quoted) in [(HASH, QUOTED_HASH), (PREV, QUOTED_PREV)] {
                if name.len() == quoted.len() && name == quoted.as_bytes() {
                    return Err(SealError::AlreadySealed { field });
                }
            }
        }
        // The hashed form is the canonical record with `prev` in its place: hashed as
        // the slices before and after that place, around the new member.
        let prev = self.prev.json();
        let at = members
            .iter()
            .position(|m| sorts_before(QUOTED_PREV, &bytes[m.name.clone()]))
            .unwrap_or(members.len());
        let split = match (at.checked_sub(1), members.get(at)) {
            (Some(before), _) => members[before].value.end,
            (None, Some(first)) => first.name.start,
            (None, None) => 1,
        };
        // After a member, the comma that follows it is already in the tail; first of
        // several, the new member needs one of its own.
        let (lead, trail): (&[u8], &[u8]) = match (at > 0, at < members.len()) {
            (true, _) => (b",", b""),
            (false, true) => (b"", b","),
            (false, false) => (b"", b""),
        };
        let hash = Digest::of_parts(&[
            &bytes[..split],
            lead,
            QUOTED_PREV.as_bytes(),
            b":",
            &prev,
            trail,
            &bytes[split..object.end],
        ]);
        out.clear();
        merge(
            bytes,
            members,
            &[(QUOTED_HASH, &hash.json()), (QUOTED_PREV, &prev)],
            out,
        );
        self.prev = hash;
        self.records += 1;
        Ok(hash)
    }
}

/// Writes the canonical object of `members` (ranges in `bytes`) with `extra` members
/// (sorted; quoted canonical names and canonical values; none of them among
/// `members`) in their places.
fn merge(bytes: &[u8], members: &[Member], extra: &[(&str, &[u8])], out: &mut Vec<u8>) {
    out.push(b'{');
    let mut extra = extra.iter().peekable();
    let mut first = true;
    let mut comma = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    let write_extra = |out: &mut Vec<u8>, (name, value): &(&str, &[u8])| {
        out.extend_from_slice(name.as_bytes());
        out.push(b':');
        out.extend_from_slice(value);
    };
    for member in members {
        let name = &bytes[member.name.clone()];
        while let Some(added) = extra.next_if(|(added, _)| sorts_before(added, name)) {
            comma(out);
            write_extra(out, added);
        }
        comma(out);
        out.extend_from_slice(&bytes[member.range()]);
    }
    for added in extra {
        comma(out);
        write_extra(out, added);
    }
    out.push(b'}');
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
/// record; what was written before it is a valid sealed log.
pub fn seal<R: BufRead, W: Write + ?Sized>(
    input: R,
    out: &mut W,
    sealer: &mut Sealer,
    max_line_bytes: usize,
) -> Result<(), SealFailure> {
    let mut reader = LineReader::with_max_line_bytes(input, max_line_bytes);
    let mut line_out = Vec::new();
    while let Some(line) = reader.next_line()? {
        let loc = line.location();
        let text = match line.content {
            LineContent::Text(text) => text,
            _ => {
                let reason = unreadable_line(&line, max_line_bytes)
                    .map(|err| err.to_string())
                    .unwrap_or_default();
                return Err(SealFailure::Record {
                    loc,
                    error: SealError::Unreadable(reason),
                });
            }
        };
        if let Err(error) = sealer.seal(text, &mut line_out) {
            return Err(SealFailure::Record { loc, error });
        }
        line_out.push(b'\n');
        out.write_all(&line_out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
