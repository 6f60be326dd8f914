/**
 * Installs `tool.*` (see `tool.lua` for the registry's contract). The registry lives in Lua:
 * handlers are Lua closures and run in the calling task, so there is nothing to marshal.
 */
import type { LuaEngine } from "../lua/engine.ts";
import toolSource from "./tool.lua" with { type: "text" };

/** Host module for `tool.*`. */
export function installTool(engine: LuaEngine): void {
  engine.exec(toolSource, "=ab:tool");
}
