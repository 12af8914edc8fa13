// Opens tracegate's HTML report in real headless Chromium (Debian's package) and checks
// that it loads without console errors, shows the run's counts, filters, opens a
// finding's timeline and graph, and pages through ten thousand findings.
//
// Run by scripts/test-browser.sh, which builds tracegate and installs what this needs.
// TRACEGATE is the binary; CHROMIUM the browser (default /usr/bin/chromium).

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium } from "playwright-core";

const ROOT = resolve(import.meta.dirname, "..", "..");
const BIN = process.env.TRACEGATE ?? join(ROOT, "target", "debug", "tracegate");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
const scratch = mkdtempSync(join(tmpdir(), "tracegate-browser-"));
let context;

/** Runs tracegate in `cwd`; returns its JSON Lines findings and summary. */
function check(cwd, args, report) {
  const run = spawnSync(BIN, ["check", ...args, "--output", "json", "--report", report], {
    cwd,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  assert.ok(run.status === 0 || run.status === 1, `tracegate failed: ${run.stderr}`);
  const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l));
  return { findings: lines.filter((l) => l.type !== "summary"), summary: lines.at(-1) };
}

/** Opens `file` in a fresh page; returns the page and the errors it logged. */
async function open(file) {
  const page = await context.newPage();
  const errors = [];
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("request", (request) => {
    if (!request.url().startsWith("file:")) errors.push(`network request: ${request.url()}`);
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
  return { page, errors };
}

const count = async (page, name) => Number(await page.textContent(`#count-${name} dd`));

before(async () => {
  assert.ok(existsSync(BIN), `no tracegate binary at ${BIN}`);
  assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}`);
  context = await chromium.launchPersistentContext(join(scratch, "profile"), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
});

after(async () => {
  await context?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test("the shipped library's report shows its counts, filters and explains a finding", async () => {
  const report = join(scratch, "library.html");
  const { findings, summary } = check(ROOT, [], report);
  const { page, errors } = await open(report);
  assert.equal(await count(page, "violations"), summary.violations);
  assert.equal(await count(page, "errors"), summary.errors);
  assert.equal(await count(page, "specs"), summary.specs);
  const total = findings.length;
  assert.ok(total > 0);
  assert.equal(await page.textContent("#shown"), `${total} of ${total} findings`);
  assert.equal(await page.locator("#rows tr").count(), Math.min(total, 100));

  const spec = "seed_protocol";
  const ofSpec = findings.filter((f) => f.spec === spec).length;
  assert.ok(ofSpec > 0 && ofSpec < total, "the filter has something to remove");
  await page.selectOption("#f-spec", spec);
  assert.equal(await page.textContent("#shown"), `${ofSpec} of ${total} findings`);
  const specs = await page.locator("#rows tr td:nth-child(2)").allTextContents();
  assert.deepEqual(specs, Array(ofSpec).fill(spec));

  await page.selectOption("#f-code", "unexpected-event");
  const both = findings.filter((f) => f.spec === spec && f.code === "unexpected-event").length;
  assert.equal(await page.locator("#rows tr").count(), both);

  await page.click("#rows tr");
  assert.ok((await page.textContent("#detail h2")).startsWith("unexpected-event: "));
  assert.ok(await page.locator("#detail ol.timeline li.offending").count() === 1);
  assert.ok((await page.locator("#detail ol.timeline li").count()) >= 2, "the path, then the offending record");
  assert.ok(await page.locator("#detail .graph svg").count() === 1, "the spec's graph");
  assert.ok((await page.locator("#detail .graph .hl").count()) > 0, "the path is highlighted");

  await page.selectOption("#f-code", "forbidden-transition");
  await page.click("#rows tr");
  assert.ok((await page.textContent("#detail .rule")).startsWith("rule: specs/seed_protocol.tg:"));
  assert.equal(await page.locator("#detail .graph g.edge.hit").count(), 1, "the forbidden move is marked");
  assert.deepEqual(errors, []);
});

test("ten thousand findings are shown a page at a time", async () => {
  const dir = join(scratch, "many");
  mkdirSync(join(dir, "specs"), { recursive: true });
  mkdirSync(join(dir, "traces"), { recursive: true });
  writeFileSync(
    join(dir, "specs", "once.tg"),
    'spec once\nevent go = call act\ninitial idle\nidle -> done on go\nforbid done on go: "twice"\n',
  );
  const lines = [];
  for (let n = 0; n < 10000; n++) {
    lines.push(JSON.stringify({ kind: "call", tool: "act", case: n }));
    lines.push(JSON.stringify({ kind: "call", tool: "act", case: n }));
  }
  writeFileSync(join(dir, "traces", "many.jsonl"), lines.join("\n") + "\n");
  const report = join(scratch, "many.html");
  const { summary } = check(dir, ["--trace-by", "case"], report);
  assert.equal(summary.violations, 10000);
  const { page, errors } = await open(report);
  assert.equal(await count(page, "violations"), 10000);
  assert.equal(await page.textContent("#page"), "page 1 of 100");
  assert.equal(await page.locator("#rows tr").count(), 100);
  await page.click("#next");
  assert.equal(await page.textContent("#page"), "page 2 of 100");
  const first = await page.textContent("#rows tr td.place");
  assert.equal(first, "traces/many.jsonl:202");
  await page.click("#rows tr");
  // The move and the offending record, with two records of context on each side.
  const classes = await page.locator("#detail ol.timeline li").evaluateAll((lis) => lis.map((li) => li.className));
  assert.deepEqual(classes, ["other", "other", "step", "offending", "other", "other"]);
  assert.deepEqual(errors, []);
});

test("the timeline shows the records between the moves, marked as not moves", async () => {
  const dir = join(scratch, "between");
  mkdirSync(join(dir, "specs"), { recursive: true });
  mkdirSync(join(dir, "traces"), { recursive: true });
  writeFileSync(
    join(dir, "specs", "once.tg"),
    'spec once\nevent go = call act\ninitial idle\nidle -> done on go\nforbid done on go: "twice"\n',
  );
  writeFileSync(
    join(dir, "traces", "t.jsonl"),
    ['{"kind":"call","tool":"act"}', '{"kind":"call","tool":"other"}', '{"kind":"call","tool":"act"}', ""].join("\n"),
  );
  const report = join(scratch, "between.html");
  check(dir, [], report);
  const { page, errors } = await open(report);
  await page.click("#rows tr");
  const items = page.locator("#detail ol.timeline li");
  assert.deepEqual(await items.evaluateAll((lis) => lis.map((li) => li.className)), ["step", "other", "offending"]);
  assert.ok((await items.nth(1).textContent()).includes('"tool":"other"'));
  assert.deepEqual(errors, []);
});

test("a long quiet stretch is collapsed and expands on request", async () => {
  const dir = join(scratch, "quiet");
  mkdirSync(join(dir, "specs"), { recursive: true });
  mkdirSync(join(dir, "traces"), { recursive: true });
  writeFileSync(
    join(dir, "specs", "once.tg"),
    'spec once\nevent go = call act\ninitial idle\nidle -> done on go\nforbid done on go: "twice"\n',
  );
  // A move at line 3, 300 records that are not moves, the offending record at line 304,
  // and one more record after it.
  const lines = ['{"kind":"call","tool":"other","n":1}', '{"kind":"call","tool":"other","n":2}', '{"kind":"call","tool":"act"}'];
  for (let n = 0; n < 300; n++) lines.push(JSON.stringify({ kind: "call", tool: "other", n: 1000 + n }));
  lines.push('{"kind":"call","tool":"act"}', '{"kind":"call","tool":"other","n":9}');
  writeFileSync(join(dir, "traces", "t.jsonl"), lines.join("\n") + "\n");
  const report = join(scratch, "quiet.html");
  check(dir, [], report);
  const { page, errors } = await open(report);
  await page.click("#rows tr");
  const items = page.locator("#detail ol.timeline li");
  const classes = () => items.evaluateAll((lis) => lis.map((li) => li.className));
  // Context, the move, two records of the stretch at each end around the collapsed
  // rest, the offending record, and the one record after it (the file ends there).
  assert.deepEqual(await classes(), ["other", "other", "step", "other", "other", "gap", "other", "other", "offending", "other"]);
  const gap = page.locator("#detail li.gap button");
  assert.equal(await gap.textContent(), "show 296 records that are not moves (lines 6–301)");
  assert.ok((await items.nth(3).textContent()).includes('"n":1000'));
  await gap.click();
  // Expanded: the report kept the first and last 100 of the 300 quiet records; the
  // 100 in the middle are one line that counts them.
  const after = await classes();
  assert.equal(after.filter((c) => c === "gap").length, 0);
  assert.equal(after.filter((c) => c === "omitted").length, 1);
  assert.equal(after.filter((c) => c === "other").length, 2 + 200 + 1);
  const omitted = await page.textContent("#detail li.omitted");
  assert.equal(omitted, "… 100 records not in this report (lines 104–203)");
  assert.ok((await items.nth(5).textContent()).includes('"n":1002'));
  assert.deepEqual(errors, []);
});
