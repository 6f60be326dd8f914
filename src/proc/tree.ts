/**
 * Process trees: ending a child together with every process group its descendants lead.
 *
 * Why: every child agent-block starts is the leader of a group of its own (`group.ts`), so a
 * run's own children sit in groups of their own too. A run that answers SIGTERM ends them
 * itself; a run that has to be SIGKILLed (a Lua loop that never waits for the host) cannot, and
 * its children would be orphaned. `endTree` covers that case: just before the SIGKILL it reads the
 * descendants from `/proc` and kills their groups along with the child's.
 *
 * Owns the `/proc` walk (Linux). Elsewhere `descendantGroups` finds nothing, and `endTree`
 * behaves like `ManagedProcess.terminate`.
 *
 * Invariant: only groups led by descendants of the given pid are signalled, and only while the
 * child's own group still exists at the moment of the walk (no pid-reuse guessing afterwards).
 */
import type { ManagedProcess } from "./group.ts";

/** `[pid, ppid, pgid]` of every process, from `/proc` (empty when unavailable). */
function processTable(): [number, number, number][] {
  const out: [number, number, number][] = [];
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return out;
  }
  for (const e of entries) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      // Fields after the command name (which may hold spaces and parentheses).
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push([Number(e.name), Number(rest[1]), Number(rest[2])]);
    } catch { /* the process ended meanwhile */ }
  }
  return out;
}

/** Process groups (other than `pid`'s own) that contain a descendant of `pid`. */
export function descendantGroups(pid: number): number[] {
  const table = processTable();
  const children = new Map<number, number[]>();
  for (const [p, pp] of table) {
    const list = children.get(pp);
    if (list) list.push(p);
    else children.set(pp, [p]);
  }
  const pgidOf = new Map(table.map(([p, , g]) => [p, g]));
  const groups = new Set<number>();
  const stack = [...(children.get(pid) ?? [])];
  const seen = new Set<number>();
  while (stack.length) {
    const p = stack.pop()!;
    if (seen.has(p)) continue;
    seen.add(p);
    const g = pgidOf.get(p);
    if (g !== undefined && g !== pid && g > 1) groups.add(g);
    stack.push(...(children.get(p) ?? []));
  }
  return [...groups];
}

/**
 * Ends `p` and its descendants: SIGTERM to its group, then — if it has not exited within
 * `graceMs` — SIGKILL to its group and to every group its descendants lead.
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
  if (first === "timeout") {
    const groups = descendantGroups(p.pid);
    p.signalGroup("SIGKILL");
    for (const g of groups) {
      try {
        Deno.kill(-g, "SIGKILL");
      } catch { /* already gone */ }
    }
  }
  await p.status.catch(() => undefined);
  if (p.groupAlive()) p.signalGroup("SIGKILL");
}
