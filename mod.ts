/**
 * agent-block embedding SDK: run Lua blocks inside your own Deno program.
 *
 * ```ts
 * import { runBlock } from "./mod.ts";
 * const outcome = await runBlock({ script: { path: "blocks/hello.lua" }, projectRoot: "." });
 * if (outcome.status === "returned") console.log(outcome.value);
 * ```
 *
 * This module is an edge, like the CLI: `runBlock` here gives a run that names no `env` this
 * process's environment and no `cwd` this process's working directory (the CLI's behaviour).
 * Below it nothing reads either: pass `env` and `cwd` to give each of several runs in one process
 * its own (`std.env.set` changes only the run's own copy; relative paths resolve against its cwd).
 *
 * A run is one Lua engine, one main task and everything it spawns; `RunSpec.modules` adds host
 * functions (`HostModule`, or `lazily(triggers, module)` to install one on first use) next to the
 * standard library, `RunSpec.signal` stops a run, and the
 * returned `Outcome` says how it ended (`exitCodeOf` maps it to the CLI's exit codes 0/75/1/130).
 *
 * Events: a `BusHost` passed as `modules: [busModule(host)]` receives what the script emits with
 * `bus.emit` (TypeScript handlers per kind) and can emit into the script's `bus.on` handlers.
 * Records: `openExistingStore` + `exportSession` / `listSessions` read a run's kernel session log
 * (`<project>/.agent-block/knl.sqlite`) the way `agent-block knl export` does.
 *
 * Stability: this module (`@agent-block/agent-block`) is the stable surface. The engine below it
 * (`LuaEngine`, the wasm C API, the value converter, raw host functions, process groups) is
 * exported from `unstable_engine.ts` (`@agent-block/agent-block/unstable-engine`) and may change
 * without a major version; `HostModule`'s engine parameter and `RunContext.procs` are its types.
 *
 * @module
 */
import { runBlock as runBlockIn, type RunSpec } from "./src/runtime/run.ts";
import type { Outcome } from "./src/outcome.ts";

export type { RunSpec };

/**
 * Runs one block to its outcome. `spec.env` defaults to a copy of this process's environment
 * and `spec.cwd` to its working directory, read once here.
 */
export function runBlock(spec: RunSpec): Promise<Outcome> {
  return runBlockIn({ ...spec, env: spec.env ?? Deno.env.toObject(), cwd: spec.cwd ?? Deno.cwd() });
}

export { exitCodeOf, type Outcome, type OutcomeStatus } from "./src/outcome.ts";
export { RunEnv } from "./src/run_env.ts";
export type { HostModule, RunContext } from "./src/host/context.ts";
export { lazily, type LazyTriggers } from "./src/host/lazy.ts";
export { Logger, type LogLevel } from "./src/obs/log.ts";
export type { EngineLimits } from "./src/lua/engine.ts";
export { Args, LuaArgError } from "./src/lua/args.ts";
export { AgentBlockError, EXIT, UsageError } from "./src/errors.ts";
export { type InProcessOptions, InProcessRunner } from "./src/runner/in_process.ts";
export type { BlockRunner, RunHooks, RunReport, RunRequest } from "./src/runner/runner.ts";
export { LuaErrorValue, LuaFloat, LuaFunctionRef, LuaMulti } from "./src/json/values.ts";
export { blockRoots, findBlock, scanBlocks } from "./src/blocks/registry.ts";
export type { BlockEntry, BlockRoot, BlockTier } from "./src/blocks/registry.ts";
export { VERSION } from "./src/version.ts";
export { type BusEvent, type BusHandler, BusHost, busModule } from "./src/host/bus.ts";
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
