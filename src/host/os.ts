/**
 * Host side of Lua's `os` library: the real environment, filesystem and processes.
 *
 * Owns `os.getenv` (the process environment, `.env` values included), `os.remove`, `os.rename`,
 * `os.tmpname` on the real filesystem, `os.execute` as a process group of the run, and
 * `read_source` for `loadfile`/`dofile`. `os.exit` is the runtime's (it ends the run after
 * cleanup); wasmoon's own would set the process exit code behind everyone's back.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { LuaMulti } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import { exitTriple } from "./io.ts";
import { osError } from "./os_error.ts";

/** Installs the `os` primitives. */
export function installOs(engine: LuaEngine, run: RunContext): void {
  const failure = (what: string, e: unknown) => {
    const { message, errno } = osError(e);
    return new LuaMulti([undefined, `${what}: ${message}`, errno]);
  };

  engine.define("@getenv", {
    sync: (a) => Deno.env.get(a.string(1, "name")),
  });

  engine.define("@os_remove", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        Deno.removeSync(path);
        return true;
      } catch (e) {
        return failure(path, e);
      }
    },
  });

  engine.define("@os_rename", {
    sync: (a) => {
      const from = a.string(1, "oldname");
      try {
        Deno.renameSync(from, a.string(2, "newname"));
        return true;
      } catch (e) {
        return failure(from, e);
      }
    },
  });

  engine.define("@os_tmpname", {
    sync: () => Deno.makeTempFileSync({ prefix: "lua_" }),
  });

  engine.define("@read_source", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        return Deno.readFileSync(path);
      } catch (e) {
        return new LuaMulti([undefined, `cannot open ${path}: ${osError(e).message}`]);
      }
    },
  });

  engine.defineOp("os.execute", {
    async: async (a) => {
      const proc = run.procs.spawn({
        cmd: ["/bin/sh", "-c", a.string(1, "command")],
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      });
      return exitTriple(await proc.status);
    },
  });
}
