/**
 * agent-block embedding SDK: run Lua blocks inside your own Deno program.
 *
 * ```ts
 * import { runBlock } from "./mod.ts";
 * const outcome = await runBlock({ script: { path: "blocks/hello.lua" }, projectRoot: "." });
 * if (outcome.status === "returned") console.log(outcome.result);
 * ```
 *
 * A run is one Lua engine, one main task and everything it spawns; `RunSpec.modules` adds host
 * functions (`HostModule`) next to the standard library, `RunSpec.signal` stops a run, and the
 * returned `RunOutcome` says how it ended (the CLI maps it to exit codes 0/75/1/130).
 *
 * @module
 */
export { runBlock } from "./src/runtime/run.ts";
export type { RunOutcome, RunSpec } from "./src/runtime/run.ts";
export type { HostModule, RunContext } from "./src/host/context.ts";
export {
  type ArgOptions,
  type CallContext,
  type EngineLimits,
  type HostFunction,
  LuaCallbackError,
  LuaEngine,
} from "./src/lua/engine.ts";
export { Args, LuaArgError } from "./src/lua/args.ts";
export { LuaErrorValue, LuaFloat, LuaFunctionRef, LuaMulti } from "./src/lua/values.ts";
export { blockRoots, findBlock, scanBlocks } from "./src/blocks/registry.ts";
export type { BlockEntry, BlockRoot, BlockTier } from "./src/blocks/registry.ts";
export { VERSION } from "./src/version.ts";
