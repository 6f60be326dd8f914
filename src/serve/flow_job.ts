/**
 * A flow job's run: the job's Blueprint run to its end, told as the `Outcome` every other run of
 * the job manager is recorded by.
 *
 * Owns the mapping: a completed flow `returned` (the value: `{"flow_run", "ctx"}` as JSON, so the
 * run's result file holds the final context), a waiting one `deferred` (exit 75, the reason
 * naming the step and the flow run to resume), a failed one `raised` (naming the failed step), a
 * stopped one `cancelled`; past the job's `timeout` the flow is aborted and the run is
 * `timed_out`. A Blueprint that does not compile is `raised` with code `config`.
 *
 * Invariant: the flow is recorded in the project's kernel database like a `flow run` from the
 * command line, so `agent-block flow resume` continues a job's waiting or failed flow.
 *
 * Tracing: with telemetry settings (the manager's `OTEL_*`), the flow run is a span
 * `invoke_workflow <flow file>` (`src/obs/otel/workflow_span.ts`, imported only then) and every
 * step run is traced with the same settings as its child (`Correlation.traceId` / `parentSpan`),
 * so a job's flow is one trace; the span ends with the run's outcome and is flushed within the
 * settings' bound before the outcome is returned.
 */
import type { Outcome } from "../outcome.ts";
import type { BlockRunner } from "../runner/runner.ts";
import { defaultFlowPaths, type FlowEdge, runFlowWith } from "../flows/api.ts";
import type { Json } from "../flows/path.ts";
import { AgentBlockError } from "../errors.ts";
import type { TelemetrySettings } from "../obs/otel/settings.ts";
import { basename } from "node:path";

/** What a flow job's run needs. */
export interface FlowJobRun {
  /** The Blueprint (absolute). */
  flow: string;
  /** The initial context. */
  init?: Record<string, unknown>;
  /** The project root. */
  projectRoot: string;
  /** The steps' environment. */
  env: Readonly<Record<string, string>>;
  /** Runs the steps. */
  runner: BlockRunner;
  /** The edge's reading of the home and kernel paths of the steps' environment (`FlowEdge.paths`). */
  paths?: FlowEdge["paths"];
  /** Wall-clock limit, ms. */
  timeoutMs: number;
  /** Stops the run. */
  signal: AbortSignal;
  /** OpenTelemetry export of the flow run and its steps; absent: none. */
  telemetry?: TelemetrySettings;
  /** The job run's id and job name (attributes of the flow run's span). */
  ids?: { runId: string; job: string };
  /** Told once when the collector cannot be reached. */
  warn?: (message: string) => void;
}

/** Runs the flow of a job to its outcome; never rejects. */
export async function runFlowJob(o: FlowJobRun): Promise<Outcome> {
  if (!o.telemetry) return await flowOutcome(o);
  let span;
  try {
    span = (await import("../obs/otel/workflow_span.ts")).workflowSpan(o.telemetry, {
      name: basename(o.flow),
      attributes: o.ids
        ? { "agent_block.run.id": o.ids.runId, "agent_block.label.job": o.ids.job }
        : undefined,
    }, o.warn ?? (() => {}));
  } catch (e) {
    o.warn?.(`cannot trace the flow run: ${(e as Error)?.message ?? e}`);
    return await flowOutcome(o);
  }
  const { traceId, spanId } = span;
  const telemetry = o.telemetry;
  const outcome = await flowOutcome({
    ...o,
    runner: {
      run: (request, hooks) =>
        o.runner.run({
          ...request,
          telemetry: request.telemetry ?? telemetry,
          correlation: { ...request.correlation, traceId, parentSpan: spanId },
        }, hooks),
    },
  });
  await span.end(outcome);
  return outcome;
}

async function flowOutcome(o: FlowJobRun): Promise<Outcome> {
  const stop = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stop.abort("the job's timeout");
  }, o.timeoutMs);
  const onAbort = () => stop.abort(o.signal.reason);
  o.signal.addEventListener("abort", onAbort, { once: true });
  try {
    const r = await runFlowWith(
      {
        runner: () => o.runner,
        env: () => ({ ...o.env }),
        cwd: () => o.projectRoot,
        paths: o.paths ?? defaultFlowPaths,
      },
      o.flow,
      { projectRoot: o.projectRoot, signal: stop.signal, ...(o.init ? { initCtx: o.init as Json } : {}) },
    );
    switch (r.status) {
      case "completed":
        return { status: "returned", value: JSON.stringify({ flow_run: r.runId, ctx: r.ctx }) };
      case "waiting":
        return {
          status: "deferred",
          reason: `flow run ${r.runId} waits at step '${r.waiting!.step}': ${r.waiting!.reason}`,
        };
      case "cancelled":
        return timedOut
          ? { status: "timed_out", seconds: o.timeoutMs / 1000 }
          : { status: "cancelled", reason: r.error?.message ?? "stopped" };
      default:
        return {
          status: "raised",
          code: "script",
          message: `flow run ${r.runId} failed${
            r.error?.failed_step ? ` at step '${r.error.failed_step}'` : ""
          }: ${r.error?.message}`,
          traceback: "",
        };
    }
  } catch (e) {
    const message = e instanceof AgentBlockError
      ? e.message
      : `internal failure: ${(e as Error)?.message ?? e}`;
    return { status: "raised", code: "config", message, traceback: "" };
  } finally {
    clearTimeout(timer);
    o.signal.removeEventListener("abort", onAbort);
  }
}
