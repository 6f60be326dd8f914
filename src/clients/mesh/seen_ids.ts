/**
 * The replay window's memory: which message ids an agent has accepted while they are still fresh.
 *
 * Owns the two kinds of memory the NATS transport checks an inbound `request` / `send` against
 * (`nats_transport.ts`): `MemorySeenIds` (this process only) and `FileSeenIds`, a small SQLite
 * file (`<home>/mesh-seen/<project key>.sqlite`, `meshSeenFile`, as the host and the sandbox
 * launcher open it) shared by every run of the project and kept across them. A confined run (`--sandbox`)
 * may not write that file (a run's child could make it forget ids): the sandbox launcher keeps it
 * for the run and answers over a socket (`seen_remote.ts`). Runs are one-shot, so a memory that lives in one process
 * forgets every id when the agent restarts, and a captured message was accepted again by the next
 * run of the same agent; the file remembers it for as long as the message could pass the
 * freshness check anyway.
 *
 * Invariants:
 * - `add(id, ts, now)` is true exactly once per id while the id is remembered (two processes of
 *   one project included: the insert is the test, atomically, in SQLite);
 * - an id is remembered until its message is stale — `ts + FRESH_MS` (its sender's clock may be
 *   up to `FRESH_MS` ahead of ours, so arrival time plus the window would forget it too soon) —
 *   and at least until `now + FRESH_MS`; at most `SEEN_MAX` ids are kept, the oldest forgotten
 *   first;
 * - a file that cannot be written fails `add` with the SQLite error (the caller drops the message
 *   rather than accept it unchecked).
 */
import { createHash } from "node:crypto";
import { join, resolve } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { meshSeenDir } from "../../home.ts";
import { useWalJournal } from "../../knl/wal_mode.ts";

/** How far a message's `ts` may be from this clock, ms (and how long ids are remembered). */
export const FRESH_MS = 5 * 60_000;
/** At most this many seen ids are remembered (the oldest are forgotten first). */
export const SEEN_MAX = 200_000;
/** Forgetting runs once per this many new ids. */
const PRUNE_EVERY = 1024;

/** A replay window's memory. */
export interface SeenIds {
  /**
   * True when `id` (of a message stamped `ts`) is new, remembering it; false for a replay. A
   * memory kept by another process (`seen_remote.ts`) answers asynchronously, and rejects when it
   * cannot answer; the caller awaits only such an answer.
   */
  add(id: string, ts: number, now: number): boolean | Promise<boolean>;
  /** Lets go of what it holds open (a file). */
  close(): void;
}

/** When an id stamped `ts` and arriving at `now` may be forgotten. */
function keepUntil(ts: number, now: number): number {
  return Math.max(ts, now) + FRESH_MS;
}

/** Ids remembered in this process only. */
export class MemorySeenIds implements SeenIds {
  #until = new Map<string, number>();

  add(id: string, ts: number, now: number): boolean {
    const until = this.#until.get(id);
    if (until !== undefined && until >= now) return false;
    this.#until.delete(id);
    this.#until.set(id, keepUntil(ts, now));
    if (this.#until.size > SEEN_MAX || this.#until.size % PRUNE_EVERY === 0) this.#prune(now);
    return true;
  }

  #prune(now: number): void {
    // insertion order is arrival order: the oldest come first
    for (const [id, until] of this.#until) {
      if (until >= now && this.#until.size <= SEEN_MAX) break;
      this.#until.delete(id);
    }
  }

  close(): void {}
}

/** Ids remembered in a SQLite file, across runs and processes (see the module doc). */
export class FileSeenIds implements SeenIds {
  #db: DatabaseSync;
  #insert;
  #prune;
  #added = 0;

  /** Opens (creating) the file at `path`. Throws the SQLite error when it cannot. */
  constructor(readonly path: string) {
    this.#db = new DatabaseSync(path);
    try {
      this.#db.exec("PRAGMA busy_timeout = 5000");
      useWalJournal(this.#db, 5000);
      this.#db.exec("PRAGMA synchronous = NORMAL");
      // no temporary file is ever needed: the sandbox launcher uses it where it may create none
      this.#db.exec("PRAGMA temp_store = MEMORY");
      this.#db.exec("CREATE TABLE IF NOT EXISTS seen (id TEXT PRIMARY KEY, until INTEGER NOT NULL)");
      this.#db.exec("CREATE INDEX IF NOT EXISTS seen_until ON seen (until)");
      this.#insert = this.#db.prepare(
        "INSERT INTO seen (id, until) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET until = excluded.until " +
          "WHERE seen.until < ?",
      );
      this.#prune = this.#db.prepare(
        "DELETE FROM seen WHERE until < ? OR rowid IN " +
          "(SELECT rowid FROM seen ORDER BY until DESC LIMIT -1 OFFSET ?)",
      );
      this.#prune.run(Date.now(), SEEN_MAX);
    } catch (e) {
      this.#db.close();
      throw e;
    }
  }

  add(id: string, ts: number, now: number): boolean {
    // new, or remembered past its time (not pruned yet): either way it is (re)inserted
    const fresh = Number(this.#insert.run(id, keepUntil(ts, now), now).changes) === 1;
    if (fresh && ++this.#added % PRUNE_EVERY === 0) this.#prune.run(now, SEEN_MAX);
    return fresh;
  }

  close(): void {
    try {
      this.#db.close();
    } catch { /* closed */ }
  }
}

/**
 * The replay memory of `project` in `home`: `<home>/mesh-seen/<key>.sqlite`, the key the first 24
 * hex digits of the SHA-256 of the project's real path (as given where it does not resolve).
 */
export function meshSeenFile(home: string, project: string): string {
  let real = resolve(project);
  try {
    real = Deno.realPathSync(real);
  } catch {
    // not there (yet): the name as given
  }
  const key = createHash("sha256").update(real).digest("hex").slice(0, 24);
  return join(meshSeenDir(home), `${key}.sqlite`);
}
