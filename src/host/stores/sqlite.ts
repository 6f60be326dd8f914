/**
 * The one way the stores open SQLite (`node:sqlite`): kv, sql and ts all come through here.
 *
 * Owns:
 * - where a store lives: the path the run was given (`RunContext.stores`: typed in the request,
 *   else what the edge read from `AGENT_BLOCK_KV_PATH`, `_SQL_PATH`, `_TS_PATH`), resolved
 *   against the run's working directory, else `<AGENT_BLOCK_HOME>/<kind>.sqlite`; the literal
 *   `:memory:` is a private in-memory database;
 * - how it is opened: the parent directory is created, `pragma busy_timeout` is set explicitly
 *   FIRST (Deno ignores the constructor's timeout; default 5000 ms, the run's
 *   `settings.sqlBusyTimeoutMs`, from `AGENT_BLOCK_SQL_BUSY_TIMEOUT_MS` at the edge),
 *   then `journal_mode=WAL` and `synchronous=NORMAL` (the WAL switch is retried while another
 *   process holds the lock: `src/knl/wal_mode.ts`);
 * - `writeTx`: multi-statement writes run in `BEGIN IMMEDIATE`, so a transaction never has to
 *   upgrade a read lock to a write lock (which fails with SQLITE_BUSY without waiting).
 * Why: several agent-block processes share one file; WAL plus a busy timeout plus immediate
 * transactions is what makes that safe without losing a row.
 *
 * One connection per store per run, opened on first use and closed when the run ends.
 */
import { DatabaseSync } from "node:sqlite";
import { dirname, join } from "node:path";
import type { RunSettings } from "../../run_settings.ts";
import { useWalJournal } from "../../knl/wal_mode.ts";

/** The three stores. */
export type StoreKind = "kv" | "sql" | "ts";

/** The settings a store is opened with, from its run. */
export interface StoreRun {
  /** The run's settings (the busy timeout). */
  settings: Readonly<RunSettings>;
  /** The run's `$AGENT_BLOCK_HOME` (absolute). */
  home: string;
  /** A path made absolute against the run's working directory. */
  resolve(path: string): string;
  /** Paths the run was given (absent or blank: the home's file). */
  stores?: Readonly<Partial<Record<StoreKind, string>>>;
}

/** The file (or `:memory:`) store `kind` uses for `run`. */
export function storePath(kind: StoreKind, run: StoreRun): string {
  const v = run.stores?.[kind];
  if (!v || !v.trim()) return join(run.home, `${kind}.sqlite`);
  return v === ":memory:" ? v : run.resolve(v);
}

/** Opens (creating if needed) the database at `path` (absolute) with the settings above. */
export function openDatabase(path: string, busyMs = 5000): DatabaseSync {
  if (path !== ":memory:") {
    try {
      Deno.mkdirSync(dirname(path), { recursive: true });
    } catch (e) {
      // mkdir -p reports a FILE on the way as "File exists"; say what is wrong instead.
      if (e instanceof Deno.errors.AlreadyExists) throw new Error(`Not a directory: ${dirname(path)}`);
      throw e;
    }
  }
  const db = new DatabaseSync(path);
  try {
    db.exec(`pragma busy_timeout = ${busyMs}`);
    if (path !== ":memory:") {
      useWalJournal(db, busyMs);
      db.exec("pragma synchronous = NORMAL");
    }
  } catch (e) {
    db.close();
    throw e;
  }
  return db;
}

/** Runs `fn` inside `BEGIN IMMEDIATE … COMMIT` (rolled back if it throws). */
export function writeTx<T>(db: DatabaseSync, fn: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const r = fn();
    db.exec("COMMIT");
    return r;
  } catch (e) {
    try {
      db.exec("ROLLBACK");
    } catch { /* the failure already ended the transaction */ }
    throw e;
  }
}

/** An error's message without Deno's `(os error N): syscall 'path'` tail. */
function osMessage(e: unknown): string {
  return String((e as Error)?.message ?? e).replace(/ \(os error \d+\).*$/, "");
}

/** A store's connection for one run: opened lazily, closed by `close()`. */
export class LazyDatabase {
  #db: DatabaseSync | undefined;
  #path: string | undefined;
  /**
   * @param kind which store
   * @param run where its settings come from (read on first use)
   * @param init creates the schema on a fresh connection
   */
  constructor(
    readonly kind: StoreKind,
    private readonly run: StoreRun,
    private readonly init: (db: DatabaseSync) => void,
  ) {}

  /** The path in use (resolved on first open). */
  get path(): string {
    return this.#path ??= storePath(this.kind, this.run);
  }

  /** The open connection; opens it and creates the schema on first use. */
  get db(): DatabaseSync {
    if (this.#db) return this.#db;
    const path = this.path;
    let db: DatabaseSync;
    try {
      db = openDatabase(path, this.run.settings.sqlBusyTimeoutMs ?? 5000);
    } catch (e) {
      throw new Error(`cannot open the ${this.kind} store ${path}: ${osMessage(e)}`);
    }
    try {
      this.init(db);
    } catch (e) {
      db.close();
      throw new Error(`cannot open the ${this.kind} store ${path}: ${osMessage(e)}`);
    }
    this.#db = db;
    return db;
  }

  close(): void {
    try {
      this.#db?.close();
    } catch { /* closing twice or mid-failure: nothing left to release */ }
    this.#db = undefined;
  }
}
