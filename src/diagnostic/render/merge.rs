//! Merging the reports of a run split into shards (`check --shard K/N`) into the one
//! report a single run would have written: `tracegate merge --format F FILE...`.
//!
//! - JSON Lines: the findings of every file in order, then one summary line whose
//!   counts are the sums of the files' summaries (`specs` is the largest, as every
//!   shard loads every spec).
//! - SARIF: one run, with the rules of every file (by id, in first-seen order; every
//!   result's `ruleIndex` pointing into that list), every result and every tool
//!   notification in file order, and `executionSuccessful` only when every shard's was.
//!   A `partialFingerprints` value that two shards both gave (identical findings) is
//!   told apart by its order, as one run does.
//! - JUnit XML: one `testsuite` per spec with the test cases of every file, in the
//!   order they come, every count recomputed from the elements, and every time the
//!   sum of the times the files gave.
//!
//! Coverage reports (`coverage --shard`) merge in `explore::merge`, the layer that knows them.
//!
//! Pure: each function takes the files' names and texts and returns the merged text or
//! what is wrong, naming the file.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::json;
use super::junit::{self, Case, Entry};
use super::run::fingerprint;
use crate::diagnostic::Summary;

/// One report to merge: its name (for messages) and its text.
pub struct Part<'a> {
    /// The file's name, as messages give it.
    pub name: &'a str,
    /// The report's text.
    pub text: &'a str,
}

/// JSON Lines reports of `check`, as one.
pub fn json_lines(parts: &[Part<'_>]) -> Result<String, String> {
    let mut out = String::new();
    let mut total = Summary::default();
    for part in parts {
        let mut summaries = 0;
        for (number, line) in part.text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(line)
                .map_err(|err| format!("{}:{}: not JSON: {err}", part.name, number + 1))?;
            if value["type"] != "summary" {
                out.push_str(line);
                out.push('\n');
                continue;
            }
            summaries += 1;
            let count = |field: &str| -> Result<u64, String> {
                value[field].as_u64().ok_or_else(|| {
                    format!(
                        "{}:{}: the summary has no `{field}` count",
                        part.name,
                        number + 1
                    )
                })
            };
            total.specs = total.specs.max(count("specs")? as usize);
            total.traces += count("traces")?;
            total.records += count("records")?;
            total.synthesized += count("synthesized")?;
            total.violations += count("violations")?;
            total.errors += count("errors")?;
        }
        if summaries != 1 {
            return Err(format!(
                "{}: a JSON Lines report of `check` ends with one summary line; found {summaries}",
                part.name
            ));
        }
    }
    out.push_str(&json::render_summary(&total));
    out.push('\n');
    Ok(out)
}

/// SARIF logs of `check`, as one log of one run.
pub fn sarif(parts: &[Part<'_>]) -> Result<String, String> {
    let mut merged: Option<Map<String, Value>> = None;
    let mut rules: Vec<Value> = Vec::new();
    let mut results: Vec<Value> = Vec::new();
    let mut notifications: Vec<Value> = Vec::new();
    let mut successful = true;
    for part in parts {
        let log: Value = serde_json::from_str(part.text)
            .map_err(|err| format!("{}: not JSON: {err}", part.name))?;
        if log["version"] != "2.1.0" {
            return Err(format!("{}: not a SARIF 2.1.0 log", part.name));
        }
        let runs = log["runs"]
            .as_array()
            .ok_or_else(|| format!("{}: a SARIF log without `runs`", part.name))?;
        for run in runs {
            let Some(run) = run.as_object() else {
                return Err(format!("{}: a run that is not an object", part.name));
            };
            let driver = &run.get("tool").unwrap_or(&Value::Null)["driver"];
            let name = driver["name"].as_str().unwrap_or_default();
            match &merged {
                None => merged = Some(run.clone()),
                Some(first) if first["tool"]["driver"]["name"] != name => {
                    return Err(format!(
                        "{}: a run of `{name}`, not of `{}`: only runs of one tool merge",
                        part.name,
                        first["tool"]["driver"]["name"].as_str().unwrap_or_default()
                    ));
                }
                Some(_) => {}
            }
            let their_rules = driver["rules"].as_array().cloned().unwrap_or_default();
            for rule in &their_rules {
                if !rules.iter().any(|r| r["id"] == rule["id"]) {
                    rules.push(rule.clone());
                }
            }
            for invocation in run
                .get("invocations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                successful &= invocation["executionSuccessful"] != false;
                if let Some(told) = invocation["toolExecutionNotifications"].as_array() {
                    notifications.extend(told.iter().cloned());
                }
            }
            if let Some(theirs) = run.get("results").and_then(Value::as_array) {
                results.extend(theirs.iter().cloned());
            }
        }
    }
    let Some(mut run) = merged else {
        return Err("no SARIF run to merge".into());
    };
    let mut used = BTreeSet::new();
    for result in &mut results {
        if let Some(index) = rules.iter().position(|r| r["id"] == result["ruleId"]) {
            if result.get("ruleIndex").is_some() {
                result["ruleIndex"] = Value::from(index);
            }
        }
        let Some(prints) = result
            .get_mut("partialFingerprints")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        for (name, value) in prints.iter_mut() {
            let Some(base) = value.as_str().map(str::to_string) else {
                continue;
            };
            let mut print = base.clone();
            let mut nth = 1u64;
            while !used.insert((name.clone(), print.clone())) {
                nth += 1;
                print = fingerprint([base.as_str(), nth.to_string().as_str()]);
            }
            *value = Value::String(print);
        }
    }
    run["tool"]["driver"]["rules"] = Value::Array(rules);
    run.insert("results".into(), Value::Array(results));
    let mut invocation = Map::new();
    invocation.insert("executionSuccessful".into(), Value::Bool(successful));
    invocation.insert(
        "toolExecutionNotifications".into(),
        Value::Array(notifications),
    );
    run.insert(
        "invocations".into(),
        Value::Array(vec![Value::Object(invocation)]),
    );
    let mut log = Map::new();
    log.insert(
        "$schema".into(),
        Value::String(super::sarif::SCHEMA.to_string()),
    );
    log.insert("version".into(), Value::String("2.1.0".into()));
    log.insert("runs".into(), Value::Array(vec![Value::Object(run)]));
    let mut text = serde_json::to_string(&Value::Object(log)).expect("bug: JSON serializes");
    text.push('\n');
    Ok(text)
}

/// JUnit XML reports of `check`, as one.
pub fn junit(parts: &[Part<'_>]) -> Result<String, String> {
    let mut suites: Vec<(String, Vec<Case>)> = Vec::new();
    // The times the parts gave, summed: the whole report's and each suite's.
    let mut total = 0.0;
    let mut times: Vec<f64> = Vec::new();
    let seconds_of =
        |node: roxmltree::Node<'_, '_>, at: &dyn Fn() -> String| match node.attribute("time") {
            None => Ok(0.0),
            Some(time) => time
                .parse::<f64>()
                .map_err(|_| format!("{}: `time=\"{time}\"` is no number", at())),
        };
    for part in parts {
        let document = roxmltree::Document::parse(part.text)
            .map_err(|err| format!("{}: not XML: {err}", part.name))?;
        let root = document.root_element();
        let at = |node: roxmltree::Node<'_, '_>| {
            let place = document.text_pos_at(node.range().start);
            format!("{}:{}:{}", part.name, place.row, place.col)
        };
        let found: Vec<roxmltree::Node<'_, '_>> = match root.tag_name().name() {
            "testsuites" => root.children().filter(|n| n.is_element()).collect(),
            "testsuite" => vec![root],
            other => {
                return Err(format!(
                    "{}: a JUnit report is `<testsuites>` or `<testsuite>`, not `<{other}>`",
                    part.name
                ));
            }
        };
        if root.tag_name().name() == "testsuites" {
            total += seconds_of(root, &|| at(root))?;
        }
        for suite in found {
            if suite.tag_name().name() != "testsuite" {
                return Err(format!(
                    "{}: expected `<testsuite>`, found `<{}>`",
                    at(suite),
                    suite.tag_name().name()
                ));
            }
            let name = suite.attribute("name").unwrap_or_default().to_string();
            let index = match suites.iter().position(|(n, _)| *n == name) {
                Some(index) => index,
                None => {
                    suites.push((name, Vec::new()));
                    times.push(0.0);
                    suites.len() - 1
                }
            };
            let seconds = seconds_of(suite, &|| at(suite))?;
            times[index] += seconds;
            if root.tag_name().name() == "testsuite" {
                total += seconds;
            }
            for case in suite.children().filter(|n| n.is_element()) {
                if case.tag_name().name() != "testcase" {
                    return Err(format!(
                        "{}: expected `<testcase>`, found `<{}>`",
                        at(case),
                        case.tag_name().name()
                    ));
                }
                let seconds = seconds_of(case, &|| at(case))?;
                let mut merged = Case {
                    name: case.attribute("name").unwrap_or_default().to_string(),
                    file: case.attribute("file").map(str::to_string),
                    seconds,
                    failures: Vec::new(),
                    errors: Vec::new(),
                };
                for entry in case.children().filter(|n| n.is_element()) {
                    let kind = entry.tag_name().name();
                    let read = Entry {
                        kind: if kind == "failure" {
                            "failure"
                        } else {
                            "error"
                        },
                        code: entry.attribute("type").unwrap_or_default().to_string(),
                        message: entry.attribute("message").unwrap_or_default().to_string(),
                        body: entry.text().unwrap_or_default().to_string(),
                    };
                    match kind {
                        "failure" => merged.failures.push(read),
                        "error" => merged.errors.push(read),
                        other => {
                            return Err(format!(
                                "{}: expected `<failure>` or `<error>`, found `<{other}>`",
                                at(entry)
                            ));
                        }
                    }
                }
                suites[index].1.push(merged);
            }
        }
    }
    Ok(junit::write(&suites, Some((total, &times))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_keep_every_finding_and_sum_the_summaries() {
        let a = "{\"type\":\"violation\",\"n\":1}\n{\"type\":\"summary\",\"specs\":2,\"traces\":3,\"records\":10,\"synthesized\":0,\"violations\":1,\"errors\":0}\n";
        let b = "{\"type\":\"error\",\"n\":2}\n{\"type\":\"summary\",\"specs\":2,\"traces\":1,\"records\":4,\"synthesized\":2,\"violations\":0,\"errors\":1}\n";
        let merged = json_lines(&[Part { name: "a", text: a }, Part { name: "b", text: b }])
            .expect("they merge");
        assert_eq!(
            merged,
            "{\"type\":\"violation\",\"n\":1}\n{\"type\":\"error\",\"n\":2}\n{\"type\":\"summary\",\"specs\":2,\"traces\":4,\"records\":14,\"synthesized\":2,\"violations\":1,\"errors\":1}\n"
        );
        let cut = json_lines(&[Part {
            name: "cut.jsonl",
            text: "{\"type\":\"violation\"}\n",
        }]);
        assert!(cut.is_err_and(|e| e.contains("cut.jsonl") && e.contains("found 0")));
    }

    #[test]
    fn sarif_fingerprints_stay_unique_and_rule_indexes_follow_the_merged_rules() {
        let log = |rules: &str, rule: &str, index: u64, print: &str| {
            format!(
                "{{\"version\":\"2.1.0\",\"runs\":[{{\"tool\":{{\"driver\":{{\"name\":\"tracegate\",\"rules\":[{rules}]}}}},\"invocations\":[{{\"executionSuccessful\":true}}],\"results\":[{{\"ruleId\":\"{rule}\",\"ruleIndex\":{index},\"partialFingerprints\":{{\"tracegate/v1\":\"{print}\"}}}}]}}]}}"
            )
        };
        let a = log("{\"id\":\"x\"},{\"id\":\"y\"}", "y", 1, "f");
        let b = log("{\"id\":\"z\"},{\"id\":\"y\"}", "z", 0, "f");
        let merged = sarif(&[
            Part {
                name: "a",
                text: &a,
            },
            Part {
                name: "b",
                text: &b,
            },
        ])
        .expect("they merge");
        let merged: Value = serde_json::from_str(&merged).expect("JSON");
        let run = &merged["runs"][0];
        let ids: Vec<&str> = run["tool"]["driver"]["rules"]
            .as_array()
            .expect("rules")
            .iter()
            .filter_map(|r| r["id"].as_str())
            .collect();
        assert_eq!(ids, ["x", "y", "z"]);
        assert_eq!(run["results"][0]["ruleIndex"], 1);
        assert_eq!(run["results"][1]["ruleIndex"], 2);
        let prints: Vec<&Value> = (0..2)
            .map(|i| &run["results"][i]["partialFingerprints"]["tracegate/v1"])
            .collect();
        assert_eq!(prints[0], "f");
        assert_ne!(prints[0], prints[1], "an identical finding is told apart");
        let other = a.replace("\"tracegate\"", "\"other\"");
        assert!(
            sarif(&[
                Part {
                    name: "a",
                    text: &a
                },
                Part {
                    name: "o",
                    text: &other
                }
            ])
            .is_err()
        );
    }
}
