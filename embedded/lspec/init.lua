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
--
-- Invariants: a failing `it` never stops the file; an error outside any `it` is recorded as a
-- failure of the file itself; a failing `before_all` is one failure and every `it` of its group
-- then fails as not run; a failing `after_all` is a failure (never swallowed); results are plain
-- data (`results()`), so a host can count them. `new()` makes a separate runner with its own
-- groups and results (lspec's own specs drive one). Specs need no network and no keys: they run
-- in the same host as blocks, with `std.*` available.
local M = {}

--- A runner: describe/it/hooks with their own groups and results. The module is one of them.
local function new_runner()
  local R = {}
  local groups = { { name = nil, befores = {}, afters = {}, before_alls = {}, after_alls = {} } }
  local results = { passed = 0, failed = 0, failures = {} }
  local out = {}

  local function emit(line) out[#out + 1] = line end
  local function indent() return string.rep("  ", #groups - 1) end

  local function full_name(name, depth)
    local parts = {}
    for i = 2, depth or #groups do parts[#parts + 1] = tostring(groups[i].name) end
    if name ~= nil then parts[#parts + 1] = tostring(name) end
    return table.concat(parts, " / ")
  end

  local function fail(name, err, line)
    results.failed = results.failed + 1
    local msg = tostring(err)
    results.failures[#results.failures + 1] = { name = name, error = msg }
    emit(indent() .. "FAIL " .. line)
    emit(indent() .. "  " .. msg:gsub("\n", "\n" .. indent() .. "  "))
  end

  function R.describe(name, fn)
    emit(indent() .. tostring(name))
    local g = { name = name, befores = {}, afters = {}, before_alls = {}, after_alls = {}, entered = false }
    groups[#groups + 1] = g
    local ok, err = xpcall(fn, debug.traceback)
    if g.entered then
      for _, a in ipairs(g.after_alls) do
        local aok, aerr = xpcall(a, debug.traceback)
        if not aok then fail(full_name("(after_all)"), aerr, "(after_all of " .. tostring(name) .. ")") end
      end
    end
    groups[#groups] = nil
    if not ok then
      results.failed = results.failed + 1
      results.failures[#results.failures + 1] = { name = tostring(name) .. " (describe)", error = tostring(err) }
      emit(indent() .. "  FAIL " .. tostring(name) .. " (error while describing)")
      emit(indent() .. "    " .. tostring(err):gsub("\n", "\n" .. indent() .. "    "))
    end
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
          local ok, err = xpcall(b, debug.traceback)
          if not ok then
            g.setup_failed = true
            fail(full_name("(before_all)", i), err, "(before_all of " .. tostring(g.name) .. ")")
            break
          end
        end
      end
      if g.setup_failed then return tostring(g.name) end
    end
    return nil
  end

  function R.it(name, fn)
    local broken = enter()
    if broken then
      return fail(full_name(name), "not run: before_all of '" .. broken .. "' failed", tostring(name))
    end
    local ok, err = true, nil
    for i = 1, #groups do
      for _, b in ipairs(groups[i].befores) do
        if ok then ok, err = xpcall(b, debug.traceback, name) end
      end
    end
    if ok then ok, err = xpcall(fn, debug.traceback) end
    for i = #groups, 1, -1 do
      for _, a in ipairs(groups[i].afters) do
        local aok, aerr = xpcall(a, debug.traceback, name)
        if ok and not aok then ok, err = aok, aerr end
      end
    end
    if ok then
      results.passed = results.passed + 1
      emit(indent() .. "PASS " .. tostring(name))
    else
      fail(full_name(name), err, tostring(name))
    end
  end

  --- Records an error raised outside of any `it` (while loading the spec file).
  function R.file_error(err)
    results.failed = results.failed + 1
    results.failures[#results.failures + 1] = { name = "(spec file)", error = tostring(err) }
    emit("FAIL (error outside of it): " .. tostring(err))
  end

  --- Counts and failures so far; `output` holds the report lines.
  function R.results()
    return { passed = results.passed, failed = results.failed, failures = results.failures, output = out }
  end

  return R
end

-- expect ----------------------------------------------------------------------------------------

local function fmt(v)
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) == "table" then
    local ok, s = pcall(std.json.encode, v)
    if ok then return s end
  end
  return tostring(v)
end

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

local function check(self, cond, msg, negmsg)
  if self.negate then cond = not cond end
  if not cond then error(self.negate and negmsg or msg, 3) end
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
          "expected " .. fmt(self.value) .. " to not be " .. fmt(x))
      end,
    })
  end
  if k == "fail" then
    local function run(pattern)
      local v = self.value
      if type(v) ~= "function" then error("expect(...).to.fail(): the value must be a function, got " .. type(v), 3) end
      local ok, err = pcall(v)
      local cond = not ok and (pattern == nil or tostring(err):find(pattern) ~= nil)
      return check(self, cond,
        pattern and ("expected function to fail with " .. fmt(pattern) .. (ok and ", but it succeeded" or ", but it failed with " .. fmt(tostring(err))))
          or "expected function to fail, but it succeeded",
        "expected function to not fail, but it failed with " .. fmt(tostring(err)))
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
    "expected " .. fmt(self.value) .. " to not equal " .. fmt(x))
end
matchers.equals = matchers.equal

function matchers.truthy(self)
  return check(self, self.value and true or false,
    "expected " .. fmt(self.value) .. " to be truthy", "expected " .. fmt(self.value) .. " to not be truthy")
end

function matchers.a(self, t)
  local actual = type(self.value)
  if actual == "userdata" and io.type(self.value) then actual = "file" end
  return check(self, actual == t or (t == "file" and io.type(self.value) ~= nil),
    "expected " .. fmt(self.value) .. " to be a " .. tostring(t) .. ", got " .. actual,
    "expected " .. fmt(self.value) .. " to not be a " .. tostring(t))
end
matchers.an = matchers.a

function matchers.exist(self)
  return check(self, self.value ~= nil, "expected value to exist", "expected " .. fmt(self.value) .. " to not exist")
end

function matchers.match(self, pattern)
  local s = tostring(self.value)
  return check(self, s:find(pattern) ~= nil,
    "expected " .. fmt(s) .. " to match " .. fmt(pattern), "expected " .. fmt(s) .. " to not match " .. fmt(pattern))
end

function matchers.have(self, x)
  local found = false
  if type(self.value) == "table" then
    for _, v in pairs(self.value) do if deep_equal(v, x) then found = true break end end
  end
  return check(self, found, "expected " .. fmt(self.value) .. " to contain " .. fmt(x),
    "expected " .. fmt(self.value) .. " to not contain " .. fmt(x))
end

function M.expect(v) return new(v, false) end

for k, v in pairs(new_runner()) do M[k] = v end
M.new = new_runner

--- Sets describe/it/before/after/before_all/after_all/expect (and `lust`) as globals, as lust
--- users expect.
function M.expose()
  describe, it, before, after, expect = M.describe, M.it, M.before, M.after, M.expect
  before_all, after_all = M.before_all, M.after_all
  lust = M
end

return M
