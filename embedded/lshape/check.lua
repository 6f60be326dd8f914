--- lshape.check: validating a value against a schema.
--
-- `check(value, schema, opts?)` returns `true` or `false, reason`, where the reason names the
-- path of the first mismatch (`$.user.age: expected number, got string`). `opts.strict = true`
-- also refuses fields a shape does not declare; `opts.refs` resolves `T.ref` names before the
-- global registry. `assert(value, schema, label?)` raises the reason; `assert_dev` does so only
-- in dev mode (`LSHAPE_CHECK=1`), so hot paths can keep their checks at no cost in production.
--
-- Invariant: checking never mutates the value and never calls a function found in it.
local T = require("lshape.t")
local M = {}
local sformat = string.format
local math_type = math.type

local function describe(v)
  local tv = type(v)
  if tv == "number" then return math_type(v) end
  if tv == "string" then return "string" end
  return tv
end

local function is_sequence(v)
  local n = #v
  for k in pairs(v) do
    if math_type(k) ~= "integer" or k < 1 or k > n then return false end
  end
  return true
end

local function fmt_literal(v) return type(v) == "string" and sformat("%q", v) or tostring(v) end

local walk

-- Paths are built lazily: a node is `{ parent, key, suffix }`, rendered only for a failure, so a
-- value that matches costs no string work.
local function render(path)
  if type(path) == "string" then return path end
  local base = render(path[1])
  local k = path[2]
  local out
  if math_type(k) == "integer" and path.index then out = sformat("%s[%d]", base, k)
  elseif type(k) == "string" and k:match("^[%a_][%w_]*$") then out = base .. "." .. k
  else out = sformat("%s[%s]", base, fmt_literal(k)) end
  return out .. (path[3] or "")
end

local function key_path(path, k, suffix) return { path, k, suffix } end
local function index_path(path, i) return { path, i, index = true } end

-- Sorted field names per shape, computed once (shapes are immutable once built).
local sorted_names = setmetatable({}, { __mode = "k" })
local function names_of(s)
  local names = sorted_names[s]
  if not names then
    names = {}
    for name in pairs(s.fields) do names[#names + 1] = name end
    table.sort(names)
    sorted_names[s] = names
  end
  return names
end

walk = function(v, s, p, opts)
  if v == nil then
    if s.opt then return true end
    if s.kind == "any" then return false, render(p) .. ": expected a value, got nil" end
    return false, sformat("%s: expected %s, got nil", render(p), s.kind == "shape" and "table" or s.kind)
  end
  local k = s.kind
  if k == "any" then return true
  elseif k == "string" or k == "boolean" or k == "table" then
    if type(v) ~= k then return false, sformat("%s: expected %s, got %s", render(p), k, describe(v)) end
    return true
  elseif k == "number" then
    if type(v) ~= "number" then return false, sformat("%s: expected number, got %s", render(p), describe(v)) end
    return true
  elseif k == "integer" then
    if math_type(v) ~= "integer" then return false, sformat("%s: expected integer, got %s", render(p), describe(v)) end
    return true
  elseif k == "func" then
    if type(v) ~= "function" then return false, sformat("%s: expected function, got %s", render(p), describe(v)) end
    return true
  elseif k == "null" then
    if not (std and std.json and std.json.is_null and std.json.is_null(v)) then
      return false, sformat("%s: expected json null, got %s", render(p), describe(v))
    end
    return true
  elseif k == "literal" then
    if v ~= s.value then return false, sformat("%s: expected %s, got %s", render(p), fmt_literal(s.value), fmt_literal(v)) end
    return true
  elseif k == "one_of" then
    for _, x in ipairs(s.values) do if v == x then return true end end
    local shown = {}
    for i, x in ipairs(s.values) do shown[i] = fmt_literal(x) end
    return false, sformat("%s: expected one of %s, got %s", render(p), table.concat(shown, ", "),
      type(v) == "table" and "a table" or fmt_literal(v))
  elseif k == "pattern" then
    if type(v) ~= "string" then return false, sformat("%s: expected string, got %s", render(p), describe(v)) end
    if not v:find(s.pattern) then return false, sformat("%s: %q does not match %q", render(p), v, s.pattern) end
    return true
  elseif k == "any_of" then
    local reasons = {}
    for i, o in ipairs(s.options) do
      local ok, why = walk(v, o, p, opts)
      if ok then return true end
      reasons[i] = why
    end
    return false, sformat("%s: matches none of %d alternatives (%s)", render(p), #s.options, table.concat(reasons, "; "))
  elseif k == "shape" then
    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", render(p), describe(v)) end
    local names = names_of(s)
    for i = 1, #names do
      local name = names[i]
      local ok, why = walk(v[name], s.fields[name], key_path(p, name), opts)
      if not ok then return false, why end
    end
    if opts.strict then
      for key in pairs(v) do
        if type(key) ~= "string" or s.fields[key] == nil then
          return false, sformat("%s: unknown field %s", render(p), fmt_literal(key))
        end
      end
    end
    return true
  elseif k == "array_of" then
    if type(v) ~= "table" then return false, sformat("%s: expected array, got %s", render(p), describe(v)) end
    if not is_sequence(v) then return false, render(p) .. ": expected array, got a table with non-sequence keys" end
    for i = 1, #v do
      local ok, why = walk(v[i], s.item, index_path(p, i), opts)
      if not ok then return false, why end
    end
    return true
  elseif k == "map_of" then
    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", render(p), describe(v)) end
    for key, val in pairs(v) do
      local ok, why = walk(key, s.key, key_path(p, key, " (key)"), opts)
      if not ok then return false, why end
      ok, why = walk(val, s.value, key_path(p, key), opts)
      if not ok then return false, why end
    end
    return true
  elseif k == "discriminated" then
    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", render(p), describe(v)) end
    local tag = v[s.tag]
    local variant = tag ~= nil and s.variants[tag]
    if not variant then
      local known = {}
      for name in pairs(s.variants) do known[#known + 1] = fmt_literal(name) end
      table.sort(known)
      return false, sformat("%s: field '%s' must be one of %s, got %s", render(p), s.tag, table.concat(known, ", "),
        tag == nil and "nil" or fmt_literal(tag))
    end
    return walk(v, variant, p, opts)
  elseif k == "ref" then
    local target = (opts.refs and opts.refs[s.ref]) or T.resolve(s.ref)
    if not target then return false, sformat("%s: unknown schema '%s'", render(p), s.ref) end
    if s.opt and v == nil then return true end
    return walk(v, target, p, opts)
  end
  return false, sformat("%s: unknown schema kind '%s'", render(p), tostring(k))
end

--- `true`, or `false` and the reason the value does not match.
function M.check(value, schema, opts)
  if not T.is_schema(schema) then
    error("lshape.check: argument 2 (schema) must be a schema, got " .. type(schema), 2)
  end
  return walk(value, schema, "$", opts or {})
end

--- Raises `label: reason` when the value does not match; returns the value otherwise.
function M.assert(value, schema, label, opts)
  local ok, why = M.check(value, schema, opts)
  if not ok then error((label and (label .. ": ") or "") .. why, 2) end
  return value
end

--- True when `LSHAPE_CHECK=1`.
function M.is_dev_mode() return os.getenv("LSHAPE_CHECK") == "1" end

--- `assert` in dev mode, nothing otherwise.
function M.assert_dev(value, schema, label, opts)
  if not M.is_dev_mode() then return value end
  local ok, why = M.check(value, schema, opts)
  if not ok then error((label and (label .. ": ") or "") .. why, 2) end
  return value
end

--- The module's pure, I/O-free helpers, for specs (`lshape.check._test_helpers().render(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function M._test_helpers()
  return {
    describe = describe,
    is_sequence = is_sequence,
    fmt_literal = fmt_literal,
    render = render,
  }
end

return M
