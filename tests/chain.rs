//! Sealed logs: the format's test vectors (docs/chain-format.md), the tamper matrix
//! through the real `seal` and `verify`, `check --verify-chain`, and properties: seal
//! then verify passes on any log, any single change to a sealed record's content
//! fails, and our RFC 8785 canonical form agrees with an independent implementation.

use std::path::{Path, PathBuf};

use proptest::prelude::*;
use serde_json::{Map, Value};
use tracegate::chain::canonical::{Scratch, canonicalize};
use tracegate::chain::seal::{Sealer, seal};
use tracegate::chain::verify::{VerifyOptions, verify};
use tracegate::chain::{Digest, GENESIS};

use crate::util::{root, run, stdout, tracegate};

/// The fenced block after `<!-- vector NAME PART -->` in docs/chain-format.md.
fn vector(doc: &str, name: &str, part: &str) -> String {
    let marker = format!("<!-- vector {name} {part} -->");
    let at = doc
        .find(&marker)
        .unwrap_or_else(|| panic!("docs/chain-format.md has no `{marker}`"));
    let rest = &doc[at + marker.len()..];
    let open = rest.find("```").expect("a fenced block follows the marker");
    let body = &rest[open..];
    let body = &body[body.find('\n').expect("fence line") + 1..];
    let close = body.find("```").expect("the block is closed");
    body[..close].to_string()
}

fn seal_text(text: &str) -> String {
    let mut out = Vec::new();
    seal(text.as_bytes(), &mut out, &mut Sealer::new(), 1 << 20).expect("seals");
    String::from_utf8(out).expect("UTF-8")
}

fn options(head: Option<Digest>) -> VerifyOptions {
    VerifyOptions {
        head,
        max_line_bytes: 1 << 20,
    }
}

#[test]
fn the_documented_vectors_hold() {
    let doc = std::fs::read_to_string(root().join("docs/chain-format.md")).unwrap();
    for name in ["a", "b"] {
        let input = vector(&doc, name, "input");
        let hashed = vector(&doc, name, "hashed");
        let hashes = vector(&doc, name, "hashes");
        let sealed = vector(&doc, name, "sealed");
        // What we write is what the document says.
        assert_eq!(seal_text(&input), sealed, "vector {name}: sealed log");
        let mut prev = GENESIS;
        for ((hashed, hash), line) in hashed.lines().zip(hashes.lines()).zip(sealed.lines()) {
            // Each hash is plain SHA-256 of the bytes the document shows...
            assert_eq!(Digest::of(hashed.as_bytes()).hex(), hash, "vector {name}");
            // ...which are the canonical form of the sealed record without `hash`.
            let mut record: Map<String, Value> = serde_json::from_str(line).unwrap();
            assert_eq!(record.remove("hash"), Some(Value::from(hash)));
            assert_eq!(record["prev"], Value::from(prev.hex()));
            let mut canonical = Vec::new();
            canonicalize(&serde_json::to_string(&record).unwrap(), &mut canonical).unwrap();
            assert_eq!(String::from_utf8(canonical).unwrap(), hashed);
            prev = Digest::parse(hash).expect("a hash");
        }
        assert_eq!(hashed.lines().count(), input.lines().count());
        let verified = verify(sealed.as_bytes(), &options(Some(prev))).unwrap();
        assert_eq!(verified.broken, None, "vector {name}");
        assert_eq!(verified.records, input.lines().count() as u64);
    }
}

/// A temporary directory with `log.jsonl` sealed from `records` lines.
struct Sealed {
    dir: tempfile::TempDir,
    lines: Vec<String>,
    head: String,
}

impl Sealed {
    fn new(records: &[&str]) -> Sealed {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.jsonl");
        std::fs::write(&plain, records.join("\n") + "\n").unwrap();
        let sealed = dir.path().join("log.jsonl");
        let output = run(&[
            "seal",
            plain.to_str().unwrap(),
            "-o",
            sealed.to_str().unwrap(),
        ]);
        assert_eq!(output.status.code(), Some(0), "{output:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        let head = stderr
            .trim()
            .rsplit(' ')
            .next()
            .expect("seal says the head")
            .to_string();
        let lines = std::fs::read_to_string(&sealed)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        Sealed { dir, lines, head }
    }

    /// Writes `lines` as a log and verifies it: exit status and the JSON `chain` line.
    fn verify(&self, lines: &[String], extra: &[&str]) -> (Option<i32>, Value) {
        let path = self.dir.path().join("copy.jsonl");
        let mut text = lines.join("\n");
        text.push('\n');
        std::fs::write(&path, text).unwrap();
        let mut args = vec!["verify", path.to_str().unwrap(), "--output", "json"];
        args.extend(extra);
        let output = run(&args);
        let text = stdout(&output);
        let chain = text
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|value| value["type"] == "chain")
            .unwrap_or_else(|| panic!("no chain line:\n{text}"));
        (output.status.code(), chain)
    }
}

const RECORDS: [&str; 4] = [
    r#"{"time":"2025-04-12T10:18:03Z","id":"case-http-005","event":"dispatch_started"}"#,
    r#"{"time":"2025-04-12T10:18:03Z","id":"case-http-005","event":"remote_committed"}"#,
    r#"{"time":"2025-04-12T10:18:08Z","id":"case-http-005","event":"client_timeout"}"#,
    r#"{"time":"2025-04-12T10:18:08Z","id":"case-http-005","event":"result","category":"outcome_unknown"}"#,
];

#[track_caller]
fn assert_broken(have: (Option<i32>, Value), kind: &str, line: u64) {
    let (status, chain) = have;
    assert_eq!(status, Some(1), "{chain}");
    assert_eq!(chain["intact"], false, "{chain}");
    assert_eq!(chain["kind"], kind, "{chain}");
    assert_eq!(chain["line"], line, "{chain}");
}

#[test]
fn the_tamper_matrix() {
    let sealed = Sealed::new(&RECORDS);
    let lines = &sealed.lines;
    let head = sealed.head.as_str();

    let (status, chain) = sealed.verify(lines, &[]);
    assert_eq!(status, Some(0), "{chain}");
    assert_eq!(chain["records"], 4);
    assert_eq!(chain["head"], head);
    assert_eq!(sealed.verify(lines, &["--head", head]).0, Some(0));

    // A field changed: the record no longer hashes to its `hash`.
    let mut modified = lines.clone();
    modified[2] = modified[2].replace("client_timeout", "client_tmeout");
    let have = sealed.verify(&modified, &[]);
    let expected = have.1["expected"].as_str().unwrap().to_string();
    assert_ne!(expected, have.1["found"].as_str().unwrap());
    assert!(lines[2].contains(have.1["found"].as_str().unwrap()));
    assert_broken(have, "modified", 3);

    // Deleted, inserted, reordered: a `prev` that is not the hash of the record before.
    let deleted: Vec<String> = [0, 2, 3].iter().map(|&i| lines[i].clone()).collect();
    assert_broken(sealed.verify(&deleted, &[]), "relinked", 2);
    let other = Sealed::new(&[r#"{"event":"forged"}"#]);
    let mut inserted = lines.clone();
    inserted.insert(1, other.lines[0].clone());
    assert_broken(sealed.verify(&inserted, &[]), "relinked", 2);
    let reordered: Vec<String> = [0, 2, 1, 3].iter().map(|&i| lines[i].clone()).collect();
    assert_broken(sealed.verify(&reordered, &[]), "relinked", 2);
    let mut duplicated = lines.clone();
    duplicated.insert(2, lines[1].clone());
    assert_broken(sealed.verify(&duplicated, &[]), "relinked", 3);

    // Truncated: the chain alone cannot tell; the pinned head can.
    let truncated = lines[..3].to_vec();
    assert_eq!(sealed.verify(&truncated, &[]).0, Some(0));
    assert_broken(
        sealed.verify(&truncated, &["--head", head]),
        "head-mismatch",
        3,
    );

    // The genesis changed: the first `prev` is not 64 zeros.
    let mut genesis = lines.clone();
    genesis[0] = genesis[0].replace(&"0".repeat(64), &"1".repeat(64));
    assert_broken(sealed.verify(&genesis, &[]), "bad-genesis", 1);
    // Cut from the front: the new first record's `prev` is not the genesis either.
    assert_broken(sealed.verify(&lines[1..], &[]), "bad-genesis", 1);

    // Chain fields missing or malformed.
    let mut missing = lines.clone();
    let record: Map<String, Value> = serde_json::from_str(&missing[1]).unwrap();
    let mut without_hash = record.clone();
    without_hash.remove("hash");
    missing[1] = serde_json::to_string(&without_hash).unwrap();
    assert_broken(sealed.verify(&missing, &[]), "missing-field", 2);
    let mut malformed = lines.clone();
    let mut upper = record.clone();
    upper.insert(
        "prev".into(),
        Value::from(record["prev"].as_str().unwrap().to_uppercase()),
    );
    malformed[1] = serde_json::to_string(&upper).unwrap();
    assert_broken(sealed.verify(&malformed, &[]), "malformed-field", 2);
    let mut junk = lines.clone();
    junk[3] = "not json".into();
    assert_broken(sealed.verify(&junk, &[]), "malformed-record", 4);

    // Decided and documented: re-serializing (whitespace, member order, escapes) is not
    // tampering, since the canonical form, and so every hash, is unchanged.
    let reserialized: Vec<String> = lines
        .iter()
        .map(|line| {
            let value: Value = serde_json::from_str(line).unwrap();
            serde_json::to_string_pretty(&value)
                .unwrap()
                .replace('\n', " ")
                .replace("client_timeout", "client\\u005ftimeout")
        })
        .collect();
    assert_ne!(&reserialized, lines);
    assert_eq!(sealed.verify(&reserialized, &["--head", head]).0, Some(0));
}

#[test]
fn a_replaced_tail_is_caught_by_the_pinned_head_only() {
    let sealed = Sealed::new(&RECORDS);
    let dir = sealed.dir.path();
    let log = dir.join("log.jsonl");
    let kept = sealed.lines[..2].join("\n") + "\n";
    std::fs::write(&log, kept).unwrap();
    let tail = dir.join("tail.jsonl");
    std::fs::write(
        &tail,
        r#"{"event":"result","category":"confirmed_failure"}"#,
    )
    .unwrap();
    let append = run(&[
        "seal",
        tail.to_str().unwrap(),
        "-o",
        log.to_str().unwrap(),
        "--append",
    ]);
    assert_eq!(append.status.code(), Some(0), "{append:?}");
    let log = log.to_str().unwrap();
    assert_eq!(run(&["verify", log]).status.code(), Some(0));
    let pinned = run(&["verify", log, "--head", &sealed.head]);
    assert_eq!(pinned.status.code(), Some(1));
    assert!(
        stdout(&pinned).contains("error[broken-chain]: head mismatch"),
        "{}",
        stdout(&pinned)
    );
}

#[test]
fn a_signed_head_is_checked_with_the_public_key() {
    // RFC 8032 §7.1, test 1.
    let secret = "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    let public = "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("secret.key"), format!("{secret}\n")).unwrap();
    std::fs::write(path("public.key"), public).unwrap();
    std::fs::write(path("other.key"), "11".repeat(32)).unwrap();
    std::fs::write(path("plain.jsonl"), RECORDS.join("\n")).unwrap();
    let sealed = run(&[
        "seal",
        &path("plain.jsonl"),
        "-o",
        &path("log.jsonl"),
        "--key",
        &path("secret.key"),
    ]);
    assert_eq!(sealed.status.code(), Some(0), "{sealed:?}");
    let signature: Value =
        serde_json::from_str(&std::fs::read_to_string(path("log.jsonl.sig")).unwrap()).unwrap();
    assert_eq!(signature["public_key"], public);

    let verify_with = |key: &str| {
        let output = run(&[
            "verify",
            &path("log.jsonl"),
            "--key",
            &path(key),
            "--output",
            "json",
        ]);
        let chain: Value = stdout(&output)
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .find(|value| value["type"] == "chain")
            .unwrap();
        (output.status.code(), chain["kind"].clone())
    };
    assert_eq!(verify_with("public.key"), (Some(0), Value::Null));
    assert_eq!(
        verify_with("other.key"),
        (Some(1), Value::from("bad-signature"))
    );

    // A cut log still links up, but its head is not the signed one.
    let log = std::fs::read_to_string(path("log.jsonl")).unwrap();
    let cut: String = log
        .lines()
        .take(3)
        .map(|line| format!("{line}\n"))
        .collect();
    std::fs::write(path("log.jsonl"), cut).unwrap();
    assert_eq!(
        verify_with("public.key"),
        (Some(1), Value::from("head-mismatch"))
    );
    std::fs::write(path("log.jsonl"), &log).unwrap();

    // A signature that is not the key's, or none at all.
    let mut forged = signature.clone();
    let text = forged["signature"].as_str().unwrap().to_string();
    let flipped = if text.starts_with('0') { "1" } else { "0" };
    forged["signature"] = Value::from(format!("{flipped}{}", &text[1..]));
    std::fs::write(path("log.jsonl.sig"), forged.to_string()).unwrap();
    assert_eq!(
        verify_with("public.key"),
        (Some(1), Value::from("bad-signature"))
    );
    std::fs::remove_file(path("log.jsonl.sig")).unwrap();
    assert_eq!(
        verify_with("public.key"),
        (Some(1), Value::from("bad-signature"))
    );
    // Without --key, the chain alone is checked.
    assert_eq!(run(&["verify", &path("log.jsonl")]).status.code(), Some(0));
}

#[test]
fn seal_appends_continues_and_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(path("a.jsonl"), format!("{}\n{}\n", RECORDS[0], RECORDS[1])).unwrap();
    std::fs::write(path("b.jsonl"), format!("{}\n{}\n", RECORDS[2], RECORDS[3])).unwrap();
    // Two files sealed at once, and one then the other with --append: the same log.
    let both = run(&["seal", &path("a.jsonl"), &path("b.jsonl")]);
    assert_eq!(both.status.code(), Some(0));
    for (file, extra) in [("a.jsonl", None), ("b.jsonl", Some("--append"))] {
        let mut args = vec![
            "seal".to_string(),
            path(file),
            "-o".into(),
            path("log.jsonl"),
        ];
        args.extend(extra.map(String::from));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_eq!(run(&args).status.code(), Some(0));
    }
    assert_eq!(
        std::fs::read_to_string(path("log.jsonl")).unwrap(),
        stdout(&both)
    );

    // A sealed log is not sealed again; the records before a bad line are written.
    let again = run(&["seal", &path("log.jsonl")]);
    assert_eq!(again.status.code(), Some(2));
    let stderr = String::from_utf8(again.stderr).unwrap();
    assert!(stderr.contains("already has a `hash` member"), "{stderr}");
    std::fs::write(path("bad.jsonl"), format!("{}\n{{oops\n", RECORDS[0])).unwrap();
    let bad = run(&["seal", &path("bad.jsonl")]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(stdout(&bad).lines().count(), 1);
    let said = String::from_utf8(bad.stderr).unwrap();
    assert!(
        said.contains("bad.jsonl:2:"),
        "the bad line is located: {said}"
    );
    assert!(
        said.contains("the record before it was sealed and written; nothing after it was"),
        "{said}"
    );
    std::fs::write(path("bad.jsonl"), format!("{{oops\n{}\n", RECORDS[0])).unwrap();
    let first = run(&["seal", &path("bad.jsonl")]);
    assert_eq!(first.status.code(), Some(2));
    assert_eq!(stdout(&first), "");
    let said = String::from_utf8(first.stderr).unwrap();
    assert!(said.contains("no record was sealed or written"), "{said}");
    // Appending to a log that does not verify adds nothing.
    let log = std::fs::read_to_string(path("log.jsonl")).unwrap();
    std::fs::write(path("broken.jsonl"), log.replace("dispatch", "dispatcj")).unwrap();
    let refused = run(&[
        "seal",
        &path("a.jsonl"),
        "-o",
        &path("broken.jsonl"),
        "--append",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(path("broken.jsonl")).unwrap(),
        log.replace("dispatch", "dispatcj")
    );
    // Sealing a file onto itself would destroy it.
    let onto = run(&["seal", &path("a.jsonl"), "-o", &path("a.jsonl")]);
    assert_eq!(onto.status.code(), Some(2));
    assert!(
        std::fs::read_to_string(path("a.jsonl"))
            .unwrap()
            .contains("dispatch_started")
    );
}

#[test]
fn verify_reports_in_human_and_json_and_exits_2_when_unreadable() {
    let sealed = Sealed::new(&RECORDS);
    let log = sealed.dir.path().join("log.jsonl");
    let log = log.to_str().unwrap();
    let human = run(&["verify", log]);
    assert_eq!(
        stdout(&human),
        format!(
            "{log}: intact, 4 records, head {}\nverified 1 log, 4 records: every chain is intact\n",
            sealed.head
        )
    );
    let json = stdout(&run(&["verify", log, "--output", "json"]));
    let summary: Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
    assert_eq!(
        summary,
        serde_json::json!({"type":"summary","files":1,"records":4,"broken":0,"errors":0})
    );
    let missing = run(&["verify", "no/such/log.jsonl", "--output", "json"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(stdout(&missing).contains("\"code\":\"unreadable-input\""));
    assert_eq!(
        run(&["verify", log, "--head", "abc"]).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["verify", log, log, "--head", &sealed.head])
            .status
            .code(),
        Some(2)
    );
}

/// `verify --output json`: one `chain` object per log, then the summary.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct ChainLine {
    r#type: String,
    file: String,
    intact: bool,
    records: u64,
    head: Option<String>,
    kind: Option<String>,
    line: Option<u64>,
    expected: Option<String>,
    found: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct VerifySummary {
    r#type: String,
    files: u64,
    records: u64,
    broken: u64,
    errors: u64,
}

#[test]
fn verify_json_follows_the_contract() {
    let sealed = Sealed::new(&RECORDS);
    let mut broken = sealed.lines.clone();
    broken.swap(1, 2);
    let (_, chain) = sealed.verify(&broken, &[]);
    let line: ChainLine = serde_json::from_value(chain).unwrap();
    assert_eq!(line.r#type, "chain");
    assert!(!line.intact);
    assert_eq!(
        (line.kind.as_deref(), line.line, line.records),
        (Some("relinked"), Some(2), 1)
    );
    assert!(line.expected.is_some() && line.found.is_some() && line.head.is_some());
    assert!(line.file.ends_with("copy.jsonl"));

    let log = sealed.dir.path().join("log.jsonl");
    let output = run(&[
        "verify",
        log.to_str().unwrap(),
        "no/such.jsonl",
        "--output",
        "json",
    ]);
    let text = stdout(&output);
    let summary: VerifySummary = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(summary.r#type, "summary");
    assert_eq!(
        (
            summary.files,
            summary.records,
            summary.broken,
            summary.errors
        ),
        (2, 4, 0, 1)
    );
    for line in text
        .lines()
        .filter(|line| line.contains("\"type\":\"chain\""))
    {
        let line: ChainLine = serde_json::from_str(line).unwrap();
        assert!(line.intact && line.kind.is_none() && line.expected.is_none());
    }
}

/// The shipped sealed example verifies, and checks clean with `--verify-chain`.
fn shipped_sealed() -> PathBuf {
    root().join("traces/fixture_agrees_with_tool/pass/sealed-witnesses-agree.jsonl")
}

#[test]
fn check_verify_chain_errors_on_a_broken_chain_and_says_what_is_unverified() {
    let sealed = shipped_sealed();
    let sealed = sealed.to_str().unwrap();
    assert_eq!(run(&["verify", sealed]).status.code(), Some(0));
    let spec = "specs/fixture_agrees_with_tool.tg";
    let ok = run(&["check", spec, "--traces", sealed, "--verify-chain"]);
    assert_eq!(ok.status.code(), Some(0), "{}", stdout(&ok));

    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.jsonl");
    let text = std::fs::read_to_string(sealed).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(5);
    std::fs::write(&copy, lines.join("\n") + "\n").unwrap();
    let copy = copy.to_str().unwrap();
    let broken = run(&[
        "check",
        spec,
        "--traces",
        copy,
        "--verify-chain",
        "--output",
        "json",
    ]);
    assert_eq!(broken.status.code(), Some(2));
    let errors: Vec<Value> = stdout(&broken)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .filter(|value: &Value| value["type"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["code"], "broken-chain");
    assert_eq!(errors[0]["line"], 6);
    assert_eq!(
        errors[0]["hint"],
        "the 5 records before line 6 verified; this line and every one after it are unverified"
    );
    // Without the flag, the same log checks as any other.
    assert_eq!(
        run(&["check", spec, "--traces", copy]).status.code(),
        Some(0)
    );
    // An unsealed log has no chain to verify.
    let plain = "traces/fixture_agrees_with_tool/pass/witnesses-agree.jsonl";
    let unsealed = run(&["check", spec, "--traces", plain, "--verify-chain"]);
    assert_eq!(unsealed.status.code(), Some(2));
    let said = stdout(&unsealed);
    assert!(said.contains("missing chain field"), "{said}");
    assert!(
        said.contains("no record verified: this line and every one after it are unverified"),
        "{said}"
    );
}

#[test]
fn logs_of_many_batches_seal_and_verify_as_record_by_record() {
    // More lines than one batch holds (8,192), so that reading, the work on a batch
    // and the links overlap on threads; a short log is sealed on the calling thread.
    let records: Vec<String> = (0..20_000)
        .map(|i| format!(r#"{{"z":{i},"id":"op-{}","a":[{i},"x"]}}"#, i % 97))
        .collect();
    let log = records.join("\n") + "\n";
    let mut sealed = Vec::new();
    let mut sealer = Sealer::new();
    seal(log.as_bytes(), &mut sealed, &mut sealer, 1 << 20).expect("seals");
    // The same records sealed one at a time, with no batch and no thread.
    let mut one = Sealer::new();
    let mut expected = Vec::new();
    let mut line = Vec::new();
    for record in &records {
        one.seal(record, &mut line).expect("seals");
        expected.extend_from_slice(&line);
        expected.push(b'\n');
    }
    assert!(
        sealed == expected,
        "batched sealing differs from sealing record by record"
    );
    assert_eq!(sealer.head(), one.head());

    let verified = verify(&sealed[..], &options(Some(one.head()))).expect("reads");
    assert_eq!(verified.records, 20_000);
    assert_eq!(verified.broken, None);
    assert_eq!(verified.head, Some(one.head()));

    // A record of the third batch changed: the break is found there, after every
    // record before it verified.
    let text = String::from_utf8(sealed).expect("UTF-8");
    let mut lines: Vec<&str> = text.lines().collect();
    let changed = lines[17_000].replacen(r#""id":"op-"#, r#""id":"oq-"#, 1);
    lines[17_000] = &changed;
    let tampered = lines.join("\n") + "\n";
    let verified = verify(tampered.as_bytes(), &options(None)).expect("reads");
    let broken = verified.broken.expect("the change is caught");
    assert_eq!(broken.loc.line, 17_001);
    assert_eq!(verified.records, 17_000);
}

#[test]
fn seal_reads_standard_input() {
    let output = tracegate()
        .args(["seal", "-"])
        .write_stdin(format!("{}\n", RECORDS[0]))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let verified = verify(&output.stdout[..], &options(None)).unwrap();
    assert_eq!(verified.records, 1);
    assert!(Path::new(&shipped_sealed()).exists());
}

/// Any JSON value, bounded in depth and size, with awkward strings and numbers.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,8}".prop_map(Value::from),
        "[\"\\\\/\\u{0}-\\u{1f}\\u{7f}é😀\\u{fb33}]{0,4}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            proptest::collection::btree_map(member_name(), inner, 0..4)
                .prop_map(|map| Value::Object(map.into_iter().collect())),
        ]
    })
}

/// Member names that often share prefixes and mix characters whose UTF-8, UTF-16 and
/// escaped orders differ.
fn member_name() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,6}",
        "[ab !\"\\\\\u{1}\u{7f}é\u{e000}\u{fb33}😀]{0,3}",
    ]
}

/// A record: an object without the chain's own members.
fn json_record() -> impl Strategy<Value = Map<String, Value>> {
    let name = prop_oneof!["[a-z_é😀]{1,6}", member_name(), "(h|p|q)[a-z]{0,4}"];
    proptest::collection::btree_map(name, json_value(), 0..5).prop_map(|map| {
        map.into_iter()
            .filter(|(name, _)| name != "prev" && name != "hash")
            .collect()
    })
}

/// One change to a record's content (its own members, not the chain's).
#[derive(Debug, Clone)]
enum Change {
    Add(String, Value),
    Remove(usize),
    Replace(usize, Value),
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        ("[a-z]{1,4}", json_value())
            .prop_map(|(name, value)| Change::Add(format!("x_{name}"), value)),
        any::<usize>().prop_map(Change::Remove),
        (any::<usize>(), json_value()).prop_map(|(i, value)| Change::Replace(i, value)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn seal_then_verify_passes_and_any_content_change_fails(
        records in proptest::collection::vec(json_record(), 1..8),
        target in any::<usize>(),
        change in change(),
    ) {
        let text: String = records
            .iter()
            .map(|record| serde_json::to_string(record).unwrap() + "\n")
            .collect();
        let sealed = seal_text(&text);
        let verified = verify(sealed.as_bytes(), &options(None)).unwrap();
        prop_assert_eq!(verified.broken, None);
        prop_assert_eq!(verified.records, records.len() as u64);

        let mut lines: Vec<String> = sealed.lines().map(str::to_string).collect();
        // Each hash is SHA-256 of the canonical record without `hash`, computed here the
        // plain way, and each line is the canonical record.
        for line in &lines {
            let mut record: Map<String, Value> = serde_json::from_str(line).unwrap();
            let hash = record.remove("hash").unwrap();
            let mut canonical = Vec::new();
            canonicalize(&serde_json::to_string(&record).unwrap(), &mut canonical).unwrap();
            prop_assert_eq!(Value::from(Digest::of(&canonical).hex()), hash);
            canonicalize(line, &mut canonical).unwrap();
            prop_assert_eq!(canonical, line.as_bytes());
        }
        let index = target % lines.len();
        let mut record: Map<String, Value> = serde_json::from_str(&lines[index]).unwrap();
        let own: Vec<String> = record
            .keys()
            .filter(|name| *name != "prev" && *name != "hash")
            .cloned()
            .collect();
        let changed = match change {
            Change::Add(name, value) => record.insert(name, value).is_none(),
            Change::Remove(i) if !own.is_empty() => record.remove(&own[i % own.len()]).is_some(),
            Change::Replace(i, value) if !own.is_empty() => {
                let old = record.insert(own[i % own.len()].clone(), value.clone());
                old.is_some_and(|old| !same_json(&old, &value))
            }
            _ => false,
        };
        prop_assume!(changed);
        lines[index] = serde_json::to_string(&record).unwrap();
        let verified = verify(lines.join("\n").as_bytes(), &options(None)).unwrap();
        let broken = verified.broken.expect("a changed record breaks the chain");
        prop_assert_eq!(broken.loc.line, index as u64 + 1);
        prop_assert_eq!(broken.error.kind(), "modified");
    }

    #[test]
    fn decimals_agree_with_an_independent_implementation(
        text in "-?(0|[1-9][0-9]{0,9})\\.[0-9]{1,12}",
    ) {
        let mut ours = Vec::new();
        canonicalize(&text, &mut ours).unwrap();
        let value: f64 = text.parse().unwrap();
        let theirs = serde_json_canonicalizer::to_string(&value).unwrap();
        prop_assert_eq!(String::from_utf8(ours).unwrap(), theirs);
    }

    #[test]
    fn canonical_form_agrees_with_an_independent_implementation(value in json_value()) {
        let text = serde_json::to_string_pretty(&value).unwrap();
        let mut ours = Vec::new();
        canonicalize(&text, &mut ours).unwrap();
        let theirs = serde_json_canonicalizer::to_string(&value).unwrap();
        prop_assert_eq!(String::from_utf8(ours).unwrap(), theirs);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Records are read the fast way when they are already canonical: compact
    /// serde_json text often is, and the independent implementation's output always
    /// is. Either way the canonical form is the independent one.
    #[test]
    fn records_canonical_or_not_agree_with_an_independent_implementation(
        record in json_record(),
    ) {
        let value = Value::Object(record);
        let theirs = serde_json_canonicalizer::to_string(&value).unwrap();
        let mut scratch = Scratch::default();
        for text in [serde_json::to_string(&value).unwrap(), theirs.clone()] {
            let written = scratch.object(&text).unwrap().expect("an object");
            prop_assert_eq!(std::str::from_utf8(written.bytes).unwrap(), theirs.as_str());
        }
        // The members found in place (what `seal` writes from) are the same, in the
        // same order, whatever the spelling of the text.
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        for text in [serde_json::to_string(&value).unwrap(), theirs.clone(), pretty] {
            let members = scratch.members(&text).expect("members in place");
            let mut joined = b"{".to_vec();
            for (i, (name, value)) in members.iter().enumerate() {
                if i > 0 {
                    joined.push(b',');
                }
                joined.extend_from_slice(name);
                joined.push(b':');
                joined.extend_from_slice(value);
            }
            joined.push(b'}');
            prop_assert_eq!(String::from_utf8(joined).unwrap(), theirs.clone());
        }
    }
}

/// Whether two values have one canonical form (`1.0` and `1` do).
fn same_json(a: &Value, b: &Value) -> bool {
    let canonical = |value: &Value| {
        let mut out = Vec::new();
        canonicalize(&value.to_string(), &mut out).unwrap();
        out
    };
    canonical(a) == canonical(b)
}
