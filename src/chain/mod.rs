//! Hash-chained logs: tamper evidence for JSONL records, checked offline without a key.
//!
//! A sealed log is JSON Lines whose every record carries two more members: `prev`, the
//! `hash` of the record before it (64 zeros, [`GENESIS`], for the first), and `hash`,
//! the SHA-256 of the RFC 8785 canonical form ([`canonical`]) of the record without
//! `hash`. Changing, deleting, inserting or reordering a record breaks a link that
//! [`verify`] finds; pinning the last hash (`--head`) also catches a cut or replaced
//! tail. The format is written down for other recorders in `docs/chain-format.md`.
//!
//! This module is a library: [`seal::Sealer`] and [`verify::Verifier`] take one line at
//! a time, and [`seal::seal`] and [`verify::verify`] drive them over readers and writers
//! handed in. Nothing here opens a file or prints.

mod batch;
pub mod canonical;
pub mod seal;
pub mod sign;
pub mod verify;

use std::fmt;

use sha2::Digest as _;

pub use canonical::CanonicalError;

/// The member that holds the hash of the record before.
pub const PREV: &str = "prev";
/// The member that holds the record's own hash.
pub const HASH: &str = "hash";

/// A SHA-256 digest, written as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest(pub [u8; 32]);

/// The `prev` of a log's first record: 32 zero bytes.
pub const GENESIS: Digest = Digest([0; 32]);

impl Digest {
    /// The SHA-256 of `bytes`.
    pub fn of(bytes: &[u8]) -> Digest {
        Digest(sha2::Sha256::digest(bytes).into())
    }

    /// The SHA-256 of the concatenation of `parts`.
    pub fn of_parts(parts: &[&[u8]]) -> Digest {
        let mut hasher = sha2::Sha256::new();
        for part in parts {
            hasher.update(part);
        }
        Digest(hasher.finalize().into())
    }

    /// Parses 64 lowercase hex digits; anything else (upper case included, so that a
    /// hash has one spelling) is `None`.
    pub fn parse(text: &str) -> Option<Digest> {
        let bytes: &[u8; 64] = text.as_bytes().try_into().ok()?;
        let mut digest = [0u8; 32];
        for (byte, pair) in digest.iter_mut().zip(bytes.chunks_exact(2)) {
            let (high, low) = (NIBBLE[usize::from(pair[0])], NIBBLE[usize::from(pair[1])]);
            if (high | low) & 0x80 != 0 {
                return None;
            }
            *byte = high << 4 | low;
        }
        Some(Digest(digest))
    }

    /// The 64 lowercase hex digits.
    pub fn hex(&self) -> String {
        let mut text = [0u8; 64];
        self.write_hex(&mut text);
        String::from_utf8_lossy(&text).into_owned()
    }

    /// Writes the 64 lowercase hex digits into `text`.
    ///
    /// Each nibble becomes its digit by adding `'0'`, and `'a' - '0' - 10` more where it
    /// is ten or over: a loop the compiler turns into vector instructions. `seal` writes
    /// one of these per record, on the thread that links.
    pub(crate) fn write_hex(&self, text: &mut [u8; 64]) {
        let digit = |nibble: u8| nibble + b'0' + u8::from(nibble > 9) * (b'a' - b'0' - 10);
        for (pair, &byte) in text.chunks_exact_mut(2).zip(&self.0) {
            pair[0] = digit(byte >> 4);
            pair[1] = digit(byte & 0x0f);
        }
    }
}

/// The value of each lowercase hex digit; 0x80 for every other byte.
const NIBBLE: [u8; 256] = {
    let mut table = [0x80u8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

/// Why one record of a sealed log does not verify. Each names the kind of break and,
/// where there is one, the hash that was expected and the one that was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChainError {
    /// The line is not a JSON object with a canonical form.
    #[error("malformed record: {reason}")]
    MalformedRecord {
        /// Why it has none.
        reason: String,
    },
    /// `prev` or `hash` is absent.
    #[error("missing chain field: the record has no `{field}`")]
    MissingField {
        /// `prev` or `hash`.
        field: &'static str,
    },
    /// `prev` or `hash` is not a string of 64 lowercase hex digits.
    #[error("malformed chain field: `{field}` is {found}, expected 64 lowercase hex digits")]
    MalformedField {
        /// `prev` or `hash`.
        field: &'static str,
        /// What the field holds, as JSON.
        found: String,
    },
    /// The first record's `prev` is not the genesis value.
    #[error("bad genesis: the first record's `prev` is {found}, expected {expected}")]
    BadGenesis {
        /// The genesis value: 64 zeros.
        expected: Digest,
        /// The first record's `prev`.
        found: Digest,
    },
    /// `prev` is not the hash of the record before: a record was deleted, inserted or
    /// moved here. `earlier` is the line of an earlier record whose hash `prev` is, when
    /// one of the last few has it.
    #[error(
        "deleted, inserted or reordered record: `prev` is {found}, expected {expected}, the hash of the record before{}",
        earlier.map(|line| format!(" (it is the hash of line {line})")).unwrap_or_default()
    )]
    Relinked {
        /// The hash of the record before.
        expected: Digest,
        /// The record's `prev`.
        found: Digest,
        /// The line of the earlier record whose hash `prev` is, when one of the last
        /// few has it.
        earlier: Option<u64>,
    },
    /// The record's content does not hash to its `hash`.
    #[error("modified record: its content hashes to {expected}, but its `hash` is {found}")]
    Modified {
        /// What the record's content hashes to.
        expected: Digest,
        /// The record's `hash`.
        found: Digest,
    },
    /// The signature over the head (`verify --key`) is missing, malformed or not the
    /// key's.
    #[error("bad signature: {reason}")]
    BadSignature {
        /// What is wrong with it.
        reason: String,
    },
    /// The last record's hash is not the pinned head: the log was cut short, or its
    /// tail replaced.
    #[error(
        "head mismatch: the last hash is {}, expected {expected} (the pinned head)",
        OptionDigest(found)
    )]
    HeadMismatch {
        /// The pinned (or signed) head.
        expected: Digest,
        /// The last record's hash; `None` for an empty log.
        found: Option<Digest>,
    },
}

impl ChainError {
    /// The kind of break, as a stable kebab-case word for machine output.
    pub fn kind(&self) -> &'static str {
        match self {
            ChainError::MalformedRecord { .. } => "malformed-record",
            ChainError::MissingField { .. } => "missing-field",
            ChainError::MalformedField { .. } => "malformed-field",
            ChainError::BadGenesis { .. } => "bad-genesis",
            ChainError::Relinked { .. } => "relinked",
            ChainError::Modified { .. } => "modified",
            ChainError::HeadMismatch { .. } => "head-mismatch",
            ChainError::BadSignature { .. } => "bad-signature",
        }
    }

    /// The expected and the found hash, for the breaks that have both.
    pub fn hashes(&self) -> Option<(Digest, Option<Digest>)> {
        match self {
            ChainError::BadGenesis { expected, found }
            | ChainError::Relinked {
                expected, found, ..
            }
            | ChainError::Modified { expected, found } => Some((*expected, Some(*found))),
            ChainError::HeadMismatch { expected, found } => Some((*expected, *found)),
            _ => None,
        }
    }
}

impl fmt::Display for OptionDigest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(digest) => write!(f, "{digest}"),
            None => f.write_str("nothing (the log is empty)"),
        }
    }
}

/// Shows an absent digest as words.
struct OptionDigest<'a>(&'a Option<Digest>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_have_one_spelling() {
        let digest = Digest::of(b"abc");
        assert_eq!(
            digest.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(Digest::parse(&digest.hex()), Some(digest));
        assert_eq!(Digest::parse(&digest.hex().to_uppercase()), None);
        assert_eq!(Digest::parse("00"), None);
        assert_eq!(GENESIS.hex(), "0".repeat(64));
    }

    #[test]
    fn every_byte_is_written_as_two_lowercase_digits() {
        // Each byte value at each of the 32 places, against `format!`.
        for value in 0..=255u8 {
            for place in 0..32 {
                let mut bytes = [value.wrapping_mul(37); 32];
                bytes[place] = value;
                let digest = Digest(bytes);
                let want: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(digest.hex(), want);
                assert_eq!(Digest::parse(&want), Some(digest));
            }
        }
    }
}
