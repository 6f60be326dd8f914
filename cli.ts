/**
 * The `agent-block` command. Thin by design: everything lives in `src/cli/main.ts`.
 *
 * One start-up measure lives here: Lua's wasm module starts compiling (`preloadLua`, on V8's
 * background threads) before the rest of the CLI is loaded, so that loading the runtime's
 * modules overlaps the compile instead of preceding it. `main.ts` is therefore imported
 * dynamically (a compile root in deno.json's `compile.include`, so `deno compile` embeds it).
 * @module
 */
import { preloadLua } from "./src/lua/wasm.ts";

preloadLua();
const { main } = await import("./src/cli/main.ts");
Deno.exit(await main(Deno.args));
