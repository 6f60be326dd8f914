/**
 * Deno's caches for a confined runtime started from source: warmed once, from outside.
 *
 * A run from source reads its TypeScript through Deno's caches in `DENO_DIR`: each module's
 * transpiled JavaScript (`gen/`) and V8's compiled code (`v8_code_cache_v2`). A confined runtime
 * may read them but not write them — `DENO_DIR` is outside every write grant, and must stay so: a
 * confined run able to write a cache would write code that later runs, confined or not, execute.
 * So a checkout whose run path was never loaded by an unconfined process (a fresh clone used only
 * with `--sandbox`, a CI job, a checkout after `git pull`) transpiled and compiled its ~120
 * modules in every confined run: about 250 ms more per sandboxed start (410 against 160 ms, a
 * quiet 2-core machine, December 2026), for as long as no unconfined run happened.
 *
 * `warmRunPath`, called by the sandbox launcher's first stage before it confines anything (an
 * unconfined process, `src/cli/sandbox_launch.ts`), checks whether the transpiled form of the run
 * path's central module (`src/runtime/run.ts`) is in the cache and no older than its source; if
 * not, it runs this checkout once, unconfined, on a script of its own (`return`, in a temporary
 * project and `HOME`, with an environment of nothing but the paths Deno needs): the run path's
 * modules are then transpiled and compiled into the cache, which every later confined runtime
 * reads, and the probe's cached form is dated now (Deno keeps a cached form whose source hash
 * still matches, whatever its date: a fresh clone of the same sources). The check costs two
 * `stat` calls; the warm-up, when needed, two runs (~0.4 s: the second is what fills V8's code
 * cache). It reads dates only: a source changed
 * without a newer date, or another module changed alone, is missed — a slower start, never a
 * wrong one.
 *
 * The cache's layout (`<DENO_DIR>/gen/file/<absolute path>.js`) is Deno's (pinned: 2.9.6);
 * `tests/sandbox/warm_run_path_test.ts` holds it. Were it to change, the check would find nothing
 * and warm every launch — slower, never wrong. A compiled binary carries its code: nothing to do.
 */
import { dirname, join } from "node:path";
import type { SelfLaunch } from "./self.ts";

/** The module whose transpiled form says whether the run path was loaded outside (see above). */
const PROBE_MODULE = "src/runtime/run.ts";

/** Where Deno keeps its caches for an environment `env` (Deno's own rule on Linux and macOS). */
export function denoDir(env: Readonly<Record<string, string>>): string | undefined {
  if (env.DENO_DIR) return env.DENO_DIR;
  if (Deno.build.os === "darwin" && env.HOME) return join(env.HOME, "Library", "Caches", "deno");
  if (env.XDG_CACHE_HOME) return join(env.XDG_CACHE_HOME, "deno");
  return env.HOME ? join(env.HOME, ".cache", "deno") : undefined;
}

/** The transpiled form of `source` (an absolute path) in the cache `dir`. */
export function cachedFormOf(dir: string, source: string): string {
  return join(dir, "gen", "file", `${source}.js`);
}

/** The probe module of a source launch: its source, its cached form, and the cache; undefined for none. */
function probeOf(
  launch: SelfLaunch,
  env: Readonly<Record<string, string>>,
): { source: string; cached: string; cacheDir: string } | undefined {
  if (launch.mode !== "source") return undefined;
  const cli = launch.prefix[launch.prefix.length - 1];
  const cacheDir = denoDir(env);
  if (!cli.endsWith("cli.ts") || cacheDir === undefined) return undefined;
  const source = join(dirname(cli), PROBE_MODULE);
  return { source, cached: cachedFormOf(cacheDir, source), cacheDir };
}

/** True when the probe's cached form is there and no older than its source. */
function isWarm(probe: { source: string; cached: string }): boolean {
  try {
    const src = Deno.statSync(probe.source).mtime?.getTime() ?? 0;
    return (Deno.statSync(probe.cached).mtime?.getTime() ?? 0) >= src;
  } catch {
    return false;
  }
}

/** True when the run path's probe module is cached and no older than its source (or nothing can be warmed). */
export function runPathWarm(launch: SelfLaunch, env: Readonly<Record<string, string>>): boolean {
  const probe = probeOf(launch, env);
  return probe === undefined || isWarm(probe);
}

/**
 * Warms Deno's caches for the run path when they are cold (see the module header). Answers why
 * it could not, for the caller to say; undefined when warm, warmed, or nothing to warm.
 */
export async function warmRunPath(
  launch: SelfLaunch,
  env: Readonly<Record<string, string>>,
): Promise<string | undefined> {
  const probe = probeOf(launch, env);
  if (probe === undefined || isWarm(probe)) return undefined;
  const dir = await Deno.makeTempDir({ prefix: "agent-block-warm-" });
  try {
    // only what Deno needs to find itself and its caches (named, as the launch's Deno finds them),
    // and a home of its own: no credential, no setting or home of the user's
    const childEnv: Record<string, string> = {
      NO_COLOR: "1",
      DENO_NO_UPDATE_CHECK: "1",
      HOME: dir,
      DENO_DIR: probe.cacheDir,
    };
    for (const k of ["PATH", "TMPDIR"]) if (env[k] !== undefined) childEnv[k] = env[k];
    const [cmd, ...args] = launch.prefix;
    // twice: the first run fills the transpile cache, and V8's code cache is written for modules
    // that came from it (measured: one run left confined starts ~60 ms slower than two)
    for (let pass = 0; pass < 2; pass++) {
      const child = new Deno.Command(cmd, {
        args: [...args, "-s", "-", "-p", dir],
        cwd: dir,
        clearEnv: true,
        env: childEnv,
        stdin: "piped",
        stdout: "null",
        stderr: "piped",
      }).spawn();
      const w = child.stdin.getWriter();
      await w.write(new TextEncoder().encode("return\n"));
      await w.close();
      const r = await child.output();
      if (r.code !== 0) {
        const tail = new TextDecoder().decode(r.stderr).trim().split("\n").slice(-2).join(" / ");
        return `the warm-up run exited ${r.code}${tail ? `: ${tail}` : ""}`;
      }
    }
    // Deno leaves a cached form whose source hash still matches as it was (a fresh clone of the
    // same sources): dated now, it reads as warm until the source changes again
    const now = new Date();
    try {
      Deno.utimeSync(probe.cached, now, now);
    } catch (e) {
      return `the warm-up run left no cached form of ${PROBE_MODULE} (${(e as Error).message})`;
    }
    return undefined;
  } catch (e) {
    return (e as Error).message;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => undefined);
  }
}
