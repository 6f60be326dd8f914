import { LuaFactory } from "wasmoon";
import { fileURLToPath } from "node:url";
const f = new LuaFactory(fileURLToPath(import.meta.resolve("wasmoon/dist/glue.wasm")));
const lua = await f.createEngine({ injectObjects: false, enableProxy: false });
lua.global.set("print", (s: string) => console.log(s));
await lua.doString('print("x")');
lua.global.close();
