/**
 * `std.path.*`: POSIX path arithmetic, purely lexical.
 *
 * Owns join/basename/dirname/ext/stem/abs/normalize/is_absolute. `join` joins with `/` and
 * normalises, and an absolute part starts the path over (`join("a", "/b", "c")` is `/b/c`, as the
 * original's `Path::join`: joining onto an absolute path gives that path). None of them touches the
 * filesystem: `abs` resolves against the run's working directory without following
 * symlinks (use `std.fs.stat` to learn what is there). `ext` answers the extension without its
 * dot (`"gz"` for `a.tar.gz`, `""` when there is none), `basename`/`dirname` follow POSIX
 * (`dirname("a")` is `"."`, trailing slashes ignored).
 */
import { posix } from "node:path";
import type { LuaEngine } from "../lua/engine.ts";
import type { Args } from "../lua/args.ts";
import type { RunContext } from "./context.ts";

/** Installs `std.path.*`. */
export function installPath(engine: LuaEngine, run: RunContext): void {
  const def = (name: string, fn: (a: Args) => unknown) => engine.define(`std.path.${name}`, { sync: fn });
  def("join", (a) => {
    if (a.length === 0) a.fail(1, "part", "a string");
    let parts: string[] = [];
    for (let i = 1; i <= a.length; i++) {
      const part = a.string(i, "part");
      // An absolute part starts the path over, as the original's path join does.
      if (posix.isAbsolute(part)) parts = [part];
      else parts.push(part);
    }
    return posix.join(...parts);
  });
  def("basename", (a) => posix.basename(a.string(1, "path")));
  def("dirname", (a) => posix.dirname(a.string(1, "path")));
  def("ext", (a) => posix.extname(a.string(1, "path")).replace(/^\./, ""));
  def("stem", (a) => {
    const base = posix.basename(a.string(1, "path"));
    const ext = posix.extname(base);
    return ext ? base.slice(0, -ext.length) : base;
  });
  def("abs", (a) => posix.resolve(run.cwd, a.string(1, "path")));
  def("normalize", (a) => {
    const p = a.string(1, "path");
    return p === "" ? "." : posix.normalize(p).replace(/(.)\/$/, "$1");
  });
  def("is_absolute", (a) => posix.isAbsolute(a.string(1, "path")));
}
