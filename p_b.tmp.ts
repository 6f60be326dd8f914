import { preloadLua, sharedFactory } from "./src/lua/wasm.ts";
preloadLua();
await sharedFactory();
