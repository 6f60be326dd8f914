--- agent-block prelude: the Lua standard library made real, and the globals every script sees.
--
-- Owns the Lua half of: `print`, `io.*` (files, pipes and the standard streams, backed by host
-- handles), `os.*` (real environment, filesystem and processes; `os.exit` ending the run after
-- cleanup), `load` restricted to text chunks, `loadfile`/`dofile` on the real filesystem, the
-- yield-safe `require` over the host's module resolver, `std.json` markers and `std.task`; and
-- what a script must not reach: `debug` keeps only `traceback` and `getinfo` (without the `f`
-- option, which hands out the functions running on a stack — the runtime's own among them);
-- `string.dump` is gone; finalizers (`__gc`) of a script's objects never run (see "finalizers").
--
-- Invariants:
-- - File objects buffer reads in Lua and ask the host for chunks: a regular file answers
--   synchronously, a pipe or stdin through `host_call`, so the rest of the script keeps running.
-- - `require` is written in Lua so a module's top level may make host calls (the C `require`
--   cannot yield). A module being loaded is marked, so a cyclic require fails with a message
--   naming the cycle instead of a C stack overflow.
-- - Nothing here writes to the real stdout except `print`/`io.write` through the host.
-- - No route loads a binary chunk: `load`, `loadfile`, `dofile` and `require` of a file load
--   text only ("t"); bytecode is loaded only for an embedded module's precompiled chunk, whose
--   bytes come from the host's own table (src/modules/resolver.ts), never from a file or a string.
--   The C `load` is reachable only as an upvalue here, and `debug` has nothing that reads
--   upvalues, locals, the registry or hooks.
-- - Lua runs every finalizer with hooks off: neither the CPU limit nor a signal could end a loop
--   in one. So a script's metatable never marks an object for finalization (`setmetatable`
--   drops the `__gc` for the call, with one warning per run), and the metatables the host gives
--   to objects it creates (std.json markers, tasks, error tables) are sealed against a `__gc`.
--   The host's own finalizers (files, the LLM transport's handles) are fixed code behind
--   protected metatables.
local R, H = ...
local host_call, user_level = R.host_call, R.user_level
local type, tostring, tonumber, select, error, setmetatable, getmetatable, rawequal =
  type, tostring, tonumber, select, error, setmetatable, getmetatable, rawequal
-- the C matchers (src/lua/interruptible.lua wraps the public ones): the patterns here are ours
local sformat, ssub, sfind, concat, pack, unpack = string.format, string.sub, R.cstring.find,
  table.concat, table.pack, table.unpack
local math_type = math.type
local sgsub, smatch = R.cstring.gsub, R.cstring.match
local rawmeta = debug.getmetatable -- captured before `debug` is cut down (see "debug")

-- std --------------------------------------------------------------------------------------------
std = std or {}
std.json = std.json or {}
local json = std.json
json.null = H.null
json.array_mt = H.array_mt
json.object_mt = H.object_mt
--- Marks `t` (default a new table) as a JSON array, so an empty one encodes as `[]`.
function json.array(t) return setmetatable(t or {}, H.array_mt) end
--- Marks `t` (default a new table) as a JSON object.
function json.object(t) return setmetatable(t or {}, H.object_mt) end
function json.is_array(t) return type(t) == "table" and getmetatable(t) == H.array_mt end
function json.is_null(v) return rawequal(v, H.null) end
std.task = R.task

-- print / io ----------------------------------------------------------------------------------------
local function fmt_value(v)
  if math_type(v) == "float" then return sformat("%.14g", v) end
  return tostring(v)
end

function print(...)
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do parts[i] = tostring((select(i, ...))) end
  H.write(1, concat(parts, "\t") .. "\n")
end

local File = {}
File.__index = File
File.__name = "FILE*"
File.__metatable = "FILE*" -- its __gc is the host's: a script cannot reach it to replace it
File.__tostring = function(f)
  if f.closed then return "file (closed)" end
  return sformat("file (%s)", f.label)
end

local function new_file(h, label, async, writable)
  return setmetatable({ h = h, label = label, async = async, writable = writable, buf = "", pos = 1,
    eof = false, closed = false }, File)
end

local function check_file(f, fname)
  if rawmeta(f) ~= File then
    error(sformat("bad argument #1 to '%s' (FILE* expected, got %s)", fname, type(f)), 3)
  end
  if f.closed then error("attempt to use a closed file", 3) end
  return f
end

local function fill(f)
  if f.eof then return false end
  local chunk
  if f.async then chunk = host_call("io.read_chunk", f.h) else chunk = H.io_read_chunk(f.h) end
  if chunk == nil then
    f.eof = true
    return false
  end
  if f.pos > #f.buf then f.buf = chunk else f.buf = ssub(f.buf, f.pos) .. chunk end
  f.pos = 1
  return true
end

local function read_line(f, keep)
  while true do
    local nl = sfind(f.buf, "\n", f.pos, true)
    if nl then
      local line = ssub(f.buf, f.pos, keep and nl or nl - 1)
      f.pos = nl + 1
      return line
    end
    if not fill(f) then
      if f.pos > #f.buf then return nil end
      local rest = ssub(f.buf, f.pos)
      f.pos = #f.buf + 1
      return rest
    end
  end
end

local function read_all(f)
  while fill(f) do end
  local rest = ssub(f.buf, f.pos)
  f.buf, f.pos = "", 1
  return rest
end

local function read_count(f, n)
  while #f.buf - f.pos + 1 < n do
    if not fill(f) then break end
  end
  if f.pos > #f.buf and n > 0 then return nil end
  if n == 0 then
    if f.pos > #f.buf and not fill(f) then return nil end
    return ""
  end
  local s = ssub(f.buf, f.pos, f.pos + n - 1)
  f.pos = f.pos + #s
  return s
end

local function read_number(f)
  while true do
    local s = sfind(f.buf, "[^%s]", f.pos)
    if s then
      f.pos = s
      break
    end
    f.pos = #f.buf + 1
    if not fill(f) then return nil end
  end
  -- make sure the whole numeral is buffered
  while not sfind(f.buf, "[^%w%.%+%-]", f.pos) and fill(f) do end
  local numeral = smatch(f.buf, "^[%+%-]?[%w%.]*[eEpP]?[%+%-]?[%w%.]*", f.pos) or ""
  f.pos = f.pos + #numeral
  return tonumber(numeral)
end

local function read_one(f, fmt)
  if type(fmt) == "number" then return read_count(f, math.floor(fmt)) end
  fmt = tostring(fmt):gsub("^%*", "")
  local c = ssub(fmt, 1, 1)
  if c == "l" then return read_line(f, false) end
  if c == "L" then return read_line(f, true) end
  if c == "a" then return read_all(f) end
  if c == "n" then return read_number(f) end
  error(sformat("bad argument to 'read' (invalid format '%s')", fmt), 4)
end

function File:read(...)
  check_file(self, "read")
  local n = select("#", ...)
  if n == 0 then return read_line(self, false) end
  local out = {}
  for i = 1, n do
    local v = read_one(self, (select(i, ...)))
    out[i] = v
    if v == nil then return unpack(out, 1, i) end
  end
  return unpack(out, 1, n)
end

function File:lines(...)
  check_file(self, "lines")
  local fmts = pack(...)
  return function()
    if self.closed then error("file is already closed", 2) end
    if fmts.n == 0 then return read_line(self, false) end
    return self:read(unpack(fmts, 1, fmts.n))
  end
end

function File:write(...)
  check_file(self, "write")
  local n = select("#", ...)
  local parts = {}
  for i = 1, n do
    local v = select(i, ...)
    local tv = type(v)
    if tv == "number" then
      parts[i] = fmt_value(v)
    elseif tv == "string" then
      parts[i] = v
    else
      error(sformat("bad argument #%d to 'write' (string expected, got %s)", i, tv), 2)
    end
  end
  local data = concat(parts)
  local ok, err, code
  if self.async then
    ok, err, code = host_call("io.write_pipe", self.h, data)
  else
    ok, err, code = H.io_write(self.h, data)
  end
  if not ok then return nil, err, code end
  return self
end

function File:seek(whence, offset)
  check_file(self, "seek")
  whence = whence or "cur"
  offset = offset or 0
  if whence ~= "set" and whence ~= "cur" and whence ~= "end" then
    error(sformat("bad argument #1 to 'seek' (invalid option '%s')", tostring(whence)), 2)
  end
  if self.async then return nil, "Illegal seek", 29 end
  if whence == "cur" then offset = offset - (#self.buf - self.pos + 1) end
  self.buf, self.pos, self.eof = "", 1, false
  return H.io_seek(self.h, whence, offset)
end

function File:flush()
  check_file(self, "flush")
  return self
end

function File:setvbuf() return true end

function File:close()
  check_file(self, "close")
  if self.std then return nil, "cannot close standard file" end
  self.closed = true
  if self.pipe then return host_call("io.pclose", self.h) end
  return H.io_close(self.h)
end

File.__close = function(f) if not f.closed and not f.std then f:close() end end
File.__gc = function(f) if not f.closed and not f.std and not f.pipe then pcall(H.io_close, f.h) end end

local stdin = new_file(0, "stdin", true, false)
local stdout = new_file(1, "stdout", false, true)
local stderr = new_file(2, "stderr", false, true)
stdin.std, stdout.std, stderr.std = true, true, true
local default_in, default_out = stdin, stdout
io.stdin, io.stdout, io.stderr = stdin, stdout, stderr

local VALID_MODE = { r = true, w = true, a = true, ["r+"] = true, ["w+"] = true, ["a+"] = true }

function io.open(path, mode)
  if type(path) ~= "string" then
    error(sformat("bad argument #1 to 'open' (string expected, got %s)", type(path)), 2)
  end
  mode = mode or "r"
  local m = tostring(mode):gsub("b$", "")
  if not VALID_MODE[m] then error(sformat("bad argument #2 to 'open' (invalid mode '%s')", tostring(mode)), 2) end
  local h, err, code = H.io_open(path, m)
  if not h then return nil, err, code end
  return new_file(h, path, false, m ~= "r")
end

function io.popen(cmd, mode)
  if type(cmd) ~= "string" then
    error(sformat("bad argument #1 to 'popen' (string expected, got %s)", type(cmd)), 2)
  end
  mode = mode or "r"
  if mode ~= "r" and mode ~= "w" then error(sformat("bad argument #2 to 'popen' (invalid mode '%s')", mode), 2) end
  local h, err = H.io_popen(cmd, mode)
  if not h then return nil, err end
  local f = new_file(h, "pipe", true, mode == "w")
  f.pipe = true
  return f
end

function io.close(f)
  return (f or default_out):close()
end

function io.type(f)
  if rawmeta(f) ~= File then return nil end
  return f.closed and "closed file" or "file"
end

function io.input(f)
  if f == nil then return default_in end
  if type(f) == "string" then
    local nf, err = io.open(f, "r")
    if not nf then error(err, 2) end
    default_in = nf
  else
    default_in = check_file(f, "input")
  end
  return default_in
end

function io.output(f)
  if f == nil then return default_out end
  if type(f) == "string" then
    local nf, err = io.open(f, "w")
    if not nf then error(err, 2) end
    default_out = nf
  else
    default_out = check_file(f, "output")
  end
  return default_out
end

function io.read(...) return default_in:read(...) end
function io.write(...) return default_out:write(...) end

function io.lines(path, ...)
  if path == nil then return default_in:lines(...) end
  local f, err = io.open(path, "r")
  if not f then error(err, 2) end
  local fmts = pack(...)
  return function()
    if f.closed then return nil end
    local v
    if fmts.n == 0 then v = read_line(f, false) else v = f:read(unpack(fmts, 1, fmts.n)) end
    if v == nil then f:close() end
    return v
  end, nil, nil, f
end

-- os -------------------------------------------------------------------------------------------
os.getenv = H.getenv
os.remove = H.os_remove
os.rename = H.os_rename
os.tmpname = H.os_tmpname

function os.execute(cmd)
  if cmd == nil then return true end
  if type(cmd) ~= "string" then
    error(sformat("bad argument #1 to 'execute' (string expected, got %s)", type(cmd)), 2)
  end
  return host_call("os.execute", cmd)
end

function os.exit(code)
  if code == nil or code == true then
    code = 0
  elseif code == false then
    code = 1
  elseif math_type(code) ~= "integer" then
    error(sformat("bad argument #1 to 'exit' (integer or boolean expected, got %s)", type(code)), 2)
  end
  R.request_exit(code)
end

-- chunks ---------------------------------------------------------------------------------------
local raw_load = load
string.dump = nil

-- debug ----------------------------------------------------------------------------------------
-- What error reporting and tracebacks need stays: `traceback`, and `getinfo` without `f` (the
-- function at a stack level: it would hand out the runtime's own functions, the raw coroutine
-- primitives among them). Everything that reads or writes other functions' upvalues and locals,
-- the registry, metatables behind `__metatable`, user values or hooks is removed.
do
  local dgetinfo, dtraceback = debug.getinfo, debug.traceback
  local running = coroutine.running
  for k in pairs(debug) do debug[k] = nil end
  local VALID = "^[SlunrtLf]*$"
  debug.traceback = dtraceback
  function debug.getinfo(...)
    local n = select("#", ...)
    local a, b, c = ...
    local co, f, what, argn = nil, a, b, 1
    if type(a) == "thread" then co, f, what, argn = a, b, c, 2 end
    if type(f) ~= "number" and type(f) ~= "function" then
      error(sformat("bad argument #%d to 'getinfo' (function or level expected)", argn), 2)
    end
    if what == nil then
      what = "lnSrtuL"
    elseif type(what) ~= "string" then
      error(sformat("bad argument #%d to 'getinfo' (string expected, got %s)", argn + 1, type(what)), 2)
    elseif not sfind(what, VALID) then
      error(sformat("bad argument #%d to 'getinfo' (invalid option)", argn + 1), 2)
    else
      what = sgsub(what, "f", "")
    end
    if co ~= nil and co ~= running() then return (dgetinfo(co, f, what)) end
    if type(f) == "number" then f = f + 1 end -- this function's own frame is level 1
    local info = dgetinfo(f, what)
    return info
  end
end

-- finalizers -----------------------------------------------------------------------------------
do
  local raw_rawset, rawget = rawset, rawget
  local warned = false
  local function typename(v, present)
    if not present then return "no value" end
    return type(v)
  end
  --- `setmetatable`, except that a `__gc` of the metatable does not mark `t` for finalization
  -- (the field is removed for the call and put back: `t` keeps the very metatable).
  function _G.setmetatable(...)
    local t, mt = ...
    if type(t) ~= "table" then
      error(sformat("bad argument #1 to 'setmetatable' (table expected, got %s)",
        typename(t, select("#", ...) >= 1)), 2)
    end
    if mt ~= nil and type(mt) ~= "table" then
      error("bad argument #2 to 'setmetatable' (nil or table expected)", 2)
    end
    local cur = rawmeta(t)
    if cur ~= nil and rawget(cur, "__metatable") ~= nil then
      error("cannot change a protected metatable", 2)
    end
    local gc = mt ~= nil and rawget(mt, "__gc") or nil
    if gc == nil then return setmetatable(t, mt) end
    if not warned then
      warned = true
      H.warn("a metatable with __gc was set: finalizers of a script's objects do not run in agent-block "
        .. "(Lua runs them with hooks off, where neither --cpu-limit nor a signal could end them)")
    end
    raw_rawset(mt, "__gc", nil)
    setmetatable(t, mt)
    raw_rawset(mt, "__gc", gc)
    return t
  end
  -- The metatables the host gives to objects it creates: no `__gc` may be added to them.
  local sealed = setmetatable({}, { __mode = "k" })
  local NO_GC = "cannot add __gc to a metatable of the runtime (finalizers run where neither the CPU limit nor a signal could end them)"
  local SEAL = {
    __newindex = function(mt, k, v)
      if k == "__gc" then error(NO_GC, 2) end
      raw_rawset(mt, k, v)
    end,
    __metatable = "sealed",
  }
  local shared = { H.array_mt, H.object_mt }
  for _, mt in ipairs(R.SHARED_MTS) do shared[#shared + 1] = mt end
  for _, mt in ipairs(shared) do
    sealed[mt] = true
    setmetatable(mt, SEAL)
  end
  function _G.rawset(t, k, v)
    if k == "__gc" and sealed[t] then error(NO_GC, 2) end
    if type(t) ~= "table" then
      error(sformat("bad argument #1 to 'rawset' (table expected, got %s)", type(t)), 2)
    end
    return raw_rawset(t, k, v)
  end
  -- For the host's own Lua (installed on first use, after this prelude): finalizers it needs.
  R.setmetatable_gc = setmetatable
end

function load(chunk, chunkname, _mode, ...)
  if select("#", ...) > 0 then return raw_load(chunk, chunkname, "t", ...) end
  return raw_load(chunk, chunkname, "t")
end

function loadfile(path, _mode, ...)
  local src, err = H.read_source(path)
  if not src then return nil, err end
  src = src:gsub("^#[^\n]*", "")
  if select("#", ...) > 0 then return raw_load(src, "@" .. path, "t", ...) end
  return raw_load(src, "@" .. path, "t")
end

function dofile(path)
  local f, err = loadfile(path)
  if not f then error(err, 2) end
  return f()
end

-- require --------------------------------------------------------------------------------------
local loaded = package.loaded
local preload = package.preload
local LOADING = setmetatable({}, { __name = "module being loaded" })
package.path, package.cpath = "", ""
package.searchers = nil
package.searchpath = nil
package.loadlib = function() return nil, "C modules are not supported", "absent" end

function require(name)
  if type(name) ~= "string" then
    error(sformat("bad argument #1 to 'require' (string expected, got %s)", type(name)), 2)
  end
  local v = loaded[name]
  if v == LOADING then error(sformat("cyclic require: module '%s' requires itself while loading", name), 2) end
  if v ~= nil then return v end
  local loader, where = preload[name], ":preload:"
  if not loader then
    local src, chunkname, info, mode = H.resolve_module(name)
    if not src then
      error(sformat("module '%s' not found:\n\tno field package.preload['%s']%s", name, name, chunkname), 2)
    end
    -- mode "b" only for an embedded module's precompiled bytecode; another Lua build refuses it
    local fn, err = raw_load(src, chunkname, mode)
    if not fn and mode == "b" then fn, err = raw_load((H.resolve_module(name, true)), chunkname, "t") end
    if not fn then error(sformat("error loading module '%s' from file '%s':\n\t%s", name, info, err), 2) end
    loader, where = fn, info
  end
  loaded[name] = LOADING
  local ok, res = pcall(loader, name, where)
  if not ok then
    loaded[name] = nil
    error(res, 0)
  end
  if res ~= nil then
    loaded[name] = res
  elseif loaded[name] == LOADING then
    loaded[name] = true
  end
  return loaded[name], where
end

-- job ------------------------------------------------------------------------------------------
job = job or {}
--- Ends the run with exit 75 (EX_TEMPFAIL): what it needs is not there, nothing was done.
function job.defer(reason)
  if type(reason) ~= "string" then
    error(sformat("job.defer: argument 1 (reason) must be a string, got %s", type(reason)), 2)
  end
  R.request_exit(75, reason)
end
