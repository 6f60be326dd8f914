/**
 * The MCP connection manager of one run: server name → connection.
 *
 * Owns: opening stdio and HTTP connections (transport choice, working directory, environment,
 * timeout, era), replacing a connection reconnected under the same name, and disconnecting
 * everything in `closeAll()` (a failing disconnect is logged, never thrown).
 *
 * Loaded lazily: this module pulls in the MCP SDK, so `src/host/mcp.ts` imports it on the first
 * connect and creates the run's only manager then, handing it the run's callback registry (which
 * exists from the start so handlers can be set before any connect). `mcp.ts` owns the run-end
 * cleanup that calls `closeAll()` (registered at install time, so it keeps its place among the
 * run's cleanups whenever the manager is created).
 *
 * Invariants: every error names the server (`no server named 'x'`); at most one live connection
 * per name; after `closeAll()` no connection is left, no callback slot is held and every further
 * connect fails with "the run is ending".
 */
import type { LoggingLevel } from "@modelcontextprotocol/client";
import type { RunContext } from "../context.ts";
import type { CallbackRegistry, LuaBridge } from "./callbacks.ts";
import { type EraChoice, McpConnection } from "./connection.ts";
import { McpError, runEnding, sanitizeUrl, unknownServer } from "./errors.ts";
import { httpTransport, type HttpTransportKind } from "./http_transport.ts";
import { ProcessStdioTransport } from "./stdio_transport.ts";

/** Options shared by both connection kinds. */
export interface CommonConnectOptions {
  /** Aborts the handshake (the calling task was cancelled). */
  signal?: AbortSignal;
  /** Request timeout, ms (default: the run's `--mcp-timeout-secs`). */
  timeoutMs?: number;
  era?: EraChoice;
  logLevel?: LoggingLevel;
  traceContext?: boolean;
}

/** `mcp.connect` options. */
export interface StdioConnectOptions extends CommonConnectOptions {
  cwd?: string;
  env?: Record<string, string>;
}

/** `mcp.connect_http` options. */
export interface HttpConnectOptions extends CommonConnectOptions {
  transport?: HttpTransportKind;
  headers?: Record<string, string>;
}

/** The MCP connections of one run. */
export class McpManager {
  #conns = new Map<string, McpConnection>();
  #closed = false;

  constructor(
    private readonly run: RunContext,
    private readonly lua: LuaBridge,
    private readonly callbacks: CallbackRegistry,
  ) {}

  /** The live connection named `name`, or an error naming it. */
  get(fn: string, name: string): McpConnection {
    const c = this.#conns.get(name);
    if (!c) throw unknownServer(fn, name);
    return c;
  }

  /** The connection, if any (no error). */
  peek(name: string): McpConnection | undefined {
    return this.#conns.get(name);
  }

  async connectStdio(
    fn: string,
    name: string,
    command: string,
    args: string[],
    opts: StdioConnectOptions,
  ): Promise<McpConnection> {
    const transport = () =>
      new ProcessStdioTransport(
        {
          name,
          command,
          args,
          cwd: opts.cwd ?? this.run.projectRoot,
          env: opts.env ?? {},
        },
        this.run.procs,
        (line) => this.run.log.debug(`mcp server '${name}' stderr: ${line}`),
      );
    try {
      return await this.#open(fn, name, transport(), "stdio", opts);
    } catch (e) {
      // Some 2025-era servers exit on any request before `initialize`, such as the 2026-07-28
      // `server/discover` probe (the SDK probes on a sibling process only for its own stdio
      // transport). Such a server is a legacy server: start it again and speak 2025.
      if (!(e instanceof McpError && e.code === "probe_closed")) throw e;
      this.run.log.info(
        `mcp: server '${name}' closed the connection on the protocol probe; retrying as a 2025-era server`,
      );
      return await this.#open(fn, name, transport(), "stdio", { ...opts, era: "legacy" });
    }
  }

  async connectHttp(fn: string, name: string, url: string, opts: HttpConnectOptions): Promise<McpConnection> {
    let parsed: URL;
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
        throw new McpError(
          `${e.message} (${kind === "sse" ? "SSE" : "Streamable HTTP"} ${sanitizeUrl(url)})`,
        );
      }
      throw e;
    }
  }

  async #open(
    fn: string,
    name: string,
    transport: ProcessStdioTransport | ReturnType<typeof httpTransport>,
    kind: "stdio" | "http" | "sse",
    opts: CommonConnectOptions,
  ): Promise<McpConnection> {
    if (this.#closed) throw runEnding(fn, name);
    const old = this.#conns.get(name);
    if (old) {
      this.#conns.delete(name);
      await old.close();
    }
    const conn = await McpConnection.open(
      {
        name,
        log: this.run.log,
        timeoutMs: opts.timeoutMs ?? this.run.mcpTimeoutMs,
        callbacks: () => this.callbacks.peek(name),
        lua: this.lua,
        logLevel: opts.logLevel ?? "debug",
        traceContext: opts.traceContext ?? false,
      },
      transport,
      kind,
      opts.era ?? "auto",
      fn,
      opts.signal,
    );
    this.#conns.set(name, conn);
    return conn;
  }

  /** Disconnects `name`; an unknown name is not an error. Never throws. */
  async disconnect(name: string): Promise<void> {
    const c = this.#conns.get(name);
    if (!c) return;
    this.#conns.delete(name);
    await c.close();
  }

  /** Disconnects every server and frees every callback (run end). Never throws. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const all = [...this.#conns.values()];
    this.#conns.clear();
    await Promise.all(all.map((c) => c.close()));
    this.callbacks.releaseAll();
  }
}
