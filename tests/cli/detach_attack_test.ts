/**
 * Attacks on "every process a run started ends with the run" (issue 14 §3) through the real
 * `agent-block` process: detached daemons (`writeDaemonScript`) survive neither SIGTERM nor
 * SIGINT of the CLI, nor the run's end even when one of them cleared its environment (no tag to
 * find it by: the CLI is a child subreaper, `src/proc/reaper.ts`); and a host killed outright
 * (SIGKILL, no code of it runs) leaves neither its `sh.exec` child nor its MCP stdio child alive
 * (the parent-death signal, `src/proc/parent_death.ts`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  CLI,
  DAEMON_PID_FILES,
  lacksProcessTools,
  processAlive,
  runCli,
  tempDir,
  waitFor,
  writeDaemonScript,
} from "../helpers.ts";

const skip = lacksProcessTools("setsid");
if (skip) console.warn(`detach_attack_test (cli): skipped: ${skip}`);
const skipKill = lacksProcessTools("setpriv");
if (skipKill) console.warn(`detach_attack_test (cli): SIGKILL attack skipped: ${skipKill}`);

/** Waits for `files` in `dir` and returns the pids they hold. */
async function pidsIn(dir: string, files: readonly string[]): Promise<number[]> {
  await waitFor(() => files.every((f) => exists(join(dir, f))), {
    what: `${files.join(", ")} in ${dir}`,
    timeoutMs: 60_000,
  });
  return files.map((f) => Number(Deno.readTextFileSync(join(dir, f)).trim()));
}

function exists(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** Starts `agent-block -s block.lua` in `dir` (stdin closed, output piped). */
function startCli(dir: string, extra: string[] = []): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "-s", join(dir, "block.lua"), "-p", dir, ...extra],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function allGone(pids: number[], what: string): Promise<void> {
  await waitFor(() => pids.every((p) => !processAlive(p)), {
    what: `${what} (${pids.filter(processAlive).join(", ")} still alive)`,
    timeoutMs: 30_000,
  });
}

for (const sig of ["SIGTERM", "SIGINT"] as const) {
  Deno.test({
    name: `attack: detached daemons outlive a ${sig} of agent-block`,
    ignore: skip !== undefined,
    fn: async () => {
      const dir = await tempDir();
      writeDaemonScript(dir);
      Deno.writeTextFileSync(
        join(dir, "block.lua"),
        `sh.exec("sh daemons.sh '${dir}'")
         std.fs.write("${dir}/started", "")
         sh.exec("sleep 300", { timeout = 300 })`,
      );
      const child = startCli(dir);
      const pids = await pidsIn(dir, [...DAEMON_PID_FILES, "started"]);
      const daemons = pids.slice(0, -1);
      assert.ok(daemons.every(processAlive), "the daemons run before the signal");
      child.kill(sig);
      const r = await child.output();
      assert.equal(r.code, 130, new TextDecoder().decode(r.stderr));
      await allGone(daemons, `the daemons to end with agent-block's ${sig}`);
    },
  });
}

Deno.test({
  name: "attack: a daemon that detaches and clears its environment outlives the agent-block run",
  ignore: skip !== undefined,
  fn: async () => {
    const dir = await tempDir();
    writeDaemonScript(dir);
    Deno.writeTextFileSync(
      join(dir, "block.lua"),
      `local r = sh.exec("sh daemons.sh '${dir}' env-cleared")
       print(r.code)`,
    );
    const r = await runCli(["-s", join(dir, "block.lua"), "-p", dir], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "0\n", "the daemons started");
    const pids = await pidsIn(dir, [...DAEMON_PID_FILES, "env_cleared.pid"]);
    await allGone(pids, "every daemon, the one without an environment too, to end with the run");
  },
});

Deno.test({
  name: "attack: SIGKILL of agent-block leaves its sh.exec child and its MCP stdio child running",
  ignore: skipKill !== undefined,
  fn: async () => {
    const dir = await tempDir();
    const announce = (name: string) =>
      `echo $$ > '${dir}/${name}.tmp'; mv '${dir}/${name}.tmp' '${dir}/${name}'; exec sleep 300`;
    Deno.writeTextFileSync(
      join(dir, "block.lua"),
      `std.task.spawn(function() return sh.exec(${JSON.stringify(announce("sh.pid"))}, { timeout = 300 }) end)
       -- A server that never answers: the connect waits, its child runs.
       std.task.spawn(function()
         return pcall(mcp.connect, "mute", "/bin/sh", { "-c", ${
        JSON.stringify(announce("mcp.pid"))
      } }, { timeout = 300 })
       end)
       std.time.sleep(300)`,
    );
    const child = startCli(dir, ["--mcp-timeout-secs", "300"]);
    const pids = await pidsIn(dir, ["sh.pid", "mcp.pid"]);
    assert.ok(pids.every(processAlive), "both children run before the kill");
    child.kill("SIGKILL");
    const status = await child.status;
    await Promise.all([child.stdout.cancel(), child.stderr.cancel()]);
    assert.equal(status.signal, "SIGKILL");
    await allGone(pids, "the sh.exec and MCP children to die with their host");
  },
});

Deno.test({
  name: "reaper: detached jobs that exit are reaped, not left as zombies of agent-block",
  ignore: skip !== undefined,
  fn: async () => {
    const dir = await tempDir();
    // 20 background jobs outlive their shells (adopted by the CLI), then exit; the block counts
    // the zombie children of its host until none is left (bounded: 30 s).
    Deno.writeTextFileSync(
      join(dir, "block.lua"),
      `local host = sh.exec("echo $PPID").stdout:match("%d+")
       for _ = 1, 20 do sh.exec("sleep 0.1 > /dev/null 2>&1 &") end
       local function zombies()
         local n = 0
         for pid in sh.exec("ls /proc").stdout:gmatch("%d+") do
           local ok, s = pcall(std.fs.read, "/proc/" .. pid .. "/stat")
           local state, ppid = (ok and s or ""):match(".*%) (%a) (%d+)")
           if state == "Z" and ppid == host then n = n + 1 end
         end
         return n
       end
       std.time.sleep(0.3)
       local n = zombies()
       for _ = 1, 300 do
         if n == 0 then break end
         std.time.sleep(0.1)
         n = zombies()
       end
       print(n)`,
    );
    const r = await runCli(["-s", join(dir, "block.lua"), "-p", dir], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "0\n", "zombie children of the host");
  },
});

Deno.test({
  name: "fail safe: without FFI and /proc agent-block says so once and still ends its process groups",
  ignore: skip !== undefined,
  fn: async () => {
    const dir = await tempDir();
    // `--deny-ffi` (anything short of -A): no prctl, and Deno refuses /proc/<pid>/... as well.
    Deno.writeTextFileSync(
      join(dir, "block.lua"),
      `sh.exec("sleep 300 > /dev/null 2>&1 & echo $! > bg.pid")
       sh.exec("true")
       print("done")`,
    );
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--deny-ffi", "--quiet", CLI, "-s", join(dir, "block.lua"), "-p", dir],
      cwd: dir,
      env: { NO_COLOR: "1" },
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 0, stderr);
    assert.equal(new TextDecoder().decode(r.stdout), "done\n");
    assert.equal(stderr.match(/cannot adopt orphaned processes \(cannot read \/proc/g)?.length, 1, stderr);
    assert.equal(stderr.match(/ending a command reaches its process group only/g)?.length, 1, stderr);
    await allGone(await pidsIn(dir, ["bg.pid"]), "the background job to end with its process group");
  },
});
