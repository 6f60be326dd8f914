/** Process groups (src/proc/group.ts): whole groups end, SIGKILL after the grace period. */
import { settingsFromEnv } from "../../src/config/env_settings.ts";
import assert from "node:assert/strict";
import { ProcessGroups } from "../../src/proc/group.ts";
import { RunEnv } from "../../src/run_env.ts";
import { processAlive } from "../helpers.ts";

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
    assert.ok(processAlive(grandchild));
    const t0 = performance.now();
    await p.terminate();
    await p.child.stdout.cancel().catch(() => undefined);
    assert.ok(!p.groupAlive(), "the group outlived terminate()");
    assert.ok(!processAlive(grandchild), "the grandchild outlived terminate()");
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

Deno.test({
  name: "spawn: the child leads a session and a process group of its own (its pid), the same pid that ran",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const groups = new ProcessGroups(1000);
    // /proc/self/stat of the shell: pid (1), ppid (4), pgrp (5), session (6)
    const p = groups.spawn({ cmd: ["/bin/sh", "-c", "cat /proc/$$/stat"], stdout: "piped", stderr: "null" });
    const stat = await new Response(p.child.stdout).text();
    await p.status;
    const [pid, , ppid, pgrp, sid] = [
      stat.split(" ")[0],
      ...stat.slice(stat.lastIndexOf(")") + 2).split(" "),
    ];
    assert.equal(Number(pid), p.pid, "the wrapper forked: the command is not the spawned pid");
    assert.equal(Number(ppid), Deno.pid);
    assert.equal(Number(pgrp), p.pid);
    assert.equal(Number(sid), p.pid);
    await groups.endAll();
  },
});

Deno.test({
  name: "terminate right after spawn ends the child, whether or not it has made its session yet",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const groups = new ProcessGroups(5000);
    for (let i = 0; i < 5; i++) {
      const p = groups.spawn({ cmd: ["/bin/sh", "-c", "sleep 30"], stdout: "null", stderr: "null" });
      const t0 = performance.now();
      await p.terminate();
      const status = await p.status;
      assert.ok(status.signal === "SIGTERM", `ended by ${status.signal ?? `exit ${status.code}`}`);
      // Waiting out the grace would take 5000 ms.
      assert.ok(performance.now() - t0 < 2500, "terminate waited out the grace period");
      assert.ok(!p.leftovers());
    }
    await groups.endAll();
  },
});

/** What `env` prints in a child of `groups`, as a record. */
async function childSees(
  groups: ProcessGroups,
  extra?: Record<string, string>,
): Promise<Record<string, string>> {
  const p = groups.spawn({ cmd: ["/usr/bin/env"], env: extra, stdout: "piped", stderr: "null" });
  const text = await new Response(p.child.stdout).text();
  await p.status;
  return Object.fromEntries(
    text.split("\n").filter(Boolean).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
  );
}

Deno.test("attack: a child reads the host's credentials (spawn: the run's environment, overlay included, minus them)", async () => {
  const env = new RunEnv({ PATH: "/usr/bin:/bin", BASE_ONLY: "b", ANTHROPIC_API_KEY: "sk-x", GONE: "g" });
  const groups = new ProcessGroups(1000, env);
  env.set("SET_LATER", "overlay");
  env.set("GONE", undefined);
  const seen = await childSees(groups, { EXPLICIT_KEY: "handed" });
  assert.equal(seen.BASE_ONLY, "b");
  assert.equal(seen.SET_LATER, "overlay", "what std.env.set put in the overlay reaches the child");
  assert.equal(seen.GONE, undefined, "an unset in the overlay hides the base variable");
  assert.equal(seen.ANTHROPIC_API_KEY, undefined);
  assert.equal(seen.EXPLICIT_KEY, "handed", "per-child variables are applied after the removal");
  assert.equal(Deno.env.get("SET_LATER"), undefined, "the process environment is untouched");
});

Deno.test("spawn: the run's AGENT_BLOCK_CHILD_ENV, parsed at the edge, is the registry's policy", async () => {
  const env = new RunEnv({
    PATH: "/usr/bin:/bin",
    AGENT_BLOCK_CHILD_ENV: "allowlist:KEEP",
    KEEP: "k",
    DROP: "d",
  });
  const childEnv = settingsFromEnv(env).childEnv;
  assert.deepEqual(childEnv, { kind: "allowlist", names: ["KEEP"] });
  const seen = await childSees(new ProcessGroups(1000, env, { childEnv }));
  assert.equal(seen.KEEP, "k");
  assert.equal(seen.DROP, undefined);
  assert.equal(seen.PATH, "/usr/bin:/bin");
});

Deno.test("spawn: a registry given no environment starts children with none but their tags", async () => {
  const groups = new ProcessGroups();
  const seen = await childSees(groups);
  assert.deepEqual(
    Object.keys(seen).filter((k) => k !== "PWD" && k !== "SHLVL" && k !== "_"),
    ["AGENT_BLOCK_PROC_TAGS"],
  );
  assert.equal(seen.AGENT_BLOCK_PROC_TAGS, `${groups.id}.1`);
});

Deno.test("spawn: a child's tags are the inherited ones, then its own; opts.env cannot drop them", async () => {
  const outer = "0123456789abcdef.7";
  const groups = new ProcessGroups(1000, { PATH: "/usr/bin:/bin", AGENT_BLOCK_PROC_TAGS: `${outer} junk` });
  const seen = await childSees(groups, { AGENT_BLOCK_PROC_TAGS: "" });
  assert.equal(seen.AGENT_BLOCK_PROC_TAGS, `${outer} ${groups.id}.1`);
});
