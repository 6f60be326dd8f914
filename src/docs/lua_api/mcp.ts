/** Reference entries: `mcp`, the MCP client. */
import type { Entry, Field, Section } from "./types.ts";

const NAME: Field = { name: "name", type: "string", doc: "The server name given to `connect`." };

/** An RPC answering `{ ok = true, <fields> }` or an `mcp.Failure`. */
function rpc(
  fn: string,
  doc: string,
  params: Field[],
  ok: string,
  example: string,
): Entry {
  return {
    kind: "function",
    name: `mcp.${fn}`,
    doc,
    params,
    returns: [{ type: "table", doc: `\`{ ok = true${ok ? ", " + ok : ""} }\`, or an \`mcp.Failure\`.` }],
    errors: "Raises only for bad arguments; every other failure is answered.",
    example,
  };
}

/** A callback setter. */
function setter(fn: string, doc: string, signature: string, example: string, param = "server_name"): Entry {
  return {
    kind: "function",
    name: `mcp.${fn}`,
    doc: doc + " Stored per server name, so it may be set before `connect`; `nil` removes it.",
    params: [
      { name: param, type: "string", doc: "The server name." },
      {
        name: "handler",
        type: signature,
        optional: true,
        doc: "The callback (a Lua function; closures work).",
      },
    ],
    example,
  };
}

const CONNECT_FIELDS: Field[] = [
  {
    name: "timeout",
    type: "number",
    optional: true,
    doc: "Seconds per request (default `--mcp-timeout-secs`, 30).",
  },
  {
    name: "era",
    type: "string",
    optional: true,
    doc: '`"auto"` (default: probe, fall back to 2025), `"legacy"`, or a protocol version to pin.',
  },
  {
    name: "log_level",
    type: "string",
    optional: true,
    doc: "Modern era: the log level sent with each request.",
  },
  {
    name: "trace_context",
    type: "boolean",
    optional: true,
    doc: "Inject the run's correlation ids as `__ab_obs` into tool arguments.",
  },
  {
    name: "required",
    type: "boolean",
    optional: true,
    doc: "Default true: a failed connect raises; false: it logs a warning and answers `false, err`.",
  },
];

export const MCP: Section = {
  id: "mcp",
  title: "mcp",
  file: "agent-block",
  tables: ["mcp"],
  doc: "The MCP client. `connect` (stdio) and `connect_http` (Streamable HTTP or SSE) negotiate the " +
    "protocol era: 2026-07-28 servers get the modern era, 2025-era servers the `initialize` handshake; the " +
    "same Lua handlers answer both. Every request times out after `--mcp-timeout-secs` (default 30) or " +
    "`opts.timeout`, and a timed-out request is cancelled on the server. Servers are disconnected when the " +
    "run ends.",
  entries: [
    {
      kind: "class",
      name: "mcp.Failure",
      doc: "How a failed request is answered (and the fields of the table a failed connect raises, with " +
        '`message`, `source = "mcp"`, `server` and `method`; `tostring` of it is the message).',
      fields: [
        { name: "ok", type: "false", doc: "Always false." },
        { name: "error", type: "string", doc: "The message, naming the server." },
        {
          name: "code",
          type: "integer",
          optional: true,
          doc: "The server's JSON-RPC error code, when it answered one.",
        },
        {
          name: "kind",
          type: '"timeout"|"closed"|"unknown"|"era"|"invalid"|"ending"|"auth"|"failed"',
          optional: true,
          doc: "Otherwise the client's own reason.",
        },
      ],
    },
    {
      kind: "class",
      name: "mcp.ConnectOpts",
      doc: "Options of `mcp.connect`.",
      fields: [
        ...CONNECT_FIELDS,
        {
          name: "cwd",
          type: "string",
          optional: true,
          doc: "The server's working directory (default the project root).",
        },
        {
          name: "env",
          type: "table<string, string>",
          optional: true,
          doc: "Variables for the server, applied after the credential removal.",
        },
      ],
    },
    {
      kind: "class",
      name: "mcp.HttpOpts",
      doc: "Options of `mcp.connect_http`.",
      fields: [
        ...CONNECT_FIELDS,
        { name: "transport", type: '"http"|"sse"', optional: true, doc: "Default `http` (Streamable HTTP)." },
        { name: "headers", type: "table<string, string>", optional: true, doc: "Sent with every request." },
        {
          name: "auth",
          type: '"login"|mcp.Auth',
          optional: true,
          doc: 'OAuth: machine credentials, or `"login"` for the login `agent-block mcp login URL` stored ' +
            "(used without `auth` too, when one exists for the URL).",
        },
      ],
    },
    {
      kind: "class",
      name: "mcp.Auth",
      doc: "OAuth credentials of an HTTP server (the MCP authorization spec; the SDK does discovery, " +
        "registration, PKCE, refresh and step-up). `client_secret` picks the client credentials grant, " +
        "`private_key` + `alg` the same authenticated by a signed JWT, `refresh_token` a refresh on the first " +
        "401, `assertion` a workload's JWT (the JWT-bearer grant), `id_token` cross-app access. Each secret may come from a variable of the run's environment (`*_env`, `.env` included) or a " +
        "`credentials_file`. Tokens and secrets join the run's secrets (masked in logs, events and errors). A " +
        "failure is of kind `auth` and says what to do.",
      fields: [
        { name: "client_id", type: "string", optional: true, doc: "The client (or `client_id_env`)." },
        {
          name: "client_secret",
          type: "string",
          optional: true,
          doc: "Its secret (or `client_secret_env`, naming a variable).",
        },
        {
          name: "method",
          type: '"client_secret_basic"|"client_secret_post"',
          optional: true,
          doc: "How the secret is sent (default: what the server supports, basic first).",
        },
        {
          name: "private_key",
          type: "string",
          optional: true,
          doc: "PEM, or a JWK as JSON (or `private_key_env`): `private_key_jwt`.",
        },
        { name: "alg", type: "string", optional: true, doc: "The key's algorithm (`RS256`, `ES256`, ...)." },
        {
          name: "refresh_token",
          type: "string",
          optional: true,
          doc: "A refresh token (or `refresh_token_env`); the refreshed tokens stay in memory.",
        },
        {
          name: "assertion",
          type: "string",
          optional: true,
          doc:
            "Workload identity (RFC 7523 JWT-bearer grant): a JWT the authorization server trusts, such as a " +
            "CI system's OIDC token (or `assertion_env`); with `client_id`, no secret.",
        },
        {
          name: "assertion_file",
          type: "string",
          optional: true,
          doc:
            "The same JWT read from a file (relative to the run's working directory) at each token request, " +
            "where a platform rotates it in place (a Kubernetes service account token).",
        },
        {
          name: "id_token",
          type: "string",
          optional: true,
          doc:
            "Cross-app access (SEP-990): the user's ID token from an enterprise IdP (or `id_token_env`), " +
            "exchanged there for an authorization grant; with `client_secret`, `idp_client_id` " +
            "(`idp_client_secret`) and `idp_url` or `idp_token_endpoint`.",
        },
        {
          name: "scope",
          type: "string",
          optional: true,
          doc: "Asked for when the server names none; a `403 insufficient_scope` widens it where the " +
            "credentials allow, else the call fails naming the scope.",
        },
        {
          name: "issuer",
          type: "string",
          optional: true,
          doc: "The only authorization server the credentials may be sent to.",
        },
        {
          name: "credentials_file",
          type: "string",
          optional: true,
          doc: "A JSON file of these fields (mode 0600, else refused); fields given here win.",
        },
      ],
    },
    {
      kind: "function",
      name: "mcp.connect",
      doc: "Starts a server over stdio, in a process group of the run with the host's credential variables " +
        "removed, and connects to it. A line on its stdout that is not JSON-RPC (a banner, a stray print) " +
        "is skipped: the first is logged at warn level (and quoted in a failed connect's error), later ones " +
        "at debug level.",
      params: [
        NAME,
        { name: "command", type: "string", doc: "The program." },
        { name: "args", type: "string[]", optional: true, doc: "Its arguments." },
        {
          name: "opts",
          type: "mcp.ConnectOpts",
          optional: true,
          doc: "cwd, env, timeout, era, required, ...",
        },
      ],
      returns: [
        { type: "boolean", name: "ok", doc: "True, or false with `required = false`." },
        { type: "string?", name: "err", doc: "Why, when false." },
      ],
      errors: "Raises a table (`mcp.Failure` fields plus `message`, `server`, `method`) when the connect " +
        "fails, unless `opts.required = false`.",
      example: 'mcp.connect("files", "npx", { "-y", "@modelcontextprotocol/server-filesystem", "." })',
    },
    {
      kind: "function",
      name: "mcp.connect_http",
      doc:
        "Connects to a server over Streamable HTTP (or SSE). A server behind OAuth takes `opts.auth`, or " +
        "the login `agent-block mcp login URL` stored for its URL.",
      params: [
        NAME,
        { name: "url", type: "string", doc: "The endpoint." },
        { name: "opts", type: "mcp.HttpOpts", optional: true, doc: "transport, headers, timeout, era, ..." },
      ],
      returns: [
        { type: "boolean", name: "ok", doc: "True, or false with `required = false`." },
        { type: "string?", name: "err", doc: "Why, when false." },
      ],
      errors: "As `connect`.",
      example:
        'mcp.connect_http("tracker", "https://mcp.example.com/mcp", {\n  auth = { client_id = "ci-bot", client_secret_env = "TRACKER_SECRET", scope = "issues:read" },\n})',
    },
    {
      kind: "function",
      name: "mcp.disconnect",
      doc: "Closes the connection (a stdio server gets EOF); never raises for a server-side failure.",
      params: [NAME],
      example: 'mcp.disconnect("files")',
    },
    rpc(
      "call",
      "Calls a tool. Progress is requested when the server has an `on_progress` callback (over HTTP always).",
      [
        NAME,
        { name: "tool_name", type: "string", doc: "The tool." },
        { name: "arguments", type: "table", optional: true, doc: "Its arguments (a JSON object)." },
      ],
      "content, is_error, structured_content?",
      'local r = mcp.call("files", "read_file", { path = "README.md" })\nif r.ok and not r.is_error then print(r.content[1].text) end',
    ),
    rpc(
      "list_tools",
      "Lists the server's tools.",
      [NAME],
      "tools",
      'for _, t in ipairs(mcp.list_tools("files").tools or {}) do print(t.name) end',
    ),
    rpc(
      "list_resources",
      "Lists the server's resources (empty without the capability).",
      [NAME],
      "resources",
      'local r = mcp.list_resources("files")',
    ),
    rpc(
      "list_resource_templates",
      "Lists the server's resource URI templates.",
      [NAME],
      "resource_templates",
      'local r = mcp.list_resource_templates("files")',
    ),
    rpc(
      "read_resource",
      "Reads a resource.",
      [NAME, { name: "uri", type: "string", doc: "The resource URI." }],
      "contents = { { uri, mimeType, text | blob } }",
      'local r = mcp.read_resource("echo", "text://hello")',
    ),
    rpc(
      "list_prompts",
      "Lists the server's prompt templates.",
      [NAME],
      "prompts",
      'local r = mcp.list_prompts("echo")',
    ),
    rpc(
      "get_prompt",
      "Renders a prompt template (non-string arguments are sent as JSON text).",
      [
        NAME,
        { name: "prompt_name", type: "string", doc: "The prompt." },
        { name: "args", type: "table", optional: true, doc: "Its arguments." },
      ],
      "messages, description?",
      'local r = mcp.get_prompt("echo", "greet", { name = "Ada" })',
    ),
    rpc(
      "complete",
      "Asks for completions of an argument.",
      [
        NAME,
        {
          name: "ref",
          type: "{ type: string, name: string?, uri: string? }",
          doc: '`{ type = "ref/prompt", name }` or `{ type = "ref/resource", uri }`.',
        },
        { name: "arg_name", type: "string", doc: "The argument." },
        { name: "arg_value", type: "string", doc: "What is typed so far." },
        { name: "context", type: "table<string, string>", optional: true, doc: "Values of other arguments." },
      ],
      "values, total?, has_more?",
      'local r = mcp.complete("echo", { type = "ref/prompt", name = "greet" }, "name", "wo")',
    ),
    rpc(
      "ping",
      'Pings the server (2025 era; the modern era has no ping and answers `ok = false`, `kind = "era"`).',
      [NAME],
      "latency_ms",
      'print(mcp.ping("echo").latency_ms)',
    ),
    rpc(
      "set_log_level",
      "Sets the server's log level (2025 era; in the modern era use `opts.log_level`).",
      [NAME, {
        name: "level",
        type: "string",
        doc: "`debug`, `info`, `notice`, `warning`, `error`, `critical`, `alert` or `emergency`.",
      }],
      "",
      'mcp.set_log_level("echo", "debug")',
    ),
    rpc(
      "subscribe_resource",
      "Subscribes to a resource's changes (see `on_resource_update`): `resources/subscribe` (2025 era) " +
        "or `subscriptions/listen` (2026-07-28). A server without the capability `resources.subscribe` " +
        "gets a failure in both eras (a modern one would accept the stream and stay silent).",
      [{ name: "server", type: "string", doc: "The server name." }, {
        name: "uri",
        type: "string",
        doc: "The resource URI.",
      }],
      "",
      'mcp.subscribe_resource("notes", "note://today")',
    ),
    rpc(
      "unsubscribe_resource",
      "Ends a subscription.",
      [{ name: "server", type: "string", doc: "The server name." }, {
        name: "uri",
        type: "string",
        doc: "The resource URI.",
      }],
      "",
      'mcp.unsubscribe_resource("notes", "note://today")',
    ),
    {
      kind: "function",
      name: "mcp.server_info",
      doc: "What the server said about itself when connecting.",
      params: [NAME],
      returns: [{
        type: "table",
        doc:
          "`{ ok = true, server_info = { serverInfo, capabilities, protocolVersion, era, instructions? } }`, " +
          "or `{ ok = false, error }` when no such server is connected.",
      }],
      example:
        'local info = mcp.server_info("echo")\nif info.ok then print(info.server_info.serverInfo.name) end',
    },
    {
      kind: "function",
      name: "mcp.cancel",
      doc: "Sends a cancel for a request id (fire-and-forget; for manual flows: `call` does not expose ids).",
      params: [NAME, { name: "request_id", type: "string|integer", doc: "The request id." }],
      example: 'mcp.cancel("echo", 7)',
    },
    {
      kind: "function",
      name: "mcp.notify_roots_list_changed",
      doc: "Tells the server the client's roots changed (fire-and-forget; failures are logged).",
      params: [NAME],
      example: 'mcp.notify_roots_list_changed("files")',
    },
    {
      kind: "function",
      name: "mcp.tools_epoch",
      doc: "How many `tools/list_changed` notifications the server has sent (0 when not connected).",
      params: [NAME],
      returns: [{ type: "integer", doc: "The count." }],
      example: 'local before = mcp.tools_epoch("files")',
    },
    setter(
      "on_progress",
      "Receives the server's progress notifications, the last one before a result included.",
      "fun(token: any, progress: number, total: number?, message: string?)",
      'mcp.on_progress("echo", function(_, done, total) print(done, total) end)',
    ),
    setter(
      "on_log",
      "Receives the server's log notifications (without one, they are logged).",
      "fun(level: string, logger: string, data: any)",
      'mcp.on_log("echo", function(level, _, data) log.info(level, data) end)',
    ),
    setter(
      "on_resource_update",
      "Receives `notifications/resources/updated` of subscribed resources.",
      'fun(ev: { type: "resource_update", server: string, uri: string })',
      'mcp.on_resource_update("notes", function(ev) print("changed", ev.uri) end)',
    ),
    setter(
      "on_resources_list_changed",
      "Receives `notifications/resources/list_changed`.",
      'fun(ev: { type: "resources_list_changed", server: string })',
      'mcp.on_resources_list_changed("notes", function(ev) print(ev.server) end)',
    ),
    setter(
      "on_tools_list_changed",
      "Receives `notifications/tools/list_changed`.",
      'fun(ev: { type: "tools_list_changed", server: string })',
      'mcp.on_tools_list_changed("files", function() print("tools changed") end)',
    ),
    setter(
      "on_prompts_list_changed",
      "Receives `notifications/prompts/list_changed`.",
      'fun(ev: { type: "prompts_list_changed", server: string })',
      'mcp.on_prompts_list_changed("echo", function() print("prompts changed") end)',
    ),
    setter(
      "set_sampling_handler",
      "Answers the server's `sampling/createMessage` with `{ model, stop_reason, role, content }` " +
        "(`content` a string or a content table). Without one the server gets method-not-found; a " +
        "handler that raises is logged and answered with an internal error.",
      "fun(params: table, server_name: string): table",
      'mcp.set_sampling_handler("echo", function(params)\n' +
        '  return { model = "local", stop_reason = "endTurn", role = "assistant", content = "ok" }\nend)',
    ),
    setter(
      "set_elicitation_handler",
      'Answers form-mode `elicitation/create` with `{ action = "accept", content = {...} }` or ' +
        '`{ action = "decline" | "cancel" }`; the requested schema arrives as JSON text. A field an accepted ' +
        "`content` leaves out gets the schema's `default`, when it has one (SEP-1034). URL mode is declined " +
        "without reaching it, as is everything when no handler is set.",
      "fun(server_name: string, message: string, schema_json: string): table",
      'mcp.set_elicitation_handler("echo", function(_, message, schema_json)\n  log.info(message, schema_json)\n  return { action = "accept", content = { name = "Ada" } }\nend)',
    ),
    setter(
      "set_roots_handler",
      "Answers `roots/list` with an array of `{ uri, name? }` (without one: method-not-found).",
      "fun(server_name: string): { uri: string, name: string? }[]",
      'mcp.set_roots_handler("files", function()\n  return { { uri = "file://" .. std.env.project_root(), name = "project" } }\nend)',
    ),
  ],
};
