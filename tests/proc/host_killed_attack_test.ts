/**
 * A host killed outright (issue 26 §1): `setpriv --pdeathsig` reaches direct children only, so
 * `sh.exec("sleep 100 & wait")`'s `sleep` — and a daemon the command detached — outlived a
 * SIGKILLed `agent-block`. The lifeline (`src/proc/lifeline.ts`) ends them: its sentinel sees
 * the host's pipe close and SIGKILLs every process carrying the host's tags.
 *
 * Real processes: an `agent-block` run starts a background job and two detached daemons
 * (`writeDaemonScript`), says their pids in files, and is SIGKILLed; each must then be gone. The
 * wait for that is generous (30 s) and only tells "ended" from "never": nothing else ends a
 * `sleep 300` in that time. Where a cgroup v2 hierarchy is writable (root), the run process is in
 * a cgroup of its own (`src/proc/run_cgroup.ts`), and a daemon that also cleared its environment
 * ends with it; the cgroup is removed after the run, however it ended.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CLI,
  DAEMON_PID_FILES,
  lacksProcessTools,
  pathExists,
  processAlive,
  REPO_ROOT,
  tempDir,
  waitFor,
  writeDaemonScript,
} from "../helpers.ts";
import { currentCgroupDir, RUN_CGROUP_PREFIX } from "../../src/proc/run_cgroup.ts";

const skip = lacksProcessTools("setsid");

/** `agent-block -s <script>` in `dir`, with nothing of this process's environment but `PATH`. */
function hostCommand(dir: string, script: string, output: "null" | "piped"): Deno.Command {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "-s", script],
    cwd: dir,
    env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    clearEnv: true,
    stdout: output,
    stderr: output,
  });
}

/**
 * Starts `agent-block -s host.lua` (`lua` written into `dir`) and waits until each of `files` in
 * `dir` holds a pid; returns the host and those pids.
 */
async function startHost(
  dir: string,
  lua: string,
  files: readonly string[],
): Promise<{ host: Deno.ChildProcess; pids: number[] }> {
  Deno.writeTextFileSync(join(dir, "host.lua"), lua);
  const host = hostCommand(dir, "host.lua", "null").spawn();
  const have = (f: string) => {
    try {
      return Deno.readTextFileSync(join(dir, f)).trim() !== "";
    } catch {
      return false;
    }
  };
  await waitFor(() => files.every(have), { what: `${files.join(", ")} to be written`, timeoutMs: 60_000 });
  return { host, pids: files.map((f) => Number(Deno.readTextFileSync(join(dir, f)).trim())) };
}

Deno.test({
  name: "attack: a SIGKILLed agent-block leaves no grandchild: a background job and detached daemons end",
  ignore: skip !== undefined,
  fn: async () => {
    const dir = await tempDir();
    const daemons = writeDaemonScript(dir);
    const { host, pids } = await startHost(
      dir,
      `std.task.spawn(sh.exec, "sleep 300 & echo $! > job.tmp; mv job.tmp job.pid; wait", { timeout = 3600 })
       sh.exec("sh ${daemons} ${dir}")
       std.task.sleep(3600)`,
      ["job.pid", ...DAEMON_PID_FILES],
    );
    assert.ok(pids.every(processAlive), "started");
    host.kill("SIGKILL");
    assert.equal((await host.status).signal, "SIGKILL");
    try {
      await waitFor(() => !pids.some(processAlive), {
        what: `the host's grandchildren (${pids.join(", ")}) to end`,
        timeoutMs: 30_000,
      });
    } finally {
      for (const p of pids.filter(processAlive)) Deno.kill(p, "SIGKILL"); // a failing run cleans up
    }
  },
});

/** Why a run host cannot have a cgroup of its own here, or undefined when it can (a probe's mkdir). */
function cgroupProblem(): string | undefined {
  if (skip) return skip;
  const parent = currentCgroupDir();
  if ("why" in parent) return parent.why;
  const probe = join(parent.dir, `${RUN_CGROUP_PREFIX}probe-${crypto.randomUUID()}`);
  try {
    Deno.mkdirSync(probe);
    Deno.removeSync(probe);
    return undefined;
  } catch (e) {
    return `cgroup v2 not writable here: ${(e as Error).message}`;
  }
}

const noCgroup = cgroupProblem();
if (noCgroup !== undefined) {
  console.warn(`host_killed_attack_test: the run-cgroup tests are skipped: ${noCgroup}`);
}

/** The run cgroup of `pid` (its `0::` line names `agent-block-<pid>`), as a directory. */
function runCgroupOf(pid: number): string | undefined {
  const line = Deno.readTextFileSync(`/proc/${pid}/cgroup`).split("\n").find((l) => l.startsWith("0::"));
  if (!line?.endsWith(`/${RUN_CGROUP_PREFIX}${pid}`)) return undefined;
  const parent = currentCgroupDir();
  return "dir" in parent ? join(parent.dir, `${RUN_CGROUP_PREFIX}${pid}`) : undefined;
}

Deno.test({
  name:
    "attack: a SIGKILLed agent-block leaves no daemon that detached and cleared its environment (its cgroup is killed)",
  ignore: noCgroup !== undefined,
  fn: async () => {
    const dir = await tempDir();
    const daemons = writeDaemonScript(dir);
    const { host, pids } = await startHost(
      dir,
      `sh.exec("sh ${daemons} ${dir} env-cleared")
       std.task.sleep(3600)`,
      [...DAEMON_PID_FILES, "env_cleared.pid"],
    );
    const cg = runCgroupOf(host.pid);
    try {
      assert.ok(
        cg !== undefined,
        `the host is not in a cgroup of its own: ${Deno.readTextFileSync(`/proc/${host.pid}/cgroup`)}`,
      );
      const members = Deno.readTextFileSync(join(cg, "cgroup.procs")).split("\n").map(Number);
      for (const p of pids) assert.ok(members.includes(p), `daemon ${p} is not in ${cg}`);
      host.kill("SIGKILL");
      assert.equal((await host.status).signal, "SIGKILL");
      await waitFor(() => !pids.some(processAlive), {
        what: `the daemons (${pids.join(", ")}) to end`,
        timeoutMs: 30_000,
      });
      await waitFor(() => !pathExists(cg), { what: `${cg} to be removed`, timeoutMs: 30_000 });
    } finally {
      try {
        host.kill("SIGKILL");
      } catch { /* ended */ }
      for (const p of pids.filter(processAlive)) Deno.kill(p, "SIGKILL"); // a failing run cleans up
    }
  },
});

Deno.test({
  name: "a run host's cgroup is removed after an ordinary end, and a child run gets one of its own inside it",
  ignore: noCgroup !== undefined,
  fn: async () => {
    const dir = await tempDir();
    Deno.writeTextFileSync(
      join(dir, "inner.lua"),
      `local f = io.open("inner.cgroup", "w"); f:write(sh.exec("cat /proc/self/cgroup").stdout); f:close()`,
    );
    Deno.writeTextFileSync(
      join(dir, "outer.lua"),
      `local r = sh.exec("cat /proc/self/cgroup")
       local f = io.open("outer.cgroup", "w"); f:write(r.stdout); f:close()
       local inner = sh.exec("'${Deno.execPath()}' run -A --quiet '${CLI}' -s inner.lua")
       assert(inner.code == 0, inner.stderr)`,
    );
    const host = hostCommand(dir, "outer.lua", "piped").spawn();
    const out = await host.output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const outer = Deno.readTextFileSync(join(dir, "outer.cgroup"));
    const inner = Deno.readTextFileSync(join(dir, "inner.cgroup"));
    const mine = `/${RUN_CGROUP_PREFIX}${host.pid}`;
    assert.match(outer, new RegExp(`^0::.*${mine}$`, "m"));
    assert.match(
      inner,
      new RegExp(`^0::.*${mine}/${RUN_CGROUP_PREFIX}\\d+$`, "m"),
      "nested in the outer run's",
    );
    const parent = currentCgroupDir();
    assert.ok("dir" in parent);
    const cg = join(parent.dir, mine);
    await waitFor(() => !pathExists(cg), { what: `${cg} to be removed`, timeoutMs: 30_000 });
  },
});

Deno.test({
  name:
    "attack: a host SIGKILLed right after a later registry's first spawn leaves no detached grandchild of it",
  ignore: skip !== undefined,
  fn: async () => {
    // Two registries in one process (a program running two runs in process); the second one's
    // first command detaches a daemon and the host never returns to its event loop before it is
    // killed. The sentinel learns the second registry's tag from a line on its pipe, written
    // before that spawn: a write on a stream already started goes out at once (only the first
    // write on a fresh stream waits for the event loop, why the run cgroup is named on the
    // sentinel's command line instead).
    const dir = await tempDir();
    const script = join(dir, "host.ts");
    Deno.writeTextFileSync(
      script,
      `import { ProcessGroups } from ${JSON.stringify(join(REPO_ROOT, "src/proc/group.ts"))};
const first = new ProcessGroups(500, { PATH: "/usr/bin:/bin" });
await first.spawn({ cmd: ["/bin/true"], cwd: ${JSON.stringify(dir)}, stdout: "null", stderr: "null" }).status;
const second = new ProcessGroups(500, { PATH: "/usr/bin:/bin" });
second.spawn({
  cmd: ["/bin/sh", "-c", "( setsid sh -c 'sleep 300 & echo $! > daemon.tmp; mv daemon.tmp daemon.pid' & ) </dev/null >/dev/null 2>&1"],
  cwd: ${JSON.stringify(dir)},
  stdout: "null",
  stderr: "null",
});
// never back to the event loop: the test kills this process once the daemon's pid is written
const until = Date.now() + 120_000;
while (Date.now() < until) {
  try { Deno.statSync(${JSON.stringify(join(dir, "daemon.pid"))}); Deno.writeTextFileSync(${
        JSON.stringify(join(dir, "ready"))
      }, ""); Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 120_000); } catch { /* not yet */ }
}
`,
    );
    const host = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "--config", join(REPO_ROOT, "deno.json"), script],
      cwd: dir,
      env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      clearEnv: true,
      stdout: "null",
      stderr: "inherit",
    }).spawn();
    await waitFor(() => pathExists(join(dir, "ready")), { what: "the daemon's pid", timeoutMs: 60_000 });
    const daemon = Number(Deno.readTextFileSync(join(dir, "daemon.pid")).trim());
    assert.ok(processAlive(daemon), "started");
    host.kill("SIGKILL");
    assert.equal((await host.status).signal, "SIGKILL");
    try {
      await waitFor(() => !processAlive(daemon), { what: `the daemon ${daemon} to end`, timeoutMs: 30_000 });
    } finally {
      if (processAlive(daemon)) Deno.kill(daemon, "SIGKILL");
    }
  },
});
