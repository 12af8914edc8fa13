//! Checking several logs as one: the records of [`crate::trace::join::Join`] fed to a
//! [`Monitor`], each reported in its own file, and the join's problems as diagnostics.

use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

use crate::check::{CheckOptions, Monitor, Outcome};
use crate::diagnostic::{Code, Diagnostic, TraceSite};
use crate::machine::Machine;
use crate::trace::adapters;
use crate::trace::join::{Item, Join, JoinInput, ProblemKind, TimeField};
use crate::trace::reader::DEFAULT_MAX_LINE_BYTES;

/// Checks the records of `inputs` merged by `time` (see [`crate::trace::join`]) as one
/// stream, split into traces by `options.trace_by`. Input order breaks ties in time.
pub fn check_joined<R: BufRead>(
    specs: &[Machine],
    inputs: Vec<(Arc<Path>, JoinInput<R>)>,
    time: TimeField,
    options: &CheckOptions,
) -> Outcome {
    let max = options.max_line_bytes.unwrap_or(DEFAULT_MAX_LINE_BYTES);
    let first: Arc<Path> = inputs
        .first()
        .map_or_else(|| Arc::from(Path::new("")), |(file, _)| file.clone());
    let mut monitor = Monitor::new(specs, first, options.trace_by.clone());
    let name = time.name.clone();
    let mut join = Join::new(inputs, time, max);
    while let Some(item) = join.next() {
        match item {
            Item::Record { file, record } => monitor.feed_from(file, record),
            Item::Problem(problem) => {
                let diagnostic = match problem.kind {
                    ProblemKind::Input(kind) => Diagnostic::from_problem(
                        &problem.file,
                        adapters::Problem {
                            kind,
                            loc: problem.loc,
                            message: problem.message,
                            hint: problem.hint,
                        },
                    ),
                    kind => {
                        let code = match kind {
                            ProblemKind::UnusableTime => Code::UnusableTime,
                            ProblemKind::OutOfOrder => Code::TimeOutOfOrder,
                            ProblemKind::Unreadable => Code::UnreadableInput,
                            _ => Code::MalformedRecord,
                        };
                        let mut diagnostic = Diagnostic::new(code, problem.message);
                        diagnostic.hint = match kind {
                            ProblemKind::UnusableTime => Some(format!(
                                "joined records are ordered by `{name}`, an RFC 3339 date-time with an offset; this record was left out"
                            )),
                            ProblemKind::OutOfOrder => {
                                Some(format!("sort the file by `{name}` (stably) and join again"))
                            }
                            _ => None,
                        };
                        diagnostic.trace = Some(TraceSite {
                            file: problem.file,
                            trace: None,
                            loc: problem.loc,
                        });
                        diagnostic
                    }
                };
                monitor.report(diagnostic);
            }
        }
    }
    monitor.finish()
}
