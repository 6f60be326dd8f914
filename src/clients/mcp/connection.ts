/**
 * One connected MCP server: the SDK client, its transport, and everything agent-block adds.
 *
 * Owns:
 * - the handshake with era negotiation (`auto` by default: 2026-07-28 servers get the modern
 *   era, 2025-era servers fall back to `initialize`; `legacy` or a pinned version on request);
 * - the client capabilities (sampling, form elicitation with schema defaults applied to what an
 *   accepting handler leaves out, roots with listChanged), declared for every server so the
 *   handlers can be set at any time;
 * - every request, with the connection's timeout (a timed-out request is cancelled on the
 *   server; time spent in our own handlers answering the server does not count, see
 *   `deadline.ts`) and the caller's abort signal, and failures as `McpError`s naming the server,
 *   the method and a code (the server's JSON-RPC code, or a local one: `auth` for an OAuth
 *   failure, with what the OAuth side adds, `deps.explainAuth`);
 * - inbound notifications, seen at the transport in wire order (`inbound_tap.ts`) and delivered
 *   to the handlers (`handlers.ts`). A request does not return before every handler for a
 *   notification that arrived ahead of its result has run: this is what "no progress lost,
 *   including the last one before the result" means for a script. A `tools/call` carries a
 *   progress token (`ab-N`) over HTTP always, over stdio when the server has a progress
 *   callback at the moment the call starts (a callback set during a call sees the progress of
 *   later calls);
 * - the era-specific surface: `ping` and `logging/setLevel` exist only in the 2025 era;
 *   resource updates and list changes come from `subscriptions/listen` in the 2026-07-28 era,
 *   where an update is delivered only for a URI subscribed now (from the start of its
 *   `subscribe` until its `unsubscribe` begins): one a listen stream had in flight when it was
 *   closed never reaches the handler after `unsubscribe` returned;
 *   log notifications there need a per-request log level (`_meta`), which every request carries.
 *
 * Invariants: after `close()` every method fails with a message naming the server (code
 * `closed`); `close()` never throws and is bounded in time. Nothing here knows a language face:
 * handlers are plain functions, correlation ids come from the deps, messages name no face function.
 */
import {
  Client,
  type ClientCapabilities,
  type JSONRPCMessage,
  LOG_LEVEL_META_KEY,
  type LoggingLevel,
  type McpSubscription,
  type RequestOptions,
  type ServerCapabilities,
  type Transport,
  type VersionNegotiationOptions,
} from "@modelcontextprotocol/client";
import type { Logger, LogLevel } from "../../obs/log.ts";
import { installClientHandlers } from "./client_handlers.ts";
import { HandlerGone, type HandlerKind, type ServerHandlers } from "./handlers.ts";
import { McpError, seconds } from "./errors.ts";
import { errorText, isAuthFailure, isLostAnswer, isTimeout, wireCode } from "./sdk_errors.ts";
import { tapInbound } from "./inbound_tap.ts";
import { Deadline } from "./deadline.ts";
import { ProcessStdioTransport } from "./stdio_transport.ts";

/** The protocol era to negotiate: automatic, 2025-era only, or one pinned modern version. */
export type EraChoice = "auto" | "legacy" | string;

/** What a connection needs from its manager. */
export interface ConnectionDeps {
  name: string;
  log: Logger;
  timeoutMs: number;
  /** The handlers of this server name (looked up at delivery time). */
  callbacks: () => ServerHandlers | undefined;
  /** Log level asked for on 2026-07-28 requests. */
  logLevel: LoggingLevel;
  /** When set, the correlation ids injected as `__ab_obs` into tool arguments (read per call). */
  traceContext?: () => Record<string, string>;
  /** The client's name and version in the handshake. */
  clientInfo: { name: string; version: string };
  /** More words for an authorization failure (the OAuth side knows what it asked for). */
  explainAuth?: (e: unknown) => string | undefined;
}

/** How long `close()` may take before it is abandoned. */
const CLOSE_TIMEOUT_MS = 5000;
/** The SDK's own request timeout is disabled (its maximum timer); `Deadline` does the job. */
const NO_SDK_TIMEOUT = 2_147_483_647;
/** Longest a stdio `server/discover` probe waits before treating the server as 2025-era. */
const STDIO_PROBE_MS = 5000;

const CAPABILITIES: ClientCapabilities = {
  sampling: {},
  // Form mode with `applyDefaults` (SEP-1034): a field the handler's accepted `content` leaves out
  // gets the schema's `default`, filled in by the SDK after the handler returns, in both eras.
  // URL mode is declared so such requests reach us and are declined explicitly (never shown to
  // the handler), rather than failing as a capability error on the server side.
  elicitation: { form: { applyDefaults: true }, url: {} },
  roots: { listChanged: true },
};

/** MCP log levels → our logger's levels (used when no `mcp.on_log` handler is set). */
const LOG_LEVELS: Record<string, LogLevel> = {
  debug: "debug",
  info: "info",
  notice: "info",
  warning: "warn",
  error: "error",
  critical: "error",
  alert: "error",
  emergency: "error",
};

/** A live connection to one MCP server. */
export class McpConnection {
  readonly client: Client;
  /** Number of `notifications/tools/list_changed` received (mcp_tools refreshes on change). */
  toolsEpoch = 0;
  #closed = false;
  #closeReason = "";
  #progressSeq = 0;
  /** Delivery promises of callbacks started while each in-flight request waits. */
  #inflight = new Set<Promise<unknown>[]>();
  #resourceSubs = new Map<string, McpSubscription>();
  /** 2026 era: the URIs whose updates are delivered (subscribing or subscribed). */
  #wanted = new Set<string>();
  #deadlines = new Set<Deadline>();
  #listSub: McpSubscription | undefined;

  private constructor(
    readonly deps: ConnectionDeps,
    readonly transport: Transport,
    readonly kind: "stdio" | "http" | "sse",
  ) {
    const name = deps.name;
    this.client = new Client(deps.clientInfo, { capabilities: CAPABILITIES });
    installClientHandlers(
      this.client,
      name,
      deps.callbacks,
      deps.log,
      (w) => this.#whileHandling(w),
    );
    this.client.onerror = (e) => deps.log.debug(`mcp server '${name}': ${e.message}`);
    this.client.onclose = () => {
      if (!this.#closed) {
        this.#closed = true;
        this.#closeReason = this.#stdioFailure() || `server '${name}' closed the connection`;
        deps.log.warn(`mcp: ${this.#closeReason}`);
      }
    };
    tapInbound(transport, (m) => this.#onInbound(m));
  }

  /** Connects (handshake included) or throws an `McpError` naming the server. */
  static async open(
    deps: ConnectionDeps,
    transport: Transport,
    kind: "stdio" | "http" | "sse",
    era: EraChoice,
    signal?: AbortSignal,
  ): Promise<McpConnection> {
    const conn = new McpConnection(deps, transport, kind);
    const negotiation: VersionNegotiationOptions = era === "legacy" ? { mode: "legacy" } : era === "auto"
      ? {
        mode: "auto",
        probe: kind === "stdio" ? { timeoutMs: Math.min(deps.timeoutMs, STDIO_PROBE_MS) } : {},
      }
      : { mode: { pin: era } };
    conn.client.setVersionNegotiation(negotiation);
    try {
      await conn.client.connect(transport, { timeout: deps.timeoutMs, signal });
    } catch (e) {
      // Word the error before closing: closing ends the child and would hide how it failed.
      const probeClosed = e instanceof Error && /closed during the server\/discover probe/.test(e.message);
      const err = conn.#wrap(e, "initialize", "");
      conn.#closed = true;
      await transport.close().catch(() => undefined);
      throw probeClosed && transport instanceof ProcessStdioTransport && !transport.violated && !err.wire &&
          err.code !== "timeout"
        ? new McpError(err.message, err.server, err.method, "probe_closed", err.cause)
        : err;
    }
    if (conn.era === "modern") await conn.#listenForListChanges();
    return conn;
  }

  get name(): string {
    return this.deps.name;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** `modern` (2026-07-28 and later) or `legacy` (2025 era). */
  get era(): "modern" | "legacy" {
    return this.client.getProtocolEra() === "modern" ? "modern" : "legacy";
  }

  get protocolVersion(): string {
    return this.client.getNegotiatedProtocolVersion() ?? "";
  }

  get capabilities(): ServerCapabilities {
    return this.client.getServerCapabilities() ?? {};
  }

  /** The `InitializeResult`-shaped description of the server (both eras). */
  serverInfo(): Record<string, unknown> {
    const info: Record<string, unknown> = {
      protocolVersion: this.protocolVersion,
      capabilities: this.capabilities,
      serverInfo: this.client.getServerVersion() ?? {},
      era: this.era,
    };
    const instructions = this.client.getInstructions();
    if (instructions !== undefined) info.instructions = instructions;
    return info;
  }

  // --- requests ------------------------------------------------------------------------------

  /** Runs one request with the timeout, the abort signal and error wording. */
  async request<T>(
    method: string,
    what: string,
    run: (opts: RequestOptions, meta: Record<string, unknown>) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    this.#assertOpen(method);
    const deliveries: Promise<unknown>[] = [];
    this.#inflight.add(deliveries);
    const meta: Record<string, unknown> = {};
    if (this.era === "modern") meta[LOG_LEVEL_META_KEY] = this.deps.logLevel;
    // Our own deadline instead of the SDK's, so that it can pause while a handler answers
    // the server; aborting the request makes the SDK send the cancellation, as on its timeout.
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, { once: true });
    let timedOut = false;
    const deadline = new Deadline(this.deps.timeoutMs, () => {
      timedOut = true;
      ac.abort(new Error("timeout"));
    });
    this.#deadlines.add(deadline);
    try {
      return await run({ timeout: NO_SDK_TIMEOUT, signal: ac.signal }, meta);
    } catch (e) {
      if (timedOut) throw this.#timeoutError(method, what);
      throw this.#wrap(e, method, what);
    } finally {
      deadline.clear();
      this.#deadlines.delete(deadline);
      signal?.removeEventListener("abort", onAbort);
      this.#inflight.delete(deliveries);
      if (deliveries.length) await Promise.allSettled(deliveries);
    }
  }

  /** Runs `work` (a handler answering the server) with every request deadline paused. */
  async #whileHandling<T>(work: () => Promise<T>): Promise<T> {
    const paused = [...this.#deadlines];
    for (const d of paused) d.pause();
    try {
      return await work();
    } finally {
      for (const d of paused) d.resume();
    }
  }

  #timeoutError(method: string, what: string, cause?: unknown): McpError {
    const cancel = method === "initialize" ? "" : " (cancellation sent)";
    const stdio = this.transport instanceof ProcessStdioTransport ? this.transport : undefined;
    const tail = stdio && method === "initialize" ? stdio.handshakeNotes() : "";
    const subject = method === "initialize"
      ? `initialize '${this.name}'`
      : `${method}${what} on server '${this.name}'`;
    return new McpError(
      `${subject} timed out after ${seconds(this.deps.timeoutMs)}${cancel}${tail}`,
      this.name,
      method,
      "timeout",
      cause,
    );
  }

  /**
   * `tools/call`, with our own progress token (when: see the module header) and `extraMeta` (a
   * traced run's `traceparent`) in the request's `_meta`.
   */
  callTool(
    tool: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    extraMeta?: Record<string, string>,
  ) {
    if (this.deps.traceContext && !("__ab_obs" in args)) {
      const obs = this.deps.traceContext();
      if (Object.keys(obs).length) args = { ...args, __ab_obs: obs };
    }
    return this.request("tools/call", ` '${tool}'`, (opts, meta) => {
      // A token asks the server for progress notifications. Over stdio, without a progress
      // callback for this server nobody would see them, and the server's bookkeeping for the
      // token is a measurable part of a short call, so none is sent then. Over HTTP it is always
      // sent: progress writes on a request's stream are how a server notices a client that
      // closed that stream, which is how a 2026-07-28 HTTP client cancels.
      if (this.kind !== "stdio" || this.deps.callbacks()?.get("progress")) {
        meta.progressToken = `ab-${++this.#progressSeq}`;
      }
      if (extraMeta) Object.assign(meta, extraMeta); // a traced run's `traceparent`
      return this.client.callTool({ name: tool, arguments: args, _meta: meta }, opts);
    }, signal);
  }

  /**
   * Fails (code `era`) when the connection is modern, which has no `method`; `hint` follows the
   * method's name in the message (what to use instead).
   */
  requireLegacy(method: string, hint = ""): void {
    this.#assertOpen(method);
    if (this.era === "modern") {
      throw new McpError(
        `server '${this.name}' speaks MCP ${this.protocolVersion}, which has no ${method}${hint}`,
        this.name,
        method,
        "era",
      );
    }
  }

  /** Subscribes to updates of `uri`: `resources/subscribe` (2025) or `subscriptions/listen` (2026). */
  async subscribe(uri: string, signal?: AbortSignal): Promise<void> {
    if (this.era === "legacy") {
      await this.request(
        "resources/subscribe",
        ` '${uri}'`,
        (o, _meta) => this.client.subscribeResource({ uri }, o),
        signal,
      );
      return;
    }
    if (this.#resourceSubs.has(uri)) return;
    // A 2025 server refuses `resources/subscribe` itself; a `subscriptions/listen` stream is
    // accepted by any modern server and would then stay silent: refused here, as the 2025 one is.
    if (this.capabilities.resources?.subscribe !== true) {
      this.#assertOpen("subscriptions/listen");
      throw new McpError(
        `server '${this.name}': subscriptions/listen '${uri}' refused: the server does not offer ` +
          `resource subscriptions (capability resources.subscribe)`,
        this.name,
        "subscriptions/listen",
        "failed",
      );
    }
    this.#wanted.add(uri);
    try {
      const sub = await this.request(
        "subscriptions/listen",
        ` '${uri}'`,
        (o) => this.client.listen({ resourceSubscriptions: [uri] }, o),
        signal,
      );
      this.#resourceSubs.set(uri, sub);
    } catch (e) {
      this.#wanted.delete(uri);
      throw e;
    }
  }

  async unsubscribe(uri: string, signal?: AbortSignal): Promise<void> {
    if (this.era === "legacy") {
      await this.request(
        "resources/unsubscribe",
        ` '${uri}'`,
        (o) => this.client.unsubscribeResource({ uri }, o),
        signal,
      );
      return;
    }
    this.#assertOpen("subscriptions/listen");
    const sub = this.#resourceSubs.get(uri);
    this.#resourceSubs.delete(uri);
    this.#wanted.delete(uri);
    await sub?.close();
  }

  /**
   * Sends `notifications/cancelled` for `requestId`. Resolves at once on a closed connection (there
   * is nothing left to cancel); rejects with an `McpError` when the notification cannot be sent.
   */
  async cancel(requestId: string | number, reason = "cancelled by the client"): Promise<void> {
    if (this.#closed) return;
    const method = "notifications/cancelled";
    try {
      await this.client.notification({ method, params: { requestId, reason } });
    } catch (e) {
      throw new McpError(`server '${this.name}': ${errorText(e)}`, this.name, method, "failed", e);
    }
  }

  /** Sends `notifications/roots/list_changed`; rejects with an `McpError` (closed, or failed). */
  async notifyRootsChanged(): Promise<void> {
    const method = "notifications/roots/list_changed";
    this.#assertOpen(method);
    try {
      await this.client.sendRootsListChanged();
    } catch (e) {
      throw new McpError(`server '${this.name}': ${errorText(e)}`, this.name, method, "failed", e);
    }
  }

  /** Disconnects; never throws, never waits longer than a few seconds. */
  async close(): Promise<void> {
    const wasClosed = this.#closed;
    this.#closed = true;
    this.#closeReason ||= `server '${this.name}' was disconnected`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const work = (async () => {
      for (const s of this.#resourceSubs.values()) await s.close().catch(() => undefined);
      this.#resourceSubs.clear();
      this.#wanted.clear();
      await this.#listSub?.close().catch(() => undefined);
      if (!wasClosed) await this.client.close();
      else await this.transport.close();
    })();
    try {
      await Promise.race([
        work,
        new Promise((_r, reject) => {
          timer = setTimeout(
            () => reject(new Error(`disconnect timed out after ${seconds(CLOSE_TIMEOUT_MS)}`)),
            CLOSE_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (e) {
      this.deps.log.warn(`mcp: disconnecting server '${this.name}' failed: ${errorText(e)}`);
      if (this.transport instanceof ProcessStdioTransport) {
        await this.transport.close().catch(() => undefined);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  // --- internals -----------------------------------------------------------------------------

  #assertOpen(method: string): void {
    if (this.#closed) {
      throw new McpError(this.#closeReason || `server '${this.name}' is closed`, this.name, method, "closed");
    }
  }

  #stdioFailure(): string {
    return this.transport instanceof ProcessStdioTransport ? this.transport.failure() : "";
  }

  /** Words an SDK error: what was asked of which server, and why it failed. */
  #wrap(e: unknown, method: string, what: string): McpError {
    if (e instanceof McpError) return e;
    const stdio = this.transport instanceof ProcessStdioTransport ? this.transport : undefined;
    const subject = method === "initialize"
      ? `initialize '${this.name}'`
      : `${method}${what} on server '${this.name}'`;
    const tail = stdio && method === "initialize" ? stdio.handshakeNotes() : "";
    if (isTimeout(e)) return this.#timeoutError(method, what, e);
    const failure = this.#stdioFailure();
    if (failure) return new McpError(`${subject} failed: ${failure}`, this.name, method, "closed", e);
    const code = wireCode(e) ??
      (isAuthFailure(e) ? "auth" : this.#closed || isLostAnswer(e) ? "closed" : "failed");
    const more = code === "auth" ? this.deps.explainAuth?.(e) : undefined;
    return new McpError(
      `${subject} failed: ${errorText(e)}${more ? `; ${more}` : ""}${tail}`,
      this.name,
      method,
      code,
      e,
    );
  }

  /** On a modern connection, opens `subscriptions/listen` for the list changes the server offers. */
  async #listenForListChanges(): Promise<void> {
    const caps = this.capabilities;
    const filter = {
      ...(caps.tools?.listChanged ? { toolsListChanged: true } : {}),
      ...(caps.prompts?.listChanged ? { promptsListChanged: true } : {}),
      ...(caps.resources?.listChanged ? { resourcesListChanged: true } : {}),
    };
    if (Object.keys(filter).length === 0) return;
    try {
      this.#listSub = await this.client.listen(filter, { timeout: this.deps.timeoutMs });
    } catch (e) {
      this.deps.log.warn(
        `mcp: server '${this.name}': subscriptions/listen for list changes failed: ${errorText(e)}`,
      );
    }
  }

  /** Sees every inbound message first; consumes progress notifications only. */
  #onInbound(m: JSONRPCMessage): boolean {
    if (!("method" in m) || "id" in m) return false;
    const params = (m.params ?? {}) as Record<string, unknown>;
    switch (m.method) {
      case "notifications/progress":
        this.#deliver(
          "progress",
          () => [params.progressToken, params.progress, params.total, params.message],
        );
        return true;
      case "notifications/message":
        this.#onLog(params);
        return false;
      case "notifications/resources/updated":
        if (this.era === "modern" && !this.#wanted.has(String(params.uri))) return false;
        this.#deliver(
          "resource_update",
          () => [{ type: "resource_update", server: this.name, uri: params.uri }],
        );
        return false;
      case "notifications/resources/list_changed":
        this.#deliver(
          "resources_list_changed",
          () => [{ type: "resources_list_changed", server: this.name }],
        );
        return false;
      case "notifications/tools/list_changed":
        this.toolsEpoch++;
        this.#deliver("tools_list_changed", () => [{ type: "tools_list_changed", server: this.name }]);
        return false;
      case "notifications/prompts/list_changed":
        this.#deliver("prompts_list_changed", () => [{ type: "prompts_list_changed", server: this.name }]);
        return false;
      default:
        return false;
    }
  }

  #onLog(params: Record<string, unknown>): void {
    const level = String(params.level ?? "info");
    const logger = typeof params.logger === "string" ? params.logger : "";
    if (this.deps.callbacks()?.get("log")) {
      this.#deliver("log", () => [level, logger, params.data]);
      return;
    }
    const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
    this.deps.log.log(
      LOG_LEVELS[level] ?? "info",
      `mcp server '${this.name}'${logger ? ` (${logger})` : ""}: ${data}`,
    );
  }

  /** Starts the handler of `kind`, if any, and ties it to every in-flight request. */
  #deliver(kind: HandlerKind, args: () => unknown[]): void {
    const fn = this.deps.callbacks()?.get(kind);
    if (!fn) return;
    const p = fn(args()).catch((e) => {
      // A notification that lands while the run is ending has nobody left to run it.
      const level = e instanceof HandlerGone ? "debug" : "warn";
      this.deps.log.log(level, `mcp: ${kind} callback for server '${this.name}' failed: ${errorText(e)}`);
    });
    for (const list of this.#inflight) list.push(p);
  }
}
