/**
 * `src/proc/tree.ts` with real processes: a child that ignores SIGTERM and has started a
 * grandchild in a session (and so a process group) of its own. `endTree` must end both. And a
 * tree's `since`: the walk for its tag finds what started from its child on (a grandchild that
 * left the group and lost its parent included), and does not look at older processes.
 */
import assert from "node:assert/strict";
import { ProcessGroups } from "../../src/proc/group.ts";
import { descendantGroups, endTree, members, startTicks } from "../../src/proc/tree.ts";

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

Deno.test({
  name: "tree: a tag's walk from `since` finds an orphaned grandchild and skips what started before",
  ignore: Deno.build.os !== "linux",
  sanitizeResources: false,
  fn: async () => {
    const procs = new ProcessGroups(1000, testEnv());
    // the grandchild leaves the group (setsid) and loses its parent (the shell exits at once)
    const p = procs.spawn({
      cmd: ["/bin/sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!"],
      stdout: "piped",
      stderr: "null",
    });
    const out = await new Response(p.child.stdout).text();
    await p.status;
    const grandchild = Number(out.trim());
    try {
      assert.ok(processAlive(grandchild));
      assert.equal(typeof p.since, "number", "the child's start was read at its spawn");
      assert.ok(startTicks(grandchild)! >= p.since!, "the grandchild started after the child");
      assert.deepEqual(members(p.tree()), [grandchild], "found by its tag alone, from the child's start");
      // a process that started before `since` is not looked at, whatever it carries
      const later = { tag: p.tag, since: startTicks(grandchild)! + 1 };
      assert.deepEqual(members(later), [], "the grandchild started before that `since`: not read");
      assert.deepEqual(members({ tag: p.tag }), [grandchild], "no `since`: every process is read");
    } finally {
      await procs.endAll();
      await waitFor(() => !processAlive(grandchild), {
        what: `grandchild ${grandchild} to end`,
        timeoutMs: 30_000,
      });
    }
  },
});
