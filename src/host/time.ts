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
import { LuaFloat } from "../lua/values.ts";

const MAX_SLEEP_S = 2_000_000; // setTimeout's ceiling is ~24.8 days

const TIME_LUA = `
local R, H = ...
local host_call, pack, unpack, type, error, tostring = R.host_call, table.pack, table.unpack, type, error, tostring
std = std or {}
std.time = std.time or {}
local clock = H.time_clock
function std.time.sleep(seconds)
  if type(seconds) ~= "number" then
    error("std.time.sleep: argument 1 (seconds) must be a number, got " .. type(seconds), 2)
  end
  if seconds ~= seconds or seconds < 0 or seconds > ${MAX_SLEEP_S} then
    error("std.time.sleep: argument 1 (seconds) must be between 0 and ${MAX_SLEEP_S}, got " .. tostring(seconds), 2)
  end
  host_call("sleep", seconds * 1000)
end
local function finish(t0, ...)
  return (clock() - t0) / 1000, ...
end
function std.time.measure(fn, ...)
  if type(fn) ~= "function" then
    error("std.time.measure: argument 1 (fn) must be a function, got " .. type(fn), 2)
  end
  return finish(clock(), fn(...))
end
`;

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
  engine.exec(TIME_LUA, "=ab:time");
}
