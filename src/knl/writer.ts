/**
 * A run's record writer: the deferred events of ONE run over a store's shared connection.
 *
 * Owns, for one run and one database, what must not be shared with the other runs of the process
 * that write to the same file (an embedder, the test suite): the queue of deferred events (a
 * beat's, a session's opening; see the kernel's durability note in `embedded/knl/init.lua`), the
 * commit window's timer (`commit_window.ts`, the run's own value), the busy timeout of its
 * commits and reads (`busy_timeout.ts`), and what happens when a commit fails. The connection,
 * its transactions and its statements stay the store's (`store.ts`): one per file per process, so
 * `position` order is never split between connections.
 *
 * Invariants:
 * - A commit of this writer carries this writer's deferred events and nothing else, in append
 *   order and ahead of the events given with it, in ONE transaction. It happens at the next
 *   non-deferred append, read (`read`, `tail`, `hasStream`, `query`) or `flush()` through this
 *   writer, at `settle()` (the kernel host calls it before the run next acts on the world), at
 *   `close()` (the run's end), and at the latest when the run's commit window has passed since
 *   the first of them was deferred — a timer, so it fires while the run waits (for a model
 *   answer, typically), and keeps a process alive that long at most; with a window of 0, when the
 *   JS stack next unwinds (a microtask). Another run's commit never carries them; they are lost
 *   only if the process dies outright (SIGKILL, a crash) before one of those points. No write
 *   lock is held while they wait.
 * - A deferred event's `epoch_ms` is the time it was deferred (the event object is stamped in
 *   place: no copy per event); `seq` and `position` are assigned at the commit.
 * - A commit that fails keeps the events for the next one (which retries and raises), unless it
 *   failed on one of them, or the store was closed under them: then they are dropped with an
 *   error naming how many were lost, so one bad row cannot block every later commit of the run.
 *   Only this writer's events are dropped, and the error goes to this run only: to the caller of
 *   the failing commit, or — when it failed where no caller could hear it (the timer, `settle`)
 *   — to the run's next call through this writer, before that call writes anything.
 * - With an observer (`onCommit`), every committed transaction is handed to it once, right
 *   after the commit and after the deferred events are forgotten, as the rows a reader will see
 *   (`committedRow`: `knl export --as events` of the same rows prints the same records), in
 *   commit order. Without one, a commit does nothing more than it did: no row is decoded and the
 *   store is not asked where the rows landed. The observer is how a run is watched live (the
 *   CLI's `--progress` and `--events`, an embedder's `observe`, see `src/obs/run_events.ts`); it
 *   must not throw (the run's is a guarded fan-out) and must not write through this writer.
 */
import type { Appended, EventRow, EventStore, NewEvent } from "./store.ts";
import { committedRow, DeferredRowsFailed } from "./store.ts";
import { type QueryOptions, readOnlyQuery } from "./query.ts";

/** The run's settings a writer uses. */
export interface WriterOptions {
  /** ms a deferred event may wait when nothing commits it first (`commitWindowMs(env)`). */
  commitWindowMs: number;
  /** ms a commit or read waits for another connection's lock (`busyTimeoutMs(env)`). */
  busyTimeoutMs: number;
  /** Told the rows of each committed transaction, in order (see the module doc); none: nothing is. */
  onCommit?: (rows: readonly EventRow[]) => void;
}

const NONE: readonly NewEvent[] = Object.freeze([]);

/** One run's writer over one store. */
export class EventWriter {
  /** The run's commit window, ms. */
  readonly commitWindowMs: number;
  /** The run's busy timeout, ms. */
  readonly busyTimeoutMs: number;
  /** Deferred events, in append order, each stamped with the time it was deferred. */
  #pending: NewEvent[] = [];
  #flushQueued = false;
  /** The commit window's timer while deferred events wait (window above 0). */
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** A loss no caller heard of (timer, `settle`): raised by the next call through this writer. */
  #lost: DeferredRowsFailed | undefined;
  #closed = false;
  /** The observer of commits, if any. */
  readonly #onCommit: ((rows: readonly EventRow[]) => void) | undefined;

  /**
   * A writer for one run over `store` (shared with the process's other runs on that file).
   * @param store the connection; @param opts the run's settings
   */
  constructor(readonly store: EventStore, opts: WriterOptions) {
    this.commitWindowMs = opts.commitWindowMs;
    this.busyTimeoutMs = opts.busyTimeoutMs;
    this.#onCommit = opts.onCommit;
  }

  /** The database's path. */
  get path(): string {
    return this.store.path;
  }

  /** True once this writer or its store was closed. */
  get closed(): boolean {
    return this.#closed || this.store.closed;
  }

  /** Number of deferred events not committed yet. */
  get pending(): number {
    return this.#pending.length;
  }

  /** Defers `ev` (stamped in place with the time now when it has none); returns nothing. */
  defer(ev: NewEvent): void {
    this.#open();
    if (ev.epoch_ms === undefined) ev.epoch_ms = Date.now();
    this.#pending.push(ev);
    if (!this.#flushQueued) this.#scheduleFlush();
  }

  /** Defers `events`, in order (each stamped in place when it has no time). */
  deferMany(events: readonly NewEvent[]): void {
    this.#open();
    if (events.length === 0) return;
    const ms = Date.now();
    for (const ev of events) {
      if (ev.epoch_ms === undefined) ev.epoch_ms = ms;
      this.#pending.push(ev);
    }
    if (!this.#flushQueued) this.#scheduleFlush();
  }

  /** Appends one event now, with this writer's deferred events before it, in one transaction. */
  append(ev: NewEvent): Appended {
    return this.#commit([ev])[0];
  }

  /** Appends events now, in order, after this writer's deferred events, in one transaction. */
  appendMany(events: readonly NewEvent[]): Appended[] {
    return this.#commit(events);
  }

  /** Commits the deferred events now (raising a loss kept from an earlier commit). */
  flush(): void {
    this.#raiseLost();
    if (this.#pending.length > 0) this.#commit(NONE);
  }

  /**
   * Commits the deferred events where no caller can take an error (the kernel's effect hook):
   * a failure is kept — the events for a retry, or the loss — and raised by the next call.
   */
  settle(): void {
    if (this.#pending.length === 0 || this.#closed) return;
    try {
      this.#write(NONE); // a loss kept earlier stays kept: these events are not held back by it
    } catch (e) {
      if (e instanceof DeferredRowsFailed) this.#keepLost(e);
      // otherwise the events are still pending: the next commit retries and raises
    }
  }

  /** This run's view of `stream` from `fromSeq` on, its own deferred events included. */
  read(stream: string, fromSeq = 1, limit?: number): EventRow[] {
    this.#beforeRead();
    return this.store.read(stream, fromSeq, limit);
  }

  /** The last `n` events of `stream`, this run's deferred ones included. */
  tail(stream: string, n: number): EventRow[] {
    this.#beforeRead();
    return this.store.tail(stream, n);
  }

  /** True when `stream` has an event (this run's deferred ones included). */
  hasStream(stream: string): boolean {
    this.#beforeRead();
    return this.store.hasStream(stream);
  }

  /** `s:query`: one read-only SELECT (`query.ts`) over the log, this run's deferred events included. */
  query(
    sql: string,
    params: unknown[] | Record<string, unknown> = [],
    opts: QueryOptions = {},
  ): Record<string, unknown>[] {
    this.#beforeRead();
    return readOnlyQuery(this.store, sql, params, opts);
  }

  /**
   * The run is over: commits what waits, disarms the timer and raises any loss. The connection
   * stays open (it is the process's); later calls through this writer fail.
   */
  close(): void {
    if (this.#closed) return;
    try {
      this.flush();
    } finally {
      this.#clearFlushTimer();
      this.#closed = true;
    }
  }

  #open(): void {
    if (this.#closed) throw new Error(`knl: the run's writer of ${this.store.path} is closed`);
  }

  #beforeRead(): void {
    this.#open();
    this.flush();
    this.store.useBusyTimeout(this.busyTimeoutMs);
  }

  /** Keeps a loss for the next call; a second one before it is added to the first (counts summed). */
  #keepLost(e: DeferredRowsFailed): void {
    const before = this.#lost;
    this.#lost = before === undefined ? e : new DeferredRowsFailed(
      before.count + e.count,
      e.path,
      new Error(`${(before.cause as Error).message}; then ${(e.cause as Error).message}`),
    );
  }

  #raiseLost(): void {
    const lost = this.#lost;
    if (lost === undefined) return;
    this.#lost = undefined;
    throw lost;
  }

  /** Arms the latest commit of the deferred events: the window's timer, or a microtask. */
  #scheduleFlush(): void {
    this.#flushQueued = true;
    const due = () => {
      this.#flushQueued = false;
      this.#flushTimer = undefined;
      this.settle(); // no caller to raise to: kept for the run's next call
    };
    if (this.commitWindowMs === 0) queueMicrotask(due);
    else this.#flushTimer = setTimeout(due, this.commitWindowMs);
  }

  #clearFlushTimer(): void {
    if (this.#flushTimer === undefined) return;
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    this.#flushQueued = false;
  }

  /** A caller's commit: a loss kept earlier is raised first, before anything is written. */
  #commit(events: readonly NewEvent[]): Appended[] {
    this.#open();
    this.#raiseLost();
    return this.#write(events);
  }

  /** One transaction: this writer's deferred events, then `events`. */
  #write(events: readonly NewEvent[]): Appended[] {
    const store = this.store;
    const pending = this.#pending;
    if (store.closed) {
      if (pending.length > 0) this.#drop();
      const e = new Error(`knl: the store ${store.path} is closed`);
      throw pending.length > 0 ? new DeferredRowsFailed(pending.length, store.path, e) : e;
    }
    store.useBusyTimeout(this.busyTimeoutMs);
    const observe = this.#onCommit;
    const placed = observe === undefined ? undefined : [] as Appended[];
    let out: Appended[];
    try {
      out = store.commit(pending, events, placed);
    } catch (e) {
      if (e instanceof DeferredRowsFailed) this.#drop();
      throw e;
    }
    if (pending.length > 0) this.#drop();
    if (observe !== undefined) this.#tell(observe, pending, events, placed!);
    return out;
  }

  /** Hands one committed transaction to the observer: `pending` then `events`, where they landed. */
  #tell(
    observe: (rows: readonly EventRow[]) => void,
    pending: readonly NewEvent[],
    events: readonly NewEvent[],
    placed: readonly Appended[],
  ): void {
    if (placed.length === 0) return;
    const rows: EventRow[] = new Array(placed.length);
    const n = pending.length;
    for (let i = 0; i < placed.length; i++) {
      rows[i] = committedRow(i < n ? pending[i] : events[i - n], placed[i]);
    }
    observe(rows);
  }

  /** Forgets the deferred events (committed, or lost) and disarms the timer. */
  #drop(): void {
    this.#pending = [];
    this.#clearFlushTimer();
  }
}
