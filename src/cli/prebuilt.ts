/**
 * The prebuilt run path: a committed bundle of the CLI (`bundle/cli/`, made by `deno task gen`)
 * that `cli.ts` loads instead of the TypeScript sources, but only when it provably matches them.
 *
 * Why it exists: `deno run` from source builds a module graph of ~110 local files on every start
 * (read, dependency analysis, emit-cache and code-cache lookups per file); one run of a block
 * spent about as long on that as wasmoon takes to compile its wasm. The bundle is the same code
 * in a few JavaScript chunks (esbuild through `deno bundle --code-splitting`; npm packages stay
 * external and resolve through deno.json as before; the subcommands and lazily loaded SDK
 * adapters stay separate chunks loaded on first use).
 *
 * Invariant: a stale bundle never runs. `bundle/cli/manifest.json` lists every local file the
 * bundle was built from (the `deno info` graph of `src/cli/main.ts`: TypeScript, Lua and other
 * text imports) plus `deno.json` (its import map decides what the bundle leaves external), and
 * the SHA-256 of their contents. npm packages are not in the bundle: they resolve at run time
 * through deno.json and deno.lock exactly as from source. The files are read before anything of
 * the bundle runs; their digest is computed while the bundle's entry module loads, and a mismatch
 * discards that module unused. `cli.ts`
 * re-hashes those files before choosing the bundle (about 1 ms: the reads and the digest run off
 * the main thread while the wasm compile starts); any difference — an edited, missing or
 * unreadable file, a malformed manifest — silently selects the sources, which is always correct,
 * only slower. A file added to the graph is caught too, since the file that imports it changed.
 * `deno task check` and a test fail when the committed bundle is not what the sources build to.
 *
 * Choosing the bundle also marks the process (`src/lua/prebuilt_flag.ts`): the runtime's Lua
 * bytecode, generated into the bundle beside the texts it was compiled from, then needs no
 * re-hashing. `tools/gen_bundle.ts` refuses to build while `src/lua/precompiled.gen.ts` or
 * `embedded/index.gen.ts` is stale, so the two are consistent in every bundle.
 *
 * A `deno compile`d binary never uses it: `bundle/` is not among the compiled files, so the
 * manifest cannot be read there and the sources (embedded in the binary) run.
 */

import { markPrebuiltVerified } from "../lua/prebuilt_flag.ts";

/** The manifest written beside the bundle's chunks. */
export interface PrebuiltManifest {
  /** The chunk to import, relative to the manifest: the bundled `src/cli/main.ts`. */
  entry: string;
  /** Source files the bundle was built from, relative to the repository root, sorted. */
  sources: string[];
  /** Hex SHA-256 of those files (see `hashSources`). */
  sha256: string;
}

/** Name of the manifest inside the bundle directory. */
export const MANIFEST_NAME = "manifest.json";

/** Reads `files` (paths relative to `root`) into one buffer: per file its path, a NUL, its byte
 * length, a NUL and its bytes, so that moving bytes between files changes the digest. Throws when
 * a file cannot be read. Synchronous: a hundred small async reads cost several times more. */
function readSources(root: URL, files: readonly string[]): Uint8Array<ArrayBuffer> {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (const f of files) {
    const content = Deno.readFileSync(new URL(f, root));
    const head = enc.encode(`${f}\0${content.length}\0`);
    parts.push(head, content);
    size += head.length + content.length;
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return all;
}

async function sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Hex SHA-256 of `files` under `root` (the manifest's `sha256`); rejects when one is unreadable. */
export function hashSources(root: URL, files: readonly string[]): Promise<string> {
  return sha256Hex(readSources(root, files));
}

/**
 * The bundle's entry module when the bundle in `dir` matches the sources under `root`, else
 * undefined (no bundle, unreadable or malformed manifest, any source changed or missing, an entry
 * that does not load). The digest runs off the main thread while the entry module loads; a stale
 * bundle's module is loaded for nothing then, and never used.
 */
export async function loadPrebuilt<T>(dir: URL, root: URL): Promise<T | undefined> {
  let manifest: PrebuiltManifest;
  let sources: Uint8Array<ArrayBuffer>;
  try {
    manifest = JSON.parse(Deno.readTextFileSync(new URL(MANIFEST_NAME, dir)));
    if (
      typeof manifest?.entry !== "string" || !Array.isArray(manifest.sources) ||
      typeof manifest.sha256 !== "string"
    ) return undefined;
    sources = readSources(root, manifest.sources);
  } catch {
    return undefined;
  }
  const [digest, entry] = await Promise.all([
    sha256Hex(sources),
    import(new URL(manifest.entry, dir).href).catch(() => undefined) as Promise<T | undefined>,
  ]);
  if (digest !== manifest.sha256 || entry === undefined) return undefined;
  markPrebuiltVerified();
  return entry;
}
