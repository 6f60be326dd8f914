/**
 * Running a `BlockConfig`: from the embedder's config to a `BlockReport`, through the
 * in-process `BlockRunner` (`src/runner/in_process.ts`, the one in-process run loop).
 *
 * Layer: consumer (sdk). Owns the mapping of a config onto a `RunRequest` (serialisable: script,
 * prompt and context, labels, limits, stores, mesh, globals, telemetry settings and the caller's
 * `traceparent` as correlation — the default agent's source and options included) plus the
 * handles beside it (the runner's options: the bus with the config's host handlers, host tools,
 * `fetch`, the embedder's tracer and meter providers, output sinks; the hooks: the signal and the config's
 * observers), and the report: the runner's outcome, artifacts and sessions, plus the returned
 * text, the error, the exit code and the tools registered.
 *
 * The working directory is one rule for every front end: the config's `cwd`, else its project
 * root; a relative project root resolves against the caller's directory. Relative files of the
 * config (the script, prompt, context and secret key) resolve against the run's working directory.
 * A secret key given as `{ env }` or `{ file }` is read here, when the run starts, so the request
 * carries the key itself (a key that cannot be read is a run that never started).
 *
 * This is below the edge: `env` a config leaves unset and the caller's directory come from
 * `defaults`, which the edge supplies (`mod.ts`: this process's; the CLI sets both itself).
 *
 * Invariants: it never rejects for anything the run did or the config asked — every ending is a
 * report, a failure to start being `raised` with code `config`; a run cancelled by its timer is
 * `timed_out`, by `signal` `cancelled`; the observers see the runner's `end` last, before the
 * report returns (their guard is the runner's: one that throws is detached with a warning on
 * the run's stderr).
 */
import { resolve } from "node:path";
import { parseTraceparent } from "../obs/otel/settings.ts";
import { exitCodeOf, type Outcome } from "../outcome.ts";
import { busCore, BusHost } from "../host/bus.ts";
import type { BlockConfig } from "./config.ts";
import { type BlockError, blockErrorOf } from "./errors.ts";
import { hostToolsModule, type ToolInfo } from "./host_tools.ts";
import { readSecretKey } from "./sources.ts";
import {
  type Artifact,
  ARTIFACT_KIND,
  type InProcessFactory,
  type RunReport,
  type RunRequest,
} from "../runner/runner.ts";
import { DEFAULT_AGENT_NAME, DEFAULT_AGENT_SOURCE } from "./default_agent.ts";
import { fanOut, type RunObserver } from "../obs/run_events.ts";
import { writeStderr } from "../obs/log.ts";
import type { JsonValue } from "../json/codec.ts";

export type { Artifact };

export { ARTIFACT_KIND };

/**
 * How a run of a `BlockConfig` ended, and what it left.
 *
 * ```ts
 * import { BlockConfig, type BlockReport, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * function summary(report: BlockReport): string {
 *   switch (report.outcome.status) {
 *     case "returned":
 *       return `ok: ${report.value ?? "(nothing)"}`;
 *     case "deferred":
 *       return `later: ${report.outcome.reason}`;
 *     default:
 *       return `exit ${report.exitCode}: ${report.error?.message ?? report.outcome.status}`;
 *   }
 * }
 * const run = (lua: string) =>
 *   runBlock(BlockConfig.builder(ScriptSource.inline(lua, "s.lua"), ".").env({}).build());
 * assert.equal(summary(await run("return 6 * 7")), "ok: 42");
 * assert.equal(summary(await run('job.defer("no input yet")')), "later: no input yet");
 * assert.equal(summary(await run("os.exit(3)")), "exit 3: exited");
 * ```
 */
export interface BlockReport {
  /** How it ended (the one outcome type of every runner). */
  outcome: Outcome;
  /** The returned value as text (`undefined` unless it returned a value). */
  value: string | undefined;
  /** The error of a run that raised, was cancelled or timed out. */
  error: BlockError | undefined;
  /** The exit code the CLI would end with. */
  exitCode: number;
  /** Artifacts staged through `bus.emit("artifact", ...)`, in order. */
  artifacts: Artifact[];
  /** Ids of the kernel sessions the run opened, in order. */
  sessions: string[];
  /** The tool registry when the run ended (host tools and the block's own). */
  tools: ToolInfo[];
}

/** What the edge fills in for a config that leaves `env` unset or its project root relative. */
export interface RunDefaults {
  /** The run's environment. */
  env(): Record<string, string>;
  /** The caller's directory (absolute): a relative project root resolves against it. */
  cwd(): string;
}

const decoder = new TextDecoder();

/**
 * The request a config stands for (everything serialisable about the run); `secretKey` is the
 * mesh key already read (`readSecretKey`), when the config names one.
 */
export function requestOf(config: BlockConfig, defaults: RunDefaults, secretKey?: string): RunRequest {
  const globals: Record<string, JsonValue> = { ...config.extraGlobals };
  let script: RunRequest["script"];
  switch (config.script.kind) {
    case "path":
      script = { path: config.script.path };
      break;
    case "inline":
      script = { source: config.script.source, name: config.script.name };
      break;
    case "default_agent": {
      const o = config.script.options;
      script = { source: DEFAULT_AGENT_SOURCE, name: DEFAULT_AGENT_NAME };
      globals._DEFAULT_AGENT = {
        mcp_servers: (o.mcpServers ?? []) as unknown as JsonValue,
        agent_options: (o.agentOptions ?? {}) as unknown as JsonValue,
      };
      break;
    }
  }
  // One rule for every front end: the run works in its project root unless the config names a cwd.
  const projectRoot = resolve(defaults.cwd(), config.projectRoot);
  const r: RunRequest = {
    script,
    projectRoot,
    env: { ...(config.env ?? defaults.env()) },
    cwd: config.cwd ?? projectRoot,
    labels: { ...config.labels },
    globals,
    limits: { ...config.limits },
    stores: { ...config.stores },
  };
  if (config.prompt !== undefined) r.prompt = config.prompt;
  if (config.context !== undefined) r.context = config.context;
  if (config.home !== undefined) r.home = config.home;
  if (config.timeoutMs !== undefined) r.timeoutMs = config.timeoutMs;
  if (config.mcpRpcTimeoutMs !== undefined) r.mcpTimeoutMs = config.mcpRpcTimeoutMs;
  if (config.telemetry !== undefined) r.telemetry = config.telemetry;
  const parent = parseTraceparent(config.traceparent);
  if (parent) r.correlation = { traceId: parent.traceId, parentSpan: parent.spanId };
  if (config.relay !== undefined) {
    r.mesh = secretKey !== undefined ? { relay: config.relay, secretKey } : { relay: config.relay };
  }
  return r;
}

/**
 * Runs `config` to its report through the runner `inProcess` makes (the edge's choice: `mod.ts`
 * and the CLI give `InProcessRunner`'s constructor); `defaults` supply what the
 * config leaves to the edge.
 */
export async function runConfig(
  config: BlockConfig,
  defaults: RunDefaults,
  inProcess: InProcessFactory,
): Promise<BlockReport> {
  let tools: ToolInfo[] = [];
  const bus = config.bus ?? new BusHost();
  for (const [kind, handler] of Object.entries(config.hostHandlers)) bus.on(kind, handler);
  if (config.hostHandler) bus.onAny(config.hostHandler);
  busCore(bus).autoServe = config.autoServeBus;
  const runner = inProcess({
    stdout: config.stdout,
    stderr: config.stderr,
    modules: [hostToolsModule(config.hostTools, (list) => (tools = list))],
    fetch: config.fetch,
    tracerProvider: config.tracerProvider,
    meterProvider: config.meterProvider,
    bus,
    // a bus of the embedder's own may be emitted into before the script touches `bus`
    busEager: config.bus !== undefined || config.autoServeBus,
  });
  const observe: RunObserver | undefined = config.observers.length === 1
    ? config.observers[0]
    : fanOut(config.observers, () => {}); // each is guarded by the runner's own fan-out too
  let request: RunRequest;
  try {
    request = requestOf(config, defaults);
    const key = await readSecretKey(config.secretKey, request.env, request.cwd!);
    if (key !== undefined) request = requestOf(config, defaults, key);
  } catch (e) {
    // Not started: the observers still see the run's one `end`, as for any other ending.
    const outcome: Outcome = {
      status: "raised",
      code: "config",
      message: (e as Error).message,
      traceback: "",
    };
    const guarded = fanOut(config.observers, (m) => warnOn(config, m));
    guarded?.({ type: "end", outcome, ms: 0 });
    return reportOf({ outcome, artifacts: [], sessions: [] }, tools);
  }
  const report = await runner.run(request, { signal: config.signal, observe });
  return reportOf(report, tools);
}

/** A `[warn]` line on the config's stderr (this process's when it names none). */
function warnOn(config: BlockConfig, message: string): void {
  (config.stderr ?? writeStderr)(new TextEncoder().encode(`[warn] agent-block: ${message}\n`));
}

/** The embedder's report of a runner's report. */
function reportOf(report: RunReport, tools: ToolInfo[]): BlockReport {
  const outcome: Outcome = report.outcome;
  return {
    outcome,
    value: outcome.status === "returned" && outcome.value !== undefined
      ? (typeof outcome.value === "string" ? outcome.value : decoder.decode(outcome.value))
      : undefined,
    error: blockErrorOf(outcome),
    exitCode: exitCodeOf(outcome),
    artifacts: report.artifacts,
    sessions: report.sessions,
    tools,
  };
}
