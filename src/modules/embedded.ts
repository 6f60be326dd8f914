/**
 * The embedded Lua library: which modules the binary carries and which layer each belongs to.
 *
 * Owns the mapping from files under `embedded/` to module names (`x/init.lua` → `x`,
 * `x/y.lua` → `x.y`, `x.lua` → `x`) and the four layers of the seed README:
 * - sealed (kernel and declaration: `knl`, `knl_adapter`, `knl_types`, `lshape`): a filesystem
 *   copy fails the run;
 * - packs (`policy`, `supervisor`): values handed to the kernel, vendored only with a warning;
 * - consumers (`agent`, `coding`) and utilities (everything else): shadowing and vendoring work.
 *
 * Also owns how an embedded module is loaded: from its precompiled bytecode
 * (`embedded/precompiled.gen.json`, by `deno task gen`) when that was generated from exactly the
 * text embedded now, else from the text (`embeddedBytecode`; `src/lua/precompiled.ts` says why the
 * comparison makes a stale entry harmless). Both are loaded under one chunk name,
 * `@embedded/<path>`, so messages and tracebacks read the same either way.
 */
import { EMBEDDED_FILES } from "../../embedded/index.gen.ts";
import embeddedTable from "../../embedded/precompiled.gen.json" with { type: "text" };
import { bytecodeOf, lazyTable, type PrecompiledTable } from "../lua/precompiled.ts";
import { embeddedChunkName } from "./embedded_chunk.ts";

export { embeddedChunkName };

/** The library's bytecode table, parsed on the first lookup. */
export const embeddedPrecompiled: () => PrecompiledTable = lazyTable(embeddedTable);

/** Roots whose filesystem copies are refused. */
export const SEALED_ROOTS: ReadonlySet<string> = new Set(["knl", "knl_adapter", "knl_types", "lshape"]);
/** Roots that are shell packs. */
export const PACK_ROOTS: ReadonlySet<string> = new Set(["policy", "supervisor"]);

/** One embedded module. */
export interface EmbeddedModule {
  /** Module name as `require` spells it. */
  name: string;
  /** Path relative to `embedded/`. */
  path: string;
  source: string;
}

/**
 * The precompiled bytecode of `m` (load it with mode "b" under `embeddedChunkName(m.path)`), or
 * undefined when there is none for its current text: then its text is loaded. Kept for the process.
 */
export function embeddedBytecode(m: EmbeddedModule): Uint8Array | undefined {
  return bytecodeOf(embeddedPrecompiled(), embeddedChunkName(m.path), m.source);
}

/** The module name of an embedded file path, or undefined for files that are not modules. */
export function moduleNameOf(path: string): string | undefined {
  if (!path.endsWith(".lua")) return undefined;
  const parts = path.slice(0, -4).split("/");
  if (parts[parts.length - 1] === "init") parts.pop();
  if (parts.length === 0) return undefined;
  return parts.join(".");
}

let cache: Map<string, EmbeddedModule> | undefined;

/** Every embedded module by name. */
export function embeddedModules(): ReadonlyMap<string, EmbeddedModule> {
  if (!cache) {
    cache = new Map();
    for (const [path, source] of Object.entries(EMBEDDED_FILES)) {
      const name = moduleNameOf(path);
      if (name) cache.set(name, { name, path, source });
    }
  }
  return cache;
}

/** The root of a dotted module name (`lshape.t` → `lshape`). */
export function rootOf(name: string): string {
  return name.split(".")[0];
}

/** The layer of a module root. */
export function layerOf(root: string): "sealed" | "pack" | "lib" {
  if (SEALED_ROOTS.has(root)) return "sealed";
  if (PACK_ROOTS.has(root)) return "pack";
  return "lib";
}
