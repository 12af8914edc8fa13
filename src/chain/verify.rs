//! Offline verification of a sealed log: every link, in order, up to the first break.

use std::collections::VecDeque;
use std::io::{self, BufRead};

use super::batch::{Lines, pipeline};
use super::canonical::{Scratch, Written};
use super::{ChainError, Digest, GENESIS, HASH, PREV};
use crate::trace::Location;

/// How many recent hashes are remembered to say which earlier record a wrong `prev`
/// points at. Bounded, so memory does not grow with the log.
const RECENT: usize = 64;

/// Checks the records of one sealed log, one line at a time, in order.
#[derive(Debug)]
pub struct Verifier {
    /// The hash the next record's `prev` must be.
    expected: Digest,
    /// The same, as the 64 hex digits `prev` spells it with.
    expected_digits: [u8; 64],
    records: u64,
    /// The last few records' hashes and lines, newest last.
    recent: VecDeque<(Digest, u64)>,
    scratch: Scratch,
}

impl Default for Verifier {
    fn default() -> Self {
        Verifier {
            expected: GENESIS,
            expected_digits: [b'0'; 64],
            records: 0,
            recent: VecDeque::with_capacity(RECENT),
            scratch: Scratch::default(),
        }
    }
}

impl Verifier {
    /// A verifier at the start of a log: the next record must link to the genesis.
    pub fn new() -> Verifier {
        Verifier::default()
    }

    /// Records verified so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The last verified record's hash; `None` before the first.
    pub fn head(&self) -> Option<Digest> {
        (self.records > 0).then_some(self.expected)
    }

    /// Verifies the next record, the JSON text of line `line`; returns its hash.
    /// After an error the verifier is where it was before the call.
    pub fn verify(&mut self, text: &str, line: u64) -> Result<Digest, ChainError> {
        let examined = examine(text, &mut self.scratch)?;
        self.link(examined, line)
    }

    /// Links a record already examined to the one before: its `prev`, then its hash.
    fn link(&mut self, examined: Examined, line: u64) -> Result<Digest, ChainError> {
        let Examined {
            prev_digits,
            stored,
            computed,
            computed_digits,
        } = examined;
        // `prev` is compared as written: its digits are the hash before's when the
        // link holds. Only a broken link has them read, to say how it is broken.
        if prev_digits != self.expected_digits {
            let prev = field_digest(&quoted(&prev_digits), PREV)?;
            return Err(if self.records == 0 {
                ChainError::BadGenesis {
                    expected: GENESIS,
                    found: prev,
                }
            } else {
                ChainError::Relinked {
                    expected: self.expected,
                    found: prev,
                    earlier: self
                        .recent
                        .iter()
                        .find(|(hash, _)| *hash == prev)
                        .map(|&(_, line)| line),
                }
            });
        }
        if computed != stored {
            return Err(ChainError::Modified {
                expected: computed,
                found: stored,
            });
        }
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((computed, line));
        self.expected = computed;
        self.expected_digits = computed_digits;
        self.records += 1;
        Ok(computed)
    }

    /// Checks the head against a pinned hash, once every record is verified.
    pub fn check_head(&self, pinned: Digest) -> Result<(), ChainError> {
        match self.head() {
            Some(head) if head == pinned => Ok(()),
            found => Err(ChainError::HeadMismatch {
                expected: pinned,
                found,
            }),
        }
    }
}

/// What one record says about the chain, read before it is linked: its `prev` (as
/// written), its `hash`, and what its content hashes to.
#[derive(Debug, Clone, Copy)]
struct Examined {
    /// The 64 characters between the quotes of `prev`, not yet known to be digits.
    prev_digits: [u8; 64],
    stored: Digest,
    computed: Digest,
    /// `computed` in hex.
    computed_digits: [u8; 64],
}

/// Reads a record's chain fields and hashes its content. This needs nothing from the
/// records before it, so the records of a batch are examined in parallel.
fn examine(text: &str, scratch: &mut Scratch) -> Result<Examined, ChainError> {
    // The record is canonicalized whole; the hashed form is that without the `hash`
    // member, fed to SHA-256 as the two slices around it.
    let Written { bytes, members } = scratch
        .object(text)
        .map_err(|err| ChainError::MalformedRecord {
            reason: err.to_string(),
        })?
        .ok_or_else(|| ChainError::MalformedRecord {
            reason: "line is not a JSON object".into(),
        })?;
    let named = |name: &[u8]| {
        members
            .iter()
            .position(|m| m.name.len() == name.len() && &bytes[m.name.clone()] == name)
    };
    let hash_at = named(b"\"hash\"").ok_or(ChainError::MissingField { field: HASH })?;
    let prev_at = named(b"\"prev\"").ok_or(ChainError::MissingField { field: PREV })?;
    let prev_value = &bytes[members[prev_at].value.clone()];
    let hash_value = &bytes[members[hash_at].value.clone()];
    // Cut `"hash":…` and one comma next to it.
    let cut = match (hash_at.checked_sub(1), members.get(hash_at + 1)) {
        (Some(before), _) => members[before].value.end..members[hash_at].value.end,
        (None, Some(after)) => members[hash_at].name.start..after.name.start,
        (None, None) => members[hash_at].range(),
    };
    let computed = Digest::of_parts(&[&bytes[..cut.start], &bytes[cut.end..]]);
    let mut computed_digits = [0u8; 64];
    computed.write_hex(&mut computed_digits);
    let digits = |value: &[u8]| -> Option<[u8; 64]> {
        value
            .strip_prefix(b"\"")?
            .strip_suffix(b"\"")?
            .try_into()
            .ok()
    };
    // The common case, an intact record: `hash` spells what the content hashes to,
    // and `prev` is 64 characters in quotes (compared when linked). Otherwise both are
    // read, `prev` first, to say which is malformed.
    match (digits(prev_value), digits(hash_value)) {
        (Some(prev_digits), Some(hash_digits)) if hash_digits == computed_digits => Ok(Examined {
            prev_digits,
            stored: computed,
            computed,
            computed_digits,
        }),
        _ => {
            let prev = field_digest(prev_value, PREV)?;
            let stored = field_digest(hash_value, HASH)?;
            let mut prev_digits = [0u8; 64];
            prev.write_hex(&mut prev_digits);
            Ok(Examined {
                prev_digits,
                stored,
                computed,
                computed_digits,
            })
        }
    }
}

/// 64 characters in quotes: the JSON value they were read from.
fn quoted(digits: &[u8; 64]) -> Vec<u8> {
    let mut value = Vec::with_capacity(66);
    value.push(b'"');
    value.extend_from_slice(digits);
    value.push(b'"');
    value
}

/// A chain field's canonical JSON value as a digest.
fn field_digest(value: &[u8], field: &'static str) -> Result<Digest, ChainError> {
    let digest = value
        .strip_prefix(b"\"")
        .and_then(|v| v.strip_suffix(b"\""))
        .and_then(|hex| std::str::from_utf8(hex).ok())
        .and_then(Digest::parse);
    digest.ok_or_else(|| {
        let shown = String::from_utf8_lossy(value);
        let found = if shown.chars().count() > 80 {
            format!("{}…", shown.chars().take(80).collect::<String>())
        } else {
            shown.into_owned()
        };
        ChainError::MalformedField { field, found }
    })
}

/// Options for [`verify`].
#[derive(Debug, Clone, Copy)]
pub struct VerifyOptions {
    /// The hash the last record must have (catches a cut or replaced tail).
    pub head: Option<Digest>,
    /// Lines longer than this are a break, not read.
    pub max_line_bytes: usize,
}

/// What verifying one log found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// Records verified, up to the first break.
    pub records: u64,
    /// The last verified record's hash.
    pub head: Option<Digest>,
    /// Where the last verified record is (line 0 for none).
    pub last: Location,
    /// The first break, if any.
    pub broken: Option<Broken>,
}

/// The first broken link of a log: where, and what kind of break.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The record where the chain breaks (for a head mismatch, the last record; line 0
    /// for an empty log).
    pub loc: Location,
    /// The kind of break, with the hashes expected and found.
    pub error: ChainError,
}

/// Verifies a sealed log read from `input`, stopping at the first break. Blank lines
/// are skipped. Only a failure to read is an `Err`. The records are canonicalized and
/// hashed in parallel, a batch at a time, and linked in order.
pub fn verify<R: BufRead>(input: R, options: &VerifyOptions) -> io::Result<Verified> {
    let mut lines = Lines::new(input, options.max_line_bytes);
    let mut verifier = Verifier::new();
    let mut last = Location::default();
    let mut stopped = false;
    let broken = pipeline(
        &mut lines,
        |batch| {
            // Past the first break, the batch already read is not looked at.
            if stopped {
                return None;
            }
            let examined = batch.map_chunks(|scratch: &mut Scratch, entries| {
                entries
                    .iter()
                    .map(|entry| match batch.text(entry) {
                        Ok(text) => examine(text, scratch),
                        Err(reason) => Err(ChainError::MalformedRecord {
                            reason: reason.to_string(),
                        }),
                    })
                    .collect::<Vec<_>>()
            });
            for (entry, examined) in batch.entries().iter().zip(examined.into_iter().flatten()) {
                if let Err(error) = examined.and_then(|e| verifier.link(e, entry.loc.line)) {
                    stopped = true;
                    return Some(Broken {
                        loc: entry.loc.clone(),
                        error,
                    });
                }
                last = entry.loc.clone();
            }
            None
        },
        |_, broken| broken,
    )?;
    let broken = broken.or_else(|| {
        let pinned = options.head?;
        let error = verifier.check_head(pinned).err()?;
        Some(Broken {
            loc: last.clone(),
            error,
        })
    });
    Ok(Verified {
        records: verifier.records(),
        head: verifier.head(),
        last,
        broken,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::seal::{Sealer, seal};

    fn sealed(lines: &[&str]) -> Vec<String> {
        let mut out = Vec::new();
        seal(
            lines.join("\n").as_bytes(),
            &mut out,
            &mut Sealer::new(),
            1 << 20,
        )
        .expect("seals");
        String::from_utf8(out)
            .expect("UTF-8")
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn run(lines: &[String], head: Option<Digest>) -> Verified {
        let text = lines.join("\n");
        let options = VerifyOptions {
            head,
            max_line_bytes: 1 << 20,
        };
        verify(text.as_bytes(), &options).expect("reads")
    }

    #[test]
    fn an_intact_log_verifies_to_its_head() {
        let lines = sealed(&[r#"{"a":1}"#, r#"{"b":[true,null]}"#, r#"{"c":"x"}"#]);
        let verified = run(&lines, None);
        assert_eq!(verified.records, 3);
        assert!(verified.broken.is_none());
        let head = verified.head.expect("a head");
        assert!(lines[2].contains(&head.hex()));
        assert!(run(&lines, Some(head)).broken.is_none());
    }

    #[test]
    fn each_break_has_its_kind_and_line() {
        let lines = sealed(&[r#"{"a":1}"#, r#"{"a":2}"#, r#"{"a":3}"#]);
        let kind_at = |lines: &[String], head: Option<Digest>| {
            let verified = run(lines, head);
            let broken = verified.broken.expect("broken");
            (broken.error.kind(), broken.loc.line)
        };
        let mut modified = lines.clone();
        modified[1] = modified[1].replace("\"a\":2", "\"a\":5");
        assert_eq!(kind_at(&modified, None), ("modified", 2));

        let deleted = vec![lines[0].clone(), lines[2].clone()];
        assert_eq!(kind_at(&deleted, None), ("relinked", 2));

        let reordered = vec![lines[0].clone(), lines[2].clone(), lines[1].clone()];
        assert_eq!(kind_at(&reordered, None), ("relinked", 2));

        let duplicated = vec![lines[0].clone(), lines[1].clone(), lines[1].clone()];
        let verified = run(&duplicated, None);
        match verified.broken.expect("broken").error {
            ChainError::Relinked { earlier, .. } => assert_eq!(earlier, Some(1)),
            other => panic!("{other}"),
        }

        let tail = vec![lines[1].clone(), lines[2].clone()];
        assert_eq!(kind_at(&tail, None), ("bad-genesis", 1));

        let head = run(&lines, None).head;
        let truncated = lines[..2].to_vec();
        assert!(run(&truncated, None).broken.is_none());
        assert_eq!(kind_at(&truncated, head), ("head-mismatch", 2));
        assert_eq!(kind_at(&[], head), ("head-mismatch", 0));

        let mut no_hash = lines.clone();
        no_hash[0] = r#"{"a":1,"prev":"00"}"#.to_string();
        assert_eq!(kind_at(&no_hash, None), ("missing-field", 1));
        let mut bad_prev = lines.clone();
        bad_prev[0] = format!(r#"{{"a":1,"hash":"{}","prev":7}}"#, GENESIS);
        assert_eq!(kind_at(&bad_prev, None), ("malformed-field", 1));
        let mut junk = lines.clone();
        junk[2] = "not json".into();
        assert_eq!(kind_at(&junk, None), ("malformed-record", 3));
    }

    #[test]
    fn whitespace_and_member_order_do_not_count() {
        let lines = sealed(&[r#"{"a":1,"b":{"y":2,"x":1}}"#, r#"{"c":3}"#]);
        let value: serde_json::Value = serde_json::from_str(&lines[0]).expect("JSON");
        let pretty = vec![
            serde_json::to_string_pretty(&value)
                .expect("serializes")
                .replace('\n', " "),
            lines[1].clone(),
        ];
        assert!(run(&pretty, None).broken.is_none());
    }

    #[test]
    fn logs_longer_than_a_batch_seal_and_verify_as_line_by_line() {
        // Over one batch of lines, so chunks run in parallel and batches join up.
        let records: Vec<String> = (0..9000)
            .map(|i| format!(r#"{{"n": {i}, "b": "x{i}", "a": [{i}]}}"#))
            .collect();
        let lines: Vec<&str> = records.iter().map(String::as_str).collect();
        let sealed = sealed(&lines);
        let mut sealer = Sealer::new();
        let mut one = Vec::new();
        for (record, line) in records.iter().zip(&sealed) {
            sealer.seal(record, &mut one).expect("seals");
            assert_eq!(std::str::from_utf8(&one).expect("UTF-8"), line);
        }
        let verified = run(&sealed, Some(sealer.head()));
        assert_eq!((verified.records, verified.broken), (9000, None));
        assert_eq!(verified.last.line, 9000);

        let mut modified = sealed.clone();
        modified[8499] = modified[8499].replace("\"x8499\"", "\"y8499\"");
        let broken = run(&modified, None).broken.expect("broken");
        assert_eq!((broken.error.kind(), broken.loc.line), ("modified", 8500));
        let mut deleted = sealed.clone();
        deleted.remove(600);
        let verified = run(&deleted, None);
        let broken = verified.broken.expect("broken");
        assert_eq!((broken.error.kind(), broken.loc.line), ("relinked", 601));
        assert_eq!((verified.records, verified.last.line), (600, 600));
    }
}
