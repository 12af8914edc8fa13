//! The TextMate grammar in `editors/`: it compiles, and tokenizing every shipped spec
//! gives each token the scope the parser's own reading of the spec calls for (comments,
//! strings, regexes, statement keywords, names, operators, literals).
//!
//! A small TextMate engine lives here: `match` rules with `captures`, `begin`/`end`
//! rules with nested `patterns`, and `include` of `#repository` entries. Regexes are
//! compiled with `fancy-regex`, which, like the Oniguruma engine editors use, supports
//! look-around.

use std::collections::BTreeMap;

use fancy_regex::Regex;
use serde_json::Value;
use tracegate::spec::ast::{Expr, ItemKind, Pattern, Span, SpecFile, StateSet, ToolPattern};

use crate::util::root;

/// A compiled grammar rule.
enum Rule {
    Match {
        regex: Regex,
        name: Option<String>,
        captures: BTreeMap<usize, String>,
    },
    Region {
        begin: Regex,
        end: String,
        name: Option<String>,
        begin_captures: BTreeMap<usize, String>,
        end_captures: BTreeMap<usize, String>,
        patterns: Vec<usize>,
    },
}

struct Grammar {
    rules: Vec<Rule>,
    root: Vec<usize>,
}

fn captures(value: &Value) -> BTreeMap<usize, String> {
    value
        .as_object()
        .map(|map| {
            map.iter()
                .map(|(k, v)| (k.parse().unwrap(), v["name"].as_str().unwrap().to_string()))
                .collect()
        })
        .unwrap_or_default()
}

impl Grammar {
    fn load() -> Grammar {
        let text =
            std::fs::read_to_string(root().join("editors/tracegate.tmLanguage.json")).unwrap();
        let json: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(json["scopeName"], "source.tracegate");
        assert_eq!(json["fileTypes"][0], "tg");
        let mut grammar = Grammar {
            rules: Vec::new(),
            root: Vec::new(),
        };
        let repository = json["repository"].clone();
        grammar.root = grammar.compile_list(&json["patterns"], &repository);
        grammar
    }

    fn compile_list(&mut self, patterns: &Value, repository: &Value) -> Vec<usize> {
        let mut out = Vec::new();
        for pattern in patterns.as_array().unwrap() {
            out.extend(self.compile(pattern, repository));
        }
        out
    }

    fn compile(&mut self, pattern: &Value, repository: &Value) -> Vec<usize> {
        if let Some(include) = pattern["include"].as_str() {
            let key = include
                .strip_prefix('#')
                .expect("only #repository includes");
            return self.compile(&repository[key], repository);
        }
        let name = pattern["name"].as_str().map(str::to_string);
        let compile = |source: &str| {
            Regex::new(source).unwrap_or_else(|e| panic!("bad regex {source:?}: {e}"))
        };
        if let Some(source) = pattern["match"].as_str() {
            self.rules.push(Rule::Match {
                regex: compile(source),
                name,
                captures: captures(&pattern["captures"]),
            });
            return vec![self.rules.len() - 1];
        }
        if let Some(begin) = pattern["begin"].as_str() {
            let end = pattern["end"].as_str().unwrap().to_string();
            compile(&end);
            let index = self.rules.len();
            self.rules.push(Rule::Region {
                begin: compile(begin),
                end,
                name,
                begin_captures: captures(&pattern["beginCaptures"]),
                end_captures: captures(&pattern["endCaptures"]),
                patterns: Vec::new(),
            });
            let nested = if pattern["patterns"].is_array() {
                self.compile_list(&pattern["patterns"], repository)
            } else {
                Vec::new()
            };
            if let Rule::Region { patterns, .. } = &mut self.rules[index] {
                *patterns = nested;
            }
            return vec![index];
        }
        // A rule with only `patterns` groups them.
        self.compile_list(&pattern["patterns"], repository)
    }

    /// The scopes of every byte of `text` (one line at a time; regions may span
    /// lines), as a list of scope names per byte.
    fn tokenize(&self, text: &str) -> Vec<Vec<String>> {
        let mut scopes = vec![Vec::<String>::new(); text.len()];
        // The open regions: (rule, its scope name).
        let mut stack: Vec<usize> = Vec::new();
        let mut line_start = 0;
        for line in text.split_inclusive('\n') {
            let body = line.trim_end_matches(['\n', '\r']);
            let mut at = 0;
            while at <= body.len() {
                let patterns: &[usize] = match stack.last() {
                    Some(&region) => match &self.rules[region] {
                        Rule::Region { patterns, .. } => patterns,
                        Rule::Match { .. } => unreachable!(),
                    },
                    None => &self.root,
                };
                // The earliest match wins; at one position, the region's end first,
                // then the patterns in order.
                let mut best: Option<(usize, usize, Option<usize>, fancy_regex::Captures<'_>)> =
                    None;
                if let Some(&region) = stack.last() {
                    if let Rule::Region { end, .. } = &self.rules[region] {
                        let regex = Regex::new(end).unwrap();
                        if let Ok(Some(c)) = regex.captures_from_pos(body, at) {
                            let m = c.get(0).unwrap();
                            best = Some((m.start(), m.end(), None, c));
                        }
                    }
                }
                for &rule in patterns {
                    let regex = match &self.rules[rule] {
                        Rule::Match { regex, .. } => regex,
                        Rule::Region { begin, .. } => begin,
                    };
                    if let Ok(Some(c)) = regex.captures_from_pos(body, at) {
                        let m = c.get(0).unwrap();
                        if best.as_ref().is_none_or(|b| m.start() < b.0) {
                            best = Some((m.start(), m.end(), Some(rule), c));
                        }
                    }
                }
                let open: Vec<String> = stack
                    .iter()
                    .filter_map(|&r| match &self.rules[r] {
                        Rule::Region { name, .. } => name.clone(),
                        Rule::Match { .. } => None,
                    })
                    .collect();
                let mut paint = |from: usize, to: usize, extra: &[&str]| {
                    for byte in &mut scopes[line_start + from..line_start + to] {
                        if byte.is_empty() {
                            byte.extend(open.iter().cloned());
                        }
                        byte.extend(extra.iter().map(|s| s.to_string()));
                    }
                };
                let Some((start, end, rule, caps)) = best else {
                    // The rest of the line is inside the open regions, if any.
                    paint(at, body.len(), &[]);
                    break;
                };
                // The text skipped to reach the match is inside the open regions.
                paint(at, start, &[]);
                match rule {
                    None => {
                        // The region ends.
                        let region = stack.pop().unwrap();
                        if let Rule::Region { end_captures, .. } = &self.rules[region] {
                            for (&group, name) in end_captures {
                                if let Some(g) = caps.get(group) {
                                    paint(g.start(), g.end(), &[name]);
                                }
                            }
                        }
                        paint(start, end, &[]);
                    }
                    Some(rule) => match &self.rules[rule] {
                        Rule::Match { name, captures, .. } => {
                            for (&group, scope) in captures {
                                if let Some(g) = caps.get(group) {
                                    let mut extra = Vec::new();
                                    extra.extend(name.as_deref());
                                    extra.push(scope.as_str());
                                    paint(g.start(), g.end(), &extra);
                                }
                            }
                            paint(start, end, name.as_deref().as_slice());
                        }
                        Rule::Region {
                            name,
                            begin_captures,
                            ..
                        } => {
                            let mut extra = Vec::new();
                            extra.extend(name.as_deref());
                            for (&group, scope) in begin_captures {
                                if let Some(g) = caps.get(group) {
                                    let mut with = extra.clone();
                                    with.push(scope.as_str());
                                    paint(g.start(), g.end(), &with);
                                }
                            }
                            paint(start, end, &extra);
                            stack.push(rule);
                        }
                    },
                }
                // An empty match must still move on.
                at = if end > start { end } else { end + 1 };
            }
            // Regions in this grammar end at the end of their line at the latest.
            line_start += line.len();
        }
        scopes
    }
}

/// What the parser says a span of the source is, as a scope prefix.
fn expectations(file: &SpecFile, source: &str) -> Vec<(Span, &'static str)> {
    let mut want = Vec::new();
    for comment in &file.comments {
        want.push((comment.span, "comment.line.number-sign"));
    }
    // A keyword at the start of a span: the first word of the span.
    let word = |span: Span| {
        let text = &source[span.start..];
        let len = text
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(text.len());
        Span::new(span.start, span.start + len)
    };
    for item in &file.items {
        match &item.kind {
            ItemKind::Spec(name) => {
                want.push((word(item.span), "keyword.other.spec"));
                want.push((name.span, "entity.name.type.spec"));
            }
            ItemKind::About(text) => {
                want.push((word(item.span), "keyword.other.about"));
                want.push((text.span, "string.quoted.double"));
            }
            ItemKind::Event(decl) => {
                want.push((word(item.span), "keyword.other.event"));
                want.push((decl.name.span, "entity.name.function.event"));
                pattern(&decl.pattern, source, &mut want);
            }
            ItemKind::Initial(state) => {
                want.push((word(item.span), "keyword.other.initial"));
                want.push((state.span, "entity.name.tag.state"));
            }
            ItemKind::Accept(_) | ItemKind::Hot(_) | ItemKind::Per(_) | ItemKind::State(_) => {
                want.push((word(item.span), "keyword.other.statement"));
            }
            ItemKind::Otherwise(_) => {
                want.push((word(item.span), "keyword.other.otherwise"));
            }
            ItemKind::Transition(t) => {
                want.push((t.from.span, "entity.name.tag.state"));
                want.push((t.to.span, "entity.name.tag.state"));
                let arrow = source[t.from.span.end..].find("->").unwrap() + t.from.span.end;
                want.push((Span::new(arrow, arrow + 2), "keyword.operator.arrow"));
            }
            ItemKind::Path(_) => want.push((word(item.span), "keyword.other.path")),
            ItemKind::Forbid(forbid) => {
                want.push((word(item.span), "keyword.control.forbid"));
                if let StateSet::All(span) = forbid.states {
                    want.push((span, "constant.language.wildcard"));
                }
                want.push((forbid.message.span, "string.quoted.double"));
            }
        }
    }
    want
}

fn pattern(pattern: &Pattern, source: &str, want: &mut Vec<(Span, &'static str)>) {
    want.push((pattern.kind_span, "keyword.other.pattern"));
    match &pattern.tool {
        Some(ToolPattern::Name(_, span)) => want.push((*span, "support.function.tool")),
        Some(ToolPattern::Glob(_, span)) => want.push((*span, "string.quoted.double")),
        Some(ToolPattern::Regex(regex)) => want.push((regex.span, "string.regexp")),
        None => {}
    }
    if let Some(guard) = &pattern.guard {
        let before = &source[..guard.span().start];
        let at = before.rfind("where").unwrap();
        want.push((Span::new(at, at + 5), "keyword.control.where"));
        expr(guard, source, want);
    }
}

/// The span of `word` between two offsets of the source.
fn between(source: &str, from: usize, to: usize, word: &str) -> Span {
    let at = source[from..to]
        .find(word)
        .unwrap_or_else(|| panic!("no `{word}` in {:?}", &source[from..to]))
        + from;
    Span::new(at, at + word.len())
}

fn expr(e: &Expr, source: &str, want: &mut Vec<(Span, &'static str)>) {
    match e {
        Expr::Or(a, b) | Expr::And(a, b) => {
            let op = if matches!(e, Expr::Or(..)) {
                "or"
            } else {
                "and"
            };
            // The operator is the last such word between the operands (a comment in
            // between could hold the word too).
            let mut at = None;
            let mut offset = a.span().end;
            for line in source[a.span().end..b.span().start].split_inclusive('\n') {
                let code = line.split('#').next().unwrap();
                if let Some(found) = code.rfind(op) {
                    at = Some(offset + found);
                }
                offset += line.len();
            }
            let at = at.unwrap_or_else(|| panic!("no `{op}` between two operands"));
            want.push((Span::new(at, at + op.len()), "keyword.operator.logical"));
            expr(a, source, want);
            expr(b, source, want);
        }
        Expr::Not(inner, span) => {
            want.push((
                Span::new(span.start, span.start + 3),
                "keyword.operator.logical",
            ));
            expr(inner, source, want);
        }
        Expr::Group(inner, _) => expr(inner, source, want),
        Expr::Compare { path, op, value } => {
            let span = between(source, path.span.end, value.span.start, op.symbol());
            want.push((span, "keyword.operator.comparison"));
            literal(&value.value, value.span, want);
        }
        Expr::In { path, values, .. } => {
            let end = values.first().map_or(path.span.end + 4, |v| v.span.start);
            want.push((
                between(source, path.span.end, end, "in"),
                "keyword.operator.word",
            ));
            for value in values {
                literal(&value.value, value.span, want);
            }
        }
        Expr::Matches { path, regex } => {
            let span = between(source, path.span.end, regex.span.start, "matches");
            want.push((span, "keyword.operator.word"));
            want.push((regex.span, "string.regexp"));
        }
        Expr::Has { span, .. } => {
            want.push((
                Span::new(span.start, span.start + 3),
                "keyword.operator.word",
            ));
        }
        Expr::Is { path, span, .. } => {
            let at = between(source, path.span.end, span.end, "is");
            want.push((at, "keyword.operator.word"));
            want.push((Span::new(at.end, span.end), "support.type.json"));
        }
        // Values, provenance and secret tests: the grammar colours their literals and
        // operators generically; nothing specific is asserted for them here.
        Expr::Relation { .. }
        | Expr::HasVar { .. }
        | Expr::VarTest { .. }
        | Expr::Provenance { .. }
        | Expr::Secret { .. } => {}
    }
}

fn literal(value: &Value, span: Span, want: &mut Vec<(Span, &'static str)>) {
    let scope = match value {
        Value::String(_) => "string.quoted.double",
        Value::Number(_) => "constant.numeric",
        Value::Bool(_) | Value::Null => "constant.language",
        // Lists and objects: their items are checked through the strings inside.
        Value::Array(_) | Value::Object(_) => return,
    };
    want.push((span, scope));
}

#[test]
fn the_grammar_scopes_every_shipped_spec_as_the_parser_reads_it() {
    let grammar = Grammar::load();
    let (paths, _) =
        tracegate::files::collect(&[root().join("specs")], tracegate::files::is_spec_file);
    assert!(!paths.is_empty());
    let mut checked = 0;
    for path in paths {
        let source = std::fs::read_to_string(&path).unwrap();
        let file = tracegate::spec::parse(&source).unwrap();
        let scopes = grammar.tokenize(&source);
        for (span, scope) in expectations(&file, &source) {
            for offset in span.range() {
                // Whitespace inside a span (e.g. between `is` and its type) is not a token.
                if source.as_bytes()[offset].is_ascii_whitespace() {
                    continue;
                }
                let have = &scopes[offset];
                let (line, column) = {
                    let before = &source.as_bytes()[..offset];
                    let line_start = before
                        .iter()
                        .rposition(|&b| b == b'\n')
                        .map_or(0, |i| i + 1);
                    (
                        before.iter().filter(|&&b| b == b'\n').count() + 1,
                        offset - line_start + 1,
                    )
                };
                assert!(
                    have.iter().any(|s| s.starts_with(scope)),
                    "{}:{line}:{column}: `{}` should be `{scope}`, is {have:?}",
                    path.display(),
                    &source[span.range()],
                );
                checked += 1;
            }
        }
        // Nothing outside a comment is scoped as one.
        let comment_bytes: Vec<bool> = {
            let mut bytes = vec![false; source.len()];
            for comment in &file.comments {
                bytes[comment.span.range()]
                    .iter_mut()
                    .for_each(|b| *b = true);
            }
            bytes
        };
        for (offset, have) in scopes.iter().enumerate() {
            let is_comment = have.iter().any(|s| s.starts_with("comment"));
            assert_eq!(
                is_comment,
                comment_bytes[offset],
                "{}: byte {offset} ({:?}) is {have:?}",
                path.display(),
                source.get(offset..(offset + 20).min(source.len()))
            );
        }
    }
    assert!(checked > 1000, "only {checked} bytes checked");
}

#[test]
fn field_names_that_are_keywords_elsewhere_are_not_keywords() {
    let grammar = Grammar::load();
    let source = "event a = record where event == \"x\" and output.not == 1 and in.x == 2\n";
    let scopes = grammar.tokenize(source);
    let at = |needle: &str, nth: usize| source.match_indices(needle).nth(nth).unwrap().0;
    // `event` after `where` is a field.
    assert!(
        scopes[at("event", 1)]
            .iter()
            .all(|s| !s.starts_with("keyword")),
        "{:?}",
        scopes[at("event", 1)]
    );
    assert!(
        scopes[at("not", 0)]
            .iter()
            .all(|s| !s.starts_with("keyword"))
    );
    assert!(
        scopes[at("in.x", 0)]
            .iter()
            .all(|s| !s.starts_with("keyword"))
    );
    // A slash in a tool name does not start a regex.
    let source = "event b = call mcp/github.create where status == \"ok\"\n";
    let scopes = grammar.tokenize(source);
    let slash = source.find('/').unwrap();
    assert!(
        scopes[slash]
            .iter()
            .any(|s| s.starts_with("support.function.tool"))
    );
    let quote = source.find('"').unwrap();
    assert!(
        scopes[quote]
            .iter()
            .any(|s| s.starts_with("string.quoted.double"))
    );
}
