/**
 * Generates the precompiled bytecode tables (see `src/lua/precompiled.ts` for why and for the
 * freshness rule), compiled by the same wasmoon Lua the runtime uses:
 * - `src/lua/precompiled.gen.json`: every `src/**\/*.lua` chunk under the chunk name
 *   `=ab:<file name without .lua>` (the name `engine.exec` is given for it);
 * - `embedded/precompiled.gen.json`: every embedded library file (the files of
 *   `embedded/index.gen.ts`) under the chunk name `require` loads it with, `@embedded/<path>`.
 * Each entry holds the exact text it was compiled from, which the runtime compares with the text
 * it loads. The tables are JSON, imported as text and parsed on first use
 * (`src/lua/precompiled.ts`): a run that requires no embedded module then pays only for reading
 * the library's table, not for compiling ~400 KB of JavaScript string literals (as a TypeScript
 * module it also had a transpiled copy with an inline source map to read and hash per start).
 * One entry per line, so a regenerated table diffs by chunk.
 *
 * Usage: part of `deno task gen`; `--check` exits 1 when a file on disk is stale.
 */
import { basename, join, relative } from "node:path";
import { sharedFactory } from "../src/lua/wasm.ts";
import { embeddedChunkName } from "../src/modules/embedded_chunk.ts";
import { rootPath as embeddedRoot, walk as embeddedFiles } from "./gen_embedded_index.ts";

const repoRoot = decodeURIComponent(new URL("../", import.meta.url).pathname);
const srcRoot = join(repoRoot, "src");
/** Where the runtime's table lives. */
export const TARGET: string = join(srcRoot, "lua", "precompiled.gen.json");
/** Where the embedded library's table lives. */
export const EMBEDDED_TARGET: string = join(embeddedRoot, "precompiled.gen.json");

/** Every `.lua` file under `src/`, sorted. */
export function luaSources(dir: string = srcRoot): string[] {
  const out: string[] = [];
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name < b.name ? -1 : 1)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...luaSources(p));
    else if (e.isFile && e.name.endsWith(".lua")) out.push(p);
  }
  return out;
}

/**
 * The files whose chunk name (`=ab:<file name>`) no other file shares. Two `init.lua`s, say,
 * cannot both be keyed by name: they get no bytecode and are parsed from text (correct, slower).
 */
export function uniquelyNamed(files: string[]): string[] {
  const count = new Map<string, number>();
  for (const f of files) count.set(basename(f), (count.get(basename(f)) ?? 0) + 1);
  return files.filter((f) => count.get(basename(f)) === 1);
}

/** Bytecode (unstripped) of `source` loaded as `chunkname`. */
async function dump(source: string, chunkname: string): Promise<Uint8Array> {
  const { factory } = await sharedFactory();
  const lua = await factory.createEngine({ injectObjects: false, enableProxy: false });
  try {
    lua.global.set("SRC", source);
    lua.global.set("NAME", chunkname);
    const hex = lua.doStringSync(`
      local f = assert(load(SRC, NAME, "t"))
      local s = string.dump(f, false)
      return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
    `) as string;
    const out = new Uint8Array(hex.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
    return out;
  } finally {
    lua.global.close();
  }
}

function toBase64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
  return btoa(bin);
}

/** One chunk to compile: its chunk name and source file (absolute). */
interface Chunk {
  chunkname: string;
  file: string;
}

async function renderTable(chunks: Chunk[]): Promise<string> {
  const lines: string[] = [];
  for (const { chunkname, file } of chunks) {
    const text = Deno.readTextFileSync(file);
    const entry = { file: relative(repoRoot, file), text, bytecode: toBase64(await dump(text, chunkname)) };
    lines.push(`${JSON.stringify(chunkname)}: ${JSON.stringify(entry)}`);
  }
  return `{\n${lines.join(",\n")}\n}\n`;
}

/** Renders the runtime's table for the given source files. */
export function render(files: string[] = luaSources()): Promise<string> {
  const chunks = uniquelyNamed(files).map((file) => ({ chunkname: `=ab:${basename(file, ".lua")}`, file }));
  return renderTable(chunks);
}

/** Renders the embedded library's table for the given paths relative to `embedded/`. */
export function renderEmbedded(files: string[] = embeddedFiles()): Promise<string> {
  const chunks = files.map((f) => ({ chunkname: embeddedChunkName(f), file: join(embeddedRoot, f) }));
  return renderTable(chunks);
}

if (import.meta.main) {
  const check = Deno.args.includes("--check");
  let stale = false;
  for (const [target, text] of [[TARGET, await render()], [EMBEDDED_TARGET, await renderEmbedded()]]) {
    if (!check) {
      Deno.writeTextFileSync(target, text);
      continue;
    }
    let current = "";
    try {
      current = Deno.readTextFileSync(target);
    } catch { /* missing counts as stale */ }
    if (current !== text) {
      console.error(`${relative(repoRoot, target)} is stale: run \`deno task gen\``);
      stale = true;
    }
  }
  if (stale) Deno.exit(1);
}
