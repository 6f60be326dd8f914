--- std.time's Lua half: sleep (yields the calling task through the scheduler's `sleep` host
--- operation) and measure (runs fn in the calling task, which may yield). Receives the runtime
--- table R and the primitives table H; `H.time_clock` is the monotonic clock in milliseconds.
--- 2000000 s is the longest sleep: setTimeout's ceiling is ~24.8 days.
local R, H = ...
local host_call, pack, unpack, type, error, tostring = R.host_call, table.pack, table.unpack, type, error, tostring
std = std or {}
std.time = std.time or {}
local clock = H.time_clock
function std.time.sleep(seconds)
  if type(seconds) ~= "number" then
    error("std.time.sleep: argument 1 (seconds) must be a number, got " .. type(seconds), 2)
  end
  if seconds ~= seconds or seconds < 0 or seconds > 2000000 then
    error("std.time.sleep: argument 1 (seconds) must be between 0 and 2000000, got " .. tostring(seconds), 2)
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
