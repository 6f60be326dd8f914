/**
 * Running a `BlockConfig`: from the embedder's config to a `BlockReport`.
 *
 * Owns the mapping of a config onto the runtime's `RunSpec` (store paths into the run's
 * environment, prompt and context files read against the run's cwd, the default agent's source
 * and options, the bus with its host handlers and artifact tap, host tools, the wall-clock limit)
 * and the report: the outcome, the returned text, the error, the artifacts staged with
 * `bus.emit("artifact", { name, content })`, the kernel sessions opened and the tools registered.
 * It also joins the config's observers into the run's one guarded `observe` (`src/obs/run_events.ts`:
 * one that throws is detached with a warning on the run's stderr) and tells them the run's `end`
 * last, with the final outcome (a run that never started included), before the report returns.
 *
 * This is below the edge: `env` and `cwd` a config leaves unset come from `defaults`, which the
 * edge supplies (`mod.ts`: this process's; the CLI always sets both).
 *
 * Invariants: it never rejects for anything the run did or the config asked — every ending is a
 * report, a failure to start being `raised` with code `config`; a run cancelled by its timer is
 * `timed_out`, by `signal` `cancelled`.
 */
import { resolve } from "node:path";
import { runBlock as runSpec, type RunSpec } from "../runtime/run.ts";
import { exitCodeOf, notStarted, type Outcome } from "../outcome.ts";
import { busCore, type BusEvent, BusHost } from "../host/bus.ts";
import type { BlockConfig, StorePaths } from "./config.ts";
import { type BlockError, blockErrorOf } from "./errors.ts";
import { hostToolsModule, type ToolInfo } from "./host_tools.ts";
import type { TextSource } from "./sources.ts";
import { WallClock } from "../runner/wall_clock.ts";
import { DEFAULT_AGENT_NAME, DEFAULT_AGENT_SOURCE } from "./default_agent.ts";
import { fanOut } from "../obs/run_events.ts";
import { writeStderr } from "../obs/log.ts";
import { STORE_PATH_VARS } from "../host/stores/sqlite.ts";
import { KNL_PATH_VAR } from "../knl/paths.ts";

/**
 * The event kind that stages a named artifact instead of being a result. Every artifact lands in
 * `BlockReport.artifacts`; a host handler for this kind also sees each one as it is staged.
 *
 * @example Stream artifacts as they are staged
 * ```ts
 * import { ARTIFACT_KIND, BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const script = `
 *   bus.emit("artifact", { name = "plan.md", content = "draft" })
 *   bus.emit("artifact", { name = "plan.md", content = "final" })`;
 * const live: string[] = [];
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "plan.lua"), ".")
 *     .hostHandler(ARTIFACT_KIND, (event) => void live.push((event.payload as { content: string }).content))
 *     .env({})
 *     .build(),
 * );
 * assert.deepEqual(live, ["draft", "final"]);
 * assert.deepEqual(report.artifacts.map((a) => a.content), ["draft", "final"]);
 * ```
 */
export const ARTIFACT_KIND = "artifact";

/**
 * A part a block staged with `bus.emit("artifact", { name = ..., content = ... })`.
 *
 * ```ts
 * import { type Artifact, BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const script = `
 *   bus.emit("artifact", { name = "summary.md", content = "# Summary" })
 *   bus.emit("artifact", { name = "stats", content = { files = 3, lines = 120 } })
 *   return "done"`;
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "a.lua"), ".").env({}).build(),
 * );
 * const byName = (list: Artifact[]) => Object.fromEntries(list.map((a) => [a.name, a.content]));
 * assert.deepEqual(byName(report.artifacts), { "summary.md": "# Summary", stats: { files: 3, lines: 120 } });
 * ```
 */
export interface Artifact {
  /** The artifact's name. */
  name: string;
  /** Its `content` (any JSON value; `undefined` when the payload had none). */
  content: unknown;
  /** The event's id. */
  id: string;
}

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

/** What the edge fills in for a config that leaves `env` or `cwd` unset. */
export interface RunDefaults {
  /** The run's environment. */
  env(): Record<string, string>;
  /** The run's working directory (absolute). */
  cwd(): string;
  /** The sandbox proxy's refusals, from the CLI edge (`RunSpec.netDenials`). */
  netDenials?: (listener: (denial: { host: string; port: number; reason: string }) => void) => void;
}

/** The run-environment variable behind each of `StorePaths`' fields. */
const STORE_VARS: Readonly<Record<keyof StorePaths, string>> = { ...STORE_PATH_VARS, kernel: KNL_PATH_VAR };

async function readText(
  field: string,
  source: TextSource | undefined,
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

const decoder = new TextDecoder();

/** Runs `config` to its report; `defaults` supply what it leaves to the edge. */
export async function runConfig(config: BlockConfig, defaults: RunDefaults): Promise<BlockReport> {
  const artifacts: Artifact[] = [];
  const sessions: string[] = [];
  let tools: ToolInfo[] = [];
  const started = performance.now();
  const stderr = config.stderr ?? writeStderr;
  const observe = fanOut(
    config.observers,
    (m) => stderr(new TextEncoder().encode(`[warn] agent-block: ${m}\n`)),
  );
  const report = (outcome: Outcome): BlockReport => {
    observe?.({ type: "end", outcome, ms: performance.now() - started });
    return reportOf(outcome);
  };
  const reportOf = (outcome: Outcome): BlockReport => ({
    outcome,
    value: outcome.status === "returned" && outcome.value !== undefined
      ? (typeof outcome.value === "string" ? outcome.value : decoder.decode(outcome.value))
      : undefined,
    error: blockErrorOf(outcome),
    exitCode: exitCodeOf(outcome),
    artifacts,
    sessions,
    tools,
  });

  const env: Record<string, string> = { ...(config.env ?? defaults.env()) };
  const cwd = config.cwd ?? defaults.cwd();
  for (const [k, v] of Object.entries(config.stores)) {
    if (v !== undefined) env[STORE_VARS[k as keyof StorePaths]] = v;
  }
  let prompt: string | undefined, context: string | undefined;
  try {
    prompt = await readText("prompt", config.prompt, cwd);
    context = await readText("context", config.context, cwd);
  } catch (e) {
    return report(notStarted((e as Error).message));
  }

  const globals: Record<string, unknown> = { ...config.extraGlobals };
  let script: RunSpec["script"];
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
      globals._DEFAULT_AGENT = { mcp_servers: o.mcpServers ?? [], agent_options: o.agentOptions ?? {} };
      break;
    }
  }

  const bus = config.bus ?? new BusHost();
  for (const [kind, handler] of Object.entries(config.hostHandlers)) bus.on(kind, handler);
  if (config.hostHandler) bus.onAny(config.hostHandler);
  const core = busCore(bus);
  core.autoServe = config.autoServeBus;
  core.tap = (event: BusEvent) => {
    if (event.kind !== ARTIFACT_KIND) return;
    const p = event.payload as Record<string, unknown> | null;
    const name = typeof p === "object" && p !== null && typeof p.name === "string" ? p.name : undefined;
    if (name === undefined) {
      throw new Error(`bus.emit: an '${ARTIFACT_KIND}' payload must be a table with a string 'name'`);
    }
    artifacts.push({ name, content: p!.content, id: event.id });
  };

  const clock = new WallClock(config.timeoutMs, config.signal);
  try {
    const outcome = await runSpec({
      script,
      projectRoot: config.projectRoot,
      env,
      cwd,
      home: config.home,
      prompt,
      context,
      labels: { ...config.labels },
      globals,
      limits: {
        cpuSeconds: config.limits.cpuSeconds,
        memoryBytes: config.limits.memoryMb ? Math.round(config.limits.memoryMb * 1024 * 1024) : undefined,
      },
      stdout: config.stdout,
      stderr: config.stderr,
      modules: [hostToolsModule(config.hostTools, (list) => (tools = list))],
      bus,
      // a bus of the embedder's own may be emitted into before the script touches `bus`
      busEager: config.bus !== undefined || config.autoServeBus,
      signal: clock.signal,
      mcpTimeoutMs: config.mcpRpcTimeoutMs,
      mesh: config.relay !== undefined ? { relay: config.relay, secretKey: config.secretKey } : undefined,
      llmFetch: config.fetch,
      onSessionOpen: (id) => sessions.push(id),
      observe,
      netDenials: defaults.netDenials,
    });
    return report(clock.judge(outcome));
  } catch (e) {
    return report(notStarted(`internal failure running the block: ${(e as Error)?.message ?? e}`));
  } finally {
    clock.clear();
  }
}
