/**
 * The kernel record of served calls (`src/mcp_server/call_record.ts`): a real `agent-block mcp
 * --expose blocks` process, the v2 SDK client over stdio and over Streamable HTTP, and the
 * project's kernel database read back with `agent-block knl` — each call (a `run_block` call, a
 * declared tool call, refused or run) is a session of its own holding the call, its arguments, its
 * outcome and the sessions its run opened, and those sessions carry the call's label.
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { runCli, tempProject } from "../helpers.ts";
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
  "blocks/noted.lua": `-- Opens a kernel session of its own and returns what it was asked.
return require("knl").session({ owner = "noted" }, function(s)
  s:append({ kind = "note", data = { prompt = _PROMPT } })
  return "noted " .. tostring(_PROMPT)
end)
`,
  "blocks/double.lua": `--- Doubles a number.
---@tool double
---@param n number what to double
return tostring(_ARGS.n * 2)
`,
  "blocks/boom.lua": `--- Always fails.
---@tool boom
error("boom went the block")
`,
};

async function project(): Promise<{ root: string; home: string }> {
  const root = await tempProject(BLOCKS, "ab_mcp_record_");
  const home = join(root, ".home");
  Deno.mkdirSync(join(home, "blocks"), { recursive: true });
  return { root, home };
}

interface Row {
  kind: string;
  data: Record<string, unknown>;
  meta: Record<string, unknown>;
}

/** The events of session `id` in the project's kernel database. */
async function exported(root: string, id: string): Promise<Row[]> {
  const r = await runCli(["knl", "export", "--session", id, "-p", root]);
  assertEquals(r.code, 0, r.stderr);
  return r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Row);
}

/** `knl sessions --json` with `labels`. */
async function sessions(root: string, labels: Record<string, string>): Promise<Record<string, unknown>[]> {
  const args = ["knl", "sessions", "--json", "-p", root];
  for (const [k, v] of Object.entries(labels)) args.push("--label", `${k}=${v}`);
  const r = await runCli(args);
  assertEquals(r.code, 0, r.stderr);
  return r.stdout.trim().split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

function sessionOf(r: { _meta?: Record<string, unknown> }): string {
  const id = r._meta?.["agent-block/session"];
  assert(typeof id === "string", `no session in ${JSON.stringify(r)}`);
  return id;
}

Deno.test({
  name:
    "mcp call record: a run_block call over stdio is a kernel session linked both ways to its run's sessions",
  ...opts,
  fn: async () => {
    const p = await project();
    const s = await connectStdio(p.root, p.home, { extraArgs: ["--expose", "blocks"] });
    try {
      const r = await s.client.callTool({ name: "run_block", arguments: { block: "noted", prompt: "hi" } });
      assertEquals(resultText(r), "noted hi");
      const call = sessionOf(r);
      const events = await exported(p.root, call);
      assertEquals(events.map((e) => e.kind), ["session_open", "mcp_call", "mcp_result", "session_close"]);
      assertEquals(events[0].data.owner, "agent-block mcp");
      assertEquals(events[0].data.script, "blocks/noted.lua");
      assertEquals(events[0].meta, { mcp_kind: "tool", mcp_name: "run_block", block: "noted" });
      assertEquals(events[1].data.arguments, { block: "noted", prompt: "hi" });
      assertEquals(events[1].data.client, { name: "agent-block-test", version: "0" });
      assertEquals(events[1].data.era, "2025");
      assertEquals(events[2].data.outcome, "returned");
      assertEquals(events[2].data.value, "noted hi");
      assertEquals(events[3].data.status, "ok");
      // The run's own session names the call, and the call names it.
      const runSessions = events[2].data.sessions as string[];
      assertEquals(runSessions.length, 1);
      const linked = await sessions(p.root, { mcp_call: call });
      assertEquals(linked.map((x) => x.id), runSessions);
      assertEquals(linked[0].owner, "noted");

      // A refused call (an unknown block) is recorded too, as refused, and runs nothing.
      const bad = await s.client.callTool({ name: "run_block", arguments: { block: "nope" } });
      assertEquals(bad.isError, true);
      const refused = await exported(p.root, sessionOf(bad));
      assertEquals(refused.map((e) => e.kind), ["session_open", "mcp_call", "mcp_result", "session_close"]);
      assertEquals(refused[2].data.outcome, "invalid");
      assertStringIncludes(String(refused[2].data.error), "unknown block 'nope'");
      assertEquals(refused[3].data.status, "error");

      // knl sessions lists what the client did.
      const listed = await sessions(p.root, { mcp_name: "run_block" });
      assertEquals(listed.map((x) => x.status).sort(), ["error", "ok"]);
    } finally {
      await s.close();
    }
  },
});

Deno.test({
  name:
    "mcp call record: declared tool calls over HTTP — run, raised and refused by the schema — are each a session",
  ...opts,
  fn: async () => {
    const p = await project();
    const srv = await startHttpServer(p.root, p.home, ["--expose", "blocks"]);
    try {
      const client = new Client({ name: "recorder-test", version: "7" }, {
        versionNegotiation: { mode: "auto" as const },
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
      try {
        const ok = await client.callTool({ name: "double", arguments: { n: 21 } });
        assertEquals(resultText(ok), "42");
        const run = await exported(p.root, sessionOf(ok));
        assertEquals(run[0].meta, { mcp_kind: "tool", mcp_name: "double" });
        assertEquals(run[1].data.arguments, { n: 21 });
        assertEquals(run[1].data.era, "2026-07-28");
        assertEquals(run[1].data.client, { name: "recorder-test", version: "7" });
        assertEquals([run[2].data.outcome, run[2].data.value, run[3].data.status], ["returned", "42", "ok"]);

        const failed = await client.callTool({ name: "boom", arguments: {} });
        assertEquals(failed.isError, true);
        const raised = await exported(p.root, sessionOf(failed));
        assertEquals(raised[2].data.outcome, "raised");
        assertStringIncludes(String(raised[2].data.error), "boom went the block");
        assertEquals(raised[3].data.status, "error");

        // Refused by the schema: a protocol error, no run, and still a session saying why.
        let message = "";
        try {
          await client.callTool({ name: "double", arguments: { n: "x" } });
        } catch (e) {
          message = (e as Error).message;
        }
        assertStringIncludes(message, "Invalid arguments for tool double");
        const refused = (await sessions(p.root, { mcp_name: "double" })).filter((x) => x.status === "error");
        assertEquals(refused.length, 1);
        const events = await exported(p.root, String(refused[0].id));
        assertEquals(events[1].data.arguments, { n: "x" });
        assertEquals(events[2].data.outcome, "invalid");
        assertEquals(events[2].data.sessions, []);
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
  },
});
