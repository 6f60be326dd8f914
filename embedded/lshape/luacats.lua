--- lshape.luacats: LuaCATS annotations (`---@class`, `---@field`, `---@alias`) from schemas, so an
-- editor with lua-language-server knows the shapes a module declares.
--
-- `type_of(schema, names?)` is the LuaCATS type expression; `class_for(name, shape, names?)` one
-- class block; `gen(shapes, prefix?)` every class of a `{ Name = shape }` table, sorted by name,
-- each named `prefix .. Name`, references between them (by identity or `T.ref`) written as class
-- names. A shape that is not in `shapes` is written inline as a table literal type.
local M = {}

local function lit(v) return type(v) == "string" and string.format("%q", v) or tostring(v) end

local function lookup(s, names)
  local n = names[s]
  if n == false then return nil end
  if n then return n end
  if s.base then
    local b = names[s.base]
    if b then return b end
  end
end

local function type_of(s, names)
  names = names or {}
  local named = lookup(s, names)
  if named then return named end
  local k = s.kind
  local base
  if k == "string" or k == "number" or k == "integer" or k == "boolean" or k == "table" or k == "any" then base = k
  elseif k == "pattern" then base = "string"
  elseif k == "func" then base = "function"
  elseif k == "null" then base = "lightuserdata"
  elseif k == "literal" then base = lit(s.value)
  elseif k == "one_of" then
    local parts = {}
    for i, v in ipairs(s.values) do parts[i] = lit(v) end
    base = table.concat(parts, "|")
  elseif k == "any_of" then
    local parts = {}
    for i, o in ipairs(s.options) do parts[i] = type_of(o, names) end
    base = table.concat(parts, "|")
  elseif k == "array_of" then
    local inner = type_of(s.item, names)
    base = inner:find("[|%s]") and ("(" .. inner .. ")[]") or (inner .. "[]")
  elseif k == "map_of" then base = string.format("table<%s, %s>", type_of(s.key, names), type_of(s.value, names))
  elseif k == "ref" then base = names[s.ref] or s.ref
  elseif k == "discriminated" then
    local keys = {}
    for name in pairs(s.variants) do keys[#keys + 1] = name end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    local parts = {}
    for i, name in ipairs(keys) do parts[i] = type_of(s.variants[name], names) end
    base = table.concat(parts, "|")
  elseif k == "shape" then
    if s.name and names[s.name] then base = names[s.name]
    else
      local names_sorted = {}
      for name in pairs(s.fields) do names_sorted[#names_sorted + 1] = name end
      table.sort(names_sorted)
      local parts = {}
      for i, name in ipairs(names_sorted) do
        local f = s.fields[name]
        parts[i] = name .. (f.opt and "?" or "") .. ": " .. type_of(f, names):gsub("%?$", "")
      end
      base = "{ " .. table.concat(parts, ", ") .. " }"
    end
  else base = "any" end
  return base
end

--- The LuaCATS type expression of `schema`.
function M.type_of(schema, names) return type_of(schema, names) end

--- One `---@class` block for `shape` named `name`.
function M.class_for(name, shape, names)
  if type(name) ~= "string" then error("lshape.luacats.class_for: argument 1 (name) must be a string", 2) end
  if type(shape) ~= "table" or shape.kind ~= "shape" then
    error("lshape.luacats.class_for: argument 2 (shape) must be a shape schema", 2)
  end
  local lines = {}
  if shape.doc then lines[#lines + 1] = "--- " .. shape.doc end
  lines[#lines + 1] = "---@class " .. name
  local fields = {}
  for fname in pairs(shape.fields) do fields[#fields + 1] = fname end
  table.sort(fields)
  for _, fname in ipairs(fields) do
    local f = shape.fields[fname]
    local line = string.format("---@field %s%s %s", fname, f.opt and "?" or "", type_of(f, names or {}))
    if f.doc then line = line .. " " .. f.doc end
    lines[#lines + 1] = line
  end
  return table.concat(lines, "\n")
end

--- Every class of `shapes` (`{ Name = shape | other schema }`), sorted, named `prefix .. Name`.
-- A schema that is not a shape becomes an `---@alias`.
function M.gen(shapes, prefix)
  if type(shapes) ~= "table" then error("lshape.luacats.gen: argument 1 (shapes) must be a table", 2) end
  prefix = prefix or ""
  local names, order = {}, {}
  for name, s in pairs(shapes) do
    names[s] = prefix .. name
    names[name] = prefix .. name
    order[#order + 1] = name
  end
  table.sort(order)
  local blocks = {}
  for _, name in ipairs(order) do
    local s = shapes[name]
    if s.kind == "shape" then
      blocks[#blocks + 1] = M.class_for(prefix .. name, s, setmetatable({ [s] = false }, { __index = names }))
    else
      local own = setmetatable({ [s] = false }, { __index = names })
      blocks[#blocks + 1] = "---@alias " .. prefix .. name .. " " .. type_of(s, own)
    end
  end
  return table.concat(blocks, "\n\n") .. "\n"
end

return M
