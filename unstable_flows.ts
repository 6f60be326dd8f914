/**
 * agent-block's flows of blocks, for embedders: run, resume and rerun a flow (a Blueprint file
 * or a read `Blueprint`), each step a run handed to a `BlockRunner` (this process's by default)
 * and recorded in the project's kernel database; and below that the Blueprint reader, the
 * compiler, the evaluator, the expression and path languages, and the flow record.
 *
 * UNSTABLE: the flow IR is at version 0.2 and follows the downstream engine's; everything here
 * may change in any release without a major version (like the `unstable_*` modules of Deno's
 * standard library). This entry is an edge: it reads the process environment and working
 * directory for the defaults (`FlowEdge`), nothing below it does. `mod.ts` does not re-export
 * it; import `@agent-block/agent-block/unstable-flows` and pin the version.
 *
 * ```ts
 * import { parseBlueprint, runFlow } from "@agent-block/agent-block/unstable-flows";
 *
 * const project = await Deno.makeTempDir();
 * const blueprint = parseBlueprint({
 *   id: "one",
 *   agents: [{ name: "hello", kind: "lua", spec: { source: "return 'hello, ' .. _PROMPT" } }],
 *   flow: { kind: "step", ref: "hello", in: { op: "path", at: "$.name" }, out: { op: "path", at: "$.out" } },
 * }, { file: `${project}/one.bp.json` });
 * const result = await runFlow(blueprint, { projectRoot: project, env: { HOME: project }, initCtx: { name: "flows" } });
 * console.log(result.ctx); // { name: "flows", out: "hello, flows" }
 * await Deno.remove(project, { recursive: true });
 * ```
 *
 * @module
 */
import { flowPaths, settingsFromEnv } from "./src/config/env_settings.ts";
import {
  type FlowEdge,
  type FlowOptions,
  listFlowRunsWith,
  rerunFlowWith,
  resumeFlowWith,
  runFlowWith,
} from "./src/flows/api.ts";
import type { Blueprint } from "./src/flows/blueprint.ts";
import type { Json as FlowJson } from "./src/flows/path.ts";
import type { FlowResult } from "./src/flows/run.ts";
import type { FlowRunSummary } from "./src/flows/record.ts";
import type { EventStore } from "./src/knl/store.ts";
import { InProcessRunner } from "./src/runner/in_process.ts";

const FLOW_EDGE: FlowEdge = {
  runner: () => new InProcessRunner({ envSettings: settingsFromEnv }),
  env: () => Deno.env.toObject(),
  cwd: () => Deno.cwd(),
  paths: flowPaths,
};

/**
 * Runs a flow of blocks: a Blueprint file (`.json`, `.yaml`, `.bp.lua`) or a read `Blueprint`.
 * Every step is a run handed to the runner (in this process by default) and recorded in the
 * project's kernel database, so `resumeFlow` can continue it after a crash or a cancel. It never
 * rejects for anything a step did: a failed, cancelled or waiting flow is a `FlowResult`; an
 * unreadable or broken Blueprint throws a `BlueprintError` (exit code 2).
 *
 * @param blueprint the Blueprint's file (relative to this process's working directory) or a read one
 * @param options the initial context, the project, the store, the signal, `call_extern`
 *   functions (`externs`), `fn` agents (`fns`), an event callback (`onEvent`)
 *
 * @example Two steps, one of them a TypeScript function
 * ```ts
 * import { parseBlueprint, runFlow } from "@agent-block/agent-block/unstable-flows";
 * import assert from "node:assert/strict";
 *
 * const project = await Deno.makeTempDir();
 * const blueprint = parseBlueprint({
 *   id: "greet",
 *   agents: [
 *     { name: "hello", kind: "lua", spec: { source: "return 'hello, ' .. _PROMPT" } },
 *     { name: "shout", kind: "fn" },
 *   ],
 *   flow: {
 *     kind: "seq",
 *     children: [
 *       { kind: "step", ref: "hello", in: { op: "path", at: "$.name" }, out: { op: "path", at: "$.greeting" } },
 *       { kind: "step", ref: "shout", in: { op: "path", at: "$.greeting" }, out: { op: "path", at: "$.loud" } },
 *     ],
 *   },
 * }, { file: `${project}/greet.bp.json` });
 * const result = await runFlow(blueprint, {
 *   projectRoot: project,
 *   env: { HOME: project }, // the run's own environment: its home (flow locks, stores) is under it
 *   initCtx: { name: "flows" },
 *   fns: { shout: (text) => String(text).toUpperCase() },
 * });
 * assert.equal(result.status, "completed");
 * assert.deepEqual(result.ctx, { name: "flows", greeting: "hello, flows", loud: "HELLO, FLOWS" });
 * await Deno.remove(project, { recursive: true });
 * ```
 */
export function runFlow(
  blueprint: string | Blueprint,
  options: FlowOptions & { initCtx?: FlowJson; taskMetadata?: FlowJson } = {},
): Promise<FlowResult> {
  return runFlowWith(FLOW_EDGE, blueprint, options);
}

/**
 * Continues a flow run that was interrupted, cancelled, failed or is waiting (`answer`: the
 * waiting step's value). The flow is evaluated again from the start; steps the record has a pass
 * for return their recorded value without running. The Blueprint is the one given, else the
 * run's recorded file (read and compiled again, so an edited agent's steps run again). A run
 * another process still runs is refused (`FlowRunBusy`).
 * @param runId the run (`FlowResult.runId`, `agent-block flow runs`)
 * @param options as `runFlow`'s, plus `blueprint` and `answer`
 */
export function resumeFlow(
  runId: string,
  options: FlowOptions & { blueprint?: Blueprint; answer?: FlowJson } = {},
): Promise<FlowResult> {
  return resumeFlowWith(FLOW_EDGE, runId, options);
}

/**
 * Runs a flow run that no process runs (finished, waiting or interrupted) again from the first occurrence of step `from`: the steps recorded
 * before it replay, it and everything after it run (the record is cut with an event, never edited).
 * @param runId the run
 * @param from the step's ref
 * @param options as `runFlow`'s, plus `blueprint`
 */
export function rerunFlow(
  runId: string,
  from: string,
  options: FlowOptions & { blueprint?: Blueprint } = {},
): Promise<FlowResult> {
  return rerunFlowWith(FLOW_EDGE, runId, from, options);
}

/**
 * Every flow run recorded in `store`, newest first, with its state. A run recorded `running` is
 * shown `interrupted` when no process runs it any more (no process holds its lock: it was killed,
 * or its machine went down); `resumeFlow` or `rerunFlow` continues it.
 * @param store the kernel store the runs are recorded in
 * @param options `home`: the agent-block home the runs' processes use (their locks are in its
 *   `flow-locks/`; default `AGENT_BLOCK_HOME`, else `~/.agent-block`)
 */
export function listFlowRuns(store: EventStore, options: { home?: string } = {}): FlowRunSummary[] {
  return listFlowRunsWith(FLOW_EDGE, store, options.home);
}

export type { FlowEdge, FlowOptions } from "./src/flows/api.ts";
export {
  type Blueprint,
  parseBlueprint,
  readBlueprint,
  type ReadOptions,
  type VerdictContract,
} from "./src/flows/blueprint.ts";
export type { AgentDef } from "./src/flows/blueprint.ts";
export {
  type AgentRun,
  type CompiledAgent,
  type CompiledFlow,
  compileFlow,
  type CompileOptions,
} from "./src/flows/compile.ts";
export { type Dispatcher, type DispatchResult, evalFlow, type EvalOptions } from "./src/flows/eval.ts";
export { evalExpr, type Expr, type Externs, parseExpr } from "./src/flows/expr.ts";
export { type FlowNode, type Join, parseNode } from "./src/flows/ir.ts";
export { type Json as FlowJson, parsePath, type Path } from "./src/flows/path.ts";
export {
  BlueprintError,
  FlowCancelled,
  FlowError,
  type FlowErrorClass,
  FlowWaiting,
} from "./src/flows/errors.ts";
export type { FlowEvent, FlowFn, FlowResult } from "./src/flows/run.ts";
export { type FlowRunState, type FlowRunSummary, UnknownFlowRun } from "./src/flows/record.ts";
export { FlowRunBusy } from "./src/flows/run_lock.ts";
export type { BlockRunner, RunHooks, RunReport, RunRequest } from "./src/runner/runner.ts";
