/**
 * The `agent-block` command. Thin by design: everything lives in `src/cli/`.
 *
 * One start-up measure lives here: Lua's wasm module starts compiling (`preloadLua`, on V8's
 * background threads) before the CLI is loaded, so that loading the CLI's ~110 modules overlaps
 * the compile. That is why `src/cli/main.ts` is imported dynamically rather than statically:
 * `deno run` reads and prepares a static import's whole module graph before any code of this file
 * runs, which would put the compile after it (bench/startup_bench.ts measures the difference). As
 * a dynamic import it is a compile root in deno.json's `compile.include`, so `deno compile` embeds
 * it (deno.json's `lazy-dynamic-imports` keeps `deno run` from reading it up front).
 *
 * A sandboxed run is handed to the launcher even before that (`src/cli/sandbox_launch.ts`), so the
 * launcher's own start loads neither wasmoon nor the runtime: that is why `src/lua/wasm.ts` is a
 * dynamic import too (a static one is loaded and evaluated before the check; wasmoon's evaluation
 * was ~30 ms of every sandboxed start). Measured on the plain path: the same median as the static
 * import (30 interleaved runs, December 2026), and a compile root in `compile.include` like main.ts.
 * The sandbox's network proxy (`--sandbox-stage=proxy`) is dispatched first of all, for the same
 * reason: it loads only its own few modules.
 * @module
 */
// A run that names --sandbox (or whose environment sets AGENT_BLOCK_SANDBOX) goes to the sandbox
// launcher before the runtime and Lua are loaded: it re-executes the process confined, or falls
// through to the ordinary path, which decides again (src/cli/sandbox_launch.ts).
const first = Deno.args[0];
// The sandbox's network proxy (`--sandbox-net allow-list`), started by the launcher outside the
// run's network namespace: nothing else of the CLI is loaded (src/cli/proxy_stage.ts).
if (first === "--sandbox-stage=proxy") {
  Deno.exit(await (await import("./src/cli/proxy_stage.ts")).runProxyStage());
}
if (
  first?.startsWith("-") && !first.startsWith("--sandbox-stage=") &&
  (Deno.args.includes("--sandbox") || Deno.env.get("AGENT_BLOCK_SANDBOX"))
) {
  await (await import("./src/cli/sandbox_launch.ts")).launchEarly(Deno.args);
}
void import("./src/lua/wasm.ts").then((m) => m.preloadLua());
const { main } = await import("./src/cli/main.ts");
Deno.exit(await main(Deno.args));
