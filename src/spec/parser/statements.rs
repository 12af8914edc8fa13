//! Statements: one per line (with its continuation lines), each starting with a keyword
//! or, for a transition, a state name.

use nom::bytes::complete::take_while1;

use super::{Fail, Parser, Res, is_tool_char, keyword, report, require, word};
use crate::diagnostic::Code;
use crate::spec::SpecError;
use crate::spec::ast::{
    Bind, EventDecl, Forbid, Ident, ItemKind, Otherwise, Pattern, PatternKind, Span, StateSet,
    ToolPattern, Transition,
};
use crate::suggest::did_you_mean_hint;

/// The statements, as written: `spec`, `about`, ..., and transitions, which start with a
/// state name.
pub(super) const STATEMENT_KEYWORDS: [&str; 11] = [
    "spec",
    "about",
    "event",
    "initial",
    "state",
    "accept",
    "hot",
    "forbid",
    "otherwise",
    "path",
    "per",
];

pub(super) const STATEMENTS_HINT: &str = "a statement is one of `spec`, `about`, `event`, `initial`, \
     `state`, `accept`, `hot`, `FROM -> TO on EVENT`, `forbid`, `otherwise`, `path` or `per`";

const PATTERN_KINDS: [(&str, PatternKind); 4] = [
    ("call", PatternKind::Call),
    ("result", PatternKind::Result),
    ("message", PatternKind::Message),
    ("record", PatternKind::Record),
];

/// What a statement parser returns: the statement, and a hint for the error if
/// something follows it on its line.
type Parsed = (ItemKind, Option<String>);

impl<'s> Parser<'s> {
    pub(super) fn item(&self, i: &'s str) -> Res<'s, Parsed> {
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
            "accept" | "hot" | "state" => {
                let (rest, states) = require(self.names(rest, "a state name"), || {
                    self.syntax(rest, format!("expected a state name after `{first}`"))
                })?;
                let hint = self
                    .next_word(rest)
                    .map(|_| "separate states with `,`".to_owned());
                let kind = match first {
                    "accept" => ItemKind::Accept(states),
                    "hot" => ItemKind::Hot(states),
                    _ => ItemKind::State(states),
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
                let hint = did_you_mean_hint(first, STATEMENT_KEYWORDS)
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
        self.separated(i, ",", Self::ident, what)
    }

    /// `ITEM sep ITEM sep ...`. Backtracks if there is no first item; after each `sep`
    /// an item is required, and `what` ("an event name") is what the error says was
    /// expected.
    fn separated<T>(
        &self,
        i: &'s str,
        sep: &str,
        item: fn(&Self, &'s str) -> Res<'s, T>,
        what: &str,
    ) -> Res<'s, Vec<T>> {
        let (mut rest, first) = item(self, i)?;
        let mut items = vec![first];
        while let Some(after_sep) = self.ws(rest).strip_prefix(sep) {
            let (after, next) = require(item(self, after_sep), || {
                self.syntax(after_sep, format!("expected {what} after `{sep}`"))
            })?;
            items.push(next);
            rest = after;
        }
        Ok((rest, items))
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
                .and_then(|w| did_you_mean_hint(w, ["reject", "ignore"]));
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
        let (mut rest, (pattern, mut hint)) = self.pattern(after_eq)?;
        let mut binds = Vec::new();
        if let Some(after_bind) = bind_keyword(self.ws(rest)) {
            let (after, parsed) = require(
                self.separated(after_bind, ",", Self::bind, "a binding"),
                || self.syntax(after_bind, "expected a binding after `bind`: `bind n = 1`"),
            )?;
            binds = parsed;
            rest = after;
            hint = None;
        }
        let decl = EventDecl {
            name,
            pattern,
            binds,
        };
        Ok((rest, (ItemKind::Event(decl), hint)))
    }

    /// `VAR = VALUE` in a `bind` list.
    fn bind(&self, i: &'s str) -> Res<'s, Bind> {
        let start = self.ws(i);
        if start.starts_with('$') {
            return report(
                self.syntax(start, "a bound variable is named without `$`")
                    .with_hint("write `bind n = 1`, and read it as `$n`"),
            );
        }
        let (rest, var) = self.ident(start)?;
        let next = self.ws(rest);
        let Some(after_eq) = next
            .strip_prefix('=')
            .filter(|after| !after.starts_with('='))
        else {
            return report(self.syntax(rest, format!("expected `=` after `bind {}`", var.name)));
        };
        let (rest, value) = require(self.operand(after_eq, true), || {
            self.syntax(after_eq, format!("expected a value for `{}`", var.name))
        })?;
        Ok((rest, Bind { var, value }))
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
            let hint = self.next_word(i).and_then(|w| did_you_mean_hint(w, kinds));
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
        let tool = if where_keyword(next).is_some() || bind_keyword(next).is_some() {
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
                    did_you_mean_hint(w, ["where"])
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
        let (rest, events) = require(
            self.separated(i, "->", Self::ident, "an event name"),
            || self.syntax(i, "expected an event name after `path`"),
        )?;
        let hint = self
            .next_word(rest)
            .map(|_| "chain events with `->`".to_owned());
        Ok((rest, (ItemKind::Path(events), hint)))
    }

    /// `per PATH, ...`, after the keyword.
    fn per(&self, i: &'s str) -> Res<'s, Parsed> {
        let (rest, paths) = require(self.separated(i, ",", Self::path, "a path"), || {
            self.syntax(i, "expected a path after `per`")
        })?;
        let hint = self
            .next_word(rest)
            .map(|_| "separate paths with `,`".to_owned());
        Ok((rest, (ItemKind::Per(paths), hint)))
    }
}

/// `bind` as the keyword that starts a binding list: followed by `NAME =` (not `==`),
/// so a tool may still be named `bind`.
fn bind_keyword(at: &str) -> Option<&str> {
    let after = at
        .strip_prefix("bind")
        .filter(|after| !after.starts_with(is_tool_char))?;
    let name = after.trim_start_matches([' ', '\t', '\r', '\n']);
    let name_len = name.len() - name.trim_start_matches(super::is_ident_char).len();
    let eq = name[name_len..].trim_start_matches([' ', '\t']);
    (name_len > 0 && eq.starts_with('=') && !eq.starts_with("=="))
        .then_some(after)
        .or_else(|| (name.starts_with('$')).then_some(after))
}
