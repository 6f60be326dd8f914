/**
 * Parent-death signal: children that do not outlive a host killed outright.
 *
 * A host killed by SIGKILL (or the OOM killer) runs no code, so nothing of `group.ts` can end its
 * children. The kernel can: a process that set `PR_SET_PDEATHSIG` gets that signal when its
 * parent dies. Deno cannot run code between fork and exec, so the setting comes from a program
 * the child runs first, which sets it and execs the real command (same pid; the setting
 * survives the exec): the session stub (`session_stub.ts`: the child's own session and this
 * signal in one tiny exec) where it runs, else `setpriv --pdeathsig KILL --` (util-linux), put
 * behind `setsid` (`own_session.ts`) for the session. This module owns choosing between them
 * (the stub probed first; `setpriv` only probed when there is no stub: fixed system paths, never
 * the run's PATH, present and supports `--pdeathsig`), building a child's command line
 * (`childStart`), and resolving the program first the way Deno does (the child's `PATH`, else
 * `/bin:/usr/bin` as `execvp` would; `cwd` for a path with a slash), so that a missing or
 * non-executable program still throws `Deno.errors.NotFound` / `PermissionDenied` from `spawn`
 * rather than exiting 127 later — and so the stub, which searches no `PATH`, gets a path.
 *
 * What it cannot guarantee: the signal reaches the direct child only. Its own children (a
 * shell's background job, a daemon it detached) are not signalled when the host dies (the
 * lifeline, `lifeline.ts`, ends those); a well-behaved MCP server still ends on its stdin's EOF,
 * and output pipes break. The signal follows the *thread* that spawned the child (Deno spawns
 * from the thread running the JavaScript: the main thread, or a worker that then must outlive
 * its children). Without either program (not Linux, util-linux missing or older than 2.33, and
 * no stub) children start unwrapped and `detached`; the caller says so once.
 */
import { delimiter, isAbsolute, join, resolve } from "node:path";
import { inOwnSession } from "./own_session.ts";
import { sessionStub } from "./session_stub.ts";

const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv", "/usr/sbin/setpriv", "/sbin/setpriv"];

/** What children start through: the session stub, or `setpriv`. */
export type ParentDeathWrapper = { path: string; kind: "stub" | "setpriv" };

let probed: ParentDeathWrapper | { why: string } | undefined;

/** The program to wrap children with (the stub, else `setpriv`), or why there is none. Probed once. */
export function parentDeathWrapper(): ParentDeathWrapper | { why: string } {
  if (probed) return probed;
  const stub = sessionStub();
  if ("path" in stub) return probed = { path: stub.path, kind: "stub" };
  const setpriv = setprivWrapper();
  return probed = "path" in setpriv ? setpriv : { why: `${setpriv.why}; no session stub: ${stub.why}` };
}

function setprivWrapper(): ParentDeathWrapper | { why: string } {
  if (Deno.build.os !== "linux") return { why: `not Linux (${Deno.build.os})` };
  const path = SETPRIV_PATHS.find(isExecutableFile);
  if (!path) return { why: `setpriv (util-linux) not found in ${SETPRIV_PATHS.join(", ")}` };
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
      return { why: `${path} --pdeathsig failed (exit ${r.code}: ${err})` };
    }
  } catch (e) {
    return { why: `cannot run ${path}: ${(e as Error).message}` };
  }
  return { path, kind: "setpriv" };
}

/**
 * How to start `cmd` so that the child leads a session of its own and gets SIGKILL when this
 * process dies: behind the stub, else `setsid` and `setpriv`; where neither exists, `cmd` itself
 * with `detached` (a session, no signal). Throws as `Deno.Command#spawn` would for a program that
 * does not exist or is not executable.
 * @param env the child's complete environment (its `PATH` finds the program)
 * @param cwd the child's working directory
 */
export function childStart(
  cmd: readonly [string, ...string[]],
  env: Readonly<Record<string, string>>,
  cwd: string | undefined,
): { argv: [string, ...string[]]; detached: boolean } {
  const w = parentDeathWrapper();
  if (!("path" in w)) return { argv: [...cmd], detached: true };
  const [program, ...args] = cmd;
  const path = resolveProgram(program, env, cwd);
  if (w.kind === "stub") return { argv: [w.path, path, ...args], detached: false };
  return inOwnSession([w.path, "--pdeathsig", "KILL", "--", path, ...args]);
}

/** Where `execvp` looks for a program when the environment has no `PATH` (glibc's default). */
const DEFAULT_PATH = "/bin:/usr/bin";

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
  // Without a PATH of its own the child's lookup is execvp's default (setpriv's, before the stub).
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(delimiter)) {
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
