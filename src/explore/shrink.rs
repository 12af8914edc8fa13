//! Shrinking: a failing trace cut down to the smallest trace that still yields the
//! same violation (the same code, at the same rule of the same spec).
//!
//! A native trace is cut line by line. A trace in another format is cut element by
//! element: whole messages, items, steps, spans or JSON-RPC messages are removed from
//! the file and the rest of its text is kept as it is, so what is left is a file of the
//! same format that the same reader reads ([`shrink_file`]). Only a file with no element
//! that can go on its own (a document that is one message, a search tree) is shrunk as
//! its normalized records, written as native JSONL.
//!
//! Lines or elements are grouped into units — a call with its result(s), or one other
//! line or element — so a call never loses its reply (which would change its meaning:
//! the checker would give it a `missing` result); an element that holds several calls
//! (an assistant message with parallel tool calls) goes with all their results. Two
//! cheap cuts come first: the units that no instance of the violated spec saw, then
//! everything after the violation. Then ddmin (Zeller and Hildebrandt's delta
//! debugging) removes units until no single unit can go. A candidate is kept only when
//! the real checker, reading it as the input was read, still reports the target
//! violation and reports nothing the original did not.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashSet;
use serde_json::Value;

use crate::check::{CheckOptions, Observation, Outcome, check_input, check_reader};
use crate::diagnostic::{Code, Diagnostic};
use crate::machine::Machine;
use crate::spec::ast::{Segment, Span};
use crate::trace::adapters::{self, Entry, InputOptions, Piece, Reading};
use crate::trace::input::TraceInput;
use crate::trace::{Kind, Location, Record, native};

/// Which violation to keep, and how to read the trace.
#[derive(Debug, Clone, Default)]
pub struct ShrinkOptions {
    /// How the checker reads and checks each candidate trace.
    pub check: CheckOptions,
    /// Keep the violation with this code (the first one, if several).
    pub code: Option<Code>,
    /// Keep the n-th violation (0-based) among those `code` selects, in report order.
    pub index: usize,
}

/// The smallest trace found.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// The shrunk trace file, as [`Shrunk::written`] says.
    pub text: Vec<u8>,
    /// What the file holds.
    pub written: Written,
    /// Records in the input and in the result.
    pub before: usize,
    /// Records in the result.
    pub after: usize,
    /// The input's size, in bytes.
    pub bytes_before: usize,
    /// The violation as the checker reports it on the shrunk trace.
    pub violation: Diagnostic,
    /// How many candidate traces were checked.
    pub tests: usize,
}

/// What a shrunk trace file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    /// The kept lines of a native JSONL input, unchanged and in order, each ending in
    /// `\n`.
    Lines,
    /// The input in its own format (these, as detected), without the elements that were
    /// removed; the rest of its text is unchanged.
    Elements(Vec<adapters::Format>),
    /// The normalized records of an input with no element that can be removed on its
    /// own, as native JSONL; `left_out` elements of the input were not records, and are
    /// left out.
    Records {
        /// Elements of the input that were not records.
        left_out: usize,
    },
}

impl Shrunk {
    /// `after` as a percentage of `before`.
    pub fn ratio(&self) -> f64 {
        if self.before == 0 {
            100.0
        } else {
            self.after as f64 * 100.0 / self.before as f64
        }
    }
}

/// Why a trace cannot be shrunk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShrinkError {
    /// The checker reports nothing on the trace.
    #[error("the trace yields no violation; there is nothing to shrink")]
    NoViolation,
    /// The checker reports no violation with the code asked for.
    #[error("the trace yields no `{0}` violation")]
    NoSuchCode(Code),
    /// Fewer violations than the index asked for.
    #[error("the trace yields {found} matching violations; there is no violation number {wanted}")]
    NoSuchViolation {
        /// How many violations match.
        found: usize,
        /// The index asked for (0-based).
        wanted: usize,
    },
}

/// What makes two findings the same for shrinking: code, spec and rule.
type Identity = (Code, String, Span);

fn identity(diagnostic: &Diagnostic) -> Identity {
    match &diagnostic.spec {
        Some(site) => (diagnostic.code, site.spec.clone(), site.span),
        None => (diagnostic.code, String::new(), Span::default()),
    }
}

/// The violation to keep, and what a candidate may report.
struct Goal<'o> {
    target: &'o Diagnostic,
    id: Identity,
    /// Everything the original reports: a candidate may report nothing else.
    known: BTreeSet<Identity>,
    /// The index of the violated spec.
    spec: Option<usize>,
}

impl<'o> Goal<'o> {
    fn new(
        specs: &[Machine],
        original: &'o Outcome,
        options: &ShrinkOptions,
    ) -> Result<Goal<'o>, ShrinkError> {
        let violations: Vec<&Diagnostic> = original
            .diagnostics
            .iter()
            .filter(|d| d.is_violation())
            .filter(|d| options.code.is_none_or(|code| d.code == code))
            .collect();
        let Some(&target) = violations.get(options.index) else {
            return Err(match (options.code, violations.len()) {
                (None, 0) => ShrinkError::NoViolation,
                (Some(code), 0) => ShrinkError::NoSuchCode(code),
                (_, found) => ShrinkError::NoSuchViolation {
                    found,
                    wanted: options.index + 1,
                },
            });
        };
        let spec = specs
            .iter()
            .position(|m| Some(m.name.as_str()) == target.spec.as_ref().map(|s| s.spec.as_str()));
        Ok(Goal {
            target,
            id: identity(target),
            known: original.diagnostics.iter().map(identity).collect(),
            spec,
        })
    }

    /// Whether a candidate's outcome still shows the violation, and nothing new.
    fn met(&self, outcome: &Outcome) -> bool {
        let has_target = outcome.diagnostics.iter().any(|d| identity(d) == self.id);
        let nothing_new = outcome
            .diagnostics
            .iter()
            .all(|d| self.known.contains(&identity(d)));
        has_target && nothing_new
    }

    /// The violation as the checker reports it in `outcome`, which met the goal.
    fn found(&self, outcome: Outcome) -> Diagnostic {
        outcome
            .diagnostics
            .into_iter()
            .find(|d| identity(d) == self.id)
            .expect("bug: the test keeps the target violation")
    }
}

/// Cuts the units `0..count` down: first those no instance of the violated spec saw
/// (`seen`, when the violation has a spec), then those after the violation (`before`
/// keeps a unit), then ddmin. `test` checks a candidate and gives its outcome when it
/// meets the goal; the whole set must. Returns the kept units and their outcome.
fn reduce(
    count: usize,
    seen: Option<&dyn Fn(usize) -> bool>,
    before: &dyn Fn(usize) -> bool,
    test: &mut dyn FnMut(&[usize]) -> Option<Outcome>,
) -> (Vec<usize>, Outcome) {
    let mut kept: Vec<usize> = (0..count).collect();
    // Cut 1: the units no instance of the violated spec saw.
    if let Some(seen) = seen {
        let relevant: Vec<usize> = kept.iter().copied().filter(|&u| seen(u)).collect();
        if relevant.len() < kept.len() && test(&relevant).is_some() {
            kept = relevant;
        }
    }
    // Cut 2: everything after the violation's record.
    let early: Vec<usize> = kept.iter().copied().filter(|&u| before(u)).collect();
    if early.len() < kept.len() && test(&early).is_some() {
        kept = early;
    }
    let kept = ddmin(kept, &mut |candidate| test(candidate).is_some());
    let outcome = test(&kept).expect("bug: ddmin keeps a failing subset");
    (kept, outcome)
}

/// Shrinks the native JSONL trace `input` against `specs`, keeping one violation.
pub fn shrink(
    specs: &[Machine],
    input: &[u8],
    options: &ShrinkOptions,
) -> Result<Shrunk, ShrinkError> {
    let lines = split_lines(input);
    let file: Arc<Path> = Arc::from(Path::new("shrink.jsonl"));

    // The original verdict, and which lines any instance of each spec saw.
    let mut seen_lines: Vec<FxHashSet<u64>> = specs.iter().map(|_| FxHashSet::default()).collect();
    let original = {
        let seen = &mut seen_lines;
        let observer = Box::new(move |o: &Observation<'_>| {
            seen[o.spec].insert(o.loc.line);
        });
        check_input(
            specs,
            file.clone(),
            TraceInput::native(input, options.check.max_line_bytes),
            &options.check,
            Some(observer),
        )
    };
    let goal = Goal::new(specs, &original, options)?;

    let units = group_units(&lines, &options.check);
    let mut tests = 0;
    let mut test = |kept: &[usize]| -> Option<Outcome> {
        tests += 1;
        let text = assemble(&lines, &units, kept);
        let outcome = check_reader(specs, file.clone(), text.as_slice(), &options.check);
        goal.met(&outcome).then_some(outcome)
    };
    let seen = goal.spec.map(|spec| {
        let (seen, units, lines) = (&seen_lines[spec], &units, &lines);
        move |u: usize| units[u].iter().any(|&l| seen.contains(&lines[l].number))
    });
    let at = goal.target.trace.as_ref().map_or(u64::MAX, |t| t.loc.line);
    let before = |u: usize| units[u].iter().any(|&l| lines[l].number <= at);
    let (kept, outcome) = reduce(
        units.len(),
        seen.as_ref().map(|f| f as &dyn Fn(usize) -> bool),
        &before,
        &mut test,
    );
    let violation = goal.found(outcome);
    let text = assemble(&lines, &units, &kept);
    Ok(Shrunk {
        before: lines.len(),
        after: kept.iter().map(|&u| units[u].len()).sum(),
        bytes_before: input.len(),
        text,
        written: Written::Lines,
        violation,
        tests,
    })
}

/// Shrinks a trace file in any format tracegate reads, `text` being its content and
/// `input` how to read it (`--format`, `--select`), keeping one violation. A native
/// trace is shrunk by [`shrink`]; any other is cut element by element and written in
/// its own format (see [`Written`]).
pub fn shrink_file(
    specs: &[Machine],
    text: &[u8],
    input: &InputOptions,
    options: &ShrinkOptions,
) -> Result<Shrunk, ShrinkError> {
    match TraceInput::from_bytes(text, input, options.check.max_line_bytes).into_reading() {
        None => shrink(specs, text, options),
        Some(reading) if !reading.pieces.is_empty() => {
            shrink_elements(specs, text, reading, input, options)
        }
        Some(reading) => shrink_records(specs, reading, options),
    }
}

/// Shrinks a file in another format than native by removing whole elements.
fn shrink_elements(
    specs: &[Machine],
    text: &[u8],
    mut reading: Reading,
    input: &InputOptions,
    options: &ShrinkOptions,
) -> Result<Shrunk, ShrinkError> {
    let file: Arc<Path> = Arc::from(Path::new("shrink.json"));
    let pieces = std::mem::take(&mut reading.pieces);
    let arrays = std::mem::take(&mut reading.arrays);
    let layout = reading.detected.layout;
    let formats = reading.detected.formats.clone();
    let units = element_units(&reading, &pieces, &options.check);

    // The original verdict, and which pieces any instance of each spec saw.
    let mut seen_pieces: Vec<FxHashSet<usize>> =
        specs.iter().map(|_| FxHashSet::default()).collect();
    let original = {
        let seen = &mut seen_pieces;
        let pieces = &pieces;
        let observer = Box::new(move |o: &Observation<'_>| {
            if let Some(piece) = piece_at(pieces, o.loc.offset) {
                seen[o.spec].insert(piece);
            }
        });
        check_input(
            specs,
            file.clone(),
            TraceInput::read(reading),
            &options.check,
            Some(observer),
        )
    };
    let goal = Goal::new(specs, &original, options)?;

    let candidate = |kept: &[usize]| {
        let mut dropped = vec![true; pieces.len()];
        for &u in kept {
            for &p in &units[u] {
                dropped[p] = false;
            }
        }
        cut(text, &pieces, &arrays, &dropped)
    };
    let mut tests = 0;
    let mut test = |kept: &[usize]| -> Option<Outcome> {
        tests += 1;
        // Read as `check` reads the file; a cut that makes it read as another layout or
        // format is not the same file with fewer elements.
        let candidate = candidate(kept);
        let opened = TraceInput::from_bytes(&candidate, input, options.check.max_line_bytes);
        let reading = opened.into_reading()?;
        if reading.detected.layout != layout || reading.detected.formats != formats {
            return None;
        }
        let outcome = check_input(
            specs,
            file.clone(),
            TraceInput::read(reading),
            &options.check,
            None,
        );
        goal.met(&outcome).then_some(outcome)
    };
    let seen = goal.spec.map(|spec| {
        let (seen, units) = (&seen_pieces[spec], &units);
        move |u: usize| units[u].iter().any(|p| seen.contains(p))
    });
    let at = goal
        .target
        .trace
        .as_ref()
        .map_or(u64::MAX, |t| t.loc.offset);
    let before = |u: usize| units[u].iter().any(|&p| pieces[p].bytes.start <= at);
    let (kept, outcome) = reduce(
        units.len(),
        seen.as_ref().map(|f| f as &dyn Fn(usize) -> bool),
        &before,
        &mut test,
    );
    let after = outcome.records as usize;
    let violation = goal.found(outcome);
    Ok(Shrunk {
        text: candidate(&kept),
        written: Written::Elements(formats),
        before: original.records as usize,
        after,
        bytes_before: text.len(),
        violation,
        tests,
    })
}

/// Shrinks a file whose elements cannot be removed one by one as its normalized
/// records, one native JSONL line each (with its `trace` when the file holds several).
fn shrink_records(
    specs: &[Machine],
    reading: Reading,
    options: &ShrinkOptions,
) -> Result<Shrunk, ShrinkError> {
    let mut text = Vec::new();
    let mut left_out = 0;
    for entry in reading.entries {
        match entry {
            Entry::Record(record) => {
                let fields = record.fields.to_map();
                text.extend_from_slice(super::emit::native_line(&fields).as_bytes());
            }
            Entry::Problem(_) => left_out += 1,
        }
    }
    let mut options = options.clone();
    if options.check.trace_by.is_none() && reading.traces > 1 {
        options.check.trace_by = Some(vec![Segment::Key("trace".into())]);
    }
    let mut shrunk = shrink(specs, &text, &options)?;
    shrunk.written = Written::Records { left_out };
    Ok(shrunk)
}

/// The piece that holds the byte at `offset`.
fn piece_at(pieces: &[Piece], offset: u64) -> Option<usize> {
    let after = pieces.partition_point(|piece| piece.bytes.start <= offset);
    let index = after.checked_sub(1)?;
    (offset < pieces[index].bytes.end).then_some(index)
}

/// Groups pieces into units: the pieces of a call and of the results that answer it go
/// together (all the calls of one piece, with all their results); any other piece is a
/// unit on its own. Units are in order of their first piece.
fn element_units(reading: &Reading, pieces: &[Piece], options: &CheckOptions) -> Vec<Vec<usize>> {
    // As `check` splits a file of several transcripts.
    let trace_by = options
        .trace_by
        .clone()
        .or_else(|| (reading.traces > 1).then(|| vec![Segment::Key("trace".into())]));
    // Union-find over pieces; a group's root is its first piece.
    let mut parent: Vec<usize> = (0..pieces.len()).collect();
    let mut calls = Calls::default();
    for entry in &reading.entries {
        let Entry::Record(record) = entry else {
            continue;
        };
        let Some(piece) = piece_at(pieces, record.loc.offset) else {
            continue;
        };
        if let Some(call) = calls.pair(record, trace_of(record, trace_by.as_deref()), piece) {
            let (a, b) = (root(&mut parent, call), root(&mut parent, piece));
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut unit_of = vec![0; pieces.len()];
    for piece in 0..pieces.len() {
        // A root comes first in its group, so it opens the group's unit.
        let first = root(&mut parent, piece);
        if first == piece {
            unit_of[piece] = units.len();
            units.push(Vec::new());
        }
        units[unit_of[first]].push(piece);
    }
    units
}

/// The root of `at`'s group in a union-find forest, halving the path on the way.
fn root(parent: &mut [usize], mut at: usize) -> usize {
    while parent[at] != at {
        parent[at] = parent[parent[at]];
        at = parent[at];
    }
    at
}

/// The input without the dropped pieces, the rest of its text as it is: a dropped
/// line goes with its line end; the members of an array that stay are joined by the
/// separators that followed them, so the array is the same JSON with fewer members.
fn cut(text: &[u8], pieces: &[Piece], arrays: &[Range<u64>], dropped: &[bool]) -> Vec<u8> {
    let span = |piece: &Piece| piece.bytes.start as usize..piece.bytes.end as usize;
    let mut edits: Vec<(Range<usize>, Vec<u8>)> = Vec::new();
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); arrays.len()];
    for (index, piece) in pieces.iter().enumerate() {
        match piece.array {
            Some(array) => members[array].push(index),
            None if dropped[index] => {
                let Range { start, mut end } = span(piece);
                if text[end..].starts_with(b"\r\n") {
                    end += 2;
                } else if text[end..].starts_with(b"\n") {
                    end += 1;
                }
                edits.push((start..end, Vec::new()));
            }
            None => {}
        }
    }
    for (array, members) in members.iter().enumerate() {
        let (Some(&first), Some(&last)) = (members.first(), members.last()) else {
            continue;
        };
        let kept: Vec<usize> = (0..members.len())
            .filter(|&k| !dropped[members[k]])
            .collect();
        if kept.len() == members.len() {
            continue;
        }
        if kept.is_empty() {
            // `[]`, whatever whitespace was inside.
            let whole = &arrays[array];
            edits.push((whole.start as usize + 1..whole.end as usize - 1, Vec::new()));
            continue;
        }
        let mut joined = Vec::new();
        for (n, &k) in kept.iter().enumerate() {
            let piece = &pieces[members[k]];
            joined.extend_from_slice(&text[span(piece)]);
            if n + 1 < kept.len() {
                // The separator that followed this member in the input.
                let next = &pieces[members[k + 1]];
                joined
                    .extend_from_slice(&text[piece.bytes.end as usize..next.bytes.start as usize]);
            }
        }
        edits.push((span(&pieces[first]).start..span(&pieces[last]).end, joined));
    }
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for (range, replacement) in edits {
        // An edit inside another (an array inside a dropped or rejoined member) is
        // already done by the outer one.
        if range.start < at {
            continue;
        }
        out.extend_from_slice(&text[at..range.start]);
        out.extend_from_slice(&replacement);
        at = range.end;
    }
    out.extend_from_slice(&text[at..]);
    out
}

/// One non-blank line of the input.
struct Line<'a> {
    /// 1-based line number in the input.
    number: u64,
    text: &'a [u8],
}

fn split_lines(input: &[u8]) -> Vec<Line<'_>> {
    input
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, text)| Line {
            number: i as u64 + 1,
            text: text.strip_suffix(b"\r").unwrap_or(text),
        })
        .filter(|line| !line.text.iter().all(|b| b.is_ascii_whitespace()))
        .collect()
}

/// The kept units' lines, in input order.
fn assemble(lines: &[Line<'_>], units: &[Vec<usize>], kept: &[usize]) -> Vec<u8> {
    let mut indexes: Vec<usize> = kept
        .iter()
        .flat_map(|&u| units[u].iter().copied())
        .collect();
    indexes.sort_unstable();
    let mut text = Vec::new();
    for index in indexes {
        text.extend_from_slice(lines[index].text);
        text.push(b'\n');
    }
    text
}

/// The trace a record belongs to, as the checker splits traces: by the value at
/// `trace_by`, or one trace.
fn trace_of(record: &Record<'_>, trace_by: Option<&[Segment]>) -> String {
    match trace_by {
        Some(path) => match record.get(path) {
            Some(value) => match value.as_ref() {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            },
            None => String::new(),
        },
        None => String::new(),
    }
}

/// The calls still waiting for their result, by trace, with where each is (a unit, a
/// piece): a result answers the call with its `call_id`, or, for calls without one,
/// the oldest open call of the same tool.
#[derive(Default)]
struct Calls {
    by_id: HashMap<(String, String), usize>,
    anonymous: HashMap<(String, Option<String>), VecDeque<usize>>,
}

impl Calls {
    /// Notes `record`, which is at `at`; for a result, gives back where its call is.
    fn pair(&mut self, record: &Record<'_>, trace: String, at: usize) -> Option<usize> {
        let tool = record.tool.as_deref().map(str::to_string);
        match (record.kind, record.call_id.as_deref()) {
            (Some(Kind::Call), Some(id)) => {
                self.by_id.insert((trace, id.to_string()), at);
                None
            }
            (Some(Kind::Call), None) => {
                self.anonymous
                    .entry((trace, tool))
                    .or_default()
                    .push_back(at);
                None
            }
            (Some(Kind::Result), Some(id)) => self.by_id.remove(&(trace, id.to_string())),
            (Some(Kind::Result), None) => self
                .anonymous
                .get_mut(&(trace, tool))
                .and_then(VecDeque::pop_front),
            _ => None,
        }
    }
}

/// Groups lines into units: a call with the results that answer it (by `call_id`, or
/// for calls without one the next result of the same tool), or a line on its own.
/// Units are in order of their first line.
fn group_units(lines: &[Line<'_>], options: &CheckOptions) -> Vec<Vec<usize>> {
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut calls = Calls::default();
    for (index, line) in lines.iter().enumerate() {
        let record = std::str::from_utf8(line.text)
            .ok()
            .and_then(|text| native::decode_line(text, Location::default()).ok());
        let Some(record) = record else {
            units.push(vec![index]);
            continue;
        };
        let trace = trace_of(&record, options.trace_by.as_deref());
        match calls.pair(&record, trace, units.len()) {
            Some(unit) => units[unit].push(index),
            None => units.push(vec![index]),
        }
    }
    units
}

/// Zeller's ddmin: the smallest subset of `items` (1-minimal: removing any one item
/// makes `fails` false) found by removing chunks of halving size. `fails(items)` must
/// hold. Results are cached, so no subset is tested twice.
pub fn ddmin(items: Vec<usize>, fails: &mut dyn FnMut(&[usize]) -> bool) -> Vec<usize> {
    let mut cache: HashMap<Vec<usize>, bool> = HashMap::new();
    let mut test = |candidate: &[usize]| -> bool {
        if let Some(&known) = cache.get(candidate) {
            return known;
        }
        let result = fails(candidate);
        cache.insert(candidate.to_vec(), result);
        result
    };
    let mut current = items;
    let mut n = 2;
    while current.len() >= 2 {
        let chunks = split(&current, n);
        let mut reduced = false;
        for chunk in &chunks {
            if chunk.len() < current.len() && test(chunk) {
                current = chunk.clone();
                n = 2;
                reduced = true;
                break;
            }
        }
        if !reduced && n > 2 {
            for i in 0..chunks.len() {
                let complement: Vec<usize> = chunks
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .flat_map(|(_, chunk)| chunk.iter().copied())
                    .collect();
                if test(&complement) {
                    current = complement;
                    n = (n - 1).max(2);
                    reduced = true;
                    break;
                }
            }
        }
        if !reduced {
            if n >= current.len() {
                break;
            }
            n = (n * 2).min(current.len());
        }
    }
    // A single item may itself be removable (the empty trace cannot fail, but check).
    if current.len() == 1 && test(&[]) {
        current.clear();
    }
    current
}

/// `items` in `n` contiguous chunks of near-equal size.
fn split(items: &[usize], n: usize) -> Vec<Vec<usize>> {
    let n = n.min(items.len()).max(1);
    let mut chunks = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let end = start + (items.len() - start) / (n - i);
        chunks.push(items[start..end].to_vec());
        start = end;
    }
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddmin_finds_a_minimal_subset() {
        // Fails when both 3 and 7 are present.
        let mut calls = 0;
        let result = ddmin((0..10).collect(), &mut |c| {
            calls += 1;
            c.contains(&3) && c.contains(&7)
        });
        assert_eq!(result, vec![3, 7]);
        assert!(calls < 40, "{calls} tests");
    }

    #[test]
    fn cuts_leave_the_same_json_with_fewer_members() {
        let text = b"{\"m\": [\n  {\"a\": 1},\n  2,\n  [3]\n], \"n\": [4]}";
        let find = |needle: &str| {
            let start = text
                .windows(needle.len())
                .position(|w| w == needle.as_bytes())
                .unwrap() as u64;
            start..start + needle.len() as u64
        };
        let arrays = [find("[\n  {\"a\": 1},\n  2,\n  [3]\n]"), find("[4]")];
        let pieces = [
            Piece {
                bytes: find("{\"a\": 1}"),
                array: Some(0),
            },
            Piece {
                bytes: find("2"),
                array: Some(0),
            },
            Piece {
                bytes: find("[3]"),
                array: Some(0),
            },
            Piece {
                bytes: find("4"),
                array: Some(1),
            },
        ];
        let have = |dropped: [bool; 4]| {
            let out = cut(text, &pieces, &arrays, &dropped);
            serde_json::from_slice::<Value>(&out).expect("the cut is JSON");
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            have([false, true, false, false]),
            "{\"m\": [\n  {\"a\": 1},\n  [3]\n], \"n\": [4]}"
        );
        assert_eq!(
            have([true, false, false, true]),
            "{\"m\": [\n  2,\n  [3]\n], \"n\": []}"
        );
        assert_eq!(
            have([false, false, true, false]),
            "{\"m\": [\n  {\"a\": 1},\n  2\n], \"n\": [4]}"
        );
        assert_eq!(have([true, true, true, false]), "{\"m\": [], \"n\": [4]}");
        assert_eq!(have([false; 4]).as_bytes(), text);
    }

    #[test]
    fn cut_lines_go_with_their_line_end() {
        let text = b"{\"a\":1}\r\n{\"b\":2}\n{\"c\":3}";
        let line = |start: u64, len: u64| Piece {
            bytes: start..start + len,
            array: None,
        };
        let pieces = [line(0, 7), line(9, 7), line(17, 7)];
        let have =
            |dropped: [bool; 3]| String::from_utf8(cut(text, &pieces, &[], &dropped)).unwrap();
        assert_eq!(have([true, false, false]), "{\"b\":2}\n{\"c\":3}");
        assert_eq!(have([false, true, true]), "{\"a\":1}\r\n");
    }

    #[test]
    fn split_covers_every_item_once() {
        let chunks = split(&[1, 2, 3, 4, 5], 3);
        assert_eq!(chunks, vec![vec![1], vec![2, 3], vec![4, 5]]);
    }
}
