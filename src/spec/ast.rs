//! The syntax tree of one spec file, exactly as written.
//!
//! Every node carries a [`Span`]: byte offsets into the spec's source text. Line and
//! column are computed only when a diagnostic is rendered. The tree is plain data; the
//! analyzer (`spec::analyzer`) resolves names and builds the machine.

use serde_json::Value;

pub use crate::eval::{ArithOp, DurationUnit};
pub use crate::json::{CompareOp, JsonType, Segment};
pub use crate::machine::{Otherwise, PatternKind};
pub use crate::source::Span;

/// A name as written (a state, an event, the spec's own name) with its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    /// The name.
    pub name: String,
    /// Where it is written.
    pub span: Span,
}

/// A parsed spec file: its statements in source order, and its comments (kept for `fmt`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpecFile {
    /// The statements, in source order.
    pub items: Vec<Item>,
    /// The comments, in source order.
    pub comments: Vec<Comment>,
}

/// A `# ...` line comment; `text` excludes the leading `#`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    /// The comment's text.
    pub text: String,
    /// Where it is.
    pub span: Span,
}

/// One statement. `span` covers the whole statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// What statement it is.
    pub kind: ItemKind,
    /// The whole statement.
    pub span: Span,
}

/// What a statement says.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemKind {
    /// `spec NAME`
    Spec(Ident),
    /// `about "..."`
    About(StrLit),
    /// `event NAME = PATTERN`
    Event(EventDecl),
    /// `initial STATE`
    Initial(Ident),
    /// `state STATE, ...`: states declared on purpose (see the analyzer's
    /// misspelled-state rule).
    State(Vec<Ident>),
    /// `accept STATE, ...`
    Accept(Vec<Ident>),
    /// `hot STATE, ...`
    Hot(Vec<Ident>),
    /// `FROM -> TO on EVENT, ...`
    Transition(Transition),
    /// `forbid STATES on EVENT, ...: "message"`
    Forbid(Forbid),
    /// `otherwise reject|ignore`
    Otherwise(Otherwise),
    /// `path E1 -> E2 -> ...`
    Path(Vec<Ident>),
    /// `per PATH, ...`
    Per(Vec<Path>),
}

/// A string literal: its decoded value and the span of the quoted source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrLit {
    /// The decoded value.
    pub value: String,
    /// The quoted source.
    pub span: Span,
}

/// `event NAME = PATTERN [bind VAR = VALUE, ...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct EventDecl {
    /// The event's name.
    pub name: Ident,
    /// Which records it is.
    pub pattern: Pattern,
    /// The instance variables set when the event's move is taken, in order.
    pub binds: Vec<Bind>,
}

/// `VAR = VALUE` after `bind`: `name` is written without its `$`.
#[derive(Debug, Clone, PartialEq)]
pub struct Bind {
    /// The variable set.
    pub var: Ident,
    /// The value it takes, evaluated on the record with the instance's variables.
    pub value: Operand,
}

/// `call|result|message|record [TOOL] [where EXPR]`
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    /// `call`, `result`, `message` or `record`.
    pub kind: PatternKind,
    /// Where the kind keyword is.
    pub kind_span: Span,
    /// The tool the record must name, if given.
    pub tool: Option<ToolPattern>,
    /// The `where` condition, if given.
    pub guard: Option<Expr>,
    /// The whole pattern.
    pub span: Span,
}

/// How an event names its tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolPattern {
    /// `create_record`
    Name(String, Span),
    /// `"create_*"`: `*` is any run of characters, `?` any one character.
    Glob(String, Span),
    /// `/^create_/` (flags after the closing slash: `i`).
    Regex(RegexLit),
}

impl ToolPattern {
    /// Where the tool is written.
    pub fn span(&self) -> Span {
        match self {
            ToolPattern::Name(_, span) | ToolPattern::Glob(_, span) => *span,
            ToolPattern::Regex(re) => re.span,
        }
    }
}

/// `/pattern/flags`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexLit {
    /// The pattern between the slashes.
    pub pattern: String,
    /// `true` for the `i` flag.
    pub case_insensitive: bool,
    /// Where the literal is.
    pub span: Span,
}

/// A path into a record: a root field and then `.key`, `[index]` or `["key"]` steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    /// The steps, the root field first.
    pub segments: Vec<Segment>,
    /// Where the path is written.
    pub span: Span,
}

impl std::fmt::Display for Path {
    /// The canonical spelling: `output.items[0]["odd key"]`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, segment) in self.segments.iter().enumerate() {
            match segment {
                Segment::Key(key) if is_plain_key(key) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    f.write_str(key)?;
                }
                Segment::Key(key) => {
                    write!(f, "[{}]", Value::String(key.clone()))?;
                }
                Segment::Index(index) => write!(f, "[{index}]")?,
            }
        }
        Ok(())
    }
}

/// Whether `key` can be written as `.key` rather than `["key"]`.
pub fn is_plain_key(key: &str) -> bool {
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A guard expression. There is no truthiness: every leaf is an explicit test.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// `A or B`.
    Or(Box<Expr>, Box<Expr>),
    /// `A and B`.
    And(Box<Expr>, Box<Expr>),
    /// `not A`; the span covers the whole test.
    Not(Box<Expr>, Span),
    /// `PATH == literal` and friends.
    Compare {
        /// The path tested.
        path: Path,
        /// The comparison.
        op: CompareOp,
        /// The literal compared with.
        value: Literal,
    },
    /// `PATH in [literal, ...]`
    In {
        /// The path tested.
        path: Path,
        /// The literals.
        values: Vec<Literal>,
        /// The whole test.
        span: Span,
    },
    /// `PATH matches /regex/`
    Matches {
        /// The path tested.
        path: Path,
        /// The regex.
        regex: RegexLit,
    },
    /// `has PATH`: the key is present, even if its value is `null`.
    Has {
        /// The path tested.
        path: Path,
        /// The whole test.
        span: Span,
    },
    /// `PATH is null|bool|number|string|array|object`
    Is {
        /// The path tested.
        path: Path,
        /// The type it must have.
        ty: JsonType,
        /// The whole test.
        span: Span,
    },
    /// `( EXPR )`, kept so `fmt` can reproduce the author's grouping.
    Group(Box<Expr>, Span),
    /// A comparison that is not `PATH op LITERAL`: a variable, a second path,
    /// arithmetic or a duration on either side (`output.id == args.id`, `$n < 3`).
    Relation {
        /// The left side.
        lhs: Operand,
        /// The comparison.
        op: CompareOp,
        /// The right side.
        rhs: Operand,
    },
    /// `has $VAR`: the variable is set.
    HasVar {
        /// The variable (its name without `$`).
        var: Ident,
        /// The whole test.
        span: Span,
    },
    /// `VALUE in outputs [of TOOL]` or `VALUE in messages [from ROLE]`.
    Provenance {
        /// The value looked for.
        value: Operand,
        /// Where it must have been seen.
        source: Source,
        /// The whole test.
        span: Span,
    },
    /// `secret in VALUE`, or `secret in record` (`target` is `None`).
    Secret {
        /// The value searched for a credential; `None` for the whole record.
        target: Option<Operand>,
        /// The whole test.
        span: Span,
    },
    /// `$VAR in [..]`, `$VAR matches /re/`, `$VAR is TYPE`: a test of a variable's
    /// value, as the same test of a path (an unset variable is a missing path).
    VarTest {
        /// The variable tested (its name without `$`).
        var: Ident,
        /// The test.
        test: VarTest,
        /// The whole test.
        span: Span,
    },
}

/// What a [`Expr::VarTest`] asks of the variable's value.
#[derive(Debug, Clone, PartialEq)]
pub enum VarTest {
    /// `in [literal, ...]`
    In(Vec<Literal>),
    /// `matches /regex/`
    Matches(RegexLit),
    /// `is null|bool|number|string|array|object`
    Is(JsonType),
}

/// Where a provenance test looks for a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// `outputs` (any tool) or `outputs of TOOL`.
    Outputs(Option<ToolPattern>),
    /// `messages` (any role) or `messages from ROLE`.
    Messages(Option<Ident>),
}

/// A value in a comparison, a provenance test or a `bind`.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A path into the record.
    Path(Path),
    /// `$NAME`: an instance variable (`name` without `$`; the span includes it).
    Var(Ident),
    /// A JSON literal.
    Literal(Literal),
    /// `500ms`, `30s`, `5m`, `2h`.
    Duration(DurationLit),
    /// `A + B`, `A - B`, `A * B`, `A / B`.
    Arith {
        /// The operator.
        op: ArithOp,
        /// The left operand.
        lhs: Box<Operand>,
        /// The right operand.
        rhs: Box<Operand>,
    },
    /// `( VALUE )`, kept so `fmt` can reproduce the author's grouping.
    Group(Box<Operand>, Span),
}

impl Operand {
    /// Where the operand is written.
    pub fn span(&self) -> Span {
        match self {
            Operand::Path(path) => path.span,
            Operand::Var(var) => var.span,
            Operand::Literal(literal) => literal.span,
            Operand::Duration(duration) => duration.span,
            Operand::Arith { lhs, rhs, .. } => lhs.span().to(rhs.span()),
            Operand::Group(_, span) => *span,
        }
    }

    /// Calls `found` with every variable the operand reads.
    pub fn each_var<'a>(&'a self, found: &mut impl FnMut(&'a Ident)) {
        match self {
            Operand::Var(var) => found(var),
            Operand::Arith { lhs, rhs, .. } => {
                lhs.each_var(found);
                rhs.each_var(found);
            }
            Operand::Group(inner, _) => inner.each_var(found),
            Operand::Path(_) | Operand::Literal(_) | Operand::Duration(_) => {}
        }
    }
}

/// A duration literal: an integer and a unit, kept as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationLit {
    /// The amount.
    pub amount: u64,
    /// The unit.
    pub unit: DurationUnit,
    /// Where it is written.
    pub span: Span,
}

impl Expr {
    /// Calls `found` with every variable the expression reads, and whether it is read
    /// only by `has $VAR` (which asks whether it is set, so may run before it is).
    pub fn each_var<'a>(&'a self, found: &mut impl FnMut(&'a Ident, bool)) {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) => {
                a.each_var(found);
                b.each_var(found);
            }
            Expr::Not(inner, _) | Expr::Group(inner, _) => inner.each_var(found),
            Expr::Relation { lhs, rhs, .. } => {
                lhs.each_var(&mut |var| found(var, false));
                rhs.each_var(&mut |var| found(var, false));
            }
            Expr::HasVar { var, .. } => found(var, true),
            Expr::VarTest { var, .. } => found(var, false),
            Expr::Provenance { value, .. } => value.each_var(&mut |var| found(var, false)),
            Expr::Secret { target, .. } => {
                if let Some(target) = target {
                    target.each_var(&mut |var| found(var, false));
                }
            }
            Expr::Compare { .. }
            | Expr::In { .. }
            | Expr::Matches { .. }
            | Expr::Has { .. }
            | Expr::Is { .. } => {}
        }
    }

    /// Whether the expression uses a form that reads more than the record itself:
    /// a variable or a provenance test.
    pub fn reads_beyond_record(&self) -> bool {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) => a.reads_beyond_record() || b.reads_beyond_record(),
            Expr::Not(inner, _) | Expr::Group(inner, _) => inner.reads_beyond_record(),
            Expr::Provenance { .. } | Expr::HasVar { .. } => true,
            _ => {
                let mut any = false;
                self.each_var(&mut |_, _| any = true);
                any
            }
        }
    }
}

impl Expr {
    /// Where the expression is written.
    pub fn span(&self) -> Span {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) => a.span().to(b.span()),
            Expr::Not(_, span)
            | Expr::In { span, .. }
            | Expr::Has { span, .. }
            | Expr::Is { span, .. }
            | Expr::Group(_, span)
            | Expr::HasVar { span, .. }
            | Expr::Provenance { span, .. }
            | Expr::Secret { span, .. }
            | Expr::VarTest { span, .. } => *span,
            Expr::Relation { lhs, rhs, .. } => lhs.span().to(rhs.span()),
            Expr::Compare { path, value, .. } => path.span.to(value.span),
            Expr::Matches { path, regex } => path.span.to(regex.span),
        }
    }
}

/// A JSON literal in a guard.
#[derive(Debug, Clone, PartialEq)]
pub struct Literal {
    /// The literal's value.
    pub value: Value,
    /// Where it is written.
    pub span: Span,
}

/// `FROM -> TO on EVENT, ...`.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    /// The state it leaves.
    pub from: Ident,
    /// The state it enters.
    pub to: Ident,
    /// The events that take it.
    pub events: Vec<Ident>,
}

/// `forbid STATES on EVENT, ...: "message"`.
#[derive(Debug, Clone, PartialEq)]
pub struct Forbid {
    /// The states it applies to.
    pub states: StateSet,
    /// The events it forbids.
    pub events: Vec<Ident>,
    /// What a reviewer reads when it fires.
    pub message: StrLit,
}

/// The states a `forbid` applies to.
#[derive(Debug, Clone, PartialEq)]
pub enum StateSet {
    /// `*`: every state.
    All(Span),
    /// The states named.
    Named(Vec<Ident>),
}
