/**
 * A traced run: its spans and metrics in the OpenTelemetry GenAI semantic conventions, made over
 * `@opentelemetry/api` from whichever tracer (and meter) provider the run was given.
 *
 * Layer: obs. Imported by the runner only for a traced run (`import()`), never otherwise.
 *
 * The span tree of one run:
 * - `invoke_agent <block>` (INTERNAL; `gen_ai.operation.name`, `gen_ai.agent.name`), the root,
 *   child of the caller's span when the run was given one (`TRACEPARENT`, an MCP `run_block`
 *   call's `_meta.traceparent`, the SDK's option). Its trace id is stamped on every kernel
 *   session of the run (`meta.trace_id`), so `knl` finds the trace and the trace the session.
 * - `turn <n>` per beat of a kernel session (an `agent.run` turn): `gen_ai.conversation.id` is the
 *   session, `agent_block.turn` the beat; under the span open when the session opened (the run,
 *   or the tool whose code opened a sub-agent).
 * - `chat <model>` (CLIENT) per model call, from the kernel's `llm_request` to its
 *   `llm_response` / `llm_call_failed`: `gen_ai.operation.name`, `gen_ai.provider.name`,
 *   `gen_ai.request.model`, `gen_ai.request.max_tokens` / `temperature` / `top_p` / `top_k` / `seed` /
 *   `stop_sequences` (what the kernel recorded the call asked: the request's own values, else its
 *   Port's open-time defaults), `gen_ai.response.model`,
 *   `gen_ai.response.finish_reasons`, `gen_ai.response.id` (first bytes of the body),
 *   `gen_ai.usage.*` (from the `llm_response` row itself: the kernel's numbers), `server.address`,
 *   `server.port`, `error.type`; with content capture (opt-in: the settings' `captureContent`,
 *   from `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` at the edge),
 *   `gen_ai.system_instructions` and `gen_ai.input.messages` (from the request body as it goes
 *   out, masked by the run's secrets) and `gen_ai.output.messages` (`messages.ts` has the shapes).
 * - `execute_tool <name>` (INTERNAL) per tool call, `tool_call` to `tool_result`:
 *   `gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.type`; with content capture,
 *   `gen_ai.tool.call.arguments` / `.result`.
 * - host calls under the innermost open span: `tools/call <server>` (CLIENT, `mcp.*`), `sh.exec`,
 *   `http.request`, `mesh.request <peer>` (CLIENT) / `mesh.send <peer>` (PRODUCER) (see the host
 *   modules); a mesh message another agent sent with a `traceparent` opens `mesh.receive <from>`
 *   (SERVER) under the sender's span, and what its handler does goes under it.
 * Metrics: `gen_ai.client.token.usage`, `gen_ai.client.operation.duration`,
 * `gen_ai.client.operation.time_to_first_chunk`, `mcp.client.operation.duration`.
 *
 * Times: a span starts when its row is handed to the host (the kernel hands a beat's rows over
 * before the work they record starts) and ends at its start plus the `elapsed_ms` the kernel
 * measured, so a span's length is the kernel's. Every span still open when the run ends is ended
 * then. Contents come from the rows, which the run's secrets already masked.
 */
import { remoteParentContext } from "./remote_parent.ts";
import {
  type Attributes,
  type Context,
  type Counter,
  type Histogram,
  type Meter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Tracer,
} from "@opentelemetry/api";
import type { RunTrace, SpanKindName, TraceAttrs, TracedRow, TraceSpan } from "./run_trace.ts";
import { formatTraceparent, parseTraceparent, type TraceParent } from "./settings.ts";
import type { Outcome } from "../../outcome.ts";
import { bodyJson, partsOf, requestContents } from "./messages.ts";
import { LeanTracer } from "./lean_tracer.ts";

/** What a traced run is made from. */
export interface RunTraceOptions {
  /** The tracer (from the embedder's provider or the export's). */
  tracer: Tracer;
  /** The meter, when metrics are exported. */
  meter?: Meter;
  /** The block's name (`invoke_agent <name>`). */
  name: string;
  /** The caller's span. */
  parent?: TraceParent;
  /** Put contents on spans. */
  captureContent?: boolean;
  /** More attributes of the run span (labels, run id). */
  attributes?: Attributes;
}

const now = () => performance.timeOrigin + performance.now();

const clean = (attrs: TraceAttrs | undefined): Attributes | undefined => {
  if (!attrs) return undefined;
  const out: Attributes = {};
  for (const k in attrs) if (attrs[k] !== undefined) out[k] = attrs[k];
  return out;
};

interface Instruments {
  tokens: Histogram;
  duration: Histogram;
  firstChunk: Histogram;
  mcp: Histogram;
  runs: Counter;
}
const instruments = new WeakMap<Meter, Instruments>();
function instrumentsOf(meter: Meter): Instruments {
  let i = instruments.get(meter);
  if (!i) {
    instruments.set(
      meter,
      i = {
        tokens: meter.createHistogram("gen_ai.client.token.usage", {
          unit: "{token}",
          description: "Number of input and output tokens used",
          advice: {
            explicitBucketBoundaries: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576],
          },
        }),
        duration: meter.createHistogram("gen_ai.client.operation.duration", {
          unit: "s",
          description: "GenAI operation duration",
          advice: {
            explicitBucketBoundaries: [
              0.01,
              0.02,
              0.04,
              0.08,
              0.16,
              0.32,
              0.64,
              1.28,
              2.56,
              5.12,
              10.24,
              20.48,
              40.96,
              81.92,
            ],
          },
        }),
        firstChunk: meter.createHistogram("gen_ai.client.operation.time_to_first_chunk", {
          unit: "s",
          description: "Time to receive the first chunk of a model response",
        }),
        mcp: meter.createHistogram("mcp.client.operation.duration", {
          unit: "s",
          description: "Duration of an MCP request as seen from the client",
        }),
        runs: meter.createCounter("agent_block.runs", {
          unit: "{run}",
          description: "Runs ended, by outcome",
        }),
      },
    );
  }
  return i;
}

const KINDS: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  client: SpanKind.CLIENT,
  server: SpanKind.SERVER,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/** A span of ours: the API span plus what is needed to end it right. */
interface Open {
  span: Span;
  /** The context whose active span is this one (made once, for its children). */
  ctx?: Context;
  start: number;
  ended: boolean;
  /** Latest end time of what ran under it (a turn ends at its last child's end). */
  last: number;
}

interface Chat extends Open {
  attrs: Attributes;
}

interface SessionState {
  parent: Open;
  turn?: Open & { beat: number };
  chat?: Chat;
  tools: Map<string, Open>;
}

const json = (text: string): Record<string, unknown> => {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
};
const BEAT = /"beat":(\d+)/;
const str = (v: unknown) => typeof v === "string" ? v : undefined;
const num = (v: unknown) => typeof v === "number" && Number.isFinite(v) ? v : undefined;

/** The low-cardinality `error.type` of a failed model call's text. */
function errorTypeOf(text: string): string {
  const status = /\b(?:HTTP|status)\s*(\d{3})\b/i.exec(text);
  if (status) return status[1];
  if (/timed out|timeout/i.test(text)) return "timeout";
  if (/cancel/i.test(text)) return "cancelled";
  return "_OTHER";
}

/** One traced run (see the module header). */
export class OtelRunTrace implements RunTrace {
  readonly captureContent: boolean;
  readonly #tracer: Tracer;
  /** The tracer when it is agent-block's own: spans are started on its lean path. */
  readonly #lean: LeanTracer | undefined;
  readonly #instruments: Instruments | undefined;
  readonly #root: Open;
  /** Open spans, oldest first: the innermost open one is the parent of the next. */
  readonly #open: Open[] = [];
  readonly #sessions = new Map<string, SessionState>();

  /** Opens the run's span. */
  constructor(o: RunTraceOptions) {
    this.#tracer = o.tracer;
    this.#lean = o.tracer instanceof LeanTracer ? o.tracer : undefined;
    this.#instruments = o.meter ? instrumentsOf(o.meter) : undefined;
    this.captureContent = o.captureContent === true;
    const parentCtx = remoteParentContext(o.parent);
    const start = now();
    const span = this.#tracer.startSpan(`invoke_agent ${o.name}`, {
      kind: SpanKind.INTERNAL,
      startTime: start,
      attributes: { "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": o.name, ...o.attributes },
    }, parentCtx);
    this.#root = { span, start, ended: false, last: start };
    this.#open.push(this.#root);
  }

  /** The run's trace id (32 hex digits). */
  get traceId(): string {
    return this.#root.span.spanContext().traceId;
  }

  /** The run span's id. */
  get spanId(): string {
    return this.#root.span.spanContext().spanId;
  }

  #innermost(): Open {
    return this.#open[this.#open.length - 1] ?? this.#root;
  }

  #begin(name: string, kind: SpanKind, parent: Open, attrs?: Attributes, start = now()): Open {
    let span: Span;
    if (this.#lean) span = this.#lean.startChild(name, kind, parent.span.spanContext(), start, attrs);
    else {
      const ctx: Context = parent.ctx ??= trace.setSpan(ROOT_CONTEXT, parent.span);
      span = this.#tracer.startSpan(name, { kind, startTime: start, attributes: attrs }, ctx);
    }
    const o: Open = { span, start, ended: false, last: start };
    this.#open.push(o);
    return o;
  }

  #finish(o: Open, end = now()): void {
    if (o.ended) return;
    o.ended = true;
    const at = Math.max(end, o.last, o.start);
    o.span.end(at);
    const i = this.#open.lastIndexOf(o);
    if (i >= 0) this.#open.splice(i, 1);
    for (const p of this.#open) if (p.last < at) p.last = at;
  }

  rows(rows: readonly TracedRow[]): void {
    for (const r of rows) this.#row(r);
  }

  #row(r: TracedRow): void {
    if (r.kind === "session_open") {
      this.#sessions.set(r.stream, { parent: this.#innermost(), tools: new Map() });
      return;
    }
    const s = this.#sessions.get(r.stream);
    if (!s) return;
    if (r.kind === "session_close") {
      this.#closeSession(s);
      this.#sessions.delete(r.stream);
      return;
    }
    const m = BEAT.exec(r.meta);
    if (!m) return;
    const beat = Number(m[1]);
    if (s.turn?.beat !== beat) {
      if (s.turn) this.#finish(s.turn, s.turn.last);
      const t = this.#begin(`turn ${beat}`, SpanKind.INTERNAL, s.parent, {
        "gen_ai.conversation.id": r.stream,
        "agent_block.turn": beat,
      });
      s.turn = Object.assign(t, { beat });
    }
    switch (r.kind) {
      case "llm_request": {
        const d = json(r.data);
        const model = str(d.model);
        const attrs: Attributes = { "gen_ai.operation.name": "chat" };
        if (str(d.provider)) attrs["gen_ai.provider.name"] = str(d.provider);
        if (model) attrs["gen_ai.request.model"] = model;
        if (num(d.max_tokens) !== undefined) attrs["gen_ai.request.max_tokens"] = num(d.max_tokens);
        if (num(d.temperature) !== undefined) attrs["gen_ai.request.temperature"] = num(d.temperature);
        if (num(d.top_p) !== undefined) attrs["gen_ai.request.top_p"] = num(d.top_p);
        if (num(d.top_k) !== undefined) attrs["gen_ai.request.top_k"] = num(d.top_k);
        if (num(d.seed) !== undefined) attrs["gen_ai.request.seed"] = num(d.seed);
        const stop = typeof d.stop === "string"
          ? [d.stop]
          : Array.isArray(d.stop)
          ? d.stop.filter((x) => typeof x === "string")
          : undefined;
        if (stop?.length) attrs["gen_ai.request.stop_sequences"] = stop;
        const c = this.#begin(model ? `chat ${model}` : "chat", SpanKind.CLIENT, s.turn, attrs);
        s.chat = Object.assign(c, { attrs });
        return;
      }
      case "llm_response":
      case "llm_call_failed": {
        const c = s.chat;
        if (!c) return;
        s.chat = undefined;
        const d = json(r.data);
        const elapsed = num(d.elapsed_ms);
        const end = elapsed !== undefined ? c.start + elapsed : now();
        const metricAttrs: Attributes = {
          "gen_ai.operation.name": "chat",
          "gen_ai.provider.name": c.attrs["gen_ai.provider.name"],
          "gen_ai.request.model": c.attrs["gen_ai.request.model"],
        };
        if (r.kind === "llm_response") {
          const u = (d.usage ?? {}) as Record<string, unknown>;
          const a: Attributes = {
            "gen_ai.usage.input_tokens": num(u.input_tokens) ?? 0,
            "gen_ai.usage.output_tokens": num(u.output_tokens) ?? 0,
          };
          if (num(u.cache_read_input_tokens) !== undefined) {
            a["gen_ai.usage.cache_read.input_tokens"] = num(u.cache_read_input_tokens);
          }
          if (num(u.cache_creation_input_tokens) !== undefined) {
            a["gen_ai.usage.cache_creation.input_tokens"] = num(u.cache_creation_input_tokens);
          }
          if (num(u.thinking_tokens) !== undefined) {
            a["gen_ai.usage.reasoning.output_tokens"] = num(u.thinking_tokens);
          }
          if (str(d.model)) a["gen_ai.response.model"] = str(d.model);
          if (str(d.stop_reason)) a["gen_ai.response.finish_reasons"] = [str(d.stop_reason)!];
          if (this.captureContent && d.content !== undefined) {
            a["gen_ai.output.messages"] = JSON.stringify([
              { role: "assistant", parts: partsOf(d.content), finish_reason: str(d.stop_reason) ?? "" },
            ]);
          }
          c.span.setAttributes(a);
          if (a["gen_ai.response.model"]) metricAttrs["gen_ai.response.model"] = a["gen_ai.response.model"];
          this.#instruments?.tokens.record(a["gen_ai.usage.input_tokens"] as number, {
            ...metricAttrs,
            "gen_ai.token.type": "input",
          });
          this.#instruments?.tokens.record(a["gen_ai.usage.output_tokens"] as number, {
            ...metricAttrs,
            "gen_ai.token.type": "output",
          });
        } else {
          const text = str(d.error) ?? "the model call failed";
          const type = errorTypeOf(text);
          c.span.setAttribute("error.type", type);
          c.span.setStatus({ code: SpanStatusCode.ERROR, message: text });
          metricAttrs["error.type"] = type;
        }
        this.#instruments?.duration.record((end - c.start) / 1000, metricAttrs);
        this.#finish(c, end);
        return;
      }
      case "tool_call": {
        const d = json(r.data);
        const name = str(d.name) ?? "tool";
        const id = str(d.id) ?? "";
        const attrs: Attributes = {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": name,
          "gen_ai.tool.call.id": id,
          "gen_ai.tool.type": "function",
        };
        if (this.captureContent && d.input !== undefined) {
          attrs["gen_ai.tool.call.arguments"] = JSON.stringify(d.input);
        }
        s.tools.set(id, this.#begin(`execute_tool ${name}`, SpanKind.INTERNAL, s.turn, attrs));
        return;
      }
      case "tool_result": {
        const d = json(r.data);
        const id = str(d.id) ?? "";
        const t = s.tools.get(id);
        if (!t) return;
        s.tools.delete(id);
        if (this.captureContent && d.content !== undefined) {
          t.span.setAttribute(
            "gen_ai.tool.call.result",
            typeof d.content === "string" ? d.content : JSON.stringify(d.content),
          );
        }
        if (d.is_error === true) {
          t.span.setAttribute("error.type", "tool_error");
          t.span.setStatus({ code: SpanStatusCode.ERROR, message: str(d.content)?.slice(0, 256) });
        }
        const elapsed = num(d.elapsed_ms);
        this.#finish(t, elapsed !== undefined ? t.start + elapsed : now());
        return;
      }
    }
  }

  #closeSession(s: SessionState): void {
    const at = now();
    for (const t of s.tools.values()) this.#finish(t, at);
    if (s.chat) this.#finish(s.chat, at);
    if (s.turn) this.#finish(s.turn, s.turn.last);
  }

  start(name: string, kind: SpanKindName, attrs?: TraceAttrs, remoteParent?: string): TraceSpan {
    const remote = remoteParent !== undefined ? parseTraceparent(remoteParent) : undefined;
    let parent = this.#innermost();
    if (remote) {
      // the caller's span in another process: a parent that is never ended here
      const sc = {
        traceId: remote.traceId,
        spanId: remote.spanId,
        traceFlags: remote.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
        isRemote: true,
      };
      const at = now();
      parent = {
        span: trace.wrapSpanContext(sc),
        ctx: trace.setSpanContext(ROOT_CONTEXT, sc),
        start: at,
        ended: true,
        last: at,
      };
    }
    const o = this.#begin(name, KINDS[kind], parent, clean(attrs));
    return {
      set: (a) => o.span.setAttributes(clean(a)!),
      fail: (type, message) => {
        o.span.setAttribute("error.type", type);
        o.span.setStatus({ code: SpanStatusCode.ERROR, message });
      },
      end: () => this.#finish(o),
      traceparent: () => {
        const c = o.span.spanContext();
        return formatTraceparent(c.traceId, c.spanId, (c.traceFlags & TraceFlags.SAMPLED) !== 0);
      },
    };
  }

  /** The traceparent of the innermost open span. */
  traceparent(): string {
    const c = this.#innermost().span.spanContext();
    return formatTraceparent(c.traceId, c.spanId, (c.traceFlags & TraceFlags.SAMPLED) !== 0);
  }

  modelFetch(inner: typeof fetch, mask: (json: string) => string): typeof fetch {
    return async (input, init) => {
      const chat = this.#innermost() as Chat;
      const isChat = "attrs" in chat;
      if (isChat && this.captureContent) this.#inputContents(chat, init?.body, mask);
      const headers = new Headers(init?.headers);
      headers.set("traceparent", this.traceparent());
      const t0 = now();
      const res = await inner(input, { ...init, headers });
      if (!isChat || chat.ended) return res;
      try {
        const u = new URL(input instanceof Request ? input.url : String(input));
        chat.span.setAttributes({
          "server.address": u.hostname,
          "server.port": Number(u.port) || (u.protocol === "https:" ? 443 : 80),
        });
      } catch { /* not a URL: no address */ }
      if (!res.body) return res;
      let first = true;
      const tap = new TransformStream<Uint8Array, Uint8Array>({
        transform: (chunk, ctl) => {
          if (first) {
            first = false;
            const secs = (now() - t0) / 1000;
            this.#instruments?.firstChunk.record(secs, {
              "gen_ai.operation.name": "chat",
              "gen_ai.provider.name": chat.attrs["gen_ai.provider.name"],
              "gen_ai.request.model": chat.attrs["gen_ai.request.model"],
            });
            const head = new TextDecoder().decode(chunk.subarray(0, 2048));
            const id = /"id"\s*:\s*"([^"]{1,200})"/.exec(head);
            if (id && !chat.ended) chat.span.setAttribute("gen_ai.response.id", id[1]);
          }
          ctl.enqueue(chunk);
        },
      });
      return new Response(res.body.pipeThrough(tap), {
        status: res.status,
        statusText: res.statusText,
        headers: res.headers,
      });
    };
  }

  /** Puts the request's system instructions and input messages on its chat span, masked. */
  #inputContents(chat: Chat, body: unknown, mask: (json: string) => string): void {
    const c = requestContents(bodyJson(body));
    if (!c) return;
    if (c.system) chat.span.setAttribute("gen_ai.system_instructions", mask(JSON.stringify(c.system)));
    chat.span.setAttribute("gen_ai.input.messages", mask(JSON.stringify(c.messages)));
  }

  mcpDuration(seconds: number, attrs: TraceAttrs): void {
    this.#instruments?.mcp.record(seconds, clean(attrs));
  }

  /** Ends every open span and the run's span with the outcome. */
  end(outcome: Outcome): void {
    for (const s of this.#sessions.values()) this.#closeSession(s);
    this.#sessions.clear();
    const at = now();
    for (let i = this.#open.length - 1; i >= 1; i--) this.#finish(this.#open[i], at);
    const span = this.#root.span;
    span.setAttribute("agent_block.outcome", outcome.status);
    if (outcome.status === "raised") {
      span.setAttribute("error.type", outcome.code ?? "raised");
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.message });
    } else if (outcome.status === "timed_out" || outcome.status === "cancelled") {
      span.setAttribute("error.type", outcome.status);
      span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.status });
    }
    this.#instruments?.runs.add(1, { "agent_block.outcome": outcome.status });
    this.#finish(this.#root, at);
  }
}
