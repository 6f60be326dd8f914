/**
 * Precompiled Lua bytecode for the runtime's own chunks (`src/**\/*.lua`: the scheduler, the
 * prelude, host-module Lua), so a run does not parse them.
 *
 * Why: every run is a fresh process, and the first Lua parse in a process runs the parser's
 * wasm cold — parsing the runtime's ~1,000 lines cost several milliseconds of each start, more
 * than loading their bytecode does.
 *
 * Owns the lookup: `precompiled(chunkname, source)` returns the bytecode generated from exactly
 * this source under this chunk name (`=ab:<file name without .lua>`), or undefined. Entries are
 * keyed by a hash of the source text, so an edited chunk is never served stale bytecode: it is
 * parsed from text until `deno task gen` regenerates `precompiled.gen.ts` (a test fails
 * meanwhile). The one exception: when `cli.ts` runs the prebuilt bundle (`src/cli/prebuilt.ts`),
 * the texts and the bytecode are the bundle's own, verified consistent when it was built and
 * unchanged since (that is what choosing the bundle proved), so the hash is not computed again. The engine also falls back to text when the bytecode does not load (another Lua
 * build). Bytecode is dumped unstripped: error positions and tracebacks keep their lines.
 */
import { PRECOMPILED } from "./precompiled.gen.ts";
import { isPrebuiltVerified } from "./prebuilt_flag.ts";

/** 32-bit FNV-1a of a string's UTF-16 code units, as hex: the freshness key of an entry. */
export function sourceHash(source: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < source.length; i++) {
    h ^= source.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0") + ":" + source.length.toString(16);
}

/** `Uint8Array.fromBase64` where the engine has it: native, where a JS byte loop runs cold. */
const nativeFromBase64 = (Uint8Array as unknown as { fromBase64?: (s: string) => Uint8Array }).fromBase64
  ?.bind(Uint8Array);

/** Decodes base64 to bytes. */
function fromBase64(b64: string): Uint8Array {
  if (nativeFromBase64) return nativeFromBase64(b64);
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Lookups already made in this process: a chunk is hashed and decoded once, not per engine. */
const memo = new Map<string, { source: string; bytecode: Uint8Array | undefined }>();

/**
 * The bytecode of `source` compiled as `chunkname`, when it was generated from this very text.
 * The answer is kept for the process (the caller must not modify the bytes): `LuaEngine.create`
 * asks for the scheduler's chunk while the wasm module may still be compiling, so that hashing
 * its ~15,000 characters in cold code does not add to the start-up.
 */
export function precompiled(chunkname: string, source: string): Uint8Array | undefined {
  const known = memo.get(chunkname);
  if (known && known.source === source) return known.bytecode;
  const entry = PRECOMPILED[chunkname];
  const fresh = entry && (isPrebuiltVerified() || entry.hash === sourceHash(source));
  const bytecode = fresh ? fromBase64(entry.bytecode) : undefined;
  memo.set(chunkname, { source, bytecode });
  return bytecode;
}
