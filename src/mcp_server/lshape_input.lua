-- The input schema of a declared tool whose header says `---@input lshape MODULE[:FIELD]`:
-- loads MODULE with `require` (from the block's directory, as the block would), takes its FIELD
-- (or the module's value itself), checks it is an lshape shape, and returns the JSON Schema it
-- stands for as JSON text:
--   string, number, integer, boolean, null -> { type }; any -> {}; table -> object or array;
--   literal -> const; one_of -> enum; any_of -> anyOf; shape -> object with properties and
--   required (the fields not optional); array_of -> array of items; map_of -> object whose
--   additionalProperties is the value's schema; pattern -> string (a Lua pattern is not a regular
--   expression: the block checks it itself); discriminated -> anyOf of its variants, each with its
--   tag as a const; ref -> $ref to $defs (named schemas, so recursion is kept); a describe()
--   text -> description. A function (func) has no JSON form: an error naming the field.
-- MODULE and FIELD arrive as _ARGS.module, _ARGS.field.
local lshape = require("lshape")
local T = lshape.t
local mod, field = _ARGS.module, _ARGS.field
local value = require(mod)
local where = mod .. (field and (":" .. field) or "")
if field then
  if type(value) ~= "table" then error(string.format("%s: module '%s' returned %s, not a table", where, mod, type(value)), 0) end
  value = value[field]
end
if not T.is_schema(value) then
  error(string.format("%s: not an lshape schema (got %s)", where, type(value)), 0)
end
if value.kind ~= "shape" then
  error(string.format("%s: a tool's input must be an lshape shape (an object), got %s", where, tostring(value.kind)), 0)
end

local defs, pending = {}, {}
local conv

local function with_doc(s, out)
  if s.doc then out.description = s.doc end
  return out
end

function conv(s, path)
  local k = s.kind
  if k == "string" or k == "number" or k == "integer" or k == "boolean" or k == "null" then
    return with_doc(s, { type = k })
  elseif k == "any" then
    return with_doc(s, std.json.object())
  elseif k == "table" then
    return with_doc(s, { type = { "object", "array" } })
  elseif k == "literal" then
    return with_doc(s, { const = s.value })
  elseif k == "one_of" then
    return with_doc(s, { enum = s.values })
  elseif k == "any_of" then
    local opts = {}
    for i, o in ipairs(s.options) do opts[i] = conv(o, path .. "|" .. i) end
    return with_doc(s, { anyOf = opts })
  elseif k == "shape" then
    local props, required = std.json.object(), {}
    local names = {}
    for name in pairs(s.fields) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do
      local f = s.fields[name]
      props[name] = conv(f, path .. "." .. name)
      if not f.opt then required[#required + 1] = name end
    end
    local out = { type = "object", properties = props }
    if #required > 0 then out.required = required end
    return with_doc(s, out)
  elseif k == "array_of" then
    return with_doc(s, { type = "array", items = conv(s.item, path .. "[]") })
  elseif k == "map_of" then
    return with_doc(s, { type = "object", additionalProperties = conv(s.value, path .. "{}") })
  elseif k == "pattern" then
    return with_doc(s, { type = "string" })
  elseif k == "discriminated" then
    local tags = {}
    for tag in pairs(s.variants) do tags[#tags + 1] = tag end
    table.sort(tags, function(a, b) return tostring(a) < tostring(b) end)
    local opts = {}
    for _, tag in ipairs(tags) do
      local v = conv(s.variants[tag], path .. "<" .. tostring(tag) .. ">")
      if v.type == "object" then
        v.properties[s.tag] = { const = tag }
        v.required = v.required or {}
        table.insert(v.required, 1, s.tag)
      end
      opts[#opts + 1] = v
    end
    return with_doc(s, { anyOf = opts })
  elseif k == "ref" then
    if defs[s.ref] == nil and not pending[s.ref] then
      local target = T.resolve(s.ref)
      if not target then error(string.format("%s: %s: no schema named '%s' (lshape.t.named)", where, path, s.ref), 0) end
      pending[s.ref] = true
      defs[s.ref] = conv(target, "#" .. s.ref)
    end
    return with_doc(s, { ["$ref"] = "#/$defs/" .. s.ref })
  end
  error(string.format("%s: %s: an lshape %s has no JSON Schema form", where, path, tostring(k)), 0)
end

local schema = conv(value, "$")
if next(defs) then schema["$defs"] = defs end
return std.json.encode(schema)
