//! GitHub Actions output: one workflow command per finding, which the runner shows as
//! an annotation on the file and line (in the pull request's diff when the file is in
//! it), and a Markdown summary for `$GITHUB_STEP_SUMMARY`.
//!
//! The runner reads `::error file=F,line=L,title=T::MESSAGE`; in the message `%`, `\r`
//! and `\n` must be escaped as `%25`, `%0D` and `%0A`, and in property values `:` and
//! `,` too (`%3A`, `%2C`), or the command is cut short.

use super::run::{Paths, Run};
use crate::diagnostic::{Diagnostic, Summary};
use crate::redact::redact;

/// The workflow command for `diagnostic`, with its newline.
pub fn render(diagnostic: &Diagnostic, paths: &Paths) -> String {
    let command = if diagnostic.is_warning() {
        "warning"
    } else {
        "error"
    };
    let mut properties = Vec::new();
    match (&diagnostic.trace, &diagnostic.spec) {
        (Some(site), _) => {
            properties.push(("file", paths.name(&site.file)));
            if site.loc.line > 0 {
                properties.push(("line", site.loc.line.to_string()));
            }
        }
        (None, Some(spec)) => {
            let (line, column) = spec.line_col();
            properties.push(("file", paths.name(&spec.source.path)));
            properties.push(("line", line.to_string()));
            properties.push(("col", column.to_string()));
        }
        (None, None) => {}
    }
    let title = match diagnostic.spec.as_ref().filter(|s| !s.spec.is_empty()) {
        Some(spec) => format!("{} ({})", diagnostic.code, spec.spec),
        None => diagnostic.code.to_string(),
    };
    properties.push(("title", title));
    let properties: Vec<String> = properties
        .into_iter()
        .map(|(name, value)| format!("{name}={}", escape_property(&value)))
        .collect();
    let mut message = diagnostic.message.clone();
    if let Some(detail) = &diagnostic.violation {
        let path: Vec<String> = detail
            .path
            .iter()
            .map(|step| format!("{} --{}-->", step.state, step.event))
            .collect();
        if !path.is_empty() {
            message.push_str(&format!("\npath: {} {}", path.join(" "), detail.state));
        }
        if let Some(key) = &detail.key {
            message.push_str(&format!("\nkey: {key}"));
        }
    }
    if let Some(hint) = &diagnostic.hint {
        message.push_str(&format!("\nhelp: {hint}"));
    }
    let message = redact(&message);
    format!(
        "::{command} {}::{}\n",
        properties.join(","),
        escape_data(&message)
    )
}

/// The closing line: a notice with the counts.
pub fn render_summary(summary: &Summary) -> String {
    format!(
        "::notice title=tracegate::{}\n",
        escape_data(&counts(summary))
    )
}

fn counts(summary: &Summary) -> String {
    let mut counts = format!(
        "{} specs, {} traces, {} records: {} violations, {} errors",
        summary.specs, summary.traces, summary.records, summary.violations, summary.errors
    );
    if summary.warnings > 0 {
        counts.push_str(&format!(", {} warnings", summary.warnings));
    }
    counts
}

/// The Markdown summary of a run, for `$GITHUB_STEP_SUMMARY`: the counts, then a table
/// of findings per spec and code, then the first findings.
pub fn step_summary(run: &Run<'_>) -> String {
    /// Findings listed one by one; the rest are counted (the summary has a size limit).
    const LISTED: usize = 50;
    let summary = &run.summary;
    let verdict = if summary.errors > 0 {
        "❌ errors"
    } else if summary.violations > 0 {
        "❌ violations"
    } else if summary.warnings > 0 {
        "⚠️ warnings"
    } else {
        "✅ every trace conforms"
    };
    let mut out = format!("## tracegate: {verdict}\n\n{}\n\n", counts(summary));
    let mut table = std::collections::BTreeMap::<(String, &str), u64>::new();
    for diagnostic in run.diagnostics() {
        let spec = diagnostic
            .spec
            .as_ref()
            .map_or(String::new(), |s| s.spec.clone());
        *table.entry((spec, diagnostic.code.as_str())).or_default() += 1;
    }
    if !table.is_empty() {
        out.push_str("| spec | code | findings |\n|---|---|---:|\n");
        for ((spec, code), n) in &table {
            let spec = if spec.is_empty() { "—" } else { spec };
            out.push_str(&format!("| {} | `{code}` | {n} |\n", markdown_cell(spec)));
        }
        out.push('\n');
        let total = run.diagnostics().count();
        for diagnostic in run.diagnostics().take(LISTED) {
            let place = match (&diagnostic.trace, &diagnostic.spec) {
                (Some(site), _) if site.loc.line > 0 => {
                    format!("{}:{}", run.paths.name(&site.file), site.loc.line)
                }
                (Some(site), _) => run.paths.name(&site.file),
                (None, Some(spec)) => {
                    format!(
                        "{}:{}",
                        run.paths.name(&spec.source.path),
                        spec.line_col().0
                    )
                }
                (None, None) => String::new(),
            };
            out.push_str(&format!(
                "- `{}` {}{}\n",
                diagnostic.code,
                if place.is_empty() {
                    String::new()
                } else {
                    format!("`{}`: ", place.replace('`', "'"))
                },
                markdown_cell(&redact(&diagnostic.message))
            ));
        }
        if total > LISTED {
            out.push_str(&format!("- … and {} more\n", total - LISTED));
        }
        out.push('\n');
    }
    out
}

/// Text safe in a Markdown table cell or list item: one line, no `|`, no HTML.
fn markdown_cell(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
        .replace('|', "\\|")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A message, as the runner reads command data.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value, as the runner reads it.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Code, TraceSite};
    use crate::trace::Location;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    #[test]
    fn data_and_properties_are_escaped_as_the_runner_requires() {
        assert_eq!(escape_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }

    #[test]
    fn a_finding_is_one_command_on_its_file_and_line() {
        let mut diagnostic = Diagnostic::new(Code::MalformedRecord, "bad: line, 100%\nsee");
        diagnostic.trace = Some(TraceSite {
            file: Arc::from(Path::new("/repo/traces/a,b.jsonl")),
            trace: None,
            loc: Location {
                line: 7,
                ..Location::default()
            },
        });
        let paths = Paths {
            base: PathBuf::from("/repo"),
            root: PathBuf::from("/repo"),
        };
        assert_eq!(
            render(&diagnostic, &paths),
            "::error file=traces/a%2Cb.jsonl,line=7,title=malformed-record::bad: line, 100%25%0Asee\n"
        );
    }
}
