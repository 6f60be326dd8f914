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

local function key_path(path, k)
  if type(k) == "string" and k:match("^[%a_][%w_]*$") then return path .. "." .. k end
  return sformat("%s[%s]", path, fmt_literal(k))
end

walk = function(v, s, path, opts)
  if v == nil then
    if s.opt then return true end
    if s.kind == "any" then return false, path .. ": expected a value, got nil" end
    return false, sformat("%s: expected %s, got nil", path, s.kind == "shape" and "table" or s.kind)
  end
  local k = s.kind
  if k == "any" then return true
  elseif k == "string" or k == "boolean" or k == "table" then
    if type(v) ~= k then return false, sformat("%s: expected %s, got %s", path, k, describe(v)) end
    return true
  elseif k == "number" then
    if type(v) ~= "number" then return false, sformat("%s: expected number, got %s", path, describe(v)) end
    return true
  elseif k == "integer" then
    if math_type(v) ~= "integer" then return false, sformat("%s: expected integer, got %s", path, describe(v)) end
    return true
  elseif k == "func" then
    if type(v) ~= "function" then return false, sformat("%s: expected function, got %s", path, describe(v)) end
    return true
  elseif k == "null" then
    if not (std and std.json and std.json.is_null and std.json.is_null(v)) then
      return false, sformat("%s: expected json null, got %s", path, describe(v))
    end
    return true
  elseif k == "literal" then
    if v ~= s.value then return false, sformat("%s: expected %s, got %s", path, fmt_literal(s.value), fmt_literal(v)) end
    return true
  elseif k == "one_of" then
    for _, x in ipairs(s.values) do if v == x then return true end end
    local shown = {}
    for i, x in ipairs(s.values) do shown[i] = fmt_literal(x) end
    return false, sformat("%s: expected one of %s, got %s", path, table.concat(shown, ", "),
      type(v) == "table" and "a table" or fmt_literal(v))
  elseif k == "pattern" then
    if type(v) ~= "string" then return false, sformat("%s: expected string, got %s", path, describe(v)) end
    if not v:find(s.pattern) then return false, sformat("%s: %q does not match %q", path, v, s.pattern) end
    return true
  elseif k == "any_of" then
    local reasons = {}
    for i, o in ipairs(s.options) do
      local ok, why = walk(v, o, path, opts)
      if ok then return true end
      reasons[i] = why
    end
    return false, sformat("%s: matches none of %d alternatives (%s)", path, #s.options, table.concat(reasons, "; "))
  elseif k == "shape" then
    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", path, describe(v)) end
    local names = {}
    for name in pairs(s.fields) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local ok, why = walk(v[name], s.fields[name], key_path(path, name), opts)
      if not ok then return false, why end
    end
    if opts.strict then
      for key in pairs(v) do
        if type(key) ~= "string" or s.fields[key] == nil then
          return false, sformat("%s: unknown field %s", path, fmt_literal(key))
        end
      end
    end
    return true
  elseif k == "array_of" then
    if type(v) ~= "table" then return false, sformat("%s: expected array, got %s", path, describe(v)) end
    if not is_sequence(v) then return false, path .. ": expected array, got a table with non-sequence keys" end
    for i = 1, #v do
      local ok, why = walk(v[i], s.item, sformat("%s[%d]", path, i), opts)
      if not ok then return false, why end
    end
    return true
  elseif k == "map_of" then
    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", path, describe(v)) end
    for key, val in pairs(v) do
      local ok, why = walk(key, s.key, key_path(path, key) .. " (key)", opts)
      if not ok then return false, why end
      ok, why = walk(val, s.value, key_path(path, key), opts)
      if not ok then return false, why end
    end
    return true
  elseif k == "discriminated" then
    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", path, describe(v)) end
    local tag = v[s.tag]
    local variant = tag ~= nil and s.variants[tag]
    if not variant then
      local known = {}
      for name in pairs(s.variants) do known[#known + 1] = fmt_literal(name) end
      table.sort(known)
      return false, sformat("%s: field '%s' must be one of %s, got %s", path, s.tag, table.concat(known, ", "),
        tag == nil and "nil" or fmt_literal(tag))
    end
    return walk(v, variant, path, opts)
  elseif k == "ref" then
    local target = (opts.refs and opts.refs[s.ref]) or T.resolve(s.ref)
    if not target then return false, sformat("%s: unknown schema '%s'", path, s.ref) end
    if s.opt and v == nil then return true end
    return walk(v, target, path, opts)
  end
  return false, sformat("%s: unknown schema kind '%s'", path, tostring(k))
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

return M
