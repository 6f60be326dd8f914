/**
 * `std.env.*` (except `project_root`, which is core): the run's environment.
 *
 * Owns get/get_or/set/home/agent_id over the run's `RunEnv` (`run.env`):
 * - `get` reads the run's environment: what the edge resolved (for the CLI, the process
 *   environment with the project's `.env` layered in) plus what this run set.
 * - `set(name, value)` sets the variable **for this run and every child it starts from then on**
 *   (`sh.exec`, `io.popen`, MCP servers); `os.getenv` agrees with it. `set(name, nil)` unsets it.
 *   The process environment is never written, so another run in the same process, and the
 *   process itself, see none of it. Credential stripping still applies to children: setting
 *   `ANTHROPIC_API_KEY` does not hand it to a command.
 * - `home()` is the user's home directory from the run's `HOME` (else `USERPROFILE`, else the
 *   run's working directory).
 * - `agent_id()` is the run's `AGENT_BLOCK_AGENT_ID` when set, else an id minted once per process
 *   (`ab-<pid>-<random>`), stable for every run in the process.
 */
import type { LuaEngine } from "../lua/engine.ts";
import type { Args } from "../lua/args.ts";
import type { RunContext } from "./context.ts";
import { envValue, type EnvView, userHome } from "../home.ts";
import { LuaMulti } from "../json/values.ts";
import { correlationVariable } from "../correlation.ts";

const PROCESS_AGENT_ID = `ab-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;

/**
 * The agent id of a run with environment `env`: its agent-id variable (`AGENT_BLOCK_AGENT_ID`,
 * named by `src/correlation.ts`), else this process's. Read live: it is the block's own variable
 * (`std.env.set` changes it, and the run's children inherit it), not a setting of the run.
 */
export function agentId(env: EnvView): string {
  const v = envValue(env, correlationVariable("agentId"));
  return v && v.trim() ? v : PROCESS_AGENT_ID;
}

const NAME = /^[^=\0]+$/;

/** Installs `std.env.*`. */
export function installEnv(engine: LuaEngine, run: RunContext): void {
  const env = run.env;
  const name = (a: Args) => {
    const n = a.string(1, "name");
    if (!NAME.test(n)) a.fail(1, "name", "a variable name (non-empty, no '=' or NUL)", `'${n}'`);
    return n;
  };
  engine.define("std.env.get", { sync: (a) => new LuaMulti([env.get(name(a))]) });
  engine.define("std.env.get_or", {
    sync: (a) => {
      const v = env.get(name(a));
      if (v !== undefined) return v;
      if (a.at(2) === undefined) a.fail(2, "default", "a value");
      return a.at(2);
    },
  });
  engine.define("std.env.set", {
    sync: (a) => {
      const n = name(a);
      if (a.at(2) === undefined) {
        env.set(n, undefined);
        return;
      }
      const v = a.string(2, "value");
      if (v.includes("\0")) a.fail(2, "value", "a string without NUL bytes", "a string with a NUL byte");
      env.set(n, v);
    },
  });
  engine.define("std.env.home", { sync: () => userHome(env, run.cwd) });
  engine.define("std.env.agent_id", { sync: () => agentId(env) });
}
