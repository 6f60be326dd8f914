/**
 * The server side of an MCP request a process serves (`agent-block mcp`'s `run_block`): a SERVER
 * span `tools/call <tool>` under the caller's `traceparent`, whose id the run it starts takes as
 * its parent, and the request's duration in `mcp.server.operation.duration`.
 *
 * Layer: obs. Loaded with `import()` by the MCP server only when it has telemetry settings (it
 * brings `export.ts` and the OpenTelemetry packages with it).
 *
 * Invariants: the span is exported in the background after it ends (the export's bound applies;
 * an unreachable collector is told once, as for runs), so a tool result is never held up by the
 * collector; `end` is idempotent.
 */
import { remoteParentContext } from "./remote_parent.ts";
import { type Histogram, type MeterProvider, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { otelExport } from "./export.ts";
import type { TelemetrySettings, TraceParent } from "./settings.ts";
import { VERSION } from "../../version.ts";

const histograms = new WeakMap<MeterProvider, Histogram>();
/** The `mcp.server.operation.duration` histogram of `provider` (made once). */
function durationOf(provider: MeterProvider): Histogram {
  let h = histograms.get(provider);
  if (!h) {
    h = provider.getMeter("agent-block", VERSION).createHistogram("mcp.server.operation.duration", {
      unit: "s",
      description: "Duration of an MCP request as seen from the server",
    });
    histograms.set(provider, h);
  }
  return h;
}

/** An open server span. */
export interface ServerSpan {
  /** The span's trace id. */
  traceId: string;
  /** The span's id (the parent of the run it starts). */
  spanId: string;
  /** Ends it (`error`: the request failed, its `error.type`). */
  end(error?: string): void;
}

/** Opens the server span of one MCP request. */
export function serverSpan(
  settings: TelemetrySettings,
  o: { method: string; tool: string; parent?: TraceParent; attributes?: Record<string, string> },
  warn: (message: string) => void,
): ServerSpan {
  const ex = otelExport(settings, warn);
  const tracer = ex.tracerProvider.getTracer("agent-block", VERSION);
  const ctx = remoteParentContext(o.parent);
  const attrs = { "mcp.method.name": o.method, "gen_ai.tool.name": o.tool, ...o.attributes };
  const t0 = performance.now();
  const span = tracer.startSpan(
    `${o.method} ${o.tool}`,
    { kind: SpanKind.SERVER, attributes: { ...attrs } },
    ctx,
  );
  const duration = ex.meterProvider && durationOf(ex.meterProvider);
  let ended = false;
  const c = span.spanContext();
  return {
    traceId: c.traceId,
    spanId: c.spanId,
    end: (error) => {
      if (ended) return;
      ended = true;
      if (error !== undefined) {
        span.setAttribute("error.type", error);
        span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      }
      span.end();
      duration?.record(
        (performance.now() - t0) / 1000,
        error === undefined ? attrs : { ...attrs, "error.type": error },
      );
      void ex.flush();
    },
  };
}
