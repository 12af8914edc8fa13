//! The process's CPU time, for benchmarks that run more than one thread and give their
//! figures by both clocks. A benchmark includes this file as a module (`#[path =
//! "support/cpu.rs"] mod cpu;`).

use std::time::Duration;

/// The process's CPU time so far, all threads, user and system; zero where it cannot
/// be read.
pub fn cpu_time() -> Duration {
    #[cfg(unix)]
    {
        // SAFETY: `getrusage` writes only into the `rusage` it is handed.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } == 0 {
            let time = |t: libc::timeval| {
                Duration::new(t.tv_sec as u64, 0) + Duration::from_micros(t.tv_usec as u64)
            };
            return time(usage.ru_utime) + time(usage.ru_stime);
        }
    }
    Duration::ZERO
}
