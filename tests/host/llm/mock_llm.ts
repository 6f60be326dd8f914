/**
 * A local stand-in for the Anthropic Messages and OpenAI chat-completions APIs, for tests.
 *
 * One `Deno.serve` on 127.0.0.1 (ephemeral port) answers `POST /v1/messages` and
 * `POST /v1/chat/completions` from a queue of scripted replies, records every request (path,
 * headers, parsed body) and can answer with JSON, a real SSE stream, an error with `type`, a
 * `Retry-After`, malformed JSON, a stream cut in the middle (its body short of the `Content-Length`
 * announced: erroring the stream would make `Deno.serve` print the error and its stack on every
 * run), silence until the client gives up (or the mock is reset or closed), or a body that never
 * ends (`forever`: a first part, then one piece after another as fast as the client reads, or
 * every `everyMs`, counting the bytes produced until the client hangs up).
 * The reply builders produce the wire shapes of the official APIs; `sdk_accepts_test` checks
 * that the official SDKs parse them.
 */

/** One request the mock saw. */
export interface Captured {
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown>;
  raw: string;
}

/** A scripted reply. */
export type Reply =
  | {
    kind: "json";
    status?: number;
    body: unknown;
    headers?: Record<string, string>;
    /** Awaited before answering (a test looking at the client's state mid-request). */
    before?: (c: Captured) => Promise<void> | void;
  }
  | { kind: "raw"; status?: number; text: string; contentType?: string }
  | { kind: "sse"; events: string[]; cut?: "close" | "error" }
  | { kind: "hang" }
  | {
    kind: "forever";
    status?: number;
    /** Default `text/event-stream`. */
    contentType?: string;
    /** Sent first (e.g. a `message_start` event). */
    head?: string;
    /** Sent again and again. */
    piece: string;
    /** Pause between pieces, ms (default: none, only the client's reading paces it). */
    everyMs?: number;
    /** Filled in while it streams. */
    stats?: StreamStats;
  };

/** What a `forever` reply produced: bytes, and whether the client hung up. */
export interface StreamStats {
  bytes: number;
  cancelled: boolean;
}

/** The mock server. */
export class MockLlm {
  readonly requests: Captured[] = [];
  #queue: Reply[] = [];
  #hanging: (() => void)[] = [];
  #server: Deno.HttpServer<Deno.NetAddr>;
  readonly url: string;

  constructor() {
    this.#server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => this.#handle(req),
    );
    this.url = `http://127.0.0.1:${this.#server.addr.port}`;
  }

  /** Queues replies, answered in order. */
  push(...replies: Reply[]): this {
    this.#queue.push(...replies);
    return this;
  }

  /** Drops queued replies and recorded requests. */
  reset(): void {
    this.#release();
    this.#queue = [];
    this.requests.length = 0;
  }

  get pending(): number {
    return this.#queue.length;
  }

  async close(): Promise<void> {
    this.#release();
    await this.#server.shutdown();
  }

  #release(): void {
    for (const r of this.#hanging.splice(0)) r();
  }

  async #handle(req: Request): Promise<Response> {
    const raw = await req.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(raw);
    } catch { /* recorded raw */ }
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k] = v));
    this.requests.push({ path: new URL(req.url).pathname, headers, body, raw });
    const r = this.#queue.shift();
    if (!r) {
      return Response.json({
        type: "error",
        error: { type: "api_error", message: "mock: no scripted reply" },
      }, { status: 418 });
    }
    switch (r.kind) {
      case "json":
        await r.before?.(this.requests[this.requests.length - 1]);
        return Response.json(r.body, { status: r.status ?? 200, headers: r.headers });
      case "raw":
        return new Response(r.text, {
          status: r.status ?? 200,
          headers: { "content-type": r.contentType ?? "application/json" },
        });
      case "hang":
        // Released when the client goes away, or by `reset` / `close`: Deno 2.9's server does
        // not notice a client that abandons a request with a larger body (~1 KB, an agent's
        // first request; seen in CLOSE-WAIT), and `close` would wait for it forever.
        await new Promise<void>((resolve) => {
          this.#hanging.push(resolve);
          req.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        return new Response(null, { status: 204 });
      case "forever": {
        const enc = new TextEncoder();
        const head = enc.encode(r.head ?? "");
        const piece = enc.encode(r.piece);
        const stats = r.stats ?? { bytes: 0, cancelled: false };
        let first = true;
        const stream = new ReadableStream<Uint8Array>({
          async pull(c) {
            if (!first && r.everyMs) await new Promise((res) => setTimeout(res, r.everyMs));
            const p = first && head.length ? head : piece;
            first = false;
            stats.bytes += p.length;
            c.enqueue(p);
          },
          cancel() {
            stats.cancelled = true;
          },
        }, { highWaterMark: 0 });
        return new Response(stream, {
          status: r.status ?? 200,
          headers: { "content-type": r.contentType ?? "text/event-stream" },
        });
      }
      case "sse": {
        const body = new TextEncoder().encode(r.events.join(""));
        const stream = new ReadableStream<Uint8Array>({
          start(c) {
            c.enqueue(body);
            c.close();
          },
        });
        const headers: Record<string, string> = {
          "content-type": "text/event-stream",
          "cache-control": "no-cache",
        };
        // A cut: the body ends short of the length announced, so the server drops the connection
        // and the client's read fails as on a dropped network. (Erroring the stream instead cuts
        // it too, but Deno.serve then prints the error with its stack on every run.)
        if (r.cut === "error") headers["content-length"] = String(body.length + 1024);
        return new Response(stream, { headers });
      }
    }
  }
}

// --- Anthropic wire shapes -----------------------------------------------------------------------

type Block = Record<string, unknown>;

/** A Messages API response. */
export function anthropicMessage(
  content: Block[],
  stop_reason = "end_turn",
  usage: Record<string, number> = {},
) {
  return {
    id: "msg_mock_1",
    type: "message",
    role: "assistant",
    model: "claude-haiku-4-5-20251001",
    content,
    stop_reason,
    stop_sequence: null,
    usage: {
      input_tokens: 10,
      output_tokens: 5,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      ...usage,
    },
  };
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The event stream that delivers `message` (tool input split in two fragments); its
 * `context_management`, when it has one, comes in `message_delta` as the API sends it.
 */
export function anthropicStream(
  message: ReturnType<typeof anthropicMessage> & { context_management?: unknown },
): string[] {
  const out: string[] = [];
  out.push(sse("message_start", {
    type: "message_start",
    message: { ...message, content: [], stop_reason: null, usage: { ...message.usage, output_tokens: 1 } },
  }));
  message.content.forEach((b, index) => {
    if (b.type === "text") {
      out.push(
        sse("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "" },
        }),
      );
      const t = String(b.text);
      const half = Math.ceil(t.length / 2);
      for (const part of [t.slice(0, half), t.slice(half)]) {
        out.push(
          sse("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "text_delta", text: part },
          }),
        );
      }
      out.push(": keep-alive comment\n\n");
      out.push(sse("ping", { type: "ping" }));
    } else if (b.type === "thinking") {
      out.push(sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "thinking", thinking: "", signature: "" },
      }));
      out.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "thinking_delta", thinking: b.thinking },
        }),
      );
      out.push(
        sse("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: b.signature },
        }),
      );
    } else if (b.type === "tool_use") {
      out.push(sse("content_block_start", {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
      }));
      const json = JSON.stringify(b.input);
      const half = Math.ceil(json.length / 2);
      for (const part of [json.slice(0, half), json.slice(half)]) {
        out.push(
          sse("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json: part },
          }),
        );
      }
    }
    out.push(sse("content_block_stop", { type: "content_block_stop", index }));
  });
  out.push(sse("message_delta", {
    type: "message_delta",
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
    ...(message.context_management === undefined ? {} : { context_management: message.context_management }),
  }));
  out.push(sse("message_stop", { type: "message_stop" }));
  return out;
}

/** An Anthropic error body. */
export function anthropicError(type: string, message: string) {
  return { type: "error", error: { type, message } };
}

// --- OpenAI wire shapes --------------------------------------------------------------------------

/** A chat completion. */
export function openaiCompletion(
  message: Record<string, unknown>,
  finish_reason = "stop",
  usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
) {
  return {
    id: "chatcmpl-mock",
    object: "chat.completion",
    created: 1764460800,
    model: "gpt-4o-mini",
    choices: [{
      index: 0,
      message: { role: "assistant", content: null, refusal: null, ...message },
      finish_reason,
      logprobs: null,
    }],
    usage,
  };
}

/** A tool call in a completion message. */
export function openaiToolCall(id: string, name: string, args: unknown) {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
}

/** The chunk stream of a completion: reasoning, text in two parts, tool-call argument fragments, usage, [DONE]. */
export function openaiStream(c: ReturnType<typeof openaiCompletion>): string[] {
  const head = { id: c.id, object: "chat.completion.chunk", created: c.created, model: c.model };
  const chunk = (delta: unknown, finish_reason: string | null = null) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason, logprobs: null }] })}\n\n`;
  const m = c.choices[0].message as Record<string, unknown>;
  const out = [chunk({ role: "assistant", content: "" })];
  if (typeof m.reasoning_content === "string") out.push(chunk({ reasoning_content: m.reasoning_content }));
  if (typeof m.content === "string") {
    const t = m.content;
    const half = Math.ceil(t.length / 2);
    out.push(chunk({ content: t.slice(0, half) }), chunk({ content: t.slice(half) }));
  }
  const calls =
    (m.tool_calls as { id: string; function: { name: string; arguments: string } }[] | undefined) ?? [];
  calls.forEach((tc, index) => {
    out.push(
      chunk({
        tool_calls: [{
          index,
          id: tc.id,
          type: "function",
          function: { name: tc.function.name, arguments: "" },
        }],
      }),
    );
    const a = tc.function.arguments;
    const half = Math.ceil(a.length / 2);
    for (const part of [a.slice(0, half), a.slice(half)]) {
      out.push(chunk({ tool_calls: [{ index, function: { arguments: part } }] }));
    }
  });
  out.push(chunk({}, c.choices[0].finish_reason));
  out.push(`data: ${JSON.stringify({ ...head, choices: [], usage: c.usage })}\n\n`);
  out.push("data: [DONE]\n\n");
  return out;
}
