--- lshape.reflect: reading a schema as data.
--
-- `fields(shape)` lists a shape's fields sorted by name as `{ name, schema, optional, doc }`;
-- `walk(schema, fn)` visits every node depth-first as `fn(node, path)` (path like `$.a[]`), not
-- following `ref`s (so recursive schemas terminate); `type_name(schema)` is a short human name.
local M = {}

function M.fields(shape)
  if type(shape) ~= "table" or shape.kind ~= "shape" then
    error("lshape.reflect.fields: argument 1 must be a shape schema, got " .. (type(shape) == "table" and tostring(shape.kind) or type(shape)), 2)
  end
  local out = {}
  for name, s in pairs(shape.fields) do
    out[#out + 1] = { name = name, schema = s, optional = s.opt == true, doc = s.doc }
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

local function walk(s, path, fn)
  fn(s, path)
  local k = s.kind
  if k == "shape" then
    for _, f in ipairs(M.fields(s)) do walk(f.schema, path .. "." .. f.name, fn) end
  elseif k == "array_of" then walk(s.item, path .. "[]", fn)
  elseif k == "map_of" then walk(s.key, path .. "{key}", fn); walk(s.value, path .. "{}", fn)
  elseif k == "any_of" then for i, o in ipairs(s.options) do walk(o, path .. "|" .. i, fn) end
  elseif k == "discriminated" then
    local names = {}
    for name in pairs(s.variants) do names[#names + 1] = name end
    table.sort(names, function(a, b) return tostring(a) < tostring(b) end)
    for _, name in ipairs(names) do walk(s.variants[name], path .. "<" .. tostring(name) .. ">", fn) end
  end
end

function M.walk(schema, fn)
  if type(fn) ~= "function" then error("lshape.reflect.walk: argument 2 (fn) must be a function", 2) end
  walk(schema, "$", fn)
end

function M.type_name(s)
  if s.name then return s.name end
  if s.kind == "ref" then return s.ref end
  if s.kind == "array_of" then return M.type_name(s.item) .. "[]" end
  return s.kind
end

return M
