/**
 * The wasmoon module of this process: one `LuaFactory` (one wasm instance), loaded from the
 * installed package by explicit path and never fetched.
 *
 * Owns: locating `glue.wasm` and creating the shared factory lazily. wasmoon looks for its wasm
 * beside its own script in Node-like hosts but tries a CDN in Workers, so the path is always
 * given. `deno compile` carries the npm package, so the same resolution works in a binary.
 */
import { LuaFactory } from "wasmoon";
import { fileURLToPath } from "node:url";
import { LuaApi } from "./capi.ts";
import type { EmModule } from "./capi.ts";

let factory: Promise<{ factory: LuaFactory; api: LuaApi }> | undefined;

/** Absolute path of wasmoon's `glue.wasm` inside the installed npm package. */
export function glueWasmPath(): string {
  return fileURLToPath(import.meta.resolve("wasmoon/dist/glue.wasm"));
}

/** The process-wide factory and the raw API of its wasm module. */
export function sharedFactory(): Promise<{ factory: LuaFactory; api: LuaApi }> {
  factory ??= (async () => {
    const f = new LuaFactory(glueWasmPath());
    const wasm = await f.getLuaModule();
    return { factory: f, api: new LuaApi(wasm.module as unknown as EmModule) };
  })();
  return factory;
}

/**
 * Starts loading the wasm module without waiting for it, so that a caller with other start-up
 * work (flag parsing, `.env`, block lookup) overlaps it with the wasm compile. A failure is not
 * lost: the next `sharedFactory()` returns the same rejected promise.
 */
export function preloadLua(): void {
  sharedFactory().catch(() => undefined);
}
