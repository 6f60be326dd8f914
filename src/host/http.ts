/**
 * `http.request`: HTTP for scripts, with server-sent events.
 *
 * Owns the request contract:
 * - `http.request({ url, method?, headers?, body?, timeout?, on_event? })`, or
 *   `http.request(url [, opts])`. `method` defaults to GET (POST when a body is given);
 *   `body` is a string, or a table sent as JSON (with `content-type: application/json` unless the
 *   caller set one); `timeout` is seconds for the whole exchange (default 120); `max_body_bytes`
 *   is the largest answer body read (default 64 MiB; with `on_event`, the largest event).
 * - Answers `{ ok = true, status, headers, body }` for every HTTP status (a 404 is an answer, not
 *   a failure); header names are lowercase, repeated headers joined with ", "; the body is the
 *   exact bytes. A request that gets no answer (bad URL, refused connection, DNS, timeout,
 *   cancelled, a body past `max_body_bytes` — refused a chunk past the limit, the rest unread)
 *   answers `{ ok = false, error }` and does not raise; wrong argument types raise. The error
 *   names the method and the URL without its userinfo and with the values of credential-like
 *   parameters replaced, and carries none of the run's secrets (`run.secrets.scrub`: the
 *   platform's message may repeat the URL).
 * - With `on_event`, the body is read as a server-sent-event stream (WHATWG rules: `data:` lines
 *   joined with "\n", `event:`, `id:`, `retry:`, comments, CRLF/LF/CR line ends, an unterminated
 *   event at end-of-stream is dropped). `on_event({ event, data, id })` runs as a Lua task for
 *   each event, one at a time, so it may yield; returning `false` closes the stream early. The
 *   answer then has `body = ""`. An error in the callback raises out of `http.request`.
 * - The calling task yields while the request runs; cancelling the task aborts the request.
 * - A traced run (`run.trace`) gets a CLIENT span per request (method, server, status) and sends
 *   its W3C `traceparent` header, unless the script set one itself.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { type Args, LuaArgError, optField } from "../lua/args.ts";
import { stringifyJson } from "../json/codec.ts";
import { type LuaFunctionRef, luaTypeName } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import { LineSplitter, LineTooLong } from "../util/lines.ts";
import { readAtMost } from "../util/bytes.ts";

const DEFAULT_TIMEOUT_S = 120;
/** Default `max_body_bytes`: 64 MiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/** One server-sent event. */
export interface SseEvent {
  event: string;
  data: string;
  id?: string;
}

/** A body, or one event of a stream, went past the request's `max_body_bytes`. */
export class BodyTooLarge extends Error {
  /**
   * @param what "the body" or "an event"
   * @param limit the limit, in bytes
   */
  constructor(what: string, readonly limit: number) {
    super(`${what} is larger than ${limit} bytes (max_body_bytes)`);
    this.name = "BodyTooLarge";
  }
}

/**
 * Incremental SSE parser: feed bytes, get complete events. Follows the WHATWG event-stream
 * interpretation (https://html.spec.whatwg.org/multipage/server-sent-events.html). Lines are
 * split in time linear in the bytes (`util/lines.ts`); one event (its data) is at most
 * `maxEventBytes`, or `push` throws `BodyTooLarge` as soon as it gets there.
 */
export class SseParser {
  readonly #lines: LineSplitter;
  #data: string[] = [];
  #dataSize = 0;
  #event = "";
  #lastId: string | undefined;

  /** @param maxEventBytes largest event accepted (default: no limit) */
  constructor(private readonly maxEventBytes = Infinity) {
    this.#lines = new LineSplitter({ cr: true, maxLineBytes: maxEventBytes });
  }

  /** Feeds a chunk; returns the events completed by it. Throws `BodyTooLarge`. */
  push(chunk: Uint8Array): SseEvent[] {
    const out: SseEvent[] = [];
    let lines: string[];
    try {
      lines = this.#lines.push(chunk);
    } catch (e) {
      if (e instanceof LineTooLong) throw new BodyTooLarge("an event", this.maxEventBytes);
      throw e;
    }
    for (const line of lines) this.#line(line, out);
    return out;
  }

  #line(line: string, out: SseEvent[]): void {
    if (line === "") {
      if (this.#data.length > 0) {
        out.push({ event: this.#event || "message", data: this.#data.join("\n"), id: this.#lastId });
      }
      this.#data = [];
      this.#dataSize = 0;
      this.#event = "";
      return;
    }
    if (line.startsWith(":")) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      this.#dataSize += value.length + 1;
      if (this.#dataSize > this.maxEventBytes) throw new BodyTooLarge("an event", this.maxEventBytes);
      this.#data.push(value);
    } else if (field === "event") this.#event = value;
    else if (field === "id" && !value.includes("\0")) this.#lastId = value;
  }
}

interface RequestSpec {
  url: string;
  method: string;
  headers: Headers;
  body?: string | Uint8Array;
  timeoutMs: number;
  maxBodyBytes: number;
  onEvent?: LuaFunctionRef;
}

function readSpec(a: Args): RequestSpec {
  let opts: Record<string, unknown>;
  let optsIdx = 1;
  let url: string | undefined;
  if (typeof a.at(1) === "string") {
    url = a.string(1, "url");
    opts = a.optTable(2, "opts") ?? {};
    optsIdx = 2;
  } else {
    opts = a.table(1, "request");
  }
  const name = optsIdx === 1 ? "request" : "opts";
  const field = <T>(k: string, kind: "string" | "number" | "table" | "function") =>
    optField<T>(a, optsIdx, name, opts, k, kind);
  url ??= field<string>("url", "string");
  if (url === undefined) {
    throw new LuaArgError(`http.request: argument 1 (request) field 'url' must be a string, got nil`);
  }
  const headers = new Headers();
  for (const [k, v] of Object.entries(field<Record<string, unknown>>("headers", "table") ?? {})) {
    if (typeof v !== "string" && typeof v !== "number") {
      throw new LuaArgError(
        `http.request: argument ${optsIdx} (${name}) field 'headers' value of '${k}' must be a string, got ${
          luaTypeName(v)
        }`,
      );
    }
    try {
      headers.append(k, String(v));
    } catch (e) {
      throw new LuaArgError(
        `http.request: argument ${optsIdx} (${name}) field 'headers': ${(e as Error).message}`,
      );
    }
  }
  let body: string | Uint8Array | undefined;
  const rawBody = opts.body;
  if (rawBody === undefined) body = undefined;
  else if (typeof rawBody === "string" || rawBody instanceof Uint8Array) body = rawBody;
  else if (luaTypeName(rawBody) === "table") {
    try {
      body = stringifyJson(rawBody);
    } catch (e) {
      throw new LuaArgError(
        `http.request: argument ${optsIdx} (${name}) field 'body': ${(e as Error).message}`,
      );
    }
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  } else {
    throw new LuaArgError(
      `http.request: argument ${optsIdx} (${name}) field 'body' must be a string or a table, got ${
        luaTypeName(rawBody)
      }`,
    );
  }
  const method = (field<string>("method", "string") ?? (body !== undefined ? "POST" : "GET")).toUpperCase();
  if (!/^[A-Z]+$/.test(method)) {
    throw new LuaArgError(
      `http.request: argument ${optsIdx} (${name}) field 'method' is not an HTTP method: '${method}'`,
    );
  }
  const timeout = field<number>("timeout", "number") ?? DEFAULT_TIMEOUT_S;
  if (!(timeout > 0)) {
    throw new LuaArgError(
      `http.request: argument ${optsIdx} (${name}) field 'timeout' must be a positive number, got ${timeout}`,
    );
  }
  const maxBodyBytes = field<number>("max_body_bytes", "number") ?? DEFAULT_MAX_BODY_BYTES;
  if (!Number.isInteger(maxBodyBytes) || maxBodyBytes <= 0) {
    throw new LuaArgError(
      `http.request: argument ${optsIdx} (${name}) field 'max_body_bytes' must be a positive whole number, got ${maxBodyBytes}`,
    );
  }
  const onEvent = field<LuaFunctionRef>("on_event", "function");
  const timeoutMs = Math.min(timeout * 1000, 2 ** 31 - 1);
  return { url, method, headers, body, timeoutMs, maxBodyBytes, onEvent };
}

/** The whole body, refused (`BodyTooLarge`, the rest unread) as soon as it passes `max` bytes. */
async function readAll(reader: ReadableStreamDefaultReader<Uint8Array>, max: number): Promise<Uint8Array> {
  const body = await readAtMost(reader, max);
  if (body === undefined) throw new BodyTooLarge("the body", max);
  return body;
}

/** The message of a fetch failure with its cause ("fetch failed" alone says nothing). */
function describe(e: unknown): string {
  const err = e as Error & { cause?: unknown };
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return cause && cause !== err.message ? `${err.message}: ${cause}` : String(err.message ?? e);
}

/** The host of `url` (for a span), or undefined. */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url).hostname;
  } catch {
    return undefined;
  }
}

/** Installs `http.request`. */
export function installHttp(engine: LuaEngine, run: RunContext): void {
  engine.define("http.request", {
    functions: "ref",
    floats: "tagged",
    async: async (a, cx) => {
      const spec = readSpec(a);
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(new Error("timeout")), spec.timeoutMs);
      const onCancel = () => ac.abort(new Error("cancelled"));
      cx.signal.addEventListener("abort", onCancel);
      let callbackError: unknown;
      // A traced run: a CLIENT span per request, its traceparent sent (unless the script set one).
      const span = run.trace?.start(spec.method, "client", {
        "http.request.method": spec.method,
        "server.address": hostOf(spec.url),
      });
      if (span && !spec.headers.has("traceparent")) spec.headers.set("traceparent", span.traceparent());
      try {
        const res = await fetch(spec.url, {
          method: spec.method,
          headers: spec.headers,
          body: spec.body as BodyInit | undefined,
          signal: ac.signal,
        });
        const headers: Record<string, string> = {};
        res.headers.forEach((v, k) => (headers[k] = v));
        let body: Uint8Array = new Uint8Array();
        const reader = res.body?.getReader();
        try {
          if (reader && spec.onEvent) {
            const parser = new SseParser(spec.maxBodyBytes);
            outer: while (true) {
              const r = await reader.read();
              if (r.done) break;
              for (const ev of parser.push(r.value)) {
                try {
                  const [keep] = await engine.callLua(spec.onEvent, [ev]);
                  if (keep === false) break outer;
                } catch (e) {
                  callbackError = e;
                  throw e;
                }
              }
            }
          } else if (reader) {
            body = await readAll(reader, spec.maxBodyBytes);
          }
        } finally {
          // Stopped early (on_event said so, a callback failed, too large): the rest is not read.
          await reader?.cancel().catch(() => undefined);
        }
        span?.set({ "http.response.status_code": res.status });
        if (span && res.status >= 500) span.fail(String(res.status));
        return { ok: true, status: res.status, headers, body };
      } catch (e) {
        if (callbackError !== undefined) throw new Error(`http.request: on_event: ${(e as Error).message}`);
        const why = ac.signal.aborted
          ? (String((ac.signal.reason as Error)?.message) === "timeout"
            ? `timed out after ${spec.timeoutMs / 1000} s`
            : "cancelled")
          : describe(e);
        const error = run.secrets.scrub(`http.request: ${spec.method} ${spec.url}: ${why}`);
        span?.fail(
          why === "cancelled" ? "cancelled" : why.startsWith("timed out") ? "timeout" : "_OTHER",
          error,
        );
        return { ok: false, error };
      } finally {
        span?.end();
        clearTimeout(timer);
        cx.signal.removeEventListener("abort", onCancel);
        spec.onEvent?.release();
      }
    },
  });
}
