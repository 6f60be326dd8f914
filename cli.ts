/**
 * The `agent-block` command. Thin by design: everything lives in `src/cli/`.
 *
 * Two start-up measures live here. Lua's wasm module starts compiling (`preloadLua`, on V8's
 * background threads) before anything else is loaded, so that loading the CLI overlaps the
 * compile. And the CLI is loaded from the prebuilt bundle when it provably matches the sources,
 * else from the sources (`src/cli/prebuilt.ts` says why and how that is decided). Both paths end
 * at `main` of `src/cli/main.ts`, which is therefore imported dynamically: it is a compile root in
 * deno.json's `compile.include`, so `deno compile` embeds it (a compiled binary runs the sources).
 * @module
 */
import { preloadLua } from "./src/lua/wasm.ts";
import { loadPrebuilt } from "./src/cli/prebuilt.ts";

preloadLua();
type Main = typeof import("./src/cli/main.ts");
const { main } =
  await loadPrebuilt<Main>(new URL("./bundle/cli/", import.meta.url), new URL("./", import.meta.url)) ??
    await import("./src/cli/main.ts");
Deno.exit(await main(Deno.args));
