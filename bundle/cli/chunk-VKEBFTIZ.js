import {
  blockRoots
} from "./chunk-QFKUF32L.js";

// src/modules/resolver.ts
import { isAbsolute, join, relative } from "node:path";

// embedded/agent/init.lua
var init_default = '--- agent: the built-in ReAct loop \u2014 `agent.run(opts)` asks a model, runs the tools it calls,\n-- feeds the results back, and stops when it answers without tools or a limit is reached.\n--\n-- Built on the kernel (`knl`): a run is one kernel session (owner `agent`) and each turn is one\n-- `knl.beat`, so every model call is recorded as `llm_request` then `llm_response` or\n-- `llm_call_failed`, and every tool call \u2014 Lua and MCP alike \u2014 as a `tool_call` / `tool_result`\n-- pair. The session\'s seed event carries the run\'s `--label` labels and the correlation ids\n-- (AGENT_BLOCK_TRACE_ID / RUN_ID / AGENT_ID / AGENT_NAME) the host stamps on it; the history\n-- goes in as `msg_user` / `msg_assistant` (`msg_system`) events, the prompt as `msg_user`, and\n-- the run\'s end as `agent_result` { ok, stop_reason, num_turns, usage, error } before the\n-- session closes (`ok`, or `error` with the error). The conversation the model sees is the\n-- session\'s fold (`s:messages()`), and so is `result.messages`. `opts.store` picks the\n-- database: nil = the project\'s (`<project>/.agent-block/knl.sqlite`, AGENT_BLOCK_KNL_PATH),\n-- "mem" = this run\'s in-memory log, `{ sqlite = <path> }` = that file.\n--\n-- A consumer layer: a project may vendor or shadow this module and delegate to\n-- `require("embedded.agent")`. It talks to providers only through a Port of `llm_proto.port`\n-- (anthropic | openai | replay), and to MCP servers only through `mcp_tools` (required only when\n-- `opts.mcp_servers` is non-empty).\n--\n-- Options: prompt (required), system, provider, model, api_key, api_key_env, base_url,\n-- max_tokens, max_iterations (model calls, default 20), max_tokens_budget (total_tokens over the\n-- run; also the session\'s `tokens` budget, so `knl.views.ledger` shows each charge),\n-- max_cost_usd (needs a price for the model; see `llm_proto.prices`, overridable with\n-- `prices`), timeout, max_retries, context_management (Anthropic; default on: trigger 80K input\n-- tokens, keep 3 tool uses, clear at least 10K; false disables header and body) and\n-- context_management_config (replaces the default whole), on_turn, on_delta, extra_tools,\n-- tool_groups, history, store (see above), the protocol options of llm_proto (tool_choice,\n-- parallel_tool_calls, thinking, dialect, response_format, temperature, top_p, top_k, stop,\n-- seed, cache_control, extra_body), replay, and the MCP options (mcp_servers, sampling,\n-- on_progress, progress_to_log, on_log, log_to_stderr, enable_resources, enable_prompts).\n--\n-- Result: `{ ok, content, usage, num_turns, messages, stop_reason, model_stop_reason,\n-- session_id }`, plus `error` when not ok; `result.session` (not a field: reached through the\n-- result\'s metatable, so JSON encoding leaves it out) is the closed session, for `:query`,\n-- `:events` and the `knl.views`. `session_id` is nil only when the run failed before its\n-- session opened (bad options, an unknown provider, a store that cannot be opened).\n-- `stop_reason` is completed (the model answered without tools), stopped (on_turn returned\n-- false), max_iterations, budget (tokens or cost) or error; only completed and stopped are ok.\n-- `usage` has the six llm_proto fields and `cost_usd` when the model is priced.\n--\n-- Invariants: agent.run never throws \u2014 bad options, provider errors and tool errors all come back\n-- as a result (a tool\'s error goes to the model as an `is_error` tool_result and the loop goes\n-- on); only a cancel of its task or the run ending (os.exit) passes through, after closing the\n-- session as `cancelled` / `exit`; on_turn runs after the response is recorded and before any\n-- of its tools (the beat\'s `on_response`), so returning false stops with the calls unrun; MCP\n-- connections are closed on every exit path (after a cancel by a task of their own, since the\n-- cancelled task can make no more host calls; on os.exit by the run\'s end); when the loop stops with tool calls unanswered,\n-- each gets an `is_error` result saying why, so `messages` is valid as the `history` of a later\n-- run; `on_turn` receives exactly turn_number, content, tool_calls and usage.\nlocal M = {}\n\nlocal proto = require("llm_proto")\nlocal type, pairs, ipairs, pcall, tostring, error, sformat, concat =\n  type, pairs, ipairs, pcall, tostring, error, string.format, table.concat\n\n-- The session\'s own records wait for the kernel\'s next commit (while the first model call is in\n-- flight, or at the close): see the durability note of `knl`.\nlocal DEFER = { defer = true }\n\n-- Options a Port takes (protocol, transport, endpoint); everything else is the loop\'s.\nlocal PORT_OPTS = {\n  "model", "api_key", "api_key_env", "base_url", "dialect", "max_tokens", "timeout", "max_retries",\n  "stream", "on_delta", "tool_choice", "parallel_tool_calls", "thinking", "stop", "response_format",\n  "temperature", "top_p", "top_k", "seed", "cache_control", "context_management",\n  "context_management_config", "extra_body", "prices", "replay", "replay_as", "system",\n}\n\n--- The default Anthropic context editing (a fresh table each call).\nfunction M.default_context_management()\n  return require("llm_proto.anthropic").default_context_management()\nend\n\nlocal function flat_tool(t, i)\n  if type(t) ~= "table" or type(t.name) ~= "string" or t.name == "" then\n    error(sformat("agent.run: extra_tools[%d] must be a table with a non-empty string name", i), 0)\n  end\n  if type(t.schema) == "table" then\n    return { name = t.name, description = t.schema.description, input_schema = t.schema.input_schema,\n      group = t.group }, t.handler\n  end\n  return { name = t.name, description = t.description, input_schema = t.input_schema, group = t.group }, t.handler\nend\n\n--- The tools offered to the model: registered Lua tools, then MCP tools, then extra_tools; the\n-- first of a name wins; `tool_groups` filters by group ("default" when none); `group` is not sent.\nfunction M.build_tools(registry, mcp_list, extra, groups)\n  local want\n  if type(groups) == "table" and #groups > 0 then\n    want = {}\n    for _, g in ipairs(groups) do want[g] = true end\n  end\n  local out, seen = proto.array(), {}\n  local function add(t)\n    if seen[t.name] then return end\n    seen[t.name] = true\n    if want and not want[t.group or "default"] then return end\n    out[#out + 1] = {\n      name = t.name,\n      description = t.description or "",\n      input_schema = t.input_schema or { type = "object", properties = std.json.object() },\n    }\n  end\n  for _, t in ipairs(registry or {}) do add(t) end\n  for _, t in ipairs(mcp_list or {}) do add(t) end\n  for _, t in ipairs(extra or {}) do add(t) end\n  return out\nend\n\nlocal function result_string(v)\n  if type(v) == "string" then return v end\n  if v == nil then return "" end\n  if type(v) == "table" then\n    local ok, s = pcall(std.json.encode, v)\n    return ok and s or tostring(v)\n  end\n  return tostring(v)\nend\n\nlocal function describe_store(st)\n  if type(st) ~= "table" then return type(st) end\n  return "{ sqlite = " .. (st.sqlite == "" and \'""\' or type(st.sqlite)) .. " }"\nend\n\nlocal function check_opts(opts)\n  if type(opts.prompt) ~= "string" or opts.prompt == "" then\n    return "agent.run: opts.prompt is required (a non-empty string)"\n  end\n  if opts.history ~= nil and type(opts.history) ~= "table" then\n    return "agent.run: opts.history must be a table (messages array), got " .. type(opts.history)\n  end\n  for _, k in ipairs({ "on_turn", "on_delta" }) do\n    if opts[k] ~= nil and type(opts[k]) ~= "function" then\n      return sformat("agent.run: opts.%s must be a function, got %s", k, type(opts[k]))\n    end\n  end\n  for _, k in ipairs({ "max_iterations", "max_tokens_budget", "max_cost_usd" }) do\n    if opts[k] ~= nil and (type(opts[k]) ~= "number" or opts[k] <= 0) then\n      return sformat("agent.run: opts.%s must be a positive number, got %s", k, tostring(opts[k]))\n    end\n  end\n  local s = opts.store\n  if s ~= nil and s ~= "mem" and not (type(s) == "table" and type(s.sqlite) == "string" and s.sqlite ~= "") then\n    return "agent.run: opts.store must be \\"mem\\" or { sqlite = <path> }, got " ..\n      (type(s) == "string" and sformat("%q", s) or describe_store(s))\n  end\n  if opts.extra_tools ~= nil and type(opts.extra_tools) ~= "table" then\n    return "agent.run: opts.extra_tools must be an array, got " .. type(opts.extra_tools)\n  end\n  if opts.mcp_servers ~= nil and type(opts.mcp_servers) ~= "table" then\n    return "agent.run: opts.mcp_servers must be an array of server entries, got " .. type(opts.mcp_servers)\n  end\n  for _, k in ipairs({ "sampling", "on_progress", "on_log" }) do\n    if opts[k] ~= nil and type(opts[k]) ~= "function" then\n      return sformat("agent.run: opts.%s must be a function, got %s", k, type(opts[k]))\n    end\n  end\n  if opts.tool_groups ~= nil and type(opts.tool_groups) ~= "table" then\n    return "agent.run: opts.tool_groups must be an array of group names, got " .. type(opts.tool_groups)\n  end\n  return nil\nend\n\nlocal function connect_mcp(opts)\n  local mcp_tools = require("mcp_tools")\n  local ok, conn = pcall(mcp_tools.connect, opts.mcp_servers, {\n    sampling = opts.sampling,\n    on_progress = opts.on_progress,\n    progress_to_log = opts.progress_to_log,\n    on_log = opts.on_log,\n    log_to_stderr = opts.log_to_stderr,\n    enable_resources = opts.enable_resources,\n    enable_prompts = opts.enable_prompts,\n  })\n  if ok then return conn end\n  -- a cancel or the run\'s end travels on; a failure (a required server, a bad entry) is the\n  -- run\'s error, without the position inside this file that mcp_tools.connect points at\n  if mcp_tools.is_fatal(conn) then error(conn, 0) end\n  error("agent.run: " .. mcp_tools.reason(conn), 0)\nend\n\n-- A cancel (`task:cancel()`) or the run ending (os.exit / job.defer) travels through agent.run:\n-- turning either into a result would keep running a script that was told to stop.\nlocal function is_fatal(e)\n  if type(e) == "string" then return e == "cancelled" or e:find(":%d+: cancelled$") ~= nil end\n  local mt = type(e) == "table" and getmetatable(e)\n  return type(mt) == "table" and mt.__name == "EXIT"\nend\n\n-- A tool\'s failure, raised so the beat records an is_error result with exactly this text (a\n-- table, so that no text a tool returns can pass for a cancel).\nlocal function tool_failure(text) error({ message = text }, 0) end\n\n-- The history\'s messages as session events; `system` messages extend the system prompt.\nlocal function seed_history(s, history, system)\n  for i, m in ipairs(history or {}) do\n    if type(m) ~= "table" then\n      error(sformat("agent.run: opts.history[%d] must be a message table, got %s", i, type(m)), 0)\n    end\n    if type(m.content) ~= "string" and type(m.content) ~= "table" then\n      error(sformat("agent.run: opts.history[%d].content must be a string or a list of blocks, got %s", i,\n        type(m.content)), 0)\n    end\n    if m.role == "user" then\n      s:append({ kind = "msg_user", data = { content = m.content } }, DEFER)\n    elseif m.role == "assistant" then\n      s:append({ kind = "msg_assistant", data = { content = m.content } }, DEFER)\n    elseif m.role == "system" then\n      local text = proto.content_text(m.content)\n      s:append({ kind = "msg_system", data = { content = m.content } }, DEFER)\n      system = system and (system .. "\\n\\n" .. text) or text\n    else\n      error(sformat("agent.run: opts.history[%d].role must be user, assistant or system, got %s", i,\n        tostring(m.role)), 0)\n    end\n  end\n  return system\nend\n\n-- `result.session` (the run\'s closed session, still queryable) is reached through the\n-- metatable, so that encoding a result as JSON or walking it with pairs leaves the session out.\nlocal session_of = setmetatable({}, { __mode = "k" })\nlocal result_mt = { __index = function(r, k) if k == "session" then return session_of[r] end end }\n\n--- Runs the loop on the kernel: one session, one knl.beat per turn. Never throws (a cancel or\n-- os.exit passes through).\nfunction M.run(opts)\n  local state = {\n    usage = proto.usage(0, 0, 0, 0, 0),\n    num_turns = 0,\n    content = "",\n  }\n  local s -- the run\'s kernel session, once opened\n  local function result(ok, stop_reason, err)\n    local r = {\n      ok = ok,\n      content = state.content,\n      error = err,\n      usage = state.usage,\n      num_turns = state.num_turns,\n      messages = s and proto.array(s:messages()) or proto.array(),\n      stop_reason = stop_reason,\n      model_stop_reason = state.model_stop_reason,\n      session_id = s and s.id or nil,\n    }\n    return setmetatable(r, result_mt)\n  end\n  if type(opts) ~= "table" then\n    return result(false, "error", "agent.run: argument 1 (opts) must be a table, got " .. type(opts))\n  end\n  local bad = check_opts(opts)\n  if bad then return result(false, "error", bad) end\n\n  local conn\n  local ok, a, b, c = pcall(function()\n    local provider = opts.provider or "anthropic"\n    local ports = require("llm_proto.port")\n    local P = ports[provider]\n    if not P then error(sformat("agent.run: opts.provider must be anthropic, openai or replay, got %q", tostring(provider)), 0) end\n    local popts = {}\n    for _, k in ipairs(PORT_OPTS) do popts[k] = opts[k] end\n    local anthropic_wire = provider == "anthropic" or (provider == "replay" and opts.replay_as ~= "openai")\n    if anthropic_wire and opts.context_management ~= false then\n      popts.context_management = true\n    end\n    local port = P:open(popts)\n    local model = port.profile.model\n    if opts.max_cost_usd and not proto.price_of(model, opts.prices) then\n      error(sformat("agent.run: max_cost_usd needs a price for model %q: add it to opts.prices " ..\n        "({ [model] = { input = <usd/Mtok>, output = <usd/Mtok> } })", model), 0)\n    end\n\n    -- tools\n    local extra, handlers = {}, {}\n    for i, t in ipairs(opts.extra_tools or {}) do\n      local flat, h = flat_tool(t, i)\n      extra[i] = flat\n      if type(h) == "function" then handlers[flat.name] = h end\n    end\n\n    -- the session: opened before anything that can fail on the way out (MCP), so the log has it\n    local knl = require("knl")\n    local okst, store = pcall(knl.open, { store = opts.store })\n    if not okst then\n      error(sformat("agent.run: %s: %s", opts.store == nil and "the project\'s kernel database" or "opts.store",\n        tostring(store)), 0)\n    end\n    s = store:session({\n      owner = "agent",\n      budget = opts.max_tokens_budget and { amount = opts.max_tokens_budget, tag = "tokens" } or nil,\n    })\n    local system = seed_history(s, opts.history, opts.system)\n    s:append({ kind = "msg_user", data = { content = opts.prompt } }, DEFER)\n\n    local mcp_names = {}\n    if type(opts.mcp_servers) == "table" and #opts.mcp_servers > 0 then\n      conn = connect_mcp(opts)\n    end\n\n    -- what the model offered this turn that cannot be run: tool_use id -> the raw arguments\n    local invalid = {}\n    local toolport = {}\n    function toolport.call(_, name, input, ctx)\n      local raw = ctx and invalid[ctx.id]\n      if raw ~= nil then\n        tool_failure("tool error: the arguments were not a JSON object: " .. tostring(raw))\n      end\n      input = input or std.json.object()\n      if mcp_names[name] then\n        local okc, text, is_err = pcall(conn.call, conn, name, input)\n        if not okc then\n          if is_fatal(text) then error(text, 0) end\n          tool_failure("tool error: " .. tostring(text))\n        end\n        if is_err == true then tool_failure(result_string(text)) end\n        return result_string(text)\n      end\n      local h = handlers[name]\n      if not h then\n        if not tool.exists(name) then tool_failure(sformat("tool error: unknown tool \'%s\'", tostring(name))) end\n        h = function(x) return tool.call(name, x) end\n      end\n      local okh, v = pcall(h, input)\n      if not okh then\n        if is_fatal(v) then error(v, 0) end\n        tool_failure("tool error: " .. result_string(v))\n      end\n      return result_string(v)\n    end\n\n    local last_tools, device, last_revision\n    local function same_tools(x, y)\n      if not x or #x ~= #y then return false end\n      for i = 1, #x do\n        local p, q = x[i], y[i]\n        if p.name ~= q.name or p.description ~= q.description or p.input_schema ~= q.input_schema then return false end\n      end\n      return true\n    end\n    -- The device of this turn: rebuilt only when the offered tools changed (MCP servers may\n    -- change theirs), so the Port sees one tools list while nothing changed.\n    local function device_now()\n      local mcp_list\n      if conn then\n        mcp_list = conn:tools()\n        mcp_names = {}\n        for _, t in ipairs(mcp_list) do mcp_names[t.name] = true end\n      else\n        -- without MCP servers only a registration can change the offer\n        local rev = tool.revision()\n        if device and rev == last_revision then return device end\n        last_revision = rev\n      end\n      local list = M.build_tools(tool.schema(), mcp_list, extra, opts.tool_groups)\n      if not device or not same_tools(last_tools, list) then\n        last_tools = list\n        local offered = list\n        device = knl.device({\n          llm = port,\n          tools = { list = function() return offered end, call = toolport.call },\n          system = system,\n        })\n      end\n      return device\n    end\n\n    local max_iter = opts.max_iterations or 20\n    local decision -- { ok, stop_reason, error } once the run is over\n    local function stop(why, ok_, reason, err)\n      decision = { ok_, reason, err }\n      return "the run stopped (" .. why .. ")"\n    end\n    -- Called by the beat between the response and its tools: the turn\'s bookkeeping, on_turn,\n    -- and the limits. A reason returned leaves the calls unanswered by tools (`not run: ...`).\n    local function on_response(out)\n      state.num_turns = state.num_turns + 1\n      state.model_stop_reason = out.stop_reason\n      proto.add_usage(state.usage, out.usage)\n      local calls, texts = proto.array(), {}\n      invalid = {}\n      for _, blk in ipairs(out.content) do\n        if blk.type == "tool_use" then\n          calls[#calls + 1] = blk\n          if blk.invalid_input ~= nil then invalid[blk.id] = blk.invalid_input end\n        elseif blk.type == "text" then texts[#texts + 1] = blk.text end\n      end\n      state.content = concat(texts, "\\n")\n      if opts.on_turn then\n        local okt, ret = pcall(opts.on_turn, {\n          turn_number = state.num_turns, content = state.content, tool_calls = calls, usage = out.usage,\n        })\n        if not okt then\n          if is_fatal(ret) then error(ret, 0) end\n          log.warn("agent.run: on_turn raised: " .. tostring(ret))\n        elseif ret == false then\n          return stop("on_turn returned false", true, "stopped")\n        end\n      end\n      if #calls == 0 then\n        -- pause_turn: a long server-side tool turn paused; sending the conversation back resumes it\n        if out.stop_reason ~= "pause_turn" then\n          decision = { true, "completed" }\n          return nil\n        end\n      end\n      if opts.max_tokens_budget and state.usage.total_tokens >= opts.max_tokens_budget then\n        return stop("token budget spent", false, "budget",\n          sformat("agent.run: token budget spent: %d of %d tokens after %d turns",\n            state.usage.total_tokens, opts.max_tokens_budget, state.num_turns))\n      end\n      if opts.max_cost_usd and (state.usage.cost_usd or 0) >= opts.max_cost_usd then\n        return stop("cost budget spent", false, "budget",\n          sformat("agent.run: cost budget spent: $%.4f of $%.4f after %d turns",\n            state.usage.cost_usd or 0, opts.max_cost_usd, state.num_turns))\n      end\n      if state.num_turns >= max_iter then\n        return stop("max_iterations", false, "max_iterations",\n          sformat("agent.run: max_iterations (%d) reached with %d tool call(s) pending", max_iter, #calls))\n      end\n      return nil\n    end\n\n    local beat_opts = { max_tokens = opts.max_tokens, tool_choice = opts.tool_choice, on_response = on_response }\n    while true do\n      local out = knl.beat(s, device_now(), beat_opts)\n      if decision then return decision[1], decision[2], decision[3] end\n      if out.kind == "error" then return false, "error", out.error end\n      if out.kind == "refused" then\n        return false, "budget", "agent.run: token budget spent: " .. tostring(out.reason)\n      end\n      if out.kind == "stopped" then return false, "error", "agent.run: " .. tostring(out.reason) end\n    end\n  end)\n  if conn then\n    if not ok and is_fatal(a) and type(a) == "string" then\n      -- Cancelled: this task can make no more host calls (each would raise `cancelled` again),\n      -- so the disconnect runs as a task of its own and the script that cancelled goes on with\n      -- the servers closing. (On os.exit the run\'s end disconnects every server.)\n      std.task.spawn(function() conn:close() end)\n    elseif ok or not is_fatal(a) then\n      local okc, err = pcall(conn.close, conn)\n      if not okc then log.warn("agent.run: closing MCP servers failed: " .. tostring(err)) end\n    end\n  end\n  local r\n  if ok then\n    r = result(a, b, c)\n  elseif is_fatal(a) then\n    if s then\n      local cancelled = type(a) == "string"\n      pcall(s.close, s, cancelled and "cancelled" or "exit", cancelled and a or nil)\n    end\n    error(a, 0)\n  else\n    r = result(false, "error", tostring(a))\n  end\n  if s then\n    local okr, err = pcall(function()\n      s:append({ kind = "agent_result", data = { ok = r.ok, stop_reason = r.stop_reason, num_turns = r.num_turns,\n        usage = r.usage, error = r.error } }, DEFER) -- the close right after commits it\n      s:close(r.ok and "ok" or "error", r.error)\n    end)\n    if not okr then log.warn("agent.run: recording the end of session " .. s.id .. " failed: " .. tostring(err)) end\n    session_of[r] = s\n  end\n  return r\nend\n\nreturn M\n';

// embedded/knl/init.lua
var init_default2 = `--- knl: the Lua half of the kernel \u2014 session bracket, frozen device, one beat, Outcome, views.
--
-- The host owns the session log (\`knl.host\`: an append-only SQLite event log, one per file, whose
-- sessions are streams). This module owns what a beat is:
--
--   knl.session(opts, fn)  opens a session (its seed event stamped by the host with the run's
--                          labels and correlation ids), runs fn(s), and closes it either way \u2014
--                          \`ok\` when fn returns, \`error\` when it raises (the error is re-raised
--                          unchanged), \`exit\` on os.exit / job.defer, \`cancelled\` when its task
--                          is cancelled; the host closes what is still open at run end as
--                          \`interrupted\`. Children (\`opts.children\`) open and close with it in
--                          one transaction.
--   knl.device(spec)       a frozen bundle { llm, tools, tool_policy, fold, filters, system, cost };
--                          assigning to it, or to its tools / filters, raises.
--   knl.beat(s, device, opts?)  one model call plus the tools it asks for, charged to the
--                          budget. Returns an Outcome: ok | refused (over budget: the model is not
--                          called) | error (the call failed or answered outside knl_types.Response)
--                          | stopped (a filter, the tool policy or the caller's \`on_response\`
--                          stopped it).
--   knl.views.*            query views: plain functions running one SELECT through s:query.
--   knl.api()              the published surface: table schema, kinds, views.
--
-- Records: every model call appends \`llm_request\` then \`llm_response\` or \`llm_call_failed\`; every
-- tool call a \`tool_call\` / \`tool_result\` pair (a denied or skipped tool too, with is_error); each
-- charge a \`budget_charge\`; a refusal \`beat_refused\`; a stop \`beat_stopped\`. Each carries
-- \`meta.beat\`. \`knl.record.*\` writes the same shapes for a loop that calls a Port itself.
--
-- Durability (output commit): a beat's events and a session's opening are deferred \u2014 appended
-- in order, each stamped with the time it happened, and committed together before the run next
-- acts on the world: before any asynchronous host call but a model request, before any
-- synchronous host call not marked pure (so a tool call is in the log before its tool writes a
-- file, prints or starts anything), and before any read of the store, any \`s:append\` without
-- \`defer\`, a close, and the run's end, whichever comes first. A model request is not such an
-- act (a resumed run may ask again without harm): what precedes it commits while it is in
-- flight, at the latest when the commit window (AGENT_BLOCK_KNL_COMMIT_MS, default 5 ms) has
-- passed since the first deferred event \u2014 so beats faster than the window share a commit \u2014 or
-- before it is sent when the window is 0. What a process killed outright (SIGKILL) loses is only
-- what happened since its last effect on the world \u2014 Lua computation, model exchanges younger
-- than the window, and a response received but not yet acted on, which reads as a call cut off
-- in flight \u2014 never the record of an effect. \`s:append\`, \`s:close\` and \`knl.record.*\` commit at
-- once (with anything deferred before them); \`s:append(ev, { defer = true })\` defers.
--
-- Invariants: there is no run loop here \u2014 the caller writes it; the session's folded
-- conversation (\`s:messages()\`) is updated on every append through \`s:append\`, so a beat costs
-- O(new events), not O(log); a message handed out by \`s:messages()\` is never changed afterwards
-- (a Port may cache its encoding); nothing here reaches the database except through \`knl.host\`.
local sys = require("knl.host")
local types = require("knl_types")
local lcheck = require("lshape.check").check

local type, error, pairs, ipairs, setmetatable, getmetatable, tostring, select, pcall, rawequal =
  type, error, pairs, ipairs, setmetatable, getmetatable, tostring, select, pcall, rawequal
local sformat, concat = string.format, table.concat
local clock = sys.clock

local knl = { VERSION = "1.0" }

-- helpers --------------------------------------------------------------------------------------

local function describe_error(e)
  if type(e) == "string" then return e end
  if type(e) == "table" then
    if type(e.message) == "string" then return e.message end
    if type(e.error) == "string" then return e.error end
    local ok, s = pcall(std.json.encode, e)
    if ok then return s end
  end
  return tostring(e)
end

-- Errors a beat records but must not swallow: the task was cancelled (\`task:cancel()\`), or the
-- run is ending (os.exit / job.defer). Turning either into an Outcome would keep a loop running
-- that was told to stop.
local function is_fatal(e)
  if type(e) == "string" then return e == "cancelled" or e:find(":%d+: cancelled$") ~= nil end
  local mt = type(e) == "table" and getmetatable(e)
  return type(mt) == "table" and mt.__name == "EXIT"
end

-- A host error arrives prefixed with the kernel's own position; callers should see theirs.
local function strip_pos(msg)
  if type(msg) ~= "string" then return msg end
  return (msg:gsub("^[^\\n]-%.lua:%d+: ", "", 1))
end

local function host(level, f, ...)
  local r = table.pack(pcall(f, ...))
  if not r[1] then error(strip_pos(r[2]), level + 1) end
  return table.unpack(r, 2, r.n)
end

local function argerr(fn, i, name, expected, v, level)
  error(sformat("%s: argument %d (%s) must be %s, got %s", fn, i, name, expected, type(v)), (level or 2) + 1)
end

-- The common cases of \`lcheck(v, types.SessionOpts)\` and \`lcheck(v, types.DeviceSpec)\` (keep in
-- step with knl_types), checked without building a path per field: true only when the full
-- check passes too; anything else (another field, another type) goes to lcheck, which decides
-- and words the reason. A loop opens a session and a device per run, so these are warm paths.
local function plain_budget(b)
  if type(b) ~= "table" or type(b.amount) ~= "number" then return false end
  for k, v in pairs(b) do
    if not (k == "amount" or (k == "tag" and type(v) == "string")) then return false end
  end
  return true
end
local SESSION_FIELD_OK = {
  owner = function(v) return type(v) == "string" end,
  budget = plain_budget,
  scope = function() return true end,
  store = function() return true end,
}
local function plain_session_opts(o)
  for k, v in pairs(o) do
    local ok = SESSION_FIELD_OK[k]
    if not (ok and ok(v)) then return false end
  end
  return true
end
local DEVICE_FIELD_TYPE = { llm = "table", tools = "table", system = "string", fold = "function", cost = "function" }
local function plain_device_spec(d)
  if type(d.llm) ~= "table" then return false end
  for k, v in pairs(d) do
    local t = DEVICE_FIELD_TYPE[k]
    if not (t and type(v) == t) then return false end
  end
  return true
end
knl._plain_session_opts, knl._plain_device_spec = plain_session_opts, plain_device_spec -- for the spec

local function shape_error(fn, what, schema, v, level)
  local ok, why = lcheck(v, schema)
  if ok then return end
  local path, rest = why:match("^%$%.([^:]*): (.*)$")
  if path then
    error(sformat("%s: %s field '%s': %s", fn, what, path, rest), level + 1)
  end
  error(sformat("%s: %s: %s", fn, what, (why:gsub("^%$: ", ""))), level + 1)
end

-- Outcome --------------------------------------------------------------------------------------

-- An outcome is plain data \`{ kind, beat, out?, reason?, error? }\`; its metatable only prints it.
local OutcomeMT = { __name = "knl.Outcome" }
function OutcomeMT.__tostring(o)
  local why = rawget(o, "reason") or rawget(o, "error")
  return sformat("knl.Outcome(%s%s)", o.kind, why and (": " .. why) or "")
end
local function outcome(kind)
  return function(fields) fields.kind = kind; return setmetatable(fields, OutcomeMT) end
end
local Outcome = { KINDS = { "ok", "refused", "error", "stopped" } }
Outcome.ok, Outcome.refused, Outcome.error, Outcome.stopped =
  outcome("ok"), outcome("refused"), outcome("error"), outcome("stopped")
--- True for an \`ok\` outcome.
function Outcome.is_ok(o) return type(o) == "table" and o.kind == "ok" end
--- True for any outcome.
function Outcome.is(o) return getmetatable(o) == OutcomeMT end
knl.Outcome = Outcome

-- conversation fold ------------------------------------------------------------------------------

local function as_blocks(content)
  if type(content) == "table" then return content end
  return { { type = "text", text = tostring(content) } }
end

-- Appends a message, merging into the previous one when the role repeats (providers want turns
-- to alternate; tool results and a follow-up user text share one user turn).
-- A merged message is the fold's own table, extended in place by later merges (O(new blocks)).
local merged_by_fold = setmetatable({}, { __mode = "k" })
local function push_message(msgs, role, content)
  local last = msgs[#msgs]
  if last and last.role == role then
    local merged = last.content
    if not merged_by_fold[merged] then
      merged = {}
      for _, b in ipairs(as_blocks(last.content)) do merged[#merged + 1] = b end
      merged_by_fold[merged] = true
      msgs[#msgs] = { role = role, content = merged }
    end
    for _, b in ipairs(as_blocks(content)) do merged[#merged + 1] = b end
  else
    msgs[#msgs + 1] = { role = role, content = content }
  end
end

local function fold_event(msgs, kind, data)
  if kind == "msg_user" then
    push_message(msgs, "user", data.content)
  elseif kind == "msg_assistant" then
    push_message(msgs, "assistant", data.content)
  elseif kind == "llm_response" then
    -- Thinking blocks stay (Anthropic wants the signed ones back on a tool-use turn; each
    -- llm_proto adapter drops what its provider cannot take), but a response of thinking alone
    -- adds no message: the adapters would send it empty.
    local content = data.content or {}
    for _, b in ipairs(content) do
      if b.type ~= "thinking" then push_message(msgs, "assistant", content); break end
    end
  elseif kind == "tool_result" then
    push_message(msgs, "user", { { type = "tool_result", tool_use_id = data.id, content = data.content,
      is_error = data.is_error == true } })
  end
end
knl.fold_event = fold_event

-- stores -----------------------------------------------------------------------------------------

local Store = {}
Store.__index = Store
Store.__name = "knl.Store"

--- Opens a store: \`opts.store\` nil (the project's database, or AGENT_BLOCK_KNL_PATH), "mem"
-- (this run's in-memory log) or \`{ sqlite = path }\`.
function knl.open(opts)
  if opts ~= nil and type(opts) ~= "table" then argerr("knl.open", 1, "opts", "a table or nil", opts) end
  local spec = opts and opts.store
  local h, path = host(2, sys.open, spec)
  return setmetatable({ h = h, path = path }, Store)
end

local function check_store(st, fn)
  if getmetatable(st) ~= Store then error(fn .. ": call it with ':' on a store", 3) end
end

--- One read-only SELECT over the published table.
function Store:query(sql, params, opts)
  check_store(self, "store:query")
  if type(sql) ~= "string" then argerr("store:query", 1, "sql", "a string", sql) end
  return host(2, sys.query, self.h, sql, params, opts)
end

--- Events of stream \`id\` from \`from\` (default 1), upcast.
function Store:events(id, from)
  check_store(self, "store:events")
  return host(2, sys.events, self.h, id, from)
end

--- True when stream \`id\` has events.
function Store:has(id)
  check_store(self, "store:has")
  return host(2, sys.has, self.h, id)
end

-- sessions ---------------------------------------------------------------------------------------

local Session = {}
Session.__index = Session
Session.__name = "knl.Session"
knl.Session = Session

local function new_session(store, id, node, parent)
  local budget = node.budget and { amount = node.budget.amount, tag = node.budget.tag or "beats" } or nil
  return setmetatable({
    id = id, owner = node.owner, budget = budget, scope = node.scope, store = store,
    parent = parent, children = {}, spent = 0, beats = 0, closed = false, _msgs = {},
  }, Session)
end

local function check_session(s, fn, level)
  if getmetatable(s) ~= Session then
    error(sformat("%s: expected a knl session (call it with ':'), got %s", fn, type(s)), (level or 2) + 1)
  end
end

local RESERVED = { session_open = true, session_close = true }

local sys_append, sys_append_many = sys.append, sys.append_many

-- The kernel's own appends: arguments are known good, so no pcall on this hot path; \`beat\`
-- travels as an integer and the host puts it into meta.
local function append(s, kind, data, meta, beat, defer)
  local seq, position = sys_append(s.store.h, s.id, kind, data, meta, beat, defer)
  fold_event(s._msgs, kind, data or {})
  return seq, position
end

-- Several events of one beat in one transaction: { { kind, data }, ... }. With \`defer\`, the host
-- holds them and commits them ahead of the store's next write (see the header).
local function append_many(s, list, beat, defer)
  local seq = sys_append_many(s.store.h, s.id, list, beat, defer)
  for _, e in ipairs(list) do fold_event(s._msgs, e.kind, e.data or {}) end
  return seq
end

--- Appends \`{ kind, data?, meta? }\`; returns seq, position. With \`opts.defer\`, the event is
-- committed with the next commit (see the header) and nothing is returned.
function Session:append(ev, opts)
  check_session(self, "s:append")
  if type(ev) ~= "table" then argerr("s:append", 1, "event", "a table", ev) end
  if type(ev.kind) ~= "string" or ev.kind == "" then
    error("s:append: argument 1 (event) field 'kind' must be a non-empty string, got " .. type(ev.kind), 2)
  end
  if RESERVED[ev.kind] then
    error(sformat("s:append: kind '%s' is written by the session bracket, not appended", ev.kind), 2)
  end
  if ev.data ~= nil and type(ev.data) ~= "table" then
    error("s:append: argument 1 (event) field 'data' must be a table, got " .. type(ev.data), 2)
  end
  if ev.meta ~= nil and type(ev.meta) ~= "table" then
    error("s:append: argument 1 (event) field 'meta' must be a table, got " .. type(ev.meta), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then argerr("s:append", 2, "opts", "a table or nil", opts) end
  if self.closed then error(sformat("s:append: session %s is closed", self.id), 2) end
  local defer = opts ~= nil and opts.defer == true
  local seq, position = host(2, sys_append, self.store.h, self.id, ev.kind, ev.data, ev.meta, nil, defer)
  fold_event(self._msgs, ev.kind, ev.data or {})
  return seq, position
end

--- Built-in read: events from seq \`from\` (default 1), in seq order, upcast.
function Session:events(from)
  check_session(self, "s:events")
  if from ~= nil and math.type(from) ~= "integer" then argerr("s:events", 1, "from", "an integer or nil", from) end
  return host(2, sys.events, self.store.h, self.id, from)
end

local BUILTIN_VIEWS = { events = true, tail = true }

--- Built-in views: \`view("tail", { n })\` (last n events, default 10) and \`view("events", { from })\`.
function Session:view(name, opts)
  check_session(self, "s:view")
  if opts ~= nil and type(opts) ~= "table" then argerr("s:view", 2, "opts", "a table or nil", opts) end
  opts = opts or {}
  if name == "tail" then
    local n = opts.n or 10
    if math.type(n) ~= "integer" or n < 0 then
      error("s:view: argument 2 (opts) field 'n' must be a non-negative integer", 2)
    end
    return host(2, sys.tail, self.store.h, self.id, n)
  elseif name == "events" then
    return host(2, sys.events, self.store.h, self.id, opts.from)
  end
  error(sformat("s:view: unknown built-in view '%s' (built-in: events, tail; query views are the functions in knl.views)",
    tostring(name)), 2)
end

--- One read-only SELECT over the published \`events\` table; rows as tables.
function Session:query(sql, params, opts)
  check_session(self, "s:query")
  if type(sql) ~= "string" then argerr("s:query", 1, "sql", "a string", sql) end
  if params ~= nil and type(params) ~= "table" then argerr("s:query", 2, "params", "a table or nil", params) end
  if opts ~= nil and type(opts) ~= "table" then argerr("s:query", 3, "opts", "a table or nil", opts) end
  return host(2, sys.query, self.store.h, sql, params, opts)
end

local unpack, COPY_VIA_STACK = table.unpack, 4000

--- The conversation folded from this session's appends (a copy; providers' message shape).
-- What leaves here may be sent, and a sent message is a value (llm_proto caches its encoding by
-- identity): a later append of the same role merges into a copy, never into it.
function Session:messages()
  local msgs = self._msgs
  local last = msgs[#msgs]
  if last and type(last.content) == "table" then merged_by_fold[last.content] = nil end
  local n = #msgs
  -- A table constructor sized in one go is several times cheaper than growing one with
  -- table.move; past what the Lua stack takes comfortably, table.move.
  if n <= COPY_VIA_STACK then return { unpack(msgs, 1, n) } end
  return table.move(msgs, 1, n, 1, {})
end

--- What is left of the budget (math.huge without one).
function Session:remaining()
  if not self.budget then return math.huge end
  return self.budget.amount - self.spent
end

local function collect_open(s, ids)
  for _, c in ipairs(s.children) do collect_open(c, ids) end
  if not s.closed then ids[#ids + 1] = s end
  return ids
end

--- Closes the session and its open children in one transaction (the bracket does this).
function Session:close(status, err)
  check_session(self, "s:close")
  if self.closed then return false end
  local list = collect_open(self, {})
  local ids = {}
  for i, x in ipairs(list) do ids[i] = x.id end
  local data = { status = status or "ok", beats = self.beats, spent = self.spent }
  if err ~= nil then data.error = describe_error(err) end
  host(2, sys.session_close, self.store.h, ids, data)
  for _, x in ipairs(list) do x.closed = true end
  return true
end

local function open_tree(fn, opts, parent, level, store)
  if type(opts) ~= "table" then argerr(fn, 1, "opts", "a table", opts, level) end
  if not plain_session_opts(opts) then shape_error(fn, "argument 1 (opts)", types.SessionOpts, opts, level + 1) end
  store = store or (parent and parent.store) or knl.open({ store = opts.store })
  local nodes = { { owner = opts.owner, budget = opts.budget, scope = opts.scope, labels = opts.labels,
    parent = parent and parent.id or nil } }
  for i, c in ipairs(opts.children or {}) do
    shape_error(fn, sformat("opts.children[%d]", i), types.SessionOpts, c, level + 1)
    nodes[#nodes + 1] = { owner = c.owner or opts.owner, budget = c.budget, scope = c.scope, labels = c.labels,
      parent_index = 1 }
  end
  local ids = host(level + 1, sys.session_open, store.h, nodes, true) -- deferred: see the header
  local root = new_session(store, ids[1], nodes[1], parent)
  for i = 2, #ids do
    root.children[#root.children + 1] = new_session(store, ids[i], nodes[i], root)
  end
  if parent then parent.children[#parent.children + 1] = root end
  return root
end

local function bracket(s, fn)
  local r = table.pack(pcall(fn, s))
  if r[1] then
    if not s.closed then s:close("ok") end
    return table.unpack(r, 2, r.n)
  end
  local err = r[2]
  if not s.closed then
    if is_fatal(err) then
      local cancelled = type(err) == "string"
      pcall(s.close, s, cancelled and "cancelled" or "exit", cancelled and err or nil)
    else
      pcall(s.close, s, "error", err)
    end
  end
  error(err, 0)
end

--- Opens a session; with \`fn\`, runs fn(s) and closes it either way, returning what fn returns.
-- Without \`fn\`, returns the open session: close it with \`s:close()\` (the run closes it as
-- \`interrupted\` otherwise).
function knl.session(opts, fn)
  if fn ~= nil and type(fn) ~= "function" then argerr("knl.session", 2, "fn", "a function or nil", fn) end
  local s = open_tree("knl.session", opts, nil, 2)
  if fn == nil then return s end
  return bracket(s, fn)
end

--- Opens a child session of \`s\` (its seed event names the parent), bracketed like knl.session.
function Session:spawn(opts, fn)
  check_session(self, "s:spawn")
  if self.closed then error(sformat("s:spawn: session %s is closed", self.id), 2) end
  if fn ~= nil and type(fn) ~= "function" then argerr("s:spawn", 2, "fn", "a function or nil", fn) end
  local child = open_tree("s:spawn", opts or {}, self, 2)
  if fn == nil then return child end
  return bracket(child, fn)
end

--- Store-level session on an opened store.
function Store:session(opts, fn)
  check_store(self, "store:session")
  opts = opts or {}
  if fn ~= nil and type(fn) ~= "function" then argerr("store:session", 2, "fn", "a function or nil", fn) end
  local s = open_tree("store:session", opts, nil, 2, self)
  if fn == nil then return s end
  return bracket(s, fn)
end

-- devices ----------------------------------------------------------------------------------------

local devices = setmetatable({}, { __mode = "k" }) -- proxy -> inner spec

local function frozen(fn_name, t)
  local proxy = {}
  setmetatable(proxy, {
    __index = t,
    __newindex = function(_, k)
      error(sformat("%s: a device is frozen; field '%s' cannot be changed (build a new device with knl.device)",
        fn_name, tostring(k)), 2)
    end,
    __pairs = function() return next, t, nil end,
    __len = function() return #t end,
    __metatable = "knl.device (frozen)",
  })
  return proxy
end

-- Tool names of a device's tools array, by array identity: the kernel builds that array once per
-- device and never changes it, so its names are listed once, not on every beat.
local device_tool_names = setmetatable({}, { __mode = "k" })

local function freeze_list(list)
  local c = {}
  for i, v in ipairs(list) do c[i] = v end
  return frozen("knl.device", c)
end

--- A frozen bundle of policy: { llm, tools, tool_policy, fold, filters, system, cost }.
function knl.device(spec)
  if type(spec) ~= "table" then argerr("knl.device", 1, "spec", "a table", spec) end
  if not plain_device_spec(spec) then shape_error("knl.device", "argument 1 (spec)", types.DeviceSpec, spec, 2) end
  local llm = spec.llm
  if type(llm.chat) ~= "function" then
    error("knl.device: argument 1 (spec) field 'llm' must be a Port with a chat method (port:chat(request))", 2)
  end
  for k in pairs(spec) do
    if not types.DeviceSpec.fields[k] then
      error(sformat("knl.device: argument 1 (spec) has unknown field '%s' (known: llm, tools, tool_policy, fold, filters, system, cost)", tostring(k)), 2)
    end
  end
  local tools = spec.tools
  if tools ~= nil and not (type(tools.list) == "function" and type(tools.call) == "function") then
    tools = require("knl_adapter").tools(tools)
  end
  local specs = tools and tools:list() or {}
  -- the request's tools: one array per device, so a Port sees the same list every beat and
  -- encodes it once (treat it as a value; a filter that changes tools returns a new request)
  local tools_array
  if #specs > 0 then
    tools_array = std.json.array()
    for i, t in ipairs(specs) do tools_array[i] = t end
    local names = std.json.array()
    for i, t in ipairs(specs) do names[i] = t.name end
    device_tool_names[tools_array] = names
  end
  local inner = {
    llm = llm,
    tools = tools,
    tool_specs = freeze_list(specs),
    tools_array = tools_array,
    tool_policy = type(spec.tool_policy) == "table" and frozen("knl.device", spec.tool_policy) or spec.tool_policy,
    fold = spec.fold,
    filters = spec.filters and freeze_list(spec.filters) or nil,
    system = spec.system,
    cost = spec.cost,
  }
  local proxy = frozen("knl.device", inner)
  devices[proxy] = inner
  return proxy
end

-- records ----------------------------------------------------------------------------------------

local function names_of(tools)
  local hit = tools and device_tool_names[tools]
  if hit then return hit end
  local out = std.json.array()
  for i, t in ipairs(tools or {}) do out[i] = t.name end
  return out
end

local record = {}
knl.record = record

local function request_data(req, profile)
  local last = req.messages and req.messages[#req.messages]
  return {
    model = profile and profile.model or req.model,
    provider = profile and profile.provider or nil,
    message_count = req.messages and #req.messages or 0,
    last_role = last and last.role or nil,
    tools = names_of(req.tools),
    system = req.system ~= nil,
    max_tokens = req.max_tokens,
    tool_choice = req.tool_choice,
  }
end

--- \`llm_request\`: what was asked (the messages themselves are already in the log).
function record.llm_request(s, req, beat, profile)
  return append(s, "llm_request", request_data(req, profile), nil, beat)
end

-- The data of an \`llm_response\` event, and its usage with total_tokens filled in.
local function response_data(resp, elapsed_ms)
  local u = resp.usage or {}
  local usage = {
    input_tokens = u.input_tokens or 0, output_tokens = u.output_tokens or 0,
    cache_read_input_tokens = u.cache_read_input_tokens, cache_creation_input_tokens = u.cache_creation_input_tokens,
    thinking_tokens = u.thinking_tokens,
  }
  usage.total_tokens = u.total_tokens or (usage.input_tokens + usage.output_tokens)
  usage.cost_usd = u.cost_usd -- what llm_proto priced the call at, when the model has a price
  return { content = resp.content, stop_reason = resp.stop_reason, model = resp.model, usage = usage,
    elapsed_ms = elapsed_ms }, usage
end

--- \`llm_response\`: the normalised response, with total_tokens filled in. Returns seq, usage.
function record.llm_response(s, resp, beat, elapsed_ms)
  local data, usage = response_data(resp, elapsed_ms)
  return append(s, "llm_response", data, nil, beat), usage
end

function record.llm_call_failed(s, err, beat, elapsed_ms)
  return append(s, "llm_call_failed", { error = describe_error(err), elapsed_ms = elapsed_ms }, nil, beat)
end

function record.tool_call(s, call, beat)
  return append(s, "tool_call", { id = call.id, name = call.name, input = call.input }, nil, beat)
end

function record.tool_result(s, call, content, is_error, beat, elapsed_ms)
  return append(s, "tool_result", { id = call.id, name = call.name, content = content, is_error = is_error == true,
    elapsed_ms = elapsed_ms }, nil, beat)
end

-- beats ------------------------------------------------------------------------------------------

-- A beat's own records are deferred (see the header): they commit before the run next acts
-- outside Lua.
local function call_failed(s, err, beat, elapsed_ms)
  append(s, "llm_call_failed", { error = describe_error(err), elapsed_ms = elapsed_ms }, nil, beat, true)
end

local function policy_verdict(policy, call, s)
  if policy == nil then return true end
  if type(policy) == "function" then
    local ok, verdict, why = pcall(policy, call, s)
    if not ok then return false, "tool_policy raised: " .. describe_error(verdict) end
    if verdict == nil or verdict == true then return true end
    if verdict == "stop" then return "stop", why or "stopped by the tool policy" end
    return false, why or "denied by the tool policy"
  end
  local function has(list)
    for _, n in ipairs(list or {}) do if n == call.name then return true end end
    return false
  end
  if policy.deny and has(policy.deny) then return false, "denied by the tool policy" end
  if policy.allow and not has(policy.allow) then return false, "not in the tool policy's allow list" end
  return true
end

local function encode_result(v)
  if type(v) == "string" then return v end
  if v == nil then return "" end
  local ok, s = pcall(std.json.encode, v)
  return ok and s or tostring(v)
end

local function text_of(content)
  local parts = {}
  for _, b in ipairs(content) do if b.type == "text" then parts[#parts + 1] = b.text end end
  return concat(parts)
end

-- What a beat costs (the device's \`cost\`, else tokens for a \`tokens\` budget, else 1); charges the
-- session and returns the \`budget_charge\` data.
local function charge_for(dev, budget, s, out)
  local cost
  if dev.cost then
    local cok, c = pcall(dev.cost, out, s)
    if not cok or type(c) ~= "number" then
      cost = 1
      log.warn(sformat("knl.beat: the device's cost function %s; charged 1", cok and "returned no number" or
        ("raised: " .. describe_error(c))))
    else
      cost = c
    end
  elseif budget.tag == "tokens" then
    cost = out.usage.total_tokens
  else
    cost = 1
  end
  s.spent = s.spent + cost
  return { tag = budget.tag, amount = cost, spent = s.spent, remaining = budget.amount - s.spent }
end

-- The caller's look at a response before any of its tools runs (\`opts.on_response(out, s)\`):
-- nil or false lets the beat go on; a string stops it with that reason; raising stops it too
-- (a cancel or os.exit is re-raised).
local function response_verdict(f, out, s)
  if f == nil then return nil end
  local ok, r = pcall(f, out, s)
  if not ok then
    if is_fatal(r) then error(r, 0) end
    return "on_response raised: " .. describe_error(r)
  end
  if r == nil or r == false then return nil end
  return type(r) == "string" and r or describe_error(r)
end

-- The common case of \`lcheck(resp, types.Response)\` (keep in step with knl_types.Response)
-- without building a path per field: true only when the full check passes too; anything else
-- goes to lcheck, which decides and words the reason.
local function opt_type(v, t) return v == nil or type(v) == t end
local BLOCK_OK = {
  text = function(b) return type(b.text) == "string" end,
  tool_use = function(b) return type(b.id) == "string" and type(b.name) == "string" and type(b.input) == "table" end,
  thinking = function(b) return type(b.thinking) == "string" and opt_type(b.signature, "string") end,
  tool_result = function(b)
    return type(b.tool_use_id) == "string" and b.content ~= nil and opt_type(b.is_error, "boolean")
  end,
}
local function plain_response(resp)
  if type(resp) ~= "table" or not (opt_type(resp.stop_reason, "string") and opt_type(resp.model, "string")) then
    return false
  end
  local u = resp.usage
  if u ~= nil and not (type(u) == "table" and type(u.input_tokens) == "number" and type(u.output_tokens) == "number"
      and opt_type(u.total_tokens, "number") and opt_type(u.cache_read_input_tokens, "number")
      and opt_type(u.cache_creation_input_tokens, "number") and opt_type(u.thinking_tokens, "number")) then
    return false
  end
  local content = resp.content
  if type(content) ~= "table" then return false end
  local n, count = #content, 0
  for _ in pairs(content) do count = count + 1 end
  if count ~= n then return false end
  for i = 1, n do
    local b = content[i]
    if type(b) ~= "table" then return false end
    local ok = BLOCK_OK[b.type]
    if not (ok and ok(b)) then return false end
  end
  return true
end
knl._plain_response = plain_response -- for the spec that holds it to lcheck

--- One model call plus the tools it asks for, charged to the session's budget.
-- \`opts\` = { max_tokens, tool_choice } passed into the request, and \`on_response(out, s)\`: called
-- once the response is recorded and before any tool runs (\`out\` as in the Outcome, \`out.tools\`
-- still empty); returning a reason (a string) stops the beat \u2014 each tool call it asked for is
-- answered \`not run: <reason>\` with is_error, \`beat_stopped\` records \`where = "on_response"\`,
-- and the Outcome is \`stopped\` (with \`out\`). A loop that decides per turn (on_turn callbacks,
-- its own limits) needs this: by the time the beat returns, the tools have run.
function knl.beat(s, device, opts)
  check_session(s, "knl.beat", 2)
  local dev = devices[device]
  if not dev then argerr("knl.beat", 2, "device", "a device from knl.device", device) end
  if opts ~= nil and type(opts) ~= "table" then argerr("knl.beat", 3, "opts", "a table or nil", opts) end
  if s.closed then error(sformat("knl.beat: session %s is closed", s.id), 2) end
  opts = opts or {}
  local on_response = opts.on_response
  if on_response ~= nil and type(on_response) ~= "function" then
    error("knl.beat: argument 3 (opts) field 'on_response' must be a function, got " .. type(on_response), 2)
  end
  local beat = s.beats + 1
  local budget = s.budget
  if budget and s.spent >= budget.amount then
    local reason = sformat("budget exhausted: spent %s of %s %s", tostring(s.spent), tostring(budget.amount), budget.tag)
    append(s, "beat_refused", { reason = reason, spent = s.spent, amount = budget.amount, tag = budget.tag }, nil, beat,
      true)
    return Outcome.refused({ beat = beat, reason = reason })
  end
  s.beats = beat

  local messages = s:messages()
  if dev.fold then
    local ok, m = pcall(dev.fold, messages, s)
    if not ok then
      call_failed(s, "fold raised: " .. describe_error(m), beat, 0)
      return Outcome.error({ beat = beat, error = "fold raised: " .. describe_error(m) })
    end
    messages = m
  end
  local req = { messages = messages, system = dev.system, max_tokens = opts.max_tokens, tool_choice = opts.tool_choice,
    tools = dev.tools_array }
  for i, f in ipairs(dev.filters or {}) do
    local ok, r, why = pcall(f, req, s)
    if not ok then
      local e = sformat("filter %d raised: %s", i, describe_error(r))
      call_failed(s, e, beat, 0)
      return Outcome.error({ beat = beat, error = e })
    end
    if r == false then
      local reason = why or sformat("stopped by filter %d", i)
      append(s, "beat_stopped", { reason = reason, where = "filter" }, nil, beat, true)
      return Outcome.stopped({ beat = beat, reason = reason })
    end
    if type(r) == "table" then req = r end
  end

  local port = dev.llm
  append(s, "llm_request", request_data(req, port.profile), nil, beat, true)
  local t0 = clock()
  local ok, resp = pcall(port.chat, port, req)
  local elapsed = clock() - t0
  if not ok then
    call_failed(s, resp, beat, elapsed)
    if is_fatal(resp) then error(resp, 0) end
    return Outcome.error({ beat = beat, error = describe_error(resp) })
  end
  local valid, why = plain_response(resp)
  if not valid then valid, why = lcheck(resp, types.Response) end
  if not valid then
    local e = "the Port answered outside knl_types.Response: " .. why
    call_failed(s, e, beat, elapsed)
    return Outcome.error({ beat = beat, error = e })
  end
  local rdata, usage = response_data(resp, elapsed)
  local has_tools = false
  for _, b in ipairs(resp.content) do
    if b.type == "tool_use" then has_tools = true; break end
  end
  local out = { content = resp.content, text = text_of(resp.content), tools = {}, usage = usage,
    stop_reason = resp.stop_reason, model = resp.model }
  if not has_tools then
    -- Nothing runs between the response and its charge: both go to the host in one call.
    local charge = budget and charge_for(dev, budget, s, out)
    append_many(s, charge and { { kind = "llm_response", data = rdata }, { kind = "budget_charge", data = charge } }
      or { { kind = "llm_response", data = rdata } }, beat, true)
    local reason = response_verdict(on_response, out, s)
    if reason then
      append(s, "beat_stopped", { reason = reason, where = "on_response" }, nil, beat, true)
      return Outcome.stopped({ beat = beat, reason = reason, out = out })
    end
    return Outcome.ok({ beat = beat, out = out })
  end
  -- With tools, events go to the host (deferred, see the header) in as few calls as keep them
  -- honest: what is written before anything of the caller's runs (on_response, a policy
  -- function, a tool) is handed over right then, so it carries the time it happened, the fold
  -- is current when the caller looks, and the commit the caller's first effect triggers has
  -- it; the rest \u2014 results of calls that do not run, the charge, a stop \u2014 travels with the
  -- next hand-over.
  local batch = { { kind = "llm_response", data = rdata } }
  local function flush()
    if #batch > 0 then
      append_many(s, batch, beat, true)
      batch = {}
    end
  end
  local calls = out.tools
  local stopped, stopped_where
  local asked = false
  local policy = dev.tool_policy
  for _, b in ipairs(resp.content) do
    if b.type == "tool_use" then
      local call = { id = b.id, name = b.name, input = b.input }
      batch[#batch + 1] = { kind = "tool_call", data = { id = call.id, name = call.name, input = call.input } }
      if not asked then
        asked = true
        if on_response then
          flush()
          stopped = response_verdict(on_response, out, s)
          if stopped then stopped_where = "on_response" end
        end
      end
      calls[#calls + 1] = call
      local content, is_error
      local t1 = clock()
      if stopped then
        content, is_error = "not run: " .. stopped, true
      else
        if type(policy) == "function" then flush() end
        local verdict, reason = policy_verdict(policy, call, s)
        if verdict == "stop" then
          stopped, stopped_where = reason, "tool_policy"
          content, is_error = "not run: " .. reason, true
        elseif not verdict then
          content, is_error = "denied: " .. reason, true
        elseif not dev.tools then
          content, is_error = sformat("unknown tool '%s': the device has no tools", call.name), true
        else
          flush()
          local tok, res = pcall(dev.tools.call, dev.tools, call.name, call.input,
            { session = s, beat = beat, id = call.id })
          if tok then content, is_error = encode_result(res), false
          elseif is_fatal(res) then
            record.tool_result(s, call, describe_error(res), true, beat, clock() - t1)
            error(res, 0)
          else content, is_error = describe_error(res), true end
        end
      end
      batch[#batch + 1] = { kind = "tool_result", data = { id = call.id, name = call.name, content = content,
        is_error = is_error == true, elapsed_ms = clock() - t1 } }
      call.result, call.is_error = content, is_error
    end
  end

  if budget then batch[#batch + 1] = { kind = "budget_charge", data = charge_for(dev, budget, s, out) } end
  if stopped then batch[#batch + 1] = { kind = "beat_stopped", data = { reason = stopped, where = stopped_where } } end
  flush()
  if stopped then return Outcome.stopped({ beat = beat, reason = stopped, out = out }) end
  return Outcome.ok({ beat = beat, out = out })
end

-- views ------------------------------------------------------------------------------------------

local views = {}
knl.views = views

local TOKENS = "COALESCE(json_extract(data, '$.usage.%s'), json_extract(data, '$.%s'), 0)"
local function tok(name) return sformat(TOKENS, name, name) end

--- One row per beat: beat, started, ended, calls, tool_calls, input_tokens, output_tokens, outcome.
function views.beats(s)
  return s:query(sformat([[
    SELECT CAST(json_extract(meta, '$.beat') AS INTEGER) AS beat,
      MIN(epoch_ms) AS started, MAX(epoch_ms) AS ended,
      SUM(kind = 'llm_request') AS calls, SUM(kind = 'tool_call') AS tool_calls,
      SUM(CASE WHEN kind = 'llm_response' THEN %s ELSE 0 END) AS input_tokens,
      SUM(CASE WHEN kind = 'llm_response' THEN %s ELSE 0 END) AS output_tokens,
      CASE WHEN SUM(kind = 'beat_refused') > 0 THEN 'refused'
           WHEN SUM(kind = 'llm_call_failed') > 0 THEN 'error'
           WHEN SUM(kind = 'beat_stopped') > 0 THEN 'stopped'
           ELSE 'ok' END AS outcome
    FROM events WHERE stream = ? AND json_extract(meta, '$.beat') IS NOT NULL
    GROUP BY 1 ORDER BY 1]], tok("input_tokens"), tok("output_tokens")), { s.id })
end

--- Each tool call with its result (nil while pending): seq, beat, id, name, input, content, is_error, ms.
function views.tool_pairs(s)
  local rows = s:query([[
    SELECT c.seq AS seq, CAST(json_extract(c.meta, '$.beat') AS INTEGER) AS beat,
      json_extract(c.data, '$.id') AS id, json_extract(c.data, '$.name') AS name,
      json_extract(c.data, '$.input') AS input, json_extract(r.data, '$.content') AS content,
      json_extract(r.data, '$.is_error') AS is_error, r.epoch_ms - c.epoch_ms AS ms
    FROM events c LEFT JOIN events r
      ON r.stream = c.stream AND r.kind = 'tool_result' AND json_extract(r.data, '$.id') = json_extract(c.data, '$.id')
    WHERE c.stream = ? AND c.kind = 'tool_call' ORDER BY c.seq]], { s.id })
  for _, r in ipairs(rows) do
    if type(r.input) == "string" then r.input = std.json.decode(r.input) end
    if r.is_error ~= nil then r.is_error = r.is_error == 1 end
  end
  return rows
end

--- The budget's ledger: one row per charge (beat, tag, amount, spent, remaining) and per refusal.
function views.ledger(s)
  return s:query([[
    SELECT seq, CAST(json_extract(meta, '$.beat') AS INTEGER) AS beat, kind,
      json_extract(data, '$.tag') AS tag, json_extract(data, '$.amount') AS amount,
      json_extract(data, '$.spent') AS spent, json_extract(data, '$.remaining') AS remaining
    FROM events WHERE stream = ? AND kind IN ('budget_charge', 'beat_refused') ORDER BY seq]], { s.id })
end

--- Token usage per model: model, calls, input/output/total/cache/thinking tokens.
function views.usage(s)
  return s:query(sformat([[
    SELECT json_extract(data, '$.model') AS model, COUNT(*) AS calls,
      SUM(%s) AS input_tokens, SUM(%s) AS output_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.total_tokens'), %s + %s)) AS total_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.cache_read_input_tokens'), 0)) AS cache_read_input_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.cache_creation_input_tokens'), 0)) AS cache_creation_input_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.thinking_tokens'), 0)) AS thinking_tokens
    FROM events WHERE stream = ? AND kind = 'llm_response' GROUP BY 1 ORDER BY 1]],
    tok("input_tokens"), tok("output_tokens"), tok("input_tokens"), tok("output_tokens")), { s.id })
end

--- Sessions of the store, newest first: id, owner, labels, started, closed, status, beats, tokens.
-- \`opts.labels\` filters on the seed event's meta; \`opts.limit\` bounds the rows.
function views.sessions(s, opts)
  opts = opts or {}
  local where, params = { "o.kind = 'session_open'" }, {}
  local keys = {}
  for k in pairs(opts.labels or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    where[#where + 1] = "CAST(json_extract(o.meta, ?) AS TEXT) = ?"
    params[#params + 1] = '$."' .. k:gsub('"', '""') .. '"'
    params[#params + 1] = tostring(opts.labels[k])
  end
  params[#params + 1] = opts.limit or -1
  local rows = s:query([[
    SELECT o.stream AS id, json_extract(o.data, '$.owner') AS owner, o.meta AS meta, o.epoch_ms AS started,
      (SELECT json_extract(c.data, '$.status') FROM events c
        WHERE c.stream = o.stream AND c.kind = 'session_close' LIMIT 1) AS status,
      (SELECT COUNT(*) FROM events c WHERE c.stream = o.stream AND c.kind = 'session_close') AS closes,
      (SELECT COUNT(*) FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_request') AS beats,
      (SELECT COALESCE(SUM(COALESCE(json_extract(r.data, '$.usage.total_tokens'),
                                    json_extract(r.data, '$.input_tokens') + json_extract(r.data, '$.output_tokens'),
                                    0)), 0)
         FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_response') AS tokens
    FROM events o WHERE ]] .. concat(where, " AND ") .. [[ ORDER BY o.position DESC LIMIT ?]], params)
  for _, r in ipairs(rows) do
    r.closed = r.closes > 0
    r.closes = nil
    r.labels = type(r.meta) == "table" and r.meta or {}
    r.meta = nil
  end
  return rows
end

-- published surface ------------------------------------------------------------------------------

--- The kernel's published surface: the event table's columns, kinds, views, outcomes.
function knl.api()
  return {
    version = knl.VERSION,
    table = "events",
    schema = sys.schema(),
    kinds = { "session_open", "session_close", "msg_user", "msg_assistant", "llm_request", "llm_response",
      "llm_call_failed", "tool_call", "tool_result", "budget_charge", "beat_refused", "beat_stopped" },
    builtin_views = { "events", "tail" },
    views = { "beats", "tool_pairs", "ledger", "usage", "sessions" },
    outcomes = Outcome.KINDS,
  }
end

return knl
`;

// embedded/knl_adapter/init.lua
var init_default3 = '--- knl_adapter: what a device is built from \u2014 Ports for the model, ToolPorts for the tools.\n--\n-- Owns:\n-- - `adapter.tools({ ... })`: one ToolPort from flat specs `{ name, description, input_schema,\n--   handler }` and/or other ToolPorts (anything with `:list()` and `:call(name, input, ctx)`),\n--   in the order given; a name given twice is an error naming both places.\n-- - `adapter.registry()`: a ToolPort over the global `tool.*` registry; `adapter.mcp(server)` one\n--   over a connected MCP server\'s tools (so MCP calls are recorded like Lua tool calls).\n-- - `adapter.anthropic`, `adapter.openai`, `adapter.replay`: the provider Ports of `llm_proto`\n--   (`require("llm_proto.port")`), reached on first access so that a script that never names a\n--   provider never loads one. Each is a Port class: `P:open(opts)` returns a port with\n--   `port.profile` and `port:chat(request)` answering the normalised `knl_types.Response`.\n--\n-- A ToolPort\'s `call` runs the handler in the calling task (it may make host calls) and lets its\n-- error propagate: the kernel\'s beat turns it into an `is_error` tool result.\nlocal types = require("knl_types")\nlocal lcheck = require("lshape.check").check\nlocal sformat = string.format\n\nlocal M = {}\n\nlocal ToolPort = {}\nToolPort.__index = ToolPort\nToolPort.__name = "knl_adapter.ToolPort"\n\n--- The specs `{ name, description, input_schema }` in order.\nfunction ToolPort:list()\n  local out = std.json.array()\n  for i, e in ipairs(self._order) do\n    out[i] = { name = e.name, description = e.description, input_schema = e.input_schema }\n  end\n  return out\nend\n\n--- Calls tool `name` with `input`; `ctx` = { session, beat, id } (id: the model\'s tool_use id)\n-- when called by a beat.\nfunction ToolPort:call(name, input, ctx)\n  local e = self._by_name[name]\n  if not e then\n    local known = {}\n    for i, x in ipairs(self._order) do known[i] = x.name end\n    error(sformat("unknown tool \'%s\'; this device has: %s", tostring(name),\n      #known > 0 and table.concat(known, ", ") or "(none)"), 2)\n  end\n  if e.port then return e.port:call(name, input, ctx) end\n  return e.handler(input, ctx)\nend\n\nlocal function is_toolport(v)\n  return type(v) == "table" and type(v.list) == "function" and type(v.call) == "function"\nend\nM.is_toolport = is_toolport\n\n--- One ToolPort from flat specs and ToolPorts.\nfunction M.tools(list)\n  if type(list) ~= "table" then\n    error("knl_adapter.tools: argument 1 (tools) must be a list of tool specs or ToolPorts, got " .. type(list), 2)\n  end\n  if is_toolport(list) then return list end\n  local self = setmetatable({ _order = {}, _by_name = {} }, ToolPort)\n  local function add(e, where)\n    local prev = self._by_name[e.name]\n    if prev then\n      error(sformat("knl_adapter.tools: tool \'%s\' is given twice (%s and %s)", e.name, prev.where, where), 3)\n    end\n    e.where = where\n    self._by_name[e.name] = e\n    self._order[#self._order + 1] = e\n  end\n  for i, item in ipairs(list) do\n    local where = sformat("entry %d", i)\n    if is_toolport(item) then\n      for _, spec in ipairs(item:list()) do\n        add({ name = spec.name, description = spec.description, input_schema = spec.input_schema, port = item }, where)\n      end\n    elseif type(item) == "table" then\n      local ok, why = lcheck(item, types.ToolSpec)\n      if not ok then error(sformat("knl_adapter.tools: %s: %s", where, why), 2) end\n      if type(item.handler) ~= "function" then\n        error(sformat("knl_adapter.tools: %s (\'%s\'): field \'handler\' must be a function, got %s", where,\n          item.name, type(item.handler)), 2)\n      end\n      add({\n        name = item.name,\n        description = item.description,\n        input_schema = item.input_schema or { type = "object", properties = std.json.object() },\n        handler = item.handler,\n      }, where)\n    else\n      error(sformat("knl_adapter.tools: %s must be a tool spec or a ToolPort, got %s", where, type(item)), 2)\n    end\n  end\n  return self\nend\n\n--- A ToolPort over the global `tool.*` registry (what `tool.register` registered).\nfunction M.registry()\n  return {\n    list = function()\n      local out = std.json.array()\n      for i, s in ipairs(tool.schema()) do\n        out[i] = { name = s.name, description = s.description, input_schema = s.input_schema }\n      end\n      return out\n    end,\n    call = function(_, name, input) return tool.call(name, input) end,\n  }\nend\n\nlocal function mcp_text(result)\n  if type(result) ~= "table" then return result end\n  local content = result.content or (result.result and result.result.content)\n  if type(content) ~= "table" then return result end\n  local parts = {}\n  for _, c in ipairs(content) do\n    if type(c) == "table" and c.type == "text" then parts[#parts + 1] = c.text end\n  end\n  return #parts == #content and table.concat(parts, "\\n") or result\nend\n\n--- A ToolPort over the tools of the connected MCP server `server` (`mcp.list_tools` /\n-- `mcp.call`), named `server__tool` as `agent.run` names them. A result flagged `isError` raises\n-- its text, so the beat records it as an `is_error` tool result; text content is returned as text.\nfunction M.mcp(server)\n  if type(server) ~= "string" or server == "" then\n    error("knl_adapter.mcp: argument 1 (server) must be a non-empty string, got " .. type(server), 2)\n  end\n  if type(mcp) ~= "table" or type(mcp.list_tools) ~= "function" then\n    error("knl_adapter.mcp: the mcp.* API is not available in this run", 2)\n  end\n  local prefix = server .. "__"\n  return {\n    list = function()\n      local listed = mcp.list_tools(server)\n      if type(listed) == "table" and listed.ok == false then\n        error(sformat("knl_adapter.mcp: listing the tools of \'%s\' failed: %s", server, tostring(listed.error)), 2)\n      end\n      local tools = type(listed) == "table" and listed.tools or listed\n      local out = std.json.array()\n      for i, t in ipairs(tools or {}) do\n        out[i] = { name = prefix .. t.name, description = t.description or "",\n          input_schema = t.input_schema or t.inputSchema or { type = "object", properties = std.json.object() } }\n      end\n      return out\n    end,\n    call = function(_, name, input)\n      local tool_name = name:sub(1, #prefix) == prefix and name:sub(#prefix + 1) or name\n      local r = mcp.call(server, tool_name, input or std.json.object())\n      if type(r) == "table" and (r.isError or r.is_error or r.ok == false) then\n        error(tostring(r.error or mcp_text(r)), 0)\n      end\n      return mcp_text(r)\n    end,\n  }\nend\n\nlocal PROVIDERS = { anthropic = true, openai = true, replay = true }\n\n-- Provider Ports, loaded from llm_proto on first access.\nsetmetatable(M, {\n  __index = function(t, k)\n    if not PROVIDERS[k] then return nil end\n    local ok, mod = pcall(require, "llm_proto.port")\n    if not ok then\n      error(sformat("knl_adapter.%s: the provider Ports live in llm_proto.port, which could not be loaded: %s",\n        k, tostring(mod)), 2)\n    end\n    local P = type(mod) == "table" and mod[k]\n    if P == nil and type(mod) == "table" and type(mod.open) == "function" then\n      -- One Port class for every provider: bind the provider name.\n      P = { open = function(_, opts)\n        local o = {}\n        for key, v in pairs(opts or {}) do o[key] = v end\n        o.provider = o.provider or k\n        return mod:open(o)\n      end }\n    end\n    if type(P) ~= "table" or type(P.open) ~= "function" then\n      error(sformat("knl_adapter.%s: llm_proto.port has no \'%s\' Port (a table with :open(opts))", k, k), 2)\n    end\n    rawset(t, k, P)\n    return P\n  end,\n})\n\nreturn M\n';

// embedded/knl_types/init.lua
var init_default4 = '--- knl_types: the kernel\'s shapes, declared once with lshape.\n--\n-- Owns the declarations the kernel checks at its boundary and publishes for editors:\n-- `Event` (a row of the published table), `Usage`, `ContentBlock`, `Response` (what a Port\'s\n-- `chat` must return), `Request` (what a beat sends), `ToolSpec`, `Budget`, `SessionOpts`,\n-- `DeviceSpec` and `Outcome`. `luacats()` renders them as LuaCATS classes prefixed `knl.`.\n--\n-- Sealed with `knl`: a Port that answers outside `Response` makes the beat an `error` outcome\n-- naming the field, instead of a confusing failure three calls later. Changing a shape here is a\n-- change of the kernel\'s contract, which is why a project cannot shadow this module.\nlocal lshape = require("lshape")\nlocal T = lshape.t\nlocal M = {}\n\nM.Usage = T.named("Usage", T.shape({\n  input_tokens = T.number,\n  output_tokens = T.number,\n  total_tokens = T.number:optional(),\n  cache_read_input_tokens = T.number:optional(),\n  cache_creation_input_tokens = T.number:optional(),\n  thinking_tokens = T.number:optional(),\n}))\n\nM.ContentBlock = T.named("ContentBlock", T.discriminated("type", {\n  text = T.shape({ type = T.literal("text"), text = T.string }),\n  tool_use = T.shape({ type = T.literal("tool_use"), id = T.string, name = T.string, input = T.table }),\n  thinking = T.shape({ type = T.literal("thinking"), thinking = T.string, signature = T.string:optional() }),\n  tool_result = T.shape({ type = T.literal("tool_result"), tool_use_id = T.string, content = T.any,\n    is_error = T.boolean:optional() }),\n}))\n\nM.Response = T.named("Response", T.shape({\n  content = T.array_of(M.ContentBlock):describe("normalised content blocks"),\n  stop_reason = T.string:optional(),\n  usage = M.Usage:optional(),\n  model = T.string:optional(),\n}))\n\nM.Message = T.named("Message", T.shape({\n  role = T.one_of("user", "assistant"),\n  content = T.any_of(T.string, T.array_of(M.ContentBlock)),\n}))\n\nM.ToolSpec = T.named("ToolSpec", T.shape({\n  name = T.pattern("^[%w_%-%.]+$"),\n  description = T.string,\n  input_schema = T.table:optional(),\n}))\n\nM.Request = T.named("Request", T.shape({\n  messages = T.array_of(M.Message),\n  system = T.string:optional(),\n  tools = T.array_of(M.ToolSpec):optional(),\n  tool_choice = T.any:optional(),\n  max_tokens = T.integer:optional(),\n}))\n\nM.Budget = T.named("Budget", T.shape({\n  amount = T.number:describe("what the owner granted"),\n  tag = T.string:optional():describe("unit: beats (default), tokens, or anything a device\'s cost returns"),\n}))\n\nM.SessionOpts = T.named("SessionOpts", T.shape({\n  owner = T.string:optional(),\n  budget = M.Budget:optional(),\n  scope = T.any:optional(),\n  labels = T.map_of(T.string, T.any):optional(),\n  store = T.any:optional():describe(\'nil (the project database), "mem", or { sqlite = path }\'),\n  children = T.array_of(T.table):optional(),\n}))\n\nM.DeviceSpec = T.named("DeviceSpec", T.shape({\n  llm = T.table:describe("a Port: port:chat(request) -> Response"),\n  tools = T.table:optional():describe("a ToolPort (knl_adapter.tools) or a list of flat specs"),\n  tool_policy = T.any_of(T.func, T.table):optional(),\n  fold = T.func:optional(),\n  filters = T.array_of(T.func):optional(),\n  system = T.string:optional(),\n  cost = T.func:optional(),\n}))\n\nM.Event = T.named("Event", T.shape({\n  position = T.integer,\n  stream = T.string,\n  seq = T.integer,\n  epoch_ms = T.integer,\n  kind = T.string,\n  schema_version = T.integer,\n  meta = T.table,\n  data = T.table,\n}))\n\nM.Outcome = T.named("Outcome", T.shape({\n  kind = T.one_of("ok", "refused", "error", "stopped"),\n  beat = T.integer:optional(),\n  out = T.table:optional(),\n  reason = T.string:optional(),\n  error = T.string:optional(),\n}))\n\n--- The declarations as LuaCATS classes (`knl.Event`, ...).\nfunction M.luacats()\n  local shapes = {}\n  for name, s in pairs(M) do\n    if lshape.t.is_schema(s) then shapes[name] = s end\n  end\n  return lshape.luacats.gen(shapes, "knl.")\nend\n\nreturn M\n';

// embedded/llm_proto/anthropic.lua
var anthropic_default = '--- llm_proto.anthropic: canonical request \u2192 Anthropic Messages body, and back.\n--\n-- Owns the Anthropic column of the translation table:\n-- - `tool_choice` \u2192 `{ type = auto|any|none|tool }`, `parallel_tool_calls = false` \u2192\n--   `tool_choice.disable_parallel_tool_use`; `stop` \u2192 `stop_sequences`;\n-- - `thinking`: on 4.6+ models `{ type = "adaptive" }` plus `output_config.effort`; on older ones\n--   `{ type = "enabled", budget_tokens }` (an effort maps through `EFFORT_BUDGET`, capped below\n--   `max_tokens`); `false` \u2192 `{ type = "disabled" }`;\n-- - `response_format = { type = "json_schema", json_schema = { schema } }` \u2192\n--   `output_config.format = { type = "json_schema", schema }`;\n-- - prompt caching (on unless `cache_control = false`; a table is used as the marker): the\n--   system prompt, the last tool and the last block of the last message carry the marker (three\n--   of the four breakpoints), so a growing conversation re-reads its prefix from cache;\n-- - `context_management = true` (or a `context_management_config` table, sent whole) \u2192 body\n--   `context_management` plus the `context-management-2025-06-27` beta.\n-- Refused: forced tool use under manual thinking; a budget below 1024 or not below `max_tokens`.\n-- A `redacted_thinking` block is normalised to `{ type = "thinking", thinking = "", redacted_data }`\n-- (so consumers see the four block types only) and sent back as `redacted_thinking`.\n-- Dropped with a warning: `temperature`, `top_p`, `top_k` (API version 2026-10-21, the one the\n-- pinned `@anthropic-ai/sdk` 1.x speaks, has no sampling parameters; the warning names the\n-- narrower reason when one applies: thinking on, or a model past Opus 4.6) and `seed`. Messages keep their blocks; thinking blocks without a signature (those came from\n-- another provider\'s reasoning) are dropped because the API would reject them.\nlocal P = require("llm_proto")\nlocal A = {}\n\nlocal type, ipairs, pairs, error, sformat = type, ipairs, pairs, error, string.format\n\nA.CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"\n--- The default context editing: clear old tool uses past 80K input tokens, keep the last 3,\n-- clear at least 10K.\nfunction A.default_context_management()\n  return {\n    edits = P.array({ {\n      type = "clear_tool_uses_20250919",\n      trigger = { type = "input_tokens", value = 80000 },\n      keep = { type = "tool_uses", value = 3 },\n      clear_at_least = { type = "input_tokens", value = 10000 },\n    } }),\n  }\nend\n\nlocal function cache_marker(cc)\n  if type(cc) == "table" then return cc end\n  return { type = "ephemeral" }\nend\n\nlocal function clean_block(b)\n  if b.type == "thinking" then\n    if b.redacted_data then return { type = "redacted_thinking", data = b.redacted_data } end\n    if not b.signature then return nil end\n  end\n  if b.type == "text" and b.text == "" then return nil end\n  if b.type == "tool_use" and b.invalid_input ~= nil then\n    local c = P.copy(b)\n    c.invalid_input = nil\n    return c\n  end\n  return b\nend\n\n-- Converted form of each canonical message, reused while the message keeps its role and content\n-- (a loop resends its whole history every turn; messages are values once sent). The cache\n-- marker of the last message is applied to a copy, never to a cached form.\nlocal converted = setmetatable({}, { __mode = "k" })\n\nlocal function convert_one(m)\n  local msg = { role = m.role, content = m.content }\n  if type(m.content) == "table" then\n    local blocks = P.array()\n    for _, b in ipairs(m.content) do\n      local c = type(b) == "table" and clean_block(b)\n      if c then blocks[#blocks + 1] = c end\n    end\n    msg.content = blocks\n  end\n  return msg\nend\n\nlocal function convert_messages(messages, system, cache)\n  local out, sys = P.array(), system\n  for i, m in ipairs(messages) do\n    if type(m) ~= "table" then\n      error(sformat("llm_proto.anthropic: messages[%d] must be a table, got %s", i, type(m)), 0)\n    end\n    if m.role == "system" then\n      local text = P.content_text(m.content)\n      sys = sys and (sys .. "\\n\\n" .. text) or text\n    else\n      local hit = converted[m]\n      if not (hit and hit.content == m.content and hit.role == m.role) then\n        hit = { content = m.content, role = m.role, msg = convert_one(m) }\n        converted[m] = hit\n      end\n      out[#out + 1] = hit.msg\n    end\n  end\n  if cache and out[#out] then\n    local last = P.copy(out[#out])\n    local marker = cache_marker(cache)\n    if type(last.content) == "string" then\n      if last.content ~= "" then\n        last.content = P.array({ { type = "text", text = last.content, cache_control = marker } })\n      end\n    elseif #last.content > 0 then\n      last.content = P.copy(last.content)\n      local b = P.copy(last.content[#last.content])\n      if b.type ~= "thinking" and b.type ~= "redacted_thinking" then\n        b.cache_control = marker\n        last.content[#last.content] = b\n      end\n    end\n    out[#out] = last\n  end\n  return out, sys\nend\n\n-- Converted tool lists by list identity and cache option (a loop offers the same list each turn).\nlocal converted_tools = setmetatable({}, { __mode = "k" })\n\nlocal convert_tools_uncached\nlocal function convert_tools(tools, cache)\n  if tools == nil or #tools == 0 then return nil end\n  local key = type(cache) == "table" and cache or tostring(cache)\n  local hit = converted_tools[tools]\n  if hit and hit.key == key and hit.n == #tools then return hit.out end\n  local out = convert_tools_uncached(tools, cache)\n  converted_tools[tools] = { key = key, n = #tools, out = out }\n  return out\nend\n\nfunction convert_tools_uncached(tools, cache)\n  local out = P.array()\n  for i, t in ipairs(tools) do\n    if type(t) ~= "table" or type(t.name) ~= "string" then\n      error(sformat("llm_proto.anthropic: tools[%d] must be a table with a string name", i), 0)\n    end\n    local d\n    if t.type and t.type ~= "custom" then\n      d = P.copy(t) -- a server tool (web_search, ...): passed as given\n      d.group = nil\n    else\n      d = { name = t.name, description = t.description or "",\n        input_schema = t.input_schema or { type = "object", properties = std.json.object() } }\n    end\n    out[i] = d\n  end\n  if cache then out[#out].cache_control = cache_marker(cache) end\n  return out\nend\n\n--- Builds `{ body, betas }` for the Messages API.\nfunction A.build(req, profile, warn)\n  local model = req.model or profile.model\n  local max_tokens = req.max_tokens or profile.max_tokens\n  if math.type(max_tokens) ~= "integer" or max_tokens < 1 then\n    error(sformat("llm_proto.anthropic: max_tokens must be a positive integer, got %s", tostring(max_tokens)), 0)\n  end\n  if type(req.messages) ~= "table" or #req.messages == 0 then\n    error("llm_proto.anthropic: messages must be a non-empty array", 0)\n  end\n  local cache = req.cache_control\n  if cache == nil or cache == true then cache = { type = "ephemeral" } end\n  if cache == false then cache = nil end\n  local messages, system = convert_messages(req.messages, req.system, cache)\n  local body = { model = model, max_tokens = max_tokens, messages = messages }\n  local betas = P.array()\n  if type(system) == "table" then\n    -- text blocks given as they are; the cache marker goes on a copy of the last one\n    local blocks = P.array()\n    for i, b in ipairs(system) do\n      if type(b) ~= "table" or b.type ~= "text" then\n        error(sformat("llm_proto.anthropic: system[%d] must be a text block", i), 0)\n      end\n      blocks[i] = b\n    end\n    if cache and #blocks > 0 then\n      blocks[#blocks] = P.copy(blocks[#blocks])\n      blocks[#blocks].cache_control = cache_marker(cache)\n    end\n    if #blocks > 0 then body.system = blocks end\n  elseif system ~= nil and system ~= "" then\n    if type(system) ~= "string" then error("llm_proto.anthropic: system must be a string or text blocks", 0) end\n    body.system = cache and P.array({ { type = "text", text = system, cache_control = cache_marker(cache) } }) or system\n  end\n  body.tools = convert_tools(req.tools, cache)\n\n  -- thinking\n  local th = P.thinking(req.thinking)\n  local manual = false\n  local output_config\n  if th then\n    if th.off then\n      body.thinking = { type = "disabled" }\n    elseif profile.capabilities.thinking == "adaptive" then\n      body.thinking = { type = "adaptive" }\n      local effort = th.effort or (th.budget_tokens and P.budget_effort(th.budget_tokens))\n      if th.budget_tokens then\n        warn(sformat("thinking.budget_tokens is not taken by %s (adaptive thinking); sent as effort \'%s\'", model, effort))\n      end\n      if effort then output_config = { effort = effort } end\n    else\n      local budget = th.budget_tokens\n      if not budget then\n        budget = P.EFFORT_BUDGET[th.effort or "medium"]\n        if budget >= max_tokens then budget = max_tokens - 1 end\n      end\n      if budget < 1024 or budget >= max_tokens then\n        error(sformat("llm_proto.anthropic: thinking budget %d does not fit: it must be at least 1024 and below max_tokens (%d)",\n          budget, max_tokens), 0)\n      end\n      body.thinking = { type = "enabled", budget_tokens = budget }\n      manual = true\n    end\n  end\n\n  -- tool choice\n  local tc = P.tool_choice(req.tool_choice)\n  local no_parallel = req.parallel_tool_calls == false or (tc and tc.disable_parallel)\n  if tc or no_parallel then\n    tc = tc or { mode = "auto" }\n    if manual and (tc.mode == "required" or tc.mode == "tool") then\n      error("llm_proto.anthropic: forced tool use (tool_choice \'" .. (tc.name or "required") ..\n        "\') cannot be combined with manual extended thinking (thinking.budget_tokens); use tool_choice = \\"auto\\"", 0)\n    end\n    if body.tools then\n      local out = { type = tc.mode == "required" and "any" or tc.mode, name = tc.name }\n      if no_parallel and tc.mode ~= "none" then out.disable_parallel_tool_use = true end\n      body.tool_choice = out\n    elseif tc.mode == "tool" or tc.mode == "required" then\n      error("llm_proto.anthropic: tool_choice forces a tool but the request has no tools", 0)\n    end\n  end\n\n  if req.stop ~= nil then body.stop_sequences = P.stop_list(req.stop) end\n  -- API version 2026-10-21 (the one @anthropic-ai/sdk 1.x speaks) has no sampling parameters:\n  -- the seed\'s narrower rules (no temperature while thinking, only 1 past Opus 4.6) are subsumed.\n  if req.temperature ~= nil then\n    local why = "the Anthropic API (version 2026-10-21) has no sampling parameters"\n    if body.thinking and body.thinking.type ~= "disabled" then\n      why = "temperature is not taken while thinking is on"\n    elseif P.claude_fixed_temperature(model) and req.temperature ~= 1 then\n      why = sformat("%s takes temperature 1 only", model)\n    end\n    warn(sformat("temperature %s dropped: %s", tostring(req.temperature), why))\n  end\n  for _, k in ipairs({ "top_p", "top_k" }) do\n    if req[k] ~= nil then warn(k .. " dropped: the Anthropic API (version 2026-10-21) has no sampling parameters") end\n  end\n  if req.seed ~= nil then warn("seed is not taken by the Anthropic API; dropped") end\n\n  local rf = req.response_format\n  if rf ~= nil then\n    if type(rf) ~= "table" or rf.type ~= "json_schema" or type(rf.json_schema) ~= "table" then\n      error("llm_proto.anthropic: response_format must be { type = \\"json_schema\\", json_schema = { schema = ... } } on Anthropic", 0)\n    end\n    output_config = output_config or {}\n    output_config.format = { type = "json_schema", schema = rf.json_schema.schema or std.json.object() }\n  end\n  body.output_config = output_config\n\n  local cm = req.context_management\n  if cm ~= nil and cm ~= false then\n    body.context_management = req.context_management_config or (type(cm) == "table" and cm) or A.default_context_management()\n    betas[#betas + 1] = A.CONTEXT_MANAGEMENT_BETA\n  end\n  if type(req.extra_body) == "table" then\n    for k, v in pairs(req.extra_body) do body[k] = v end\n  end\n  return { body = body, betas = betas }\nend\n\n--- Normalises a Messages API response body.\nfunction A.normalize(body, warn)\n  if type(body) ~= "table" then error("llm_proto.anthropic: response is not an object", 0) end\n  if body.type == "error" then\n    local e = body.error or {}\n    error(sformat("llm_proto.anthropic: error response (%s): %s", tostring(e.type), tostring(e.message)), 0)\n  end\n  if type(body.content) ~= "table" then error("llm_proto.anthropic: response has no content array", 0) end\n  local content = P.array()\n  for _, b in ipairs(body.content) do\n    if b.type == "text" then\n      local thinking, text = P.split_think(b.text)\n      if thinking then content[#content + 1] = { type = "thinking", thinking = thinking } end\n      if text ~= "" or not thinking then\n        local c = P.copy(b)\n        c.text = text\n        content[#content + 1] = c\n      end\n    elseif b.type == "tool_use" then\n      content[#content + 1] = { type = "tool_use", id = b.id, name = b.name, input = b.input or std.json.object() }\n    elseif b.type == "redacted_thinking" then\n      -- one of the four block types every consumer knows; turned back on the next request\n      content[#content + 1] = { type = "thinking", thinking = "", redacted_data = b.data }\n    else\n      content[#content + 1] = b\n    end\n  end\n  local u = body.usage or {}\n  local details = type(u.output_tokens_details) == "table" and u.output_tokens_details or {}\n  return {\n    id = body.id,\n    model = body.model,\n    content = content,\n    stop_reason = body.stop_reason or "end_turn",\n    stop_sequence = body.stop_sequence,\n    context_management = body.context_management,\n    usage = P.usage(u.input_tokens, u.output_tokens, u.cache_read_input_tokens,\n      u.cache_creation_input_tokens, details.thinking_tokens),\n  }\nend\n\nreturn A\n';

// embedded/llm_proto/init.lua
var init_default5 = '--- llm_proto: the one request vocabulary for every model provider, and the one response shape.\n--\n-- Owns what is pure about talking to a model \u2014 no I/O happens here:\n-- - the option vocabulary (OpenAI\'s names: `tool_choice`, `parallel_tool_calls`, `thinking`,\n--   `stop`, `max_tokens`, `response_format`, `temperature`, `top_p`, `top_k`, `seed`,\n--   `cache_control`, `dialect`), translated per provider by `llm_proto.anthropic` and\n--   `llm_proto.openai` (`M.build`);\n-- - what is known about models (`M.claude_version`, `M.is_reasoning_model`, `M.profile`):\n--   limits and capabilities a Port declares and the kernel reuses;\n-- - the normalised response (`M.normalize`): `{ content = { blocks }, stop_reason, usage, model,\n--   id }` where blocks are `text`, `tool_use` (`id`, `name`, `input`) and `thinking`, whatever\n--   the server sent (Anthropic thinking blocks, `reasoning_content`, `reasoning`, `<think>` tags);\n--   `usage` always has the six fields `input_tokens` (not served from cache), `output_tokens`\n--   (thinking included), `total_tokens` (everything processed: input + cache reads + cache\n--   writes + output, which equals OpenAI\'s `total_tokens`), `cache_read_input_tokens`,\n--   `cache_creation_input_tokens`, `thinking_tokens`;\n-- - the price table and cost of a usage (`M.prices`, `M.cost`).\n--\n-- Invariants: a combination the provider would reject is refused here with an error that names\n-- the options (`error(msg, 0)`, before any request); a value a model cannot take is dropped\n-- through the `warn` callback the caller passes, never silently; building never mutates the\n-- caller\'s request or messages.\n--\n-- Canonical messages are Anthropic-shaped: `{ role = "user"|"assistant", content = string |\n-- { blocks } }` with `text`, `image`, `tool_use`, `tool_result`, `thinking` blocks.\nlocal M = {}\n\nlocal type, pairs, ipairs, tostring, tonumber, error = type, pairs, ipairs, tostring, tonumber, error\nlocal sformat, concat = string.format, table.concat\n\n--- Shallow copy.\nfunction M.copy(t)\n  local o = {}\n  for k, v in pairs(t or {}) do o[k] = v end\n  return setmetatable(o, getmetatable(t))\nend\n\n--- A JSON array (encodes as `[]` when empty).\nfunction M.array(t) return std.json.array(t or {}) end\n\n-- models -------------------------------------------------------------------------------------\n\n--- Parses a Claude model id: returns family ("opus"|"sonnet"|"haiku"), major, minor, or nil.\n-- Both `claude-opus-4-1-20250805` and `claude-3-7-sonnet-20250219` spellings are understood;\n-- an 8-digit date or `latest` is not a version part.\nfunction M.claude_version(model)\n  if type(model) ~= "string" or not model:find("claude", 1, true) then return nil end\n  local family, nums = nil, {}\n  for tok in model:gmatch("[^%-%.@/]+") do\n    if tok == "opus" or tok == "sonnet" or tok == "haiku" then\n      family = tok\n    elseif tok:match("^%d%d?$") and #nums < 2 then\n      nums[#nums + 1] = tonumber(tok)\n    end\n  end\n  if not family or not nums[1] then return nil end\n  return family, nums[1], nums[2] or 0\nend\n\nlocal function claude_at_least(model, major, minor)\n  local _, a, b = M.claude_version(model)\n  if not a then return false end\n  return a > major or (a == major and b >= minor)\nend\n\n--- True for Claude models with adaptive thinking and `output_config.effort` (4.6 and later).\nfunction M.claude_adaptive(model) return claude_at_least(model, 4, 6) end\n\n--- True for Claude models past Opus 4.6, which take `temperature = 1` only.\nfunction M.claude_fixed_temperature(model) return claude_at_least(model, 4, 7) end\n\n--- gpt-N.M version of an OpenAI model id, or nil.\nfunction M.gpt_version(model)\n  if type(model) ~= "string" then return nil end\n  local a, b = model:match("gpt%-(%d+)%.(%d+)")\n  if a then return tonumber(a), tonumber(b) end\n  a = model:match("gpt%-(%d+)")\n  if a then return tonumber(a), 0 end\n  return nil\nend\n\n--- True for OpenAI reasoning models (o-series, gpt-5 and later): `max_completion_tokens`,\n-- `reasoning_effort`, no `temperature`.\nlocal reasoning_memo = {} -- model id -> boolean (a loop asks for the same model every turn)\nfunction M.is_reasoning_model(model)\n  if type(model) ~= "string" then return false end\n  local hit = reasoning_memo[model]\n  if hit ~= nil then return hit end\n  local m = model:match("[^/]+$")\n  local major = M.gpt_version(m)\n  local r = m:match("^o%d") ~= nil or (major ~= nil and major >= 5 and not m:find("chat", 1, true))\n  reasoning_memo[model] = r\n  return r\nend\n\n--- The dialect an OpenAI-compatible base URL implies: openai | vllm | llamacpp | ollama.\nfunction M.dialect_of(base_url)\n  local u = (base_url or ""):lower()\n  if u:find("api.openai.com", 1, true) then return "openai" end\n  if u:find("ollama", 1, true) or u:find(":11434", 1, true) then return "ollama" end\n  if u:find("llama", 1, true) or u:find(":8080", 1, true) then return "llamacpp" end\n  if u:find("vllm", 1, true) or u:find(":8000", 1, true) then return "vllm" end\n  return "openai"\nend\n\n-- Known limits, by longest model-id prefix: context window, largest output.\nM.limits = {\n  ["claude-opus-4-7"] = { 1000000, 128000 }, ["claude-opus-4-6"] = { 1000000, 128000 },\n  ["claude-sonnet-4-6"] = { 1000000, 64000 }, ["claude-opus-4-5"] = { 200000, 64000 },\n  ["claude-sonnet-4-5"] = { 200000, 64000 }, ["claude-haiku-4-5"] = { 200000, 64000 },\n  ["claude-opus-4-1"] = { 200000, 32000 }, ["claude-opus-4"] = { 200000, 32000 },\n  ["claude-sonnet-4"] = { 200000, 64000 }, ["claude-3-7-sonnet"] = { 200000, 64000 },\n  ["claude-3-5-haiku"] = { 200000, 8192 }, ["claude"] = { 200000, 8192 },\n  ["gpt-5"] = { 400000, 128000 }, ["gpt-4.1"] = { 1047576, 32768 }, ["gpt-4o"] = { 128000, 16384 },\n  ["o3"] = { 200000, 100000 }, ["o4-mini"] = { 200000, 100000 }, ["o1"] = { 200000, 100000 },\n}\n\nlocal function by_prefix(tbl, model)\n  if type(model) ~= "string" then return nil end\n  local m = model:match("[^/]+$")\n  local best, bestlen = nil, 0\n  for k, v in pairs(tbl) do\n    if #k > bestlen and m:find(k, 1, true) == 1 then best, bestlen = v, #k end\n  end\n  return best\nend\n\n--- The profile a Port declares: `{ provider, model, dialect, base_url, max_tokens,\n-- context_window, max_output_tokens, capabilities = { tools, thinking, parallel_tool_calls,\n-- response_format, cache_control, context_management, reasoning } }`. `thinking` is\n-- "adaptive" | "budget" | "effort" | "template" | false.\nfunction M.profile(provider, model, o)\n  o = o or {}\n  local lim = by_prefix(M.limits, model)\n  local caps = { tools = true, parallel_tool_calls = true, response_format = true }\n  local dialect = o.dialect\n  if provider == "anthropic" then\n    dialect = "anthropic"\n    caps.cache_control, caps.context_management = true, true\n    caps.thinking = M.claude_adaptive(model) and "adaptive" or "budget"\n    caps.reasoning = true\n  else\n    caps.cache_control, caps.context_management = false, false\n    if dialect == "openai" then\n      caps.reasoning = M.is_reasoning_model(model)\n      caps.thinking = caps.reasoning and "effort" or false\n    elseif dialect == "ollama" then\n      caps.thinking, caps.reasoning = "effort", true\n    else\n      caps.thinking, caps.reasoning = "template", true\n    end\n  end\n  return {\n    provider = provider,\n    model = model,\n    dialect = dialect,\n    base_url = o.base_url,\n    max_tokens = o.max_tokens or 4096,\n    context_window = lim and lim[1] or nil,\n    max_output_tokens = lim and lim[2] or nil,\n    capabilities = caps,\n  }\nend\n\n-- options -------------------------------------------------------------------------------------\n\nlocal function opt_error(field, expected, v)\n  error(sformat("llm_proto: option \'%s\' must be %s, got %s", field, expected,\n    type(v) == "string" and sformat("%q", v) or type(v)), 0)\nend\n\n--- Canonical tool choice: nil | { mode = "auto"|"none"|"required"|"tool", name = ? }.\n-- Accepts OpenAI ("auto", "none", "required", { type = "function", name | function.name }) and\n-- Anthropic ("any", { type = "auto"|"any"|"none"|"tool", name }) spellings.\nfunction M.tool_choice(tc)\n  if tc == nil then return nil end\n  if type(tc) == "string" then\n    if tc == "auto" or tc == "none" then return { mode = tc } end\n    if tc == "required" or tc == "any" then return { mode = "required" } end\n    opt_error("tool_choice", \'"auto", "none", "required", "any" or a table\', tc)\n  end\n  if type(tc) ~= "table" then opt_error("tool_choice", "a string or a table", tc) end\n  local t = tc.type\n  if t == "function" or t == "tool" then\n    local name = tc.name or (type(tc["function"]) == "table" and tc["function"].name)\n    if type(name) ~= "string" or name == "" then opt_error("tool_choice.name", "a tool name", name) end\n    return { mode = "tool", name = name, disable_parallel = tc.disable_parallel_tool_use }\n  end\n  if t == "auto" or t == "none" then return { mode = t, disable_parallel = tc.disable_parallel_tool_use } end\n  if t == "any" or t == "required" then return { mode = "required", disable_parallel = tc.disable_parallel_tool_use } end\n  opt_error("tool_choice.type", \'"function", "tool", "auto", "any" or "none"\', t)\nend\n\nM.EFFORTS = { minimal = true, low = true, medium = true, high = true, xhigh = true, max = true, none = true }\n-- Effort \u2192 manual thinking budget on Claude models that take budgets only.\nM.EFFORT_BUDGET = { minimal = 1024, low = 2048, medium = 8192, high = 16384, xhigh = 24576, max = 32000 }\n\n--- Canonical thinking: nil | { off = true } | { effort = s } | { budget_tokens = n } | { on = true }.\nfunction M.thinking(t)\n  if t == nil then return nil end\n  if t == false then return { off = true } end\n  if t == true then return { on = true } end\n  if type(t) ~= "table" then opt_error("thinking", "a table, true or false", t) end\n  if t.budget_tokens ~= nil then\n    if math.type(t.budget_tokens) ~= "integer" then opt_error("thinking.budget_tokens", "an integer", t.budget_tokens) end\n    return { budget_tokens = t.budget_tokens }\n  end\n  if t.effort ~= nil then\n    if not M.EFFORTS[t.effort] then\n      opt_error("thinking.effort", "minimal, low, medium, high, xhigh, max or none", t.effort)\n    end\n    if t.effort == "none" then return { off = true } end\n    return { effort = t.effort }\n  end\n  opt_error("thinking", "{ effort = ... } or { budget_tokens = ... }", t)\nend\n\n--- Effort level closest to a token budget (for providers that take efforts only).\nfunction M.budget_effort(n)\n  if n <= 2048 then return "low" elseif n <= 12000 then return "medium" end\n  return "high"\nend\n\n--- `stop` as an array of strings.\nfunction M.stop_list(stop)\n  if stop == nil then return nil end\n  if type(stop) == "string" then return M.array({ stop }) end\n  if type(stop) ~= "table" then opt_error("stop", "a string or an array of strings", stop) end\n  local out = M.array()\n  for i, s in ipairs(stop) do\n    if type(s) ~= "string" then opt_error("stop[" .. i .. "]", "a string", s) end\n    out[i] = s\n  end\n  return out\nend\n\n-- responses -----------------------------------------------------------------------------------\n\n--- Splits reasoning out of text that carries `<think>\u2026</think>` (or only the closing tag, when\n-- the template opened it). Returns thinking (or nil) and the remaining text.\nfunction M.split_think(text)\n  if type(text) ~= "string" then return nil, text end\n  local s, e = text:find("^%s*<think>")\n  if s then\n    local cs, ce = text:find("</think>", e + 1, true)\n    if not cs then return text:sub(e + 1), "" end\n    return text:sub(e + 1, cs - 1), (text:sub(ce + 1):gsub("^%s+", ""))\n  end\n  local cs, ce = text:find("</think>", 1, true)\n  if cs and not text:sub(1, cs - 1):find("<think>", 1, true) then\n    return text:sub(1, cs - 1), (text:sub(ce + 1):gsub("^%s+", ""))\n  end\n  return nil, text\nend\n\nlocal math_type = math.type\nlocal function int(v)\n  if math_type(v) == "integer" then return v end\n  v = tonumber(v)\n  if not v then return 0 end\n  return math.tointeger(v) or math.floor(v)\nend\n\n--- The six-field usage table.\nfunction M.usage(input, output, cache_read, cache_creation, thinking)\n  input, output, cache_read, cache_creation = int(input), int(output), int(cache_read), int(cache_creation)\n  return {\n    input_tokens = input,\n    output_tokens = output,\n    cache_read_input_tokens = cache_read,\n    cache_creation_input_tokens = cache_creation,\n    thinking_tokens = int(thinking),\n    total_tokens = input + output + cache_read + cache_creation,\n  }\nend\n\n--- Adds usage `u` into accumulator `acc` (both six-field; `cost_usd` summed when present).\nlocal USAGE_KEYS = { "input_tokens", "output_tokens", "cache_read_input_tokens",\n  "cache_creation_input_tokens", "thinking_tokens", "total_tokens" }\nfunction M.add_usage(acc, u)\n  for i = 1, #USAGE_KEYS do\n    local k = USAGE_KEYS[i]\n    acc[k] = (acc[k] or 0) + (u and u[k] or 0)\n  end\n  if u and u.cost_usd then acc.cost_usd = (acc.cost_usd or 0) + u.cost_usd end\n  return acc\nend\n\n-- prices --------------------------------------------------------------------------------------\n\n--- USD per million tokens, by longest model-id prefix: `{ input, output, cache_read,\n-- cache_write }`. List prices as published in 2026; edit this table (or pass `prices` to a Port\n-- or to agent.run, merged over it) when yours differ.\nM.prices = {\n  ["claude-opus-4-7"] = { input = 5, output = 25, cache_read = 0.5, cache_write = 6.25 },\n  ["claude-opus-4-6"] = { input = 5, output = 25, cache_read = 0.5, cache_write = 6.25 },\n  ["claude-opus-4-5"] = { input = 5, output = 25, cache_read = 0.5, cache_write = 6.25 },\n  ["claude-opus-4"] = { input = 15, output = 75, cache_read = 1.5, cache_write = 18.75 },\n  ["claude-sonnet-4"] = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 },\n  ["claude-3-7-sonnet"] = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 },\n  ["claude-haiku-4-5"] = { input = 1, output = 5, cache_read = 0.1, cache_write = 1.25 },\n  ["claude-3-5-haiku"] = { input = 0.8, output = 4, cache_read = 0.08, cache_write = 1 },\n  ["gpt-5-nano"] = { input = 0.05, output = 0.4, cache_read = 0.005 },\n  ["gpt-5-mini"] = { input = 0.25, output = 2, cache_read = 0.025 },\n  ["gpt-5"] = { input = 1.25, output = 10, cache_read = 0.125 },\n  ["gpt-4.1-nano"] = { input = 0.1, output = 0.4, cache_read = 0.025 },\n  ["gpt-4.1-mini"] = { input = 0.4, output = 1.6, cache_read = 0.1 },\n  ["gpt-4.1"] = { input = 2, output = 8, cache_read = 0.5 },\n  ["gpt-4o-mini"] = { input = 0.15, output = 0.6, cache_read = 0.075 },\n  ["gpt-4o"] = { input = 2.5, output = 10, cache_read = 1.25 },\n  ["o4-mini"] = { input = 1.1, output = 4.4, cache_read = 0.275 },\n  ["o3"] = { input = 2, output = 8, cache_read = 0.5 },\n}\n\n--- The price entry of `model`: `overrides` (exact id or prefix) first, then `M.prices`.\nfunction M.price_of(model, overrides)\n  if overrides then\n    if overrides[model] then return overrides[model] end\n    local p = by_prefix(overrides, model)\n    if p then return p end\n  end\n  return by_prefix(M.prices, model)\nend\n\n--- Cost in USD of a six-field usage at price entry `p`.\nfunction M.cost_at(p, usage)\n  local cr = p.cache_read or p.input\n  local cw = p.cache_write or p.input\n  return (usage.input_tokens * p.input + usage.output_tokens * p.output\n    + usage.cache_read_input_tokens * cr + usage.cache_creation_input_tokens * cw) / 1e6\nend\n\n--- Cost in USD of a six-field usage, or nil when the model has no price.\nfunction M.cost(model, usage, overrides)\n  local p = M.price_of(model, overrides)\n  if not p or not usage then return nil end\n  return M.cost_at(p, usage)\nend\n\n-- dispatch ------------------------------------------------------------------------------------\n\nlocal adapters = {}\nlocal function adapter(provider)\n  if provider ~= "anthropic" and provider ~= "openai" then\n    error(sformat("llm_proto: unknown provider %q (anthropic or openai)", tostring(provider)), 0)\n  end\n  adapters[provider] = adapters[provider] or require("llm_proto." .. provider)\n  return adapters[provider]\nend\n\n--- Builds the wire request for `provider` from a canonical request: returns `{ body, betas }`.\n-- `warn(msg)` receives dropped options.\nfunction M.build(provider, req, profile, warn)\n  return adapter(provider).build(req, profile, warn or function() end)\nend\n\n--- Normalises a provider\'s response body (streamed or not) to the shared shape.\nfunction M.normalize(provider, body, warn)\n  return adapter(provider).normalize(body, warn or function() end)\nend\n\n--- Text of a canonical message content (string, or the text of its text / tool_result blocks).\nfunction M.content_text(content)\n  if type(content) == "string" then return content end\n  if type(content) ~= "table" then return "" end\n  local parts = {}\n  for _, b in ipairs(content) do\n    if type(b) == "table" then\n      if b.type == "text" and type(b.text) == "string" then\n        parts[#parts + 1] = b.text\n      elseif b.type == "tool_result" then\n        parts[#parts + 1] = M.content_text(b.content)\n      end\n    end\n  end\n  return concat(parts, "\\n")\nend\n\nreturn M\n';

// embedded/llm_proto/openai.lua
var openai_default = '--- llm_proto.openai: canonical request \u2192 OpenAI chat-completions body, and back; one module for\n-- every OpenAI-compatible server, varied by `profile.dialect` (openai | vllm | llamacpp | ollama).\n--\n-- Owns the OpenAI columns of the translation table:\n-- - messages: the system prompt becomes the first `system` message; assistant blocks become\n--   text plus `tool_calls` (thinking dropped); a user message with `tool_result` blocks becomes\n--   one `tool` message per result (before any text the message also carried); images become\n--   `image_url` parts;\n-- - `max_tokens` \u2192 `max_completion_tokens` on reasoning models at api.openai.com, else\n--   `max_tokens`; `tool_choice` ("required", `{ type = "function", function = { name } }`;\n--   dropped with a warning on Ollama); `parallel_tool_calls` top-level, only with tools;\n-- - `thinking`: `reasoning_effort` (openai, reasoning models only; `false` \u2192 "none" on gpt-5.1+),\n--   `chat_template_kwargs.enable_thinking` (+ `reasoning_effort` for an effort) on vLLM and\n--   llama.cpp, `reasoning_effort` only on Ollama; a budget is sent as the nearest effort;\n-- - `stop`, `seed`, `top_p`, `response_format` forwarded; `top_k` forwarded except to\n--   api.openai.com; `extra_body` merged last.\n-- Refused: tools plus reasoning on gpt-5.6 and later. Dropped with a warning: `temperature` on\n-- reasoning models, `top_k` on api.openai.com, the Anthropic-only `cache_control`,\n-- `context_management`, `context_management_config`.\nlocal P = require("llm_proto")\nlocal O = {}\n\nlocal type, ipairs, pairs, error, sformat, concat = type, ipairs, pairs, error, string.format, table.concat\n\n-- Raw `arguments` text of tool_use blocks this module normalised, so the next request sends the\n-- model\'s own text back instead of re-encoding (weak keys: the blocks own the lifetime).\nlocal raw_args = setmetatable({}, { __mode = "k" })\n\nlocal function is_public(profile)\n  return type(profile.base_url) == "string" and profile.base_url:find("api.openai.com", 1, true) ~= nil\nend\n\nlocal function image_part(b)\n  local src = b.source or {}\n  local url = src.url\n  if src.type == "base64" then url = "data:" .. tostring(src.media_type) .. ";base64," .. tostring(src.data) end\n  return { type = "image_url", image_url = { url = url } }\nend\n\nlocal function result_text(content)\n  if type(content) == "string" then return content end\n  if content == nil then return "" end\n  return P.content_text(content)\nend\n\n-- Converted form of each canonical message, reused while the message keeps its role and content\n-- (a loop resends its whole history every turn; messages are values once sent).\nlocal converted = setmetatable({}, { __mode = "k" })\n\nlocal convert_one\n\nlocal function convert_messages(messages, system)\n  local out = P.array()\n  if type(system) == "table" then system = P.content_text(system) end\n  if system ~= nil and system ~= "" then out[1] = { role = "system", content = system } end\n  local n = #out\n  for i = 1, #messages do\n    local m = messages[i]\n    if type(m) ~= "table" then\n      error(sformat("llm_proto.openai: messages[%d] must be a table, got %s", i, type(m)), 0)\n    end\n    local hit = converted[m]\n    if not (hit and hit.content == m.content and hit.role == m.role) then\n      hit = { content = m.content, role = m.role, out = convert_one(m) }\n      converted[m] = hit\n    end\n    local o = hit.out\n    if #o == 1 then\n      n = n + 1\n      out[n] = o[1]\n    else\n      for k = 1, #o do out[n + k] = o[k] end\n      n = n + #o\n    end\n  end\n  return out\nend\n\nfunction convert_one(m)\n  local out = {}\n  do\n    local c = m.content\n    if type(c) ~= "table" then\n      out[#out + 1] = { role = m.role, content = c == nil and "" or c }\n    elseif m.role == "assistant" then\n      local texts, calls = {}, P.array()\n      for _, b in ipairs(c) do\n        if b.type == "text" then\n          texts[#texts + 1] = b.text\n        elseif b.type == "tool_use" then\n          calls[#calls + 1] = { id = b.id, type = "function", ["function"] = {\n            name = b.name,\n            arguments = b.invalid_input or raw_args[b] or std.json.encode(b.input or std.json.object()),\n          } }\n        end\n      end\n      local msg = { role = "assistant" }\n      local text = concat(texts, "\\n")\n      if #calls > 0 then\n        msg.tool_calls = calls\n        msg.content = text ~= "" and text or std.json.null\n      else\n        msg.content = text\n      end\n      out[#out + 1] = msg\n    else\n      local parts, has_image = P.array(), false\n      for _, b in ipairs(c) do\n        if b.type == "tool_result" then\n          out[#out + 1] = { role = "tool", tool_call_id = b.tool_use_id, content = result_text(b.content) }\n        elseif b.type == "text" then\n          parts[#parts + 1] = { type = "text", text = b.text }\n        elseif b.type == "image" then\n          parts[#parts + 1] = image_part(b)\n          has_image = true\n        end\n      end\n      if #parts > 0 then\n        if has_image then\n          out[#out + 1] = { role = m.role, content = parts }\n        else\n          local texts = {}\n          for k, p in ipairs(parts) do texts[k] = p.text end\n          out[#out + 1] = { role = m.role, content = concat(texts, "\\n") }\n        end\n      end\n    end\n  end\n  return out\nend\n\n-- Converted tool lists by list identity (a loop offers the same list each turn).\nlocal converted_tools = setmetatable({}, { __mode = "k" })\n\nlocal convert_tools_uncached\nlocal function convert_tools(tools)\n  if tools == nil or #tools == 0 then return nil end\n  local hit = converted_tools[tools]\n  if hit and hit.n == #tools then return hit.out end\n  local out = convert_tools_uncached(tools)\n  converted_tools[tools] = { n = #tools, out = out }\n  return out\nend\n\nfunction convert_tools_uncached(tools)\n  local out = P.array()\n  for i, t in ipairs(tools) do\n    if type(t) ~= "table" or type(t.name) ~= "string" then\n      error(sformat("llm_proto.openai: tools[%d] must be a table with a string name", i), 0)\n    end\n    out[i] = { type = "function", ["function"] = {\n      name = t.name,\n      description = t.description or "",\n      parameters = t.input_schema or { type = "object", properties = std.json.object() },\n    } }\n  end\n  return out\nend\n\nlocal ANTHROPIC_ONLY = { "cache_control", "context_management", "context_management_config" }\n\n--- Builds `{ body }` for `/chat/completions`.\nfunction O.build(req, profile, warn)\n  local model = req.model or profile.model\n  local dialect = profile.dialect or "openai"\n  if type(req.messages) ~= "table" or #req.messages == 0 then\n    error("llm_proto.openai: messages must be a non-empty array", 0)\n  end\n  local body = { model = model, messages = convert_messages(req.messages, req.system) }\n  local reasoning = dialect == "openai" and P.is_reasoning_model(model)\n  local max_tokens = req.max_tokens or profile.max_tokens\n  if max_tokens ~= nil then\n    if reasoning then body.max_completion_tokens = max_tokens else body.max_tokens = max_tokens end\n  end\n  body.tools = convert_tools(req.tools)\n\n  local tc = P.tool_choice(req.tool_choice)\n  if tc and not body.tools then\n    if tc.mode == "tool" or tc.mode == "required" then\n      error("llm_proto.openai: tool_choice forces a tool but the request has no tools", 0)\n    end\n    tc = nil -- the API takes tool_choice only together with tools\n  end\n  if tc then\n    if dialect == "ollama" then\n      warn("tool_choice is not taken by Ollama; dropped")\n    elseif tc.mode == "tool" then\n      body.tool_choice = { type = "function", ["function"] = { name = tc.name } }\n    else\n      body.tool_choice = tc.mode\n    end\n  end\n  local parallel = req.parallel_tool_calls\n  if parallel == nil and tc and tc.disable_parallel then parallel = false end\n  if parallel ~= nil and body.tools then body.parallel_tool_calls = parallel end\n\n  local th = P.thinking(req.thinking)\n  if th then\n    local effort = th.effort or (th.budget_tokens and P.budget_effort(th.budget_tokens))\n      or (th.on and "medium") or nil\n    if dialect == "openai" then\n      if th.off then\n        local major, minor = P.gpt_version(model)\n        if reasoning and major and (major > 5 or (major == 5 and minor >= 1)) then\n          body.reasoning_effort = "none"\n        elseif reasoning then\n          warn(sformat("thinking = false cannot be expressed for %s; reasoning stays at the model\'s default", model))\n        end\n      elseif not reasoning then\n        warn(sformat("thinking is not taken by %s (not a reasoning model); dropped", model))\n      else\n        local major, minor = P.gpt_version(model)\n        if body.tools and major and (major > 5 or (major == 5 and minor >= 6)) then\n          error(sformat("llm_proto.openai: %s does not take tools together with reasoning (thinking); " ..\n            "drop the tools or pass thinking = false", model), 0)\n        end\n        body.reasoning_effort = effort\n      end\n    elseif dialect == "ollama" then\n      body.reasoning_effort = th.off and "none" or effort\n    else -- vllm, llamacpp\n      body.chat_template_kwargs = { enable_thinking = not th.off }\n      if not th.off and (th.effort or th.budget_tokens) then body.reasoning_effort = effort end\n    end\n  end\n\n  if req.stop ~= nil then body.stop = P.stop_list(req.stop) end\n  if req.temperature ~= nil then\n    if reasoning then\n      warn(sformat("temperature is not taken by reasoning model %s; dropped", model))\n    else\n      body.temperature = req.temperature\n    end\n  end\n  if req.top_p ~= nil then body.top_p = req.top_p end\n  if req.top_k ~= nil then\n    if is_public(profile) then warn("top_k is not taken by api.openai.com; dropped") else body.top_k = req.top_k end\n  end\n  if req.seed ~= nil then body.seed = req.seed end\n  if req.response_format ~= nil then body.response_format = req.response_format end\n  for i = 1, #ANTHROPIC_ONLY do\n    local k = ANTHROPIC_ONLY[i]\n    if req[k] ~= nil then warn(k .. " is Anthropic-only; ignored on the OpenAI path") end\n  end\n  if type(req.extra_body) == "table" then\n    for k, v in pairs(req.extra_body) do body[k] = v end\n  end\n  return { body = body }\nend\n\nlocal STOP = { stop = "end_turn", tool_calls = "tool_use", function_call = "tool_use",\n  length = "max_tokens", content_filter = "refusal" }\n\n--- Normalises a chat-completions response body.\nfunction O.normalize(body, warn)\n  if type(body) ~= "table" then error("llm_proto.openai: response is not an object", 0) end\n  if body.error then\n    local e = body.error\n    error("llm_proto.openai: error response: " .. tostring(type(e) == "table" and e.message or e), 0)\n  end\n  local choice = type(body.choices) == "table" and body.choices[1]\n  if not choice then error("llm_proto.openai: response has no choices", 0) end\n  local msg = choice.message\n  if type(msg) ~= "table" then error("llm_proto.openai: response choices[1] has no message", 0) end\n  local content = P.array()\n  local reasoning = msg.reasoning_content or msg.reasoning\n  if type(reasoning) == "string" and reasoning ~= "" then\n    content[#content + 1] = { type = "thinking", thinking = reasoning }\n  end\n  local text = msg.content\n  if type(text) == "table" then\n    local parts = {}\n    for _, p in ipairs(text) do\n      if type(p) == "table" and type(p.text) == "string" then parts[#parts + 1] = p.text end\n    end\n    text = concat(parts)\n  end\n  if type(text) == "string" and text ~= "" then\n    local thinking, rest = P.split_think(text)\n    if thinking then content[#content + 1] = { type = "thinking", thinking = thinking } end\n    if rest ~= "" then content[#content + 1] = { type = "text", text = rest } end\n  end\n  local has_tools = false\n  for _, tc in ipairs(msg.tool_calls or {}) do\n    local fn = tc["function"] or {}\n    local args = fn.arguments\n    local block = { type = "tool_use", id = tc.id, name = fn.name }\n    if type(fn.parsed_arguments) == "table" then\n      -- parsed by the host transport (see transport.ts); the text is kept to send back as is\n      block.input = fn.parsed_arguments\n      if type(args) == "string" then raw_args[block] = args end\n    elseif type(args) == "table" then\n      block.input = args\n    elseif args == nil or args == "" then\n      block.input = std.json.object()\n    else\n      local ok, v = pcall(std.json.decode, args)\n      if ok and type(v) == "table" then\n        block.input = v\n        raw_args[block] = args\n      else\n        block.input = std.json.object()\n        block.invalid_input = args\n        warn(sformat("tool call \'%s\' arguments are not a JSON object", tostring(fn.name)))\n      end\n    end\n    content[#content + 1] = block\n    has_tools = true\n  end\n  local fr = choice.finish_reason\n  local stop = STOP[fr] or fr or "end_turn"\n  if has_tools and stop == "end_turn" then stop = "tool_use" end\n  local u = body.usage or {}\n  local pd = type(u.prompt_tokens_details) == "table" and u.prompt_tokens_details or {}\n  local cd = type(u.completion_tokens_details) == "table" and u.completion_tokens_details or {}\n  local cached = tonumber(pd.cached_tokens) or 0\n  return {\n    id = body.id,\n    model = body.model,\n    content = content,\n    stop_reason = stop,\n    usage = P.usage((tonumber(u.prompt_tokens) or 0) - cached, u.completion_tokens, cached, 0, cd.reasoning_tokens),\n  }\nend\n\nreturn O\n';

// embedded/llm_proto/port.lua
var port_default = '--- llm_proto.port: the provider Ports \u2014 the only way a loop (agent.run, the kernel) talks to a model.\n--\n-- `require("llm_proto.port")` is `{ anthropic = P, openai = P, replay = P }`. `P:open(opts)`\n-- returns a Port:\n--\n--   port.profile      { provider, model, dialect, base_url, max_tokens, context_window,\n--                       max_output_tokens, capabilities = { tools, thinking, reasoning,\n--                       parallel_tool_calls, response_format, cache_control, context_management } }\n--   port:chat(request) \u2192 { content = { blocks }, stop_reason, usage, model, id }   (raises on failure)\n--\n-- `opts` (open) \u2014 where and how:\n--   model (default env ANTHROPIC_MODEL / OPENAI_MODEL, else claude-haiku-4-5-20251001 /\n--   gpt-4o-mini), api_key, api_key_env, base_url, dialect (openai|vllm|llamacpp|ollama; default\n--   inferred from base_url), max_tokens (default 4096), timeout (seconds, default 120),\n--   max_retries (default 2), prices (overrides of llm_proto.prices), replay (replay only), and any\n--   request field below as a default for every call.\n--\n-- `request` (chat) \u2014 what to ask; every field overrides the open-time default:\n--   messages     (required) array of { role = "user"|"assistant", content = string | { blocks } };\n--                blocks: { type="text", text }, { type="tool_use", id, name, input },\n--                { type="tool_result", tool_use_id, content = string, is_error? },\n--                { type="thinking", thinking, signature? }, { type="image", source }\n--   system       string\n--   tools        array of { name, description, input_schema } (a `group` field is ignored)\n--   tool_choice  "auto" | "none" | "required" | "any" | { type="function"|"tool", name }\n--   max_tokens   integer\n--   protocol options: parallel_tool_calls, thinking ({effort}|{budget_tokens}|true|false), stop,\n--   response_format, temperature, top_p, top_k, seed, cache_control (Anthropic; default on),\n--   context_management (Anthropic; true = the default edits) and context_management_config,\n--   extra_body (merged into the wire body last)\n--   transport: stream (bool), on_delta (function(delta); implies stream), timeout, max_retries\n--\n-- The response\'s `usage` has the six fields of `llm_proto` plus `cost_usd` when the model has a\n-- price. `delta` handed to `on_delta` is `{ type = "text", text } | { type = "thinking",\n-- thinking } | { type = "tool_use", index, id?, name?, partial_json }`.\n--\n-- Replay (`replay:open({ replay = path })`, or env AGENT_BLOCK_REPLAY): a JSON Lines file, one\n-- scripted response per line, in the normalised shape (`content` may be a plain string;\n-- `usage`, `stop_reason` default sensibly). A line may carry `"expect"`, checked against the\n-- request before answering: `model` (equal), `system_contains` (substring of the system\n-- prompt), `tools` (names that must be offered), `no_tools` (true: none offered),\n-- `last_message_contains` (substring of the last message\'s text or tool results),\n-- `tool_choice` (equal after normalisation), `messages` (message count). A request is also\n-- built with the Anthropic adapter (or `replay_as = "openai"`), so local refusals fire offline.\n-- The file\'s cursor is shared by every Port on the same file in one run; past its last line\n-- `chat` raises naming the file and the request number. Relative paths resolve against the\n-- script\'s directory, then the project root.\nlocal P = require("llm_proto")\nlocal T = require("llm_proto.transport")\n\nlocal type, pairs, ipairs, error, setmetatable, sformat = type, pairs, ipairs, error, setmetatable, string.format\n\nlocal Port = {}\nPort.__index = Port\n\n-- The request with the open-time defaults behind it (read through __index, not copied).\nlocal function merged(defaults, req)\n  local r = {}\n  for k, v in pairs(req) do r[k] = v end\n  return setmetatable(r, { __index = defaults })\nend\n\n-- Cost of a response, with the price entry looked up once per model and price table.\nlocal function cost(port, model, usage, prices)\n  if port._price_model ~= model or port._price_table ~= prices then\n    port._price_model, port._price_table = model, prices\n    port._price = P.price_of(model, prices) or false\n  end\n  return port._price and P.cost_at(port._price, usage) or nil\nend\n\nlocal function check_request(req)\n  if type(req) ~= "table" then error(sformat("port:chat: argument 1 (request) must be a table, got %s", type(req)), 3) end\n  if type(req.messages) ~= "table" or #req.messages == 0 then\n    error("port:chat: request field \'messages\' must be a non-empty array", 3)\n  end\nend\n\nlocal function warner(port)\n  return function(msg)\n    if not port._warned[msg] then\n      port._warned[msg] = true\n      log.warn("llm_proto: " .. msg)\n    end\n  end\nend\n\nlocal function open_opts(opts, who)\n  if opts == nil then return {} end\n  if type(opts) ~= "table" then error(sformat("%s:open: argument 1 (opts) must be a table, got %s", who, type(opts)), 3) end\n  for _, k in ipairs({ "model", "api_key", "api_key_env", "base_url", "dialect" }) do\n    if opts[k] ~= nil and type(opts[k]) ~= "string" then\n      error(sformat("%s:open: field \'%s\' must be a string, got %s", who, k, type(opts[k])), 3)\n    end\n  end\n  local d = opts.dialect\n  if d ~= nil and d ~= "openai" and d ~= "vllm" and d ~= "llamacpp" and d ~= "ollama" then\n    error(sformat("%s:open: field \'dialect\' must be openai, vllm, llamacpp or ollama, got %q", who, d), 3)\n  end\n  if opts.max_tokens ~= nil and math.type(opts.max_tokens) ~= "integer" then\n    error(sformat("%s:open: field \'max_tokens\' must be an integer, got %s", who, type(opts.max_tokens)), 3)\n  end\n  return opts\nend\n\nlocal function http_provider(wire, model_env, default_model)\n  local prov = {}\n  function prov:open(opts)\n    opts = open_opts(opts, wire)\n    local model = opts.model or T.env(model_env) or default_model\n    local base_url = T.base_url({ provider = wire, base_url = opts.base_url })\n    local dialect = wire == "openai" and (opts.dialect or P.dialect_of(base_url)) or nil\n    local port = setmetatable({\n      provider = wire,\n      profile = P.profile(wire, model, { dialect = dialect, base_url = base_url, max_tokens = opts.max_tokens }),\n      _defaults = opts,\n      _warned = {},\n    }, Port)\n    port._warn = warner(port)\n    return port\n  end\n  return prov\nend\n\n-- JSON text of each wire message, by identity: the adapters reuse a message\'s converted form\n-- while it is unchanged, so a loop encodes each message once instead of on every turn. The text\n-- stays on the host side (`T.encode` returns an id, released when the handle is collected) and\n-- the transport splices it into the body (`raw_messages`). The adapters reuse a tools list\'s\n-- converted form per list table, so it is encoded once too (`raw_tools`): pass the same table\n-- while the tools are the same, and treat messages and tool lists as values once sent.\nlocal encoded = setmetatable({}, { __mode = "k" })\nlocal handle_mt = { __gc = function(h) T.release(h.id) end }\n\nlocal function encode(v)\n  return setmetatable({ id = T.encode(v) }, handle_mt)\nend\n\nlocal function encode_messages(list)\n  local out = {}\n  for i = 1, #list do\n    local m = list[i]\n    local h = encoded[m]\n    if not h then\n      h = encode(m)\n      encoded[m] = h\n    end\n    out[i] = h.id\n  end\n  return out\nend\n\n--- One model call; returns the normalised response, raises on failure.\nfunction Port:chat(request)\n  check_request(request)\n  local req = merged(self._defaults, request)\n  local warn = self._warn\n  if self.provider == "replay" then return self:_replay(req, warn) end\n  local profile = self.profile\n  local built = P.build(self.provider, req, profile, warn)\n  local on_delta = req.on_delta\n  if on_delta ~= nil and type(on_delta) ~= "function" then\n    error(sformat("port:chat: field \'on_delta\' must be a function, got %s", type(on_delta)), 2)\n  end\n  local wire = built.body\n  local sent = wire.messages -- kept alive (and its texts with it) until the request is done\n  local raw = encode_messages(sent)\n  wire.messages = nil\n  local raw_tools\n  if wire.tools then\n    local h = encoded[wire.tools]\n    if not h then\n      h = encode(wire.tools)\n      encoded[wire.tools] = h\n    end\n    raw_tools, wire.tools = h.id, nil\n  end\n  local ok, body = pcall(T.send, {\n    provider = self.provider,\n    base_url = req.base_url,\n    api_key = req.api_key,\n    api_key_env = req.api_key_env,\n    betas = built.betas,\n    body = wire,\n    raw_messages = raw,\n    raw_tools = raw_tools,\n    timeout = req.timeout,\n    max_retries = req.max_retries,\n    stream = req.stream == true or on_delta ~= nil,\n  }, on_delta)\n  sent = nil\n  if not ok then\n    -- the transport\'s message names provider, status and cause; the position inside this file does not help\n    if type(body) == "string" then error((body:gsub("^[^\\n]-:%d+: (llm: )", "%1")), 0) end\n    error(body, 0)\n  end\n  local resp = P.normalize(self.provider, body, warn)\n  resp.usage.cost_usd = cost(self, resp.model or profile.model, resp.usage, req.prices)\n  return resp\nend\n\n-- replay --------------------------------------------------------------------------------------\n\nlocal cursors = {} -- absolute path -> next line index, shared within one run\n\nlocal function load_script(path)\n  local text, abs = T.read_replay(path)\n  local entries = {}\n  local n = 0\n  for line in (text .. "\\n"):gmatch("([^\\n]*)\\n") do\n    n = n + 1\n    if line:match("%S") then\n      local ok, v = pcall(std.json.decode, line)\n      if not ok or type(v) ~= "table" then\n        error(sformat("replay: %s:%d is not a JSON object: %s", abs, n, tostring(v)), 0)\n      end\n      entries[#entries + 1] = { line = n, value = v }\n    end\n  end\n  return entries, abs\nend\n\nlocal function fail_expect(port, entry, what)\n  error(sformat("replay: %s:%d: request #%d does not match the script: %s",\n    port._path, entry.line, port._served, what), 0)\nend\n\nlocal function check_expect(port, entry, req)\n  local e = entry.value.expect\n  if e == nil then return end\n  if e.model ~= nil and (req.model or port.profile.model) ~= e.model then\n    fail_expect(port, entry, sformat("expected model %q, got %q", e.model, tostring(req.model or port.profile.model)))\n  end\n  if e.system_contains ~= nil and not (req.system or ""):find(e.system_contains, 1, true) then\n    fail_expect(port, entry, sformat("expected the system prompt to contain %q", e.system_contains))\n  end\n  local offered = {}\n  for _, t in ipairs(req.tools or {}) do offered[t.name] = true end\n  for _, name in ipairs(e.tools or {}) do\n    if not offered[name] then fail_expect(port, entry, sformat("expected tool %q to be offered", name)) end\n  end\n  if e.no_tools and next(offered) then fail_expect(port, entry, "expected no tools to be offered") end\n  if e.last_message_contains ~= nil then\n    local last = req.messages[#req.messages]\n    local text = P.content_text(last and last.content)\n    if not text:find(e.last_message_contains, 1, true) then\n      fail_expect(port, entry, sformat("expected the last message to contain %q, got %q", e.last_message_contains, text))\n    end\n  end\n  if e.messages ~= nil and #req.messages ~= e.messages then\n    fail_expect(port, entry, sformat("expected %d messages, got %d", e.messages, #req.messages))\n  end\n  if e.tool_choice ~= nil then\n    local want, got = P.tool_choice(e.tool_choice), P.tool_choice(req.tool_choice) or {}\n    if want.mode ~= got.mode or want.name ~= got.name then\n      fail_expect(port, entry, sformat("expected tool_choice %s", std.json.encode(e.tool_choice)))\n    end\n  end\nend\n\nlocal function scripted_response(port, v)\n  local r = v.response or v\n  local content = r.content\n  if type(content) == "string" then content = { { type = "text", text = content } } end\n  if type(content) ~= "table" then error(sformat("replay: %s: a scripted response needs \'content\'", port._path), 0) end\n  local blocks, has_tool = P.array(), false\n  for i, b in ipairs(content) do\n    local c = P.copy(b)\n    if c.type == "tool_use" then\n      has_tool = true\n      c.id = c.id or sformat("toolu_replay_%d_%d", port._served, i)\n      c.input = c.input or std.json.object()\n    end\n    blocks[i] = c\n  end\n  local u = r.usage or {}\n  local usage = P.usage(u.input_tokens, u.output_tokens, u.cache_read_input_tokens,\n    u.cache_creation_input_tokens, u.thinking_tokens)\n  return {\n    id = r.id or sformat("msg_replay_%d", port._served),\n    model = r.model or port.profile.model,\n    content = blocks,\n    stop_reason = r.stop_reason or (has_tool and "tool_use" or "end_turn"),\n    usage = usage,\n  }\nend\n\nfunction Port:_replay(req, warn)\n  local wire = req.replay_as or "anthropic"\n  P.build(wire, req, P.profile(wire, req.model or self.profile.model, { dialect = "openai" }), warn)\n  local i = cursors[self._path] or 1\n  local entry = self._entries[i]\n  self._served = i\n  if not entry then\n    error(sformat("replay: %s ran out: it scripts %d responses and request #%d has none",\n      self._path, #self._entries, i), 0)\n  end\n  cursors[self._path] = i + 1\n  check_expect(self, entry, req)\n  local resp = scripted_response(self, entry.value)\n  if type(req.on_delta) == "function" then\n    for _, b in ipairs(resp.content) do\n      if b.type == "text" then req.on_delta({ type = "text", index = 0, text = b.text })\n      elseif b.type == "thinking" then req.on_delta({ type = "thinking", index = 0, thinking = b.thinking }) end\n    end\n  end\n  resp.usage.cost_usd = cost(self, resp.model, resp.usage, req.prices)\n  return resp\nend\n\nlocal replay = {}\nfunction replay:open(opts)\n  opts = open_opts(opts, "replay")\n  local path = opts.replay or T.env("AGENT_BLOCK_REPLAY")\n  if type(path) ~= "string" or path == "" then\n    error("replay:open: no script: pass opts.replay = <file.jsonl> or set AGENT_BLOCK_REPLAY", 2)\n  end\n  local entries, abs = load_script(path)\n  local model = opts.model or "replay"\n  local profile = P.profile("anthropic", model, { max_tokens = opts.max_tokens })\n  profile.provider, profile.dialect = "replay", "replay"\n  local port = setmetatable({\n    provider = "replay",\n    profile = profile,\n    _defaults = opts,\n    _warned = {},\n    _entries = entries,\n    _path = abs,\n    _served = 0,\n  }, Port)\n  port._warn = warner(port)\n  return port\nend\n\nreturn {\n  anthropic = http_provider("anthropic", "ANTHROPIC_MODEL", "claude-haiku-4-5-20251001"),\n  openai = http_provider("openai", "OPENAI_MODEL", "gpt-4o-mini"),\n  replay = replay,\n}\n';

// embedded/lshape/check.lua
var check_default = '--- lshape.check: validating a value against a schema.\n--\n-- `check(value, schema, opts?)` returns `true` or `false, reason`, where the reason names the\n-- path of the first mismatch (`$.user.age: expected number, got string`). `opts.strict = true`\n-- also refuses fields a shape does not declare; `opts.refs` resolves `T.ref` names before the\n-- global registry. `assert(value, schema, label?)` raises the reason; `assert_dev` does so only\n-- in dev mode (`LSHAPE_CHECK=1`), so hot paths can keep their checks at no cost in production.\n--\n-- Invariant: checking never mutates the value and never calls a function found in it.\nlocal T = require("lshape.t")\nlocal M = {}\nlocal sformat = string.format\nlocal math_type = math.type\n\nlocal function describe(v)\n  local tv = type(v)\n  if tv == "number" then return math_type(v) end\n  if tv == "string" then return "string" end\n  return tv\nend\n\nlocal function is_sequence(v)\n  local n = #v\n  for k in pairs(v) do\n    if math_type(k) ~= "integer" or k < 1 or k > n then return false end\n  end\n  return true\nend\n\nlocal function fmt_literal(v) return type(v) == "string" and sformat("%q", v) or tostring(v) end\n\nlocal walk\n\n-- Paths are built lazily: a node is `{ parent, key, suffix }`, rendered only for a failure, so a\n-- value that matches costs no string work.\nlocal function render(path)\n  if type(path) == "string" then return path end\n  local base = render(path[1])\n  local k = path[2]\n  local out\n  if math_type(k) == "integer" and path.index then out = sformat("%s[%d]", base, k)\n  elseif type(k) == "string" and k:match("^[%a_][%w_]*$") then out = base .. "." .. k\n  else out = sformat("%s[%s]", base, fmt_literal(k)) end\n  return out .. (path[3] or "")\nend\n\nlocal function key_path(path, k, suffix) return { path, k, suffix } end\nlocal function index_path(path, i) return { path, i, index = true } end\n\n-- Sorted field names per shape, computed once (shapes are immutable once built).\nlocal sorted_names = setmetatable({}, { __mode = "k" })\nlocal function names_of(s)\n  local names = sorted_names[s]\n  if not names then\n    names = {}\n    for name in pairs(s.fields) do names[#names + 1] = name end\n    table.sort(names)\n    sorted_names[s] = names\n  end\n  return names\nend\n\nwalk = function(v, s, p, opts)\n  if v == nil then\n    if s.opt then return true end\n    if s.kind == "any" then return false, render(p) .. ": expected a value, got nil" end\n    return false, sformat("%s: expected %s, got nil", render(p), s.kind == "shape" and "table" or s.kind)\n  end\n  local k = s.kind\n  if k == "any" then return true\n  elseif k == "string" or k == "boolean" or k == "table" then\n    if type(v) ~= k then return false, sformat("%s: expected %s, got %s", render(p), k, describe(v)) end\n    return true\n  elseif k == "number" then\n    if type(v) ~= "number" then return false, sformat("%s: expected number, got %s", render(p), describe(v)) end\n    return true\n  elseif k == "integer" then\n    if math_type(v) ~= "integer" then return false, sformat("%s: expected integer, got %s", render(p), describe(v)) end\n    return true\n  elseif k == "func" then\n    if type(v) ~= "function" then return false, sformat("%s: expected function, got %s", render(p), describe(v)) end\n    return true\n  elseif k == "null" then\n    if not (std and std.json and std.json.is_null and std.json.is_null(v)) then\n      return false, sformat("%s: expected json null, got %s", render(p), describe(v))\n    end\n    return true\n  elseif k == "literal" then\n    if v ~= s.value then return false, sformat("%s: expected %s, got %s", render(p), fmt_literal(s.value), fmt_literal(v)) end\n    return true\n  elseif k == "one_of" then\n    for _, x in ipairs(s.values) do if v == x then return true end end\n    local shown = {}\n    for i, x in ipairs(s.values) do shown[i] = fmt_literal(x) end\n    return false, sformat("%s: expected one of %s, got %s", render(p), table.concat(shown, ", "),\n      type(v) == "table" and "a table" or fmt_literal(v))\n  elseif k == "pattern" then\n    if type(v) ~= "string" then return false, sformat("%s: expected string, got %s", render(p), describe(v)) end\n    if not v:find(s.pattern) then return false, sformat("%s: %q does not match %q", render(p), v, s.pattern) end\n    return true\n  elseif k == "any_of" then\n    local reasons = {}\n    for i, o in ipairs(s.options) do\n      local ok, why = walk(v, o, p, opts)\n      if ok then return true end\n      reasons[i] = why\n    end\n    return false, sformat("%s: matches none of %d alternatives (%s)", render(p), #s.options, table.concat(reasons, "; "))\n  elseif k == "shape" then\n    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", render(p), describe(v)) end\n    local names = names_of(s)\n    for i = 1, #names do\n      local name = names[i]\n      local ok, why = walk(v[name], s.fields[name], key_path(p, name), opts)\n      if not ok then return false, why end\n    end\n    if opts.strict then\n      for key in pairs(v) do\n        if type(key) ~= "string" or s.fields[key] == nil then\n          return false, sformat("%s: unknown field %s", render(p), fmt_literal(key))\n        end\n      end\n    end\n    return true\n  elseif k == "array_of" then\n    if type(v) ~= "table" then return false, sformat("%s: expected array, got %s", render(p), describe(v)) end\n    if not is_sequence(v) then return false, render(p) .. ": expected array, got a table with non-sequence keys" end\n    for i = 1, #v do\n      local ok, why = walk(v[i], s.item, index_path(p, i), opts)\n      if not ok then return false, why end\n    end\n    return true\n  elseif k == "map_of" then\n    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", render(p), describe(v)) end\n    for key, val in pairs(v) do\n      local ok, why = walk(key, s.key, key_path(p, key, " (key)"), opts)\n      if not ok then return false, why end\n      ok, why = walk(val, s.value, key_path(p, key), opts)\n      if not ok then return false, why end\n    end\n    return true\n  elseif k == "discriminated" then\n    if type(v) ~= "table" then return false, sformat("%s: expected table, got %s", render(p), describe(v)) end\n    local tag = v[s.tag]\n    local variant = tag ~= nil and s.variants[tag]\n    if not variant then\n      local known = {}\n      for name in pairs(s.variants) do known[#known + 1] = fmt_literal(name) end\n      table.sort(known)\n      return false, sformat("%s: field \'%s\' must be one of %s, got %s", render(p), s.tag, table.concat(known, ", "),\n        tag == nil and "nil" or fmt_literal(tag))\n    end\n    return walk(v, variant, p, opts)\n  elseif k == "ref" then\n    local target = (opts.refs and opts.refs[s.ref]) or T.resolve(s.ref)\n    if not target then return false, sformat("%s: unknown schema \'%s\'", render(p), s.ref) end\n    if s.opt and v == nil then return true end\n    return walk(v, target, p, opts)\n  end\n  return false, sformat("%s: unknown schema kind \'%s\'", render(p), tostring(k))\nend\n\n--- `true`, or `false` and the reason the value does not match.\nfunction M.check(value, schema, opts)\n  if not T.is_schema(schema) then\n    error("lshape.check: argument 2 (schema) must be a schema, got " .. type(schema), 2)\n  end\n  return walk(value, schema, "$", opts or {})\nend\n\n--- Raises `label: reason` when the value does not match; returns the value otherwise.\nfunction M.assert(value, schema, label, opts)\n  local ok, why = M.check(value, schema, opts)\n  if not ok then error((label and (label .. ": ") or "") .. why, 2) end\n  return value\nend\n\n--- True when `LSHAPE_CHECK=1`.\nfunction M.is_dev_mode() return os.getenv("LSHAPE_CHECK") == "1" end\n\n--- `assert` in dev mode, nothing otherwise.\nfunction M.assert_dev(value, schema, label, opts)\n  if not M.is_dev_mode() then return value end\n  local ok, why = M.check(value, schema, opts)\n  if not ok then error((label and (label .. ": ") or "") .. why, 2) end\n  return value\nend\n\nreturn M\n';

// embedded/lshape/init.lua
var init_default6 = '--- lshape: schemas as plain Lua data, validation, reflection and LuaCATS generation.\n--\n-- Owns the entry table: `lshape.t` (combinators), `lshape.check` (validation), `lshape.reflect`\n-- (walking a schema) and `lshape.luacats` (annotations for editors), each also reachable as its\n-- own module (`require("lshape.check")`). Pure Lua, no host calls, so a schema is a value that\n-- can be built at load time, stored in a device, and read by another module.\n--\n-- Sealed with the kernel: `knl_types` declares the kernel\'s shapes with it, and the kernel\n-- checks what crosses its boundary (Port responses, devices) against those declarations.\nlocal M = {}\nM.t = require("lshape.t")\nM.check = require("lshape.check")\nM.reflect = require("lshape.reflect")\nM.luacats = require("lshape.luacats")\nM.VERSION = "1.0"\nreturn M\n';

// embedded/lshape/luacats.lua
var luacats_default = '--- lshape.luacats: LuaCATS annotations (`---@class`, `---@field`, `---@alias`) from schemas, so an\n-- editor with lua-language-server knows the shapes a module declares.\n--\n-- `type_of(schema, names?)` is the LuaCATS type expression; `class_for(name, shape, names?)` one\n-- class block; `gen(shapes, prefix?)` every class of a `{ Name = shape }` table, sorted by name,\n-- each named `prefix .. Name`, references between them (by identity or `T.ref`) written as class\n-- names. A shape that is not in `shapes` is written inline as a table literal type.\nlocal M = {}\n\nlocal function lit(v) return type(v) == "string" and string.format("%q", v) or tostring(v) end\n\nlocal function lookup(s, names)\n  local n = names[s]\n  if n == false then return nil end\n  if n then return n end\n  if s.base then\n    local b = names[s.base]\n    if b then return b end\n  end\nend\n\nlocal function type_of(s, names)\n  names = names or {}\n  local named = lookup(s, names)\n  if named then return named end\n  local k = s.kind\n  local base\n  if k == "string" or k == "number" or k == "integer" or k == "boolean" or k == "table" or k == "any" then base = k\n  elseif k == "pattern" then base = "string"\n  elseif k == "func" then base = "function"\n  elseif k == "null" then base = "lightuserdata"\n  elseif k == "literal" then base = lit(s.value)\n  elseif k == "one_of" then\n    local parts = {}\n    for i, v in ipairs(s.values) do parts[i] = lit(v) end\n    base = table.concat(parts, "|")\n  elseif k == "any_of" then\n    local parts = {}\n    for i, o in ipairs(s.options) do parts[i] = type_of(o, names) end\n    base = table.concat(parts, "|")\n  elseif k == "array_of" then\n    local inner = type_of(s.item, names)\n    base = inner:find("[|%s]") and ("(" .. inner .. ")[]") or (inner .. "[]")\n  elseif k == "map_of" then base = string.format("table<%s, %s>", type_of(s.key, names), type_of(s.value, names))\n  elseif k == "ref" then base = names[s.ref] or s.ref\n  elseif k == "discriminated" then\n    local keys = {}\n    for name in pairs(s.variants) do keys[#keys + 1] = name end\n    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)\n    local parts = {}\n    for i, name in ipairs(keys) do parts[i] = type_of(s.variants[name], names) end\n    base = table.concat(parts, "|")\n  elseif k == "shape" then\n    if s.name and names[s.name] then base = names[s.name]\n    else\n      local names_sorted = {}\n      for name in pairs(s.fields) do names_sorted[#names_sorted + 1] = name end\n      table.sort(names_sorted)\n      local parts = {}\n      for i, name in ipairs(names_sorted) do\n        local f = s.fields[name]\n        parts[i] = name .. (f.opt and "?" or "") .. ": " .. type_of(f, names):gsub("%?$", "")\n      end\n      base = "{ " .. table.concat(parts, ", ") .. " }"\n    end\n  else base = "any" end\n  return base\nend\n\n--- The LuaCATS type expression of `schema`.\nfunction M.type_of(schema, names) return type_of(schema, names) end\n\n--- One `---@class` block for `shape` named `name`.\nfunction M.class_for(name, shape, names)\n  if type(name) ~= "string" then error("lshape.luacats.class_for: argument 1 (name) must be a string", 2) end\n  if type(shape) ~= "table" or shape.kind ~= "shape" then\n    error("lshape.luacats.class_for: argument 2 (shape) must be a shape schema", 2)\n  end\n  local lines = {}\n  if shape.doc then lines[#lines + 1] = "--- " .. shape.doc end\n  lines[#lines + 1] = "---@class " .. name\n  local fields = {}\n  for fname in pairs(shape.fields) do fields[#fields + 1] = fname end\n  table.sort(fields)\n  for _, fname in ipairs(fields) do\n    local f = shape.fields[fname]\n    local line = string.format("---@field %s%s %s", fname, f.opt and "?" or "", type_of(f, names or {}))\n    if f.doc then line = line .. " " .. f.doc end\n    lines[#lines + 1] = line\n  end\n  return table.concat(lines, "\\n")\nend\n\n--- Every class of `shapes` (`{ Name = shape | other schema }`), sorted, named `prefix .. Name`.\n-- A schema that is not a shape becomes an `---@alias`.\nfunction M.gen(shapes, prefix)\n  if type(shapes) ~= "table" then error("lshape.luacats.gen: argument 1 (shapes) must be a table", 2) end\n  prefix = prefix or ""\n  local names, order = {}, {}\n  for name, s in pairs(shapes) do\n    names[s] = prefix .. name\n    names[name] = prefix .. name\n    order[#order + 1] = name\n  end\n  table.sort(order)\n  local blocks = {}\n  for _, name in ipairs(order) do\n    local s = shapes[name]\n    if s.kind == "shape" then\n      blocks[#blocks + 1] = M.class_for(prefix .. name, s, setmetatable({ [s] = false }, { __index = names }))\n    else\n      local own = setmetatable({ [s] = false }, { __index = names })\n      blocks[#blocks + 1] = "---@alias " .. prefix .. name .. " " .. type_of(s, own)\n    end\n  end\n  return table.concat(blocks, "\\n\\n") .. "\\n"\nend\n\nreturn M\n';

// embedded/lshape/reflect.lua
var reflect_default = '--- lshape.reflect: reading a schema as data.\n--\n-- `fields(shape)` lists a shape\'s fields sorted by name as `{ name, schema, optional, doc }`;\n-- `walk(schema, fn)` visits every node depth-first as `fn(node, path)` (path like `$.a[]`), not\n-- following `ref`s (so recursive schemas terminate); `type_name(schema)` is a short human name.\nlocal M = {}\n\nfunction M.fields(shape)\n  if type(shape) ~= "table" or shape.kind ~= "shape" then\n    error("lshape.reflect.fields: argument 1 must be a shape schema, got " .. (type(shape) == "table" and tostring(shape.kind) or type(shape)), 2)\n  end\n  local out = {}\n  for name, s in pairs(shape.fields) do\n    out[#out + 1] = { name = name, schema = s, optional = s.opt == true, doc = s.doc }\n  end\n  table.sort(out, function(a, b) return a.name < b.name end)\n  return out\nend\n\nlocal function walk(s, path, fn)\n  fn(s, path)\n  local k = s.kind\n  if k == "shape" then\n    for _, f in ipairs(M.fields(s)) do walk(f.schema, path .. "." .. f.name, fn) end\n  elseif k == "array_of" then walk(s.item, path .. "[]", fn)\n  elseif k == "map_of" then walk(s.key, path .. "{key}", fn); walk(s.value, path .. "{}", fn)\n  elseif k == "any_of" then for i, o in ipairs(s.options) do walk(o, path .. "|" .. i, fn) end\n  elseif k == "discriminated" then\n    local names = {}\n    for name in pairs(s.variants) do names[#names + 1] = name end\n    table.sort(names, function(a, b) return tostring(a) < tostring(b) end)\n    for _, name in ipairs(names) do walk(s.variants[name], path .. "<" .. tostring(name) .. ">", fn) end\n  end\nend\n\nfunction M.walk(schema, fn)\n  if type(fn) ~= "function" then error("lshape.reflect.walk: argument 2 (fn) must be a function", 2) end\n  walk(schema, "$", fn)\nend\n\nfunction M.type_name(s)\n  if s.name then return s.name end\n  if s.kind == "ref" then return s.ref end\n  if s.kind == "array_of" then return M.type_name(s.item) .. "[]" end\n  return s.kind\nend\n\nreturn M\n';

// embedded/lshape/t.lua
var t_default = '--- lshape.t: schema combinators. A schema is a table `{ kind = ..., ... }` with the `Schema`\n-- metatable; nothing about it is hidden, so `lshape.reflect` and `lshape.luacats` read it as data.\n--\n-- Kinds: string, number, integer, boolean, table, func, any, null, literal, one_of (literal\n-- values), any_of (alternatives), shape (fields), array_of, map_of, pattern, discriminated, ref.\n-- Every schema answers `:optional()` (a copy that also accepts nil), `:is_optional()`, and\n-- `:describe(text)` (a copy carrying a doc string that `luacats` emits as a comment).\n--\n-- Invariant: combinators never mutate their arguments; `optional` and `describe` copy.\nlocal T = {}\nlocal Schema = {}\nSchema.__index = Schema\nSchema.__name = "lshape.schema"\nT.Schema = Schema\n\nlocal registry = {}\n\nlocal function new(s) return setmetatable(s, Schema) end\nlocal function copy(s)\n  local c = {}\n  for k, v in pairs(s) do c[k] = v end\n  c.base = s.base or s -- the schema this one was derived from (luacats names copies by it)\n  return setmetatable(c, Schema)\nend\n\n--- True when `v` is a schema.\nfunction T.is_schema(v) return getmetatable(v) == Schema end\n\nlocal function need_schema(fn, i, v)\n  if getmetatable(v) ~= Schema then\n    error(string.format("lshape.t.%s: argument %d must be a schema, got %s", fn, i, type(v)), 3)\n  end\n  return v\nend\n\nfunction Schema:optional() local c = copy(self); c.opt = true; return c end\nfunction Schema:is_optional() return self.opt == true end\nfunction Schema:describe(doc)\n  if type(doc) ~= "string" then error("lshape: describe: argument 1 (doc) must be a string, got " .. type(doc), 2) end\n  local c = copy(self); c.doc = doc; return c\nend\n\nT.string = new({ kind = "string" })\nT.number = new({ kind = "number" })\nT.integer = new({ kind = "integer" })\nT.boolean = new({ kind = "boolean" })\nT.table = new({ kind = "table" })\nT.func = new({ kind = "func" })\nT["function"] = T.func\nT.any = new({ kind = "any" })\nT.null = new({ kind = "null" })\n\n--- Exactly the value `v` (string, number or boolean).\nfunction T.literal(v)\n  local tv = type(v)\n  if tv ~= "string" and tv ~= "number" and tv ~= "boolean" then\n    error("lshape.t.literal: argument 1 must be a string, number or boolean, got " .. tv, 2)\n  end\n  return new({ kind = "literal", value = v })\nend\n\n--- One of the literal values given (as arguments or one list).\nfunction T.one_of(...)\n  local values = select("#", ...) == 1 and type((...)) == "table" and (...) or { ... }\n  if #values == 0 then error("lshape.t.one_of: at least one value is needed", 2) end\n  return new({ kind = "one_of", values = values })\nend\n\n--- Any of the schemas given (as arguments or one list).\nfunction T.any_of(...)\n  local list = select("#", ...) == 1 and getmetatable((...)) ~= Schema and (...) or { ... }\n  for i, s in ipairs(list) do need_schema("any_of", i, s) end\n  return new({ kind = "any_of", options = list })\nend\n\n--- A table with the given fields; unknown fields pass unless `check` is asked to be strict.\nfunction T.shape(fields, name)\n  if type(fields) ~= "table" then error("lshape.t.shape: argument 1 (fields) must be a table, got " .. type(fields), 2) end\n  for k, s in pairs(fields) do\n    if type(k) ~= "string" then error("lshape.t.shape: field names must be strings", 2) end\n    if getmetatable(s) ~= Schema then\n      error(string.format("lshape.t.shape: field \'%s\' must be a schema, got %s", k, type(s)), 2)\n    end\n  end\n  return new({ kind = "shape", fields = fields, name = name })\nend\n\n--- Like `shape`, every field optional.\nfunction T.partial(fields, name)\n  local s = T.shape(fields, name)\n  local f = {}\n  for k, v in pairs(s.fields) do f[k] = v:optional() end\n  s.fields = f\n  return s\nend\n\n--- A sequence whose every element matches `item`.\nfunction T.array_of(item) return new({ kind = "array_of", item = need_schema("array_of", 1, item) }) end\n\n--- A table whose keys match `key` and values match `value`.\nfunction T.map_of(key, value)\n  return new({ kind = "map_of", key = need_schema("map_of", 1, key), value = need_schema("map_of", 2, value) })\nend\n\n--- A string matching the Lua pattern `p`.\nfunction T.pattern(p)\n  if type(p) ~= "string" then error("lshape.t.pattern: argument 1 must be a string, got " .. type(p), 2) end\n  return new({ kind = "pattern", pattern = p })\nend\n\n--- A table whose field `tag` selects the shape it must match: `variants[value_of_tag]`.\nfunction T.discriminated(tag, variants)\n  if type(tag) ~= "string" then error("lshape.t.discriminated: argument 1 (tag) must be a string", 2) end\n  if type(variants) ~= "table" then error("lshape.t.discriminated: argument 2 (variants) must be a table", 2) end\n  for k, s in pairs(variants) do\n    if getmetatable(s) ~= Schema then\n      error(string.format("lshape.t.discriminated: variant \'%s\' must be a schema", tostring(k)), 2)\n    end\n  end\n  return new({ kind = "discriminated", tag = tag, variants = variants })\nend\n\n--- A schema by name, resolved when checked (so shapes may refer to themselves).\nfunction T.ref(name)\n  if type(name) ~= "string" then error("lshape.t.ref: argument 1 (name) must be a string", 2) end\n  return new({ kind = "ref", ref = name })\nend\n\n--- Registers `schema` under `name` for `T.ref` and names it for `luacats`; returns it.\nfunction T.named(name, schema)\n  need_schema("named", 2, schema)\n  if type(name) ~= "string" then error("lshape.t.named: argument 1 (name) must be a string", 2) end\n  registry[name] = schema\n  if schema.name == nil then schema.name = name end\n  return schema\nend\n\n--- The schema registered under `name`, or nil.\nfunction T.resolve(name) return registry[name] end\n\n--- Shorthand for `s:optional()`.\nfunction T.optional(s) return need_schema("optional", 1, s):optional() end\n\nreturn T\n';

// embedded/lspec/init.lua
var init_default7 = '--- lspec: the Lua spec runner of agent-block, with a lust-compatible API.\n--\n-- `describe(name, fn)` groups, `it(name, fn)` is one test, `before(fn)` / `after(fn)` run around\n-- every `it` of the group they are declared in (and of nested groups), outermost first.\n-- `expect(v)` chains lust\'s words: `.to`, `.to_not` (also `.not_to`), `.be`, `.a`/`.an`, `.have`,\n-- ending in `.equal(x)` (deep), `.be(x)` (identity), `.be.truthy()`, `.be.a(type)`, `.exist()`,\n-- `.match(pattern)`, `.have(value)`, `.fail()` and `.fail.with(pattern)`.\n--\n-- Invariants: a failing `it` never stops the file; an error outside any `it` is recorded as a\n-- failure of the file itself; results are plain data (`results()`), so a host can count them.\n-- Specs need no network and no keys: they run in the same host as blocks, with `std.*` available.\nlocal M = {}\n\nlocal groups = { { name = nil, befores = {}, afters = {} } }\nlocal results = { passed = 0, failed = 0, failures = {} }\nlocal out = {}\n\nlocal function emit(line) out[#out + 1] = line end\nlocal function indent() return string.rep("  ", #groups - 1) end\n\nfunction M.describe(name, fn)\n  emit(indent() .. tostring(name))\n  groups[#groups + 1] = { name = name, befores = {}, afters = {} }\n  local ok, err = xpcall(fn, debug.traceback)\n  groups[#groups] = nil\n  if not ok then\n    results.failed = results.failed + 1\n    results.failures[#results.failures + 1] = { name = tostring(name) .. " (describe)", error = tostring(err) }\n    emit(indent() .. "  FAIL " .. tostring(name) .. " (error while describing)")\n    emit(indent() .. "    " .. tostring(err):gsub("\\n", "\\n" .. indent() .. "    "))\n  end\nend\n\nfunction M.before(fn) local g = groups[#groups]; g.befores[#g.befores + 1] = fn end\nfunction M.after(fn) local g = groups[#groups]; g.afters[#g.afters + 1] = fn end\n\nlocal function full_name(name)\n  local parts = {}\n  for i = 2, #groups do parts[#parts + 1] = tostring(groups[i].name) end\n  parts[#parts + 1] = tostring(name)\n  return table.concat(parts, " / ")\nend\n\nfunction M.it(name, fn)\n  local ok, err = true, nil\n  for i = 1, #groups do\n    for _, b in ipairs(groups[i].befores) do\n      if ok then ok, err = xpcall(b, debug.traceback, name) end\n    end\n  end\n  if ok then ok, err = xpcall(fn, debug.traceback) end\n  for i = #groups, 1, -1 do\n    for _, a in ipairs(groups[i].afters) do\n      local aok, aerr = xpcall(a, debug.traceback, name)\n      if ok and not aok then ok, err = aok, aerr end\n    end\n  end\n  if ok then\n    results.passed = results.passed + 1\n    emit(indent() .. "PASS " .. tostring(name))\n  else\n    results.failed = results.failed + 1\n    local msg = tostring(err)\n    results.failures[#results.failures + 1] = { name = full_name(name), error = msg }\n    emit(indent() .. "FAIL " .. tostring(name))\n    emit(indent() .. "  " .. msg:gsub("\\n", "\\n" .. indent() .. "  "))\n  end\nend\n\n-- expect ----------------------------------------------------------------------------------------\n\nlocal function fmt(v)\n  if type(v) == "string" then return string.format("%q", v) end\n  if type(v) == "table" then\n    local ok, s = pcall(std.json.encode, v)\n    if ok then return s end\n  end\n  return tostring(v)\nend\n\nlocal function deep_equal(a, b, eps)\n  if a == b then return true end\n  if type(a) == "number" and type(b) == "number" and eps then return math.abs(a - b) <= eps end\n  if type(a) ~= "table" or type(b) ~= "table" then return false end\n  for k, v in pairs(a) do if not deep_equal(v, b[k], eps) then return false end end\n  for k in pairs(b) do if a[k] == nil then return false end end\n  return true\nend\n\nlocal Assertion = {}\nlocal matchers = {}\n\nlocal function new(value, negate) return setmetatable({ value = value, negate = negate }, Assertion) end\n\nlocal function check(self, cond, msg, negmsg)\n  if self.negate then cond = not cond end\n  if not cond then error(self.negate and negmsg or msg, 3) end\n  return self\nend\n\nAssertion.__index = function(self, k)\n  if k == "to" or k == "have_been" or k == "a_value" then return self end\n  if k == "to_not" or k == "not_to" then return new(self.value, not self.negate) end\n  if k == "be" then\n    return setmetatable({}, {\n      __index = self,\n      __call = function(_, x)\n        return check(self, rawequal(self.value, x) or self.value == x,\n          "expected " .. fmt(self.value) .. " to be " .. fmt(x),\n          "expected " .. fmt(self.value) .. " to not be " .. fmt(x))\n      end,\n    })\n  end\n  if k == "fail" then\n    local function run(pattern)\n      local v = self.value\n      if type(v) ~= "function" then error("expect(...).to.fail(): the value must be a function, got " .. type(v), 3) end\n      local ok, err = pcall(v)\n      local cond = not ok and (pattern == nil or tostring(err):find(pattern) ~= nil)\n      return check(self, cond,\n        pattern and ("expected function to fail with " .. fmt(pattern) .. (ok and ", but it succeeded" or ", but it failed with " .. fmt(tostring(err))))\n          or "expected function to fail, but it succeeded",\n        "expected function to not fail, but it failed with " .. fmt(tostring(err)))\n    end\n    return setmetatable({ with = function(pattern) return run(pattern) end }, {\n      __call = function() return run(nil) end,\n    })\n  end\n  local m = matchers[k]\n  if m then return function(...) return m(self, ...) end end\n  return nil\nend\n\nfunction matchers.equal(self, x, eps)\n  return check(self, deep_equal(self.value, x, eps),\n    "expected " .. fmt(self.value) .. " to equal " .. fmt(x),\n    "expected " .. fmt(self.value) .. " to not equal " .. fmt(x))\nend\nmatchers.equals = matchers.equal\n\nfunction matchers.truthy(self)\n  return check(self, self.value and true or false,\n    "expected " .. fmt(self.value) .. " to be truthy", "expected " .. fmt(self.value) .. " to not be truthy")\nend\n\nfunction matchers.a(self, t)\n  local actual = type(self.value)\n  if actual == "userdata" and io.type(self.value) then actual = "file" end\n  return check(self, actual == t or (t == "file" and io.type(self.value) ~= nil),\n    "expected " .. fmt(self.value) .. " to be a " .. tostring(t) .. ", got " .. actual,\n    "expected " .. fmt(self.value) .. " to not be a " .. tostring(t))\nend\nmatchers.an = matchers.a\n\nfunction matchers.exist(self)\n  return check(self, self.value ~= nil, "expected value to exist", "expected " .. fmt(self.value) .. " to not exist")\nend\n\nfunction matchers.match(self, pattern)\n  local s = tostring(self.value)\n  return check(self, s:find(pattern) ~= nil,\n    "expected " .. fmt(s) .. " to match " .. fmt(pattern), "expected " .. fmt(s) .. " to not match " .. fmt(pattern))\nend\n\nfunction matchers.have(self, x)\n  local found = false\n  if type(self.value) == "table" then\n    for _, v in pairs(self.value) do if deep_equal(v, x) then found = true break end end\n  end\n  return check(self, found, "expected " .. fmt(self.value) .. " to contain " .. fmt(x),\n    "expected " .. fmt(self.value) .. " to not contain " .. fmt(x))\nend\n\nfunction M.expect(v) return new(v, false) end\n\n--- Records an error raised outside of any `it` (while loading the spec file).\nfunction M.file_error(err)\n  results.failed = results.failed + 1\n  results.failures[#results.failures + 1] = { name = "(spec file)", error = tostring(err) }\n  emit("FAIL (error outside of it): " .. tostring(err))\nend\n\n--- Sets describe/it/before/after/expect (and `lust`) as globals, as lust users expect.\nfunction M.expose()\n  describe, it, before, after, expect = M.describe, M.it, M.before, M.after, M.expect\n  lust = M\nend\n\n--- Counts and failures so far; `output` holds the report lines.\nfunction M.results()\n  return { passed = results.passed, failed = results.failed, failures = results.failures, output = out }\nend\n\nreturn M\n';

// embedded/mcp_tools/init.lua
var init_default8 = '--- mcp_tools: MCP servers as a model-facing tool set (the utility layer `agent.run` and the kernel\n-- adapter use; reached with `require("mcp_tools")`).\n--\n-- Owns: connecting a list of server entries (stdio `{ name, command, args, cwd?, env?, required? }`\n-- and HTTP `{ name, url, transport_opts = { transport = "sse"|"http", headers } }` in one list),\n-- the per-server wiring of the agent options (`sampling`, `on_progress` / `progress_to_log`,\n-- `on_log` / `log_to_stderr`, `enable_resources`, `enable_prompts`), the namespaced tool list\n-- (`server__tool`, group = the tool\'s `_meta.group` when it is a non-empty string, else the server\n-- name) and dispatch back to the right server.\n--\n-- Contract:\n--   local conn = mcp_tools.connect(servers, opts)\n--   conn:tools()            --> { { name, description, input_schema, group }, ... }\n--   conn:call(name, input)  --> text, is_error   (raises only on cancel / run end)\n--   conn:close()            --> disconnects every server; never raises\n--\n-- Invariants:\n-- - A server with `required = true` that fails to connect (or to list its tools) raises, with the\n--   server\'s stderr tail in the message, after disconnecting the servers already connected; any\n--   other failure is logged at warn and that server is skipped (disconnected, and nothing of it \u2014\n--   tools, meta tools, callbacks \u2014 left behind).\n-- - `conn:tools()` re-lists a server\'s tools when it has sent `tools/list_changed` since the last\n--   listing (`mcp.tools_epoch`), so the list a model sees is current before each call; an HTTP/SSE\n--   server declaring `tools.listChanged` is also re-listed after a call of one of its tools (its\n--   notification may arrive after the result, on another stream).\n-- - Callback envelopes: `{ type = "progress", server, token, progress, total, message }` and\n--   `{ type = "log", server, level, logger, data }`; an error raised by a user callback is\n--   swallowed and logged at warn. Logging options are gated on the server\'s `logging` capability,\n--   the meta tools on `resources` / `prompts` (skips are logged at info); progress is not gated.\n-- - `conn:call` does not raise for a failed call (it comes back as `message, true`); only a cancel\n--   of the calling task or the end of the run travels on as an error (`mcp_tools.is_fatal`).\nlocal M = {}\n\nlocal type, pairs, ipairs, pcall, tostring, error, setmetatable, getmetatable = type, pairs, ipairs, pcall,\n  tostring, error, setmetatable, getmetatable\nlocal sformat, concat = string.format, table.concat\n\nlocal Conn = {}\nConn.__index = Conn\n\nlocal SEP = "__"\n\nlocal function empty_object_schema()\n  return { type = "object", properties = std.json.object() }\nend\n\nlocal META_TOOLS = {\n  resources = {\n    {\n      suffix = "mcp_list_resources",\n      description = "List the resources MCP server \'%s\' exposes (JSON array of {uri, name, mimeType, ...}).",\n      schema = empty_object_schema,\n    },\n    {\n      suffix = "mcp_read_resource",\n      description = "Read one resource of MCP server \'%s\' by URI (JSON array of contents).",\n      schema = function()\n        return {\n          type = "object",\n          properties = { uri = { type = "string", description = "the resource URI" } },\n          required = std.json.array({ "uri" }),\n        }\n      end,\n    },\n  },\n  prompts = {\n    {\n      suffix = "mcp_list_prompts",\n      description = "List the prompt templates MCP server \'%s\' offers (JSON array of {name, description, arguments}).",\n      schema = empty_object_schema,\n    },\n    {\n      suffix = "mcp_get_prompt",\n      description = "Render a prompt template of MCP server \'%s\' (JSON array of messages).",\n      schema = function()\n        return {\n          type = "object",\n          properties = {\n            name = { type = "string", description = "the prompt name" },\n            args = { type = "object", description = "the prompt arguments (strings)" },\n          },\n          required = std.json.array({ "name" }),\n        }\n      end,\n    },\n  },\n}\n\nlocal LOG_LEVEL = {\n  debug = "debug", info = "info", notice = "info", warning = "warn",\n  error = "error", critical = "error", alert = "error", emergency = "error",\n}\n\n--- True for the errors that must travel on instead of being turned into a result: a cancel of\n-- the running task and the run ending (`os.exit`, `job.defer`).\nlocal function is_fatal(e)\n  if type(e) == "string" then return e == "cancelled" or e:find(":%d+: cancelled$") ~= nil end\n  local mt = type(e) == "table" and getmetatable(e)\n  return type(mt) == "table" and mt.__name == "EXIT"\nend\nM.is_fatal = is_fatal\n\n-- The text of an error raised by an `mcp.*` call made in this file: such an error starts with\n-- this file\'s position, which tells a reader nothing (the message names the mcp function).\nlocal function reason(err)\n  return (tostring(err):gsub("^[^\\n:]*%.lua:%d+: ", "", 1))\nend\nM.reason = reason\n\nlocal function warn_callback(what, server, err)\n  log.warn(sformat("mcp_tools: %s callback for server \'%s\' failed: %s", what, server, tostring(err)))\nend\n\nlocal function data_text(data)\n  if type(data) == "string" then return data end\n  local ok, s = pcall(std.json.encode, data)\n  return ok and s or tostring(data)\nend\n\n--- Group of an MCP tool: `_meta.group` when it is a non-empty string, else the server name.\nfunction M.resolve_group(tool, server)\n  local meta = tool._meta\n  local g = type(meta) == "table" and meta.group or nil\n  if type(g) == "string" and g ~= "" then return g end\n  return server\nend\n\n--- Tool result content flattened to text (text blocks verbatim, other blocks as a short marker).\nfunction M.flatten(content, structured)\n  local parts = {}\n  for _, b in ipairs(content or {}) do\n    local t = b.type\n    if t == "text" then\n      parts[#parts + 1] = b.text\n    elseif t == "resource" and type(b.resource) == "table" then\n      parts[#parts + 1] = b.resource.text or sformat("[resource %s]", tostring(b.resource.uri))\n    elseif t == "resource_link" then\n      parts[#parts + 1] = sformat("[resource link %s]", tostring(b.uri))\n    elseif t == "image" or t == "audio" then\n      parts[#parts + 1] = sformat("[%s %s]", t, tostring(b.mimeType))\n    else\n      parts[#parts + 1] = data_text(b)\n    end\n  end\n  if #parts == 0 and structured ~= nil then return data_text(structured) end\n  return concat(parts, "\\n")\nend\n\nlocal function check_entry(i, s)\n  if type(s) ~= "table" then\n    error(sformat("mcp_tools.connect: argument 1 (servers) element %d must be a table, got %s", i, type(s)), 3)\n  end\n  if type(s.name) ~= "string" or s.name == "" then\n    error(sformat("mcp_tools.connect: argument 1 (servers) element %d field \'name\' must be a non-empty string", i), 3)\n  end\n  if s.url == nil and type(s.command) ~= "string" then\n    error(sformat("mcp_tools.connect: server \'%s\' needs \'command\' (stdio) or \'url\' (HTTP)", s.name), 3)\n  end\nend\n\nlocal function connect_one(s)\n  if s.url ~= nil then\n    local topts = {}\n    for k, v in pairs(s.transport_opts or {}) do topts[k] = v end\n    if topts.trace_context == nil then topts.trace_context = s.trace_context end\n    if topts.timeout == nil then topts.timeout = s.timeout end\n    if topts.era == nil then topts.era = s.era end\n    return pcall(mcp.connect_http, s.name, s.url, topts)\n  end\n  return pcall(mcp.connect, s.name, s.command, s.args or {}, {\n    cwd = s.cwd, env = s.env, trace_context = s.trace_context, timeout = s.timeout, era = s.era,\n  })\nend\n\n--- Connects `servers` and wires `opts`; see the module header.\nfunction M.connect(servers, opts)\n  if type(servers) ~= "table" then\n    error(sformat("mcp_tools.connect: argument 1 (servers) must be a table, got %s", type(servers)), 2)\n  end\n  if opts ~= nil and type(opts) ~= "table" then\n    error(sformat("mcp_tools.connect: argument 2 (opts) must be a table, got %s", type(opts)), 2)\n  end\n  opts = opts or {}\n  local self = setmetatable({ opts = opts, servers = {}, order = {}, index = {} }, Conn)\n  for i, s in ipairs(servers) do\n    check_entry(i, s)\n    local ok, err = connect_one(s)\n    if ok then ok, err = pcall(self._setup, self, s.name, s.url ~= nil) end\n    if not ok and is_fatal(err) then\n      self:close()\n      error(err, 0)\n    end\n    if not ok then\n      if s.required then\n        self:close()\n        error(sformat("mcp_tools.connect: required server \'%s\' failed: %s", s.name, reason(err)), 2)\n      end\n      log.warn(sformat("mcp_tools: skipping server \'%s\': %s", s.name, reason(err)))\n      self:_drop(s.name)\n      pcall(mcp.disconnect, s.name)\n    end\n  end\n  return self\nend\n\nfunction Conn:_setup(name, remote)\n  local opts = self.opts\n  local info = mcp.server_info(name)\n  if not info.ok then error(info.error, 0) end\n  local caps = info.server_info.capabilities or {}\n  local srv = { name = name, caps = caps, tools = {}, epoch = -1, meta = {},\n    -- see `Conn:call`: over HTTP/SSE a list change may arrive after the result that caused it\n    relist_after_call = remote and type(caps.tools) == "table" and caps.tools.listChanged == true }\n  self.servers[name] = srv\n  self.order[#self.order + 1] = name\n\n  if opts.sampling ~= nil then mcp.set_sampling_handler(name, opts.sampling) end\n\n  if type(opts.on_progress) == "function" then\n    local cb = opts.on_progress\n    mcp.on_progress(name, function(token, progress, total, message)\n      local ok, err = pcall(cb, {\n        type = "progress", server = name, token = token, progress = progress, total = total, message = message,\n      })\n      if not ok then warn_callback("progress", name, err) end\n    end)\n  elseif opts.progress_to_log then\n    mcp.on_progress(name, function(token, progress, total, message)\n      log.info(sformat("mcp progress: server=%s token=%s p=%s/%s%s", name, tostring(token), tostring(progress),\n        tostring(total), message and (" msg=" .. tostring(message)) or ""))\n    end)\n  end\n\n  if type(opts.on_log) == "function" or opts.log_to_stderr then\n    if caps.logging == nil then\n      log.info(sformat("mcp_tools: server \'%s\' does not declare logging; log options skipped", name))\n    elseif type(opts.on_log) == "function" then\n      local cb = opts.on_log\n      mcp.on_log(name, function(level, logger, data)\n        local ok, err = pcall(cb, { type = "log", server = name, level = level, logger = logger, data = data })\n        if not ok then warn_callback("log", name, err) end\n      end)\n    else\n      mcp.on_log(name, function(level, logger, data)\n        local fn = log[LOG_LEVEL[level] or "info"] or log.info\n        fn(sformat("mcp log: server=%s logger=%s data=%s", name, tostring(logger), data_text(data)))\n      end)\n    end\n  end\n\n  for _, kind in ipairs({ "resources", "prompts" }) do\n    if opts["enable_" .. kind] then\n      if caps[kind] == nil then\n        log.info(sformat("mcp_tools: server \'%s\' does not declare %s; enable_%s skipped", name, kind, kind))\n      else\n        for _, m in ipairs(META_TOOLS[kind]) do\n          srv.meta[#srv.meta + 1] = {\n            name = name .. SEP .. m.suffix,\n            description = sformat(m.description, name),\n            input_schema = m.schema(),\n            group = name,\n            kind = m.suffix,\n          }\n        end\n      end\n    end\n  end\n\n  self:_refresh(srv)\nend\n\n-- Forgets a server `_setup` may have half registered (its listing failed): it must not stay in\n-- the tool list (its meta tools included) nor be re-listed on every `tools()`.\nfunction Conn:_drop(name)\n  if not self.servers[name] then return end\n  self.servers[name] = nil\n  for i, n in ipairs(self.order) do\n    if n == name then table.remove(self.order, i) break end\n  end\n  for _, setter in ipairs({ "on_progress", "on_log", "set_sampling_handler" }) do pcall(mcp[setter], name, nil) end\nend\n\n--- Re-lists a server\'s tools; raises when the listing fails.\nfunction Conn:_refresh(srv)\n  local epoch = mcp.tools_epoch(srv.name)\n  local r = mcp.list_tools(srv.name)\n  if not r.ok then error(r.error, 0) end\n  srv.tools = r.tools\n  srv.epoch = epoch\n  srv.dirty = false\nend\n\n--- The tool list, refreshed for servers whose tools changed. See the module header.\nfunction Conn:tools()\n  local out, index = {}, {}\n  for _, name in ipairs(self.order) do\n    local srv = self.servers[name]\n    if srv.dirty or srv.epoch ~= mcp.tools_epoch(name) then\n      local ok, err = pcall(self._refresh, self, srv)\n      if not ok and is_fatal(err) then error(err, 0) end\n      if not ok then log.warn(sformat("mcp_tools: refreshing the tools of \'%s\' failed: %s", name, reason(err))) end\n    end\n    for _, t in ipairs(srv.tools) do\n      local full = name .. SEP .. t.name\n      out[#out + 1] = {\n        name = full,\n        description = t.description or "",\n        input_schema = t.inputSchema or empty_object_schema(),\n        group = M.resolve_group(t, name),\n      }\n      index[full] = { server = name, tool = t.name }\n    end\n    for _, m in ipairs(srv.meta) do\n      out[#out + 1] = { name = m.name, description = m.description, input_schema = m.input_schema, group = m.group }\n      index[m.name] = { server = name, meta = m.kind }\n    end\n  end\n  self.index = index\n  return out\nend\n\nlocal function encode_result(r, field)\n  if not r.ok then return r.error, true end\n  return std.json.encode(r[field] or std.json.array()), false\nend\n\nlocal META_CALL = {\n  mcp_list_resources = function(server)\n    return encode_result(mcp.list_resources(server), "resources")\n  end,\n  mcp_read_resource = function(server, input)\n    if type(input.uri) ~= "string" then return "mcp_read_resource: \'uri\' (string) is required", true end\n    return encode_result(mcp.read_resource(server, input.uri), "contents")\n  end,\n  mcp_list_prompts = function(server)\n    return encode_result(mcp.list_prompts(server), "prompts")\n  end,\n  mcp_get_prompt = function(server, input)\n    if type(input.name) ~= "string" then return "mcp_get_prompt: \'name\' (string) is required", true end\n    return encode_result(mcp.get_prompt(server, input.name, input.args), "messages")\n  end,\n}\n\n--- Calls tool `name` (`server__tool`) with `input`; returns `text, is_error`. Raises only when the\n-- calling task is cancelled or the run ends.\nfunction Conn:call(name, input)\n  if type(name) ~= "string" then return "mcp_tools: tool name must be a string", true end\n  local entry = self.index[name]\n  if not entry then\n    self:tools()\n    entry = self.index[name]\n  end\n  if not entry then return sformat("unknown MCP tool \'%s\'", name), true end\n  if type(input) ~= "table" then input = {} end\n  local ok, text, is_error = pcall(function()\n    if entry.meta then return META_CALL[entry.meta](entry.server, input) end\n    -- Over HTTP/SSE the server\'s `tools/list_changed` travels on another stream than the\n    -- result of the call that caused it (the GET stream, or `subscriptions/listen`), so it may\n    -- arrive after the result and after the next model call has been built: a server that says\n    -- its tools can change is re-listed after each call of one of its tools. Over stdio one\n    -- stream carries both in order and the epoch alone is exact.\n    local srv = self.servers[entry.server]\n    if srv and srv.relist_after_call then srv.dirty = true end\n    local r = mcp.call(entry.server, entry.tool, input)\n    if not r.ok then return r.error, true end\n    return M.flatten(r.content, r.structured_content), r.is_error == true\n  end)\n  if not ok then\n    if is_fatal(text) then error(text, 0) end\n    return sformat("MCP tool \'%s\' failed: %s", name, reason(text)), true\n  end\n  return text, is_error\nend\n\n--- The names of the connected servers, in connection order.\nfunction Conn:server_names()\n  local out = {}\n  for i, n in ipairs(self.order) do out[i] = n end\n  return out\nend\n\n--- Disconnects every server and drops the callbacks set for them. Never raises.\nfunction Conn:close()\n  for _, name in ipairs(self.order) do\n    for _, setter in ipairs({ "on_progress", "on_log", "set_sampling_handler" }) do pcall(mcp[setter], name, nil) end\n    local ok, err = pcall(mcp.disconnect, name)\n    if not ok then log.warn(sformat("mcp_tools: disconnecting \'%s\' failed: %s", name, reason(err))) end\n  end\n  self.order, self.servers, self.index = {}, {}, {}\nend\n\nreturn M\n';

// embedded/session/init.lua
var init_default9 = '--- session: carrying a conversation from one run to the next, over the kernel\'s log.\n--\n-- `session.load(id, opts?)` returns a message list for `agent.run({ history = ... })`:\n-- - when `id` is a kernel session id, the conversation folded from that session\'s events\n--   (user messages, responses, tool results), exactly as a beat saw it;\n-- - otherwise the messages last saved under the name `id` (`{}` when nothing was, or when the\n--   name was cleared since).\n-- `session.save(id, messages, opts?)` records the messages under the name `id`;\n-- `session.clear(id, opts?)` records that the name is empty again (true if it held something).\n--\n-- Saving is an append like any other fact: each save or clear is a small kernel session (owner\n-- `session`) whose event carries `meta.conversation = id`, so a saved conversation is found with\n-- the published table alone and nothing is ever overwritten. `opts.store` picks the database\n-- (`nil` = the project\'s, `"mem"`, `{ sqlite = path }`).\nlocal knl = require("knl")\nlocal types = require("knl_types")\nlocal lcheck = require("lshape.check").check\n\nlocal M = {}\n\nlocal function check_id(fn, id)\n  if type(id) ~= "string" or id == "" then\n    error(string.format("session.%s: argument 1 (id) must be a non-empty string, got %s", fn,\n      type(id) == "string" and "an empty string" or type(id)), 3)\n  end\nend\n\nlocal function latest(store, id)\n  local rows = store:query([[SELECT kind, data FROM events\n    WHERE kind IN (\'conversation_saved\', \'conversation_cleared\') AND json_extract(meta, \'$.conversation\') = ?\n    ORDER BY position DESC LIMIT 1]], { id })\n  return rows[1]\nend\n\n--- The conversation of kernel session `id`, or the messages last saved under the name `id`.\nfunction M.load(id, opts)\n  check_id("load", id)\n  local store = knl.open(opts)\n  if store:has(id) then\n    local msgs = {}\n    for _, ev in ipairs(store:events(id)) do knl.fold_event(msgs, ev.kind, ev.data) end\n    return msgs\n  end\n  local row = latest(store, id)\n  if not row or row.kind == "conversation_cleared" then return {} end\n  return row.data.messages or {}\nend\n\n--- Records `messages` under the name `id`; returns the kernel session id that holds the save.\nfunction M.save(id, messages, opts)\n  check_id("save", id)\n  if type(messages) ~= "table" then\n    error("session.save: argument 2 (messages) must be a table, got " .. type(messages), 2)\n  end\n  for i, m in ipairs(messages) do\n    local ok, why = lcheck(m, types.Message)\n    if not ok then error(string.format("session.save: message %d: %s", i, why), 2) end\n  end\n  return knl.session({ owner = "session", store = opts and opts.store, labels = { conversation = id } }, function(s)\n    s:append({ kind = "conversation_saved", data = { messages = std.json.array(messages) },\n      meta = { conversation = id } })\n    return s.id\n  end)\nend\n\n--- Records that the name `id` holds nothing; true when it held something before.\nfunction M.clear(id, opts)\n  check_id("clear", id)\n  local store = knl.open(opts)\n  local row = latest(store, id)\n  local had = row ~= nil and row.kind == "conversation_saved"\n  knl.session({ owner = "session", store = opts and opts.store, labels = { conversation = id } }, function(s)\n    s:append({ kind = "conversation_cleared", data = {}, meta = { conversation = id } })\n  end)\n  return had\nend\n\nreturn M\n';

// embedded/index.gen.ts
var EMBEDDED_FILES = {
  "agent/init.lua": init_default,
  "knl/init.lua": init_default2,
  "knl_adapter/init.lua": init_default3,
  "knl_types/init.lua": init_default4,
  "llm_proto/anthropic.lua": anthropic_default,
  "llm_proto/init.lua": init_default5,
  "llm_proto/openai.lua": openai_default,
  "llm_proto/port.lua": port_default,
  "lshape/check.lua": check_default,
  "lshape/init.lua": init_default6,
  "lshape/luacats.lua": luacats_default,
  "lshape/reflect.lua": reflect_default,
  "lshape/t.lua": t_default,
  "lspec/init.lua": init_default7,
  "mcp_tools/init.lua": init_default8,
  "session/init.lua": init_default9
};

// src/modules/embedded.ts
var SEALED_ROOTS = /* @__PURE__ */ new Set([
  "knl",
  "knl_adapter",
  "knl_types",
  "lshape"
]);
var PACK_ROOTS = /* @__PURE__ */ new Set([
  "policy",
  "supervisor"
]);
function moduleNameOf(path) {
  if (!path.endsWith(".lua")) return void 0;
  const parts = path.slice(0, -4).split("/");
  if (parts[parts.length - 1] === "init") parts.pop();
  if (parts.length === 0) return void 0;
  return parts.join(".");
}
var cache;
function embeddedModules() {
  if (!cache) {
    cache = /* @__PURE__ */ new Map();
    for (const [path, source] of Object.entries(EMBEDDED_FILES)) {
      const name = moduleNameOf(path);
      if (name) cache.set(name, {
        name,
        path,
        source
      });
    }
  }
  return cache;
}
function rootOf(name) {
  return name.split(".")[0];
}
function layerOf(root) {
  if (SEALED_ROOTS.has(root)) return "sealed";
  if (PACK_ROOTS.has(root)) return "pack";
  return "lib";
}

// src/modules/resolver.ts
var NAME = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;
var enc = new TextEncoder();
function libTiers(scriptDir, projectRoot, home) {
  const tiers = [
    {
      label: "project .agent-block/lib",
      dir: join(projectRoot, ".agent-block", "lib")
    },
    {
      label: "project lib",
      dir: join(projectRoot, "lib")
    },
    {
      label: "user lib",
      dir: join(home, "lib")
    }
  ];
  const inBlocks = blockRoots(projectRoot, home).some((r) => isWithin(canonical(r.dir), canonical(scriptDir)));
  return inBlocks ? tiers : [
    {
      label: "script directory",
      dir: scriptDir
    },
    ...tiers
  ];
}
function canonical(p) {
  try {
    return Deno.realPathSync(p);
  } catch {
    return p;
  }
}
function isWithin(root, dir) {
  const rel = relative(root, dir);
  return rel === "" || !rel.startsWith("..") && !isAbsolute(rel);
}
function displayPath(path, cwd = Deno.cwd()) {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith("..") && !isAbsolute(rel) ? rel : path;
}
function isFile(path) {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
var ModuleResolver = class {
  tiers;
  unseal;
  warn;
  constructor(tiers, unseal, warn) {
    this.tiers = tiers;
    this.unseal = unseal;
    this.warn = warn;
  }
  resolve(name) {
    const embedded = embeddedModules();
    if (name.startsWith("embedded.")) {
      const m2 = embedded.get(name.slice("embedded.".length));
      if (m2) {
        return {
          found: true,
          source: enc.encode(m2.source),
          chunkname: `@embedded/${m2.path}`,
          info: `embedded:${m2.path}`
        };
      }
      return {
        found: false,
        searched: [
          `no embedded module '${name.slice("embedded.".length)}'`
        ]
      };
    }
    if (!NAME.test(name)) {
      return {
        found: false,
        searched: [
          `'${name}' is not a valid module name (dot-separated names only)`
        ]
      };
    }
    const rel = name.replace(/\./g, "/");
    const sealed = SEALED_ROOTS.has(rootOf(name));
    const searched = [];
    if (!sealed || this.unseal) {
      for (const tier of this.tiers) {
        for (const candidate of [
          join(tier.dir, `${rel}.lua`),
          join(tier.dir, rel, "init.lua")
        ]) {
          if (isFile(candidate)) {
            if (sealed) {
              this.warn(`sealed module '${name}' is replaced by ${candidate} (AGENT_BLOCK_UNSEAL=1)`);
            }
            const shown = displayPath(candidate);
            return {
              found: true,
              source: Deno.readFileSync(candidate),
              chunkname: `@${shown}`,
              info: shown
            };
          }
          searched.push(`no file '${candidate}'`);
        }
      }
    }
    const m = embedded.get(name);
    if (m) {
      return {
        found: true,
        source: enc.encode(m.source),
        chunkname: `@embedded/${m.path}`,
        info: `embedded:${m.path}`
      };
    }
    searched.push(`no embedded module '${name}'`);
    return {
      found: false,
      searched
    };
  }
  /**
   * Every filesystem copy of a sealed module on any tier (`<root>.lua` or a `<root>` entry).
   * Runs before every script, so it probes only the candidate names (never lists a directory:
   * the script's directory may hold thousands of files): one `stat` per tier, then, for a tier
   * that exists, one `lstat` per candidate (a dangling symlink counts as a copy).
   */
  checkSeals() {
    const found = [];
    for (const tier of this.tiers) {
      if (!isDirectory(tier.dir)) continue;
      for (const root of SEALED_ROOTS) {
        for (const entry of [
          `${root}.lua`,
          root
        ]) {
          const file = join(tier.dir, entry);
          if (lexists(file)) found.push({
            module: root,
            file
          });
        }
      }
    }
    return found;
  }
};
function isDirectory(p) {
  try {
    return Deno.statSync(p).isDirectory;
  } catch {
    return false;
  }
}
function lexists(p) {
  try {
    Deno.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

export {
  embeddedModules,
  rootOf,
  layerOf,
  libTiers,
  displayPath,
  ModuleResolver
};
