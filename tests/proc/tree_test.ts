/**
 * `src/proc/tree.ts` with real processes: a child that ignores SIGTERM and has started a
 * grandchild in a session (and so a process group) of its own. `endTree` must end both.
 */
import assert from "node:assert/strict";
import { ProcessGroups } from "../../src/proc/group.ts";
import { descendantGroups, endTree } from "../../src/proc/tree.ts";

import { processAlive, testEnv, waitFor } from "../helpers.ts";

Deno.test({
  name: "tree: endTree kills a SIGTERM-deaf child and the groups its descendants lead",
  sanitizeResources: false,
  fn: async () => {
    const procs = new ProcessGroups(1000, testEnv());
    const p = procs.spawn({
      cmd: ["/bin/sh", "-c", "trap '' TERM; setsid sleep 300 & echo $!; while :; do sleep 1; done"],
      stdout: "piped",
      stderr: "null",
    });
    const reader = p.child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let out = "";
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) break;
      out += value;
    }
    const grandchild = Number(out.trim());
    assert.ok(processAlive(grandchild));
    await waitFor(() => descendantGroups(p.pid).includes(grandchild), {
      what: "the grandchild's own group to show",
      timeoutMs: 60_000,
    });
    assert.ok(!descendantGroups(p.pid).includes(p.pid), "the child's own group is not listed");
    await endTree(p, 300);
    reader.cancel().catch(() => undefined);
    await waitFor(() => !processAlive(grandchild), {
      what: `grandchild ${grandchild} to end`,
      timeoutMs: 30_000,
    });
    assert.equal(processAlive(p.pid), false);
    await procs.endAll();
  },
});

Deno.test("tree: a pid without children has no descendant groups", () => {
  assert.deepEqual(descendantGroups(2 ** 22 + 12345), []);
});
