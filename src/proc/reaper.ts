/**
 * Orphan adoption: the host as a child subreaper, so that nothing a run started can leave it.
 *
 * On Linux a process that asked `prctl(PR_SET_CHILD_SUBREAPER)` (`libc.ts`) gets its orphaned
 * descendants re-parented to it instead of to init: a daemon that double-forks and calls
 * `setsid` — even one that also cleared its environment, out of reach of `tags.ts` — stays below
 * the host, where `endOrphans` finds and ends it.
 *
 * Owns:
 * - the request (`adoptOrphans`, called by the CLI's run command: one run per process, so every
 *   orphan is that run's) and becoming the subreaper lazily, just before the first child is
 *   started (`beforeSpawn`) — a run that starts nothing pays nothing;
 * - reaping: an adopted orphan that exits is this process's zombie, and Deno only reaps the
 *   children it spawned. On each SIGCHLD, every zombie child that Deno did not spawn (`own`) is
 *   reaped with `waitpid`, so a long run that leaves many short-lived background jobs does not
 *   fill the process table;
 * - `endOrphans`: SIGTERM, then SIGKILL after the grace, to every process still below this one
 *   but those spared (`spareChild`: the lifeline's sentinel, which works after the host ends);
 * - telling `tree.ts`, once a subreaper, that every process of its trees is below this one
 *   (`limitTableToSubtree`): ending a tree then reads this process's subtree, not all of `/proc`.
 *
 * Fails safe: where it cannot (not Linux, `/proc` unreadable, no FFI permission, no libc) it
 * says why once through
 * the sink the request gave, and the host works as before (process groups, descendants, tags).
 *
 * Invariant: in a subreaper process every child is started through `ProcessGroups.spawn`, which
 * records it in `own` until Deno has reaped it, so no child of Deno's is ever reaped here.
 */
import { setChildSubreaper, waitpidNoHang } from "./libc.ts";
import { endMembers, limitTableToSubtree, processTable, procUnreadable } from "./tree.ts";

let requested: ((message: string) => void) | undefined;
let state: "off" | "on" | "unavailable" = "off";
const own = new Set<number>();

/**
 * Asks that this process adopt the orphans of its children from the first spawn on.
 * @param warn where to say, once, that it cannot
 */
export function adoptOrphans(warn: (message: string) => void): void {
  requested = warn;
}

/** True once this process is a subreaper. */
export function adopting(): boolean {
  return state === "on";
}

/** Called before every spawn: becomes the subreaper on the first one, if asked to. */
export function beforeSpawn(): void {
  if (state !== "off" || !requested) return;
  // Reaping needs /proc to tell adopted zombies from Deno's own children: no /proc, no adopting.
  const why = procUnreadable() ?? setChildSubreaper();
  if (why !== undefined) {
    state = "unavailable";
    requested(
      `cannot adopt orphaned processes (${why}): a daemon that detaches and clears its environment ` +
        `may outlive the run`,
    );
    return;
  }
  state = "on";
  // Everything a run starts now stays below this process: trees are looked for there only.
  limitTableToSubtree(Deno.pid);
  Deno.addSignalListener("SIGCHLD", reap);
}

/** Records a child Deno spawned (never reaped here) until `disown`. */
export function ownChild(pid: number): void {
  own.add(pid);
}

/** Children `endOrphans` leaves alone (the lifeline's sentinel, whose work starts at the host's end). */
const spared: number[] = [];

/** Records a child that `endOrphans` must not end (with what it starts). */
export function spareChild(pid: number): void {
  spared.push(pid);
}

/** Forgets a child once Deno has reaped it. */
export function disown(pid: number): void {
  own.delete(pid);
}

/**
 * Children of this process's main thread, from `/proc/self/task/<pid>/children` (or, where that
 * cannot be read, every child from the whole table). An adopted orphan always lands there: the
 * kernel re-parents an orphan to the subreaper's first live thread, the main thread while the
 * process lives. A child another thread spawned (a worker's) is Deno's own and never reaped
 * here, so the other threads' lists — one file each, read on every SIGCHLD — are not needed.
 */
function children(): number[] {
  try {
    const text = Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/children`);
    const out: number[] = [];
    for (const s of text.split(" ")) if (s) out.push(Number(s));
    return out;
  } catch {
    return processTable().filter((r) => r.ppid === Deno.pid).map((r) => r.pid);
  }
}

/** Reaps every exited child that is not Deno's own. */
function reap(): void {
  for (const pid of children()) {
    if (own.has(pid)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    } catch {
      continue;
    }
    if (stat[stat.lastIndexOf(")") + 2] === "Z") waitpidNoHang(pid);
  }
}

/**
 * Ends every process still below this one (what a run left behind and no tag or group found):
 * SIGTERM, then SIGKILL after `graceMs`. A no-op unless this process is a subreaper.
 */
export async function endOrphans(graceMs: number): Promise<void> {
  if (state !== "on") return;
  await endMembers(() => ({ root: Deno.pid, spare: spared }), graceMs);
  reap();
}
