/**
 * Declared tools whose input schema is an lshape shape a Lua module exports
 * (`---@input lshape MODULE[:FIELD]`, `src/mcp_server/lshape_input.ts`): a real
 * `agent-block mcp --expose blocks` process and the v2 SDK client, over stdio and Streamable
 * HTTP. The listing carries the JSON Schema the shape stands for (a named, recursive shape through
 * `$defs`), a call is checked against it before the block runs, an edit of the module is seen at
 * the next listing, and a declaration that cannot be resolved leaves its tool out with a log line
 * naming the block's file and line.
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { tempProject, waitFor } from "../helpers.ts";
import {
  assert,
  assertEquals,
  assertStringIncludes,
  connectStdio,
  resultText,
  startHttpServer,
} from "./mcp_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const SCHEMAS = `local t = require("lshape").t
local M = {}
M.Order = t.shape({
  item = t.string:describe("what to order"),
  qty = t.integer,
  size = t.one_of("s", "m", "l"):optional(),
  tags = t.array_of(t.string):optional(),
})
M.Node = t.named("Node", t.shape({ name = t.string, children = t.array_of(t.ref("Node")):optional() }))
return M
`;

const BLOCKS: Record<string, string> = {
  "lib/schemas.lua": SCHEMAS,
  "blocks/order.lua": `--- Places an order.
---@tool order
---@input lshape schemas:Order
return _ARGS.item .. " x" .. _ARGS.qty .. (_ARGS.size and (" " .. _ARGS.size) or "")
`,
  "blocks/tree.lua": `--- Counts the nodes of a tree.
---@tool tree
---@input lshape schemas:Node
local function count(n)
  local c = 1
  for _, k in ipairs(n.children or {}) do c = c + count(k) end
  return c
end
return tostring(count(_ARGS))
`,
  "blocks/broken.lua": `--- Names a schema that is not there.
---@tool broken
---@input lshape schemas:Nope
return "never"
`,
};

async function rejection(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected the call to fail");
}

async function check(client: Client, root: string): Promise<void> {
  const tools = (await client.listTools()).tools;
  const names = tools.map((t) => t.name);
  assert(names.includes("order") && names.includes("tree"), `${names}`);
  assert(!names.includes("broken"), "an unresolvable lshape input leaves its tool out");
  const order = tools.find((t) => t.name === "order")!;
  assertEquals(order.inputSchema, {
    type: "object",
    properties: {
      item: { type: "string", description: "what to order" },
      qty: { type: "integer" },
      size: { enum: ["s", "m", "l"] },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["item", "qty"],
  });
  const tree = tools.find((t) => t.name === "tree")!;
  assertEquals((tree.inputSchema as Record<string, unknown>)["$defs"], {
    Node: {
      type: "object",
      properties: { children: { type: "array", items: { $ref: "#/$defs/Node" } }, name: { type: "string" } },
      required: ["name"],
    },
  });

  assertEquals(
    resultText(await client.callTool({ name: "order", arguments: { item: "tea", qty: 2, size: "m" } })),
    "tea x2 m",
  );
  assertStringIncludes(
    await rejection(client.callTool({ name: "order", arguments: { item: "tea", qty: "two" } })),
    "Invalid arguments for tool order: qty",
  );
  assertStringIncludes(
    await rejection(client.callTool({ name: "order", arguments: { item: "tea", qty: 1, size: "xl" } })),
    "size",
  );
  const nested = { name: "a", children: [{ name: "b" }, { name: "c", children: [{ name: "d" }] }] };
  assertEquals(resultText(await client.callTool({ name: "tree", arguments: nested })), "4");
  assertStringIncludes(
    await rejection(client.callTool({ name: "tree", arguments: { name: "a", children: [{ name: 1 }] } })),
    "children[0].name",
  );

  // An edit of the module is seen at the next listing: qty becomes optional, a field is added.
  const file = join(root, "lib", "schemas.lua");
  Deno.writeTextFileSync(
    file,
    SCHEMAS.replace("qty = t.integer,", "qty = t.integer:optional(), note = t.string,"),
  );
  try {
    const again = (await client.listTools()).tools.find((t) => t.name === "order")!;
    assertEquals(again.inputSchema.required, ["item", "note"]);
  } finally {
    Deno.writeTextFileSync(file, SCHEMAS);
  }
}

Deno.test({
  name:
    "mcp --expose blocks: @input lshape MODULE:FIELD serves the shape as JSON Schema and checks calls, over stdio and HTTP",
  ...opts,
  fn: async () => {
    const root = await tempProject(BLOCKS, "ab_mcp_lshape_");
    const home = join(root, ".home");
    Deno.mkdirSync(join(home, "blocks"), { recursive: true });
    const s = await connectStdio(root, home, { extraArgs: ["--expose", "blocks"] });
    try {
      await check(s.client, root);
      await waitFor(
        () =>
          s.stderr().includes("broken.lua:3: @input lshape: schemas:Nope: not an lshape schema (got nil)"),
        { what: "the unresolvable declaration logged with its file and line", timeoutMs: 30_000 },
      );
    } finally {
      await s.close();
    }
    const srv = await startHttpServer(root, home, ["--expose", "blocks"]);
    try {
      const client = new Client({ name: "lshape", version: "0" }, {
        versionNegotiation: { mode: "auto" as const },
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
      try {
        await check(client, root);
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
  },
});
