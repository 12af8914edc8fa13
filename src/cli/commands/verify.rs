//! `tracegate verify`: sealed logs verified offline, a line per log and a summary on
//! stdout.

use std::io;
use std::path::Path;

use serde::Serialize;

use super::chain::{broken_chain, check_signature, open, to_json};
use crate::chain::verify::{Broken, Verified, VerifyOptions};
use crate::cli::Exit;
use crate::cli::args::OutputFormat;
use crate::cli::config::VerifyConfig;
use crate::cli::output::{Output, Stream};
use crate::diagnostic::Diagnostic;
use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

/// `tracegate verify`.
pub fn run(args: VerifyConfig, out: &mut Output<'_>) -> io::Result<()> {
    let public = match &args.key {
        None => None,
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => Some(text.trim().to_string()),
            Err(err) => {
                return out.failure(&format!("cannot read the key `{}`: {err}", path.display()));
            }
        },
    };
    let options = VerifyOptions {
        head: args.head,
        max_line_bytes: args.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES),
    };
    let format = args.output;
    let (mut files, mut records, mut broken_files, mut errors) = (0u64, 0u64, 0u64, 0u64);
    for path in &args.files {
        files += 1;
        let verified =
            match open(path).and_then(|input| crate::chain::verify::verify(input, &options)) {
                Ok(verified) => verified,
                Err(err) => {
                    errors += 1;
                    let diagnostic = Diagnostic::unreadable(path, &err);
                    out.write_diagnostic(Stream::Stdout, format, &diagnostic)?;
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
            let diagnostic = broken_chain(path, broken, verified.records);
            out.write_diagnostic(Stream::Stdout, format, &diagnostic)?;
        }
        let line = chain_line(path, &verified);
        match format {
            OutputFormat::Json => out.data(format!("{}\n", to_json(&line)?))?,
            OutputFormat::Human => out.data(format!("{}\n", human_line(&line)))?,
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
            out.data(format!("{}\n", to_json(&summary)?))?;
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
            out.data(format!(
                "verified {files} log{}, {records} record{}: {verdict}\n",
                if files == 1 { "" } else { "s" },
                if records == 1 { "" } else { "s" }
            ))?;
        }
    }
    // A broken chain is this command's finding (exit 1), an unreadable log its error.
    out.raise(if errors > 0 {
        Exit::Error
    } else if broken_files > 0 {
        Exit::Violations
    } else {
        Exit::Success
    });
    Ok(())
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
