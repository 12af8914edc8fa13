//! Throughput and memory of `check` on transcript formats, side by side with the same
//! records as native JSONL, in the same run.
//!
//! Run with `cargo bench --bench formats` (add `-- --quick` for one timed run, and
//! `-- --small` for inputs a tenth the size). It writes three inputs to the system's
//! temporary directory and checks each from its file, as `tracegate check` does:
//!
//! - an MCP JSON-RPC log of 10^6 lines (requests and their replies, in enveloped
//!   sessions of a few hundred lines each, interleaved);
//! - an OpenAI Chat Completions run-array document of about 100 MB (a top-level array
//!   of runs, each with its `messages`), and the same runs minified on one line (about
//!   50 MB, under the line limit: detection reads the whole line before it is checked);
//!
//! and, for each, the same records as native JSONL (what `convert` prints for it),
//! split into traces by their `trace` field. For each it prints records/s, the ratio to
//! native JSONL's, and the peak heap. Native JSONL is checked from a reader, which has no
//! first pass (from its file, a first pass would find where each trace ends, so that
//! each is freed there: slower, in less memory), so the ratio is to native's fastest.
//! The last three columns check the native records from their file too, as `tracegate
//! check` reads a file, first pass and all: records/s, the format's share of that
//! (`to file`), and the peak heap.
//!
//! With `TRACEGATE_BENCH_GB=1` in the environment it then writes an OpenAI run-array
//! document of about 1 GB (the same runs, ten times as many as the 100 MB one) and
//! checks it once, printing records/s and the peak heap: runs are small, so the peak
//! must stay near the 100 MB document's, not grow with the file.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use tracegate::check::{CheckOptions, check_path, check_reader};
use tracegate::json::Segment;
use tracegate::machine::SpecSource;
use tracegate::trace::adapters::InputOptions;

#[path = "support/counting.rs"]
mod counting;
#[path = "support/measure.rs"]
mod measure;

use measure::{measure, write_file};

/// One instance per request id: a create must be answered before the next create of
/// the same id.
const SPEC: &str = r#"spec bench_formats
per args.request_id
event create  = call create_record
event created = result create_record where status == "ok"
event failed  = result create_record where status == "error"
initial idle
accept idle, done
idle    -> pending on create
pending -> done    on created
pending -> idle    on failed
done    -> pending on create
"#;

/// An MCP log of `lines` lines: sessions of `per_session` lines, `live` of them
/// interleaved at a time, each a run of `tools/call create_record` requests, each
/// followed (a few lines later) by its reply.
fn mcp_log(lines: usize) -> Vec<u8> {
    const LIVE: usize = 16;
    const PER_SESSION: usize = 400;
    let mut out = String::with_capacity(lines * 240);
    let sessions = lines.div_ceil(PER_SESSION);
    let mut written = 0;
    // Each live lane works through one session, two lines per operation.
    let mut next_session = 0;
    let mut lanes: Vec<(usize, usize)> = Vec::new();
    while written < lines {
        while lanes.len() < LIVE && next_session < sessions {
            lanes.push((next_session, 0));
            next_session += 1;
        }
        if lanes.is_empty() {
            break;
        }
        for (session, step) in lanes.iter_mut() {
            if written >= lines {
                break;
            }
            let op = *step / 2;
            let id = op + 1;
            let time = format!(
                "2025-01-01T00:{:02}:{:02}Z",
                (written / 60) % 60,
                written % 60
            );
            if *step % 2 == 0 {
                let _ = writeln!(
                    out,
                    r#"{{"session_id":"s{session}","direction":"send","timestamp":"{time}","message":{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"create_record","arguments":{{"request_id":"req-{session}-{op}","title":"Invoice {op}","amount":{amount}}}}}}}}}"#,
                    amount = 100 + op % 900
                );
            } else {
                let _ = writeln!(
                    out,
                    r#"{{"session_id":"s{session}","direction":"recv","timestamp":"{time}","message":{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"created rec_{session}_{op}"}}],"structuredContent":{{"id":"rec_{session}_{op}"}},"isError":false}}}}}}"#
                );
            }
            written += 1;
            *step += 1;
        }
        lanes.retain(|&(_, step)| step < PER_SESSION);
    }
    out.into_bytes()
}

/// An OpenAI run-array document of about `bytes` bytes: a top-level array of runs,
/// each with an id and a message list of a user message, six tool calls with their
/// results, and a final answer.
fn openai_runs(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 4096);
    write_openai_runs(&mut out, bytes).expect("writing to memory cannot fail");
    out
}

/// [`openai_runs`] minified on one line, as `json.dump` writes a list of runs: the
/// file's first line is the whole document, which detection reads before it is checked.
fn openai_runs_one_line(bytes: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes + 4096);
    write_runs(&mut out, bytes, false).expect("writing to memory cannot fail");
    out
}

/// Writes [`openai_runs`] to `sink` run by run, so a document larger than memory can
/// be written; returns the bytes written.
fn write_openai_runs(sink: &mut impl std::io::Write, bytes: usize) -> std::io::Result<usize> {
    write_runs(sink, bytes, true)
}

/// Writes a run array of about `bytes` bytes, each run on a line of its own between
/// `[` and `]` when `lines`, else all on one line.
fn write_runs(sink: &mut impl std::io::Write, bytes: usize, lines: bool) -> std::io::Result<usize> {
    let (open, between, close): (&[u8], &str, &[u8]) = match lines {
        true => (b"[\n", ",\n", b"\n]\n"),
        false => (b"[", ",", b"]"),
    };
    sink.write_all(open)?;
    let mut written = open.len();
    let mut run = 0;
    let mut out = String::new();
    while written < bytes {
        out.clear();
        if run > 0 {
            out.push_str(between);
        }
        if lines {
            out.push_str("  ");
        }
        let _ = write!(
            out,
            r#"{{"id": "run-{run}", "model": "gpt-4o", "messages": [{{"role": "user", "content": "Create the six invoices of batch {run}."}}"#
        );
        for call in 0..6 {
            let _ = write!(
                out,
                r#", {{"role": "assistant", "content": null, "tool_calls": [{{"id": "call_{run}_{call}", "type": "function", "function": {{"name": "create_record", "arguments": "{{\"request_id\": \"req-{run}-{call}\", \"title\": \"Invoice {call}\", \"amount\": {amount}}}"}}}}]}}, {{"role": "tool", "tool_call_id": "call_{run}_{call}", "content": "{{\"id\": \"rec_{run}_{call}\", \"created\": true}}"}}"#,
                amount = 100 + call
            );
        }
        let _ = write!(
            out,
            r#", {{"role": "assistant", "content": "All six invoices of batch {run} are created."}}]}}"#
        );
        sink.write_all(out.as_bytes())?;
        written += out.len();
        run += 1;
    }
    sink.write_all(close)?;
    Ok(written + close.len())
}

/// The input's records as native JSONL, as `convert` prints them.
fn as_native(path: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    let converted = tracegate::ingest::convert_path(path, &InputOptions::default(), None, &mut out)
        .expect("writing to memory cannot fail");
    assert!(
        converted.diagnostics.is_empty(),
        "the generated input converts cleanly: {:?}",
        converted.diagnostics.first().map(|d| &d.message)
    );
    out
}

/// Checks `path`, returning the records read and the diagnostics.
fn check(
    specs: &[tracegate::machine::Machine],
    path: &Path,
    options: &CheckOptions,
) -> (u64, usize) {
    let checked = check_path(specs, path, options, &InputOptions::default());
    (checked.outcome.records, checked.outcome.diagnostics.len())
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let small = std::env::args().any(|a| a == "--small");
    let runs = if quick { 1 } else { 3 };
    let scale = if small { 10 } else { 1 };
    let source = Arc::new(SpecSource::new("bench_formats.tg", SPEC.to_string()));
    let specs = vec![tracegate::spec::analyzer::load(source).expect("the benchmark spec compiles")];
    let dir = std::env::temp_dir().join(format!("tracegate-bench-formats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("the temporary directory can be made");

    println!(
        "{:<22} {:>8} {:>9} {:>8} {:>12} {:>12} {:>8} {:>11} {:>11} {:>12} {:>8} {:>11}",
        "workload",
        "MB",
        "records",
        "s",
        "records/s",
        "native r/s",
        "ratio",
        "peak",
        "native peak",
        "file r/s",
        "to file",
        "file peak"
    );
    let workloads: [(&str, Vec<u8>); 3] = [
        ("mcp log", mcp_log(1_000_000 / scale)),
        ("openai run array", openai_runs(100_000_000 / scale)),
        // Under the 64 MiB line limit, so that detection reads the line.
        ("openai one line", openai_runs_one_line(50_000_000 / scale)),
    ];
    for (name, input) in workloads {
        let path = write_file(&dir, &format!("{}.json", name.replace(' ', "_")), &input);
        let native = as_native(&path);
        let native_path = write_file(&dir, "native.jsonl", &native);
        drop(native);
        let mb = input.len() as f64 / 1e6;
        drop(input);

        let mut read = (0, 0);
        let format = measure(runs, || {
            read = check(&specs, &path, &CheckOptions::default())
        });
        // Native records name their trace in a `trace` field; split by it, as the
        // transcript's own traces are split.
        let split = CheckOptions {
            trace_by: Some(vec![Segment::Key("trace".into())]),
            ..CheckOptions::default()
        };
        let mut native_read = (0, 0);
        let native = measure(runs, || {
            let file = std::fs::File::open(&native_path).expect("the native records open");
            let reader = std::io::BufReader::with_capacity(1 << 16, file);
            let outcome = check_reader(&specs, Arc::from(native_path.as_path()), reader, &split);
            native_read = (outcome.records, outcome.diagnostics.len());
        });
        // The same records from their file, as `tracegate check` reads a file: a
        // first pass finds where each trace ends, as the format's own first pass does.
        let mut native_file_read = (0, 0);
        let native_file = measure(runs, || {
            native_file_read = check(&specs, &native_path, &split);
        });
        assert_eq!(read.1, 0, "{name}: the generated input conforms");
        assert_eq!(
            native_file_read, native_read,
            "{name}: native the same both ways"
        );
        assert_eq!(native_read.1, 0, "{name}: its native records conform");
        assert_eq!(read.0, native_read.0, "{name}: the same records both ways");
        println!(
            "{:<22} {:>8.1} {:>9} {:>8.2} {:>12.0} {:>12.0} {:>7.0}% {:>9.1}MB {:>9.1}MB {:>12.0} {:>7.0}% {:>9.1}MB",
            name,
            mb,
            read.0,
            format.seconds,
            read.0 as f64 / format.seconds,
            native_read.0 as f64 / native.seconds,
            100.0 * native.seconds / format.seconds,
            format.peak_bytes as f64 / 1e6,
            native.peak_bytes as f64 / 1e6,
            native_file_read.0 as f64 / native_file.seconds,
            100.0 * native_file.seconds / format.seconds,
            native_file.peak_bytes as f64 / 1e6,
        );
    }
    println!(
        "\nratio = the format's records/s as a share of native JSONL's on the same records \
         from a reader, no first pass (best of {runs}); to file = the same share of native \
         JSONL's checked from its file, with its first pass; peak = most heap `check` held \
         at once."
    );
    if std::env::var_os("TRACEGATE_BENCH_GB").is_some_and(|v| v == "1") {
        gigabyte(&specs, &dir);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Checks a run-array document of about 1 GB once, written to a file run by run.
fn gigabyte(specs: &[tracegate::machine::Machine], dir: &Path) {
    let path = dir.join("openai_runs_1gb.json");
    let file = std::fs::File::create(&path).expect("the temporary directory is writable");
    let mut sink = std::io::BufWriter::new(file);
    let bytes = write_openai_runs(&mut sink, 1_000_000_000).expect("the temporary file is written");
    sink.flush().expect("the temporary file is written");
    drop(sink);
    let mut read = (0, 0);
    let mut seconds = 0.0;
    // One run, with the heap counted: the count costs little next to the check.
    let peak = counting::peak(|| {
        let start = Instant::now();
        read = check(specs, &path, &CheckOptions::default());
        seconds = start.elapsed().as_secs_f64();
    });
    let _ = std::fs::remove_file(&path);
    assert_eq!(read.1, 0, "the generated 1 GB document conforms");
    println!(
        "\n{:<22} {:>8} {:>9} {:>8} {:>12} {:>11}",
        "workload", "MB", "records", "s", "records/s", "peak"
    );
    println!(
        "{:<22} {:>8.1} {:>9} {:>8.2} {:>12.0} {:>9.1}MB",
        "openai run array 1 GB",
        bytes as f64 / 1e6,
        read.0,
        seconds,
        read.0 as f64 / seconds,
        peak as f64 / 1e6,
    );
}
