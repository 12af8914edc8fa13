//! Literals and record paths: JSON strings, numbers, lists and objects, `/regex/flags`,
//! and paths such as `output["odd key"][0]`.

use nom::character::complete::{char, digit1, one_of};
use nom::combinator::{opt, recognize};
use nom::sequence::{pair, tuple};
use serde_json::Value;

use super::{Fail, Parser, Res, backtrack, is_ident_char, keyword, report, require, word};
use crate::diagnostic::Code;
use crate::spec::SpecError;
use crate::spec::ast::{Literal, Path, RegexLit, Segment, Span, StrLit};

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
pub(super) fn quoted_len(s: &str) -> Option<usize> {
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

/// The first `\\uXXXX` escape in the quoted `text` that is half of a surrogate pair
/// without its other half, with its offset: JSON allows the escape, but no string can
/// hold it.
fn lone_surrogate(text: &str) -> Option<(usize, &str)> {
    let unit = |at: usize| {
        let hex = text.get(at + 2..at + 6)?;
        text[at..]
            .starts_with("\\u")
            .then(|| u16::from_str_radix(hex, 16).ok())?
    };
    let mut at = 1;
    while at < text.len() {
        if !text[at..].starts_with('\\') {
            at += text[at..].chars().next().map_or(1, char::len_utf8);
            continue;
        }
        match unit(at) {
            Some(0xD800..=0xDBFF) => {
                if matches!(unit(at + 6), Some(0xDC00..=0xDFFF)) {
                    at += 12;
                    continue;
                }
                return Some((at, &text[at..at + 6]));
            }
            Some(0xDC00..=0xDFFF) => return Some((at, &text[at..at + 6])),
            Some(_) => at += 6,
            // Past the backslash and the character it escapes, whatever its length.
            None => at += 1 + text[at + 1..].chars().next().map_or(0, char::len_utf8),
        }
    }
    None
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

impl<'s> Parser<'s> {
    /// A JSON string literal. Backtracks if there is no `"`.
    pub(super) fn string(&self, i: &'s str) -> Res<'s, StrLit> {
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
            Err(_) if lone_surrogate(text).is_some() => {
                let (at, escape) = lone_surrogate(text).expect("bug: just found");
                let from = span.start + at;
                report(
                    SpecError::new(
                        Code::SyntaxError,
                        Span::new(from, from + escape.len()),
                        format!("invalid string literal: `{escape}` is a lone surrogate, which is not a character"),
                    )
                    .with_hint("write the character itself, or a `\\uD8xx` escape followed by its `\\uDCxx` pair"),
                )
            }
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
    pub(super) fn regex(&self, i: &'s str) -> Res<'s, RegexLit> {
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
    pub(super) fn path(&self, i: &'s str) -> Res<'s, Path> {
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

    /// A literal that must be here, after `after` (an operator, `:`).
    pub(super) fn required_literal(&self, i: &'s str, after: &str) -> Res<'s, Literal> {
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
    pub(super) fn literal(&self, i: &'s str) -> Res<'s, Literal> {
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
            // An integer past 64 bits would silently become an approximate float (and
            // fmt would print it as one): refuse it rather than change what was written.
            Ok(Value::Number(n)) if n.is_f64() && !text.contains(['.', 'e', 'E']) => report(
                SpecError::new(
                    Code::SyntaxError,
                    self.span(start, rest),
                    format!("integer `{text}` does not fit in 64 bits"),
                )
                .with_hint("compare such a number as a string, or write it as a float (`1.5e22`)"),
            ),
            Ok(value) => Ok((rest, value)),
            Err(error) => report(SpecError::new(
                Code::SyntaxError,
                self.span(start, rest),
                format!("invalid number `{text}`: {}", json_reason(&error)),
            )),
        }
    }

    /// `[LIT, ...]`, at a `[`: the items with their spans.
    pub(super) fn literal_list(&self, start: &'s str) -> Res<'s, Vec<Literal>> {
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
            if map.contains_key(&key.value) {
                // serde_json's map would keep the last value, and fmt would drop one.
                return report(self.syntax(
                    rest.trim_start(),
                    format!("duplicate key `{}` in the object", key.value),
                ));
            }
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
