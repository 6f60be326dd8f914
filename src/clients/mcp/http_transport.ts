/**
 * The HTTP transports of the MCP client: Streamable HTTP (default) and the legacy
 * HTTP+SSE transport (kind `"sse"`), both from the SDK.
 *
 * Owns:
 * - choosing the transport and forwarding the given headers on every request the transport
 *   makes (POSTs, the GET event stream, session DELETE) through a fetch wrapper, which is the one
 *   place both SDK transports take it;
 * - the size of what a server sends: every response body the SDK reads is held to the
 *   connection's message limit while it streams (`limits.ts`), so an oversized result fails a
 *   chunk past the limit instead of being buffered whole;
 * - over Streamable HTTP, a request whose own event stream ends before its answer came — the
 *   server died or dropped the connection mid-call, or its answer was cut for its size — is
 *   failed at once with an error answer made up here (`LOST_ANSWER` in its `data`, which the
 *   connection reports as code `closed`), instead of waiting for the request's timeout: the SDK
 *   only reports such a stream to `onerror`. Over stdio a dead server already fails its requests
 *   when the pipe closes.
 *
 * How the two meet: each POST of a request carries an internal header naming its JSON-RPC id,
 * which the fetch wrapper takes off before sending, so a body cut for its size is traced to its
 * request and the made-up answer says why. The ids still waiting are known from the transport's
 * own inbound tap (answers remove them) and from outgoing cancellations.
 */
import {
  type JSONRPCMessage,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/client";
import { tapInbound } from "./inbound_tap.ts";
import { boundedBody, type MessageTooLarge } from "./limits.ts";
import { LOST_ANSWER } from "./sdk_errors.ts";

/** Which HTTP transport to use. */
export type HttpTransportKind = "http" | "sse";

/** What an HTTP transport is held to. */
export interface HttpTransportOptions {
  /** The server's name, for messages. */
  server: string;
  /** Largest message accepted from the server, in bytes. */
  maxMessageBytes: number;
}

/** Internal header naming the request a POST carries; removed before the request leaves. */
const REQUEST_TAG = "x-agent-block-request";

type Id = string | number;

/** Streamable HTTP that fails a request as soon as its stream ends without the answer. */
class WatchedStreamableHttp extends StreamableHTTPClientTransport {
  readonly #awaiting = new Set<Id>();
  readonly #cuts = new Map<string, MessageTooLarge>();

  constructor(url: URL, fetchFn: typeof fetch) {
    super(url, { fetch: fetchFn });
    tapInbound(this, (m) => {
      if (!("method" in m) && "id" in m && m.id !== undefined) this.#awaiting.delete(m.id);
      return false;
    });
  }

  /** The body of request `tag` was cut for its size (the fetch wrapper's report). */
  noteCut(tag: string, e: MessageTooLarge): void {
    this.#cuts.set(tag, e);
  }

  override send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if ("method" in message && message.method === "notifications/cancelled") {
      const id = (message.params as { requestId?: Id } | undefined)?.requestId;
      if (id !== undefined) this.#awaiting.delete(id);
    }
    if (!("method" in message) || !("id" in message) || message.id === undefined) {
      return super.send(message, options);
    }
    const id = message.id;
    this.#awaiting.add(id);
    const outer = options?.onRequestStreamEnd;
    return super.send(message, {
      ...options,
      headers: { ...options?.headers, [REQUEST_TAG]: String(id) },
      onRequestStreamEnd: () => {
        outer?.();
        this.#streamEnded(id);
      },
    }).catch((e) => {
      this.#awaiting.delete(id);
      this.#cuts.delete(String(id));
      throw e;
    });
  }

  #streamEnded(id: Id): void {
    const cut = this.#cuts.get(String(id));
    this.#cuts.delete(String(id));
    if (!this.#awaiting.delete(id)) return;
    const why = cut?.message ??
      "the connection dropped before the server answered (its response stream ended)";
    this.onmessage?.({
      jsonrpc: "2.0",
      id,
      error: { code: -32000, message: why, data: { [LOST_ANSWER]: true } },
    });
  }
}

/** Builds the transport for `url` with `headers` added to every request. */
export function httpTransport(
  url: URL,
  kind: HttpTransportKind,
  headers: Record<string, string>,
  opts: HttpTransportOptions,
): Transport {
  // The Streamable HTTP transport, once built (the fetch wrapper reports cuts to it).
  const built: { watched?: WatchedStreamableHttp } = {};
  const send = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const h = new Headers(init?.headers);
    const tag = h.get(REQUEST_TAG);
    h.delete(REQUEST_TAG);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    const res = await fetch(input, { ...init, headers: h });
    // A redirect is the SDK's to look at (its URL and type), and its body is not read.
    if (res.status >= 300 && res.status < 400) return res;
    return boundedBody(
      res,
      opts.server,
      opts.maxMessageBytes,
      tag !== null ? (e) => built.watched?.noteCut(tag, e) : undefined,
    );
  };
  if (kind === "sse") return new SSEClientTransport(url, { fetch: send });
  built.watched = new WatchedStreamableHttp(url, send);
  return built.watched;
}
