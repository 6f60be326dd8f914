/**
 * `agent-block --request FILE` (what the child runner starts): a request file runs as sent, with
 * `--outcome` beside it; a malformed one is a usage error (exit 2) naming the file and the field,
 * before anything runs; flags that say what the run is cannot stand beside it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli, tempProject } from "../helpers.ts";
import { requestToJson } from "../../src/runner/request_json.ts";

Deno.test("--request: the request runs as sent (inline source, globals, labels); --outcome says how it ended", async () => {
  const project = await tempProject();
  Deno.writeTextFileSync(
    join(project, "req.json"),
    requestToJson({
      script: {
        source: "return _PROMPT .. ' ' .. _TASK.id .. ' ' .. std.env.get('MARK')",
        name: "inline.lua",
      },
      projectRoot: project,
      env: {},
      prompt: "hello",
      globals: { _TASK: { id: "T-7" } },
      labels: { job: "j" },
    }),
  );
  const r = await runCli(["--request", "req.json", "--outcome", "out.json", "--result", "res.txt"], {
    cwd: project,
    env: { MARK: "from-env" },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(Deno.readTextFileSync(join(project, "res.txt")), "hello T-7 from-env");
  assert.equal(JSON.parse(Deno.readTextFileSync(join(project, "out.json"))).status, "returned");
});

Deno.test("--request: a malformed file is exit 2 naming the field; run flags beside it are refused", async () => {
  const project = await tempProject({ "s.lua": "return 1" });
  Deno.writeTextFileSync(
    join(project, "bad.json"),
    JSON.stringify({
      version: 1,
      script: { path: "s.lua" },
      project_root: ".",
      env: {},
      limits: { memory_mb: -1 },
    }),
  );
  const bad = await runCli(["--request", "bad.json", "--outcome", "out.json"], { cwd: project });
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /bad\.json: field 'limits\.memory_mb' must be a positive number, got -1/);
  assert.throws(() => Deno.statSync(join(project, "out.json")), Deno.errors.NotFound);
  const missing = await runCli(["--request", "nope.json"], { cwd: project });
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read the request file nope\.json/);
  const both = await runCli(["--request", "bad.json", "-s", "s.lua"], { cwd: project });
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--script cannot be given with --request/);
});
