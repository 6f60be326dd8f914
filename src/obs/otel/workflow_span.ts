/**
 * The span of a flow run that a process drives outside any block run (`serve`'s flow jobs):
 * `invoke_workflow <flow>` (INTERNAL, `gen_ai.operation.name` = `invoke_workflow`), whose ids the
 * flow's step runs take as their parent (`Correlation.traceId` / `parentSpan`), so every step's
 * `invoke_agent` span, and all under it, is its child in one trace.
 *
 * Layer: obs. Loaded with `import()` only when the flow run has telemetry settings (it brings
 * `export.ts` and the OpenTelemetry packages with it).
 *
 * Invariants: the span's status follows the flow run's outcome (ERROR with `error.type` for
 * anything but `returned`, `deferred` and an exit with code 0); `end` is idempotent, never rejects, and waits for the
 * export's flush at most the settings' bound (an unreachable collector is told once, as for runs).
 */
import { remoteParentContext } from "./remote_parent.ts";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { otelExport } from "./export.ts";
import type { TelemetrySettings, TraceParent } from "./settings.ts";
import type { Outcome } from "../../outcome.ts";
import { VERSION } from "../../version.ts";

/** An open flow-run span. */
export interface WorkflowSpan {
  /** The span's trace id (32 hex digits). */
  traceId: string;
  /** The span's id (the parent of the step runs). */
  spanId: string;
  /** Ends it with the flow run's `outcome` (and more attributes); flushes within the bound. */
  end(outcome: Outcome, attributes?: Record<string, string>): Promise<void>;
}

/** Opens the span of one flow run named `name` (under `parent`, the caller's span, when given). */
export function workflowSpan(
  settings: TelemetrySettings,
  o: { name: string; parent?: TraceParent; attributes?: Record<string, string> },
  warn: (message: string) => void,
): WorkflowSpan {
  const ex = otelExport(settings, warn);
  const tracer = ex.tracerProvider.getTracer("agent-block", VERSION);
  const ctx = remoteParentContext(o.parent);
  const span = tracer.startSpan(`invoke_workflow ${o.name}`, {
    kind: SpanKind.INTERNAL,
    attributes: {
      "gen_ai.operation.name": "invoke_workflow",
      "agent_block.flow.name": o.name,
      ...o.attributes,
    },
  }, ctx);
  const c = span.spanContext();
  let ended: Promise<void> | undefined;
  return {
    traceId: c.traceId,
    spanId: c.spanId,
    end: (outcome, attributes) =>
      ended ??= (async () => {
        if (attributes) span.setAttributes(attributes);
        span.setAttribute("agent_block.outcome", outcome.status);
        const ok = outcome.status === "returned" || outcome.status === "deferred" ||
          (outcome.status === "exited" && outcome.code === 0);
        if (!ok) {
          span.setAttribute(
            "error.type",
            outcome.status === "raised" ? outcome.code ?? "raised" : outcome.status,
          );
          span.setStatus({
            code: SpanStatusCode.ERROR,
            message: outcome.status === "raised" ? outcome.message : outcome.status,
          });
        }
        span.end();
        await ex.flush().catch(() => undefined);
      })(),
  };
}
