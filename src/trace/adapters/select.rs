//! `--select PATH`: where in a JSON document the transcripts are.
//!
//! A path is a chain of object keys and array indexes, with `[*]` for "each element"
//! (of an array, or each member value of an object): `runs[*].messages`,
//! `[*].traj`, `answer_generation.train_messages[*]`, `data["odd key"][0]`. A JSON
//! pointer with `*` tokens is accepted too: `/runs/*/messages`.

use std::fmt;

use serde_json::Value;

use crate::trace::json_index::{child_pointer, pointer_tokens};

/// A parsed `--select` path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    steps: Vec<Step>,
    text: String,
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Step {
    /// An object's member; on an array, the element it numbers, if it is a number (a
    /// JSON pointer's token).
    Key(String),
    /// An array's element.
    Index(usize),
    /// Each element of an array, or each member value of an object.
    Each,
}

impl Step {
    /// The key this step takes in an object, if any.
    pub(super) fn in_object(&self) -> Option<&str> {
        match self {
            Step::Key(key) => Some(key),
            Step::Index(_) | Step::Each => None,
        }
    }

    /// The element this step takes in an array, if any.
    pub(super) fn in_array(&self) -> Option<usize> {
        match self {
            Step::Key(key) => key.parse().ok(),
            Step::Index(index) => Some(*index),
            Step::Each => None,
        }
    }

    /// The token this step adds to a JSON pointer.
    pub(super) fn token(&self) -> String {
        match self {
            Step::Key(key) => key.clone(),
            Step::Index(index) => index.to_string(),
            Step::Each => "*".to_string(),
        }
    }
}

impl fmt::Display for Selector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// Why a `--select` path does not parse; columns count characters from 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SelectorError {
    /// A `.` with no key after it.
    #[error("expected a key after `.` at column {column}")]
    MissingKey {
        /// Where the `.` is.
        column: usize,
    },
    /// A `[` with no `]`.
    #[error("unclosed `[` at column {column}")]
    Unclosed {
        /// Where the `[` is.
        column: usize,
    },
    /// A `["…"]` whose inside is not a JSON string.
    #[error("`[{inside}]` at column {column} is not a quoted key")]
    BadQuotedKey {
        /// What stands between the brackets.
        inside: String,
        /// Where the `[` is.
        column: usize,
    },
    /// Brackets holding something other than `*`, an index or a quoted key.
    #[error("`[{inside}]` at column {column} is not `[*]`, an index or a quoted key")]
    BadBracket {
        /// What stands between the brackets.
        inside: String,
        /// Where the `[` is.
        column: usize,
    },
    /// The path ends with a `.`.
    #[error("the path ends with `.`")]
    TrailingDot,
}

impl Selector {
    /// Parses a path; the error says what is wrong and where.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let trimmed = text.trim();
        let steps = if trimmed.starts_with('/') {
            pointer_tokens(trimmed)
                .map(|token| match token.as_str() {
                    "*" => Step::Each,
                    _ => Step::Key(token),
                })
                .collect()
        } else {
            parse_dotted(trimmed)?
        };
        Ok(Selector {
            steps,
            text: trimmed.to_string(),
        })
    }

    /// For a path of keys and indexes then `[*]` (`runs[*].messages`, `[*].traj`,
    /// `data[0].runs[*]`): those steps, and the rest of the path, which selects in each
    /// element of the array the steps lead to what the whole path selects there (a
    /// document streamed element by element).
    pub(super) fn split_each(&self) -> Option<(Vec<Step>, Selector)> {
        let each = self.steps.iter().position(|step| *step == Step::Each)?;
        let rest = Selector {
            steps: self.steps[each + 1..].to_vec(),
            text: self.text.clone(),
        };
        Some((self.steps[..each].to_vec(), rest))
    }

    /// For a path of keys and indexes only (`data.messages`, `runs[2]`): its steps,
    /// which lead to the one value it selects, if any (a document streamed element by
    /// element when that is a list, or an object that holds one).
    pub(super) fn steps(&self) -> Option<&[Step]> {
        (!self.steps.contains(&Step::Each)).then_some(&self.steps[..])
    }

    /// Every value the path selects in `root`, with its JSON pointer, in document order.
    pub fn select<'v>(&self, root: &'v Value) -> Vec<(String, &'v Value)> {
        let mut current = vec![(String::new(), root)];
        for step in &self.steps {
            let mut next = Vec::new();
            for (pointer, value) in current {
                match (step, value) {
                    (Step::Each, Value::Array(items)) => next.extend(
                        items
                            .iter()
                            .enumerate()
                            .map(|(i, item)| (child_pointer(&pointer, i), item)),
                    ),
                    (Step::Each, Value::Object(map)) => next.extend(
                        map.iter()
                            .map(|(key, item)| (child_pointer(&pointer, key), item)),
                    ),
                    (step, Value::Array(items)) => {
                        if let Some(item) = step.in_array().and_then(|i| items.get(i)) {
                            next.push((child_pointer(&pointer, step.token()), item));
                        }
                    }
                    (step, Value::Object(map)) => {
                        if let Some(item) = step.in_object().and_then(|key| map.get(key)) {
                            next.push((child_pointer(&pointer, step.token()), item));
                        }
                    }
                    _ => {}
                }
            }
            current = next;
        }
        current
    }
}

fn parse_dotted(text: &str) -> Result<Vec<Step>, SelectorError> {
    let chars: Vec<char> = text.chars().collect();
    let mut steps = Vec::new();
    let mut at = 0;
    if chars.first() == Some(&'$') {
        at = 1;
    }
    let mut need_key = false;
    while at < chars.len() {
        match chars[at] {
            '.' => {
                if need_key || at + 1 == chars.len() {
                    return Err(SelectorError::MissingKey { column: at + 1 });
                }
                need_key = true;
                at += 1;
            }
            '[' => {
                let close = chars[at..]
                    .iter()
                    .position(|&c| c == ']')
                    .map(|i| at + i)
                    .ok_or(SelectorError::Unclosed { column: at + 1 })?;
                let inside: String = chars[at + 1..close].iter().collect();
                let inside = inside.trim();
                let step = if inside == "*" {
                    Step::Each
                } else if let Ok(index) = inside.parse::<usize>() {
                    Step::Index(index)
                } else if inside.starts_with('"') {
                    Step::Key(serde_json::from_str::<String>(inside).map_err(|_| {
                        SelectorError::BadQuotedKey {
                            inside: inside.to_string(),
                            column: at + 1,
                        }
                    })?)
                } else {
                    return Err(SelectorError::BadBracket {
                        inside: inside.to_string(),
                        column: at + 1,
                    });
                };
                steps.push(step);
                need_key = false;
                at = close + 1;
            }
            _ => {
                let start = at;
                while at < chars.len() && !matches!(chars[at], '.' | '[') {
                    at += 1;
                }
                let key: String = chars[start..at].iter().collect();
                if key == "*" {
                    steps.push(Step::Each);
                } else {
                    steps.push(Step::Key(key));
                }
                need_key = false;
            }
        }
    }
    if need_key {
        return Err(SelectorError::TrailingDot);
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[track_caller]
    fn pointers(path: &str, doc: &Value) -> Vec<String> {
        Selector::parse(path)
            .unwrap()
            .select(doc)
            .into_iter()
            .map(|(p, _)| p)
            .collect()
    }

    #[test]
    fn selects_each_element_and_keys() {
        let doc = json!([{"task_id": "a", "traj": [1]}, {"task_id": "b", "traj": [2]}, 5]);
        assert_eq!(pointers("[*].traj", &doc), ["/0/traj", "/1/traj"]);
        assert_eq!(pointers("$[1].traj", &doc), ["/1/traj"]);
        assert_eq!(pointers("/*/traj", &doc), ["/0/traj", "/1/traj"]);
        assert_eq!(pointers("", &doc), [""]);
        let doc = json!({"a": {"b/c": {"x": 1}, "d": {"x": 2}}});
        assert_eq!(pointers("a[*].x", &doc), ["/a/b~1c/x", "/a/d/x"]);
        assert_eq!(pointers("a[\"b/c\"]", &doc), ["/a/b~1c"]);
        assert_eq!(pointers("/a/b~1c/x", &doc), ["/a/b~1c/x"]);
        assert!(pointers("a.nothing[*]", &doc).is_empty());
    }

    #[test]
    fn reports_bad_paths() {
        let error = |text: &str| Selector::parse(text).unwrap_err();
        assert_eq!(error("a["), SelectorError::Unclosed { column: 2 });
        assert_eq!(error("a[").to_string(), "unclosed `[` at column 2");
        assert_eq!(error("a."), SelectorError::MissingKey { column: 2 });
        assert_eq!(
            error("a[x]").to_string(),
            "`[x]` at column 2 is not `[*]`, an index or a quoted key"
        );
        assert_eq!(error("a..b"), SelectorError::MissingKey { column: 3 });
    }
}
