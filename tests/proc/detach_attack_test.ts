/**
 * Attacks on "every process a run started ends with the run" (issue 14 §3), in process: a block
 * starts daemons that detach as real ones do (`writeDaemonScript`: a double fork through
 * `setsid`, and `setsid -f`), and each way a command or a run ends must take them along — the
 * run's end, an `sh.exec` timeout, `sh.kill`, and the pipes a detached process holds. This test
 * process is no subreaper, so what finds them here is their tag (`src/proc/tags.ts`); the CLI
 * and the MCP server are attacked in `tests/cli/detach_attack_test.ts` and
 * `tests/mcp_server/detach_attack_test.ts`.
 *
 * Where a daemon must be gone before the run ends, the block checks `/proc` itself (a bounded
 * poll) and returns what it saw.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  DAEMON_PID_FILES,
  lacksProcessTools,
  processAlive,
  runLua,
  tempDir,
  waitFor,
  writeDaemonScript,
} from "../helpers.ts";

const skip = lacksProcessTools("setsid");
if (skip) console.warn(`detach_attack_test: skipped: ${skip}`);

/** Lua: `gone(pid)` polls `/proc` (≤ 30 s) until `pid` is gone or a zombie; `pids(dir)` reads the pid files. */
const LUA_HELPERS = `
local function dead(pid)
  local ok, s = pcall(std.fs.read, "/proc/" .. pid .. "/stat")
  if not ok then return true end
  local state = s:match(".*%) (%a)")
  return state == "Z" or state == "X"
end
local function gone(pid)
  for _ = 1, 1500 do
    if dead(pid) then return true end
    std.time.sleep(0.02)
  end
  return false
end
local FILES = { ${DAEMON_PID_FILES.map((f) => JSON.stringify(f)).join(", ")} }
local function have_pids(dir)
  for _, f in ipairs(FILES) do if not std.fs.exists(dir .. "/" .. f) then return false end end
  return true
end
local function pids(dir)
  local out = {}
  for _, f in ipairs(FILES) do out[#out + 1] = tonumber((std.fs.read(dir .. "/" .. f):match("%d+"))) end
  return out
end
local function wait_pids(dir)
  for _ = 1, 3000 do
    if have_pids(dir) then return pids(dir) end
    std.time.sleep(0.02)
  end
  error("the daemons never wrote their pid files")
end
`;

/** The daemons' pids, from the files they wrote in `dir`. */
function daemonPids(dir: string): number[] {
  return DAEMON_PID_FILES.map((f) => Number(Deno.readTextFileSync(join(dir, f)).trim()));
}

async function run(dir: string, body: string): Promise<unknown> {
  const r = await runLua(`${LUA_HELPERS}\nlocal dir = ${JSON.stringify(dir)}\n${body}`, { projectRoot: dir });
  if (r.outcome.status !== "returned") throw new Error(`${JSON.stringify(r.outcome)}\n${r.stderr}`);
  return JSON.parse(r.outcome.value as string);
}

const opts = { ignore: skip !== undefined, sanitizeResources: false, sanitizeOps: false };

Deno.test({
  name: "attack: a block's detached daemons (double fork, setsid -f) outlive the run",
  ...opts,
  fn: async () => {
    const dir = await tempDir();
    writeDaemonScript(dir);
    const seen = await run(
      dir,
      `local r = sh.exec("sh daemons.sh " .. dir)
       local p = pids(dir)
       return std.json.encode({ r.code, dead(p[1]), dead(p[2]) })`,
    );
    assert.deepEqual(seen, [0, false, false], "the daemons were running when the block returned");
    for (const pid of daemonPids(dir)) {
      await waitFor(() => !processAlive(pid), { what: `daemon ${pid} to end with the run` });
    }
  },
});

Deno.test({
  name: "attack: a command's detached daemons outlive its sh.exec timeout",
  ...opts,
  fn: async () => {
    const dir = await tempDir();
    writeDaemonScript(dir);
    // The timeout is the event under attack; 4 s leaves a loaded machine time to start two sleeps
    // (the block checks that they did start, and were alive, before it fired).
    const seen = (await run(
      dir,
      `local t = std.task.spawn(function()
         return sh.exec("sh daemons.sh " .. dir .. "; sleep 300", { timeout = 4 })
       end)
       local p = wait_pids(dir)
       local before = not dead(p[1]) and not dead(p[2])
       local r = t:join()
       return std.json.encode({ before, r.timed_out == true, gone(p[1]), gone(p[2]) })`,
    )) as boolean[];
    assert.deepEqual(
      seen,
      [true, true, true, true],
      "[alive before, timed out, double fork gone, setsid gone]",
    );
  },
});

Deno.test({
  name: "attack: a labelled command's detached daemons outlive sh.kill",
  ...opts,
  fn: async () => {
    const dir = await tempDir();
    writeDaemonScript(dir);
    const seen = (await run(
      dir,
      `local t = std.task.spawn(function()
         return sh.exec("sh daemons.sh " .. dir .. "; sleep 300", { label = "d", timeout = 300 })
       end)
       local p = wait_pids(dir)
       local before = not dead(p[1]) and not dead(p[2])
       local killed = sh.kill("d")
       local r = t:join()
       return std.json.encode({ before, killed, r.killed == true, gone(p[1]), gone(p[2]) })`,
    )) as boolean[];
    assert.deepEqual(
      seen,
      [true, true, true, true, true],
      "[alive, sh.kill, killed, double fork gone, setsid gone]",
    );
  },
});

Deno.test({
  name: "attack: a detached process holding sh.exec's pipes hangs the call",
  ...opts,
  fn: async () => {
    const dir = await tempDir();
    // `setsid -f` leaves the command's process group at once, and keeps stdout and stderr open.
    const seen = (await run(
      dir,
      `local t0 = std.time.millis()
       local r = sh.exec("setsid -f sh -c 'echo $$ > holder.pid; exec sleep 300'; echo started", { timeout = 120 })
       -- setsid -f may not have written the file yet when the call returns: wait for it (bounded)
       local holder = dir .. "/holder.pid"
       for _ = 1, 6000 do
         if std.fs.exists(holder) and std.fs.read(holder):match("%d+%s") then break end
         std.task.sleep(0.01)
       end
       local pid = tonumber((std.fs.read(holder):match("%d+")))
       return std.json.encode({ r.ok, r.stdout, r.timed_out == nil, std.time.millis() - t0 < 60000, gone(pid) })`,
    )) as unknown[];
    assert.deepEqual(
      seen,
      [true, "started\n", true, true, true],
      "[ok, stdout, no timeout, returned early, gone]",
    );
  },
});
