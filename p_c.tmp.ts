import { preloadLua, sharedFactory } from "./src/lua/wasm.ts";
preloadLua();
const { main } = await import("./src/cli/main.ts");
await sharedFactory();
if (!main) throw 1;
