/**
 * `completion/complete` of declared prompts and resource templates (`completionOf` in
 * `src/mcp_server/server.ts`): a real `agent-block mcp --expose blocks` process and the v2 SDK
 * client, over stdio (2025 era) and Streamable HTTP (2026-07-28). A free-text argument completes
 * from its `---@examples` (by prefix, then ignoring case), an enum from its values and examples, a
 * template variable from its examples, anything else to nothing; a tool's examples are its input
 * schema's `examples`.
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { tempProject } from "../helpers.ts";
import { assertEquals, connectStdio, startHttpServer } from "./mcp_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const BLOCKS: Record<string, string> = {
  "blocks/explain.lua": `--- Explains a topic.
---@prompt explain
---@param topic string what to explain
---@param level? "basic"|"expert" how deep
---@param note? string free text, no examples
---@examples topic ["databases", "deno",
---   "Design"]
return "Explain " .. _ARGS.topic
`,
  "blocks/doc.lua": `--- A page of the docs.
---@resource doc://{lang}/{page} doc
---@examples lang ["en", "de", "es"]
return _ARGS.lang .. "/" .. _ARGS.page
`,
  "blocks/find.lua": `--- Finds things.
---@tool find
---@param query string what to look for
---@param limit? integer at most this many
---@examples query ["open issues", "my drafts"]
---@examples limit [10, 50]
return _ARGS.query
`,
};

async function check(client: Client): Promise<void> {
  const complete = async (ref: Record<string, string>, name: string, value: string) =>
    (await client.complete({ ref: ref as { type: "ref/prompt"; name: string }, argument: { name, value } }))
      .completion.values;
  const prompt = { type: "ref/prompt", name: "explain" };
  assertEquals(await complete(prompt, "topic", ""), ["databases", "deno", "Design"]);
  assertEquals(await complete(prompt, "topic", "de"), ["deno"]);
  assertEquals(await complete(prompt, "topic", "DE"), ["deno", "Design"]); // none exactly: any case
  assertEquals(await complete(prompt, "topic", "x"), []);
  assertEquals(await complete(prompt, "level", "e"), ["expert"]);
  assertEquals(await complete(prompt, "note", ""), []);
  const template = { type: "ref/resource", uri: "doc://{lang}/{page}" };
  assertEquals(await complete(template, "lang", "e"), ["en", "es"]);
  assertEquals(await complete(template, "page", ""), []);
  // The examples are not prompt arguments' wire fields.
  const listed = (await client.listPrompts()).prompts.find((p) => p.name === "explain")!;
  assertEquals(listed.arguments?.map((a) => Object.keys(a).sort()), [
    ["description", "name", "required"],
    ["description", "name", "required"],
    ["description", "name", "required"],
  ]);
  // A tool's examples are its schema's.
  const find = (await client.listTools()).tools.find((t) => t.name === "find")!;
  const props = find.inputSchema.properties as Record<string, { examples?: unknown[] }>;
  assertEquals(props.query.examples, ["open issues", "my drafts"]);
  assertEquals(props.limit.examples, [10, 50]);
}

Deno.test({
  name:
    "mcp completion/complete: prompt arguments and template variables complete from ---@examples, over stdio and HTTP",
  ...opts,
  fn: async () => {
    const root = await tempProject(BLOCKS, "ab_mcp_complete_");
    const home = join(root, ".home");
    Deno.mkdirSync(join(home, "blocks"), { recursive: true });
    const s = await connectStdio(root, home, { extraArgs: ["--expose", "blocks"] });
    try {
      await check(s.client);
    } finally {
      await s.close();
    }
    const srv = await startHttpServer(root, home, ["--expose", "blocks"]);
    try {
      const client = new Client({ name: "completer", version: "0" }, {
        versionNegotiation: { mode: "auto" as const },
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
      try {
        assertEquals(client.getNegotiatedProtocolVersion(), "2026-07-28");
        await check(client);
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
  },
});
