--- agent: the built-in ReAct loop — `agent.run(opts)` asks a model, runs the tools it calls,
-- feeds the results back, and stops when it answers without tools or a limit is reached.
--
-- Built on the kernel (`knl`): a run is one kernel session (owner `agent`) and each turn is one
-- `knl.beat`, so every model call is recorded as `llm_request` then `llm_response` or
-- `llm_call_failed`, and every tool call — Lua and MCP alike — as a `tool_call` / `tool_result`
-- pair. The session's seed event carries the run's `--label` labels and the correlation ids
-- (AGENT_BLOCK_TRACE_ID / RUN_ID / AGENT_ID / AGENT_NAME) the host stamps on it; the history
-- goes in as `msg_user` / `msg_assistant` (`msg_system`) events, the prompt as `msg_user`, and
-- the run's end as `agent_result` { ok, stop_reason, num_turns, usage, error } before the
-- session closes (`ok`, or `error` with the error). The conversation the model sees is the
-- session's fold (`s:messages()`), and so is `result.messages`. `opts.store` picks the
-- database: nil = the project's (`<project>/.agent-block/knl.sqlite`, AGENT_BLOCK_KNL_PATH),
-- "mem" = this run's in-memory log, `{ sqlite = <path> }` = that file.
--
-- A consumer layer: a project may vendor or shadow this module and delegate to
-- `require("embedded.agent")`. It talks to providers only through a Port of `llm_proto.port`
-- (anthropic | openai | replay), and to MCP servers only through `mcp_tools` (required only when
-- `opts.mcp_servers` is non-empty).
--
-- Options: prompt (required), system, provider, model, api_key, api_key_env, base_url,
-- max_tokens, max_iterations (model calls, default 20), max_tokens_budget (total_tokens over the
-- run; also the session's `tokens` budget, so `knl.views.ledger` shows each charge),
-- max_cost_usd (needs a price for the model; see `llm_proto.prices`, overridable with
-- `prices`), timeout, max_retries, max_response_bytes, context_management (Anthropic; default on: trigger 80K input
-- tokens, keep 3 tool uses, clear at least 10K; false disables header and body) and
-- context_management_config (replaces the default whole), on_turn, on_delta, extra_tools,
-- tool_groups, history, store (see above), the protocol options of llm_proto (tool_choice,
-- parallel_tool_calls, thinking, dialect, response_format, temperature, top_p, top_k, stop,
-- seed, cache_control, extra_body), replay, and the MCP options (mcp_servers, sampling,
-- on_progress, progress_to_log, on_log, log_to_stderr, enable_resources, enable_prompts), and
-- a2a_agents ({ name = url }: each A2A agent offered as a tool named `name`, through `a2a`).
--
-- Result: `{ ok, content, usage, num_turns, messages, stop_reason, model_stop_reason,
-- session_id }`, plus `error` when not ok (and `status` / `retryable` when a model request failed:
-- the fields of llm.chat's error table, for a caller deciding whether to try again); `result.session` (not a field: reached through the
-- result's metatable, so JSON encoding leaves it out) is the closed session, for `:query`,
-- `:events` and the `knl.views`. `session_id` is nil only when the run failed before its
-- session opened (bad options, an unknown provider, a store that cannot be opened).
-- `stop_reason` is completed (the model answered without tools), stopped (on_turn returned
-- false), max_iterations, budget (tokens or cost) or error; only completed and stopped are ok.
-- `usage` has the six llm_proto fields and `cost_usd` when the model is priced.
--
-- Invariants: agent.run never throws — bad options, provider errors and tool errors all come back
-- as a result (a tool's error goes to the model as an `is_error` tool_result and the loop goes
-- on); only a cancel of its task or the run ending (os.exit) passes through — the runtime's
-- sentinels, told apart by `std.task.is_fatal`, never an error text such as `...: cancelled` —
-- after closing the session as `cancelled` / `exit`; on_turn runs after the response is recorded and before any
-- of its tools (the beat's `on_response`), so returning false stops with the calls unrun; MCP
-- connections are closed on every exit path (after a cancel by a task of their own, since the
-- cancelled task can make no more host calls; on os.exit by the run's end); when the loop stops with tool calls unanswered,
-- each gets an `is_error` result saying why, so `messages` is valid as the `history` of a later
-- run; `on_turn` receives exactly turn_number, content, tool_calls and usage.
local M = {}

local proto = require("llm_proto")
local type, pairs, ipairs, pcall, tostring, error, sformat, concat =
  type, pairs, ipairs, pcall, tostring, error, string.format, table.concat

-- The session's own records wait for the kernel's next commit (while the first model call is in
-- flight, or at the close): see the durability note of `knl`.
local DEFER = { defer = true }

-- Options a Port takes (protocol, transport, endpoint); everything else is the loop's.
local PORT_OPTS = {
  "model", "api_key", "api_key_env", "base_url", "dialect", "max_tokens", "timeout", "max_retries",
  "max_response_bytes",
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

local function describe_store(st)
  if type(st) ~= "table" then return type(st) end
  return "{ sqlite = " .. (st.sqlite == "" and '""' or type(st.sqlite)) .. " }"
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
  if s ~= nil and s ~= "mem" and not (type(s) == "table" and type(s.sqlite) == "string" and s.sqlite ~= "") then
    return "agent.run: opts.store must be \"mem\" or { sqlite = <path> }, got " ..
      (type(s) == "string" and sformat("%q", s) or describe_store(s))
  end
  if opts.extra_tools ~= nil and type(opts.extra_tools) ~= "table" then
    return "agent.run: opts.extra_tools must be an array, got " .. type(opts.extra_tools)
  end
  if opts.a2a_agents ~= nil then
    if type(opts.a2a_agents) ~= "table" then
      return "agent.run: opts.a2a_agents must be a table of name = url, got " .. type(opts.a2a_agents)
    end
    for k, v in pairs(opts.a2a_agents) do
      if type(k) ~= "string" or not k:match("^[%w_%-]+$") or type(v) ~= "string" then
        return sformat("agent.run: opts.a2a_agents must map tool names (letters, digits, _ and -) to URLs, got %s = %s",
          tostring(k), tostring(v))
      end
    end
  end
  if opts.mcp_servers ~= nil and type(opts.mcp_servers) ~= "table" then
    return "agent.run: opts.mcp_servers must be an array of server entries, got " .. type(opts.mcp_servers)
  end
  for _, k in ipairs({ "sampling", "on_progress", "on_log" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "function" then
      return sformat("agent.run: opts.%s must be a function, got %s", k, type(opts[k]))
    end
  end
  if opts.tool_groups ~= nil and type(opts.tool_groups) ~= "table" then
    return "agent.run: opts.tool_groups must be an array of group names, got " .. type(opts.tool_groups)
  end
  return nil
end

-- A cancel (`task:cancel()`) or the run ending (os.exit / job.defer) travels through agent.run:
-- turning either into a result would keep running a script that was told to stop.
-- `std.task.is_fatal` knows both by identity (the runtime's sentinels), never by text, and
-- answers which one ("cancelled" or "exit").
local is_fatal = std.task.is_fatal

local function connect_mcp(opts)
  local mcp_tools = require("mcp_tools")
  local ok, conn = pcall(mcp_tools.connect, opts.mcp_servers, {
    sampling = opts.sampling,
    on_progress = opts.on_progress,
    progress_to_log = opts.progress_to_log,
    on_log = opts.on_log,
    log_to_stderr = opts.log_to_stderr,
    enable_resources = opts.enable_resources,
    enable_prompts = opts.enable_prompts,
  })
  if ok then return conn end
  -- a cancel or the run's end travels on; a failure (a required server, a bad entry) is the
  -- run's error, without the position inside this file that mcp_tools.connect points at
  if is_fatal(conn) then error(conn, 0) end
  error("agent.run: " .. mcp_tools.reason(conn), 0)
end

-- `opts.a2a_agents` ({ name = url, ... }) as tools: each agent's card is fetched (a failure is
-- the run's error), its skills make the description, and a call is `a2a.send` of the model's
-- message; the answer's text is the tool's result, a task that did not complete an is_error one.
local function a2a_tools(agents, extra, handlers)
  local names = {}
  for name in pairs(agents) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local url = agents[name]
    local c = a2a.card(url)
    if not c.ok then error(sformat("agent.run: a2a_agents.%s: %s", name, c.error), 0) end
    local lines, ids = {}, {}
    for _, sk in ipairs(c.skills) do
      ids[#ids + 1] = sk.id
      lines[#lines + 1] = sformat("- %s: %s", sk.id, sk.description or sk.name or "")
    end
    local props = { message = { type = "string", description = "What to ask the agent." } }
    if #ids > 0 then
      props.skill = { type = "string", enum = ids, description = "The skill to use." }
    end
    extra[#extra + 1] = {
      name = name,
      description = sformat("Delegate to the A2A agent '%s'%s.%s", c.name,
        (c.card.description and c.card.description ~= "") and (": " .. c.card.description) or "",
        #lines > 0 and ("\nSkills:\n" .. concat(lines, "\n")) or ""),
      input_schema = { type = "object", properties = props, required = { "message" } },
    }
    handlers[name] = function(input)
      local r = a2a.send(url, tostring(input.message or ""), { skill = input.skill })
      if not r.ok then error(r.error, 0) end
      if r.state ~= "completed" and r.state ~= "message" then
        error(sformat("the agent's task ended %s: %s", r.state, r.text), 0)
      end
      return r.text
    end
  end
end

-- A tool's failure, raised so the beat records an is_error result with exactly this text (a
-- table, so that no text a tool returns can pass for a cancel).
local function tool_failure(text) error({ message = text }, 0) end

-- The history's messages as session events; `system` messages extend the system prompt.
local function seed_history(s, history, system)
  for i, m in ipairs(history or {}) do
    if type(m) ~= "table" then
      error(sformat("agent.run: opts.history[%d] must be a message table, got %s", i, type(m)), 0)
    end
    if type(m.content) ~= "string" and type(m.content) ~= "table" then
      error(sformat("agent.run: opts.history[%d].content must be a string or a list of blocks, got %s", i,
        type(m.content)), 0)
    end
    if m.role == "user" then
      s:append({ kind = "msg_user", data = { content = m.content } }, DEFER)
    elseif m.role == "assistant" then
      s:append({ kind = "msg_assistant", data = { content = m.content } }, DEFER)
    elseif m.role == "system" then
      local text = proto.content_text(m.content)
      s:append({ kind = "msg_system", data = { content = m.content } }, DEFER)
      system = system and (system .. "\n\n" .. text) or text
    else
      error(sformat("agent.run: opts.history[%d].role must be user, assistant or system, got %s", i,
        tostring(m.role)), 0)
    end
  end
  return system
end

-- `result.session` (the run's closed session, still queryable) is reached through the
-- metatable, so that encoding a result as JSON or walking it with pairs leaves the session out.
local session_of = setmetatable({}, { __mode = "k" })
local result_mt = { __index = function(r, k) if k == "session" then return session_of[r] end end }

--- Runs the loop on the kernel: one session, one knl.beat per turn. Never throws (a cancel or
-- os.exit passes through).
function M.run(opts)
  local state = {
    usage = proto.usage(0, 0, 0, 0, 0),
    num_turns = 0,
    content = "",
  }
  local s -- the run's kernel session, once opened
  local function result(ok, stop_reason, err, cause)
    local r = {
      ok = ok,
      content = state.content,
      error = err,
      -- a failed model request says what kind of failure it was (llm.chat's error table)
      status = cause and type(cause.status) == "number" and cause.status or nil,
      retryable = cause and type(cause.retryable) == "boolean" and cause.retryable or nil,
      usage = state.usage,
      num_turns = state.num_turns,
      messages = s and proto.array(s:messages()) or proto.array(),
      stop_reason = stop_reason,
      model_stop_reason = state.model_stop_reason,
      session_id = s and s.id or nil,
    }
    return setmetatable(r, result_mt)
  end
  if type(opts) ~= "table" then
    return result(false, "error", "agent.run: argument 1 (opts) must be a table, got " .. type(opts))
  end
  local bad = check_opts(opts)
  if bad then return result(false, "error", bad) end

  local conn
  local ok, a, b, c, d = pcall(function()
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

    -- the session: opened before anything that can fail on the way out (MCP), so the log has it
    local knl = require("knl")
    local okst, store = pcall(knl.open, { store = opts.store })
    if not okst then
      error(sformat("agent.run: %s: %s", opts.store == nil and "the project's kernel database" or "opts.store",
        tostring(store)), 0)
    end
    s = store:session({
      owner = "agent",
      budget = opts.max_tokens_budget and { amount = opts.max_tokens_budget, tag = "tokens" } or nil,
    })
    local system = seed_history(s, opts.history, opts.system)
    s:append({ kind = "msg_user", data = { content = opts.prompt } }, DEFER)

    local mcp_names = {}
    if type(opts.mcp_servers) == "table" and #opts.mcp_servers > 0 then
      conn = connect_mcp(opts)
    end
    if opts.a2a_agents ~= nil then a2a_tools(opts.a2a_agents, extra, handlers) end

    -- what the model offered this turn that cannot be run: tool_use id -> the raw arguments
    local invalid = {}
    local toolport = {}
    function toolport.call(_, name, input, ctx)
      local raw = ctx and invalid[ctx.id]
      if raw ~= nil then
        tool_failure("tool error: the arguments were not a JSON object: " .. tostring(raw))
      end
      input = input or std.json.object()
      if mcp_names[name] then
        local okc, text, is_err = pcall(conn.call, conn, name, input)
        if not okc then
          if is_fatal(text) then error(text, 0) end
          tool_failure("tool error: " .. tostring(text))
        end
        if is_err == true then tool_failure(result_string(text)) end
        return result_string(text)
      end
      local h = handlers[name]
      if not h then
        if not tool.exists(name) then tool_failure(sformat("tool error: unknown tool '%s'", tostring(name))) end
        h = function(x) return tool.call(name, x) end
      end
      local okh, v = pcall(h, input)
      if not okh then
        if is_fatal(v) then error(v, 0) end
        tool_failure("tool error: " .. result_string(v))
      end
      return result_string(v)
    end

    local last_tools, device, last_revision
    local function same_tools(x, y)
      if not x or #x ~= #y then return false end
      for i = 1, #x do
        local p, q = x[i], y[i]
        if p.name ~= q.name or p.description ~= q.description or p.input_schema ~= q.input_schema then return false end
      end
      return true
    end
    -- The device of this turn: rebuilt only when the offered tools changed (MCP servers may
    -- change theirs), so the Port sees one tools list while nothing changed.
    local function device_now()
      local mcp_list
      if conn then
        mcp_list = conn:tools()
        mcp_names = {}
        for _, t in ipairs(mcp_list) do mcp_names[t.name] = true end
      else
        -- without MCP servers only a registration can change the offer
        local rev = tool.revision()
        if device and rev == last_revision then return device end
        last_revision = rev
      end
      local list = M.build_tools(tool.schema(), mcp_list, extra, opts.tool_groups)
      if not device or not same_tools(last_tools, list) then
        last_tools = list
        local offered = list
        device = knl.device({
          llm = port,
          tools = { list = function() return offered end, call = toolport.call },
          system = system,
        })
      end
      return device
    end

    local max_iter = opts.max_iterations or 20
    local decision -- { ok, stop_reason, error } once the run is over
    local function stop(why, ok_, reason, err)
      decision = { ok_, reason, err }
      return "the run stopped (" .. why .. ")"
    end
    -- Called by the beat between the response and its tools: the turn's bookkeeping, on_turn,
    -- and the limits. A reason returned leaves the calls unanswered by tools (`not run: ...`).
    local function on_response(out)
      state.num_turns = state.num_turns + 1
      state.model_stop_reason = out.stop_reason
      proto.add_usage(state.usage, out.usage)
      local calls, texts = proto.array(), {}
      invalid = {}
      for _, blk in ipairs(out.content) do
        if blk.type == "tool_use" then
          calls[#calls + 1] = blk
          if blk.invalid_input ~= nil then invalid[blk.id] = blk.invalid_input end
        elseif blk.type == "text" then texts[#texts + 1] = blk.text end
      end
      state.content = concat(texts, "\n")
      if opts.on_turn then
        local okt, ret = pcall(opts.on_turn, {
          turn_number = state.num_turns, content = state.content, tool_calls = calls, usage = out.usage,
        })
        if not okt then
          if is_fatal(ret) then error(ret, 0) end
          log.warn("agent.run: on_turn raised: " .. tostring(ret))
        elseif ret == false then
          return stop("on_turn returned false", true, "stopped")
        end
      end
      if #calls == 0 then
        -- pause_turn: a long server-side tool turn paused; sending the conversation back resumes it
        if out.stop_reason ~= "pause_turn" then
          decision = { true, "completed" }
          return nil
        end
      end
      if opts.max_tokens_budget and state.usage.total_tokens >= opts.max_tokens_budget then
        return stop("token budget spent", false, "budget",
          sformat("agent.run: token budget spent: %d of %d tokens after %d turns",
            state.usage.total_tokens, opts.max_tokens_budget, state.num_turns))
      end
      if opts.max_cost_usd and (state.usage.cost_usd or 0) >= opts.max_cost_usd then
        return stop("cost budget spent", false, "budget",
          sformat("agent.run: cost budget spent: $%.4f of $%.4f after %d turns",
            state.usage.cost_usd or 0, opts.max_cost_usd, state.num_turns))
      end
      if state.num_turns >= max_iter then
        return stop("max_iterations", false, "max_iterations",
          sformat("agent.run: max_iterations (%d) reached with %d tool call(s) pending", max_iter, #calls))
      end
      return nil
    end

    local beat_opts = { max_tokens = opts.max_tokens, tool_choice = opts.tool_choice, on_response = on_response }
    while true do
      local out = knl.beat(s, device_now(), beat_opts)
      if decision then return decision[1], decision[2], decision[3] end
      if out.kind == "error" then return false, "error", out.error, out.cause end
      if out.kind == "refused" then
        return false, "budget", "agent.run: token budget spent: " .. tostring(out.reason)
      end
      if out.kind == "stopped" then return false, "error", "agent.run: " .. tostring(out.reason) end
    end
  end)
  if conn then
    if not ok and is_fatal(a) == "cancelled" then
      -- Cancelled: this task can make no more host calls (each would raise `cancelled` again),
      -- so the disconnect runs as a task of its own and the script that cancelled goes on with
      -- the servers closing. (On os.exit the run's end disconnects every server.)
      std.task.spawn(function() conn:close() end)
    elseif ok or not is_fatal(a) then
      local okc, err = pcall(conn.close, conn)
      if not okc then log.warn("agent.run: closing MCP servers failed: " .. tostring(err)) end
    end
  end
  local r
  if ok then
    r = result(a, b, c, d)
  elseif is_fatal(a) then
    if s then
      local fatal = is_fatal(a)
      pcall(s.close, s, fatal, fatal == "cancelled" and "cancelled" or nil)
    end
    error(a, 0)
  else
    r = result(false, "error", tostring(a))
  end
  if s then
    local okr, err = pcall(function()
      s:append({ kind = "agent_result", data = { ok = r.ok, stop_reason = r.stop_reason, num_turns = r.num_turns,
        usage = r.usage, error = r.error } }, DEFER) -- the close right after commits it
      s:close(r.ok and "ok" or "error", r.error)
    end)
    if not okr then log.warn("agent.run: recording the end of session " .. s.id .. " failed: " .. tostring(err)) end
    session_of[r] = s
  end
  return r
end

--- The module's pure, I/O-free helpers, for specs (`agent._test_helpers().check_opts(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function M._test_helpers()
  return {
    flat_tool = flat_tool,
    result_string = result_string,
    describe_store = describe_store,
    check_opts = check_opts,
  }
end

return M
