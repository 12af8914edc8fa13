//! Shrinking: a failing trace cut down to the smallest trace that still yields the
//! same violation (the same code, at the same rule of the same spec).
//!
//! The trace's records are grouped into units — a call with its result(s), or one
//! other record — so a call never loses its reply (which would change its meaning:
//! the checker would give it a `missing` result). Two cheap cuts come first: the
//! units that no instance of the violated spec ever saw, then everything after the
//! violation. Then ddmin (Zeller and Hildebrandt's delta debugging) removes units
//! until no single unit can go. A candidate is kept only when the real checker still
//! reports the target violation and reports nothing the original did not.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashSet;
use serde_json::Value;

use crate::check::{CheckOptions, Observation, Outcome, check_reader, check_reader_observed};
use crate::diagnostic::{Code, Diagnostic};
use crate::machine::Machine;
use crate::spec::ast::Span;
use crate::trace::native;
use crate::trace::{Kind, Location};

/// Which violation to keep, and how to read the trace.
#[derive(Debug, Clone, Default)]
pub struct ShrinkOptions {
    pub check: CheckOptions,
    /// Keep the violation with this code (the first one, if several).
    pub code: Option<Code>,
    /// Keep the n-th violation (0-based) among those `code` selects, in report order.
    pub index: usize,
}

/// The smallest trace found.
#[derive(Debug, Clone)]
pub struct Shrunk {
    /// The kept lines of the input, unchanged and in order, each ending in `\n`.
    pub text: Vec<u8>,
    /// Records in the input and in the result.
    pub before: usize,
    pub after: usize,
    pub bytes_before: usize,
    /// The violation as the checker reports it on the shrunk trace.
    pub violation: Diagnostic,
    /// How many candidate traces were checked.
    pub tests: usize,
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

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShrinkError {
    #[error("the trace yields no violation; there is nothing to shrink")]
    NoViolation,
    #[error("the trace yields no `{0}` violation")]
    NoSuchCode(Code),
    #[error("the trace yields {found} matching violations; there is no violation number {wanted}")]
    NoSuchViolation { found: usize, wanted: usize },
}

/// What makes two findings the same for shrinking: code, spec and rule.
type Identity = (Code, String, Span);

fn identity(diagnostic: &Diagnostic) -> Identity {
    match &diagnostic.spec {
        Some(site) => (diagnostic.code, site.spec.clone(), site.span),
        None => (diagnostic.code, String::new(), Span::default()),
    }
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
        check_reader_observed(specs, file.clone(), input, &options.check, Some(observer))
    };
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
    let target_id = identity(target);
    let known: BTreeSet<Identity> = original.diagnostics.iter().map(identity).collect();
    let spec_index = specs
        .iter()
        .position(|m| Some(m.name.as_str()) == target.spec.as_ref().map(|s| s.spec.as_str()));

    let units = group_units(&lines, &options.check);
    let mut tests = 0;
    let mut test = |kept: &[usize]| -> Option<Outcome> {
        tests += 1;
        let text = assemble(&lines, &units, kept);
        let outcome = check_reader(specs, file.clone(), text.as_slice(), &options.check);
        let has_target = outcome.diagnostics.iter().any(|d| identity(d) == target_id);
        let nothing_new = outcome
            .diagnostics
            .iter()
            .all(|d| known.contains(&identity(d)));
        (has_target && nothing_new).then_some(outcome)
    };

    let mut kept: Vec<usize> = (0..units.len()).collect();
    // Cut 1: the units no instance of the violated spec saw.
    if let Some(spec) = spec_index {
        let relevant: Vec<usize> = kept
            .iter()
            .copied()
            .filter(|&u| {
                units[u]
                    .iter()
                    .any(|&l| seen_lines[spec].contains(&lines[l].number))
            })
            .collect();
        if relevant.len() < kept.len() && test(&relevant).is_some() {
            kept = relevant;
        }
    }
    // Cut 2: everything after the violation's record.
    let at = target.trace.as_ref().map_or(u64::MAX, |t| t.loc.line);
    let before: Vec<usize> = kept
        .iter()
        .copied()
        .filter(|&u| units[u].iter().any(|&l| lines[l].number <= at))
        .collect();
    if before.len() < kept.len() && test(&before).is_some() {
        kept = before;
    }
    let kept = ddmin(kept, &mut |candidate| test(candidate).is_some());
    let outcome = test(&kept).expect("bug: ddmin keeps a failing subset");
    let violation = outcome
        .diagnostics
        .into_iter()
        .find(|d| identity(d) == target_id)
        .expect("bug: the test keeps the target violation");
    let text = assemble(&lines, &units, &kept);
    Ok(Shrunk {
        before: lines.len(),
        after: kept.iter().map(|&u| units[u].len()).sum(),
        bytes_before: input.len(),
        text,
        violation,
        tests,
    })
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

/// Groups lines into units: a call with the results that answer it (by `call_id`, or
/// for calls without one the next result of the same tool), or a line on its own.
/// Units are in order of their first line.
fn group_units(lines: &[Line<'_>], options: &CheckOptions) -> Vec<Vec<usize>> {
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut by_id: HashMap<(String, String), usize> = HashMap::new();
    let mut anonymous: HashMap<(String, Option<String>), VecDeque<usize>> = HashMap::new();
    for (index, line) in lines.iter().enumerate() {
        let record = std::str::from_utf8(line.text)
            .ok()
            .and_then(|text| native::decode_line(text, Location::default()).ok());
        let Some(record) = record else {
            units.push(vec![index]);
            continue;
        };
        let trace = match &options.trace_by {
            Some(path) => match record.get(path) {
                Some(value) => match value.as_ref() {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                },
                None => String::new(),
            },
            None => String::new(),
        };
        let tool = record.tool.as_deref().map(str::to_string);
        match (record.kind, record.call_id.as_deref()) {
            (Some(Kind::Call), Some(id)) => {
                by_id.insert((trace, id.to_string()), units.len());
                units.push(vec![index]);
            }
            (Some(Kind::Call), None) => {
                anonymous
                    .entry((trace, tool))
                    .or_default()
                    .push_back(units.len());
                units.push(vec![index]);
            }
            (Some(Kind::Result), Some(id)) => match by_id.remove(&(trace, id.to_string())) {
                Some(unit) => units[unit].push(index),
                None => units.push(vec![index]),
            },
            (Some(Kind::Result), None) => {
                match anonymous
                    .get_mut(&(trace, tool))
                    .and_then(VecDeque::pop_front)
                {
                    Some(unit) => units[unit].push(index),
                    None => units.push(vec![index]),
                }
            }
            _ => units.push(vec![index]),
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
    fn split_covers_every_item_once() {
        let chunks = split(&[1, 2, 3, 4, 5], 3);
        assert_eq!(chunks, vec![vec![1], vec![2, 3], vec![4, 5]]);
    }
}
