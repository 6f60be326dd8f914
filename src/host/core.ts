/**
 * The core host module: what every run has before any standard-library package.
 *
 * Owns `require`'s resolver binding, `std.json` encode/decode on the converter, `log.*`,
 * `std.env.project_root`, and `job.defer`. Larger packages (`std.fs`, `sh`, stores, `llm`,
 * `mcp`, ...) are host modules of their own, listed in `src/host/standard.ts`.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { parseJson, stringifyJson } from "../json/codec.ts";
import { LuaMulti, NullsAsNil } from "../json/values.ts";
import type { RunContext } from "./context.ts";
import type { ModuleResolver } from "../modules/resolver.ts";
import { LUA_TNONE } from "../lua/capi.ts";

/** Installs the core functions. */
export function installCore(engine: LuaEngine, run: RunContext, resolver: ModuleResolver): void {
  engine.define("@resolve_module", {
    sync: (a) => {
      const r = resolver.resolve(a.string(1, "name"), a.optBoolean(2, "text_only") === true);
      if (r.found) return new LuaMulti([r.source, r.chunkname, r.info, r.mode]);
      return new LuaMulti([undefined, r.searched.map((s) => `\n\t${s}`).join("")]);
    },
  });

  engine.define("std.json.encode", {
    pure: true,
    raw: (L) => {
      if (engine.api.type(L, 1) === LUA_TNONE) {
        throw new Error("std.json.encode: argument 1 (value) is missing");
      }
      const fast = engine.converter.toJson(L, 1);
      if (fast !== undefined) {
        engine.api.pushstring(L, fast);
        return 1;
      }
      const v = wrapJson("std.json.encode", () => engine.toJs(L, 1, { floats: "tagged" }));
      engine.api.pushstring(L, wrapJson("std.json.encode", () => stringifyJson(v)));
      return 1;
    },
  });
  engine.define("std.json.encode_pretty", {
    pure: true,
    raw: (L) => {
      const v = wrapJson("std.json.encode_pretty", () => engine.toJs(L, 1, { floats: "tagged" }));
      engine.api.pushstring(L, wrapJson("std.json.encode_pretty", () => stringifyJson(v, 2)));
      return 1;
    },
  });
  engine.define("std.json.decode", {
    pure: true,
    sync: (a) => {
      const text = a.string(1, "text");
      const opts = a.optTable(2, "opts");
      let value: unknown;
      try {
        value = parseJson(text);
      } catch (e) {
        throw new Error(`std.json.decode: ${(e as Error).message}`);
      }
      return opts?.null === true ? value : new NullsAsNil(value);
    },
  });

  const logFn = (level: "debug" | "info" | "warn" | "error") => ({
    sync: (a: import("../lua/args.ts").Args) => {
      const parts = a.values.map((v) =>
        typeof v === "string"
          ? v
          : v instanceof Uint8Array
          ? new TextDecoder().decode(v)
          : stringifyJsonSafe(v)
      );
      // One call, one line: embedded line breaks are written as \n so every record stays greppable.
      run.log.log(level, parts.join(" ").replace(/\r?\n/g, "\\n"));
    },
  });
  engine.define("log.debug", logFn("debug"));
  engine.define("log.info", logFn("info"));
  engine.define("log.warn", logFn("warn"));
  engine.define("log.error", logFn("error"));

  engine.define("std.env.project_root", { sync: () => run.projectRoot });
}

function stringifyJsonSafe(v: unknown): string {
  if (v === undefined) return "nil";
  try {
    return typeof v === "object" && v !== null ? stringifyJson(v) : String(v);
  } catch {
    return String(v);
  }
}

function wrapJson<T>(fn: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw new Error(`${fn}: ${(e as Error).message}`);
  }
}
