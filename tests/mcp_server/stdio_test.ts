/**
 * `agent-block mcp` over stdio, driven by the v2 SDK client against real server processes and a
 * copy of tests/fixtures/mcp_project: the tool and its enum, run_block outcomes, resources,
 * re-scan per request, timeout, cancellation (the run's processes are gone), concurrency, and
 * stdout carrying protocol only.
 */
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { GUIDE_TEXT } from "../../src/mcp_server/server.ts";
import {
  alive,
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStringIncludes,
  blockEnum,
  cancellableRun,
  connectStdio,
  freshProject,
  readPid,
  resultText,
  serverCommand,
  serverEnv,
  waitForFile,
} from "./mcp_helpers.ts";
import { waitFor } from "../helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

for (const era of ["legacy", "auto"] as const) {
  Deno.test({
    name: `mcp stdio (${era} client): tools, run_block outcomes and resources`,
    ...opts,
    fn: async () => {
      const p = await freshProject();
      const s = await connectStdio(p.root, p.home, { era });
      try {
        assertEquals(
          s.client.getNegotiatedProtocolVersion(),
          era === "auto" ? "2026-07-28" : "2025-11-25",
        );
        const { tools } = await s.client.listTools();
        assertEquals(tools.map((t) => t.name), ["run_block"]);
        assertEquals(await blockEnum(s.client), [
          "busy",
          "defers",
          "echo",
          "greet",
          "nothing",
          "prints",
          "raises",
          "rendezvous",
          "slow",
          "tree",
          "where",
        ]);
        assertStringIncludes(
          tools[0].description ?? "",
          "- echo: Echo the call back. Returns { prompt, context } as JSON",
        );

        const call = (block: string, extra: Record<string, string> = {}) =>
          s.client.callTool({ name: "run_block", arguments: { block, ...extra } });

        const echo = await call("echo", { prompt: "the prompt", context: "the context" });
        assert(!echo.isError);
        assertEquals(JSON.parse(resultText(echo)), { prompt: "the prompt", context: "the context" });
        const bare = await call("echo");
        assertEquals(JSON.parse(resultText(bare)), { prompt: null, context: null });

        assertEquals(resultText(await call("where")), "project-local");
        assertEquals(JSON.parse(resultText(await call("greet", { prompt: "ada" }))), { text: "hello, ada" });
        const nothing = await call("nothing");
        assert(!nothing.isError);
        assertEquals(resultText(nothing), "");

        const raised = await call("raises", { prompt: "on purpose" });
        assertEquals(raised.isError, true);
        assertEquals(resultText(raised), "blocks/raises.lua:3: raises.lua refused: on purpose");

        const deferred = await call("defers");
        assert(!deferred.isError);
        assertMatch(resultText(deferred), /^block 'defers' deferred: the database is not reachable/);

        await assertRejects(() => s.client.callTool({ name: "no_such_tool", arguments: {} }));
        const unknown = await call("no_such_block");
        assertEquals(unknown.isError, true);
        assertStringIncludes(resultText(unknown), "unknown block 'no_such_block'");

        // Resources.
        const { resources } = await s.client.listResources();
        const uris = resources.map((r) => r.uri);
        for (const u of ["agent-block://guide", "agent-block://blocks", "agent-block://blocks/echo"]) {
          assert(uris.includes(u), `${u} missing from ${uris.join(", ")}`);
        }
        const guide = await s.client.readResource({ uri: "agent-block://guide" });
        assertEquals((guide.contents[0] as { text: string }).text, GUIDE_TEXT);
        assertStringIncludes(GUIDE_TEXT, "return a JSON string");
        const reg = JSON.parse(
          ((await s.client.readResource({ uri: "agent-block://blocks" })).contents[0] as { text: string })
            .text,
        ) as { name: string; tier: string; path: string; description: string }[];
        const byName = new Map(reg.map((b) => [b.name, b]));
        assertEquals(byName.get("echo")?.tier, "project");
        assertEquals(byName.get("echo")?.path, join(p.root, "blocks", "echo.lua"));
        assertEquals(byName.get("where")?.tier, "project-local");
        assertEquals(byName.get("tree")?.path, join(p.root, "blocks", "tree", "init.lua"));
        assertStringIncludes(byName.get("defers")?.description ?? "", "Defers: the database");
        const src = await s.client.readResource({ uri: "agent-block://blocks/echo" });
        assertEquals(
          (src.contents[0] as { text: string }).text,
          Deno.readTextFileSync(join(p.root, "blocks", "echo.lua")),
        );
        await assertRejects(() => s.client.readResource({ uri: "agent-block://blocks/greeting" }));
      } finally {
        await s.close();
      }
    },
  });
}

Deno.test({
  name: "mcp stdio: blocks dropped in or removed are seen on the next request, in every root",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const extra = join(p.scratch, "extra_blocks");
    Deno.mkdirSync(extra);
    const s = await connectStdio(p.root, p.home, { extraArgs: ["--block-dir", extra] });
    try {
      const before = await blockEnum(s.client);
      assert(!before.includes("fresh"));
      Deno.writeTextFileSync(
        join(p.root, "blocks", "fresh.lua"),
        '-- Brand new.\nreturn "fresh " .. _PROMPT\n',
      );
      Deno.writeTextFileSync(join(p.root, ".agent-block", "blocks", "hidden.lua"), 'return "local"\n');
      Deno.mkdirSync(join(p.home, "blocks", "userb"));
      Deno.writeTextFileSync(
        join(p.home, "blocks", "userb", "init.lua"),
        '-- A user block.\nreturn "user"\n',
      );
      Deno.writeTextFileSync(join(extra, "outside.lua"), '-- From --block-dir.\nreturn "extra"\n');
      const after = await blockEnum(s.client);
      for (const n of ["fresh", "hidden", "userb", "outside"]) {
        assert(after.includes(n), `${n} not in ${after}`);
      }
      const call = (block: string, prompt?: string) =>
        s.client.callTool({ name: "run_block", arguments: prompt ? { block, prompt } : { block } });
      assertEquals(resultText(await call("fresh", "x")), "fresh x");
      assertEquals(resultText(await call("hidden")), "local");
      assertEquals(resultText(await call("userb")), "user");
      assertEquals(resultText(await call("outside")), "extra");
      const reg = JSON.parse(
        ((await s.client.readResource({ uri: "agent-block://blocks" })).contents[0] as { text: string }).text,
      ) as { name: string; tier: string }[];
      assertEquals(reg.find((b) => b.name === "userb")?.tier, "user");
      assertEquals(reg.find((b) => b.name === "outside")?.tier, "extra");

      Deno.removeSync(join(p.root, "blocks", "fresh.lua"));
      Deno.removeSync(join(p.root, ".agent-block", "blocks", "where.lua"));
      const gone = await blockEnum(s.client);
      assert(!gone.includes("fresh"));
      assert(gone.includes("where"), "blocks/where.lua still registers once the local one is gone");
      const r = await call("fresh", "x");
      assertEquals(r.isError, true);
      assertStringIncludes(resultText(r), "unknown block 'fresh'");
      assertEquals(resultText(await call("where")), "project");
      await assertRejects(() => s.client.readResource({ uri: "agent-block://blocks/fresh" }));
    } finally {
      await s.close();
    }
  },
});

for (const era of ["legacy", "auto"] as const) {
  Deno.test({
    name: `mcp stdio (${era} client): clients are told when blocks come and go (tools/list_changed)`,
    ...opts,
    fn: async () => {
      const p = await freshProject();
      const seen: string[][] = [];
      let wake: (() => void) | undefined;
      const s = await connectStdio(p.root, p.home, {
        era,
        clientOptions: {
          listChanged: {
            tools: {
              onChanged: (error, tools) => {
                if (error) throw error;
                const t = tools?.find((x) => x.name === "run_block");
                const props = t?.inputSchema.properties as Record<string, { enum?: string[] }> | undefined;
                seen.push(props?.block.enum ?? []);
                wake?.();
              },
            },
          },
        },
      });
      const next = (what: string, cond: (names: string[]) => boolean) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no tools/list_changed showing ${what}`)), 60_000);
          wake = () => {
            if (seen.length && cond(seen[seen.length - 1])) {
              clearTimeout(timer);
              resolve();
            }
          };
          wake();
        });
      try {
        assert((await blockEnum(s.client)).includes("echo"));
        Deno.writeTextFileSync(join(p.root, "blocks", "announced.lua"), '-- New.\nreturn "new"\n');
        await next("the new block", (n) => n.includes("announced"));
        Deno.removeSync(join(p.root, "blocks", "announced.lua"));
        await next("the block gone", (n) => !n.includes("announced") && n.includes("echo"));
      } finally {
        await s.close();
      }
    },
  });
}

for (const era of ["legacy", "auto"] as const) {
  Deno.test({
    name:
      `mcp stdio (${era} client): progress notifications keep a long call alive past the client's timeout`,
    ...opts,
    fn: async () => {
      const p = await freshProject();
      const s = await connectStdio(p.root, p.home, { era, extraArgs: ["--progress-secs", "1"] });
      try {
        const ticks: { progress: number; message?: string }[] = [];
        const r = await s.client.callTool({ name: "run_block", arguments: { block: "slow", prompt: "8" } }, {
          timeout: 5_000,
          resetTimeoutOnProgress: true,
          onprogress: (p) => ticks.push(p),
        });
        assertEquals(resultText(r), "woke");
        assert(ticks.length >= 3, `expected several progress notifications, got ${JSON.stringify(ticks)}`);
        assertMatch(ticks[0].message ?? "", /^block 'slow' has been running for \d+ s$/);
      } finally {
        await s.close();
      }
    },
  });
}

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

Deno.test({
  name: "mcp stdio: cancelling a call ends the run's whole process tree",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const s = await connectStdio(p.root, p.home);
    try {
      const { pending, cancel } = cancellableRun(s.client, { block: "tree", prompt: p.scratch });
      const shellPidFile = join(p.scratch, "shell.pid");
      await waitForFile(shellPidFile, "the tree block to start its shell");
      const runPid = readPid(join(p.scratch, "run.pid"));
      const shellPid = readPid(shellPidFile);
      assert(alive(runPid), `run process ${runPid} should be alive`);
      assert(alive(shellPid), `shell process ${shellPid} should be alive`);
      cancel("test cancels");
      await assertRejects(() => pending);
      await waitFor(
        () => !alive(runPid) && !alive(shellPid),
        { what: `processes ${runPid} and ${shellPid} to end`, timeoutMs: 30_000 },
      );
      await waitFor(
        () => /run_block #\d+ 'tree': cancelled/.test(s.stderr()),
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

Deno.test({
  name: "mcp stdio: cancelling a run that never yields kills it and the groups its children lead",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const s = await connectStdio(p.root, p.home);
    try {
      const { pending, cancel } = cancellableRun(s.client, { block: "busy", prompt: p.scratch });
      const pidFile = join(p.scratch, "sleeper.pid");
      await waitForFile(pidFile, "the busy block to start its sleeper");
      const sleeper = readPid(pidFile);
      assert(alive(sleeper));
      cancel("test cancels");
      await assertRejects(() => pending);
      await waitFor(() => !alive(sleeper), { what: `sleeper ${sleeper} to end`, timeoutMs: 30_000 });
      await waitFor(
        () => /run_block #\d+ 'busy': cancelled/.test(s.stderr()),
        { what: "the server to log the cancellation", timeoutMs: 60_000 },
      );
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name: "mcp stdio: SIGTERM answers the call in flight, ends its tree, and the server exits",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const [command, ...args] = serverCommand(["-p", p.root]);
    const transport = new StdioClientTransport({ command, args, env: serverEnv(p.home), stderr: "ignore" });
    const client = new Client({ name: "agent-block-test", version: "0" });
    await client.connect(transport);
    try {
      const pending = client.callTool(
        { name: "run_block", arguments: { block: "busy", prompt: p.scratch } },
        { timeout: 300_000 },
      );
      const pidFile = join(p.scratch, "sleeper.pid");
      await waitForFile(pidFile, "the busy block to start its sleeper");
      const sleeper = readPid(pidFile);
      const serverPid = transport.pid!;
      Deno.kill(serverPid, "SIGTERM");
      const r = await pending;
      assertEquals(r.isError, true);
      assertEquals(resultText(r), "block 'busy' was stopped: the server is shutting down");
      await waitFor(() => !alive(sleeper) && !alive(serverPid), {
        what: "the sleeper and the server to end",
        timeoutMs: 30_000,
      });
    } finally {
      await client.close().catch(() => undefined);
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
  name: "mcp stdio: a run gets no host credentials from the server's environment, and its own from .env",
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
