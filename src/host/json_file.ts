/**
 * `std.json.read_file` / `std.json.write_file`: JSON documents on disk.
 *
 * Owns the file half of `std.json` (encode/decode are core, `core.ts`): `read_file(path [, opts])`
 * decodes a file (`opts.null = true` keeps `std.json.null`, as `decode` does);
 * `write_file(path, value)` writes pretty JSON with sorted keys and a final newline, atomically
 * (a temporary file beside the target, then a rename; a device or FIFO in place, a directory
 * refused: `writeAtomic`'s rule), and returns true. Relative paths resolve
 * against the run's working directory; messages name the path as given.
 */
import type { LuaEngine } from "../lua/engine.ts";
import type { RunContext } from "./context.ts";
import { parseJson, stringifyJson } from "../json/codec.ts";
import { NullsAsNil } from "../json/values.ts";
import { fsFailure } from "./fs.ts";
import { writeAtomic } from "../util/fs.ts";

/** Installs `std.json.read_file` and `std.json.write_file`. */
export function installJsonFile(engine: LuaEngine, run: RunContext): void {
  engine.define("std.json.read_file", {
    sync: (a) => {
      const path = a.string(1, "path");
      const opts = a.optTable(2, "opts");
      let text: string;
      try {
        text = Deno.readTextFileSync(run.resolve(path));
      } catch (e) {
        throw fsFailure("std.json.read_file", path, e);
      }
      let value: unknown;
      try {
        value = parseJson(text);
      } catch (e) {
        throw new Error(`std.json.read_file: ${path}: ${(e as Error).message}`);
      }
      return opts?.null === true ? value : new NullsAsNil(value);
    },
  });
  engine.define("std.json.write_file", {
    floats: "tagged",
    sync: (a) => {
      const path = a.string(1, "path");
      if (a.length < 2) a.fail(2, "value", "a value");
      let text: string;
      try {
        text = stringifyJson(a.at(2), 2) + "\n";
      } catch (e) {
        throw new Error(`std.json.write_file: ${(e as Error).message}`);
      }
      try {
        writeAtomic(run.resolve(path), text);
      } catch (e) {
        throw fsFailure("std.json.write_file", path, e);
      }
      return true;
    },
  });
}
