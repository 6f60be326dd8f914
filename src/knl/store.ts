/**
 * The event store: one append-only log per SQLite file, shared by every session written to it.
 *
 * Owns the connection (one per file per process: `openStore` caches by canonical path, so two
 * runs in one process — an embedder, the test suite — append through the same handle and
 * `position` order is never split between connections of one process), its pragmas, the
 * transactions, and the fixed reads (`read`, `tail`). Ad-hoc reads go through `query.ts`. It
 * holds no queue: what a run defers is held by that run's `EventWriter` (`writer.ts`) and handed
 * to `commit` with the events that commit it, so no run's commit carries another run's events.
 *
 * Invariants:
 * - WAL, `synchronous = NORMAL`, `wal_autocheckpoint = 8000` pages, and an explicit `busy_timeout`
 *   (node:sqlite's constructor option is ignored by Deno, so it is set by pragma): several
 *   processes append to one file and wait for each other instead of failing. The connection
 *   opens with its first opener's timeout (default 30 s); a run's writer puts its own in force
 *   for each of its commits and reads (`useBusyTimeout`: a pragma only when it differs), and a
 *   direct call on the store (a reader outside any run) uses the one in force.
 * - Every commit is its own `BEGIN IMMEDIATE` transaction that takes the write lock before reading
 *   the stream's last `seq` (once per stream per transaction), so `seq` is gap-free and ordered
 *   per stream even with concurrent writers, and `position` follows commit order. (A deferred
 *   transaction upgrading from read to write could get SQLITE_BUSY without the busy handler;
 *   IMMEDIATE never does.)
 * - `commit(deferred, events)` writes one writer's deferred rows (already stamped) and then the
 *   events given, in ONE transaction: a reader sees all of them or none. A failure on a deferred
 *   row is a `DeferredRowsFailed` naming how many it carried (the writer drops them); any other
 *   failure is the database's own error (the writer keeps them for a retry).
 * - Reads on the store see committed rows only; a run reads through its writer, which commits
 *   the run's own deferred events first.
 * - Rows come back upcast to today's shape (`upcast.ts`); stored rows are never updated.
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { dirname } from "node:path";
import { parseJson } from "../json/codec.ts";
import { ensureLayout } from "./migrate.ts";
import { MEMORY } from "./paths.ts";
import { EVENT_SCHEMA_VERSION } from "./schema.ts";
import { DEFAULT_BUSY_TIMEOUT_MS } from "./busy_timeout.ts";
import { useWalJournal } from "./wal_mode.ts";
import { upcastData } from "./upcast.ts";

/**
 * An event as readers see it: JSON columns decoded and upcast.
 *
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   type EventRow,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * const kernel = join(dir, "knl.sqlite");
 * const script = `require("knl").session({ owner = "docs" }, function(s)
 *   s:append({ kind = "note", data = { text = "checked the queue" } })
 * end)`;
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "note.lua"), dir).stores({ kernel }).env({}).build(),
 * );
 * const store = openExistingStore(kernel);
 * const notes: EventRow[] = store.read(report.sessions[0]).filter((e) => e.kind === "note");
 * assert.equal(notes[0].seq, 2); // after the session's open event
 * assert.deepEqual(notes[0].data, { text: "checked the queue" });
 * closeStore(kernel);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface EventRow {
  /** The log's global order (its key). */
  position: number;
  /** The session (stream) the event belongs to. */
  stream: string;
  /** Order within the stream, gap-free from 1. */
  seq: number;
  /** Wall-clock time of the append, ms since the epoch. */
  epoch_ms: number;
  /** Event kind (`session_open`, `llm_request`, `tool_call`, ...). */
  kind: string;
  /** Schema version the event was written under (rows are upcast on read). */
  schema_version: number;
  /** Labels: beat number, correlation ids, run labels. */
  meta: Record<string, unknown>;
  /** The event's payload, in today's shape. */
  data: Record<string, unknown>;
}

/**
 * One event to append; `data` and `meta` are JSON object texts.
 *
 * ```ts
 * import { EventStore, type NewEvent } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const store = new EventStore(":memory:");
 * const events: NewEvent[] = [
 *   { stream: "import-1", kind: "note", data: JSON.stringify({ text: "started" }), meta: "{}" },
 *   { stream: "import-1", kind: "note", data: JSON.stringify({ text: "done" }), meta: '{"job":"import"}' },
 * ];
 * store.appendMany(events); // one transaction
 * assert.deepEqual(store.read("import-1").map((e) => e.data.text), ["started", "done"]);
 * store.close();
 * ```
 */
export interface NewEvent {
  /** Time stamp to write (ms since the epoch); the time of the commit when absent. */
  epoch_ms?: number;
  /** Session (stream) id. */
  stream: string;
  /** Event kind. */
  kind: string;
  /** JSON object text of the payload. */
  data: string;
  /** JSON object text of the labels. */
  meta: string;
}

/**
 * Where an appended event landed.
 *
 * ```ts
 * import { type Appended, EventStore } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const store = new EventStore(":memory:");
 * const first: Appended = store.append({ stream: "a", kind: "note", data: "{}", meta: "{}" });
 * const other = store.append({ stream: "b", kind: "note", data: "{}", meta: "{}", epoch_ms: 1_000 });
 * const second = store.append({ stream: "a", kind: "note", data: "{}", meta: "{}" });
 * assert.deepEqual([first.position, first.seq], [1, 1]);
 * assert.deepEqual([other.position, other.seq, other.epoch_ms], [2, 1, 1_000]);
 * assert.deepEqual([second.position, second.seq], [3, 2]); // seq counts per stream, position across
 * store.close();
 * ```
 */
export interface Appended {
  /** Global position assigned. */
  position: number;
  /** Sequence number within the stream. */
  seq: number;
  /** Time stamp written. */
  epoch_ms: number;
}

interface RawRow {
  position: number;
  stream: string;
  seq: number;
  epoch_ms: number;
  kind: string;
  schema_version: number;
  meta: string;
  data: string;
}

const COLUMNS = "position, stream, seq, epoch_ms, kind, schema_version, meta, data";

/** Deferred rows written by one INSERT statement at most (6 parameters each). */
const MAX_ROWS_PER_INSERT = 32;

/** How a connection is opened. */
export interface StoreOptions {
  /**
   * ms to wait for another connection's write lock before failing (default `DEFAULT_BUSY_TIMEOUT_MS`);
   * only the first opener's value is used when the connection is opened — a writer sets its own
   * for its commits and reads (`useBusyTimeout`).
   */
  busyTimeoutMs?: number;
}

/** A commit failed on one of the deferred rows it carried (not on the events given with them). */
export class DeferredRowsFailed extends Error {
  /**
   * @param count how many deferred events the failed transaction carried (all lost)
   * @param path the database; @param cause the database's error
   */
  constructor(readonly count: number, readonly path: string, cause: Error) {
    super(`knl: ${count} deferred event(s) could not be written to ${path}: ${cause.message}`, { cause });
    this.name = "DeferredRowsFailed";
  }
}

/**
 * An open event log: one connection, no queue (a run's deferred events are its `EventWriter`'s).
 * A reader from outside gets one from `openExistingStore`.
 *
 * @example Read a run's session from its kernel log
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * const kernel = join(dir, "knl.sqlite");
 * const script = `require("knl").session({ owner = "docs" }, function(s)
 *   for i = 1, 3 do s:append({ kind = "step", data = { n = i } }) end
 * end)`;
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "steps.lua"), dir).stores({ kernel }).env({}).build(),
 * );
 * const [id] = report.sessions;
 * const store = openExistingStore(kernel);
 * assert.ok(store.hasStream(id));
 * const kinds = store.read(id).map((e) => e.kind);
 * assert.deepEqual(kinds, ["session_open", "step", "step", "step", "session_close"]);
 * assert.deepEqual(store.read(id, 2, 2).map((e) => e.data.n), [1, 2]); // from seq 2, at most 2
 * assert.deepEqual(store.tail(id, 1).map((e) => e.data.status), ["ok"]);
 * closeStore(kernel);
 * await Deno.remove(dir, { recursive: true });
 * ```
 *
 * @example A private in-memory log
 * ```ts
 * import { EventStore } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 *
 * const store = new EventStore(":memory:");
 * store.append({ stream: "scratch", kind: "note", data: '{"text":"hi"}', meta: "{}" });
 * assert.equal(store.read("scratch")[0].data.text, "hi");
 * store.close();
 * assert.ok(store.closed);
 * ```
 */
export class EventStore {
  /** The underlying connection (one per file per process). */
  readonly db: DatabaseSync;
  /** Layout found on open (0 = new file, 1 = migrated from the earlier layout, 2 = current). */
  readonly openedLayout: number;
  #append: StatementSync;
  /** Multi-row INSERTs of deferred rows, by row count. */
  #appendN: StatementSync[] = [];
  #lastSeq: StatementSync;
  #read: StatementSync;
  #readLimit: StatementSync;
  #tail: StatementSync;
  #exists: StatementSync;
  #begin: StatementSync;
  #commit: StatementSync;
  #rollback: StatementSync;
  #closed = false;
  /** The busy timeout set on the connection now (ms). */
  #busyMs: number;

  /** Opens `path` (`:memory:` for a private in-memory log). Prefer `openStore`, which caches. */
  constructor(readonly path: string, opts: StoreOptions = {}) {
    this.#busyMs = opts.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
    if (path !== MEMORY) Deno.mkdirSync(dirname(path), { recursive: true });
    try {
      this.db = new DatabaseSync(path);
    } catch (e) {
      throw new Error(`knl: cannot open ${path}: ${(e as Error).message}`);
    }
    try {
      this.db.exec(`PRAGMA busy_timeout = ${this.#busyMs}`);
      if (path !== MEMORY) {
        useWalJournal(this.db, this.#busyMs);
        this.db.exec("PRAGMA synchronous = NORMAL");
        // Checkpoint every ~32 MB of WAL instead of every 4 MB: a page rewritten by many small
        // appends (an index leaf, the table's last page) is copied back once per checkpoint, not
        // once per 1000 pages; appends cost about a quarter less. The WAL file may grow to about
        // 32 MB between checkpoints; the last connection to close checkpoints and removes it.
        this.db.exec("PRAGMA wal_autocheckpoint = 8000");
      }
      this.openedLayout = ensureLayout(this.db, path);
    } catch (e) {
      this.db.close();
      throw e;
    }
    this.#append = this.db.prepare(
      `INSERT INTO events (stream, seq, epoch_ms, kind, schema_version, meta, data)
       VALUES (?, ?, ?, ?, ${EVENT_SCHEMA_VERSION}, ?, ?)`,
    );
    this.#lastSeq = this.db.prepare("SELECT MAX(seq) AS m FROM events WHERE stream = ?");
    this.#read = this.db.prepare(`SELECT ${COLUMNS} FROM events WHERE stream = ? AND seq >= ? ORDER BY seq`);
    this.#readLimit = this.db.prepare(
      `SELECT ${COLUMNS} FROM events WHERE stream = ? AND seq >= ? ORDER BY seq LIMIT ?`,
    );
    this.#tail = this.db.prepare(
      `SELECT * FROM (SELECT ${COLUMNS} FROM events WHERE stream = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq`,
    );
    this.#exists = this.db.prepare("SELECT 1 AS x FROM events WHERE stream = ? LIMIT 1");
    this.#begin = this.db.prepare("BEGIN IMMEDIATE");
    this.#commit = this.db.prepare("COMMIT");
    this.#rollback = this.db.prepare("ROLLBACK");
  }

  /** True once the store was closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** The busy timeout in force on the connection (ms). */
  get busyTimeoutMs(): number {
    return this.#busyMs;
  }

  /**
   * Puts `ms` in force as the connection's busy timeout (a pragma only when it differs from the
   * one in force: one run per file never pays for it).
   */
  useBusyTimeout(ms: number): void {
    if (ms === this.#busyMs) return;
    this.db.exec(`PRAGMA busy_timeout = ${ms}`);
    this.#busyMs = ms;
  }

  /** Appends one event in its own IMMEDIATE transaction. */
  append(ev: NewEvent): Appended {
    return this.commit(NONE, [ev])[0];
  }

  /** Appends events in ONE transaction, in order. */
  appendMany(events: readonly NewEvent[]): Appended[] {
    return this.commit(NONE, events);
  }

  /**
   * ONE IMMEDIATE transaction: `deferred` (stamped rows, their positions not reported) in order,
   * then `events` (their positions returned). All or nothing. A failure on one of the deferred
   * rows throws `DeferredRowsFailed` (the caller's to drop them); any other failure is rethrown
   * as it is (the caller may keep the deferred rows for a retry).
   *
   * `placed`, when given (a writer with an observer: `writer.ts`), receives where EVERY row
   * landed once the transaction committed — the deferred ones first, then `events`, in order.
   * The rows of one multi-row INSERT take consecutive positions (`position` is the rowid, and the
   * write lock is held), so the last one's rowid gives them all; without `placed` nothing extra
   * is computed.
   */
  commit(deferred: readonly NewEvent[], events: readonly NewEvent[], placed?: Appended[]): Appended[] {
    if (this.#closed) throw new Error(`knl: the store ${this.path} is closed`);
    const out: Appended[] = [];
    let inDeferred = false;
    const next = new Map<string, number>(); // stream -> its next seq in this transaction
    const spots = placed === undefined ? undefined : [] as Appended[];
    this.#begin.run();
    try {
      if (deferred.length > 0) {
        inDeferred = true;
        this.#insertDeferred(deferred, next, spots);
        inDeferred = false;
      }
      const ms = Date.now();
      for (const ev of events) out.push(this.#insert(ev, ev.epoch_ms ?? ms, next));
      this.#commit.run();
    } catch (e) {
      if (this.db.isTransaction) this.#rollback.run();
      if (inDeferred) throw new DeferredRowsFailed(deferred.length, this.path, e as Error);
      throw e;
    }
    if (placed !== undefined) placed.push(...spots!, ...out);
    return out;
  }

  /**
   * The deferred rows, inside the write transaction, several per statement (their positions are
   * not reported, so one multi-row INSERT serves: a run's beats leave a few rows each). `spots`,
   * when given, receives where each landed.
   */
  #insertDeferred(rows: readonly NewEvent[], next: Map<string, number>, spots?: Appended[]): void {
    for (let from = 0; from < rows.length; from += MAX_ROWS_PER_INSERT) {
      const n = Math.min(MAX_ROWS_PER_INSERT, rows.length - from);
      if (n === 1) {
        const at = this.#insert(rows[from], rows[from].epoch_ms!, next);
        spots?.push(at);
        continue;
      }
      const params: (string | number)[] = new Array(n * 6);
      for (let i = 0; i < n; i++) {
        const ev = rows[from + i];
        const seq = this.#nextSeq(ev.stream, next);
        const at = i * 6;
        params[at] = ev.stream;
        params[at + 1] = seq;
        params[at + 2] = ev.epoch_ms!;
        params[at + 3] = ev.kind;
        params[at + 4] = ev.meta;
        params[at + 5] = ev.data;
      }
      const r = this.#appendRows(n).run(...params);
      if (spots !== undefined) {
        const first = Number(r.lastInsertRowid) - n + 1;
        for (let i = 0; i < n; i++) {
          spots.push({
            position: first + i,
            seq: params[i * 6 + 1] as number,
            epoch_ms: rows[from + i].epoch_ms!,
          });
        }
      }
    }
  }

  /** The prepared INSERT of `n` rows (2 ≤ n ≤ MAX_ROWS_PER_INSERT), made on first use. */
  #appendRows(n: number): StatementSync {
    let st = this.#appendN[n];
    if (!st) {
      const row = `(?, ?, ?, ?, ${EVENT_SCHEMA_VERSION}, ?, ?)`;
      st = this.db.prepare(
        `INSERT INTO events (stream, seq, epoch_ms, kind, schema_version, meta, data) VALUES ${
          new Array(n).fill(row).join(", ")
        }`,
      );
      this.#appendN[n] = st;
    }
    return st;
  }

  /** The next `seq` of `stream` in this transaction (its last one read once per transaction). */
  #nextSeq(stream: string, next: Map<string, number>): number {
    let seq = next.get(stream);
    if (seq === undefined) {
      const m = (this.#lastSeq.get(stream) as { m: number | bigint | null }).m;
      seq = m === null ? 1 : Number(m) + 1;
    }
    next.set(stream, seq + 1);
    return seq;
  }

  /** One row, inside the write transaction (whose lock makes the stream's last seq stable). */
  #insert(ev: NewEvent, ms: number, next: Map<string, number>): Appended {
    const seq = this.#nextSeq(ev.stream, next);
    const r = this.#append.run(ev.stream, seq, ms, ev.kind, ev.meta, ev.data);
    return { position: Number(r.lastInsertRowid), seq, epoch_ms: ms };
  }

  /** Committed events of `stream` from `fromSeq` on, in `seq` order (at most `limit` when given). */
  read(stream: string, fromSeq = 1, limit?: number): EventRow[] {
    const rows = limit === undefined
      ? this.#read.all(stream, fromSeq)
      : this.#readLimit.all(stream, fromSeq, limit);
    return (rows as unknown as RawRow[]).map(decodeRow);
  }

  /** The last `n` committed events of `stream`, in `seq` order. */
  tail(stream: string, n: number): EventRow[] {
    return (this.#tail.all(stream, n) as unknown as RawRow[]).map(decodeRow);
  }

  /** True when `stream` has at least one committed event. */
  hasStream(stream: string): boolean {
    return this.#exists.get(stream) !== undefined;
  }

  /**
   * Closes the connection (memory stores at run end; file stores stay open for the process).
   * A writer still holding deferred events over it fails its next commit, naming them.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.db.close();
  }
}

const NONE: readonly NewEvent[] = Object.freeze([]);

/** Decodes a stored row: JSON columns parsed, `data` upcast, `schema_version` today's. */
export function decodeRow(r: RawRow): EventRow {
  const version = Number(r.schema_version);
  const meta = parseObject(r.meta);
  const data = upcastData(r.kind, version, parseObject(r.data));
  return {
    position: Number(r.position),
    stream: r.stream,
    seq: Number(r.seq),
    epoch_ms: Number(r.epoch_ms),
    kind: r.kind,
    schema_version: Math.max(version, EVENT_SCHEMA_VERSION),
    meta,
    data,
  };
}

/**
 * The row a reader of the store will get for `ev`, committed at `at` — the same decoding as
 * `read` (`decodeRow`), so an observer of a writer's commits sees what `knl export` prints later.
 */
export function committedRow(ev: NewEvent, at: Appended): EventRow {
  return decodeRow({
    position: at.position,
    stream: ev.stream,
    seq: at.seq,
    epoch_ms: at.epoch_ms,
    kind: ev.kind,
    schema_version: EVENT_SCHEMA_VERSION,
    meta: ev.meta,
    data: ev.data,
  });
}

function parseObject(text: string): Record<string, unknown> {
  const v = parseJson(text);
  return v !== null && typeof v === "object" && !Array.isArray(v)
    ? v as Record<string, unknown>
    : { value: v };
}

const cache = new Map<string, EventStore>();

/**
 * The process-wide store for the file at `path` (absolute), opened on first use with `opts` (a
 * later opener's `opts` are not applied: its writer sets its own busy timeout). `:memory:` is
 * never cached: each call is a new private log.
 */
export function openStore(path: string, opts: StoreOptions = {}): EventStore {
  if (path === MEMORY) return new EventStore(MEMORY, opts);
  // The path as given was cached beside its canonical form when it was opened: a run opening
  // the same store again (every agent.run does) skips the realpath call.
  const known = cache.get(path);
  if (known && !known.closed) return known;
  let key = path;
  try {
    key = Deno.realPathSync(path);
  } catch { /* not created yet: the path as given is the key until it exists */ }
  let s = cache.get(key);
  if (!s || s.closed) {
    s = new EventStore(path, opts);
    try {
      key = Deno.realPathSync(path);
    } catch { /* keep the given key */ }
    cache.set(key, s);
    cache.set(path, s);
  }
  return s;
}

/**
 * Drops a store from the process cache and closes it (tests, embedders shutting down). Runs of
 * this process that write to the same file share that connection: close it when none is running.
 *
 * @example Close what a reader opened
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * const dir = await Deno.makeTempDir();
 * const kernel = join(dir, "knl.sqlite");
 * const script = 'require("knl").session({ owner = "docs" }, function(s) end)';
 * await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "s.lua"), dir).stores({ kernel }).env({}).build(),
 * );
 *
 * const store = openExistingStore(kernel);
 * closeStore(kernel);
 * assert.ok(store.closed);
 * assert.notEqual(openExistingStore(kernel), store); // a later open is a new connection
 * closeStore(kernel);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function closeStore(path: string): void {
  for (const [k, s] of [...cache]) {
    if (k === path || s.path === path) {
      s.close();
      cache.delete(k);
    }
  }
}

/**
 * The store at `path` for a reader from outside (`agent-block knl`, an embedder's `exportSession`
 * / `listSessions` / `readOnlyQuery`): never creates a database, so a mistyped path is an error
 * rather than a new empty log. It reads what is committed — the runs' deferred events are theirs
 * until their writers commit them.
 *
 * @example Open the log a run wrote
 * ```ts
 * import {
 *   BlockConfig,
 *   closeStore,
 *   listSessions,
 *   openExistingStore,
 *   runBlock,
 *   ScriptSource,
 * } from "@agent-block/agent-block";
 * import assert from "node:assert/strict";
 * import { join } from "node:path";
 *
 * // the project's log: <project>/.agent-block/knl.sqlite (stores({ kernel }) moves it)
 * const project = await Deno.makeTempDir();
 * const script = 'require("knl").session({ owner = "docs" }, function(s) end)';
 * const report = await runBlock(
 *   BlockConfig.builder(ScriptSource.inline(script, "s.lua"), project).env({}).build(),
 * );
 *
 * const kernel = join(project, ".agent-block", "knl.sqlite");
 * const store = openExistingStore(kernel);
 * assert.deepEqual(listSessions(store).map((s) => s.id), report.sessions);
 * assert.throws(() => openExistingStore(join(project, "typo.sqlite")), /no kernel database at/);
 * closeStore(kernel);
 * await Deno.remove(project, { recursive: true });
 * ```
 */
export function openExistingStore(path: string): EventStore {
  if (path === MEMORY) {
    throw new Error("the kernel database is in memory (:memory:): nothing outlives the run that wrote it");
  }
  try {
    if (!Deno.statSync(path).isFile) throw new Error(`${path} is not a file`);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) throw new Error(`no kernel database at ${path}`);
    throw e;
  }
  return openStore(path);
}
