/**
 * A child's own session without forking this process: `setsid` (util-linux) as the first program
 * the child runs.
 *
 * Owns finding `setsid` (fixed system paths, probed once per process by running it) and the argv
 * and `detached` flag a spawn uses to put its child in a session of its own. Its users: children
 * started through `setpriv` where the session stub (`session_stub.ts`, which makes the session
 * itself) cannot run, and the lifeline's sentinel (`lifeline.ts`), which must not get the stub's
 * parent-death signal.
 *
 * Why: Deno's `detached: true` calls `setsid` in a hook between fork and exec, which makes the
 * spawn fork this whole process (page tables of a runtime with a wasm heap: ~10-15 ms of blocked
 * main thread per child, measured) where a plain spawn uses the cheap `posix_spawn` path (~2 ms).
 * `setsid PROGRAM` in a child that is not a process-group leader (a plain spawn's child never is)
 * calls `setsid()` itself and execs PROGRAM: same pid, same result (the child leads a new session
 * and process group whose ids are its pid), for one small exec. Where there is no `setsid`
 * (not Linux, util-linux missing) the spawn is `detached` as before.
 *
 * Invariant: until the wrapper has run, the child is in this process's group; `group.ts`
 * signals the child itself while its group does not exist yet (see `ManagedProcess.signalGroup`).
 */
const SETSID_PATHS = ["/usr/bin/setsid", "/bin/setsid", "/usr/sbin/setsid", "/sbin/setsid"];

let probed: { path: string } | { why: string } | undefined;

/** The `setsid` to start children with, or why there is none. Probed once per process. */
export function sessionWrapper(): { path: string } | { why: string } {
  if (probed) return probed;
  if (Deno.build.os !== "linux") return probed = { why: `not Linux (${Deno.build.os})` };
  const path = SETSID_PATHS.find((p) => {
    try {
      const info = Deno.statSync(p);
      return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  });
  if (!path) return probed = { why: `setsid (util-linux) not found in ${SETSID_PATHS.join(", ")}` };
  try {
    // A run of the wrapper itself, as children will use it (not a group leader, so no fork).
    const r = new Deno.Command(path, {
      args: [path, "--version"],
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).outputSync();
    if (r.code !== 0) return probed = { why: `${path} failed (exit ${r.code})` };
  } catch (e) {
    return probed = { why: `cannot run ${path}: ${(e as Error).message}` };
  }
  return probed = { path };
}

/**
 * How to start `argv` as the leader of a session of its own: behind `setsid` (and not
 * `detached`), else `detached`.
 */
export function inOwnSession(argv: readonly [string, ...string[]]): {
  argv: [string, ...string[]];
  detached: boolean;
} {
  const w = sessionWrapper();
  return "path" in w ? { argv: [w.path, ...argv], detached: false } : { argv: [...argv], detached: true };
}
