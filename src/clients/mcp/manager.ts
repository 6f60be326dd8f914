/**
 * The MCP connections of one user of the client (one run, in agent-block): server name →
 * connection.
 *
 * Owns: opening stdio and HTTP connections (transport choice, working directory, environment,
 * timeout, era, the largest message accepted from the server, OAuth: the given `auth` settings or
 * else a login stored for the URL), replacing a connection reconnected under the same name, and disconnecting
 * everything in `closeAll()` (a failing disconnect is logged, never thrown).
 *
 * Loaded lazily: this module pulls in the MCP SDK, so the face (`src/host/mcp.ts`) imports it on
 * the first connect and creates its only manager then, handing it what the client needs as plain
 * options: the logger, the spawner of stdio servers, the default working directory and timeout,
 * the handlers of each server name, and the correlation ids for `trace_context`. Nothing here
 * reads an environment or knows a language face.
 *
 * Invariants: every error is an `McpError` naming the server; at most one live connection per
 * name; after `closeAll()` no connection is left and every further connect fails with code
 * `ending`.
 */
import type { LoggingLevel } from "@modelcontextprotocol/client";
import type { Logger } from "../../obs/log.ts";
import { type EraChoice, McpConnection } from "./connection.ts";
import { McpError, runEnding, sanitizeUrl, unknownServer } from "./errors.ts";
import type { ServerHandlers } from "./handlers.ts";
import { httpTransport, type HttpTransportKind } from "./http_transport.ts";
import { DEFAULT_MAX_MESSAGE_BYTES } from "./limits.ts";
import { ProcessStdioTransport, type Spawner } from "./stdio_transport.ts";
import type { McpAuth } from "./oauth/settings.ts";
import { connectionAuth, hasStoredLogin } from "./oauth/providers.ts";

/** What the manager is given once, by its owner. */
export interface McpManagerOptions {
  log: Logger;
  /** Starts stdio servers (the run's process groups). */
  spawner: Spawner;
  /** Working directory of a stdio server without `cwd` (absolute). */
  defaultCwd: string;
  /** Request timeout of a connection without `timeoutMs`, ms. */
  timeoutMs: number;
  /** The handlers of server `name`, looked up at delivery time. */
  handlers: (name: string) => ServerHandlers | undefined;
  /** The correlation ids `traceContext` connections inject as `__ab_obs` (read per call). */
  correlation: () => Record<string, string>;
  /** Name and version announced in the handshake. */
  clientInfo: { name: string; version: string };
  /** Adds a credential the client learns (an OAuth token) to the run's secrets. */
  secret?: (value: string | undefined) => void;
}

/** Options shared by both connection kinds. */
export interface CommonConnectOptions {
  /** Aborts the handshake (the caller gave up). */
  signal?: AbortSignal;
  /** Request timeout, ms (default: the manager's). */
  timeoutMs?: number;
  era?: EraChoice;
  logLevel?: LoggingLevel;
  /** Inject the correlation ids as `__ab_obs` into tool arguments. */
  traceContext?: boolean;
  /** Largest message accepted from the server, bytes (default `DEFAULT_MAX_MESSAGE_BYTES`). */
  maxMessageBytes?: number;
}

/** Options of a stdio connection. */
export interface StdioConnectOptions extends CommonConnectOptions {
  /** Absolute working directory (default: the manager's). */
  cwd?: string;
  /** Variables applied last to the child's environment. */
  env?: Record<string, string>;
}

/** Options of an HTTP connection. */
export interface HttpConnectOptions extends CommonConnectOptions {
  transport?: HttpTransportKind;
  headers?: Record<string, string>;
  /**
   * How to authorize (OAuth). Without it, a login stored in `storeDir` for this URL is used
   * when there is one.
   */
  auth?: McpAuth;
  /** The token store (`<AGENT_BLOCK_HOME>/mcp-auth`), for stored logins. */
  storeDir?: string;
}

/** The MCP connections of one owner. */
export class McpManager {
  #conns = new Map<string, McpConnection>();
  #closed = false;

  constructor(private readonly opts: McpManagerOptions) {}

  /** The live connection named `name`, or an `McpError` (code `unknown`) naming it. */
  get(name: string): McpConnection {
    const c = this.#conns.get(name);
    if (!c) throw unknownServer(name);
    return c;
  }

  /** The connection, if any (no error). */
  peek(name: string): McpConnection | undefined {
    return this.#conns.get(name);
  }

  async connectStdio(
    name: string,
    command: string,
    args: string[],
    opts: StdioConnectOptions,
  ): Promise<McpConnection> {
    const log = this.opts.log;
    const transport = () =>
      new ProcessStdioTransport(
        {
          name,
          command,
          args,
          cwd: opts.cwd ?? this.opts.defaultCwd,
          env: opts.env ?? {},
          maxMessageBytes: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
        },
        this.opts.spawner,
        (line) => log.debug(`mcp server '${name}' stderr: ${line}`),
        // Noise on stdout is worth one warning per connection, not one per line.
        ({ quoted, count }) =>
          count === 1
            ? log.warn(
              `mcp: server '${name}' wrote a line on stdout that is not JSON-RPC, skipped (stdout is ` +
                `reserved for JSON-RPC; log to stderr instead; further such lines are logged at debug ` +
                `level): ${quoted}`,
            )
            : log.debug(
              `mcp: server '${name}' wrote a non-JSON-RPC line on stdout (#${count}), skipped: ${quoted}`,
            ),
      );
    try {
      return await this.#open(name, transport(), "stdio", opts);
    } catch (e) {
      // Some 2025-era servers exit on any request before `initialize`, such as the 2026-07-28
      // `server/discover` probe (the SDK probes on a sibling process only for its own stdio
      // transport). Such a server is a legacy server: start it again and speak 2025.
      if (!(e instanceof McpError && e.code === "probe_closed")) throw e;
      log.info(
        `mcp: server '${name}' closed the connection on the protocol probe; retrying as a 2025-era server`,
      );
      return await this.#open(name, transport(), "stdio", { ...opts, era: "legacy" });
    }
  }

  async connectHttp(name: string, url: string, opts: HttpConnectOptions): Promise<McpConnection> {
    let parsed: URL;
    try {
      parsed = new URL(url);
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http(s)");
    } catch {
      throw new McpError(
        `server '${name}': '${sanitizeUrl(url)}' is not an http(s) URL`,
        name,
        "initialize",
        "invalid",
      );
    }
    const kind = opts.transport ?? "http";
    let auth = opts.auth;
    try {
      if (!auth && opts.storeDir && await hasStoredLogin(opts.storeDir, parsed.href)) {
        auth = { kind: "stored", storeDir: opts.storeDir };
      }
      const oauth = auth && await this.#auth(name, parsed.href, auth);
      const transport = httpTransport(parsed, kind, opts.headers ?? {}, {
        server: name,
        maxMessageBytes: opts.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
        auth: oauth,
      });
      return await this.#open(name, transport, kind, opts, oauth?.explain);
    } catch (e) {
      if (e instanceof McpError) {
        const where = `${kind === "sse" ? "SSE" : "Streamable HTTP"} ${sanitizeUrl(url)}`;
        const hint = e.code === "auth" && !auth
          ? `; the server requires authorization: give opts.auth (machine credentials), or log in once ` +
            `with agent-block mcp login ${sanitizeUrl(url)}`
          : "";
        throw new McpError(`${e.message} (${where})${hint}`, e.server, e.method, e.code, e.cause);
      }
      throw e;
    }
  }

  /** The OAuth side of a connection to `url`; a bad stored login is an `McpError` of kind `auth`. */
  async #auth(name: string, url: string, settings: McpAuth) {
    try {
      return await connectionAuth(sanitizeUrl(url), settings, {
        secret: (v) => this.opts.secret?.(v),
        debug: (line) => this.opts.log.debug(line),
        warn: (line) => this.opts.log.warn(line),
      });
    } catch (e) {
      throw new McpError(`server '${name}': ${(e as Error).message}`, name, "initialize", "auth", e);
    }
  }

  async #open(
    name: string,
    transport: ProcessStdioTransport | ReturnType<typeof httpTransport>,
    kind: "stdio" | "http" | "sse",
    opts: CommonConnectOptions,
    explainAuth?: (e: unknown) => string | undefined,
  ): Promise<McpConnection> {
    if (this.#closed) throw runEnding(name);
    const old = this.#conns.get(name);
    if (old) {
      this.#conns.delete(name);
      await old.close();
    }
    const conn = await McpConnection.open(
      {
        name,
        log: this.opts.log,
        timeoutMs: opts.timeoutMs ?? this.opts.timeoutMs,
        callbacks: () => this.opts.handlers(name),
        logLevel: opts.logLevel ?? "debug",
        traceContext: opts.traceContext ? this.opts.correlation : undefined,
        clientInfo: this.opts.clientInfo,
        explainAuth,
      },
      transport,
      kind,
      opts.era ?? "auto",
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

  /** Disconnects every server (the owner's end). Never throws. */
  async closeAll(): Promise<void> {
    this.#closed = true;
    const all = [...this.#conns.values()];
    this.#conns.clear();
    await Promise.all(all.map((c) => c.close()));
  }
}
