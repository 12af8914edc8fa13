//! What `seal`, `verify` and `check`'s `--verify-chain` and `--join` share: opening a
//! log (`-` is standard input), the `broken-chain` diagnostic, and the signature file
//! `seal --key` writes beside a log. The work is done by [`crate::chain`] and
//! [`crate::joined`].

use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::chain::sign::verify_head;
use crate::chain::verify::{Broken, VerifyOptions};
use crate::chain::{ChainError, Digest};
use crate::check::{CheckOptions, Outcome};
use crate::diagnostic::{Code, Diagnostic, TraceSite};
use crate::machine::Machine;
use crate::trace::adapters::InputOptions;
use crate::trace::join::TimeField;
use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

pub(super) fn open(path: &Path) -> io::Result<Box<dyn BufRead>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(BufReader::new(io::stdin())));
    }
    Ok(Box::new(BufReader::with_capacity(
        1 << 16,
        File::open(path)?,
    )))
}

/// What `seal --key` writes beside the log: the head, the key that signed it and the
/// signature over the head's 64 hex digits.
#[derive(Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SignatureFile {
    pub(super) head: String,
    pub(super) public_key: String,
    pub(super) signature: String,
}

/// Where the signature of the sealed log `log` is: `log` + `.sig`.
pub(super) fn signature_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

/// Checks `log`'s signature file against `public` and the verified head.
pub(super) fn check_signature(
    log: &Path,
    public: &str,
    head: Option<Digest>,
) -> Result<(), ChainError> {
    let bad = |reason: String| ChainError::BadSignature { reason };
    let path = signature_path(log);
    let text = std::fs::read_to_string(&path)
        .map_err(|err| bad(format!("cannot read `{}`: {err}", path.display())))?;
    let file: SignatureFile = serde_json::from_str(&text).map_err(|err| {
        bad(format!(
            "`{}` is not a signature file: {err}",
            path.display()
        ))
    })?;
    let signed = Digest::parse(&file.head)
        .ok_or_else(|| bad(format!("`{}` has no 64-hex-digit head", path.display())))?;
    match verify_head(public, signed, &file.signature) {
        Ok(true) => {}
        Ok(false) => {
            return Err(bad(format!(
                "`{}` is not signed by this key",
                path.display()
            )));
        }
        Err(err) => return Err(bad(err.to_string())),
    }
    if head != Some(signed) {
        return Err(ChainError::HeadMismatch {
            expected: signed,
            found: head,
        });
    }
    Ok(())
}

/// The diagnostic for a chain broken at `broken`, after `verified` good records.
pub(super) fn broken_chain(path: &Path, broken: &Broken, verified: u64) -> Diagnostic {
    let mut diagnostic = Diagnostic::new(Code::BrokenChain, broken.error.to_string());
    diagnostic.trace = Some(TraceSite {
        file: Arc::from(path),
        trace: None,
        loc: broken.loc.clone(),
    });
    let records = if verified == 1 { "record" } else { "records" };
    diagnostic.hint = Some(match broken.error {
        ChainError::BadSignature { .. } => format!(
            "all {verified} {records} link up, but nothing vouches for the head: sign it with `seal --key` and keep the public key apart from the log"
        ),
        ChainError::HeadMismatch { .. } => format!(
            "all {verified} {records} link up, but the log does not end at the pinned head: records are missing at the end, or the tail was replaced"
        ),
        _ if verified == 0 => {
            "no record verified: this line and every one after it are unverified".to_string()
        }
        _ => format!(
            "the {verified} {records} before line {} verified; this line and every one after it are unverified",
            broken.loc.line
        ),
    });
    diagnostic
}

pub(super) fn to_json(value: &impl Serialize) -> io::Result<String> {
    serde_json::to_string(value).map_err(io::Error::other)
}

/// `check --verify-chain`: verifies each trace file before it is checked; a broken or
/// unsealed one is a `broken-chain` error.
pub(super) fn verify_chains(paths: &[PathBuf], max_line_bytes: Option<usize>) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    let options = VerifyOptions {
        head: None,
        max_line_bytes: max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
    };
    for path in paths {
        match open(path).and_then(|input| crate::chain::verify::verify(input, &options)) {
            Ok(verified) => {
                if let Some(broken) = &verified.broken {
                    found.push(broken_chain(path, broken, verified.records));
                }
            }
            Err(err) => found.push(Diagnostic::unreadable(path, &err)),
        }
    }
    found
}

/// `check --join`: every trace file, in whatever format, merged into one stream by
/// `time`.
pub(super) fn check_join(
    specs: &[Machine],
    paths: &[PathBuf],
    options: &CheckOptions,
    input: &InputOptions,
    time: &TimeField,
) -> Outcome {
    let mut inputs = Vec::new();
    let mut unopened = Vec::new();
    // Where the findings of each stream quote their records from.
    let mut streams = Vec::new();
    for path in paths {
        match crate::trace::join::open_quoted(path, input, options.max_line_bytes) {
            Ok((opened, quoted)) => {
                streams.extend(quoted.map(|recent| (path.as_path(), recent)));
                inputs.push((Arc::from(path.as_path()), opened));
            }
            Err(err) => unopened.push(Diagnostic::unreadable(path, &err)),
        }
    }
    let mut outcome = crate::joined::check_joined(specs, inputs, time.clone(), options);
    for diagnostic in &mut outcome.diagnostics {
        let file = diagnostic.trace.as_ref().map(|site| site.file.clone());
        let stream = file.and_then(|file| streams.iter().find(|(path, _)| **path == *file));
        if let Some((_, recent)) = stream {
            crate::check::quote(diagnostic, recent);
        }
    }
    unopened.append(&mut outcome.diagnostics);
    outcome.diagnostics = unopened;
    outcome
}
