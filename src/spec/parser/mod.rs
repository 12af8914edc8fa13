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
//!
//! This file holds the entry points, the lexical helpers and the statement-level
//! recovery driver; the grammar is split by layer below it: `statements` (one per
//! line), `expressions` (conditions after `where`) and `literals` (JSON literals,
//! regexes and record paths). Each layer adds methods to the one `Parser`.
//!
//! The grammar is recursive (groups, `not`, nested JSON literals), and so is every walk
//! over the tree it builds (the analyzer, the formatter, lint, guard evaluation). Before
//! a statement is parsed, a flat scan of its text (`check_limits`) rejects nesting deeper
//! than [`MAX_NESTING`] and conditions with more than [`MAX_OPERATORS`] `and`/`or`s, so
//! no input can grow a tree deeper than a thread's stack holds.

mod expressions;
mod literals;
mod statements;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::BTreeMap;

use nom::IResult;
use nom::bytes::complete::take_while;
use nom::character::complete::satisfy;
use nom::combinator::recognize;
use nom::error::{ErrorKind, ParseError};
use nom::sequence::pair;

use self::literals::quoted_len;
use super::SpecError;
use super::ast::{Comment, Item, Path, Span, SpecFile};
use crate::diagnostic::Code;

/// The deepest nesting a statement may have: open parentheses, brackets and braces, plus
/// the `not`s in force at that point. Like serde_json's own limit for JSON, it is far
/// beyond what a person writes, and keeps every recursive walk over a condition within a
/// 2 MiB thread stack (the smallest stack tracegate runs on: rayon's worker threads).
pub const MAX_NESTING: usize = 100;

/// The most `and`/`or` operators one statement may have. A chain groups to the left, so
/// each operator is one more level of the tree: `a and b and c` is `(a and b) and c`.
pub const MAX_OPERATORS: usize = 1000;

/// Parses a whole spec file, reporting every syntax error in it.
///
/// Comments are kept in [`SpecFile::comments`] (for the formatter). Names are not
/// resolved here: an unknown state or a bad regex is the analyzer's business.
pub fn parse(source: &str) -> Result<SpecFile, Vec<SpecError>> {
    let parser = Parser {
        source,
        comments: RefCell::default(),
    };
    // A JSON file (a trace given where a spec was expected) is one error, not one for
    // each of its lines: no spec starts with `{` or `[`.
    let first = parser.ws(source.strip_prefix('\u{feff}').unwrap_or(source));
    if first.starts_with(['{', '[']) {
        let start = parser.offset(first);
        let message = format!(
            "expected a statement, found `{}`: this file is JSON, not a spec",
            &first[..1]
        );
        let hint = "a trace or transcript is given with `--traces FILE`; a spec file holds \
                    statements such as `event`, `initial` and `FROM -> TO on EVENT`";
        let span = Span::new(start, start + 1);
        return Err(vec![
            SpecError::new(Code::SyntaxError, span, message).with_hint(hint),
        ]);
    }
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

/// Why a record path given on its own (`--trace-by`) does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// The text is empty or starts a comment.
    #[error("expected a path")]
    Missing,
    /// Something follows a whole path.
    #[error("unexpected `{tail}` after the path `{path}`")]
    Trailing {
        /// What follows the path.
        tail: String,
        /// The path, as written.
        path: String,
    },
    /// A malformed path, as the spec parser describes it.
    #[error("{0}")]
    Malformed(String),
    /// The text does not start like a path.
    #[error("expected a path, like `args.request_id`")]
    NotAPath,
}

/// Parses a record path on its own (`args.request_id`, `output["odd key"][0]`), as
/// written outside a spec, e.g. on the command line. Spans are offsets into `text`.
pub fn parse_path(text: &str) -> Result<Path, PathError> {
    let parser = Parser {
        source: text,
        comments: RefCell::default(),
    };
    let start = text.trim_start_matches([' ', '\t']);
    if start.starts_with('#') {
        return Err(PathError::Missing);
    }
    match parser.path(start) {
        Ok((rest, path)) => match rest.trim() {
            "" => Ok(path),
            tail => Err(PathError::Trailing {
                tail: tail.to_string(),
                path: path.to_string(),
            }),
        },
        Err(nom::Err::Failure(Fail::Report(error)) | nom::Err::Error(Fail::Report(error))) => {
            Err(PathError::Malformed(error.message))
        }
        Err(_) => Err(PathError::NotAPath),
    }
}

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

    /// The hint for an unexpected token at `span` that starts an indented line and reads
    /// as a statement (a statement keyword, or a state followed by `->`): the indent made
    /// it part of the statement above, which is the mistake, not what follows it.
    fn indented_statement(&self, span: Span) -> Option<String> {
        let line_start = self.source[..span.start].rfind('\n').map_or(0, |n| n + 1);
        let indent = &self.source[line_start..span.start];
        if indent.is_empty() || !indent.trim_matches([' ', '\t']).is_empty() {
            return None;
        }
        let at = &self.source[span.start..];
        let (rest, first) = word(at).ok()?;
        let statement =
            statements::STATEMENT_KEYWORDS.contains(&first) || self.ws(rest).starts_with("->");
        statement.then(|| {
            format!(
                "this line is indented, so it continues the statement above; start `{first}` at the beginning of its line to make it a statement"
            )
        })
    }

    /// Rejects a statement nested deeper than [`MAX_NESTING`] or with more than
    /// [`MAX_OPERATORS`] operators, before the recursive parser sees it. A flat scan:
    /// strings, regexes and comments are skipped as the parser reads them (neither can
    /// span lines), and a `not` counts until the `and`/`or` or the closing bracket that
    /// ends its operand.
    fn check_limits(&self, text: &'s str) -> Result<(), SpecError> {
        let bytes = text.as_bytes();
        // One frame per open bracket: where it opened and the `not`s in force inside it.
        let mut frames: Vec<(usize, usize)> = Vec::new();
        let mut outer_nots = 0;
        let mut depth = 0;
        let mut operators = 0;
        let mut n = 0;
        let too_deep = |at: usize, len: usize| {
            SpecError::new(
                Code::SyntaxError,
                Span::new(self.offset(text) + at, self.offset(text) + at + len),
                format!(
                    "this is nested more than {MAX_NESTING} levels deep (parentheses, brackets, braces and `not`s)"
                ),
            )
            .with_hint("simplify the condition, or split it across several events")
        };
        while let Some(&byte) = bytes.get(n) {
            match byte {
                b'"' => {
                    n += 1;
                    while let Some(&byte) = bytes.get(n) {
                        match byte {
                            b'"' | b'\n' => break,
                            b'\\' => n += 2,
                            _ => n += 1,
                        }
                    }
                    n += 1;
                }
                b'#' => n = text[n..].find('\n').map_or(bytes.len(), |end| n + end),
                // A regex starts where a tool name or an operand may: after a byte that
                // cannot be part of a tool name (`mcp/tool` is a name).
                b'/' if n == 0 || !is_tool_char(char::from(bytes[n - 1])) => {
                    n += 1;
                    while let Some(&byte) = bytes.get(n) {
                        match byte {
                            b'/' | b'\n' => break,
                            b'\\' => n += 2,
                            _ => n += 1,
                        }
                    }
                    n += 1;
                }
                b'(' | b'[' | b'{' => {
                    frames.push((n, 0));
                    depth += 1;
                    if depth > MAX_NESTING {
                        return Err(too_deep(n, 1));
                    }
                    n += 1;
                }
                b')' | b']' | b'}' => {
                    if let Some((_, nots)) = frames.pop() {
                        depth -= 1 + nots;
                    }
                    n += 1;
                }
                _ if is_ident_start(char::from(byte))
                    && (n == 0 || !is_ident_char(char::from(bytes[n - 1]))) =>
                {
                    let rest = &text[n..];
                    let len = rest.len() - rest.trim_start_matches(is_ident_char).len();
                    let nots = match frames.last_mut() {
                        Some((_, nots)) => nots,
                        None => &mut outer_nots,
                    };
                    match &rest[..len] {
                        "not" if operator_keyword(rest, "not").is_some() => {
                            *nots += 1;
                            depth += 1;
                            if depth > MAX_NESTING {
                                return Err(too_deep(n, len));
                            }
                        }
                        "and" | "or" => {
                            depth -= *nots;
                            *nots = 0;
                            operators += 1;
                            if operators > MAX_OPERATORS {
                                let start = self.offset(text) + n;
                                return Err(SpecError::new(
                                    Code::SyntaxError,
                                    Span::new(start, start + len),
                                    format!(
                                        "this condition has more than {MAX_OPERATORS} `and`/`or` operators"
                                    ),
                                )
                                .with_hint("split it across several events, or match a list with `in [..]`"));
                            }
                        }
                        _ => {}
                    }
                    n += len;
                }
                _ => n += 1,
            }
        }
        Ok(())
    }

    fn statement(&self, text: &'s str) -> Result<Item, SpecError> {
        self.check_limits(text)?;
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
                Err(match self.indented_statement(span).or(hint) {
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
}
