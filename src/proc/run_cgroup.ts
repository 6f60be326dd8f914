/**
 * A cgroup (v2) of the run's own: what lets the lifeline (`lifeline.ts`) end, after the host is
 * killed outright, even a process that detached and cleared its environment.
 *
 * Membership of a cgroup is inherited at fork and cannot be left without write access to the
 * cgroup file system: a daemon that double-forks, calls `setsid` and runs under `env -i` is still
 * in it, where no tag (`tags.ts`) and no process group reaches it, and no subreaper holds it once
 * the host is dead. Writing `1` to the cgroup's `cgroup.kill` (Linux 5.14) SIGKILLs every member,
 * and what they fork meanwhile.
 *
 * Owns making a new cgroup `agent-block-<pid>` below the one this process is in (found through
 * `/proc/self/cgroup`'s `0::` line and the `cgroup2` mount in `/proc/self/mountinfo`;
 * `makeRunCgroup`) and moving this process, the run's host, into it (`joinRunCgroup`), so every
 * child it starts from then on is a member. Two steps, because the lifeline's sentinel is started
 * between them: told the directory, and outside it. Only a process that is a run host and nothing
 * else asks (`adoptOrphans`, `reaper.ts`: the CLI's run process), never a program embedding
 * agent-block, whose other children it would take in. On the way it removes `agent-block-<pid>`
 * siblings whose process is gone and which are empty (a sentinel killed with its host leaves its
 * directory behind).
 *
 * Fails safe, returning why: no cgroup v2 hierarchy, a hierarchy not writable here (not root, no
 * delegation, a read-only mount, the sandbox's Landlock), or a move refused (controllers enabled
 * below the current cgroup). The host then works as before, without a message (the README says
 * where the cgroup applies: a warning on every run of every non-root user would be noise).
 * Nothing here throws.
 *
 * Cost: a `mkdir` and one write; the kernel's migration waits for an RCU grace period when no
 * other migration happened recently, about 10–17 ms of wall time once (a quiet 2-core machine,
 * December 2026), at the run's first spawn, not its start-up.
 */
import { join } from "node:path";
import { startTicks } from "./tree.ts";

/** The name of a run host's cgroup, below the one it started in. */
export const RUN_CGROUP_PREFIX = "agent-block-";

/**
 * Makes this process's run cgroup, `agent-block-<pid>` below the one it is in (empty: nothing has
 * joined it yet); its directory, or why not.
 */
export function makeRunCgroup(): { dir: string } | { why: string } {
  if (Deno.build.os !== "linux") return { why: `not Linux (${Deno.build.os})` };
  const parent = currentCgroupDir();
  if ("why" in parent) return parent;
  removeStale(parent.dir);
  const dir = join(parent.dir, `${RUN_CGROUP_PREFIX}${Deno.pid}`);
  try {
    removeRunCgroup(dir); // one left by an earlier process that had this pid
    Deno.mkdirSync(dir);
  } catch (e) {
    return { why: `cannot create ${dir}: ${(e as Error).message}` };
  }
  return { dir };
}

/**
 * Moves this process into `dir` (from `makeRunCgroup`): every child it starts from then on is a
 * member. Undefined once it is in; else why not, `dir` removed.
 */
export function joinRunCgroup(dir: string): string | undefined {
  try {
    Deno.writeTextFileSync(join(dir, "cgroup.procs"), String(Deno.pid));
    return undefined;
  } catch (e) {
    removeRunCgroup(dir);
    return `cannot move into ${dir}: ${(e as Error).message}`;
  }
}

/** The directory of this process's cgroup v2, or why there is none to be had. */
export function currentCgroupDir(): { dir: string } | { why: string } {
  let path: string | undefined;
  let mounts: string;
  try {
    path = Deno.readTextFileSync("/proc/self/cgroup").split("\n").find((l) => l.startsWith("0::"))?.slice(3);
    mounts = Deno.readTextFileSync("/proc/self/mountinfo");
  } catch (e) {
    return { why: `cannot read /proc: ${(e as Error).message}` };
  }
  if (path === undefined) return { why: "no cgroup v2 hierarchy" };
  for (const line of mounts.split("\n")) {
    const [mine, theirs] = line.split(" - ");
    if (theirs === undefined || theirs.split(" ")[0] !== "cgroup2") continue;
    // mountinfo: id, parent, dev, root (the hierarchy's path mounted), mount point, ...
    const fields = mine.split(" ");
    const root = unescape(fields[3]);
    if (path !== root && !path.startsWith(root === "/" ? "/" : root + "/")) continue;
    return { dir: join(unescape(fields[4]), path.slice(root === "/" ? 0 : root.length)) };
  }
  return { why: "no cgroup v2 file system mounted" };
}

/** mountinfo's octal escapes (`\040` for a space) undone. */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
}

/** Removes the `agent-block-<pid>` cgroups below `dir` whose process is gone (empty ones only). */
function removeStale(dir: string): void {
  try {
    for (const e of Deno.readDirSync(dir)) {
      if (!e.isDirectory || !e.name.startsWith(RUN_CGROUP_PREFIX)) continue;
      const pid = Number(e.name.slice(RUN_CGROUP_PREFIX.length));
      if (!Number.isInteger(pid) || pid <= 0 || pid === Deno.pid || startTicks(pid) !== undefined) continue;
      removeRunCgroup(join(dir, e.name));
    }
  } catch {
    // not readable: nothing to tidy
  }
}

/**
 * Removes the cgroup `dir` and those below it, deepest first; a populated one stays (a run
 * cgroup nothing joined, a start that failed after making it; a stale one).
 */
export function removeRunCgroup(dir: string): void {
  try {
    for (const e of Deno.readDirSync(dir)) if (e.isDirectory) removeRunCgroup(join(dir, e.name));
    Deno.removeSync(dir);
  } catch {
    // gone already, or still populated
  }
}
