/**
 * `std.env.*` (except `project_root`, which is core): the process environment.
 *
 * Owns get/get_or/set/home/agent_id.
 * - `get` reads the real process environment (the project's `.env` is merged into it by the CLI).
 * - `set(name, value)` sets the variable **for this process and every child it starts from then
 *   on** (`sh.exec`, `io.popen`, MCP servers) — it is `Deno.env.set`, not a Lua-side overlay, so
 *   `os.getenv` agrees with it. `set(name, nil)` unsets it. Credential stripping still applies to
 *   children: setting `ANTHROPIC_API_KEY` does not hand it to a command.
 * - `agent_id()` is `AGENT_BLOCK_AGENT_ID` when set, else an id minted once per process
 *   (`ab-<pid>-<random>`), stable for every run in the process.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { userHome } from "../runtime/paths.ts";
import { LuaMulti } from "../lua/values.ts";

const PROCESS_AGENT_ID = `ab-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;

/** This process's agent id: `AGENT_BLOCK_AGENT_ID`, else one minted at start-up. */
export function agentId(): string {
  const v = Deno.env.get("AGENT_BLOCK_AGENT_ID");
  return v && v.trim() ? v : PROCESS_AGENT_ID;
}

const NAME = /^[^=\0]+$/;

/** Installs `std.env.*`. */
export function installEnv(engine: LuaEngine): void {
  const name = (a: import("../lua/args.ts").Args) => {
    const n = a.string(1, "name");
    if (!NAME.test(n)) a.fail(1, "name", "a variable name (non-empty, no '=' or NUL)", `'${n}'`);
    return n;
  };
  engine.define("std.env.get", { sync: (a) => new LuaMulti([Deno.env.get(name(a))]) });
  engine.define("std.env.get_or", {
    sync: (a) => {
      const v = Deno.env.get(name(a));
      if (v !== undefined) return v;
      if (a.at(2) === undefined) a.fail(2, "default", "a value");
      return a.at(2);
    },
  });
  engine.define("std.env.set", {
    sync: (a) => {
      const n = name(a);
      if (a.at(2) === undefined) {
        Deno.env.delete(n);
        return;
      }
      const v = a.string(2, "value");
      if (v.includes("\0")) a.fail(2, "value", "a string without NUL bytes", "a string with a NUL byte");
      Deno.env.set(n, v);
    },
  });
  engine.define("std.env.home", { sync: () => userHome() });
  engine.define("std.env.agent_id", { sync: () => agentId() });
}
