/**
 * agent-block engine internals, for embedders who need to go below the stable surface of
 * `mod.ts`: the Lua engine a `HostModule` installs its functions into, the raw C API of the wasm
 * build, the value converter, and the process groups a run starts its children in.
 *
 * UNSTABLE: everything exported here may change or disappear in any release, without a major
 * version (like the `unstable_*` modules of Deno's standard library). Depend on `mod.ts`
 * (`@agent-block/agent-block`) where it is enough; import this entry
 * (`@agent-block/agent-block/unstable-engine`) only for what it does not give, and pin the
 * version when you do.
 *
 * ```ts
 * import type { HostModule } from "@agent-block/agent-block";
 * import type { LuaEngine } from "@agent-block/agent-block/unstable-engine";
 * ```
 *
 * @module
 */
export type { Converter, ToJsOptions, ToLuaOptions } from "./src/lua/convert.ts";
export type { EmModule, LuaApi } from "./src/lua/capi.ts";
export {
  type ArgOptions,
  type CallContext,
  type DriveResult,
  type HostFunction,
  LuaCallbackError,
  LuaEngine,
} from "./src/lua/engine.ts";
export { ManagedProcess, ProcessGroups, type SpawnOptions } from "./src/proc/group.ts";
