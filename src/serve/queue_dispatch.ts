/**
 * The manager's side of the run queue (`serve --nats`): a run the scheduler starts is published
 * to the work-queue stream and followed in the state bucket until it ends on some worker.
 *
 * Owns publishing and following. `run(job, request, slot, hooks)`:
 * 1. an interval run claims its due slot first: key `<job>.<slot ms>` created in the slots
 *    bucket (`claimSlot`; create fails when it exists; the key expires after the bucket's
 *    `max_age`, `SLOT_TTL_MS` by default), so of two managers that decide the same interval run
 *    only one publishes; the other follows the run the first one published (its id is the key's
 *    value). The message carries `Nats-Msg-Id = <job>:<slot>` too (`<job>:req-<run id>` for a
 *    requested run), so a publish retried after a lost acknowledgement is stored once;
 * 2. writes the run's state `queued` (`queue_form.ts`), then publishes the queued run on
 *    `agent_block.runs.<queue>.<job>` (retried while the server is away, until the manager stops),
 *    and says so (`hooks.onQueued`: the scheduler records the run's start then, so a manager
 *    restarted while the run waits for a worker follows it again);
 * 3. follows the state (a KV watch wakes it; a read every `POLL_MS` covers a watch lost to a
 *    server restart): `running` with a pid is the run's start (`hooks.onStart` with that pid),
 *    the counts the worker writes while the run goes are handed on as they change
 *    (`hooks.onCounts`: the manager's record shows them live, as for a run on its own machine), an
 *    ended state its end — the outcome, a large value fetched from the results store, the stderr
 *    tail, the counts, the end time as the worker recorded it.
 * `hooks.signal` (a stop asked through the API) publishes `agent_block.stop.<run id>` (the
 * worker holding the run ends it and records `stopped`); a run still queued is set `stopped`
 * here under compare-and-set, and the worker that receives it later only acks it. The manager
 * stopping (`stopping`) ends the following, not the run: it goes on on its worker, and the
 * report says so (`detached`: the scheduler leaves it `running` on the record, and the
 * manager's next start follows it again, `follow`).
 *
 * Invariants: no code and no environment is published (`queue_form.ts`); every state write is a
 * compare-and-set against the revision read, and an ended state is never overwritten; a write or
 * claim whose request was lost is re-read before it is tried again (`kv_write.ts`), so it lands
 * once.
 */
import { relative } from "node:path";
import { headers as natsHeaders } from "@nats-io/transport-node";
import type { KvEntry } from "@nats-io/kv";
import type { Outcome } from "../outcome.ts";
import type { RunHooks, RunReport, RunRequest } from "../runner/runner.ts";
import { requestToObject } from "../runner/request_json.ts";
import { parseOutcomeJson } from "../runner/outcome_json.ts";
import { stringifyJson } from "../json/codec.ts";
import {
  type RunQueueHandles,
  RunQueueSetupError,
  runSubject,
  STOP_SUBJECT_PREFIX,
  subjectToken,
} from "../clients/nats/run_queue.ts";
import { casWrite, retryLost } from "../clients/nats/kv_write.ts";
import type { JobDecl } from "./job_file.ts";
import type { RunCountsRecord } from "./record.ts";
import {
  isEnded,
  parseState,
  type QueuedRun,
  queuedRunText,
  queuedState,
  type QueueRunState,
  stateKey,
  stateText,
} from "./queue_form.ts";

/** How often a followed run's state is read when no watch update came, ms. */
export const POLL_MS = 1000;

/** What a queued run reports: a runner's report plus the queue's facts. */
export interface QueueReport extends RunReport {
  stderrTail?: string;
  /** The run was lost (its worker vanished, no attempt left): the reason. */
  lost?: string;
  /** When the run ended, as its worker recorded it. */
  endedMs?: number;
  /** What the run did, as its worker counted it. */
  counts?: RunCountsRecord;
  /** The manager stopped following the run (it goes on on its worker; nothing to record). */
  detached?: boolean;
  /** The worker of the last attempt, and the attempts begun. */
  worker?: string;
  attempt?: number;
}

/** A followed run's hooks: a runner's, plus the counts its worker writes while it goes. */
export interface QueueHooks extends RunHooks {
  /** The run's counts as its worker last wrote them (at most every second while it runs). */
  onCounts?: (counts: RunCountsRecord) => void;
  /** The run was published to the queue (by this manager): it is the manager's to follow from now on. */
  onQueued?: () => void;
}

/** What the dispatcher is built with. */
export interface QueueDispatchOptions {
  handles: RunQueueHandles;
  /** The project root (paths in requests are made relative to it). */
  projectRoot: string;
  /** The project's id when a job names none (the project directory's name). */
  defaultProject: string;
  /** Aborted when the manager stops: following ends, the runs go on. */
  stopping: AbortSignal;
  log: (line: string) => void;
}

/** The key of interval `slot` (its due time, ms) of `job` in the slots bucket. */
export function slotKey(job: string, slot: number): string {
  return `${subjectToken(job)}.${slot}`;
}

/** Waits `ms` or until `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((res) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      res();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** Publishes runs to the queue and follows them to their end. */
export class QueueDispatch {
  readonly #o: QueueDispatchOptions;

  /** A dispatcher over `options`. */
  constructor(options: QueueDispatchOptions) {
    this.#o = options;
  }

  /** The project id of `job`. */
  projectOf(job: JobDecl): string {
    return job.project ?? this.#o.defaultProject;
  }

  /**
   * Runs `request` (job `job`'s run, `request.correlation.runId` its id) through the queue;
   * `slot` is an interval run's due time (absent for a requested run).
   */
  async run(
    job: JobDecl,
    request: RunRequest,
    slot: number | undefined,
    hooks: QueueHooks,
  ): Promise<QueueReport> {
    const kv = this.#o.handles.state;
    const runId = request.correlation?.runId ?? "";
    let follow = runId;
    try {
      if (slot !== undefined) {
        follow = await this.#retry(
          `claim slot ${slot} of job ${job.name}`,
          () => this.claimSlot(job.name, slot, runId),
        );
        if (follow !== runId) {
          this.#o.log(
            `run ${runId} of job ${job.name}: its slot was taken by run ${follow}; following that run`,
          );
        }
      }
      if (follow === runId) {
        const now = Date.now();
        const state = queuedState({
          run_id: runId,
          job: job.name,
          project: this.projectOf(job),
          queue: job.queue,
          max_attempts: job.maxAttempts,
          queued_ms: now,
          requested: slot === undefined,
        });
        const text = stateText(state); // one text for every try: a try that landed is found as ours
        const queued = await this.#retry(
          `record run ${runId} as queued`,
          () => casWrite(kv, stateKey(runId), text, 0),
        );
        if (!queued.ok) this.#o.log(`run ${runId}: its state existed before it was queued; following it`);
        const msg: QueuedRun = {
          run_id: runId,
          job: job.name,
          project: this.projectOf(job),
          queue: job.queue,
          max_attempts: job.maxAttempts,
          request: requestToObject({
            ...request,
            env: {},
            script: { path: relative(this.#o.projectRoot, job.script) },
            projectRoot: ".",
            cwd: undefined,
            home: undefined,
          }),
        };
        const h = natsHeaders();
        const msgId = `${job.name}:${slot ?? `req-${runId}`}`;
        await this.#retry(`publish run ${runId}`, async () => {
          await this.#o.handles.js.publish(runSubject(job.queue, job.name), queuedRunText(msg), {
            msgID: msgId,
            headers: h,
          });
        });
        hooks.onQueued?.();
      }
    } catch (e) {
      if (this.#o.stopping.aborted) return this.#cancelled("the manager stopped before the run was queued");
      return {
        outcome: {
          status: "raised",
          code: "config",
          message: `the run queue refused run ${runId}: ${(e as Error).message}`,
          traceback: "",
        },
        artifacts: [],
        sessions: [],
      };
    }
    return await this.follow(follow, hooks);
  }

  /**
   * Claims interval `slot` of `job` for run `runId` in the slots bucket: the id of the run that
   * holds the slot (`runId` when this call took it, another manager's run otherwise).
   */
  async claimSlot(job: string, slot: number, runId: string): Promise<string> {
    const slots = this.#o.handles.slots;
    if (!slots) {
      throw new RunQueueSetupError("the run queue was opened without its slots bucket (a worker's handles)");
    }
    // the run id is the claim's value: unique to this manager's decision, so a claim whose
    // request was lost is found as this manager's (and a refused one names the other's run)
    const r = await casWrite(slots, slotKey(job, slot), runId, 0);
    if (r.ok) return runId;
    const other = r.current?.string();
    return other && other !== "" ? other : runId;
  }

  /** Calls `fn` until it succeeds or the manager stops (then the last error is thrown). */
  async #retry<T>(what: string, fn: () => Promise<T>): Promise<T> {
    let logged = false;
    while (true) {
      try {
        return await fn();
      } catch (e) {
        if (this.#o.stopping.aborted) throw e;
        if (/setup|form/i.test((e as Error).name)) throw e;
        if (!logged) this.#o.log(`cannot ${what} yet (${(e as Error).message}); retrying`);
        logged = true;
        await pause(500, this.#o.stopping);
      }
    }
  }

  #cancelled(reason: string): QueueReport {
    return { outcome: { status: "cancelled", reason }, artifacts: [], sessions: [] };
  }

  /** Follows run `id` in the state bucket to its end (a manager restarted follows its runs again). */
  async follow(id: string, hooks: QueueHooks): Promise<QueueReport> {
    const kv = this.#o.handles.state;
    const key = stateKey(id);
    let wake: () => void = () => {};
    let woken = new Promise<void>((r) => (wake = r));
    const kick = () => {
      wake();
      woken = new Promise<void>((r) => (wake = r));
    };
    let watcher: AsyncIterable<KvEntry> & { stop(): void } | undefined;
    try {
      watcher = await kv.watch({ key });
      (async () => {
        for await (const _ of watcher!) kick();
      })().catch(() => undefined);
    } catch {
      watcher = undefined; // the reads below carry on alone
    }
    let started = false;
    let lastCounts: RunCountsRecord | undefined;
    let stopAsked = false;
    const onStop = () => {
      stopAsked = true;
      kick();
    };
    hooks.signal?.addEventListener("abort", onStop, { once: true });
    this.#o.stopping.addEventListener("abort", kick, { once: true });
    try {
      while (true) {
        if (this.#o.stopping.aborted) {
          return {
            ...this.#cancelled(`the manager stopped following run ${id}; it goes on on its worker`),
            detached: true,
          };
        }
        let entry: KvEntry | null = null;
        try {
          entry = await kv.get(key);
        } catch {
          entry = null; // the server is away: the next read
        }
        if (entry && entry.operation === "PUT") {
          let s: QueueRunState | undefined;
          try {
            s = parseState(entry.string(), key);
          } catch (e) {
            this.#o.log(`run ${id}: ${(e as Error).message}`);
          }
          if (s) {
            // started once its worker reports the process (a run ended before that started too)
            if (!started && (isEnded(s.state) || (s.state === "running" && s.pid !== null))) {
              started = true;
              hooks.onStart?.({ pid: s.pid ?? undefined });
            }
            if (isEnded(s.state)) return await this.#report(s);
            // what the run has done so far, live on the manager's record (the API, the dashboard)
            if (s.counts && s.counts !== lastCounts) {
              lastCounts = s.counts;
              hooks.onCounts?.(s.counts);
            }
            if (stopAsked) {
              stopAsked = false;
              await this.#askStop(s, entry.revision);
            }
          }
        }
        const timer = pause(POLL_MS, this.#o.stopping);
        await Promise.race([woken, timer]);
      }
    } finally {
      hooks.signal?.removeEventListener("abort", onStop);
      this.#o.stopping.removeEventListener("abort", kick);
      watcher?.stop();
    }
  }

  /** Asks the run's worker to end it; a run still queued is recorded stopped here. */
  async #askStop(s: QueueRunState, revision: number): Promise<void> {
    if (s.state === "queued") {
      const now = Date.now();
      const end: QueueRunState = {
        ...s,
        state: "stopped",
        ended_ms: now,
        started_ms: s.started_ms ?? now,
        outcome: { version: 1, status: "cancelled", reason: "stopped before a worker took it" },
        message: "stopped before a worker took it",
        exit_code: 130,
      };
      try {
        if ((await casWrite(this.#o.handles.state, stateKey(s.run_id), stateText(end), revision)).ok) return;
        // refused: a worker took it meanwhile; it is asked below
      } catch {
        // the server stayed away: the worker that may hold it is asked below
      }
    }
    this.#o.handles.nc.publish(`${STOP_SUBJECT_PREFIX}.${s.run_id}`, stringifyJson({ run_id: s.run_id }));
  }

  async #report(s: QueueRunState): Promise<QueueReport> {
    let outcome: Outcome;
    if (s.state === "lost") {
      outcome = { status: "raised", code: "script", message: s.message ?? "lost", traceback: "" };
    } else {
      try {
        outcome = parseOutcomeJson(stringifyJson(s.outcome), `the state of run ${s.run_id}`);
      } catch (e) {
        outcome = { status: "raised", code: "config", message: (e as Error).message, traceback: "" };
      }
    }
    if (outcome.status === "returned" && s.result_object) {
      try {
        const name = s.result_object;
        const bytes = await retryLost(() => this.#o.handles.results.getBlob(name));
        outcome = { status: "returned", value: bytes ?? undefined };
        if (bytes) {
          try {
            outcome.value = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
          } catch { /* bytes stay bytes */ }
        }
      } catch (e) {
        this.#o.log(`run ${s.run_id}: cannot read its result ${s.result_object}: ${(e as Error).message}`);
      }
    }
    return {
      outcome,
      artifacts: [],
      sessions: s.counts?.sessions ?? [],
      stderrTail: s.stderr_tail,
      lost: s.state === "lost" ? (s.message ?? "lost") : undefined,
      endedMs: s.ended_ms ?? undefined,
      counts: s.counts ?? undefined,
      worker: s.worker ?? undefined,
      attempt: s.attempt,
    };
  }
}
