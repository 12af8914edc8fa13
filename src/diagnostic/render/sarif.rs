//! SARIF 2.1.0 output, for GitHub code scanning and other SARIF viewers.
//!
//! The standard is frozen, so the part of it used here is written out as serde
//! structs rather than taken from a crate. One run; `tool.driver.rules` holds every
//! diagnostic code, with its summary and `explain` text; each finding with a place is a
//! result: the trace record (with its JSON pointer in the location's property bag), the
//! spec rule as a related location, the path that led there as a code flow, and
//! `partialFingerprints` built from what identifies the finding rather than where it
//! is, so it stays the same across runs, machines and unrelated edits. Problems with no
//! place at all (no input found) are tool execution notifications.
//!
//! `tests/sarif.rs` validates the output against the official schema.

use serde::Serialize;

use super::run::{Run, fingerprint};
use crate::diagnostic::{Category, Code, Diagnostic, SpecSite, TraceSite, explain};
use crate::redact::redact;

pub(crate) const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";
/// The name of the fingerprint in `partialFingerprints`; the version changes only if
/// what it is computed from changes.
const FINGERPRINT: &str = "tracegate/v1";

#[derive(Serialize)]
struct Log<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    version: &'static str,
    runs: [SarifRun<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifRun<'a> {
    tool: Tool<'a>,
    invocations: [Invocation; 1],
    results: Vec<SarifResult>,
    column_kind: &'static str,
}

#[derive(Serialize)]
struct Tool<'a> {
    driver: Driver<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Driver<'a> {
    name: &'static str,
    version: &'a str,
    semantic_version: &'a str,
    rules: Vec<Rule>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    id: &'static str,
    name: String,
    short_description: Text,
    full_description: Text,
    help: Help,
    default_configuration: Configuration,
    properties: RuleProperties,
}

/// A rule's help: the `explain` text, which is Markdown as it is (its example is an
/// indented code block).
#[derive(Serialize)]
struct Help {
    text: String,
    markdown: String,
}

#[derive(Serialize)]
struct Configuration {
    level: &'static str,
}

#[derive(Serialize)]
struct RuleProperties {
    category: &'static str,
}

#[derive(Serialize)]
struct Text {
    text: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Invocation {
    execution_successful: bool,
    tool_execution_notifications: Vec<Notification>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Notification {
    level: &'static str,
    message: Text,
    descriptor: Reference,
}

#[derive(Serialize)]
struct Reference {
    id: &'static str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SarifResult {
    rule_id: &'static str,
    rule_index: usize,
    level: &'static str,
    message: Text,
    locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    related_locations: Vec<Location>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    code_flows: Vec<CodeFlow>,
    partial_fingerprints: std::collections::BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<ResultProperties>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ResultProperties {
    spec: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    trace: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Location {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<usize>,
    physical_location: PhysicalLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<Text>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<LocationProperties>,
}

#[derive(Serialize)]
struct LocationProperties {
    /// The JSON pointer of the record inside its line's document.
    pointer: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhysicalLocation {
    artifact_location: ArtifactLocation,
    #[serde(skip_serializing_if = "Option::is_none")]
    region: Option<Region>,
}

#[derive(Serialize)]
struct ArtifactLocation {
    uri: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Region {
    start_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    start_column: Option<u64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CodeFlow {
    message: Text,
    thread_flows: [ThreadFlow; 1],
}

#[derive(Serialize)]
struct ThreadFlow {
    locations: Vec<ThreadFlowLocation>,
}

#[derive(Serialize)]
struct ThreadFlowLocation {
    location: Location,
}

/// The SARIF log of `run`, as one line of JSON.
pub fn render(run: &Run<'_>) -> String {
    let mut results = Vec::new();
    let mut notifications = Vec::new();
    // Identical findings (same code, spec, place and instance) are told apart by their
    // order, which is stable: the report order is.
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    let diagnostics = run
        .problems
        .iter()
        .chain(run.files.iter().flat_map(|file| file.diagnostics));
    for diagnostic in diagnostics {
        match result(run, diagnostic) {
            Some(mut result) => {
                let base = result.partial_fingerprints[FINGERPRINT].clone();
                let n = seen.entry(base.clone()).or_default();
                *n += 1;
                if *n > 1 {
                    let nth = n.to_string();
                    result
                        .partial_fingerprints
                        .insert(FINGERPRINT, fingerprint([base.as_str(), nth.as_str()]));
                }
                results.push(result);
            }
            None => notifications.push(Notification {
                level: level(diagnostic.code),
                message: Text {
                    text: message(diagnostic),
                },
                descriptor: Reference {
                    id: diagnostic.code.as_str(),
                },
            }),
        }
    }
    let log = Log {
        schema: SCHEMA,
        version: "2.1.0",
        runs: [SarifRun {
            tool: Tool {
                driver: Driver {
                    name: "tracegate",
                    version: run.version,
                    semantic_version: run.version,
                    rules: Code::ALL.iter().map(|&code| rule(code)).collect(),
                },
            },
            invocations: [Invocation {
                execution_successful: run.summary.errors == 0,
                tool_execution_notifications: notifications,
            }],
            results,
            column_kind: "unicodeCodePoints",
        }],
    };
    // Compact: GitHub limits the size of an upload, and a large run has many results.
    let mut text = serde_json::to_string(&log).expect("bug: SARIF always serializes");
    text.push('\n');
    text
}

fn rule(code: Code) -> Rule {
    let explanation = explain::explain(code);
    Rule {
        id: code.as_str(),
        name: pascal_case(code.as_str()),
        short_description: Text {
            text: code.summary().to_string(),
        },
        full_description: Text {
            text: meaning(explanation),
        },
        help: Help {
            text: explanation.to_string(),
            markdown: explanation.to_string(),
        },
        default_configuration: Configuration { level: level(code) },
        properties: RuleProperties {
            category: match code.category() {
                Category::Violation => "violation",
                Category::Error => "error",
                Category::Warning => "warning",
            },
        },
    }
}

/// The `## What it means` section of an explanation, as one paragraph.
fn meaning(explanation: &str) -> String {
    let section = explanation
        .split_once("## What it means\n")
        .map_or(explanation, |(_, rest)| rest);
    let section = section.split("\n## ").next().unwrap_or(section);
    section.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `forbidden-transition` → `ForbiddenTransition` (SARIF's `name` is an identifier).
fn pascal_case(kebab: &str) -> String {
    kebab
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

fn level(code: Code) -> &'static str {
    match code.category() {
        Category::Violation | Category::Error => "error",
        Category::Warning => "warning",
    }
}

/// The message with its hint, secrets masked.
fn message(diagnostic: &Diagnostic) -> String {
    let text = match &diagnostic.hint {
        Some(hint) => format!("{}\nhelp: {hint}", diagnostic.message),
        None => diagnostic.message.clone(),
    };
    redact(&text).into_owned()
}

fn result(run: &Run<'_>, diagnostic: &Diagnostic) -> Option<SarifResult> {
    let primary = match (&diagnostic.trace, &diagnostic.spec) {
        (Some(site), _) => trace_location(run, site, None),
        (None, Some(spec)) => spec_location(run, spec, None),
        (None, None) => return None,
    };
    let uri = primary.physical_location.artifact_location.uri.clone();
    let mut related = Vec::new();
    if diagnostic.trace.is_some() {
        if let Some(spec) = &diagnostic.spec {
            related.push(spec_location(
                run,
                spec,
                Some(format!("the rule of spec `{}`", spec.spec)),
            ));
        }
    }
    for (site, note) in &diagnostic.related {
        related.push(spec_location(run, site, Some(note.clone())));
    }
    for (id, location) in related.iter_mut().enumerate() {
        location.id = Some(id);
    }
    let detail = diagnostic.violation.as_deref();
    let code_flows = match (detail, &diagnostic.trace) {
        (Some(detail), Some(site)) => {
            let mut steps: Vec<ThreadFlowLocation> = detail
                .path
                .iter()
                .map(|step| ThreadFlowLocation {
                    location: trace_location(
                        run,
                        &TraceSite {
                            loc: crate::trace::Location {
                                line: step.line,
                                ..site.loc.clone()
                            },
                            ..site.clone()
                        },
                        Some(format!("in `{}`: `{}`", step.state, step.event)),
                    ),
                })
                .collect();
            // The pointer belongs to the offending record only.
            for step in &mut steps {
                step.location.properties = None;
            }
            let last = match &detail.event {
                Some(event) => format!("in `{}`: `{event}` — {}", detail.state, diagnostic.message),
                None => format!("the trace ends in `{}`", detail.state),
            };
            steps.push(ThreadFlowLocation {
                location: trace_location(run, site, Some(last)),
            });
            let elided = if detail.path_elided > 0 {
                format!(" ({} earlier moves not kept)", detail.path_elided)
            } else {
                String::new()
            };
            vec![CodeFlow {
                message: Text {
                    text: format!("the path to `{}`{elided}", detail.state),
                },
                thread_flows: [ThreadFlow { locations: steps }],
            }]
        }
        _ => Vec::new(),
    };
    let spec_name = diagnostic.spec.as_ref().map_or("", |s| s.spec.as_str());
    let trace_name = diagnostic.trace.as_ref().and_then(|s| s.trace.as_deref());
    let key = detail.and_then(|d| d.key.as_deref());
    let pointer = diagnostic.trace.as_ref().map_or("", |s| &*s.loc.pointer);
    // What the finding is, not where: no line numbers, which move when a trace is edited.
    let print = fingerprint([
        diagnostic.code.as_str(),
        spec_name,
        uri.as_str(),
        trace_name.unwrap_or(""),
        key.unwrap_or(""),
        detail.map_or("", |d| d.state.as_str()),
        detail.and_then(|d| d.event.as_deref()).unwrap_or(""),
        if detail.is_some() { "" } else { pointer },
        if detail.is_some() {
            ""
        } else {
            diagnostic.message.as_str()
        },
    ]);
    let properties = (!spec_name.is_empty() || detail.is_some()).then(|| ResultProperties {
        spec: spec_name.to_string(),
        trace: trace_name.map(|t| redact(t).into_owned()),
        key: key.map(|k| redact(k).into_owned()),
        state: detail.map(|d| d.state.clone()),
        event: detail.and_then(|d| d.event.clone()),
    });
    Some(SarifResult {
        rule_id: diagnostic.code.as_str(),
        rule_index: Code::ALL
            .iter()
            .position(|&c| c == diagnostic.code)
            .expect("bug: every code is in `Code::ALL`"),
        level: level(diagnostic.code),
        message: Text {
            text: message(diagnostic),
        },
        locations: vec![primary],
        related_locations: related,
        code_flows,
        partial_fingerprints: [(FINGERPRINT, print)].into_iter().collect(),
        properties,
    })
}

fn trace_location(run: &Run<'_>, site: &TraceSite, message: Option<String>) -> Location {
    Location {
        id: None,
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: uri(&run.paths.name(&site.file)),
            },
            // Line 0 means the file as a whole (it could not be opened).
            region: (site.loc.line > 0).then_some(Region {
                start_line: site.loc.line,
                start_column: None,
            }),
        },
        message: message.map(|text| Text { text }),
        properties: (!site.loc.pointer.is_empty()).then(|| LocationProperties {
            pointer: site.loc.pointer.to_string(),
        }),
    }
}

fn spec_location(run: &Run<'_>, spec: &SpecSite, message: Option<String>) -> Location {
    let (line, column) = spec.line_col();
    Location {
        id: None,
        physical_location: PhysicalLocation {
            artifact_location: ArtifactLocation {
                uri: uri(&run.paths.name(&spec.source.path)),
            },
            region: Some(Region {
                start_line: line as u64,
                start_column: Some(column as u64),
            }),
        },
        message: message.map(|text| Text { text }),
        properties: None,
    }
}

/// A report name as a URI reference: every byte outside the unreserved set and `/` is
/// percent-encoded; an absolute name becomes a `file://` URI.
fn uri(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    if name.starts_with('/') {
        out.push_str("file://");
    }
    for byte in name.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_are_percent_encoded() {
        assert_eq!(uri("traces/a b#1.jsonl"), "traces/a%20b%231.jsonl");
        assert_eq!(uri("/tmp/t.jsonl"), "file:///tmp/t.jsonl");
    }

    #[test]
    fn rule_names_are_identifiers_and_descriptions_come_from_explain() {
        let rule = rule(Code::ForbiddenTransition);
        assert_eq!(rule.name, "ForbiddenTransition");
        assert!(
            rule.full_description
                .text
                .starts_with("A record matched an event that a `forbid` rule names"),
            "{}",
            rule.full_description.text
        );
        assert!(!rule.full_description.text.contains("## "));
    }
}
