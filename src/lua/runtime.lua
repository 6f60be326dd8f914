--- agent-block Lua runtime: the task scheduler, transparent coroutines and the host-call protocol.
--
-- Owns: how Lua code waits for the host. Every asynchronous host function ends in `host_call`,
-- which yields `HOST, op, args...` from wherever it runs. Wrapped `coroutine.resume`/`wrap`
-- forward such a request up through every user coroutine until it reaches the scheduler, which
-- starts the operation in TypeScript and parks the task. The scheduler suspends towards the host
-- at exactly one point (a plain yield of the driver thread); the host then resumes it once at
-- least one operation has completed, and the scheduler takes the whole batch of completions.
--
-- Invariants:
-- - A user coroutine parked on a host request is "busy": nobody else may resume it, and
--   `coroutine.status` reports it as "normal".
-- - A host call made where Lua cannot yield (C boundary) raises an error that says so, at the
--   user's line, instead of wasmoon's bare "attempt to yield across a C-call boundary".
-- - Errors raised for a failed host call point at the first frame outside the runtime's own
--   chunks (names starting with "=ab:"), whatever tail calls the wrappers made.
-- - Every task body runs under xpcall; its error value (tables included) and a traceback are kept.
-- - When the main task ends, the run ends: tasks still alive are cancelled.
-- - A cancelled task (`task:cancel()`) receives `CANCEL`, a sentinel value like `EXIT`, never a
--   string: no error text a script or a server produces (`"...: cancelled"`) can pass for a cancel.
--   `std.task.is_fatal(e)` is true for exactly these two, the errors a library that turns failures
--   into results must let through.
-- - Error tables of the host (`ERROR_MT`: `{ message, ... }` with fields a script can branch on,
--   such as an MCP `code` or an LLM `status`) read as their message (`tostring`, string methods,
--   `..`), and are raised at the user's line like a string error: the position is prefixed to
--   `message`.
-- - `os.exit` / `job.defer` end the run at once. They raise `EXIT` and set a count hook on the
--   coroutine that raises it again at every instruction, so a `pcall`/`xpcall` that catches it
--   cannot run on; `coroutine.resume` passes it to the resumer the same way. The engine is told
--   (`H.exit_requested`): from then on its watchdog raises `EXIT` at every instruction of any
--   other coroutine that still runs, and every host function but these primitives raises it too.
-- - A preemption (the watchdog's yield without values while Lua computes, src/lua/watchdog.ts)
--   travels up like a host request: every transparent `coroutine.resume` passes it up (the
--   coroutine is busy meanwhile) and resumes the coroutine once it comes back; the scheduler
--   suspends towards the host at once. A resumer that cannot yield resumes at once
--   (`H.preempt_blocked`). `H.preempted()` tells such a yield from a script's own
--   `coroutine.yield()`.
--
-- This chunk is loaded by src/lua/engine.ts with the host primitives table as its argument.
local H = ...

local raw = {
  create = coroutine.create,
  resume = coroutine.resume,
  yield = coroutine.yield,
  status = coroutine.status,
  running = coroutine.running,
  isyieldable = coroutine.isyieldable,
  close = coroutine.close,
}
local getinfo, traceback = debug.getinfo, debug.traceback
local pack, unpack = table.pack, table.unpack
local type, error, select, setmetatable, getmetatable, tostring =
  type, error, select, setmetatable, getmetatable, tostring
local sfind, sformat = string.find, string.format

local preempted = H.preempted

local HOST = setmetatable({}, { __name = "HOST_REQUEST" })
local EXIT = setmetatable({}, {
  __name = "EXIT",
  __tostring = function() return "the run is ending (os.exit or job.defer)" end,
})
local CANCEL = setmetatable({}, {
  __name = "CANCEL",
  __tostring = function() return "cancelled" end,
})
-- The metatable of the host's structured errors (pushed by src/lua/engine.ts for a `LuaErrorTable`).
-- Such an error reads as its message wherever a string error did: `tostring(e)`, `e:match(...)`
-- and the other string methods (on the message), `"..." .. e`.
local smethods = string
local ERROR_MT = {
  __name = "error",
  __tostring = function(e) return tostring(e.message) end,
  __concat = function(a, b) return tostring(a) .. tostring(b) end,
}
ERROR_MT.__index = function(_, k)
  local f = smethods[k]
  if f ~= nil then return function(self, ...) return f(tostring(self.message), ...) end end
end
local busy = setmetatable({}, { __mode = "k" })
local exiting -- { code = n, reason = s } once os.exit / job.defer was called

local sethook = debug.sethook
local function exit_hook() error(EXIT, 0) end

--- Raises EXIT in the running coroutine and keeps raising it there at every instruction.
local function raise_exit()
  sethook(exit_hook, "", 1)
  error(EXIT, 0)
end

local R = { HOST = HOST, EXIT = EXIT, CANCEL = CANCEL, ERROR_MT = ERROR_MT }

--- The stack level (as seen by the caller of this function) of the first Lua frame outside the
-- runtime's own chunks. Used as the `level` argument of `error`. C frames are passed over: when
-- the user tail-called a host function (`return t.fetch(x)`), the user's frame is gone and the
-- next frame may be `pcall`, `string.gsub`, ...; the Lua line that called THAT is the best
-- position left. With no Lua frame at all, the first C frame (no position) is used.
local function user_level()
  local level, first_c = 2, nil
  while true do
    local info = getinfo(level + 1, "S")
    if not info then return first_c or 1 end
    if info.what == "C" then
      first_c = first_c or level
    elseif not sfind(info.source, "^=ab:") then
      return level
    end
    level = level + 1
  end
end
R.user_level = user_level

local function cannot_yield(op)
  return sformat(
    "host call '%s' made where yielding is impossible (inside a C boundary: __tostring, an error "
      .. "handler, a metamethod called by a library function, or a function called by the host)", op)
end

--- `file:line: ` of stack `level` (as `error(msg, level)` would prefix it), or "".
local function where(level)
  local info = getinfo(level + 1, "Sl")
  if info and info.currentline > 0 then return sformat("%s:%d: ", info.short_src, info.currentline) end
  return ""
end

local function raise_reply(ok, ...)
  if ok then return ... end
  local err = ...
  if err == EXIT then raise_exit() end
  if type(err) == "string" then error(err, user_level()) end
  if getmetatable(err) == ERROR_MT and type(err.message) == "string" then
    err.message = where(user_level()) .. err.message
  end
  error(err, 0)
end

--- Performs host operation `op` with `...` as arguments and returns its results, yielding the
-- running task meanwhile. Raises the operation's error at the user's line.
local function host_call(op, ...)
  if exiting then raise_exit() end
  if not raw.isyieldable() then error(cannot_yield(op), user_level()) end
  return raise_reply(raw.yield(HOST, op, ...))
end
R.host_call = host_call

--- Builds the Lua function for an asynchronous host function named `op`.
function R.async_function(op)
  return function(...) return host_call(op, ...) end
end

-- Transparent coroutines ----------------------------------------------------------------------

local function forward(co, ok, ...)
  if not ok and exiting then raise_exit() end
  if ok and raw.status(co) == "suspended" then
    if (...) == HOST then
      if not raw.isyieldable() then
        return forward(co, raw.resume(co, false, cannot_yield((select(2, ...)))))
      end
      busy[co] = true
      local reply = pack(raw.yield(...))
      busy[co] = nil
      return forward(co, raw.resume(co, unpack(reply, 1, reply.n)))
    end
    if select("#", ...) == 0 and preempted() then
      if raw.isyieldable() then
        busy[co] = true
        raw.yield()
        busy[co] = nil
      else
        H.preempt_blocked()
      end
      return forward(co, raw.resume(co))
    end
  end
  return ok, ...
end

function coroutine.resume(co, ...)
  if busy[co] then return false, "cannot resume non-suspended coroutine" end
  return forward(co, raw.resume(co, ...))
end

function coroutine.status(co)
  if busy[co] then return "normal" end
  return raw.status(co)
end

function coroutine.close(co)
  if busy[co] then return false, "cannot close a coroutine that is waiting for the host" end
  return raw.close(co)
end

local function wrap_result(co, ok, ...)
  if ok then return ... end
  local err = ...
  if raw.status(co) == "dead" then raw.close(co) end
  if type(err) == "string" then error(err, 2) end
  error(err, 0)
end

function coroutine.wrap(f)
  local co = raw.create(f)
  return function(...) return wrap_result(co, coroutine.resume(co, ...)) end
end

-- Tasks ----------------------------------------------------------------------------------------

local Task = {}
Task.__index = Task
Task.__name = "task"
local ready = { first = 1, last = 0 }
local waiting = {} -- host op id -> task
local nwaiting = 0
local live = {} -- every task not yet finished
local main
local next_id = 0
local unobserved = {} -- failed tasks nobody joined (reported when the run ends)

-- The slot is filled before `last` moves: a memory error while building the item or growing
-- the table leaves the queue as it was (never a counted slot without an item). A task thread is
-- never preempted in this chunk (src/lua/watchdog.ts), so no other task runs between the two.
local function enqueue(t, args)
  local item = { t, args }
  local last = ready.last + 1
  ready[last] = item
  ready.last = last
end

local function dequeue()
  local first = ready.first
  if first > ready.last then return nil end
  local item = ready[first]
  ready[first] = nil
  ready.first = first + 1
  return item[1], item[2]
end

local ERRREC = { __name = "task error" }
-- Metatables the runtime gives to objects it creates later, and a script can reach: the prelude
-- seals them against a `__gc` (see its "finalizers" section).
R.SHARED_MTS = { Task, ERRREC, ERROR_MT }
local function on_task_error(e)
  if e == EXIT then return EXIT end
  return setmetatable({ err = e, traceback = traceback(nil, 2) }, ERRREC)
end
local function errrec(e)
  if e == EXIT or getmetatable(e) == ERRREC then return e end
  return setmetatable({ err = e, traceback = "" }, ERRREC) -- memory errors skip the handler
end

local function finish(t, ok, result)
  t.finished, t.ok, t.result = true, ok, result
  live[t] = nil
  if not ok and result ~= EXIT and #t.joiners == 0 and t ~= main and not t.on_finish then
    unobserved[t] = true
  end
  for i = 1, #t.joiners do enqueue(t.joiners[i], pack(true)) end
  t.joiners = {}
  if t.on_finish then t.on_finish(ok, result) end
end

local function new_task(fn, args, name)
  next_id = next_id + 1
  local t = setmetatable({ id = next_id, joiners = {}, name = name }, Task)
  t.co = raw.create(function(...) return xpcall(fn, on_task_error, ...) end)
  enqueue(t, args) -- first: a memory error here leaves no live task that never runs
  live[t] = true
  return t
end

local preempt_pending = false -- a task was preempted: suspend towards the host before going on

local function step(t, args)
  if t.cancelled and not t.started then
    return finish(t, false, errrec(CANCEL))
  end
  t.started = true
  local r = pack(raw.resume(t.co, unpack(args, 1, args.n)))
  if raw.status(t.co) == "dead" then
    if not r[1] then return finish(t, false, errrec(r[2])) end
    if r[2] then return finish(t, true, pack(unpack(r, 3, r.n))) end
    return finish(t, false, errrec(r[3]))
  end
  if r[2] ~= HOST then -- a plain yield: cooperative, or the watchdog's preemption
    if r.n == 1 and preempted() then preempt_pending = true end
    return enqueue(t, pack())
  end
  local op = r[3]
  if exiting then return enqueue(t, pack(false, EXIT)) end
  if t.cancelled then return enqueue(t, pack(false, CANCEL)) end
  if op == "__join" then
    local target = r[4]
    if target.finished then return enqueue(t, pack(true)) end
    t.joining = target
    target.joiners[#target.joiners + 1] = t
    return
  end
  if op == "__yield" then return enqueue(t, pack(true)) end
  local ok, id = pcall(H.start, op, unpack(r, 4, r.n))
  if not ok then return enqueue(t, pack(false, id)) end
  t.op = id
  waiting[id] = t
  nwaiting = nwaiting + 1
end

--- Fails every task blocked in a join when nothing else can make progress.
local function break_deadlock()
  local any = false
  for t in pairs(live) do
    if t.joining then
      local target = t.joining
      for i = #target.joiners, 1, -1 do
        if target.joiners[i] == t then table.remove(target.joiners, i) end
      end
      t.joining = nil
      enqueue(t, pack(false, "deadlock: every task is waiting for another task and no host operation is pending"))
      any = true
    end
  end
  return any
end

local function spawn_callback(fn, args, reply)
  local t = new_task(fn, args, "callback")
  t.on_finish = function(ok, result)
    if ok then
      local sent, why = pcall(H.reply, reply, true, unpack(result, 1, result.n))
      if not sent then H.reply(reply, false, "callback result cannot be passed to the host: " .. tostring(why)) end
    elseif result == EXIT then
      H.reply(reply, false, "the run is ending")
    elseif result.err == CANCEL then
      H.reply(reply, false, "cancelled")
    else
      local sent = pcall(H.reply, reply, false, result.err, result.traceback)
      if not sent then H.reply(reply, false, tostring(result.err), result.traceback) end
    end
  end
end

local function cancel_task(t)
  if t.finished then return false end
  t.cancelled = true
  if t.op then
    local id = t.op
    t.op = nil
    waiting[id] = nil
    nwaiting = nwaiting - 1
    H.cancel(id)
    enqueue(t, pack(false, CANCEL))
  elseif t.joining then
    local target = t.joining
    for i = #target.joiners, 1, -1 do
      if target.joiners[i] == t then table.remove(target.joiners, i) end
    end
    t.joining = nil
    enqueue(t, pack(false, CANCEL))
  end
  return true
end

--- The one suspension towards the host: resumed when something completed (or, after a
-- preemption, once the host's event loop has run); then takes the batch of completions.
local function host_turn()
  raw.yield()
  local batch = H.take()
  for i = 1, #batch do
    local c = batch[i]
    if c.call then
      spawn_callback(c.call, c.args, c.reply)
    else
      local w = waiting[c.id]
      if w then
        waiting[c.id] = nil
        nwaiting = nwaiting - 1
        w.op = nil
        enqueue(w, c.values)
      end
    end
  end
end

--- Runs `fn(...)` as the main task plus everything it spawns. Returns `"ok", results` (packed),
-- `"error", {err, traceback}`, or `"exit", code, reason`.
function R.run(fn, ...)
  main = new_task(fn, pack(...), "main")
  while true do
    local t, args = dequeue()
    while t do
      if not t.finished then step(t, args) end
      if exiting then break end
      if preempt_pending then
        preempt_pending = false
        -- The flag again: a preemption of this scheduler itself since the task's (its trip to
        -- the event loop cleared it) would leave the host waiting for a completion instead.
        H.preempt_now()
        host_turn()
      end
      t, args = dequeue()
    end
    if exiting or main.finished then break end
    if nwaiting == 0 then
      if not break_deadlock() then
        main.finished, main.ok = true, false
        main.result = errrec("deadlock: the main task cannot make progress")
        break
      end
    else
      host_turn()
    end
  end
  for id in pairs(waiting) do H.cancel(id) end
  for t in pairs(unobserved) do
    if not t.observed then
      H.warn(sformat("task %d failed and was never joined: %s", t.id, R.describe_error(t.result.err)))
    end
  end
  if exiting then return "exit", exiting.code, exiting.reason end
  if main.ok then return "ok", main.result end
  return "error", main.result
end

--- Ends the run with `code` at the next scheduling point; `reason` is reported on stderr.
function R.request_exit(code, reason)
  if not exiting then
    exiting = { code = code, reason = reason }
    H.exit_requested()
  end
  raise_exit()
end

--- Runs a compiled main chunk; its first return value is stringified (a string passes
-- unchanged). A table (or function, thread, userdata) without `__tostring` becomes only its
-- address (`table: 0x...`): that is kept, as the seed says, but warned about once, naming
-- `std.json.encode`. Returns `"ok", string|nil` / `"error", message, traceback, value` /
-- `"exit", code, reason`.
function R.main(chunk)
  local kind, a, b = R.run(function()
    local r = pack(chunk())
    if r.n == 0 or r[1] == nil then return nil end
    local v, t = r[1], type(r[1])
    if t == "table" or t == "function" or t == "thread" or t == "userdata" then
      local mt = getmetatable(v)
      if type(mt) ~= "table" or mt.__tostring == nil then
        H.warn(sformat("the block returned a %s, which becomes its address (%s) in the result; "
          .. "return std.json.encode(value) for its contents", t, tostring(v)))
      end
    end
    return (tostring(v))
  end)
  if kind == "ok" then return "ok", a[1] end
  if kind == "error" then return "error", R.describe_error(a.err), a.traceback, a.err end
  return kind, a, b
end

--- Host modules installed on first use (`LuaEngine.defineLazy`). `load` is the host function that
-- installs the module; `tables` are dotted global paths (created empty if absent) whose first
-- read, write or `pairs` installs it; `preloads` are module names whose `require` does. The
-- tables keep their identity: the module fills the very tables a script may already hold. Their
-- metatables are removed before the module installs, so it writes into plain tables. A module
-- whose installation fails stays failed: every later touch raises the same error. Until the
-- module installs, `getmetatable(t).__installed(fn)` (on one of its tables) has `fn` called
-- right after the installation, within the touch that caused it: a flow step's wrapper taps
-- `bus.emit` that way without installing the bus for a block that never touches it.
function R.lazy(load, tables, preloads)
  local pending, state, failure, after = {}, "pending", nil, {}
  local function ensure()
    if state == "installed" then return end
    if state == "failed" then error(failure, 0) end
    state = "installed"
    for t in pairs(pending) do setmetatable(t, nil) end
    local ok, err = pcall(load)
    if not ok then
      state, failure = "failed", err
      local function fail() error(err, 0) end
      local broken = { __index = fail, __newindex = fail, __pairs = fail }
      for t in pairs(pending) do setmetatable(t, broken) end
      error(err, 0)
    end
    for i = 1, #after do after[i]() end
  end
  local mt = {
    __index = function(t, k) ensure(); return t[k] end,
    __newindex = function(t, k, v) ensure(); t[k] = v end,
    __pairs = function(t) ensure(); return next, t, nil end,
    __installed = function(fn) after[#after + 1] = fn end,
  }
  for _, path in ipairs(tables) do
    local t = _G
    for part in path:gmatch("[^.]+") do
      local child = rawget(t, part)
      if child == nil then child = {}; rawset(t, part, child) end
      t = child
    end
    pending[t] = true
    setmetatable(t, mt)
  end
  for _, name in ipairs(preloads) do
    local trigger
    trigger = function(...)
      ensure()
      -- The module may have preloaded or loaded `name` itself while installing.
      local p = package.preload[name]
      if p ~= nil and p ~= trigger then return p(...) end
      return package.loaded[name]
    end
    package.preload[name] = trigger
  end
end

function R.describe_error(e)
  if type(e) == "string" then return e end
  if e == nil then return "nil" end -- error() / error(nil): Lua's word for it, not JSON's null
  local mt = getmetatable(e)
  if mt == ERROR_MT or e == CANCEL or e == EXIT then return tostring(e) end
  local ok, s = pcall(H.json_encode, e)
  if ok then return s end
  return tostring(e)
end

-- The task API (std.task) ---------------------------------------------------------------------

function Task:join()
  if not self.finished then host_call("__join", self) end
  self.observed = true
  unobserved[self] = nil
  if self.ok then return unpack(self.result, 1, self.result.n) end
  if self.result == EXIT then raise_exit() end
  error(self.result.err, 0)
end

function Task:cancel() return cancel_task(self) end
function Task:done() return self.finished == true end
function Task:status()
  if self.finished then return self.ok and "done" or (self.cancelled and "cancelled" or "failed") end
  return self.started and "running" or "ready"
end
Task.__tostring = function(self) return sformat("task %d (%s)", self.id, self:status()) end

local task = {}

function task.spawn(fn, ...)
  if type(fn) ~= "function" then
    error(sformat("std.task.spawn: argument 1 (fn) must be a function, got %s", type(fn)), 2)
  end
  return new_task(fn, pack(...))
end

function task.sleep(seconds)
  if type(seconds) ~= "number" or seconds ~= seconds or seconds < 0 then
    error(sformat("std.task.sleep: argument 1 (seconds) must be a non-negative number, got %s",
      type(seconds) == "number" and tostring(seconds) or type(seconds)), 2)
  end
  return host_call("sleep", seconds * 1000)
end

function task.yield() return host_call("__yield") end

function task.all(handles)
  if type(handles) ~= "table" then
    error(sformat("std.task.all: argument 1 (handles) must be a table, got %s", type(handles)), 2)
  end
  local out = {}
  for i = 1, #handles do
    local h = handles[i]
    if getmetatable(h) ~= Task then
      error(sformat("std.task.all: element %d of argument 1 (handles) must be a task, got %s", i, type(h)), 2)
    end
    local r = pack(h:join())
    out[i] = r[1]
  end
  return out
end

function task.join(h) return h:join() end
function task.cancel(h) return h:cancel() end
function task.is_task(v) return getmetatable(v) == Task end

--- Whether `e` is an error a library that turns failures into results must let through: the
-- cancel of the running task (the `CANCEL` sentinel) answers "cancelled", the end of the run
-- (`EXIT`, os.exit / job.defer) answers "exit", anything else — whatever its text — false.
function task.is_fatal(e)
  if e == CANCEL then return "cancelled" end
  if e == EXIT then return "exit" end
  return false
end

R.task = task
return R
