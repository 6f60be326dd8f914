/**
 * `std.time.*`: clocks and waiting.
 *
 * Owns now (epoch seconds, float), millis (epoch ms, integer), sleep and measure.
 * - `sleep(seconds)` yields the calling task through the scheduler's `sleep` host operation:
 *   other tasks keep running, `task:cancel()` ends it early (with "cancelled").
 * - `measure(fn, ...)` runs `fn` in the calling task (it may yield) and answers the elapsed
 *   seconds on the monotonic clock, followed by `fn`'s results.
 */
import type { LuaEngine } from "../lua/engine.ts";
import { LuaFloat } from "../json/values.ts";

import timeSource from "./time.lua" with { type: "text" };

/** Installs `std.time.*`. */
export function installTime(engine: LuaEngine): void {
  engine.define("std.time.now", {
    sync: () => {
      const s = Date.now() / 1000;
      return Number.isInteger(s) ? new LuaFloat(s) : s; // always a float in Lua
    },
  });
  engine.define("std.time.millis", { sync: () => Date.now() });
  engine.define("@time_clock", { sync: () => performance.now() });
  engine.exec(timeSource, "=ab:time");
}
