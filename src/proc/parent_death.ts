/**
 * Parent-death signal: children that do not outlive a host killed outright.
 *
 * A host killed by SIGKILL (or the OOM killer) runs no code, so nothing of `group.ts` can end its
 * children. The kernel can: a process that set `PR_SET_PDEATHSIG` gets that signal when its
 * parent dies. Deno cannot run code between fork and exec, so the setting comes from
 * `setpriv --pdeathsig KILL --` (util-linux), which sets it and execs the real command (same
 * pid; the setting survives the exec). This module owns finding `setpriv` (fixed system paths,
 * never the run's PATH; probed once per process: present and supports `--pdeathsig`), building
 * the wrapped command, and resolving the program first the way Deno does (the child's `PATH`,
 * or `cwd` for a path with a slash), so that a missing or non-executable program still throws
 * `Deno.errors.NotFound` / `PermissionDenied` from `spawn` rather than exiting 127 later.
 *
 * What it cannot guarantee: the signal reaches the direct child only. Its own children (a
 * shell's background job, a daemon it detached) are not signalled when the host dies; a
 * well-behaved MCP server still ends on its stdin's EOF, and output pipes break. The signal
 * follows the *thread* that spawned the child (Deno spawns from the thread running the
 * JavaScript: the main thread, or a worker that then must outlive its children). Without
 * `setpriv` (not Linux, util-linux missing or older than 2.33) children start unwrapped; the
 * caller says so once.
 */
import { delimiter, isAbsolute, join, resolve } from "node:path";

const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv", "/sbin/setpriv"];

let probed: { path: string } | { why: string } | undefined;

/** The `setpriv` to wrap children with, or why there is none. Probed once per process. */
export function parentDeathWrapper(): { path: string } | { why: string } {
  if (probed) return probed;
  if (Deno.build.os !== "linux") return probed = { why: `not Linux (${Deno.build.os})` };
  const path = SETPRIV_PATHS.find(isExecutableFile);
  if (!path) return probed = { why: `setpriv (util-linux) not found in ${SETPRIV_PATHS.join(", ")}` };
  try {
    // A run of the wrapper itself: present, executable, and it knows --pdeathsig.
    const r = new Deno.Command(path, {
      args: ["--pdeathsig", "KILL", "--", path, "--version"],
      clearEnv: true,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    if (r.code !== 0) {
      const err = new TextDecoder().decode(r.stderr).trim().split("\n")[0];
      return probed = { why: `${path} --pdeathsig failed (exit ${r.code}: ${err})` };
    }
  } catch (e) {
    return probed = { why: `cannot run ${path}: ${(e as Error).message}` };
  }
  return probed = { path };
}

/**
 * `cmd` wrapped so that the child gets SIGKILL when this process dies, or `cmd` itself where that
 * is not available. Throws as `Deno.Command#spawn` would for a program that does not exist or is
 * not executable.
 * @param env the child's complete environment (its `PATH` finds the program)
 * @param cwd the child's working directory
 */
export function withParentDeath(
  cmd: readonly [string, ...string[]],
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
): [string, ...string[]] {
  const w = parentDeathWrapper();
  if (!("path" in w)) return [...cmd];
  const [program, ...args] = cmd;
  return [w.path, "--pdeathsig", "KILL", "--", resolveProgram(program, env, cwd), ...args];
}

/** The file Deno would run for `program`, checked as `spawn` would; unchanged when undecidable. */
function resolveProgram(
  program: string,
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
): string {
  if (program.includes("/")) {
    if (!isAbsolute(program) && cwd === undefined) return program;
    const path = isAbsolute(program) ? program : resolve(cwd!, program);
    return checked(path, program);
  }
  // Without a PATH of its own the child's lookup uses the host's; setpriv's default PATH decides.
  if (env.PATH === undefined) return program;
  for (const dir of env.PATH.split(delimiter)) {
    const path = dir === "" ? (cwd !== undefined ? join(cwd, program) : program) : join(dir, program);
    if (isExecutableFile(path)) return isAbsolute(path) ? path : program;
  }
  throw new Deno.errors.NotFound(`Failed to spawn '${program}': entity not found`);
}

function checked(path: string, program: string): string {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch {
    throw new Deno.errors.NotFound(`Failed to spawn '${program}': No such file or directory (os error 2)`);
  }
  if (!info.isFile || ((info.mode ?? 0o111) & 0o111) === 0) {
    throw new Deno.errors.PermissionDenied(`Failed to spawn '${program}': Permission denied (os error 13)`);
  }
  return path;
}

function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}
