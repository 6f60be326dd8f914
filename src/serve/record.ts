/**
 * The job manager's record: its own log, `~/.agent-block/serve.sqlite`, kept as the kernel keeps
 * sessions (`src/knl/store.ts`: WAL, `busy_timeout`, append-only `events`).
 *
 * Owns the record's events and reading them back:
 * - each manager start opens a session of its own (a stream `serve-<time>-<random>` whose first
 *   event is `session_open`, owner `agent-block serve`), so `knl sessions` lists the starts;
 * - `run_start` (`RunStart`: run id, job, start time, pid and process tag of the run's tree,
 *   whether it runs under `--sandbox`, and its owner: the manager's session and pid and the
 *   project) is
 *   appended the moment the run's process exists, `run_end` (`RunEnd`: end time, exit code,
 *   state, result or its pointer, stderr tail) when it has ended — each its own committed
 *   transaction, so a manager SIGKILLed in the middle of runs loses nothing it had recorded;
 * - `load(project)` reads the `run_start` / `run_end` of every session back in log order, the
 *   runs of that project only (a start recorded before the owner fields existed belongs to the
 *   project its session's `session_open` names): a restart continues the same record, and
 *   managers of other projects sharing the file (the default home is per user) are left alone.
 *   A run of this project with a start and no end, owned by another session, was left by a
 *   manager that died — the caller holds the project's lock (`manager_lock.ts`), so no other
 *   manager of it is alive: `closeLost` ends whatever of its tree is still alive (by its tag,
 *   and its process group when the leader still carries the tag — a reused pid is never
 *   signalled) and records it `lost`.
 *
 * - `sandboxedBefore(project)`: whether a manager of that project ever ran a job sandboxed.
 *
 * Invariant: the record is the only state the manager keeps across starts; everything the
 * scheduler decides from the past (a job's last end, whether the sandbox is on for good) is read
 * from here, for its own project. A confined run cannot write it (`src/sandbox/policy.ts` keeps
 * it read-only).
 */
import { join } from "node:path";
import { type EventStore, openStore } from "../knl/store.ts";
import { processTags } from "../proc/tags.ts";
import { endMembers, type Tree } from "../proc/tree.ts";

/** How a run stands. `running` until its end is recorded. */
export type RunState = "running" | "ok" | "deferred" | "failed" | "timed_out" | "stopped" | "lost";

/** The run states in a fixed order (metrics, docs). */
export const RUN_STATES: readonly RunState[] = [
  "running",
  "ok",
  "deferred",
  "failed",
  "timed_out",
  "stopped",
  "lost",
];

/** What `run_start` records. */
export interface RunStart {
  run_id: string;
  job: string;
  started_ms: number;
  /** The run's process (the leader of its group), null when it never started one. */
  pid: number | null;
  /** The process tag its tree carries (`src/proc/tags.ts`). */
  tag: string | null;
  /** True when it was asked for (`POST /jobs/<name>/runs`), false when `every` made it due. */
  requested: boolean;
  /**
   * True when it runs under `--sandbox` (the job's `sandbox = true`, or `AGENT_BLOCK_SANDBOX`);
   * a record written before the field existed reads back false.
   */
  sandboxed: boolean;
  /** The session of the manager that started it (`ServeRecord.session`). */
  manager?: string;
  /** That manager's pid (for people reading the record; never signalled). */
  manager_pid?: number;
  /** The project's real path. */
  project?: string;
}

/** What `run_end` records. */
export interface RunEnd {
  run_id: string;
  job: string;
  ended_ms: number;
  /** The exit code the outcome stands for (`exitCodeOf`), null for `lost`. */
  exit_code: number | null;
  state: Exclude<RunState, "running">;
  /** The returned value, when it is UTF-8 text of at most `INLINE_RESULT_BYTES`. */
  result: string | null;
  /** Size of the returned value in bytes (null: it returned nothing). */
  result_bytes: number | null;
  /** The `--result` file, when the run returned a value. */
  result_file: string | null;
  /** One line on how it ended besides the state (an error, a defer reason), or null. */
  message: string | null;
  /** The end of the run's stderr. */
  stderr_tail: string;
  /** What the run did, counted from its events (`src/runner/tally.ts`); absent in older records. */
  counts?: RunCountsRecord;
}

/** A run's counts as the record keeps them (live in memory while it runs, written at its end). */
export interface RunCountsRecord {
  turns: number;
  tool_calls: number;
  tokens_in: number;
  tokens_out: number;
  /** USD of the priced model turns; null when none was priced. */
  cost_usd: number | null;
  /** The kernel sessions it opened (`agent-block knl show <id>`). */
  sessions: string[];
}

/** A run as the record knows it: its start, and its end once it has one. */
export type RunRecord = RunStart & Partial<Omit<RunEnd, "run_id" | "job" | "state">> & { state: RunState };

/** Largest returned value kept inline on the record: 64 KiB. */
export const INLINE_RESULT_BYTES = 64 * 1024;

/** The record's file under the agent-block home. */
export function recordPath(home: string): string {
  return join(home, "serve.sqlite");
}

/** A manager's handle on its record: one session, appends, reads. */
export class ServeRecord {
  readonly store: EventStore;
  /** This start's session. */
  readonly session: string;
  /** The manager's pid and project, as its session's opening says. */
  readonly pid: number;
  readonly project: string | undefined;

  /**
   * Opens (creating) the record at `path` and this start's session.
   * @param path the SQLite file; @param info what the session's opening says (project, pid)
   */
  constructor(readonly path: string, info: Record<string, unknown>) {
    this.store = openStore(path);
    const rand = [...crypto.getRandomValues(new Uint8Array(4))].map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    this.session = `serve-${Date.now()}-${rand}`;
    this.#append("session_open", { owner: "agent-block serve", ...info });
    this.pid = typeof info.pid === "number" ? info.pid : Deno.pid;
    this.project = typeof info.project === "string" ? info.project : undefined;
  }

  #append(kind: string, data: object): void {
    this.store.append({ stream: this.session, kind, data: JSON.stringify(data), meta: "{}" });
  }

  /** Records a run's start, stamped with its owner (committed before this returns). */
  start(s: RunStart): void {
    this.#append("run_start", { ...s, manager: this.session, manager_pid: this.pid, project: this.project });
  }

  /** Records a run's end (committed before this returns). */
  end(e: RunEnd): void {
    this.#append("run_end", e);
  }

  /**
   * True when an earlier start of a manager for `project` ran a job under `--sandbox` (the
   * scheduler keeps the sandbox on from then on: a confined run could have rewritten the
   * project's job files).
   */
  sandboxedBefore(project: string): boolean {
    const row = this.store.db.prepare(
      `SELECT 1 FROM events r WHERE r.kind = 'run_start' AND json_extract(r.data, '$.sandboxed') = 1
         AND (json_extract(r.data, '$.project') = ?1 OR r.stream IN (SELECT s.stream FROM events s
           WHERE s.kind = 'session_open' AND json_extract(s.data, '$.project') = ?1)) LIMIT 1`,
    ).get(project);
    return row !== undefined;
  }

  /** Every run of `project` (a real path), of every session, in start order (see the module doc). */
  load(project: string): RunRecord[] {
    const rows = this.store.db.prepare(
      "SELECT stream, kind, data FROM events WHERE kind IN ('session_open', 'run_start', 'run_end') " +
        "ORDER BY position",
    ).all() as { stream: string; kind: string; data: string }[];
    const runs = new Map<string, RunRecord>();
    const sessionProject = new Map<string, unknown>();
    for (const r of rows) {
      const d = JSON.parse(r.data);
      if (r.kind === "session_open") {
        sessionProject.set(r.stream, d.project);
        continue;
      }
      if (r.kind === "run_start") {
        const owner = d.project ?? sessionProject.get(r.stream);
        if (owner === project) {
          runs.set(d.run_id, { sandboxed: false, manager: r.stream, ...d, state: "running" });
        }
      } else if (runs.has(d.run_id) || sessionProject.get(r.stream) === project) {
        const known = runs.get(d.run_id);
        // An end without a start cannot be written by this module; keep it rather than drop it.
        runs.set(
          d.run_id,
          known ? { ...known, ...d } : { pid: null, tag: null, requested: false, sandboxed: false, ...d },
        );
      }
    }
    return [...runs.values()];
  }

  /**
   * Closes `run` (left `running` by a manager that died) as `lost`: ends what of its tree is
   * alive (SIGTERM, SIGKILL after `graceMs`), then records the end. Returns the end recorded.
   */
  async closeLost(run: RunRecord, graceMs: number): Promise<RunEnd> {
    if (run.tag) {
      const tag = run.tag;
      const leaderOurs = run.pid !== null && processTags(run.pid).includes(tag);
      const tree: Tree = leaderOurs ? { tag, pgid: run.pid! } : { tag };
      await endMembers(() => tree, graceMs);
    }
    const end: RunEnd = {
      run_id: run.run_id,
      job: run.job,
      ended_ms: Date.now(),
      exit_code: null,
      state: "lost",
      result: null,
      result_bytes: null,
      result_file: null,
      message:
        "the manager stopped (killed or crashed) while the run was going; it was closed at the next start",
      stderr_tail: "",
    };
    this.end(end);
    return end;
  }

  /** Closes the record's connection. */
  close(): void {
    this.store.close();
  }
}
