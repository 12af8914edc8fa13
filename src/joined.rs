//! Checking several logs as one: the records of [`crate::trace::join::Join`] fed to a
//! [`Monitor`], each reported in its own file, and the join's problems as diagnostics.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use crate::check::{CheckOptions, Monitor, Outcome};
use crate::diagnostic::{Code, Diagnostic, TraceSite};
use crate::machine::Machine;
use crate::trace::join::{Item, Join, ProblemKind};
use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

/// Checks the records of `inputs` merged by time (see [`crate::trace::join`]) as one
/// stream, split into traces by `options.trace_by`. Input order breaks ties in time.
pub fn check_joined<R: BufRead>(
    specs: &[Machine],
    inputs: Vec<(Arc<Path>, R)>,
    options: &CheckOptions,
) -> Outcome {
    let max = options.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    let first: Arc<Path> = inputs
        .first()
        .map_or_else(|| Arc::from(Path::new("")), |(file, _)| file.clone());
    let mut monitor = Monitor::new(specs, first, options.trace_by.clone());
    let mut join = Join::new(inputs, max);
    while let Some(item) = join.next() {
        match item {
            Item::Record { file, record } => monitor.feed_from(file, record),
            Item::Problem(problem) => {
                let code = match problem.kind {
                    ProblemKind::Malformed => Code::MalformedRecord,
                    ProblemKind::UnusableTime => Code::UnusableTime,
                    ProblemKind::OutOfOrder => Code::TimeOutOfOrder,
                    ProblemKind::Unreadable => Code::UnreadableInput,
                };
                let mut diagnostic = Diagnostic::new(code, problem.message);
                diagnostic.hint = match problem.kind {
                    ProblemKind::UnusableTime => Some(
                        "joined records are ordered by `time`, an RFC 3339 date-time with an offset; this record was left out".into(),
                    ),
                    ProblemKind::OutOfOrder => {
                        Some("sort the file by `time` (stably) and join again".into())
                    }
                    _ => None,
                };
                diagnostic.trace = Some(TraceSite {
                    file: problem.file,
                    trace: None,
                    loc: problem.loc,
                });
                monitor.report(diagnostic);
            }
        }
    }
    monitor.finish()
}
