//! The spec parser: source text to a [`SpecFile`].
//!
//! The language is line-oriented. A statement starts at the beginning of a line; a line
//! that starts with whitespace continues the statement above it, so a long guard can
//! wrap. The source is first cut into statements that way, and then each statement is
//! parsed on its own: an error in one is recorded and the next is still parsed, so every
//! bad statement in a file is reported, not just the first.
//!
//! The parser is built with nom on `&str`; spans are byte offsets of slices into the
//! whole source. nom stays inside this module: [`parse`] returns [`SpecError`]s, made in
//! one place (`Fail`) from either a committed error or nom's own "no match here".

use std::cell::RefCell;
use std::collections::BTreeMap;

use nom::IResult;
use nom::branch::alt;
use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::{char, digit1, one_of, satisfy};
use nom::combinator::{opt, recognize, value};
use nom::error::{ErrorKind, ParseError};
use nom::sequence::{pair, tuple};
use serde_json::Value;

use super::SpecError;
use super::ast::{
    Comment, CompareOp, EventDecl, Expr, Forbid, Ident, Item, ItemKind, JsonType, Literal,
    Otherwise, Path, Pattern, PatternKind, RegexLit, Segment, Span, SpecFile, StateSet, StrLit,
    ToolPattern, Transition,
};
use crate::diagnostic::Code;

/// Parses a whole spec file, reporting every syntax error in it.
///
/// Comments are kept in [`SpecFile::comments`] (for the formatter). Names are not
/// resolved here: an unknown state or a bad regex is the analyzer's business.
pub fn parse(source: &str) -> Result<SpecFile, Vec<SpecError>> {
    let parser = Parser {
        source,
        comments: RefCell::default(),
    };
    let (preamble, statements) = split_statements(source);
    let mut items = Vec::new();
    let mut errors = Vec::new();
    if let Err(error) = parser.preamble(preamble) {
        errors.push(error);
    }
    for statement in statements {
        match parser.statement(statement) {
            Ok(item) => items.push(item),
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() {
        let comments = parser.comments.into_inner().into_values().collect();
        Ok(SpecFile { items, comments })
    } else {
        Err(errors)
    }
}

/// Parses a record path on its own (`args.request_id`, `output["odd key"][0]`), as
/// written outside a spec, e.g. on the command line. Spans are offsets into `text`.
pub fn parse_path(text: &str) -> Result<Path, String> {
    let parser = Parser {
        source: text,
        comments: RefCell::default(),
    };
    let start = text.trim_start_matches([' ', '\t']);
    if start.starts_with('#') {
        return Err("expected a path".to_owned());
    }
    match parser.path(start) {
        Ok((rest, path)) => match rest.trim() {
            "" => Ok(path),
            tail => Err(format!("unexpected `{tail}` after the path `{path}`")),
        },
        Err(nom::Err::Failure(Fail::Report(error)) | nom::Err::Error(Fail::Report(error))) => {
            Err(error.message)
        }
        Err(_) => Err("expected a path, like `args.request_id`".to_owned()),
    }
}

/// The statements, as written: `spec`, `about`, ..., and transitions, which start with a
/// state name.
const STATEMENT_KEYWORDS: [&str; 10] = [
    "spec",
    "about",
    "event",
    "initial",
    "accept",
    "hot",
    "forbid",
    "otherwise",
    "path",
    "per",
];

const STATEMENTS_HINT: &str = "a statement is one of `spec`, `about`, `event`, `initial`, \
     `accept`, `hot`, `FROM -> TO on EVENT`, `forbid`, `otherwise`, `path` or `per`";

const PATTERN_KINDS: [(&str, PatternKind); 4] = [
    ("call", PatternKind::Call),
    ("result", PatternKind::Result),
    ("message", PatternKind::Message),
    ("record", PatternKind::Record),
];

/// Cuts `source` into the text before the first statement (blank lines and comments,
/// normally) and the statements. A statement runs from a line that starts with neither
/// whitespace nor `#` up to the next such line, so it takes its continuation lines and
/// any blank or comment lines after it. Strings and regexes cannot span lines, so this
/// needs no lexing.
fn split_statements(source: &str) -> (&str, Vec<&str>) {
    let body = source.strip_prefix('\u{feff}').unwrap_or(source);
    let mut offset = source.len() - body.len();
    let body_start = offset;
    let mut starts = Vec::new();
    for line in body.split_inclusive('\n') {
        if line.starts_with(|c: char| !matches!(c, ' ' | '\t' | '\r' | '\n' | '#')) {
            starts.push(offset);
        }
        offset += line.len();
    }
    let preamble = &source[body_start..starts.first().copied().unwrap_or(source.len())];
    let statements = starts
        .iter()
        .enumerate()
        .map(|(n, &start)| &source[start..starts.get(n + 1).copied().unwrap_or(source.len())])
        .collect();
    (preamble, statements)
}

type Res<'s, T> = IResult<&'s str, T, Fail<'s>>;

/// A parse failure: nom's "this alternative does not apply here" (which the caller may
/// recover from by trying something else), or a committed error ready to report.
#[derive(Debug)]
enum Fail<'s> {
    Backtrack(&'s str),
    Report(Box<SpecError>),
}

impl<'s> ParseError<&'s str> for Fail<'s> {
    fn from_error_kind(input: &'s str, _kind: ErrorKind) -> Self {
        Fail::Backtrack(input)
    }

    fn append(_input: &'s str, _kind: ErrorKind, other: Self) -> Self {
        other
    }

    fn or(self, other: Self) -> Self {
        match self {
            Fail::Report(_) => self,
            Fail::Backtrack(_) => other,
        }
    }
}

fn report<'s, T>(error: SpecError) -> Res<'s, T> {
    Err(nom::Err::Failure(Fail::Report(Box::new(error))))
}

fn backtrack<T>(at: &str) -> Res<'_, T> {
    Err(nom::Err::Error(Fail::Backtrack(at)))
}

/// Commits to `result`: if it did not match at all, that is the error `error()`.
fn require<'s, T>(result: Res<'s, T>, error: impl FnOnce() -> SpecError) -> Res<'s, T> {
    match result {
        Err(nom::Err::Error(_)) => report(error()),
        other => other,
    }
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn is_tool_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '/' | '-')
}

/// An identifier: `[A-Za-z_][A-Za-z0-9_]*`.
fn word(i: &str) -> Res<'_, &str> {
    recognize(pair(satisfy(is_ident_start), take_while(is_ident_char)))(i)
}

/// `kw` as a whole word at the start of `i`: the rest after it.
fn keyword<'s>(i: &'s str, kw: &str) -> Option<&'s str> {
    let rest = i.strip_prefix(kw)?;
    (!rest.starts_with(is_ident_char)).then_some(rest)
}

/// `not` or `has` as an operator. Followed by `.` or `[`, the word is a path's root
/// instead: `not["x"] == 1` compares the record's `not` field.
fn operator_keyword<'s>(i: &'s str, kw: &str) -> Option<&'s str> {
    keyword(i, kw).filter(|rest| !rest.starts_with(['.', '[']))
}

fn compare_op(i: &str) -> Res<'_, CompareOp> {
    alt((
        value(CompareOp::Eq, tag("==")),
        value(CompareOp::Ne, tag("!=")),
        value(CompareOp::Le, tag("<=")),
        value(CompareOp::Ge, tag(">=")),
        value(CompareOp::Lt, tag("<")),
        value(CompareOp::Gt, tag(">")),
    ))(i)
}

/// A number in JSON syntax: `-?digits(.digits)?([eE][+-]?digits)?`.
fn json_number(i: &str) -> Res<'_, &str> {
    recognize(tuple((
        opt(char('-')),
        digit1,
        opt(pair(char('.'), digit1)),
        opt(tuple((one_of("eE"), opt(one_of("+-")), digit1))),
    )))(i)
}

/// The length of the quoted string at the start of `s`, quotes included, if it is
/// closed on its own line.
fn quoted_len(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut n = 1;
    while let Some(&byte) = bytes.get(n) {
        match byte {
            b'"' => return Some(n + 1),
            b'\n' => return None,
            b'\\' if bytes.get(n + 1) == Some(&b'\n') => return None,
            b'\\' => n += 2,
            _ => n += 1,
        }
    }
    None
}

/// The length of the token at the start of `s`, for an error to point at.
fn token_len(s: &str) -> usize {
    let word = s.len() - s.trim_start_matches(is_ident_char).len();
    if word > 0 {
        return word;
    }
    if let Some(len) = s.starts_with('"').then(|| quoted_len(s)).flatten() {
        return len;
    }
    let operator = s.len() - s.trim_start_matches(['=', '!', '<', '>', '-']).len();
    if operator > 0 {
        return operator;
    }
    s.chars().next().map_or(0, char::len_utf8)
}

/// serde_json's reason for an error, without its "at line 1 column 3" (the span says
/// where).
fn json_reason(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(end) => text[..end].to_owned(),
        None => text,
    }
}

/// The number of single-character edits (insert, delete, substitute, swap two
/// neighbours) between `a` and `b`.
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate `word` is most likely a misspelling of, if any is close enough.
fn suggest<'k>(word: &str, candidates: &[&'k str]) -> Option<&'k str> {
    let word = word.to_ascii_lowercase();
    candidates
        .iter()
        .map(|&candidate| (edit_distance(&word, candidate), candidate))
        .filter(|&(distance, candidate)| distance <= (candidate.len() / 3).max(1))
        .min_by_key(|&(distance, _)| distance)
        .map(|(_, candidate)| candidate)
}

/// `did you mean `x`?` for a misspelt `word`.
fn did_you_mean(word: &str, candidates: &[&str]) -> Option<String> {
    suggest(word, candidates).map(|candidate| format!("did you mean `{candidate}`?"))
}

/// What a statement parser returns: the statement, and a hint for the error if
/// something follows it on its line.
type Parsed = (ItemKind, Option<String>);

struct Parser<'s> {
    source: &'s str,
    /// Comments by start offset. Whitespace is skipped by one function, which records
    /// the comments it passes; the parser backtracks, so a comment may be seen twice.
    comments: RefCell<BTreeMap<usize, Comment>>,
}

impl<'s> Parser<'s> {
    /// The byte offset of `part`, a slice of the source, in the source.
    fn offset(&self, part: &str) -> usize {
        let offset = (part.as_ptr() as usize).wrapping_sub(self.source.as_ptr() as usize);
        debug_assert!(
            offset <= self.source.len(),
            "bug: a slice outside the source"
        );
        offset
    }

    /// The span from the start of `from` to the start of `rest`, what is left after it.
    fn span(&self, from: &str, rest: &str) -> Span {
        Span::new(self.offset(from), self.offset(rest))
    }

    /// Skips whitespace, newlines and comments (recording them). Inside one statement
    /// every newline is followed by a continuation, blank or comment line.
    fn ws(&self, mut i: &'s str) -> &'s str {
        loop {
            i = i.trim_start_matches([' ', '\t', '\r', '\n']);
            let Some(body) = i.strip_prefix('#') else {
                return i;
            };
            let line = &body[..body.find('\n').unwrap_or(body.len())];
            let text = line.strip_suffix('\r').unwrap_or(line);
            let start = self.offset(i);
            self.comments
                .borrow_mut()
                .entry(start)
                .or_insert_with(|| Comment {
                    text: text.to_owned(),
                    span: Span::new(start, start + 1 + text.len()),
                });
            i = &body[line.len()..];
        }
    }

    /// The span of the token at `at` (after whitespace), for an error to point at. At the
    /// end of a statement it is empty, just after the statement's last token.
    fn token(&self, at: &'s str) -> Span {
        let next = self.ws(at);
        if next.is_empty() {
            let end = self.source[..self.offset(at)].trim_end().len();
            return Span::new(end, end);
        }
        let start = self.offset(next);
        Span::new(start, start + token_len(next))
    }

    /// A syntax error at the token at `at`.
    fn syntax(&self, at: &'s str, message: impl Into<String>) -> SpecError {
        SpecError::new(Code::SyntaxError, self.token(at), message)
    }

    /// The word at `at` (after whitespace), if there is one.
    fn next_word(&self, at: &'s str) -> Option<&'s str> {
        word(self.ws(at)).ok().map(|(_, w)| w)
    }

    /// Everything before the first statement: only blank lines and comments may be here.
    fn preamble(&self, text: &'s str) -> Result<(), SpecError> {
        if self.ws(text).is_empty() {
            return Ok(());
        }
        Err(self
            .syntax(
                text,
                "this line is indented, so it continues a statement, but no statement comes before it",
            )
            .with_hint("start a statement at the beginning of its line"))
    }

    fn statement(&self, text: &'s str) -> Result<Item, SpecError> {
        match self.item(text) {
            Ok((rest, (kind, hint))) => {
                let after = self.ws(rest);
                if after.is_empty() {
                    return Ok(Item {
                        kind,
                        span: self.span(text, rest),
                    });
                }
                let span = self.token(rest);
                let message = format!(
                    "unexpected `{}` after the statement",
                    &self.source[span.range()]
                );
                let error = SpecError::new(Code::SyntaxError, span, message);
                Err(match hint {
                    Some(hint) => error.with_hint(hint),
                    None => error,
                })
            }
            Err(nom::Err::Failure(Fail::Report(error)) | nom::Err::Error(Fail::Report(error))) => {
                Err(*error)
            }
            Err(nom::Err::Failure(Fail::Backtrack(at)) | nom::Err::Error(Fail::Backtrack(at))) => {
                let span = self.token(at);
                let message = format!("unexpected `{}`", &self.source[span.range()]);
                Err(SpecError::new(Code::SyntaxError, span, message))
            }
            Err(nom::Err::Incomplete(_)) => Err(SpecError::new(
                Code::SyntaxError,
                self.token(text),
                "bug: the spec parser asked for more input; please report this",
            )),
        }
    }

    fn item(&self, i: &'s str) -> Res<'s, Parsed> {
        let Ok((rest, first)) = word(i) else {
            let span = self.token(i);
            let message = format!(
                "expected a statement, found `{}`",
                &self.source[span.range()]
            );
            return report(
                SpecError::new(Code::SyntaxError, span, message).with_hint(STATEMENTS_HINT),
            );
        };
        // Keywords are keywords only when no `->` follows: `spec -> done on x` is a
        // transition from a state named `spec`.
        if self.ws(rest).starts_with("->") {
            return self.transition(i);
        }
        match first {
            "spec" => {
                let (rest, name) = require(self.ident(rest), || {
                    self.syntax(rest, "expected a spec name after `spec`")
                })?;
                Ok((rest, (ItemKind::Spec(name), None)))
            }
            "about" => {
                let (rest, text) = require(self.string(rest), || {
                    self.syntax(rest, "expected a quoted string after `about`")
                        .with_hint(
                            "describe the spec in one line: `about \"what this spec checks\"`",
                        )
                })?;
                Ok((rest, (ItemKind::About(text), None)))
            }
            "initial" => {
                let (rest, state) = require(self.ident(rest), || {
                    self.syntax(rest, "expected a state name after `initial`")
                })?;
                Ok((rest, (ItemKind::Initial(state), None)))
            }
            "accept" | "hot" => {
                let (rest, states) = require(self.names(rest, "a state name"), || {
                    self.syntax(rest, format!("expected a state name after `{first}`"))
                })?;
                let hint = self
                    .next_word(rest)
                    .map(|_| "separate states with `,`".to_owned());
                let kind = if first == "accept" {
                    ItemKind::Accept(states)
                } else {
                    ItemKind::Hot(states)
                };
                Ok((rest, (kind, hint)))
            }
            "otherwise" => self.otherwise(rest),
            "event" => self.event(rest),
            "forbid" => self.forbid(rest),
            "path" => self.path_statement(rest),
            "per" => self.per(rest),
            _ => {
                let span = Span::new(self.offset(i), self.offset(rest));
                let hint = did_you_mean(first, &STATEMENT_KEYWORDS)
                    .unwrap_or_else(|| STATEMENTS_HINT.to_owned());
                report(
                    SpecError::new(
                        Code::SyntaxError,
                        span,
                        format!("unknown statement `{first}`"),
                    )
                    .with_hint(hint),
                )
            }
        }
    }

    /// A name: a state, an event, the spec's own.
    fn ident(&self, i: &'s str) -> Res<'s, Ident> {
        let start = self.ws(i);
        let (rest, name) = word(start)?;
        Ok((
            rest,
            Ident {
                name: name.to_owned(),
                span: self.span(start, rest),
            },
        ))
    }

    /// `NAME, NAME, ...`. Backtracks if there is no first name; `what` ("a state name")
    /// is what an error after a `,` says was expected.
    fn names(&self, i: &'s str, what: &str) -> Res<'s, Vec<Ident>> {
        let (mut rest, first) = self.ident(i)?;
        let mut names = vec![first];
        loop {
            let Some(after) = self.ws(rest).strip_prefix(',') else {
                return Ok((rest, names));
            };
            let (next_rest, name) = require(self.ident(after), || {
                self.syntax(after, format!("expected {what} after `,`"))
            })?;
            names.push(name);
            rest = next_rest;
        }
    }

    /// `FROM -> TO on EVENT, ...`
    fn transition(&self, i: &'s str) -> Res<'s, Parsed> {
        let (rest, from) = self.ident(i)?;
        let Some(rest) = self.ws(rest).strip_prefix("->") else {
            return report(self.syntax(rest, format!("expected `->` after state `{}`", from.name)));
        };
        let (rest, to) = require(self.ident(rest), || {
            self.syntax(rest, "expected a state name after `->`")
        })?;
        let Some(after_on) = keyword(self.ws(rest), "on") else {
            return report(
                self.syntax(rest, format!("expected `on` after state `{}`", to.name))
                    .with_hint("a transition names its events: `FROM -> TO on EVENT`"),
            );
        };
        let (rest, events) = require(self.names(after_on, "an event name"), || {
            self.syntax(after_on, "expected an event name after `on`")
        })?;
        let hint = self
            .next_word(rest)
            .map(|_| "separate events with `,`".to_owned());
        let transition = Transition { from, to, events };
        Ok((rest, (ItemKind::Transition(transition), hint)))
    }

    /// `otherwise reject|ignore`, after the keyword.
    fn otherwise(&self, i: &'s str) -> Res<'s, Parsed> {
        let start = self.ws(i);
        let found = word(start).ok().and_then(|(rest, w)| match w {
            "reject" => Some((rest, Otherwise::Reject)),
            "ignore" => Some((rest, Otherwise::Ignore)),
            _ => None,
        });
        let Some((rest, otherwise)) = found else {
            let error = self.syntax(i, "expected `reject` or `ignore` after `otherwise`");
            let hint = self
                .next_word(i)
                .and_then(|w| did_you_mean(w, &["reject", "ignore"]));
            return report(match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            });
        };
        Ok((rest, (ItemKind::Otherwise(otherwise), None)))
    }

    /// `event NAME = PATTERN`, after the keyword.
    fn event(&self, i: &'s str) -> Res<'s, Parsed> {
        let (rest, name) = require(self.ident(i), || {
            self.syntax(i, "expected an event name after `event`")
        })?;
        let Some(after_eq) = self.ws(rest).strip_prefix('=') else {
            return report(
                self.syntax(rest, format!("expected `=` after event `{}`", name.name))
                    .with_hint("an event is declared as `event NAME = call TOOL where CONDITION`"),
            );
        };
        let (rest, (pattern, hint)) = self.pattern(after_eq)?;
        Ok((rest, (ItemKind::Event(EventDecl { name, pattern }), hint)))
    }

    /// `call|result|message|record [TOOL] [where EXPR]`
    fn pattern(&self, i: &'s str) -> Res<'s, (Pattern, Option<String>)> {
        let start = self.ws(i);
        let found = PATTERN_KINDS
            .iter()
            .find_map(|&(kw, kind)| keyword(start, kw).map(|rest| (rest, kind)));
        let Some((mut rest, kind)) = found else {
            let error = self.syntax(
                i,
                "expected an event pattern: `call`, `result`, `message` or `record`",
            );
            let kinds = PATTERN_KINDS.map(|(kw, _)| kw);
            let hint = self.next_word(i).and_then(|w| did_you_mean(w, &kinds));
            return report(match hint {
                Some(hint) => error.with_hint(hint),
                None => error,
            });
        };
        let kind_span = self.span(start, rest);

        // `where` ends a bare tool name only as a whole tool-name word: `where.x` is a tool.
        let where_keyword = |at: &'s str| {
            at.strip_prefix("where")
                .filter(|after| !after.starts_with(is_tool_char))
        };
        let next = self.ws(rest);
        let tool = if where_keyword(next).is_some() {
            None
        } else if next.starts_with('"') {
            let (after, glob) = self.string(next)?;
            rest = after;
            Some(ToolPattern::Glob(glob.value, glob.span))
        } else if next.starts_with('/') {
            let (after, regex) = self.regex(next)?;
            rest = after;
            Some(ToolPattern::Regex(regex))
        } else if let Ok((after, name)) = take_while1::<_, _, Fail>(is_tool_char)(next) {
            rest = after;
            Some(ToolPattern::Name(name.to_owned(), self.span(next, after)))
        } else {
            None
        };

        let guard = match where_keyword(self.ws(rest)) {
            Some(after_where) => {
                let (after, guard) = require(self.or_expr(after_where), || {
                    self.syntax(after_where, "expected a condition after `where`")
                })?;
                rest = after;
                Some(guard)
            }
            None => None,
        };

        let hint = if matches!(tool, Some(ToolPattern::Name(..))) && rest.starts_with(['*', '?']) {
            Some("a glob is quoted: `call \"create_*\"`".to_owned())
        } else {
            self.next_word(rest).map(|w| {
                if guard.is_some() {
                    "join conditions with `and` or `or`".to_owned()
                } else {
                    did_you_mean(w, &["where"])
                        .unwrap_or_else(|| "a condition starts with `where`".to_owned())
                }
            })
        };
        let pattern = Pattern {
            kind,
            kind_span,
            tool,
            guard,
            span: self.span(start, rest),
        };
        Ok((rest, (pattern, hint)))
    }

    /// `forbid STATE, ... on EVENT, ...: "message"` or `forbid * on ...`, after the keyword.
    fn forbid(&self, i: &'s str) -> Res<'s, Parsed> {
        let start = self.ws(i);
        let (rest, states, last) = if let Some(rest) = start.strip_prefix('*') {
            (
                rest,
                StateSet::All(self.span(start, rest)),
                "`*`".to_owned(),
            )
        } else {
            let (rest, states) = require(self.names(i, "a state name"), || {
                self.syntax(i, "expected a state name or `*` after `forbid`")
            })?;
            let last = states
                .last()
                .map_or_else(String::new, |state| format!("state `{}`", state.name));
            (rest, StateSet::Named(states), last)
        };
        let Some(after_on) = keyword(self.ws(rest), "on") else {
            let expected = if matches!(states, StateSet::All(_)) {
                "`on`"
            } else {
                "`,` or `on`"
            };
            return report(self.syntax(rest, format!("expected {expected} after {last}")));
        };
        let (rest, events) = require(self.names(after_on, "an event name"), || {
            self.syntax(after_on, "expected an event name after `on`")
        })?;
        let Some(after_colon) = self.ws(rest).strip_prefix(':') else {
            let last = events.last().map_or("", |event| event.name.as_str());
            return report(
                self.syntax(rest, format!("expected `,` or `:` after event `{last}`"))
                    .with_hint("a forbid ends with the message a reviewer reads: `: \"why this move is wrong\"`"),
            );
        };
        let (rest, message) = require(self.string(after_colon), || {
            self.syntax(after_colon, "expected a quoted message after `:`")
                .with_hint("write the message a reviewer reads: `: \"why this move is wrong\"`")
        })?;
        let forbid = Forbid {
            states,
            events,
            message,
        };
        Ok((rest, (ItemKind::Forbid(forbid), None)))
    }

    /// `path E1 -> E2 -> ...`, after the keyword.
    fn path_statement(&self, i: &'s str) -> Res<'s, Parsed> {
        let (mut rest, first) = require(self.ident(i), || {
            self.syntax(i, "expected an event name after `path`")
        })?;
        let mut events = vec![first];
        while let Some(after_arrow) = self.ws(rest).strip_prefix("->") {
            let (after, event) = require(self.ident(after_arrow), || {
                self.syntax(after_arrow, "expected an event name after `->`")
            })?;
            events.push(event);
            rest = after;
        }
        let hint = self
            .next_word(rest)
            .map(|_| "chain events with `->`".to_owned());
        Ok((rest, (ItemKind::Path(events), hint)))
    }

    /// `per PATH, ...`, after the keyword.
    fn per(&self, i: &'s str) -> Res<'s, Parsed> {
        let (mut rest, first) = require(self.path(i), || {
            self.syntax(i, "expected a path after `per`")
        })?;
        let mut paths = vec![first];
        while let Some(after_comma) = self.ws(rest).strip_prefix(',') {
            let (after, path) = require(self.path(after_comma), || {
                self.syntax(after_comma, "expected a path after `,`")
            })?;
            paths.push(path);
            rest = after;
        }
        let hint = self
            .next_word(rest)
            .map(|_| "separate paths with `,`".to_owned());
        Ok((rest, (ItemKind::Per(paths), hint)))
    }

    /// A JSON string literal. Backtracks if there is no `"`.
    fn string(&self, i: &'s str) -> Res<'s, StrLit> {
        let start = self.ws(i);
        if !start.starts_with('"') {
            return backtrack(start);
        }
        let Some(len) = quoted_len(start) else {
            let line = start.find(['\n', '\r']).unwrap_or(start.len());
            let from = self.offset(start);
            return report(
                SpecError::new(
                    Code::SyntaxError,
                    Span::new(from, from + line),
                    "unterminated string literal",
                )
                .with_hint("close the string with `\"` on the same line"),
            );
        };
        let (text, rest) = start.split_at(len);
        let span = self.span(start, rest);
        match serde_json::from_str::<String>(text) {
            Ok(value) => Ok((rest, StrLit { value, span })),
            Err(error) => report(
                SpecError::new(
                    Code::SyntaxError,
                    span,
                    format!("invalid string literal: {}", json_reason(&error)),
                )
                .with_hint("strings use JSON syntax: escapes are `\\\"`, `\\\\`, `\\n`, `\\t`, `\\u00e9`, ..."),
            ),
        }
    }

    /// `/pattern/flags`. Backtracks if there is no `/`. `\/` is a slash in the pattern;
    /// other backslashes are kept for the regex engine.
    fn regex(&self, i: &'s str) -> Res<'s, RegexLit> {
        let start = self.ws(i);
        let Some(body) = start.strip_prefix('/') else {
            return backtrack(start);
        };
        let unterminated = || {
            let line = start.find(['\n', '\r']).unwrap_or(start.len());
            let from = self.offset(start);
            report(
                SpecError::new(
                    Code::SyntaxError,
                    Span::new(from, from + line),
                    "unterminated regex literal",
                )
                .with_hint(
                    "close the regex with `/` on the same line; write a slash in it as `\\/`",
                ),
            )
        };
        let mut pattern = String::new();
        let mut chars = body.char_indices();
        let close = loop {
            match chars.next() {
                Some((n, '/')) => break n,
                Some((_, '\\')) => match chars.next() {
                    Some((_, '/')) => pattern.push('/'),
                    Some((_, c)) if c != '\n' && c != '\r' => {
                        pattern.push('\\');
                        pattern.push(c);
                    }
                    _ => return unterminated(),
                },
                Some((_, '\n' | '\r')) | None => return unterminated(),
                Some((_, c)) => pattern.push(c),
            }
        };
        let after = &body[close + 1..];
        let rest = after.trim_start_matches(|c: char| c.is_ascii_alphabetic());
        let flags = &after[..after.len() - rest.len()];
        let mut case_insensitive = false;
        for (n, flag) in flags.char_indices() {
            if flag != 'i' {
                let at = self.offset(after) + n;
                return report(
                    SpecError::new(
                        Code::SyntaxError,
                        Span::new(at, at + 1),
                        format!("unknown regex flag `{flag}`"),
                    )
                    .with_hint("the only flag is `i`, for case-insensitive matching"),
                );
            }
            case_insensitive = true;
        }
        let regex = RegexLit {
            pattern,
            case_insensitive,
            span: self.span(start, rest),
        };
        Ok((rest, regex))
    }

    /// A record path: a field name or `["key"]`, then `.name`, `[0]` or `["key"]` steps.
    /// Backtracks if there is no path here.
    fn path(&self, i: &'s str) -> Res<'s, Path> {
        let start = self.ws(i);
        let mut segments = Vec::new();
        let mut rest = if let Ok((rest, name)) = word(start) {
            segments.push(Segment::Key(name.to_owned()));
            rest
        } else if start.starts_with('[') {
            let (rest, segment) = self.bracket(start)?;
            if let Segment::Index(_) = segment {
                return report(
                    SpecError::new(
                        Code::SyntaxError,
                        self.span(start, rest),
                        "a path starts with a field name or a quoted key, not an index",
                    )
                    .with_hint("a record is an object: write `output[0]` or `[\"key\"]`"),
                );
            }
            segments.push(segment);
            rest
        } else {
            return backtrack(start);
        };
        loop {
            if let Some(after_dot) = rest.strip_prefix('.') {
                let Ok((after, name)) = word(after_dot) else {
                    return report(
                        self.syntax(after_dot, "expected a field name after `.`")
                            .with_hint("write a key that is not a plain name as `[\"odd key\"]`"),
                    );
                };
                segments.push(Segment::Key(name.to_owned()));
                rest = after;
            } else if rest.starts_with('[') {
                let (after, segment) = self.bracket(rest)?;
                segments.push(segment);
                rest = after;
            } else {
                break;
            }
        }
        let span = self.span(start, rest);
        Ok((rest, Path { segments, span }))
    }

    /// `[0]` or `["key"]`, at a `[`.
    fn bracket(&self, i: &'s str) -> Res<'s, Segment> {
        let inner = &i[1..];
        let start = self.ws(inner);
        let (rest, segment) = if let Ok((rest, digits)) = digit1::<_, Fail>(start) {
            let Ok(index) = digits.parse::<usize>() else {
                return report(self.syntax(start, format!("index `{digits}` is too large")));
            };
            (rest, Segment::Index(index))
        } else if start.starts_with('"') {
            let (rest, key) = self.string(start)?;
            (rest, Segment::Key(key.value))
        } else {
            return report(self.syntax(inner, "expected an index or a quoted key after `[`"));
        };
        let Some(after) = self.ws(rest).strip_prefix(']') else {
            return report(self.syntax(rest, "expected `]`"));
        };
        Ok((after, segment))
    }

    /// `EXPR or EXPR ...`, the loosest level. Backtracks if there is no condition here.
    fn or_expr(&self, i: &'s str) -> Res<'s, Expr> {
        let (mut rest, mut lhs) = self.and_expr(i)?;
        while let Some(after_or) = keyword(self.ws(rest), "or") {
            let (after, rhs) = require(self.and_expr(after_or), || {
                self.syntax(after_or, "expected a condition after `or`")
            })?;
            lhs = Expr::Or(Box::new(lhs), Box::new(rhs));
            rest = after;
        }
        Ok((rest, lhs))
    }

    fn and_expr(&self, i: &'s str) -> Res<'s, Expr> {
        let (mut rest, mut lhs) = self.not_expr(i)?;
        while let Some(after_and) = keyword(self.ws(rest), "and") {
            let (after, rhs) = require(self.not_expr(after_and), || {
                self.syntax(after_and, "expected a condition after `and`")
            })?;
            lhs = Expr::And(Box::new(lhs), Box::new(rhs));
            rest = after;
        }
        Ok((rest, lhs))
    }

    fn not_expr(&self, i: &'s str) -> Res<'s, Expr> {
        let start = self.ws(i);
        if let Some(after_not) = operator_keyword(start, "not") {
            match self.not_expr(after_not) {
                Ok((rest, inner)) => {
                    return Ok((rest, Expr::Not(Box::new(inner), self.span(start, rest))));
                }
                // No condition follows, so `not` is a field name: `not == 1`.
                Err(nom::Err::Error(_)) => {}
                Err(failure) => return Err(failure),
            }
        }
        self.primary(start)
    }

    /// `( EXPR )`, `has PATH`, or a test on a path.
    fn primary(&self, i: &'s str) -> Res<'s, Expr> {
        let start = self.ws(i);
        if let Some(after_paren) = start.strip_prefix('(') {
            let (rest, inner) = require(self.or_expr(after_paren), || {
                self.syntax(after_paren, "expected a condition after `(`")
            })?;
            let Some(after) = self.ws(rest).strip_prefix(')') else {
                let open = self.span(start, after_paren);
                return report(
                    self.syntax(rest, "expected `)`, `and` or `or` after the condition")
                        .with_related(open, "the group opens here"),
                );
            };
            return Ok((after, Expr::Group(Box::new(inner), self.span(start, after))));
        }
        if let Some(after_has) = operator_keyword(start, "has") {
            match self.path(after_has) {
                Ok((rest, path)) => {
                    let span = self.span(start, rest);
                    return Ok((rest, Expr::Has { path, span }));
                }
                // No path follows, so `has` is a field name: `has == 2`.
                Err(nom::Err::Error(_)) => {}
                Err(failure) => return Err(failure),
            }
        }
        self.test(start)
    }

    /// `PATH == LIT`, `PATH in [..]`, `PATH matches /re/`, `PATH is TYPE`. Backtracks if
    /// there is no path; a path with no test after it is an error (no truthiness).
    fn test(&self, start: &'s str) -> Res<'s, Expr> {
        let (rest, path) = self.path(start)?;
        let next = self.ws(rest);
        if let Ok((after_op, op)) = compare_op(next) {
            let (rest, value) = self.required_literal(after_op, op.symbol())?;
            return Ok((rest, Expr::Compare { path, op, value }));
        }
        if let Some(after_in) = keyword(next, "in") {
            let list = self.ws(after_in);
            if !list.starts_with('[') {
                return report(
                    self.syntax(after_in, "expected a list after `in`")
                        .with_hint("write the values as a JSON list: `in [\"a\", \"b\"]`"),
                );
            }
            let (rest, values) = self.literal_list(list)?;
            let span = Span::new(path.span.start, self.offset(rest));
            return Ok((rest, Expr::In { path, values, span }));
        }
        if let Some(after_matches) = keyword(next, "matches") {
            let (rest, regex) = require(self.regex(after_matches), || {
                self.syntax(after_matches, "expected a regex after `matches`")
                    .with_hint("write the regex between slashes: `/^abc/`")
            })?;
            return Ok((rest, Expr::Matches { path, regex }));
        }
        if let Some(after_is) = keyword(next, "is") {
            let ty_start = self.ws(after_is);
            let found = word(ty_start).ok().and_then(|(rest, w)| {
                JsonType::ALL
                    .into_iter()
                    .find(|ty| ty.keyword() == w)
                    .map(|ty| (rest, ty))
            });
            let Some((rest, ty)) = found else {
                let error = self.syntax(
                    after_is,
                    "expected a JSON type after `is`: `null`, `bool`, `number`, `string`, `array` or `object`",
                );
                let hint = self.next_word(after_is).and_then(|w| {
                    let alias = match w {
                        "boolean" => Some("bool"),
                        "int" | "integer" | "float" => Some("number"),
                        "str" => Some("string"),
                        "list" => Some("array"),
                        "map" | "dict" => Some("object"),
                        _ => None,
                    };
                    alias
                        .map(|ty| format!("did you mean `{ty}`?"))
                        .or_else(|| did_you_mean(w, &JsonType::ALL.map(JsonType::keyword)))
                });
                return report(match hint {
                    Some(hint) => error.with_hint(hint),
                    None => error,
                });
            };
            let span = Span::new(path.span.start, self.offset(rest));
            return Ok((rest, Expr::Is { path, ty, span }));
        }
        self.untested(rest, path)
    }

    /// The error for a path with no test after it.
    fn untested<T>(&self, rest: &'s str, path: Path) -> Res<'s, T> {
        let next = self.ws(rest);
        let text = path.to_string();
        let ends_condition = next.is_empty()
            || next.starts_with(')')
            || keyword(next, "and").is_some()
            || keyword(next, "or").is_some();
        if !ends_condition {
            let error = self
                .syntax(rest, format!("expected a comparison after `{text}`"))
                .with_hint(if next.starts_with('=') {
                    "compare with `==`".to_owned()
                } else {
                    "test it with `==`, `!=`, `<`, `<=`, `>`, `>=`, `in [..]`, `matches /../` or `is TYPE`"
                        .to_owned()
                });
            return report(error);
        }
        // `where not` and `where has` alone read as the operator, not as a field.
        if let [Segment::Key(root)] = path.segments.as_slice() {
            match root.as_str() {
                "not" => return report(self.syntax(rest, "expected a condition after `not`")),
                "has" => return report(self.syntax(rest, "expected a path after `has`")),
                _ => {}
            }
        }
        report(
            SpecError::new(
                Code::BarePathCondition,
                path.span,
                format!("`{text}` is a bare path, and conditions have no truthiness"),
            )
            .with_hint(format!(
                "test presence with `has {text}`, or compare it: `{text} == true`"
            )),
        )
    }

    /// A literal that must be here, after `after` (an operator, `:`).
    fn required_literal(&self, i: &'s str, after: &str) -> Res<'s, Literal> {
        require(self.literal(i), || {
            let error = self.syntax(i, format!("expected a JSON literal after `{after}`"));
            let next = self.ws(i);
            if let Ok((_, w)) = word(next) {
                let lower = w.to_ascii_lowercase();
                if matches!(lower.as_str(), "true" | "false" | "null") {
                    error.with_hint(format!("JSON literals are lowercase: `{lower}`"))
                } else {
                    error.with_hint(format!("quote a string: `\"{w}\"`"))
                }
            } else if next.starts_with('\'') {
                error.with_hint("JSON strings use double quotes: `\"...\"`")
            } else {
                error
            }
        })
    }

    /// A JSON literal. Backtracks if none starts here.
    fn literal(&self, i: &'s str) -> Res<'s, Literal> {
        let start = self.ws(i);
        let (rest, value) = match start.chars().next() {
            Some('"') => {
                let (rest, text) = self.string(start)?;
                (rest, Value::String(text.value))
            }
            Some('[') => {
                let (rest, items) = self.literal_list(start)?;
                (
                    rest,
                    Value::Array(items.into_iter().map(|item| item.value).collect()),
                )
            }
            Some('{') => self.object(start)?,
            Some('-' | '0'..='9') => self.number(start)?,
            _ => {
                let found = [
                    ("true", Value::Bool(true)),
                    ("false", Value::Bool(false)),
                    ("null", Value::Null),
                ]
                .into_iter()
                .find_map(|(kw, value)| keyword(start, kw).map(|rest| (rest, value)));
                match found {
                    Some(found) => found,
                    None => return backtrack(start),
                }
            }
        };
        let span = self.span(start, rest);
        Ok((rest, Literal { value, span }))
    }

    /// A JSON number, decoded by serde_json so `1` is an integer and `1.0` a float.
    fn number(&self, start: &'s str) -> Res<'s, Value> {
        let (rest, text) = json_number(start)?;
        if rest.starts_with(|c: char| is_ident_char(c) || c == '.') {
            let tail = rest.trim_start_matches(|c: char| is_ident_char(c) || c == '.');
            let span = self.span(start, tail);
            let message = format!("invalid number `{}`", &self.source[span.range()]);
            return report(SpecError::new(Code::SyntaxError, span, message));
        }
        match serde_json::from_str::<Value>(text) {
            Ok(value) => Ok((rest, value)),
            Err(error) => report(SpecError::new(
                Code::SyntaxError,
                self.span(start, rest),
                format!("invalid number `{text}`: {}", json_reason(&error)),
            )),
        }
    }

    /// `[LIT, ...]`, at a `[`: the items with their spans.
    fn literal_list(&self, start: &'s str) -> Res<'s, Vec<Literal>> {
        let mut rest = &start[1..];
        let mut items = Vec::new();
        if let Some(after) = self.ws(rest).strip_prefix(']') {
            return Ok((after, items));
        }
        loop {
            let (after, item) = require(self.literal(rest), || {
                let expected = if items.is_empty() {
                    "expected a JSON literal or `]` after `[`"
                } else {
                    "expected a JSON literal after `,`"
                };
                self.syntax(rest, expected)
            })?;
            items.push(item);
            let next = self.ws(after);
            if let Some(after_comma) = next.strip_prefix(',') {
                rest = after_comma;
            } else if let Some(after_bracket) = next.strip_prefix(']') {
                return Ok((after_bracket, items));
            } else {
                return report(
                    self.syntax(after, "expected `,` or `]` in the list")
                        .with_related(self.span(start, &start[1..]), "the list opens here"),
                );
            }
        }
    }

    /// `{"key": LIT, ...}`, at a `{`.
    fn object(&self, start: &'s str) -> Res<'s, Value> {
        let mut rest = &start[1..];
        let mut map = serde_json::Map::new();
        if let Some(after) = self.ws(rest).strip_prefix('}') {
            return Ok((after, Value::Object(map)));
        }
        loop {
            let (after, key) = require(self.string(rest), || {
                self.syntax(rest, "expected a quoted key in the object")
            })?;
            let Some(after_colon) = self.ws(after).strip_prefix(':') else {
                return report(self.syntax(after, "expected `:` after the key"));
            };
            let (after, item) = self.required_literal(after_colon, ":")?;
            map.insert(key.value, item.value);
            let next = self.ws(after);
            if let Some(after_comma) = next.strip_prefix(',') {
                rest = after_comma;
            } else if let Some(after_brace) = next.strip_prefix('}') {
                return Ok((after_brace, Value::Object(map)));
            } else {
                return report(
                    self.syntax(after, "expected `,` or `}` in the object")
                        .with_related(self.span(start, &start[1..]), "the object opens here"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(
            matches!(have.tool, Some(ToolPattern::Name(ref name, _)) if name == "create_record")
        );
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
        let have = errors(
            "event e = cal x\nevent f call x\nevent = call x\nevent g = call x wher a == 1\n",
        );
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
        let ItemKind::Forbid(have) =
            only_kind(r#"forbid unknown, checking on create, retry: "blind""#)
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

        let have = errors(
            "forbid on create: \"m\"\nforbid a b on c: \"m\"\nforbid * on c\nforbid a on c:\n",
        );
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
            ("a == ok", "ok", "expected a JSON literal after `==`"),
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
        let have = error("event e = record where a == ok\n");
        assert_eq!(have.hint.as_deref(), Some("quote a string: `\"ok\"`"));
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
        assert_eq!(
            parse_path("a b"),
            Err("unexpected `b` after the path `a`".to_owned())
        );
        assert_eq!(
            parse_path("a."),
            Err("expected a field name after `.`".to_owned())
        );
        assert!(parse_path("").is_err());
        assert!(parse_path("#a").is_err());
    }

    #[test]
    fn suggestions() {
        assert_eq!(edit_distance("evnt", "event"), 1);
        assert_eq!(edit_distance("initail", "initial"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(suggest("forbit", &STATEMENT_KEYWORDS), Some("forbid"));
        assert_eq!(suggest("zzz", &STATEMENT_KEYWORDS), None);
    }
}
