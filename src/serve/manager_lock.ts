/**
 * One manager per project: the lock a running `agent-block serve` holds on its project.
 *
 * Owns the lock file `<home>/serve-locks/<sha-256 of the project's real path, 16 hex>.lock`
 * (mode 0200: writable by its owner, readable by no one): an exclusive `flock` taken without
 * waiting and held, with the file open for writing, for the manager's whole life. Beside it,
 * `<same>.holder` says who holds it (`{pid, project, session, started_ms}`), for the refusal a
 * second manager prints.
 *
 * Why no read permission: a confined run (`--sandbox`, which keeps `serve-locks/` read-only and
 * holds no capability) could otherwise open the lock file for reading and `flock` it, and a run
 * that outlives its manager would then keep every later manager of the project from starting.
 * A lock file an earlier version made readable is set to 0200 once taken.
 *
 * Why: two managers of one project (a restart that overlaps the old one, two service units)
 * would both run every interval job, and each would take the other's live runs for the leftovers
 * of a dead manager. The kernel releases a `flock` when its holder exits however it ends — a
 * SIGKILL included — so "the lock is mine" proves that no other manager of this project is alive,
 * which is what closing a run as `lost` needs (no pid is ever trusted: pids are reused).
 *
 * Invariants: taking the lock never waits and never steals (`util/file_lock.ts` holds the
 * `flock` part, shared with the flow runs' locks); a lock that cannot be taken is an
 * `AgentBlockError` (exit 1) naming the project and the holder's pid; `release()` is idempotent;
 * the file is never removed (the next manager takes the same one).
 */
import { join } from "node:path";
import { createHash } from "node:crypto";
import { AgentBlockError } from "../errors.ts";
import { serveLocksDir } from "../home.ts";
import { releaseLockFile, tryLockFile } from "../util/file_lock.ts";
import { writeAtomic } from "../util/fs.ts";

/** What the lock file says about its holder. */
export interface LockHolder {
  pid: number;
  project: string;
  session: string;
  started_ms: number;
}

/** The lock file of `project` (a real path) under `home`. */
export function lockPath(home: string, project: string): string {
  const digest = createHash("sha256").update(project).digest("hex").slice(0, 16);
  return join(serveLocksDir(home), `${digest}.lock`);
}

/** The holder's note beside lock file `path`. */
function holderPath(path: string): string {
  return path.replace(/\.lock$/, ".holder");
}

/** A held project lock. */
export class ManagerLock {
  #file: Deno.FsFile | undefined;

  private constructor(readonly path: string, file: Deno.FsFile) {
    this.#file = file;
  }

  /**
   * Takes the lock of `holder.project` under `home`, or throws naming the manager that holds it.
   */
  static take(home: string, holder: LockHolder): ManagerLock {
    const path = lockPath(home, holder.project);
    Deno.mkdirSync(serveLocksDir(home), { recursive: true, mode: 0o700 });
    let file: Deno.FsFile | undefined;
    try {
      file = tryLockFile(path, { mode: 0o200 });
    } catch (e) {
      throw new AgentBlockError(`serve: cannot lock ${path}: ${(e as Error).message}`);
    }
    if (!file) {
      let who = "another manager";
      try {
        const h = JSON.parse(Deno.readTextFileSync(holderPath(path))) as Partial<LockHolder>;
        if (typeof h.pid === "number") who = `the manager with pid ${h.pid}`;
      } catch { /* written by a holder that is still starting: the plain words do */ }
      throw new AgentBlockError(
        `serve: ${who} already serves project ${holder.project} (lock ${path}); ` +
          "one manager per project — stop it first",
      );
    }
    try {
      file.truncateSync(0); // an earlier version wrote the holder into the lock file itself
      Deno.chmodSync(path, 0o200);
      writeAtomic(holderPath(path), JSON.stringify(holder) + "\n", { mode: 0o600 });
    } catch (e) {
      releaseLockFile(file);
      throw new AgentBlockError(`serve: cannot lock ${path}: ${(e as Error).message}`);
    }
    return new ManagerLock(path, file);
  }

  /** Releases the lock (closing the file releases the `flock`). */
  release(): void {
    const f = this.#file;
    this.#file = undefined;
    if (f) releaseLockFile(f);
  }
}
