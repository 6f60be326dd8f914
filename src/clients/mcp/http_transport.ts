/**
 * The HTTP transports of the MCP client: Streamable HTTP (default) and the legacy
 * HTTP+SSE transport (kind `"sse"`), both from the SDK.
 *
 * Owns: choosing the transport and forwarding the given headers on every request the transport
 * makes (POSTs, the GET event stream, session DELETE) through a fetch wrapper, which is the one
 * place both SDK transports take it.
 */
import {
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from "@modelcontextprotocol/client";

/** Which HTTP transport to use. */
export type HttpTransportKind = "http" | "sse";

/** Builds the transport for `url` with `headers` added to every request. */
export function httpTransport(url: URL, kind: HttpTransportKind, headers: Record<string, string>): Transport {
  const withHeaders = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const h = new Headers(init?.headers);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    return fetch(input, { ...init, headers: h });
  };
  return kind === "sse"
    ? new SSEClientTransport(url, { fetch: withHeaders })
    : new StreamableHTTPClientTransport(url, { fetch: withHeaders });
}
