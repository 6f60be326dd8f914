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
 */
import type { Outcome } from "../outcome.ts";
import type { BlockRunner } from "../runner/runner.ts";
import { defaultFlowPaths, type FlowEdge, runFlowWith } from "../flows/api.ts";
import type { Json } from "../flows/path.ts";
import { AgentBlockError } from "../errors.ts";

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
}

/** Runs the flow of a job to its outcome; never rejects. */
export async function runFlowJob(o: FlowJobRun): Promise<Outcome> {
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
