//! Hash chains hold on any bytes: every line RFC 8785 canonicalizes agrees with an
//! independent implementation and canonicalizes again to itself; `seal` over a log
//! writes exactly what sealing it a line at a time writes (the batched, parallel
//! pipeline against the one-record API), and what it wrote verifies, with the same
//! records and head, in a batch and a line at a time; a sealed log with one byte
//! changed never verifies unless every record still denotes the same JSON.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tracegate::chain::canonical::canonicalize;
use tracegate::chain::seal::{Sealer, seal};
use tracegate::chain::verify::{Verifier, VerifyOptions, verify};

/// Lines over this many bytes are skipped by the batched readers (and reported as
/// unreadable); the one-line API is handed the same lines only when they are shorter.
const MAX_LINE: usize = 1 << 16;

/// The non-blank lines of `bytes` as the chain's readers cut them: `\n` ends a line, a
/// `\r` before it is dropped, a leading byte order mark is ignored.
fn lines(bytes: &[u8]) -> Vec<&[u8]> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.iter().all(|b| matches!(b, b' ' | b'\t' | b'\r')))
        .collect()
}

/// A JSON value with every number as the double it denotes, as RFC 8785 hashes it.
fn as_hashed(value: Value) -> Value {
    match value {
        Value::Number(n) => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
        Value::Array(items) => Value::Array(items.into_iter().map(as_hashed).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, as_hashed(v))).collect())
        }
        other => other,
    }
}

/// Whether every integer in `value` is a double exactly.
fn exact(value: &Value) -> bool {
    const LIMIT: u64 = 1 << 53;
    match value {
        Value::Number(n) => n
            .as_u64()
            .map(|n| n <= LIMIT)
            .or_else(|| n.as_i64().map(|n| n.unsigned_abs() <= LIMIT))
            .unwrap_or(true),
        Value::Array(items) => items.iter().all(exact),
        Value::Object(map) => map.values().all(exact),
        _ => true,
    }
}

fn canonical_forms(bytes: &[u8]) {
    let mut ours = Vec::new();
    let mut again = Vec::new();
    for line in lines(bytes) {
        let Ok(text) = std::str::from_utf8(line) else {
            continue;
        };
        if canonicalize(text, &mut ours).is_err() {
            continue;
        }
        let written = std::str::from_utf8(&ours).expect("canonical JSON is UTF-8");
        canonicalize(written, &mut again).expect("a canonical form canonicalizes");
        assert_eq!(ours, again, "canonicalizing {written:?} changed it");
        let value: Value = serde_json::from_str(written).expect("a canonical form is JSON");
        // Beyond 2^53 serde_json keeps an integer exact where RFC 8785 writes the
        // double it rounds to: compare only where both read the same numbers.
        if exact(&value) {
            let theirs = serde_json_canonicalizer::to_string(&value).expect("the oracle writes");
            assert_eq!(written, theirs, "canonical forms of {text:?} differ");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    canonical_forms(data);

    // The batched, parallel `seal` against the one-record API.
    let mut sealed = Vec::new();
    let mut sealer = Sealer::new();
    let outcome = seal(data, &mut sealed, &mut sealer, MAX_LINE);
    let mut one = Sealer::new();
    let mut expected = Vec::new();
    let mut line_out = Vec::new();
    for line in lines(data) {
        let Ok(text) = std::str::from_utf8(line) else {
            break;
        };
        if line.len() > MAX_LINE || one.seal(text, &mut line_out).is_err() {
            break;
        }
        expected.extend_from_slice(&line_out);
        expected.push(b'\n');
    }
    assert_eq!(sealed, expected, "batched and one-record seals differ");
    assert_eq!(sealer.records(), one.records());
    assert_eq!(sealer.head(), one.head());
    if outcome.is_ok() {
        assert_eq!(one.records() as usize, lines(data).len());
    }

    // What was sealed verifies, in a batch and a line at a time.
    let options = VerifyOptions {
        // An empty log has no head to pin.
        head: (sealer.records() > 0).then(|| sealer.head()),
        max_line_bytes: MAX_LINE,
    };
    let verified = verify(&sealed[..], &options).expect("memory reads");
    assert!(verified.broken.is_none(), "{:?}", verified.broken);
    assert_eq!(verified.records, sealer.records());
    let mut verifier = Verifier::new();
    for (i, line) in lines(&sealed).into_iter().enumerate() {
        let text = std::str::from_utf8(line).expect("sealed lines are UTF-8");
        verifier
            .verify(text, i as u64 + 1)
            .expect("a sealed line verifies");
    }
    assert_eq!(verifier.head(), verified.head);

    // One byte changed: the log breaks, or every record still means the same.
    if sealed.is_empty() {
        return;
    }
    let at = data.iter().fold(0usize, |h, &b| {
        h.wrapping_mul(31).wrapping_add(usize::from(b))
    }) % sealed.len();
    let flip = data.first().copied().unwrap_or(1).max(1);
    let mut tampered = sealed.clone();
    tampered[at] ^= flip;
    let verified = verify(&tampered[..], &options).expect("memory reads");
    if verified.broken.is_none() {
        let read = |bytes: &[u8]| -> Vec<Value> {
            lines(bytes)
                .into_iter()
                .map(|line| serde_json::from_slice(line).map_or(Value::Null, as_hashed))
                .collect()
        };
        assert_eq!(
            read(&tampered),
            read(&sealed),
            "byte {at} changed (xor {flip:#04x}) and the log still verifies"
        );
    }
});
