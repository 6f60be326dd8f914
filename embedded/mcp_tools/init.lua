--- mcp_tools: MCP servers as a model-facing tool set (the utility layer `agent.run` and the kernel
-- adapter use; reached with `require("mcp_tools")`).
--
-- Owns: connecting a list of server entries (stdio `{ name, command, args, cwd?, env?, required? }`
-- and HTTP `{ name, url, auth?, transport_opts = { transport = "sse"|"http", headers, auth } }` in one
-- list; `auth` is `mcp.connect_http`'s OAuth option, at the entry or in `transport_opts`),
-- the per-server wiring of the agent options (`sampling`, `on_progress` / `progress_to_log`,
-- `on_log` / `log_to_stderr`, `enable_resources`, `enable_prompts`), the namespaced tool list
-- (`server__tool`, group = the tool's `_meta.group` when it is a non-empty string, else the server
-- name) and dispatch back to the right server.
--
-- Contract:
--   local conn = mcp_tools.connect(servers, opts)
--   conn:tools()            --> { { name, description, input_schema, group }, ... }
--   conn:call(name, input)  --> text, is_error   (raises only on cancel / run end)
--   conn:close()            --> disconnects every server; never raises
--
-- Invariants:
-- - A server with `required = true` that fails to connect (or to list its tools) raises, with the
--   server's stderr tail in the message, after disconnecting the servers already connected; any
--   other failure is logged at warn and that server is skipped (disconnected, and nothing of it —
--   tools, meta tools, callbacks — left behind).
-- - `conn:tools()` re-lists a server's tools when it has sent `tools/list_changed` since the last
--   listing (`mcp.tools_epoch`), so the list a model sees is current before each call; an HTTP/SSE
--   server declaring `tools.listChanged` is also re-listed after a call of one of its tools (its
--   notification may arrive after the result, on another stream).
-- - Callback envelopes: `{ type = "progress", server, token, progress, total, message }` and
--   `{ type = "log", server, level, logger, data }`; an error raised by a user callback is
--   swallowed and logged at warn. Logging options are gated on the server's `logging` capability,
--   the meta tools on `resources` / `prompts` (skips are logged at info); progress is not gated.
-- - `conn:call` does not raise for a failed call (it comes back as `message, true`); only a cancel
--   of the calling task or the end of the run travels on as an error (`std.task.is_fatal`: the
--   runtime's sentinels, so no error text — not even one ending in `: cancelled` — passes for one).
local M = {}

local type, pairs, ipairs, pcall, tostring, error, setmetatable = type, pairs, ipairs, pcall,
  tostring, error, setmetatable
local sformat, concat = string.format, table.concat

local Conn = {}
Conn.__index = Conn

local SEP = "__"

local function empty_object_schema()
  return { type = "object", properties = std.json.object() }
end

local META_TOOLS = {
  resources = {
    {
      suffix = "mcp_list_resources",
      description = "List the resources MCP server '%s' exposes (JSON array of {uri, name, mimeType, ...}).",
      schema = empty_object_schema,
    },
    {
      suffix = "mcp_read_resource",
      description = "Read one resource of MCP server '%s' by URI (JSON array of contents).",
      schema = function()
        return {
          type = "object",
          properties = { uri = { type = "string", description = "the resource URI" } },
          required = std.json.array({ "uri" }),
        }
      end,
    },
  },
  prompts = {
    {
      suffix = "mcp_list_prompts",
      description = "List the prompt templates MCP server '%s' offers (JSON array of {name, description, arguments}).",
      schema = empty_object_schema,
    },
    {
      suffix = "mcp_get_prompt",
      description = "Render a prompt template of MCP server '%s' (JSON array of messages).",
      schema = function()
        return {
          type = "object",
          properties = {
            name = { type = "string", description = "the prompt name" },
            args = { type = "object", description = "the prompt arguments (strings)" },
          },
          required = std.json.array({ "name" }),
        }
      end,
    },
  },
}

local LOG_LEVEL = {
  debug = "debug", info = "info", notice = "info", warning = "warn",
  error = "error", critical = "error", alert = "error", emergency = "error",
}

--- The errors that must travel on instead of being turned into a result — a cancel of the
-- running task and the run ending (`os.exit`, `job.defer`) — are the runtime's sentinels, known
-- by identity (`std.task.is_fatal`); `M.is_fatal` (a boolean) stays for code written against it.
local is_fatal = std.task.is_fatal
function M.is_fatal(e) return is_fatal(e) ~= false end

-- The text of an error raised by an `mcp.*` call made in this file: such an error starts with
-- this file's position, which tells a reader nothing (the message names the mcp function).
local function reason(err)
  return (tostring(err):gsub("^[^\n:]*%.lua:%d+: ", "", 1))
end
M.reason = reason

local function warn_callback(what, server, err)
  log.warn(sformat("mcp_tools: %s callback for server '%s' failed: %s", what, server, tostring(err)))
end

local function data_text(data)
  if type(data) == "string" then return data end
  local ok, s = pcall(std.json.encode, data)
  return ok and s or tostring(data)
end

--- Group of an MCP tool: `_meta.group` when it is a non-empty string, else the server name.
function M.resolve_group(tool, server)
  local meta = tool._meta
  local g = type(meta) == "table" and meta.group or nil
  if type(g) == "string" and g ~= "" then return g end
  return server
end

--- Tool result content flattened to text (text blocks verbatim, other blocks as a short marker).
function M.flatten(content, structured)
  local parts = {}
  for _, b in ipairs(content or {}) do
    local t = b.type
    if t == "text" then
      parts[#parts + 1] = b.text
    elseif t == "resource" and type(b.resource) == "table" then
      parts[#parts + 1] = b.resource.text or sformat("[resource %s]", tostring(b.resource.uri))
    elseif t == "resource_link" then
      parts[#parts + 1] = sformat("[resource link %s]", tostring(b.uri))
    elseif t == "image" or t == "audio" then
      parts[#parts + 1] = sformat("[%s %s]", t, tostring(b.mimeType))
    else
      parts[#parts + 1] = data_text(b)
    end
  end
  if #parts == 0 and structured ~= nil then return data_text(structured) end
  return concat(parts, "\n")
end

local function check_entry(i, s)
  if type(s) ~= "table" then
    error(sformat("mcp_tools.connect: argument 1 (servers) element %d must be a table, got %s", i, type(s)), 3)
  end
  if type(s.name) ~= "string" or s.name == "" then
    error(sformat("mcp_tools.connect: argument 1 (servers) element %d field 'name' must be a non-empty string", i), 3)
  end
  if s.url == nil and type(s.command) ~= "string" then
    error(sformat("mcp_tools.connect: server '%s' needs 'command' (stdio) or 'url' (HTTP)", s.name), 3)
  end
end

local function connect_one(s)
  if s.url ~= nil then
    local topts = {}
    for k, v in pairs(s.transport_opts or {}) do topts[k] = v end
    if topts.trace_context == nil then topts.trace_context = s.trace_context end
    if topts.timeout == nil then topts.timeout = s.timeout end
    if topts.era == nil then topts.era = s.era end
    if topts.max_message_bytes == nil then topts.max_message_bytes = s.max_message_bytes end
    if topts.auth == nil then topts.auth = s.auth end
    return pcall(mcp.connect_http, s.name, s.url, topts)
  end
  return pcall(mcp.connect, s.name, s.command, s.args or {}, {
    cwd = s.cwd, env = s.env, trace_context = s.trace_context, timeout = s.timeout, era = s.era,
    max_message_bytes = s.max_message_bytes,
  })
end

--- Connects `servers` and wires `opts`; see the module header.
function M.connect(servers, opts)
  if type(servers) ~= "table" then
    error(sformat("mcp_tools.connect: argument 1 (servers) must be a table, got %s", type(servers)), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(sformat("mcp_tools.connect: argument 2 (opts) must be a table, got %s", type(opts)), 2)
  end
  opts = opts or {}
  local self = setmetatable({ opts = opts, servers = {}, order = {}, index = {} }, Conn)
  for i, s in ipairs(servers) do
    check_entry(i, s)
    local ok, err = connect_one(s)
    if ok then ok, err = pcall(self._setup, self, s.name, s.url ~= nil) end
    if not ok and is_fatal(err) then
      self:close()
      error(err, 0)
    end
    if not ok then
      if s.required then
        self:close()
        error(sformat("mcp_tools.connect: required server '%s' failed: %s", s.name, reason(err)), 2)
      end
      log.warn(sformat("mcp_tools: skipping server '%s': %s", s.name, reason(err)))
      self:_drop(s.name)
      pcall(mcp.disconnect, s.name)
    end
  end
  return self
end

function Conn:_setup(name, remote)
  local opts = self.opts
  local info = mcp.server_info(name)
  if not info.ok then error(info.error, 0) end
  local caps = info.server_info.capabilities or {}
  local srv = { name = name, caps = caps, tools = {}, epoch = -1, meta = {},
    -- see `Conn:call`: over HTTP/SSE a list change may arrive after the result that caused it
    relist_after_call = remote and type(caps.tools) == "table" and caps.tools.listChanged == true }
  self.servers[name] = srv
  self.order[#self.order + 1] = name

  if opts.sampling ~= nil then mcp.set_sampling_handler(name, opts.sampling) end

  if type(opts.on_progress) == "function" then
    local cb = opts.on_progress
    mcp.on_progress(name, function(token, progress, total, message)
      local ok, err = pcall(cb, {
        type = "progress", server = name, token = token, progress = progress, total = total, message = message,
      })
      if not ok then warn_callback("progress", name, err) end
    end)
  elseif opts.progress_to_log then
    mcp.on_progress(name, function(token, progress, total, message)
      log.info(sformat("mcp progress: server=%s token=%s p=%s/%s%s", name, tostring(token), tostring(progress),
        tostring(total), message and (" msg=" .. tostring(message)) or ""))
    end)
  end

  if type(opts.on_log) == "function" or opts.log_to_stderr then
    if caps.logging == nil then
      log.info(sformat("mcp_tools: server '%s' does not declare logging; log options skipped", name))
    elseif type(opts.on_log) == "function" then
      local cb = opts.on_log
      mcp.on_log(name, function(level, logger, data)
        local ok, err = pcall(cb, { type = "log", server = name, level = level, logger = logger, data = data })
        if not ok then warn_callback("log", name, err) end
      end)
    else
      mcp.on_log(name, function(level, logger, data)
        local fn = log[LOG_LEVEL[level] or "info"] or log.info
        fn(sformat("mcp log: server=%s logger=%s data=%s", name, tostring(logger), data_text(data)))
      end)
    end
  end

  for _, kind in ipairs({ "resources", "prompts" }) do
    if opts["enable_" .. kind] then
      if caps[kind] == nil then
        log.info(sformat("mcp_tools: server '%s' does not declare %s; enable_%s skipped", name, kind, kind))
      else
        for _, m in ipairs(META_TOOLS[kind]) do
          srv.meta[#srv.meta + 1] = {
            name = name .. SEP .. m.suffix,
            description = sformat(m.description, name),
            input_schema = m.schema(),
            group = name,
            kind = m.suffix,
          }
        end
      end
    end
  end

  self:_refresh(srv)
end

-- Forgets a server `_setup` may have half registered (its listing failed): it must not stay in
-- the tool list (its meta tools included) nor be re-listed on every `tools()`.
function Conn:_drop(name)
  if not self.servers[name] then return end
  self.servers[name] = nil
  for i, n in ipairs(self.order) do
    if n == name then table.remove(self.order, i) break end
  end
  for _, setter in ipairs({ "on_progress", "on_log", "set_sampling_handler" }) do pcall(mcp[setter], name, nil) end
end

--- Re-lists a server's tools; raises when the listing fails.
function Conn:_refresh(srv)
  local epoch = mcp.tools_epoch(srv.name)
  local r = mcp.list_tools(srv.name)
  if not r.ok then error(r.error, 0) end
  srv.tools = r.tools
  srv.epoch = epoch
  srv.dirty = false
end

--- The tool list, refreshed for servers whose tools changed. See the module header.
function Conn:tools()
  local out, index = {}, {}
  for _, name in ipairs(self.order) do
    local srv = self.servers[name]
    if srv.dirty or srv.epoch ~= mcp.tools_epoch(name) then
      local ok, err = pcall(self._refresh, self, srv)
      if not ok and is_fatal(err) then error(err, 0) end
      if not ok then log.warn(sformat("mcp_tools: refreshing the tools of '%s' failed: %s", name, reason(err))) end
    end
    for _, t in ipairs(srv.tools) do
      local full = name .. SEP .. t.name
      out[#out + 1] = {
        name = full,
        description = t.description or "",
        input_schema = t.inputSchema or empty_object_schema(),
        group = M.resolve_group(t, name),
      }
      index[full] = { server = name, tool = t.name }
    end
    for _, m in ipairs(srv.meta) do
      out[#out + 1] = { name = m.name, description = m.description, input_schema = m.input_schema, group = m.group }
      index[m.name] = { server = name, meta = m.kind }
    end
  end
  self.index = index
  return out
end

local function encode_result(r, field)
  if not r.ok then return r.error, true end
  return std.json.encode(r[field] or std.json.array()), false
end

local META_CALL = {
  mcp_list_resources = function(server)
    return encode_result(mcp.list_resources(server), "resources")
  end,
  mcp_read_resource = function(server, input)
    if type(input.uri) ~= "string" then return "mcp_read_resource: 'uri' (string) is required", true end
    return encode_result(mcp.read_resource(server, input.uri), "contents")
  end,
  mcp_list_prompts = function(server)
    return encode_result(mcp.list_prompts(server), "prompts")
  end,
  mcp_get_prompt = function(server, input)
    if type(input.name) ~= "string" then return "mcp_get_prompt: 'name' (string) is required", true end
    return encode_result(mcp.get_prompt(server, input.name, input.args), "messages")
  end,
}

--- Calls tool `name` (`server__tool`) with `input`; returns `text, is_error`. Raises only when the
-- calling task is cancelled or the run ends.
function Conn:call(name, input)
  if type(name) ~= "string" then return "mcp_tools: tool name must be a string", true end
  local entry = self.index[name]
  if not entry then
    self:tools()
    entry = self.index[name]
  end
  if not entry then return sformat("unknown MCP tool '%s'", name), true end
  if type(input) ~= "table" then input = {} end
  local ok, text, is_error = pcall(function()
    if entry.meta then return META_CALL[entry.meta](entry.server, input) end
    -- Over HTTP/SSE the server's `tools/list_changed` travels on another stream than the
    -- result of the call that caused it (the GET stream, or `subscriptions/listen`), so it may
    -- arrive after the result and after the next model call has been built: a server that says
    -- its tools can change is re-listed after each call of one of its tools. Over stdio one
    -- stream carries both in order and the epoch alone is exact.
    local srv = self.servers[entry.server]
    if srv and srv.relist_after_call then srv.dirty = true end
    local r = mcp.call(entry.server, entry.tool, input)
    if not r.ok then return r.error, true end
    return M.flatten(r.content, r.structured_content), r.is_error == true
  end)
  if not ok then
    if is_fatal(text) then error(text, 0) end
    return sformat("MCP tool '%s' failed: %s", name, reason(text)), true
  end
  return text, is_error
end

--- The names of the connected servers, in connection order.
function Conn:server_names()
  local out = {}
  for i, n in ipairs(self.order) do out[i] = n end
  return out
end

--- Disconnects every server and drops the callbacks set for them. Never raises.
function Conn:close()
  for _, name in ipairs(self.order) do
    for _, setter in ipairs({ "on_progress", "on_log", "set_sampling_handler" }) do pcall(mcp[setter], name, nil) end
    local ok, err = pcall(mcp.disconnect, name)
    if not ok then log.warn(sformat("mcp_tools: disconnecting '%s' failed: %s", name, reason(err))) end
  end
  self.order, self.servers, self.index = {}, {}, {}
end

--- The module's pure, I/O-free helpers, for specs (`mcp_tools._test_helpers().data_text(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function M._test_helpers()
  return {
    empty_object_schema = empty_object_schema,
    data_text = data_text,
    check_entry = check_entry,
    encode_result = encode_result,
  }
end

return M
