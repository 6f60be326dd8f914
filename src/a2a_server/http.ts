/**
 * `agent-block a2a serve`'s HTTP front: the agent card and both A2A 1.0 bindings over `Deno.serve`,
 * behind the same guard as `serve` and `mcp --http` (`src/net/guard.ts`).
 *
 * Owns the routes and their wire forms:
 * - `GET /.well-known/agent-card.json`: the card, rebuilt on each request so blocks that come and
 *   go are the skills of the moment;
 * - `POST /a2a/jsonrpc`: JSON-RPC, handed to the SDK's framework-free `JsonRpcTransportHandler`;
 *   a streaming method answers `text/event-stream`, one JSON-RPC response per event;
 * - `/a2a/rest/...`: HTTP+JSON — `POST message:send`, `POST message:stream`, `GET tasks/{id}`,
 *   `POST tasks/{id}:cancel`, `GET|POST tasks/{id}:subscribe` — each calling the SDK's
 *   `DefaultRequestHandler` with the SDK's JSON codecs. The SDK's own REST adapter is an Express
 *   router (`@a2a-js/sdk/server/express`); we serve with `Deno.serve`, so these five routes are
 *   ours, errors in the spec's `{ error: { code, status, message, details } }` form.
 *
 * Tasks live in memory for the server's life, the newest finished ones bounded
 * (`task_store.ts`).
 *
 * Invariants: every request passes the guard before any route (loopback bind unless the caller
 * opts out, Host and Origin checks, bearer token, body limit); a refused request never reaches
 * the SDK and never starts a run. The card is public to whoever passes the guard: with a token,
 * the card too needs it (a loopback server has no anonymous audience to advertise to).
 */
import {
  A2A_VERSION_HEADER,
  Extensions,
  formatSSEErrorEvent,
  formatSSEEvent,
  HTTP_EXTENSION_HEADER,
  SendMessageRequest,
  SendMessageResponse,
  SSE_HEADERS,
  StreamResponse,
  Task,
} from "@a2a-js/sdk";
import {
  DefaultRequestHandler,
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  type ServerCallContext,
  UnauthenticatedUser,
  validateVersion,
} from "@a2a-js/sdk/server";
import { admit, allowedHostnames, type GuardPolicy, type Refusal } from "../net/guard.ts";
import type { Logger } from "../obs/log.ts";
import { agentCard, type AgentOptions, BlockExecutor } from "./agent.ts";
import { BoundedTaskStore } from "./task_store.ts";

/** Largest request body: a message carries the caller's prompt and context. 16 MiB. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** A running A2A server. */
export interface A2aServing {
  /** `http://HOST:PORT` */
  url: string;
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

/** Options of `serveA2a`. */
export interface ServeOptions extends AgentOptions {
  hostname: string;
  port: number;
  token?: string;
  log: Logger;
}

const enc = new TextEncoder();

function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** A refusal in the binding's error form. */
function refusalResponse(r: Refusal, jsonRpc: boolean): Response {
  const headers = { "content-type": "application/json", ...r.headers };
  const body = jsonRpc ? { jsonrpc: "2.0", id: null, error: { code: -32600, message: r.message } } : {
    error: {
      code: r.status,
      status: r.status === 401 ? "UNAUTHENTICATED" : "PERMISSION_DENIED",
      message: r.message,
    },
  };
  return new Response(JSON.stringify(body), { status: r.status, headers });
}

/** An SSE response over `events` (each already the JSON to send), `onError` wording a failure mid-stream. */
function sseResponse(
  first: unknown,
  rest: AsyncIterator<unknown>,
  onError: (e: unknown) => unknown,
  log: Logger,
): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(ctl) {
      try {
        ctl.enqueue(enc.encode(formatSSEEvent(first)));
        while (true) {
          const r = await rest.next();
          if (r.done) break;
          ctl.enqueue(enc.encode(formatSSEEvent(r.value)));
        }
      } catch (e) {
        log.warn(`a2a: stream failed: ${(e as Error)?.message ?? e}`);
        try {
          ctl.enqueue(enc.encode(formatSSEErrorEvent(onError(e))));
        } catch { /* the client is gone */ }
      }
      try {
        ctl.close();
      } catch { /* cancelled by the client */ }
    },
    async cancel() {
      await rest.return?.();
    },
  });
  return new Response(body, { headers: { ...SSE_HEADERS } });
}

const REST_STATUS: Record<string, [number, string]> = {
  TASK_NOT_FOUND: [404, "NOT_FOUND"],
  TASK_NOT_CANCELABLE: [409, "FAILED_PRECONDITION"],
  UNSUPPORTED_OPERATION: [400, "UNIMPLEMENTED"],
  INVALID_REQUEST: [400, "INVALID_ARGUMENT"],
  INVALID_PARAMS: [400, "INVALID_ARGUMENT"],
  CONTENT_TYPE_NOT_SUPPORTED: [415, "INVALID_ARGUMENT"],
  VERSION_NOT_SUPPORTED: [400, "INVALID_ARGUMENT"],
  PUSH_NOTIFICATION_NOT_SUPPORTED: [400, "UNIMPLEMENTED"],
};

/** An error as the HTTP+JSON binding words it. */
function restError(e: unknown): { status: number; body: unknown } {
  const err = e as { reason?: string; message?: string; toErrorInfo?: () => unknown };
  const reason = typeof err?.reason === "string" ? err.reason : "INTERNAL_ERROR";
  const [status, word] = REST_STATUS[reason] ?? [500, "INTERNAL"];
  const details = typeof err?.toErrorInfo === "function" ? [err.toErrorInfo()] : [];
  return {
    status,
    body: { error: { code: status, status: word, message: String(err?.message ?? e), details } },
  };
}

/** Starts the server (listening when this returns; `finished` settles when it has stopped). */
export function serveA2a(opts: ServeOptions): A2aServing {
  const policy: GuardPolicy = {
    allowedHosts: allowedHostnames(opts.hostname),
    token: opts.token,
    maxBodyBytes: MAX_BODY_BYTES,
  };
  let base = "";
  const card = agentCard(opts.blocks(), "http://127.0.0.1");
  const executor = new BlockExecutor(opts);
  const handler = new DefaultRequestHandler(card, new BoundedTaskStore(), executor);
  const jsonRpc = new JsonRpcTransportHandler(handler);
  const currentCard = () => {
    const fresh = agentCard(opts.blocks(), base);
    Object.assign(card, fresh);
    return fresh;
  };

  const contextOf = (req: Request, binding: "JSONRPC" | "HTTP+JSON"): ServerCallContext => {
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k] = v));
    const context = defaultServerCallContextBuilder({
      extensions: Extensions.parseServiceParameter(req.headers.get(HTTP_EXTENSION_HEADER) ?? undefined),
      user: new UnauthenticatedUser(),
      headers,
      requestedVersion: req.headers.get(A2A_VERSION_HEADER) ?? undefined,
    });
    validateVersion(context.requestedVersion, card, binding);
    return context;
  };

  const onJsonRpc = async (req: Request): Promise<Response> => {
    if (req.method !== "POST") return new Response("Method Not Allowed", { status: 405 });
    let body: unknown;
    try {
      body = await req.json();
    } catch (e) {
      return jsonResponse({
        jsonrpc: "2.0",
        id: null,
        error: { code: -32700, message: `Parse error: ${(e as Error).message}` },
      });
    }
    let context: ServerCallContext;
    try {
      context = contextOf(req, "JSONRPC");
    } catch (e) {
      return jsonResponse({
        jsonrpc: "2.0",
        id: (body as { id?: unknown })?.id ?? null,
        error: JsonRpcTransportHandler.mapToJSONRPCError(e),
      });
    }
    const out = await jsonRpc.handle(body as Record<string, unknown>, context);
    if (typeof (out as AsyncGenerator)?.[Symbol.asyncIterator] !== "function") return jsonResponse(out);
    const it = (out as AsyncGenerator<unknown>)[Symbol.asyncIterator]();
    const id = (body as { id?: unknown })?.id ?? null;
    const wordError = (e: unknown) => ({
      jsonrpc: "2.0",
      id,
      error: JsonRpcTransportHandler.mapToJSONRPCError(e),
    });
    let first: IteratorResult<unknown>;
    try {
      first = await it.next();
    } catch (e) {
      return jsonResponse(wordError(e));
    }
    if (first.done) return new Response(null, { status: 204 });
    return sseResponse(first.value, it, wordError, opts.log);
  };

  const restStream = async (stream: AsyncGenerator<unknown>): Promise<Response> => {
    const it = stream[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await it.next();
    } catch (e) {
      const r = restError(e);
      return jsonResponse(r.body, r.status);
    }
    const mapped: AsyncIterator<unknown> = {
      next: async () => {
        const r = await it.next();
        return r.done ? r : { done: false, value: StreamResponse.toJSON(r.value as StreamResponse) };
      },
      return: async () => (await it.return?.(undefined)) ?? { done: true, value: undefined },
    };
    if (first.done) return new Response(null, { status: 204 });
    return sseResponse(
      StreamResponse.toJSON(first.value as StreamResponse),
      mapped,
      (e) => restError(e).body,
      opts.log,
    );
  };

  const onRest = async (req: Request, path: string): Promise<Response> => {
    try {
      const context = contextOf(req, "HTTP+JSON");
      const readBody = async () => {
        const text = await req.text();
        try {
          return text === "" ? {} : JSON.parse(text);
        } catch (e) {
          throw Object.assign(new Error(`Invalid JSON payload: ${(e as Error).message}`), {
            reason: "INVALID_REQUEST",
          });
        }
      };
      const checkSend = (p: SendMessageRequest) => {
        if (!p.message?.messageId) {
          throw Object.assign(new Error("message.messageId is required"), { reason: "INVALID_REQUEST" });
        }
        return p;
      };
      if (req.method === "POST" && path === "message:send") {
        const r = await handler.sendMessage(
          checkSend(SendMessageRequest.fromJSON(await readBody())),
          context,
        );
        const payload = "messageId" in r
          ? { $case: "message" as const, value: r }
          : { $case: "task" as const, value: r };
        return jsonResponse(SendMessageResponse.toJSON({ payload }));
      }
      if (req.method === "POST" && path === "message:stream") {
        return await restStream(
          handler.sendMessageStream(checkSend(SendMessageRequest.fromJSON(await readBody())), context),
        );
      }
      const m = /^tasks\/([^/:]+)(?::(cancel|subscribe))?$/.exec(path);
      if (m) {
        const id = decodeURIComponent(m[1]);
        if (m[2] === undefined && req.method === "GET") {
          const hl = new URL(req.url).searchParams.get("historyLength");
          const historyLength = hl === null ? undefined : Number(hl);
          if (historyLength !== undefined && !(Number.isInteger(historyLength) && historyLength >= 0)) {
            throw Object.assign(new Error("historyLength must be a non-negative integer"), {
              reason: "INVALID_REQUEST",
            });
          }
          return jsonResponse(Task.toJSON(await handler.getTask({ tenant: "", id, historyLength }, context)));
        }
        if (m[2] === "cancel" && req.method === "POST") {
          return jsonResponse(
            Task.toJSON(await handler.cancelTask({ tenant: "", id, metadata: undefined }, context)),
          );
        }
        if (m[2] === "subscribe" && (req.method === "GET" || req.method === "POST")) {
          return await restStream(handler.resubscribe({ tenant: "", id }, context));
        }
      }
      return jsonResponse({
        error: { code: 404, status: "NOT_FOUND", message: `no route ${req.method} /${path}` },
      }, 404);
    } catch (e) {
      const r = restError(e);
      return jsonResponse(r.body, r.status);
    }
  };

  const server = Deno.serve({ hostname: opts.hostname, port: opts.port, onListen: () => {} }, async (raw) => {
    const path = new URL(raw.url).pathname;
    const isJsonRpc = path === "/a2a/jsonrpc";
    const admitted = await admit(raw, policy);
    if ("refusal" in admitted) {
      opts.log.info(
        `a2a: refused ${raw.method} ${path} (Host ${raw.headers.get("host")}, Origin ${
          raw.headers.get("origin") ?? "-"
        }): ${admitted.refusal.status} ${admitted.refusal.message}`,
      );
      return refusalResponse(admitted.refusal, isJsonRpc);
    }
    const req = admitted.request;
    try {
      if (path === "/.well-known/agent-card.json" && (req.method === "GET" || req.method === "HEAD")) {
        return jsonResponse(currentCard());
      }
      if (isJsonRpc) return await onJsonRpc(req);
      if (path.startsWith("/a2a/rest/")) return await onRest(req, path.slice("/a2a/rest/".length));
      return jsonResponse({ error: `no route ${req.method} ${path}` }, 404);
    } catch (e) {
      opts.log.error(`a2a: ${req.method} ${path}: ${(e as Error)?.stack ?? e}`);
      return jsonResponse({ error: "internal error" }, 500);
    }
  });
  const addr = server.addr as Deno.NetAddr;
  const host = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  base = `http://${host}:${addr.port}`;
  currentCard();
  return {
    url: base,
    finished: server.finished,
    shutdown: () => server.shutdown(),
  };
}
