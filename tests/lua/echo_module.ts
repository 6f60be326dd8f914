/**
 * A test host module (`t.*`) that hands values across the Lua/JS boundary and back, so tests can
 * look at both sides of the converter and at the engine's error and callback paths.
 *
 * `captured` collects what JS received from `t.capture(...)`; `give(name)` returns one of the
 * JS values in `GIVE`; `t.echo` / `t.aecho` return their arguments (sync / async); `t.throw` /
 * `t.athrow` raise JS exceptions; `t.keep(fn)` + `t.call_kept(...)` call a Lua function from
 * TypeScript through `engine.callLua`; `t.now()` is a monotonic clock in milliseconds.
 */
import type { HostModule } from "../../src/host/context.ts";
import { LuaCallbackError } from "../../src/lua/engine.ts";
import { LuaErrorValue, LuaFloat, type LuaFunctionRef, LuaMulti } from "../../src/json/values.ts";

/** JS values `t.give(name)` returns. */
export const GIVE: Record<string, unknown> = {
  empty_array: [],
  empty_object: {},
  nested: { list: [1, 2, { x: null }], n: 2n ** 62n, f: 0.5, three: new LuaFloat(3) },
  max: 2n ** 63n - 1n,
  min: -(2n ** 63n),
  big_safe: Number.MAX_SAFE_INTEGER,
  float3: new LuaFloat(3),
  half: 2.5,
  null: null,
  bytes: new Uint8Array([0, 0xff, 0x41, 0]),
};

/** A fresh echo module plus the array of what `t.capture` received. */
export function echoModule(): { module: HostModule; captured: unknown[] } {
  const captured: unknown[] = [];
  let kept: LuaFunctionRef | undefined;
  const module: HostModule = (engine) => {
    engine.define("t.capture", {
      sync: (a) => {
        captured.push(...a.values);
      },
    });
    engine.define("t.capture_fn", {
      functions: "ref",
      sync: (a) => {
        captured.push(...a.values);
      },
    });
    engine.define("t.capture_tagged", {
      floats: "tagged",
      sync: (a) => {
        captured.push(...a.values);
      },
    });
    engine.define("t.tagged", {
      raw: (L) => {
        captured.push(engine.toJs(L, 1, { floats: "tagged" }));
        return 0;
      },
    });
    engine.define("t.give", { sync: (a) => GIVE[a.string(1, "name")] });
    engine.define("t.echo", { sync: (a) => new LuaMulti(a.values) });
    engine.define("t.aecho", {
      async: async (a) => {
        await Promise.resolve();
        return new LuaMulti(a.values);
      },
    });
    engine.define("t.throw", {
      sync: (a) => {
        throw new Error(a.optString(1, "message") ?? "js boom");
      },
    });
    engine.define("t.athrow", {
      async: async (a) => {
        await Promise.resolve();
        throw new Error(a.optString(1, "message") ?? "async boom");
      },
    });
    engine.define("t.throw_value", {
      sync: (a) => {
        throw new LuaErrorValue(a.at(1));
      },
    });
    engine.define("t.now", { sync: () => performance.now() });
    engine.define("t.keep", {
      functions: "ref",
      sync: (a) => {
        kept?.release();
        kept = a.func(1, "fn");
      },
    });
    engine.define("t.call_kept", {
      async: async (a, cx) => {
        if (!kept) throw new Error("t.call_kept: nothing kept");
        try {
          const values = await cx.engine.callLua(kept, a.values);
          return new LuaMulti(["ok", ...values]);
        } catch (e) {
          if (e instanceof LuaCallbackError) return new LuaMulti(["error", e.message, e.value]);
          throw e;
        }
      },
    });
  };
  return { module, captured };
}
