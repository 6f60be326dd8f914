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
 * through deno.json and deno.lock exactly as from source. Before anything of the bundle is used,
 * `loadPrebuilt` proves the sources unchanged, in one of two ways:
 * - by content: it reads them all and compares their digest with the manifest's (the digest runs
 *   off the main thread while the bundle's entry module loads; a mismatch discards that module
 *   unused). Reading and hashing ~110 files costs about 2.5 ms;
 * - by stat stamps: a match proved by content is remembered in `bundle/cli/.verified.json`
 *   (ignored by git) as each source's size, mtime, ctime and inode, and a later start whose
 *   stamps all match needs no reads (about 0.6 ms). `unchangedSince` says why that is sound.
 * Any difference — an edited, missing or unreadable file, a malformed manifest — silently selects
 * the sources, which is always correct, only slower. A file added to the graph is caught too,
 * since the file that imports it changed. `deno task check` and a test fail when the committed
 * bundle is not what the sources build to.
 *
 * Choosing the bundle also marks the process (`src/lua/prebuilt_flag.ts`): the runtime's Lua
 * bytecode, generated into the bundle beside the texts it was compiled from, then needs no
 * re-hashing. `tools/gen_bundle.ts` refuses to build while `src/lua/precompiled.gen.ts` is stale,
 * so the two are consistent in every bundle.
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

/** Name of the local record of the last verification (never committed; see `unchangedSince`). */
export const STAMPS_NAME = ".verified.json";

/** What `STAMPS_NAME` holds: the manifest it verified, when, and each source's stat stamp then. */
interface Stamps {
  sha256: string;
  /** Seconds since the epoch, taken before the sources were looked at. */
  at: number;
  /** Per source, in manifest order: size, mtime (ms), ctime (s), inode. */
  files: number[][];
}

function stampOf(path: URL): number[] {
  const info = Deno.statSync(path);
  const ms = (d: Date | null) => d?.getTime() ?? -1;
  return [info.size, ms(info.mtime), Math.floor(ms(info.ctime) / 1000), info.ino ?? -1];
}

/**
 * True when the record of an earlier verification shows every source unchanged since, by its
 * stat stamp — the way git's index trusts a file: any write changes the ctime, which the kernel
 * sets and a user cannot set back, and a file replaced by another has a new inode. A stamp whose
 * ctime falls in the second of the verification or later proves nothing (a write in that same
 * second would keep it): such a "racy" source sends the check back to the contents.
 */
function unchangedSince(dir: URL, root: URL, manifest: PrebuiltManifest): boolean {
  let rec: Stamps;
  try {
    rec = JSON.parse(Deno.readTextFileSync(new URL(STAMPS_NAME, dir)));
  } catch {
    return false;
  }
  const n = manifest.sources.length;
  if (rec?.sha256 !== manifest.sha256 || typeof rec.at !== "number" || rec.files?.length !== n) return false;
  try {
    for (let i = 0; i < n; i++) {
      const want = rec.files[i];
      if (!Array.isArray(want) || want.length !== 4 || want[2] >= rec.at) return false;
      const got = stampOf(new URL(manifest.sources[i], root));
      if (got[0] !== want[0] || got[1] !== want[1] || got[2] !== want[2] || got[3] !== want[3]) return false;
    }
  } catch {
    return false;
  }
  return true;
}

/** Writes the record of a verification (best effort: a read-only checkout verifies every time). */
function recordStamps(dir: URL, rec: Stamps): void {
  try {
    const tmp = new URL(`${STAMPS_NAME}.${Deno.pid}.tmp`, dir);
    Deno.writeTextFileSync(tmp, JSON.stringify(rec));
    Deno.renameSync(tmp, new URL(STAMPS_NAME, dir));
  } catch { /* not writable: nothing to remember */ }
}

/**
 * The bundle's entry module when the bundle in `dir` matches the sources under `root`, else
 * undefined (no bundle, unreadable or malformed manifest, any source changed or missing, an entry
 * that does not load). Proof comes from the record of an earlier verification when it shows every
 * source unchanged (`unchangedSince`), else from the contents: their digest runs off the main
 * thread while the entry module loads (a stale bundle's module is then loaded for nothing and
 * never used), and a match is recorded with the stamps taken before the contents were read — so a
 * write during the check leaves a stamp that no longer matches.
 */
export async function loadPrebuilt<T>(dir: URL, root: URL): Promise<T | undefined> {
  let manifest: PrebuiltManifest;
  try {
    manifest = JSON.parse(Deno.readTextFileSync(new URL(MANIFEST_NAME, dir)));
    if (
      typeof manifest?.entry !== "string" || !Array.isArray(manifest.sources) ||
      typeof manifest.sha256 !== "string"
    ) return undefined;
  } catch {
    return undefined;
  }
  const load = () =>
    import(new URL(manifest.entry, dir).href).catch(() => undefined) as Promise<T | undefined>;
  if (unchangedSince(dir, root, manifest)) {
    const entry = await load();
    if (entry === undefined) return undefined;
    markPrebuiltVerified();
    return entry;
  }
  let rec: Stamps;
  let sources: Uint8Array<ArrayBuffer>;
  try {
    const at = Math.floor(Date.now() / 1000);
    rec = { sha256: manifest.sha256, at, files: manifest.sources.map((f) => stampOf(new URL(f, root))) };
    sources = readSources(root, manifest.sources);
  } catch {
    return undefined;
  }
  const [digest, entry] = await Promise.all([sha256Hex(sources), load()]);
  if (digest !== manifest.sha256 || entry === undefined) return undefined;
  recordStamps(dir, rec);
  markPrebuiltVerified();
  return entry;
}
