/**
 * The HTTP transports of the MCP client: Streamable HTTP (default) and the legacy
 * HTTP+SSE transport (kind `"sse"`), both from the SDK.
 *
 * Owns:
 * - choosing the transport and forwarding the given headers on every request the transport
 *   makes (POSTs, the GET event stream, session DELETE) through a fetch wrapper, which is the one
 *   place both SDK transports take it; with OAuth (`opts.auth`), handing the SDK transport its
 *   provider, which adds the bearer token and runs the authorization flows through the same
 *   wrapper (`oauth/providers.ts`);
 * - the size of what a server sends: every response body the SDK reads is held to the
 *   connection's message limit while it streams (`limits.ts`), so an oversized result fails a
 *   chunk past the limit instead of being buffered whole; and every response body is closed
 *   when its request's signal aborts (the timeout, the caller giving up, the transport closing),
 *   so the connection closes and the server sees the request end, which Deno's fetch does not
 *   always do on its own once the headers came (`limits.ts` says why). In the 2026-07-28 era
 *   that closing is the cancellation; in the 2025 era `notifications/cancelled` follows as well;
 * - over Streamable HTTP, a request whose own event stream ends before its answer came — the
 *   server died or dropped the connection mid-call, or its answer was cut for its size — is
 *   failed at once with an error answer made up here (`LOST_ANSWER` in its `data`, which the
 *   connection reports as code `closed`), instead of waiting for the request's timeout: the SDK
 *   only reports such a stream to `onerror`. Over stdio a dead server already fails its requests
 *   when the pipe closes;
 * - over Streamable HTTP, the server's event stream (the GET a 2025-era server sends unsolicited
 *   messages on) is opened BEFORE `notifications/initialized` is posted, not after it as the SDK
 *   does: a server typically announces things the moment it is told the client is ready (its
 *   `tools/list_changed` after registering tools that depend on our capabilities, a `roots/list`)
 *   and drops what it has no stream for, so opened afterwards the stream missed them. The open
 *   waits for the stream's response headers (the server has the stream then), at most
 *   `EVENT_STREAM_WAIT_MS`; the GET the SDK then starts on its own would be a second stream (a
 *   2025 server refuses it, 409) and is answered here with a made-up 405, which the SDK takes as
 *   "no event stream" and leaves be. A server without one (405, or an error) is as before.
 *
 * How the two meet: each POST of a request carries an internal header naming its JSON-RPC id,
 * which the fetch wrapper takes off before sending, so a body cut for its size is traced to its
 * request and the made-up answer says why. The ids still waiting are known from the transport's
 * own inbound tap (answers remove them) and from outgoing cancellations.
 */
import {
  isInitializedNotification,
  type JSONRPCMessage,
  type OAuthClientProvider,
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
  type TransportSendOptions,
} from "@modelcontextprotocol/client";
import { tapInbound } from "./inbound_tap.ts";
import { boundedBody, type MessageTooLarge } from "./limits.ts";
import { LOST_ANSWER } from "./sdk_errors.ts";
import type { ConnectionAuth } from "./oauth/providers.ts";

/** Which HTTP transport to use. */
export type HttpTransportKind = "http" | "sse";

/** What an HTTP transport is held to. */
export interface HttpTransportOptions {
  /** The server's name, for messages. */
  server: string;
  /** Largest message accepted from the server, in bytes. */
  maxMessageBytes: number;
  /** How the connection authorizes itself (OAuth), when it does (`oauth/providers.ts`). */
  auth?: ConnectionAuth;
}

/** Internal header naming the request a POST carries; removed before the request leaves. */
const REQUEST_TAG = "x-agent-block-request";

type Id = string | number;

/** Longest `notifications/initialized` waits for the event stream to be open (see the header). */
const EVENT_STREAM_WAIT_MS = 5000;

/** Streamable HTTP that fails a request as soon as its stream ends without the answer. */
class WatchedStreamableHttp extends StreamableHTTPClientTransport {
  readonly #awaiting = new Set<Id>();
  readonly #cuts = new Map<string, MessageTooLarge>();
  /** The SDK's own event-stream GET is due and a duplicate (the stream was opened ahead of it). */
  #duplicateGetDue = false;

  constructor(url: URL, fetchFn: typeof fetch, authProvider?: OAuthClientProvider) {
    super(url, { fetch: fetchFn, authProvider });
    tapInbound(this, (m) => {
      if (!("method" in m) && "id" in m && m.id !== undefined) this.#awaiting.delete(m.id);
      return false;
    });
  }

  /** The body of request `tag` was cut for its size (the fetch wrapper's report). */
  noteCut(tag: string, e: MessageTooLarge): void {
    this.#cuts.set(tag, e);
  }

  /**
   * True, once, for the GET the SDK starts after `notifications/initialized` when the event
   * stream is already open (`headers` without `Last-Event-ID`: a reconnect carries one).
   */
  takeDuplicateGet(headers: Headers): boolean {
    if (!this.#duplicateGetDue || headers.has("last-event-id")) return false;
    this.#duplicateGetDue = false;
    return true;
  }

  override async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isInitializedNotification(message)) {
      await this.#openEventStream();
      this.#duplicateGetDue = true;
      return super.send(message, options).catch((e) => {
        this.#duplicateGetDue = false;
        throw e;
      });
    }
    return this.#send(message, options);
  }

  /**
   * Opens the server's event stream, as the SDK would after `notifications/initialized`:
   * `resumeStream` with no event id starts a fresh GET (the SDK adds `Last-Event-ID` only for a
   * non-empty id). Resolves once the server answered it, or after `EVENT_STREAM_WAIT_MS` (the GET
   * goes on); a failure has gone to `onerror`, and the connection goes on without a stream.
   */
  async #openEventStream(): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.resumeStream("").catch(() => undefined),
      new Promise<void>((r) => (timer = setTimeout(r, EVENT_STREAM_WAIT_MS))),
    ]);
    clearTimeout(timer);
  }

  #send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
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
    if (init?.method === "GET" && built.watched?.takeDuplicateGet(h)) {
      // The event stream is already open (see the header): "no stream here" keeps the SDK from a second.
      return new Response(null, { status: 405, statusText: "Method Not Allowed" });
    }
    const tag = h.get(REQUEST_TAG);
    h.delete(REQUEST_TAG);
    for (const [k, v] of Object.entries(headers)) h.set(k, v);
    const res = await fetch(input, { ...init, headers: h });
    // A redirect is the SDK's to look at (its URL and type), and its body is not read.
    if (res.status >= 300 && res.status < 400) return res;
    return boundedBody(res, opts.server, opts.maxMessageBytes, {
      onCut: tag !== null ? (e) => built.watched?.noteCut(tag, e) : undefined,
      // Deno's fetch may lose the abort of a request once its headers came (see `limits.ts`).
      signal: init?.signal,
    });
  };
  const authProvider = opts.auth?.provider;
  if (kind === "sse") {
    const sse = new SSEClientTransport(url, { fetch: send, authProvider });
    opts.auth?.install(sse);
    return sse;
  }
  built.watched = new WatchedStreamableHttp(url, send, authProvider);
  opts.auth?.install(built.watched);
  return built.watched;
}
