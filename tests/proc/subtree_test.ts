/**
 * A child subreaper's process table is its subtree (src/proc/tree.ts `limitTableToSubtree`, set
 * by src/proc/reaper.ts): run in a process of its own (the subreaper state is per process), a
 * host that adopts orphans lists only its descendants — no PID 1, not its own parent — and still
 * finds and ends, by tag, a daemon that double-forked out of a command that has exited (re-parented
 * to the host, so in its subtree).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { lacksProcessTools, processAlive, REPO_ROOT, tempDir } from "../helpers.ts";

const skip = lacksProcessTools("setsid");
if (skip) console.warn(`subtree_test: skipped: ${skip}`);

const SCRIPT = `
import { ProcessGroups } from ${JSON.stringify(join(REPO_ROOT, "src/proc/group.ts"))};
import { adoptOrphans } from ${JSON.stringify(join(REPO_ROOT, "src/proc/reaper.ts"))};
import { members, processTable } from ${JSON.stringify(join(REPO_ROOT, "src/proc/tree.ts"))};
adoptOrphans((m) => console.error(m));
const groups = new ProcessGroups(500, { PATH: "/usr/bin:/bin" });
// a daemon: fork, setsid, fork; the command and the middle process exit at once
const p = groups.spawn({
  cmd: ["/bin/sh", "-c", "( setsid sh -c 'sleep 300 & echo $! > daemon.tmp; mv daemon.tmp daemon.pid' & ) </dev/null >/dev/null 2>&1"],
  cwd: Deno.args[0],
  stdout: "null",
  stderr: "null",
});
await p.status;
const pidFile = Deno.args[0] + "/daemon.pid";
for (let i = 0; i < 600; i++) {
  try { Deno.statSync(pidFile); break; } catch { await new Promise((r) => setTimeout(r, 50)); }
}
const daemon = Number(Deno.readTextFileSync(pidFile).trim());
const table = processTable();
const pids = table.map((r) => r.pid);
const found = members({ tag: groups.id + "." });
await groups.endAll();
console.log(JSON.stringify({ daemon, pids, parent: Number(Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ")[1]), found }));
`;

Deno.test({
  name: "subtree: a subreaper lists its descendants only, and still ends a double-forked daemon by its tag",
  ignore: !!skip,
  fn: async () => {
    const dir = await tempDir();
    const script = join(dir, "host.ts");
    Deno.writeTextFileSync(script, SCRIPT);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", script, dir],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, err);
    const r = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!);
    assert.ok(r.pids.includes(r.daemon), `the re-parented daemon ${r.daemon} is in the table ${r.pids}`);
    assert.ok(!r.pids.includes(1), "PID 1 is not below the host");
    assert.ok(!r.pids.includes(r.parent), "nor is the host's own parent");
    assert.ok(r.found.includes(r.daemon), "the daemon is a member of the registry's trees by its tag");
    assert.ok(!processAlive(r.daemon), `daemon ${r.daemon} ended with the registry`);
  },
});
