--- tool.*: the registry of Lua tools a model can call (`agent.run`, `knl` devices, MCP-facing code).
--
-- Owns registration order (`tool.list()` and `tool.schema()` answer in the order names were first
-- registered; re-registering a name replaces its entry in place), the Anthropic tools format of
-- `tool.schema()` (`{ name, description, input_schema, group? }`), and dispatch (`tool.call`), which
-- runs the handler in the calling task so it may make host calls, and lets its error propagate.
-- `tool.revision()` changes whenever a registration changes the registry, so a loop that offers
-- the registry every turn (agent.run) rebuilds its tools list only when it changed.
local R = ...
local type, error, sformat, concat = type, error, string.format, table.concat

tool = tool or {}
local entries, order = {}, {}
local revision = 0

local function arg_error(fn, i, name, expected, v)
  error(sformat("%s: argument %d (%s) must be %s, got %s", fn, i, name, expected, type(v)), 3)
end

--- Registers `handler(input)` under `name`. `schema = { description, input_schema? }`;
-- `meta = { group = "..." }` puts the tool in a group for `agent.run({ tool_groups = ... })`.
function tool.register(name, schema, handler, meta)
  if type(name) ~= "string" or name == "" then arg_error("tool.register", 1, "name", "a non-empty string", name) end
  if type(schema) ~= "table" then arg_error("tool.register", 2, "schema", "a table", schema) end
  if type(schema.description) ~= "string" then
    error(sformat("tool.register: argument 2 (schema) field 'description' must be a string, got %s",
      type(schema.description)), 2)
  end
  if schema.input_schema ~= nil and type(schema.input_schema) ~= "table" then
    error(sformat("tool.register: argument 2 (schema) field 'input_schema' must be a table, got %s",
      type(schema.input_schema)), 2)
  end
  if type(handler) ~= "function" then arg_error("tool.register", 3, "handler", "a function", handler) end
  if meta ~= nil and type(meta) ~= "table" then arg_error("tool.register", 4, "meta", "a table", meta) end
  local group = meta and meta.group
  if group ~= nil and (type(group) ~= "string" or group == "") then
    error(sformat("tool.register: argument 4 (meta) field 'group' must be a non-empty string, got %s", type(group)), 2)
  end
  if not entries[name] then order[#order + 1] = name end
  revision = revision + 1
  entries[name] = {
    name = name,
    description = schema.description,
    input_schema = schema.input_schema or { type = "object", properties = std.json.object() },
    handler = handler,
    group = group,
  }
end

--- Calls the tool `name` with `input`; returns what the handler returns, raises what it raises.
function tool.call(name, input)
  if type(name) ~= "string" then arg_error("tool.call", 1, "name", "a string", name) end
  local e = entries[name]
  if not e then
    error(sformat("tool.call: unknown tool '%s'; known tools: %s", name,
      #order > 0 and concat(order, ", ") or "(none)"), 2)
  end
  return e.handler(input)
end

--- Names of the registered tools, in registration order.
function tool.list()
  local out = std.json.array()
  for i = 1, #order do out[i] = order[i] end
  return out
end

--- The registered tools in the Anthropic tools format, in registration order.
function tool.schema()
  local out = std.json.array()
  for i = 1, #order do
    local e = entries[order[i]]
    out[i] = { name = e.name, description = e.description, input_schema = e.input_schema, group = e.group }
  end
  return out
end

--- A number that changes whenever a registration changes the registry.
function tool.revision() return revision end

--- True when a tool named `name` is registered.
function tool.exists(name) return entries[name] ~= nil end
