//! Hostile specs: nesting and operator counts past the parser's limits are located
//! syntax errors (never a stack overflow) in every command that reads a spec, and a
//! spec right at the limits still parses, compiles, checks, lints and formats.

use std::path::Path;

use crate::util::run;

/// A spec with one event whose condition is `guard`.
fn spec_with_guard(guard: &str) -> String {
    format!("spec deep\nevent a = call x where {guard}\ninitial s0\ns0 -> s0 on a\n")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Runs check, lint and fmt on `text` and asserts each reports a syntax error that
/// names the limit, with exit status 2.
#[track_caller]
fn rejected_everywhere(text: &str, message: &str) {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "deep.tg", text);
    let trace = write(
        dir.path(),
        "t.jsonl",
        "{\"kind\":\"call\",\"tool\":\"x\",\"call_id\":\"c1\"}\n",
    );
    for args in [
        vec!["check", spec.as_str(), "--traces", trace.as_str()],
        vec!["lint", spec.as_str()],
        vec!["fmt", spec.as_str()],
    ] {
        let output = run(&args);
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(output.status.code(), Some(2), "{args:?}: {all}");
        assert!(all.contains("error[syntax-error]"), "{args:?}: {all}");
        assert!(all.contains(message), "{args:?}: {all}");
        assert!(all.contains("deep.tg:2:"), "{args:?} is located: {all}");
    }
    assert_eq!(
        std::fs::read_to_string(dir.path().join("deep.tg")).unwrap(),
        text
    );
}

const TOO_DEEP: &str = "nested more than 100 levels deep";

#[test]
fn five_thousand_nested_parentheses_are_a_syntax_error() {
    let guard = format!("{}a == 1{}", "(".repeat(5000), ")".repeat(5000));
    rejected_everywhere(&spec_with_guard(&guard), TOO_DEEP);
}

#[test]
fn twenty_thousand_nots_are_a_syntax_error() {
    let guard = format!("{}a == 1", "not ".repeat(20_000));
    rejected_everywhere(&spec_with_guard(&guard), TOO_DEEP);
}

#[test]
fn a_ten_thousand_deep_literal_is_a_syntax_error() {
    let guard = format!("a == {}{}", "[".repeat(10_000), "]".repeat(10_000));
    rejected_everywhere(&spec_with_guard(&guard), TOO_DEEP);
    let guard = format!("a == {}1{}", "{\"k\": ".repeat(10_000), "}".repeat(10_000));
    rejected_everywhere(&spec_with_guard(&guard), TOO_DEEP);
}

#[test]
fn a_hundred_thousand_unclosed_parentheses_are_a_syntax_error() {
    rejected_everywhere(&spec_with_guard(&"(".repeat(100_000)), TOO_DEEP);
}

#[test]
fn twenty_thousand_conditions_are_a_syntax_error() {
    for op in ["and", "or"] {
        let guard = (0..20_000)
            .map(|n| format!("a == {n}"))
            .collect::<Vec<_>>()
            .join(&format!(" {op} "));
        rejected_everywhere(
            &spec_with_guard(&guard),
            "more than 1000 `and`/`or` operators",
        );
    }
}

#[test]
fn brackets_in_strings_regexes_and_comments_do_not_count() {
    let parens = "(".repeat(200);
    let escaped = "\\(".repeat(200);
    let text = format!(
        "spec deep\n# {parens}\nevent a = call x where a == \"{parens}\" and b matches /{escaped}/\n    # {parens}\ninitial s0\ns0 -> s0 on a\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "deep.tg", &text);
    let output = run(&["lint", &spec]);
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Every limit reached at once, each in its own event, and a trace whose records
/// evaluate every guard: all commands run to completion (the checker's guards run on
/// rayon's 2 MiB worker threads).
#[test]
fn a_spec_at_the_limits_works_in_every_command() {
    let n = 100;
    let ors = (0..=1000)
        .map(|v| format!("args.v == {v}"))
        .collect::<Vec<_>>()
        .join(" or ");
    let text = format!(
        "spec limits\n\
         event a = call x where {open}args.v == 1{close}\n\
         event b = call y where {nots}args.v == 2\n\
         event c = call z where args.v == {lists}\n\
         event d = call w where {ors}\n\
         event e = call u where {half_open}{half_nots}args.v == 1{half_close}\n\
         initial s0\naccept s0, s1\n\
         s0 -> s1 on a\ns1 -> s0 on b\ns0 -> s0 on c\ns1 -> s1 on d\ns0 -> s0 on e\n",
        open = "(".repeat(n),
        close = ")".repeat(n),
        nots = "not ".repeat(n),
        lists = "[".repeat(n) + &"]".repeat(n),
        half_open = "(".repeat(n / 2),
        half_nots = "not ".repeat(n / 2),
        half_close = ")".repeat(n / 2),
    );
    let trace = [("x", "1"), ("y", "2"), ("z", "[]"), ("w", "999"), ("u", "3")]
        .iter()
        .enumerate()
        .map(|(i, (tool, v))| {
            format!("{{\"kind\":\"call\",\"tool\":\"{tool}\",\"call_id\":\"c{i}\",\"args\":{{\"v\":{v}}}}}\n")
        })
        .collect::<String>();
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "limits.tg", &text);
    let trace = write(dir.path(), "t.jsonl", &trace);
    let check = run(&["check", &spec, "--traces", &trace]);
    let out = String::from_utf8_lossy(&check.stdout);
    assert!(
        out.contains("checked 1 trace (5 records + 5 synthesized)"),
        "{out}"
    );
    for args in [
        vec!["lint", spec.as_str()],
        vec!["fmt", spec.as_str()],
        vec!["fmt", "--check", spec.as_str()],
        vec!["explore", spec.as_str(), "--max-depth", "4"],
        vec!["coverage", spec.as_str(), "--traces", trace.as_str()],
        vec!["graph", spec.as_str()],
    ] {
        let output = run(&args);
        assert!(
            matches!(output.status.code(), Some(0 | 1)),
            "{args:?}: {:?} {}",
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

/// Names of 70,000 characters: fmt aligns them and coverage's tables pad to them (a
/// width of 65,536 or more is out of range for `format!`'s own padding).
#[test]
fn names_of_any_length_are_formatted_and_padded() {
    let state = format!("s{}", "x".repeat(70_000));
    let event = format!("e{}", "y".repeat(70_000));
    let text = format!(
        "spec long\nevent {event} = call x\nevent b = call y\ninitial {state}\naccept {state}\n{state} -> {state} on {event}\n{state} -> done on b\nforbid done on b: \"no\"\n"
    );
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "long.tg", &text);
    let trace = write(
        dir.path(),
        "t.jsonl",
        "{\"kind\":\"call\",\"tool\":\"x\",\"call_id\":\"c1\"}\n",
    );
    let fmt = run(&["fmt", &spec]);
    assert_eq!(
        fmt.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&fmt.stderr)
    );
    let formatted = std::fs::read_to_string(&spec).unwrap();
    // The short event name is padded to the long one's width.
    let padded_b = format!("event b{} = call y\n", " ".repeat(event.len() - 1));
    assert!(formatted.contains(&padded_b));
    assert!(formatted.contains(&format!("{state} -> {state} on {event}\n")));
    assert_eq!(run(&["fmt", "--check", &spec]).status.code(), Some(0));

    let coverage = run(&["coverage", &spec, "--traces", &trace]);
    assert_eq!(coverage.status.code(), Some(0));
    let out = String::from_utf8_lossy(&coverage.stdout);
    let header = format!(
        "    {:>7}  from{}  event{}  to\n",
        "count",
        " ".repeat(state.len() - 4),
        " ".repeat(event.len() - 5)
    );
    assert!(out.contains(&header), "the header is padded to the names");
    assert!(out.contains(&format!("          1  {state}  {event}  {state}\n")));
}

/// A chain of 1,000 states: one event each, `otherwise reject`.
fn chain_spec(n: usize) -> String {
    let mut text = String::from("spec chain\ninitial s0\n");
    for i in 0..n {
        text += &format!("event e{i} = call t{i}\n");
    }
    for i in 0..n {
        text += &format!("s{i} -> s{} on e{i}\n", i + 1);
    }
    text
}

/// `explore --max-depth 100000` on 1,000 events would hold about a billion events of
/// paths: it is refused up front with the figures, not attempted.
#[test]
fn an_explore_too_large_to_hold_is_refused_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "chain.tg", &chain_spec(1000));
    let output = run(&["explore", &spec, "--max-depth", "100000"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(
            "error[usage-error]: spec `chain`: exploring `--max-depth 100000` would find"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("more than the limit of 2000000 events"),
        "{stderr}"
    );
    assert!(stderr.contains("lower `--max-depth`"), "{stderr}");
    // At the default depth the same spec is explored.
    let output = run(&["explore", &spec]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stdout).contains("e0 ✗"));
}

/// The allowed paths are enumerated without recursion: a path as long as the machine
/// (1,000 moves, 20,000 in the second spec) is walked to its end.
#[test]
fn allowed_paths_as_long_as_the_machine_are_enumerated() {
    let dir = tempfile::tempdir().unwrap();
    for n in [1000, 20_000] {
        let text = chain_spec(n) + &format!("accept s{n}\n");
        let spec = write(dir.path(), "chain.tg", &text);
        let output = run(&["explore", &spec, "--allowed", "--max-depth", "100000"]);
        assert_eq!(output.status.code(), Some(0));
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            stdout.contains(&format!("e{} ✓ ends in `s{n}`", n - 1)),
            "{}",
            &stdout[stdout.len().saturating_sub(300)..]
        );
    }
}

/// Runs `lint` on a spec whose one event has the condition `guard`: its output.
fn lint_guard(guard: &str) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "deep.tg", &spec_with_guard(guard));
    let output = run(&["lint", &spec]);
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn a_lone_surrogate_is_named_as_such() {
    for (guard, escape) in [
        (r#"a == "\ud800""#, r"`\ud800`"),
        (r#"a == "x \udc00 y""#, r"`\udc00`"),
        (r#"a == "\ud83d\ude00" or b == "\ud83d x""#, r"`\ud83d`"),
    ] {
        let (code, out) = lint_guard(guard);
        assert_eq!(code, Some(2), "{out}");
        assert!(
            out.contains(&format!(
                "{escape} is a lone surrogate, which is not a character"
            )),
            "{out}"
        );
    }
    // A pair is one character.
    let (code, out) = lint_guard(r#"a == "\ud83d\ude00""#);
    assert_eq!(code, Some(0), "{out}");
}

/// An integer past 64 bits is refused, not rounded to a float that fmt would then
/// write in its place; 64-bit integers and floats stay as they are.
#[test]
fn integers_past_64_bits_are_refused_and_others_keep_their_value() {
    let (code, out) = lint_guard("a == 12345678901234567890123");
    assert_eq!(code, Some(2), "{out}");
    assert!(
        out.contains("integer `12345678901234567890123` does not fit in 64 bits"),
        "{out}"
    );
    let text =
        spec_with_guard("a == 18446744073709551615 or a == -9223372036854775808 or a == 1.5e22");
    let dir = tempfile::tempdir().unwrap();
    let spec = write(dir.path(), "n.tg", &text);
    assert_eq!(run(&["fmt", &spec]).status.code(), Some(0));
    let formatted = std::fs::read_to_string(&spec).unwrap();
    assert!(formatted.contains("18446744073709551615"), "{formatted}");
    assert!(formatted.contains("-9223372036854775808"), "{formatted}");
}

/// An over-indented statement continues the one above it; the hint says so rather than
/// suggesting how to continue a condition.
#[test]
fn an_indented_statement_is_pointed_out_as_indented() {
    let dir = tempfile::tempdir().unwrap();
    for (text, first) in [
        (
            "spec s\nevent a = call x\n  initial s0\ns0 -> s0 on a\n",
            "initial",
        ),
        (
            "spec s\nevent a = call x where args.v == 1\n    s0 -> s0 on a\ninitial s0\n",
            "s0",
        ),
    ] {
        let spec = write(dir.path(), "ind.tg", text);
        let output = run(&["lint", &spec]);
        let out = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(2), "{out}");
        assert!(
            out.contains(&format!(
                "= help: this line is indented, so it continues the statement above; start `{first}` at the beginning of its line"
            )),
            "{out}"
        );
    }
    // A token that is not a statement keeps the hint about conditions.
    let spec = write(
        dir.path(),
        "ind.tg",
        "spec s\nevent a = call x where args.v == 1\n    args.w == 2\ninitial s0\ns0 -> s0 on a\n",
    );
    let out = String::from_utf8_lossy(&run(&["lint", &spec]).stdout).into_owned();
    assert!(out.contains("join conditions with `and` or `or`"), "{out}");
}
