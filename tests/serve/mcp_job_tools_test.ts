/**
 * The MCP job verbs (issue 16 §3): `agent-block mcp --serve-url URL` over stdio against a live
 * manager — the five tools listed and working; without `--serve-url` they are absent; a manager
 * that cannot be reached is a failed call that says so.
 */
import assert from "node:assert/strict";
import { connectStdio, freshProject, resultText } from "../mcp_server/mcp_helpers.ts";
import { startManager, waitForRun } from "./serve_helpers.ts";
import { writeTree } from "../helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "serve: the MCP job verbs call a live manager; absent without --serve-url; unreachable says so",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    writeTree(p.root, { "blocks/nightly.lua": 'return "nightly done"', "blocks/nightly.job.toml": "" });
    const m = await startManager(p.root, p.home);
    const s = await connectStdio(p.root, p.home, { extraArgs: ["--serve-url", m.url] });
    const plain = await connectStdio(p.root, p.home);
    const gone = await connectStdio(p.root, p.home, { extraArgs: ["--serve-url", "http://127.0.0.1:9"] });
    try {
      const names = (await s.client.listTools()).tools.map((t) => t.name).sort();
      assert.deepEqual(names, [
        "job_run",
        "jobs_list",
        "run_block",
        "run_flow",
        "run_get",
        "run_stop",
        "runs_list",
      ]);
      assert.deepEqual((await plain.client.listTools()).tools.map((t) => t.name), ["run_block", "run_flow"]);

      const jobs = JSON.parse(resultText(await s.client.callTool({ name: "jobs_list", arguments: {} })));
      assert.deepEqual(jobs.jobs.map((j: { name: string }) => j.name), ["nightly"]);
      const started = JSON.parse(
        resultText(await s.client.callTool({ name: "job_run", arguments: { job: "nightly" } })),
      );
      await waitForRun(m, started.run_id, "ok");
      const run = JSON.parse(
        resultText(await s.client.callTool({ name: "run_get", arguments: { run_id: started.run_id } })),
      );
      assert.equal(run.result, "nightly done");
      const runs = JSON.parse(
        resultText(await s.client.callTool({ name: "runs_list", arguments: { job: "nightly", limit: 5 } })),
      );
      assert.equal(runs.runs[0].run_id, started.run_id);
      const stop = await s.client.callTool({ name: "run_stop", arguments: { run_id: started.run_id } });
      assert.equal(stop.isError, true);
      assert.match(resultText(stop), /409: .*run_not_live/);
      const unknown = await s.client.callTool({ name: "job_run", arguments: { job: "nope" } });
      assert.equal(unknown.isError, true);
      assert.match(resultText(unknown), /404: .*unknown_job/);

      const down = await gone.client.callTool({ name: "jobs_list", arguments: {} });
      assert.equal(down.isError, true);
      assert.match(resultText(down), /the job manager at http:\/\/127\.0\.0\.1:9 cannot be reached/);
    } finally {
      await s.close();
      await plain.close();
      await gone.close();
      assert.equal(await m.stop(), 0);
    }
  },
});
