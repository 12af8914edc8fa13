//! `tracegate fmt`: one canonical layout for spec files.
//!
//! The layout, in the order the language reference presents the constructs:
//!
//! 1. `spec` and `about`;
//! 2. the `event` declarations, their `=` aligned;
//! 3. `initial`, `accept` or `hot`, `otherwise`, `per`;
//! 4. transitions and `path`s, in the order written, the `->` and `on` columns aligned;
//! 5. the `forbid` rules.
//!
//! Sections are separated by one blank line; inside a section, a blank line the author
//! left between two statements is kept (runs of blank lines become one). Statements keep
//! their order within a section, and the meaning of a spec never depends on the order
//! of statements of different kinds, so moving them is safe.
//!
//! Comments stay with the statement they belong to: the comment lines above a statement
//! move with it, a comment at the end of a statement's line stays at the end of it, and
//! indented comment lines right below a statement stay below it. A statement with a
//! comment *inside* it (between its continuation lines) is kept as written, since
//! relaying it out would have to move the comment.
//!
//! A guard that does not fit in [`WIDTH`] columns moves to a continuation line that
//! starts with `where`; a chain of `and`/`or` that still does not fit puts one operand
//! per line, the operators right-aligned so the operands line up.
//!
//! Formatting is idempotent (`fmt(fmt(s)) == fmt(s)`), and the formatted text parses to
//! the same syntax tree, up to spans and the statement order above.

use std::fmt::Write as _;

use serde_json::Value;

use super::SpecError;
use super::ast::{
    Bind, Expr, Ident, Item, ItemKind, Literal, Operand, Otherwise, Pattern, RegexLit, Source,
    Span, SpecFile, StateSet, ToolPattern, VarTest,
};

/// The column limit the layout aims for. Tokens that cannot be broken (a long regex or
/// message) may still exceed it.
pub const WIDTH: usize = 100;

/// Formats a spec source; the errors are those of [`super::parse`].
pub fn format_source(source: &str) -> Result<String, Vec<SpecError>> {
    let file = super::parse(source)?;
    Ok(format_file(&file, source))
}

/// The section a statement belongs to, and its rank inside the section.
pub fn section(kind: &ItemKind) -> (u8, u8) {
    match kind {
        ItemKind::Spec(_) => (0, 0),
        ItemKind::About(_) => (0, 1),
        ItemKind::Event(_) => (1, 0),
        ItemKind::Initial(_) => (2, 0),
        ItemKind::State(_) => (2, 1),
        ItemKind::Accept(_) | ItemKind::Hot(_) => (2, 2),
        ItemKind::Otherwise(_) => (2, 3),
        ItemKind::Per(_) => (2, 4),
        ItemKind::Transition(_) | ItemKind::Path(_) => (3, 0),
        ItemKind::Forbid(_) => (4, 0),
    }
}

/// A line of the text around statements.
#[derive(Debug, Clone, PartialEq)]
enum Around {
    Blank,
    /// A comment's text after `#`.
    Comment(String),
}

/// A statement with the comments and blank lines that belong to it.
struct Placed<'f> {
    item: &'f Item,
    /// A blank line separated it (or its comments) from what came before.
    blank_before: bool,
    /// Comment lines (and at most single blank lines) above it.
    leading: Vec<Around>,
    /// The comment at the end of its last line.
    trailing: Option<String>,
    /// Indented comment lines right below it.
    after: Vec<String>,
    /// It has a comment inside, so it is kept as written.
    verbatim: bool,
}

/// Source lines, for mapping byte offsets to lines.
struct Lines<'s> {
    text: &'s str,
    starts: Vec<usize>,
}

impl<'s> Lines<'s> {
    fn new(text: &'s str) -> Lines<'s> {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        if starts.last() == Some(&text.len()) && !text.is_empty() {
            starts.pop();
        }
        Lines { text, starts }
    }

    fn count(&self) -> usize {
        self.starts.len()
    }

    /// The 0-based line holding byte `offset`.
    fn of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    fn get(&self, line: usize) -> &'s str {
        let start = self.starts[line];
        let end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        self.text[start..end].trim_end_matches(['\n', '\r'])
    }
}

/// Formats a parsed spec. `source` is the text it was parsed from (for comments and
/// blank lines).
pub fn format_file(file: &SpecFile, source: &str) -> String {
    let body_start = source.len() - source.trim_start_matches('\u{feff}').len();
    let lines = Lines::new(source);
    if source[body_start..].trim().is_empty() {
        return String::new();
    }

    // Where each statement is, in lines.
    let spans: Vec<(usize, usize)> = file
        .items
        .iter()
        .map(|item| {
            let last = item.span.end.max(item.span.start + 1) - 1;
            (lines.of(item.span.start), lines.of(last))
        })
        .collect();
    let (mut placed, own_line) = place_comments(file, source, &lines, &spans);
    let eof = place_lines_between(&mut placed, &own_line, &lines, &spans);
    let header = take_header(&mut placed);

    let mut order: Vec<usize> = (0..placed.len()).collect();
    order.sort_by_key(|&i| section(&placed[i].item.kind));

    let widths = Widths::new(file);
    let mut out = Vec::<String>::new();
    for around in &header {
        out.push(around_line(around));
    }
    let mut previous_section = None;
    for &i in &order {
        let p = &placed[i];
        let (sec, _) = section(&p.item.kind);
        // A blank line after the header, between sections, and where the author left one.
        let first = previous_section.is_none();
        if !out.is_empty() && (first || previous_section != Some(sec) || p.blank_before) {
            out.push(String::new());
        }
        previous_section = Some(sec);
        write_placed(&mut out, p, source, &widths);
    }
    for around in &eof {
        out.push(around_line(around));
    }
    while out.last().is_some_and(String::is_empty) {
        out.pop();
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

/// Each statement with the comments inside it and at the end of its line, and the
/// comments on lines of their own, by line. `spans` are the statements' first and
/// last lines.
fn place_comments<'f>(
    file: &'f SpecFile,
    source: &str,
    lines: &Lines<'_>,
    spans: &[(usize, usize)],
) -> (Vec<Placed<'f>>, Vec<Option<&'f str>>) {
    let mut placed: Vec<Placed<'_>> = file
        .items
        .iter()
        .map(|item| Placed {
            item,
            blank_before: false,
            leading: Vec::new(),
            trailing: None,
            after: Vec::new(),
            verbatim: false,
        })
        .collect();
    let mut own_line: Vec<Option<&str>> = vec![None; lines.count()];
    for comment in &file.comments {
        let line = lines.of(comment.span.start);
        let inside = file.items.iter().position(|item| {
            item.span.start < comment.span.start && comment.span.start < item.span.end
        });
        if let Some(i) = inside {
            placed[i].verbatim = true;
            continue;
        }
        let before = &source[lines.starts[line]..comment.span.start];
        if before.trim_start_matches('\u{feff}').trim().is_empty() {
            own_line[line] = Some(&comment.text);
        } else if let Some(i) = spans.iter().rposition(|&(_, end)| end == line) {
            placed[i].trailing = Some(comment.text.clone());
        }
    }
    (placed, own_line)
}

/// Places the lines between statements: indented comments right below a statement stay
/// with it; everything else leads the next statement. Returns what ends the file, after
/// the last statement.
fn place_lines_between(
    placed: &mut [Placed<'_>],
    own_line: &[Option<&str>],
    lines: &Lines<'_>,
    spans: &[(usize, usize)],
) -> Vec<Around> {
    let mut eof: Vec<Around> = Vec::new();
    let mut next_line = 0;
    for i in 0..=placed.len() {
        let until = spans.get(i).map_or(lines.count(), |&(start, _)| start);
        let mut around = Vec::new();
        let mut below_previous = i > 0;
        for (line, comment) in own_line.iter().enumerate().take(until).skip(next_line) {
            let text = lines.get(line);
            match comment {
                Some(comment) => {
                    if below_previous && text.starts_with([' ', '\t']) {
                        placed[i - 1].after.push(comment.to_string());
                    } else {
                        below_previous = false;
                        around.push(Around::Comment(comment.to_string()));
                    }
                }
                None => {
                    below_previous = false;
                    if around.last() != Some(&Around::Blank) {
                        around.push(Around::Blank);
                    }
                }
            }
        }
        let blank_before = around.first() == Some(&Around::Blank);
        if blank_before {
            around.remove(0);
        }
        match placed.get_mut(i) {
            Some(p) => {
                p.blank_before = blank_before;
                p.leading = around;
            }
            None => {
                if blank_before && !around.is_empty() {
                    eof.push(Around::Blank);
                }
                eof.extend(around);
            }
        }
        if let Some(&(_, end)) = spans.get(i) {
            next_line = end + 1;
        }
    }
    eof
}

/// The first statement's comments up to a blank line are the file's header: they stay
/// on top even if the statement moves.
fn take_header(placed: &mut [Placed<'_>]) -> Vec<Around> {
    let mut header = Vec::new();
    if let Some(first) = placed.first_mut() {
        if let Some(last_blank) = first.leading.iter().rposition(|a| *a == Around::Blank) {
            header = first.leading.drain(..=last_blank).collect();
            header.pop();
        }
    }
    header
}

/// A statement with its comments: those above it, at the end of its line and below it.
fn write_placed(out: &mut Vec<String>, p: &Placed<'_>, source: &str, widths: &Widths) {
    for around in &p.leading {
        out.push(around_line(around));
    }
    let mut statement = if p.verbatim {
        source[p.item.span.range()]
            .lines()
            .map(|line| line.trim_end().to_string())
            .collect()
    } else {
        format_item(p.item, widths)
    };
    if let (Some(comment), Some(last)) = (&p.trailing, statement.last_mut()) {
        let _ = write!(last, "  #{}", comment.trim_end());
    }
    out.append(&mut statement);
    for comment in &p.after {
        out.push(format!("    #{}", comment.trim_end()));
    }
}

fn around_line(around: &Around) -> String {
    match around {
        Around::Blank => String::new(),
        Around::Comment(text) => format!("#{}", text.trim_end()),
    }
}

/// Column widths shared by a section's statements.
struct Widths {
    event_name: usize,
    from: usize,
    to: usize,
}

impl Widths {
    fn new(file: &SpecFile) -> Widths {
        let mut widths = Widths {
            event_name: 0,
            from: 0,
            to: 0,
        };
        for item in &file.items {
            match &item.kind {
                ItemKind::Event(decl) => {
                    widths.event_name = widths.event_name.max(decl.name.name.len());
                }
                ItemKind::Transition(t) => {
                    widths.from = widths.from.max(t.from.name.len());
                    widths.to = widths.to.max(t.to.name.len());
                }
                _ => {}
            }
        }
        widths
    }
}

fn names(idents: &[Ident]) -> String {
    idents
        .iter()
        .map(|ident| ident.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A JSON value as a spec literal (JSON syntax).
pub fn literal(value: &Value) -> String {
    serde_json::to_string(value).expect("bug: a JSON value always serializes")
}

/// `/pattern/flags`, with `/` in the pattern escaped again.
pub fn regex_literal(regex: &RegexLit) -> String {
    let mut out = String::from("/");
    let mut chars = regex.pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push('\\');
                if let Some(next) = chars.next() {
                    out.push(next);
                }
            }
            '/' => out.push_str("\\/"),
            _ => out.push(c),
        }
    }
    out.push('/');
    if regex.case_insensitive {
        out.push('i');
    }
    out
}

/// The tool part of a pattern, as written.
pub fn tool_pattern(tool: &ToolPattern) -> String {
    match tool {
        ToolPattern::Name(name, _) => name.clone(),
        ToolPattern::Glob(glob, _) => literal(&Value::String(glob.clone())),
        ToolPattern::Regex(regex) => regex_literal(regex),
    }
}

/// `call create_record`, without the guard.
fn pattern_head(pattern: &Pattern) -> String {
    let mut head = pattern.kind.keyword().to_string();
    if let Some(tool) = &pattern.tool {
        head.push(' ');
        head.push_str(&tool_pattern(tool));
    }
    head
}

/// `text` followed by spaces up to `width` characters, as `{:<width$}` would write it
/// but for any width: `format!` cannot pad to 65,536 characters or more, and a name
/// may be that long.
pub(crate) fn pad(text: &str, width: usize) -> String {
    let mut padded = String::with_capacity(width.max(text.len()));
    padded.push_str(text);
    padded.extend(std::iter::repeat_n(
        ' ',
        width.saturating_sub(text.chars().count()),
    ));
    padded
}

/// One statement, as lines.
fn format_item(item: &Item, widths: &Widths) -> Vec<String> {
    let line = match &item.kind {
        ItemKind::Spec(name) => format!("spec {}", name.name),
        ItemKind::About(text) => format!("about {}", literal(&Value::String(text.value.clone()))),
        ItemKind::Event(decl) => {
            let head = format!(
                "event {} = {}",
                pad(&decl.name.name, widths.event_name),
                pattern_head(&decl.pattern),
            );
            let binds = (!decl.binds.is_empty()).then(|| binds(&decl.binds));
            let Some(guard) = &decl.pattern.guard else {
                return match binds {
                    None => vec![head],
                    Some(binds) if head.len() + 1 + binds.len() <= WIDTH => {
                        vec![format!("{head} {binds}")]
                    }
                    Some(binds) => vec![head, format!("    {binds}")],
                };
            };
            let flat = format!("{head} where {}", flat(guard));
            let whole = match &binds {
                Some(binds) => format!("{flat} {binds}"),
                None => flat.clone(),
            };
            if whole.len() <= WIDTH {
                return vec![whole];
            }
            if flat.len() <= WIDTH {
                let mut lines = vec![flat];
                lines.extend(binds.map(|binds| format!("    {binds}")));
                return lines;
            }
            // `    where ` puts the condition at column 10.
            let mut lines = vec![head];
            let mut body = layout(guard, 10, Cont::Under(10));
            body[0] = format!("    where {}", body[0]);
            lines.append(&mut body);
            lines.extend(binds.map(|binds| format!("    {binds}")));
            return lines;
        }
        ItemKind::Initial(state) => format!("initial {}", state.name),
        ItemKind::State(states) => format!("state {}", names(states)),
        ItemKind::Accept(states) => format!("accept {}", names(states)),
        ItemKind::Hot(states) => format!("hot {}", names(states)),
        ItemKind::Otherwise(Otherwise::Reject) => "otherwise reject".to_string(),
        ItemKind::Otherwise(Otherwise::Ignore) => "otherwise ignore".to_string(),
        ItemKind::Per(paths) => format!(
            "per {}",
            paths
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ItemKind::Transition(t) => format!(
            "{} -> {} on {}",
            pad(&t.from.name, widths.from),
            pad(&t.to.name, widths.to),
            names(&t.events),
        ),
        ItemKind::Path(steps) => {
            let flat = format!(
                "path {}",
                steps
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" -> ")
            );
            if flat.len() <= WIDTH {
                flat
            } else {
                let mut lines = vec![format!("path {}", steps[0].name)];
                for step in &steps[1..] {
                    let last = lines.last_mut().expect("bug: lines start non-empty");
                    if last.len() + 4 + step.name.len() <= WIDTH {
                        let _ = write!(last, " -> {}", step.name);
                    } else {
                        lines.push(format!("    -> {}", step.name));
                    }
                }
                return lines;
            }
        }
        ItemKind::Forbid(forbid) => {
            let states = match &forbid.states {
                StateSet::All(_) => "*".to_string(),
                StateSet::Named(states) => names(states),
            };
            format!(
                "forbid {states} on {}: {}",
                names(&forbid.events),
                literal(&Value::String(forbid.message.value.clone()))
            )
        }
    };
    vec![line]
}

/// `bind NAME = VALUE, ...`
fn binds(binds: &[Bind]) -> String {
    let list: Vec<String> = binds
        .iter()
        .map(|bind| format!("{} = {}", bind.var.name, operand(&bind.value)))
        .collect();
    format!("bind {}", list.join(", "))
}

/// A value, as written (groups are kept in the tree, so none are added).
pub fn operand(value: &Operand) -> String {
    match value {
        Operand::Path(path) => path.to_string(),
        Operand::Var(var) => format!("${}", var.name),
        Operand::Literal(lit) => literal(&lit.value),
        Operand::Duration(duration) => format!("{}{}", duration.amount, duration.unit.suffix()),
        Operand::Arith { op, lhs, rhs } => {
            format!("{} {} {}", operand(lhs), op.symbol(), operand(rhs))
        }
        Operand::Group(inner, _) => format!("({})", operand(inner)),
    }
}

/// A condition on one line.
pub fn flat(expr: &Expr) -> String {
    match expr {
        Expr::Relation { lhs, op, rhs } => {
            format!("{} {} {}", operand(lhs), op.symbol(), operand(rhs))
        }
        Expr::HasVar { var, .. } => format!("has ${}", var.name),
        Expr::Provenance { value, source, .. } => {
            let source = match source {
                Source::Outputs(None) => "outputs".to_string(),
                Source::Outputs(Some(tool)) => format!("outputs of {}", tool_pattern(tool)),
                Source::Messages(None) => "messages".to_string(),
                Source::Messages(Some(role)) => format!("messages from {}", role.name),
            };
            format!("{} in {source}", operand(value))
        }
        Expr::Secret { target: None, .. } => "secret in record".to_string(),
        Expr::Secret {
            target: Some(target),
            ..
        } => format!("secret in {}", operand(target)),
        Expr::Or(a, b) => format!("{} or {}", flat(a), flat(b)),
        Expr::And(a, b) => format!("{} and {}", flat(a), flat(b)),
        Expr::Not(inner, _) => format!("not {}", flat(inner)),
        Expr::Group(inner, _) => format!("({})", flat(inner)),
        Expr::Compare { path, op, value } => {
            format!("{path} {} {}", op.symbol(), literal(&value.value))
        }
        Expr::In { path, values, .. } => format!("{path} in [{}]", literal_list(values)),
        Expr::Matches { path, regex } => format!("{path} matches {}", regex_literal(regex)),
        Expr::Has { path, .. } => format!("has {path}"),
        Expr::Is { path, ty, .. } => format!("{path} is {}", ty.keyword()),
        Expr::VarTest { var, test, .. } => match test {
            VarTest::In(values) => format!("${} in [{}]", var.name, literal_list(values)),
            VarTest::Matches(regex) => format!("${} matches {}", var.name, regex_literal(regex)),
            VarTest::Is(ty) => format!("${} is {}", var.name, ty.keyword()),
        },
    }
}

fn literal_list(values: &[Literal]) -> String {
    values
        .iter()
        .map(|v| literal(&v.value))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The operands of a chain of one operator (`a or b or c`), not looking into groups.
fn chain<'e>(expr: &'e Expr, or: bool, out: &mut Vec<&'e Expr>) {
    match expr {
        Expr::Or(a, b) if or => {
            chain(a, or, out);
            chain(b, or, out);
        }
        Expr::And(a, b) if !or => {
            chain(a, or, out);
            chain(b, or, out);
        }
        other => out.push(other),
    }
}

/// Where the continuation lines of a broken `and`/`or` chain put their operator.
#[derive(Debug, Clone, Copy)]
enum Cont {
    /// Right-aligned, so the operands start at this column (`where` conditions).
    Under(usize),
    /// Starting at this column, the operand after it (inside parentheses, and for a
    /// chain nested in another without them).
    At(usize),
}

/// Lays a condition out starting at column `col`: the first line is what follows the
/// text already on the line; later lines carry their own indentation.
fn layout(expr: &Expr, col: usize, cont: Cont) -> Vec<String> {
    let one = flat(expr);
    if col + one.len() <= WIDTH {
        return vec![one];
    }
    match expr {
        Expr::Or(..) | Expr::And(..) => {
            let or = matches!(expr, Expr::Or(..));
            let op = if or { "or" } else { "and" };
            let mut operands = Vec::new();
            chain(expr, or, &mut operands);
            let (pad, operand_col) = match cont {
                Cont::Under(col) => (col.saturating_sub(op.len() + 1), col),
                Cont::At(col) => (col, col + op.len() + 1),
            };
            let mut lines = Vec::new();
            for (n, operand) in operands.iter().enumerate() {
                let at = if n == 0 { col } else { operand_col };
                // A chain of the other operator inside continues under its operand.
                let mut sub = layout(operand, at, Cont::At(at));
                if n > 0 {
                    sub[0] = format!("{}{op} {}", " ".repeat(pad), sub[0]);
                }
                lines.append(&mut sub);
            }
            lines
        }
        Expr::Not(inner, _) => {
            let mut lines = layout(inner, col + 4, Cont::At(col + 4));
            lines[0] = format!("not {}", lines[0]);
            lines
        }
        Expr::Group(inner, _) => {
            let mut lines = layout(inner, col + 1, Cont::At(col + 1));
            lines[0] = format!("({}", lines[0]);
            lines
                .last_mut()
                .expect("bug: a layout has a line")
                .push(')');
            lines
        }
        Expr::In { path, values, .. } => in_layout(format!("{path} in ["), values, col),
        Expr::VarTest {
            var,
            test: VarTest::In(values),
            ..
        } => in_layout(format!("${} in [", var.name), values, col),
        _ => vec![one],
    }
}

/// A long `in [..]` list, wrapped under its first item.
fn in_layout(head: String, values: &[Literal], col: usize) -> Vec<String> {
    let inner = col + head.len();
    let mut lines = vec![head];
    for (n, value) in values.iter().enumerate() {
        let item = literal(&value.value);
        let sep = if n + 1 < values.len() { "," } else { "]" };
        let start = if lines.len() == 1 { col } else { 0 };
        let last = lines.last_mut().expect("bug: a layout has a line");
        // Room for the item, its separator, and a closing `)` or two.
        let fits = start + last.len() + 1 + item.len() + 3 <= WIDTH;
        if n == 0 || fits {
            if n > 0 {
                last.push(' ');
            }
            let _ = write!(last, "{item}{sep}");
        } else {
            lines.push(format!("{}{item}{sep}", " ".repeat(inner)));
        }
    }
    if values.is_empty() {
        lines[0].push(']');
    }
    lines
}

/// A unified diff (3 lines of context) from `old` to `new`, as `diff -u` prints it,
/// with `name` in the `---`/`+++` headers. Empty when the texts are equal.
pub fn unified_diff(name: &str, old: &str, new: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    let ops = diff_ops(&a, &b);
    const CONTEXT: usize = 3;
    let mut out = format!("--- {name}\n+++ {name} (formatted)\n");
    // Group the edits into hunks, each with its context.
    let changed: Vec<usize> = ops
        .iter()
        .enumerate()
        .filter(|(_, op)| !matches!(op, Op::Same(..)))
        .map(|(i, _)| i)
        .collect();
    if changed.is_empty() {
        out.push_str("(only line endings or the final newline differ)\n");
    }
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (mut old_start, mut new_start) = (0, 0);
        for op in &ops[..start] {
            match op {
                Op::Same(..) => {
                    old_start += 1;
                    new_start += 1;
                }
                Op::Delete(_) => old_start += 1,
                Op::Insert(_) => new_start += 1,
            }
        }
        let old_len = ops[start..end]
            .iter()
            .filter(|op| !matches!(op, Op::Insert(_)))
            .count();
        let new_len = ops[start..end]
            .iter()
            .filter(|op| !matches!(op, Op::Delete(_)))
            .count();
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(old_start, old_len),
            range(new_start, new_len)
        );
        for op in &ops[start..end] {
            let _ = match op {
                Op::Same(line) => writeln!(out, " {line}"),
                Op::Delete(line) => writeln!(out, "-{line}"),
                Op::Insert(line) => writeln!(out, "+{line}"),
            };
        }
    }
    out
}

fn range(start: usize, len: usize) -> String {
    match len {
        0 => format!("{start},0"),
        1 => format!("{}", start + 1),
        _ => format!("{},{len}", start + 1),
    }
}

enum Op<'s> {
    Same(&'s str),
    Delete(&'s str),
    Insert(&'s str),
}

/// The edit script between two line lists, by longest common subsequence. Specs are
/// small; very large inputs fall back to "replace everything".
fn diff_ops<'s>(a: &[&'s str], b: &[&'s str]) -> Vec<Op<'s>> {
    if a.len().saturating_mul(b.len()) > 16_000_000 {
        return a
            .iter()
            .map(|l| Op::Delete(l))
            .chain(b.iter().map(|l| Op::Insert(l)))
            .collect();
    }
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![0u32; (n + 1) * (m + 1)];
    let at = |i: usize, j: usize| i * (m + 1) + j;
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[at(i, j)] = if a[i] == b[j] {
                lcs[at(i + 1, j + 1)] + 1
            } else {
                lcs[at(i + 1, j)].max(lcs[at(i, j + 1)])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut ops = Vec::new();
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push(Op::Same(a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[at(i + 1, j)] >= lcs[at(i, j + 1)]) {
            ops.push(Op::Delete(a[i]));
            i += 1;
        } else {
            ops.push(Op::Insert(b[j]));
            j += 1;
        }
    }
    ops
}

/// The spans of a syntax tree, zeroed: for comparing two trees by their content.
pub fn without_spans(file: &SpecFile) -> SpecFile {
    let mut file = file.clone();
    file.comments.clear();
    for item in &mut file.items {
        item.span = Span::default();
        strip_item(&mut item.kind);
    }
    file
}

fn strip_ident(ident: &mut Ident) {
    ident.span = Span::default();
}

fn strip_item(kind: &mut ItemKind) {
    match kind {
        ItemKind::Spec(name) | ItemKind::Initial(name) => strip_ident(name),
        ItemKind::About(text) => text.span = Span::default(),
        ItemKind::Event(decl) => {
            strip_ident(&mut decl.name);
            let pattern = &mut decl.pattern;
            pattern.span = Span::default();
            pattern.kind_span = Span::default();
            match &mut pattern.tool {
                Some(ToolPattern::Name(_, span) | ToolPattern::Glob(_, span)) => {
                    *span = Span::default()
                }
                Some(ToolPattern::Regex(regex)) => regex.span = Span::default(),
                None => {}
            }
            if let Some(guard) = &mut pattern.guard {
                strip_expr(guard);
            }
            for bind in &mut decl.binds {
                strip_ident(&mut bind.var);
                strip_operand(&mut bind.value);
            }
        }
        ItemKind::Accept(states)
        | ItemKind::Hot(states)
        | ItemKind::State(states)
        | ItemKind::Path(states) => states.iter_mut().for_each(strip_ident),
        ItemKind::Transition(t) => {
            strip_ident(&mut t.from);
            strip_ident(&mut t.to);
            t.events.iter_mut().for_each(strip_ident);
        }
        ItemKind::Forbid(forbid) => {
            match &mut forbid.states {
                StateSet::All(span) => *span = Span::default(),
                StateSet::Named(states) => states.iter_mut().for_each(strip_ident),
            }
            forbid.events.iter_mut().for_each(strip_ident);
            forbid.message.span = Span::default();
        }
        ItemKind::Otherwise(_) => {}
        ItemKind::Per(paths) => paths.iter_mut().for_each(|p| p.span = Span::default()),
    }
}

fn strip_expr(expr: &mut Expr) {
    match expr {
        Expr::Or(a, b) | Expr::And(a, b) => {
            strip_expr(a);
            strip_expr(b);
        }
        Expr::Not(inner, span) | Expr::Group(inner, span) => {
            *span = Span::default();
            strip_expr(inner);
        }
        Expr::Compare { path, value, .. } => {
            path.span = Span::default();
            value.span = Span::default();
        }
        Expr::In { path, values, span } => {
            path.span = Span::default();
            *span = Span::default();
            values.iter_mut().for_each(|v| v.span = Span::default());
        }
        Expr::Matches { path, regex } => {
            path.span = Span::default();
            regex.span = Span::default();
        }
        Expr::Has { path, span } | Expr::Is { path, span, .. } => {
            path.span = Span::default();
            *span = Span::default();
        }
        Expr::Relation { lhs, rhs, .. } => {
            strip_operand(lhs);
            strip_operand(rhs);
        }
        Expr::HasVar { var, span } => {
            strip_ident(var);
            *span = Span::default();
        }
        Expr::Provenance {
            value,
            source,
            span,
        } => {
            strip_operand(value);
            match source {
                Source::Outputs(Some(ToolPattern::Name(_, span) | ToolPattern::Glob(_, span))) => {
                    *span = Span::default()
                }
                Source::Outputs(Some(ToolPattern::Regex(regex))) => regex.span = Span::default(),
                Source::Messages(Some(role)) => strip_ident(role),
                Source::Outputs(None) | Source::Messages(None) => {}
            }
            *span = Span::default();
        }
        Expr::Secret { target, span } => {
            if let Some(target) = target {
                strip_operand(target);
            }
            *span = Span::default();
        }
        Expr::VarTest { var, test, span } => {
            strip_ident(var);
            match test {
                VarTest::In(values) => values.iter_mut().for_each(|v| v.span = Span::default()),
                VarTest::Matches(regex) => regex.span = Span::default(),
                VarTest::Is(_) => {}
            }
            *span = Span::default();
        }
    }
}

fn strip_operand(value: &mut Operand) {
    match value {
        Operand::Path(path) => path.span = Span::default(),
        Operand::Var(var) => strip_ident(var),
        Operand::Literal(lit) => lit.span = Span::default(),
        Operand::Duration(duration) => duration.span = Span::default(),
        Operand::Arith { lhs, rhs, .. } => {
            strip_operand(lhs);
            strip_operand(rhs);
        }
        Operand::Group(inner, span) => {
            *span = Span::default();
            strip_operand(inner);
        }
    }
}

/// The statements of `file` in the canonical order (stable within a section).
pub fn canonical_order(file: &SpecFile) -> SpecFile {
    let mut file = file.clone();
    file.items.sort_by_key(|item| section(&item.kind));
    file
}
