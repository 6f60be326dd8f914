/**
 * Whole-life OS locks on files: the one place agent-block calls `flock` (bottom layer: imports
 * nothing of ours).
 *
 * Owns taking an exclusive `flock` without waiting (`tryLockFile`), asking whether a file's lock
 * is held (`lockIsHeld`) and letting one go (`releaseLockFile`). Users: `serve`'s one manager per
 * project (`serve/manager_lock.ts`) and the process running a flow run (`flows/run_lock.ts`).
 *
 * Why `flock`: the kernel drops it when the last descriptor of the open file is closed, which
 * happens however the holder ends — a SIGKILL included — so "I took the lock" proves no live
 * process holds it, and no pid (they are reused) is ever trusted. Deno opens every file
 * close-on-exec, so a child process never inherits (and never keeps alive) its parent's lock.
 *
 * Invariants:
 * - taking never waits and never steals; an OS failure (a directory that cannot be created, a
 *   file that cannot be opened) is thrown as it is, for the caller to name;
 * - a taken lock is on the file the path names now: a holder that removes its file when it lets
 *   go (`releaseLockFile(file, path)`) cannot leave a second taker locking the removed file while
 *   a third locks a new one (after locking, the descriptor's inode is compared with the path's,
 *   and a stale one is dropped and the take tried again);
 * - `lockIsHeld` holds a shared lock for the instant of the check (`flock` has no way to look
 *   without taking): a taker meeting it at that instant is refused as if the lock were held.
 */

/** How a lock file is opened. */
export interface LockFileMode {
  /** The file's mode when it is created (and the holder needs no more than write access). */
  mode: number;
  /** Open it readable too (the holder reads or rewrites what the file says). */
  read?: boolean;
}

const sameFile = (a: Deno.FileInfo, b: Deno.FileInfo) => a.ino === b.ino && a.dev === b.dev;

/**
 * Takes the exclusive lock of `path` (created with `how.mode` when absent), without waiting.
 * @returns the open file holding it, or undefined when another open file holds it
 */
export function tryLockFile(path: string, how: LockFileMode): Deno.FsFile | undefined {
  for (let attempt = 0;; attempt++) {
    const file = Deno.openSync(path, { read: how.read ?? false, write: true, create: true, mode: how.mode });
    let taken = false;
    try {
      taken = file.tryLockSync(true);
      if (!taken) {
        file.close();
        return undefined;
      }
      let named: Deno.FileInfo | undefined;
      try {
        named = Deno.statSync(path);
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
      if (named && sameFile(named, file.statSync())) return file;
    } catch (e) {
      file.close();
      throw e;
    }
    // the previous holder removed the file between our open and our lock: take the new one
    file.close();
    if (attempt >= 100) throw new Error(`${path} keeps being replaced while it is locked`);
  }
}

/**
 * Whether an open file holds the lock of `path`; false when there is no such file. The file is
 * opened for writing only (a lock file may have no read permission).
 */
export function lockIsHeld(path: string): boolean {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { write: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
  try {
    return !file.tryLockSync(false);
  } finally {
    file.close();
  }
}

/** Lets a lock go: removes `path` first when given (while still holding it), then closes. */
export function releaseLockFile(file: Deno.FsFile, path?: string): void {
  if (path !== undefined) {
    try {
      Deno.removeSync(path);
    } catch { /* gone already, or it stays: a lock file nobody holds is harmless */ }
  }
  try {
    file.close();
  } catch { /* already closed */ }
}
