/**
 * Ending many children at once (issue 26 §1): SIGTERM with N live `sh.exec` children took 4 s
 * for 20, 13 s for 100, 85 s for 200 and did not finish for 1000 — each child's ending walked the
 * whole process table, once to start and again every round of its wait. `endAll` now signals
 * every group first and waits once, each round reading the table once for all of them.
 *
 * No timing luck: half the children ignore SIGTERM, so the end must wait out the grace (a lower
 * bound that holds on any machine), and the upper bound is the grace plus a margin far above what
 * a loaded machine needs and far below what walking the table per child costs. The speed itself (1000 children within the grace plus a second)
 * is measured by `deno task bench proc` against a baseline of plain kills.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ProcessGroups } from "../../src/proc/group.ts";
import { CLI, processAlive, tempDir, waitFor } from "../helpers.ts";

const N = 300;
const GRACE_MS = 3000;
/**
 * Far above a loaded machine's need (ending 300 took the grace plus 0.13 s on a shared 2-core
 * machine), far below a walk of the table per child (the grace plus 20 s there).
 */
const MARGIN_MS = 10_000;

Deno.test({
  name: `attack: endAll ends ${N} children together: SIGTERM to all first, SIGKILL after one grace`,
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await tempDir();
    const groups = new ProcessGroups(GRACE_MS);
    const procs = [];
    for (let i = 0; i < N; i++) {
      // odd ones ignore SIGTERM (the disposition survives the exec); each says it is ready
      const body = `${i % 2 ? "trap '' TERM; " : ""}: > ${join(dir, String(i))}; exec sleep 1000`;
      procs.push(groups.spawn({ cmd: ["/bin/sh", "-c", body], stdout: "null", stderr: "null" }));
    }
    await waitFor(() => [...Deno.readDirSync(dir)].length === N, {
      what: `${N} children to start`,
      timeoutMs: 120_000,
    });
    const t0 = performance.now();
    await groups.endAll();
    const ms = performance.now() - t0;
    const statuses = await Promise.all(procs.map((p) => p.status));
    assert.ok(ms >= GRACE_MS - 10, `SIGKILL came before the grace (${ms | 0} ms)`);
    assert.ok(ms < GRACE_MS + MARGIN_MS, `ending ${N} children took ${ms | 0} ms (grace ${GRACE_MS})`);
    statuses.forEach((s, i) => assert.equal(s.signal, i % 2 ? "SIGKILL" : "SIGTERM", `child ${i}`));
    assert.deepEqual(
      procs.filter((p) => processAlive(p.pid)).map((p) => p.pid),
      [],
      "children outlived endAll",
    );
    assert.equal(groups.size, 0);
  },
});

Deno.test({
  name: "attack: SIGTERM to agent-block with 150 sh.exec children ends them all and exits 130",
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    const dir = await tempDir();
    const n = 150;
    Deno.writeTextFileSync(
      join(dir, "many.lua"),
      `for i = 1, ${n} do std.task.spawn(sh.exec, "echo $$ > pid." .. i .. "; exec sleep 1000", { timeout = 3600 }) end
       std.task.sleep(3600)`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", CLI, "-s", "many.lua"],
      cwd: dir,
      env: { NO_COLOR: "1", AGENT_BLOCK_TASK_GRACE_MS: String(GRACE_MS) },
      clearEnv: true,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const pids = () =>
      [...Deno.readDirSync(dir)].filter((e) => e.name.startsWith("pid.")).map((e) => {
        const text = Deno.readTextFileSync(join(dir, e.name)).trim();
        return text ? Number(text) : 0;
      });
    await waitFor(() => pids().filter((p) => p > 0).length === n, {
      what: `${n} commands to start`,
      timeoutMs: 120_000,
    });
    const t0 = performance.now();
    child.kill("SIGTERM");
    const out = await child.output();
    const ms = performance.now() - t0;
    assert.equal(out.code, 130, new TextDecoder().decode(out.stderr));
    // every command ends on SIGTERM: no grace to wait out, only the margin bounds it
    assert.ok(ms < GRACE_MS + MARGIN_MS, `ending ${n} commands took ${ms | 0} ms`);
    assert.deepEqual(pids().filter(processAlive), [], "commands outlived the run");
  },
});
