/**
 * Running a flow durably: a new run, a resume, a rerun from a step, and the dispatcher that
 * memoises steps in the run's record.
 *
 * Owns the run's lifecycle around the interpreter: the initial context (`default_init_ctx`
 * shallow-merged under the given one; a non-object given context replaces it), the run's record
 * (`record.ts`), replay by memoisation, waiting steps and cancellation.
 *
 * Every step is a `StepRequest` to the step runner (`step_runner.ts`, over a `BlockRunner`), or a
 * call of an embedder's function (`fn` agents). Before dispatching, a step's key is computed:
 * (ref, sha256 of the canonical input and the agent's digest, occurrence — the count of earlier
 * dispatches with the same ref and hash in this evaluation). A key the record has a pass for
 * (`passed`, `skipped`, `answered`) returns its value without running anything (`replay_hit`);
 * any other runs and is recorded. The block sees `_STEP_KEY` = `<run>/<ref>/<hash prefix>/<occurrence>`,
 * the same for a retried, resumed or crashed-and-resumed dispatch of the same step, so it can make
 * its own side effects idempotent.
 *
 * Invariants:
 * - Resume re-evaluates the flow from the start with the run's recorded initial context; since
 *   the flow is a pure function of that context and the step values, replayed steps give the
 *   same context and only missing steps run.
 * - A failed command changes nothing in the record: resume, answer and rerun check the run and
 *   its state before appending anything (the caller compiles the Blueprint before calling).
 * - One process runs a run at a time: a run, a resume or a rerun holds the run's lock
 *   (`run_lock.ts`, under `options.home`) from before its first append to after its last; a
 *   resume or rerun takes it before reading the state it acts on, and is refused (`FlowRunBusy`,
 *   exit 1) while another process holds it. A run recorded `running` whose lock it could take is
 *   `interrupted` (its process died): resume and rerun continue it.
 * - `job.defer` in an agent with `spec.on_defer = "wait"` ends the run `waiting` (exit 75); an
 *   answer is recorded as that step's value (`answered`) and the run goes on.
 */
import type { EventStore } from "../knl/store.ts";
import type { BlockRunner } from "../runner/runner.ts";
import { AgentBlockError } from "../errors.ts";
import { agentSettings, type CompiledFlow } from "./compile.ts";
import { FlowCancelled, FlowError, FlowWaiting } from "./errors.ts";
import { type Dispatcher, evalFlow, reasonOf } from "./eval.ts";
import type { Externs } from "./expr.ts";
import { foldStep, type StepFold } from "./fold.ts";
import { jsonHash } from "./hash.ts";
import { isObject, type Json } from "./path.ts";
import {
  FlowRecord,
  newRunId,
  replayKey,
  replayTable,
  runState,
  type StoredValue,
  UnknownFlowRun,
} from "./record.ts";
import { type RunLock, takeRunLock } from "./run_lock.ts";
import { stepRunner, type StepUsage } from "./step_runner.ts";

/** A TypeScript function an embedder registers as an agent (`kind: "fn"`). */
export type FlowFn = (
  input: Json,
  info: { stepKey: string; signal: AbortSignal; agentCtx?: Json },
) => Json | Promise<Json>;

/** A `flow.*` event as `onEvent` receives it. */
export interface FlowEvent {
  /** The run. */
  run: string;
  /** `flow.step_completed`, … */
  kind: string;
  /** Its payload (as recorded). */
  data: Record<string, Json>;
}

/** What every run, resume and rerun takes. */
export interface FlowRunOptions {
  /** The compiled flow. */
  compiled: CompiledFlow;
  /** Runs the block steps. */
  runner: BlockRunner;
  /** The project root (steps run in it; large values are kept under its `.agent-block/flows/`). */
  projectRoot: string;
  /** The steps' environment. */
  env: Readonly<Record<string, string>>;
  /** The kernel store the run is recorded in. */
  store: EventStore;
  /** The agent-block home: the run's lock is in its `flow-locks/`. */
  home: string;
  /** The file name the record shows (default the Blueprint's file). */
  script?: string;
  /** Stops the run: in-flight steps get the signal, the run is recorded `cancelled`. */
  signal?: AbortSignal;
  /** Functions for `call_extern`. */
  externs?: Externs;
  /** Functions for `fn` agents, by id. */
  fns?: Readonly<Record<string, FlowFn>>;
  /** Told of every `flow.*` event as it is recorded. */
  onEvent?: (event: FlowEvent) => void;
}

/** How a run ended. */
export interface FlowResult {
  /** The run id (`flow resume` takes it). */
  runId: string;
  /** `completed`, `failed`, `cancelled` or `waiting`. */
  status: "completed" | "failed" | "cancelled" | "waiting";
  /** The final context (completed). */
  ctx?: Json;
  /** What failed (failed, cancelled). */
  error?: { message: string; class?: string; failed_step?: string };
  /** The step waiting for an answer (waiting). */
  waiting?: { step: string; reason: string };
}

/** The initial context: `default_init_ctx` shallow-merged under `init` (a non-object `init` wins whole). */
export function mergeInitCtx(defaults: Json | undefined, init: Json | undefined): Json {
  if (init === undefined) return defaults ?? {};
  if (isObject(defaults) && isObject(init)) return { ...defaults, ...init };
  return init;
}

/** Starts a new run of `options.compiled` on `initCtx`. */
export async function runFlow(
  options: FlowRunOptions & {
    initCtx?: Json;
    taskMetadata?: Json;
    /** More labels of the run's session (`mcp_call` when an MCP call started it). */
    labels?: Readonly<Record<string, string>>;
  },
): Promise<FlowResult> {
  const bp = options.compiled.blueprint;
  const runId = newRunId();
  const record = recordOf(options, runId);
  const initCtx = mergeInitCtx(bp.default_init_ctx, options.initCtx);
  return await holding(takeRunLock(options.home, options.store, runId), async () => {
    record.open(bp.id, options.script ?? bp.file, options.labels);
    record.append("run_started", {
      blueprint_id: bp.id,
      blueprint_file: bp.file,
      agents: Object.fromEntries([...options.compiled.agents].map(([n, a]) => [n, a.digest])),
      init_ctx: initCtx,
      ...(options.taskMetadata !== undefined ? { task_metadata: options.taskMetadata } : {}),
    });
    return await evaluate(options, record, initCtx, options.taskMetadata, new Map());
  });
}

/** Runs `f` holding `lock`, and lets it go however `f` ends. */
async function holding<T>(lock: RunLock, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } finally {
    lock.release();
  }
}

/**
 * Takes run `runId`'s lock, once the run is known to exist (an unknown id is `UnknownFlowRun`).
 * Only whether it started is looked up here: its events are read once the lock is held.
 */
function lockRun(options: FlowRunOptions, runId: string): RunLock {
  if (!recordOf(options, runId).started()) {
    throw new UnknownFlowRun(runId, options.store.db.location() ?? "the kernel store");
  }
  return takeRunLock(options.home, options.store, runId);
}

/** Run `runId`'s record, its events, its start event and its state; `UnknownFlowRun` without a start. */
function recordedRun(options: FlowRunOptions, runId: string) {
  const record = recordOf(options, runId);
  const events = record.events();
  const started = events.find((e) => e.kind === "flow.run_started");
  if (!started) throw new UnknownFlowRun(runId, options.store.db.location() ?? "the kernel store");
  return { record, events, started, state: runState(events) };
}

/**
 * Continues run `runId` (recorded in `options.store`); `answer` answers a waiting step. A run
 * another process still runs is refused (`FlowRunBusy`).
 */
export async function resumeFlow(
  runId: string,
  options: FlowRunOptions & { answer?: Json },
): Promise<FlowResult> {
  return await holding(lockRun(options, runId), () => resumeHeld(runId, options));
}

async function resumeHeld(runId: string, options: FlowRunOptions & { answer?: Json }): Promise<FlowResult> {
  const { record, events, started, state } = recordedRun(options, runId);
  if (state === "completed") {
    throw new AgentBlockError(
      `flow run ${runId} already completed; 'flow rerun ${runId} --from STEP' runs it again from a step`,
      1,
    );
  }
  const wait = [...events].reverse().find((e) => e.kind === "flow.run_waiting");
  if (options.answer !== undefined && state !== "waiting") {
    throw new AgentBlockError(`flow run ${runId} is ${state}, not waiting for an answer`, 1);
  }
  if (state === "waiting" && options.answer === undefined) {
    throw new AgentBlockError(
      `flow run ${runId} is waiting at step '${wait?.data.step}' (${wait?.data.reason}); answer it with --answer JSON`,
      1,
    );
  }
  if (options.answer !== undefined && wait) {
    const d = wait.data;
    const stored = await record.storeValue(String(d.key), options.answer);
    record.append("step_completed", {
      ref: d.step as string,
      key: d.key as string,
      input_hash: d.input_hash as string,
      occurrence: d.occurrence as number,
      status: "answered",
      ...stored,
      duration_ms: 0,
    });
  }
  record.append("run_resumed", options.answer !== undefined ? { answered: String(wait?.data.step) } : {});
  return await evaluate(
    options,
    record,
    started.data.init_ctx as Json,
    started.data.task_metadata as Json | undefined,
    replayTable([...events, ...record.eventsAfter(events)]),
  );
}

/**
 * Runs run `runId` again from the first occurrence of step `from`, keeping the steps before it;
 * any run no process runs (finished, waiting, or `interrupted`), else `FlowRunBusy`.
 */
export async function rerunFlow(runId: string, from: string, options: FlowRunOptions): Promise<FlowResult> {
  return await holding(lockRun(options, runId), () => rerunHeld(runId, from, options));
}

/** Rerun with the lock held: a run recorded `running` here is interrupted (its process died). */
async function rerunHeld(runId: string, from: string, options: FlowRunOptions): Promise<FlowResult> {
  const { record, events, started } = recordedRun(options, runId);
  const refs = new Set(events.filter((e) => e.kind === "flow.step_completed").map((e) => String(e.data.ref)));
  if (!refs.has(from)) {
    throw new AgentBlockError(
      `flow run ${runId} has no step '${from}' (its steps: ${[...refs].join(", ") || "none"})`,
      1,
    );
  }
  record.append("replay_cut", { from_step: from });
  record.append("run_resumed", { rerun_from: from });
  return await evaluate(
    options,
    record,
    started.data.init_ctx as Json,
    started.data.task_metadata as Json | undefined,
    replayTable([...events, ...record.eventsAfter(events)]),
  );
}

function recordOf(options: FlowRunOptions, runId: string): FlowRecord {
  return new FlowRecord(
    options.store,
    runId,
    options.projectRoot,
    options.onEvent ? (kind, data) => options.onEvent!({ run: runId, kind, data }) : undefined,
  );
}

async function evaluate(
  options: FlowRunOptions,
  record: FlowRecord,
  initCtx: Json,
  taskMetadata: Json | undefined,
  replay: Map<string, { ref: string; status: string; stored: StoredValue; reason?: string }>,
): Promise<FlowResult> {
  const { compiled } = options;
  const runId = record.runId;
  const signal = options.signal ?? new AbortController().signal;
  const run = stepRunner(options.runner);
  const occurrences = new Map<string, number>();

  const dispatch: Dispatcher = async (ref, input, stepSignal) => {
    const agent = compiled.agents.get(ref);
    if (!agent) {
      throw new FlowError(
        "DispatcherError",
        `dispatcher error for ref '${ref}': no agent named '${ref}'`,
        ref,
      );
    }
    const inputHash = jsonHash({ input, agent: agent.digest });
    const n = occurrences.get(ref + "\u0000" + inputHash) ?? 0;
    occurrences.set(ref + "\u0000" + inputHash, n + 1);
    const key = `${runId}/${ref}/${inputHash.slice(0, 12)}/${n}`;
    const ids = { ref, key, input_hash: inputHash, occurrence: n };
    const hit = replay.get(replayKey(ref, inputHash, n));
    if (hit) {
      record.hold("replay_hit", { ...ids, status: hit.status }); // committed with the next event
      if (hit.status === "skipped") return { skipped: hit.reason ?? "" };
      return { value: await record.loadValue(hit.stored) };
    }
    const labels = { flow: compiled.blueprint.id, flow_run: runId, flow_step: key };
    const globals: Record<string, Json> = { _STEP_KEY: key };
    if (taskMetadata !== undefined && taskMetadata !== null) globals._TASK_METADATA = taskMetadata;
    if (agent.agentCtx !== undefined && agent.agentCtx !== null) globals._AGENT_CTX = agent.agentCtx;
    const settings = agentSettings(agent);
    if (settings) globals._FLOW_AGENT = settings;
    const prompt = typeof input === "string" ? input : JSON.stringify(input);
    const script = agent.run.type === "script" ? agent.run.script : undefined;
    record.append("step_dispatched", {
      ...ids,
      kind: agent.kind,
      request: agent.run.type === "fn" ? { fn: agent.run.fnId } : {
        script: "path" in script! ? script.path : script!.name,
        prompt,
        ...(agent.context !== undefined ? { context_sha256: jsonHash(agent.context) } : {}),
        labels,
        globals,
      },
    });
    const t0 = performance.now();
    let fold: StepFold;
    // A block step's spend and its own sessions (an SDK function step has neither).
    let spent: { usage: StepUsage | null; child_sessions: string[] } = { usage: null, child_sessions: [] };
    if (agent.run.type === "fn") {
      const fn = options.fns?.[agent.run.fnId];
      try {
        if (!fn) throw new Error(`no function '${agent.run.fnId}' is registered`);
        const value = await fn(input, {
          stepKey: key,
          signal: stepSignal,
          ...(agent.agentCtx !== undefined ? { agentCtx: agent.agentCtx } : {}),
        });
        fold = stepSignal.aborted
          ? { status: "cancelled", reason: reasonOf(stepSignal) }
          : { status: "passed", value: value ?? null };
      } catch (e) {
        fold = stepSignal.aborted
          ? { status: "cancelled", reason: reasonOf(stepSignal) }
          : { status: "failed", message: `step '${ref}' raised: ${(e as Error)?.message ?? e}` };
      }
    } else {
      const result = await run({
        script: script!,
        projectRoot: options.projectRoot,
        env: options.env,
        prompt,
        ...(agent.context !== undefined ? { context: agent.context } : {}),
        labels,
        globals,
        signal: stepSignal,
      });
      fold = foldStep(ref, result, agent.def.verdict);
      spent = { usage: result.usage ?? null, child_sessions: result.sessions ?? [] };
    }
    const duration_ms = Math.round(performance.now() - t0);
    const done = { ...ids, duration_ms, ...spent, child_labels: labels };
    switch (fold.status) {
      // A pass or a skip is committed with the run's next event (the next step's dispatch, at
      // the latest), in one transaction with it (`record.ts`).
      case "passed":
        record.appendWithNext("step_completed", {
          ...done,
          status: "passed",
          ...await record.storeValue(key, fold.value),
        });
        return { value: fold.value };
      case "skipped":
        if (agent.onDefer === "wait") {
          record.append("step_completed", { ...done, status: "waiting", reason: fold.reason });
          throw Object.assign(new FlowWaiting(ref, fold.reason), { ids });
        }
        record.appendWithNext("step_completed", { ...done, status: "skipped", reason: fold.reason });
        return { skipped: fold.reason };
      case "failed":
        record.append("step_completed", { ...done, status: "failed", error: fold.message });
        throw new FlowError("DispatcherError", fold.message, ref);
      case "cancelled":
        record.append("step_completed", { ...done, status: "cancelled", reason: fold.reason });
        throw new FlowCancelled(fold.reason);
    }
  };

  try {
    return await finish(options, record, initCtx, signal, dispatch);
  } finally {
    record.settle();
  }
}

/** Evaluates the flow with `dispatch` and records how it ended. */
async function finish(
  options: FlowRunOptions,
  record: FlowRecord,
  initCtx: Json,
  signal: AbortSignal,
  dispatch: Dispatcher,
): Promise<FlowResult> {
  const { compiled } = options;
  const runId = record.runId;
  try {
    const ctx = await evalFlow(compiled.blueprint.flow, initCtx, {
      dispatch,
      externs: options.externs,
      signal,
      maxParallel: compiled.maxParallel,
    });
    const stored = await record.storeValue("final", ctx);
    record.append("run_finished", {
      status: "completed",
      ...("value" in stored ? { ctx } : { ctx_ref: stored.value_ref }),
    });
    record.close("ok");
    return { runId, status: "completed", ctx };
  } catch (e) {
    if (e instanceof FlowCancelled || (signal.aborted && !(e instanceof FlowWaiting))) {
      const reason = e instanceof FlowCancelled ? e.reason : reasonOf(signal);
      record.append("cancel_requested", { reason });
      record.append("run_finished", { status: "cancelled", error: { message: `cancelled: ${reason}` } });
      return { runId, status: "cancelled", error: { message: `cancelled: ${reason}` } };
    }
    if (e instanceof FlowWaiting) {
      const ids = (e as FlowWaiting & { ids: Record<string, Json> }).ids;
      record.append("run_waiting", { step: e.ref, reason: e.reason, ...ids });
      return { runId, status: "waiting", waiting: { step: e.ref, reason: e.reason } };
    }
    const error = e instanceof FlowError
      ? { message: e.message, class: e.kind, ...(e.ref !== undefined ? { failed_step: e.ref } : {}) }
      : { message: `internal failure: ${(e as Error)?.message ?? e}` };
    record.append("run_finished", { status: "failed", error });
    return { runId, status: "failed", error };
  }
}
