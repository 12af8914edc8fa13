//! JUnit XML output, as GitLab, Jenkins and the common GitHub test reporters read it.
//!
//! A `testsuite` per spec and a `testcase` per (spec, trace file) with the time it took
//! to check that file; a `failure` per violation, with its message, place, rule and
//! path; an `error` per input error of the file (each spec checked against it is
//! affected, so each of its cases carries it). Problems of the run itself (spec errors,
//! no input) are cases of their spec's suite, or of a `tracegate` suite when no spec is
//! known. Every count attribute is the count of the elements it sums.

use std::fmt::Write;

use super::run::Run;
use crate::diagnostic::{Diagnostic, TraceSite};
use crate::redact::redact;

/// One `testcase`.
pub(crate) struct Case {
    pub name: String,
    pub file: Option<String>,
    pub seconds: f64,
    pub failures: Vec<Entry>,
    pub errors: Vec<Entry>,
}

/// A `failure` or an `error`.
pub(crate) struct Entry {
    /// `failure` or `error`.
    pub kind: &'static str,
    /// The diagnostic code, as the `type`.
    pub code: String,
    pub message: String,
    pub body: String,
}

/// The suite that holds problems of the run with no spec.
const RUN_SUITE: &str = "tracegate";

/// The JUnit XML report of `run`.
pub fn render(run: &Run<'_>) -> String {
    // Suites in the order their specs were loaded.
    let mut suites: Vec<(String, Vec<Case>)> = Vec::new();
    let mut suite = |name: &str| -> usize {
        match suites.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                suites.push((name.to_string(), Vec::new()));
                suites.len() - 1
            }
        }
    };
    let mut placed: Vec<(usize, Case)> = Vec::new();
    for problem in run.problems {
        let spec = problem
            .spec
            .as_ref()
            .map(|s| s.spec.as_str())
            .filter(|s| !s.is_empty())
            .unwrap_or(RUN_SUITE);
        let file = place(run, problem);
        placed.push((
            suite(spec),
            Case {
                name: file.clone().unwrap_or_else(|| problem.code.to_string()),
                file: file_of(run, problem),
                seconds: 0.0,
                failures: Vec::new(),
                errors: vec![entry(run, problem)],
            },
        ));
    }
    for file in &run.files {
        let name = run.paths.name(file.path);
        for &index in &file.specs {
            let spec = run.specs[index].name;
            let mut case = Case {
                name: name.clone(),
                file: Some(name.clone()),
                seconds: file.seconds,
                failures: Vec::new(),
                errors: Vec::new(),
            };
            for diagnostic in file.diagnostics {
                let of_spec = diagnostic.spec.as_ref().map(|s| &s.spec);
                match of_spec {
                    Some(owner) if owner != spec => {}
                    _ if diagnostic.is_violation() => case.failures.push(entry(run, diagnostic)),
                    _ => case.errors.push(entry(run, diagnostic)),
                }
            }
            placed.push((suite(spec), case));
        }
    }
    for (index, case) in placed {
        suites[index].1.push(case);
    }
    write(&suites, None)
}

/// The JUnit XML of `suites` (each a name and its cases), with every count the count
/// of the elements it sums. Times are the sums of the cases' times, unless `times`
/// gives the whole report's and each suite's (merged reports add the times their
/// parts gave, which were summed before rounding).
pub(crate) fn write(suites: &[(String, Vec<Case>)], times: Option<(f64, &[f64])>) -> String {
    let count = |cases: &[Case]| {
        (
            cases.len(),
            cases.iter().map(|c| c.failures.len()).sum::<usize>(),
            cases.iter().map(|c| c.errors.len()).sum::<usize>(),
            cases.iter().map(|c| c.seconds).sum::<f64>(),
        )
    };
    let all: Vec<&Case> = suites.iter().flat_map(|(_, cases)| cases).collect();
    let (tests, failures, errors, seconds) = (
        all.len(),
        all.iter().map(|c| c.failures.len()).sum::<usize>(),
        all.iter().map(|c| c.errors.len()).sum::<usize>(),
        times.map_or_else(|| all.iter().map(|c| c.seconds).sum::<f64>(), |t| t.0),
    );
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"tracegate\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" time=\"{seconds:.3}\">"
    );
    for (index, (name, cases)) in suites.iter().enumerate() {
        let (tests, failures, errors, mut seconds) = count(cases);
        if let Some(&given) = times.and_then(|t| t.1.get(index)) {
            seconds = given;
        }
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"0\" time=\"{seconds:.3}\">",
            escape(name)
        );
        for case in cases {
            let _ = write!(
                out,
                "    <testcase name=\"{}\" classname=\"{}\"",
                escape(&case.name),
                escape(name)
            );
            if let Some(file) = &case.file {
                let _ = write!(out, " file=\"{}\"", escape(file));
            }
            let _ = write!(out, " time=\"{:.3}\"", case.seconds);
            if case.failures.is_empty() && case.errors.is_empty() {
                out.push_str("/>\n");
                continue;
            }
            out.push_str(">\n");
            for entry in case.failures.iter().chain(&case.errors) {
                let _ = writeln!(
                    out,
                    "      <{kind} message=\"{}\" type=\"{}\">{}</{kind}>",
                    escape(&entry.message),
                    escape(&entry.code),
                    escape(&entry.body),
                    kind = entry.kind,
                );
            }
            out.push_str("    </testcase>\n");
        }
        out.push_str("  </testsuite>\n");
    }
    out.push_str("</testsuites>\n");
    out
}

/// The file a diagnostic is in, if any.
fn file_of(run: &Run<'_>, diagnostic: &Diagnostic) -> Option<String> {
    match (&diagnostic.trace, &diagnostic.spec) {
        (Some(site), _) => Some(run.paths.name(&site.file)),
        (None, Some(spec)) => Some(run.paths.name(&spec.source.path)),
        (None, None) => None,
    }
}

fn entry(run: &Run<'_>, diagnostic: &Diagnostic) -> Entry {
    let mut body = format!("[{}] {}", diagnostic.code, diagnostic.message);
    if let Some(place) = place(run, diagnostic) {
        let _ = write!(body, "\n  at {place}");
    }
    if let Some(site) = &diagnostic.trace {
        if !site.loc.pointer.is_empty() {
            let _ = write!(body, " ({})", site.loc.pointer);
        }
        if let Some(trace) = &site.trace {
            let _ = write!(body, "\n  trace: {trace}");
        }
    }
    if diagnostic.trace.is_some() {
        if let Some(spec) = &diagnostic.spec {
            let (line, column) = spec.line_col();
            let _ = write!(
                body,
                "\n  rule: {}:{line}:{column} (spec `{}`)",
                run.paths.name(&spec.source.path),
                spec.spec
            );
        }
    }
    if let Some(detail) = &diagnostic.violation {
        if let Some(key) = &detail.key {
            let _ = write!(body, "\n  key: {key}");
        }
        let mut path: Vec<String> = detail
            .path
            .iter()
            .map(|step| format!("{} --{}--> (line {})", step.state, step.event, step.line))
            .collect();
        path.push(detail.state.clone());
        let _ = write!(body, "\n  path: {}", path.join(" "));
    }
    if let Some(hint) = &diagnostic.hint {
        let _ = write!(body, "\n  help: {hint}");
    }
    Entry {
        kind: if diagnostic.is_violation() {
            "failure"
        } else {
            "error"
        },
        code: diagnostic.code.as_str().to_string(),
        message: redact(&diagnostic.message).into_owned(),
        body: redact(&body).into_owned(),
    }
}

/// `file:line` of a diagnostic, if it has a place.
fn place(run: &Run<'_>, diagnostic: &Diagnostic) -> Option<String> {
    match (&diagnostic.trace, &diagnostic.spec) {
        (Some(TraceSite { file, loc, .. }), _) if loc.line > 0 => {
            Some(format!("{}:{}", run.paths.name(file), loc.line))
        }
        (Some(site), _) => Some(run.paths.name(&site.file)),
        (None, Some(spec)) => Some(format!(
            "{}:{}",
            run.paths.name(&spec.source.path),
            spec.line_col().0
        )),
        (None, None) => None,
    }
}

/// Text as XML attribute or element content: markup escaped, and characters XML 1.0
/// cannot hold (control characters other than tab and line ends) replaced.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_keeps_the_xml_well_formed() {
        assert_eq!(
            escape("a<b & \"c\"\u{1}"),
            "a&lt;b &amp; &quot;c&quot;\u{fffd}"
        );
    }
}
