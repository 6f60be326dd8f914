/**
 * The in-process `BlockRunner`: the block runs in this process, through the runtime's `runBlock`.
 * The one in-process run loop: the SDK's `runConfig`, the CLI's run path, `agent-block test` and
 * embedders all come through here.
 *
 * Layer: runner. Owns the mapping from a `RunRequest` to the runtime's `RunSpec` (prompt and
 * context files read against the run's cwd, limits in bytes, typed stores, correlation ids, the
 * mesh), the run's wall-clock limit (`WallClock`), the bus with its artifact tap, and the run's
 * event stream: the runtime's events (kernel commits, MCP connects and calls), plus
 * `session_open` and `artifact`, then exactly one `end` carrying the outcome — for a run that
 * never started too. The report is folded from that stream (`ReportFold`).
 *
 * What cannot cross a process boundary is this runner's, not the request's (`InProcessOptions`):
 * output sinks, extra host modules (an embedder's host tools), an injected `fetch`, a `BusHost`
 * with an embedder's handlers. A runner given a bus serves one run at a time (the SDK makes one
 * runner per run); one without runs any number side by side.
 *
 * Invariants:
 * - The outcome is `runBlock`'s, unchanged, except when the runner's own limit ended the run:
 *   then it is `timed_out`. The limit aborts the run like the signal does, so it takes effect at
 *   the next point where Lua waits for the host, or within about 0.1 s of Lua computing.
 * - The run's settings are the request's `settings`, else what the edge's `envSettings` parses
 *   from the request's `env`, else every default: this runner parses no `AGENT_BLOCK_*` variable.
 * - A request it cannot honour (`sandbox`: only a process can be confined; an unreadable prompt
 *   file; a malformed setting in its environment) and anything the runtime throws (a bug) are a `raised` outcome with code `config`,
 *   never a rejection.
 * - A traced run (the request's `telemetry`, or the runner's `tracerProvider`; `traced.ts`, loaded
 *   only then) has its spans ended and flushed before its `end` event, whatever the outcome
 *   (a raise, the timeout, a cancel such as SIGTERM), within the export's bound; its trace id
 *   replaces `AGENT_BLOCK_TRACE_ID`, so every kernel session of the run names the trace.
 * - Correlation ids given in the request go to the run typed (`RunSpec.correlationIds`, over the
 *   ids the edge read from the environment, which every face stamps its records with) and into
 *   its environment as `AGENT_BLOCK_TRACE_ID`, `_RUN_ID`, `_AGENT_ID` and `_AGENT_NAME`, for the
 *   processes the run starts.
 */
import { resolve } from "node:path";
import { busCore, type BusEvent, BusHost } from "../host/bus.ts";
import { runBlock, type RunSpec } from "../runtime/run.ts";
import { notStarted, type Outcome } from "../outcome.ts";
import { NO_SETTINGS, type RunSettings } from "../run_settings.ts";
import { correlationVariable, RUN_CORRELATION_IDS } from "../correlation.ts";
import { fanOut } from "../obs/run_events.ts";
import { writeStderr } from "../obs/log.ts";
import {
  ARTIFACT_KIND,
  type BlockRunner,
  cancelSignal,
  ReportFold,
  type RunHandles,
  type RunHooks,
  runName,
  type RunReport,
  type RunRequest,
  type RunText,
} from "./runner.ts";
import type { OpenTrace } from "./traced.ts";
import { WallClock } from "./wall_clock.ts";

/** What an in-process runner fixes for all its runs (the handles; see `RunHandles`). */
export interface InProcessOptions extends RunHandles {
  /**
   * Subscribes to the connections the sandbox's network proxy refused (`RunSpec.netDenials`):
   * set only by the CLI's confined runtime stage under `--sandbox-net allow-list`.
   */
  netDenials?: RunSpec["netDenials"];
  /**
   * The HTTP proxy the run's mesh connection goes through (`RunSpec.netProxy`): set only by the
   * CLI's confined runtime stage under `--sandbox-net allow-list` (its bridge to the proxy).
   */
  netProxy?: string;
  /**
   * The replay memory of the run's NATS mesh connection (`RunSpec.meshSeenIds`): set only by the
   * CLI's confined runtime stage, whose launcher keeps it (`src/clients/mesh/seen_remote.ts`).
   */
  meshSeenIds?: RunSpec["meshSeenIds"];
  /**
   * The edge's parser of a run environment's `AGENT_BLOCK_*` variables (`settingsFromEnv` of
   * `src/config/env_settings.ts`), for a request that carries no `settings` (one built below the
   * edge: a flow's step, a served tool call). It runs on the request's `env`; what it throws (a
   * malformed variable) is a run that never started. Absent: such a request runs with every
   * default. The runner itself parses no variable.
   */
  envSettings?: (env: Readonly<Record<string, string>>) => RunSettings;
}

async function readText(
  field: string,
  source: RunText | undefined,
  cwd: string,
): Promise<string | undefined> {
  if (source === undefined || typeof source === "string") return source;
  try {
    return await Deno.readTextFile(resolve(cwd, source.file));
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
    throw new Error(`cannot read the ${field} file ${source.file}: ${why}`);
  }
}

/** Runs blocks in this process. */
export class InProcessRunner implements BlockRunner {
  /**
   * A runner with `options` for every run.
   * @param options sinks, modules, fetch, bus and default limits shared by the runs
   */
  constructor(private readonly options: InProcessOptions = {}) {}

  /** Runs `request` to its report; `hooks.observe` sees its events, `end` last. */
  async run(request: RunRequest, hooks?: RunHooks): Promise<RunReport> {
    const o = this.options;
    const started = performance.now();
    const stderr = o.stderr ?? writeStderr;
    const fold = new ReportFold();
    // Only a watched run hands the runtime an observer: unwatched, no kernel row is decoded.
    const watched = hooks?.observe !== undefined;
    const observe = watched
      ? fanOut(
        [fold.observe, hooks!.observe!],
        (m) => stderr(new TextEncoder().encode(`[warn] agent-block: ${m}\n`)),
      )!
      : fold.observe;
    const warn = (m: string) => stderr(new TextEncoder().encode(`[warn] agent-block: ${m}\n`));
    // A traced run only (telemetry settings, or the embedder's provider) loads OpenTelemetry.
    let traced: OpenTrace | undefined;
    const end = async (outcome: Outcome): Promise<RunReport> => {
      await traced?.finish(outcome); // bounded: a dead collector costs at most its timeout
      observe({ type: "end", outcome, ms: performance.now() - started });
      return fold.report(outcome);
    };
    if (request.sandbox) {
      return end(notStarted("a sandboxed run needs a process of its own: run it with the child runner"));
    }
    const clock = new WallClock(request.timeoutMs, cancelSignal(request, hooks));
    try {
      hooks?.onStart?.({});
      const cwd = request.cwd ?? resolve(request.projectRoot);
      let prompt: string | undefined, context: string | undefined;
      try {
        prompt = await readText("prompt", request.prompt, cwd);
        context = await readText("context", request.context, cwd);
      } catch (e) {
        return end(notStarted((e as Error).message));
      }
      let settings: RunSettings;
      try {
        settings = request.settings ?? o.envSettings?.(request.env) ?? NO_SETTINGS;
      } catch (e) {
        return end(notStarted((e as Error).message));
      }
      // The request's ids go to the run typed, and into its environment for the processes it
      // starts (an agent-block child reads them at its edge).
      const env: Record<string, string> = { ...request.env };
      const ids: Record<string, string> = {};
      for (const { field, key, variable } of RUN_CORRELATION_IDS) {
        const v = request.correlation?.[field];
        if (v === undefined) continue;
        env[variable] = v;
        ids[key] = v;
      }
      if (request.telemetry || o.tracerProvider) {
        traced = await (await import("./traced.ts")).openTrace({
          name: runName(request),
          correlation: request.correlation,
          labels: request.labels,
          settings: request.telemetry,
          tracerProvider: o.tracerProvider,
          meterProvider: o.meterProvider,
          warn,
        });
        env[correlationVariable("traceId")] = traced.trace.traceId; // the kernel sessions find the trace
        ids.trace_id = traced.trace.traceId;
      }
      const bus = o.bus ?? new BusHost();
      const core = busCore(bus);
      core.tap = (event: BusEvent) => {
        if (event.kind !== ARTIFACT_KIND) return;
        const p = event.payload as Record<string, unknown> | null;
        const name = typeof p === "object" && p !== null && typeof p.name === "string" ? p.name : undefined;
        if (name === undefined) {
          throw new Error(`bus.emit: an '${ARTIFACT_KIND}' payload must be a table with a string 'name'`);
        }
        observe({ type: "artifact", name, content: p!.content, id: event.id });
      };
      const mem = request.limits?.memoryMb;
      const outcome = await runBlock({
        script: request.script,
        projectRoot: request.projectRoot,
        env,
        settings,
        correlationIds: ids,
        cwd: request.cwd,
        home: request.home,
        prompt,
        context,
        labels: request.labels ? { ...request.labels } : undefined,
        globals: request.globals,
        limits: request.limits
          ? {
            cpuSeconds: request.limits.cpuSeconds,
            memoryBytes: mem !== undefined ? Math.round(mem * 1024 * 1024) : undefined,
          }
          : o.limits,
        stores: request.stores,
        stdout: o.stdout,
        stderr: o.stderr,
        modules: o.modules,
        bus,
        busEager: o.busEager,
        signal: clock.signal,
        mcpTimeoutMs: request.mcpTimeoutMs ?? o.mcpTimeoutMs,
        mesh: request.mesh,
        llmFetch: o.fetch,
        onSessionOpen: (session) => observe({ type: "session_open", session }),
        observe: watched ? observe : undefined,
        netDenials: o.netDenials,
        netProxy: o.netProxy,
        meshSeenIds: o.meshSeenIds,
        trace: traced?.trace,
      });
      return end(clock.judge(outcome));
    } catch (e) {
      return end(notStarted(`internal failure running the block: ${(e as Error)?.message ?? e}`));
    } finally {
      clock.clear();
    }
  }
}
