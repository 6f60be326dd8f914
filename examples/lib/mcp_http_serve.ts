/**
 * Serves an MCP server factory over HTTP on 127.0.0.1 for BOTH protocol eras ("hybrid" wiring):
 * 2026-07-28 requests go to `createMcpHandler(factory, { legacy: "reject" })`, and 2025-era
 * requests (no `_meta` envelope claim) get a sessionful `WebStandardStreamableHTTPServerTransport`
 * per `initialize`, so 2025 clients still receive server→client requests (sampling, elicitation,
 * roots) and unsolicited notifications on their GET stream. The default stateless legacy mode of
 * `createMcpHandler` cannot do that (see shared/reference/mcp-sdk.md §3.1).
 *
 * A 2026-07-28 client cancels a request by closing its HTTP exchange. A loaded server can get
 * to a request only after its client has already done so: the body is then gone (or the
 * request's signal already aborted), and the request is answered without being dispatched, so
 * nothing in the server ever runs for it. `onAbandoned` is told of such a request (with its
 * JSON-RPC message when it could still be read), so a server that records cancellations (the
 * echo server's `--cancel-log`) records this one too; the factory gets the modern request it
 * builds an instance for, so the server can tell a request its tools already started on.
 *
 * Invariants: binds loopback only; Host/Origin are validated before anything else (DNS
 * rebinding); anything but `/mcp` is 404. Used by the example servers only.
 */
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  type McpHttpHandler,
  type McpServer,
  originValidationResponse,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";

/** What `serveHybrid` returns. */
export interface HybridServer {
  /** The modern handler (its `notify` feeds `subscriptions/listen` streams). */
  modern: McpHttpHandler;
  /** The live 2025-era server instances, by session id. */
  legacySessions: Map<string, McpServer>;
  port: number;
  shutdown(): Promise<void>;
}

/**
 * A modern request whose client closed it before it was dispatched (see the module doc);
 * `message` is its JSON-RPC message, `undefined` when the body could no longer be read.
 */
export type OnAbandoned = (request: Request, message: unknown) => void;

/**
 * Starts the server; resolves once it listens. `port` 0 picks a free port. `factory` gets, for a
 * modern instance, the HTTP request the instance serves.
 */
export function serveHybrid(
  factory: (era: "modern" | "legacy", request?: Request) => McpServer,
  port: number,
  onModernRequest?: (body: unknown) => void,
  onAbandoned?: OnAbandoned,
): Promise<HybridServer> {
  const modern = createMcpHandler((ctx) => factory("modern", ctx.requestInfo), { legacy: "reject" });
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const legacySessions = new Map<string, McpServer>();

  const handle = async (req: Request): Promise<Response> => {
    const rejected = hostHeaderValidationResponse(req, localhostAllowedHostnames()) ??
      originValidationResponse(req, localhostAllowedOrigins());
    if (rejected) return rejected;
    if (new URL(req.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    // Read first: a body that is gone means the client closed the exchange before we got to it.
    const raw = req.method === "POST" ? await req.clone().text().catch(() => undefined) : "";
    const message = raw ? parseJson(raw) : undefined;
    if (raw === undefined || (req.method === "POST" && req.signal.aborted)) {
      // `Mcp-Method` is a 2026-07-28 header: only there is a closed exchange a cancellation.
      if (req.headers.has("mcp-method")) onAbandoned?.(req, message);
      return new Response(null, { status: 499 });
    }
    if (!(await isLegacyRequest(req.clone()))) {
      if (onModernRequest && req.method === "POST") onModernRequest(message);
      const res = await modern.fetch(req);
      // 499: the SDK found the client gone when it dispatched (or before the answer began).
      if (res.status === 499 && req.method === "POST") onAbandoned?.(req, message);
      return res;
    }
    const sid = req.headers.get("mcp-session-id");
    if (sid) {
      const t = transports.get(sid);
      if (!t) return new Response("unknown session", { status: 404 });
      return t.handleRequest(req);
    }
    const server = factory("legacy");
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        transports.set(id, transport);
        legacySessions.set(id, server);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) {
        transports.delete(transport.sessionId);
        legacySessions.delete(transport.sessionId);
      }
    };
    await server.connect(transport);
    return transport.handleRequest(req);
  };

  return new Promise((resolve) => {
    const srv = Deno.serve({
      hostname: "127.0.0.1",
      port,
      onListen: (addr) => {
        resolve({
          modern,
          legacySessions,
          port: addr.port,
          shutdown: async () => {
            await modern.close().catch(() => undefined);
            for (const t of transports.values()) await t.close().catch(() => undefined);
            await srv.shutdown();
          },
        });
      },
    }, handle);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
