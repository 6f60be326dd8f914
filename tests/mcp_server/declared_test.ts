/**
 * `agent-block mcp --expose blocks`: blocks that declare themselves tools, resources and prompts,
 * served natively by a real server process (HTTP on 127.0.0.1) to the v2 SDK client in both
 * protocol eras — what the conformance suite does not cover: arguments refused by the schema
 * (and the block not run), `list_changed` after a block's header is edited, a malformed header
 * reported with its file and line, a call cancelled mid-run, an elicitation answered and
 * declined, structured results checked against an output schema, and the era a block sees.
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { pathExists, runCli, tempProject, waitFor } from "../helpers.ts";
import { MCP_CLIENT } from "../../src/docs/lua_api/mcp_client.ts";
import { SKIP as SANDBOX_SKIP } from "../sandbox/support.ts";
import {
  assert,
  assertEquals,
  assertStringIncludes,
  connectStdio,
  resultText,
  startHttpServer,
} from "./mcp_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const BLOCKS: Record<string, string> = {
  "blocks/add.lua": `--- Adds two numbers.
---@tool add
---@param a number the first
---@param b number the second
print("a line on the block's stdout")
local f = assert(io.open("ran_add", "a"))
f:write("ran\\n")
f:close()
return tostring(_ARGS.a + _ARGS.b)
`,
  "blocks/ask.lua": `--- Asks the user a question.
---@tool ask
---@param question string what to ask
local r = mcp.client.elicit(_ARGS.question, { type = "object", properties = { answer = { type = "string" } } })
return r.action .. ":" .. std.json.encode(r.content or {})
`,
  "blocks/wait.lua": `--- Waits until it is cancelled.
---@tool wait
local f = assert(io.open("started_wait", "w"))
f:close()
while true do std.time.sleep(0.05) end
`,
  "blocks/era.lua": `--- Tells the era of the calling client.
---@tool era
return mcp.client.era()
`,
  "blocks/stats.lua": `--- Counts; its result is structured.
---@tool stats
---@param good boolean whether to answer in the declared shape
---@output {"type": "object", "properties": {"count": {"type": "integer"}}, "required": ["count"]}
if _ARGS.good then return { count = 3 } end
return { total = "three" }
`,
  "blocks/notes.lua": `--- One note by id.
---@resource notes://{id} note
return "note " .. _ARGS.id .. " at " .. _URI
`,
  "blocks/surface.lua": `--- Lists what mcp.client holds in a served call.
---@tool surface
local out = {}
for k, v in pairs(mcp.client) do out[#out + 1] = type(v) .. " mcp.client." .. k end
table.sort(out)
return table.concat(out, "\\n")
`,
  "blocks/keys.lua": `--- Tells which model key it sees.
---@tool keys
return tostring(std.env.get("ANTHROPIC_API_KEY")) .. " " .. tostring(std.env.get("OPENAI_API_KEY"))
`,
  "blocks/two.lua": `--- Asks for two things in one round.
---@tool two
local a = mcp.client.ask({
  first = { method = "elicitation/create", params = { message = "first?", requestedSchema = { type = "object", properties = {} } } },
  second = { method = "elicitation/create", params = { message = "second?", requestedSchema = { type = "object", properties = {} } } },
})
return a.first.content.v .. "+" .. a.second.content.v
`,
  "blocks/greet.lua": `--- Greets someone.
---@prompt greet
---@param who string whom
---@param tone? "formal"|"friendly"|"frosty" how
return { messages = { "Greet " .. _ARGS.who .. (_ARGS.tone and (", " .. _ARGS.tone) or "") } }
`,
  "blocks/bad.lua": `--- A block whose header is wrong.
---@tool bad
---@param x whatever
return 1
`,
};

async function project(): Promise<{ root: string; home: string }> {
  const root = await tempProject(BLOCKS, "ab_mcp_declared_");
  const home = join(root, ".home");
  Deno.mkdirSync(join(home, "blocks"), { recursive: true });
  return { root, home };
}

async function connect(
  url: string,
  era: "legacy" | "auto",
  setup?: (c: Client) => void,
  capabilities: Record<string, unknown> = {},
): Promise<Client> {
  const client = new Client(
    { name: "agent-block-test", version: "0" },
    { capabilities, ...(era === "auto" ? { versionNegotiation: { mode: "auto" as const } } : {}) },
  );
  setup?.(client);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  assertEquals(client.getNegotiatedProtocolVersion(), era === "auto" ? "2026-07-28" : "2025-11-25");
  return client;
}

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<{ code?: number; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: number; message: string };
  }
  throw new Error("expected the call to fail");
}

Deno.test({
  name: "mcp --expose blocks: declared tools, resources and results beside run_block, in both eras",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      for (const era of ["legacy", "auto"] as const) {
        const client = await connect(srv.url, era);
        try {
          const names = (await client.listTools()).tools.map((t) => t.name);
          for (const n of ["run_block", "add", "ask", "wait", "era", "stats"]) {
            assert(names.includes(n), `${n} in ${names}`);
          }
          assert(!names.includes("bad"), "a malformed declaration is not served");
          const add = (await client.listTools()).tools.find((t) => t.name === "add")!;
          assertEquals(add.description, "Adds two numbers.");
          assertEquals(add.inputSchema.required, ["a", "b"]);

          const sum = await client.callTool({ name: "add", arguments: { a: 2, b: 3 } });
          assertEquals(resultText(sum), "5");
          // Every call is a kernel session of its own, named in the result and readable with knl.
          const session = (sum._meta as Record<string, string>)["agent-block/session"];
          assert(session, `no session in ${JSON.stringify(sum)}`);
          const exported = await runCli(["knl", "export", "--session", session, "-p", p.root]);
          assertEquals(exported.code, 0, exported.stderr);
          const kinds = exported.stdout.trim().split("\n").map((l) => JSON.parse(l).kind);
          assertEquals(kinds, ["session_open", "mcp_call", "mcp_result", "session_close"]);
          assertStringIncludes(exported.stdout, '"arguments":{"a":2,"b":3}');
          assertEquals(
            resultText(await client.callTool({ name: "era", arguments: {} })),
            era === "auto" ? "2026-07-28" : "2025",
          );
          // A structured result is checked against the declared output schema.
          const good = await client.callTool({ name: "stats", arguments: { good: true } });
          assertEquals(good.structuredContent, { count: 3 });
          assertEquals(good.isError, undefined);
          const bad = await client.callTool({ name: "stats", arguments: { good: false } });
          assertEquals(bad.isError, true);
          assertStringIncludes(resultText(bad), "does not match its output schema: count: is required");
          // A resource template gets its variables and its URI.
          const r = await client.readResource({ uri: "notes://42" });
          assertEquals((r.contents[0] as { text: string }).text, "note 42 at notes://42");
          // A prompt: its arguments, its messages, and completion of an argument declared "a"|"b".
          const prompt = (await client.listPrompts()).prompts.find((x) => x.name === "greet")!;
          assertEquals(prompt.arguments?.map((a) => [a.name, a.required]), [["who", true], ["tone", false]]);
          const got = await client.getPrompt({ name: "greet", arguments: { who: "Ada", tone: "formal" } });
          assertEquals(got.messages, [{
            role: "user",
            content: { type: "text", text: "Greet Ada, formal" },
          }]);
          const done = await client.complete({
            ref: { type: "ref/prompt", name: "greet" },
            argument: { name: "tone", value: "fr" },
          });
          assertEquals(done.completion.values, ["friendly", "frosty"]);
          // The reference (docs/lua-api.md) names exactly what a served call's mcp.client holds.
          assertEquals(
            resultText(await client.callTool({ name: "surface", arguments: {} })).split("\n"),
            MCP_CLIENT.entries.map((e) => `${e.kind} ${e.name}`).sort(),
          );
          // run_block still serves every block.
          const rb = await client.callTool({ name: "run_block", arguments: { block: "era" } });
          assert(rb.isError, "mcp.client does not exist outside a declared call");
        } finally {
          await client.close();
        }
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name:
    "mcp --expose blocks: arguments that break the schema are a protocol error naming the field; the block does not run",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      for (const era of ["legacy", "auto"] as const) {
        const client = await connect(srv.url, era);
        try {
          const wrongType = await rejection(client.callTool({ name: "add", arguments: { a: 1, b: "two" } }));
          assertEquals(wrongType.code, -32602);
          assertStringIncludes(
            wrongType.message,
            "Invalid arguments for tool add: b: expected number, got string",
          );
          const missing = await rejection(client.callTool({ name: "add", arguments: { a: 1 } }));
          assertEquals(missing.code, -32602);
          assertStringIncludes(missing.message, "b: is required");
          assert(!pathExists(join(p.root, "ran_add")), "the block ran for an invalid call");
        } finally {
          await client.close();
        }
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name: "mcp --expose blocks: an elicitation answered and one declined, in both eras",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      for (const era of ["legacy", "auto"] as const) {
        const asked: string[] = [];
        const client = await connect(srv.url, era, (c) =>
          c.setRequestHandler("elicitation/create", (req) => {
            const message = (req.params as { message: string }).message;
            asked.push(message);
            return message.includes("decline")
              ? { action: "decline" as const }
              : { action: "accept" as const, content: { answer: `yes (${era})` } };
          }), { elicitation: {} });
        try {
          const yes = await client.callTool({ name: "ask", arguments: { question: "ship it?" } });
          assertEquals(resultText(yes), `accept:{"answer":"yes (${era})"}`);
          const no = await client.callTool({ name: "ask", arguments: { question: "please decline" } });
          assertEquals(resultText(no), "decline:{}");
          assertEquals(asked, ["ship it?", "please decline"]);
        } finally {
          await client.close();
        }
        // A client that cannot elicit: the block's call fails, saying why.
        const plain = await connect(srv.url, era);
        try {
          if (era === "legacy") {
            const r = await plain.callTool({ name: "ask", arguments: { question: "?" } });
            assert(r.isError);
            assertStringIncludes(resultText(r), "did not declare the 'elicitation' capability");
          } else {
            const e = await rejection(plain.callTool({ name: "ask", arguments: { question: "?" } }));
            assertEquals(e.code, -32021);
          }
        } finally {
          await plain.close();
        }
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name: "mcp --expose blocks: a call cancelled mid-run stops its block",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      let calls = 0;
      for (const era of ["legacy", "auto"] as const) {
        const client = await connect(srv.url, era);
        try {
          const started = join(p.root, "started_wait");
          try {
            Deno.removeSync(started);
          } catch { /* first round */ }
          const ac = new AbortController();
          const pending = client.callTool({ name: "wait", arguments: {} }, {
            signal: ac.signal,
            timeout: 300_000,
          });
          pending.catch(() => undefined);
          await waitFor(() => pathExists(started), {
            what: `the wait block (${era}) to start`,
            timeoutMs: 60_000,
          });
          ac.abort("the test cancels");
          await rejection(pending);
          calls++;
          const ended = calls;
          await waitFor(
            () => (srv.stderr().match(/tool #\d+ 'wait': cancelled/g) ?? []).length >= ended,
            { what: `the server to log the ${era} run cancelled`, timeoutMs: 30_000 },
          );
        } finally {
          await client.close();
        }
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name:
    "mcp --expose blocks: editing a block's header sends list_changed; a malformed header is reported with file and line",
  ...opts,
  fn: async () => {
    const p = await project();
    const blocks = await runCli(["blocks", "-p", p.root]);
    assertStringIncludes(blocks.stderr, "bad.lua:3: @param x: unknown type 'whatever'");
    // Over stdio a notification reaches the client as soon as it is sent (no event stream to open).
    let changed = 0;
    const session = await connectStdio(p.root, p.home, {
      extraArgs: ["--expose", "blocks"],
      clientOptions: {},
    });
    const client = session.client;
    client.setNotificationHandler("notifications/tools/list_changed", () => {
      changed++;
    });
    try {
      await waitFor(() => session.stderr().includes("bad.lua:3: @param x: unknown type 'whatever'"), {
        what: "the server to report the malformed header",
      });
      assert(!(await client.listTools()).tools.some((t) => t.name === "bad"));
      // What a block prints never reaches stdout, the protocol's channel: it goes to stderr.
      assertEquals(resultText(await client.callTool({ name: "add", arguments: { a: 1, b: 2 } })), "3");
      await waitFor(() => session.stderr().includes("a line on the block's stdout"), {
        what: "the block's print on the server's stderr",
      });
      const add = join(p.root, "blocks", "add.lua");
      Deno.writeTextFileSync(
        add,
        Deno.readTextFileSync(add).replace(
          "---@param b number the second",
          "---@param b number the second\n---@param c? number a third",
        ),
      );
      await waitFor(() => changed > 0, { what: "notifications/tools/list_changed", timeoutMs: 30_000 });
      const tool = (await client.listTools()).tools.find((t) => t.name === "add")!;
      assert("c" in (tool.inputSchema.properties as Record<string, unknown>));
      // Fixing the malformed header serves the block, and is told too.
      const before = changed;
      Deno.writeTextFileSync(
        join(p.root, "blocks", "bad.lua"),
        "---@tool bad\n---@param x string\nreturn 1\n",
      );
      await waitFor(() => changed > before, { what: "list_changed for the fixed block", timeoutMs: 30_000 });
      assert((await client.listTools()).tools.some((t) => t.name === "bad"));
    } finally {
      await session.close();
    }
  },
});

Deno.test({
  name:
    "mcp --expose blocks --sandbox: a declared tool runs confined (a process each); mcp.client says it cannot be reached",
  ...opts,
  ignore: SANDBOX_SKIP !== undefined,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks", "--sandbox"]);
    try {
      const client = await connect(srv.url, "legacy");
      try {
        assertEquals(resultText(await client.callTool({ name: "add", arguments: { a: 1, b: 1 } })), "2");
        await waitFor(() => /tool #\d+ 'add': returned in \d+ ms \(sandboxed\)/.test(srv.stderr()), {
          what: "the server to log the sandboxed run",
        });
        const era = await client.callTool({ name: "era", arguments: {} });
        assert(era.isError);
        assertStringIncludes(
          resultText(era),
          "mcp.client.era: the calling client cannot be reached from a sandboxed run",
        );
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name:
    "mcp: the project's AGENT_BLOCK_MCP_EXPOSE=blocks exposes declared blocks; a bad --expose is a usage error",
  ...opts,
  fn: async () => {
    const p = await project();
    const plain = await startHttpServer(p.root, p.home);
    try {
      const client = await connect(plain.url, "legacy");
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        assert(!names.includes("add"), `declared tools are served only when asked: ${names}`);
      } finally {
        await client.close();
      }
    } finally {
      await plain.stop();
    }
    Deno.writeTextFileSync(join(p.root, ".env"), "AGENT_BLOCK_MCP_EXPOSE=blocks\n");
    const srv = await startHttpServer(p.root, p.home);
    try {
      const client = await connect(srv.url, "legacy");
      try {
        assert((await client.listTools()).tools.some((t) => t.name === "add"));
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
    const bad = await runCli(["mcp", "-p", p.root, "--expose", "everything"]);
    assertEquals(bad.code, 2);
    assertStringIncludes(bad.stderr, "--expose must be 'blocks'");
  },
});

Deno.test({
  name:
    "attack: a declared block run in the server's process cannot read the host's credentials (the project's .env keys it gets)",
  ...opts,
  fn: async () => {
    const p = await project();
    Deno.writeTextFileSync(join(p.root, ".env"), "OPENAI_API_KEY=project-openai-key\n");
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"], {
      ANTHROPIC_API_KEY: "host-anthropic-secret",
      OPENAI_API_KEY: "host-openai-secret",
    });
    try {
      const client = await connect(srv.url, "legacy");
      try {
        assertEquals(
          resultText(await client.callTool({ name: "keys", arguments: {} })),
          "nil project-openai-key",
        );
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
  },
});

/** One raw 2026-07-28 request (the per-request envelope, an elicitation-capable client); its JSON-RPC answer. */
async function modern(url: string, id: number, method: string, params: Record<string, unknown>): Promise<
  { result?: Record<string, unknown>; error?: { code: number; message: string } }
> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": method,
      ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id,
      method,
      params: {
        ...params,
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientInfo": { name: "raw", version: "0" },
          "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
        },
      },
    }),
  });
  const text = await res.text();
  const json = text.trimStart().startsWith("{")
    ? text
    : text.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).find((l) =>
      l.includes(`"id":${id}`)
    );
  if (!json) throw new Error(`no answer to ${id} in ${res.status} ${text}`);
  return JSON.parse(json);
}

Deno.test({
  name:
    "mcp --expose blocks, 2026-07-28: a partial answer is asked for the rest; a state is good for one round",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      const r1 = (await modern(srv.url, 1, "tools/call", { name: "two", arguments: {} })).result!;
      assertEquals(r1.resultType, "input_required");
      assertEquals(Object.keys(r1.inputRequests as object).sort(), ["first", "second"]);
      const accept = (v: string) => ({ action: "accept", content: { v } });
      const r2 = (await modern(srv.url, 2, "tools/call", {
        name: "two",
        arguments: {},
        inputResponses: { first: accept("A") },
        requestState: r1.requestState,
      })).result!;
      assertEquals(r2.resultType, "input_required");
      assertEquals(Object.keys(r2.inputRequests as object), ["second"]);
      assert(r2.requestState !== r1.requestState, "every round has a fresh state");
      const stale = await modern(srv.url, 3, "tools/call", {
        name: "two",
        arguments: {},
        inputResponses: { second: accept("X") },
        requestState: r1.requestState,
      });
      assertEquals(stale.error?.code, -32602);
      // A state given for one tool is refused with another.
      const other = await modern(srv.url, 5, "tools/call", {
        name: "ask",
        arguments: { question: "?" },
        inputResponses: { second: accept("X") },
        requestState: r2.requestState,
      });
      assertEquals(other.error?.code, -32602);
      const r3 = (await modern(srv.url, 4, "tools/call", {
        name: "two",
        arguments: {},
        inputResponses: { second: accept("B") },
        requestState: r2.requestState,
      })).result!;
      assertEquals((r3.content as { text: string }[])[0].text, "A+B");
    } finally {
      await srv.stop();
    }
  },
});
