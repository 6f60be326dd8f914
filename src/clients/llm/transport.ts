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
 * status and the server's error type, and the stream loop (SSE → accumulator → `onDelta`).
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
  /** JSON texts of the messages, spliced into the body as its `messages` array (already encoded). */
  rawMessages?: string[];
  /** JSON text of the `tools` array, spliced in likewise. */
  rawTools?: string;
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
  const payload = buildPayload(req);
  let attempt = 0;
  while (true) {
    attempt++;
    const started = performance.now();
    try {
      const r = await attemptOnce(req, payload, attempt, started);
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
    }
  }
}

const SPLICE_MESSAGES = "\u0000messages\u0000";
const SPLICE_TOOLS = "\u0000tools\u0000";

/** The request body as JSON text: sorted keys, stream fields, pre-encoded parts spliced in. */
export function buildPayload(
  req: Pick<LlmHttpRequest, "body" | "rawMessages" | "rawTools" | "stream" | "provider">,
): string {
  const body: Record<string, unknown> = { ...(req.body as Record<string, unknown>) };
  if (req.stream) {
    body.stream = true;
    if (req.provider === "openai") body.stream_options = { include_usage: true };
  }
  if (req.rawMessages) body.messages = SPLICE_MESSAGES;
  if (req.rawTools !== undefined) body.tools = SPLICE_TOOLS;
  let text = stringifyJson(body);
  if (req.rawMessages) {
    text = text.replace(JSON.stringify(SPLICE_MESSAGES), () => `[${req.rawMessages!.join(",")}]`);
  }
  if (req.rawTools !== undefined) text = text.replace(JSON.stringify(SPLICE_TOOLS), () => req.rawTools!);
  return text;
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
  payload: string,
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
