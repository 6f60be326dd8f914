/**
 * The OTLP/HTTP export of a process's runs: a tracer (`lean_tracer.ts`) and a meter provider built from
 * `TelemetrySettings`, one per distinct settings in the process (the MCP server and `serve` run
 * many blocks: they share it), flushed at the end of every run within the settings' bound.
 *
 * Layer: obs. Loaded only by `import()` from the runner when a run has telemetry settings: a run
 * without them never loads this module or any `@opentelemetry/*` package (held by a test).
 *
 * Why the official `@opentelemetry/*` SDK and not Deno's built-in OpenTelemetry:
 * - Deno's is configured from the process's `OTEL_*` variables when the runtime starts (and
 *   needs `OTEL_DENO=true` then); a compiled agent-block binary takes that configuration at
 *   compile time (an open Deno issue), and a process that runs many blocks (MCP server, `serve`)
 *   cannot give one run other settings than the next. Here the settings travel with the run.
 * - It exports everything the process does (every `fetch`, `Deno.serve`), not the run's record.
 * - The SDK packages used are small and pure (`sdk-metrics`, `resources`, and `otlp-transformer`
 *   for the official JSON encodings and the protobuf encoding of metrics; spans are recorded by
 *   `lean_tracer.ts`, which says why not by `sdk-trace`, and encoded in protobuf by
 *   `otlp_proto.ts`, byte for byte the official encoding at a quarter of its cost); none of them
 *   reads the process environment. The exporters' own packages (`exporter-*-otlp-*`) are not used: their Node
 *   transport reads `OTEL_*` from the process environment and retries on timers of its own. The
 *   transport here is `fetch` with one bounded attempt (`OtlpPoster`).
 * An embedder that already has a provider (Deno's built-in one included, which hooks
 * `@opentelemetry/api`) passes it to the SDK instead (`RunHandles.tracerProvider`): nothing here
 * is used then.
 *
 * Invariants:
 * - No timers: spans wait in memory until the run ends (or 512 are waiting, then they go in the
 *   background); metrics are collected and sent at each run's end. A process's exit is never
 *   held up by telemetry except by the bounded flush at a run's end.
 * - A flush takes at most `timeoutMs` (the request is aborted then); an unreachable or slow
 *   collector never fails a run, and says so once per process (per settings) on the stderr of
 *   the run that met it first, naming the URL.
 * - The export requests carry the settings' headers and nothing else of the run.
 */
import type { TracerProvider } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import { LeanTracer } from "./lean_tracer.ts";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  JsonMetricsSerializer,
  JsonTraceSerializer,
  ProtobufMetricsSerializer,
} from "@opentelemetry/otlp-transformer";
import { encodeTraces } from "./otlp_proto.ts";
import type { TelemetrySettings } from "./settings.ts";
import { VERSION } from "../../version.ts";

/** Spans waiting before a background export starts. */
const BATCH = 512;

/** POSTs OTLP payloads to one URL, each within the bound; failures go to `warn` (told once per export). */
class OtlpPoster {
  constructor(
    private readonly url: string,
    private readonly settings: TelemetrySettings,
    private readonly warn: (message: string) => void,
  ) {}

  /** Sends `body`; never rejects. */
  async post(body: Uint8Array | undefined, deadline: number): Promise<void> {
    if (!body || body.length === 0) return;
    const ms = Math.max(1, deadline - performance.now());
    const ac = new AbortController();
    // the message names the bound (what the user set), not the part of it left for this request
    const timer = setTimeout(
      () => ac.abort(new Error(`no answer within ${this.settings.timeoutMs} ms`)),
      ms,
    );
    try {
      const res = await fetch(this.url, {
        method: "POST",
        headers: {
          ...this.settings.headers,
          "content-type": this.settings.protocol === "http/json"
            ? "application/json"
            : "application/x-protobuf",
        },
        body: body as BodyInit,
        signal: ac.signal,
      });
      await res.body?.cancel();
      if (!res.ok) this.#fail(`HTTP ${res.status}`);
    } catch (e) {
      const err = e as Error & { cause?: Error };
      this.#fail(
        ac.signal.aborted ? String((ac.signal.reason as Error).message) : err.cause?.message ?? err.message,
      );
    } finally {
      clearTimeout(timer);
    }
  }

  #fail(why: string) {
    this.warn(
      `cannot export telemetry to ${new URL(this.url).origin}${new URL(this.url).pathname}: ${why} ` +
        `(telemetry of this process may be lost; runs go on)`,
    );
  }
}

/** Keeps ended spans until a flush (or a full batch); exports them through `send`. */
class SpanBuffer {
  #waiting: ReadableSpan[] = [];
  #inflight = new Set<Promise<void>>();
  constructor(
    private readonly send: (spans: ReadableSpan[], deadline: number) => Promise<void>,
    private readonly timeoutMs: number,
  ) {}

  /** Takes one ended span. */
  readonly add = (span: ReadableSpan): void => {
    this.#waiting.push(span);
    if (this.#waiting.length >= BATCH) this.#track(this.#drain(performance.now() + this.timeoutMs));
  };
  #drain(deadline: number): Promise<void> {
    const spans = this.#waiting;
    this.#waiting = [];
    return spans.length ? this.send(spans, deadline) : Promise.resolve();
  }
  #track(p: Promise<void>) {
    this.#inflight.add(p);
    p.finally(() => this.#inflight.delete(p));
  }
  /** Exports what waits and waits for what is in flight, all within the bound. */
  async flush(): Promise<void> {
    const deadline = performance.now() + this.timeoutMs;
    await Promise.all([this.#drain(deadline), ...this.#inflight]);
  }
}

/** A metric reader with no timer: collects and exports when flushed. */
class RunEndMetricReader extends MetricReader {
  constructor(private readonly send: (reader: RunEndMetricReader) => Promise<void>) {
    super();
  }
  protected override onForceFlush(): Promise<void> {
    return this.send(this);
  }
  protected override onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The providers of one settings, and their bounded flush. */
export interface OtelExport {
  /** Makes the runs' spans. */
  tracerProvider: TracerProvider;
  /** Makes the runs' metrics (absent without a metrics endpoint). */
  meterProvider?: MeterProvider;
  /** Sends what waits, within the settings' bound; never rejects. */
  flush(): Promise<void>;
}

const cache = new Map<string, OtelExport>();

/**
 * The export of `settings` (the same object for equal settings in one process).
 * @param warn told once per endpoint when the collector cannot be reached
 */
export function otelExport(settings: TelemetrySettings, warn: (message: string) => void): OtelExport {
  const key = JSON.stringify(settings);
  let e = cache.get(key);
  if (!e) cache.set(key, e = build(settings, warn));
  return e;
}

function build(settings: TelemetrySettings, warnEvery: (message: string) => void): OtelExport {
  let told = false;
  const warn = (m: string) => {
    if (told) return;
    told = true;
    warnEvery(m);
  };
  const json = settings.protocol === "http/json";
  const resource = resourceFromAttributes({
    "service.name": settings.serviceName,
    "service.version": VERSION,
    "telemetry.sdk.name": "opentelemetry",
    "telemetry.sdk.language": "js",
    ...settings.resourceAttributes,
  });
  const traces = new OtlpPoster(settings.tracesEndpoint, settings, warn);
  const encode = json ? (spans: ReadableSpan[]) => JsonTraceSerializer.serializeRequest(spans) : encodeTraces;
  const buffer = new SpanBuffer(
    (spans, deadline) => traces.post(encode(spans), deadline),
    settings.timeoutMs,
  );
  const tracerProvider = new LeanTracer(resource, { name: "agent-block", version: VERSION }, buffer.add);
  let meterProvider: MeterProvider | undefined;
  let reader: RunEndMetricReader | undefined;
  if (settings.metricsEndpoint) {
    const metrics = new OtlpPoster(settings.metricsEndpoint, settings, warn);
    const metricSerializer = json ? JsonMetricsSerializer : ProtobufMetricsSerializer;
    reader = new RunEndMetricReader(async (r) => {
      const deadline = performance.now() + settings.timeoutMs;
      const { resourceMetrics } = await r.collect({ timeoutMillis: settings.timeoutMs });
      if (resourceMetrics.scopeMetrics.every((s) => s.metrics.length === 0)) return;
      await metrics.post(metricSerializer.serializeRequest(resourceMetrics), deadline);
    });
    meterProvider = new MeterProvider({ resource, readers: [reader] });
  }
  return {
    tracerProvider,
    meterProvider,
    flush: async () => {
      await Promise.all([
        buffer.flush(),
        reader?.forceFlush({ timeoutMillis: settings.timeoutMs }).catch(() => undefined),
      ]);
    },
  };
}
