/**
 * How agent-block starts another agent-block: the command line that runs this same program.
 *
 * Owns the one decision that differs between the two ways agent-block is installed:
 * - from source, the running executable is the Deno CLI, so the command is
 *   `deno run -A --quiet --node-modules-dir=manual [--config <repo>/deno.json]
 *   [--lock=<repo>/deno.run.lock] <repo>/cli.ts ARGS…` — the config is named explicitly so the
 *   child uses the repository's import map whatever directory it is started in, and the run's
 *   lockfile (`tools/gen_run_lock.ts`), as the launcher `deno task install` writes does;
 * - from a `deno compile`d binary, the executable IS agent-block, so the command is
 *   `<binary> ARGS…`.
 * The compiled case is recognised by the module living inside the binary's embedded file system
 * (`…/deno-compile-…/`) or by an executable that is not called `deno`.
 *
 * Why `--node-modules-dir=manual`: a child started from source uses `node_modules` as it is and
 * never writes it. With Deno's default (`auto`, deno.json's `nodeModulesDir`) every process
 * re-lays `node_modules` from the lockfile it was started with, and the run lockfile is a subset
 * of `deno.lock`, whose set of packages can hoist another version of a package into
 * `node_modules/.deno/node_modules` (express's `content-type`: 2.1.0 in the run's set, 3.1.1 in
 * the full one). A child would then rewrite what a full `deno install` laid out — and a
 * sandboxed child, for which `node_modules` is read-only, failed outright ("File exists (os error
 * 17), symlink"), as did a sandboxed first run on a fresh checkout (nothing installed, nothing
 * installable from inside). Whichever dependency comes next, a child that never installs cannot
 * hit this. Making the run lockfile hoist as `deno.lock` does was tried and cannot work: Deno lays
 * out only the packages a lockfile's own specifiers reach, and the version `deno.lock` hoists
 * may be reached only from test packages (`content-type@3.1.1` kept in `deno.run.lock` was not
 * laid out); it would also have left the sandboxed child installing on a fresh checkout.
 * The price is the invariant below: the parent lays the packages out first. A run a person
 * starts with the run lockfile (`deno task agent-block`, the installed launcher) is such a
 * parent: unconfined, it lays `node_modules` out as Deno does, and may relink a hoisted package.
 *
 * Invariants:
 * - nothing here starts a process. Callers hand the command to `ProcessGroups.spawn`
 *   (`src/proc/group.ts`), which puts the child in its own process group and strips the host's
 *   credentials from its environment;
 * - a process calls `layOutPackages()` (once is enough) before it starts itself from source,
 *   so the packages a run needs are in `node_modules` before a child looks for them there.
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
  // node_modules as it is: the parent laid it out (layOutPackages), the child never rewrites it
  const prefix: [string, ...string[]] = [execPath, "run", "-A", "--quiet", "--node-modules-dir=manual"];
  if (isFile(config)) prefix.push("--config", config);
  if (isFile(runLock)) prefix.push(`--lock=${runLock}`); // a run's packages only (tools/gen_run_lock.ts)
  prefix.push(cli);
  return { mode: "source", prefix };
}

/** The packages laid out, once per process. */
let laidOut: Promise<void> | undefined;

/**
 * Makes sure `node_modules` holds the packages this program's runs need before a child started
 * from source (`--node-modules-dir=manual`) looks for them: loading a file of one of them makes
 * Deno lay out `node_modules` from the lockfile this process was started with (`deno.lock` or
 * `deno.run.lock`, both holding a run's packages) — nothing when that is done already, or when
 * this process itself uses `node_modules` as it is. A compiled binary carries its packages:
 * nothing to do. Rejects with Deno's error when the packages cannot be laid out (say a read-only
 * checkout never installed); a child could not have run either.
 * @param launch how this program is started (default `selfLaunch()`)
 */
export function layOutPackages(launch: SelfLaunch = selfLaunch()): Promise<void> {
  if (launch.mode === "compiled") return Promise.resolve();
  laidOut ??= (async () => {
    // loaded when called, not with this module (deno.json's lazy-dynamic-imports)
    await import("./run_packages.ts");
  })().catch((e) => {
    laidOut = undefined; // the next start tries again
    throw e;
  });
  return laidOut;
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
