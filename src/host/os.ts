/**
 * Host side of Lua's `os` library: the real environment, filesystem and processes.
 *
 * Owns `os.getenv` (the RUN's environment: what the edge resolved, `.env` values included, plus
 * what `std.env.set` changed), `os.remove`, `os.rename`, `os.tmpname` (in the run's `TMPDIR`,
 * else the system's) on the real filesystem, `os.execute` as a process group of the run (in the
 * run's working directory), and `read_source` for `loadfile`/`dofile`. Relative paths resolve
 * against the run's working directory (`run.resolve`); messages name the path as given.
 * `os.exit` is the runtime's (it ends the run after cleanup); wasmoon's own would set the process
 * exit code behind everyone's back.
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
    // One result, nil when unset, as Lua's own: `tostring(os.getenv("UNSET"))` is "nil".
    sync: (a) => new LuaMulti([run.env.get(a.string(1, "name"))]),
  });

  engine.define("@os_remove", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        Deno.removeSync(run.resolve(path));
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
        Deno.renameSync(run.resolve(from), run.resolve(a.string(2, "newname")));
        return true;
      } catch (e) {
        return failure(from, e);
      }
    },
  });

  engine.define("@os_tmpname", {
    sync: () => {
      const tmp = run.env.nonEmpty("TMPDIR");
      return Deno.makeTempFileSync({ prefix: "lua_", dir: tmp !== undefined ? run.resolve(tmp) : undefined });
    },
  });

  engine.define("@read_source", {
    sync: (a) => {
      const path = a.string(1, "path");
      try {
        return Deno.readFileSync(run.resolve(path));
      } catch (e) {
        return new LuaMulti([undefined, `cannot open ${path}: ${osError(e).message}`]);
      }
    },
  });

  engine.defineOp("os.execute", {
    async: async (a) => {
      const proc = run.procs.spawn({
        cmd: ["/bin/sh", "-c", a.string(1, "command")],
        cwd: run.cwd,
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      });
      return exitTriple(await proc.status);
    },
  });
}
