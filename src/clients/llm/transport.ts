/**
 * The LLM HTTP transport: one model request = one POST, retried on transient failures, streamed
 * or not, with one `ab.obs` `http_request` and one `http_response` line per attempt — at `debug`
 * (`AGENT_BLOCK_LOG=debug`), so a run that goes well stays quiet; a failed attempt's at `warn`.
 *
 * Owns: the timeout (one deadline per attempt for the whole exchange, from sending the request
 * to the last byte of the answer, streamed or not: a server that keeps streaming forever is cut
 * off at it), the size of an answer (`max_response_bytes`: a body or a stream past it fails a
 * chunk past the limit, before it is buffered, `body.ts`), `max_retries` for 429 / 529 /
 * 5xx / connection failures with exponential backoff that honours `Retry-After` (seconds or an
 * HTTP date) and `retry-after-ms`, error bodies turned into `LlmError`s naming the provider, the
 * status and the server's error type, the stream loop (SSE → accumulator → `onDelta`), and the
 * body's bytes (`buildPayload`: the request's small fields stringified, the messages and tools
 * copied in as the UTF-8 bytes they were encoded to once; for the global fetch, in buffers reused
 * from request to request: see `STREAM_BODY_BYTES` for how a large body is handed over).
 *
 * A Lua-free client: the caller resolves the endpoint and credentials (`endpoint.ts`) and hands
 * over everything else a request needs — timeout, retries, the correlation ids of the obs lines,
 * where those lines go — so nothing here reads an environment. Failures are `LlmError`s.
 *
 * Invariants: no key, header value or request body is ever logged, and the key this request sends
 * is masked in every error message, a server's error body included; a stream that delivered any
 * increment is never retried (the caller already saw part of it); a response that is not a
 * complete answer (invalid JSON, truncated stream) is an error, never a partial result.
 */
import { type Correlation, obsLine, sanitizeUrl } from "../../obs/ab_obs.ts";
import { Secrets } from "../../obs/secrets.ts";
import { parseJson, stringifyJson } from "../../json/codec.ts";
import { AnthropicStream } from "./anthropic_stream.ts";
import { LlmError, type WireProvider } from "./errors.ts";
import { OpenAIStream } from "./openai_stream.ts";
import { readSse } from "./sse.ts";
import { type Deadline, Deadlines } from "./deadlines.ts";
import { DEFAULT_MAX_RESPONSE_BYTES, readBody, readHead, ResponseTooLarge } from "./body.ts";
import type { StreamAccumulator, StreamDelta } from "./stream_types.ts";

export type { WireProvider };

/** One model request, fully resolved (URL, auth headers, body). */
export interface LlmHttpRequest {
  provider: WireProvider;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /**
   * The messages as UTF-8 JSON, one chunk each, encoded once when the message joined the
   * conversation: copied into the body as its `messages` array (see `buildPayload`).
   */
  rawMessages?: readonly Uint8Array[];
  /** The `tools` array as UTF-8 JSON, copied in likewise. */
  rawTools?: Uint8Array;
  /** Seconds one attempt may take, the whole answer included; see the module doc. */
  timeoutSecs: number;
  /** Largest answer accepted, in bytes (the JSON body, or the whole event stream); default 64 MiB. */
  maxResponseBytes?: number;
  maxRetries: number;
  stream: boolean;
  /** Receives stream increments in order; a rejection aborts the request. */
  onDelta?: (d: StreamDelta) => Promise<void>;
  signal?: AbortSignal;
  /** The run's request timeouts (one timer for all); a clock of its own when absent. */
  deadlines?: Deadlines;
  /** The correlation ids of the obs lines, asked for only when a line is written. */
  correlation: () => Correlation;
  /** Where obs lines go (stderr through the run's logger); `line` is only called when the level is on. */
  obs: (level: "debug" | "warn", line: () => string) => void;
  /** The `fetch` to send with (an embedder's router or recorder); default the global one. */
  fetch?: typeof fetch;
}

/** A successful exchange. */
export interface LlmHttpResult {
  body: Record<string, unknown>;
  status: number;
  attempts: number;
  latencyMs: number;
}

/** Longest `Retry-After` honoured; a longer one is capped to this. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * What a failed `fetch` says about why: its cause's last clause (`tcp connect error: Connection
 * refused (os error 111)`, `dns error: ...`) rather than the bare "fetch failed".
 */
function connectFailure(e: unknown): string {
  const top = (e as Error)?.message ?? String(e);
  const cause = (e as Error)?.cause;
  if (!(cause instanceof Error) || !cause.message) return top;
  const at = cause.message.lastIndexOf("): ");
  return at >= 0 ? cause.message.slice(at + 3) : cause.message;
}

/** Sends `req`, retrying transient failures; resolves with the response body. */
export async function sendLlmRequest(req: LlmHttpRequest): Promise<LlmHttpResult> {
  // For the global fetch a body is built again per attempt, just before the send, in a buffer
  // reused from request to request (`bodyFor`), so a long conversation leaves no body-sized
  // garbage per turn of its own. Another fetch may keep what it is given: it gets a buffer of
  // its own, as bytes.
  const own = req.fetch === undefined ? undefined : buildPayload(req);
  let attempt = 0;
  while (true) {
    attempt++;
    const started = performance.now();
    let lease: Uint8Array<ArrayBuffer> | undefined;
    try {
      let body: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array> | undefined = own;
      if (body === undefined) {
        const bytes = buildPayload(req, (size) => {
          if (size < STREAM_BODY_BYTES) return reused(size);
          lease = leaseBuffer(size);
          return lease.subarray(0, size);
        });
        body = lease === undefined ? bytes : oneChunk(bytes);
      }
      const r = await attemptOnce(req, body, attempt, started);
      return { ...r, attempts: attempt };
    } catch (e) {
      if (req.signal?.aborted) throw req.signal.reason ?? e;
      const err = e instanceof LlmError
        ? e
        : new LlmError(req.provider, `${req.provider} request failed: ${scrub(req, String(e))}`);
      if (!err.retryable || attempt > req.maxRetries) {
        if (err.retryable && req.maxRetries > 0) {
          throw new LlmError(req.provider, `${err.message} (gave up after ${attempt} attempts)`, {
            status: err.status,
            retryAfterMs: err.retryAfterMs,
          });
        }
        throw err;
      }
      await sleep(backoffMs(attempt, err.retryAfterMs), req.signal);
    } finally {
      if (lease !== undefined) returnBuffer(lease);
    }
  }
}

const SPLICE_MESSAGES = "\u0000messages\u0000";
const SPLICE_TOOLS = "\u0000tools\u0000";
const utf8 = new TextEncoder();
const COMMA = 0x2c;

/**
 * The request body as UTF-8 JSON bytes: sorted keys, stream fields, and the pre-encoded parts
 * (`rawMessages` as an array, `rawTools`) copied in as bytes. Only the small rest of the body is
 * stringified per request; the conversation's chunks are never joined into a string or encoded
 * again, so a turn's cost here is one copy of bytes, not a pass of the JSON encoder over the
 * whole history.
 */
export function buildPayload(
  req: Pick<LlmHttpRequest, "body" | "rawMessages" | "rawTools" | "stream" | "provider">,
  alloc: (size: number) => Uint8Array<ArrayBuffer> = (size) => new Uint8Array(size),
): Uint8Array<ArrayBuffer> {
  const body: Record<string, unknown> = { ...(req.body as Record<string, unknown>) };
  if (req.stream) {
    body.stream = true;
    if (req.provider === "openai") body.stream_options = { include_usage: true };
  }
  if (req.rawMessages) body.messages = SPLICE_MESSAGES;
  if (req.rawTools !== undefined) body.tools = SPLICE_TOOLS;
  const text = stringifyJson(body);
  // The text's pieces around the markers, and what goes in each marker's place.
  const splices: { at: number; marker: string; chunks: readonly Uint8Array[]; array: boolean }[] = [];
  if (req.rawMessages) {
    const marker = JSON.stringify(SPLICE_MESSAGES);
    splices.push({ at: text.indexOf(marker), marker, chunks: req.rawMessages, array: true });
  }
  if (req.rawTools !== undefined) {
    const marker = JSON.stringify(SPLICE_TOOLS);
    splices.push({ at: text.indexOf(marker), marker, chunks: [req.rawTools], array: false });
  }
  if (splices.length === 0) return utf8.encode(text);
  splices.sort((a, b) => a.at - b.at);
  const pieces: Uint8Array[] = [];
  let from = 0;
  let size = 0;
  for (const s of splices) {
    const piece = utf8.encode(text.slice(from, s.at));
    pieces.push(piece);
    size += piece.length;
    for (const c of s.chunks) size += c.length;
    if (s.array) size += 2 + Math.max(0, s.chunks.length - 1);
    from = s.at + s.marker.length;
  }
  const tail = utf8.encode(text.slice(from));
  size += tail.length;
  const out = alloc(size);
  let o = 0;
  for (let i = 0; i < splices.length; i++) {
    out.set(pieces[i], o);
    o += pieces[i].length;
    const { chunks, array } = splices[i];
    if (array) out[o++] = 0x5b; // [
    for (let k = 0; k < chunks.length; k++) {
      if (array && k > 0) out[o++] = COMMA;
      out.set(chunks[k], o);
      o += chunks[k].length;
    }
    if (array) out[o++] = 0x5d; // ]
  }
  out.set(tail, o);
  return out;
}

/**
 * Bodies of at least this many bytes go to the global fetch as a stream of one chunk, a buffer
 * leased for the request (`leaseBuffer`); smaller ones as bytes, built in one shared buffer.
 *
 * Why: given bytes, Deno's fetch copies them into an ArrayBuffer of its own before it returns
 * (which is what lets the small bodies share one buffer, even between concurrent requests), and
 * that copy is freed only at V8's next scavenge. Scavenges come every so many turns whatever the
 * body's size (they follow the JavaScript a turn allocates), so the copies waiting for one grew
 * with the conversation: measured (`bench/llm_long_bench.ts`), ~16 MB of them at the peak of a
 * 1000-turn run, ~24 MB at 2000, most of what its peak RSS added over a 100-turn run. A stream's
 * chunk is not copied in JavaScript (the HTTP stack takes it as it is), so a long conversation's
 * requests leave no garbage of their size. Over HTTP/1.1 such a body goes chunked (no
 * `Content-Length`), which is why the short, common requests keep the bytes.
 */
export const STREAM_BODY_BYTES = 64 * 1024;

let scratch = new Uint8Array(0);

/** The first `size` bytes of the buffer small bodies for the global fetch are built in, grown as needed. */
function reused(size: number): Uint8Array<ArrayBuffer> {
  if (scratch.length < size) scratch = new Uint8Array(Math.max(size, Math.ceil(scratch.length * 1.5)));
  return scratch.subarray(0, size);
}

/** Buffers of streamed bodies not in use: one is leased per attempt, back when the attempt ends. */
const idleBuffers: Uint8Array<ArrayBuffer>[] = [];
/** Most idle buffers kept (one per request that was in flight at once; more are let go). */
const MAX_IDLE_BUFFERS = 4;

/**
 * A buffer of at least `size` bytes that no other request uses until `returnBuffer`: the HTTP
 * stack reads a streamed chunk after `fetch` returns, so a leased buffer is never written while
 * its request may still be sending it. Grown with headroom, so a conversation that grows a little
 * every turn replaces its buffer only now and then.
 */
function leaseBuffer(size: number): Uint8Array<ArrayBuffer> {
  for (let i = idleBuffers.length - 1; i >= 0; i--) {
    if (idleBuffers[i].length >= size) return idleBuffers.splice(i, 1)[0];
  }
  const old = idleBuffers.pop();
  return new Uint8Array(Math.max(Math.ceil(size * 1.25), Math.ceil((old?.length ?? 0) * 1.5)));
}

/** Ends the lease of a buffer from `leaseBuffer`. */
function returnBuffer(buf: Uint8Array<ArrayBuffer>): void {
  if (idleBuffers.length < MAX_IDLE_BUFFERS) idleBuffers.push(buf);
}

/** A body stream of one chunk, `bytes` as they are (not copied). */
function oneChunk(bytes: Uint8Array<ArrayBuffer>): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    pull(c) {
      c.enqueue(bytes);
      c.close();
    },
  });
}

/** Delay before retry number `attempt` (1-based): Retry-After when given, else 0.5 s doubling to 8 s, ±25 %. */
export function backoffMs(attempt: number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined) return Math.min(Math.max(retryAfterMs, 0), MAX_RETRY_AFTER_MS);
  const base = Math.min(8000, 500 * 2 ** (attempt - 1));
  return base * (0.75 + Math.random() * 0.5);
}

/** Parses `retry-after-ms` / `Retry-After` (seconds or an HTTP date) into ms. */
export function retryAfter(h: Headers): number | undefined {
  const ms = h.get("retry-after-ms");
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const ra = h.get("retry-after");
  if (!ra) return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(ra)) return Number(ra) * 1000;
  const at = Date.parse(ra);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

async function attemptOnce(
  req: LlmHttpRequest,
  payload: Uint8Array<ArrayBuffer> | ReadableStream<Uint8Array>,
  attempt: number,
  started: number,
): Promise<Omit<LlmHttpResult, "attempts">> {
  const P = req.provider;
  const fields = { method: "POST", url: req.url, provider: P, attempt, stream: req.stream };
  let idsMemo: Correlation | undefined;
  const ids = () => (idsMemo ??= req.correlation());
  req.obs("debug", () => obsLine("http_request", "http", fields, ids()));
  const own = req.deadlines ? undefined : new Deadlines(); // a request on its own: a clock of its own
  const deadline = (req.deadlines ?? own!).start(req.timeoutSecs * 1000, req.signal);
  const timeoutError = () => new LlmError(P, `${P} request timed out after ${req.timeoutSecs} s (timeout)`);
  const maxBytes = req.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const tooLarge = () => new LlmError(P, `${P} ${new ResponseTooLarge(maxBytes).message}`);
  let res: Response;
  try {
    res = await (req.fetch ?? fetch)(req.url, {
      method: "POST",
      headers: {
        ...req.headers,
        "content-type": "application/json",
        accept: req.stream ? "text/event-stream" : "application/json",
      },
      body: payload,
      signal: deadline.controller.signal,
    });
  } catch (e) {
    deadline.clear();
    own?.stop();
    const latency = Math.round(performance.now() - started);
    const timedOut = deadline.expired;
    req.obs(
      "warn",
      () =>
        obsLine("http_response", "http", {
          ...fields,
          status: 0,
          latency_ms: latency,
          error: timedOut ? "timeout" : "connection",
        }, ids()),
    );
    if (timedOut) throw timeoutError();
    if (req.signal?.aborted) throw e;
    const why = connectFailure(e);
    const denied = /\(os error 13\)/.test(why); // EACCES on connect: not permitted here, no retry helps
    throw new LlmError(P, `${P} connection failed: ${scrub(req, why)}`, { retryable: !denied, denied });
  }
  const latencyMs = Math.round(performance.now() - started);
  req.obs(
    res.ok ? "debug" : "warn",
    () => obsLine("http_response", "http", { ...fields, status: res.status, latency_ms: latencyMs }, ids()),
  );
  try {
    if (!res.ok) throw await httpError(req, res);
    if (!req.stream) {
      const text = await readText(res, maxBytes, deadline, timeoutError, tooLarge);
      let body: unknown;
      try {
        body = parseJson(text);
      } catch {
        throw new LlmError(P, `${P} response is not valid JSON (HTTP ${res.status}, ${text.length} bytes)`);
      }
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        throw new LlmError(P, `${P} response is not a JSON object (HTTP ${res.status})`, {
          status: res.status,
        });
      }
      if (P === "openai") preparseToolArguments(body as Record<string, unknown>);
      return { body: body as Record<string, unknown>, status: res.status, latencyMs };
    }
    const type = res.headers.get("content-type") ?? "";
    if (!type.includes("text/event-stream")) {
      await res.body?.cancel();
      throw new LlmError(
        P,
        `${P} answered a streaming request with content-type '${type}', not text/event-stream`,
      );
    }
    const acc: StreamAccumulator = P === "anthropic" ? new AnthropicStream() : new OpenAIStream();
    let delivered = false;
    try {
      for await (const ev of readSse(res.body!, maxBytes)) {
        const deltas = acc.push(ev);
        for (const d of deltas) {
          if (!req.onDelta) break;
          delivered = true;
          await req.onDelta(d);
        }
      }
    } catch (e) {
      if (deadline.expired) throw timeoutError();
      if (e instanceof ResponseTooLarge) throw tooLarge();
      if (e instanceof LlmError) throw e;
      if (req.signal?.aborted) throw e;
      throw new LlmError(P, `${P} stream was cut: ${scrub(req, (e as Error).message ?? String(e))}`, {
        retryable: !delivered,
      });
    }
    try {
      const body = acc.finish();
      if (P === "openai") preparseToolArguments(body);
      return { body, status: res.status, latencyMs };
    } catch (e) {
      if (e instanceof LlmError && !delivered) {
        throw new LlmError(P, e.message, { retryable: true });
      }
      throw e;
    }
  } finally {
    deadline.clear();
    own?.stop();
  }
}

async function readText(
  res: Response,
  maxBytes: number,
  deadline: Deadline,
  timeoutError: () => LlmError,
  tooLarge: () => LlmError,
): Promise<string> {
  try {
    return await readBody(res, maxBytes);
  } catch (e) {
    if (deadline.expired) throw timeoutError();
    if (e instanceof ResponseTooLarge) throw tooLarge();
    throw e;
  }
}

/**
 * Parses OpenAI tool-call `arguments` (a JSON text) here, where it is cheap, into
 * `function.parsed_arguments`; `llm_proto.openai` uses it and decodes the text itself only when
 * it is absent (invalid JSON, or a body that did not come through this transport).
 */
function preparseToolArguments(body: Record<string, unknown>): void {
  const choices = body.choices;
  if (!Array.isArray(choices)) return;
  for (const c of choices) {
    const calls = (c as { message?: { tool_calls?: unknown } })?.message?.tool_calls;
    if (!Array.isArray(calls)) continue;
    for (const tc of calls) {
      const fn = (tc as { function?: Record<string, unknown> })?.function;
      if (!fn || typeof fn.arguments !== "string" || fn.arguments === "") continue;
      try {
        const v = parseJson(fn.arguments);
        if (v !== null && typeof v === "object" && !Array.isArray(v)) fn.parsed_arguments = v;
      } catch { /* left for the normaliser to report */ }
    }
  }
}

/**
 * A platform error message made safe to show: the request URL (which may carry userinfo or a
 * key in its query) is replaced by its sanitised form, and credential header values are masked.
 */
function scrub(req: Pick<LlmHttpRequest, "url" | "headers">, message: string): string {
  const keys = new Secrets();
  for (const [k, v] of Object.entries(req.headers)) {
    if (/authorization|api-key/i.test(k)) {
      keys.add(v);
      keys.add(v.replace(/^Bearer\s+/i, ""));
    }
  }
  return keys.mask(message.split(req.url).join(sanitizeUrl(req.url)));
}

/** Bytes of an error answer read for its message (the rest is not read). */
const ERROR_BODY_BYTES = 64 * 1024;

/**
 * The error for a non-2xx answer: status, the server's error type and message (read from at most
 * `ERROR_BODY_BYTES` of the body, and scrubbed: a server may echo the key it refused),
 * retryability.
 */
async function httpError(
  req: Pick<LlmHttpRequest, "provider" | "url" | "headers">,
  res: Response,
): Promise<LlmError> {
  const P = req.provider;
  const s = res.status;
  let detail = "";
  try {
    const text = await readHead(res, ERROR_BODY_BYTES);
    try {
      const j = JSON.parse(text);
      const e = (j?.error ?? j) as Record<string, unknown>;
      const kind = e?.type ?? e?.code;
      const msg = typeof e?.message === "string" ? e.message : "";
      detail = `${kind ? ` (${String(kind)})` : ""}${msg ? `: ${msg}` : ""}`;
    } catch {
      detail = text.trim() ? `: ${text.trim().slice(0, 200)}` : "";
    }
  } catch { /* the status alone is the error */ }
  const retryable = s === 429 || s === 529 || s >= 500;
  return new LlmError(P, `${P} HTTP ${s}${scrub(req, detail)}`, {
    retryable,
    status: s,
    retryAfterMs: retryAfter(res.headers),
  });
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
