//! Conditions: `or` over `and` over `not` over groups, `has PATH` and tests on a path.

use nom::branch::alt;
use nom::bytes::complete::tag;
use nom::combinator::value;

use super::{Parser, Res, keyword, operator_keyword, report, require, word};
use crate::diagnostic::Code;
use crate::spec::SpecError;
use crate::spec::ast::{CompareOp, Expr, JsonType, Path, Segment, Span};
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
                        .or_else(|| did_you_mean_hint(w, JsonType::ALL.map(JsonType::keyword)))
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
}
