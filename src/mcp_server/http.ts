/**
 * `agent-block mcp --http HOST:PORT`: the block server over Streamable HTTP, for both eras.
 *
 * Owns the HTTP front: parsing the listen address, wording the guard's refusals as JSON-RPC
 * errors, and the hybrid era wiring. The checks themselves are the HTTP guard's
 * (`src/net/guard.ts`), the same module `serve` uses:
 * - Address: HOST must be a loopback address (`127.0.0.0/8`, `::1`, `localhost`); anything
 *   else is refused at start (this command has no opt-out), because `run_block` runs code with
 *   the project's credentials.
 * - `Host` must name a loopback host (`localhost`, `127.0.0.1`, `[::1]`) or the bound address,
 *   and `Origin`, when present, likewise — otherwise 403. This is what keeps a web page from
 *   reaching the server through DNS rebinding.
 * - With a token (`--token-file`), every request needs `Authorization: Bearer <token>`, else 401.
 * - A request body past `MAX_BODY_BYTES` is refused, 413.
 * - Only `/mcp` is served (404 elsewhere).
 * - Era wiring: 2026-07-28 requests (they carry the per-request `_meta` envelope) go to
 *   `createMcpHandler(factory, {legacy: "reject"})`, one instance per request; 2025-era traffic
 *   (`initialize` and everything after it) gets a sessionful
 *   `WebStandardStreamableHTTPServerTransport` per session, so cancellation and server→client
 *   messages work for old clients too. The sessions are a `SessionTable` (`sessions.ts`): at most
 *   `MAX_LEGACY_SESSIONS`, a session idle for `sessionIdleMs` (default
 *   `DEFAULT_SESSION_IDLE_SECS`) is closed, and a new client always gets a session — the one
 *   idle longest is evicted when the table is full (503 only while every session has a call in
 *   flight). A client coming back to a closed session gets 404 and starts a new one.
 *
 * - With `resourcePaths`, a 2026-07-28 `subscriptions/listen` request's `resourceSubscriptions`
 *   are read from its body and watched while its stream is open (`subscriptions.ts`), their
 *   changes broadcast through the handler's notifier (which sends each to the streams holding it).
 *
 * Invariant: a request refused here never reaches the MCP layer and never starts a run.
 */
import {
  createMcpHandler,
  isLegacyRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { AgentBlockError, UsageError } from "../errors.ts";
import {
  admit,
  allowedHostnames,
  bindRefusal,
  type GuardPolicy,
  headerRefusal,
  type Refusal,
} from "../net/guard.ts";
import type { Logger } from "../obs/log.ts";
import type { RegistryWatcher } from "./watch.ts";
import { SessionTable, track } from "./sessions.ts";
import { SharedSubscriptions } from "./subscriptions.ts";

/** The `resourceSubscriptions` of a 2026-07-28 `subscriptions/listen` request, else undefined. */
async function listenedResources(req: Request): Promise<string[] | undefined> {
  if (req.method !== "POST") return undefined;
  let body: unknown;
  try {
    body = await req.clone().json();
  } catch {
    return undefined; // not JSON: the handler answers it
  }
  const m = body as { method?: unknown; params?: { notifications?: { resourceSubscriptions?: unknown } } };
  if (m?.method !== "subscriptions/listen") return undefined;
  const uris = m.params?.notifications?.resourceSubscriptions;
  return Array.isArray(uris) ? uris.filter((u): u is string => typeof u === "string") : undefined;
}

/** Open 2025-era sessions at most; a client that never sends DELETE cannot grow this forever. */
export const MAX_LEGACY_SESSIONS = 64;

/** Default idle time after which a 2025-era session is closed: 30 minutes. */
export const DEFAULT_SESSION_IDLE_SECS = 1800;

/** Largest request body: a `run_block` call carries the caller's prompt and context. 16 MiB. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

export { allowedHostnames, isLoopback } from "../net/guard.ts";

/** A parsed `--http` address. */
export interface ListenAddress {
  /** Hostname as `Deno.serve` takes it (no brackets). */
  hostname: string;
  port: number;
}

/** Parses `HOST:PORT` (`[::1]:PORT` for IPv6); refuses a host that is not loopback. */
export function parseListenAddress(raw: string): ListenAddress {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(raw.trim());
  if (!m) throw new UsageError(`--http must be HOST:PORT (e.g. 127.0.0.1:8765), got '${raw}'`);
  const port = Number(m[2]);
  if (port > 65535) throw new UsageError(`--http: port must be 0..65535, got ${m[2]}`);
  const host = m[1].replace(/^\[|\]$/g, "");
  const refused = bindRefusal(host);
  if (refused) throw new UsageError(`--http: ${refused}`);
  return { hostname: host, port };
}

/** Reads a bearer token from a file (trimmed; must not be empty). */
export function readTokenFile(path: string): string {
  let raw: string;
  try {
    raw = Deno.readTextFileSync(path);
  } catch (e) {
    throw new AgentBlockError(`--token-file: cannot read ${path}: ${(e as Error).message}`);
  }
  const token = raw.trim();
  if (!token) throw new AgentBlockError(`--token-file: ${path} is empty`);
  if (/\s/.test(token)) throw new AgentBlockError(`--token-file: ${path} must hold one token without spaces`);
  return token;
}

function jsonError(status: number, message: string, headers: Record<string, string> = {}): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, {
    status,
    headers,
  });
}

/** A guard refusal as the JSON-RPC error response MCP clients expect. */
function refusalResponse(r: Refusal): Response {
  return jsonError(r.status, r.message, r.headers);
}

/**
 * The header checks in front of the MCP layer (Host, Origin, token, declared body length); a
 * Response means "refused". `serveHttp` runs the whole guard (`admit`), chunked bodies included.
 */
export function refusal(req: Request, allowed: string[], token: string | undefined): Response | undefined {
  const r = headerRefusal(req, { allowedHosts: allowed, token, maxBodyBytes: MAX_BODY_BYTES });
  return r && refusalResponse(r);
}

/** A running HTTP server. */
export interface HttpServing {
  /** `http://HOST:PORT/mcp`. */
  url: string;
  /** Resolves once the server has stopped. */
  finished: Promise<void>;
  /** Stops accepting, closes every session. */
  shutdown(): Promise<void>;
}

/** Serves the MCP surface from `factory` on `addr`. */
export function serveHttp(
  factory: () => Server,
  addr: ListenAddress,
  opts: {
    token?: string;
    log: Logger;
    watcher?: RegistryWatcher;
    /** Idle time after which a 2025-era session is closed, ms (default `DEFAULT_SESSION_IDLE_SECS`). */
    sessionIdleMs?: number;
    /**
     * The files a resource's content comes from (`resourcePaths`; `--expose blocks`): with it, the
     * resources a 2026-07-28 `subscriptions/listen` stream subscribes to are watched while it is
     * open, and their changes sent to it (`SharedSubscriptions`).
     */
    resourcePaths?: (uri: string) => string[] | undefined;
  },
): HttpServing {
  // Defence in depth: the address was checked when it was parsed; a caller may have built its own.
  const badBind = bindRefusal(addr.hostname);
  if (badBind) throw new AgentBlockError(`--http: ${badBind}`);
  const policy: GuardPolicy = {
    allowedHosts: allowedHostnames(addr.hostname),
    token: opts.token,
    maxBodyBytes: MAX_BODY_BYTES,
  };
  const modern = createMcpHandler(factory, { legacy: "reject", onerror: (e) => opts.log.warn(e.message) });
  const idleMs = opts.sessionIdleMs ?? DEFAULT_SESSION_IDLE_SECS * 1000;
  const sessions = new SessionTable<{ transport: WebStandardStreamableHTTPServerTransport; server: Server }>({
    max: MAX_LEGACY_SESSIONS,
    idleMs,
    close: (s, id, why) => {
      opts.log.info(`http: closed 2025-era session ${id}: ${why}`);
      void s.server.close().catch(() => undefined);
    },
  });
  const listened = opts.resourcePaths
    ? new SharedSubscriptions({
      pathsOf: opts.resourcePaths,
      notify: (uri) => Promise.resolve(modern.notify.resourceUpdated(uri)),
      log: opts.log,
    })
    : undefined;
  opts.watcher?.alsoNotify(() => {
    modern.notify.toolsChanged();
    modern.notify.resourcesChanged();
    modern.notify.promptsChanged();
  });

  async function legacy(req: Request): Promise<Response> {
    const sid = req.headers.get("mcp-session-id");
    if (sid) {
      const s = sessions.get(sid);
      if (!s) return jsonError(404, `Session not found: ${sid}`);
      const done = sessions.begin(sid, req.method === "GET" ? "stream" : "call");
      try {
        return track(await s.transport.handleRequest(req), done);
      } catch (e) {
        done();
        throw e;
      }
    }
    if (req.method !== "POST") return jsonError(400, "Bad Request: no session (send initialize first)");
    if (!sessions.makeRoom()) {
      opts.log.warn(`http: refused a new 2025-era session: all ${sessions.size} have a call in flight`);
      return jsonError(
        503,
        `Too many sessions with a call in flight (${MAX_LEGACY_SESSIONS}); try again when one has finished`,
      );
    }
    const server = factory();
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        sessions.add(id, { transport, server });
        opts.watcher?.track(server);
      },
      onsessionclosed: (id) => {
        sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    const res = await transport.handleRequest(req);
    if (!transport.sessionId) await server.close().catch(() => undefined);
    return res;
  }

  let httpServer: Deno.HttpServer<Deno.NetAddr>;
  try {
    httpServer = Deno.serve({
      hostname: addr.hostname,
      port: addr.port,
      // Deno's default announcement goes to stdout, which is not ours to use.
      onListen: () => {},
      onError: (e) => {
        opts.log.error(`http: ${(e as Error)?.message ?? e}`);
        return jsonError(500, "Internal error");
      },
    }, async (raw) => {
      const admitted = await admit(raw, policy);
      if ("refusal" in admitted) {
        opts.log.warn(
          `http: refused ${raw.method} (Host ${raw.headers.get("host")}, Origin ${
            raw.headers.get("origin") ?? "-"
          }): ${admitted.refusal.status} ${admitted.refusal.message}`,
        );
        return refusalResponse(admitted.refusal);
      }
      const req = admitted.request;
      if (new URL(req.url).pathname !== "/mcp") return jsonError(404, "Not found: the endpoint is /mcp");
      if (await isLegacyRequest(req)) return await legacy(req);
      // A listen stream's resource subscriptions are watched while it is open.
      const uris = listened ? await listenedResources(req) : undefined;
      if (!listened || !uris?.length) return await modern.fetch(req);
      const release = listened.hold(uris);
      req.signal.addEventListener("abort", release, { once: true });
      try {
        return track(await modern.fetch(req), release);
      } catch (e) {
        release();
        throw e;
      }
    });
  } catch (e) {
    throw new AgentBlockError(
      `--http: cannot listen on ${addr.hostname}:${addr.port}: ${(e as Error).message}`,
    );
  }
  const sweeper = setInterval(() => sessions.sweep(), Math.min(Math.max(idleMs / 4, 50), 60_000));
  const a = httpServer.addr;
  const host = a.hostname.includes(":") ? `[${a.hostname}]` : a.hostname;
  const server = httpServer;
  return {
    url: `http://${host}:${a.port}/mcp`,
    finished: server.finished,
    shutdown: async () => {
      clearInterval(sweeper);
      listened?.close();
      for (const s of sessions.values()) await s.server.close().catch(() => undefined);
      sessions.clear();
      await modern.close().catch(() => undefined);
      await server.shutdown();
    },
  };
}
