/**
 * Renders `docs/architecture/mcp-support.md` (the seed's "support status, capability matrix, and
 * the tool-grouping design rationale"): the prose around one table per side of the protocol.
 *
 * Owns the MCP method each `mcp.*` function speaks in each protocol era (`MCP_METHODS`): the one
 * fact the Lua API data does not carry. Every other column comes from that data (`LUA_API`'s
 * `mcp` section: the signature and the first sentence of each entry's doc), and the render fails
 * when a function of the data has no row here or a row names a function the data does not have,
 * so the matrix cannot drift from the reference (`deno task check` regenerates and compares).
 */
import type { FunctionEntry, Section } from "./lua_api/types.ts";
import { allEntries, signature } from "./names.ts";

/** What a function speaks: in the 2025 era, and in the 2026-07-28 era (`null`: not there). */
interface Methods {
  legacy: string | null;
  modern: string | null;
}

/** The MCP method of every `mcp.*` function, per era (`local`: answered by the client itself). */
export const MCP_METHODS: Readonly<Record<string, Methods>> = {
  "mcp.connect": { legacy: "`initialize` over stdio", modern: "`server/discover` over stdio" },
  "mcp.connect_http": {
    legacy: "`initialize` over Streamable HTTP or SSE",
    modern: "`server/discover` over Streamable HTTP",
  },
  "mcp.disconnect": { legacy: "closes the transport", modern: "closes the transport" },
  "mcp.call": { legacy: "`tools/call`", modern: "`tools/call`" },
  "mcp.list_tools": { legacy: "`tools/list`", modern: "`tools/list`" },
  "mcp.list_resources": { legacy: "`resources/list`", modern: "`resources/list`" },
  "mcp.list_resource_templates": {
    legacy: "`resources/templates/list`",
    modern: "`resources/templates/list`",
  },
  "mcp.read_resource": { legacy: "`resources/read`", modern: "`resources/read`" },
  "mcp.list_prompts": { legacy: "`prompts/list`", modern: "`prompts/list`" },
  "mcp.get_prompt": { legacy: "`prompts/get`", modern: "`prompts/get`" },
  "mcp.complete": { legacy: "`completion/complete`", modern: "`completion/complete`" },
  "mcp.ping": { legacy: "`ping`", modern: null },
  "mcp.set_log_level": { legacy: "`logging/setLevel`", modern: null },
  "mcp.subscribe_resource": { legacy: "`resources/subscribe`", modern: "`subscriptions/listen`" },
  "mcp.unsubscribe_resource": {
    legacy: "`resources/unsubscribe`",
    modern: "ends its `subscriptions/listen`",
  },
  "mcp.server_info": { legacy: "local", modern: "local" },
  "mcp.cancel": { legacy: "`notifications/cancelled`", modern: "`notifications/cancelled`" },
  "mcp.notify_roots_list_changed": {
    legacy: "`notifications/roots/list_changed`",
    modern: "`notifications/roots/list_changed`",
  },
  "mcp.tools_epoch": { legacy: "local", modern: "local" },
  "mcp.on_progress": { legacy: "`notifications/progress`", modern: "`notifications/progress`" },
  "mcp.on_log": { legacy: "`notifications/message`", modern: "`notifications/message`" },
  "mcp.on_resource_update": {
    legacy: "`notifications/resources/updated`",
    modern: "`notifications/resources/updated` on the listen stream",
  },
  "mcp.on_resources_list_changed": {
    legacy: "`notifications/resources/list_changed`",
    modern: "the same, on the listen stream",
  },
  "mcp.on_tools_list_changed": {
    legacy: "`notifications/tools/list_changed`",
    modern: "the same, on the listen stream",
  },
  "mcp.on_prompts_list_changed": {
    legacy: "`notifications/prompts/list_changed`",
    modern: "the same, on the listen stream",
  },
  "mcp.set_sampling_handler": {
    legacy: "answers `sampling/createMessage`",
    modern: "answers `sampling/createMessage`",
  },
  "mcp.set_elicitation_handler": {
    legacy: "answers `elicitation/create` (form mode)",
    modern: "answers `elicitation/create` (form mode)",
  },
  "mcp.set_roots_handler": { legacy: "answers `roots/list`", modern: "answers `roots/list`" },
  // Served side (a block declared as a tool, resource or prompt, during a call of it)
  "mcp.client.progress": { legacy: "`notifications/progress`", modern: "`notifications/progress`" },
  "mcp.client.log": { legacy: "`notifications/message`", modern: "`notifications/message`" },
  "mcp.client.sample": {
    legacy: "`sampling/createMessage` (to the client)",
    modern: "an `input_required` round asking for a sampling result",
  },
  "mcp.client.elicit": {
    legacy: "`elicitation/create` (to the client)",
    modern: "an `input_required` round asking for an elicitation",
  },
  "mcp.client.roots": {
    legacy: "`roots/list` (to the client)",
    modern: "an `input_required` round asking for roots",
  },
  "mcp.client.ask": {
    legacy: "the requests, one after another",
    modern: "one `input_required` round with every request",
  },
  "mcp.client.capabilities": {
    legacy: "from `initialize` (no message)",
    modern: "from the request's client capabilities",
  },
  "mcp.client.era": { legacy: "no message", modern: "no message" },
};

/** The first sentence of a Markdown doc, for a table cell. */
function firstSentence(doc: string): string {
  const text = doc.replace(/\s+/g, " ").trim();
  let depth = 0;
  let end = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "." && depth === 0 && (i + 1 === text.length || text[i + 1] === " ")) {
      end = i + 1;
      break;
    }
  }
  return text.slice(0, end).replace(/\|/g, "\\|");
}

/** The `mcp.*` functions of `sections`, in reference order. */
function mcpFunctions(sections: readonly Section[]): FunctionEntry[] {
  return allEntries(sections).flatMap(({ entry }) =>
    entry.kind === "function" && entry.name.startsWith("mcp.") ? [entry] : []
  );
}

/** The document; throws when `MCP_METHODS` and the reference disagree on the functions. */
export function renderMcpSupport(sections: readonly Section[]): string {
  const fns = mcpFunctions(sections);
  const names = new Set(fns.map((f) => f.name));
  const missing = fns.filter((f) => !MCP_METHODS[f.name]).map((f) => f.name);
  const stale = Object.keys(MCP_METHODS).filter((n) => !names.has(n));
  if (missing.length || stale.length) {
    throw new Error(
      `src/docs/render_mcp_support.ts: MCP_METHODS ${missing.length ? `lacks ${missing.join(", ")}` : ""}` +
        `${missing.length && stale.length ? "; " : ""}${
          stale.length ? `names no function: ${stale.join(", ")}` : ""
        }`,
    );
  }
  const rows = fns.map((f) => {
    const m = MCP_METHODS[f.name];
    const era = (v: string | null) => v ?? "— (not in this era: fails with kind `era`)";
    const anchor = f.name.replace(/\./g, "-");
    return `| [\`${signature(f)}\`](../lua-api.md#${anchor}) | ${era(m.legacy)} | ${era(m.modern)} | ${
      firstSentence(f.doc)
    } |`;
  });
  return `<!-- Generated by tools/gen_lua_api.ts (deno task gen) from src/docs/lua_api/ and src/docs/render_mcp_support.ts. Do not edit by hand. -->

# MCP support

agent-block is an MCP **client** (a block's \`mcp.*\`, and \`agent.run\`'s \`mcp_servers\`) and an MCP
**server** (\`agent-block mcp\`: each block a tool; see the README, "Serving blocks over MCP"). This page is
the client's support status: what each \`mcp.*\` function speaks in each protocol era, what the client
declares, and why tools are grouped as they are. The Lua reference (\`docs/lua-api.md\`) has each function's
arguments, results and errors.

## Support status

- **Both protocol eras.** A connection negotiates its era: a 2026-07-28 server gets the modern era
  (\`server/discover\`, no \`initialize\`), a 2025-era server the \`initialize\` handshake (\`era = "legacy"\` or
  \`"auto"\` in the connect options force or allow it). The same Lua handlers answer both.
- **Transports.** stdio (the server in a process group of the run, the host's credentials removed),
  Streamable HTTP, and SSE (2025 era).
- **Limits.** Every request times out (\`--mcp-timeout-secs\`, default 30, or \`opts.timeout\`) and a timed-out
  request is cancelled on the server; a message is at most \`opts.max_message_bytes\` (default 64 MiB).
- **Failures are answers.** A failed request returns \`{ ok = false, error, code | kind }\`; only bad arguments
  raise. A server without a capability gets a failure, not silence (\`subscribe_resource\` on a server without
  \`resources.subscribe\`, in both eras).
- **Tested against** our echo and subscribe servers (\`examples/\`, both eras) and
  \`@modelcontextprotocol/server-everything\` (2025 era), over stdio, Streamable HTTP and SSE; the subscribe
  smoke is \`tests/fixtures/mcp_on_resource_update_callback.lua\`
  (\`docs/runbooks/e2e-mcp-resource-subscribe.md\`).

## Capability matrix: the client's functions

| Function | 2025 era | 2026-07-28 era | What it does |
| --- | --- | --- | --- |
${rows.join("\n")}

## What the client declares

| Capability | Declared | Answered by |
| --- | --- | --- |
| \`sampling\` | yes | \`mcp.set_sampling_handler\` (or \`agent.run\`'s \`sampling\`); none set: the request fails |
| \`elicitation\` (form) | yes | \`mcp.set_elicitation_handler\`; a field an accepted \`content\` leaves out gets the schema's \`default\` (SEP-1034) |
| \`elicitation\` (URL) | yes | declined explicitly (never shown to a handler), rather than a capability error on the server |
| \`roots\` (\`listChanged\`) | yes | \`mcp.set_roots_handler\`; \`mcp.notify_roots_list_changed\` tells the server |

## Tool grouping: the design

A model is offered tools, and every tool offered costs context and attention. \`agent.run\` therefore offers
tools by **group**, and \`tool_groups\` names the groups a run offers (all of them when it is not given):

- A block's own tools carry the group they are registered with (\`tool.register(name, spec, fn, { group })\`),
  and so do an embedder's host tools (\`hostTool({ group })\`).
- An MCP server's tools are registered as \`<server>__<tool>\` and grouped by the tool's \`_meta.group\` when the
  server gives one, else by the server's name. The server is the natural unit: one process, one trust
  decision, one set of credentials, and usually one domain; a server that bundles several domains splits
  itself with \`_meta.group\`, without the client having to know its tools.
- The \`server__tool\` name keeps two servers' tools of the same name apart, and tells the model (and the
  kernel log) where a call went.
- Grouping is a filter on what is offered, never a permission: \`tool.call\` reaches any registered tool, and
  what a tool may do is decided by the tool policy (\`require("policy")\`), not by its group.
`;
}
