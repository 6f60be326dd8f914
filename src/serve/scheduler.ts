/**
 * The job manager's scheduler: which runs start when, and the state the API reads.
 *
 * Owns the tick. Each `tick()`:
 * 1. rescans the job files (`job_file.ts`): a file added is a job, a file removed is no job (a
 *    live run of it goes on to its end), a bad file is a job with an `error` that never runs;
 * 2. ends the live runs whose stop was asked for (`requestStop`; the run's whole tree is ended
 *    by the runner, and the run is `stopped`);
 * 3. finds the due jobs — asked for (`requestRun`), or `every` past the end of the job's
 *    previous run (a job never run is due when first seen) — skipping jobs with a live run;
 * 4. starts them in due order (then by name) while fewer than `maxLive` runs are live; the rest
 *    wait (`queueLength`) for a free slot: when a run ends, the due runs are looked at again at
 *    once (against the jobs as the last tick scanned them), so a freed slot is taken without
 *    waiting for the next tick.
 *
 * A run is one `RunRequest` to the `BlockRunner` the manager was given (`serve` gives it the
 * child runner: each run an agent-block process of its own): the job's block in the project
 * root, labels `job=<name>` and `run=<id>`, the run id as its correlation's `runId` (the run's
 * `AGENT_BLOCK_RUN_ID`), its `timeout` as the request's `timeoutMs` (the runner ends the run at
 * it), `sandbox` when the job or the manager's `AGENT_BLOCK_SANDBOX` asks. A returned value is
 * written here to `<home>/runs/<job>/<id>.json` (atomically). Its start is recorded when the
 * runner says it started (`onStart`: the pid and process tag it reports are kept as opaque facts),
 * its end when it has ended (`record.ts`). While it runs, its events are counted onto its record
 * (`counts`: turns, tool calls, tokens, cost, sessions; `src/runner/tally.ts`), so the API and
 * the dashboard show what it is doing; the counts are written with its end.
 *
 * The sandbox is a ratchet: once the manager has seen a job declared `sandbox = true`, or its
 * record holds a sandboxed run of this project (an earlier start), or `AGENT_BLOCK_SANDBOX` asks,
 * every later run of every job is sandboxed for the manager's life. A confined run may write the
 * project, which holds the job files and the other jobs' code: one that rewrote its own
 * `job.toml` to `sandbox = false`, or planted a new job, must not be run unconfined after it.
 * A flow job is interpreted in the manager's process, but under the ratchet (or its own
 * `sandbox = true`) its steps run as confined child runs, never in the manager's process.
 *
 * Under `serve --nats` (`queue`), every run — a flow job's too — goes to the run queue instead
 * (`queue_dispatch.ts`): the request is published and the run followed to its end on a worker;
 * an interval run carries its due slot (its due time, 0 for a job's first run) so managers
 * sharing the queue never start one interval twice. Its start is recorded once it is queued,
 * without a pid (a worker's process is on its own machine; the API shows the one the worker
 * reports), so a manager restarted while the run waits for a worker follows it again. Its counts
 * are the worker's, handed on live as the worker writes them; the end is recorded here as any
 * other, its end time, counts and `lost` state as the worker recorded them.
 *
 * A flow job (`flow = ...` in its job.toml) runs its Blueprint instead (`flow_job.ts`), its steps
 * through `flowRunner` in this process, recorded in the project's kernel database; its outcome is
 * recorded like a block run's, and its result file holds `{flow_run, ctx}`.
 *
 * Invariants: at most one live run per job and at most `maxLive` in all; `every` counts from
 * the previous run's recorded end (across manager starts: the state is read back from the
 * record at construction); nothing here throws for anything a run or a job file did — a
 * record that cannot be written is logged and the run still ends.
 */
import type { TelemetrySettings } from "../obs/otel/settings.ts";
import { join } from "node:path";
import { exitCodeOf, type Outcome } from "../outcome.ts";
import type { BlockRunner, RunReport } from "../runner/runner.ts";
import { writeAtomic } from "../util/fs.ts";
import { RunTally } from "../runner/tally.ts";
import { type FlowJobRun, runFlowJob } from "./flow_job.ts";
import { type JobDecl, type JobFileError, scanJobs } from "./job_file.ts";
import type { QueueDispatch, QueueReport } from "./queue_dispatch.ts";
import {
  INLINE_RESULT_BYTES,
  type RunCountsRecord,
  type RunEnd,
  type RunRecord,
  type RunState,
  type ServeRecord,
} from "./record.ts";

/** What the scheduler is built with. */
export interface SchedulerOptions {
  projectRoot: string;
  /** `$AGENT_BLOCK_HOME` (results go to `<home>/runs/<job>/`). */
  home: string;
  /** The environment every run starts from (the manager's own). */
  env: Readonly<Record<string, string>>;
  /** The edge's reading of the home and kernel paths of a flow job's environment (`FlowEdge.paths`). */
  flowPaths?: FlowJobRun["paths"];
  /** OpenTelemetry export of every run (the manager's `OTEL_*`, parsed at its edge); absent: none. */
  telemetry?: TelemetrySettings;
  record: ServeRecord;
  /** Runs the jobs' blocks (a runner that keeps a stderr tail reports it in `stderrTail`). */
  runner: BlockRunner<RunReport & { stderrTail?: string }>;
  /** Runs the steps of flow jobs (`flow = ...` in a job.toml); absent, a flow job's run fails. */
  flowRunner?: BlockRunner;
  maxLive: number;
  /** Where the manager's log lines go. */
  log: (line: string) => void;
  /** Ended runs kept in memory per job for the API (default 1000; older ones stay in the file). */
  keepPerJob?: number;
  /** An earlier start of a manager for this project ran a job sandboxed (`ServeRecord.sandboxedBefore`). */
  sandboxedBefore?: boolean;
  /** The manager's environment asks for the sandbox (`AGENT_BLOCK_SANDBOX`, read at the edge): every job runs confined. */
  sandbox?: boolean;
  /**
   * `serve --nats`: every run (a flow job's too) goes to the run queue and runs on a worker;
   * `runner` and `flowRunner` are then unused.
   */
  queue?: QueueDispatch;
  /**
   * Start due runs on ticks only, never at a run's end (the scheduling before issue 30: the
   * benchmark's baseline, `serve --start-on-tick-only`).
   */
  startOnTickOnly?: boolean;
}

/** A job as the API shows it. */
export interface JobState {
  name: string;
  decl?: JobDecl;
  error?: JobFileError;
  lastEnd?: RunRecord;
  live?: RunRecord;
  /** The run id reserved by a request not started yet. */
  requested?: string;
  /** When `every` makes the job due next (ms since the epoch); absent without `every` or while a run goes. */
  nextRunMs?: number;
}

/** Counters for `/metrics`. */
export interface SchedulerMetrics {
  /** Ended runs by job and state (everything in the record). */
  byJobState: Map<string, Map<RunState, number>>;
  /** Durations of ended runs, seconds: cumulative counts per `DURATION_BUCKETS` bound, sum, count. */
  buckets: number[];
  durationSum: number;
  durationCount: number;
  live: number;
  queue: number;
  lastTickMs: number | undefined;
}

/** Upper bounds (seconds) of the run duration histogram. */
export const DURATION_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 300, 600, 1800, 3600];

interface Live {
  run: RunRecord;
  controller: AbortController;
  done: Promise<void>;
}

const enc = new TextEncoder();

/** A new run id: base-36 time, then 8 random hex digits (URL-safe, sorts by start time). */
export function newRunId(now = Date.now()): string {
  const rand = [...crypto.getRandomValues(new Uint8Array(4))].map((b) => b.toString(16).padStart(2, "0"))
    .join("");
  return `${now.toString(36)}-${rand}`;
}

/** The state an outcome stands for, and its one-line message. */
export function stateOf(
  outcome: Outcome,
): { state: Exclude<RunState, "running" | "lost">; message: string | null } {
  switch (outcome.status) {
    case "returned":
      return { state: "ok", message: null };
    case "deferred":
      return { state: "deferred", message: outcome.reason };
    case "exited":
      return outcome.code === 0
        ? { state: "ok", message: null }
        : outcome.code === 75
        ? { state: "deferred", message: "os.exit(75)" }
        : { state: "failed", message: `exited with code ${outcome.code}` };
    case "raised":
      return { state: "failed", message: outcome.message };
    case "cancelled":
      return { state: "stopped", message: outcome.reason };
    case "timed_out":
      return { state: "timed_out", message: `ran past its timeout of ${outcome.seconds} s and was ended` };
  }
}

/** Decides and starts the runs of one project's jobs. */
export class Scheduler {
  readonly #o: SchedulerOptions;
  #jobs = new Map<string, JobDecl>();
  #errors = new Map<string, JobFileError>();
  #firstSeen = new Map<string, number>();
  /** Runs by id (the live ones, and the last `keepPerJob` ended ones of each job). */
  #runs = new Map<string, RunRecord>();
  #ended = new Map<string, RunRecord[]>();
  #lastEnd = new Map<string, RunRecord>();
  #live = new Map<string, Live>();
  #requested = new Map<string, { id: string; at: number }>();
  #stops = new Set<string>();
  #stopped = false;
  /** Every run is sandboxed from now on (see the module doc: the ratchet). */
  #sandboxAll = false;
  readonly metrics: SchedulerMetrics = {
    byJobState: new Map(),
    buckets: DURATION_BUCKETS.map(() => 0),
    durationSum: 0,
    durationCount: 0,
    live: 0,
    queue: 0,
    lastTickMs: undefined,
  };

  /**
   * A scheduler over `options`, its past read from the record (runs left `running` must have
   * been closed first: `ServeRecord.closeLost`).
   */
  constructor(options: SchedulerOptions, past: RunRecord[]) {
    this.#o = options;
    this.#sandboxAll = options.sandboxedBefore === true || options.sandbox === true;
    for (const r of past) {
      if (r.state === "running") continue;
      this.#keepEnded(r);
    }
    // under the run queue a run left `running` goes on on its worker: follow it again
    if (options.queue) {
      for (const r of past) if (r.state === "running") this.#resume(r);
    }
  }

  #resume(r: RunRecord): void {
    this.#o.log(`run ${r.run_id} of job ${r.job} was going on the run queue: following it again`);
    const stub: JobDecl = {
      name: r.job,
      script: "",
      file: "",
      timeout: "",
      timeoutMs: 0,
      queue: "",
      maxAttempts: 1,
    };
    this.#start(stub, r.started_ms, undefined, { ...r });
  }

  #keepEnded(r: RunRecord): void {
    this.#runs.set(r.run_id, r);
    const list = this.#ended.get(r.job) ?? [];
    list.push(r);
    const keep = this.#o.keepPerJob ?? 1000;
    while (list.length > keep) this.#runs.delete(list.shift()!.run_id);
    this.#ended.set(r.job, list);
    const last = this.#lastEnd.get(r.job);
    if (!last || (r.ended_ms ?? 0) >= (last.ended_ms ?? 0)) this.#lastEnd.set(r.job, r);
    const m = this.metrics;
    const byState = m.byJobState.get(r.job) ?? new Map<RunState, number>();
    byState.set(r.state, (byState.get(r.state) ?? 0) + 1);
    m.byJobState.set(r.job, byState);
    if (r.ended_ms !== undefined) {
      const secs = Math.max(0, r.ended_ms - r.started_ms) / 1000;
      DURATION_BUCKETS.forEach((b, i) => {
        if (secs <= b) m.buckets[i]++;
      });
      m.durationSum += secs;
      m.durationCount++;
    }
  }

  /** One tick (see the module doc). */
  tick(now = Date.now()): void {
    if (this.#stopped) return;
    const scan = scanJobs(this.#o.projectRoot, this.#o.home);
    const names = new Set<string>();
    for (const j of scan.jobs) names.add(j.name);
    for (const e of scan.errors) names.add(e.name);
    for (const e of scan.errors) {
      const before = this.#errors.get(e.name);
      if (!before || before.message !== e.message || before.line !== e.line) {
        this.#o.log(
          `job ${e.name}: ${e.file}${e.line ? `:${e.line}` : ""}: ${e.message}; the job is skipped`,
        );
      }
    }
    this.#jobs = new Map(scan.jobs.map((j) => [j.name, j]));
    this.#errors = new Map(scan.errors.map((e) => [e.name, e]));
    const sandboxed = scan.jobs.find((j) => j.sandbox === true);
    if (!this.#sandboxAll && sandboxed) {
      this.#sandboxAll = true;
      this.#o.log(
        `job ${sandboxed.name} is sandboxed: every run of every job is sandboxed from now on ` +
          `(a confined run may write the project's job files)`,
      );
    }
    for (const n of names) if (!this.#firstSeen.has(n)) this.#firstSeen.set(n, now);
    for (const n of [...this.#firstSeen.keys()]) if (!names.has(n)) this.#firstSeen.delete(n);
    for (const n of [...this.#requested.keys()]) if (!this.#jobs.has(n)) this.#requested.delete(n);

    for (const id of this.#stops) {
      for (const l of this.#live.values()) if (l.run.run_id === id) l.controller.abort();
    }
    this.#stops.clear();
    this.#startDue(now);
    this.metrics.lastTickMs = now;
  }

  /**
   * Starts the due runs, in due order, while a slot is free (from a tick, and from a run's end:
   * a freed slot is taken at once, not at the next tick).
   */
  #startDue(now: number): void {
    // `slot` names an interval run for the run queue: its due time, 0 for a job's first run
    // (managers sharing a queue agree on both, so they never start one interval twice)
    const due: { job: JobDecl; at: number; slot?: number }[] = [];
    for (const job of this.#jobs.values()) {
      if (this.#live.has(job.name)) continue;
      const req = this.#requested.get(job.name);
      if (req) {
        due.push({ job, at: req.at });
        continue;
      }
      const at = this.#nextRunMs(job.name); // the one rule GET /jobs shows as next_run_ms
      // the due slot a queued run carries: 0 for a job's first run, else its due time
      const slot = this.#lastEnd.get(job.name)?.ended_ms === undefined ? 0 : at;
      if (at !== undefined && at <= now) due.push({ job, at, slot });
    }
    due.sort((a, b) => a.at - b.at || (a.job.name < b.job.name ? -1 : 1));
    let started = 0;
    for (const d of due) {
      if (this.#live.size >= this.#o.maxLive) break;
      this.#start(d.job, now, d.slot);
      started++;
    }
    this.metrics.queue = due.length - started;
    this.metrics.live = this.#live.size;
  }

  /**
   * Starts a run of `job` (or, with `resumed`, follows again on the run queue a run an earlier
   * start of this manager left going: its start is on the record already).
   */
  #start(job: JobDecl, now: number, slot?: number, resumed?: RunRecord): void {
    const req = resumed ? undefined : this.#requested.get(job.name);
    if (!resumed) this.#requested.delete(job.name);
    const id = resumed?.run_id ?? req?.id ?? newRunId(now);
    const run: RunRecord = resumed ?? {
      run_id: id,
      job: job.name,
      started_ms: now,
      pid: null,
      tag: null,
      requested: req !== undefined,
      sandboxed: this.#sandboxAll,
      state: "running",
    };
    const resultFile = join(this.#o.home, "runs", job.name, `${id}.json`);
    const controller = new AbortController();
    let recordedStart = resumed !== undefined;
    const recordStart = () => {
      if (recordedStart) return;
      recordedStart = true;
      this.#write(() =>
        this.#o.record.start({
          run_id: id,
          job: job.name,
          started_ms: run.started_ms,
          pid: run.pid,
          tag: run.tag,
          requested: run.requested,
          sandboxed: run.sandboxed,
        }), `the start of run ${id}`);
    };
    this.#runs.set(id, run);
    const done = (async () => {
      try {
        Deno.mkdirSync(join(this.#o.home, "runs", job.name), { recursive: true });
      } catch (e) {
        this.#o.log(
          `run ${id}: cannot create ${join(this.#o.home, "runs", job.name)}: ${(e as Error).message}`,
        );
      }
      const countsOf = (t: RunTally): RunCountsRecord => ({
        turns: t.counts.turns,
        tool_calls: t.counts.toolCalls,
        tokens_in: t.counts.tokensIn,
        tokens_out: t.counts.tokensOut,
        cost_usd: t.counts.costUsd ?? null,
        sessions: [...t.counts.sessions],
      });
      // What the run does, live on its in-memory record (the API and the dashboard read it).
      const tally = new RunTally((t) => run.counts = countsOf(t));
      const request = {
        script: { path: job.script },
        name: job.name,
        projectRoot: this.#o.projectRoot,
        prompt: job.prompt,
        context: job.context,
        labels: { job: job.name, run: id },
        env: this.#o.env,
        timeoutMs: job.timeoutMs,
        sandbox: run.sandboxed,
        correlation: { runId: id },
        ...(this.#o.telemetry ? { telemetry: this.#o.telemetry } : {}),
      };
      const hooks = {
        signal: controller.signal,
        observe: tally.observe,
        // under the run queue the worker counts; its counts come back while the run goes
        onCounts: (c: RunCountsRecord) => run.counts = c,
        // under the run queue a run is on the record once queued: a restarted manager follows it
        onQueued: () => recordStart(),
        onStart: ({ pid, tag }: { pid?: number; tag?: string }) => {
          run.pid = pid ?? null;
          run.tag = tag ?? null;
          recordStart();
        },
      };
      const report: { outcome: Outcome; stderrTail?: string } & Partial<QueueReport> =
        resumed && this.#o.queue
          ? await this.#o.queue.follow(id, hooks)
          : this.#o.queue
          ? await this.#o.queue.run(job, request, slot, hooks)
          : job.flow !== undefined
          ? await this.#flowRun(job, id, run.sandboxed, controller.signal, recordStart)
          : await this.#o.runner.run(request, hooks);
      recordStart();
      if (report.detached) {
        // the manager stopped following a queued run: it goes on on its worker, and stays
        // `running` on the record for the next start of this manager to follow again
        this.#live.delete(job.name);
        this.metrics.live = this.#live.size;
        return;
      }
      const ended = stateOf(report.outcome);
      const { state, message } = report.lost !== undefined
        ? { state: "lost" as const, message: report.lost }
        : ended;
      let result: string | null = null;
      let resultBytes: number | null = null;
      let file: string | null = null;
      if (report.outcome.status === "returned" && report.outcome.value !== undefined) {
        const v = report.outcome.value;
        const bytes = typeof v === "string" ? enc.encode(v) : v;
        resultBytes = bytes.length;
        try {
          writeAtomic(resultFile, bytes);
          file = resultFile;
        } catch (e) {
          this.#o.log(`run ${id}: cannot write ${resultFile}: ${(e as Error).message}`);
        }
        if (bytes.length <= INLINE_RESULT_BYTES) {
          try {
            result = typeof v === "string" ? v : new TextDecoder("utf-8", { fatal: true }).decode(v);
          } catch {
            result = null; // not text: the file has it
          }
        }
      }
      const end: RunEnd = {
        run_id: id,
        job: job.name,
        ended_ms: report.endedMs ?? Date.now(),
        exit_code: exitCodeOf(report.outcome),
        state,
        result,
        result_bytes: resultBytes,
        result_file: file,
        message,
        stderr_tail: report.stderrTail ?? "",
        counts: report.counts ?? countsOf(tally),
      };
      this.#write(() => this.#o.record.end(end), `the end of run ${id}`);
      Object.assign(run, end);
      this.#live.delete(job.name);
      this.metrics.live = this.#live.size;
      this.#keepEnded(run);
      // the freed slot goes to the next due run now (the jobs as the last tick scanned them)
      if (!this.#stopped && !this.#o.startOnTickOnly) this.#startDue(Date.now());
    })();
    this.#live.set(job.name, { run, controller, done });
  }

  /**
   * A flow job's run (`flow_job.ts`): its value (the result file) is `{flow_run, ctx}`. The flow
   * is interpreted here; its steps (and a `.bp.lua` Blueprint, which is a block too) run through
   * `flowRunner` in this process, or — when the run is sandboxed — through the jobs' runner as
   * confined child runs, so the ratchet holds for flows as for blocks.
   */
  async #flowRun(
    job: JobDecl,
    id: string,
    sandboxed: boolean,
    signal: AbortSignal,
    recordStart: () => void,
  ): Promise<{ outcome: Outcome; stderrTail?: string }> {
    recordStart();
    const jobs = this.#o.runner;
    const runner: BlockRunner | undefined = sandboxed
      ? { run: (request, hooks) => jobs.run({ ...request, sandbox: true }, hooks) }
      : this.#o.flowRunner;
    if (!runner) {
      return {
        outcome: {
          status: "raised",
          code: "config",
          message: "this manager runs no flow jobs",
          traceback: "",
        },
      };
    }
    const outcome = await runFlowJob({
      flow: job.flow!,
      init: job.init,
      projectRoot: this.#o.projectRoot,
      env: this.#o.env,
      paths: this.#o.flowPaths,
      runner,
      timeoutMs: job.timeoutMs,
      signal,
      telemetry: this.#o.telemetry,
      ids: { runId: id, job: job.name },
      warn: (m) => this.#o.log(`run ${id}: ${m}`),
    });
    return { outcome };
  }

  #write(fn: () => void, what: string): void {
    try {
      fn();
    } catch (e) {
      this.#o.log(`cannot record ${what} in ${this.#o.record.path}: ${(e as Error).message}`);
    }
  }

  /** Asks for a run of `name` at the next tick; the run id it will have. */
  requestRun(name: string, now = Date.now()): { run_id: string } | "unknown" | "invalid" {
    if (this.#errors.has(name)) return "invalid";
    if (!this.#jobs.has(name)) return "unknown";
    const known = this.#requested.get(name);
    if (known) return { run_id: known.id };
    const id = newRunId(now);
    this.#requested.set(name, { id, at: now });
    return { run_id: id };
  }

  /** Asks the next tick to end live run `id`. */
  requestStop(id: string): "ok" | "unknown" | "not_live" {
    const run = this.#runs.get(id);
    if (!run) return "unknown";
    if (run.state !== "running") return "not_live";
    this.#stops.add(id);
    return "ok";
  }

  /** Every job (valid or not), by name. */
  jobs(): JobState[] {
    const names = [...new Set([...this.#jobs.keys(), ...this.#errors.keys()])].sort();
    return names.map((name) => ({
      name,
      decl: this.#jobs.get(name),
      error: this.#errors.get(name),
      lastEnd: this.#lastEnd.get(name),
      live: this.#live.get(name)?.run,
      requested: this.#requested.get(name)?.id,
      nextRunMs: this.#nextRunMs(name),
    }));
  }

  /** When `every` makes job `name` due: its last end plus `every`, or when it was first seen. */
  #nextRunMs(name: string): number | undefined {
    const every = this.#jobs.get(name)?.everyMs;
    if (every === undefined || this.#live.has(name)) return undefined;
    const last = this.#lastEnd.get(name)?.ended_ms;
    return last === undefined ? this.#firstSeen.get(name) : last + every;
  }

  /** True when `name` is a job now or has runs on the record. */
  knowsJob(name: string): boolean {
    return this.#jobs.has(name) || this.#errors.has(name) || this.#ended.has(name) || this.#live.has(name);
  }

  /** Runs, newest first (of `job` only, when given), at most `limit`. */
  runs(job: string | undefined, limit: number): RunRecord[] {
    const all = job === undefined
      ? [...this.#runs.values()]
      : [...this.#runs.values()].filter((r) => r.job === job);
    return all.sort((a, b) => b.started_ms - a.started_ms || (a.run_id < b.run_id ? 1 : -1)).slice(0, limit);
  }

  /** One run, if it is known. */
  run(id: string): RunRecord | undefined {
    return this.#runs.get(id);
  }

  /** Ticks no more and waits for the live runs to end (their owner aborts the runner's `stopping`). */
  async drain(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#live.values()].map((l) => l.done));
  }
}
