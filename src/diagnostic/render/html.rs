//! The HTML report (`check --report FILE.html`): one self-contained file, with its
//! styles, script and drawings inline and nothing fetched, that a reviewer opens in a
//! browser.
//!
//! It shows the run's counts; every finding in a list that filters by spec, code and
//! file and is shown a page at a time (so ten thousand findings stay quick); and, for the
//! finding opened, the timeline of its instance (every record of the file from just
//! before the path's first move to just after the offending record, the moves
//! highlighted, long quiet stretches between them collapsed behind a button that
//! expands them, and the spec rule) beside the spec's graph with that path highlighted. Each spec's graph arrives drawn once, as SVG (the
//! caller draws it with the `export` SVG writer); the script highlights a finding's
//! states and moves on it.
//!
//! The findings travel as JSON in a `<script type="application/json">` block, with the
//! text of every record shown stored once per file and line, however many findings show
//! it. Record text comes from the caller in [`Snippets`]: the renderer reads no file.
//! What is embedded is bounded: a quiet stretch longer than [`GAP_KEEP`] records keeps
//! only its ends, and once [`QUIET_BUDGET`] quiet records are embedded, further
//! stretches are shown as counts; the moves, the offending records and [`CONTEXT`]
//! records around each are always embedded.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::run::Run;
use crate::diagnostic::Diagnostic;
use crate::redact::redact;

/// The text of trace lines a report shows: (file, line) → the line, cut and masked.
#[derive(Debug, Default)]
pub struct Snippets {
    /// The text of each line shown, by file and 1-based line number.
    pub lines: BTreeMap<(PathBuf, u64), String>,
}

impl Snippets {
    /// The trace lines the findings of `run` show, by file: for each finding its record,
    /// and for a violation [`CONTEXT`] records before its path's first move, every record
    /// from there to the offending one (bounded as the module says), and [`CONTEXT`]
    /// records after it. A line past the end of its file is simply not found.
    pub fn wanted(run: &Run<'_>) -> BTreeMap<PathBuf, Vec<u64>> {
        let mut wanted: BTreeMap<PathBuf, BTreeSet<u64>> = BTreeMap::new();
        let mut quiet_left = QUIET_BUDGET;
        for diagnostic in run.diagnostics() {
            let Some(site) = &diagnostic.trace else {
                continue;
            };
            let lines = wanted.entry(site.file.to_path_buf()).or_default();
            if site.loc.line > 0 {
                lines.insert(site.loc.line);
            }
            let Some(detail) = &diagnostic.violation else {
                continue;
            };
            let Some(shown) = stretch(detail, site.loc.line) else {
                lines.extend(detail.path.iter().map(|step| step.line));
                continue;
            };
            // The records always shown: the moves, and the context at both ends.
            let mut anchors: BTreeSet<u64> = detail.path.iter().map(|step| step.line).collect();
            anchors.insert(site.loc.line);
            anchors.extend(shown.start..(shown.start + CONTEXT).min(shown.end));
            anchors.extend(shown.end.saturating_sub(CONTEXT).max(shown.start)..shown.end);
            lines.extend(anchors.iter().copied());
            // The quiet stretches between them, each cut to its ends past GAP_KEEP.
            let anchors: Vec<u64> = anchors.into_iter().collect();
            for pair in anchors.windows(2) {
                let gap = pair[0] + 1..pair[1];
                let length = gap.end - gap.start;
                let kept: Vec<u64> = if length <= GAP_KEEP {
                    gap.collect()
                } else {
                    let half = GAP_KEEP / 2;
                    (gap.start..gap.start + half)
                        .chain(gap.end - half..gap.end)
                        .collect()
                };
                let new = kept.iter().filter(|line| !lines.contains(line)).count() as u64;
                if new > quiet_left {
                    continue;
                }
                quiet_left -= new;
                lines.extend(kept);
            }
        }
        wanted
            .into_iter()
            .filter(|(_, lines)| !lines.is_empty())
            .map(|(file, lines)| (file, lines.into_iter().collect()))
            .collect()
    }

    fn get(&self, file: &Path, line: u64) -> Option<&str> {
        self.lines
            .get(&(file.to_path_buf(), line))
            .map(String::as_str)
    }
}

/// How many records a timeline shows before a path's first move and after the
/// offending record.
pub const CONTEXT: u64 = 2;

/// The most records of one quiet stretch (between two moves) a report embeds: a longer
/// one keeps its first and last halves of this, and says how many it leaves out.
pub const GAP_KEEP: u64 = 200;

/// The most quiet records (neither moves, offending records nor context) a report
/// embeds in all, so that ten thousand findings over long traces keep the file small.
pub const QUIET_BUDGET: u64 = 50_000;

/// The lines a violation's timeline covers: from [`CONTEXT`] records before its path's
/// first move to [`CONTEXT`] records after the offending record at `line`. `None`
/// without a path or a line.
fn stretch(detail: &crate::diagnostic::ViolationDetail, line: u64) -> Option<std::ops::Range<u64>> {
    let first = detail.path.first()?.line.min(line);
    if line == 0 || first == 0 {
        return None;
    }
    Some(first.saturating_sub(CONTEXT).max(1)..line + CONTEXT + 1)
}

#[derive(Serialize)]
struct Data<'a> {
    summary: Counts,
    specs: Vec<SpecData<'a>>,
    findings: Vec<Finding>,
    /// The text of every record shown, once: by file (as findings name it) and line.
    texts: BTreeMap<String, BTreeMap<u64, &'a str>>,
}

#[derive(Serialize)]
struct Counts {
    specs: usize,
    traces: u64,
    records: u64,
    violations: u64,
    errors: u64,
    files: usize,
}

#[derive(Serialize)]
struct SpecData<'a> {
    name: &'a str,
    file: String,
}

#[derive(Serialize)]
struct Finding {
    code: &'static str,
    kind: &'static str,
    /// Index into `specs`, when the finding is about a loaded spec.
    spec: Option<usize>,
    spec_name: String,
    file: String,
    line: u64,
    pointer: String,
    trace: Option<String>,
    key: Option<String>,
    state: Option<String>,
    event: Option<String>,
    message: String,
    hint: Option<String>,
    rule: Option<String>,
    record: Option<String>,
    path: Vec<Move>,
    elided: u64,
    /// The lines the timeline covers, first and last (see [`stretch`]); `0, 0` for
    /// none. Their text is in [`Data::texts`] where it was kept.
    from: u64,
    to: u64,
}

#[derive(Serialize)]
struct Move {
    state: String,
    event: String,
    line: u64,
}

/// The HTML report of `run`, showing the trace lines in `snippets`.
pub fn render(run: &Run<'_>, snippets: &Snippets) -> String {
    let specs: Vec<SpecData<'_>> = run
        .specs
        .iter()
        .map(|spec| SpecData {
            name: spec.name,
            file: run.paths.name(spec.path),
        })
        .collect();
    let findings: Vec<Finding> = run
        .diagnostics()
        .map(|d| finding(run, snippets, d))
        .collect();
    let files = run.files.len();
    let data = Data {
        summary: Counts {
            specs: run.summary.specs,
            traces: run.summary.traces,
            records: run.summary.records,
            violations: run.summary.violations,
            errors: run.summary.errors,
            files,
        },
        specs,
        findings,
        texts: texts(run, snippets),
    };
    let json = serde_json::to_string(&data).expect("bug: report data always serializes");
    // In a script block only `</` can end it early; `<\/` reads the same to JSON.
    let json = json.replace("</", "<\\/");
    let mut graphs = String::new();
    for (index, spec) in run.specs.iter().enumerate() {
        if let Some(drawing) = &spec.graph {
            graphs.push_str(&format!(
                "<template id=\"graph-{index}\">{}</template>\n",
                strip_prolog(drawing)
            ));
        }
    }
    let verdict = if run.summary.errors > 0 {
        "errors"
    } else if run.summary.violations > 0 {
        "violations"
    } else {
        "every trace conforms"
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>tracegate report: {verdict}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>tracegate report <span id=\"verdict\" class=\"{class}\">{verdict}</span></h1>\
         <p class=\"version\">tracegate {version}</p>\n<dl id=\"counts\"></dl></header>\n\
         <section id=\"filters\"><label>spec <select id=\"f-spec\"><option value=\"\">all</option></select></label>\
         <label>code <select id=\"f-code\"><option value=\"\">all</option></select></label>\
         <label>file <select id=\"f-file\"><option value=\"\">all</option></select></label>\
         <span id=\"shown\"></span></section>\n\
         <main><section id=\"list\"><table><thead><tr><th>code</th><th>spec</th><th>place</th><th>message</th></tr></thead>\
         <tbody id=\"rows\"></tbody></table><nav id=\"pages\"><button id=\"prev\">◀ previous</button> \
         <span id=\"page\"></span> <button id=\"next\">next ▶</button></nav></section>\n\
         <section id=\"detail\"><p class=\"empty\">Choose a finding to see its timeline and the spec's graph.</p></section></main>\n\
         {graphs}<script type=\"application/json\" id=\"data\">{json}</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n",
        class = if run.summary.errors + run.summary.violations > 0 {
            "bad"
        } else {
            "good"
        },
        version = run.version,
    )
}

/// An SVG document without its XML declaration, to sit inside HTML.
fn strip_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(start) => &svg[start..],
        None => svg,
    }
}

fn finding(run: &Run<'_>, snippets: &Snippets, diagnostic: &Diagnostic) -> Finding {
    let masked = |text: &str| redact(text).into_owned();
    let (file, line, pointer, trace, record) = match (&diagnostic.trace, &diagnostic.spec) {
        (Some(site), _) => (
            run.paths.name(&site.file),
            site.loc.line,
            site.loc.pointer.to_string(),
            site.trace.as_deref().map(masked),
            snippets
                .get(&site.file, site.loc.line)
                .map(str::to_string)
                // A stream cannot be read again: the finding kept its record's text.
                .or_else(|| {
                    let kept = diagnostic.record_text.as_deref()?;
                    (site.loc.line > 0).then(|| super::cut_snippet(kept, site.loc.len))
                }),
        ),
        (None, Some(spec)) => (
            run.paths.name(&spec.source.path),
            spec.line_col().0 as u64,
            String::new(),
            None,
            None,
        ),
        (None, None) => (String::new(), 0, String::new(), None, None),
    };
    let spec_name = diagnostic
        .spec
        .as_ref()
        .map_or(String::new(), |s| s.spec.clone());
    let spec = run.specs.iter().position(|info| {
        info.graph.is_some()
            && diagnostic
                .spec
                .as_ref()
                .is_some_and(|s| s.spec == info.name && s.source.path == info.path)
    });
    let rule = diagnostic.spec.as_ref().map(|s| {
        let (line, column) = s.line_col();
        let text = s
            .source
            .text
            .get(s.span.start..s.span.end)
            .unwrap_or_default();
        let first = text.lines().next().unwrap_or_default();
        format!(
            "{}:{line}:{column}  {first}",
            run.paths.name(&s.source.path)
        )
    });
    let detail = diagnostic.violation.as_deref();
    let path = detail.map_or_else(Vec::new, |d| {
        d.path
            .iter()
            .map(|step| Move {
                state: step.state.clone(),
                event: step.event.clone(),
                line: step.line,
            })
            .collect()
    });
    let shown = match (detail, &diagnostic.trace) {
        (Some(detail), Some(site)) => stretch(detail, site.loc.line),
        _ => None,
    };
    let (from, to) = shown.map_or((0, 0), |lines| (lines.start, lines.end - 1));
    Finding {
        code: diagnostic.code.as_str(),
        kind: if diagnostic.is_violation() {
            "violation"
        } else if diagnostic.is_warning() {
            "warning"
        } else {
            "error"
        },
        spec,
        spec_name,
        file,
        line,
        pointer,
        trace,
        key: detail.and_then(|d| d.key.as_deref()).map(masked),
        state: detail.map(|d| d.state.clone()),
        event: detail.and_then(|d| d.event.clone()),
        message: masked(&diagnostic.message),
        hint: diagnostic.hint.as_deref().map(masked),
        rule,
        record,
        path,
        elided: detail.map_or(0, |d| d.path_elided),
        from,
        to,
    }
}

/// The text of every line in `snippets`, by file as findings name it, and line.
fn texts<'a>(run: &Run<'_>, snippets: &'a Snippets) -> BTreeMap<String, BTreeMap<u64, &'a str>> {
    let mut texts: BTreeMap<String, BTreeMap<u64, &'a str>> = BTreeMap::new();
    let mut names: BTreeMap<&Path, String> = BTreeMap::new();
    for ((file, line), text) in &snippets.lines {
        let name = names
            .entry(file.as_path())
            .or_insert_with(|| run.paths.name(file));
        texts
            .entry(name.clone())
            .or_default()
            .insert(*line, text.as_str());
    }
    texts
}

const STYLE: &str = r#"
:root { --ink: #212529; --muted: #868e96; --line: #dee2e6; --red: #c92a2a; --blue: #1c7ed6; --green: #2b8a3e; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--ink); }
header { padding: 12px 20px; border-bottom: 1px solid var(--line); }
h1 { font-size: 20px; margin: 0; }
#verdict { font-size: 14px; padding: 2px 8px; border-radius: 10px; color: #fff; vertical-align: middle; }
#verdict.bad { background: var(--red); } #verdict.good { background: var(--green); }
.version { color: var(--muted); margin: 2px 0 8px; }
#counts { display: flex; gap: 24px; margin: 0; }
#counts div { display: flex; flex-direction: column-reverse; }
#counts dt { color: var(--muted); font-size: 12px; } #counts dd { margin: 0; font-size: 20px; font-weight: 600; }
#filters { padding: 8px 20px; display: flex; gap: 16px; align-items: center; border-bottom: 1px solid var(--line); flex-wrap: wrap; }
#filters select { max-width: 320px; }
#shown { color: var(--muted); }
main { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); min-height: 70vh; }
#list { border-right: 1px solid var(--line); overflow: auto; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { position: sticky; top: 0; background: #f8f9fa; }
tbody tr { cursor: pointer; } tbody tr:hover { background: #f1f3f5; } tbody tr.open { background: #e7f5ff; }
td.code { font-family: ui-monospace, monospace; white-space: nowrap; }
td.violation { color: var(--red); } td.error { color: #e67700; } td.warning { color: #f08c00; }
td.place { font-family: ui-monospace, monospace; word-break: break-all; }
nav { padding: 8px; display: flex; gap: 8px; align-items: center; }
#detail { padding: 12px 20px; overflow: auto; }
#detail .empty { color: var(--muted); }
#detail h2 { font-size: 16px; margin: 0 0 4px; }
.meta { color: var(--muted); margin: 0 0 8px; font-family: ui-monospace, monospace; word-break: break-all; }
ol.timeline { list-style: none; padding: 0; margin: 0 0 12px; border-left: 3px solid var(--blue); }
ol.timeline li { padding: 4px 10px; margin: 0 0 4px; position: relative; }
ol.timeline li.other { color: var(--muted); border-left: 3px solid var(--line); margin-left: -3px; }
ol.timeline li.step { font-weight: 600; }
ol.timeline li.gap, ol.timeline li.omitted { color: var(--muted); border-left: 3px dotted var(--line); margin-left: -3px; }
ol.timeline li.gap button { font: inherit; color: var(--blue); background: none; border: 1px dashed var(--line); border-radius: 4px; padding: 2px 8px; cursor: pointer; }
ol.timeline li.offending { background: #fff5f5; border-left: 3px solid var(--red); margin-left: -3px; }
ol.timeline .move { font-family: ui-monospace, monospace; }
ol.timeline pre, .rule { margin: 2px 0 0; font: 12px/1.4 ui-monospace, monospace; white-space: pre-wrap; word-break: break-all; background: #f8f9fa; padding: 4px 6px; }
.rule { border-left: 3px solid var(--red); }
.graph svg { max-width: 100%; height: auto; }
.graph .hl path, .graph .hl rect, .graph .hl ellipse { stroke: var(--blue) !important; stroke-width: 3px; }
.graph .hit path, .graph .hit rect, .graph .hit polygon { stroke: var(--red) !important; stroke-width: 3px; }
"#;

const SCRIPT: &str = r#"
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("data").textContent);
  const PAGE = 100;
  // A quiet stretch longer than 2 * EDGE + 1 records shows EDGE at each end, the rest
  // behind a button.
  const EDGE = 2;
  const el = (tag, attrs, text) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const counts = document.getElementById("counts");
  for (const [name, value] of Object.entries(data.summary)) {
    const box = el("div", { id: "count-" + name });
    box.append(el("dd", {}, String(value)), el("dt", {}, name));
    counts.append(box);
  }
  const fill = (id, values) => {
    const select = document.getElementById(id);
    for (const v of [...new Set(values)].filter((v) => v !== "").sort()) select.append(el("option", { value: v }, v));
    select.addEventListener("change", () => { page = 0; update(); });
    return select;
  };
  const fSpec = fill("f-spec", data.findings.map((f) => f.spec_name));
  const fCode = fill("f-code", data.findings.map((f) => f.code));
  const fFile = fill("f-file", data.findings.map((f) => f.file));
  let page = 0, shown = [], open = -1;
  const rows = document.getElementById("rows");
  function update() {
    shown = [];
    data.findings.forEach((f, i) => {
      if ((fSpec.value === "" || f.spec_name === fSpec.value) &&
          (fCode.value === "" || f.code === fCode.value) &&
          (fFile.value === "" || f.file === fFile.value)) shown.push(i);
    });
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    document.getElementById("shown").textContent = shown.length + " of " + data.findings.length + " findings";
    document.getElementById("page").textContent = "page " + (page + 1) + " of " + pages;
    document.getElementById("prev").disabled = page === 0;
    document.getElementById("next").disabled = page >= pages - 1;
    rows.replaceChildren();
    for (const i of shown.slice(page * PAGE, (page + 1) * PAGE)) {
      const f = data.findings[i];
      const row = el("tr", { "data-index": String(i) });
      if (i === open) row.className = "open";
      row.append(el("td", { class: "code " + f.kind }, f.code), el("td", {}, f.spec_name),
        el("td", { class: "place" }, f.file + (f.line ? ":" + f.line : "")), el("td", {}, f.message));
      row.addEventListener("click", () => show(i));
      rows.append(row);
    }
  }
  document.getElementById("prev").addEventListener("click", () => { page -= 1; update(); });
  document.getElementById("next").addEventListener("click", () => { page += 1; update(); });
  function show(i) {
    open = i;
    const f = data.findings[i];
    const detail = document.getElementById("detail");
    detail.replaceChildren();
    detail.append(el("h2", {}, f.code + ": " + f.message));
    const meta = [f.file + (f.line ? ":" + f.line : "") + (f.pointer ? " " + f.pointer : "")];
    if (f.spec_name) meta.push("spec " + f.spec_name);
    if (f.trace) meta.push("trace " + f.trace);
    if (f.key) meta.push("key " + f.key);
    detail.append(el("p", { class: "meta" }, meta.join(" · ")));
    if (f.hint) detail.append(el("p", {}, "help: " + f.hint));
    const list = el("ol", { class: "timeline" });
    if (f.elided) list.append(el("li", {}, "… " + f.elided + " earlier moves not kept"));
    const texts = data.texts[f.file] || {};
    const moves = new Map();
    for (const m of f.path) {
      if (!moves.has(m.line)) moves.set(m.line, []);
      moves.get(m.line).push(m);
    }
    const offending = () => {
      const last = el("li", { class: "offending" });
      const what = f.state ? (f.event ? "in " + f.state + ", " + f.event + " ✗" : "the trace ends in " + f.state + " ✗") : "✗";
      last.append(el("div", { class: "move" }, (f.line ? "line " + f.line + ": " : "") + what));
      if (f.record) last.append(el("pre", {}, f.record));
      return last;
    };
    const record = (line) => {
      const here = moves.get(line);
      const item = el("li", { class: here ? "step" : "other" });
      item.append(el("div", { class: "move" }, "line " + line + ": " +
        (here ? here.map((m) => "in " + m.state + ", " + m.event).join("; ") : "not a move of this instance")));
      if (texts[line] !== undefined) item.append(el("pre", {}, texts[line]));
      return item;
    };
    // Quiet records from..to (inclusive), each with its text; a run the report did not
    // keep is one line saying how many records it holds.
    const quiet = (from, to) => {
      const items = [];
      let missing = 0;
      const flush = (line) => {
        if (missing) items.push(el("li", { class: "omitted" }, "… " + missing + " records not in this report (lines " + (line - missing) + "–" + (line - 1) + ")"));
        missing = 0;
      };
      for (let line = from; line <= to; line++) {
        if (texts[line] === undefined) { missing++; continue; }
        flush(line);
        items.push(record(line));
      }
      flush(to + 1);
      return items;
    };
    if (!f.from) {
      for (const [, here] of [...moves].sort((a, b) => a[0] - b[0])) list.append(record(here[0].line));
      if (f.line || f.record) list.append(offending());
    } else {
      // Records past the end of the file have no text: they are not shown.
      // The context after the offending record is always kept, so a line without text
      // there is past the end of the file.
      let last = f.line;
      while (last < f.to && texts[last + 1] !== undefined) last++;
      const anchors = [...new Set([...moves.keys(), f.line])].filter((l) => l >= f.from && l <= last).sort((a, b) => a - b);
      let next = f.from;
      const stretch = (from, to) => {
        if (to < from) return;
        if (to - from + 1 <= 2 * EDGE + 1) { list.append(...quiet(from, to)); return; }
        list.append(...quiet(from, from + EDGE - 1));
        const hidden = [from + EDGE, to - EDGE];
        const gap = el("li", { class: "gap" });
        const button = el("button", {}, "show " + (hidden[1] - hidden[0] + 1) + " records that are not moves (lines " + hidden[0] + "–" + hidden[1] + ")");
        button.addEventListener("click", () => gap.replaceWith(...quiet(hidden[0], hidden[1])));
        gap.append(button);
        list.append(gap);
        list.append(...quiet(to - EDGE + 1, to));
      };
      for (const line of anchors) {
        stretch(next, line - 1);
        list.append(line === f.line ? offending() : record(line));
        next = line + 1;
      }
      stretch(next, last);
    }
    detail.append(list);
    if (f.rule) detail.append(el("div", { class: "rule" }, "rule: " + f.rule));
    if (f.spec !== null) {
      const template = document.getElementById("graph-" + f.spec);
      const graph = el("div", { class: "graph" });
      graph.append(template.content.cloneNode(true));
      highlight(graph, f);
      detail.append(graph);
    }
    update();
  }
  function highlight(graph, f) {
    const states = new Set(f.path.map((m) => m.state));
    if (f.state) states.add(f.state);
    for (const s of states) {
      const node = [...graph.querySelectorAll("g[id]")].find((g) => g.id === "state-" + s);
      if (node) node.classList.add("hl");
    }
    const moves = f.path.map((m, n) => [m.state, n + 1 < f.path.length ? f.path[n + 1].state : f.state, m.event]);
    for (const g of graph.querySelectorAll("g.edge")) {
      const title = g.querySelector("title");
      if (!title) continue;
      const text = title.textContent;
      const arrow = text.indexOf(" -> "), colon = text.indexOf(": ", arrow);
      if (arrow < 0 || colon < 0) continue;
      const from = text.slice(0, arrow), to = text.slice(arrow + 4, colon);
      const events = text.slice(colon + 2).split(/,\s*|\s+\|\s+|\n/).map((e) => e.trim());
      if (moves.some(([a, b, e]) => a === from && b === to && events.includes(e))) g.classList.add("hl");
      if (f.event && from === f.state && to.startsWith(":forbid") && events.includes(f.event)) g.classList.add("hit");
    }
  }
  update();
})();
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::{Step, ViolationDetail};

    fn detail(lines: &[u64]) -> ViolationDetail {
        ViolationDetail {
            key: None,
            state: "s".into(),
            event: Some("e".into()),
            allowed: Vec::new(),
            path: lines
                .iter()
                .map(|&line| Step {
                    state: "s".into(),
                    event: "e".into(),
                    line,
                    file: None,
                })
                .collect(),
            path_elided: 0,
        }
    }

    #[test]
    fn the_timeline_runs_from_before_the_first_move_to_after_the_offending_record() {
        assert_eq!(stretch(&detail(&[3, 7]), 9), Some(1..12));
        assert_eq!(stretch(&detail(&[10, 700_000]), 900_000), Some(8..900_003));
        assert_eq!(stretch(&detail(&[]), 9), None, "no path, no timeline");
        assert_eq!(stretch(&detail(&[1]), 0), None, "no offending line");
    }

    #[test]
    fn finding_text_cannot_close_the_script_block() {
        use crate::diagnostic::render::run::{Paths, Run};
        use crate::diagnostic::{Code, Diagnostic, Summary};
        let problems = [Diagnostic::new(Code::NoInput, "</script><script>alert(1)")];
        let paths = Paths {
            base: PathBuf::from("/"),
            root: PathBuf::from("/"),
        };
        let run = Run {
            version: "0",
            specs: Vec::new(),
            problems: &problems,
            files: Vec::new(),
            summary: Summary::default(),
            paths: &paths,
        };
        let page = render(&run, &Snippets::default());
        assert_eq!(
            page.matches("</script>").count(),
            2,
            "the data block and the script"
        );
        assert!(page.contains("<\\/script><script>alert(1)"));
    }
}
