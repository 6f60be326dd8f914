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
 * What is here: the runtime's own run function (`runSpec`, taking a `RunSpec` with raw host
 * modules), the Lua engine a `HostModule` installs its functions into, the raw C API of the wasm
 * build, the value converter, the runners (`InProcessRunner`, behind the `BlockRunner`
 * interface `serve` and flows use), the run environment and process groups, and the run's
 * secrets (`RunContext.secrets`: a host module that records text from outside masks it there).
 *
 * ```ts
 * import { type HostModule, runSpec } from "@agent-block/agent-block/unstable-engine";
 *
 * const answer: HostModule = (engine) => engine.define("answer", { sync: () => 42 });
 * const outcome = await runSpec({
 *   script: { source: "return answer()", name: "answer.lua" },
 *   projectRoot: Deno.cwd(),
 *   modules: [answer],
 * });
 * console.log(outcome); // { status: "returned", value: "42" }
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
export {
  type ChildEnvBase,
  ManagedProcess,
  ProcessGroups,
  type ProcessGroupsOptions,
  type SpawnOptions,
} from "./src/proc/group.ts";
export type { Tree } from "./src/proc/tree.ts";
export type { ChildEnvPolicy } from "./src/proc/child_env.ts";
export type { RunCorrelationIds } from "./src/correlation.ts";
export { runBlock as runSpec, type RunSpec } from "./src/runtime/run.ts";
export type { HostModule, RunContext } from "./src/host/context.ts";
export type { RunTrace, SpanKindName, TraceAttrs, TracedRow, TraceSpan } from "./src/obs/otel/run_trace.ts";
export type { MeshSpec } from "./src/host/mesh_open.ts";
export type {
  MeshCallOptions,
  MeshErrorKind,
  MeshHandler,
  MeshInbound,
  MeshReply,
  MeshTransport,
} from "./src/clients/mesh/transport.ts";
export { lazily, type LazyTriggers } from "./src/host/lazy.ts";
export { Logger, type LogLevel } from "./src/obs/log.ts";
export { Secrets, type SecretSource } from "./src/obs/secrets.ts";
export type { EngineLimits } from "./src/lua/engine.ts";
export type { Watchdog } from "./src/lua/watchdog.ts";
export { Args, LuaArgError } from "./src/lua/args.ts";
export { RunEnv } from "./src/run_env.ts";
export { type InProcessOptions, InProcessRunner } from "./src/runner/in_process.ts";
export {
  type BlockRunner,
  type InProcessFactory,
  ReportFold,
  type RunHandles,
  type RunHooks,
  type RunReport,
  type RunRequest,
} from "./src/runner/runner.ts";
export {
  parseRequestJson,
  REQUEST_JSON_VERSION,
  requestFromObject,
  RequestJsonError,
  requestToJson,
  requestToObject,
} from "./src/runner/request_json.ts";
export {
  EVENT_JSON_VERSION,
  eventLine,
  EventLineError,
  EventLineReader,
  LINE_MAX,
  parseEventLine,
} from "./src/runner/event_json.ts";
export { type RunCounts, RunTally } from "./src/runner/tally.ts";
export { LuaErrorValue, LuaFloat, LuaFunctionRef, LuaMulti } from "./src/json/values.ts";
