/**
 * Opens and closes a run's trace for the in-process runner: picks the tracer (the embedder's
 * provider from `RunHandles`, else the OTLP export of the request's `telemetry` settings), parents
 * the run span on the request's correlation (`traceId` + `parentSpan`, a W3C pair), and at the
 * run's end ends every span and flushes the export within its bound.
 *
 * Layer: runner (a part of `in_process.ts`, imported by it with `import()` only for a run that is
 * traced; the OpenTelemetry packages load with it, never for an untraced run).
 *
 * Invariants: `finish` never rejects and takes at most the settings' `timeoutMs` (an embedder's
 * provider is the embedder's to flush: nothing is awaited for it); the run span's trace id is the
 * one the run stamps on its kernel sessions.
 */
import type { Meter, Tracer } from "@opentelemetry/api";
import { OtelRunTrace } from "../obs/otel/tracer.ts";
import {
  type OtelMeterProvider,
  type OtelTracerProvider,
  parseTraceparent,
  type TelemetrySettings,
  type TraceParent,
} from "../obs/otel/settings.ts";
import type { Outcome } from "../outcome.ts";
import { VERSION } from "../version.ts";
import type { Correlation } from "./runner.ts";

/** A run's open trace and how to close it. */
export interface OpenTrace {
  /** The trace the run's host modules feed. */
  trace: OtelRunTrace;
  /** Ends the spans with `outcome` and flushes (bounded; never rejects). */
  finish(outcome: Outcome): Promise<void>;
}

/** The caller's span from a correlation's W3C ids, when both are there and well formed. */
export function parentOf(c: Correlation | undefined): TraceParent | undefined {
  if (!c?.traceId || !c.parentSpan) return undefined;
  return parseTraceparent(`00-${c.traceId}-${c.parentSpan}-01`);
}

/** Opens the trace of one run. */
export async function openTrace(o: {
  name: string;
  correlation?: Correlation;
  labels?: Record<string, string>;
  settings?: TelemetrySettings;
  tracerProvider?: OtelTracerProvider;
  meterProvider?: OtelMeterProvider;
  warn: (message: string) => void;
}): Promise<OpenTrace> {
  let flush: (() => Promise<void>) | undefined;
  let tracerProvider: OtelTracerProvider | undefined = o.tracerProvider;
  let meterProvider: OtelMeterProvider | undefined = o.meterProvider;
  if (!tracerProvider) {
    const ex = (await import("../obs/otel/export.ts")).otelExport(o.settings!, o.warn);
    tracerProvider = ex.tracerProvider;
    meterProvider = ex.meterProvider;
    flush = ex.flush;
  }
  const attributes: Record<string, string> = {};
  if (o.correlation?.runId) attributes["agent_block.run.id"] = o.correlation.runId;
  if (o.correlation?.agentId) attributes["gen_ai.agent.id"] = o.correlation.agentId;
  for (const [k, v] of Object.entries(o.labels ?? {})) attributes[`agent_block.label.${k}`] = v;
  const trace = new OtelRunTrace({
    tracer: tracerProvider.getTracer("agent-block", VERSION) as Tracer,
    meter: meterProvider?.getMeter("agent-block", VERSION) as Meter | undefined,
    name: o.name,
    parent: parentOf(o.correlation),
    captureContent: o.settings?.captureContent,
    attributes,
  });
  return {
    trace,
    finish: async (outcome) => {
      try {
        trace.end(outcome);
      } catch (e) {
        o.warn(`ending the run's trace failed: ${(e as Error)?.message ?? e}`);
      }
      await flush?.().catch((e) =>
        o.warn(`flushing the run's telemetry failed: ${(e as Error)?.message ?? e}`)
      );
    },
  };
}
