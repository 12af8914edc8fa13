//! `tracegate seal`: JSONL logs sealed into one hash-chained log, on stdout or in a
//! file; what happened on stderr.

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::PathBuf;
use std::sync::Arc;

use super::chain::{SignatureFile, broken_chain, open, signature_path, to_json};
use crate::chain::seal::{SealFailure, Sealer};
use crate::chain::sign::SecretKey;
use crate::chain::verify::VerifyOptions;
use crate::cli::config::SealConfig;
use crate::cli::output::Output;
use crate::diagnostic::{Code, Diagnostic, TraceSite};
use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

/// `tracegate seal`: the sealed log to OUT or stdout, what happened to stderr.
pub fn run(args: SealConfig, out: &mut Output<'_>) -> io::Result<()> {
    let max = args.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    if let Some(output) = &args.output {
        let same = |path: &PathBuf| {
            path.canonicalize().ok().is_some()
                && path.canonicalize().ok() == output.canonicalize().ok()
        };
        if args.files.iter().any(same) {
            return out.failure(&format!(
                "`{}` is both an input and the output; seal into another file",
                output.display()
            ));
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
                return out.failure(&format!("cannot use the key `{}`: {err}", path.display()));
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
                Err(err) => return out.problem(&Diagnostic::unreadable(output, &err)),
            };
            if let Some(broken) = &verified.broken {
                out.problem(&broken_chain(output, broken, verified.records))?;
                return out.failure(&format!(
                    "`{}` does not verify; nothing was appended",
                    output.display()
                ));
            }
            if let Some(head) = verified.head {
                sealer = Sealer::after(head);
            }
        }
    }
    let sealed = match &args.output {
        Some(path) => {
            let opened = if args.append {
                File::options().create(true).append(true).open(path)
            } else {
                File::create(path)
            };
            match opened {
                Ok(file) => {
                    seal_files(&args.files, &mut io::BufWriter::new(file), &mut sealer, max)?
                }
                Err(err) => {
                    return out.failure(&format!("cannot write `{}`: {err}", path.display()));
                }
            }
        }
        None => seal_files(&args.files, out.stdout(), &mut sealer, max)?,
    };
    if let Err(diagnostic) = sealed {
        return out.problem(&diagnostic);
    }
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
        out.note(&format!(
            "signed the head into `{}` (public key {})\n",
            signature_path(output).display(),
            signature.public_key
        ))?;
    }
    out.note(&format!(
        "sealed {} record{}; head {}\n",
        sealer.records(),
        if sealer.records() == 1 { "" } else { "s" },
        sealer.head()
    ))
}

/// Seals `files`, in order, into `sink`. A file that cannot be read or a line that is
/// not a record ends the sealing: what was sealed before it is written, and the
/// problem comes back as the diagnostic to report. An error is a failure to write.
fn seal_files(
    files: &[PathBuf],
    sink: &mut dyn Write,
    sealer: &mut Sealer,
    max: usize,
) -> io::Result<Result<(), Diagnostic>> {
    for path in files {
        let failure = match open(path) {
            Err(err) => Diagnostic::unreadable(path, &err),
            Ok(input) => match crate::chain::seal::seal(input, sink, sealer, max) {
                Ok(()) => continue,
                Err(SealFailure::Io(err)) => Diagnostic::unreadable(path, &err),
                Err(SealFailure::Record { loc, error }) => {
                    let mut diagnostic = Diagnostic::new(Code::MalformedRecord, error.to_string());
                    diagnostic.trace = Some(TraceSite {
                        file: Arc::from(path.as_path()),
                        trace: None,
                        loc,
                    });
                    diagnostic.hint = Some(match sealer.records() {
                        0 => "no record was sealed or written".to_string(),
                        1 => "the record before it was sealed and written; nothing after it was"
                            .to_string(),
                        n => format!(
                            "the {n} records before it were sealed and written; nothing after it was"
                        ),
                    });
                    diagnostic
                }
            },
        };
        sink.flush()?;
        return Ok(Err(failure));
    }
    sink.flush()?;
    Ok(Ok(()))
}
