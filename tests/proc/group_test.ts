/** Process groups (src/proc/group.ts): whole groups end, SIGKILL after the grace period. */
import assert from "node:assert/strict";
import { ProcessGroups } from "../../src/proc/group.ts";

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return text.split("\n")[0];
}

function exists(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\S+ \(.*\) [ZX]/.test(stat);
  } catch {
    return false;
  }
}

Deno.test({
  name: "terminate ends a grandchild too, without waiting out the grace period",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const groups = new ProcessGroups(5000);
    const p = groups.spawn({
      cmd: ["/bin/sh", "-c", "sleep 30 & echo $!; wait"],
      stdout: "piped",
      stderr: "null",
    });
    const grandchild = Number(await firstLine(p.child.stdout));
    assert.ok(exists(grandchild));
    const t0 = performance.now();
    await p.terminate();
    await p.child.stdout.cancel().catch(() => undefined);
    assert.ok(!p.groupAlive(), "the group outlived terminate()");
    assert.ok(!exists(grandchild), "the grandchild outlived terminate()");
    // Waiting out the grace would take 5000 ms; half of it leaves room for a loaded machine.
    assert.ok(performance.now() - t0 < 2500, "terminate waited on a zombie instead of a live process");
    assert.equal(p.endedBy, "terminated");
  },
});

Deno.test({
  name: "a group that ignores SIGTERM is killed after the grace period; endAll empties the registry",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const groups = new ProcessGroups(300);
    const stubborn = groups.spawn({
      cmd: ["/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"],
      stdout: "piped",
      stderr: "null",
      label: "stubborn",
    });
    assert.equal(await firstLine(stubborn.child.stdout), "ready");
    const quick = groups.spawn({ cmd: ["/bin/sh", "-c", "sleep 30"], stdout: "null", stderr: "null" });
    assert.equal(groups.byLabel("stubborn"), stubborn);
    assert.equal(groups.size, 2);
    const t0 = performance.now();
    await groups.endAll();
    await stubborn.child.stdout.cancel().catch(() => undefined);
    const ms = performance.now() - t0;
    assert.ok(ms >= 290, `SIGKILL came before the grace period (${ms} ms)`);
    assert.equal(groups.size, 0);
    assert.ok(!stubborn.groupAlive() && !quick.groupAlive());
    assert.equal((await stubborn.status).signal, "SIGKILL");
    assert.equal((await quick.status).signal, "SIGTERM");
  },
});
