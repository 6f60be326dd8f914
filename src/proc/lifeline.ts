/**
 * The lifeline: what ends a host's process trees when the host itself is killed outright.
 *
 * A host killed by SIGKILL (or the OOM killer) runs no code, and the parent-death signal
 * (`parent_death.ts`) reaches its direct children only: `sh.exec("sleep 100 & wait")`'s `sleep`
 * lived on. So at its first spawn a host starts one sentinel: a `/bin/sh` in a session of its
 * own (behind `setsid`, `own_session.ts`; else a `detached` spawn), whose standard input is a
 * pipe only the host can write (Deno opens pipes close-on-exec, so no child inherits the write
 * end). The kernel closes that pipe however the host ends; the sentinel's `read` then sees end
 * of file and it SIGKILLs, in passes until a pass finds nothing (what forks meanwhile is caught
 * by the next), every process whose environment carries one of the host's registry tags
 * (`tags.ts`) — and the process group each such process leads, so a member that cleared its
 * environment but stayed in its group goes too. The host tells it each
 * registry's tag prefix: the first on the sentinel's command line, each later one as a line
 * (`t <id>`) before that registry's first child starts. A run host (the CLI's run process, which
 * adopts orphans: `reaper.ts`) also gets a cgroup of its own (`run_cgroup.ts`): made first, named
 * on the sentinel's command line, joined once the sentinel has started outside it. At end of
 * input the sentinel kills every member of that cgroup (`cgroup.kill`) and removes it, which
 * makes the tag passes needless (they run only where the cgroup could not be emptied). End of
 * input counts only once the sentinel has been re-parented (its parent is no longer the host): a
 * read that ended otherwise reads on, and a pipe closed while the host lives is watched by that
 * check once a second.
 *
 * Owns starting the sentinel (once per process, lazily), the line protocol, and the sentinel's
 * script. It finds processes through GNU/busybox `grep -z` over `/proc/*\/environ` in one
 * process per pass. A group is only signalled through a process that carries a tag and leads it
 * (`kill -- -<pid>`): a group id is its leader's pid, which the kernel does not reuse while the
 * group exists, so nothing outside the host's trees is signalled.
 *
 * What it cannot do without that cgroup (no writable cgroup v2 hierarchy: not root and no
 * delegation, a container's read-only mount, a confined run; or a host that does not adopt
 * orphans, such as a program embedding agent-block): a process that both detached and cleared
 * its environment, outside any tagged group, is out of its reach (while the host lived,
 * `reaper.ts` adopted it; after a SIGKILL it is re-parented to init). A sentinel that cannot
 * start (not Linux, no `/bin/sh`) is reported once by the caller; the host then works as before.
 *
 * Invariant: the sentinel is recorded as one of Deno's own children (`reaper.ts`), so it is
 * never reaped behind Deno's back; it carries no tag, so no sweep of the host's ends it early;
 * with a cgroup it is spared by the run's own end (`spareChild`), so it removes the cgroup after
 * any end of the host (without one, that end ends it: nothing is left for it to do).
 */
import { inOwnSession } from "./own_session.ts";
import { adopting, ownChild, spareChild } from "./reaper.ts";
import { joinRunCgroup, makeRunCgroup, removeRunCgroup } from "./run_cgroup.ts";

/** The sentinel's program: collect tag prefixes; at end of file, sweep until nothing is left. */
const SCRIPT = `
host=$PPID
ids="|$1"
cg=$2
while :; do
  while IFS= read -r line; do
    case "$line" in
      "t "*) ids="$ids|\${line#t }" ;;
    esac
  done
  # End of input: the host is gone only if this shell was re-parented; a read ended otherwise
  # (an interrupted call) reads on, and a pipe closed by a live host is watched once a second.
  read -r stat < /proc/$$/stat || break
  set -- $stat
  [ "$4" = "$host" ] || break
  sleep 1
done
if [ -n "$cg" ] && [ -d "$cg" ]; then
  # the host's cgroup (run_cgroup.ts): every member goes, tagged or not, then its directories
  [ -e "$cg/cgroup.kill" ] && echo 1 > "$cg/cgroup.kill" 2>/dev/null
  pass=0
  until grep -qx "populated 0" "$cg/cgroup.events" 2>/dev/null || [ $pass -ge 40 ]; do
    pass=$((pass + 1))
    # a kernel before 5.14 has no cgroup.kill: its members are killed one by one, in passes
    [ -e "$cg/cgroup.kill" ] || for p in $(cat "$cg/cgroup.procs" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    sleep 0.05
  done
  find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
  rmdir "$cg" 2>/dev/null
  # every descendant of the host was a member: nothing tagged is left to look for
  [ -d "$cg" ] || exit 0
fi
pattern="^AGENT_BLOCK_PROC_TAGS=(.* )?(\${ids#|})\\\\."
pass=0
while [ $pass -lt 20 ]; do
  pass=$((pass + 1))
  found=$(grep -lzE "$pattern" /proc/[0-9]*/environ 2>/dev/null)
  [ -n "$found" ] || exit 0
  for f in $found; do
    p=\${f#/proc/}
    p=\${p%/environ}
    kill -KILL -- "-$p" 2>/dev/null
    kill -KILL "$p" 2>/dev/null
  done
  sleep 0.05
done
`;

let sentinel: { writer: WritableStreamDefaultWriter<Uint8Array>; told: Set<string> } | string | undefined;

/** Why there is no sentinel (once tried), or undefined when there is one or none was tried. */
export function lifelineProblem(): string | undefined {
  return typeof sentinel === "string" ? sentinel : undefined;
}

/**
 * Makes sure the sentinel knows registry `id` (starting it first, on the first call); call
 * before that registry's first spawn. Returns why there is no sentinel, or undefined.
 */
export function holdLifeline(id: string): string | undefined {
  if (sentinel === undefined) sentinel = start(id);
  if (typeof sentinel === "string") return sentinel;
  if (sentinel.told.has(id)) return undefined;
  sentinel.told.add(id);
  sentinel.writer.write(new TextEncoder().encode(`t ${id}\n`)).catch(() => undefined);
  return undefined;
}

/** Starts the sentinel, knowing registry `first` from its command line. */
function start(
  first: string,
): { writer: WritableStreamDefaultWriter<Uint8Array>; told: Set<string> } | string {
  if (Deno.build.os !== "linux") return `not Linux (${Deno.build.os})`;
  // A run host (the CLI's run process, which adopts orphans) gets a cgroup of its own: made now
  // and named on the sentinel's command line, joined once the sentinel has started outside it
  // (run_cgroup.ts). On the command line, not as a line on the pipe: the first write on the fresh
  // pipe waits for the event loop to turn, and a host killed before that never wrote it (later
  // lines, on a stream started, go out at once).
  const cg = adopting() ? makeRunCgroup() : undefined;
  const dir = cg !== undefined && "dir" in cg ? cg.dir : "";
  let child: Deno.ChildProcess;
  try {
    // Its own session behind `setsid` (a `detached` spawn would fork this whole process), and no
    // parent-death signal: it must outlive the host.
    const { argv: [program, ...args], detached } = inOwnSession(["/bin/sh", "-c", SCRIPT, "sh", first, dir]);
    child = new Deno.Command(program, {
      args,
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin:/usr/sbin:/sbin" },
      cwd: "/",
      stdin: "piped",
      stdout: "null",
      stderr: "null",
      detached,
    }).spawn();
  } catch (e) {
    if (dir) removeRunCgroup(dir);
    return `cannot start /bin/sh: ${(e as Error).message}`;
  }
  ownChild(child.pid);
  child.unref();
  child.status.catch(() => undefined);
  // Every child from here on is a member; the sentinel then outlives the run's own end (spared),
  // to remove the cgroup after the host. A join that fails leaves no cgroup (removed) to remove.
  if (dir && joinRunCgroup(dir) === undefined) spareChild(child.pid);
  const writer = child.stdin.getWriter();
  return { writer, told: new Set([first]) };
}
