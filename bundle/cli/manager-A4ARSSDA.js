import {
  errorText,
  isTimeout
} from "./chunk-XDXMVCQC.js";
import {
  LuaCallbackError,
  McpError,
  runEnding,
  sanitizeUrl,
  seconds,
  unknownServer
} from "./chunk-AWGGZNFJ.js";
import "./chunk-J4FUTWHQ.js";
import {
  VERSION
} from "./chunk-HI6AAJID.js";

// src/host/mcp/connection.ts
import { Client, LOG_LEVEL_META_KEY } from "@modelcontextprotocol/client";

// src/host/mcp/client_handlers.ts
import { ProtocolError, ProtocolErrorCode } from "@modelcontextprotocol/client";
function installClientHandlers(client, name, callbacks, lua, log, whileHandling) {
  const run = async (what, fn, args, shape) => {
    try {
      const [value] = await whileHandling(() => lua.call(fn, args));
      return shape(value);
    } catch (e) {
      const msg = `${what} handler for server '${name}' failed: ${errorText(e)}`;
      log.warn(`mcp: ${msg}`);
      throw new ProtocolError(ProtocolErrorCode.InternalError, msg);
    }
  };
  client.setRequestHandler("sampling/createMessage", (req) => {
    const fn = callbacks()?.get("sampling");
    if (!fn) {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `no sampling handler is set for server '${name}' (mcp.set_sampling_handler)`);
    }
    return run("sampling", fn, [
      req.params,
      name
    ], toCreateMessageResult);
  });
  client.setRequestHandler("elicitation/create", async (req) => {
    const params = req.params;
    if (params.mode === "url") {
      log.info(`mcp: declined a URL-mode elicitation from server '${name}'`);
      return {
        action: "decline"
      };
    }
    const fn = callbacks()?.get("elicitation");
    if (!fn) return {
      action: "decline"
    };
    const schema = JSON.stringify(params.requestedSchema ?? {});
    return await run("elicitation", fn, [
      name,
      String(params.message ?? ""),
      schema
    ], toElicitResult);
  });
  client.setRequestHandler("roots/list", () => {
    const fn = callbacks()?.get("roots");
    if (!fn) {
      throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `no roots handler is set for server '${name}' (mcp.set_roots_handler)`);
    }
    return run("roots", fn, [
      name
    ], toRoots);
  });
}
function isTable(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
function toCreateMessageResult(v) {
  if (!isTable(v)) throw new Error(`must return a table { model, role, content }, got ${describe(v)}`);
  const content = typeof v.content === "string" ? {
    type: "text",
    text: v.content
  } : isTable(v.content) || Array.isArray(v.content) ? v.content : void 0;
  if (content === void 0) {
    throw new Error(`field 'content' must be a string or a table, got ${describe(v.content)}`);
  }
  const result = {
    model: typeof v.model === "string" ? v.model : "unknown",
    role: v.role === "user" ? "user" : "assistant",
    content
  };
  const stop = v.stop_reason ?? v.stopReason;
  if (typeof stop === "string") result.stopReason = stop;
  return result;
}
function toElicitResult(v) {
  if (!isTable(v)) throw new Error(`must return a table { action, content? }, got ${describe(v)}`);
  const action = v.action;
  if (action === "accept") {
    if (!isTable(v.content)) {
      throw new Error(`action 'accept' needs a 'content' table, got ${describe(v.content)}`);
    }
    return {
      action,
      content: v.content
    };
  }
  if (action === "decline" || action === "cancel") {
    if (v.content !== void 0) throw new Error(`action '${action}' takes no 'content'`);
    return {
      action
    };
  }
  throw new Error(`field 'action' must be "accept", "decline" or "cancel", got ${describe(action)}`);
}
function toRoots(v) {
  const list = Array.isArray(v) ? v : isTable(v) && Object.keys(v).length === 0 ? [] : void 0;
  if (!list) throw new Error(`must return an array of { uri, name? }, got ${describe(v)}`);
  return {
    roots: list.map((r, i) => {
      if (!isTable(r) || typeof r.uri !== "string") throw new Error(`root ${i + 1} needs a string 'uri'`);
      return typeof r.name === "string" ? {
        uri: r.uri,
        name: r.name
      } : {
        uri: r.uri
      };
    })
  };
}
function describe(v) {
  if (v === void 0) return "nil";
  if (Array.isArray(v)) return "an array";
  return typeof v === "object" ? "a table" : `${typeof v} ${JSON.stringify(v)}`;
}

// src/host/mcp/inbound_tap.ts
function tapInbound(transport, tap) {
  let downstream;
  const wrapped = (message, extra) => {
    if (tap(message)) return;
    downstream?.(message, extra);
  };
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    enumerable: true,
    get: () => downstream ? wrapped : void 0,
    set: (fn) => {
      if (fn !== wrapped) downstream = fn;
    }
  });
}

// src/host/mcp/deadline.ts
var Deadline = class {
  onExpire;
  #remaining;
  #startedAt;
  #handle;
  #pauses;
  #done;
  constructor(ms, onExpire) {
    this.onExpire = onExpire;
    this.#startedAt = 0;
    this.#pauses = 0;
    this.#done = false;
    this.#remaining = ms;
    this.#arm();
  }
  #arm() {
    this.#startedAt = performance.now();
    this.#handle = setTimeout(() => {
      this.#done = true;
      this.#handle = void 0;
      this.onExpire();
    }, Math.max(0, this.#remaining));
  }
  pause() {
    if (this.#done || this.#pauses++ > 0 || this.#handle === void 0) return;
    clearTimeout(this.#handle);
    this.#handle = void 0;
    this.#remaining -= performance.now() - this.#startedAt;
  }
  resume() {
    if (this.#pauses === 0 || --this.#pauses > 0 || this.#done) return;
    this.#arm();
  }
  clear() {
    this.#done = true;
    clearTimeout(this.#handle);
    this.#handle = void 0;
  }
};

// src/host/mcp/stdio_transport.ts
import { deserializeMessage } from "@modelcontextprotocol/client";
var STDERR_TAIL_BYTES = 4096;
var MAX_LINE_BYTES = 64 * 1024 * 1024;
var EOF_GRACE_MS = 500;
var READ_CHUNK_BYTES = 64 * 1024;
var QUOTE_CHARS = 200;
var ProcessStdioTransport = class {
  spec;
  procs;
  onStderrLine;
  onclose;
  onerror;
  onmessage;
  #proc;
  #writer;
  #stderrTail;
  #violation;
  #exit;
  #closed;
  #closing;
  #exited;
  #enc;
  /**
   * @param onStderrLine receives each line the child writes to stderr (the manager logs them at
   *   debug level, so a server's own diagnostics stay reachable with `AGENT_BLOCK_LOG=debug`)
   */
  constructor(spec, procs, onStderrLine) {
    this.spec = spec;
    this.procs = procs;
    this.onStderrLine = onStderrLine;
    this.#stderrTail = "";
    this.#closed = false;
    this.#closing = false;
    this.#exited = Promise.resolve();
    this.#enc = new TextEncoder();
  }
  /** Child pid (the SDK's structural stdio check reads `pid` and `stderr`). */
  get pid() {
    return this.#proc?.pid ?? null;
  }
  /** The child's stderr is consumed here (see `stderrTail`), so there is no stream to hand out. */
  get stderr() {
    return null;
  }
  /** The last few KB the child wrote to stderr. */
  get stderrTail() {
    return this.#stderrTail;
  }
  start() {
    if (this.#proc) throw new Error(`mcp server '${this.spec.name}': transport already started`);
    try {
      this.#proc = this.procs.spawn({
        cmd: [
          this.spec.command,
          ...this.spec.args
        ],
        cwd: this.spec.cwd,
        env: this.spec.env,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped"
      });
    } catch (e) {
      const why = e instanceof Deno.errors.NotFound ? isMissingDir(this.spec.cwd) ? `working directory ${this.spec.cwd} does not exist` : "no such command" : e instanceof Deno.errors.PermissionDenied ? "permission denied" : e.message;
      return Promise.reject(new Error(`cannot start server '${this.spec.name}' (command '${this.spec.command}'): ${why}`));
    }
    const child = this.#proc.child;
    this.#writer = child.stdin.getWriter();
    const out = this.#readStdout(child.stdout);
    const err = this.#readStderr(child.stderr);
    this.#exited = child.status.then(async (status) => {
      this.#exit = status;
      await Promise.allSettled([
        out,
        err
      ]);
      this.#finish();
    }, () => this.#finish());
    return Promise.resolve();
  }
  async #readStdout(stream) {
    const reader = stream.getReader({
      mode: "byob"
    });
    const dec = new TextDecoder();
    let space = new ArrayBuffer(READ_CHUNK_BYTES);
    let buf = "";
    try {
      while (true) {
        const { value, done } = await reader.read(new Uint8Array(space));
        if (done) break;
        space = value.buffer;
        buf += dec.decode(value, {
          stream: true
        });
        if (buf.length > MAX_LINE_BYTES && buf.indexOf("\n") < 0) {
          this.#fail(`server '${this.spec.name}' sent a message larger than ${MAX_LINE_BYTES} bytes`);
          return;
        }
        let start = 0;
        let nl;
        while ((nl = buf.indexOf("\n", start)) >= 0) {
          const end = nl > start && buf.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
          const line = buf.slice(start, end);
          start = nl + 1;
          if (line.trim() === "") continue;
          if (!this.#deliver(line)) return;
        }
        if (start > 0) buf = buf.slice(start);
      }
      if (buf.trim() !== "") this.#deliver(buf);
    } catch {
    } finally {
      reader.cancel().catch(() => void 0);
    }
  }
  /** Parses and delivers one line; false once the stream is known to be corrupt. */
  #deliver(line) {
    if (this.#closed || this.#violation) return false;
    let message;
    try {
      message = deserializeMessage(line);
    } catch {
      const quoted = line.length > QUOTE_CHARS ? line.slice(0, QUOTE_CHARS) + "\u2026" : line;
      this.#fail(`server '${this.spec.name}' wrote non-protocol text on stdout (stdout is reserved for JSON-RPC; log to stderr instead): ${JSON.stringify(quoted)}`);
      return false;
    }
    try {
      this.onmessage?.(message);
    } catch (e) {
      this.onerror?.(e instanceof Error ? e : new Error(String(e)));
    }
    return true;
  }
  /** Records why the stream can no longer be trusted and ends the connection. */
  #fail(violation) {
    this.#violation = violation;
    this.onerror?.(new Error(violation));
    void this.close();
  }
  async #readStderr(stream) {
    const dec = new TextDecoder();
    let partial = "";
    try {
      for await (const chunk of stream) {
        const text = dec.decode(chunk, {
          stream: true
        });
        this.#stderrTail += text;
        if (this.#stderrTail.length > STDERR_TAIL_BYTES * 2) {
          this.#stderrTail = this.#stderrTail.slice(-STDERR_TAIL_BYTES);
        }
        if (this.onStderrLine) {
          const lines = (partial + text).split("\n");
          partial = lines.pop() ?? "";
          if (partial.length > STDERR_TAIL_BYTES) partial = partial.slice(-STDERR_TAIL_BYTES);
          for (const l of lines) if (l.trim()) this.onStderrLine(l);
        }
      }
      if (partial.trim()) this.onStderrLine?.(partial);
    } catch {
    }
  }
  #finish() {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#writer?.releaseLock();
    } catch {
    }
    this.onclose?.();
  }
  /**
   * Why the connection is unusable, for error messages: the protocol violation, or how the child
   * ended, plus the stderr tail. Empty while the child runs normally.
   */
  failure() {
    const parts = [];
    if (this.#violation) parts.push(this.#violation);
    else if (this.#exit && !this.#closing) {
      parts.push(this.#exit.signal ? `server '${this.spec.name}' was killed by ${this.#exit.signal}` : `server '${this.spec.name}' exited with code ${this.#exit.code}`);
    }
    if (parts.length === 0) return "";
    const tail = this.#stderrTail.slice(-STDERR_TAIL_BYTES).trim();
    if (tail) parts.push(`stderr tail:
${tail}`);
    return parts.join("; ");
  }
  /** The stderr tail formatted for a message, or "". */
  stderrSuffix() {
    const tail = this.#stderrTail.slice(-STDERR_TAIL_BYTES).trim();
    return tail ? `; stderr tail:
${tail}` : "";
  }
  async send(message) {
    if (this.#closed || !this.#writer) {
      throw new Error(this.failure() || `server '${this.spec.name}' is not connected`);
    }
    try {
      await this.#writer.write(this.#enc.encode(JSON.stringify(message) + "\n"));
    } catch {
      throw new Error(this.failure() || `server '${this.spec.name}' closed its stdin`);
    }
  }
  /**
   * Closes stdin (a well-behaved server exits on EOF), waits briefly, then ends the process
   * group. Resolves once the child is gone.
   */
  async close() {
    if (!this.#proc) return;
    if (!this.#violation) this.#closing = true;
    const proc = this.#proc;
    try {
      await this.#writer?.close();
    } catch {
    }
    if (!proc.exited) {
      let timer;
      const gone = await Promise.race([
        proc.status.then(() => true, () => true),
        new Promise((r) => timer = setTimeout(() => r(false), EOF_GRACE_MS))
      ]);
      clearTimeout(timer);
      if (!gone) await proc.terminate();
    }
    await this.#exited;
  }
};
function isMissingDir(path) {
  try {
    return !Deno.statSync(path).isDirectory;
  } catch {
    return true;
  }
}

// src/host/mcp/connection.ts
var CLOSE_TIMEOUT_MS = 5e3;
var NO_SDK_TIMEOUT = 2147483647;
var STDIO_PROBE_MS = 5e3;
var CAPABILITIES = {
  sampling: {},
  // URL mode is declared so such requests reach us and are declined explicitly (never shown to
  // the Lua handler), rather than failing as a capability error on the server side.
  elicitation: {
    form: {},
    url: {}
  },
  roots: {
    listChanged: true
  }
};
var LOG_LEVELS = {
  debug: "debug",
  info: "info",
  notice: "info",
  warning: "warn",
  error: "error",
  critical: "error",
  alert: "error",
  emergency: "error"
};
var McpConnection = class _McpConnection {
  deps;
  transport;
  kind;
  client;
  /** Number of `notifications/tools/list_changed` received (mcp_tools refreshes on change). */
  toolsEpoch;
  #closed;
  #closeReason;
  #progressSeq;
  /** Delivery promises of callbacks started while each in-flight request waits. */
  #inflight;
  #resourceSubs;
  #deadlines;
  #listSub;
  constructor(deps, transport, kind) {
    this.deps = deps;
    this.transport = transport;
    this.kind = kind;
    this.toolsEpoch = 0;
    this.#closed = false;
    this.#closeReason = "";
    this.#progressSeq = 0;
    this.#inflight = /* @__PURE__ */ new Set();
    this.#resourceSubs = /* @__PURE__ */ new Map();
    this.#deadlines = /* @__PURE__ */ new Set();
    const name = deps.name;
    this.client = new Client({
      name: "agent-block",
      version: VERSION
    }, {
      capabilities: CAPABILITIES
    });
    installClientHandlers(this.client, name, deps.callbacks, deps.lua, deps.log, (w) => this.#whileHandling(w));
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
  static async open(deps, transport, kind, era, fn, signal) {
    const conn = new _McpConnection(deps, transport, kind);
    const negotiation = era === "legacy" ? {
      mode: "legacy"
    } : era === "auto" ? {
      mode: "auto",
      probe: kind === "stdio" ? {
        timeoutMs: Math.min(deps.timeoutMs, STDIO_PROBE_MS)
      } : {}
    } : {
      mode: {
        pin: era
      }
    };
    conn.client.setVersionNegotiation(negotiation);
    try {
      await conn.client.connect(transport, {
        timeout: deps.timeoutMs,
        signal
      });
    } catch (e) {
      conn.#closed = true;
      const probeClosed = e instanceof Error && /closed during the server\/discover probe/.test(e.message);
      const err = conn.#wrap(e, fn, "initialize", "");
      await transport.close().catch(() => void 0);
      throw probeClosed && kind === "stdio" && err.code === void 0 && !/non-protocol/.test(err.message) ? new McpError(err.message, "probe_closed") : err;
    }
    if (conn.era === "modern") await conn.#listenForListChanges();
    return conn;
  }
  get name() {
    return this.deps.name;
  }
  get closed() {
    return this.#closed;
  }
  /** `modern` (2026-07-28 and later) or `legacy` (2025 era). */
  get era() {
    return this.client.getProtocolEra() === "modern" ? "modern" : "legacy";
  }
  get protocolVersion() {
    return this.client.getNegotiatedProtocolVersion() ?? "";
  }
  get capabilities() {
    return this.client.getServerCapabilities() ?? {};
  }
  /** The `InitializeResult`-shaped description of the server (both eras). */
  serverInfo() {
    const info = {
      protocolVersion: this.protocolVersion,
      capabilities: this.capabilities,
      serverInfo: this.client.getServerVersion() ?? {},
      era: this.era
    };
    const instructions = this.client.getInstructions();
    if (instructions !== void 0) info.instructions = instructions;
    return info;
  }
  // --- requests ------------------------------------------------------------------------------
  /** Runs one request with the timeout, the abort signal and error wording. */
  async request(fn, method, what, run, signal) {
    this.#assertOpen(fn);
    const deliveries = [];
    this.#inflight.add(deliveries);
    const meta = {};
    if (this.era === "modern") meta[LOG_LEVEL_META_KEY] = this.deps.logLevel;
    const ac = new AbortController();
    const onAbort = () => ac.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort, {
      once: true
    });
    let timedOut = false;
    const deadline = new Deadline(this.deps.timeoutMs, () => {
      timedOut = true;
      ac.abort(new Error("timeout"));
    });
    this.#deadlines.add(deadline);
    try {
      return await run({
        timeout: NO_SDK_TIMEOUT,
        signal: ac.signal
      }, meta);
    } catch (e) {
      if (timedOut) throw this.#timeoutError(fn, method, what);
      throw this.#wrap(e, fn, method, what);
    } finally {
      deadline.clear();
      this.#deadlines.delete(deadline);
      signal?.removeEventListener("abort", onAbort);
      this.#inflight.delete(deliveries);
      if (deliveries.length) await Promise.allSettled(deliveries);
    }
  }
  /** Runs `work` (a Lua handler answering the server) with every request deadline paused. */
  async #whileHandling(work) {
    const paused = [
      ...this.#deadlines
    ];
    for (const d of paused) d.pause();
    try {
      return await work();
    } finally {
      for (const d of paused) d.resume();
    }
  }
  #timeoutError(fn, method, what) {
    const cancel = method === "initialize" ? "" : " (cancellation sent)";
    const stdio = this.transport instanceof ProcessStdioTransport ? this.transport : void 0;
    const tail = stdio && method === "initialize" ? stdio.stderrSuffix() : "";
    const subject = method === "initialize" ? `initialize '${this.name}'` : `${method}${what} on server '${this.name}'`;
    return new McpError(`${fn}: ${subject} timed out after ${seconds(this.deps.timeoutMs)}${cancel}${tail}`, "timeout");
  }
  /** `tools/call`, with our own progress token (when: see the module header). */
  callTool(fn, tool, args, signal) {
    if (this.deps.traceContext && !("__ab_obs" in args)) {
      const obs = traceContext();
      if (Object.keys(obs).length) args = {
        ...args,
        __ab_obs: obs
      };
    }
    return this.request(fn, "tools/call", ` '${tool}'`, (opts, meta) => {
      if (this.kind !== "stdio" || this.deps.callbacks()?.get("progress")) {
        meta.progressToken = `ab-${++this.#progressSeq}`;
      }
      return this.client.callTool({
        name: tool,
        arguments: args,
        _meta: meta
      }, opts);
    }, signal);
  }
  /** Fails with the era's absence of `method` when the connection is modern. */
  requireLegacy(fn, method) {
    this.#assertOpen(fn);
    if (this.era === "modern") {
      throw new McpError(`${fn}: server '${this.name}' speaks MCP ${this.protocolVersion}, which has no ${method}`, "era");
    }
  }
  /** Subscribes to updates of `uri`: `resources/subscribe` (2025) or `subscriptions/listen` (2026). */
  async subscribe(fn, uri) {
    if (this.era === "legacy") {
      await this.request(fn, "resources/subscribe", ` '${uri}'`, (o, _meta) => this.client.subscribeResource({
        uri
      }, o));
      return;
    }
    if (this.#resourceSubs.has(uri)) return;
    const sub = await this.request(fn, "subscriptions/listen", ` '${uri}'`, (o) => this.client.listen({
      resourceSubscriptions: [
        uri
      ]
    }, o));
    this.#resourceSubs.set(uri, sub);
  }
  async unsubscribe(fn, uri) {
    if (this.era === "legacy") {
      await this.request(fn, "resources/unsubscribe", ` '${uri}'`, (o) => this.client.unsubscribeResource({
        uri
      }, o));
      return;
    }
    this.#assertOpen(fn);
    const sub = this.#resourceSubs.get(uri);
    this.#resourceSubs.delete(uri);
    await sub?.close();
  }
  /** Sends `notifications/cancelled` for `requestId` (fire and forget; failures are logged). */
  cancel(requestId, reason = "cancelled by the script") {
    if (this.#closed) return;
    this.client.notification({
      method: "notifications/cancelled",
      params: {
        requestId,
        reason
      }
    }).catch((e) => this.deps.log.warn(`mcp.cancel: server '${this.name}': ${errorText(e)}`));
  }
  /** Sends `notifications/roots/list_changed` (fire and forget; failures are logged). */
  notifyRootsChanged() {
    if (this.#closed) {
      this.deps.log.warn(`mcp.notify_roots_list_changed: ${this.#closeReason || `server '${this.name}' is closed`}`);
      return;
    }
    this.client.sendRootsListChanged().catch((e) => this.deps.log.warn(`mcp.notify_roots_list_changed: server '${this.name}': ${errorText(e)}`));
  }
  /** Disconnects; never throws, never waits longer than a few seconds. */
  async close() {
    const wasClosed = this.#closed;
    this.#closed = true;
    this.#closeReason ||= `server '${this.name}' was disconnected`;
    let timer;
    const work = (async () => {
      for (const s of this.#resourceSubs.values()) await s.close().catch(() => void 0);
      this.#resourceSubs.clear();
      await this.#listSub?.close().catch(() => void 0);
      if (!wasClosed) await this.client.close();
      else await this.transport.close();
    })();
    try {
      await Promise.race([
        work,
        new Promise((_r, reject) => {
          timer = setTimeout(() => reject(new Error(`disconnect timed out after ${seconds(CLOSE_TIMEOUT_MS)}`)), CLOSE_TIMEOUT_MS);
        })
      ]);
    } catch (e) {
      this.deps.log.warn(`mcp: disconnecting server '${this.name}' failed: ${errorText(e)}`);
      if (this.transport instanceof ProcessStdioTransport) {
        await this.transport.close().catch(() => void 0);
      }
    } finally {
      clearTimeout(timer);
    }
  }
  // --- internals -----------------------------------------------------------------------------
  #assertOpen(fn) {
    if (this.#closed) throw new McpError(`${fn}: ${this.#closeReason || `server '${this.name}' is closed`}`);
  }
  #stdioFailure() {
    return this.transport instanceof ProcessStdioTransport ? this.transport.failure() : "";
  }
  /** Words an SDK error: what was asked of which server, and why it failed. */
  #wrap(e, fn, method, what) {
    if (e instanceof McpError) return e;
    const stdio = this.transport instanceof ProcessStdioTransport ? this.transport : void 0;
    const subject = method === "initialize" ? `initialize '${this.name}'` : `${method}${what} on server '${this.name}'`;
    const tail = stdio && method === "initialize" ? stdio.stderrSuffix() : "";
    if (isTimeout(e)) return this.#timeoutError(fn, method, what);
    const failure = this.#stdioFailure();
    if (failure) return new McpError(`${fn}: ${subject} failed: ${failure}`);
    return new McpError(`${fn}: ${subject} failed: ${errorText(e)}${tail}`);
  }
  /** On a modern connection, opens `subscriptions/listen` for the list changes the server offers. */
  async #listenForListChanges() {
    const caps = this.capabilities;
    const filter = {
      ...caps.tools?.listChanged ? {
        toolsListChanged: true
      } : {},
      ...caps.prompts?.listChanged ? {
        promptsListChanged: true
      } : {},
      ...caps.resources?.listChanged ? {
        resourcesListChanged: true
      } : {}
    };
    if (Object.keys(filter).length === 0) return;
    try {
      this.#listSub = await this.client.listen(filter, {
        timeout: this.deps.timeoutMs
      });
    } catch (e) {
      this.deps.log.warn(`mcp: server '${this.name}': subscriptions/listen for list changes failed: ${errorText(e)}`);
    }
  }
  /** Sees every inbound message first; consumes progress notifications only. */
  #onInbound(m) {
    if (!("method" in m) || "id" in m) return false;
    const params = m.params ?? {};
    switch (m.method) {
      case "notifications/progress":
        this.#deliver("progress", () => [
          params.progressToken,
          params.progress,
          params.total,
          params.message
        ]);
        return true;
      case "notifications/message":
        this.#onLog(params);
        return false;
      case "notifications/resources/updated":
        this.#deliver("resource_update", () => [
          {
            type: "resource_update",
            server: this.name,
            uri: params.uri
          }
        ]);
        return false;
      case "notifications/resources/list_changed":
        this.#deliver("resources_list_changed", () => [
          {
            type: "resources_list_changed",
            server: this.name
          }
        ]);
        return false;
      case "notifications/tools/list_changed":
        this.toolsEpoch++;
        this.#deliver("tools_list_changed", () => [
          {
            type: "tools_list_changed",
            server: this.name
          }
        ]);
        return false;
      case "notifications/prompts/list_changed":
        this.#deliver("prompts_list_changed", () => [
          {
            type: "prompts_list_changed",
            server: this.name
          }
        ]);
        return false;
      default:
        return false;
    }
  }
  #onLog(params) {
    const level = String(params.level ?? "info");
    const logger = typeof params.logger === "string" ? params.logger : "";
    if (this.deps.callbacks()?.get("log")) {
      this.#deliver("log", () => [
        level,
        logger,
        params.data
      ]);
      return;
    }
    const data = typeof params.data === "string" ? params.data : JSON.stringify(params.data);
    this.deps.log.log(LOG_LEVELS[level] ?? "info", `mcp server '${this.name}'${logger ? ` (${logger})` : ""}: ${data}`);
  }
  /** Starts the Lua callback of `kind`, if any, and ties it to every in-flight request. */
  #deliver(kind, args) {
    const fn = this.deps.callbacks()?.get(kind);
    if (!fn) return;
    const p = this.deps.lua.call(fn, args()).catch((e) => {
      const level = e instanceof LuaCallbackError && e.value === void 0 ? "debug" : "warn";
      this.deps.log.log(level, `mcp: ${kind} callback for server '${this.name}' failed: ${errorText(e)}`);
    });
    for (const list of this.#inflight) list.push(p);
  }
};
function traceContext() {
  const out = {};
  for (const [k, env] of [
    [
      "trace_id",
      "AGENT_BLOCK_TRACE_ID"
    ],
    [
      "run_id",
      "AGENT_BLOCK_RUN_ID"
    ],
    [
      "agent_id",
      "AGENT_BLOCK_AGENT_ID"
    ],
    [
      "agent_name",
      "AGENT_BLOCK_AGENT_NAME"
    ]
  ]) {
    const v = Deno.env.get(env);
    if (v) out[k] = v;
  }
  return out;
}

// src/host/mcp/http_transport.ts
import { SSEClientTransport, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
function httpTransport(url, kind, headers) {
  const withHeaders = (input, init) => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return fetch(input, {
      ...init,
      headers: h
    });
  };
  return kind === "sse" ? new SSEClientTransport(url, {
    fetch: withHeaders
  }) : new StreamableHTTPClientTransport(url, {
    fetch: withHeaders
  });
}

// src/host/mcp/manager.ts
var McpManager = class {
  run;
  lua;
  callbacks;
  #conns;
  #closed;
  constructor(run, lua, callbacks) {
    this.run = run;
    this.lua = lua;
    this.callbacks = callbacks;
    this.#conns = /* @__PURE__ */ new Map();
    this.#closed = false;
  }
  /** The live connection named `name`, or an error naming it. */
  get(fn, name) {
    const c = this.#conns.get(name);
    if (!c) throw unknownServer(fn, name);
    return c;
  }
  /** The connection, if any (no error). */
  peek(name) {
    return this.#conns.get(name);
  }
  async connectStdio(fn, name, command, args, opts) {
    const transport = () => new ProcessStdioTransport({
      name,
      command,
      args,
      cwd: opts.cwd ?? this.run.projectRoot,
      env: opts.env ?? {}
    }, this.run.procs, (line) => this.run.log.debug(`mcp server '${name}' stderr: ${line}`));
    try {
      return await this.#open(fn, name, transport(), "stdio", opts);
    } catch (e) {
      if (!(e instanceof McpError && e.code === "probe_closed")) throw e;
      this.run.log.info(`mcp: server '${name}' closed the connection on the protocol probe; retrying as a 2025-era server`);
      return await this.#open(fn, name, transport(), "stdio", {
        ...opts,
        era: "legacy"
      });
    }
  }
  async connectHttp(fn, name, url, opts) {
    let parsed;
    try {
      parsed = new URL(url);
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)");
    } catch {
      throw new McpError(`${fn}: server '${name}': '${sanitizeUrl(url)}' is not an http(s) URL`);
    }
    const kind = opts.transport ?? "http";
    try {
      return await this.#open(fn, name, httpTransport(parsed, kind, opts.headers ?? {}), kind, opts);
    } catch (e) {
      if (e instanceof McpError) {
        throw new McpError(`${e.message} (${kind === "sse" ? "SSE" : "Streamable HTTP"} ${sanitizeUrl(url)})`);
      }
      throw e;
    }
  }
  async #open(fn, name, transport, kind, opts) {
    if (this.#closed) throw runEnding(fn, name);
    const old = this.#conns.get(name);
    if (old) {
      this.#conns.delete(name);
      await old.close();
    }
    const conn = await McpConnection.open({
      name,
      log: this.run.log,
      timeoutMs: opts.timeoutMs ?? this.run.mcpTimeoutMs,
      callbacks: () => this.callbacks.peek(name),
      lua: this.lua,
      logLevel: opts.logLevel ?? "debug",
      traceContext: opts.traceContext ?? false
    }, transport, kind, opts.era ?? "auto", fn, opts.signal);
    this.#conns.set(name, conn);
    return conn;
  }
  /** Disconnects `name`; an unknown name is not an error. Never throws. */
  async disconnect(name) {
    const c = this.#conns.get(name);
    if (!c) return;
    this.#conns.delete(name);
    await c.close();
  }
  /** Disconnects every server and frees every callback (run end). Never throws. */
  async closeAll() {
    this.#closed = true;
    const all = [
      ...this.#conns.values()
    ];
    this.#conns.clear();
    await Promise.all(all.map((c) => c.close()));
    this.callbacks.releaseAll();
  }
};
export {
  McpManager
};
