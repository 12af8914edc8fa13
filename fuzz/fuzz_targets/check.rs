//! The checker on any bytes, against every shipped spec: the first byte picks the
//! spec (or all of them) and how traces are split (`--trace-by`), the second the
//! format (detection, or one forced as `--format` forces it); the rest is the file. Checking never panics, every
//! finding renders as JSON and as the human report, and native lines decoded ahead on a
//! second thread give the same findings.
#![no_main]

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use tracegate::check::{CheckOptions, Outcome, check_input};
use tracegate::diagnostic::render::{MemoryResolver, human, json};
use tracegate::json::Segment;
use tracegate::machine::{Machine, SpecSource};
use tracegate::trace::adapters::{Format, InputOptions};
use tracegate::trace::input::TraceInput;

/// Every spec in `specs/`, by name.
const SPECS: [(&str, &str); 13] = [
    (
        "approval_budget.tg",
        include_str!("../../specs/approval_budget.tg"),
    ),
    (
        "fixture_agrees_with_tool.tg",
        include_str!("../../specs/fixture_agrees_with_tool.tg"),
    ),
    (
        "human_refusal_ends_branch.tg",
        include_str!("../../specs/human_refusal_ends_branch.tg"),
    ),
    (
        "ids_from_tool_output.tg",
        include_str!("../../specs/ids_from_tool_output.tg"),
    ),
    (
        "narrow_before_retry.tg",
        include_str!("../../specs/narrow_before_retry.tg"),
    ),
    (
        "no_guessed_identity_after_bad_response.tg",
        include_str!("../../specs/no_guessed_identity_after_bad_response.tg"),
    ),
    (
        "no_retry_after_auth_failure.tg",
        include_str!("../../specs/no_retry_after_auth_failure.tg"),
    ),
    (
        "no_retry_after_authorization_denial.tg",
        include_str!("../../specs/no_retry_after_authorization_denial.tg"),
    ),
    (
        "no_secrets_in_records.tg",
        include_str!("../../specs/no_secrets_in_records.tg"),
    ),
    (
        "reconcile_before_retry.tg",
        include_str!("../../specs/reconcile_before_retry.tg"),
    ),
    (
        "respect_retry_after.tg",
        include_str!("../../specs/respect_retry_after.tg"),
    ),
    (
        "response_matches_request.tg",
        include_str!("../../specs/response_matches_request.tg"),
    ),
    (
        "seed_protocol.tg",
        include_str!("../../specs/seed_protocol.tg"),
    ),
];

/// Each spec compiled once, and all of them together (the last).
fn specs() -> &'static [Vec<Machine>] {
    static SPECS_COMPILED: OnceLock<Vec<Vec<Machine>>> = OnceLock::new();
    SPECS_COMPILED.get_or_init(|| {
        let load = |(name, text): &(&str, &str)| {
            let source = Arc::new(SpecSource::new(*name, text.to_string()));
            tracegate::spec::analyzer::load(source).expect("a shipped spec compiles")
        };
        let mut sets: Vec<Vec<Machine>> = SPECS.iter().map(|spec| vec![load(spec)]).collect();
        sets.push(SPECS.iter().map(load).collect());
        sets
    })
}

fuzz_target!(|data: &[u8]| {
    let [pick, form, bytes @ ..] = data else {
        return;
    };
    let sets = specs();
    let specs = &sets[usize::from(*pick) % sets.len()];
    let trace_by = match pick / 64 {
        0 => None,
        1 => Some(vec![Segment::Key("id".into())]),
        2 => Some(vec![Segment::Key("case".into())]),
        _ => Some(vec![
            Segment::Key("args".into()),
            Segment::Key("request_id".into()),
        ]),
    };
    let format = match form {
        0..128 => None,
        n => Format::ALL
            .get(usize::from(*n) % Format::ALL.len())
            .copied(),
    };
    let input_options = InputOptions {
        format,
        ..InputOptions::default()
    };
    let options = CheckOptions {
        trace_by,
        ..CheckOptions::default()
    };
    let file: Arc<Path> = Arc::from(Path::new("fuzz.jsonl"));
    let input = TraceInput::from_bytes(bytes, &input_options, Some(1 << 16));
    let outcome = check_input(specs, file.clone(), input, &options, None);
    let mut ahead = TraceInput::from_bytes(bytes, &input_options, Some(1 << 16));
    if ahead.decode_ahead() {
        let again = check_input(specs, file, ahead, &options, None);
        let findings = |outcome: &Outcome| -> Vec<String> {
            outcome.diagnostics.iter().map(json::render).collect()
        };
        assert_eq!(findings(&outcome), findings(&again), "decoded ahead");
        assert_eq!(outcome.records, again.records, "decoded ahead");
    }
    let mut resolver = MemoryResolver::default();
    resolver.insert(PathBuf::from("fuzz.jsonl"), bytes.to_vec());
    let mut renderer = human::Renderer::default();
    let mut text = String::new();
    for diagnostic in &outcome.diagnostics {
        std::hint::black_box(json::render(diagnostic));
        text.clear();
        renderer.render_with(&mut text, diagnostic, false, &resolver);
    }
    std::hint::black_box(text);
});
