/**
 * The stores as one host module: `std.kv`, `std.sql`, `std.ts` and their model-facing tools.
 *
 * Owns the installation order: the three TypeScript modules first, then `stores.lua`, which
 * builds `register_tools` on top of them and of `tool.register`.
 */
import type { LuaEngine } from "../../lua/engine.ts";
import type { RunContext } from "../context.ts";
import { installKv } from "./kv.ts";
import { installSql } from "./sql.ts";
import { installTs } from "./ts.ts";
import storesSource from "./stores.lua" with { type: "text" };

/** Host module for `std.kv`, `std.sql` and `std.ts`. */
export function installStores(engine: LuaEngine, run: RunContext): void {
  installKv(engine, run);
  installSql(engine, run);
  installTs(engine, run);
  engine.exec(storesSource, "=ab:stores");
}
