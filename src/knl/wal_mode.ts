/**
 * Switching a SQLite connection to WAL, the way every store of ours opens its file.
 *
 * Owns one rule: `PRAGMA journal_mode = WAL` on a file that another process is opening (or
 * creating) at the same moment can fail with "database is locked" at once, without waiting for the
 * busy timeout: the switch needs the file to itself, and SQLite skips the busy handler where
 * waiting could deadlock. So the switch is retried, with short growing pauses, until it succeeds
 * or the connection's busy timeout has passed; any other error is thrown at once. Four runs that
 * start together on a fresh project all open the kernel log this way.
 *
 * Synchronous on purpose (`Atomics.wait`): stores are opened from synchronous constructors, and
 * the wait is bounded by the busy timeout the caller already accepted for its commits.
 */
import type { DatabaseSync } from "node:sqlite";

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Puts `db` in WAL mode, retrying a locked switch for up to `busyMs` ms (see the module doc). */
export function useWalJournal(db: DatabaseSync, busyMs: number): void {
  const deadline = Date.now() + busyMs;
  for (let attempt = 0;; attempt++) {
    try {
      db.exec("PRAGMA journal_mode = WAL");
      return;
    } catch (e) {
      if (!/locked|busy/i.test((e as Error).message) || Date.now() > deadline) throw e;
      Atomics.wait(sleeper, 0, 0, Math.min(50, 2 + attempt * 5));
    }
  }
}
