//! JSON documents stream element by element (one run or one message list at a time),
//! and what they give is exactly what reading them whole gives: every document in the
//! repository (example traces, fixtures, real-data samples) is converted and checked
//! from its file, where it streams, and from standard input, where a document is read
//! whole, and the outputs are compared byte for byte. Set `TRACEGATE_MORE_DOCUMENTS`
//! to a directory to compare its documents too.

use std::path::{Path, PathBuf};

use tracegate::trace::adapters::InputOptions;
use tracegate::trace::input::TraceInput;

use crate::util::{root, tracegate};

/// Every `*.json` file under `dir`, sorted.
fn documents(dir: &Path, into: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            documents(&path, into);
        } else if path.extension().is_some_and(|e| e == "json") {
            into.push(path);
        }
    }
}

/// What `tracegate ARGS… FILE` prints on stdout, exit code included, and the same with
/// the file on standard input, its name made the file's. (Problems are compared in
/// `check --output json`; the human rendering on stderr quotes the file's text, which
/// standard input does not keep.)
fn file_and_stdin(args: &[&str], path: &Path) -> (String, String) {
    let shown = path.display().to_string();
    let run = |traces: &str, stdin: Option<Vec<u8>>| {
        let mut command = tracegate();
        command.args(args).arg(traces);
        if let Some(bytes) = stdin {
            command.write_stdin(bytes);
        }
        let output = command.output().expect("tracegate runs");
        format!(
            "exit {:?}\n{}",
            output.status.code(),
            String::from_utf8_lossy(&output.stdout),
        )
    };
    let from_file = run(&shown, None);
    let bytes = std::fs::read(path).expect("the document is readable");
    let from_stdin = run("-", Some(bytes)).replace(
        "\"file\":\"-\"",
        &format!("\"file\":{}", serde_json::to_string(&shown).unwrap()),
    );
    (from_file, from_stdin)
}

#[test]
fn every_document_streams_as_it_reads_whole() {
    let mut paths = Vec::new();
    documents(&root().join("traces"), &mut paths);
    documents(&root().join("tests/fixtures"), &mut paths);
    if let Some(more) = std::env::var_os("TRACEGATE_MORE_DOCUMENTS") {
        documents(Path::new(&more), &mut paths);
    }
    let mut checked = Vec::new();
    for path in &paths {
        let input = TraceInput::open(path, &InputOptions::default(), None).expect("it opens");
        // Native JSONL, which streams either way, is not a document.
        if input.detected().layout == tracegate::trace::adapters::Layout::NativeLines {
            continue;
        }
        checked.push(path);
        let (file, stdin) = file_and_stdin(&["convert"], path);
        assert_eq!(file, stdin, "convert {}", path.display());
        let check = ["check", "specs", "--output", "json", "--traces"];
        let (file, stdin) = file_and_stdin(&check, path);
        assert_eq!(file, stdin, "check {}", path.display());
    }
    assert!(!checked.is_empty(), "no document found");
}
