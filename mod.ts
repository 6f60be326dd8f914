/**
 * agent-block embedding SDK: run Lua blocks inside your own Deno program, several at once.
 *
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";
 *
 * const config = BlockConfig.builder(ScriptSource.inline("return 'hello, ' .. _PROMPT", "hello.lua"), ".")
 *   .prompt("world")
 *   .build();
 * const report = await runBlock(config);
 * if (report.outcome.status === "returned") console.log(report.value); // hello, world
 * else console.error(report.error?.message);
 * ```
 *
 * ## The model
 * A `BlockConfig` describes one run: the script (`ScriptSource.path`, `.inline`, or
 * `.defaultAgent` — an embedded `agent.run` over `_PROMPT` and `_CONTEXT`), the project root,
 * the inputs, the environment, the host's handlers and tools. `BlockConfig.builder(...)...build()`
 * checks every setting and throws a `BlockError` with code `config` naming the field it refuses.
 * `runBlock(config)` runs it to a `BlockReport`: the `Outcome` (`returned`, `deferred`, `exited`,
 * `raised`, `cancelled`, `timed_out`), the returned text, the `BlockError` of a run that failed
 * (`code`: `script`, `config`, `llm`, `mcp`, `cancelled`, `timeout`; `exitCode`: what the CLI
 * would exit with; the Lua `traceback`), the artifacts staged with
 * `bus.emit("artifact", { name, content })`, the kernel session ids it opened and the tools it
 * ended with. It never rejects for anything the block did.
 *
 * Runs are independent: each has its own Lua state, globals, tool registry, environment copy
 * (`std.env.set` changes only its own), working directory, MCP connections, process groups and
 * kernel writers, so a program can run many configs concurrently (or one config many times).
 *
 * This module is an edge, like the CLI: a config that sets no `env` runs with a copy of this
 * process's environment, read when `runBlock` is called, and the run's `AGENT_BLOCK_*` variables
 * are parsed here (the runner's `envSettings`: `src/config/env_settings.ts`) into the run's typed
 * settings; a malformed one is a run that never started, naming it. A run works in its project root unless
 * the config sets `cwd(dir)` (the rule of every front end: the CLI, `mcp`, `serve`); a relative
 * project root, and through it a relative script path, resolve against this process's working
 * directory. Nothing below it reads the environment or the working directory, and nothing
 * changes them.
 *
 * ## Talking to the host
 * - `hostHandler(kind, fn)` / `hostHandler(fn)`: TypeScript functions receiving
 *   `{ kind, id, payload, meta }` of the script's `bus.emit`, at once (no `bus.serve` needed);
 *   what they return is the acknowledgement of an event emitted from TypeScript (`BusHost.emit`
 *   resolves with it, also when a Lua handler answers), while a Lua `bus.emit` returns only the
 *   event id and never waits for a handler. A Lua `bus.on` handler for a kind wins over them.
 * - `bus(new BusHost())`: emit into the script's `bus.on` handlers from TypeScript;
 *   `autoServeBus()` serves those handlers in the background.
 * - `hostTool({ name, description, inputSchema, group, handler })`: a TypeScript function in the
 *   block's tool registry, callable with `tool.call` and offered to the model by `agent.run`.
 * - `fetch(fn)`: the `fetch` model requests go through, to route or record model traffic.
 * - `signal(abortSignal)`: cancels the run at its next wait for the host (a model call, an
 *   `sh.exec`, a sleep), ends its process groups and closes its MCP connections; the outcome is
 *   `cancelled`. `timeoutMs(n)` does the same on a timer (`timed_out`).
 *
 * ## Watching a run
 * `observe(fn)` (repeatable) tells `fn` each `RunEvent` as it happens: the kernel's rows as they
 * are committed (`events`: each row a record of `agent-block knl export --as events`, in commit
 * order), the sessions it opens (`session_open`), MCP connects and tool calls (`mcp_connect`,
 * `mcp_call`), the artifacts it stages (`artifact`), and last the run's `end` with its outcome.
 * It is the seam the CLI's `--progress` and `--events FILE` are built on. Observers run
 * synchronously inside the run: keep them quick; one that throws is detached with a warning. A
 * run with no observer pays nothing for the seam.
 *
 * ## The run contract
 * `runBlock` goes through the in-process `BlockRunner`; `BlockRunner`, `RunRequest` (plain,
 * JSON-serialisable data: what one run is), `RunHooks` (the signal, the observer, `onStart`) and
 * `RunReport` are the contract every runner keeps, the child-process one of `agent-block mcp` and
 * `serve` included; a program of yours that takes a `BlockRunner` runs blocks in process or in
 * child processes alike.
 *
 * ## How a run ended
 * `BlockReport.outcome` is the one `Outcome` type every runner reports; `exitCodeOf(outcome)` (and
 * `BlockReport.exitCode`) is what the CLI exits with for it: 0 returned, 75 deferred
 * (`EXIT.DEFERRED`), the code of `os.exit`, 1 raised, 130 cancelled, 124 timed out
 * (`EXIT_TIMED_OUT`). `BlockError`, like the CLI's `UsageError`, is an `AgentBlockError`: an error
 * carrying its `exitCode`.
 *
 * ## Records
 * `openExistingStore` with `listSessions` / `exportSession` read a run's kernel log
 * (`<project>/.agent-block/knl.sqlite`, or `stores({ kernel })`), as `agent-block knl` does;
 * `BlockReport.sessions` names the sessions a run opened, `EventStore.read` / `tail` give their
 * events, and `closeStore(path)` closes the connection when the reader is done (runs of this
 * process writing the same file share it).
 *
 * ## Blocks by name
 * `scanBlocks(blockRoots(projectRoot, home))` lists the blocks `agent-block -b NAME` can run (the
 * project's `.agent-block/blocks/` and `blocks/`, then `$AGENT_BLOCK_HOME/blocks/`, the nearer
 * winning), `findBlock(roots, name)` finds one; run it with `ScriptSource.path(entry.path)`.
 * `VERSION` is the runtime's version.
 *
 * ## An in-process spawner (seed 002)
 * An engine that hosts agents in its own process maps onto the SDK like this:
 * - prompt-based agents: `ScriptSource.defaultAgent({ mcpServers })` with only the servers named
 *   by the agent's `mcp__<server>__<tool>` grants (a granted server offers all its tools);
 * - script-based agents: `ScriptSource.path(scriptPath)`, run verbatim;
 * - the agent's system prompt: `context(text)`; the step's input: `prompt(text)` (structured input
 *   JSON-encoded: the script decodes it with `std.json.decode(_PROMPT)`);
 * - the task's metadata and agent context: `extraGlobals({ _TASK_METADATA, _AGENT_CTX })`;
 * - the result: `hostHandler(fn)` takes the first emit of any kind but `artifact` as the terminal
 *   value (`payload.content`, else `payload.response`, else the payload; with no `artifact`
 *   handler set, the any-kind handler receives `artifact` events too, so it skips them);
 *   artifacts arrive in `BlockReport.artifacts` (and at an `artifact` handler, if one is set);
 * - the per-task working directory: the config's `projectRoot` — it is `std.env.project_root()`
 *   and the working directory of the run, of `sh.exec` and of MCP servers, and the host
 *   process's cwd is never changed;
 * - the engine's cancel token: `signal(token)`; its MCP timeout: `mcpRpcTimeoutMs(ms)`.
 *
 * ## Traces and metrics (OpenTelemetry)
 * A run exports its spans and metrics in the OpenTelemetry GenAI conventions when its config has
 * telemetry settings (`BlockConfig.builder(...).telemetry(telemetryFromEnv(env))`: nothing reads
 * the `OTEL_*` variables unless you do) or your own providers
 * (`.tracerProvider(provider, meterProvider?)`: the spans go to them, and flushing is yours).
 * `.traceparent(header)` makes the run's span a child of yours. Without either, no OpenTelemetry
 * code is loaded.
 *
 * ## Stability
 * This module (`@agent-block/agent-block`) is the stable surface. The engine below it — the Lua
 * engine, its C API and value converter, raw host functions and host modules, the runners,
 * process groups — is exported from `@agent-block/agent-block/unstable-engine` and may change
 * without a major version.
 *
 * @module
 */
import { settingsFromEnv } from "./src/config/env_settings.ts";
import type { BlockConfig } from "./src/sdk/config.ts";
import { type BlockReport, runConfig } from "./src/sdk/run_block.ts";
import { InProcessRunner } from "./src/runner/in_process.ts";

/**
 * Runs one block to its report. A config without `env` runs with a copy of this process's
 * environment (read now); one without `cwd` works in its project root, a relative one being
 * taken from this process's working directory.
 * @param config the run, from `BlockConfig.builder(...).build()`
 *
 * @example Cancel a run
 * ```ts
 * import { BlockConfig, runBlock, ScriptSource } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const stop = new AbortController();
 * setTimeout(() => stop.abort("enough"), 50);
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline("std.task.sleep(30)", "wait.lua"), ".")
 *     .signal(stop.signal)
 *     .env({})
 *     .build(),
 * );
 * assert.equal(report.outcome.status, "cancelled");
 * assert.equal(report.exitCode, 130);
 * ```
 */
export function runBlock(config: BlockConfig): Promise<BlockReport> {
  return runConfig(
    config,
    { env: () => Deno.env.toObject(), cwd: () => Deno.cwd() },
    (handles) => new InProcessRunner({ ...handles, envSettings: settingsFromEnv }),
  );
}

export type { Artifact, BlockReport } from "./src/sdk/run_block.ts";
export { ARTIFACT_KIND } from "./src/sdk/run_block.ts";
export type { MeshSettings, RunSettings, SettingsLogLevel } from "./src/run_settings.ts";
export type {
  BlockRunner,
  Correlation,
  RunHooks,
  RunReport,
  RunRequest,
  RunStores,
  RunText,
  StartFacts,
} from "./src/runner/runner.ts";
export {
  BlockConfig,
  BlockConfigBuilder,
  type BlockConfigFields,
  type BlockLimits,
  RESERVED_GLOBALS,
  type StorePaths,
} from "./src/sdk/config.ts";
export {
  type DefaultAgentOptions,
  type McpServerConfig,
  ScriptSource,
  type ScriptSourceConstructors,
  type SecretKeySource,
  type TextSource,
} from "./src/sdk/sources.ts";
export type { HostTool, HostToolContext, ToolInfo } from "./src/sdk/host_tools.ts";
export { BlockError, type BlockErrorCode, type BlockErrorDetails, blockErrorOf } from "./src/sdk/errors.ts";
export {
  EXIT_TIMED_OUT,
  exitCodeOf,
  type Outcome,
  type OutcomeStatus,
  RAISED_CODES,
  type RaisedCode,
} from "./src/outcome.ts";
export { AgentBlockError, EXIT, UsageError } from "./src/errors.ts";
export type { JsonValue } from "./src/json/codec.ts";
export { type BusEvent, type BusHandler, BusHost } from "./src/host/bus.ts";
export type { RunEvent, RunObserver } from "./src/obs/run_events.ts";
export {
  type OtelMeterProvider,
  type OtelTracerProvider,
  telemetryFromEnv,
  type TelemetrySettings,
  TelemetrySettingsError,
} from "./src/obs/otel/settings.ts";
export { blockRoots, findBlock, scanBlocks } from "./src/blocks/registry.ts";
export type { BlockEntry, BlockRoot, BlockTier } from "./src/blocks/registry.ts";
export type {
  Declaration,
  DeclarationError,
  JsonSchema,
  PromptArgument,
  PromptDeclaration,
  ResourceDeclaration,
  ToolDeclaration,
} from "./src/blocks/declaration.ts";
export { VERSION } from "./src/version.ts";
export {
  exportSession,
  type ExportShape,
  listSessions,
  type SessionSummary,
  UnknownSession,
} from "./src/knl/export.ts";
export {
  type Appended,
  closeStore,
  type EventRow,
  EventStore,
  type NewEvent,
  openExistingStore,
} from "./src/knl/store.ts";
