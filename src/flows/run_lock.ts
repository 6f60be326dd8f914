/**
 * The lock of a flow run: held by the process running it (`flow run`, `resume`, `rerun`, a
 * `serve` flow job, an embedder's `runFlow`) for as long as it runs it, so a run whose record says
 * `running` can be told apart from one whose process is gone (`interrupted`).
 *
 * Owns the lock file `<home>/flow-locks/<sha-256 of the store's real path and the run id, 32
 * hex>.lock` (`flowLocksDir`), mode 0200, taken with `util/file_lock.ts` (an exclusive `flock`,
 * never waited for, dropped by the kernel however the holder ends — a SIGKILL included) and
 * removed when the run lets it go; `FlowRunBusy`, the refusal naming the run and the rule; and
 * `runIsLive`, the probe `flow runs` and `flow show` use.
 *
 * Why in the home and mode 0200: a confined (`--sandbox`) run — a sandboxed flow step among them —
 * must not be able to fake a live run. The sandbox keeps `flow-locks/` read-only
 * (`sandbox/policy.ts`, `HOME_READ_ONLY`), so a confined process can neither create a lock file
 * nor open one for writing or `chmod` it; and a file with no read permission cannot be opened for
 * reading by a process without capabilities (the sandbox drops them all), so it cannot get a
 * descriptor to `flock`. The project's `.agent-block/`, which confined runs may write, would not
 * do.
 *
 * Invariants:
 * - a run's lock is taken before its record is first appended to, and let go after its last
 *   append; so a run whose record says `running` while its lock is free has no live process (a
 *   reader reads the record first, then probes the lock);
 * - resume and rerun take the lock before they read the state they act on: two of them on one run
 *   cannot both proceed, and neither proceeds while the run's first process lives;
 * - a store without a file (`:memory:`) is seen by this process only: its runs' locks are held in
 *   a process-local table instead.
 */
import { join } from "node:path";
import { AgentBlockError } from "../errors.ts";
import { flowLocksDir } from "../home.ts";
import type { EventStore } from "../knl/store.ts";
import { lockIsHeld, releaseLockFile, tryLockFile } from "../util/file_lock.ts";
import { sha256Hex } from "./hash.ts";

/** Another process runs that flow run. */
export class FlowRunBusy extends AgentBlockError {
  /**
   * The refusal.
   * @param runId the run
   * @param where its lock file (or the in-memory store)
   */
  constructor(readonly runId: string, where: string) {
    super(
      `flow run ${runId} is running in another process (it holds the run's lock ${where}); ` +
        "a run is resumed or rerun only when no process runs it — wait for it to end, or stop it and try again",
      1,
    );
    this.name = "FlowRunBusy";
  }
}

/** A held run lock. */
export interface RunLock {
  /** Lets the lock go (idempotent). */
  release(): void;
}

const MEMORY = ":memory:";
/** The runs of in-memory stores held by this process. */
const memoryHeld = new WeakMap<EventStore, Set<string>>();

/** The lock file of run `runId` of `store` (a file store) under `home`. */
export function runLockPath(home: string, store: EventStore, runId: string): string {
  let real = store.path;
  try {
    real = Deno.realPathSync(store.path);
  } catch { /* not there yet: the path it was opened with names it */ }
  const digest = sha256Hex(`${real}\u0000${runId}`).slice(0, 32);
  return join(flowLocksDir(home), `${digest}.lock`);
}

/** Takes the lock of run `runId` of `store`, or throws `FlowRunBusy`. */
export function takeRunLock(home: string, store: EventStore, runId: string): RunLock {
  if (store.path === MEMORY) {
    const held = memoryHeld.get(store) ?? new Set<string>();
    memoryHeld.set(store, held);
    if (held.has(runId)) throw new FlowRunBusy(runId, "in this process's in-memory store");
    held.add(runId);
    return { release: () => void held.delete(runId) };
  }
  const path = runLockPath(home, store, runId);
  let file: Deno.FsFile | undefined;
  try {
    Deno.mkdirSync(flowLocksDir(home), { recursive: true, mode: 0o700 });
    file = tryLockFile(path, { mode: 0o200 });
  } catch (e) {
    throw new AgentBlockError(`flow run ${runId}: cannot lock ${path}: ${(e as Error).message}`, 1);
  }
  if (!file) throw new FlowRunBusy(runId, path);
  let held: Deno.FsFile | undefined = file;
  return {
    release: () => {
      if (held) releaseLockFile(held, path);
      held = undefined;
    },
  };
}

/** Whether a process holds the lock of a run of `store` (a run's record says `running`). */
export function runIsLive(home: string, store: EventStore): (runId: string) => boolean {
  if (store.path === MEMORY) return (runId) => memoryHeld.get(store)?.has(runId) ?? false;
  return (runId) => {
    const path = runLockPath(home, store, runId);
    try {
      return lockIsHeld(path);
    } catch (e) {
      throw new AgentBlockError(
        `flow run ${runId}: cannot check its lock ${path}: ${(e as Error).message}`,
        1,
      );
    }
  };
}
