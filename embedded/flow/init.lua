--- flow: builders for flow Blueprints (the node kinds and expressions of the flow IR 0.2).
---
--- A `.bp.lua` file (`agent-block flow run x.bp.lua`) returns a Blueprint table built with them;
--- `in`, `then`, `else`, `loop` and `try` are Lua keywords, hence `input`, `on_true`, `on_false`,
--- `loop_` and `try_`. Expressions are tables with methods (`F.p("$.n"):lt(3)`) and operators
--- (`+ - * / %`); a plain value where an expression is expected is a literal, and a string where a
--- path is expected (`out`, `counter`, `bind`, `at`, `err_at`) is that path. `F.obj()` is an empty
--- JSON object and `F.arr()` an empty array (Lua cannot tell `{}` from `{}`).
local F = {}

local E = {}
E.__index = E

local function expr(t)
  return setmetatable(t, E)
end

local function is_expr(v)
  return getmetatable(v) == E
end

--- A value as an expression: an expression as is, anything else a literal.
local function lift(v)
  if is_expr(v) then return v end
  return expr({ op = "lit", value = v })
end

--- A path expression from a string (or a path expression as is).
local function path(v)
  if is_expr(v) then
    assert(v.op == "path", "flow: expected a path, got op " .. tostring(v.op))
    return v
  end
  assert(type(v) == "string", "flow: expected a path string like \"$.x\"")
  return expr({ op = "path", at = v })
end

local function list(t)
  local out = std.json.array({})
  for i, v in ipairs(t or {}) do out[i] = v end
  return out
end

function F.p(at) return path(at) end
F.path = F.p
function F.lit(v) return expr({ op = "lit", value = v }) end
function F.obj(t) return std.json.object(t or {}) end
function F.arr(t) return list(t) end

local function binary(op)
  return function(a, b) return expr({ op = op, lhs = lift(a), rhs = lift(b) }) end
end
for _, op in ipairs({ "eq", "ne", "lt", "lte", "gt", "gte", "add", "sub", "mul", "div", "mod" }) do
  E[op] = binary(op)
  F[op] = binary(op)
end
E.__add, E.__sub, E.__mul, E.__div, E.__mod = E.add, E.sub, E.mul, E.div, E.mod

function F.Not(a) return expr({ op = "not", arg = lift(a) }) end
function F.exists(a) return expr({ op = "exists", arg = lift(a) }) end
function F.len(a) return expr({ op = "len", arg = lift(a) }) end
function F.all(...)
  local args = list({})
  for i, a in ipairs({ ... }) do args[i] = lift(a) end
  return expr({ op = "and", args = args })
end
function F.any(...)
  local args = list({})
  for i, a in ipairs({ ... }) do args[i] = lift(a) end
  return expr({ op = "or", args = args })
end
function F.In(needle, haystack) return expr({ op = "in", needle = lift(needle), haystack = lift(haystack) }) end
function F.call_extern(ref, ...)
  local args = list({})
  for i, a in ipairs({ ... }) do args[i] = lift(a) end
  return expr({ op = "call_extern", ref = ref, args = args })
end
function E:Not() return F.Not(self) end
function E:exists() return F.exists(self) end
function E:len() return F.len(self) end
function E:And(...) return F.all(self, ...) end
function E:Or(...) return F.any(self, ...) end
--- `self` is in the array `haystack`.
function E:isin(haystack) return F.In(self, haystack) end
--- The array `self` holds `needle`.
function E:contains(needle) return F.In(needle, self) end

--- An input: an expression, a path string (starting with `$`), or a literal.
local function input(v)
  if type(v) == "string" and v:sub(1, 1) == "$" then return path(v) end
  return lift(v)
end

--- `step{agent, input, out}`: run `agent` on `input`, write its value at `out`.
function F.step(t)
  return { kind = "step", ref = assert(t.agent or t.ref, "flow.step: agent is required"), ["in"] = input(t.input), out = path(t.out) }
end
--- `seq{node, ...}`: run in order.
function F.seq(t) return { kind = "seq", children = list(t) } end
--- `branch{cond, on_true, on_false}`: `cond` must be a boolean.
function F.branch(t)
  return { kind = "branch", cond = lift(t.cond), ["then"] = t.on_true or F.seq({}), ["else"] = t.on_false or F.seq({}) }
end
--- `loop_{counter, cond, body, max}`.
function F.loop_(t)
  return { kind = "loop", counter = path(t.counter), cond = lift(t.cond == nil and true or t.cond), body = t.body, max = assert(t.max, "flow.loop_: max is required") }
end
--- `fanout{items, bind, body, join, out}` (`join` default `all`).
function F.fanout(t)
  return { kind = "fanout", items = input(t.items), bind = path(t.bind or "$.item"), body = t.body, join = t.join or "all", out = path(t.out) }
end
--- `try_{body, catch, err_at}`.
function F.try_(t)
  return { kind = "try", body = t.body, catch = t.catch or F.seq({}), err_at = t.err_at and path(t.err_at) or nil }
end
--- `assign{at, value}`.
function F.assign(t) return { kind = "assign", at = path(t.at), value = input(t.value) } end

return F
