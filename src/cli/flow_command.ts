/**
 * `agent-block flow run|lint|runs|resume|rerun|show|schema`: flows of blocks from the command line.
 *
 * Owns the flags, the edge settings of a flow (project root, environment with the project's
 * `.env`, `$AGENT_BLOCK_HOME`, the kernel store), the choice of runner (in-process: every step is
 * a `RunRequest` to an `InProcessRunner`), Ctrl-C/SIGTERM as the run's AbortSignal, and the
 * output: `--result FILE` (the final context as JSON), `--progress` (one line per step on
 * stderr), `--events FILE|-` (the `flow.*` events as JSON Lines).
 *
 * Exit codes: 0 the flow completed (a halt gate is a completion); 1 it failed or was cancelled
 * (`failed_step` on stderr and in the record), or a run id is unknown, or another process still
 * runs the run a `resume`/`rerun` names (it holds the run's lock, `flows/run_lock.ts`); 2 usage
 * or compile errors (the file, the JSON pointer or line, and what was expected); 75 a step is
 * waiting for an answer (`flow resume RUN --answer JSON`).
 */
import { onStopSignals } from "./stop_signals.ts";
import { agentBlockHome, settingsFromEnv, storePathsFromEnv } from "../config/env_settings.ts";
import { isAbsolute, resolve } from "node:path";
import { AgentBlockError, EXIT, UsageError } from "../errors.ts";
import { writeStderr, writeStdout } from "../obs/log.ts";
import { didYouMean, type ParsedValues, parseFlags } from "./args.ts";
import { edgeEnvironment } from "./environment.ts";
import { defaultStorePath, storePathFrom } from "../knl/paths.ts";
import { type EventStore, openStore } from "../knl/store.ts";
import { InProcessRunner } from "../runner/in_process.ts";
import { type Blueprint, readBlueprint } from "../flows/blueprint.ts";
import { readLuaBlueprint } from "../flows/lua_form.ts";
import { type CompiledFlow, compileFlow } from "../flows/compile.ts";
import {
  type FlowEvent,
  type FlowResult,
  type FlowRunOptions,
  rerunFlow,
  resumeFlow,
  runFlow,
} from "../flows/run.ts";
import { listFlowRuns, shownState, UnknownFlowRun } from "../flows/record.ts";
import { runIsLive } from "../flows/run_lock.ts";
import { blueprintSchema } from "../flows/schema.ts";
import { showRun } from "../flows/show.ts";
import type { Json } from "../flows/path.ts";
import { isoLocal, table } from "./format.ts";

const HELP = `agent-block flow — run flows of blocks (seed 004 Blueprints), durably

Usage:
  agent-block flow run FILE [--init JSON|@FILE] [--result FILE] [--progress] [--events FILE|-]
  agent-block flow lint FILE
  agent-block flow runs [--json]
  agent-block flow resume RUN [--answer JSON|@FILE]
  agent-block flow rerun RUN --from STEP
  agent-block flow show RUN
  agent-block flow schema

FILE is a Blueprint: .json, .yaml/.yml, or .bp.lua (a Lua script returning the Blueprint table,
with require("flow") builders). Every run is recorded in the project's kernel database; resume
and rerun re-evaluate the flow and replay the steps already done. A run whose process died
(SIGKILL, a crash) is listed as interrupted; resume and rerun continue it, and refuse a run
another process still runs.

Options:
      --init JSON|@FILE    the initial context (merged over the Blueprint's default_init_ctx)
      --result FILE        write the final context there (JSON)
      --progress           one line per step on stderr
      --events FILE|-      the run's flow.* events as JSON Lines (- for stdout)
      --answer JSON|@FILE  the value of the step a waiting run waits at
      --from STEP          rerun from the first occurrence of that step (the steps before it replay)
      --include DIR        where $file / $agent_md references are also looked up (repeatable)
      --store PATH         the kernel database (default: AGENT_BLOCK_KNL_PATH, else
                           <project>/.agent-block/knl.sqlite)
  -p, --project DIR        project root (default .)
      --json               (runs) JSON Lines instead of the table
  -h, --help               print this help

Exit codes: 0 completed, 1 failed or cancelled, 2 usage or Blueprint errors, 75 waiting.

Example:
  agent-block flow run flows/review.bp.json --init '{"topic":"release notes"}' --result out.json --progress
  agent-block flow resume flow-mxaeaikq-e1291714952c   # after Ctrl-C or a crash: finished steps replay`;

const OPTIONS = {
  init: { type: "string" },
  result: { type: "string" },
  progress: { type: "boolean" },
  events: { type: "string" },
  answer: { type: "string" },
  from: { type: "string" },
  include: { type: "string", multiple: true },
  store: { type: "string" },
  project: { type: "string", short: "p" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

const COMMANDS = ["run", "lint", "runs", "resume", "rerun", "show", "schema"];

const enc = new TextEncoder();
const say = (line: string) => writeStderr(enc.encode(line + "\n"));

/** The edge settings of one invocation. */
interface Edge {
  cwd: string;
  projectRoot: string;
  env: Record<string, string>;
  home: string;
  storePath: string;
}

async function edgeOf(v: ParsedValues): Promise<Edge> {
  const project = (v.project as string | undefined) ?? ".";
  const edge = await edgeEnvironment(project);
  for (const w of edge.warnings) say(`[warn] ${w}`);
  let projectRoot: string;
  try {
    projectRoot = Deno.realPathSync(resolve(edge.cwd, project));
  } catch {
    throw new UsageError(`project directory ${project} does not exist`);
  }
  const store = v.store as string | undefined;
  return {
    cwd: edge.cwd,
    projectRoot,
    env: edge.env,
    home: agentBlockHome(edge.env, edge.cwd),
    storePath: store !== undefined
      ? storePathFrom(edge.cwd, store)
      : defaultStorePath(projectRoot, storePathsFromEnv(edge.env).kernel),
  };
}

/** A JSON argument, inline or `@file`. */
function jsonArg(flag: string, text: string, cwd: string): Json {
  let src = text;
  let where = `--${flag}`;
  if (text.startsWith("@")) {
    const path = resolve(cwd, text.slice(1));
    try {
      src = Deno.readTextFileSync(path);
    } catch (e) {
      throw new UsageError(`--${flag}: cannot read ${text.slice(1)}: ${(e as Error).message}`);
    }
    where = `--${flag} ${text.slice(1)}`;
  }
  try {
    return JSON.parse(src) as Json;
  } catch (e) {
    throw new UsageError(`${where}: not valid JSON: ${(e as Error).message}`);
  }
}

async function compileFile(file: string, v: ParsedValues, edge: Edge): Promise<CompiledFlow> {
  const includes = ((v.include as string[] | undefined) ?? []).map((d) => resolve(edge.cwd, d));
  const path = isAbsolute(file) ? file : resolve(edge.cwd, file);
  let bp: Blueprint;
  if (path.endsWith(".lua")) {
    bp = await readLuaBlueprint(path, {
      runner: new InProcessRunner({ envSettings: settingsFromEnv, stdout: (b) => writeStderr(b) }),
      projectRoot: edge.projectRoot,
      env: edge.env,
      includes,
      name: file,
    });
  } else {
    bp = await readBlueprint(path, { includes, projectRoot: edge.projectRoot, name: file });
  }
  const compiled = compileFlow(bp, { projectRoot: edge.projectRoot, home: edge.home });
  for (const w of compiled.warnings) say(`[warn] ${w}`);
  return compiled;
}

/** Writes the events and progress lines of a run. */
function watcher(v: ParsedValues, cwd: string): { onEvent?: (e: FlowEvent) => void; close: () => void } {
  const events = v.events as string | undefined;
  let file: Deno.FsFile | undefined;
  const sinks: ((e: FlowEvent) => void)[] = [];
  if (events !== undefined) {
    if (events === "-") sinks.push((e) => writeStdout(enc.encode(JSON.stringify(e) + "\n")));
    else {
      file = Deno.openSync(resolve(cwd, events), { write: true, create: true, truncate: true });
      const f = file;
      sinks.push((e) => f.writeSync(enc.encode(JSON.stringify(e) + "\n")));
    }
  }
  if (v.progress) sinks.push((e) => progressLine(e));
  return {
    onEvent: sinks.length ? (e) => sinks.forEach((s) => s(e)) : undefined,
    close: () => file?.close(),
  };
}

function progressLine(e: FlowEvent): void {
  const d = e.data;
  switch (e.kind) {
    case "flow.step_dispatched":
      return say(`[flow] ${d.ref} #${d.occurrence}: running`);
    case "flow.replay_hit":
      return say(`[flow] ${d.ref} #${d.occurrence}: replayed (${d.status})`);
    case "flow.step_completed":
      return say(
        `[flow] ${d.ref} #${d.occurrence}: ${d.status} (${d.duration_ms} ms)${d.error ? `: ${d.error}` : ""}`,
      );
    case "flow.run_finished":
      return say(`[flow] run ${e.run}: ${d.status}`);
    case "flow.run_waiting":
      return say(`[flow] run ${e.run}: waiting at ${d.step}: ${d.reason}`);
  }
}

/** Runs `f` with Ctrl-C / SIGTERM aborting its signal. */
async function withSignals<T>(f: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const stop = new AbortController();
  using _signals = onStopSignals((sig) => stop.abort(`received ${sig}`));
  return await f(stop.signal);
}

function report(result: FlowResult, v: ParsedValues, cwd: string): number {
  switch (result.status) {
    case "completed":
      if (v.result !== undefined) {
        Deno.writeTextFileSync(resolve(cwd, v.result as string), JSON.stringify(result.ctx, null, 2) + "\n");
      }
      say(`flow run ${result.runId}: completed`);
      return EXIT.OK;
    case "waiting":
      say(`flow run ${result.runId}: waiting at step '${result.waiting!.step}': ${result.waiting!.reason}`);
      say(`  answer it with: agent-block flow resume ${result.runId} --answer JSON`);
      return EXIT.DEFERRED;
    case "cancelled":
      say(
        `flow run ${result.runId}: ${
          result.error!.message
        } (agent-block flow resume ${result.runId} continues it)`,
      );
      return EXIT.FAILED;
    default:
      say(
        `error: flow run ${result.runId} failed${
          result.error?.failed_step ? ` at step '${result.error.failed_step}'` : ""
        }: ${result.error!.message}`,
      );
      if (result.error?.failed_step) say(`failed_step: ${result.error.failed_step}`);
      return EXIT.FAILED;
  }
}

function openRecordStore(edge: Edge, mustExist: boolean): EventStore {
  if (mustExist) {
    try {
      Deno.statSync(edge.storePath);
    } catch {
      throw new AgentBlockError(
        `no kernel database at ${edge.storePath}: no flow has run in this project`,
        1,
      );
    }
  }
  return openStore(edge.storePath);
}

/** `agent-block flow ...`; returns the exit code. */
export async function flowCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === "-h" || sub === "--help") {
    writeStderr(enc.encode(HELP + "\n"));
    return sub === undefined ? EXIT.USAGE : EXIT.OK;
  }
  if (!COMMANDS.includes(sub)) {
    const near = didYouMean(sub, COMMANDS);
    throw new UsageError(
      `flow: unknown command '${sub}'${
        near ? ` (did you mean '${near}'?)` : `; the commands are ${COMMANDS.join(", ")}`
      }`,
    );
  }
  const { values: v, positionals } = parseFlags(rest, OPTIONS, {
    allowPositionals: true,
    command: `flow ${sub}`,
  });
  if (v.help) {
    writeStderr(enc.encode(HELP + "\n"));
    return EXIT.OK;
  }
  const want = (n: number, what: string) => {
    if (positionals.length !== n) {
      throw new UsageError(
        `flow ${sub}: expected ${what}${positionals.length > n ? `, got extra '${positionals[n]}'` : ""}`,
      );
    }
  };
  if (sub === "schema") {
    want(0, "no arguments");
    writeStdout(enc.encode(JSON.stringify(blueprintSchema(), null, 2) + "\n"));
    return EXIT.OK;
  }
  const edge = await edgeOf(v);
  switch (sub) {
    case "lint": {
      want(1, "a Blueprint file");
      const compiled = await compileFile(positionals[0], v, edge);
      say(`${positionals[0]}: ok (${compiled.agents.size} agent(s), ${compiled.warnings.length} warning(s))`);
      return EXIT.OK;
    }
    case "run": {
      want(1, "a Blueprint file");
      const initCtx = v.init !== undefined ? jsonArg("init", v.init as string, edge.cwd) : undefined;
      const compiled = await compileFile(positionals[0], v, edge);
      const store = openRecordStore(edge, false);
      const w = watcher(v, edge.cwd);
      try {
        const result = await withSignals((signal) =>
          runFlow({ ...base(compiled, edge, store, signal, w.onEvent), initCtx, script: positionals[0] })
        );
        return report(result, v, edge.cwd);
      } finally {
        w.close();
      }
    }
    case "resume":
    case "rerun": {
      want(1, "a run id");
      const runId = positionals[0];
      if (sub === "rerun" && v.from === undefined) {
        throw new UsageError("flow rerun: --from STEP is required");
      }
      const answer = v.answer !== undefined ? jsonArg("answer", v.answer as string, edge.cwd) : undefined;
      const store = openRecordStore(edge, true);
      const started = store.read(runId).find((e) => e.kind === "flow.run_started");
      if (!started) throw new UnknownFlowRun(runId, edge.storePath);
      const compiled = await compileFile(String(started.data.blueprint_file), v, edge);
      const w = watcher(v, edge.cwd);
      try {
        const result = await withSignals((signal) => {
          const o = base(compiled, edge, store, signal, w.onEvent);
          return sub === "resume"
            ? resumeFlow(runId, { ...o, answer })
            : rerunFlow(runId, v.from as string, o);
        });
        return report(result, v, edge.cwd);
      } finally {
        w.close();
      }
    }
    case "runs": {
      want(0, "no arguments");
      let runs: ReturnType<typeof listFlowRuns> = [];
      try {
        Deno.statSync(edge.storePath);
        const store = openStore(edge.storePath);
        runs = listFlowRuns(store, runIsLive(edge.home, store));
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      if (v.json) {
        for (const r of runs) writeStdout(enc.encode(JSON.stringify(r) + "\n"));
        return EXIT.OK;
      }
      const rows = runs.map((r) => [
        r.run,
        r.flow,
        r.state,
        isoLocal(r.started),
        r.waiting
          ? `${r.waiting.step}: ${r.waiting.reason}`
          : r.failed_step
          ? `failed at ${r.failed_step}`
          : "",
      ]);
      writeStdout(enc.encode(table(["RUN", "FLOW", "STATE", "STARTED", "NOTE"], rows) + "\n"));
      return EXIT.OK;
    }
    default: {
      want(1, "a run id");
      const store = openRecordStore(edge, true);
      const events = store.read(positionals[0]);
      if (!events.some((e) => e.kind === "flow.run_started")) {
        throw new UnknownFlowRun(positionals[0], edge.storePath);
      }
      writeStdout(enc.encode(showRun(events, shownState(events, runIsLive(edge.home, store))) + "\n"));
      return EXIT.OK;
    }
  }
}

function base(
  compiled: CompiledFlow,
  edge: Edge,
  store: EventStore,
  signal: AbortSignal,
  onEvent?: (e: FlowEvent) => void,
): FlowRunOptions {
  return {
    compiled,
    runner: new InProcessRunner({ envSettings: settingsFromEnv }),
    projectRoot: edge.projectRoot,
    env: edge.env,
    store,
    home: edge.home,
    signal,
    ...(onEvent ? { onEvent } : {}),
  };
}
