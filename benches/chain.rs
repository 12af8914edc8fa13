//! Throughput of `seal` and `verify` side by side with plain SHA-256 over the same
//! bytes, and of a joined check side by side with checking the concatenated,
//! pre-sorted stream, in one run.
//!
//! Run with `cargo bench --bench chain` (add `-- --quick` for a shorter run). It
//! generates a native JSONL log of realistic records and prints MB/s for each
//! measurement and the ratios the targets are stated in: seal and verify at least 50 %
//! of SHA-256's throughput over the same bytes; a join costing at most 30 % more than
//! checking the same records already sorted, as one stream.

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sha2::Digest as _;
use tracegate::chain::seal::{Sealer, seal};
use tracegate::chain::verify::{VerifyOptions, verify};
use tracegate::check::{CheckOptions, check_reader};
use tracegate::machine::SpecSource;

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

/// How long `f` takes, once.
fn time(f: impl FnOnce()) -> Duration {
    let start = Instant::now();
    f();
    start.elapsed()
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
    let sha_lines = |bytes: &[u8]| {
        for line in bytes.split(|&b| b == b'\n') {
            black_box(sha2::Sha256::digest(line));
        }
    };
    let options = VerifyOptions {
        head: None,
        max_line_bytes: 1 << 26,
    };
    // The machine is shared and its load changes: every measurement runs once per
    // round, interleaved, and each keeps its best round.
    let mut times = [Duration::MAX; 6];
    for _ in 0..runs {
        let round = [
            time(|| sha_stream(&log)),
            time(|| sha_lines(&log)),
            time(|| sha_stream(&sealed)),
            time(|| sha_lines(&sealed)),
            time(|| {
                let mut out = Vec::with_capacity(sealed.len());
                seal(&log[..], &mut out, &mut Sealer::new(), 1 << 26).expect("seals");
                black_box(out);
            }),
            time(|| {
                let verified = verify(&sealed[..], &options).expect("reads");
                assert!(verified.broken.is_none());
                black_box(verified);
            }),
        ];
        for (best, this) in times.iter_mut().zip(round) {
            *best = (*best).min(this);
        }
    }
    let [
        sha_log_stream,
        sha_log_lines,
        sha_sealed_stream,
        sha_sealed_lines,
        seal_time,
        verify_time,
    ] = times;

    println!(
        "chain: {} records; log {:.1} MB, sealed {:.1} MB; best of {runs} interleaved rounds",
        operations * 4,
        log.len() as f64 / 1e6,
        sealed.len() as f64 / 1e6
    );
    println!(
        "{:<8} {:>10} {:>18} {:>17} {:>12} {:>12}",
        "", "MB/s", "SHA-256 stream MB/s", "SHA-256 line MB/s", "vs stream", "vs lines"
    );
    for (name, bytes, time, stream, lines) in [
        ("seal", log.len(), seal_time, sha_log_stream, sha_log_lines),
        (
            "verify",
            sealed.len(),
            verify_time,
            sha_sealed_stream,
            sha_sealed_lines,
        ),
    ] {
        let (own, stream, lines) = (
            mb_per_s(bytes, time),
            mb_per_s(bytes, stream),
            mb_per_s(bytes, lines),
        );
        println!(
            "{name:<8} {own:>10.0} {stream:>18.0} {lines:>17.0} {:>11.0}% {:>11.0}%",
            own / stream * 100.0,
            own / lines * 100.0
        );
    }

    join(&log, &client, &fixture, runs);
}

/// A joined check of the two witnesses against checking the pre-sorted log.
fn join(log: &[u8], client: &[u8], fixture: &[u8], runs: usize) {
    let source = Arc::new(SpecSource {
        path: "bench.tg".into(),
        text: SPEC.to_string(),
    });
    let machine = tracegate::spec::analyzer::load(source).expect("the bench spec compiles");
    let specs = std::slice::from_ref(&machine);
    let options = CheckOptions {
        trace_by: Some(vec![tracegate::spec::ast::Segment::Key("id".into())]),
        ..CheckOptions::default()
    };
    let file: Arc<Path> = Arc::from(Path::new("all.jsonl"));
    let inputs = || -> Vec<(Arc<Path>, Box<dyn BufRead>)> {
        vec![
            (Arc::from(Path::new("client.jsonl")), Box::new(client)),
            (Arc::from(Path::new("fixture.jsonl")), Box::new(fixture)),
        ]
    };
    let (mut plain, mut joined) = (Duration::MAX, Duration::MAX);
    for _ in 0..runs {
        plain = plain.min(time(|| {
            let outcome = check_reader(specs, file.clone(), log, &options);
            assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
            black_box(outcome);
        }));
        joined = joined.min(time(|| {
            let outcome = tracegate::joined::check_joined(specs, inputs(), &options);
            assert!(outcome.diagnostics.is_empty(), "{:?}", outcome.diagnostics);
            black_box(outcome);
        }));
    }
    println!(
        "join: checking the sorted log {:.0} MB/s; joining client + fixture {:.0} MB/s; the join adds {:.0}%",
        mb_per_s(log.len(), plain),
        mb_per_s(log.len(), joined),
        (joined.as_secs_f64() / plain.as_secs_f64() - 1.0) * 100.0
    );
}
