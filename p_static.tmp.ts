import { preloadLua } from "./src/lua/wasm.ts";
import { main } from "./src/cli/main.ts";
preloadLua();
Deno.exit(await main(Deno.args));
