/**
 * The one door to a run: the `BlockRunner` interface, the `RunRequest` every runner takes, the
 * `RunEvent` stream every runner tells and the `RunReport` folded from it.
 *
 * Layer: runner. Every consumer (the CLI's run path, `agent-block test`, the MCP server,
 * `serve`'s scheduler, the embedding SDK, flows) runs a block through this interface and
 * imports this file only; the edge (`src/cli`, `mod.ts`) picks the implementation:
 * - `InProcessRunner` (`in_process.ts`): the block runs in this process (the SDK's `runConfig`
 *   and the CLI's own run go through it; it is the one in-process run loop);
 * - `ChildRunner` (`child.ts`): the block runs in an agent-block process of its own, which reads
 *   the request from a file (`request_json.ts`) and sends its events back over a socket as JSON
 *   Lines (`event_json.ts`) while it runs;
 * - room for more (a queue worker on another machine: the same JSON on a message bus).
 *
 * The contract, for every runner:
 * - `RunRequest` is plain data: everything that makes one run what it is, JSON-serialisable
 *   (`request_json.ts` is its versioned form with a strict parser). What cannot cross a process
 *   boundary — an `AbortSignal`, an embedder's host tools, bus handlers, an injected `fetch`,
 *   output sinks — is never in it: the signal and the observer are `RunHooks`, the rest are
 *   options of the in-process runner.
 * - Nothing is taken from the process running the runner: the request carries the environment
 *   and the working directory.
 * - `hooks.observe` sees the run's `RunEvent`s as they happen and, last, exactly one `end`
 *   carrying the outcome — also for a run that never started. A child's events arrive live,
 *   in the same kinds and order as in process.
 * - `run` never rejects for anything the run did or the request asked: every ending, a bad
 *   request or a child that could not start included, is an `Outcome` (`src/outcome.ts`):
 *   `returned`, `deferred`, `exited`, `raised` (a run that never started is `raised` with code
 *   `config`), `cancelled` (the signal, or the runner's own shutdown) or `timed_out` (the
 *   request's `timeoutMs`, decided by the runner whatever the block reported while being ended).
 * - Runner-specific facts (a child's pid and process tag, its stderr tail) are opaque extras:
 *   `onStart`'s argument and fields added to the report, never a second outcome type.
 */
import type { Outcome } from "../outcome.ts";
import type { RunSettings } from "../run_settings.ts";
import type { JsonValue } from "../json/codec.ts";
import type { RunEvent, RunObserver } from "../obs/run_events.ts";
import type { EngineLimits } from "../lua/engine.ts";
import type { HostModule } from "../host/context.ts";
import type { BusHost } from "../host/bus.ts";
import type {
  OtelMeterProvider as MeterProvider,
  OtelTracerProvider as TracerProvider,
  TelemetrySettings,
} from "../obs/otel/settings.ts";

export type { RunEvent, RunObserver, RunSettings, TelemetrySettings };

/**
 * Ids that tie a run to what started it (trace context, a serve run, a flow step). Every field
 * optional; the run stamps the ones given on its kernel sessions, `ab.obs` lines, MCP `_meta`
 * and mesh envelopes (today through the run's `AGENT_BLOCK_TRACE_ID`/`RUN_ID`/`AGENT_ID`/
 * `AGENT_NAME` variables, which a field given here overrides; `parentSpan`, `parentSession`
 * and `stepKey` travel with the request for its caller and are not stamped yet).
 *
 * ```ts
 * import type { Correlation } from "@agent-block/agent-block";
 * const correlation: Correlation = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", runId: "nightly-7" };
 * ```
 */
export interface Correlation {
  /** The trace this run belongs to (W3C trace id, or any string the caller uses). */
  traceId?: string;
  /** The caller's span (for a span tree). */
  parentSpan?: string;
  /** The run's id (serve: the job run's id). */
  runId?: string;
  /** The agent's id. */
  agentId?: string;
  /** The agent's name. */
  agentName?: string;
  /** The kernel session this run works for (a flow's session). */
  parentSession?: string;
  /** The caller's key for this run (a flow's step key). */
  stepKey?: string;
}

/**
 * Where a run's stores live (absent: the run environment's `AGENT_BLOCK_*_PATH`, then home).
 * Relative paths resolve against the run's cwd (the kernel's against the project root).
 *
 * ```ts
 * import type { RunStores } from "@agent-block/agent-block";
 * const stores: RunStores = { kv: ":memory:", kernel: "/var/lib/agents/knl.sqlite" };
 * ```
 */
export interface RunStores {
  /** `std.kv`; `:memory:` for a private in-memory store. */
  kv?: string;
  /** `std.sql`. */
  sql?: string;
  /** `std.ts`. */
  ts?: string;
  /** The kernel log (default `<project>/.agent-block/knl.sqlite`). */
  kernel?: string;
}

/**
 * Text given inline, or a file read when the run starts (relative to the run's `cwd`).
 *
 * ```ts
 * import type { RunText } from "@agent-block/agent-block";
 * const inline: RunText = "Summarise the README";
 * const fromFile: RunText = { file: "prompts/summary.md" };
 * ```
 */
export type RunText = string | { file: string };

/**
 * What to run, and with what: plain JSON-serialisable data, the same for every runner.
 *
 * ```ts
 * import type { RunRequest } from "@agent-block/agent-block";
 * const request: RunRequest = {
 *   script: { source: "return _PROMPT:upper()", name: "shout.lua" },
 *   projectRoot: ".",
 *   env: {},
 *   prompt: "hello",
 *   labels: { job: "docs" },
 *   timeoutMs: 10_000,
 * };
 * ```
 */
export interface RunRequest {
  /**
   * The block: a script file (resolved against `cwd`), or inline source with the name its
   * errors show (`dir`: where its `require`s look first, default the project root; `chunkname`:
   * the chunk's own name instead of `@name`, for a runner's driver chunk such as `=ab:...`).
   */
  script: { path: string } | { source: string | Uint8Array; name: string; dir?: string; chunkname?: string };
  /** A short name for logs (default: the script's file name). */
  name?: string;
  /** Project root (`--project`): `lib/` and `blocks/` tiers, the kernel log; resolved against `cwd`. */
  projectRoot: string;
  /** `_PROMPT` (absent when undefined). */
  prompt?: RunText;
  /** `_CONTEXT` (absent when undefined). */
  context?: RunText;
  /** Run labels (`--label k=v`), stamped on kernel sessions. */
  labels?: Record<string, string>;
  /**
   * The run's environment, resolved by the caller's edge: what `std.env` reads and what the
   * block's children start from. A child process gets it minus the host's credentials and
   * layers its project's `.env` over it, as any command-line run does.
   */
  env: Readonly<Record<string, string>>;
  /** The run's working directory (absolute). Default: the project root. */
  cwd?: string;
  /** `$AGENT_BLOCK_HOME` (default: the run environment's, then `~/.agent-block`). */
  home?: string;
  /** Wall-clock limit, ms; past it the run is ended and reported `timed_out`. Default: none. */
  timeoutMs?: number;
  /** CPU-time and heap bounds of the block's Lua code. */
  limits?: { cpuSeconds?: number; memoryMb?: number };
  /** Timeout of every MCP request, ms (default 30 000). */
  mcpTimeoutMs?: number;
  /** Paths of the kv, sql, ts and kernel stores. */
  stores?: RunStores;
  /** Joins the mesh before the script runs (`--relay`, `--secret-key`). */
  mesh?: { relay: string; secretKey?: string };
  /** Lua globals set after the standard library (JSON values, nesting kept). */
  globals?: Record<string, JsonValue>;
  /** Run confined (`--sandbox`); only a child runner can (a confined run is a process). */
  sandbox?: boolean;
  /** Ids tying the run to its caller. */
  correlation?: Correlation;
  /**
   * What the run's `AGENT_BLOCK_*` variables configure, parsed by the edge that built the request
   * (`src/config/env_settings.ts`). Absent: the runner's edge parses the request's `env` (the
   * in-process runner's `envSettings`, a child process at its own edge), or every default.
   */
  settings?: RunSettings;
  /**
   * Export the run's traces and metrics over OTLP/HTTP (the edge parses the standard `OTEL_*`
   * variables into this: `telemetryFromEnv`). Absent: nothing is exported, and no OpenTelemetry
   * code is loaded, unless the in-process runner was given a tracer provider. With
   * `correlation.traceId` and `correlation.parentSpan` (a W3C pair) the run's span is their child.
   */
  telemetry?: TelemetrySettings;
  /**
   * @deprecated the one handle a request used to carry; pass `RunHooks.signal`. Never part of
   * the JSON form. When both are given, either aborting cancels the run.
   */
  signal?: AbortSignal;
}

/**
 * A part a block staged with `bus.emit("artifact", { name = ..., content = ... })`.
 *
 * ```ts
 * import type { Artifact } from "@agent-block/agent-block";
 * const a: Artifact = { name: "summary.md", content: "# Summary", id: "ev-1" };
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
 * What every runner reports, folded from the run's events (`ReportFold`).
 *
 * ```ts
 * import type { RunReport } from "@agent-block/agent-block";
 * const names = (report: RunReport) => report.artifacts.map((a) => a.name);
 * ```
 */
export interface RunReport {
  /** How the run ended (the `end` event's outcome). */
  outcome: Outcome;
  /** Artifacts the run staged, in order (its `artifact` events). */
  artifacts: Artifact[];
  /** Ids of the kernel sessions the run opened, in order (its `session_open` events). */
  sessions: string[];
}

/**
 * Facts a runner reports when the run has started; opaque to consumers, kept as given.
 *
 * ```ts
 * import type { StartFacts } from "@agent-block/agent-block";
 * const describe = (f: StartFacts) => (f.pid !== undefined ? `pid ${f.pid}` : "in process");
 * ```
 */
export interface StartFacts {
  /** The run's process, when it has one of its own. */
  pid?: number;
  /** The process tag its tree carries (`src/proc/tags.ts`), to find and end it after a restart. */
  tag?: string;
}

/**
 * Handles beside a request: what a runner calls while the run goes on, and its cancel.
 *
 * ```ts
 * import type { RunHooks } from "@agent-block/agent-block";
 * const stop = new AbortController();
 * const hooks: RunHooks = {
 *   signal: stop.signal,
 *   observe: (e) => e.type === "end" && console.log(e.outcome.status),
 * };
 * ```
 */
export interface RunHooks {
  /** The run has started (after the request was accepted; before any of its events). */
  onStart?: (facts: StartFacts) => void;
  /**
   * Sees each `RunEvent` as it happens, `end` last. Called synchronously; one that throws is
   * detached with a warning and the run goes on.
   */
  observe?: RunObserver;
  /** Aborting ends the run; it is reported `cancelled` with the abort's reason. */
  signal?: AbortSignal;
}

/**
 * Runs blocks. `R` is the report, `RunReport` plus whatever the implementation adds.
 *
 * ```ts
 * import type { BlockRunner, RunRequest } from "@agent-block/agent-block";
 * // a consumer takes the interface; the edge decides which runner it is
 * async function runTwice(runner: BlockRunner, request: RunRequest) {
 *   const first = await runner.run(request);
 *   return first.outcome.status === "returned" ? first : await runner.run(request);
 * }
 * ```
 */
export interface BlockRunner<R extends RunReport = RunReport> {
  /** Runs one block to its end; never rejects for anything the run did. */
  run(request: RunRequest, hooks?: RunHooks): Promise<R>;
}

/**
 * What an in-process runner fixes for its runs: the handles a request cannot carry across a
 * process boundary (`InProcessRunner`'s options; a consumer that needs them is given a
 * `(handles) => BlockRunner` by its edge, never the class).
 */
export interface RunHandles {
  /** Sink for the blocks' stdout (default: the process stdout). */
  stdout?: (bytes: Uint8Array) => void;
  /** Sink for logs and `io.stderr` (default: the process stderr). */
  stderr?: (bytes: Uint8Array) => void;
  /** Host modules installed after the standard ones (an embedder's host tools). */
  modules?: readonly HostModule[];
  /** The `fetch` model requests go through (default the global one). */
  fetch?: typeof fetch;
  /**
   * The runs' bus, with an embedder's handlers registered (a bus serves one run at a time).
   * Absent: each run gets a fresh one.
   */
  bus?: BusHost;
  /** Install the bus before the script runs (a bus TypeScript emits into, or served in the background). */
  busEager?: boolean;
  /** CPU-time and heap limits of runs whose request sets none. */
  limits?: EngineLimits;
  /** Timeout of every MCP request, ms, for runs whose request sets none (default 30 000). */
  mcpTimeoutMs?: number;
  /**
   * The embedder's OpenTelemetry tracer provider: every run's spans go to it (its export and
   * flushing are the embedder's), whatever the request's `telemetry` says.
   */
  tracerProvider?: TracerProvider;
  /** The embedder's meter provider, for the runs' metrics (with `tracerProvider`). */
  meterProvider?: MeterProvider;
}

/** Makes an in-process runner over `handles` (what the edge gives a consumer that has handles). */
export type InProcessFactory = (handles: RunHandles) => BlockRunner;

/**
 * The event kind that stages a named artifact instead of being a result. Every artifact lands in
 * `RunReport.artifacts` (and is an `artifact` event); a host handler for this kind also sees each
 * one as it is staged.
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

/** The name a run is logged under: `request.name`, else the script's file name. */
export function runName(request: RunRequest): string {
  if (request.name) return request.name;
  const p = "path" in request.script ? request.script.path : request.script.name;
  return p.slice(Math.max(p.lastIndexOf("/"), p.lastIndexOf("\\")) + 1);
}

/** The signal that cancels a run: the hooks', the request's (deprecated), both, or none. */
export function cancelSignal(request: RunRequest, hooks?: RunHooks): AbortSignal | undefined {
  const a = hooks?.signal, b = request.signal;
  return a && b ? AbortSignal.any([a, b]) : a ?? b;
}

/**
 * Folds a run's events into the report's lists as they pass (an observer), and gives the report
 * once the `end` has been seen. What every runner's report is made from.
 */
export class ReportFold {
  /** The artifacts seen so far. */
  readonly artifacts: Artifact[] = [];
  /** The sessions seen so far. */
  readonly sessions: string[] = [];
  #outcome: Outcome | undefined;

  /** Takes one event. */
  readonly observe: RunObserver = (e) => {
    if (e.type === "artifact") this.artifacts.push({ name: e.name, content: e.content, id: e.id });
    else if (e.type === "session_open") this.sessions.push(e.session);
    else if (e.type === "end") this.#outcome = e.outcome;
  };

  /** The report (`outcome` when no `end` was seen). */
  report(outcome?: Outcome): RunReport {
    return { outcome: this.#outcome ?? outcome!, artifacts: this.artifacts, sessions: this.sessions };
  }
}
