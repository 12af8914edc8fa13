//! The syntax tree of one spec file, exactly as written.
//!
//! Every node carries a [`Span`]: byte offsets into the spec's source text. Line and
//! column are computed only when a diagnostic is rendered. The tree is plain data; the
//! analyzer (`spec::analyzer`) resolves names and builds the machine.

use serde_json::Value;

pub use crate::json::{CompareOp, JsonType, Segment};
pub use crate::machine::{Otherwise, PatternKind};
pub use crate::source::Span;

/// A name as written (a state, an event, the spec's own name) with its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A parsed spec file: its statements in source order, and its comments (kept for `fmt`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpecFile {
    pub items: Vec<Item>,
    pub comments: Vec<Comment>,
}

/// A `# ...` line comment; `text` excludes the leading `#`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comment {
    pub text: String,
    pub span: Span,
}

/// One statement. `span` covers the whole statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
}

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
    pub value: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EventDecl {
    pub name: Ident,
    pub pattern: Pattern,
}

/// `call|result|message|record [TOOL] [where EXPR]`
#[derive(Debug, Clone, PartialEq)]
pub struct Pattern {
    pub kind: PatternKind,
    pub kind_span: Span,
    pub tool: Option<ToolPattern>,
    pub guard: Option<Expr>,
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
    pub pattern: String,
    /// `true` for the `i` flag.
    pub case_insensitive: bool,
    pub span: Span,
}

/// A path into a record: a root field and then `.key`, `[index]` or `["key"]` steps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub segments: Vec<Segment>,
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
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>, Span),
    /// `PATH == literal` and friends.
    Compare {
        path: Path,
        op: CompareOp,
        value: Literal,
    },
    /// `PATH in [literal, ...]`
    In {
        path: Path,
        values: Vec<Literal>,
        span: Span,
    },
    /// `PATH matches /regex/`
    Matches {
        path: Path,
        regex: RegexLit,
    },
    /// `has PATH`: the key is present, even if its value is `null`.
    Has {
        path: Path,
        span: Span,
    },
    /// `PATH is null|bool|number|string|array|object`
    Is {
        path: Path,
        ty: JsonType,
        span: Span,
    },
    /// `( EXPR )`, kept so `fmt` can reproduce the author's grouping.
    Group(Box<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Or(a, b) | Expr::And(a, b) => a.span().to(b.span()),
            Expr::Not(_, span)
            | Expr::In { span, .. }
            | Expr::Has { span, .. }
            | Expr::Is { span, .. }
            | Expr::Group(_, span) => *span,
            Expr::Compare { path, value, .. } => path.span.to(value.span),
            Expr::Matches { path, regex } => path.span.to(regex.span),
        }
    }
}

/// A JSON literal in a guard.
#[derive(Debug, Clone, PartialEq)]
pub struct Literal {
    pub value: Value,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
    pub from: Ident,
    pub to: Ident,
    pub events: Vec<Ident>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Forbid {
    pub states: StateSet,
    pub events: Vec<Ident>,
    pub message: StrLit,
}

/// The states a `forbid` applies to.
#[derive(Debug, Clone, PartialEq)]
pub enum StateSet {
    /// `*`: every state.
    All(Span),
    Named(Vec<Ident>),
}
