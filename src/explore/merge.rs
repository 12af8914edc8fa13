//! Merging the JSON reports of `coverage --shard K/N` into the one report a single
//! `coverage` run would have written: `tracegate merge --format coverage FILE...`.
//! Every count and visit is summed item by item and each ratio recomputed.
//!
//! Pure: takes the files' names and texts and returns the merged text or what is
//! wrong, naming the file.

use serde_json::Value;

use super::coverage::Ratio;
use super::render::ratio_json;
use crate::diagnostic::render::merge::Part;

/// What merging the JSON reports of `coverage --shard` gave.
pub struct MergedCoverage {
    /// The report one run over every part would have written.
    pub text: String,
    /// Whether a spec is below `min` (the run fails).
    pub below: bool,
}

/// JSON reports of `coverage` over parts of one run, as the report of the whole run:
/// every count and visit summed item by item, each ratio recomputed, a forbidden
/// move's `shortest` path kept only while no part made the move, the errors of every
/// part in part order, and a summary whose counts are the sums and whose `below` is
/// judged against `min` (the parts, measured with no `--min`, cannot judge it).
pub fn coverage(parts: &[Part<'_>], min: Option<f64>) -> Result<MergedCoverage, String> {
    let mut merged: Vec<Value> = Vec::new();
    let mut errors = String::new();
    let mut total = [0u64; 3];
    let mut specs = None;
    let mut first_name = "";
    for (index, part) in parts.iter().enumerate() {
        let mut covered = Vec::new();
        let mut summaries = 0;
        for (number, line) in part.text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let at = || format!("{}:{}", part.name, number + 1);
            let value: Value =
                serde_json::from_str(line).map_err(|err| format!("{}: not JSON: {err}", at()))?;
            match value["type"].as_str() {
                Some("coverage") => covered.push(value),
                Some("summary") => {
                    summaries += 1;
                    for (sum, field) in total.iter_mut().zip(["records", "traces", "errors"]) {
                        *sum += value[field].as_u64().ok_or_else(|| {
                            format!("{}: the summary has no `{field}` count", at())
                        })?;
                    }
                    let theirs = value["specs"].as_u64();
                    match specs {
                        None => specs = theirs,
                        Some(ours) if Some(ours) != theirs => {
                            return Err(format!(
                                "{}: a report of {} specs, and `{first_name}` of {ours}: \
                                 only the parts of one run merge",
                                at(),
                                theirs.map_or("no".into(), |n| n.to_string()),
                            ));
                        }
                        Some(_) => {}
                    }
                }
                // An error met while measuring, in `check`'s shape.
                _ => {
                    errors.push_str(line);
                    errors.push('\n');
                }
            }
        }
        if summaries != 1 {
            return Err(format!(
                "{}: a JSON report of `coverage` ends with one summary line; found {summaries}",
                part.name
            ));
        }
        if index == 0 {
            first_name = part.name;
            merged = covered;
        } else {
            add_coverage(&mut merged, covered, part.name, first_name)?;
        }
    }
    let mut text = String::new();
    let mut below = Vec::new();
    for spec in &mut merged {
        for section in ["transitions", "states", "forbidden"] {
            let ratio = recount(&mut spec[section]);
            if section == "transitions" && min.is_some_and(|min| ratio.percent() < min) {
                below.push(spec["spec"].clone());
            }
        }
        text.push_str(&spec.to_string());
        text.push('\n');
    }
    text.push_str(&errors);
    let [records, traces, errors] = total;
    let summary = serde_json::json!({
        "type": "summary",
        "specs": specs.unwrap_or_default(),
        "records": records,
        "traces": traces,
        "errors": errors,
        "min": min,
        "below": below,
    });
    text.push_str(&summary.to_string());
    text.push('\n');
    Ok(MergedCoverage {
        below: !below.is_empty(),
        text,
    })
}

/// Adds one part's coverage lines into `merged`, which must be of the same specs,
/// item for item.
fn add_coverage(
    merged: &mut [Value],
    theirs: Vec<Value>,
    name: &str,
    first: &str,
) -> Result<(), String> {
    let differ = |what: &str| {
        Err(format!(
            "{name}: {what} differs from `{first}`'s: only the parts of one run, over the \
             same specs, merge"
        ))
    };
    if theirs.len() != merged.len() {
        return differ("the number of specs");
    }
    for (ours, theirs) in merged.iter_mut().zip(theirs) {
        if ours["spec"] != theirs["spec"] {
            return differ(&format!(
                "spec `{}`",
                theirs["spec"].as_str().unwrap_or("?")
            ));
        }
        for (section, count) in [
            ("transitions", "count"),
            ("states", "visits"),
            ("forbidden", "count"),
        ] {
            let (Some(items), Some(their_items)) = (
                ours[section]["items"].as_array_mut(),
                theirs[section]["items"].as_array(),
            ) else {
                return differ(&format!("the `{section}` of spec {}", ours["spec"]));
            };
            if items.len() != their_items.len() {
                return differ(&format!("the `{section}` of spec {}", ours["spec"]));
            }
            for (item, their) in items.iter_mut().zip(their_items) {
                let same = |a: &Value, b: &Value| {
                    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
                        return false;
                    };
                    a.len() == b.len()
                        && a.iter().all(|(key, value)| {
                            key == count || key == "shortest" || b.get(key) == Some(value)
                        })
                };
                let (Some(mine), Some(add)) = (item[count].as_u64(), their[count].as_u64()) else {
                    return differ(&format!("the `{section}` of spec {}", ours["spec"]));
                };
                if !same(item, their) {
                    return differ(&format!(
                        "an item of the `{section}` of spec {}",
                        ours["spec"]
                    ));
                }
                item[count] = Value::from(mine + add);
            }
        }
    }
    Ok(())
}

/// Recomputes a section's `ratio` from its items' counts (and, for forbidden moves,
/// drops the `shortest` path of a move some part made), and returns it.
fn recount(section: &mut Value) -> Ratio {
    let mut ratio = Ratio {
        covered: 0,
        total: 0,
    };
    if let Some(items) = section["items"].as_array_mut() {
        for item in items {
            let made = item
                .get("count")
                .or_else(|| item.get("visits"))
                .and_then(Value::as_u64)
                .unwrap_or(0)
                > 0;
            ratio.total += 1;
            ratio.covered += usize::from(made);
            if made && let Some(shortest) = item.get_mut("shortest") {
                *shortest = Value::Null;
            }
        }
    }
    section["ratio"] = ratio_json(ratio);
    ratio
}
