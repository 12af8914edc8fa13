//! The commands and `check` flags of hash-chained and joined logs: `seal`, `verify`,
//! `check --verify-chain` and `check --join`. The work is done by [`crate::chain`] and
//! [`crate::joined`]; this module opens the files and writes the results.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::{Exit, OutputFormat, Report};
use crate::chain::seal::{SealFailure, Sealer};
use crate::chain::sign::{SecretKey, verify_head};
use crate::chain::verify::{Broken, Verified, VerifyOptions};
use crate::chain::{ChainError, Digest};
use crate::check::{CheckOptions, Outcome};
use crate::diagnostic::render::{human, json};
use crate::diagnostic::{Code, Diagnostic, TraceSite};
use crate::machine::Machine;
use crate::trace::Location;
use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

#[derive(Debug, clap::Args)]
pub struct SealArgs {
    /// JSONL logs to seal, in order, into one chain (`-` reads standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write the sealed log to this file instead of standard output.
    #[arg(long = "output", short = 'o', value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Continue the sealed log OUT (verified first) instead of starting a new one.
    #[arg(long, requires = "output")]
    pub append: bool,
    /// Lines longer than this many bytes are refused, not read.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
    /// Sign the head with this Ed25519 secret key (a file of 64 hex digits, the seed)
    /// into OUT.sig.
    #[arg(long, value_name = "SECRET_KEY_FILE", requires = "output")]
    pub key: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// Sealed logs; each is its own chain (`-` reads standard input).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Human)]
    pub output: OutputFormat,
    /// The hash the last record must have (64 hex digits, as `seal` and `verify`
    /// print it): catches a log cut short or with its tail replaced. One file only.
    #[arg(long, value_name = "HASH")]
    pub head: Option<String>,
    /// Check FILE.sig, the signature `seal --key` wrote over each log's head, with this
    /// Ed25519 public key (a file of 64 hex digits).
    #[arg(long, value_name = "PUBLIC_KEY_FILE")]
    pub key: Option<PathBuf>,
    /// Lines longer than this many bytes are reported, not read.
    #[arg(long, value_name = "BYTES")]
    pub max_line_bytes: Option<usize>,
}

fn open(path: &Path) -> io::Result<Box<dyn BufRead>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(BufReader::new(io::stdin())));
    }
    Ok(Box::new(BufReader::with_capacity(
        1 << 16,
        File::open(path)?,
    )))
}

fn unreadable(path: &Path, err: &io::Error) -> Diagnostic {
    let mut diagnostic = Diagnostic::new(
        Code::UnreadableInput,
        format!("cannot read `{}`: {err}", path.display()),
    );
    diagnostic.trace = Some(TraceSite {
        file: Arc::from(path),
        trace: None,
        loc: Location::default(),
    });
    diagnostic
}

/// `tracegate seal`: the sealed log to OUT or `out`, what happened to stderr.
pub fn seal(args: SealArgs, out: &mut dyn Write) -> io::Result<Exit> {
    let mut stderr = io::stderr();
    let mut errors = Report::new(&mut stderr, OutputFormat::Human);
    errors.quiet_summary();
    let max = args.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    if let Some(output) = &args.output {
        let same = |path: &PathBuf| {
            path.canonicalize().ok().is_some()
                && path.canonicalize().ok() == output.canonicalize().ok()
        };
        if args.files.iter().any(same) {
            eprintln!(
                "error: `{}` is both an input and the output; seal into another file",
                output.display()
            );
            return Ok(Exit::Error);
        }
    }
    let secret = match &args.key {
        None => None,
        Some(path) => match std::fs::read_to_string(path)
            .map_err(|err| err.to_string())
            .and_then(|text| SecretKey::parse(&text).map_err(|err| err.to_string()))
        {
            Ok(key) => Some(key),
            Err(err) => {
                eprintln!("error: cannot use the key `{}`: {err}", path.display());
                return Ok(Exit::Error);
            }
        },
    };
    let mut sealer = Sealer::new();
    if let (true, Some(output)) = (args.append, &args.output) {
        if output.exists() {
            let verified = match File::open(output).and_then(|file| {
                let options = VerifyOptions {
                    head: None,
                    max_line_bytes: max,
                };
                crate::chain::verify::verify(BufReader::new(file), &options)
            }) {
                Ok(verified) => verified,
                Err(err) => {
                    errors.emit(&unreadable(output, &err))?;
                    return Ok(Exit::Error);
                }
            };
            if let Some(broken) = &verified.broken {
                errors.emit(&broken_chain(output, broken, verified.records))?;
                eprintln!(
                    "error: `{}` does not verify; nothing was appended",
                    output.display()
                );
                return Ok(Exit::Error);
            }
            if let Some(head) = verified.head {
                sealer = Sealer::after(head);
            }
        }
    }
    let mut file_out;
    let sink: &mut dyn Write = match &args.output {
        Some(path) => {
            let opened = if args.append {
                File::options().create(true).append(true).open(path)
            } else {
                File::create(path)
            };
            file_out = match opened {
                Ok(file) => io::BufWriter::new(file),
                Err(err) => {
                    eprintln!("error: cannot write `{}`: {err}", path.display());
                    return Ok(Exit::Error);
                }
            };
            &mut file_out
        }
        None => out,
    };
    for path in &args.files {
        let input = match open(path) {
            Ok(input) => input,
            Err(err) => {
                sink.flush()?;
                errors.emit(&unreadable(path, &err))?;
                return Ok(Exit::Error);
            }
        };
        match crate::chain::seal::seal(input, sink, &mut sealer, max) {
            Ok(()) => {}
            Err(SealFailure::Io(err)) => {
                sink.flush()?;
                errors.emit(&unreadable(path, &err))?;
                return Ok(Exit::Error);
            }
            Err(SealFailure::Record { loc, error }) => {
                sink.flush()?;
                let mut diagnostic = Diagnostic::new(Code::MalformedRecord, error.to_string());
                diagnostic.trace = Some(TraceSite {
                    file: Arc::from(path.as_path()),
                    trace: None,
                    loc,
                });
                diagnostic.hint = Some(format!(
                    "the {} records before it were sealed and written; nothing after it was",
                    sealer.records()
                ));
                errors.emit(&diagnostic)?;
                return Ok(Exit::Error);
            }
        }
    }
    sink.flush()?;
    if let (Some(secret), Some(output)) = (&secret, &args.output) {
        let signature = SignatureFile {
            head: sealer.head().hex(),
            public_key: secret.public_hex(),
            signature: secret.sign(sealer.head()),
        };
        std::fs::write(
            signature_path(output),
            format!("{}\n", to_json(&signature)?),
        )?;
        eprintln!(
            "signed the head into `{}` (public key {})",
            signature_path(output).display(),
            signature.public_key
        );
    }
    eprintln!(
        "sealed {} record{}; head {}",
        sealer.records(),
        if sealer.records() == 1 { "" } else { "s" },
        sealer.head()
    );
    Ok(Exit::Success)
}

/// What `seal --key` writes beside the log: the head, the key that signed it and the
/// signature over the head's 64 hex digits.
#[derive(Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureFile {
    head: String,
    public_key: String,
    signature: String,
}

/// Where the signature of the sealed log `log` is: `log` + `.sig`.
fn signature_path(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".sig");
    PathBuf::from(name)
}

/// Checks `log`'s signature file against `public` and the verified head.
fn check_signature(log: &Path, public: &str, head: Option<Digest>) -> Result<(), ChainError> {
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
fn broken_chain(path: &Path, broken: &Broken, verified: u64) -> Diagnostic {
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
        _ => format!(
            "the {verified} {records} before line {} verified; this line and every one after it are unverified",
            broken.loc.line
        ),
    });
    diagnostic
}

/// One verified log, as a `verify --output json` line.
#[derive(Serialize)]
struct ChainLine<'a> {
    r#type: &'static str,
    file: String,
    intact: bool,
    records: u64,
    head: Option<String>,
    kind: Option<&'a str>,
    line: Option<u64>,
    expected: Option<String>,
    found: Option<String>,
}

#[derive(Serialize)]
struct VerifySummary {
    r#type: &'static str,
    files: u64,
    records: u64,
    broken: u64,
    errors: u64,
}

/// `tracegate verify`.
pub fn verify(args: VerifyArgs, out: &mut dyn Write) -> io::Result<Exit> {
    let head = match args.head.as_deref() {
        None => None,
        Some(text) => match Digest::parse(&text.to_ascii_lowercase()) {
            Some(digest) => Some(digest),
            None => {
                eprintln!("error: --head must be 64 hex digits, got `{text}`");
                return Ok(Exit::Error);
            }
        },
    };
    let public = match &args.key {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(text.trim().to_string()),
            Err(err) => {
                eprintln!("error: cannot read the key `{}`: {err}", path.display());
                return Ok(Exit::Error);
            }
        },
    };
    if head.is_some() && args.files.len() > 1 {
        eprintln!("error: --head pins the head of one log; name one file");
        return Ok(Exit::Error);
    }
    let options = VerifyOptions {
        head,
        max_line_bytes: args.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
    };
    let format = args.output;
    let styled = super::styled();
    let emit = |out: &mut dyn Write, diagnostic: &Diagnostic| match format {
        OutputFormat::Human => out.write_all(human::render(diagnostic, styled).as_bytes()),
        OutputFormat::Json => writeln!(out, "{}", json::render(diagnostic)),
    };
    let (mut files, mut records, mut broken_files, mut errors) = (0u64, 0u64, 0u64, 0u64);
    for path in &args.files {
        files += 1;
        let verified =
            match open(path).and_then(|input| crate::chain::verify::verify(input, &options)) {
                Ok(verified) => verified,
                Err(err) => {
                    errors += 1;
                    emit(out, &unreadable(path, &err))?;
                    continue;
                }
            };
        records += verified.records;
        let mut verified = verified;
        if let (None, Some(public)) = (&verified.broken, &public) {
            if let Err(error) = check_signature(path, public, verified.head) {
                verified.broken = Some(Broken {
                    loc: verified.last.clone(),
                    error,
                });
            }
        }
        if let Some(broken) = &verified.broken {
            broken_files += 1;
            emit(out, &broken_chain(path, broken, verified.records))?;
        }
        let line = chain_line(path, &verified);
        match format {
            OutputFormat::Json => writeln!(out, "{}", to_json(&line)?)?,
            OutputFormat::Human => writeln!(out, "{}", human_line(&line))?,
        }
    }
    match format {
        OutputFormat::Json => {
            let summary = VerifySummary {
                r#type: "summary",
                files,
                records,
                broken: broken_files,
                errors,
            };
            writeln!(out, "{}", to_json(&summary)?)?;
        }
        OutputFormat::Human => {
            let mut verdict = match broken_files {
                0 => "every chain is intact".to_string(),
                1 => "1 broken chain".to_string(),
                n => format!("{n} broken chains"),
            };
            if errors > 0 {
                verdict.push_str(&format!(", {errors} unreadable"));
            }
            writeln!(
                out,
                "verified {files} log{}, {records} record{}: {verdict}",
                if files == 1 { "" } else { "s" },
                if records == 1 { "" } else { "s" }
            )?;
        }
    }
    out.flush()?;
    Ok(if errors > 0 {
        Exit::Error
    } else if broken_files > 0 {
        Exit::Violations
    } else {
        Exit::Success
    })
}

fn to_json(value: &impl Serialize) -> io::Result<String> {
    serde_json::to_string(value).map_err(io::Error::other)
}

fn chain_line<'a>(path: &Path, verified: &'a Verified) -> ChainLine<'a> {
    let broken = verified.broken.as_ref();
    let hashes = broken.and_then(|b| b.error.hashes());
    ChainLine {
        r#type: "chain",
        file: path.display().to_string(),
        intact: broken.is_none(),
        records: verified.records,
        head: verified.head.map(|h| h.hex()),
        kind: broken.map(|b| b.error.kind()),
        line: broken.map(|b| b.loc.line),
        expected: hashes.map(|(expected, _)| expected.hex()),
        found: hashes.and_then(|(_, found)| found.map(|f| f.hex())),
    }
}

fn human_line(line: &ChainLine<'_>) -> String {
    let records = if line.records == 1 {
        "record"
    } else {
        "records"
    };
    let head = line.head.as_deref().unwrap_or("none (empty log)");
    match (line.intact, line.kind, line.line) {
        (true, _, _) => format!(
            "{}: intact, {} {records}, head {head}",
            line.file, line.records
        ),
        (false, Some(kind), Some(at)) => format!(
            "{}: broken at line {at} ({kind}) after {} verified {records}",
            line.file, line.records
        ),
        _ => format!("{}: broken", line.file),
    }
}

/// `check --verify-chain`: verifies each trace file before it is checked; a broken or
/// unsealed one is a `broken-chain` error.
pub fn verify_chains(
    paths: &[PathBuf],
    max_line_bytes: Option<usize>,
    report: &mut Report<'_>,
) -> io::Result<()> {
    let options = VerifyOptions {
        head: None,
        max_line_bytes: max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
    };
    for path in paths {
        match open(path).and_then(|input| crate::chain::verify::verify(input, &options)) {
            Ok(verified) => {
                if let Some(broken) = &verified.broken {
                    report.emit(&broken_chain(path, broken, verified.records))?;
                }
            }
            Err(err) => report.emit(&unreadable(path, &err))?,
        }
    }
    Ok(())
}

/// `check --join`: every trace file merged into one stream by time.
pub fn check_join(specs: &[Machine], paths: &[PathBuf], options: &CheckOptions) -> Outcome {
    let mut inputs: Vec<(Arc<Path>, Box<dyn BufRead>)> = Vec::new();
    let mut unopened = Vec::new();
    for path in paths {
        match open(path) {
            Ok(input) => inputs.push((Arc::from(path.as_path()), input)),
            Err(err) => unopened.push(unreadable(path, &err)),
        }
    }
    let mut outcome = crate::joined::check_joined(specs, inputs, options);
    unopened.append(&mut outcome.diagnostics);
    outcome.diagnostics = unopened;
    outcome
}
