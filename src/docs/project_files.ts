/**
 * What `agent-block types` writes into a project: the LuaCATS annotation files under
 * `.agent-block/types/`, a `.luarc.json` and a `.luacheckrc` at the project root — all rendered
 * from the one reference (`lua_api/`), so they say what `docs/lua-api.md` says.
 */
import { LUA_API } from "./lua_api/mod.ts";
import type { Section } from "./lua_api/types.ts";
import { renderLuaCats } from "./render_luacats.ts";
import { renderLuacheckrc, renderLuarc, TYPES_DIR } from "./render_editor.ts";

export { TYPES_DIR };

/** The files, by path relative to the project root (`/`-separated), in writing order. */
export function projectFiles(sections: readonly Section[] = LUA_API): Map<string, string> {
  const out = new Map<string, string>();
  for (const [name, text] of renderLuaCats(sections)) out.set(`${TYPES_DIR}/${name}`, text);
  out.set(".luarc.json", renderLuarc(sections));
  out.set(".luacheckrc", renderLuacheckrc(sections));
  return out;
}
