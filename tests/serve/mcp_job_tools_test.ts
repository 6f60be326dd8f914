/**
 * The MCP job verbs (issue 16 §3): `agent-block mcp --serve-url URL` over stdio against a live
 * manager — the five tools listed and working; without `--serve-url` they are absent; a manager
 * that cannot be reached is a failed call that says so. Every call is a kernel session of its own
 * (`src/mcp_server/call_record.ts`), read back from the project's kernel database (SQLite).
 */
import assert from "node:assert/strict";
import { connectStdio, freshProject, resultText } from "../mcp_server/mcp_helpers.ts";
import { startManager, waitForRun } from "./serve_helpers.ts";
import { writeTree } from "../helpers.ts";
import { closeStore, openExistingStore } from "../../src/knl/store.ts";
import { listSessions } from "../../src/knl/export.ts";
import { join } from "node:path";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name:
    "serve: the MCP job verbs call a live manager, each call a kernel session naming the run; absent without --serve-url; unreachable says so",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    writeTree(p.root, {
      // The job's run opens a kernel session of its own: the manager labels it with the run's id.
      "blocks/nightly.lua":
        'return require("knl").session({ owner = "nightly" }, function() return "nightly done" end)',
      "blocks/nightly.job.toml": "",
    });
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
      const startedCall = await s.client.callTool({ name: "job_run", arguments: { job: "nightly" } });
      const started = JSON.parse(resultText(startedCall));
      await waitForRun(m, started.run_id, "ok");
      const getCall = await s.client.callTool({ name: "run_get", arguments: { run_id: started.run_id } });
      const run = JSON.parse(resultText(getCall));
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
      const missing = await s.client.callTool({ name: "job_run", arguments: {} });
      assert.equal(missing.isError, true);

      // The kernel record: who called, the arguments, how the manager answered, the run concerned.
      const kernel = join(p.root, ".agent-block", "knl.sqlite");
      const store = openExistingStore(kernel);
      try {
        const read = (r: { _meta?: Record<string, unknown> }) => {
          const id = r._meta?.["agent-block/session"];
          assert.ok(typeof id === "string", `no session in ${JSON.stringify(r)}`);
          return store.read(id);
        };
        const ran = read(startedCall);
        assert.deepEqual(ran.map((e) => e.kind), ["session_open", "mcp_call", "mcp_result", "session_close"]);
        assert.deepEqual(ran[0].meta, { mcp_kind: "tool", mcp_name: "job_run" });
        assert.deepEqual(ran[1].data.arguments, { job: "nightly" });
        assert.deepEqual(ran[1].data.client, { name: "agent-block-test", version: "0" });
        assert.equal(ran[1].data.era, "2025");
        assert.deepEqual(
          [ran[2].data.outcome, ran[2].data.http_status, ran[2].data.run, ran[3].data.status],
          ["answered", 202, started.run_id, "ok"],
        );
        // The run it names is the manager's: the sessions that run opened carry its id.
        assert.deepEqual(listSessions(store, { labels: { run: started.run_id } }).map((x) => x.owner), [
          "nightly",
        ]);
        const got = read(getCall);
        assert.deepEqual([got[2].data.outcome, got[2].data.run], ["answered", started.run_id]);
        assert.equal((got[2].data.value as { result: string }).result, "nightly done");
        const stopped = read(stop);
        assert.deepEqual(
          [stopped[2].data.outcome, stopped[2].data.http_status, stopped[2].data.run, stopped[3].data.status],
          ["refused", 409, started.run_id, "error"],
        );
        assert.deepEqual(read(missing)[2].data.outcome, "invalid");
        // The unreachable manager's call (the third server, same project) is recorded as such.
        const unreached = read(down);
        assert.deepEqual([unreached[2].data.outcome, unreached[3].data.status], ["unreachable", "error"]);
        assert.equal(listSessions(store, { labels: { mcp_name: "jobs_list" } }).length, 2);
      } finally {
        closeStore(kernel);
      }
    } finally {
      await s.close();
      await plain.close();
      await gone.close();
      assert.equal(await m.stop(), 0);
    }
  },
});
