/**
 * A lean `@opentelemetry/api` tracer for agent-block's own export: its spans are plain records in
 * the shape of the SDK's `ReadableSpan`, handed to a sink when they end, and encoded by the
 * official OTLP serializers (`@opentelemetry/otlp-transformer`).
 *
 * Layer: obs. Loaded with `export.ts` only. Why not the SDK's `TracerProvider`: a run's spans are
 * made by our code alone (never by instrumentation libraries), with attributes we already typed,
 * so the SDK's per-span machinery — attribute validation and copying, span processors' fan-out,
 * its self-observability counters, context objects per call — was most of the cost of tracing a
 * fast run (`deno task bench otel`: about 25 µs a span against about 1 µs here). The encoding
 * is the official one: `otlp-transformer`'s JSON, and for protobuf `otlp_proto.ts`, which a test
 * holds byte for byte to the official serializer.
 *
 * Invariants: trace and span ids are random (`crypto.getRandomValues`), 16 and 8 bytes, never all
 * zero; a span whose parent was not sampled is not recorded (the W3C sampled flag is honoured);
 * attributes are kept as given (the callers pass only strings, numbers, booleans and string
 * arrays, and never `undefined`; the object given at the start becomes the span's own); a span
 * ends once.
 */
import {
  type Attributes,
  type AttributeValue,
  type Context,
  type HrTime,
  type Link,
  type Span,
  type SpanContext,
  SpanKind,
  type SpanOptions,
  type SpanStatus,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Tracer,
  type TracerProvider,
} from "@opentelemetry/api";
import type { Resource } from "@opentelemetry/resources";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** Random ids, drawn in blocks. */
class Ids {
  #pool = new Uint8Array(4096);
  #at = this.#pool.length;
  hex(bytes: number): string {
    for (;;) {
      if (this.#at + bytes > this.#pool.length) {
        crypto.getRandomValues(this.#pool);
        this.#at = 0;
      }
      let s = "", zero = true;
      for (let i = 0; i < bytes; i++) {
        const b = this.#pool[this.#at++];
        if (b !== 0) zero = false;
        s += HEX[b];
      }
      if (!zero) return s;
    }
  }
}

const hr = (ms: number): HrTime => {
  const s = Math.floor(ms / 1000);
  return [s, Math.round((ms - s * 1000) * 1e6)];
};

const toMs = (t: unknown): number => {
  if (typeof t === "number") return t;
  if (t instanceof Date) return t.getTime();
  if (Array.isArray(t)) return t[0] * 1000 + t[1] / 1e6;
  return performance.timeOrigin + performance.now();
};

/** One span: writable through the API while open, a `ReadableSpan` once ended. */
class LeanSpan implements Span, ReadableSpan {
  readonly attributes: Attributes;
  readonly links: Link[] = [];
  readonly events: [] = [];
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  status: SpanStatus = { code: SpanStatusCode.UNSET };
  readonly startTime: HrTime;
  endTime: HrTime = [0, 0];
  duration: HrTime = [0, 0];
  ended = false;
  readonly #startMs: number;

  constructor(
    readonly name: string,
    readonly kind: SpanKind,
    readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    start: number,
    attributes: Attributes | undefined,
    private readonly tracer: LeanTracer,
  ) {
    this.#startMs = start;
    this.startTime = hr(start);
    this.attributes = attributes ?? {}; // the callers hand over a fresh object (see the header)
  }

  get resource(): Resource {
    return this.tracer.resource;
  }
  get instrumentationScope(): { name: string; version?: string } {
    return this.tracer.scope;
  }

  spanContext = (): SpanContext => this.context;

  setAttribute(key: string, value: AttributeValue): this {
    if (!this.ended && value !== undefined) this.attributes[key] = value;
    return this;
  }
  setAttributes(attributes: Attributes): this {
    if (!this.ended) {
      for (const k in attributes) if (attributes[k] !== undefined) this.attributes[k] = attributes[k];
    }
    return this;
  }
  addEvent(): this {
    return this;
  }
  addLink(link: Link): this {
    this.links.push(link);
    return this;
  }
  addLinks(links: Link[]): this {
    this.links.push(...links);
    return this;
  }
  setStatus(status: SpanStatus): this {
    if (!this.ended) this.status = status;
    return this;
  }
  updateName(): this {
    return this;
  }
  end(endTime?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    const end = Math.max(toMs(endTime), this.#startMs);
    this.endTime = hr(end);
    this.duration = hr(end - this.#startMs);
    if (this.context.traceFlags & TraceFlags.SAMPLED) this.tracer.sink(this);
  }
  isRecording(): boolean {
    return !this.ended;
  }
  recordException(): void {}
}

/** The tracer: makes `LeanSpan`s and hands each ended, sampled one to `sink`. */
export class LeanTracer implements Tracer, TracerProvider {
  readonly #ids = new Ids();
  /**
   * A tracer whose spans carry `resource` and `scope`.
   * @param sink takes each ended, sampled span
   */
  constructor(
    readonly resource: Resource,
    readonly scope: { name: string; version?: string },
    readonly sink: (span: ReadableSpan) => void,
  ) {}

  /** The provider's one tracer (itself). */
  getTracer(): Tracer {
    return this;
  }

  startSpan(name: string, options: SpanOptions = {}, context?: Context): Span {
    const parent = options.root || !context ? undefined : trace.getSpanContext(context);
    const valid = parent !== undefined && trace.isSpanContextValid(parent);
    const ctx: SpanContext = {
      traceId: valid ? parent!.traceId : this.#ids.hex(16),
      spanId: this.#ids.hex(8),
      traceFlags: valid ? parent!.traceFlags & TraceFlags.SAMPLED : TraceFlags.SAMPLED,
    };
    return new LeanSpan(
      name,
      options.kind ?? SpanKind.INTERNAL,
      ctx,
      valid ? parent : undefined,
      toMs(options.startTime),
      options.attributes,
      this,
    );
  }

  /**
   * The lean path of `startSpan` for callers that hold their parent's span context already (the
   * run's tracer, `tracer.ts`): no `Context` objects, no new check of ids this tracer made or a
   * caller parsed. `start` is in epoch milliseconds; `attributes` becomes the span's own.
   */
  startChild(
    name: string,
    kind: SpanKind,
    parent: SpanContext | undefined,
    start: number,
    attributes: Attributes | undefined,
  ): Span {
    const ctx: SpanContext = {
      traceId: parent ? parent.traceId : this.#ids.hex(16),
      spanId: this.#ids.hex(8),
      traceFlags: parent ? parent.traceFlags & TraceFlags.SAMPLED : TraceFlags.SAMPLED,
    };
    return new LeanSpan(name, kind, ctx, parent, start, attributes, this);
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: unknown[]): ReturnType<F> {
    const fn = rest[rest.length - 1] as F;
    const options = (rest.length > 1 ? rest[0] : undefined) as SpanOptions | undefined;
    const context = (rest.length > 2 ? rest[1] : undefined) as Context | undefined;
    return fn(this.startSpan(name, options, context)) as ReturnType<F>;
  }
}
