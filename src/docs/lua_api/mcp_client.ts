/** Reference entries: `mcp.client`, the calling client of a block served as an MCP tool, resource or prompt. */
import type { Section } from "./types.ts";

export const MCP_CLIENT: Section = {
  id: "mcp-client",
  title: "mcp.client",
  file: "agent-block",
  servedOnly: true,
  tables: ["mcp.client"],
  doc: "The client that called this block, when the block is served as a tool, resource or prompt of its " +
    "own (`agent-block mcp --expose blocks`; the header declares it: `---@tool NAME`, `---@resource URI`, " +
    "`---@prompt NAME`). It exists only in such a call, and not under `--sandbox` (a confined run is a " +
    "process of its own). The call's arguments are `_ARGS` (a resource template's variables; a prompt's " +
    "arguments), a resource's URI `_URI`. Requests to the client (`sample`, `elicit`, `roots`, `ask`) work " +
    "in both protocol eras: the block waits while the client answers (a 2025-era client gets the request " +
    "itself; a 2026-07-28 client an `input_required` result, and the call resumes in this very run when it " +
    "answers). Asking for something the client did not declare raises (uncaught, the call fails with " +
    "-32021 for a 2026-07-28 client). A cancelled call stops the block at its next host call.",
  entries: [
    {
      kind: "function",
      name: "mcp.client.progress",
      doc:
        "Sends `notifications/progress` for the call, when the client asked for progress (a `progressToken`).",
      params: [
        { name: "progress", type: "number", doc: "How far (increasing)." },
        { name: "total", type: "number", optional: true, doc: "Out of how much." },
        { name: "message", type: "string", optional: true, doc: "What is happening." },
      ],
      returns: [{ type: "boolean", doc: "False when the client asked for no progress (nothing sent)." }],
      example: 'mcp.client.progress(50, 100, "half way")',
    },
    {
      kind: "function",
      name: "mcp.client.log",
      doc: "Sends a log message (`notifications/message`) to the client, filtered by the level it set " +
        "(2025: `logging/setLevel`; 2026-07-28: the request's log level; none set: nothing is sent).",
      params: [
        {
          name: "level",
          type: '"debug"|"info"|"notice"|"warning"|"error"|"critical"|"alert"|"emergency"',
          doc: "The level.",
        },
        { name: "data", type: "any", doc: "A string or any JSON value." },
        { name: "logger", type: "string", optional: true, doc: "The logger's name." },
      ],
      example: 'mcp.client.log("info", "started")',
    },
    {
      kind: "function",
      name: "mcp.client.sample",
      doc: "Asks the client's model (`sampling/createMessage`); needs the client's `sampling` capability.",
      params: [{
        name: "params",
        type: "string|table",
        doc:
          "A prompt, or the request's params (`messages`, `maxTokens` (default 1000), `systemPrompt`, ...).",
      }],
      returns: [{
        type: "table",
        doc: "The client's `CreateMessageResult` (`role`, `content`, `model`, ...).",
      }],
      errors: "Raises when the client did not declare `sampling`, or the call ended.",
      example: 'local r = mcp.client.sample("Name a colour")\nprint(r.content.text)',
    },
    {
      kind: "function",
      name: "mcp.client.elicit",
      doc:
        "Asks the user through the client (`elicitation/create`, form mode); needs its `elicitation` capability.",
      params: [
        { name: "message", type: "string", doc: "What to ask." },
        {
          name: "schema",
          type: "table",
          optional: true,
          doc: "The requested schema (a flat JSON Schema object).",
        },
      ],
      returns: [{
        type: "table",
        doc: '`{ action = "accept", content = {...} }`, or `action` `"decline"`/`"cancel"`.',
      }],
      errors: "Raises when the client did not declare `elicitation`, or the call ended.",
      example:
        'local r = mcp.client.elicit("Ship it?", { type = "object", properties = { ok = { type = "boolean" } } })\n' +
        'if r.action == "accept" and r.content.ok then print("shipping") end',
    },
    {
      kind: "function",
      name: "mcp.client.roots",
      doc: "The client's roots (`roots/list`); needs its `roots` capability.",
      returns: [{ type: "{ uri: string, name: string? }[]", doc: "The roots." }],
      errors: "Raises when the client did not declare `roots`, or the call ended.",
      example: "for _, r in ipairs(mcp.client.roots()) do print(r.uri) end",
    },
    {
      kind: "function",
      name: "mcp.client.ask",
      doc: "Several requests to the client in one round, under keys the block names (what a 2026-07-28 " +
        "client sees as the `input_required` result's `inputRequests`); answers when all are answered.",
      params: [{
        name: "requests",
        type: "table<string, { method: string, params: table? }>",
        doc: "By key: `elicitation/create`, `sampling/createMessage` or `roots/list` with its params.",
      }],
      returns: [{ type: "table<string, table>", doc: "The answers, by the same keys." }],
      errors: "Raises when the client lacks a capability one of them needs, or the call ended.",
      example: 'local a = mcp.client.ask({ where = { method = "roots/list" } })\nprint(#a.where.roots)',
    },
    {
      kind: "function",
      name: "mcp.client.capabilities",
      doc: "The capabilities the calling client declared (`sampling`, `elicitation`, `roots`, ...).",
      returns: [{ type: "table", doc: "As the client sent them." }],
      example: "if mcp.client.capabilities().elicitation then print('can ask the user') end",
    },
    {
      kind: "function",
      name: "mcp.client.era",
      doc: 'The calling client\'s protocol era: `"2025"` or `"2026-07-28"`.',
      returns: [{ type: "string", doc: "The era." }],
      example: "print(mcp.client.era())",
    },
  ],
};
