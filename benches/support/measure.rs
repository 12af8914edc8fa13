//! What the format benchmarks share: timing a run and its peak heap, and writing an
//! input file. A benchmark includes this file as a module (`#[path =
//! "support/measure.rs"] mod measure;`) beside `counting`, whose allocator it reads.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::counting;

pub struct Figures {
    pub seconds: f64,
    pub peak_bytes: usize,
}

/// Runs `f` `runs` times and keeps the fastest, then once more with allocation
/// counting on, for the most heap it held at once.
pub fn measure(runs: usize, mut f: impl FnMut()) -> Figures {
    let mut best = Duration::MAX;
    for _ in 0..runs {
        let start = Instant::now();
        f();
        best = best.min(start.elapsed());
    }
    Figures {
        seconds: best.as_secs_f64(),
        peak_bytes: counting::peak(f),
    }
}

/// Writes `bytes` to the file `name` in `dir`.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    let mut file = std::fs::File::create(&path).expect("the temporary directory is writable");
    file.write_all(bytes)
        .expect("the temporary file is written");
    path
}
