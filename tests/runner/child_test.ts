/**
 * The child-process runner against real agent-block children: the outcome comes from the
 * child's end event, not its stderr; its timeout ends the whole tree and says `timed_out`;
 * a cancel and a shutdown say `cancelled`; a child that could not start, died without an `end`
 * or sent a malformed one is `raised`, saying so; its events arrive live, and a second
 * connection to its socket is not heard. A few cases use a fake "agent-block" (a shell or Deno
 * script standing in through `launch`) to produce what a real one never does.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ChildRunner, type ChildRunnerOptions } from "../../src/runner/child.ts";
import { ProcessGroups } from "../../src/proc/group.ts";
import type { RunRequest } from "../../src/runner/runner.ts";
import { processAlive, testEnv, waitFor } from "../helpers.ts";
import { waitForFile, waitForPid } from "../mcp_server/mcp_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

async function project(blocks: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "ab_child_runner_" });
  for (const [name, src] of Object.entries(blocks)) Deno.writeTextFileSync(join(dir, name), src);
  return dir;
}

function runner(extra: Partial<ChildRunnerOptions> = {}) {
  const err: string[] = [];
  const procs = new ProcessGroups();
  const r = new ChildRunner({
    procs,
    stderr: (b) => err.push(new TextDecoder().decode(b)),
    graceMs: 500,
    ...extra,
  });
  return { r, procs, stderr: () => err.join("") };
}

/**
 * A runner whose "agent-block" is a Deno script with `body` (it gets `--request R --events S`;
 * `connectEvents()` connects to S, `send(conn, obj)` writes one line).
 */
function fakeChild(dir: string, body: string) {
  const file = join(dir, `fake_${crypto.randomUUID()}.ts`);
  Deno.writeTextFileSync(
    file,
    `const path = Deno.args[Deno.args.indexOf("--events") + 1];
     const connectEvents = () => Deno.connect({ transport: "unix", path });
     const send = (c: Deno.Conn, o: unknown) => c.write(new TextEncoder().encode(JSON.stringify(o) + "\\n"));
     ${body}`,
  );
  return runner({ launch: { mode: "compiled", prefix: [Deno.execPath(), "run", "-A", "--quiet", file] } });
}

const request = (dir: string, file: string, extra: Partial<RunRequest> = {}): RunRequest => ({
  script: { path: join(dir, file) },
  projectRoot: dir,
  env: testEnv(),
  ...extra,
});

Deno.test({
  name: "child runner: a block printing 'error: fake' to stderr and returning is returned",
  ...opts,
  fn: async () => {
    const dir = await project({
      "fake.lua":
        'io.stderr:write("error: fake\\n")\nreturn "returned anyway " .. _PROMPT .. " " .. _CONTEXT\n',
    });
    const { r, stderr } = runner();
    let pid: number | undefined;
    const rep = await r.run(request(dir, "fake.lua", { prompt: "p", context: "c" }), {
      onStart: (i) => pid = i.pid,
    });
    assert.deepEqual(rep.outcome, { status: "returned", value: "returned anyway p c" });
    assert.equal(rep.stderrTail, "error: fake");
    assert.ok(typeof pid === "number");
    assert.match(stderr(), /^\[block fake\.lua\] error: fake$/m);
  },
});

Deno.test({
  name: "child runner: raised, deferred and exited come from the child's end event",
  ...opts,
  fn: async () => {
    const dir = await project({
      "raise.lua": "error({ code = 5 })\n",
      "defer.lua": 'job.defer("later")\n',
      "exit.lua": 'io.stderr:write("last words\\n")\nos.exit(3)\n',
    });
    const { r } = runner();
    const raised = await r.run(request(dir, "raise.lua"));
    assert.equal(raised.outcome.status, "raised");
    if (raised.outcome.status === "raised") assert.deepEqual(raised.outcome.error, { code: 5 });
    assert.deepEqual((await r.run(request(dir, "defer.lua"))).outcome, {
      status: "deferred",
      reason: "later",
    });
    const exited = await r.run(request(dir, "exit.lua"));
    assert.deepEqual(exited.outcome, { status: "exited", code: 3 });
    assert.equal(exited.stderrTail, "last words");
  },
});

Deno.test({
  name: "child runner: its timeout ends the whole tree and reports timed_out",
  ...opts,
  fn: async () => {
    const dir = await project({
      "sleeps.lua":
        'sh.exec("echo $$ > " .. _PROMPT .. "/sleeper.pid; exec sleep 1000", { timeout = 2000 })\n' +
        'return "woke"\n',
      // Never waits for the host: only SIGKILL ends it, and its sleeper's group must go with it.
      "spins.lua": 'local p = io.popen("echo $$ > " .. _PROMPT .. "/spinner.pid; exec sleep 1000")\n' +
        "local x = 0 while true do x = x + 1 end\n",
    });
    const { r, procs } = runner();
    // Both runs at once (the runner serves several), each with its own timeout.
    const cases = [["sleeps.lua", "sleeper.pid"], ["spins.lua", "spinner.pid"]] as const;
    await Promise.all(cases.map(async ([block, pidFile]) => {
      const started = Date.now();
      const running = r.run(request(dir, block, { prompt: dir, timeoutMs: 4000 }));
      const sleeper = await waitForPid(join(dir, pidFile), `${block} to start its sleeper`);
      assert.ok(processAlive(sleeper));
      const rep = await running;
      assert.deepEqual(rep.outcome, { status: "timed_out", seconds: 4 });
      assert.ok(Date.now() - started >= 4000);
      await waitFor(() => !processAlive(sleeper), {
        what: `${block}'s sleeper ${sleeper} to end`,
        timeoutMs: 10_000,
      });
    }));
    assert.equal(procs.size, 0);
  },
});

Deno.test({
  name: "child runner: a cancel and the runner's shutdown end the run as cancelled",
  ...opts,
  fn: async () => {
    const dir = await project({
      "slow.lua":
        'local f = io.open(_PROMPT, "w") f:write("x") f:close()\nstd.task.sleep(300)\nreturn "woke"\n',
    });
    const stopping = new AbortController();
    const { r } = runner({ stopping: stopping.signal, stopReason: "the owner is stopping" });
    const cancel = new AbortController();
    const a = r.run(request(dir, "slow.lua", { prompt: join(dir, "a"), signal: cancel.signal }));
    await waitForFile(join(dir, "a"), "run a to start");
    cancel.abort();
    assert.deepEqual((await a).outcome, { status: "cancelled", reason: "cancelled" });

    const b = r.run(request(dir, "slow.lua", { prompt: join(dir, "b") }));
    await waitForFile(join(dir, "b"), "run b to start");
    stopping.abort();
    assert.deepEqual((await b).outcome, { status: "cancelled", reason: "the owner is stopping" });
    // Once stopping, nothing new starts.
    assert.deepEqual((await r.run(request(dir, "slow.lua", { prompt: join(dir, "c") }))).outcome, {
      status: "cancelled",
      reason: "the owner is stopping",
    });
  },
});

Deno.test({
  name: "child runner: no child, no end, a malformed one: raised, saying so; inline source crosses",
  ...opts,
  fn: async () => {
    const dir = await project({ "x.lua": 'return "x"\n' });
    const missing = runner({ launch: { mode: "compiled", prefix: [join(dir, "no-such-agent-block")] } });
    const spawn = await missing.r.run(request(dir, "x.lua"));
    assert.equal(spawn.outcome.status, "raised");
    if (spawn.outcome.status === "raised") {
      assert.match(spawn.outcome.message, /^cannot start agent-block \(/);
    }

    // The fake's arguments: -s S -p P --config C --outcome O ($8 is the outcome file).
    const fake = (script: string) =>
      runner({ launch: { mode: "compiled", prefix: ["sh", "-c", script, "sh"] } });
    const died = await fake("echo 'dying here' >&2; exit 3").r.run(request(dir, "x.lua"));
    assert.deepEqual(died.outcome, {
      status: "raised",
      code: "script",
      message: "the run ended without an outcome (exit code 3); the end of its stderr:\ndying here",
      traceback: "",
    });
    const killed = await fake("kill -9 $$").r.run(request(dir, "x.lua"));
    assert.equal(killed.outcome.status, "raised");
    if (killed.outcome.status === "raised") {
      assert.match(
        killed.outcome.message,
        /without an outcome \(exit code 137, signal SIGKILL\); it wrote nothing/,
      );
    }
    const garbled = await fakeChild(
      dir,
      `
      const c = await connectEvents();
      await send(c, { v: 1, type: "end", ms: 1, outcome: { version: 1, status: "returned", value: 7 } });
    `,
    ).r.run(request(dir, "x.lua"));
    assert.equal(garbled.outcome.status, "raised");
    if (garbled.outcome.status === "raised") {
      assert.match(
        garbled.outcome.message,
        /event stream is malformed: the child's events, line 1: field outcome: field 'value' must be a string/,
      );
    }
    const { r } = runner();
    // Inline source crosses the boundary too: the request file carries it.
    const inline = await r.run({
      script: { source: 'return "i"', name: "i.lua" },
      projectRoot: dir,
      env: testEnv(),
    });
    assert.deepEqual(inline.outcome, { status: "returned", value: "i" });
    const relative = await r.run({ script: { path: "x.lua" }, projectRoot: "rel", env: {} });
    assert.equal(relative.outcome.status, "raised");
    if (relative.outcome.status === "raised") assert.match(relative.outcome.message, /must be absolute/);
  },
});

Deno.test({
  name: "child runner: a child dying after some events is raised, with the events it sent and its exit code",
  ...opts,
  fn: async () => {
    const dir = await project({ "x.lua": 'return "x"\n' });
    const seen: string[] = [];
    const rep = await fakeChild(
      dir,
      `
      const c = await connectEvents();
      await send(c, { v: 1, type: "session_open", session: "s_1" });
      Deno.exit(3);
    `,
    ).r.run(request(dir, "x.lua"), { observe: (e) => seen.push(e.type) });
    assert.deepEqual(seen, ["session_open", "end"]);
    assert.deepEqual(rep.sessions, ["s_1"]);
    assert.equal(rep.outcome.status, "raised");
    if (rep.outcome.status === "raised") {
      assert.equal(rep.outcome.code, "script");
      assert.match(rep.outcome.message, /without an outcome \(exit code 3\)/);
    }
  },
});

Deno.test({
  name: "attack: a second connection to a child run's events socket is closed unread (no forged end)",
  ...opts,
  fn: async () => {
    const dir = await project({ "x.lua": 'return "x"\n' });
    const rep = await fakeChild(
      dir,
      `
      const real = await connectEvents();
      const forger = await connectEvents();
      // the runner may have closed this connection already: a refused write is the attack failing too
      await send(forger, { v: 1, type: "end", ms: 1, outcome: { version: 1, status: "returned", value: "forged" } })
        .catch(() => undefined);
      await send(real, { v: 1, type: "end", ms: 1, outcome: { version: 1, status: "returned", value: "real" } });
    `,
    ).r.run(request(dir, "x.lua"));
    assert.deepEqual(rep.outcome, { status: "returned", value: "real" });
  },
});

Deno.test({
  name: "child runner: the child's events arrive live, before the run ends, in the in-process order",
  ...opts,
  fn: async () => {
    const dir = await project({
      "live.lua": `
        bus.emit("artifact", { name = "a.txt", content = "one" })
        local f = io.open(_PROMPT .. "/gate", "r")
        while not f do std.task.sleep(0.01) f = io.open(_PROMPT .. "/gate", "r") end
        f:close()
        return "done"`,
    });
    const { r } = runner();
    const seen: string[] = [];
    let sawArtifact!: () => void;
    const artifact = new Promise<void>((res) => sawArtifact = res);
    const running = r.run(request(dir, "live.lua", { prompt: dir }), {
      observe: (e) => {
        seen.push(e.type);
        if (e.type === "artifact") sawArtifact();
      },
    });
    await artifact; // the run is still blocked on the gate: the event came live
    Deno.writeTextFileSync(join(dir, "gate"), "");
    const rep = await running;
    assert.deepEqual(rep.outcome, { status: "returned", value: "done" });
    assert.deepEqual(seen, ["artifact", "end"]);
    assert.deepEqual(rep.artifacts.map((a) => [a.name, a.content]), [["a.txt", "one"]]);
  },
});
