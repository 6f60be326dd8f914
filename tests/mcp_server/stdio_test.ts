/**
 * `agent-block mcp` over stdio, driven by the v2 SDK client against real server processes and a
 * copy of tests/fixtures/mcp_project: the tool and its enum, run_block outcomes, resources,
 * re-scan per request, list_changed notifications and progress. How runs end (timeout,
 * cancellation, SIGTERM, leftovers, concurrency, stdout, credentials) is in stdio_runs_test.ts:
 * two files so that the parallel test runner can spread them.
 */
import { join } from "node:path";
import { GUIDE_TEXT } from "../../src/mcp_server/server.ts";
import {
  assert,
  assertEquals,
  assertMatch,
  assertRejects,
  assertStringIncludes,
  blockEnum,
  connectStdio,
  freshProject,
  resultText,
} from "./mcp_helpers.ts";

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
        assertEquals(tools.map((t) => t.name), ["run_block", "run_flow"]);
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

// Both client eras in one test, at once (each its own project and server): each call waits out a
// 12 s run, so one after the other only doubled the file's time.
Deno.test({
  name:
    "mcp stdio (legacy and auto clients): progress notifications keep a long call alive past the client's timeout",
  ...opts,
  fn: async () => {
    await Promise.all((["legacy", "auto"] as const).map(async (era) => {
      const p = await freshProject();
      // A 12 s run, a 6 s client timeout, a notification every 0.25 s: only the resets keep it alive
      // (the margins are for a loaded machine — two suites at once on 2 cores — where a process can
      // be starved for seconds and a notification come late).
      const s = await connectStdio(p.root, p.home, { era, extraArgs: ["--progress-secs", "0.25"] });
      try {
        const ticks: { progress: number; message?: string }[] = [];
        const r = await s.client.callTool({ name: "run_block", arguments: { block: "slow", prompt: "12" } }, {
          timeout: 6_000,
          resetTimeoutOnProgress: true,
          onprogress: (p) => ticks.push(p),
        });
        assertEquals(resultText(r), "woke", `${era} client`);
        assert(
          ticks.length >= 3,
          `${era} client: expected several progress notifications, got ${JSON.stringify(ticks)}`,
        );
        assertMatch(
          ticks[0].message ?? "",
          /^block 'slow' has been running for \d+ s: started; 0 turns, 0 tokens in \/ 0 out, 0 tool calls$/,
        );
      } finally {
        await s.close();
      }
    }));
  },
});
