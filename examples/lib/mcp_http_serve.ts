/**
 * Serves an MCP server factory over HTTP on 127.0.0.1 for BOTH protocol eras ("hybrid" wiring):
 * 2026-07-28 requests go to `createMcpHandler(factory, { legacy: "reject" })`, and 2025-era
 * requests (no `_meta` envelope claim) get a sessionful `WebStandardStreamableHTTPServerTransport`
 * per `initialize`, so 2025 clients still receive server→client requests (sampling, elicitation,
 * roots) and unsolicited notifications on their GET stream. The default stateless legacy mode of
 * `createMcpHandler` cannot do that (see shared/reference/mcp-sdk.md §3.1).
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

/** Starts the server; resolves once it listens. `port` 0 picks a free port. */
export function serveHybrid(
  factory: (era: "modern" | "legacy") => McpServer,
  port: number,
  onModernRequest?: (body: unknown) => void,
): Promise<HybridServer> {
  const modern = createMcpHandler(() => factory("modern"), { legacy: "reject" });
  const transports = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const legacySessions = new Map<string, McpServer>();

  const handle = async (req: Request): Promise<Response> => {
    const rejected = hostHeaderValidationResponse(req, localhostAllowedHostnames()) ??
      originValidationResponse(req, localhostAllowedOrigins());
    if (rejected) return rejected;
    if (new URL(req.url).pathname !== "/mcp") return new Response("not found", { status: 404 });
    if (!(await isLegacyRequest(req.clone()))) {
      if (onModernRequest && req.method === "POST") {
        onModernRequest(await req.clone().json().catch(() => undefined));
      }
      return modern.fetch(req);
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
