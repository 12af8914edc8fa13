//! Parser tests: statements, conditions, literals, spans and error recovery.

use serde_json::Value;

use super::statements::{STATEMENT_KEYWORDS, STATEMENTS_HINT};
use super::*;
use crate::spec::ast::{
    EventDecl, Expr, Ident, ItemKind, JsonType, Otherwise, Pattern, PatternKind, Segment, StateSet,
    ToolPattern, VarTest,
};
use crate::suggest::{did_you_mean, edit_distance};

const DESIGN_EXAMPLE: &str = r#"spec reconcile_before_retry
about "A write whose outcome is unknown is looked up by its request id before any retry."

# Events: how normalized records become this spec's alphabet. A record that matches no
# event is invisible to the spec. One record may match at most one event (else: error).
event create          = call create_record
event created         = result create_record where status == "ok"
event outcome_unknown = result create_record where output.category == "outcome_unknown"
event lookup          = call lookup_by_request_id
event found           = result lookup_by_request_id where status == "ok" and has output.id
event not_found       = result lookup_by_request_id where output.category == "not_found"
event attach_note     = call attach_note

initial idle
accept idle, done

idle     -> pending  on create
pending  -> done     on created
pending  -> unknown  on outcome_unknown
unknown  -> checking on lookup
checking -> done     on found
checking -> idle     on not_found
done     -> done     on attach_note

forbid unknown on create: "blind re-create: the first create may have committed; look it up by request id first"
"#;

#[track_caller]
fn parse_ok(source: &str) -> SpecFile {
    match parse(source) {
        Ok(file) => file,
        Err(errors) => panic!("expected {source:?} to parse, got {errors:#?}"),
    }
}

#[track_caller]
fn kinds(source: &str) -> Vec<ItemKind> {
    parse_ok(source)
        .items
        .into_iter()
        .map(|item| item.kind)
        .collect()
}

#[track_caller]
fn only_kind(source: &str) -> ItemKind {
    let mut kinds = kinds(source);
    assert_eq!(kinds.len(), 1, "expected one statement in {source:?}");
    kinds.remove(0)
}

/// Each error as (code, the source text under its span, message).
#[track_caller]
fn errors(source: &str) -> Vec<(Code, &str, String)> {
    match parse(source) {
        Ok(file) => panic!("expected {source:?} not to parse, got {file:#?}"),
        Err(errors) => errors
            .into_iter()
            .map(|e| (e.code, &source[e.span.range()], e.message))
            .collect(),
    }
}

/// The one error in `source`.
#[track_caller]
fn error(source: &str) -> SpecError {
    match parse(source) {
        Ok(file) => panic!("expected {source:?} not to parse, got {file:#?}"),
        Err(mut errors) => {
            assert_eq!(errors.len(), 1, "expected one error, got {errors:#?}");
            errors.remove(0)
        }
    }
}

/// A guard in the canonical, fully parenthesized form of [`show`].
#[track_caller]
fn guard(condition: &str) -> String {
    let source = format!("event e = record where {condition}\n");
    match only_kind(&source) {
        ItemKind::Event(EventDecl {
            pattern: Pattern {
                guard: Some(guard), ..
            },
            ..
        }) => show(&guard),
        other => panic!("expected an event with a guard, got {other:#?}"),
    }
}

fn show(expr: &Expr) -> String {
    match expr {
        Expr::Or(a, b) => format!("(or {} {})", show(a), show(b)),
        Expr::And(a, b) => format!("(and {} {})", show(a), show(b)),
        Expr::Not(inner, _) => format!("(not {})", show(inner)),
        Expr::Group(inner, _) => format!("(group {})", show(inner)),
        Expr::Compare { path, op, value } => {
            format!("({} {path} {})", op.symbol(), value.value)
        }
        Expr::In { path, values, .. } => {
            let values: Vec<String> = values.iter().map(|v| v.value.to_string()).collect();
            format!("(in {path} [{}])", values.join(" "))
        }
        Expr::Matches { path, regex } => format!(
            "(matches {path} /{}/{})",
            regex.pattern,
            if regex.case_insensitive { "i" } else { "" }
        ),
        Expr::Has { path, .. } => format!("(has {path})"),
        Expr::Is { path, ty, .. } => format!("(is {path} {})", ty.keyword()),
        Expr::Relation { lhs, op, rhs } => {
            format!("({} {} {})", op.symbol(), operand(lhs), operand(rhs))
        }
        Expr::HasVar { var, .. } => format!("(has ${})", var.name),
        Expr::VarTest { var, test, .. } => match test {
            VarTest::In(values) => {
                let values: Vec<String> = values.iter().map(|v| v.value.to_string()).collect();
                format!("(in ${} [{}])", var.name, values.join(" "))
            }
            VarTest::Matches(regex) => format!("(matches ${} /{}/)", var.name, regex.pattern),
            VarTest::Is(ty) => format!("(is ${} {})", var.name, ty.keyword()),
        },
        Expr::Provenance { value, source, .. } => {
            format!("(in {} {})", operand(value), fmt_source(source))
        }
        Expr::Secret { target: None, .. } => "(secret record)".to_string(),
        Expr::Secret {
            target: Some(target),
            ..
        } => format!("(secret {})", operand(target)),
    }
}

fn fmt_source(source: &crate::spec::ast::Source) -> String {
    use crate::spec::ast::Source;
    match source {
        Source::Outputs(None) => "outputs".to_string(),
        Source::Outputs(Some(tool)) => format!("outputs-of {tool:?}"),
        Source::Messages(None) => "messages".to_string(),
        Source::Messages(Some(role)) => format!("messages-from {}", role.name),
    }
}

/// A value in prefix form, groups shown.
fn operand(value: &crate::spec::ast::Operand) -> String {
    use crate::spec::ast::Operand;
    match value {
        Operand::Path(path) => path.to_string(),
        Operand::Var(var) => format!("${}", var.name),
        Operand::Literal(lit) => lit.value.to_string(),
        Operand::Duration(d) => format!("{}{}", d.amount, d.unit.suffix()),
        Operand::Arith { op, lhs, rhs } => {
            format!("({} {} {})", op.symbol(), operand(lhs), operand(rhs))
        }
        Operand::Group(inner, _) => format!("(group {})", operand(inner)),
    }
}

fn names(idents: &[Ident]) -> Vec<&str> {
    idents.iter().map(|ident| ident.name.as_str()).collect()
}

#[track_caller]
fn event_pattern(source: &str) -> Pattern {
    match only_kind(source) {
        ItemKind::Event(decl) => decl.pattern,
        other => panic!("expected an event, got {other:#?}"),
    }
}

#[test]
fn spec_about_initial() {
    let have = kinds("spec my_spec\nabout \"what it checks\"\ninitial idle\n");
    assert!(matches!(&have[0], ItemKind::Spec(name) if name.name == "my_spec"));
    assert!(matches!(&have[1], ItemKind::About(text) if text.value == "what it checks"));
    assert!(matches!(&have[2], ItemKind::Initial(state) if state.name == "idle"));
}

#[test]
fn accept_and_hot() {
    let ItemKind::Accept(have) = only_kind("accept idle, done,waiting") else {
        panic!("expected accept");
    };
    assert_eq!(names(&have), ["idle", "done", "waiting"]);
    let ItemKind::Hot(have) = only_kind("hot unknown") else {
        panic!("expected hot");
    };
    assert_eq!(names(&have), ["unknown"]);
}

#[test]
fn otherwise() {
    assert_eq!(
        only_kind("otherwise reject"),
        ItemKind::Otherwise(Otherwise::Reject)
    );
    assert_eq!(
        only_kind("otherwise ignore\n"),
        ItemKind::Otherwise(Otherwise::Ignore)
    );
    let have = error("otherwise rejct");
    assert_eq!(
        have.message,
        "expected `reject` or `ignore` after `otherwise`"
    );
    assert_eq!(have.hint.as_deref(), Some("did you mean `reject`?"));
}

#[test]
fn event_patterns() {
    let have = event_pattern("event create = call create_record");
    assert_eq!(have.kind, PatternKind::Call);
    assert!(matches!(have.tool, Some(ToolPattern::Name(ref name, _)) if name == "create_record"));
    assert_eq!(have.guard, None);

    let have = event_pattern("event e = call mcp:server/tools.create-record");
    assert!(
        matches!(have.tool, Some(ToolPattern::Name(ref name, _)) if name == "mcp:server/tools.create-record")
    );

    let have = event_pattern(r#"event e = result "create_*" where status == "ok""#);
    assert_eq!(have.kind, PatternKind::Result);
    assert!(matches!(have.tool, Some(ToolPattern::Glob(ref glob, _)) if glob == "create_*"));
    assert!(have.guard.is_some());

    let have = event_pattern("event e = call /^create_/i");
    let Some(ToolPattern::Regex(regex)) = have.tool else {
        panic!("expected a regex tool");
    };
    assert_eq!(regex.pattern, "^create_");
    assert!(regex.case_insensitive);

    let have = event_pattern("event e = message");
    assert_eq!(
        (have.kind, have.tool, have.guard),
        (PatternKind::Message, None, None)
    );

    let have = event_pattern("event e = record where has args.id");
    assert_eq!(have.kind, PatternKind::Record);
    assert_eq!(have.tool, None);
    assert!(have.guard.is_some());

    // The analyzer, not the parser, says a message has no tool.
    let have = event_pattern("event e = message chat");
    assert!(matches!(have.tool, Some(ToolPattern::Name(ref name, _)) if name == "chat"));

    // `where` needs a boundary; `wherever` is a tool.
    let have = event_pattern("event e = call wherever");
    assert!(matches!(have.tool, Some(ToolPattern::Name(ref name, _)) if name == "wherever"));
}

#[test]
fn event_errors() {
    let have =
        errors("event e = cal x\nevent f call x\nevent = call x\nevent g = call x wher a == 1\n");
    let want = vec![
        (
            Code::SyntaxError,
            "cal",
            "expected an event pattern: `call`, `result`, `message` or `record`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "call",
            "expected `=` after event `f`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "=",
            "expected an event name after `event`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "wher",
            "unexpected `wher` after the statement".to_owned(),
        ),
    ];
    assert_eq!(have, want);
    assert_eq!(
        error("event e = cal x").hint.as_deref(),
        Some("did you mean `call`?")
    );
    assert_eq!(
        error("event e = call x wher a == 1").hint.as_deref(),
        Some("did you mean `where`?")
    );
    assert_eq!(
        error("event e = call create_*").hint.as_deref(),
        Some("a glob is quoted: `call \"create_*\"`")
    );
    let have = error("event e = call x where");
    assert_eq!(have.message, "expected a condition after `where`");
}

#[test]
fn transitions() {
    let ItemKind::Transition(have) = only_kind("idle -> pending on create, retry") else {
        panic!("expected a transition");
    };
    assert_eq!(have.from.name, "idle");
    assert_eq!(have.to.name, "pending");
    assert_eq!(names(&have.events), ["create", "retry"]);

    // A state may be named like a keyword; `->` makes the line a transition.
    let ItemKind::Transition(have) = only_kind("spec -> on on on") else {
        panic!("expected a transition");
    };
    assert_eq!(
        (have.from.name.as_str(), have.to.name.as_str()),
        ("spec", "on")
    );
    assert_eq!(names(&have.events), ["on"]);

    let have = errors("idle -> on x\nidle ->\nidle -> done on\nidle -> done on a b\n");
    let want = vec![
        (
            Code::SyntaxError,
            "x",
            "expected `on` after state `on`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected a state name after `->`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected an event name after `on`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "b",
            "unexpected `b` after the statement".to_owned(),
        ),
    ];
    assert_eq!(have, want);
}

#[test]
fn forbids() {
    let ItemKind::Forbid(have) = only_kind(r#"forbid unknown, checking on create, retry: "blind""#)
    else {
        panic!("expected a forbid");
    };
    let StateSet::Named(states) = &have.states else {
        panic!("expected named states");
    };
    assert_eq!(names(states), ["unknown", "checking"]);
    assert_eq!(names(&have.events), ["create", "retry"]);
    assert_eq!(have.message.value, "blind");

    let source = r#"forbid * on create: "never""#;
    let ItemKind::Forbid(have) = only_kind(source) else {
        panic!("expected a forbid");
    };
    let StateSet::All(star) = have.states else {
        panic!("expected `*`");
    };
    assert_eq!(&source[star.range()], "*");

    let have =
        errors("forbid on create: \"m\"\nforbid a b on c: \"m\"\nforbid * on c\nforbid a on c:\n");
    let want = vec![
        (
            Code::SyntaxError,
            "create",
            "expected `,` or `on` after state `on`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "b",
            "expected `,` or `on` after state `a`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected `,` or `:` after event `c`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected a quoted message after `:`".to_owned(),
        ),
    ];
    assert_eq!(have, want);
}

#[test]
fn paths_and_per() {
    let ItemKind::Path(have) = only_kind("path create -> outcome_unknown -> lookup") else {
        panic!("expected a path");
    };
    assert_eq!(names(&have), ["create", "outcome_unknown", "lookup"]);
    let ItemKind::Path(have) = only_kind("path create") else {
        panic!("expected a path");
    };
    assert_eq!(names(&have), ["create"]);

    let ItemKind::Per(have) =
        only_kind(r#"per args.request_id, output["odd key"][2], ["top key"].x"#)
    else {
        panic!("expected per");
    };
    let have: Vec<&[Segment]> = have.iter().map(|path| path.segments.as_slice()).collect();
    let key = |k: &str| Segment::Key(k.to_owned());
    let want = [
        vec![key("args"), key("request_id")],
        vec![key("output"), key("odd key"), Segment::Index(2)],
        vec![key("top key"), key("x")],
    ];
    assert_eq!(have, want);

    let have = errors("path\npath a ->\npath a b\nper\nper a.\n");
    let want = vec![
        (
            Code::SyntaxError,
            "",
            "expected an event name after `path`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected an event name after `->`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "b",
            "unexpected `b` after the statement".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected a path after `per`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected a field name after `.`".to_owned(),
        ),
    ];
    assert_eq!(have, want);
}

#[test]
fn design_example_parses() {
    let have = parse_ok(DESIGN_EXAMPLE);
    assert_eq!(have.items.len(), 19);
    assert_eq!(have.comments.len(), 2);
    assert!(
        have.comments[0]
            .text
            .starts_with(" Events: how normalized records")
    );
    let ItemKind::Event(found) = &have.items[6].kind else {
        panic!("expected the `found` event");
    };
    assert_eq!(found.name.name, "found");
    let guard = found.pattern.guard.as_ref().map(show);
    assert_eq!(
        guard.as_deref(),
        Some(r#"(and (== status "ok") (has output.id))"#)
    );
    let ItemKind::Forbid(forbid) = &have.items[18].kind else {
        panic!("expected the forbid");
    };
    assert!(
        forbid
            .message
            .value
            .starts_with("blind re-create: the first")
    );
}

#[test]
fn two_line_path_form() {
    let have = kinds(
        "path create -> outcome_unknown -> lookup -> found -> attach_note\n\
         forbid outcome_unknown on create: \"blind re-create\"\n",
    );
    let ItemKind::Path(events) = &have[0] else {
        panic!("expected a path");
    };
    assert_eq!(
        names(events),
        [
            "create",
            "outcome_unknown",
            "lookup",
            "found",
            "attach_note"
        ]
    );
    assert!(matches!(&have[1], ItemKind::Forbid(f) if f.message.value == "blind re-create"));
}

#[test]
fn continuation_lines() {
    let source = "event found = result lookup\n    where status == \"ok\" # the call worked\n\n    # and it found something\n\tand has output.id\ninitial idle\n";
    let file = parse_ok(source);
    assert_eq!(file.items.len(), 2);
    let ItemKind::Event(found) = &file.items[0].kind else {
        panic!("expected an event");
    };
    assert_eq!(
        found.pattern.guard.as_ref().map(show).as_deref(),
        Some(r#"(and (== status "ok") (has output.id))"#)
    );
    // The statement ends at its last token, not at the trailing comment or newline.
    let have = &source[file.items[0].span.range()];
    assert!(have.starts_with("event found") && have.ends_with("has output.id"));
    let have: Vec<&str> = file.comments.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(have, [" the call worked", " and it found something"]);

    // A wrapped transition and event list.
    let ItemKind::Transition(have) = only_kind("idle -> done\n  on a,\n     b") else {
        panic!("expected a transition");
    };
    assert_eq!(names(&have.events), ["a", "b"]);

    // An indented line with no statement above it.
    let have = errors("  # a comment is fine\n   initial idle\naccept idle\n");
    let want = vec![(
        Code::SyntaxError,
        "initial",
        "this line is indented, so it continues a statement, but no statement comes before it"
            .to_owned(),
    )];
    assert_eq!(have, want);
}

#[test]
fn comments() {
    let source = "# header\nspec s # trailing\n#about \"x\"\nabout \"not # a comment\"\nevent e = call \"a#b\" where x matches /#x/ # real\n";
    let file = parse_ok(source);
    let have: Vec<(&str, &str)> = file
        .comments
        .iter()
        .map(|c| (c.text.as_str(), &source[c.span.range()]))
        .collect();
    let want = [
        (" header", "# header"),
        (" trailing", "# trailing"),
        ("about \"x\"", "#about \"x\""),
        (" real", "# real"),
    ];
    assert_eq!(have, want);
    assert!(
        matches!(&file.items[1].kind, ItemKind::About(text) if text.value == "not # a comment")
    );
    let ItemKind::Event(event) = &file.items[2].kind else {
        panic!("expected an event");
    };
    assert!(matches!(&event.pattern.tool, Some(ToolPattern::Glob(glob, _)) if glob == "a#b"));
    assert_eq!(
        event.pattern.guard.as_ref().map(show).as_deref(),
        Some("(matches x /#x/)")
    );
}

#[test]
fn crlf_line_endings() {
    let source = "spec s\r\n# note\r\nevent e = call x\r\n  where a == 1\r\naccept a\r\n";
    let file = parse_ok(source);
    assert_eq!(file.items.len(), 3);
    assert_eq!(file.comments[0].text, " note");
    assert_eq!(
        &source[file.items[1].span.range()],
        "event e = call x\r\n  where a == 1"
    );
}

#[test]
fn precedence() {
    assert_eq!(
        guard("a == 1 or b == 2 and not c == 3"),
        "(or (== a 1) (and (== b 2) (not (== c 3))))"
    );
    assert_eq!(
        guard("a == 1 and b == 2 and c == 3"),
        "(and (and (== a 1) (== b 2)) (== c 3))"
    );
    assert_eq!(
        guard("not (a == 1 or has b) and c is null"),
        "(and (not (group (or (== a 1) (has b)))) (is c null))"
    );
    assert_eq!(guard("not not a != false"), "(not (not (!= a false)))");
}

#[test]
fn comparisons_and_tests() {
    assert_eq!(guard("a < 1"), "(< a 1)");
    assert_eq!(guard("a<=1"), "(<= a 1)");
    assert_eq!(guard("a > 1"), "(> a 1)");
    assert_eq!(guard("a >= 1"), "(>= a 1)");
    assert_eq!(guard("a != null"), "(!= a null)");
    assert_eq!(guard(r#"a in ["x", 2, true]"#), r#"(in a ["x" 2 true])"#);
    assert_eq!(guard("a in []"), "(in a [])");
    assert_eq!(guard("a.b[0] is string"), "(is a.b[0] string)");
    assert_eq!(
        guard(r#"a == {"k": [1, {}], "j": null}"#),
        r#"(== a {"j":null,"k":[1,{}]})"#
    );
    assert_eq!(
        guard(r#"output["odd key"] == []"#),
        r#"(== output["odd key"] [])"#
    );
    assert_eq!(guard(r#"["top"] == 1"#), r#"(== top 1)"#);
    for ty in JsonType::ALL {
        assert_eq!(
            guard(&format!("x is {}", ty.keyword())),
            format!("(is x {})", ty.keyword())
        );
    }
}

#[test]
fn keywords_are_field_names() {
    assert_eq!(guard(r#"event == "x""#), r#"(== event "x")"#);
    assert_eq!(guard("not == 1"), "(== not 1)");
    assert_eq!(guard("has == 2"), "(== has 2)");
    assert_eq!(guard("and == 3"), "(== and 3)");
    assert_eq!(guard("or == 4"), "(== or 4)");
    assert_eq!(guard("nothing == 1"), "(== nothing 1)");
    assert_eq!(guard("hash == 1"), "(== hash 1)");
    assert_eq!(guard("where == 1"), "(== where 1)");
    assert_eq!(guard("not.x == 1"), "(== not.x 1)");
    assert_eq!(guard(r#"has["k"] == 1"#), r#"(== has.k 1)"#);
    assert_eq!(guard("not not == 1"), "(not (== not 1))");
    assert_eq!(guard("has has"), "(has has)");
    assert_eq!(guard("in in [1]"), "(in in [1])");
    assert_eq!(guard("is is null"), "(is is null)");
    assert_eq!(guard("a == 1 or or == 2"), "(or (== a 1) (== or 2))");
}

#[test]
fn bare_paths_are_errors() {
    for (condition, path) in [
        ("output.ok", "output.ok"),
        ("a == 1 and output.ok", "output.ok"),
        ("output.ok and a == 1", "output.ok"),
        ("a == 1 or output[\"x\"][0]", "output[\"x\"][0]"),
        ("not output.ok", "output.ok"),
        ("(output.ok)", "output.ok"),
        ("not (a == 1 or\n    output.ok)", "output.ok"),
    ] {
        let source = format!("event e = record where {condition}\n");
        let have = error(&source);
        assert_eq!(have.code, Code::BarePathCondition, "in {condition:?}");
        assert_eq!(&source[have.span.range()], path, "in {condition:?}");
    }
    let have = error("event e = record where output.ok\n");
    assert_eq!(
        have.message,
        "`output.ok` is a bare path, and conditions have no truthiness"
    );
    assert_eq!(
        have.hint.as_deref(),
        Some("test presence with `has output.ok`, or compare it: `output.ok == true`")
    );
}

#[test]
fn expression_errors() {
    let cases = [
        ("a = 1", "=", "expected a comparison after `a`"),
        (
            "a contains 1",
            "contains",
            "expected a comparison after `a`",
        ),
        ("a ==", "", "expected a JSON literal after `==`"),
        ("a == True", "True", "expected a JSON literal after `==`"),
        ("a in 1", "1", "expected a list after `in`"),
        ("a in [1 2]", "2", "expected `,` or `]` in the list"),
        ("a in [1,]", "]", "expected a JSON literal after `,`"),
        (
            "a matches \"x\"",
            "\"x\"",
            "expected a regex after `matches`",
        ),
        (
            "a is int",
            "int",
            "expected a JSON type after `is`: `null`, `bool`, `number`, `string`, `array` or `object`",
        ),
        (
            "(a == 1",
            "",
            "expected `)`, `and` or `or` after the condition",
        ),
        ("a == 1 and", "", "expected a condition after `and`"),
        ("a == 1 or", "", "expected a condition after `or`"),
        ("not", "", "expected a condition after `not`"),
        ("has", "", "expected a path after `has`"),
        (
            "a[x] == 1",
            "x",
            "expected an index or a quoted key after `[`",
        ),
        ("a[0 == 1", "==", "expected `]`"),
        (
            "[0] == 1",
            "[0]",
            "a path starts with a field name or a quoted key, not an index",
        ),
        ("a == 01", "01", "invalid number `01`: invalid number"),
        ("a == 1x", "1x", "invalid number `1x`"),
        (
            "a == 1e999",
            "1e999",
            "invalid number `1e999`: number out of range",
        ),
        ("a == 1) ", ")", "unexpected `)` after the statement"),
        ("a == {\"k\" 1}", "1", "expected `:` after the key"),
        ("a matches /x/g", "g", "unknown regex flag `g`"),
    ];
    for (condition, at, message) in cases {
        let source = format!("event e = record where {condition}\n");
        let have = error(&source);
        assert_eq!(
            (have.code, &source[have.span.range()], have.message.as_str()),
            (Code::SyntaxError, at, message),
            "in {condition:?}"
        );
    }
    // A word after an operator is a path: records compare with themselves.
    assert_eq!(guard("a == ok"), "(== a ok)");
    let have = error("event e = record where a == 'ok'\n");
    assert_eq!(
        have.hint.as_deref(),
        Some("JSON strings use double quotes: `\"...\"`")
    );
    let have = error("event e = record where a == True\n");
    assert_eq!(
        have.hint.as_deref(),
        Some("JSON literals are lowercase: `true`")
    );
    let have = error("event e = record where a is boolean\n");
    assert_eq!(have.hint.as_deref(), Some("did you mean `bool`?"));
}

#[test]
fn every_error_is_reported() {
    let source = "spec s\nevnt create = call x\nidle -> done on create\nacept done\n  , idle\ninitial\nevent e = record where output.ok\nidle => done\nhot idle\n";
    let have = errors(source);
    let want = vec![
        (
            Code::SyntaxError,
            "evnt",
            "unknown statement `evnt`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "acept",
            "unknown statement `acept`".to_owned(),
        ),
        (
            Code::SyntaxError,
            "",
            "expected a state name after `initial`".to_owned(),
        ),
        (
            Code::BarePathCondition,
            "output.ok",
            "`output.ok` is a bare path, and conditions have no truthiness".to_owned(),
        ),
        (
            Code::SyntaxError,
            "idle",
            "unknown statement `idle`".to_owned(),
        ),
    ];
    assert_eq!(have, want);
    let Err(have) = parse(source) else {
        panic!("expected errors");
    };
    // The empty span of `initial` sits right after the keyword, not on the next line.
    assert_eq!(
        have[2].span.start,
        source.find("initial\n").unwrap() + "initial".len()
    );
    let hints: Vec<Option<&str>> = have.iter().map(|e| e.hint.as_deref()).collect();
    assert_eq!(hints[0], Some("did you mean `event`?"));
    assert_eq!(hints[1], Some("did you mean `accept`?"));
    assert_eq!(hints[4], Some(STATEMENTS_HINT));
}

#[test]
fn unknown_statements() {
    let have = error("Event e = call x");
    assert_eq!(have.message, "unknown statement `Event`");
    assert_eq!(have.hint.as_deref(), Some("did you mean `event`?"));
    let have = error("initail idle");
    assert_eq!(have.hint.as_deref(), Some("did you mean `initial`?"));
    let have = error("transition a b");
    assert_eq!(have.hint.as_deref(), Some(STATEMENTS_HINT));
    let have = error("-> done on x");
    assert_eq!(have.message, "expected a statement, found `->`");
}

#[test]
fn a_json_file_is_one_error() {
    let lines = r#"{"kind":"call","tool":"create_record","call_id":"c0"}"#.to_string() + "\n";
    for (text, found) in [
        (lines.repeat(1000), "{"),
        (format!("# a comment\n\n  [\n{lines}]\n"), "["),
    ] {
        let all = parse(&text).expect_err("JSON is not a spec");
        assert_eq!(all.len(), 1, "{all:?}");
        let have = &all[0];
        assert_eq!(have.code, Code::SyntaxError);
        assert_eq!(
            have.message,
            format!("expected a statement, found `{found}`: this file is JSON, not a spec")
        );
        assert_eq!(&text[have.span.range()], found);
        assert!(have.hint.as_deref().is_some_and(|h| h.contains("--traces")));
    }
    // A brace later in a spec is a statement's error of its own.
    let have = errors("initial idle\n{\n");
    assert_eq!(have.len(), 1);
    assert_eq!(have[0].2, "expected a statement, found `{`");
}

#[test]
fn trailing_garbage() {
    let have = errors("spec a b\ninitial idle idle\nabout \"x\" \"y\"\naccept a b\n");
    let want = vec![
        (
            Code::SyntaxError,
            "b",
            "unexpected `b` after the statement".to_owned(),
        ),
        (
            Code::SyntaxError,
            "idle",
            "unexpected `idle` after the statement".to_owned(),
        ),
        (
            Code::SyntaxError,
            "\"y\"",
            "unexpected `\"y\"` after the statement".to_owned(),
        ),
        (
            Code::SyntaxError,
            "b",
            "unexpected `b` after the statement".to_owned(),
        ),
    ];
    assert_eq!(have, want);
    assert_eq!(
        error("accept a b").hint.as_deref(),
        Some("separate states with `,`")
    );
}

#[test]
fn string_escapes() {
    let have = only_kind(r#"about "quote \" backslash \\ tab \t unicode \u00e9 é slash \/""#);
    let ItemKind::About(text) = have else {
        panic!("expected about");
    };
    assert_eq!(
        text.value,
        "quote \" backslash \\ tab \t unicode é é slash /"
    );

    let have = errors("about \"open\nabout \"bad \\q escape\"\nabout \"fine\"\n");
    let want = vec![
        (
            Code::SyntaxError,
            "\"open",
            "unterminated string literal".to_owned(),
        ),
        (
            Code::SyntaxError,
            "\"bad \\q escape\"",
            "invalid string literal: invalid escape".to_owned(),
        ),
    ];
    assert_eq!(have, want);
    // An escaped quote does not close the string; a backslash before the newline does
    // not continue it.
    let have = errors("about \"a \\\" b\nabout \"x\\\n");
    assert_eq!(have.len(), 2);
    assert!(have.iter().all(|e| e.2 == "unterminated string literal"));
    // A backslash before a character of more than one byte is stepped over whole on
    // the way to a lone surrogate after it.
    for escaped in ["\u{feff}", "é", "😀"] {
        let text = format!("about \"a \\{escaped} \\ud800\"\n");
        let have = errors(&text);
        let want = (
            Code::SyntaxError,
            "\\ud800",
            "invalid string literal: `\\ud800` is a lone surrogate, which is not a character"
                .to_owned(),
        );
        assert_eq!(have, [want], "{text}");
    }
}

#[test]
fn regex_literals() {
    let source = r"event e = call /^api\/v1\/create\d+/i where a matches /^\w+\/x$/";
    let have = event_pattern(source);
    let Some(ToolPattern::Regex(tool)) = &have.tool else {
        panic!("expected a regex tool");
    };
    assert_eq!(tool.pattern, r"^api/v1/create\d+");
    assert!(tool.case_insensitive);
    assert_eq!(&source[tool.span.range()], r"/^api\/v1\/create\d+/i");
    assert_eq!(
        have.guard.as_ref().map(show).as_deref(),
        Some(r"(matches a /^\w+/x$/)")
    );
    // `\\` is a backslash; the slash after it closes the regex.
    assert_eq!(guard(r"a matches /x\\/"), r"(matches a /x\\/)");
    let have = errors("event e = call /abc\nevent f = record where a matches /x\\/\n");
    let want = vec![
        (
            Code::SyntaxError,
            "/abc",
            "unterminated regex literal".to_owned(),
        ),
        (
            Code::SyntaxError,
            "/x\\/",
            "unterminated regex literal".to_owned(),
        ),
    ];
    assert_eq!(have, want);
}

#[test]
fn numbers() {
    let literal = |text: &str| -> Value {
        let source = format!("event e = record where a == {text}");
        let ItemKind::Event(decl) = only_kind(&source) else {
            panic!("expected an event");
        };
        match decl.pattern.guard {
            Some(Expr::Compare { value, .. }) => value.value,
            other => panic!("expected a comparison, got {other:#?}"),
        }
    };
    let have = literal("1");
    assert!(have.is_u64());
    assert_eq!(have, serde_json::json!(1));
    assert!(literal("1.0").is_f64());
    assert_eq!(literal("-2.5e3"), serde_json::json!(-2500.0));
    assert_eq!(literal("-7"), serde_json::json!(-7));
    assert_eq!(literal("0"), serde_json::json!(0));
    assert_eq!(literal("1E+2"), serde_json::json!(100.0));
}

#[test]
fn spans() {
    let source = "spec s\nevent found = result lookup where status == \"ok\" and has output.id\nforbid * on found: \"m\"\n";
    let file = parse_ok(source);
    let text = |span: Span| &source[span.range()];
    assert_eq!(text(file.items[0].span), "spec s");
    let ItemKind::Event(event) = &file.items[1].kind else {
        panic!("expected an event");
    };
    assert_eq!(text(event.name.span), "found");
    assert_eq!(text(event.pattern.kind_span), "result");
    assert_eq!(
        text(event.pattern.span),
        "result lookup where status == \"ok\" and has output.id"
    );
    assert_eq!(
        event.pattern.tool.as_ref().map(|tool| text(tool.span())),
        Some("lookup")
    );
    let Some(Expr::And(lhs, rhs)) = &event.pattern.guard else {
        panic!("expected `and`");
    };
    assert_eq!(text(lhs.span()), "status == \"ok\"");
    let Expr::Compare { path, value, .. } = lhs.as_ref() else {
        panic!("expected a comparison");
    };
    assert_eq!((text(path.span), text(value.span)), ("status", "\"ok\""));
    assert_eq!(text(rhs.span()), "has output.id");
    let ItemKind::Forbid(forbid) = &file.items[2].kind else {
        panic!("expected a forbid");
    };
    assert_eq!(text(forbid.message.span), "\"m\"");
    assert_eq!(text(file.items[2].span), "forbid * on found: \"m\"");

    let source = "event e = record where not (a in [1, 2]) or b.c is null or d matches /x/i";
    let text = |span: Span| &source[span.range()];
    let ItemKind::Event(event) = only_kind(source) else {
        panic!("expected an event");
    };
    let Some(Expr::Or(lhs, matches)) = &event.pattern.guard else {
        panic!("expected `or`");
    };
    let Expr::Or(not, is_null) = lhs.as_ref() else {
        panic!("expected `or`");
    };
    assert_eq!(text(not.span()), "not (a in [1, 2])");
    let Expr::Not(group, _) = not.as_ref() else {
        panic!("expected `not`");
    };
    assert_eq!(text(group.span()), "(a in [1, 2])");
    let Expr::Group(in_list, _) = group.as_ref() else {
        panic!("expected a group");
    };
    assert_eq!(text(in_list.span()), "a in [1, 2]");
    let Expr::In { values, .. } = in_list.as_ref() else {
        panic!("expected `in`");
    };
    assert_eq!(text(values[1].span), "2");
    assert_eq!(text(is_null.span()), "b.c is null");
    assert_eq!(text(matches.span()), "d matches /x/i");
}

#[test]
fn empty_and_comment_only_files() {
    assert_eq!(parse_ok(""), SpecFile::default());
    let have = parse_ok("\u{feff}# only a comment\n\n");
    assert_eq!(have.items, []);
    assert_eq!(have.comments[0].span, Span::new(3, 19));
}

#[test]
fn standalone_paths() {
    let have = parse_path("output[\"odd key\"][0].id").map(|path| path.to_string());
    assert_eq!(have.as_deref(), Ok("output[\"odd key\"][0].id"));
    assert_eq!(parse_path(" args.id ").map(|p| p.segments.len()), Ok(2));
    let error = |text: &str| parse_path(text).map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(
        error("a b"),
        Err("unexpected `b` after the path `a`".to_owned())
    );
    assert_eq!(
        error("a."),
        Err("expected a field name after `.`".to_owned())
    );
    assert_eq!(parse_path(""), Err(PathError::NotAPath));
    assert_eq!(parse_path("#a"), Err(PathError::Missing));
}

#[test]
fn suggestions() {
    assert_eq!(edit_distance("evnt", "event"), 1);
    assert_eq!(edit_distance("initail", "initial"), 1);
    assert_eq!(edit_distance("", "abc"), 3);
    assert_eq!(did_you_mean("forbit", STATEMENT_KEYWORDS), Some("forbid"));
    assert_eq!(did_you_mean("zzz", STATEMENT_KEYWORDS), None);
}

#[test]
fn state_declarations() {
    let ItemKind::State(states) = only_kind("state idle, pending\n") else {
        panic!("a state declaration");
    };
    assert_eq!(names(&states), ["idle", "pending"]);
    // With `->` after it, `state` is a state's name, as every keyword is.
    assert!(matches!(
        only_kind("state -> done on e\n"),
        ItemKind::Transition(_)
    ));
    assert_eq!(
        error("state\n").message,
        "expected a state name after `state`"
    );
    assert_eq!(
        error("stat idle\n").hint.as_deref(),
        Some("did you mean `state`?")
    );
}

#[test]
fn values_across_records() {
    assert_eq!(guard("output.id == args.id"), "(== output.id args.id)");
    assert_eq!(guard("$n + 1 * 2 < 3"), "(< (+ $n (* 1 2)) 3)");
    assert_eq!(guard("($n + 1) * 2 < 3"), "(< (* (group (+ $n 1)) 2) 3)");
    assert_eq!(guard("a - b - c == 0"), "(== (- (- a b) c) 0)");
    assert_eq!(guard("time >= $t + 30s"), "(>= time (+ $t 30s))");
    assert_eq!(guard("x < 500ms"), "(< x 500ms)");
    assert_eq!(
        guard("has $n and not has x"),
        "(and (has $n) (not (has x)))"
    );
    assert_eq!(
        guard("args.id in outputs of \"list_*\""),
        "(in args.id outputs-of Glob(\"list_*\", Span { start: 45, end: 53 }))"
    );
    assert_eq!(
        guard("args.id in messages from user"),
        "(in args.id messages-from user)"
    );
    assert_eq!(guard("secret in record"), "(secret record)");
    assert_eq!(guard("secret in args"), "(secret args)");
    // Without `in` after it, or with a list, `secret` is a field.
    assert_eq!(guard("secret == 1"), "(== secret 1)");
    assert_eq!(guard("secret in [1]"), "(in secret [1])");
    // A variable is tested as a path is.
    assert_eq!(guard("$s in [\"a\", 1]"), "(in $s [\"a\" 1])");
    assert_eq!(guard("$s matches /^a/"), "(matches $s /^a/)");
    assert_eq!(
        guard("not $s is string and $k in outputs of lookup"),
        "(and (not (is $s string)) (in $k outputs-of Name(\"lookup\", Span { start: 61, end: 67 })))"
    );
    assert_eq!(
        error("event e = record where $s in \"a\"\n").message,
        "expected a list after `in`"
    );
    let bare = error("event e = record where not $s and a == 1\n");
    assert_eq!(bare.code, Code::BarePathCondition);
    assert_eq!(
        bare.message,
        "`$s` is a bare variable, and conditions have no truthiness"
    );
    assert_eq!(
        error("event e = record where $s is integer\n")
            .hint
            .as_deref(),
        Some("did you mean `number`?")
    );
    // A classic test stays one: a path and a literal.
    assert_eq!(
        guard("(a == 1) or b == 2"),
        "(or (group (== a 1)) (== b 2))"
    );
    let event = only_kind("event e = call t where a == 1 bind n = $n + 1, t = time\n");
    let ItemKind::Event(decl) = event else {
        panic!("an event");
    };
    assert_eq!(
        names(&decl.binds.iter().map(|b| b.var.clone()).collect::<Vec<_>>()),
        ["n", "t"]
    );
    // `bind` names a tool unless a binding follows it.
    let ItemKind::Event(decl) = only_kind("event e = call bind\n") else {
        panic!("an event");
    };
    assert!(matches!(decl.pattern.tool, Some(ToolPattern::Name(ref n, _)) if n == "bind"));
    assert_eq!(
        error("event e = call t bind $n = 1\n").message,
        "a bound variable is named without `$`"
    );
    assert_eq!(
        error("event e = record where $ == 1\n").message,
        "expected a variable name after `$`"
    );
}
