/**
 * Attacks on "every process a run started ends with the run" (issue 14 §3) through
 * `agent-block mcp` over stdio: a block's detached daemons (`writeDaemonScript`: double fork
 * through `setsid`, and `setsid -f`) survive neither the run's `--run-timeout`, nor a cancelled
 * call (also when the block spins and its process has to be SIGKILLed), nor a SIGTERM of the
 * server. The blocks are written into the test's copy of the fixture project.
 */
import { join } from "node:path";
import {
  assert,
  assertEquals,
  assertRejects,
  cancellableRun,
  connectStdio,
  freshProject,
  readPid,
  resultText,
  waitForFile,
} from "./mcp_helpers.ts";
import { DAEMON_PID_FILES, lacksProcessTools, processAlive, waitFor, writeDaemonScript } from "../helpers.ts";

const skip = lacksProcessTools("setsid");
if (skip) console.warn(`detach_attack_test (mcp): skipped: ${skip}`);
const opts = { sanitizeOps: false, sanitizeResources: false, ignore: skip !== undefined };

/** Starts the daemons (in the directory named by _PROMPT), says so, then `then`. */
const block = (then: string) =>
  `local dir = assert(_PROMPT)
   sh.exec("sh '" .. dir .. "/daemons.sh' '" .. dir .. "'")
   std.fs.write(dir .. "/started", "")
   ${then}`;

/** A fresh project with the blocks `daemons` (then waits) and `daemons_busy` (then spins). */
async function project(): Promise<{ root: string; home: string; scratch: string }> {
  const p = await freshProject();
  const blocks = join(p.root, ".agent-block", "blocks");
  Deno.writeTextFileSync(join(blocks, "daemons.lua"), block("std.task.sleep(300)"));
  Deno.writeTextFileSync(join(blocks, "daemons_busy.lua"), block("local x = 0\nwhile true do x = x + 1 end"));
  writeDaemonScript(p.scratch);
  return p;
}

/** The daemons' pids, once the block has said they run. */
async function daemons(scratch: string): Promise<number[]> {
  await waitForFile(join(scratch, "started"), "the block to start its daemons");
  const pids = DAEMON_PID_FILES.map((f) => readPid(join(scratch, f)));
  for (const pid of pids) assert(processAlive(pid), `daemon ${pid} should run`);
  return pids;
}

async function allGone(pids: number[], what: string): Promise<void> {
  await waitFor(() => pids.every((p) => !processAlive(p)), {
    what: `${what} (${pids.filter(processAlive).join(", ")} still alive)`,
    timeoutMs: 30_000,
  });
}

Deno.test({
  name: "attack: a block's detached daemons outlive its --run-timeout in agent-block mcp",
  ...opts,
  fn: async () => {
    const p = await project();
    // The timeout is the event under attack: 10 s leave a loaded machine time to start the run
    // and its daemons (checked below), the test waits it out.
    const s = await connectStdio(p.root, p.home, { extraArgs: ["--run-timeout", "10"] });
    try {
      const r = await s.client.callTool(
        { name: "run_block", arguments: { block: "daemons", prompt: p.scratch } },
        { timeout: 120_000 },
      );
      assertEquals(resultText(r), "block 'daemons' ran past its timeout of 10 s and was stopped");
      const pids = DAEMON_PID_FILES.map((f) => readPid(join(p.scratch, f)));
      await allGone(pids, "the daemons to end with the timed-out run");
    } finally {
      await s.close();
    }
  },
});

for (const [what, name] of [["waits", "daemons"], ["spins", "daemons_busy"]] as const) {
  Deno.test({
    name:
      `attack: a block's detached daemons outlive a cancelled call in agent-block mcp (the block ${what})`,
    ...opts,
    fn: async () => {
      const p = await project();
      const s = await connectStdio(p.root, p.home);
      try {
        const { pending, cancel } = cancellableRun(s.client, { block: name, prompt: p.scratch });
        const pids = await daemons(p.scratch);
        cancel("test cancels");
        await assertRejects(() => pending);
        await allGone(pids, "the daemons to end with the cancelled run");
      } finally {
        await s.close();
      }
    },
  });
}

Deno.test({
  name: "attack: a block's detached daemons outlive a SIGTERM of agent-block mcp",
  ...opts,
  fn: async () => {
    const p = await project();
    const s = await connectStdio(p.root, p.home);
    try {
      const pending = s.client.callTool(
        { name: "run_block", arguments: { block: "daemons", prompt: p.scratch } },
        { timeout: 300_000 },
      );
      const pids = await daemons(p.scratch);
      const serverPid = s.pid;
      Deno.kill(serverPid, "SIGTERM");
      const r = await pending;
      assertEquals(resultText(r), "block 'daemons' was stopped: the server is shutting down");
      await allGone([...pids, serverPid], "the daemons and the server to end");
    } finally {
      await s.close().catch(() => undefined);
    }
  },
});
