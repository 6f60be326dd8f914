/**
 * The wasmoon module of this process: one `LuaFactory` (one wasm instance), loaded from the
 * installed package by explicit path and never fetched.
 *
 * Owns: locating `glue.wasm`, creating the shared factory lazily, and the build's Lua version
 * (`LUA_VERSION`). wasmoon looks for its wasm
 * beside its own script in Node-like hosts but tries a CDN in Workers, so the path is always
 * given. `deno compile` carries the npm package, so the same resolution works in a binary.
 * Also owns one speed measure: the npm build asserts on every exported C call, so once the
 * module is up its `_lua*` entries are pointed at the raw wasm exports (`bypassAssertions`).
 */
import { LuaFactory } from "wasmoon";
import { fileURLToPath } from "node:url";
import { LuaApi } from "./capi.ts";
import type { EmModule } from "./capi.ts";

/**
 * Lua's `_VERSION` in the wasmoon build this module loads (wasmoon 1.16.0: Lua 5.4), as
 * `agent-block --version` prints it without starting an engine. tests/cli/run_command_test.ts
 * holds it to what a real engine answers.
 */
export const LUA_VERSION = "Lua 5.4";

/** The process's factory, created on first use (one wasm instance per loaded copy of this module). */
let shared: Promise<{ factory: LuaFactory; api: LuaApi }> | undefined;

/** Absolute path of wasmoon's `glue.wasm` inside the installed npm package. */
export function glueWasmPath(): string {
  return fileURLToPath(import.meta.resolve("wasmoon/dist/glue.wasm"));
}

/** The process-wide factory and the raw API of its wasm module. */
export function sharedFactory(): Promise<{ factory: LuaFactory; api: LuaApi }> {
  return shared ??= (async () => {
    const f = new LuaFactory(glueWasmPath());
    const { value: wasm, exports } = await captureExports(() => f.getLuaModule());
    const module = wasm.module as unknown as EmModule;
    if (exports) bypassAssertions(module, exports);
    return { factory: f, api: new LuaApi(module) };
  })();
}

/**
 * Starts loading the wasm module without waiting for it, so that a caller with other start-up
 * work (flag parsing, `.env`, block lookup) overlaps it with the wasm compile. A failure is not
 * lost: the next `sharedFactory()` returns the same rejected promise.
 */
export function preloadLua(): void {
  sharedFactory().catch(() => undefined);
}

/**
 * Runs `load` while watching `WebAssembly.instantiate`, and answers the exports of the instance
 * it created (undefined if it could not be seen: the wrappers then stay in place).
 */
async function captureExports<T>(
  load: () => Promise<T>,
): Promise<{ value: T; exports: WebAssembly.Exports | undefined }> {
  const original = WebAssembly.instantiate;
  let exports: WebAssembly.Exports | undefined;
  // deno-lint-ignore no-explicit-any
  (WebAssembly as any).instantiate = async (...args: Parameters<typeof WebAssembly.instantiate>) => {
    // deno-lint-ignore no-explicit-any
    const r: any = await (original as any).apply(WebAssembly, args);
    exports ??= (r.instance ?? r).exports;
    return r;
  };
  try {
    const value = await load();
    return { value, exports };
  } finally {
    WebAssembly.instantiate = original;
  }
}

/**
 * wasmoon's build wraps every exported C function in an assertion that formats two messages
 * per call (`native function ... called before runtime initialization`); on the host-call path
 * that is a measurable share of each call. Once the runtime is up the assertion cannot fire, so
 * the `_lua*` entries of the module are pointed at the raw wasm exports.
 */
function bypassAssertions(module: EmModule, exports: WebAssembly.Exports): void {
  // Only if the captured instance is this module's (same linear memory): anything else that
  // instantiated wasm meanwhile must not be mistaken for it.
  const memory = Object.values(exports).find((v) => v instanceof WebAssembly.Memory) as
    | WebAssembly.Memory
    | undefined;
  if (!memory || memory.buffer !== module.HEAPU8.buffer) return;
  for (const key of Object.keys(module)) {
    if (!key.startsWith("_lua")) continue;
    const raw = exports[key.slice(1)];
    if (typeof raw === "function") module[key] = raw;
  }
}
