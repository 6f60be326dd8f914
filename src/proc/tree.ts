/**
 * Process trees: everything a child started, found and signalled as one, whether or not it is
 * still in the child's process group or below the child at all.
 *
 * A `Tree` is the union of three kinds of member, closed under descent:
 * - the members of a process group (the child leads one: `group.ts` starts it in a session of
 *   its own);
 * - the descendants of a process (the child, while it lives) — what left the group with
 *   `setpgid`/`setsid` but still has the child above it;
 * - the processes carrying a tag (`tags.ts`) — what detached entirely (double fork plus
 *   `setsid`) and was re-parented to init or to a subreaper.
 * This process is never a member. `members` reads `/proc` (Linux); elsewhere it finds nothing,
 * and callers fall back to signalling the process group alone, as before. In a child subreaper
 * (`reaper.ts`) it reads only this process's subtree, where every member is bound to be.
 *
 * Looking for a tag reads the environment of every live process of the table, the costly part
 * of a walk (a `serve` manager walked ~200 processes' environments after every run's end: ~14 ms
 * of its main thread per run). A tree that knows when its tag was first given (`since`: the
 * start time of the process it was given to, `startTicks`) reads only the processes started no
 * earlier: a tag is inherited through fork and exec only, so everything carrying it descends
 * from that process and started after it (the kernel's start times are boot-relative clock
 * ticks, monotonic, so "after" holds tick for tick).
 *
 * Also owns `endTree`, the way a runner ends an agent-block child: SIGTERM to its group only (the
 * child ends its own run's processes, as it does on SIGTERM), then after the grace period — or
 * at once, for whatever the child left behind — SIGKILL to the whole tree. Why: a child that
 * has to be SIGKILLed (a Lua loop that never waits for the host) cannot end its processes itself.
 *
 * Invariant: a pid or group is only signalled when the walk found it live an instant before;
 * the leader's descendants are looked up only while the leader has not been reaped (so a reused
 * pid is never taken for it).
 */
import type { ManagedProcess } from "./group.ts";
import { hasTag, processTags } from "./tags.ts";

/** One process, from `/proc/<pid>/stat`. */
export interface ProcRow {
  pid: number;
  ppid: number;
  pgid: number;
  /** One-letter state (`R`, `S`, `Z` for a zombie, ...). */
  state: string;
  /** When it started: clock ticks since boot (`/proc/<pid>/stat` field 22). */
  start: number;
}

/** `/proc/<pid>/stat` as a row; undefined once the process is gone. */
function statRow(pid: number): ProcRow | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    // Fields after the command name (which may hold spaces and parentheses): field 3 on.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 20);
    return { pid, state: rest[0], ppid: Number(rest[1]), pgid: Number(rest[2]), start: Number(rest[19]) };
  } catch {
    return undefined; // the process ended meanwhile
  }
}

/**
 * When process `pid` started, in clock ticks since boot (what `Tree.since` takes); undefined
 * where `/proc` cannot tell (not Linux, gone).
 */
export function startTicks(pid: number): number | undefined {
  if (Deno.build.os !== "linux") return undefined;
  const start = statRow(pid)?.start;
  return start !== undefined && Number.isFinite(start) ? start : undefined;
}

/**
 * Set once this process is a child subreaper (`reaper.ts`): then every process a tree can hold is
 * below it (what any of its children starts, detached or not, is re-parented to it at the
 * farthest), so `processTable` lists its descendants only — a few files instead of two per
 * process of the whole machine, with each `members` walk reading every one's environment.
 */
let subtreeOf: number | undefined;

/**
 * Makes `processTable` list the descendants of `pid` only (call once `pid`, this process, is a
 * subreaper); a no-op where `/proc/<pid>/task/<tid>/children` cannot be read (kernels built
 * without it), which keeps the whole table.
 */
export function limitTableToSubtree(pid: number): void {
  try {
    Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`);
    subtreeOf = pid;
  } catch { /* the whole table, as before */ }
}

/** Every process (or, once `limitTableToSubtree` was called, every descendant), from `/proc`. */
export function processTable(): ProcRow[] {
  if (subtreeOf !== undefined) return subtreeTable(subtreeOf);
  const out: ProcRow[] = [];
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return out;
  }
  for (const e of entries) {
    const c = e.name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const row = statRow(Number(e.name));
    if (row) out.push(row);
  }
  return out;
}

/**
 * The descendants of `root` (root itself not listed): two walks, merged. One walk can miss a
 * process being re-parented while it runs — its parent's `children` read after the parent died,
 * root's read before the orphan reached it (seen: a double-forked daemon left out) — and the
 * second walk, started after the first ended, finds it under its new parent.
 */
function subtreeTable(root: number): ProcRow[] {
  const rows = new Map<number, ProcRow>();
  for (const row of walkSubtree(root)) rows.set(row.pid, row);
  for (const row of walkSubtree(root)) rows.set(row.pid, row);
  return [...rows.values()];
}

/** One walk of `root`'s descendants through each thread's `children` list. */
function walkSubtree(root: number): ProcRow[] {
  const out: ProcRow[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    let tasks: Iterable<Deno.DirEntry>;
    try {
      tasks = Deno.readDirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone meanwhile
    }
    for (const t of tasks) {
      let text: string;
      try {
        text = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/children`);
      } catch {
        continue;
      }
      for (const s of text.split(" ")) {
        const row = s ? statRow(Number(s)) : undefined;
        if (row) {
          out.push(row);
          stack.push(row.pid);
        }
      }
    }
  }
  return out;
}

/**
 * Why `/proc` cannot be read (not Linux; without `--allow-all` Deno refuses `/proc/<pid>/…`), or
 * undefined when it can. Without it a tree is its process group alone.
 */
export function procUnreadable(): string | undefined {
  if (Deno.build.os !== "linux") return `not Linux (${Deno.build.os})`;
  try {
    Deno.readTextFileSync("/proc/self/stat");
    return undefined;
  } catch (e) {
    return `cannot read /proc: ${(e as Error).message}`;
  }
}

/** What belongs to one tree (any combination). */
export interface Tree {
  /** A process group whose members belong. */
  pgid?: number;
  /** A live, unreaped process whose descendants belong (and itself). */
  root?: number;
  /**
   * Processes that never belong, nor do their descendants reached through them from `root`,
   * whatever tree of the union reaches them (the lifeline's sentinel, which must outlive the host).
   */
  spare?: readonly number[];
  /** A tag (`<registry>.<n>`) or a registry prefix (`<registry>.`): processes carrying it belong. */
  tag?: string;
  /**
   * With `tag`: the start time (`startTicks`) of the process the tag was given to. Processes
   * that started earlier cannot carry it and are not read; absent, every process is.
   */
  since?: number;
}

const dead = (state: string) => state === "Z" || state === "X";

/** One tree, or several taken together (their union: one walk of the table for all). */
export type Trees = Tree | readonly Tree[];

const asList = (trees: Trees): readonly Tree[] => Array.isArray(trees) ? trees : [trees as Tree];

/** The live (non-zombie) members of `trees` (their union), never this process. */
export function members(trees: Trees, table: ProcRow[] = processTable()): number[] {
  const list = asList(trees);
  const pgids = new Set<number>();
  const tags: string[] = [];
  // the earliest start a process carrying one of the tags can have (-Infinity: any)
  let since = Infinity;
  const found = new Set<number>();
  const stack: number[] = [];
  const spared = new Set(list.flatMap((t) => t.spare ?? []));
  const add = (pid: number) => {
    if (!found.has(pid) && !spared.has(pid)) {
      found.add(pid);
      stack.push(pid);
    }
  };
  for (const t of list) {
    if (t.root !== undefined) add(t.root);
    if (t.pgid !== undefined) pgids.add(t.pgid);
    if (t.tag !== undefined) {
      tags.push(t.tag);
      since = Math.min(since, t.since ?? -Infinity);
    }
  }
  const children = new Map<number, number[]>();
  for (const r of table) {
    const kids = children.get(r.ppid);
    if (kids) kids.push(r.pid);
    else children.set(r.ppid, [r.pid]);
  }
  for (const r of table) {
    if (found.has(r.pid) || r.pid === Deno.pid || r.pid <= 1) continue;
    if (pgids.has(r.pgid)) add(r.pid);
    else if (tags.length && !dead(r.state) && !(r.start < since)) {
      const own = processTags(r.pid);
      if (own.length && tags.some((t) => hasTag(own, t))) add(r.pid);
    }
  }
  while (stack.length) for (const c of children.get(stack.pop()!) ?? []) add(c);
  const state = new Map(table.map((r) => [r.pid, r.state]));
  return [...found].filter((p) => p !== Deno.pid && p > 1 && state.has(p) && !dead(state.get(p)!));
}

/**
 * True while any of `pids`, or any member of a group in `pgids`, is alive (not a zombie), from
 * one read of the table. Where `/proc` cannot be read, a group counts while it can be signalled.
 */
function anyLeft(pids: readonly number[], pgids: readonly number[]): boolean {
  if (procUnreadable()) return pgids.some((g) => signalGroup(g, "SIGCONT"));
  const table = processTable();
  const groups = new Set(pgids);
  const want = new Set(pids);
  return table.some((r) => !dead(r.state) && (want.has(r.pid) || groups.has(r.pgid)));
}

/** Sends `signal` to process group `pgid`; false when the group no longer exists. */
function signalGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * The groups to signal as groups: those whose leader is still unreaped (a `root` with its own
 * `pgid`), so a group id is never signalled after its leader's pid could have been reused. Their
 * other members, and every other group's, are signalled one by one from the walk.
 */
function leaderGroups(list: readonly Tree[]): number[] {
  return list.filter((t) => t.pgid !== undefined && t.root === t.pgid).map((t) => t.pgid!);
}

/** Sends `signal` to each of `pids`; one that is gone meanwhile is skipped. */
export function signalAll(pids: Iterable<number>, signal: Deno.Signal): void {
  for (const pid of pids) {
    try {
      Deno.kill(pid, signal);
    } catch { /* already gone */ }
  }
}

/**
 * SIGTERM to every member of `trees` (one walk for all of them, however many: every group is
 * signalled before anything is waited for), then — while any is left after `graceMs` — SIGKILL
 * to every member, re-read each round (a process forked meanwhile is a member too), for at most
 * `killMs` more. `graceMs` 0: SIGKILL at once. Each round of waiting reads the table once, not
 * once per tree. Resolves when none is left or the time is up: true when the first walk found
 * any member or live group (false: nothing of the trees existed, and nothing was signalled —
 * a walk that found no member has nothing that could fork one, so it is not walked again).
 */
export async function endMembers(trees: () => Trees, graceMs: number, killMs = 2000): Promise<boolean> {
  let found: boolean | undefined;
  if (graceMs > 0) {
    const first = asList(trees());
    const known = members(first);
    const groups = leaderGroups(first);
    const live = groups.filter((g) => signalGroup(g, "SIGTERM"));
    if (!known.length && !live.length) return false;
    found = true;
    signalAll(known, "SIGTERM");
    const deadline = Date.now() + graceMs;
    while (Date.now() < deadline && anyLeft(known, groups)) {
      await new Promise((r) => setTimeout(r, Math.min(20, Math.max(1, deadline - Date.now()))));
    }
  }
  const deadline = Date.now() + killMs;
  for (;;) {
    const now = asList(trees());
    const groups = leaderGroups(now);
    const live = groups.filter((g) => signalGroup(g, "SIGKILL"));
    const left = members(now);
    found ??= left.length > 0 || live.length > 0;
    signalAll(left, "SIGKILL");
    if (!left.length && (!procUnreadable() || !groups.some((g) => signalGroup(g, "SIGKILL")))) return found;
    if (Date.now() >= deadline) return found;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Process groups (other than `pid`'s own) that contain a descendant of `pid`. */
export function descendantGroups(pid: number): number[] {
  const table = processTable();
  const pgidOf = new Map(table.map((r) => [r.pid, r.pgid]));
  const groups = new Set<number>();
  for (const m of members({ root: pid }, table)) {
    const g = pgidOf.get(m);
    if (m !== pid && g !== undefined && g !== pid && g > 1) groups.add(g);
  }
  return [...groups];
}

/**
 * Ends an agent-block child `p` and everything it started: SIGTERM to its group; if it has not
 * exited within `graceMs`, SIGKILL to its whole tree. Whatever of the tree outlives the child's
 * exit is SIGKILLed too.
 */
export async function endTree(p: ManagedProcess, graceMs: number): Promise<void> {
  p.endedBy ??= "terminated";
  p.signalGroup("SIGTERM");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const graceOver = new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), graceMs));
  const first = await Promise.race([
    p.status.then(() => "exited" as const, () => "exited" as const),
    graceOver,
  ]);
  clearTimeout(timer);
  if (first === "timeout") await p.kill();
  await p.status.catch(() => undefined);
  if (p.leftovers()) await p.kill();
}
