/** `job.toml` discovery and parsing (`src/serve/job_file.ts`): durations, both layouts, every bad file named. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseDuration, parseJobFile, scanJobs } from "../../src/serve/job_file.ts";
import { tempProject } from "../helpers.ts";

Deno.test("job_file: durations", () => {
  assert.equal(parseDuration("30s"), 30_000);
  assert.equal(parseDuration("2m"), 120_000);
  assert.equal(parseDuration("1h"), 3_600_000);
  assert.equal(parseDuration("1h30m"), 5_400_000);
  assert.equal(parseDuration("500ms"), 500);
  assert.equal(parseDuration("1m30s"), 90_000);
  for (const bad of ["", "0s", "5", "1x", "m", "30m1h", "1.5h", "-1s", "1h 30m"]) {
    assert.equal(parseDuration(bad), undefined, bad);
  }
});

Deno.test("job_file: keys, defaults and every bad value named with its line", () => {
  const ok = parseJobFile("d", "/p/d.lua", "/p/d.job.toml", 'every = "2m"\nprompt = "go"\n');
  assert.ok("job" in ok);
  assert.equal(ok.job.everyMs, 120_000);
  assert.equal(ok.job.timeoutMs, 600_000);
  assert.equal(ok.job.prompt, "go");
  const cases: [string, number | undefined, RegExp][] = [
    ['every = "2m"\nevry = "1h"\n', 2, /unknown key 'evry'/],
    ['timeout = "soon"\n', 1, /'timeout' is not a duration: 'soon'/],
    ["every = 5\n", 1, /'every' must be a string/],
    ['prompt = "unterminated\n', 1, /not valid TOML/],
    ['\n\nevery = = "1s"\n', 3, /not valid TOML/],
  ];
  for (const [text, line, message] of cases) {
    const r = parseJobFile("d", "/p/d.lua", "/p/d.job.toml", text);
    assert.ok("error" in r, text);
    assert.equal(r.error.line, line, text);
    assert.match(r.error.message, message);
    assert.equal(r.error.file, "/p/d.job.toml");
  }
});

Deno.test("job_file: a misspelt key gets a did-you-mean, and every problem of a file is reported at once", () => {
  const text = 'evry = "1h"\ntimeout = "soon"\nprompt = 3\nsandbox = "yes"\n';
  const r = parseJobFile("d", "/p/d.lua", "/p/d.job.toml", text);
  assert.ok("error" in r);
  assert.deepEqual(r.error.problems.map((p) => p.line), [1, 2, 3, 4]);
  assert.match(r.error.problems[0].message, /^unknown key 'evry' \(did you mean 'every'\?\)/);
  assert.equal(r.error.line, 1);
  assert.match(
    r.error.message,
    /^unknown key 'evry' \(did you mean 'every'\?\).*; and line 2: 'timeout' is not a duration: 'soon'.*; line 3: 'prompt' must be a string, got 3; line 4: 'sandbox' must be true or false, got "yes"$/,
  );
  const far = parseJobFile("d", "/p/d.lua", "/p/d.job.toml", 'schedule = "1h"\n');
  assert.ok("error" in far);
  assert.doesNotMatch(far.error.message, /did you mean/);
});

Deno.test("job_file: a job.toml beside init.lua or <name>.job.toml beside <name>.lua; other blocks are no jobs", async () => {
  const root = await tempProject({
    "blocks/drain/init.lua": "return 1",
    "blocks/drain/job.toml": 'every = "2m"',
    "blocks/report.lua": "return 2",
    "blocks/report.job.toml": 'timeout = "1m"',
    "blocks/plain.lua": "return 3",
    ".agent-block/blocks/broken.lua": "return 4",
    ".agent-block/blocks/broken.job.toml": "every = ",
  });
  const scan = scanJobs(root, join(root, "home"));
  assert.deepEqual(scan.jobs.map((j) => [j.name, j.everyMs, j.timeoutMs]), [
    ["drain", 120_000, 600_000],
    ["report", undefined, 60_000],
  ]);
  assert.equal(scan.errors.length, 1);
  assert.equal(scan.errors[0].name, "broken");
  assert.equal(scan.errors[0].file, join(root, ".agent-block/blocks/broken.job.toml"));
});

Deno.test("job_file: flow jobs — the Blueprint under the project, init as a table, and what a flow job refuses", () => {
  const ok = parseJobFile(
    "n",
    "/p/blocks/n.lua",
    "/p/blocks/n.job.toml",
    'flow = "flows/x.bp.json"\n[init]\nword = "hi"\n',
    "/p",
  );
  assert.ok("job" in ok);
  assert.equal(ok.job.flow, "/p/flows/x.bp.json");
  assert.deepEqual(ok.job.init, { word: "hi" });
  const confined = parseJobFile(
    "n",
    "/p/blocks/n.lua",
    "/p/blocks/n.job.toml",
    'flow = "f.json"\nsandbox = true\n',
    "/p",
  );
  assert.ok("job" in confined && confined.job.sandbox === true);
  const cases: [string, RegExp][] = [
    ['flow = "/etc/x.json"\n', /'flow' is a path inside the project/],
    ['flow = "../x.json"\n', /'flow' is a path inside the project/],
    ['flow = "f.json"\nprompt = "x"\n', /a flow job takes no 'prompt'/],
    ["[init]\na = 1\n", /'init' is a flow job's initial context: give 'flow' too/],
    ['flow = "f.json"\ninit = 3\n', /'init' must be a table/],
  ];
  for (const [text, message] of cases) {
    const r = parseJobFile("n", "/p/blocks/n.lua", "/p/blocks/n.job.toml", text, "/p");
    assert.ok("error" in r, text);
    assert.match(r.error.message, message);
  }
});
