//! Throughput of `seal` and `verify` side by side with plain SHA-256 over the same
//! bytes, and of a joined check side by side with checking the concatenated,
//! pre-sorted stream, in one run.
//!
//! Run with `cargo bench --bench chain` (add `-- --quick` for a shorter run). It
//! generates a native JSONL log of realistic records and prints MB/s for each
//! measurement and the ratios the targets are stated in: seal and verify at least 50 %
//! of SHA-256's throughput over the same bytes; a join costing at most 30 % more than
//! checking the same records already sorted, as one stream.
//!
//! Times on a shared machine move with its load, and the join's figure is a ratio of
//! two close times: it is taken over many rounds and given as a median with its spread.
//! An instruction count does not move; to cross-check it, run the same two checks of
//! the CLI under `valgrind --tool=cachegrind --cache-sim=no` (`tracegate check SPEC
//! --traces all.jsonl --trace-by id` against `tracegate check SPEC --join --traces
//! client.jsonl fixture.jsonl --trace-by id`) and compare their `I refs`.

use std::fmt::Write as _;
use std::fs::File;
use std::hint::black_box;
use std::io::{BufRead as _, BufReader, BufWriter, Write as _};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::Digest as _;
use tracegate::chain::seal::{Sealer, seal};
use tracegate::chain::verify::{VerifyOptions, verify};
use tracegate::check::{CheckOptions, check_reader};
use tracegate::machine::SpecSource;
use tracegate::trace::join::{JoinInput, TimeField};

#[path = "support/cpu.rs"]
mod cpu;
use cpu::cpu_time;

const SPEC: &str = r#"spec bench_agree
per id
event dispatched = record where event == "dispatch_started"
event committed  = record where event == "remote_committed"
event timeout    = record where event == "client_timeout"
event result     = record where event == "result"
initial idle
otherwise ignore
idle -> sent on dispatched
sent -> done on committed
sent -> done on timeout
done -> done on committed
done -> done on timeout
done -> closed on result
sent -> closed on result
"#;

/// A log of `operations` operations, four records each, split over two witnesses
/// (client and fixture) whose records interleave in time.
fn generate(operations: usize) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let (mut all, mut client, mut fixture) = (String::new(), String::new(), String::new());
    let events = [
        ("client", "dispatch_started", ""),
        ("fixture", "remote_committed", ""),
        ("client", "client_timeout", ""),
        ("client", "result", r#","category":"outcome_unknown""#),
    ];
    for op in 0..operations {
        for (i, (witness, event, extra)) in events.iter().enumerate() {
            let seconds = op * 4 + i;
            let (h, m, s) = (seconds / 3600 % 24, seconds / 60 % 60, seconds % 60);
            let day = 1 + seconds / 86_400 % 28;
            let mut line = String::new();
            let _ = writeln!(
                line,
                r#"{{"time":"2025-04-{day:02}T{h:02}:{m:02}:{s:02}.{op:06}Z","case":"C{:02}","id":"case-http-{op:07}","event":"{event}","witness":"{witness}","detail":{{"attempt":{},"latency_ms":{}.5,"note":"steady state, nothing unusual"}}{extra}}}"#,
                op % 50,
                i + 1,
                op % 997
            );
            all.push_str(&line);
            if *witness == "client" {
                client.push_str(&line);
            } else {
                fixture.push_str(&line);
            }
        }
    }
    (all.into_bytes(), client.into_bytes(), fixture.into_bytes())
}

/// How long `f` takes, once: wall-clock time, and CPU time over all threads.
fn time(f: impl FnOnce()) -> Cost {
    let (start, cpu) = (Instant::now(), cpu_time());
    f();
    Cost {
        wall: start.elapsed(),
        cpu: cpu_time().saturating_sub(cpu),
    }
}

/// How to read one clock's figure from a [`Cost`].
type Clock = fn(Cost) -> Duration;

/// The two clocks every figure is given by.
const CLOCKS: [(&str, Clock); 2] = [("wall", |c| c.wall), ("cpu", |c| c.cpu)];

/// What one measurement cost.
#[derive(Clone, Copy)]
struct Cost {
    wall: Duration,
    /// User and system time of every thread of the process.
    cpu: Duration,
}

impl Cost {
    const MAX: Cost = Cost {
        wall: Duration::MAX,
        cpu: Duration::MAX,
    };

    /// The best of two, each figure on its own.
    fn min(self, other: Cost) -> Cost {
        Cost {
            wall: self.wall.min(other.wall),
            cpu: self.cpu.min(other.cpu),
        }
    }
}

fn mb_per_s(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / 1e6 / time.as_secs_f64()
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (operations, runs) = if quick { (20_000, 5) } else { (100_000, 9) };
    let (log, client, fixture) = generate(operations);
    let mut sealed = Vec::new();
    seal(&log[..], &mut sealed, &mut Sealer::new(), 1 << 26).expect("the log seals");

    // SHA-256 alone, streamed over all the bytes, and one digest per line (what the
    // chain computes: one digest per record).
    let sha_stream = |bytes: &[u8]| {
        let mut hasher = sha2::Sha256::new();
        hasher.update(bytes);
        black_box(hasher.finalize());
    };
    // Lines are cut with `memchr`, as `seal` and `verify` cut them: a byte-at-a-time
    // `split` costs more than the digests themselves and would make this bound look
    // twice as slow as it is.
    let sha_lines = |bytes: &[u8]| {
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', bytes) {
            black_box(sha2::Sha256::digest(&bytes[start..end]));
            start = end + 1;
        }
        if start < bytes.len() {
            black_box(sha2::Sha256::digest(&bytes[start..]));
        }
    };
    // What `seal` itself must hash: each record's hashed form (its sealed line without
    // `hash`, `prev` included), one digest per record. One thread of SHA-256 over
    // these is the least any seal on one core can cost.
    let hashed_forms: Vec<u8> = sealed
        .split(|&b| b == b'\n')
        .filter(|line| !line.is_empty())
        .flat_map(|line| {
            let at = line
                .windows(9)
                .position(|w| w == br#","hash":""#)
                .expect("bug: the bench's records sort a member before `hash`");
            let mut form = line[..at].to_vec();
            form.extend_from_slice(&line[at + 9 + 64 + 1..]);
            form.push(b'\n');
            form
        })
        .collect();
    let options = VerifyOptions {
        head: None,
        max_line_bytes: 1 << 26,
    };
    // `seal` is timed writing into one buffer kept from round to round (the table), and
    // into a new buffer each round (the line after it). Which is faster depends on the
    // size: a new buffer's pages are mapped and zeroed by the kernel as they are first
    // written, which costs a quarter of the time at 400,000 records, but at 80,000 they
    // come zeroed and in cache, and writing them beats writing a buffer no longer there.
    let mut out = Vec::with_capacity(sealed.len());
    // What the CLI does: `seal LOG -o OUT` reads the file through a 64 KiB buffer and
    // writes the sealed log to a file; SHA-256 reads the same file the same way.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (log_path, sealed_path) = (
        dir.path().join("log.jsonl"),
        dir.path().join("sealed.jsonl"),
    );
    std::fs::write(&log_path, &log).expect("the log is written");
    let read_log = || BufReader::with_capacity(1 << 16, File::open(&log_path).expect("opens"));
    {
        let mut file = BufWriter::new(File::create(&sealed_path).expect("creates"));
        seal(read_log(), &mut file, &mut Sealer::new(), 1 << 26).expect("seals");
        file.flush().expect("writes");
    }
    assert!(
        std::fs::read(&sealed_path).expect("reads") == sealed,
        "bug: the bench's seal to a file wrote another log"
    );
    // The machine is shared and its load changes: every measurement runs once per
    // round, interleaved, and each keeps its best round.
    let mut times = [Cost::MAX; 12];
    for _ in 0..runs {
        let round = [
            time(|| sha_lines(&hashed_forms)),
            time(|| sha_stream(&log)),
            time(|| sha_lines(&log)),
            time(|| sha_stream(&sealed)),
            time(|| sha_lines(&sealed)),
            time(|| {
                out.clear();
                seal(&log[..], &mut out, &mut Sealer::new(), 1 << 26).expect("seals");
                black_box(&out);
            }),
            time(|| {
                let mut fresh = Vec::with_capacity(sealed.len());
                seal(&log[..], &mut fresh, &mut Sealer::new(), 1 << 26).expect("seals");
                black_box(fresh);
            }),
            // Writing the sealed bytes alone into a new buffer: the least any writer of
            // them into new memory pays for its pages.
            time(|| {
                let mut fresh = Vec::with_capacity(sealed.len());
                fresh.extend_from_slice(&sealed);
                black_box(fresh);
            }),
            time(|| {
                let mut hasher = sha2::Sha256::new();
                let mut input = read_log();
                loop {
                    let chunk = input.fill_buf().expect("reads");
                    if chunk.is_empty() {
                        break;
                    }
                    hasher.update(chunk);
                    let n = chunk.len();
                    input.consume(n);
                }
                black_box(hasher.finalize());
            }),
            time(|| {
                let mut file = BufWriter::new(File::create(&sealed_path).expect("creates"));
                seal(read_log(), &mut file, &mut Sealer::new(), 1 << 26).expect("seals");
                file.flush().expect("writes");
            }),
            // Writing the sealed bytes alone to a new file: the least `seal -o` pays
            // for its output.
            time(|| {
                let mut file = File::create(&sealed_path).expect("creates");
                file.write_all(&sealed).expect("writes");
            }),
            time(|| {
                let verified = verify(&sealed[..], &options).expect("reads");
                assert!(verified.broken.is_none());
                black_box(verified);
            }),
        ];
        for (best, this) in times.iter_mut().zip(round) {
            *best = best.min(this);
        }
    }
    let [
        sha_hashed_forms,
        sha_log_stream,
        sha_log_lines,
        sha_sealed_stream,
        sha_sealed_lines,
        seal_time,
        seal_fresh_time,
        copy_fresh_time,
        sha_file_time,
        seal_file_time,
        write_file_time,
        verify_time,
    ] = times;
    assert!(out == sealed, "bug: the bench's seal wrote another log");

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .map(|text| text.split(' ').take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into());
    println!(
        "chain: {} records; log {:.1} MB, sealed {:.1} MB; best of {runs} interleaved rounds; {cores} cores, load average {load}",
        operations * 4,
        log.len() as f64 / 1e6,
        sealed.len() as f64 / 1e6
    );
    // Wall-clock time is what a user waits (`seal` and `verify` use every core); CPU
    // time over all threads is the work done, which the machine's other load moves less.
    println!(
        "  each ratio is the tool's throughput over SHA-256's, in bytes per second over the same bytes (seal: the log it reads; verify: the sealed log):"
    );
    println!(
        "  wall = wall-clock time of seal/verify with all its threads vs one thread of SHA-256 (streamed: one digest over all the bytes; lines: one digest per line)"
    );
    println!(
        "  cpu  = CPU time of all of seal/verify's threads (idle pool threads spinning included) vs that one thread's CPU time"
    );
    for (clock, pick) in CLOCKS {
        println!(
            "{:<12} {:>8} {:>20} {:>18} {:>10} {:>9}",
            clock, "MB/s", "SHA-256 stream MB/s", "SHA-256 line MB/s", "vs stream", "vs lines"
        );
        for (name, bytes, cost, stream, lines) in [
            (
                "  seal",
                log.len(),
                seal_time,
                sha_log_stream,
                sha_log_lines,
            ),
            (
                "  verify",
                sealed.len(),
                verify_time,
                sha_sealed_stream,
                sha_sealed_lines,
            ),
        ] {
            let (own, stream, lines) = (
                mb_per_s(bytes, pick(cost)),
                mb_per_s(bytes, pick(stream)),
                mb_per_s(bytes, pick(lines)),
            );
            println!(
                "{name:<12} {own:>8.0} {stream:>20.0} {lines:>18.0} {:>9.0}% {:>8.0}%",
                own / stream * 100.0,
                own / lines * 100.0
            );
        }
    }

    for (clock, pick) in CLOCKS {
        let fresh = mb_per_s(log.len(), pick(seal_fresh_time));
        println!(
            "seal into a new buffer each round ({clock}): {fresh:.0} MB/s, {:.0}% of streamed SHA-256 (its output's {:.1} MB of pages mapped as they are first written)",
            fresh / mb_per_s(log.len(), pick(sha_log_stream)) * 100.0,
            sealed.len() as f64 / 1e6
        );
    }

    for (clock, pick) in CLOCKS {
        println!(
            "  of which writing {:.1} MB into new pages alone ({clock}, a copy of the sealed log into a new buffer): {:.0} ms of seal's {:.0} ms",
            sealed.len() as f64 / 1e6,
            pick(copy_fresh_time).as_secs_f64() * 1e3,
            pick(seal_fresh_time).as_secs_f64() * 1e3,
        );
    }
    for (clock, pick) in CLOCKS {
        let (own, sha) = (
            mb_per_s(log.len(), pick(seal_file_time)),
            mb_per_s(log.len(), pick(sha_file_time)),
        );
        println!(
            "seal file to file, as `seal LOG -o OUT` ({clock}): {own:.0} MB/s; SHA-256 streamed over the same file read the same way {sha:.0} MB/s: {:.0}%; writing the {:.1} MB sealed alone to a new file takes {:.0} ms of seal's {:.0} ms",
            own / sha * 100.0,
            sealed.len() as f64 / 1e6,
            pick(write_file_time).as_secs_f64() * 1e3,
            pick(seal_file_time).as_secs_f64() * 1e3,
        );
    }

    // The chain's own hashing, for scale: the ratio `seal` could reach if reading,
    // canonicalizing, linking and writing cost nothing and one core hashed.
    for (clock, pick) in CLOCKS {
        let floor = mb_per_s(log.len(), pick(sha_hashed_forms));
        println!(
            "seal's own hashing ({clock}): one digest per record over its hashed form ({:.1} MB, `prev` included), one thread: {floor:.0} MB/s of the log, {:.0}% of streamed SHA-256; seal runs at {:.0}% of it",
            hashed_forms.len() as f64 / 1e6,
            floor / mb_per_s(log.len(), pick(sha_log_stream)) * 100.0,
            mb_per_s(log.len(), pick(seal_time)) / floor * 100.0,
        );
    }

    join(&log, &client, &fixture, runs);
}

/// A joined check of the two witnesses against checking the pre-sorted log.
fn join(log: &[u8], client: &[u8], fixture: &[u8], runs: usize) {
    let source = Arc::new(SpecSource::new("bench.tg", SPEC.to_string()));
    let machine = tracegate::spec::analyzer::load(source).expect("the bench spec compiles");
    let specs = std::slice::from_ref(&machine);
    let options = CheckOptions {
        trace_by: Some(vec![tracegate::spec::ast::Segment::Key("id".into())]),
        ..CheckOptions::default()
    };
    let file: Arc<Path> = Arc::from(Path::new("all.jsonl"));
    let inputs = || -> Vec<(Arc<Path>, JoinInput<&[u8]>)> {
        vec![
            (
                Arc::from(Path::new("client.jsonl")),
                JoinInput::Lines(client),
            ),
            (
                Arc::from(Path::new("fixture.jsonl")),
                JoinInput::Lines(fixture),
            ),
        ]
    };
    let check_plain = || {
        time(|| {
            let outcome = check_reader(specs, file.clone(), log, &options);
            assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
            black_box(outcome);
        })
    };
    let check_joined = || {
        time(|| {
            let outcome =
                tracegate::joined::check_joined(specs, inputs(), TimeField::default(), &options);
            assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
            black_box(outcome);
        })
    };
    // Each round checks both ways back to back, first one then the other in turn, so
    // that both meet the same load; the ratio of each round is kept. A single best of
    // each swung between 3 % and 87 % on a shared machine: the median of the rounds'
    // ratios, with their middle half, says how far to trust it.
    let rounds = runs * 3;
    let (mut plain, mut joined) = (Cost::MAX, Cost::MAX);
    let (mut wall_ratios, mut cpu_ratios) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (this_plain, this_joined) = if round % 2 == 0 {
            let plain = check_plain();
            (plain, check_joined())
        } else {
            let joined = check_joined();
            (check_plain(), joined)
        };
        plain = plain.min(this_plain);
        joined = joined.min(this_joined);
        wall_ratios.push(this_joined.wall.as_secs_f64() / this_plain.wall.as_secs_f64());
        cpu_ratios.push(this_joined.cpu.as_secs_f64() / this_plain.cpu.as_secs_f64());
    }
    for (clock, plain, joined, ratios) in [
        ("wall", plain.wall, joined.wall, &mut wall_ratios),
        ("cpu", plain.cpu, joined.cpu, &mut cpu_ratios),
    ] {
        ratios.sort_by(f64::total_cmp);
        let percent = |ratio: f64| (ratio - 1.0) * 100.0;
        let at = |fraction: f64| {
            percent(ratios[((ratios.len() - 1) as f64 * fraction).round() as usize])
        };
        println!(
            "join ({clock}): checking the concatenated, pre-sorted log {:.0} MB/s; joining client + fixture {:.0} MB/s (best of {rounds} rounds each); the join adds {:.0}% in {clock} time best against best, {:.0}% in the median round (middle half {:.0}% to {:.0}%)",
            mb_per_s(log.len(), plain),
            mb_per_s(log.len(), joined),
            percent(joined.as_secs_f64() / plain.as_secs_f64()),
            at(0.5),
            at(0.25),
            at(0.75),
        );
    }
}
