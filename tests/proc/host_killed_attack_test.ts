/**
 * A host killed outright (issue 26 §1): `setpriv --pdeathsig` reaches direct children only, so
 * `sh.exec("sleep 100 & wait")`'s `sleep` — and a daemon the command detached — outlived a
 * SIGKILLed `agent-block`. The lifeline (`src/proc/lifeline.ts`) ends them: its sentinel sees
 * the host's pipe close and SIGKILLs every process carrying the host's tags.
 *
 * Real processes: an `agent-block` run starts a background job and two detached daemons
 * (`writeDaemonScript`), says their pids in files, and is SIGKILLed; each must then be gone. The
 * wait for that is generous (30 s) and only tells "ended" from "never": nothing else ends a
 * `sleep 300` in that time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CLI,
  DAEMON_PID_FILES,
  lacksProcessTools,
  processAlive,
  tempDir,
  waitFor,
  writeDaemonScript,
} from "../helpers.ts";

const skip = lacksProcessTools("setsid");

Deno.test({
  name: "attack: a SIGKILLed agent-block leaves no grandchild: a background job and detached daemons end",
  ignore: skip !== undefined,
  fn: async () => {
    const dir = await tempDir();
    const daemons = writeDaemonScript(dir);
    Deno.writeTextFileSync(
      join(dir, "host.lua"),
      `std.task.spawn(sh.exec, "sleep 300 & echo $! > job.tmp; mv job.tmp job.pid; wait", { timeout = 3600 })
       sh.exec("sh ${daemons} ${dir}")
       std.task.sleep(3600)`,
    );
    const host = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", CLI, "-s", "host.lua"],
      cwd: dir,
      env: { NO_COLOR: "1", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
      clearEnv: true,
      stdout: "null",
      stderr: "null",
    }).spawn();
    const files = ["job.pid", ...DAEMON_PID_FILES];
    const have = (f: string) => {
      try {
        return Deno.readTextFileSync(join(dir, f)).trim() !== "";
      } catch {
        return false;
      }
    };
    await waitFor(() => files.every(have), { what: "the job and the daemons to start", timeoutMs: 60_000 });
    const pids = files.map((f) => Number(Deno.readTextFileSync(join(dir, f)).trim()));
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
