--- llm_proto.anthropic: canonical request → Anthropic Messages body, and back.
--
-- Owns the Anthropic column of the translation table:
-- - `tool_choice` → `{ type = auto|any|none|tool }`, `parallel_tool_calls = false` →
--   `tool_choice.disable_parallel_tool_use`; `stop` → `stop_sequences`;
-- - `thinking`: on 4.6+ models `{ type = "adaptive" }` plus `output_config.effort`; on older ones
--   `{ type = "enabled", budget_tokens }` (an effort maps through `EFFORT_BUDGET`, capped below
--   `max_tokens`); `false` → `{ type = "disabled" }`;
-- - `response_format = { type = "json_schema", json_schema = { schema } }` →
--   `output_config.format = { type = "json_schema", schema }`;
-- - prompt caching (on unless `cache_control = false`; a table is used as the marker): the
--   system prompt, the last tool and the last block of the last message carry the marker (three
--   of the four breakpoints), so a growing conversation re-reads its prefix from cache;
-- - `context_management = true` (or a `context_management_config` table, sent whole) → body
--   `context_management` plus the `context-management-2025-06-27` beta.
-- Refused: forced tool use under manual thinking; a budget below 1024 or not below `max_tokens`.
-- A `redacted_thinking` block is normalised to `{ type = "thinking", thinking = "", redacted_data }`
-- (so consumers see the four block types only) and sent back as `redacted_thinking`.
-- Sampling (the seed's rule): `temperature`, `top_p`, `top_k` are forwarded, except what a model
-- cannot take, dropped with a warning — `temperature` while thinking is on (a reasoning model),
-- `temperature ~= 1` on a Claude past Opus 4.6 — and `seed` (no Anthropic field). API version
-- 2026-10-21 (what `@anthropic-ai/sdk` 1.x sends) refuses every sampling parameter, so a request
-- that carries one says `api_version = A.SAMPLING_API_VERSION` (2023-06-01, which takes them),
-- and the transport sends that version for it. Messages keep their blocks; thinking blocks
-- without a signature (those came from another provider's reasoning) are dropped because the API
-- would reject them.
local P = require("llm_proto")
local A = {}

local type, ipairs, pairs, error, sformat = type, ipairs, pairs, error, string.format

A.CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
--- The API version a request carrying sampling parameters is sent with: 2026-10-21 refuses them.
A.SAMPLING_API_VERSION = "2023-06-01"
--- The default context editing: clear old tool uses past 80K input tokens, keep the last 3,
-- clear at least 10K.
function A.default_context_management()
  return {
    edits = P.array({ {
      type = "clear_tool_uses_20250919",
      trigger = { type = "input_tokens", value = 80000 },
      keep = { type = "tool_uses", value = 3 },
      clear_at_least = { type = "input_tokens", value = 10000 },
    } }),
  }
end

local function cache_marker(cc)
  if type(cc) == "table" then return cc end
  return { type = "ephemeral" }
end

local function clean_block(b)
  if b.type == "thinking" then
    if b.redacted_data then return { type = "redacted_thinking", data = b.redacted_data } end
    if not b.signature then return nil end
  end
  if b.type == "text" and b.text == "" then return nil end
  if b.type == "tool_use" and b.invalid_input ~= nil then
    local c = P.copy(b)
    c.invalid_input = nil
    return c
  end
  return b
end

-- Converted form of each canonical message, reused while the message keeps its role and content
-- (a loop resends its whole history every turn; messages are values once sent). The cache
-- marker of the last message is applied to a copy, never to a cached form.
local converted = setmetatable({}, { __mode = "k" })

local function convert_one(m)
  local msg = { role = m.role, content = m.content }
  if type(m.content) == "table" then
    local blocks = P.array()
    for _, b in ipairs(m.content) do
      local c = type(b) == "table" and clean_block(b)
      if c then blocks[#blocks + 1] = c end
    end
    msg.content = blocks
  end
  return msg
end

-- The previous conversion of each conversation (by its first message), for `P.convert_list`.
local chains = setmetatable({}, { __mode = "k" })

local function hit_of(m, i)
  if type(m) ~= "table" then
    error(sformat("llm_proto.anthropic: messages[%d] must be a table, got %s", i, type(m)), 0)
  end
  if m.role == "system" then return nil end -- extends the system prompt: converted in full
  local hit = converted[m]
  if not (hit and hit.content == m.content and hit.role == m.role) then
    hit = { content = m.content, role = m.role, msg = convert_one(m) }
    hit.out = { hit.msg }
    converted[m] = hit
  end
  return hit
end

-- The wire messages (the last one carrying the cache marker, on a copy), the system prompt, and
-- for the Port: the conversation's chain and how many wire messages are unchanged since its
-- previous conversion (`P.convert_list`).
local function convert_messages(messages, system, cache)
  local out, ch, stable = P.convert_list(chains, messages, false, {}, hit_of)
  local sys = system
  if not out then
    out = P.array()
    for i, m in ipairs(messages) do
      if type(m) ~= "table" then
        error(sformat("llm_proto.anthropic: messages[%d] must be a table, got %s", i, type(m)), 0)
      end
      if m.role == "system" then
        local text = P.content_text(m.content)
        sys = sys and (sys .. "\n\n" .. text) or text
      else
        out[#out + 1] = hit_of(m, i).msg
      end
    end
  end
  if ch then
    -- the last wire message of the previous call went with a marker: it is sent without now
    if ch.marked and stable >= ch.marked then stable = ch.marked - 1 end
    ch.marked = nil
  end
  if cache and out[#out] then
    local last = P.copy(out[#out])
    local marker = cache_marker(cache)
    if type(last.content) == "string" then
      if last.content ~= "" then
        last.content = P.array({ { type = "text", text = last.content, cache_control = marker } })
      end
    elseif #last.content > 0 then
      last.content = P.copy(last.content)
      local b = P.copy(last.content[#last.content])
      if b.type ~= "thinking" and b.type ~= "redacted_thinking" then
        b.cache_control = marker
        last.content[#last.content] = b
      end
    end
    out[#out] = last
    if ch then
      ch.marked = #out
      if stable >= #out then stable = #out - 1 end
    end
  end
  return out, sys, ch, stable
end

-- Converted tool lists by list identity and cache option (a loop offers the same list each turn).
local converted_tools = setmetatable({}, { __mode = "k" })

local convert_tools_uncached
local function convert_tools(tools, cache)
  if tools == nil or #tools == 0 then return nil end
  local key = type(cache) == "table" and cache or tostring(cache)
  local hit = converted_tools[tools]
  if hit and hit.key == key and hit.n == #tools then return hit.out end
  local out = convert_tools_uncached(tools, cache)
  converted_tools[tools] = { key = key, n = #tools, out = out }
  return out
end

function convert_tools_uncached(tools, cache)
  local out = P.array()
  for i, t in ipairs(tools) do
    if type(t) ~= "table" or type(t.name) ~= "string" then
      error(sformat("llm_proto.anthropic: tools[%d] must be a table with a string name", i), 0)
    end
    local d
    if t.type and t.type ~= "custom" then
      d = P.copy(t) -- a server tool (web_search, ...): passed as given
      d.group = nil
    else
      d = { name = t.name, description = t.description or "",
        input_schema = t.input_schema or { type = "object", properties = std.json.object() } }
    end
    out[i] = d
  end
  if cache then out[#out].cache_control = cache_marker(cache) end
  return out
end

--- Builds `{ body, betas, api_version?, chain?, stable? }` for the Messages API (`api_version`: see the header).
function A.build(req, profile, warn)
  local model = req.model or profile.model
  local max_tokens = req.max_tokens or profile.max_tokens
  if math.type(max_tokens) ~= "integer" or max_tokens < 1 then
    error(sformat("llm_proto.anthropic: max_tokens must be a positive integer, got %s", tostring(max_tokens)), 0)
  end
  if type(req.messages) ~= "table" or #req.messages == 0 then
    error("llm_proto.anthropic: messages must be a non-empty array", 0)
  end
  local cache = req.cache_control
  if cache == nil or cache == true then cache = { type = "ephemeral" } end
  if cache == false then cache = nil end
  local messages, system, chain, stable = convert_messages(req.messages, req.system, cache)
  local body = { model = model, max_tokens = max_tokens, messages = messages }
  local betas = P.array()
  if type(system) == "table" then
    -- text blocks given as they are; the cache marker goes on a copy of the last one
    local blocks = P.array()
    for i, b in ipairs(system) do
      if type(b) ~= "table" or b.type ~= "text" then
        error(sformat("llm_proto.anthropic: system[%d] must be a text block", i), 0)
      end
      blocks[i] = b
    end
    if cache and #blocks > 0 then
      blocks[#blocks] = P.copy(blocks[#blocks])
      blocks[#blocks].cache_control = cache_marker(cache)
    end
    if #blocks > 0 then body.system = blocks end
  elseif system ~= nil and system ~= "" then
    if type(system) ~= "string" then error("llm_proto.anthropic: system must be a string or text blocks", 0) end
    body.system = cache and P.array({ { type = "text", text = system, cache_control = cache_marker(cache) } }) or system
  end
  body.tools = convert_tools(req.tools, cache)

  -- thinking
  local th = P.thinking(req.thinking)
  local manual = false
  local output_config
  if th then
    if th.off then
      body.thinking = { type = "disabled" }
    elseif profile.capabilities.thinking == "adaptive" then
      body.thinking = { type = "adaptive" }
      local effort = th.effort or (th.budget_tokens and P.budget_effort(th.budget_tokens))
      if th.budget_tokens then
        warn(sformat("thinking.budget_tokens is not taken by %s (adaptive thinking); sent as effort '%s'", model, effort))
      end
      if effort then output_config = { effort = effort } end
    else
      local budget = th.budget_tokens
      if not budget then
        budget = P.EFFORT_BUDGET[th.effort or "medium"]
        if budget >= max_tokens then budget = max_tokens - 1 end
      end
      if budget < 1024 or budget >= max_tokens then
        error(sformat("llm_proto.anthropic: thinking budget %d does not fit: it must be at least 1024 and below max_tokens (%d)",
          budget, max_tokens), 0)
      end
      body.thinking = { type = "enabled", budget_tokens = budget }
      manual = true
    end
  end

  -- tool choice
  local tc = P.tool_choice(req.tool_choice)
  local no_parallel = req.parallel_tool_calls == false or (tc and tc.disable_parallel)
  if tc or no_parallel then
    tc = tc or { mode = "auto" }
    if manual and (tc.mode == "required" or tc.mode == "tool") then
      error("llm_proto.anthropic: forced tool use (tool_choice '" .. (tc.name or "required") ..
        "') cannot be combined with manual extended thinking (thinking.budget_tokens); use tool_choice = \"auto\"", 0)
    end
    if body.tools then
      local out = { type = tc.mode == "required" and "any" or tc.mode, name = tc.name }
      if no_parallel and tc.mode ~= "none" then out.disable_parallel_tool_use = true end
      body.tool_choice = out
    elseif tc.mode == "tool" or tc.mode == "required" then
      error("llm_proto.anthropic: tool_choice forces a tool but the request has no tools", 0)
    end
  end

  if req.stop ~= nil then body.stop_sequences = P.stop_list(req.stop) end
  if req.temperature ~= nil then
    if body.thinking and body.thinking.type ~= "disabled" then
      warn(sformat("temperature %s dropped: it is not taken while thinking is on", tostring(req.temperature)))
    elseif P.claude_fixed_temperature(model) and req.temperature ~= 1 then
      warn(sformat("temperature %s dropped: %s takes temperature 1 only", tostring(req.temperature), model))
    else
      body.temperature = req.temperature
    end
  end
  if req.top_p ~= nil then body.top_p = req.top_p end
  if req.top_k ~= nil then body.top_k = req.top_k end
  if req.seed ~= nil then warn("seed is not taken by the Anthropic API; dropped") end
  local api_version
  if body.temperature ~= nil or body.top_p ~= nil or body.top_k ~= nil then api_version = A.SAMPLING_API_VERSION end

  local rf = req.response_format
  if rf ~= nil then
    if type(rf) ~= "table" or rf.type ~= "json_schema" or type(rf.json_schema) ~= "table" then
      error("llm_proto.anthropic: response_format must be { type = \"json_schema\", json_schema = { schema = ... } } on Anthropic", 0)
    end
    output_config = output_config or {}
    output_config.format = { type = "json_schema", schema = rf.json_schema.schema or std.json.object() }
  end
  body.output_config = output_config

  local cm = req.context_management
  if cm ~= nil and cm ~= false then
    body.context_management = req.context_management_config or (type(cm) == "table" and cm) or A.default_context_management()
    betas[#betas + 1] = A.CONTEXT_MANAGEMENT_BETA
  end
  if type(req.extra_body) == "table" then
    for k, v in pairs(req.extra_body) do body[k] = v end
  end
  -- `chain`/`stable` (internal): the Port encodes only the wire messages past `stable` again
  return { body = body, betas = betas, api_version = api_version,
    chain = body.messages == messages and chain or nil, stable = stable }
end

--- Normalises a Messages API response body.
function A.normalize(body, warn)
  if type(body) ~= "table" then error("llm_proto.anthropic: response is not an object", 0) end
  if body.type == "error" then
    local e = body.error or {}
    error(sformat("llm_proto.anthropic: error response (%s): %s", tostring(e.type), tostring(e.message)), 0)
  end
  if type(body.content) ~= "table" then error("llm_proto.anthropic: response has no content array", 0) end
  local content = P.array()
  for _, b in ipairs(body.content) do
    if b.type == "text" then
      local thinking, text = P.split_think(b.text)
      if thinking then content[#content + 1] = { type = "thinking", thinking = thinking } end
      if text ~= "" or not thinking then
        local c = P.copy(b)
        c.text = text
        content[#content + 1] = c
      end
    elseif b.type == "tool_use" then
      content[#content + 1] = { type = "tool_use", id = b.id, name = b.name, input = b.input or std.json.object() }
    elseif b.type == "redacted_thinking" then
      -- one of the four block types every consumer knows; turned back on the next request
      content[#content + 1] = { type = "thinking", thinking = "", redacted_data = b.data }
    else
      content[#content + 1] = b
    end
  end
  local u = body.usage or {}
  local details = type(u.output_tokens_details) == "table" and u.output_tokens_details or {}
  return {
    id = body.id,
    model = body.model,
    content = content,
    stop_reason = body.stop_reason or "end_turn",
    stop_sequence = body.stop_sequence,
    context_management = body.context_management,
    usage = P.usage(u.input_tokens, u.output_tokens, u.cache_read_input_tokens,
      u.cache_creation_input_tokens, details.thinking_tokens),
  }
end

--- The module's pure, I/O-free helpers, for specs (`llm_proto.anthropic._test_helpers().clean_block(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function A._test_helpers()
  return {
    cache_marker = cache_marker,
    clean_block = clean_block,
    convert_one = convert_one,
    convert_messages = convert_messages,
    convert_tools = convert_tools,
  }
end

return A
