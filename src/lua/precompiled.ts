/**
 * Precompiled Lua bytecode: for the runtime's own chunks (`src/**\/*.lua`: the scheduler, the
 * prelude, host-module Lua; table in `precompiled.gen.json`) and for the embedded library
 * (`embedded/**\/*.lua`; table in `embedded/precompiled.gen.json`, used by `src/modules/embedded.ts`),
 * so a run does not parse them.
 *
 * Why: every run is a fresh process, and the first Lua parse in a process runs the parser's
 * wasm cold — parsing the runtime's ~1,000 lines cost several milliseconds of each start, and
 * `require("agent")` parsed ~100 KB of embedded Lua (about 15 ms) — more than loading their
 * bytecode does.
 *
 * Owns the lookup: `bytecodeOf(table, chunkname, source)` returns the bytecode generated from
 * exactly this source under this chunk name, or undefined. Invariant: stale bytecode is never
 * served. Each entry carries the text it was compiled from, and an entry is used only when that
 * text equals, character for character, the source the caller loads (the file as imported now):
 * an edited chunk is parsed from its text until `deno task gen` regenerates the tables (a test and
 * `deno task check` fail meanwhile). The proof is an exact comparison rather than a digest: it
 * costs nothing at start-up (a memory compare, no hashing of ~300 KB of text in every process,
 * which the platform digest does only asynchronously and a JavaScript loop does slowly) and
 * cannot collide. The engine also falls back to text when the bytecode does not load (another
 * Lua build). Bytecode is dumped unstripped: error positions and tracebacks keep their lines.
 */
import runtimeTable from "./precompiled.gen.json" with { type: "text" };

/** One generated entry: the file it came from, the exact text compiled and its bytecode (base64). */
export interface PrecompiledEntry {
  /** Repository-relative path of the source file (for people reading the table). */
  file: string;
  /** The text the bytecode was compiled from. */
  text: string;
  /** `string.dump` of that text loaded under the entry's chunk name, base64. */
  bytecode: string;
}

/** A generated table: entries by chunk name. */
export type PrecompiledTable = Readonly<Record<string, PrecompiledEntry>>;

/**
 * A generated table from its JSON text, indexed on the first call and kept; each entry is parsed
 * the first time it is read. The tables are imported as text (no JavaScript to compile at start),
 * one entry per line (`tools/gen_precompiled.ts` writes them so), and only the chunks a run loads
 * are parsed: a run that never requires an embedded module never parses the library's table, one
 * that requires a few parses those few (parsing the whole ~570 KB library table was ~8 ms of a
 * start). Text not laid out that way is parsed whole.
 */
export function lazyTable(json: string): () => PrecompiledTable {
  let table: PrecompiledTable | undefined;
  return () => table ??= indexTable(json);
}

function indexTable(json: string): PrecompiledTable {
  const lines = json.split("\n");
  if (lines[0] !== "{" || lines.at(-1) !== "" || lines.at(-2) !== "}") return JSON.parse(json);
  const table: Record<string, PrecompiledEntry> = {};
  for (let i = 1; i < lines.length - 2; i++) {
    const line = lines[i];
    const sep = line.indexOf('": ');
    if (!line.startsWith('"') || sep < 0) return JSON.parse(json);
    const name = JSON.parse(line.slice(0, sep + 1)) as string;
    const value = line.slice(sep + 3, line.endsWith(",") ? -1 : undefined);
    Object.defineProperty(table, name, {
      enumerable: true,
      configurable: true,
      get() {
        const entry = JSON.parse(value) as PrecompiledEntry;
        Object.defineProperty(table, name, { value: entry, enumerable: true });
        return entry;
      },
    });
  }
  return table;
}

/** The runtime's table (`precompiled.gen.json`), parsed on the first lookup. */
export const runtimePrecompiled: () => PrecompiledTable = lazyTable(runtimeTable);

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

/** Lookups already made in this process: a chunk is compared and decoded once, not per engine. */
const memo = new Map<string, { source: string; bytecode: Uint8Array | undefined }>();

/**
 * The bytecode of `source` compiled as `chunkname`, when `table` has an entry generated from this
 * very text. The answer is kept for the process (the caller must not modify the bytes). Chunk
 * names are unique across tables (`=ab:…` for the runtime, `@embedded/…` for the library).
 */
export function bytecodeOf(
  table: PrecompiledTable,
  chunkname: string,
  source: string,
): Uint8Array | undefined {
  const known = memo.get(chunkname);
  if (known && known.source === source) return known.bytecode;
  const entry = Object.hasOwn(table, chunkname) ? table[chunkname] : undefined;
  const bytecode = entry && entry.text === source ? fromBase64(entry.bytecode) : undefined;
  memo.set(chunkname, { source, bytecode });
  return bytecode;
}

/** The bytecode of a runtime chunk (`=ab:<file name>`) when generated from this very `source`. */
export function precompiled(chunkname: string, source: string): Uint8Array | undefined {
  return bytecodeOf(runtimePrecompiled(), chunkname, source);
}
