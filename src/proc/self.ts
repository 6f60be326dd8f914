/**
 * How agent-block starts another agent-block: the command line that runs this same program.
 *
 * Owns the one decision that differs between the two ways agent-block is installed:
 * - from source, the running executable is the Deno CLI, so the command is
 *   `deno run -A --quiet [--config <repo>/deno.json] [--lock=<repo>/deno.run.lock] <repo>/cli.ts
 *   ARGS…` — the config is named explicitly so the child uses the repository's import map whatever
 *   directory it is started in, and the run's lockfile so it installs a run's packages only
 *   (`tools/gen_run_lock.ts`), as the launcher `deno task install` writes does;
 * - from a `deno compile`d binary, the executable IS agent-block, so the command is
 *   `<binary> ARGS…`.
 * The compiled case is recognised by the module living inside the binary's embedded file system
 * (`…/deno-compile-…/`) or by an executable that is not called `deno`.
 *
 * Invariant: nothing here starts a process. Callers hand the command to `ProcessGroups.spawn`
 * (`src/proc/group.ts`), which puts the child in its own process group and strips the host's
 * credentials from its environment.
 */
import { basename, dirname, join } from "node:path";
import { isFile } from "../util/fs.ts";

/** How this program was started. */
export interface SelfLaunch {
  mode: "source" | "compiled";
  /** The command, without the child's own arguments. */
  prefix: [string, ...string[]];
}

/**
 * Works out how to start this program again.
 * @param execPath the running executable (default `Deno.execPath()`)
 * @param moduleUrl this module's URL (default `import.meta.url`); tests pass others
 */
export function selfLaunch(
  execPath: string = Deno.execPath(),
  moduleUrl: string = import.meta.url,
): SelfLaunch {
  const exe = basename(execPath).toLowerCase();
  const inCompiledVfs = moduleUrl.includes("/deno-compile-") || moduleUrl.includes("\\deno-compile-");
  if (inCompiledVfs || !(exe === "deno" || exe === "deno.exe") || !moduleUrl.startsWith("file:")) {
    return { mode: "compiled", prefix: [execPath] };
  }
  const repo = join(dirname(filePath(moduleUrl)), "..", "..");
  const cli = join(repo, "cli.ts");
  const config = join(repo, "deno.json");
  const runLock = join(repo, "deno.run.lock");
  const prefix: [string, ...string[]] = [execPath, "run", "-A", "--quiet"];
  if (isFile(config)) prefix.push("--config", config);
  if (isFile(runLock)) prefix.push(`--lock=${runLock}`); // a run's packages only (tools/gen_run_lock.ts)
  prefix.push(cli);
  return { mode: "source", prefix };
}

/** The full command line that runs agent-block with `args`. */
export function selfCommand(args: string[], launch: SelfLaunch = selfLaunch()): [string, ...string[]] {
  return [...launch.prefix, ...args];
}

/** The path of `cli.ts` in a source checkout (for tests and the benchmark). */
export function sourceCli(): string {
  return join(dirname(filePath(import.meta.url)), "..", "..", "cli.ts");
}

/**
 * The path of a `file:` URL, as `node:url`'s `fileURLToPath` answers it. Its own few lines
 * because this module is on the sandbox launcher's start-up path, where `node:url` was the one
 * module needing it, and loading it cost ~0.7 ms of every sandboxed start (bench/sandbox_bench.ts).
 */
function filePath(url: string): string {
  const u = new URL(url);
  const path = decodeURIComponent(u.pathname);
  if (Deno.build.os !== "windows") return path;
  const win = path.replace(/^\/([A-Za-z]:)/, "$1").replaceAll("/", "\\");
  return u.hostname ? `\\\\${u.hostname}${win}` : win;
}
