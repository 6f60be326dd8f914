/**
 * A flow run's durable record: one kernel session per run, append-only, and what resume reads
 * back from it.
 *
 * Owns the session (stream id = the run id, `session_open` labelled `flow=<Blueprint id>`,
 * `run=<run id>`, and whatever labels the starter adds: `mcp_call=<session>` for a run an MCP
 * client started), the `flow.*` events (`run_started`, `run_resumed`, `step_dispatched`,
 * `step_completed`, `replay_hit`, `cancel_requested`, `replay_cut`, `run_waiting`,
 * `run_finished`), large values kept beside the database, and the replay table.
 *
 * Invariants:
 * - Nothing is updated or deleted: a rerun cuts the replay table with a `flow.replay_cut` event.
 * - Every event is committed before `append` returns, except two kinds held for the transaction
 *   of the run's next event (committed before it):
 *   - a replay hit (`hold`): it records nothing a resume needs (its step is recorded done
 *     already), so a crash before that commit loses only hit rows, which the next resume records
 *     again; holding them spares a resume one transaction per replayed step;
 *   - a step's completion (`appendWithNext`): committed with the next event — the next step's
 *     dispatch is one, so a step's result is durable before the next step starts — and at the
 *     latest by a 0 ms timer once the current task ends (a lane that finished while others still
 *     run). Until then the process only evaluates expressions: nothing runs that a resume would
 *     have to repeat, and a step costs one transaction, not two.
 *   `onAppend` hears of an event once it is committed, in log order. A commit of held events that
 *   fails keeps them held: they go with the next event, whose `append` then throws if it fails
 *   too; `settle` commits what is still held when a run's evaluation ends, however it ends.
 * - The replay table holds the `step_completed` events whose status is `passed`, `skipped` or
 *   `answered` (never `failed`, `cancelled` or `waiting`), keyed by (ref, input hash, occurrence);
 *   a cut at step `s` drops the first entry of `s` and every entry recorded after it.
 * - A value whose JSON is over 64 KiB is written to `.agent-block/flows/<run>/<step key>.json`
 *   and recorded as `{path, sha256, bytes}`; reading it back checks the hash.
 * - A run's recorded state is the last of its `run_started`/`run_resumed` (`running`),
 *   `run_waiting` (`waiting`) and `run_finished` (its status) events. A run recorded `running`
 *   whose process is gone (no process holds its lock, `run_lock.ts`: it was killed, or its
 *   machine went down) is shown `interrupted`; the record itself never says so (nothing is
 *   appended for a death), so the state a listing shows depends on the `live` probe it is given.
 */
import { dirname, join } from "node:path";
import type { EventRow, EventStore, NewEvent } from "../knl/store.ts";
import { readOnlyQuery } from "../knl/query.ts";
import { AgentBlockError } from "../errors.ts";
import { sha256Hex } from "./hash.ts";
import type { Json } from "./path.ts";

/** Values past this many bytes of JSON are kept in a file beside the database. */
export const INLINE_VALUE_LIMIT = 64 * 1024;

/**
 * The states of a run: `interrupted` is a run recorded `running` that no live process runs
 * (`flow resume` or `flow rerun` continues it).
 */
export type FlowRunState = "running" | "interrupted" | "waiting" | "completed" | "failed" | "cancelled";

/** A recorded step value: inline, or a pointer to its file. */
export type StoredValue = { value: Json } | { value_ref: { path: string; sha256: string; bytes: number } };

/** One replayable step. */
export interface ReplayEntry {
  /** The step's ref. */
  ref: string;
  /** `passed`, `skipped` or `answered`. */
  status: string;
  /** Its value. */
  stored: StoredValue;
  /** The skip reason. */
  reason?: string;
}

/** No run with that id is in the store. */
export class UnknownFlowRun extends AgentBlockError {
  /**
   * An unknown run.
   * @param runId the id asked for
   * @param store where it was looked for
   */
  constructor(readonly runId: string, store: string) {
    super(`no flow run '${runId}' in ${store} (agent-block flow runs lists them)`, 1);
    this.name = "UnknownFlowRun";
  }
}

/** The replay key of a dispatch. */
export const replayKey = (ref: string, inputHash: string, occurrence: number) =>
  `${ref}\u0000${inputHash}\u0000${occurrence}`;

/** A new run id: time-ordered, with 48 random bits. */
export function newRunId(): string {
  const rnd = crypto.getRandomValues(new Uint8Array(6));
  return `flow-${Date.now().toString(36)}-${[...rnd].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The record of one run. */
export class FlowRecord {
  /**
   * The record of run `runId` in `store`.
   * @param store the kernel store
   * @param runId the run (its session id)
   * @param projectRoot where `.agent-block/flows/` is
   * @param onAppend told of every event appended
   */
  constructor(
    readonly store: EventStore,
    readonly runId: string,
    readonly projectRoot: string,
    private readonly onAppend?: (kind: string, data: Record<string, Json>) => void,
  ) {}

  /** Opens the run's session (a new run; `labels`: more labels beside `flow` and `run`). */
  open(blueprintId: string, script: string, labels: Readonly<Record<string, string>> = {}): void {
    this.store.append({
      stream: this.runId,
      kind: "session_open",
      data: JSON.stringify({ owner: "flow", script }),
      meta: JSON.stringify({ ...labels, flow: blueprintId, run: this.runId }),
    });
  }

  /** Held events (`hold`, `appendWithNext`), committed with the next appended one. */
  #held: { kind: string; data: Record<string, Json> }[] = [];
  /** Commits held events when no event follows them within the current task. */
  #timer: ReturnType<typeof setTimeout> | undefined;

  /** Appends a `flow.*` event (`kind` without the prefix), with the held ones before it. */
  append(kind: string, data: Record<string, Json>): void {
    this.#commit({
      stream: this.runId,
      kind: `flow.${kind}`,
      data: JSON.stringify(data),
      meta: this.#meta(),
    });
    this.onAppend?.(`flow.${kind}`, data);
  }

  /**
   * Holds a `flow.*` event (a replay hit) to be committed in the transaction of the next
   * `append` or `close`, before it; `onAppend` is told of it once committed.
   */
  hold(kind: string, data: Record<string, Json>): void {
    this.#held.push({ kind: `flow.${kind}`, data });
  }

  /**
   * Appends a `flow.*` event (a step's completion) in the transaction of the run's next event,
   * or once the current task ends if none comes first (the module doc's invariant).
   */
  appendWithNext(kind: string, data: Record<string, Json>): void {
    this.#held.push({ kind: `flow.${kind}`, data });
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      try {
        this.#flush();
      } catch {
        // kept held: committed with the next event, whose append reports the store's failure
      }
    }, 0);
  }

  /**
   * Commits what is still held (best effort: a failure leaves it uncommitted, as a crash would)
   * and stops the timer: the end of a run's evaluation, before its lock is let go.
   */
  settle(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    try {
      this.#flush();
    } catch {
      this.#held = []; // the store failed; the run's own error is on its way to the caller
    }
  }

  /** Closes the session (`status`: the kernel's close status), with the held events before it. */
  close(status: string): void {
    this.#commit({ stream: this.runId, kind: "session_close", data: JSON.stringify({ status }), meta: "{}" });
  }

  #meta(): string {
    return JSON.stringify({ run: this.runId });
  }

  /** Commits the held events on their own (the timer); a failure keeps them held. */
  #flush(): void {
    if (this.#held.length === 0) return;
    const held = this.#held;
    const meta = this.#meta();
    this.store.appendMany(
      held.map((h) => ({ stream: this.runId, kind: h.kind, data: JSON.stringify(h.data), meta })),
    );
    this.#held = [];
    for (const h of held) this.onAppend?.(h.kind, h.data);
  }

  /** Commits the held events and `ev` in one transaction, then tells of the held ones. */
  #commit(ev: NewEvent): void {
    if (this.#held.length === 0) {
      this.store.append(ev);
      return;
    }
    const held = this.#held;
    const meta = this.#meta();
    this.store.appendMany([
      ...held.map((h) => ({ stream: this.runId, kind: h.kind, data: JSON.stringify(h.data), meta })),
      ev,
    ]);
    this.#held = [];
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const h of held) this.onAppend?.(h.kind, h.data);
  }

  /** Every event of the run. */
  events(): EventRow[] {
    return this.store.read(this.runId);
  }

  /** The run's events recorded after `seen` (the run's events up to some point, in order). */
  eventsAfter(seen: readonly EventRow[]): EventRow[] {
    return this.store.read(this.runId, (seen[seen.length - 1]?.seq ?? 0) + 1);
  }

  /** Whether the run is recorded (has its `flow.run_started`), without reading its events. */
  started(): boolean {
    return readOnlyQuery(
      this.store,
      `SELECT 1 AS x FROM events WHERE stream = ? AND kind = 'flow.run_started' LIMIT 1`,
      [this.runId],
      { raw: true },
    ).length > 0;
  }

  /** `value` as it is recorded (inline, or written to its file). */
  async storeValue(stepKey: string, value: Json): Promise<StoredValue> {
    const text = JSON.stringify(value);
    const bytes = new TextEncoder().encode(text);
    if (bytes.length <= INLINE_VALUE_LIMIT) return { value };
    const rel = join(".agent-block", "flows", this.runId, stepKey.replace(/[^\w.-]+/g, "_") + ".json");
    const full = join(this.projectRoot, rel);
    await Deno.mkdir(dirname(full), { recursive: true });
    await Deno.writeFile(full, bytes);
    return { value_ref: { path: rel, sha256: sha256Hex(bytes), bytes: bytes.length } };
  }

  /** The value `stored` holds (its file read back and checked). */
  async loadValue(stored: StoredValue): Promise<Json> {
    if ("value" in stored) return stored.value;
    const { path, sha256 } = stored.value_ref;
    const bytes = await Deno.readFile(join(this.projectRoot, path));
    if (sha256Hex(bytes) !== sha256) {
      throw new AgentBlockError(
        `flow run ${this.runId}: ${path} does not match its recorded sha256 (changed since it was written)`,
        1,
      );
    }
    return JSON.parse(new TextDecoder().decode(bytes)) as Json;
  }
}

/** The replay table of `events` (the module doc's rules). */
export function replayTable(events: readonly EventRow[]): Map<string, ReplayEntry> {
  const entries: { key: string; entry: ReplayEntry }[] = [];
  for (const e of events) {
    if (e.kind === "flow.step_completed") {
      const d = e.data as Record<string, Json>;
      if (d.status !== "passed" && d.status !== "skipped" && d.status !== "answered") continue;
      const stored =
        (d.value_ref !== undefined ? { value_ref: d.value_ref } : { value: d.value ?? null }) as StoredValue;
      entries.push({
        key: replayKey(String(d.ref), String(d.input_hash), Number(d.occurrence)),
        entry: {
          ref: String(d.ref),
          status: String(d.status),
          stored,
          ...(typeof d.reason === "string" ? { reason: d.reason } : {}),
        },
      });
    } else if (e.kind === "flow.replay_cut") {
      const i = entries.findIndex((x) => x.entry.ref === e.data.from_step);
      if (i >= 0) entries.length = i;
    }
  }
  return new Map(entries.map((x) => [x.key, x.entry]));
}

/** The state of a run as its events record it (never `interrupted`: see `shownState`). */
export function runState(events: readonly EventRow[]): FlowRunState {
  let state: FlowRunState = "running";
  for (const e of events) {
    if (e.kind === "flow.run_started" || e.kind === "flow.run_resumed") state = "running";
    else if (e.kind === "flow.run_waiting") state = "waiting";
    else if (e.kind === "flow.run_finished") state = e.data.status as FlowRunState;
  }
  return state;
}

/**
 * The state of run `events` to show: `interrupted` for a recorded `running` that `live` (read
 * after the events) says no process runs; without `live`, the recorded state.
 */
export function shownState(events: readonly EventRow[], live?: (runId: string) => boolean): FlowRunState {
  const state = runState(events);
  const run = events[0]?.stream;
  return state === "running" && live && run !== undefined && !live(run) ? "interrupted" : state;
}

/** One run, as `flow runs` lists it. */
export interface FlowRunSummary {
  /** The run id. */
  run: string;
  /** The Blueprint id. */
  flow: string;
  /** Its state. */
  state: FlowRunState;
  /** When it started, ms since the epoch. */
  started: number;
  /** Its last event, ms since the epoch. */
  last: number;
  /** The waiting step, when waiting. */
  waiting?: { step: string; reason: string };
  /** The failed step, when failed. */
  failed_step?: string;
}

/**
 * Every flow run in `store`, newest first; `live` tells a run recorded `running` that a process
 * still runs from an `interrupted` one (`runIsLive`; without it, such a run is listed `running`).
 */
export function listFlowRuns(store: EventStore, live?: (runId: string) => boolean): FlowRunSummary[] {
  const rows = readOnlyQuery(
    store,
    `SELECT stream FROM events WHERE kind = 'flow.run_started' ORDER BY position DESC`,
    [],
    { raw: true },
  ) as { stream: string }[];
  return rows.map((r) => summarise(store.read(String(r.stream)), live));
}

/** A run's summary from its events (`live`: as for `listFlowRuns`). */
export function summarise(events: readonly EventRow[], live?: (runId: string) => boolean): FlowRunSummary {
  const started = events.find((e) => e.kind === "flow.run_started");
  const state = shownState(events, live);
  const lastWait = [...events].reverse().find((e) => e.kind === "flow.run_waiting");
  const lastFinish = [...events].reverse().find((e) => e.kind === "flow.run_finished");
  const failed = (lastFinish?.data.error as { failed_step?: string } | undefined)?.failed_step;
  return {
    run: events[0]?.stream ?? "",
    flow: String(started?.data.blueprint_id ?? ""),
    state,
    started: started?.epoch_ms ?? 0,
    last: events[events.length - 1]?.epoch_ms ?? 0,
    ...(state === "waiting" && lastWait
      ? { waiting: { step: String(lastWait.data.step), reason: String(lastWait.data.reason) } }
      : {}),
    ...(state === "failed" && failed ? { failed_step: failed } : {}),
  };
}
