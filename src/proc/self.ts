/**
 * How agent-block starts another agent-block: the command line that runs this same program.
 *
 * Owns the one decision that differs between the two ways agent-block is installed:
 * - from source, the running executable is the Deno CLI, so the command is
 *   `deno run -A --quiet [--config <repo>/deno.json] <repo>/cli.ts ARGS…` — the config is named
 *   explicitly so the child uses the repository's import map and lock file whatever directory it
 *   is started in;
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
import { fileURLToPath } from "node:url";
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
  const repo = join(dirname(fileURLToPath(moduleUrl)), "..", "..");
  const cli = join(repo, "cli.ts");
  const config = join(repo, "deno.json");
  const prefix: [string, ...string[]] = [execPath, "run", "-A", "--quiet"];
  if (isFile(config)) prefix.push("--config", config);
  prefix.push(cli);
  return { mode: "source", prefix };
}

/** The full command line that runs agent-block with `args`. */
export function selfCommand(args: string[], launch: SelfLaunch = selfLaunch()): [string, ...string[]] {
  return [...launch.prefix, ...args];
}

/** The path of `cli.ts` in a source checkout (for tests and the benchmark). */
export function sourceCli(): string {
  return join(dirname(fileURLToPath(import.meta.url)), "..", "..", "cli.ts");
}
