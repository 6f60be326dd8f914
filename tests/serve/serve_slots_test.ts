/**
 * `serve` takes a freed slot at once (issue 30 §1): a due run waiting for a slot starts when a
 * run ends, not at the next tick. The tick here is an hour, so only a run's end can start the
 * second and third jobs.
 */
import assert from "node:assert/strict";
import { jobProject, startManager, waitForEnd } from "./serve_helpers.ts";

Deno.test({
  name: "serve: a due run waiting for a slot starts when a run ends, not at the next tick",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const p = await jobProject({
      "blocks/a.lua": 'return "a"\n',
      "blocks/a.job.toml": 'every = "1h"\n',
      "blocks/b.lua": 'return "b"\n',
      "blocks/b.job.toml": 'every = "1h"\n',
      "blocks/c.lua": 'return "c"\n',
      "blocks/c.job.toml": 'every = "1h"\n',
    });
    // the first tick starts one run (one slot); the next tick is an hour away
    const m = await startManager(p.root, p.home, ["--tick", "1h", "--max-live", "1"]);
    try {
      const ends = [await waitForEnd(m, "a"), await waitForEnd(m, "b"), await waitForEnd(m, "c")];
      assert.deepEqual(ends.map((r) => [r.state, r.result]), [["ok", "a"], ["ok", "b"], ["ok", "c"]]);
      // one at a time, each started at or after the previous one's end
      const order = [...ends].sort((x, y) => x.started_ms - y.started_ms);
      for (let i = 1; i < order.length; i++) assert.ok(order[i].started_ms >= order[i - 1].ended_ms);
    } finally {
      assert.equal(await m.stop(), 0);
    }
  },
});
