/**
 * `mcp.*`: the Lua face of the MCP client (seed README, "mcp.*").
 *
 * Owns argument checking, the return shapes scripts see, the wording of the client's errors
 * (`mcp.call: ...`) and the wiring of Lua callbacks; the protocol work is the Lua-free client in
 * `src/clients/mcp/` (manager → connection → transports), given what it needs as options: the
 * run's logger, process groups, project root and timeout, the callbacks, and the correlation ids
 * of `trace_context` (`run.correlation`, typed at the edge).
 *
 * Return conventions, as the seed documents them:
 * - `connect` / `connect_http` return true, and raise on failure — unless `opts.required` is
 *   false, in which case they log a warning and return `false, err`;
 * - every RPC (`call`, `list_*`, `read_resource`, `get_prompt`, `complete`, `ping`,
 *   `subscribe_resource`, ...) returns `{ ok = true, ... }` or `{ ok = false, error = "..." }`,
 *   the error naming the server; a function the negotiated era does not have (`ping`,
 *   `set_log_level` on 2026-07-28) returns `ok = false` naming the era. A failure also says what
 *   kind it was: `code` is the server's JSON-RPC error code when it answered one, `kind` the
 *   client's own reason otherwise (`timeout`, `closed`, `unknown`, `era`, `invalid`, `ending`,
 *   `failed`) — never both. A connect that raises raises an error table carrying the same fields
 *   plus `message`, `source = "mcp"`, `server` and `method` (`tostring(e)` is the message);
 * - `on_*` / `set_*_handler` store a Lua function (closure intact) per server name, usable
 *   before `connect`; `nil` removes it;
 * - `cancel`, `notify_roots_list_changed` and `disconnect` are fire-and-forget and never raise
 *   for a server-side failure (they log it).
 * Bad arguments of wrong types raise, naming the argument; an array where `call`'s arguments
 * object is needed is an `{ ok = false }` result (`McpError` kind `invalid`), like any refused call.
 * Every error text handed to Lua is scrubbed of the run's secrets and of URL credentials
 * (`run.secrets.scrub`): a server's message may echo a key; the client's logs are scrubbed by
 * the run's logger. What a connect hands a server on purpose (credential headers and URL
 * parameters, `*_KEY`-like variables of `opts.env`) joins the run's secrets first, and so does
 * every OAuth credential and token a connection uses or obtains.
 *
 * OAuth (`opts.auth`, `mcp/auth_opts.ts`, imported at the first `connect_http`): machine credentials from the script, the run's
 * environment or a credentials file, or the login `agent-block mcp login URL` stored under the
 * run's `AGENT_BLOCK_HOME` (used without `opts.auth` when it exists); the SDK runs the flows
 * (`clients/mcp/oauth/`). A failure is of kind `auth` and says what to do.
 *
 * Layers: this file (Lua face, with `mcp/callbacks.ts`: the Lua functions as the client's
 * handlers) → `clients/mcp/manager.ts` (name → connection) → `clients/mcp/connection.ts`
 * (handshake and era, timeouts, notifications to the handlers) → transports
 * (`clients/mcp/stdio_transport.ts`, `clients/mcp/http_transport.ts`);
 * `clients/mcp/client_handlers.ts` answers sampling, elicitation and roots with the handlers;
 * `clients/mcp/inbound_tap.ts` sees every inbound message first; `embedded/mcp_tools` turns
 * servers into a model-facing tool set.
 *
 * Protocol eras: `connect` negotiates (`opts.era = "auto"`): a 2026-07-28 server gets the modern
 * era (`server/discover`, per-request `_meta`), anything else falls back to the 2025 `initialize`
 * handshake; `"legacy"` skips the probe, `"2026-07-28"` pins it. In the modern era sampling,
 * elicitation and roots arrive as `input_required` rounds answered by the same Lua handlers; the
 * log level travels with each request (`opts.log_level`); subscriptions and list changes use
 * `subscriptions/listen` streams; `ping` and `set_log_level` return `ok = false` naming the era.
 *
 * Decisions and why:
 * - Own stdio transport: the SDK's spawns outside the run's process groups and strips the
 *   environment to six variables. Ours spawns through `ProcessGroups.spawn` (own group,
 *   credentials removed, `opts.env` applied last), keeps the last 4 KB of stderr for error
 *   messages, and fails the connection when the child writes anything but JSON-RPC on stdout.
 *   The `auto` probe therefore runs on the connection itself; a 2025 server that exits on the
 *   probe is started again in the 2025 era.
 * - Progress at the transport: the SDK dispatches notifications in a microtask but responses
 *   synchronously, so a progress notification read with its result would be dropped. A
 *   `tools/call` carries our own progress token (over stdio only while the server has a progress
 *   callback) and progress is routed to Lua in wire order; a request returns only after the
 *   callbacks of notifications that preceded its result have run.
 * - Timeouts (`--mcp-timeout-secs`, `opts.timeout`) cancel the request on the server; time the
 *   script's own handlers spend answering the server is not counted (`clients/mcp/deadline.ts`).
 * - A watched run (`run.observe`, see `src/obs/run_events.ts`) is told each connect and each
 *   `tools/call` as it finishes, with its duration and failure (scrubbed like every error text):
 *   the kernel records a model's tool calls but not the MCP traffic under them, nor connects.
 * - A traced run (`run.trace`) gets a CLIENT span `tools/call <tool>` per `tools/call` (`mcp.*`,
 *   `gen_ai.tool.name`, `error.type`), its W3C `traceparent` in the request's `_meta`, and the
 *   request's duration in `mcp.client.operation.duration`.
 * - Disconnect happens in the run's cleanup, before remaining process groups are ended, so stdio
 *   servers get a clean EOF; a failing disconnect is logged and never changes the exit code.
 *
 * - The SDK loads on first use: this module imports none of it (only types), so a run that never
 *   connects a server does not pay for loading it (~50 ms, more than the rest of the standard
 *   library). The first `connect`/`connect_http` imports `clients/mcp/manager.ts` and creates the
 *   run's manager (deno.json's `lazy-dynamic-imports` keeps `deno run` from reading its graph at
 *   start-up; its `compile.include` lists it for `deno compile`); until then every RPC and
 *   peek answers "no server named", and the callbacks registry (`mcp/callbacks.ts`, SDK-free)
 *   already takes handlers. `tests/host/mcp/lazy_sdk_test.ts` keeps the SDK out of the run path.
 *
 * Known limits: under Deno the v2 SDK's HTTP server notices a modern-era cancel only when it next
 * writes to the stream; over Streamable HTTP a 2025 server's notifications sent before the client
 * opened its GET stream are lost; `cancel(name, request_id)` needs a request id `call` does not
 * expose, so it serves manual flows only.
 */
import type { LoggingLevel } from "@modelcontextprotocol/client";
import { LuaCallbackError, type LuaEngine, LuaErrorTable } from "../lua/engine.ts";
import { type Args, LuaArgError, optField } from "../lua/args.ts";
import { LuaMulti, luaTypeName } from "../json/values.ts";
import { VERSION } from "../version.ts";
import { orderedIds } from "../correlation.ts";
import type { RunContext } from "./context.ts";
import { type CallbackKind, CallbackRegistry } from "./mcp/callbacks.ts";
import { mcpAuthDir } from "../home.ts";
import { McpError, runEnding, unknownServer } from "../clients/mcp/errors.ts";
import type { CommonConnectOptions, McpManager } from "../clients/mcp/manager.ts";

const LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/** Host module for `mcp.*`. */
export function installMcp(engine: LuaEngine, run: RunContext): void {
  const callbacks = new CallbackRegistry({
    call: (f, args) => engine.callLua(f, args),
    ended: (e) => e instanceof LuaCallbackError && e.value === undefined,
  });
  /** The run's manager, once the first connect has loaded it. */
  let loaded: McpManager | undefined;
  let loading: Promise<McpManager> | undefined;
  let ending = false;

  /** The manager, loading the SDK side on the first call. */
  const managerFor = async (name: string): Promise<McpManager> => {
    if (ending) throw runEnding(name);
    loading ??= import("../clients/mcp/manager.ts").then((m) =>
      loaded = new m.McpManager({
        log: run.log,
        spawner: run.procs,
        defaultCwd: run.projectRoot,
        timeoutMs: run.mcpTimeoutMs,
        handlers: (n) => callbacks.peek(n),
        correlation: () => orderedIds(run.correlation),
        clientInfo: { name: "agent-block", version: VERSION },
        secret: (v) => run.secrets.add(v),
      })
    );
    return await loading;
  };

  /** Synchronous view of the connections: nothing is connected before the manager exists. */
  const manager = {
    get: (name: string) => {
      if (!loaded) throw unknownServer(name);
      return loaded.get(name);
    },
    peek: (name: string) => loaded?.peek(name),
  };

  // Registered at install time (not when the manager appears) so the MCP disconnect keeps its
  // place among the run's cleanups: newest first, before process groups are ended.
  run.onCleanup(async () => {
    ending = true;
    const m = loaded ?? await loading?.catch(() => undefined);
    await m?.closeAll();
    callbacks.releaseAll();
  });

  /** An RPC returning `{ ok = true, ... }` or `{ ok = false, error }`. */
  const rpc = (
    fn: string,
    body: (a: Args, signal: AbortSignal) => Promise<Record<string, unknown>>,
  ) => ({
    async: async (a: Args, cx: { signal: AbortSignal }) => {
      try {
        return { ok: true, ...(await body(a, cx.signal)) };
      } catch (e) {
        if (e instanceof LuaArgError || cx.signal.aborted) throw e;
        const error = run.secrets.scrub(`${fn}: ${e instanceof McpError ? e.message : await errorText(e)}`);
        run.log.debug(error);
        return e instanceof McpError ? { ok: false, error, ...kindOf(e) } : { ok: false, error };
      }
    },
  });

  // A watched run is told each connect and tool call as it finishes (`src/obs/run_events.ts`).
  const observe = run.observe;
  const trace = run.trace;

  const connectFn = (
    open: (a: Args, common: CommonConnectOptions, opts?: Record<string, unknown>) => Promise<unknown>,
    optsAt: number,
    transportOf: (opts: Record<string, unknown> | undefined) => "stdio" | "http" | "sse",
  ) => ({
    async: async (a: Args, cx: { signal: AbortSignal }) => {
      const opts = a.optTable(optsAt, "opts");
      const common = { ...commonOptions(a, optsAt, opts), signal: cx.signal };
      const required = optField<boolean>(a, optsAt, "opts", opts, "required", "boolean") ?? true;
      const t0 = observe && performance.now();
      const told = (ok: boolean, error?: string) =>
        observe?.({
          type: "mcp_connect",
          server: a.string(1, "name"),
          transport: transportOf(opts),
          ms: performance.now() - t0!,
          ok,
          error,
        });
      try {
        await open(a, common, opts);
        told(true);
        return true;
      } catch (e) {
        if (e instanceof LuaArgError) throw e;
        if (cx.signal.aborted) {
          told(false, "cancelled");
          throw e;
        }
        const msg = run.secrets.scrub(`${a.fn}: ${e instanceof McpError ? e.message : await errorText(e)}`);
        told(false, msg);
        if (required) {
          throw e instanceof McpError
            ? new LuaErrorTable(msg, { source: "mcp", server: e.server, method: e.method, ...kindOf(e) })
            : new Error(msg);
        }
        run.log.warn(msg);
        return new LuaMulti([false, msg]);
      }
    },
  });

  engine.define(
    "mcp.connect",
    connectFn(
      async (a, common, opts) => {
        const name = a.string(1, "name");
        const command = a.string(2, "command");
        const args = stringList(a, 3, "args");
        const cwd = optField<string>(a, 4, "opts", opts, "cwd", "string");
        const env = stringMap(a, 4, opts, "env");
        run.secrets.addEnv(env); // keys handed to the server on purpose may come back in its messages
        await (await managerFor(name)).connectStdio(name, command, args, {
          ...common,
          cwd: cwd === undefined ? undefined : run.resolve(cwd),
          env,
        });
      },
      4,
      () => "stdio",
    ),
  );

  engine.define(
    "mcp.connect_http",
    connectFn(
      async (a, common, opts) => {
        const name = a.string(1, "name");
        const url = a.string(2, "url");
        const transport = optField<string>(a, 3, "opts", opts, "transport", "string") ?? "http";
        if (transport !== "http" && transport !== "sse") {
          throw new LuaArgError(
            `mcp.connect_http: argument 3 (opts) field 'transport' must be "http" or "sse", got "${transport}"`,
          );
        }
        const headers = stringMap(a, 3, opts, "headers");
        run.secrets.addUrl(url);
        run.secrets.addHeaders(headers);
        // loaded at the first connect_http, with the OAuth settings and store it reads
        const { authOption } = await import("./mcp/auth_opts.ts");
        let auth;
        try {
          auth = authOption(opts?.auth, run, a.fn);
        } catch (e) {
          throw new McpError(`server '${name}': ${(e as Error).message}`, name, "initialize", "auth", e);
        }
        await (await managerFor(name)).connectHttp(name, url, {
          ...common,
          transport,
          headers,
          auth,
          storeDir: mcpAuthDir(run.home),
        });
      },
      3,
      (opts) => opts?.transport === "sse" ? "sse" : "http",
    ),
  );

  engine.define("mcp.disconnect", {
    async: async (a) => {
      const name = a.string(1, "name");
      await loaded?.disconnect(name);
    },
  });

  engine.define(
    "mcp.call",
    rpc("mcp.call", async (a, signal) => {
      const c = manager.get(a.string(1, "name"));
      const tool = a.string(2, "tool_name");
      const raw = a.at(3);
      if (raw !== undefined && (luaTypeName(raw) !== "table" || Array.isArray(raw))) {
        throw notAnObject(c.name, "tools/call", raw);
      }
      const t0 = (observe || trace) && performance.now();
      // A traced run: a CLIENT span per request, its traceparent in `_meta` (the MCP convention).
      const span = trace?.start(`tools/call ${tool}`, "client", {
        "mcp.method.name": "tools/call",
        "gen_ai.tool.name": tool,
        "gen_ai.operation.name": "execute_tool",
        "mcp.server.name": c.name,
        "network.transport": c.kind === "stdio" ? "pipe" : "tcp",
      });
      const spanEnd = (error?: string) => {
        if (!span) return;
        if (error !== undefined) span.fail(signal.aborted ? "cancelled" : "tool_error", error);
        span.end();
        trace!.mcpDuration((performance.now() - t0!) / 1000, {
          "mcp.method.name": "tools/call",
          "gen_ai.tool.name": tool,
          "error.type": error === undefined ? undefined : signal.aborted ? "cancelled" : "tool_error",
        });
      };
      let r;
      try {
        r = await c.callTool(
          tool,
          (raw ?? {}) as Record<string, unknown>,
          signal,
          span && { traceparent: span.traceparent() },
        );
      } catch (e) {
        spanEnd(run.secrets.scrub(e instanceof McpError ? e.message : String((e as Error)?.message ?? e)));
        observe?.({
          type: "mcp_call",
          server: c.name,
          tool,
          ms: performance.now() - t0!,
          ok: false,
          error: signal.aborted
            ? "cancelled"
            : run.secrets.scrub(e instanceof McpError ? e.message : String((e as Error)?.message ?? e)),
        });
        throw e;
      }
      const out: Record<string, unknown> = { content: r.content ?? [], is_error: r.isError === true };
      if (r.structuredContent !== undefined) out.structured_content = r.structuredContent;
      spanEnd(
        r.isError === true
          ? run.secrets.scrub(firstText(r.content) ?? "the tool answered isError")
          : undefined,
      );
      observe?.({
        type: "mcp_call",
        server: c.name,
        tool,
        ms: performance.now() - t0!,
        ok: r.isError !== true,
        error: r.isError === true
          ? run.secrets.scrub(firstText(r.content) ?? "the tool answered isError")
          : undefined,
      });
      return out;
    }),
  );

  const list = (
    fn: string,
    key: string,
    method: string,
    call: (c: ReturnType<typeof manager.get>, o: object) => Promise<Record<string, unknown>>,
    field: string,
  ) =>
    engine.define(
      fn,
      rpc(fn, async (a, signal) => {
        const c = manager.get(a.string(1, "name"));
        // A listing the server has no capability for is empty. Answered here: the SDK would
        // answer the same but `console.debug` a line about it — onto stdout, the script's.
        const cap = method.split("/")[0];
        if ((c.capabilities as Record<string, unknown>)[cap] === undefined) return { [key]: [] };
        const r = await c.request(method, "", (o) => call(c, o), signal);
        return { [key]: r[field] ?? [] };
      }),
    );
  list("mcp.list_tools", "tools", "tools/list", (c, o) => c.client.listTools(undefined, o), "tools");
  list(
    "mcp.list_resources",
    "resources",
    "resources/list",
    (c, o) => c.client.listResources(undefined, o),
    "resources",
  );
  list(
    "mcp.list_resource_templates",
    "resource_templates",
    "resources/templates/list",
    (c, o) => c.client.listResourceTemplates(undefined, o),
    "resourceTemplates",
  );
  list(
    "mcp.list_prompts",
    "prompts",
    "prompts/list",
    (c, o) => c.client.listPrompts(undefined, o),
    "prompts",
  );

  engine.define(
    "mcp.read_resource",
    rpc("mcp.read_resource", async (a, signal) => {
      const c = manager.get(a.string(1, "name"));
      const uri = a.string(2, "uri");
      const r = await c.request(
        "resources/read",
        ` '${uri}'`,
        (o, meta) => c.client.readResource({ uri, ...(Object.keys(meta).length ? { _meta: meta } : {}) }, o),
        signal,
      );
      return { contents: r.contents ?? [] };
    }),
  );

  engine.define(
    "mcp.get_prompt",
    rpc("mcp.get_prompt", async (a, signal) => {
      const c = manager.get(a.string(1, "name"));
      const prompt = a.string(2, "prompt_name");
      const raw = a.at(3);
      if (raw !== undefined && (luaTypeName(raw) !== "table" || Array.isArray(raw))) {
        throw notAnObject(c.name, "prompts/get", raw);
      }
      const args = Object.fromEntries(
        Object.entries((raw ?? {}) as Record<string, unknown>).map((
          [k, v],
        ) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
      );
      const r = await c.request(
        "prompts/get",
        ` '${prompt}'`,
        (o, meta) =>
          c.client.getPrompt({
            name: prompt,
            arguments: args,
            ...(Object.keys(meta).length ? { _meta: meta } : {}),
          }, o),
        signal,
      );
      const out: Record<string, unknown> = { messages: r.messages ?? [] };
      if (r.description !== undefined) out.description = r.description;
      return out;
    }),
  );

  engine.define(
    "mcp.complete",
    rpc("mcp.complete", async (a, signal) => {
      const c = manager.get(a.string(1, "name"));
      const ref = a.table(2, "ref");
      const argName = a.string(3, "arg_name");
      const argValue = a.string(4, "arg_value");
      const context = a.optTable(5, "context");
      let reference: { type: "ref/prompt"; name: string } | { type: "ref/resource"; uri: string };
      if (ref.type === "ref/prompt" && typeof ref.name === "string") {
        reference = { type: "ref/prompt", name: ref.name };
      } else if (ref.type === "ref/resource" && typeof ref.uri === "string") {
        reference = { type: "ref/resource", uri: ref.uri };
      } else if (ref.type === undefined) {
        throw new McpError("ref object has no 'type' field", c.name, "completion/complete", "invalid");
      } else {
        throw new McpError(
          `invalid ref kind '${
            String(ref.type)
          }' (want {type="ref/prompt", name=...} or {type="ref/resource", uri=...})`,
          c.name,
          "completion/complete",
          "invalid",
        );
      }
      const r = await c.request("completion/complete", "", (o) =>
        c.client.complete({
          ref: reference,
          argument: { name: argName, value: argValue },
          ...(context ? { context: { arguments: context as Record<string, string> } } : {}),
        }, o), signal);
      const out: Record<string, unknown> = { values: r.completion.values };
      if (r.completion.total !== undefined) out.total = r.completion.total;
      if (r.completion.hasMore !== undefined) out.has_more = r.completion.hasMore;
      return out;
    }),
  );

  engine.define(
    "mcp.ping",
    rpc("mcp.ping", async (a, signal) => {
      const c = manager.get(a.string(1, "name"));
      c.requireLegacy("ping");
      const t0 = performance.now();
      await c.request("ping", "", (o) => c.client.ping(o), signal);
      return { latency_ms: Math.round(performance.now() - t0) };
    }),
  );

  engine.define(
    "mcp.set_log_level",
    rpc("mcp.set_log_level", async (a, signal) => {
      const c = manager.get(a.string(1, "name"));
      const level = a.string(2, "level");
      if (!LOG_LEVELS.includes(level)) a.fail(2, "level", `one of ${LOG_LEVELS.join(", ")}`, `'${level}'`);
      c.requireLegacy("logging/setLevel", " (the level travels with each request: opts.log_level)");
      await c.request(
        "logging/setLevel",
        "",
        (o) => c.client.setLoggingLevel(level as LoggingLevel, o),
        signal,
      );
      return {};
    }),
  );

  engine.define(
    "mcp.subscribe_resource",
    rpc("mcp.subscribe_resource", async (a, signal) => {
      const c = manager.get(a.string(1, "server"));
      await c.subscribe(a.string(2, "uri"), signal);
      return {};
    }),
  );
  engine.define(
    "mcp.unsubscribe_resource",
    rpc("mcp.unsubscribe_resource", async (a, signal) => {
      const c = manager.get(a.string(1, "server"));
      await c.unsubscribe(a.string(2, "uri"), signal);
      return {};
    }),
  );

  engine.define("mcp.server_info", {
    sync: (a) => {
      const name = a.string(1, "name");
      const c = manager.peek(name);
      if (!c || c.closed) return { ok: false, error: `mcp.server_info: no server named '${name}'` };
      return { ok: true, server_info: c.serverInfo() };
    },
  });

  engine.define("mcp.cancel", {
    sync: (a) => {
      const name = a.string(1, "name");
      const v = a.at(2);
      if (typeof v !== "string" && typeof v !== "number") a.fail(2, "request_id", "a string or an integer");
      const c = manager.peek(name);
      if (!c) run.log.warn(`mcp.cancel: no server named '${name}'`);
      else {c.cancel(v as string | number, "cancelled by the script").catch((e) =>
          run.log.warn(`mcp.cancel: ${e.message}`)
        );}
    },
  });

  engine.define("mcp.notify_roots_list_changed", {
    sync: (a) => {
      const name = a.string(1, "name");
      const c = manager.peek(name);
      if (!c) run.log.warn(`mcp.notify_roots_list_changed: no server named '${name}'`);
      else {
        c.notifyRootsChanged().catch((e) => run.log.warn(`mcp.notify_roots_list_changed: ${e.message}`));
      }
    },
  });

  engine.define("mcp.tools_epoch", {
    sync: (a) => manager.peek(a.string(1, "name"))?.toolsEpoch ?? 0,
  });

  const setter = (fn: string, kind: CallbackKind) =>
    engine.define(fn, {
      functions: "ref",
      sync: (a) => {
        const name = a.string(1, "server_name");
        const f = a.at(2) === undefined ? undefined : a.func(2, "handler");
        callbacks.of(name).set(kind, f);
      },
    });
  setter("mcp.on_progress", "progress");
  setter("mcp.on_log", "log");
  setter("mcp.on_resource_update", "resource_update");
  setter("mcp.on_resources_list_changed", "resources_list_changed");
  setter("mcp.on_tools_list_changed", "tools_list_changed");
  setter("mcp.on_prompts_list_changed", "prompts_list_changed");
  setter("mcp.set_sampling_handler", "sampling");
  setter("mcp.set_elicitation_handler", "elicitation");
  setter("mcp.set_roots_handler", "roots");
}

/** What kind of failure an `McpError` is, as Lua sees it: the server's `code`, or our `kind`. */
function kindOf(e: McpError): { code: number } | { kind: string } {
  return typeof e.code === "number" ? { code: e.code } : { kind: e.code };
}

/** The error for arguments that are not a JSON object (code `invalid`). */
function notAnObject(server: string, method: string, raw: unknown): McpError {
  const got = Array.isArray(raw) ? "array" : luaTypeName(raw);
  return new McpError(`arguments must be a JSON object (got ${got})`, server, method, "invalid");
}

/**
 * The text of a failure that is not an `McpError`. Such a failure comes from the SDK side, so
 * the SDK-aware translation is loaded here (already in memory by then) rather than up front.
 */
async function errorText(e: unknown): Promise<string> {
  return (await import("../clients/mcp/sdk_errors.ts")).errorText(e);
}

/** Options both connect functions take: timeout (s), era, log_level, trace_context, max_message_bytes. */
function commonOptions(a: Args, i: number, opts: Record<string, unknown> | undefined): CommonConnectOptions {
  const timeout = optField<number>(a, i, "opts", opts, "timeout", "number");
  if (timeout !== undefined && !(timeout > 0)) {
    throw new LuaArgError(
      `${a.fn}: argument ${i} (opts) field 'timeout' must be a positive number of seconds, got ${timeout}`,
    );
  }
  const era = optField<string>(a, i, "opts", opts, "era", "string");
  if (era !== undefined && era !== "auto" && era !== "legacy" && !/^\d{4}-\d{2}-\d{2}$/.test(era)) {
    throw new LuaArgError(
      `${a.fn}: argument ${i} (opts) field 'era' must be "auto", "legacy" or a protocol version, got "${era}"`,
    );
  }
  const logLevel = optField<string>(a, i, "opts", opts, "log_level", "string");
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel)) {
    throw new LuaArgError(
      `${a.fn}: argument ${i} (opts) field 'log_level' must be one of ${
        LOG_LEVELS.join(", ")
      }, got "${logLevel}"`,
    );
  }
  const maxMessageBytes = optField<number>(a, i, "opts", opts, "max_message_bytes", "number");
  if (maxMessageBytes !== undefined && !(Number.isInteger(maxMessageBytes) && maxMessageBytes > 0)) {
    throw new LuaArgError(
      `${a.fn}: argument ${i} (opts) field 'max_message_bytes' must be a positive whole number of bytes, got ${maxMessageBytes}`,
    );
  }
  return {
    timeoutMs: timeout === undefined ? undefined : timeout * 1000,
    era,
    logLevel: logLevel as LoggingLevel | undefined,
    traceContext: optField<boolean>(a, i, "opts", opts, "trace_context", "boolean"),
    maxMessageBytes,
  };
}

/** Argument `i` as a list of strings (nil → empty). */
function stringList(a: Args, i: number, name: string): string[] {
  const v = a.at(i);
  if (v === undefined) return [];
  const t = a.table(i, name);
  const arr = Array.isArray(t) ? t : Object.keys(t).length === 0 ? [] : undefined;
  if (!arr) a.fail(i, name, "an array of strings", "a table with non-array keys");
  return arr.map((x, k) => {
    if (typeof x === "string") return x;
    if (typeof x === "number") return String(x);
    throw new LuaArgError(
      `${a.fn}: argument ${i} (${name}) element ${k + 1} must be a string, got ${luaTypeName(x)}`,
    );
  });
}

/** Field `key` of options table `i` as a string → string map; a non-string value raises. */
function stringMap(
  a: Args,
  i: number,
  opts: Record<string, unknown> | undefined,
  key: string,
): Record<string, string> {
  const t = optField<Record<string, unknown>>(a, i, "opts", opts, key, "table");
  if (!t) return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(t)) {
    if (typeof v !== "string") {
      throw new LuaArgError(
        `${a.fn}: argument ${i} (opts) field '${key}' value for '${k}' must be a string, got ${
          luaTypeName(v)
        }`,
      );
    }
    out[k] = v;
  }
  return out;
}

/** The first text block of a tool result's content, if any. */
function firstText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  for (const b of content) {
    if (b && typeof b === "object" && b.type === "text" && typeof b.text === "string") return b.text;
  }
  return undefined;
}
