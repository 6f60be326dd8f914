--- knl_adapter: what a device is built from — Ports for the model, ToolPorts for the tools.
--
-- Owns:
-- - `adapter.tools({ ... })`: one ToolPort from flat specs `{ name, description, input_schema,
--   handler }` and/or other ToolPorts (anything with `:list()` and `:call(name, input, ctx)`),
--   in the order given; a name given twice is an error naming both places.
-- - `adapter.registry()`: a ToolPort over the global `tool.*` registry; `adapter.mcp(server)` one
--   over a connected MCP server's tools (so MCP calls are recorded like Lua tool calls).
-- - `adapter.anthropic`, `adapter.openai`, `adapter.replay`: the provider Ports of `llm_proto`
--   (`require("llm_proto.port")`), reached on first access so that a script that never names a
--   provider never loads one. Each is a Port class: `P:open(opts)` returns a port with
--   `port.profile` and `port:chat(request)` answering the normalised `knl_types.Response`.
--
-- A ToolPort's `call` runs the handler in the calling task (it may make host calls) and lets its
-- error propagate: the kernel's beat turns it into an `is_error` tool result.
local types = require("knl_types")
local lcheck = require("lshape.check").check
local sformat = string.format

local M = {}

local ToolPort = {}
ToolPort.__index = ToolPort
ToolPort.__name = "knl_adapter.ToolPort"

--- The specs `{ name, description, input_schema }` in order.
function ToolPort:list()
  local out = std.json.array()
  for i, e in ipairs(self._order) do
    out[i] = { name = e.name, description = e.description, input_schema = e.input_schema }
  end
  return out
end

--- Calls tool `name` with `input`; `ctx` = { session, beat, id } (id: the model's tool_use id)
-- when called by a beat.
function ToolPort:call(name, input, ctx)
  local e = self._by_name[name]
  if not e then
    local known = {}
    for i, x in ipairs(self._order) do known[i] = x.name end
    error(sformat("unknown tool '%s'; this device has: %s", tostring(name),
      #known > 0 and table.concat(known, ", ") or "(none)"), 2)
  end
  if e.port then return e.port:call(name, input, ctx) end
  return e.handler(input, ctx)
end

local function is_toolport(v)
  return type(v) == "table" and type(v.list) == "function" and type(v.call) == "function"
end
M.is_toolport = is_toolport

--- One ToolPort from flat specs and ToolPorts.
function M.tools(list)
  if type(list) ~= "table" then
    error("knl_adapter.tools: argument 1 (tools) must be a list of tool specs or ToolPorts, got " .. type(list), 2)
  end
  if is_toolport(list) then return list end
  local self = setmetatable({ _order = {}, _by_name = {} }, ToolPort)
  local function add(e, where)
    local prev = self._by_name[e.name]
    if prev then
      error(sformat("knl_adapter.tools: tool '%s' is given twice (%s and %s)", e.name, prev.where, where), 3)
    end
    e.where = where
    self._by_name[e.name] = e
    self._order[#self._order + 1] = e
  end
  for i, item in ipairs(list) do
    local where = sformat("entry %d", i)
    if is_toolport(item) then
      for _, spec in ipairs(item:list()) do
        add({ name = spec.name, description = spec.description, input_schema = spec.input_schema, port = item }, where)
      end
    elseif type(item) == "table" then
      local ok, why = lcheck(item, types.ToolSpec)
      if not ok then error(sformat("knl_adapter.tools: %s: %s", where, why), 2) end
      if type(item.handler) ~= "function" then
        error(sformat("knl_adapter.tools: %s ('%s'): field 'handler' must be a function, got %s", where,
          item.name, type(item.handler)), 2)
      end
      add({
        name = item.name,
        description = item.description,
        input_schema = item.input_schema or { type = "object", properties = std.json.object() },
        handler = item.handler,
      }, where)
    else
      error(sformat("knl_adapter.tools: %s must be a tool spec or a ToolPort, got %s", where, type(item)), 2)
    end
  end
  return self
end

--- A ToolPort over the global `tool.*` registry (what `tool.register` registered).
function M.registry()
  return {
    list = function()
      local out = std.json.array()
      for i, s in ipairs(tool.schema()) do
        out[i] = { name = s.name, description = s.description, input_schema = s.input_schema }
      end
      return out
    end,
    call = function(_, name, input) return tool.call(name, input) end,
  }
end

local function mcp_text(result)
  if type(result) ~= "table" then return result end
  local content = result.content or (result.result and result.result.content)
  if type(content) ~= "table" then return result end
  local parts = {}
  for _, c in ipairs(content) do
    if type(c) == "table" and c.type == "text" then parts[#parts + 1] = c.text end
  end
  return #parts == #content and table.concat(parts, "\n") or result
end

--- A ToolPort over the tools of the connected MCP server `server` (`mcp.list_tools` /
-- `mcp.call`), named `server__tool` as `agent.run` names them. A result flagged `isError` raises
-- its text, so the beat records it as an `is_error` tool result; text content is returned as text.
function M.mcp(server)
  if type(server) ~= "string" or server == "" then
    error("knl_adapter.mcp: argument 1 (server) must be a non-empty string, got " .. type(server), 2)
  end
  if type(mcp) ~= "table" or type(mcp.list_tools) ~= "function" then
    error("knl_adapter.mcp: the mcp.* API is not available in this run", 2)
  end
  local prefix = server .. "__"
  return {
    list = function()
      local listed = mcp.list_tools(server)
      if type(listed) == "table" and listed.ok == false then
        error(sformat("knl_adapter.mcp: listing the tools of '%s' failed: %s", server, tostring(listed.error)), 2)
      end
      local tools = type(listed) == "table" and listed.tools or listed
      local out = std.json.array()
      for i, t in ipairs(tools or {}) do
        out[i] = { name = prefix .. t.name, description = t.description or "",
          input_schema = t.input_schema or t.inputSchema or { type = "object", properties = std.json.object() } }
      end
      return out
    end,
    call = function(_, name, input)
      local tool_name = name:sub(1, #prefix) == prefix and name:sub(#prefix + 1) or name
      local r = mcp.call(server, tool_name, input or std.json.object())
      if type(r) == "table" and (r.isError or r.is_error or r.ok == false) then
        error(tostring(r.error or mcp_text(r)), 0)
      end
      return mcp_text(r)
    end,
  }
end

local PROVIDERS = { anthropic = true, openai = true, replay = true }

-- Provider Ports, loaded from llm_proto on first access.
setmetatable(M, {
  __index = function(t, k)
    if not PROVIDERS[k] then return nil end
    local ok, mod = pcall(require, "llm_proto.port")
    if not ok then
      error(sformat("knl_adapter.%s: the provider Ports live in llm_proto.port, which could not be loaded: %s",
        k, tostring(mod)), 2)
    end
    local P = type(mod) == "table" and mod[k]
    if P == nil and type(mod) == "table" and type(mod.open) == "function" then
      -- One Port class for every provider: bind the provider name.
      P = { open = function(_, opts)
        local o = {}
        for key, v in pairs(opts or {}) do o[key] = v end
        o.provider = o.provider or k
        return mod:open(o)
      end }
    end
    if type(P) ~= "table" or type(P.open) ~= "function" then
      error(sformat("knl_adapter.%s: llm_proto.port has no '%s' Port (a table with :open(opts))", k, k), 2)
    end
    rawset(t, k, P)
    return P
  end,
})

--- The module's pure, I/O-free helpers, for specs (`knl_adapter._test_helpers().mcp_text(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function M._test_helpers()
  return {
    mcp_text = mcp_text,
  }
end

return M
