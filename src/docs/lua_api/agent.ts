/** Reference entries: `require("agent")`, the tool-using loop. */
import type { Section } from "./types.ts";

export const AGENT: Section = {
  id: "agent",
  title: 'require("agent")',
  file: "agent",
  module: "agent",
  tables: ["agent"],
  doc: "The built-in ReAct loop: `agent.run(opts)` asks a model, runs the tools it calls (the registered " +
    "Lua tools, the MCP servers' tools, `extra_tools`), feeds the results back, and stops when the model " +
    "answers without tools or a limit is reached. A run is one kernel session (owner `agent`, in the " +
    "project's `.agent-block/knl.sqlite` unless `store` says otherwise) and each turn one `knl.beat`. " +
    "`agent` is a consumer module: `agent-block vendor agent` gives the project a copy, and a shadowing " +
    '`lib/agent/init.lua` can delegate to `require("embedded.agent")`.',
  entries: [
    {
      kind: "class",
      name: "agent.McpServer",
      doc: "An MCP server `agent.run` connects: stdio (`command`) or HTTP (`url`).",
      fields: [
        { name: "name", type: "string", doc: "The server name (tools appear as `<name>__<tool>`)." },
        { name: "command", type: "string", optional: true, doc: "stdio: the program." },
        { name: "args", type: "string[]", optional: true, doc: "stdio: its arguments." },
        { name: "cwd", type: "string", optional: true, doc: "stdio: its working directory." },
        { name: "env", type: "table<string, string>", optional: true, doc: "stdio: variables for it." },
        { name: "url", type: "string", optional: true, doc: "HTTP: the endpoint." },
        {
          name: "auth",
          type: '"login"|mcp.Auth',
          optional: true,
          doc: "HTTP: OAuth credentials, as `mcp.connect_http`'s `opts.auth`.",
        },
        {
          name: "transport_opts",
          type: '{ transport: ("http"|"sse")?, headers: table<string, string>?, auth: ("login"|mcp.Auth)? }',
          optional: true,
          doc: "HTTP: transport, headers and OAuth (`mcp.HttpOpts`).",
        },
        {
          name: "required",
          type: "boolean",
          optional: true,
          doc: "Fail the run at start when it cannot connect.",
        },
      ],
    },
    {
      kind: "class",
      name: "agent.TurnInfo",
      doc: "What `on_turn` receives (exactly these four keys).",
      fields: [
        { name: "turn_number", type: "integer", doc: "1 for the first model call." },
        { name: "content", type: "string", doc: "The turn's text." },
        { name: "tool_calls", type: "llm.ContentBlock[]", doc: "Its `tool_use` blocks (not run yet)." },
        { name: "usage", type: "llm.Usage", doc: "The turn's usage." },
      ],
    },
    {
      kind: "class",
      name: "agent.RunOpts",
      extends: "llm.Options",
      doc: "Options of `agent.run`: the model call's (`llm.Options`, except `tools`) plus the loop's.",
      fields: [
        { name: "prompt", type: "string", doc: "The user's request (required, non-empty)." },
        { name: "max_iterations", type: "integer", optional: true, doc: "Model calls at most (default 20)." },
        {
          name: "max_tokens_budget",
          type: "integer",
          optional: true,
          doc: "Total tokens over the run (also the session's `tokens` budget).",
        },
        {
          name: "max_cost_usd",
          type: "number",
          optional: true,
          doc: "Spend cap (needs a price for the model).",
        },
        {
          name: "on_turn",
          type: "fun(info: agent.TurnInfo): boolean?",
          optional: true,
          doc:
            "Called after each response is recorded, before its tools run; returning false stops the run (`stopped`).",
        },
        {
          name: "extra_tools",
          type: "table[]",
          optional: true,
          doc:
            "More tools: `{ name, description, input_schema, handler, group? }` (or `{ name, schema, handler }`).",
        },
        {
          name: "tool_groups",
          type: "string[]",
          optional: true,
          doc: "Offer only tools of these groups (`default` for tools without one).",
        },
        {
          name: "history",
          type: "llm.Message[]",
          optional: true,
          doc: "Earlier messages (`user`, `assistant`, `system`), e.g. a previous result's `messages`.",
        },
        {
          name: "store",
          type: '"mem"|{ sqlite: string }',
          optional: true,
          doc: "Where the session is recorded (default the project's kernel database).",
        },
        {
          name: "mcp_servers",
          type: "agent.McpServer[]",
          optional: true,
          doc: "Servers to connect for this run (disconnected on every exit path).",
        },
        {
          name: "a2a_agents",
          type: "table<string, string>",
          optional: true,
          doc: "A2A agents to delegate to: `{ name = url }`. Each is a tool named `name` taking " +
            "`{ message, skill? }`, described by the agent's card (its skills listed); a call is `a2a.send`, " +
            "the answer's text the result, a task that did not complete an error result. A card that " +
            "cannot be read fails the run.",
        },
        {
          name: "sampling",
          type: "fun(params: table, server_name: string): table",
          optional: true,
          doc: "Answers every server's `sampling/createMessage`.",
        },
        {
          name: "on_progress",
          type:
            'fun(ev: { type: "progress", server: string, token: any, progress: number, total: number?, message: string? })',
          optional: true,
          doc: "Progress notifications of every server.",
        },
        {
          name: "progress_to_log",
          type: "boolean",
          optional: true,
          doc: "Log progress with `log.info` (when no `on_progress`).",
        },
        {
          name: "on_log",
          type: 'fun(ev: { type: "log", server: string, level: string, logger: string, data: any })',
          optional: true,
          doc: "Log notifications of servers that declare `logging`.",
        },
        {
          name: "log_to_stderr",
          type: "boolean",
          optional: true,
          doc: "Forward server logs to `log.*` (when no `on_log`).",
        },
        {
          name: "enable_resources",
          type: "boolean",
          optional: true,
          doc: "Offer `<server>__mcp_list_resources` / `__mcp_read_resource`.",
        },
        {
          name: "enable_prompts",
          type: "boolean",
          optional: true,
          doc: "Offer `<server>__mcp_list_prompts` / `__mcp_get_prompt`.",
        },
      ],
    },
    {
      kind: "class",
      name: "agent.Result",
      doc: "What `agent.run` answers. `result.session` (not a field: reached through the metatable, so " +
        "JSON encoding leaves it out) is the closed `knl.Session`, for `:query`, `:events` and `knl.views`.",
      fields: [
        { name: "ok", type: "boolean", doc: "True for `completed` and `stopped`." },
        { name: "content", type: "string", doc: "The last turn's text." },
        { name: "usage", type: "llm.Usage", doc: "Summed over the run (with `cost_usd` when priced)." },
        { name: "num_turns", type: "integer", doc: "Model calls made." },
        {
          name: "messages",
          type: "llm.Message[]",
          doc: "The conversation, valid as a later run's `history`.",
        },
        {
          name: "stop_reason",
          type: '"completed"|"stopped"|"max_iterations"|"budget"|"error"',
          doc: "Why the loop ended.",
        },
        {
          name: "model_stop_reason",
          type: "string",
          optional: true,
          doc: "The last response's own stop reason.",
        },
        {
          name: "session_id",
          type: "string",
          optional: true,
          doc: "The kernel session (nil only when the run failed before it opened).",
        },
        { name: "error", type: "string", optional: true, doc: "When not ok: what went wrong." },
        { name: "status", type: "integer", optional: true, doc: "A failed model request's HTTP status." },
        {
          name: "retryable",
          type: "boolean",
          optional: true,
          doc: "A failed model request: whether trying again may help.",
        },
        {
          name: "session",
          type: "knl.Session",
          optional: true,
          doc: "The closed session (through the metatable).",
        },
      ],
    },
    {
      kind: "function",
      name: "agent.run",
      doc: "Runs the loop. Every model call and tool call is recorded in the session log; a tool's error " +
        "goes to the model as an error result and the loop goes on. When the loop stops with tool calls " +
        "unanswered, each gets an error result saying why.",
      params: [{ name: "opts", type: "agent.RunOpts", doc: "The options (`prompt` required)." }],
      returns: [{
        type: "agent.Result",
        doc: "`{ ok, content, usage, num_turns, messages, stop_reason, session_id, ... }`.",
      }],
      errors: "Never raises: bad options, provider and tool errors come back as `{ ok = false, error }`. " +
        "Only a cancel of its task or the end of the run (`os.exit`, `job.defer`) passes through.",
      example: 'local agent = require("agent")\n' +
        'local r = agent.run({ prompt = _PROMPT or "What is 2 + 2?", system = _CONTEXT, max_iterations = 4 })\n' +
        "if r.ok then print(r.content) else log.error(r.error) end",
    },
    {
      kind: "function",
      name: "agent.build_tools",
      doc:
        "The tools offered to the model: registered Lua tools, then MCP tools, then extra ones; the first " +
        "of a name wins; `groups` filters by group (`default` when none); `group` is not sent.",
      params: [
        { name: "registry", type: "tool.Spec[]", optional: true, doc: "Usually `tool.schema()`." },
        { name: "mcp_list", type: "tool.Spec[]", optional: true, doc: "MCP tools." },
        { name: "extra", type: "tool.Spec[]", optional: true, doc: "Extra tools." },
        { name: "groups", type: "string[]", optional: true, doc: "Groups to keep (nil: all)." },
      ],
      returns: [{ type: "tool.Spec[]", doc: "`{ name, description, input_schema }` entries." }],
      example: 'local offered = require("agent").build_tools(tool.schema(), nil, nil, { "fs" })',
    },
    {
      kind: "function",
      name: "agent.default_context_management",
      doc: "The default Anthropic context editing (a fresh table): clear tool uses past 80K input tokens, " +
        "keep 3, clear at least 10K.",
      returns: [{ type: "table", doc: "The `context_management` body." }],
      example: 'local cm = require("agent").default_context_management()',
    },
  ],
};
