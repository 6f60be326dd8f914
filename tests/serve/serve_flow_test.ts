/**
 * `agent-block serve` running a flow job (`flow = ...` in a job.toml): the flow runs through its
 * blocks, the run's result file holds the final context, the flow is recorded in the project's
 * kernel (so `flow runs` lists it), and a flow that fails is a failed run naming the step.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runCli } from "../helpers.ts";
import { jobProject, startManager, waitForEnd } from "./serve_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };
const P = (at: string) => ({ op: "path", at });
const flow = (ref: string) =>
  JSON.stringify({
    id: `${ref}-flow`,
    agents: [{ name: ref, kind: "block", spec: { block: ref } }],
    flow: { kind: "step", ref, in: P("$.word"), out: P("$.out") },
  });

Deno.test({
  name: "serve: a flow job runs its Blueprint (result: the final context); a failing flow is a failed run",
  ...opts,
  fn: async () => {
    const p = await jobProject({
      "blocks/up.lua": "return string.upper(_PROMPT)",
      "blocks/broken.lua": 'error("no luck", 0)',
      "blocks/nightly.lua": "return 'the job carrier'",
      "blocks/nightly.job.toml": 'every = "1h"\nflow = "flows/up.bp.json"\n[init]\nword = "hi"\n',
      "blocks/failing.lua": "return 'the job carrier'",
      "blocks/failing.job.toml": 'every = "1h"\nflow = "flows/broken.bp.json"\ninit = { word = "x" }\n',
      "flows/up.bp.json": flow("up"),
      "flows/broken.bp.json": flow("broken"),
    });
    const m = await startManager(p.root, p.home);
    try {
      const ok = await waitForEnd(m, "nightly");
      assert.equal(ok.state, "ok", JSON.stringify(ok));
      const result = JSON.parse(Deno.readTextFileSync(ok.result_file));
      assert.deepEqual(result.ctx, { word: "hi", out: "HI" });
      assert.equal(ok.result_file, join(p.home, "runs", "nightly", `${ok.run_id}.json`));
      const bad = await waitForEnd(m, "failing");
      assert.equal(bad.state, "failed");
      assert.equal(bad.exit_code, 1);
      assert.match(bad.message, /flow run flow-\S+ failed at step 'broken': step 'broken' raised: no luck/);
      const runs = await runCli(["flow", "runs", "--json", "-p", p.root], {
        env: { AGENT_BLOCK_HOME: p.home },
      });
      assert.equal(runs.code, 0, runs.stderr);
      const states = runs.stdout.trim().split("\n").map((l) => JSON.parse(l)).map((r) => [r.flow, r.state])
        .sort();
      assert.deepEqual(states, [["broken-flow", "failed"], ["up-flow", "completed"]]);
      assert.equal(
        result.flow_run,
        JSON.parse(runs.stdout.trim().split("\n").find((l) => l.includes("up-flow"))!).run,
      );
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});

Deno.test({
  name: "attack: serve a flow job never runs unconfined once the manager sandboxes its runs",
  ...opts,
  fn: async () => {
    // A sandboxed job may write the project: a flow job planted (or kept) beside it must not run
    // its steps in the manager's own, unconfined process. Under the ratchet each step is a
    // confined child run: a step that tries to plant a library in the home's lib/ (read-only to
    // confined runs) is refused, and the flow still completes with what the step saw.
    const p = await jobProject({
      "blocks/plant.lua": `local f, err = io.open(os.getenv("AGENT_BLOCK_HOME") .. "/lib/planted.lua", "w")
if f then f:write("return 1") f:close() return "planted" end
return "refused: " .. tostring(err)`,
      "blocks/confined.lua": "return 'confined'",
      "blocks/confined.job.toml": "sandbox = true\n",
      "blocks/nightly.lua": "return 'the job carrier'",
      "blocks/nightly.job.toml": 'every = "1h"\nflow = "flows/plant.bp.json"\n[init]\nword = "hi"\n',
      "flows/plant.bp.json": flow("plant"),
    });
    Deno.mkdirSync(join(p.home, "lib"), { recursive: true });
    const m = await startManager(p.root, p.home);
    try {
      const run = await waitForEnd(m, "nightly");
      assert.equal(run.state, "ok", JSON.stringify(run));
      assert.equal(run.sandboxed, true);
      const result = JSON.parse(Deno.readTextFileSync(run.result_file));
      assert.match(String(result.ctx.out), /^refused: /);
      assert.throws(() => Deno.statSync(join(p.home, "lib", "planted.lua")), Deno.errors.NotFound);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});
