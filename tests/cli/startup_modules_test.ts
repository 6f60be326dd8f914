/**
 * What a plain run loads at start: the run path's lazily imported modules stay unloaded.
 *
 * Every module that is imported only dynamically, to be loaded when a run needs it, is a compile
 * root in deno.json's `compile.include` (tests/compile_test.ts holds that). Of those, a plain run
 * (`-s hello.lua`, and `-b hello_agent`: a replayed agent conversation with its kernel database)
 * loads only the two that `cli.ts` itself imports for every run (`src/cli/main.ts`,
 * `src/lua/wasm.ts`); and of the npm packages only wasmoon (not the MCP SDK, OpenTelemetry,
 * smol-toml, yaml, NATS, A2A): start-up is mostly loading modules (bench/startup_bench.ts), so a
 * static import that pulls one of them onto the run path fails here, naming it. Real subprocesses;
 * what was loaded is read from V8's coverage of the run (`loadedModules`).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { loadedModules, REPO_ROOT, tempDir } from "../helpers.ts";

/** The compile roots every run loads: `cli.ts` imports them dynamically itself. */
const EVERY_RUN = ["./src/cli/main.ts", "./src/lua/wasm.ts"];

const config = JSON.parse(Deno.readTextFileSync(join(REPO_ROOT, "deno.json"))) as {
  compile: { include: string[] };
};

/** Of `loaded`, the compile roots (relative as deno.json names them) and the npm packages. */
function lazyAndNpm(loaded: string[]): { roots: string[]; npm: string[] } {
  const roots = config.compile.include.filter((p) => loaded.includes(pathToFileURL(join(REPO_ROOT, p)).href));
  const npm = [
    ...new Set(
      loaded.filter((u) => u.includes("/node_modules/.deno/")).map((u) =>
        u.split("/node_modules/.deno/")[1].split("/")[0]
      ),
    ),
  ];
  return { roots, npm };
}

Deno.test("a plain -s run loads no lazily imported module but main.ts and wasm.ts, and of npm only wasmoon", async () => {
  const dir = await tempDir();
  Deno.writeTextFileSync(join(dir, "hello.lua"), 'print("hello")\n');
  const got = lazyAndNpm(await loadedModules(["-s", "hello.lua"], { cwd: dir }));
  assert.deepEqual(got, { roots: EVERY_RUN, npm: ["wasmoon@1.16.0"] });
});

Deno.test("-b hello_agent (replayed model, kernel database) loads no lazily imported module but main.ts and wasm.ts", async () => {
  const dir = await tempDir();
  const got = lazyAndNpm(
    await loadedModules(["-b", "hello_agent", "-p", REPO_ROOT], {
      cwd: dir,
      env: { AGENT_BLOCK_KNL_PATH: join(dir, "knl.sqlite"), AGENT_BLOCK_HOME: join(dir, "home") },
    }),
  );
  assert.deepEqual(got, { roots: EVERY_RUN, npm: ["wasmoon@1.16.0"] });
});
