//! Throughput and memory of `check` on native JSONL, side by side with plain serde_json
//! decoding of the same lines into typed records, in the same run.
//!
//! Run with `cargo bench --bench throughput` (add `-- --quick` for a shorter run). It
//! generates traces of 10^5 and 10^6 records over many interleaved `per` keys and
//! prints, for each: records/s of `check` (one thread) with its diagnostics rendered as
//! the CLI's JSON output and as its human output, records/s of the serde_json baseline,
//! how many times the baseline's time each took, and the peak heap `check` held beyond
//! the input itself; then the same check as the CLI runs it on one file with a core to
//! spare (lines decoded on a second thread, findings rendered as they come), by
//! wall-clock and CPU time.
//!
//! The headline workload gives every operation a fresh key (about 350,000 request ids
//! in 10^6 records, 5,000 operations interleaved at a time, a few of them blind
//! re-creates that are violations): what a log of many agents looks like. The key-pool
//! workload reuses 1,000 keys, each running the protocol again and again, so live
//! instances stay constant while the trace grows: the most favourable case.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde::de::IgnoredAny;
use tracegate::check::{CheckOptions, Event, check_input_reported, check_reader, in_file_order};
use tracegate::diagnostic::Diagnostic;
use tracegate::diagnostic::render::{MemoryResolver, human, json};
use tracegate::machine::SpecSource;
use tracegate::trace::input::TraceInput;

#[path = "support/counting.rs"]
mod counting;
use counting::peak;
#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_time;

/// The reconcile protocol, one instance per request id (also the spec of
/// `scripts/bench-human.sh`).
const SPEC: &str = include_str!("reconcile.tg");

/// The same protocol written with instance variables and provenance: the create binds
/// its request id, later moves compare with it, and each note asks the trace's index
/// of earlier outputs. Measures what those forms cost over the plain spec.
const BOUND_SPEC: &str = r#"spec bench_bound
per args.request_id
event create  = call create_record bind rid = args.request_id, n = 1
event created = result create_record where status == "ok" and args.request_id == $rid
event unknown = result create_record
    where status == "error" and error.category == "outcome_unknown"
event lookup  = call lookup_by_request_id where args.request_id == $rid
event found   = result lookup_by_request_id where status == "ok" and has output.id
event note    = call attach_note where not (args.request_id in outputs of create_record)
event noted   = result attach_note where status == "ok"
initial idle
accept idle, done
idle     -> pending  on create
pending  -> done     on created
pending  -> unknown  on unknown
unknown  -> checking on lookup
checking -> done     on found
done     -> done     on note, noted
done     -> pending  on create
forbid unknown on create: "blind re-create"
"#;

/// The baseline: the canonical record shape as a typed struct, borrowed where it can
/// be, nested values left raw.
#[allow(dead_code)]
#[derive(Deserialize)]
struct Typed<'a> {
    kind: Option<&'a str>,
    tool: Option<&'a str>,
    call_id: Option<&'a str>,
    status: Option<&'a str>,
    args: Option<IgnoredAny>,
    output: Option<IgnoredAny>,
    error: Option<IgnoredAny>,
}

#[derive(Clone, Copy)]
enum Keys {
    /// This many keys, each running the protocol over and over.
    Pool(usize),
    /// A fresh key for every operation; this many operations in flight at once.
    Fresh(usize),
}

/// The shape of a generated trace.
#[derive(Clone, Copy)]
struct Workload {
    keys: Keys,
    /// One operation in this many attaches a note after its create succeeds (1: all).
    note_every: usize,
    /// One unknown outcome in this many is followed by a blind re-create, a violation
    /// (0: none).
    blind_every: usize,
}

impl Workload {
    fn label(&self) -> String {
        match self.keys {
            Keys::Pool(n) => format!("pool {n}"),
            Keys::Fresh(n) => format!("fresh/{n}"),
        }
    }
}

/// A generated trace: its bytes, how many distinct keys it uses, and how many
/// violations a check of it must report.
struct Generated {
    bytes: Vec<u8>,
    keys: usize,
    violations: usize,
}

/// A trace of about `records` records (a few more, to finish open operations):
/// operations over interleaved keys, each `create → created → note → noted` (the note
/// only for some, see [`Workload::note_every`]), one in eight going through an unknown
/// outcome and a lookup first, or else through a blind re-create.
fn generate(records: usize, workload: Workload) -> Generated {
    let keys = workload.keys;
    let lanes = match keys {
        Keys::Pool(n) | Keys::Fresh(n) => n,
    };
    // Each lane is a key working through its operation; lanes take turns.
    let mut step = vec![0usize; lanes];
    let mut operation = vec![0usize; lanes];
    let mut next_key = lanes;
    let mut key: Vec<usize> = (0..lanes).collect();
    let mut out = String::with_capacity(records * 150);
    let mut call = 0usize;
    // The id of each lane's open call, which its result answers.
    let mut open = vec![0usize; lanes];
    let mut written = 0;
    let mut violations = 0;
    // Past the target, lanes only finish the operation they are in, so every
    // instance ends in an accepting state (or stopped after its violation).
    while written < records || step.iter().any(|&s| s != 0) {
        for lane in 0..lanes {
            if written >= records && step[lane] == 0 {
                continue;
            }
            let k = key[lane];
            let op = k + operation[lane];
            let unknown = op % 8 == 0;
            let blind = unknown && workload.blind_every > 0 && (op / 8) % workload.blind_every == 0;
            let note = op % workload.note_every == 0;
            let script: &[&str] = match (unknown, blind, note) {
                (true, true, _) => &["create", "unknown", "create", "created"],
                (true, false, true) => &["create", "unknown", "lookup", "found", "note", "noted"],
                (true, false, false) => &["create", "unknown", "lookup", "found"],
                (false, _, true) => &["create", "created", "note", "noted"],
                (false, _, false) => &["create", "created"],
            };
            if blind && step[lane] == 2 {
                violations += 1;
            }
            let id = format!("c{call}");
            let answer = open[lane];
            match script[step[lane]] {
                "create" => {
                    open[lane] = call;
                    call += 1;
                    let _ = writeln!(
                        out,
                        r#"{{"kind":"call","tool":"create_record","call_id":"{id}","args":{{"request_id":"req-{k}","title":"Invoice {k}","amount":{amount}}}}}"#,
                        amount = 100 + k % 900
                    );
                }
                "created" => {
                    let _ = writeln!(
                        out,
                        r#"{{"kind":"result","tool":"create_record","call_id":"c{answer}","status":"ok","output":{{"id":"rec_{k}","created":true}}}}"#
                    );
                }
                "unknown" => {
                    let _ = writeln!(
                        out,
                        r#"{{"kind":"result","tool":"create_record","call_id":"c{answer}","status":"error","error":{{"category":"outcome_unknown","message":"timeout after dispatch"}}}}"#
                    );
                }
                "lookup" => {
                    open[lane] = call;
                    call += 1;
                    let _ = writeln!(
                        out,
                        r#"{{"kind":"call","tool":"lookup_by_request_id","call_id":"{id}","args":{{"request_id":"req-{k}"}}}}"#
                    );
                }
                "found" => {
                    let _ = writeln!(
                        out,
                        r#"{{"kind":"result","tool":"lookup_by_request_id","call_id":"c{answer}","status":"ok","output":{{"id":"rec_{k}"}}}}"#
                    );
                }
                "note" => {
                    open[lane] = call;
                    call += 1;
                    let _ = writeln!(
                        out,
                        r#"{{"kind":"call","tool":"attach_note","call_id":"{id}","args":{{"request_id":"req-{k}","note":"reconciled"}}}}"#
                    );
                }
                _ => {
                    let _ = writeln!(
                        out,
                        r#"{{"kind":"result","tool":"attach_note","call_id":"c{answer}","status":"ok","output":null}}"#
                    );
                }
            }
            written += 1;
            step[lane] += 1;
            if step[lane] == script.len() {
                step[lane] = 0;
                operation[lane] += 1;
                if let Keys::Fresh(_) = keys {
                    key[lane] = next_key;
                    next_key += 1;
                }
            }
        }
    }
    Generated {
        bytes: out.into_bytes(),
        keys: match keys {
            Keys::Pool(n) => n,
            // Every lane ends holding a fresh key it never used.
            Keys::Fresh(_) => next_key - lanes,
        },
        violations,
    }
}

/// How long `f` takes, once.
fn time(f: impl FnMut()) -> Duration {
    cost(f).0
}

/// How long `f` takes, once: wall-clock time, and CPU time over all threads.
fn cost(mut f: impl FnMut()) -> (Duration, Duration) {
    let (start, cpu) = (Instant::now(), cpu_time());
    f();
    (start.elapsed(), cpu_time().saturating_sub(cpu))
}

/// Keeps in `best` the shorter of each of its times and the new ones.
fn keep_best<const N: usize>(best: &mut [Duration; N], times: [Duration; N]) {
    for (best, time) in best.iter_mut().zip(times) {
        *best = (*best).min(time);
    }
}

/// How `check` reads its input: decoding each line and checking it on one thread, or
/// decoding on a second thread ahead of the one that checks (as the CLI does when a
/// core is spare).
#[derive(Clone, Copy, PartialEq)]
enum Threads {
    One,
    Ahead,
}

/// The CLI's output formats.
#[derive(Clone, Copy)]
enum Output {
    Json,
    Human,
}

/// Renders diagnostics as the CLI does before writing them, and lets the text go: human
/// output with one renderer for the run, into one reused buffer.
struct Rendering {
    output: Output,
    renderer: human::Renderer,
    buffer: String,
    bytes: usize,
}

impl Rendering {
    fn new(output: Output) -> Rendering {
        Rendering {
            output,
            renderer: human::Renderer::default(),
            buffer: String::new(),
            bytes: 0,
        }
    }

    fn render(&mut self, diagnostic: &Diagnostic, resolver: &MemoryResolver) {
        match self.output {
            Output::Json => self.bytes += black_box(json::render(diagnostic)).len(),
            Output::Human => {
                self.buffer.clear();
                self.renderer
                    .render_with(&mut self.buffer, diagnostic, false, resolver);
                self.bytes += black_box(&self.buffer).len();
            }
        }
    }
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let runs = if quick { 1 } else { 3 };
    let source = Arc::new(SpecSource::new("bench_reconcile.tg", SPEC.to_string()));
    let specs = vec![tracegate::spec::analyzer::load(source).expect("the benchmark spec compiles")];
    let file: Arc<Path> = Arc::from(Path::new("bench.jsonl"));

    println!(
        "{:<10} {:<8} {:>7} {:>6} {:>10} {:>11} {:>6} {:>11} {:>6} {:>11} {:>11} {:>11} {:>10}",
        "workload",
        "records",
        "keys",
        "MB",
        "violations",
        "json rec/s",
        "×serde",
        "human rec/s",
        "×serde",
        "serde rec/s",
        "streamed",
        "decode",
        "peak heap"
    );
    let headline = Workload {
        keys: Keys::Fresh(5000),
        note_every: 3,
        blind_every: 4,
    };
    let pool = Workload {
        keys: Keys::Pool(1000),
        note_every: 1,
        blind_every: 0,
    };
    let sizes: &[usize] = if quick {
        &[1_000_000]
    } else {
        &[100_000, 1_000_000]
    };
    let mut ahead_rows = Vec::new();
    for workload in [headline, pool] {
        for &records in sizes {
            let generated = generate(records, workload);
            let input = &generated.bytes;
            let lines = input.iter().filter(|&&b| b == b'\n').count();
            let mb = input.len() as f64 / 1e6;
            let mut resolver = MemoryResolver::default();
            resolver.insert(file.to_path_buf(), input.clone());

            let text = std::str::from_utf8(input).expect("generated input is UTF-8");
            let serde = || {
                let mut n = 0usize;
                for line in text.lines() {
                    let record: Typed<'_> =
                        serde_json::from_str(line).expect("generated lines decode");
                    n += usize::from(record.kind.is_some());
                }
                black_box(n);
            };

            // The same decoding as a program would do it on a file: lines read from a
            // buffered reader into a reused buffer, checked as UTF-8, then decoded — the
            // work `check` also does before its own decoding.
            let streamed = || {
                let mut reader = std::io::BufReader::with_capacity(1 << 16, &input[..]);
                let mut buf = Vec::new();
                let mut n = 0usize;
                loop {
                    buf.clear();
                    if std::io::BufRead::read_until(&mut reader, b'\n', &mut buf)
                        .expect("reading a slice cannot fail")
                        == 0
                    {
                        break;
                    }
                    let line = std::str::from_utf8(&buf).expect("generated input is UTF-8");
                    let record: Typed<'_> =
                        serde_json::from_str(line).expect("generated lines decode");
                    n += usize::from(record.kind.is_some());
                }
                black_box(n);
            };

            // The first stage of `check` alone: lines decoded into records.
            let decode = || {
                let mut n = 0usize;
                for (i, line) in text.lines().enumerate() {
                    let loc = tracegate::trace::Location {
                        line: i as u64 + 1,
                        ..Default::default()
                    };
                    let record = tracegate::trace::native::decode_line(line, loc)
                        .expect("generated lines are records");
                    n += usize::from(record.kind.is_some());
                }
                black_box(n);
            };

            // `check` as the CLI runs it: the checker, then its diagnostics rendered.
            let check = |output: Output, threads: Threads| {
                let options = CheckOptions::default();
                let mut rendering = Rendering::new(output);
                let mut unexpected = None;
                let mut found = 0;
                let mut take = |diagnostic: &Diagnostic| {
                    found += 1;
                    if diagnostic.code.as_str() != "forbidden-transition" {
                        unexpected = Some(format!("{}: {}", diagnostic.code, diagnostic.message));
                    }
                };
                let records = match threads {
                    // The checker, then its diagnostics rendered.
                    Threads::One => {
                        let outcome = check_reader(&specs, file.clone(), &input[..], &options);
                        for diagnostic in &outcome.diagnostics {
                            take(diagnostic);
                            rendering.render(diagnostic, &resolver);
                        }
                        outcome.records
                    }
                    // As the CLI checks one file on two cores: a thread checks it while
                    // another decodes its lines, and this one renders each finding as
                    // it comes.
                    Threads::Ahead => {
                        let mut records = 0;
                        in_file_order(
                            1,
                            None,
                            |_, report| {
                                let ahead = TraceInput::native_ahead(&input[..], None);
                                check_input_reported(
                                    &specs,
                                    file.clone(),
                                    ahead,
                                    &options,
                                    None,
                                    report,
                                )
                            },
                            |event| match event {
                                Event::Diagnostic(_, diagnostic) => {
                                    take(&diagnostic);
                                    rendering.render(&diagnostic, &resolver);
                                }
                                Event::Done(_, outcome) => records = outcome.records,
                                Event::Reading(_) | Event::Idle => {}
                            },
                        );
                        records
                    }
                };
                assert_eq!(records as usize, lines, "every generated line is a record");
                assert_eq!(unexpected, None, "only blind re-creates are violations");
                assert_eq!(
                    found, generated.violations,
                    "every blind re-create is reported, once"
                );
                black_box(rendering.bytes);
            };

            // Rounds of every measurement in turn, the best of each kept (the least
            // disturbed by other load), so the ratios compare runs made close together.
            // One thread first, then two: run after the two-thread checks, serde_json
            // decoded 15 % slower in every round.
            let (mut one, mut two) = ([Duration::MAX; 5], [Duration::MAX; 4]);
            for _ in 0..runs {
                keep_best(
                    &mut one,
                    [
                        time(serde),
                        time(streamed),
                        time(decode),
                        time(|| check(Output::Json, Threads::One)),
                        time(|| check(Output::Human, Threads::One)),
                    ],
                );
                let (json, json_cpu) = cost(|| check(Output::Json, Threads::Ahead));
                let (human, human_cpu) = cost(|| check(Output::Human, Threads::Ahead));
                keep_best(&mut two, [json, json_cpu, human, human_cpu]);
            }
            let [serde, streamed, decode, json, human] = one.map(|d| d.as_secs_f64());
            let [ahead_json, ahead_json_cpu, ahead_human, ahead_human_cpu] =
                two.map(|d| d.as_secs_f64());
            let heap = [Threads::One, Threads::Ahead]
                .into_iter()
                .flat_map(|threads| [Output::Json, Output::Human].map(|o| (o, threads)))
                .map(|(output, threads)| peak(|| check(output, threads)))
                .max()
                .unwrap_or(0);

            println!(
                "{:<10} {:<8} {:>7} {:>6.1} {:>10} {:>11.0} {:>6.2} {:>11.0} {:>6.2} {:>11.0} {:>11.0} {:>11.0} {:>8.1}MB",
                workload.label(),
                lines,
                generated.keys,
                mb,
                generated.violations,
                lines as f64 / json,
                json / serde,
                lines as f64 / human,
                human / serde,
                lines as f64 / serde,
                lines as f64 / streamed,
                lines as f64 / decode,
                heap as f64 / 1e6,
            );
            ahead_rows.push(format!(
                "{:<10} {:<8} {:>11.0} {:>6.2} {:>6.2} {:>11.0} {:>6.2} {:>6.2}",
                workload.label(),
                lines,
                lines as f64 / ahead_json,
                ahead_json / serde,
                ahead_json_cpu / serde,
                lines as f64 / ahead_human,
                ahead_human / serde,
                ahead_human_cpu / serde,
            ));
        }
    }
    println!(
        "\ndecoded ahead, as the CLI checks one file on two cores: a thread reads and decodes the lines, another checks them, the calling one renders each finding as it comes"
    );
    println!(
        "{:<10} {:<8} {:>11} {:>6} {:>6} {:>11} {:>6} {:>6}",
        "workload", "records", "json rec/s", "×serde", "cpu×", "human rec/s", "×serde", "cpu×"
    );
    for row in ahead_rows {
        println!("{row}");
    }

    // The key-pool trace against the spec with `bind` and provenance.
    let bound = Arc::new(SpecSource::new("bench_bound.tg", BOUND_SPEC.to_string()));
    let bound = vec![tracegate::spec::analyzer::load(bound).expect("the bound spec compiles")];
    let input = generate(1_000_000, pool).bytes;
    let lines = input.iter().filter(|&&b| b == b'\n').count();
    let mb = input.len() as f64 / 1e6;
    let check = || {
        let outcome = check_reader(&bound, file.clone(), &input[..], &CheckOptions::default());
        assert_eq!(
            outcome.diagnostics.len(),
            0,
            "the generated trace conforms to the bound spec"
        );
    };
    let seconds = (0..runs)
        .map(|_| time(check))
        .min()
        .expect("at least one run")
        .as_secs_f64();
    let heap = peak(check);
    println!(
        "\nbind + provenance ({lines} records, pool 1000): check {:.0} rec/s, {:.0} MB/s, peak heap {:.1}MB",
        lines as f64 / seconds,
        mb / seconds,
        heap as f64 / 1e6
    );
    println!(
        "\nfresh/5000 = a fresh request id per operation, 5,000 operations interleaved (the headline);"
    );
    println!("pool 1000 = 1,000 request ids reused again and again (the most favourable case).");
    println!(
        "json / human rec/s = `check` on one thread with its diagnostics rendered as the CLI's JSON / human output;"
    );
    println!(
        "×serde = that time over serde_json's typed decoding of the same lines in memory (best of {runs} interleaved rounds)."
    );
    println!(
        "streamed = serde_json decoding the same bytes read line by line from a buffered reader;"
    );
    println!("decode = tracegate's own line decoding alone (the first stage of check).");
    println!(
        "decoded ahead: the same check and rendering on three threads (decode, check, render); cpu× = CPU time of all of them over serde_json's time."
    );
    println!("peak heap = most heap `check` held at once, beyond the input buffer itself.");
}
