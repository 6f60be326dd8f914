/**
 * The run queue's worker (`agent-block worker`): pulls queued runs and runs them through a
 * `BlockRunner`, recording their state in the state bucket.
 *
 * Owns the pull loop and one queued run's life on this machine:
 * - one durable pull consumer per queue (`run_queue.ts`); a loop per queue pulls at most as
 *   many messages as there are free slots (`maxLive` less the live runs, the messages the pulls
 *   still open may bring and the messages received but not yet live: a slot is held from its
 *   pull until its run is live or its message dealt with), so no run waits here for a slot
 *   another worker has free, the live runs never pass `maxLive`, and a slot freed while a pull is
 *   open gets a pull of its own at once;
 * - a message names a project id and a job, never code: the run is the job's block in this
 *   worker's copy of that project (a `-p DIR`: its id is `project` in the job's job.toml, else
 *   the directory's name), run with this worker's environment (each run loads its project's
 *   `.env` itself), process group and the job's timeout. A run of a project or job this worker
 *   does not have is recorded `failed` with that reason and its message terminated (no other
 *   worker is asked: the queue's workers are meant to hold the same projects);
 * - the state (`queue_form.ts`): `running` (worker, attempt, pid) under compare-and-set, the
 *   counts as the run goes (at most every `COUNTS_EVERY_MS`), then its end; a returned value
 *   past `INLINE_RESULT_BYTES` goes to the results object store, and so does the run's kernel
 *   record (`<run id>.knl`: the `knl export --as events` lines of its sessions, `run_export.ts`). While a run goes the worker
 *   sends in-progress acks every third of `AckWait`; the message is acked when the run ends in
 *   any state;
 * - a redelivered message whose state says `running` is an attempt whose worker vanished (its
 *   in-progress acks stopped for a whole `AckWait`): with attempts left (`max_attempts` of the
 *   job) it is run again as the next attempt, else it is recorded `lost` with the reason. A
 *   message whose state has ended is acked unrun (the end was recorded, the ack was lost);
 * - a stop request (`agent_block.stop.<run id>`) ends the run (`stopped`);
 * - draining (`stopping` aborted, SIGTERM): no more fetches; each live run is ended, its state
 *   set back to `queued` (the attempt not counted) and its message nak'd with `HAND_BACK_MS` of
 *   delay, so another worker takes it.
 *
 * Invariants: every state write is a compare-and-set on the revision this worker last wrote or
 * read, so a late worker (one whose attempt was given to another) never overwrites a newer
 * state; an ended state is never written over. A request lost to a stalled or restarted server
 * (no answer within `JETSTREAM_TIMEOUT_MS`) is retried (`kv_write.ts`): a state write is re-read
 * first and lands once (found as written, or written again only when its revision is still the
 * expected one); a read, or a result's put by name, is sent again.
 */
import { basename } from "node:path";
import type { Consumer, JsMsg } from "@nats-io/jetstream";
import type { Subscription } from "@nats-io/transport-node";
import { exitCodeOf, type Outcome } from "../outcome.ts";
import type { BlockRunner, RunReport, RunRequest } from "../runner/runner.ts";
import { requestFromObject } from "../runner/request_json.ts";
import { outcomeToObject } from "../runner/outcome_json.ts";
import { RunTally } from "../runner/tally.ts";
import { queueConsumer, type RunQueueHandles, STOP_SUBJECT_PREFIX } from "../clients/nats/run_queue.ts";
import { casWrite, type LostRequestOptions, retryLost } from "../clients/nats/kv_write.ts";
import { type JobDecl, scanJobs } from "./job_file.ts";
import { type FlowJobRun, runFlowJob } from "./flow_job.ts";
import { INLINE_RESULT_BYTES, type RunCountsRecord } from "./record.ts";
import { stateOf } from "./scheduler.ts";
import { runKernelExport } from "./run_export.ts";
import {
  isEnded,
  parseQueuedRun,
  parseState,
  type QueuedRun,
  queuedState,
  type QueueRunState,
  stateKey,
  stateText,
} from "./queue_form.ts";

/** How often a running run's counts are written at most, ms. */
export const COUNTS_EVERY_MS = 1000;
/** The nak delay of a run handed back by a draining worker, ms. */
export const HAND_BACK_MS = 1000;
/** A fetch's longest wait for messages, ms. */
const FETCH_EXPIRES_MS = 1000;

/** What a worker is built with. */
export interface WorkerOptions {
  handles: RunQueueHandles;
  /** The queues to consume (at least one). */
  queues: string[];
  maxLive: number;
  /** The consumers' `AckWait` (when this worker creates them) and the in-progress ack pace. */
  ackWaitMs: number;
  /** Project roots (absolute). */
  projects: string[];
  /** `$AGENT_BLOCK_HOME`. */
  home: string;
  /** The environment every run starts from (the worker's own). */
  env: Readonly<Record<string, string>>;
  /**
   * The kernel path a run's environment names (the edge's reading of `AGENT_BLOCK_KNL_PATH`,
   * `storePathsFromEnv`): where the run's record is read for its export. Absent: the project's.
   */
  knlPathOf?: (env: Readonly<Record<string, string>>) => string | undefined;
  /**
   * True when a sandbox launcher of the project was killed before its sweep (the edge's reading
   * of the home's sweep notes): the project's `.env` is not read for the export meanwhile.
   */
  sweepOwed?: (projectRoot: string) => boolean;
  /** The edge's reading of the home and kernel paths of a flow job's environment (`FlowEdge.paths`). */
  flowPaths?: FlowJobRun["paths"];
  /** Runs the blocks. */
  runner: BlockRunner<RunReport & { stderrTail?: string }>;
  /** Runs unconfined flow jobs' steps (absent: such a run fails); a sandboxed one's go to `runner`. */
  flowRunner?: BlockRunner;
  /** This worker's name in run states (host and pid). */
  name: string;
  log: (line: string) => void;
}

interface Live {
  controller: AbortController;
  handBack: boolean;
}

const enc = new TextEncoder();
const isBlockJob = (f: { decl: JobDecl }) => f.decl.flow === undefined;

/** Pulls queued runs and runs them (see the module doc). */
export class QueueWorker {
  readonly #o: WorkerOptions;
  #live = new Map<string, Live>();
  #reserved = 0;
  #freed: () => void = () => {};
  #freedP: Promise<void>;
  #tasks = new Set<Promise<void>>();

  /** A worker over `options`. */
  constructor(options: WorkerOptions) {
    this.#o = options;
    this.#freedP = new Promise((r) => (this.#freed = r));
  }

  #kick(): void {
    this.#freed();
    this.#freedP = new Promise((r) => (this.#freed = r));
  }

  /** Runs until `stopping` aborts, then hands back the live runs and returns. */
  async serve(stopping: AbortSignal): Promise<void> {
    const consumers: Consumer[] = [];
    for (const q of this.#o.queues) {
      consumers.push(await queueConsumer(this.#o.handles, q, this.#o.ackWaitMs));
    }
    const stopSub: Subscription = this.#o.handles.nc.subscribe(`${STOP_SUBJECT_PREFIX}.>`, {
      callback: (err, msg) => {
        if (err) return;
        const id = msg.subject.slice(STOP_SUBJECT_PREFIX.length + 1);
        this.#live.get(id)?.controller.abort("stopped through the manager's API");
      },
    });
    const onStop = () => {
      for (const l of this.#live.values()) {
        l.handBack = true;
        l.controller.abort("the worker is draining");
      }
      this.#kick();
    };
    stopping.addEventListener("abort", onStop, { once: true });
    await Promise.all(consumers.map((c, i) => this.#pull(c, this.#o.queues[i], stopping)));
    while (this.#tasks.size > 0) await Promise.all([...this.#tasks]);
    stopSub.unsubscribe();
    stopping.removeEventListener("abort", onStop);
  }

  async #pull(c: Consumer, queue: string, stopping: AbortSignal): Promise<void> {
    let complained = false;
    const fetches = new Set<Promise<void>>();
    while (!stopping.aborted) {
      const free = this.#o.maxLive - this.#live.size - this.#reserved;
      if (free <= 0) {
        await this.#freedP;
        continue;
      }
      // a pull for the free slots; a slot freed meanwhile gets a pull of its own at once
      this.#reserved += free;
      let got = 0;
      const fetch = (async () => {
        try {
          const msgs = await c.fetch({ max_messages: free, expires: FETCH_EXPIRES_MS });
          for await (const m of msgs) {
            got++;
            if (stopping.aborted) {
              this.#reserved--;
              m.nak(HAND_BACK_MS);
              continue;
            }
            // the slot stays reserved until the run is live (or its message is dealt with):
            // released earlier, the next pull would count it free and fetch past --max-live
            this.#track(this.#handle(m, () => this.#reserved--));
          }
          complained = false;
        } catch (e) {
          if (!complained) this.#o.log(`queue ${queue}: fetch failed (${(e as Error).message}); retrying`);
          complained = true;
          await new Promise((r) => setTimeout(r, 500));
        } finally {
          this.#reserved -= free - got;
        }
      })().finally(() => {
        fetches.delete(fetch);
        this.#kick();
      });
      fetches.add(fetch);
      await this.#freedP;
    }
    await Promise.all([...fetches]);
  }

  #track(p: Promise<void>): void {
    const t = p.catch((e) => this.#o.log(`a run failed in the worker: ${(e as Error)?.stack ?? e}`)).finally(
      () => {
        this.#tasks.delete(t);
        this.#kick();
      },
    );
    this.#tasks.add(t);
  }

  /** The project root whose job `job` has project id `project`, and that job. */
  #find(project: string, job: string): { root: string; decl: JobDecl } | string {
    let sawProject = false;
    for (const root of this.#o.projects) {
      const jobs = scanJobs(root, this.#o.home).jobs;
      const decl = jobs.find((j) => j.name === job);
      const ids = new Set([basename(root), ...jobs.map((j) => j.project)]);
      if (decl && (decl.project ?? basename(root)) === project) return { root, decl };
      if (ids.has(project)) sawProject = true;
    }
    return sawProject
      ? `worker ${this.#o.name}: project '${project}' has no job '${job}' here`
      : `worker ${this.#o.name} does not have project '${project}' (it runs ${
        this.#o.projects.map((p) => basename(p)).join(", ")
      })`;
  }

  /** Handles one message; `release` (called once) gives up its reserved slot as the run goes live or ends here. */
  async #handle(m: JsMsg, release: () => void): Promise<void> {
    let released = false;
    const free = () => {
      if (!released) {
        released = true;
        release();
      }
    };
    try {
      await this.#handleMsg(m, free);
    } finally {
      free();
    }
  }

  async #handleMsg(m: JsMsg, goneLive: () => void): Promise<void> {
    const kv = this.#o.handles.state;
    let q: QueuedRun;
    try {
      q = parseQueuedRun(m.string(), `message ${m.seq} on ${m.subject}`);
    } catch (e) {
      this.#o.log(`${(e as Error).message}: terminated`);
      m.term((e as Error).message);
      return;
    }
    const key = stateKey(q.run_id);
    const lost = (what: string): LostRequestOptions => ({
      onLost: (e, tries) => {
        if (tries === 1) this.#o.log(`run ${q.run_id}: ${what} went unanswered (${e.message}); retrying`);
      },
    });
    const entry = await retryLost(() => kv.get(key), lost("reading its state"));
    let rev = entry?.revision ?? 0;
    let s: QueueRunState = entry && entry.operation === "PUT"
      ? parseState(entry.string(), key)
      : queuedState({
        run_id: q.run_id,
        job: q.job,
        project: q.project,
        queue: q.queue,
        max_attempts: q.max_attempts,
        queued_ms: Date.now(),
        requested: false,
      });
    // every write: compare-and-set on the revision last read or written, a lost request re-read
    // before it is written again (so it lands once, or is found to have lost to another writer)
    const write = async (next: QueueRunState): Promise<boolean> => {
      const r = await casWrite(kv, key, stateText(next), rev, lost(`writing its state ${next.state}`));
      if (!r.ok) return false;
      rev = r.revision;
      s = next;
      return true;
    };
    if (isEnded(s.state)) {
      m.ack(); // ended before (its ack was lost, or it was stopped while queued)
      return;
    }
    const now = () => Date.now();
    if (s.state === "running" && s.attempt >= q.max_attempts) {
      const message = `worker ${s.worker ?? "?"} stopped answering during attempt ${s.attempt} ` +
        `(max_attempts = ${q.max_attempts}, delivered ${m.info.deliveryCount} times)`;
      await write({
        ...s,
        state: "lost",
        ended_ms: now(),
        exit_code: null,
        message,
        outcome: { version: 1, status: "raised", code: "script", message, traceback: "" },
      });
      this.#o.log(`run ${q.run_id} of job ${q.job}: lost: ${message}`);
      m.ack();
      return;
    }
    const found = this.#find(q.project, q.job);
    if (typeof found === "string") {
      await write({
        ...s,
        state: "failed",
        worker: this.#o.name,
        started_ms: s.started_ms ?? now(),
        ended_ms: now(),
        exit_code: 1,
        message: found,
        outcome: { version: 1, status: "raised", code: "config", message: found, traceback: "" },
      });
      this.#o.log(`run ${q.run_id}: ${found}: terminated`);
      m.term(found);
      return;
    }
    const attempt = s.attempt + 1;
    const before = s;
    if (
      !(await write({
        ...s,
        state: "running",
        worker: this.#o.name,
        attempt,
        started_ms: now(),
        pid: null,
      }))
    ) {
      this.#o.log(`run ${q.run_id}: its state changed under this worker; handed back`);
      m.nak(HAND_BACK_MS);
      return;
    }
    const live: Live = { controller: new AbortController(), handBack: false };
    this.#live.set(q.run_id, live);
    goneLive();
    const heartbeat = setInterval(() => {
      try {
        m.working();
      } catch { /* the server is away: the next beat */ }
    }, Math.max(100, Math.floor(this.#o.ackWaitMs / 3)));
    // writes are chained so they compare-and-set in order
    let chain: Promise<unknown> = Promise.resolve();
    const queueWrite = (f: () => QueueRunState) => {
      chain = chain.then(() => write(f())).catch(() => false);
      return chain;
    };
    const countsOf = (t: RunTally): RunCountsRecord => ({
      turns: t.counts.turns,
      tool_calls: t.counts.toolCalls,
      tokens_in: t.counts.tokensIn,
      tokens_out: t.counts.tokensOut,
      cost_usd: t.counts.costUsd ?? null,
      sessions: [...t.counts.sessions],
    });
    let countsDue: ReturnType<typeof setTimeout> | undefined;
    const tally = new RunTally((t) => {
      if (countsDue !== undefined) return;
      countsDue = setTimeout(() => {
        countsDue = undefined;
        queueWrite(() => ({ ...s, counts: countsOf(t) }));
      }, COUNTS_EVERY_MS);
    });
    let report: { outcome: Outcome; stderrTail?: string };
    try {
      report = await this.#runIt(found.root, found.decl, q, live.controller.signal, tally, (pid) => {
        queueWrite(() => ({ ...s, pid: pid ?? null }));
      });
    } finally {
      clearInterval(heartbeat);
      clearTimeout(countsDue);
      this.#live.delete(q.run_id);
    }
    await chain;
    if (live.handBack && report.outcome.status === "cancelled") {
      await write({ ...before, state: "queued", worker: null });
      m.nak(HAND_BACK_MS);
      this.#o.log(`run ${q.run_id} of job ${q.job}: handed back (the worker is draining)`);
      return;
    }
    const { state, message } = stateOf(report.outcome);
    let outcomeObj = outcomeToObject(report.outcome);
    let resultBytes: number | null = null;
    let resultObject: string | null = null;
    if (report.outcome.status === "returned" && report.outcome.value !== undefined) {
      const v = report.outcome.value;
      const bytes = typeof v === "string" ? enc.encode(v) : v;
      resultBytes = bytes.length;
      if (bytes.length > INLINE_RESULT_BYTES) {
        try {
          await retryLost(
            () => this.#o.handles.results.putBlob({ name: q.run_id }, bytes),
            lost("storing its result"),
          );
          resultObject = q.run_id;
          outcomeObj = outcomeToObject({ status: "returned", value: undefined });
        } catch (e) {
          this.#o.log(`run ${q.run_id}: cannot store its result: ${(e as Error).message}`);
        }
      }
    }
    // the run's kernel record beside its result (`<run id>.knl`: knl export --as events lines)
    let knlObject: string | null = null;
    if (isBlockJob(found) && tally.counts.sessions.length > 0) {
      const x = runKernelExport(
        found.root,
        this.#o.env,
        [...tally.counts.sessions],
        this.#o.knlPathOf,
        this.#o.sweepOwed,
      );
      if ("text" in x) {
        try {
          const knl = enc.encode(x.text);
          await retryLost(
            () => this.#o.handles.results.putBlob({ name: `${q.run_id}.knl` }, knl),
            lost("storing its kernel export"),
          );
          knlObject = `${q.run_id}.knl`;
        } catch (e) {
          this.#o.log(`run ${q.run_id}: cannot store its kernel export: ${(e as Error).message}`);
        }
      } else this.#o.log(`run ${q.run_id}: no kernel export: ${x.why}`);
    }
    const ended = await write({
      ...s,
      knl_object: knlObject,
      state,
      ended_ms: now(),
      exit_code: exitCodeOf(report.outcome),
      outcome: outcomeObj,
      result_bytes: resultBytes,
      result_object: resultObject,
      message,
      stderr_tail: report.stderrTail ?? "",
      counts: countsOf(tally),
    });
    if (!ended) {
      this.#o.log(
        `run ${q.run_id}: a newer attempt owns its state; the end of attempt ${attempt} is not recorded`,
      );
    }
    m.ack();
  }

  async #runIt(
    root: string,
    decl: JobDecl,
    q: QueuedRun,
    signal: AbortSignal,
    tally: RunTally,
    onPid: (pid: number | undefined) => void,
  ): Promise<{ outcome: Outcome; stderrTail?: string }> {
    let asked: RunRequest;
    try {
      asked = requestFromObject(q.request, `the request of run ${q.run_id}`);
    } catch (e) {
      return { outcome: { status: "raised", code: "config", message: (e as Error).message, traceback: "" } };
    }
    if (decl.flow !== undefined) {
      // sandboxed (the run asks, or its job file does): every step is a confined child run of
      // the jobs' runner, never a run in this worker's process
      const jobs = this.#o.runner;
      const steps: BlockRunner | undefined = asked.sandbox === true || decl.sandbox === true
        ? { run: (request, hooks) => jobs.run({ ...request, sandbox: true }, hooks) }
        : this.#o.flowRunner;
      if (!steps) {
        return {
          outcome: {
            status: "raised",
            code: "config",
            message: "this worker runs no flow jobs",
            traceback: "",
          },
        };
      }
      onPid(Deno.pid); // a flow's steps run in this process
      return {
        outcome: await runFlowJob({
          flow: decl.flow,
          init: decl.init,
          projectRoot: root,
          env: this.#o.env,
          paths: this.#o.flowPaths,
          runner: steps,
          timeoutMs: asked.timeoutMs ?? decl.timeoutMs,
          signal,
          telemetry: asked.telemetry,
          ids: { runId: q.run_id, job: q.job },
          warn: (m) => this.#o.log(`run ${q.run_id}: ${m}`),
        }),
      };
    }
    return await this.#o.runner.run(
      {
        ...asked,
        // the block of this worker's copy of the project, with this worker's environment
        script: { path: decl.script },
        name: decl.name,
        projectRoot: root,
        cwd: undefined,
        home: this.#o.home,
        env: this.#o.env,
        timeoutMs: asked.timeoutMs ?? decl.timeoutMs,
        sandbox: asked.sandbox === true || decl.sandbox === true,
        labels: { ...asked.labels, worker: this.#o.name },
      },
      { signal, observe: tally.observe, onStart: ({ pid }) => onPid(pid) },
    );
  }
}
