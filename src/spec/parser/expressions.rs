//! Conditions: `or` over `and` over `not` over groups, `has PATH` and tests on a path;
//! the values compared (paths, `$VAR`s, literals, durations, arithmetic), provenance
//! (`VALUE in outputs of TOOL`) and `secret in VALUE`.

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::combinator::value;

use nom::bytes::complete::take_while1;

use super::{
    Fail, Parser, Res, backtrack, is_ident_char, is_tool_char, keyword, operator_keyword, report,
    require, word,
};
use crate::diagnostic::Code;
use crate::spec::SpecError;
use crate::spec::ast::{
    ArithOp, CompareOp, DurationLit, DurationUnit, Expr, Ident, JsonType, Operand, Path, Segment,
    Source, Span, ToolPattern, VarTest,
};
use crate::suggest::did_you_mean_hint;

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

impl<'s> Parser<'s> {
    /// `EXPR or EXPR ...`, the loosest level. Backtracks if there is no condition here.
    pub(super) fn or_expr(&self, i: &'s str) -> Res<'s, Expr> {
        self.chain(i, "or", Self::and_expr, Expr::Or)
    }

    fn and_expr(&self, i: &'s str) -> Res<'s, Expr> {
        self.chain(i, "and", Self::not_expr, Expr::And)
    }

    /// `OPERAND op OPERAND op ...`, grouped to the left. Backtracks if there is no
    /// first operand; after `op` one is required.
    fn chain(
        &self,
        i: &'s str,
        op: &str,
        operand: fn(&Self, &'s str) -> Res<'s, Expr>,
        join: fn(Box<Expr>, Box<Expr>) -> Expr,
    ) -> Res<'s, Expr> {
        let (mut rest, mut lhs) = operand(self, i)?;
        while let Some(after_op) = keyword(self.ws(rest), op) {
            let (after, rhs) = require(operand(self, after_op), || {
                self.syntax(after_op, format!("expected a condition after `{op}`"))
            })?;
            lhs = join(Box::new(lhs), Box::new(rhs));
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
            // `($n + 1) * 2 > 3` opens with a value, not a condition.
            match self.test(start) {
                Err(nom::Err::Error(_)) => {}
                other => return other,
            }
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
            if self.ws(after_has).starts_with('$') {
                let (rest, var) = self.variable(self.ws(after_has))?;
                let span = self.span(start, rest);
                return Ok((rest, Expr::HasVar { var, span }));
            }
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

    /// `PATH == LIT`, `PATH in [..]`, `PATH matches /re/`, `PATH is TYPE` (and the same
    /// tests of a `$VAR`), a comparison of values, or a provenance test. Backtracks if
    /// there is no value; a path with no test after it is an error (no truthiness).
    fn test(&self, start: &'s str) -> Res<'s, Expr> {
        if let Some(found) = self.secret(start)? {
            return Ok(found);
        }

        let (rest, lhs) = self.operand(start, false)?;
        let next = self.ws(rest);
        if let Ok((after_op, op)) = compare_op(next) {
            // `True`, `NULL`: meant as a literal, though it reads as a path.
            if let Some(w) = self.next_word(after_op) {
                let lower = w.to_ascii_lowercase();
                if w != lower && matches!(lower.as_str(), "true" | "false" | "null") {
                    return report(
                        self.syntax(
                            after_op,
                            format!("expected a JSON literal after `{}`", op.symbol()),
                        )
                        .with_hint(format!("JSON literals are lowercase: `{lower}`")),
                    );
                }
            }
            let (rest, rhs) = match self.operand(after_op, true) {
                Err(nom::Err::Error(_)) => {
                    // Not a value: say what a literal would have looked like.
                    let (_, _) = self.required_literal(after_op, op.symbol())?;
                    return backtrack(after_op);
                }
                other => other?,
            };
            return Ok((
                rest,
                match (lhs, rhs) {
                    (Operand::Path(path), Operand::Literal(value)) => {
                        Expr::Compare { path, op, value }
                    }
                    (lhs, rhs) => Expr::Relation { lhs, op, rhs },
                },
            ));
        }
        if let Some(after_in) = keyword(next, "in") {
            if let Some((rest, source)) = self.source(after_in)? {
                let span = Span::new(lhs.span().start, self.offset(rest));
                let value = lhs;
                return Ok((
                    rest,
                    Expr::Provenance {
                        value,
                        source,
                        span,
                    },
                ));
            }
        }
        let Some((rest, test)) = self.subject_test(next)? else {
            return match lhs {
                Operand::Path(path) => self.untested(rest, path),
                Operand::Var(var) if self.ends_condition(next) => report(
                    SpecError::new(
                        Code::BarePathCondition,
                        var.span,
                        format!(
                            "`${}` is a bare variable, and conditions have no truthiness",
                            var.name
                        ),
                    )
                    .with_hint(format!(
                        "test whether it is set with `has ${0}`, or compare it: `${0} == true`",
                        var.name
                    )),
                ),
                // A value that is not a path is tested only by comparing it.
                _ => backtrack(start),
            };
        };
        let span = Span::new(lhs.span().start, self.offset(rest));
        let expr = match (lhs, test) {
            (Operand::Path(path), VarTest::In(values)) => Expr::In { path, values, span },
            (Operand::Path(path), VarTest::Matches(regex)) => Expr::Matches { path, regex },
            (Operand::Path(path), VarTest::Is(ty)) => Expr::Is { path, ty, span },
            (Operand::Var(var), test) => Expr::VarTest { var, test, span },
            // `1 in [1]`, `$n + 1 is number`: only a path or a variable is tested so.
            _ => return backtrack(start),
        };
        Ok((rest, expr))
    }

    /// After a path or a variable: `in [..]`, `matches /re/` or `is TYPE`; `None` when
    /// none of them follows.
    fn subject_test(
        &self,
        next: &'s str,
    ) -> Result<Option<(&'s str, VarTest)>, nom::Err<Fail<'s>>> {
        if let Some(after_in) = keyword(next, "in") {
            let list = self.ws(after_in);
            if !list.starts_with('[') {
                return Err(fail(
                    self.syntax(after_in, "expected a list after `in`")
                        .with_hint("write the values as a JSON list: `in [\"a\", \"b\"]`"),
                ));
            }
            let (rest, values) = self.literal_list(list)?;
            return Ok(Some((rest, VarTest::In(values))));
        }
        if let Some(after_matches) = keyword(next, "matches") {
            let (rest, regex) = require(self.regex(after_matches), || {
                self.syntax(after_matches, "expected a regex after `matches`")
                    .with_hint("write the regex between slashes: `/^abc/`")
            })?;
            return Ok(Some((rest, VarTest::Matches(regex))));
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
                        .or_else(|| did_you_mean_hint(w, JsonType::ALL.map(JsonType::keyword)))
                });
                return Err(fail(match hint {
                    Some(hint) => error.with_hint(hint),
                    None => error,
                }));
            };
            return Ok(Some((rest, VarTest::Is(ty))));
        }
        Ok(None)
    }

    /// Whether `next` (after whitespace) ends a condition: the end, `)`, `and`, `or`.
    fn ends_condition(&self, next: &'s str) -> bool {
        next.is_empty()
            || next.starts_with(')')
            || keyword(next, "and").is_some()
            || keyword(next, "or").is_some()
    }

    /// The error for a path with no test after it.
    fn untested<T>(&self, rest: &'s str, path: Path) -> Res<'s, T> {
        let next = self.ws(rest);
        let text = path.to_string();
        if !self.ends_condition(next) {
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

    /// `secret in record` or `secret in VALUE`; `None` when `start` is not one (then
    /// `secret` is a field name: `secret == 1`, `secret in ["a"]`).
    fn secret(&self, start: &'s str) -> Result<Option<(&'s str, Expr)>, nom::Err<Fail<'s>>> {
        let Some(after_secret) = operator_keyword(start, "secret") else {
            return Ok(None);
        };
        let Some(after_in) = keyword(self.ws(after_secret), "in") else {
            return Ok(None);
        };
        let target = self.ws(after_in);
        if target.starts_with('[') {
            return Ok(None);
        }
        if let Some(rest) = operator_keyword(target, "record") {
            let span = self.span(start, rest);
            return Ok(Some((rest, Expr::Secret { target: None, span })));
        }
        let (rest, value) = require(self.operand(after_in, true), || {
            self.syntax(after_in, "expected `record` or a value after `secret in`")
        })?;
        let span = self.span(start, rest);
        Ok(Some((
            rest,
            Expr::Secret {
                target: Some(value),
                span,
            },
        )))
    }

    /// After `in`: `outputs [of TOOL]` or `messages [from ROLE]`; `None` for anything
    /// else (a list).
    fn source(&self, after_in: &'s str) -> Result<Option<(&'s str, Source)>, nom::Err<Fail<'s>>> {
        let next = self.ws(after_in);
        if let Some(rest) = keyword(next, "outputs") {
            let Some(after_of) = keyword(self.ws(rest), "of") else {
                return Ok(Some((rest, Source::Outputs(None))));
            };
            let tool_start = self.ws(after_of);
            let (rest, tool) = if tool_start.starts_with('"') {
                let (rest, glob) = self.string(tool_start)?;
                (rest, ToolPattern::Glob(glob.value, glob.span))
            } else if tool_start.starts_with('/') {
                let (rest, regex) = self.regex(tool_start)?;
                (rest, ToolPattern::Regex(regex))
            } else if let Ok((rest, name)) = take_while1::<_, _, Fail>(is_tool_char)(tool_start) {
                let span = self.span(tool_start, rest);
                (rest, ToolPattern::Name(name.to_owned(), span))
            } else {
                let error = self
                    .syntax(after_of, "expected a tool after `outputs of`")
                    .with_hint("name it, or match names with a quoted glob or a /regex/");
                return Err(nom::Err::Failure(Fail::Report(Box::new(error))));
            };
            return Ok(Some((rest, Source::Outputs(Some(tool)))));
        }
        if let Some(rest) = keyword(next, "messages") {
            let Some(after_from) = keyword(self.ws(rest), "from") else {
                return Ok(Some((rest, Source::Messages(None))));
            };
            let (rest, role) = require(self.ident_at(after_from), || {
                self.syntax(after_from, "expected a role after `messages from`")
                    .with_hint("for example `in messages from user`")
            })?;
            return Ok(Some((rest, Source::Messages(Some(role)))));
        }
        Ok(None)
    }

    fn ident_at(&self, i: &'s str) -> Res<'s, Ident> {
        let start = self.ws(i);
        let (rest, name) = word(start)?;
        let span = self.span(start, rest);
        Ok((
            rest,
            Ident {
                name: name.to_owned(),
                span,
            },
        ))
    }

    /// A value: sums of products of factors. `literal_words` says whether `true`,
    /// `false` and `null` are literals here; on the left of a comparison they are field
    /// names, as they always were. Backtracks if no value starts here.
    pub(super) fn operand(&self, i: &'s str, literal_words: bool) -> Res<'s, Operand> {
        self.arith(i, 1, literal_words)
    }

    /// Operators of precedence `level` and tighter, grouped to the left.
    fn arith(&self, i: &'s str, level: u8, literal_words: bool) -> Res<'s, Operand> {
        let (mut rest, mut lhs) = if level == 1 {
            self.arith(i, 2, literal_words)?
        } else {
            self.factor(i, literal_words)?
        };
        loop {
            let next = self.ws(rest);
            let op = match next.chars().next() {
                Some('+') => ArithOp::Add,
                Some('-') if !next.starts_with("->") => ArithOp::Sub,
                Some('*') => ArithOp::Mul,
                Some('/') => ArithOp::Div,
                _ => break,
            };
            if op.precedence() != level {
                break;
            }
            let after_op = &next[1..];
            let tighter = |at| {
                if level == 1 {
                    self.arith(at, 2, true)
                } else {
                    self.factor(at, true)
                }
            };
            let (after, rhs) = require(tighter(after_op), || {
                self.syntax(
                    after_op,
                    format!("expected a value after `{}`", op.symbol()),
                )
            })?;
            lhs = Operand::Arith {
                op,
                lhs: Box::new(lhs),
                rhs: Box::new(rhs),
            };
            rest = after;
        }
        Ok((rest, lhs))
    }

    /// `( VALUE )`, `$VAR`, a duration, a literal or a path.
    fn factor(&self, i: &'s str, literal_words: bool) -> Res<'s, Operand> {
        let start = self.ws(i);
        if let Some(after_paren) = start.strip_prefix('(') {
            // Backtracks (rather than failing) when this is a group of conditions.
            let (rest, inner) = match self.operand(after_paren, true) {
                Ok(found) => found,
                Err(nom::Err::Error(_)) => return backtrack(start),
                Err(failure) => return Err(failure),
            };
            let Some(after) = self.ws(rest).strip_prefix(')') else {
                return backtrack(start);
            };
            return Ok((
                after,
                Operand::Group(Box::new(inner), self.span(start, after)),
            ));
        }
        if start.starts_with('$') {
            let (rest, var) = self.variable(start)?;
            return Ok((rest, Operand::Var(var)));
        }
        if let Some(found) = self.duration(start) {
            return Ok(found);
        }
        let is_word_literal = ["true", "false", "null"]
            .iter()
            .any(|kw| operator_keyword(start, kw).is_some());
        if start.starts_with([
            '"', '{', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9',
        ]) || (start.starts_with('[') && literal_words)
            || (is_word_literal && literal_words)
        {
            let (rest, literal) = self.literal(start)?;
            return Ok((rest, Operand::Literal(literal)));
        }
        let (rest, path) = self.path(start)?;
        Ok((rest, Operand::Path(path)))
    }

    /// `$NAME`, at a `$`.
    pub(super) fn variable(&self, start: &'s str) -> Res<'s, Ident> {
        let after_dollar = &start[1..];
        let Ok((rest, name)) = word(after_dollar) else {
            return report(
                self.syntax(after_dollar, "expected a variable name after `$`")
                    .with_hint("variables are named like events: `$request_id`"),
            );
        };
        let span = self.span(start, rest);
        Ok((
            rest,
            Ident {
                name: name.to_owned(),
                span,
            },
        ))
    }

    /// `500ms`, `30s`, `5m`, `2h`: digits and a unit, nothing else in the word.
    fn duration(&self, start: &'s str) -> Option<(&'s str, Operand)> {
        let digits = start.len() - start.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 {
            return None;
        }
        let after_digits = &start[digits..];
        let unit = DurationUnit::ALL.into_iter().find(|unit| {
            after_digits
                .strip_prefix(unit.suffix())
                .is_some_and(|rest| !rest.starts_with(|c: char| is_ident_char(c) || c == '.'))
        })?;
        let amount = start[..digits].parse::<u64>().ok()?;
        let rest = &after_digits[unit.suffix().len()..];
        let span = self.span(start, rest);
        Some((rest, Operand::Duration(DurationLit { amount, unit, span })))
    }
}

/// A reported error, as the parser's failure.
fn fail(error: SpecError) -> nom::Err<Fail<'static>> {
    nom::Err::Failure(Fail::Report(Box::new(error)))
}
