--- lspec: the Lua spec runner of agent-block, with a lust-compatible API.
--
-- `describe(name, fn)` groups, `it(name, fn)` is one test, `before(fn)` / `after(fn)` run around
-- every `it` of the group they are declared in (and of nested groups), outermost first.
-- `before_all(fn)` / `after_all(fn)` run once per group, inside a `describe` only: `before_all`
-- just before the group's first `it` (nested groups' included), `after_all` when the group's
-- `describe` body has finished, and only if an `it` of the group ran. Use them for a group's
-- setup and teardown instead of an `it` that asserts nothing.
-- `expect(v)` chains lust's words: `.to`, `.to_not` (also `.not_to`), `.be`, `.a`/`.an`, `.have`,
-- ending in `.equal(x)` (deep), `.be(x)` (identity), `.be.truthy()`, `.be.a(type)`, `.exist()`,
-- `.match(pattern)`, `.have(value)`, `.fail()` and `.fail.with(pattern)`.
-- `run_block(path, opts)` runs a whole block from a spec (`agent-block test` only: the host half
-- is src/cli/spec_run_block.ts). `run_file(path)` runs a spec file; `trap_run_enders()` makes
-- `os.exit` / `job.defer` raise instead of ending the run.
--
-- A failure is reported as the spec's `file:line` (the innermost frame in the file that defined
-- the failing function, else the innermost frame outside lspec), the `describe / it` path, then
-- `expected:` / `actual:` for a failed expectation or `error:` for anything else, and a stack
-- traceback only when more than one frame of the spec's own code was involved. The runner's own
-- frames (this file, the runtime's `=ab:` chunks, C functions) are never shown.
--
-- Invariants: a failing `it` never stops the file; an error outside any `it` is recorded as a
-- failure of the file itself; a failing `before_all` is one failure and every `it` of its group
-- then fails as not run; a failing `after_all` is a failure (never swallowed); results are plain
-- data (`results()`), so a host can count them. `new()` makes a separate runner with its own
-- groups and results (lspec's own specs drive one). Specs need no network and no keys: they run
-- in the same host as blocks, with `std.*` available. A failed expectation raises a plain string
-- (`file:line: expected 1 to equal 2`, as lust's do), so `pcall` and `.fail.with` see text; the
-- expected and actual values travel beside it, to the runner that catches that very string.
local M = {}

local getinfo, xpcall, error, type, tostring, getmetatable, ipairs, rawequal =
  debug.getinfo, xpcall, error, type, tostring, getmetatable, ipairs, rawequal
local sformat, ssub = string.format, string.sub

--- This file's chunk source: its frames are the runner's, never the spec's.
local SELF = getinfo(1, "S").source

--- Whether frames of `source` are the runner's or the runtime's (left out of every report).
local function internal(source)
  return source == SELF or ssub(source, 1, 4) == "=ab:"
end

local function fmt(v)
  if type(v) == "string" then return sformat("%q", v) end
  if type(v) == "table" then
    local ok, s = pcall(std.json.encode, v)
    if ok then return s end
  end
  return tostring(v)
end

--- `s` when it is valid UTF-8, else with each byte above 127 written `\ddd` (a report is JSON text
--- on its way to the host, and one stray byte must not cost the whole file's results).
local function utf8_safe(s)
  if s == nil or utf8.len(s) then return s end
  return (s:gsub("[\128-\255]", function(c) return sformat("\\%d", c:byte()) end))
end

--- The text of a raised value: a string as it is, a table with `__tostring` through it, any other
--- table as JSON.
local function error_text(e)
  if type(e) == "string" then return e end
  local mt = getmetatable(e)
  if type(e) == "table" and not (type(mt) == "table" and mt.__tostring) then return fmt(e) end
  return tostring(e)
end

-- The expectation failure being raised: { text, expected, actual } (set by `check`, matched by
-- the handler that catches `text`).
local raising
-- The full name of the `it` running now, in any runner; nil between tests.
local running_it

local function frame_name(info)
  if info.what == "main" then return "main chunk" end
  if info.name then return sformat("function '%s'", info.name) end
  return sformat("function <%s:%d>", info.short_src, info.linedefined)
end

--- An xpcall message handler for running `fn`: turns what was raised into a failure record
--- `{ error, where, expected?, actual?, frames }`. `frames` are the stack between the raise and `fn`
--- (included) without the runner's; `where` is the innermost of them in `fn`'s own file, else the
--- innermost of them.
local function catcher(fn)
  -- `fn`'s frame is known by where it was defined: the block's `debug.getinfo` hands out no
  -- functions (no "f" option), so frames are matched by source and first line.
  local def = getinfo(fn, "S")
  local home = def.source
  local function is_fn(info) return info.source == home and info.linedefined == def.linedefined end
  return function(e)
    local frames, where, first = {}, nil, nil
    local level = 2
    while true do
      local info = getinfo(level, "Sln")
      if not info or (info.what == "C" and info.name == "xpcall") then break end
      if info.what ~= "C" and not internal(info.source) then
        local pos = info.currentline > 0 and sformat("%s:%d", info.short_src, info.currentline) or info.short_src
        frames[#frames + 1] = pos .. ": in " .. frame_name(info)
        if not where and info.source == home then where = pos end
        first = first or pos
      end
      if is_fn(info) then break end
      level = level + 1
    end
    local rec = { error = error_text(e), where = where or first, frames = frames }
    if raising and rawequal(e, raising.text) then rec.expected, rec.actual = raising.expected, raising.actual end
    return rec
  end
end

--- The report lines of failure `rec`: of a test named `name`, or of the spec file (`name` nil).
local function report_lines(name, rec)
  local lines = {}
  local function add(text)
    for l in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = l end
  end
  if name == nil then
    add(rec.error)
  else
    add(rec.where and (rec.where .. ": " .. name) or name)
    if rec.expected ~= nil then
      add("expected: " .. rec.expected)
      add("  actual: " .. rec.actual)
    else
      local msg, prefix = rec.error, rec.where and (rec.where .. ": ")
      if prefix and ssub(msg, 1, #prefix) == prefix then msg = ssub(msg, #prefix + 1) end
      add("error: " .. msg)
    end
  end
  if rec.frames and #rec.frames > 1 then
    add("stack traceback:")
    for _, f in ipairs(rec.frames) do add("  " .. f) end
  end
  return lines
end

--- A runner: describe/it/hooks with their own groups and results. The module is one of them.
local function new_runner()
  local R = {}
  local groups = { { name = nil, befores = {}, afters = {}, before_alls = {}, after_alls = {} } }
  local results = { passed = 0, failed = 0, failures = {} }
  local out = {}

  local function emit(line) out[#out + 1] = utf8_safe(line) end
  local function indent() return string.rep("  ", #groups - 1) end

  local function full_name(name, depth)
    local parts = {}
    for i = 2, depth or #groups do parts[#parts + 1] = tostring(groups[i].name) end
    if name ~= nil then parts[#parts + 1] = tostring(name) end
    return table.concat(parts, " / ")
  end

  --- Records failure `rec` of `name` (nil: the spec file) and reports it under the line `label`.
  local function fail(name, rec, label)
    results.failed = results.failed + 1
    results.failures[#results.failures + 1] = {
      name = utf8_safe(name or "(spec file)"),
      error = utf8_safe(rec.error),
      where = utf8_safe(rec.where),
      expected = utf8_safe(rec.expected),
      actual = utf8_safe(rec.actual),
    }
    local pad = indent()
    emit(pad .. "FAIL " .. label)
    for _, l in ipairs(report_lines(name, rec)) do emit(pad .. "  " .. l) end
  end

  local function need_function(what, fn)
    if type(fn) ~= "function" then error(what .. ": fn must be a function, got " .. type(fn), 3) end
  end

  function R.describe(name, fn)
    need_function("describe(name, fn)", fn)
    emit(indent() .. tostring(name))
    local g = { name = name, befores = {}, afters = {}, before_alls = {}, after_alls = {}, entered = false }
    groups[#groups + 1] = g
    local ok, rec = xpcall(fn, catcher(fn))
    if g.entered then
      for _, a in ipairs(g.after_alls) do
        local aok, arec = xpcall(a, catcher(a))
        if not aok then fail(full_name("(after_all)"), arec, "(after_all of " .. tostring(name) .. ")") end
      end
    end
    groups[#groups] = nil
    if not ok then fail(full_name(name) .. " (describe)", rec, tostring(name) .. " (error while describing)") end
  end

  local function hook(kind, list)
    return function(fn)
      if type(fn) ~= "function" then error(kind .. "(fn): fn must be a function, got " .. type(fn), 2) end
      if #groups == 1 and (kind == "before_all" or kind == "after_all") then
        error(kind .. "(fn) must be called inside describe", 2)
      end
      local g = groups[#groups]
      g[list][#g[list] + 1] = fn
    end
  end
  R.before = hook("before", "befores")
  R.after = hook("after", "afters")
  R.before_all = hook("before_all", "before_alls")
  R.after_all = hook("after_all", "after_alls")

  --- Runs the before_all hooks of every group not entered yet, outermost first; the name of the
  --- first group whose setup failed (now or earlier), or nil.
  local function enter()
    for i = 2, #groups do
      local g = groups[i]
      if not g.entered then
        g.entered = true
        for _, b in ipairs(g.before_alls) do
          local ok, rec = xpcall(b, catcher(b))
          if not ok then
            g.setup_failed = true
            fail(full_name("(before_all)", i), rec, "(before_all of " .. tostring(g.name) .. ")")
            break
          end
        end
      end
      if g.setup_failed then return tostring(g.name) end
    end
    return nil
  end

  function R.it(name, fn)
    need_function("it(name, fn)", fn)
    local full = full_name(name)
    local broken = enter()
    if broken then
      return fail(full, { error = "not run: before_all of '" .. broken .. "' failed" }, tostring(name))
    end
    local outer = running_it
    running_it, raising = full, nil
    local ok, rec = true, nil
    for i = 1, #groups do
      for _, b in ipairs(groups[i].befores) do
        if ok then ok, rec = xpcall(b, catcher(b), name) end
      end
    end
    if ok then ok, rec = xpcall(fn, catcher(fn)) end
    for i = #groups, 1, -1 do
      for _, a in ipairs(groups[i].afters) do
        local aok, arec = xpcall(a, catcher(a), name)
        if ok and not aok then ok, rec = aok, arec end
      end
    end
    running_it = outer
    if ok then
      results.passed = results.passed + 1
      emit(indent() .. "PASS " .. tostring(name))
    else
      fail(full, rec, tostring(name))
    end
  end

  --- Records an error raised outside of any `it` (while loading the spec file): a message, or a
  --- failure record.
  function R.file_error(err)
    local rec = type(err) == "table" and getmetatable(err) == nil and type(err.error) == "string" and err
      or { error = error_text(err) }
    fail(nil, rec, "(error outside of any it)")
  end

  --- Loads and runs the spec file at `path`; an error outside of any `it` is a failure of the file.
  function R.run_file(path)
    local chunk, err = loadfile(path)
    if not chunk then return R.file_error(err) end
    local ok, rec = xpcall(chunk, catcher(chunk))
    if not ok then R.file_error(rec) end
  end

  --- Counts and failures so far; `output` holds the report lines.
  function R.results()
    return { passed = results.passed, failed = results.failed, failures = results.failures, output = out }
  end

  return R
end

-- expect ----------------------------------------------------------------------------------------

local function deep_equal(a, b, eps)
  if a == b then return true end
  if type(a) == "number" and type(b) == "number" and eps then return math.abs(a - b) <= eps end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  for k, v in pairs(a) do if not deep_equal(v, b[k], eps) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local Assertion = {}
local matchers = {}

local function new(value, negate) return setmetatable({ value = value, negate = negate }, Assertion) end

--- `file:line: ` of the innermost Lua frame outside the runner (an expectation's position), or "".
local function user_position()
  local level = 2
  while true do
    local info = getinfo(level, "Sl")
    if not info then return "" end
    if info.what ~= "C" and not internal(info.source) and info.currentline > 0 then
      return sformat("%s:%d: ", info.short_src, info.currentline)
    end
    level = level + 1
  end
end

--- Passes when `cond` holds (fails when it holds, negated), else raises `msg` (`negmsg`) at the
--- spec's line, with `expected` (`negexpected`) and `actual` for the report.
local function check(self, cond, msg, negmsg, expected, negexpected, actual)
  if self.negate then cond = not cond end
  if not cond then
    local text = user_position() .. (self.negate and negmsg or msg)
    raising = { text = text, expected = self.negate and negexpected or expected, actual = actual }
    error(text, 0)
  end
  return self
end

Assertion.__index = function(self, k)
  if k == "to" or k == "have_been" or k == "a_value" then return self end
  if k == "to_not" or k == "not_to" then return new(self.value, not self.negate) end
  if k == "be" then
    return setmetatable({}, {
      __index = self,
      __call = function(_, x)
        return check(self, rawequal(self.value, x) or self.value == x,
          "expected " .. fmt(self.value) .. " to be " .. fmt(x),
          "expected " .. fmt(self.value) .. " to not be " .. fmt(x),
          fmt(x), "not " .. fmt(x), fmt(self.value))
      end,
    })
  end
  if k == "fail" then
    local function run(pattern)
      local v = self.value
      if type(v) ~= "function" then error("expect(...).to.fail(): the value must be a function, got " .. type(v), 3) end
      local ok, err = pcall(v)
      local cond = not ok and (pattern == nil or tostring(err):find(pattern) ~= nil)
      local got = ok and "no error" or ("an error: " .. fmt(error_text(err)))
      return check(self, cond,
        pattern and ("expected function to fail with " .. fmt(pattern) .. (ok and ", but it succeeded" or ", but it failed with " .. fmt(tostring(err))))
          or "expected function to fail, but it succeeded",
        "expected function to not fail, but it failed with " .. fmt(tostring(err)),
        pattern and ("an error matching " .. fmt(pattern)) or "an error",
        pattern and ("no error matching " .. fmt(pattern)) or "no error",
        got)
    end
    return setmetatable({ with = function(pattern) return run(pattern) end }, {
      __call = function() return run(nil) end,
    })
  end
  local m = matchers[k]
  if m then return function(...) return m(self, ...) end end
  return nil
end

function matchers.equal(self, x, eps)
  return check(self, deep_equal(self.value, x, eps),
    "expected " .. fmt(self.value) .. " to equal " .. fmt(x),
    "expected " .. fmt(self.value) .. " to not equal " .. fmt(x),
    fmt(x) .. (eps and (" (within " .. tostring(eps) .. ")") or ""), "not " .. fmt(x), fmt(self.value))
end
matchers.equals = matchers.equal

function matchers.truthy(self)
  return check(self, self.value and true or false,
    "expected " .. fmt(self.value) .. " to be truthy", "expected " .. fmt(self.value) .. " to not be truthy",
    "a truthy value", "false or nil", fmt(self.value))
end

function matchers.a(self, t)
  local actual = type(self.value)
  if actual == "userdata" and io.type(self.value) then actual = "file" end
  return check(self, actual == t or (t == "file" and io.type(self.value) ~= nil),
    "expected " .. fmt(self.value) .. " to be a " .. tostring(t) .. ", got " .. actual,
    "expected " .. fmt(self.value) .. " to not be a " .. tostring(t),
    "a " .. tostring(t), "not a " .. tostring(t), fmt(self.value) .. " (a " .. actual .. ")")
end
matchers.an = matchers.a

function matchers.exist(self)
  return check(self, self.value ~= nil, "expected value to exist", "expected " .. fmt(self.value) .. " to not exist",
    "a value other than nil", "nil", fmt(self.value))
end

function matchers.match(self, pattern)
  local s = tostring(self.value)
  return check(self, s:find(pattern) ~= nil,
    "expected " .. fmt(s) .. " to match " .. fmt(pattern), "expected " .. fmt(s) .. " to not match " .. fmt(pattern),
    "a string matching " .. fmt(pattern), "a string not matching " .. fmt(pattern), fmt(self.value))
end

function matchers.have(self, x)
  local found = false
  if type(self.value) == "table" then
    for _, v in pairs(self.value) do if deep_equal(v, x) then found = true break end end
  end
  return check(self, found, "expected " .. fmt(self.value) .. " to contain " .. fmt(x),
    "expected " .. fmt(self.value) .. " to not contain " .. fmt(x),
    "a table containing " .. fmt(x), "a table not containing " .. fmt(x), fmt(self.value))
end

function M.expect(v) return new(v, false) end

for k, v in pairs(new_runner()) do M[k] = v end
M.new = new_runner

--- Makes `os.exit` and `job.defer` raise an error saying what was called, at the caller's line,
--- instead of ending the run: a spec file has to run to its end to report. `agent-block test`
--- calls it before loading a spec file.
function M.trap_run_enders()
  local function refuse(call)
    error(call .. (running_it and " called inside an it" or " called outside of any it")
      .. ": a spec cannot end the run (lspec.run_block runs a block that does, and reports how it ended)", 3)
  end
  os.exit = function(code) refuse("os.exit(" .. (code == nil and "" or tostring(code)) .. ")") end
  job.defer = function(reason) refuse("job.defer(" .. fmt(reason) .. ")") end
end

--- Runs the block at `path` (a `.lua` file, relative to the project root) or named `path` (as
--- `agent-block -b` finds it) end to end, in a run of its own, and returns how it ended:
--- `{ status, value, reason, code, message, traceback, error, exit_code, stdout, stderr,
--- artifacts, sessions }`. `opts`: `prompt`, `context`, `replay` (a JSON Lines file, relative to
--- the project root, or a list of scripted responses), `env` (variables added to the spec's own),
--- `labels`, `timeout` (seconds). Only under `agent-block test`, which supplies the host half.
function M.run_block(path, opts)
  if type(path) ~= "string" or path == "" then
    error("lspec.run_block: argument 1 (path) must be a block's path or name, got " .. fmt(path), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error("lspec.run_block: argument 2 (opts) must be a table, got " .. type(opts), 2)
  end
  local host = package.preload["lspec.host"]
  if not host then error("lspec.run_block: only available in specs run by `agent-block test`", 2) end
  return host().run_block(path, opts or {})
end

--- Sets describe/it/before/after/before_all/after_all/expect (and `lust`) as globals, as lust
--- users expect.
function M.expose()
  describe, it, before, after, expect = M.describe, M.it, M.before, M.after, M.expect
  before_all, after_all = M.before_all, M.after_all
  lust = M
end

--- The module's pure, I/O-free helpers, for specs (`lspec._test_helpers().deep_equal(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function M._test_helpers()
  return {
    fmt = fmt,
    deep_equal = deep_equal,
    error_text = error_text,
    report_lines = report_lines,
  }
end

return M
