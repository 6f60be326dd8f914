/**
 * Generates the Lua API reference's files from `src/docs/lua_api/`: `docs/lua-api.md`,
 * `docs/architecture/mcp-support.md` (the MCP capability matrix) and the LuaCATS annotation files
 * `docs/types/*.lua` (the very files `agent-block types` writes into a
 * project's `.agent-block/types/`).
 *
 * Usage: `deno task gen` writes them; `--check` (in `deno task check`) exits 1 naming every file
 * that is stale, missing, or left over from an earlier layout.
 */
import { join } from "node:path";
import { LUA_API } from "../src/docs/lua_api/mod.ts";
import { renderMarkdown } from "../src/docs/render_markdown.ts";
import { renderLuaCats } from "../src/docs/render_luacats.ts";
import { renderMcpSupport } from "../src/docs/render_mcp_support.ts";

const docs = decodeURIComponent(new URL("../docs/", import.meta.url).pathname);

/** Every generated file, by path relative to `docs/`. */
export function generated(): Map<string, string> {
  const out = new Map<string, string>([
    ["lua-api.md", renderMarkdown(LUA_API)],
    ["architecture/mcp-support.md", renderMcpSupport(LUA_API)],
  ]);
  for (const [name, text] of renderLuaCats(LUA_API)) out.set(`types/${name}`, text);
  return out;
}

function read(path: string): string | undefined {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
}

function existingTypes(): string[] {
  try {
    return [...Deno.readDirSync(join(docs, "types"))].filter((e) => e.name.endsWith(".lua")).map((e) =>
      `types/${e.name}`
    );
  } catch {
    return [];
  }
}

if (import.meta.main) {
  const files = generated();
  const extra = existingTypes().filter((f) => !files.has(f));
  if (Deno.args.includes("--check")) {
    const stale = [...files].filter(([f, text]) => read(join(docs, f)) !== text).map(([f]) => f);
    if (stale.length || extra.length) {
      for (const f of stale) console.error(`docs/${f} is stale: run \`deno task gen\``);
      for (const f of extra) console.error(`docs/${f} is no longer generated: run \`deno task gen\``);
      Deno.exit(1);
    }
  } else {
    Deno.mkdirSync(join(docs, "types"), { recursive: true });
    Deno.mkdirSync(join(docs, "architecture"), { recursive: true });
    for (const [f, text] of files) Deno.writeTextFileSync(join(docs, f), text);
    for (const f of extra) Deno.removeSync(join(docs, f));
  }
}
