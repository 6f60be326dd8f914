/**
 * The embedding face of flows: from a Blueprint (a file or a read one) and plain options to a
 * run, a resume or a rerun, with the defaults an embedder expects.
 *
 * Owns resolving what the caller left out, given the edge's choices (`mod.ts` passes its runner
 * and this process's environment and working directory; nothing here reads the process): the
 * project root, the kernel store (the edge's reading of `AGENT_BLOCK_KNL_PATH` of the given
 * environment, `FlowEdge.paths`, else `<project>/.agent-block/knl.sqlite`), `$AGENT_BLOCK_HOME`
 * for block lookup (read by the edge likewise), reading and
 * compiling the Blueprint (JSON, YAML or `.bp.lua`; warnings to `onWarning`).
 *
 * The run's lock (`run_lock.ts`) lives in that home's `flow-locks/`: a process listing runs, or
 * resuming one, must resolve the same home as the process running it to see it live.
 *
 * Invariant: a resume or rerun compiles the Blueprint (the one given, else the run's recorded
 * file) before the record is touched, so a Blueprint that no longer compiles changes nothing.
 */
import { isAbsolute, join, resolve } from "node:path";
import { userHome } from "../home.ts";
import { defaultStorePath, storePathFrom } from "../knl/paths.ts";
import { type EventStore, openStore } from "../knl/store.ts";
import type { BlockRunner } from "../runner/runner.ts";
import { type Blueprint, readBlueprint } from "./blueprint.ts";
import { type CompiledFlow, compileFlow } from "./compile.ts";
import type { Externs } from "./expr.ts";
import { readLuaBlueprint } from "./lua_form.ts";
import type { Json } from "./path.ts";
import { type FlowRunSummary, listFlowRuns, UnknownFlowRun } from "./record.ts";
import * as core from "./run.ts";
import { runIsLive } from "./run_lock.ts";

/** Where and how a flow runs (everything optional). */
export interface FlowOptions {
  /** The project root (default: the working directory). */
  projectRoot?: string;
  /** The steps' environment (default: a copy of this process's). */
  env?: Record<string, string>;
  /** The kernel store, or its path (default: `AGENT_BLOCK_KNL_PATH`, else `<project>/.agent-block/knl.sqlite`). */
  store?: EventStore | string;
  /** Runs the block steps (default: in this process). */
  runner?: BlockRunner;
  /** Stops the run (in-flight steps get it; the run is recorded `cancelled`). */
  signal?: AbortSignal;
  /** Functions for `call_extern`. */
  externs?: Externs;
  /** Functions for `fn` agents, by id. */
  fns?: Readonly<Record<string, core.FlowFn>>;
  /** Told of every `flow.*` event as it is recorded. */
  onEvent?: (event: core.FlowEvent) => void;
  /** Told of every compile warning (default: ignored). */
  onWarning?: (warning: string) => void;
  /** More directories for `$file` / `$agent_md` references. */
  includes?: readonly string[];
}

/** What the edge decides: its runner and this process's environment and working directory. */
export interface FlowEdge {
  /** The runner used when the options name none. */
  runner: () => BlockRunner;
  /** The environment used when the options give none. */
  env: () => Record<string, string>;
  /** The working directory relative paths are taken from. */
  cwd: () => string;
  /**
   * The edge's reading of the paths an environment names (`flowPaths` of
   * `src/config/env_settings.ts`): `$AGENT_BLOCK_HOME` (else `<user home>/.agent-block`, the user's
   * home defaulting to `cwd`) and `AGENT_BLOCK_KNL_PATH` (absent: the project's kernel database).
   */
  paths: (env: Readonly<Record<string, string>>, cwd: string) => { home: string; kernel?: string };
}

/** `FlowEdge.paths` for an edge that reads no variable: the user's home, the project's kernel. */
export const defaultFlowPaths: FlowEdge["paths"] = (env, cwd) => ({
  home: join(userHome(env, cwd), ".agent-block"),
});

function prepare(blueprint: string | Blueprint | undefined, o: FlowOptions, edge: FlowEdge) {
  const cwd = edge.cwd();
  const env = o.env ?? edge.env();
  const projectRoot = resolve(cwd, o.projectRoot ?? ".");
  const runner = o.runner ?? edge.runner();
  const includes = (o.includes ?? []).map((d) => resolve(cwd, d));
  const paths = edge.paths(env, cwd);
  const home = paths.home;
  const store = typeof o.store === "object" ? o.store : openStore(
    o.store !== undefined ? storePathFrom(cwd, o.store) : defaultStorePath(projectRoot, paths.kernel),
  );
  const read = async (b: string | Blueprint): Promise<Blueprint> => {
    if (typeof b !== "string") return b;
    const file = isAbsolute(b) ? b : resolve(cwd, b);
    return file.endsWith(".lua")
      ? await readLuaBlueprint(file, { runner, projectRoot, env, includes, name: b })
      : await readBlueprint(file, { includes, projectRoot, name: b });
  };
  const compile = async (b: string | Blueprint): Promise<CompiledFlow> => {
    const compiled = compileFlow(await read(b), {
      projectRoot,
      home,
      fns: new Set(Object.keys(o.fns ?? {})),
    });
    for (const w of compiled.warnings) o.onWarning?.(w);
    return compiled;
  };
  const base = (compiled: CompiledFlow): core.FlowRunOptions => ({
    compiled,
    runner,
    projectRoot,
    env,
    store,
    home,
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.externs ? { externs: o.externs } : {}),
    ...(o.fns ? { fns: o.fns } : {}),
    ...(o.onEvent ? { onEvent: o.onEvent } : {}),
  });
  return { store, compile, base, blueprint };
}

/** Starts a run of `blueprint` (a file, or a read Blueprint). */
export async function runFlowWith(
  edge: FlowEdge,
  blueprint: string | Blueprint,
  options: FlowOptions & {
    initCtx?: Json;
    taskMetadata?: Json;
    /** More labels of the run's session (`agent-block mcp`'s `run_flow` adds its call's). */
    labels?: Readonly<Record<string, string>>;
  },
): Promise<core.FlowResult> {
  const p = prepare(blueprint, options, edge);
  const compiled = await p.compile(blueprint);
  return await core.runFlow({
    ...p.base(compiled),
    ...(options.initCtx !== undefined ? { initCtx: options.initCtx } : {}),
    ...(options.taskMetadata !== undefined ? { taskMetadata: options.taskMetadata } : {}),
    ...(options.labels !== undefined ? { labels: options.labels } : {}),
    ...(typeof blueprint === "string" ? { script: blueprint } : {}),
  });
}

/** The Blueprint a recorded run was started from. */
function recorded(store: EventStore, runId: string): string {
  const started = store.read(runId).find((e) => e.kind === "flow.run_started");
  if (!started) throw new UnknownFlowRun(runId, store.db.location() ?? "the kernel store");
  return String(started.data.blueprint_file);
}

/** Continues run `runId` (with `answer` for a waiting step). */
export async function resumeFlowWith(
  edge: FlowEdge,
  runId: string,
  options: FlowOptions & { blueprint?: Blueprint; answer?: Json },
): Promise<core.FlowResult> {
  const p = prepare(options.blueprint, options, edge);
  const compiled = await p.compile(options.blueprint ?? recorded(p.store, runId));
  return await core.resumeFlow(runId, {
    ...p.base(compiled),
    ...(options.answer !== undefined ? { answer: options.answer } : {}),
  });
}

/** Runs run `runId` again from the first occurrence of step `from`. */
export async function rerunFlowWith(
  edge: FlowEdge,
  runId: string,
  from: string,
  options: FlowOptions & { blueprint?: Blueprint },
): Promise<core.FlowResult> {
  const p = prepare(options.blueprint, options, edge);
  const compiled = await p.compile(options.blueprint ?? recorded(p.store, runId));
  return await core.rerunFlow(runId, from, p.base(compiled));
}

/**
 * Every flow run in `store`, newest first, a run recorded `running` that no process runs shown
 * `interrupted` (its lock looked for under `home`, default the edge environment's home).
 */
export function listFlowRunsWith(edge: FlowEdge, store: EventStore, home?: string): FlowRunSummary[] {
  return listFlowRuns(store, runIsLive(home ?? edge.paths(edge.env(), edge.cwd()).home, store));
}
