--- agent: the built-in ReAct loop — `agent.run(opts)` asks a model, runs the tools it calls,
-- feeds the results back, and stops when it answers without tools or a limit is reached.
--
-- A consumer layer: a project may vendor or shadow this module and delegate to
-- `require("embedded.agent")`. It talks to providers only through a Port of `llm_proto.port`
-- (anthropic | openai | replay), and to MCP servers only through `mcp_tools` (required only when
-- `opts.mcp_servers` is non-empty).
--
-- Options: prompt (required), system, provider, model, api_key, api_key_env, base_url,
-- max_tokens, max_iterations (model calls, default 20), max_tokens_budget (total_tokens over the
-- run), max_cost_usd (needs a price for the model; see `llm_proto.prices`, overridable with
-- `prices`), timeout, max_retries, context_management (Anthropic; default on: trigger 80K input
-- tokens, keep 3 tool uses, clear at least 10K; false disables header and body) and
-- context_management_config (replaces the default whole), on_turn, on_delta, extra_tools,
-- tool_groups, history, store (accepted and checked; the kernel honours it), the protocol options
-- of llm_proto (tool_choice, parallel_tool_calls, thinking, dialect, response_format,
-- temperature, top_p, top_k, stop, seed, cache_control, extra_body), replay, and the MCP options
-- (mcp_servers, sampling, on_progress, progress_to_log, on_log, log_to_stderr, enable_resources,
-- enable_prompts).
--
-- Result: `{ ok, content, usage, num_turns, messages, stop_reason, model_stop_reason }`, plus
-- `error` when not ok. `stop_reason` is completed (the model answered without tools), stopped
-- (on_turn returned false), max_iterations, budget (tokens or cost) or error; only completed and
-- stopped are ok. `usage` has the six llm_proto fields and `cost_usd` when the model is priced.
--
-- Invariants: agent.run never throws — bad options, provider errors and tool errors all come back
-- as a result (a tool's error goes to the model as an `is_error` tool_result and the loop goes
-- on); MCP connections are closed on every exit path; when the loop stops with tool calls
-- unanswered, each gets an `is_error` result saying why, so `messages` is valid as the `history`
-- of a later run; `on_turn` receives exactly turn_number, content, tool_calls and usage.
local M = {}

local proto = require("llm_proto")
local type, pairs, ipairs, pcall, tostring, error, sformat, concat =
  type, pairs, ipairs, pcall, tostring, error, string.format, table.concat

-- Options a Port takes (protocol, transport, endpoint); everything else is the loop's.
local PORT_OPTS = {
  "model", "api_key", "api_key_env", "base_url", "dialect", "max_tokens", "timeout", "max_retries",
  "stream", "on_delta", "tool_choice", "parallel_tool_calls", "thinking", "stop", "response_format",
  "temperature", "top_p", "top_k", "seed", "cache_control", "context_management",
  "context_management_config", "extra_body", "prices", "replay", "replay_as", "system",
}

--- The default Anthropic context editing (a fresh table each call).
function M.default_context_management()
  return require("llm_proto.anthropic").default_context_management()
end

local function flat_tool(t, i)
  if type(t) ~= "table" or type(t.name) ~= "string" or t.name == "" then
    error(sformat("agent.run: extra_tools[%d] must be a table with a non-empty string name", i), 0)
  end
  if type(t.schema) == "table" then
    return { name = t.name, description = t.schema.description, input_schema = t.schema.input_schema,
      group = t.group }, t.handler
  end
  return { name = t.name, description = t.description, input_schema = t.input_schema, group = t.group }, t.handler
end

--- The tools offered to the model: registered Lua tools, then MCP tools, then extra_tools; the
-- first of a name wins; `tool_groups` filters by group ("default" when none); `group` is not sent.
function M.build_tools(registry, mcp_list, extra, groups)
  local want
  if type(groups) == "table" and #groups > 0 then
    want = {}
    for _, g in ipairs(groups) do want[g] = true end
  end
  local out, seen = proto.array(), {}
  local function add(t)
    if seen[t.name] then return end
    seen[t.name] = true
    if want and not want[t.group or "default"] then return end
    out[#out + 1] = {
      name = t.name,
      description = t.description or "",
      input_schema = t.input_schema or { type = "object", properties = std.json.object() },
    }
  end
  for _, t in ipairs(registry or {}) do add(t) end
  for _, t in ipairs(mcp_list or {}) do add(t) end
  for _, t in ipairs(extra or {}) do add(t) end
  return out
end

local function result_string(v)
  if type(v) == "string" then return v end
  if v == nil then return "" end
  if type(v) == "table" then
    local ok, s = pcall(std.json.encode, v)
    return ok and s or tostring(v)
  end
  return tostring(v)
end

local function check_opts(opts)
  if type(opts.prompt) ~= "string" or opts.prompt == "" then
    return "agent.run: opts.prompt is required (a non-empty string)"
  end
  if opts.history ~= nil and type(opts.history) ~= "table" then
    return "agent.run: opts.history must be a table (messages array), got " .. type(opts.history)
  end
  for _, k in ipairs({ "on_turn", "on_delta" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "function" then
      return sformat("agent.run: opts.%s must be a function, got %s", k, type(opts[k]))
    end
  end
  for _, k in ipairs({ "max_iterations", "max_tokens_budget", "max_cost_usd" }) do
    if opts[k] ~= nil and (type(opts[k]) ~= "number" or opts[k] <= 0) then
      return sformat("agent.run: opts.%s must be a positive number, got %s", k, tostring(opts[k]))
    end
  end
  local s = opts.store
  if s ~= nil and s ~= "mem" and not (type(s) == "table" and type(s.sqlite) == "string") then
    return "agent.run: opts.store must be \"mem\" or { sqlite = <path> }, got " .. type(s)
  end
  if opts.extra_tools ~= nil and type(opts.extra_tools) ~= "table" then
    return "agent.run: opts.extra_tools must be an array, got " .. type(opts.extra_tools)
  end
  if opts.tool_groups ~= nil and type(opts.tool_groups) ~= "table" then
    return "agent.run: opts.tool_groups must be an array of group names, got " .. type(opts.tool_groups)
  end
  return nil
end

local function connect_mcp(opts)
  return require("mcp_tools").connect(opts.mcp_servers, {
    sampling = opts.sampling,
    on_progress = opts.on_progress,
    progress_to_log = opts.progress_to_log,
    on_log = opts.on_log,
    log_to_stderr = opts.log_to_stderr,
    enable_resources = opts.enable_resources,
    enable_prompts = opts.enable_prompts,
  })
end

--- Runs the loop. Never throws.
function M.run(opts)
  local state = {
    usage = proto.usage(0, 0, 0, 0, 0),
    num_turns = 0,
    messages = proto.array(),
    content = "",
  }
  local function result(ok, stop_reason, err)
    return {
      ok = ok,
      content = state.content,
      error = err,
      usage = state.usage,
      num_turns = state.num_turns,
      messages = state.messages,
      stop_reason = stop_reason,
      model_stop_reason = state.model_stop_reason,
    }
  end
  if type(opts) ~= "table" then
    return result(false, "error", "agent.run: argument 1 (opts) must be a table, got " .. type(opts))
  end
  local bad = check_opts(opts)
  if bad then return result(false, "error", bad) end

  local conn
  local ok, a, b, c = pcall(function()
    local provider = opts.provider or "anthropic"
    local ports = require("llm_proto.port")
    local P = ports[provider]
    if not P then error(sformat("agent.run: opts.provider must be anthropic, openai or replay, got %q", tostring(provider)), 0) end
    local popts = {}
    for _, k in ipairs(PORT_OPTS) do popts[k] = opts[k] end
    local anthropic_wire = provider == "anthropic" or (provider == "replay" and opts.replay_as ~= "openai")
    if anthropic_wire and opts.context_management ~= false then
      popts.context_management = true
    end
    local port = P:open(popts)
    local model = port.profile.model
    if opts.max_cost_usd and not proto.price_of(model, opts.prices) then
      error(sformat("agent.run: max_cost_usd needs a price for model %q: add it to opts.prices " ..
        "({ [model] = { input = <usd/Mtok>, output = <usd/Mtok> } })", model), 0)
    end

    -- tools
    local extra, handlers = {}, {}
    for i, t in ipairs(opts.extra_tools or {}) do
      local flat, h = flat_tool(t, i)
      extra[i] = flat
      if type(h) == "function" then handlers[flat.name] = h end
    end
    local mcp_names = {}
    if type(opts.mcp_servers) == "table" and #opts.mcp_servers > 0 then
      conn = connect_mcp(opts)
    end
    local last_tools
    local function same_tools(a, b)
      if not a or #a ~= #b then return false end
      for i = 1, #a do
        local x, y = a[i], b[i]
        if x.name ~= y.name or x.description ~= y.description or x.input_schema ~= y.input_schema then return false end
      end
      return true
    end
    local function tools_now()
      local mcp_list
      if conn then
        mcp_list = conn:tools()
        mcp_names = {}
        for _, t in ipairs(mcp_list) do mcp_names[t.name] = true end
      end
      local list = M.build_tools(tool.schema(), mcp_list, extra, opts.tool_groups)
      -- the same table while nothing changed, so the Port encodes the tools once per run
      if not same_tools(last_tools, list) then last_tools = list end
      return last_tools
    end
    local function dispatch(call)
      if call.invalid_input ~= nil then
        return "tool error: the arguments were not a JSON object: " .. tostring(call.invalid_input), true
      end
      local name, input = call.name, call.input or std.json.object()
      if mcp_names[name] then
        local okc, text, is_err = pcall(conn.call, conn, name, input)
        if not okc then return "tool error: " .. tostring(text), true end
        return result_string(text), is_err == true
      end
      local h = handlers[name]
      if not h then
        if not tool.exists(name) then return sformat("tool error: unknown tool '%s'", tostring(name)), true end
        h = function(x) return tool.call(name, x) end
      end
      local okh, v = pcall(h, input)
      if not okh then return "tool error: " .. result_string(v), true end
      return result_string(v), false
    end
    local function answer_pending(calls, why)
      if #calls == 0 then return end
      local results = proto.array()
      for i, call in ipairs(calls) do
        results[i] = { type = "tool_result", tool_use_id = call.id, is_error = true,
          content = "not run: the run stopped (" .. why .. ")" }
      end
      state.messages[#state.messages + 1] = { role = "user", content = results }
    end

    for _, m in ipairs(opts.history or {}) do state.messages[#state.messages + 1] = m end
    state.messages[#state.messages + 1] = { role = "user", content = opts.prompt }

    local max_iter = opts.max_iterations or 20
    while true do
      local resp = port:chat({ messages = state.messages, tools = tools_now() })
      state.num_turns = state.num_turns + 1
      state.model_stop_reason = resp.stop_reason
      state.messages[#state.messages + 1] = { role = "assistant", content = resp.content }
      proto.add_usage(state.usage, resp.usage)
      local calls, texts = proto.array(), {}
      for _, blk in ipairs(resp.content) do
        if blk.type == "tool_use" then calls[#calls + 1] = blk
        elseif blk.type == "text" then texts[#texts + 1] = blk.text end
      end
      state.content = concat(texts, "\n")
      if opts.on_turn then
        local okt, ret = pcall(opts.on_turn, {
          turn_number = state.num_turns, content = state.content, tool_calls = calls, usage = resp.usage,
        })
        if not okt then
          log.warn("agent.run: on_turn raised: " .. tostring(ret))
        elseif ret == false then
          answer_pending(calls, "on_turn returned false")
          return true, "stopped"
        end
      end
      if #calls == 0 then
        -- pause_turn: a long server-side tool turn paused; sending the conversation back resumes it
        if resp.stop_reason ~= "pause_turn" then return true, "completed" end
      end
      if opts.max_tokens_budget and state.usage.total_tokens >= opts.max_tokens_budget then
        answer_pending(calls, "token budget spent")
        return false, "budget", sformat("agent.run: token budget spent: %d of %d tokens after %d turns",
          state.usage.total_tokens, opts.max_tokens_budget, state.num_turns)
      end
      if opts.max_cost_usd and (state.usage.cost_usd or 0) >= opts.max_cost_usd then
        answer_pending(calls, "cost budget spent")
        return false, "budget", sformat("agent.run: cost budget spent: $%.4f of $%.4f after %d turns",
          state.usage.cost_usd or 0, opts.max_cost_usd, state.num_turns)
      end
      if state.num_turns >= max_iter then
        answer_pending(calls, "max_iterations")
        return false, "max_iterations", sformat("agent.run: max_iterations (%d) reached with %d tool call(s) pending",
          max_iter, #calls)
      end
      if #calls > 0 then
        local results = proto.array()
        for i, call in ipairs(calls) do
          local text, is_err = dispatch(call)
          results[i] = { type = "tool_result", tool_use_id = call.id, content = text, is_error = is_err or nil }
        end
        state.messages[#state.messages + 1] = { role = "user", content = results }
      end
    end
  end)
  if conn then
    local okc, err = pcall(conn.close, conn)
    if not okc then log.warn("agent.run: closing MCP servers failed: " .. tostring(err)) end
  end
  if not ok then return result(false, "error", tostring(a)) end
  return result(a, b, c)
end

return M
