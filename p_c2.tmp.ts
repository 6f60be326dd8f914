import { preloadLua, sharedFactory } from "./src/lua/wasm.ts";
preloadLua();
const { runBlock } = await import("./src/runtime/run.ts");
await sharedFactory();
if (!runBlock) throw 1;
