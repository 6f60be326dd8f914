--- lshape.t: schema combinators. A schema is a table `{ kind = ..., ... }` with the `Schema`
-- metatable; nothing about it is hidden, so `lshape.reflect` and `lshape.luacats` read it as data.
--
-- Kinds: string, number, integer, boolean, table, func, any, null, literal, one_of (literal
-- values), any_of (alternatives), shape (fields), array_of, map_of, pattern, discriminated, ref.
-- Every schema answers `:optional()` (a copy that also accepts nil), `:is_optional()`, and
-- `:describe(text)` (a copy carrying a doc string that `luacats` emits as a comment).
--
-- Invariant: combinators never mutate their arguments; `optional` and `describe` copy.
local T = {}
local Schema = {}
Schema.__index = Schema
Schema.__name = "lshape.schema"
T.Schema = Schema

local registry = {}

local function new(s) return setmetatable(s, Schema) end
local function copy(s)
  local c = {}
  for k, v in pairs(s) do c[k] = v end
  c.base = s.base or s -- the schema this one was derived from (luacats names copies by it)
  return setmetatable(c, Schema)
end

--- True when `v` is a schema.
function T.is_schema(v) return getmetatable(v) == Schema end

local function need_schema(fn, i, v)
  if getmetatable(v) ~= Schema then
    error(string.format("lshape.t.%s: argument %d must be a schema, got %s", fn, i, type(v)), 3)
  end
  return v
end

function Schema:optional() local c = copy(self); c.opt = true; return c end
function Schema:is_optional() return self.opt == true end
function Schema:describe(doc)
  if type(doc) ~= "string" then error("lshape: describe: argument 1 (doc) must be a string, got " .. type(doc), 2) end
  local c = copy(self); c.doc = doc; return c
end

T.string = new({ kind = "string" })
T.number = new({ kind = "number" })
T.integer = new({ kind = "integer" })
T.boolean = new({ kind = "boolean" })
T.table = new({ kind = "table" })
T.func = new({ kind = "func" })
T["function"] = T.func
T.any = new({ kind = "any" })
T.null = new({ kind = "null" })

--- Exactly the value `v` (string, number or boolean).
function T.literal(v)
  local tv = type(v)
  if tv ~= "string" and tv ~= "number" and tv ~= "boolean" then
    error("lshape.t.literal: argument 1 must be a string, number or boolean, got " .. tv, 2)
  end
  return new({ kind = "literal", value = v })
end

--- One of the literal values given (as arguments or one list).
function T.one_of(...)
  local values = select("#", ...) == 1 and type((...)) == "table" and (...) or { ... }
  if #values == 0 then error("lshape.t.one_of: at least one value is needed", 2) end
  return new({ kind = "one_of", values = values })
end

--- Any of the schemas given (as arguments or one list).
function T.any_of(...)
  local list = select("#", ...) == 1 and getmetatable((...)) ~= Schema and (...) or { ... }
  for i, s in ipairs(list) do need_schema("any_of", i, s) end
  return new({ kind = "any_of", options = list })
end

--- A table with the given fields; unknown fields pass unless `check` is asked to be strict.
function T.shape(fields, name)
  if type(fields) ~= "table" then error("lshape.t.shape: argument 1 (fields) must be a table, got " .. type(fields), 2) end
  for k, s in pairs(fields) do
    if type(k) ~= "string" then error("lshape.t.shape: field names must be strings", 2) end
    if getmetatable(s) ~= Schema then
      error(string.format("lshape.t.shape: field '%s' must be a schema, got %s", k, type(s)), 2)
    end
  end
  return new({ kind = "shape", fields = fields, name = name })
end

--- Like `shape`, every field optional.
function T.partial(fields, name)
  local s = T.shape(fields, name)
  local f = {}
  for k, v in pairs(s.fields) do f[k] = v:optional() end
  s.fields = f
  return s
end

--- A sequence whose every element matches `item`.
function T.array_of(item) return new({ kind = "array_of", item = need_schema("array_of", 1, item) }) end

--- A table whose keys match `key` and values match `value`.
function T.map_of(key, value)
  return new({ kind = "map_of", key = need_schema("map_of", 1, key), value = need_schema("map_of", 2, value) })
end

--- A string matching the Lua pattern `p`.
function T.pattern(p)
  if type(p) ~= "string" then error("lshape.t.pattern: argument 1 must be a string, got " .. type(p), 2) end
  return new({ kind = "pattern", pattern = p })
end

--- A table whose field `tag` selects the shape it must match: `variants[value_of_tag]`.
function T.discriminated(tag, variants)
  if type(tag) ~= "string" then error("lshape.t.discriminated: argument 1 (tag) must be a string", 2) end
  if type(variants) ~= "table" then error("lshape.t.discriminated: argument 2 (variants) must be a table", 2) end
  for k, s in pairs(variants) do
    if getmetatable(s) ~= Schema then
      error(string.format("lshape.t.discriminated: variant '%s' must be a schema", tostring(k)), 2)
    end
  end
  return new({ kind = "discriminated", tag = tag, variants = variants })
end

--- A schema by name, resolved when checked (so shapes may refer to themselves).
function T.ref(name)
  if type(name) ~= "string" then error("lshape.t.ref: argument 1 (name) must be a string", 2) end
  return new({ kind = "ref", ref = name })
end

--- Registers `schema` under `name` for `T.ref` and names it for `luacats`; returns it.
function T.named(name, schema)
  need_schema("named", 2, schema)
  if type(name) ~= "string" then error("lshape.t.named: argument 1 (name) must be a string", 2) end
  registry[name] = schema
  if schema.name == nil then schema.name = name end
  return schema
end

--- The schema registered under `name`, or nil.
function T.resolve(name) return registry[name] end

--- Shorthand for `s:optional()`.
function T.optional(s) return need_schema("optional", 1, s):optional() end

return T
