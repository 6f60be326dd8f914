/**
 * `agent-block mcp` over stdio, how runs end and what they get: a run past --run-timeout, a
 * cancelled call (the run's whole process tree ends, also for a run that never yields), SIGTERM
 * to the server, a process a run leaves behind, two calls at once, stdout carrying protocol only,
 * credentials, and a block's own `error:` text on stderr not taken for a failure. Driven by the
 * v2 SDK client against real server processes and a copy of tests/fixtures/mcp_project.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import {
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStringIncludes,
  cancellableRun,
  connectStdio,
  freshProject,
  readPid,
  resultText,
  serverCommand,
  serverEnv,
  waitForFile,
} from "./mcp_helpers.ts";
import { processAlive, waitFor } from "../helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "mcp stdio: a run past --run-timeout is stopped and reported as a failed call",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const s = await connectStdio(p.root, p.home, { extraArgs: ["--run-timeout", "3"] });
    try {
      const r = await s.client.callTool(
        { name: "run_block", arguments: { block: "slow", prompt: "300" } },
        { timeout: 120_000 },
      );
      assertEquals(r.isError, true);
      assertEquals(resultText(r), "block 'slow' ran past its timeout of 3 s and was stopped");
      // The server is still serving.
      assertEquals(
        resultText(await s.client.callTool({ name: "run_block", arguments: { block: "where" } })),
        "project-local",
      );
    } finally {
      await s.close();
    }
  },
});

// A cancelled call ends the run's whole process tree: a run waiting on its shell (tree), and a run
// that never yields, whose sleeper leads a group of its own (busy). The server goes on serving.
for (
  const [what, block, pidFiles] of [
    ["a call ends the run's whole process tree", "tree", ["run.pid", "shell.pid"]],
    ["a run that never yields kills it and the groups its children lead", "busy", ["sleeper.pid"]],
  ] as const
) {
  Deno.test({
    name: `mcp stdio: cancelling ${what}`,
    ...opts,
    fn: async () => {
      const p = await freshProject();
      const s = await connectStdio(p.root, p.home);
      try {
        const { pending, cancel } = cancellableRun(s.client, { block, prompt: p.scratch });
        const last = join(p.scratch, pidFiles[pidFiles.length - 1]);
        await waitForFile(last, `the ${block} block to start its processes`);
        const pids = pidFiles.map((f) => readPid(join(p.scratch, f)));
        for (const pid of pids) assert(processAlive(pid), `process ${pid} should be alive`);
        cancel("test cancels");
        await assertRejects(() => pending);
        await waitFor(
          () => pids.every((pid) => !processAlive(pid)),
          { what: `processes ${pids.join(", ")} to end`, timeoutMs: 30_000 },
        );
        await waitFor(
          () => new RegExp(`run_block #\\d+ '${block}': cancelled`).test(s.stderr()),
          { what: "the server to log the cancellation", timeoutMs: 60_000 },
        );
        assertEquals(
          resultText(await s.client.callTool({ name: "run_block", arguments: { block: "where" } })),
          "project-local",
        );
      } finally {
        await s.close();
      }
    },
  });
}

Deno.test({
  name: "mcp stdio: SIGTERM answers the call in flight, ends its tree, and the server exits",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const s = await connectStdio(p.root, p.home);
    try {
      const pending = s.client.callTool(
        { name: "run_block", arguments: { block: "busy", prompt: p.scratch } },
        { timeout: 300_000 },
      );
      const pidFile = join(p.scratch, "sleeper.pid");
      await waitForFile(pidFile, "the busy block to start its sleeper");
      const sleeper = readPid(pidFile);
      const serverPid = s.pid;
      Deno.kill(serverPid, "SIGTERM");
      const r = await pending;
      assertEquals(r.isError, true);
      assertEquals(resultText(r), "block 'busy' was stopped: the server is shutting down");
      await waitFor(() => !processAlive(sleeper) && !processAlive(serverPid), {
        what: "the sleeper and the server to end",
        timeoutMs: 30_000,
      });
    } finally {
      await s.close().catch(() => undefined);
    }
  },
});

Deno.test({
  name: "mcp stdio: a process a run leaves behind holding its output does not hold the answer",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    Deno.writeTextFileSync(
      join(p.root, "blocks", "escapes.lua"),
      "-- Leaves a process in a session of its own, holding this run's stdout, then returns.\n" +
        'os.execute("setsid sh -c \'echo $$ > \\"" .. _PROMPT .. "/escaped.pid\\"; exec sleep 300\' &")\n' +
        "-- Until it has left this run's process group, ending the group would end it too.\n" +
        'for _ = 1, 400 do local f = io.open(_PROMPT .. "/escaped.pid") local t = f and f:read("a") ' +
        "if f then f:close() end if t and #t > 0 then break end std.task.sleep(0.025) end\n" +
        'return "returned anyway"\n',
    );
    const s = await connectStdio(p.root, p.home);
    const pidFile = join(p.scratch, "escaped.pid");
    try {
      const r = await s.client.callTool(
        { name: "run_block", arguments: { block: "escapes", prompt: p.scratch } },
        { timeout: 60_000 },
      );
      assertEquals(resultText(r), "returned anyway");
    } finally {
      await waitFor(() => {
        try {
          return Deno.readTextFileSync(pidFile).trim().length > 0;
        } catch {
          return false;
        }
      }, { what: "the escaped process's pid", timeoutMs: 60_000 });
      try {
        Deno.kill(readPid(pidFile), "SIGKILL");
      } catch { /* already gone */ }
      await s.close();
    }
  },
});

Deno.test({
  name: "mcp stdio: two calls at once run concurrently and independently",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const s = await connectStdio(p.root, p.home);
    try {
      // Each waits for the other's file: they can only both return if they overlap.
      const [a, b] = await Promise.all(["a", "b"].map((me) =>
        s.client.callTool(
          { name: "run_block", arguments: { block: "rendezvous", prompt: p.scratch, context: me } },
          { timeout: 300_000 },
        )
      ));
      assertEquals(JSON.parse(resultText(a)), { me: "a", met: "b" });
      assertEquals(JSON.parse(resultText(b)), { me: "b", met: "a" });
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name: "mcp stdio: stdout carries protocol only; a block's prints go to stderr; stdin EOF exits 0",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const [cmd, ...args] = serverCommand(["-p", p.root]);
    const proc = new Deno.Command(cmd, {
      args,
      env: serverEnv(p.home),
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stderrText = new Response(proc.stderr).text();
    const w = proc.stdin.getWriter();
    const send = (m: unknown) => w.write(new TextEncoder().encode(JSON.stringify(m) + "\n"));
    await send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
    });
    // Read stdout line by line until the answer to `id` arrives.
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const lines: string[] = [];
    let buf = "";
    const until = async (id: number) => {
      while (true) {
        const found = lines.find((l) => (JSON.parse(l) as { id?: number }).id === id);
        if (found) return JSON.parse(found);
        const { value, done } = await reader.read();
        if (done) throw new Error(`stdout closed before the answer to ${id}`);
        buf += value;
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          lines.push(buf.slice(0, nl));
          buf = buf.slice(nl + 1);
        }
      }
    };
    assertEquals((await until(1)).result.serverInfo.name, "agent-block");
    await send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "run_block", arguments: { block: "prints" } },
    });
    const res = await until(2);
    assertEquals(res.result.content[0].text, "printed");
    await w.close();
    // Drain the rest of stdout; the server must exit on EOF.
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
    }
    if (buf.length) lines.push(...buf.split("\n").filter((l) => l.length));
    const status = await proc.status;
    assertEquals(status.code, 0);
    for (const l of lines) {
      const m = JSON.parse(l) as { jsonrpc?: string };
      assertEquals(m.jsonrpc, "2.0", `stdout line is not JSON-RPC: ${l}`);
    }
    const err = await stderrText;
    assertStringIncludes(err, "PRINTED-BY-BLOCK line one");
    assertStringIncludes(err, "PRINTED-BY-BLOCK no newline");
    assertStringIncludes(err, "STDERR-BY-BLOCK");
  },
});

Deno.test({
  name: "attack: a run of agent-block mcp gets the server's credentials (it gets its own from .env)",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    Deno.writeTextFileSync(join(p.root, ".env"), "OPENAI_API_KEY=from-project-dotenv\n");
    Deno.writeTextFileSync(
      join(p.root, "blocks", "creds.lua"),
      '-- Reports which credentials it sees.\nreturn std.json.encode({ anthropic = os.getenv("ANTHROPIC_API_KEY") or "absent", ' +
        'openai = os.getenv("OPENAI_API_KEY") or "absent", marker = os.getenv("AB_TEST_MARKER") or "absent" })\n',
    );
    const [command, ...args] = serverCommand(["-p", p.root]);
    const client = new Client({ name: "creds", version: "0" });
    await client.connect(
      new StdioClientTransport({
        command,
        args,
        env: { ...serverEnv(p.home), ANTHROPIC_API_KEY: "from-server-env", AB_TEST_MARKER: "inherited" },
        stderr: "ignore",
      }),
    );
    try {
      const r = await client.callTool({ name: "run_block", arguments: { block: "creds" } });
      assertEquals(JSON.parse(resultText(r)), {
        anthropic: "absent",
        openai: "from-project-dotenv",
        marker: "inherited",
      });
    } finally {
      await client.close();
    }
  },
});

Deno.test({
  name: "mcp stdio: a block that writes 'error: fake' to stderr and returns is reported as returned",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    Deno.writeTextFileSync(
      join(p.root, "blocks", "fake_error.lua"),
      "-- Looks like a failure on stderr, but returns: the outcome file, not stderr, says how it ended.\n" +
        'io.stderr:write("error: fake\\n")\nreturn "returned despite the text"\n',
    );
    const s = await connectStdio(p.root, p.home);
    try {
      const r = await s.client.callTool({ name: "run_block", arguments: { block: "fake_error" } });
      assert(!r.isError, JSON.stringify(r));
      assertEquals(resultText(r), "returned despite the text");
      await waitFor(
        () => s.stderr().includes("[block fake_error] error: fake"),
        { what: "the block's stderr forwarded" },
      );
      assertMatch(s.stderr(), /run_block #\d+ 'fake_error': returned in \d+ ms/);
    } finally {
      await s.close();
    }
  },
});
