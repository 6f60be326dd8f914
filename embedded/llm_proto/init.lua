--- llm_proto: the one request vocabulary for every model provider, and the one response shape.
--
-- Owns what is pure about talking to a model — no I/O happens here:
-- - the option vocabulary (OpenAI's names: `tool_choice`, `parallel_tool_calls`, `thinking`,
--   `stop`, `max_tokens`, `response_format`, `temperature`, `top_p`, `top_k`, `seed`,
--   `cache_control`, `dialect`), translated per provider by `llm_proto.anthropic` and
--   `llm_proto.openai` (`M.build`);
-- - what is known about models (`M.claude_version`, `M.is_reasoning_model`, `M.profile`):
--   limits and capabilities a Port declares and the kernel reuses;
-- - the normalised response (`M.normalize`): `{ content = { blocks }, stop_reason, usage, model,
--   id }` where blocks are `text`, `tool_use` (`id`, `name`, `input`) and `thinking`, whatever
--   the server sent (Anthropic thinking blocks, `reasoning_content`, `reasoning`, `<think>` tags);
--   `usage` always has the six fields `input_tokens` (not served from cache), `output_tokens`
--   (thinking included), `total_tokens` (everything processed: input + cache reads + cache
--   writes + output, which equals OpenAI's `total_tokens`), `cache_read_input_tokens`,
--   `cache_creation_input_tokens`, `thinking_tokens`;
-- - the price table and cost of a usage (`M.prices`, `M.cost`);
-- - a conversation converted turn after turn at the cost of what the turn added
--   (`M.convert_list`, and `M.extends`, by which knl says what a list shares with the last).
--
-- Invariants: a combination the provider would reject is refused here with an error that names
-- the options (`error(msg, 0)`, before any request); a value a model cannot take is dropped
-- through the `warn` callback the caller passes, never silently; building never mutates the
-- caller's request or messages.
--
-- Canonical messages are Anthropic-shaped: `{ role = "user"|"assistant", content = string |
-- { blocks } }` with `text`, `image`, `tool_use`, `tool_result`, `thinking` blocks.
local M = {}

local type, pairs, ipairs, tostring, tonumber, error = type, pairs, ipairs, tostring, tonumber, error
local sformat, concat = string.format, table.concat

--- Shallow copy.
function M.copy(t)
  local o = {}
  for k, v in pairs(t or {}) do o[k] = v end
  return setmetatable(o, getmetatable(t))
end

--- A JSON array (encodes as `[]` when empty).
function M.array(t) return std.json.array(t or {}) end

-- models -------------------------------------------------------------------------------------

--- Parses a Claude model id: returns family ("opus"|"sonnet"|"haiku"), major, minor, or nil.
-- Both `claude-opus-4-1-20250805` and `claude-3-7-sonnet-20250219` spellings are understood;
-- an 8-digit date or `latest` is not a version part.
function M.claude_version(model)
  if type(model) ~= "string" or not model:find("claude", 1, true) then return nil end
  local family, nums = nil, {}
  for tok in model:gmatch("[^%-%.@/]+") do
    if tok == "opus" or tok == "sonnet" or tok == "haiku" then
      family = tok
    elseif tok:match("^%d%d?$") and #nums < 2 then
      nums[#nums + 1] = tonumber(tok)
    end
  end
  if not family or not nums[1] then return nil end
  return family, nums[1], nums[2] or 0
end

local function claude_at_least(model, major, minor)
  local _, a, b = M.claude_version(model)
  if not a then return false end
  return a > major or (a == major and b >= minor)
end

--- True for Claude models with adaptive thinking and `output_config.effort` (4.6 and later).
function M.claude_adaptive(model) return claude_at_least(model, 4, 6) end

--- True for Claude models past Opus 4.6, which take `temperature = 1` only.
function M.claude_fixed_temperature(model) return claude_at_least(model, 4, 7) end

--- gpt-N.M version of an OpenAI model id, or nil.
function M.gpt_version(model)
  if type(model) ~= "string" then return nil end
  local a, b = model:match("gpt%-(%d+)%.(%d+)")
  if a then return tonumber(a), tonumber(b) end
  a = model:match("gpt%-(%d+)")
  if a then return tonumber(a), 0 end
  return nil
end

--- True for OpenAI reasoning models (o-series, gpt-5 and later): `max_completion_tokens`,
-- `reasoning_effort`, no `temperature`.
local reasoning_memo = {} -- model id -> boolean (a loop asks for the same model every turn)
function M.is_reasoning_model(model)
  if type(model) ~= "string" then return false end
  local hit = reasoning_memo[model]
  if hit ~= nil then return hit end
  local m = model:match("[^/]+$")
  local major = M.gpt_version(m)
  local r = m:match("^o%d") ~= nil or (major ~= nil and major >= 5 and not m:find("chat", 1, true))
  reasoning_memo[model] = r
  return r
end

--- The dialect an OpenAI-compatible base URL implies: openai | vllm | llamacpp | ollama.
function M.dialect_of(base_url)
  local u = (base_url or ""):lower()
  if u:find("api.openai.com", 1, true) then return "openai" end
  if u:find("ollama", 1, true) or u:find(":11434", 1, true) then return "ollama" end
  if u:find("llama", 1, true) or u:find(":8080", 1, true) then return "llamacpp" end
  if u:find("vllm", 1, true) or u:find(":8000", 1, true) then return "vllm" end
  return "openai"
end

-- Known limits, by longest model-id prefix: context window, largest output.
M.limits = {
  ["claude-opus-4-7"] = { 1000000, 128000 }, ["claude-opus-4-6"] = { 1000000, 128000 },
  ["claude-sonnet-4-6"] = { 1000000, 64000 }, ["claude-opus-4-5"] = { 200000, 64000 },
  ["claude-sonnet-4-5"] = { 200000, 64000 }, ["claude-haiku-4-5"] = { 200000, 64000 },
  ["claude-opus-4-1"] = { 200000, 32000 }, ["claude-opus-4"] = { 200000, 32000 },
  ["claude-sonnet-4"] = { 200000, 64000 }, ["claude-3-7-sonnet"] = { 200000, 64000 },
  ["claude-3-5-haiku"] = { 200000, 8192 }, ["claude"] = { 200000, 8192 },
  ["gpt-5"] = { 400000, 128000 }, ["gpt-4.1"] = { 1047576, 32768 }, ["gpt-4o"] = { 128000, 16384 },
  ["o3"] = { 200000, 100000 }, ["o4-mini"] = { 200000, 100000 }, ["o1"] = { 200000, 100000 },
}

local function by_prefix(tbl, model)
  if type(model) ~= "string" then return nil end
  local m = model:match("[^/]+$")
  local best, bestlen = nil, 0
  for k, v in pairs(tbl) do
    if #k > bestlen and m:find(k, 1, true) == 1 then best, bestlen = v, #k end
  end
  return best
end

--- The profile a Port declares: `{ provider, model, dialect, base_url, max_tokens,
-- context_window, max_output_tokens, capabilities = { tools, thinking, parallel_tool_calls,
-- response_format, cache_control, context_management, reasoning } }`. `thinking` is
-- "adaptive" | "budget" | "effort" | "template" | false.
function M.profile(provider, model, o)
  o = o or {}
  local lim = by_prefix(M.limits, model)
  local caps = { tools = true, parallel_tool_calls = true, response_format = true }
  local dialect = o.dialect
  if provider == "anthropic" then
    dialect = "anthropic"
    caps.cache_control, caps.context_management = true, true
    caps.thinking = M.claude_adaptive(model) and "adaptive" or "budget"
    caps.reasoning = true
  else
    caps.cache_control, caps.context_management = false, false
    if dialect == "openai" then
      caps.reasoning = M.is_reasoning_model(model)
      caps.thinking = caps.reasoning and "effort" or false
    elseif dialect == "ollama" then
      caps.thinking, caps.reasoning = "effort", true
    else
      caps.thinking, caps.reasoning = "template", true
    end
  end
  return {
    provider = provider,
    model = model,
    dialect = dialect,
    base_url = o.base_url,
    max_tokens = o.max_tokens or 4096,
    context_window = lim and lim[1] or nil,
    max_output_tokens = lim and lim[2] or nil,
    capabilities = caps,
  }
end

-- options -------------------------------------------------------------------------------------

local function opt_error(field, expected, v)
  error(sformat("llm_proto: option '%s' must be %s, got %s", field, expected,
    type(v) == "string" and sformat("%q", v) or type(v)), 0)
end

--- Canonical tool choice: nil | { mode = "auto"|"none"|"required"|"tool", name = ? }.
-- Accepts OpenAI ("auto", "none", "required", { type = "function", name | function.name }) and
-- Anthropic ("any", { type = "auto"|"any"|"none"|"tool", name }) spellings.
function M.tool_choice(tc)
  if tc == nil then return nil end
  if type(tc) == "string" then
    if tc == "auto" or tc == "none" then return { mode = tc } end
    if tc == "required" or tc == "any" then return { mode = "required" } end
    opt_error("tool_choice", '"auto", "none", "required", "any" or a table', tc)
  end
  if type(tc) ~= "table" then opt_error("tool_choice", "a string or a table", tc) end
  local t = tc.type
  if t == "function" or t == "tool" then
    local name = tc.name or (type(tc["function"]) == "table" and tc["function"].name)
    if type(name) ~= "string" or name == "" then opt_error("tool_choice.name", "a tool name", name) end
    return { mode = "tool", name = name, disable_parallel = tc.disable_parallel_tool_use }
  end
  if t == "auto" or t == "none" then return { mode = t, disable_parallel = tc.disable_parallel_tool_use } end
  if t == "any" or t == "required" then return { mode = "required", disable_parallel = tc.disable_parallel_tool_use } end
  opt_error("tool_choice.type", '"function", "tool", "auto", "any" or "none"', t)
end

M.EFFORTS = { minimal = true, low = true, medium = true, high = true, xhigh = true, max = true, none = true }
-- Effort → manual thinking budget on Claude models that take budgets only.
M.EFFORT_BUDGET = { minimal = 1024, low = 2048, medium = 8192, high = 16384, xhigh = 24576, max = 32000 }

--- Canonical thinking: nil | { off = true } | { effort = s } | { budget_tokens = n } | { on = true }.
function M.thinking(t)
  if t == nil then return nil end
  if t == false then return { off = true } end
  if t == true then return { on = true } end
  if type(t) ~= "table" then opt_error("thinking", "a table, true or false", t) end
  if t.budget_tokens ~= nil then
    if math.type(t.budget_tokens) ~= "integer" then opt_error("thinking.budget_tokens", "an integer", t.budget_tokens) end
    return { budget_tokens = t.budget_tokens }
  end
  if t.effort ~= nil then
    if not M.EFFORTS[t.effort] then
      opt_error("thinking.effort", "minimal, low, medium, high, xhigh, max or none", t.effort)
    end
    if t.effort == "none" then return { off = true } end
    return { effort = t.effort }
  end
  opt_error("thinking", "{ effort = ... } or { budget_tokens = ... }", t)
end

--- Effort level closest to a token budget (for providers that take efforts only).
function M.budget_effort(n)
  if n <= 2048 then return "low" elseif n <= 12000 then return "medium" end
  return "high"
end

--- `stop` as an array of strings.
function M.stop_list(stop)
  if stop == nil then return nil end
  if type(stop) == "string" then return M.array({ stop }) end
  if type(stop) ~= "table" then opt_error("stop", "a string or an array of strings", stop) end
  local out = M.array()
  for i, s in ipairs(stop) do
    if type(s) ~= "string" then opt_error("stop[" .. i .. "]", "a string", s) end
    out[i] = s
  end
  return out
end

-- responses -----------------------------------------------------------------------------------

--- Splits reasoning out of text that carries `<think>…</think>` (or only the closing tag, when
-- the template opened it). Returns thinking (or nil) and the remaining text.
function M.split_think(text)
  if type(text) ~= "string" then return nil, text end
  local s, e = text:find("^%s*<think>")
  if s then
    local cs, ce = text:find("</think>", e + 1, true)
    if not cs then return text:sub(e + 1), "" end
    return text:sub(e + 1, cs - 1), (text:sub(ce + 1):gsub("^%s+", ""))
  end
  local cs, ce = text:find("</think>", 1, true)
  if cs and not text:sub(1, cs - 1):find("<think>", 1, true) then
    return text:sub(1, cs - 1), (text:sub(ce + 1):gsub("^%s+", ""))
  end
  return nil, text
end

local math_type = math.type
local function int(v)
  if math_type(v) == "integer" then return v end
  v = tonumber(v)
  if not v then return 0 end
  return math.tointeger(v) or math.floor(v)
end

--- The six-field usage table.
function M.usage(input, output, cache_read, cache_creation, thinking)
  input, output, cache_read, cache_creation = int(input), int(output), int(cache_read), int(cache_creation)
  return {
    input_tokens = input,
    output_tokens = output,
    cache_read_input_tokens = cache_read,
    cache_creation_input_tokens = cache_creation,
    thinking_tokens = int(thinking),
    total_tokens = input + output + cache_read + cache_creation,
  }
end

--- Adds usage `u` into accumulator `acc` (both six-field; `cost_usd` summed when present).
local USAGE_KEYS = { "input_tokens", "output_tokens", "cache_read_input_tokens",
  "cache_creation_input_tokens", "thinking_tokens", "total_tokens" }
function M.add_usage(acc, u)
  for i = 1, #USAGE_KEYS do
    local k = USAGE_KEYS[i]
    acc[k] = (acc[k] or 0) + (u and u[k] or 0)
  end
  if u and u.cost_usd then acc.cost_usd = (acc.cost_usd or 0) + u.cost_usd end
  return acc
end

-- prices --------------------------------------------------------------------------------------

--- USD per million tokens, by longest model-id prefix: `{ input, output, cache_read,
-- cache_write }`. List prices as published in 2026; edit this table (or pass `prices` to a Port
-- or to agent.run, merged over it) when yours differ.
M.prices = {
  ["claude-opus-4-7"] = { input = 5, output = 25, cache_read = 0.5, cache_write = 6.25 },
  ["claude-opus-4-6"] = { input = 5, output = 25, cache_read = 0.5, cache_write = 6.25 },
  ["claude-opus-4-5"] = { input = 5, output = 25, cache_read = 0.5, cache_write = 6.25 },
  ["claude-opus-4"] = { input = 15, output = 75, cache_read = 1.5, cache_write = 18.75 },
  ["claude-sonnet-4"] = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 },
  ["claude-3-7-sonnet"] = { input = 3, output = 15, cache_read = 0.3, cache_write = 3.75 },
  ["claude-haiku-4-5"] = { input = 1, output = 5, cache_read = 0.1, cache_write = 1.25 },
  ["claude-3-5-haiku"] = { input = 0.8, output = 4, cache_read = 0.08, cache_write = 1 },
  ["gpt-5-nano"] = { input = 0.05, output = 0.4, cache_read = 0.005 },
  ["gpt-5-mini"] = { input = 0.25, output = 2, cache_read = 0.025 },
  ["gpt-5"] = { input = 1.25, output = 10, cache_read = 0.125 },
  ["gpt-4.1-nano"] = { input = 0.1, output = 0.4, cache_read = 0.025 },
  ["gpt-4.1-mini"] = { input = 0.4, output = 1.6, cache_read = 0.1 },
  ["gpt-4.1"] = { input = 2, output = 8, cache_read = 0.5 },
  ["gpt-4o-mini"] = { input = 0.15, output = 0.6, cache_read = 0.075 },
  ["gpt-4o"] = { input = 2.5, output = 10, cache_read = 1.25 },
  ["o4-mini"] = { input = 1.1, output = 4.4, cache_read = 0.275 },
  ["o3"] = { input = 2, output = 8, cache_read = 0.5 },
}

--- The price entry of `model`: `overrides` (exact id or prefix) first, then `M.prices`.
function M.price_of(model, overrides)
  if overrides then
    if overrides[model] then return overrides[model] end
    local p = by_prefix(overrides, model)
    if p then return p end
  end
  return by_prefix(M.prices, model)
end

--- Cost in USD of a six-field usage at price entry `p`.
function M.cost_at(p, usage)
  local cr = p.cache_read or p.input
  local cw = p.cache_write or p.input
  return (usage.input_tokens * p.input + usage.output_tokens * p.output
    + usage.cache_read_input_tokens * cr + usage.cache_creation_input_tokens * cw) / 1e6
end

--- Cost in USD of a six-field usage, or nil when the model has no price.
function M.cost(model, usage, overrides)
  local p = M.price_of(model, overrides)
  if not p or not usage then return nil end
  return M.cost_at(p, usage)
end

-- dispatch ------------------------------------------------------------------------------------

local adapters = {}
local function adapter(provider)
  if provider ~= "anthropic" and provider ~= "openai" then
    error(sformat("llm_proto: unknown provider %q (anthropic or openai)", tostring(provider)), 0)
  end
  adapters[provider] = adapters[provider] or require("llm_proto." .. provider)
  return adapters[provider]
end

--- Builds the wire request for `provider` from a canonical request: returns `{ body, betas }`
-- (and Anthropic's `api_version` when the request needs another than the default).
-- `warn(msg)` receives dropped options.
function M.build(provider, req, profile, warn)
  return adapter(provider).build(req, profile, warn or function() end)
end

--- Normalises a provider's response body (streamed or not) to the shared shape.
function M.normalize(provider, body, warn)
  return adapter(provider).normalize(body, warn or function() end)
end

-- conversations, turn after turn ---------------------------------------------------------------

local unpack, COPY_VIA_STACK = table.unpack, 4000

-- Lists known to start with the messages of an earlier list: list -> { base, k }. One level only
-- (declaring a list's successor forgets the list's own base), so no chain of lists is kept.
local lineage = setmetatable({}, { __mode = "k" })

--- Declares that the first `k` messages of `list` are the first `k` of `base`, the same tables,
-- unchanged (knl's `Session:messages` says so of each copy it hands out). `convert_list` then
-- trusts it instead of comparing the two.
function M.extends(list, base, k)
  lineage[base] = nil
  lineage[list] = { base, k }
end

--- Converts a conversation's messages to wire messages, reusing the previous conversion of the
-- same conversation for its unchanged leading messages: a loop resends its whole history every
-- turn, and only what the turn added is converted. `chains` is the caller's weak-keyed table
-- (first message -> chain); `tag` is what else the wire list depends on (a change starts the
-- chain anew); `lead` the wire messages that come first (e.g. the system prompt); `convert(m)`
-- answers `{ content = m.content, role = m.role, out = { wire messages } }` for a message, or
-- nil to refuse the chain (the caller then converts the list in full).
--
-- The unchanged leading messages are those `extends` declared for this list, when the chain last
-- converted its base; otherwise a leading message counts as unchanged while it is the same table
-- with the same `content` and `role` as the last time (messages are values once sent; replacing a
-- field is seen, editing a content table in place is not). Returns a fresh array of the wire messages, the chain (its
-- `out` array holds them, owned by the chain, and `on` their number) and how many of them, from
-- the start, are the very tables the chain's previous conversion gave (`stable`); nil when
-- `convert` refused. The cost of a call is the new messages' conversion plus a copy of references
-- (and, without `extends`, a walk comparing them).
function M.convert_list(chains, messages, tag, lead, convert)
  local n = #messages
  local first = messages[1]
  local k = 0
  -- a list declared to extend the one the chain converted last: its prefix is known, not compared
  local lin = lineage[messages]
  local ch = lin and chains[lin[1]]
  local known = ch and ch.tag == tag and ch.list == lin[1]
  if known then
    k = lin[2]
    if k > ch.n then k = ch.n end
    if k > n then k = n end
  else
    ch = type(first) == "table" and chains[first] or nil
    if ch and ch.tag ~= tag then ch = nil end
  end
  if ch and not known then
    local src, hits = ch.src, ch.hits
    local lim = n < ch.n and n or ch.n
    while k < lim do
      local m, h = messages[k + 1], hits[k + 1]
      if m ~= src[k + 1] or h.content ~= m.content or h.role ~= m.role then break end
      k = k + 1
    end
  elseif not ch then
    ch = { tag = tag, src = {}, hits = {}, ends = {}, out = {}, n = 0, on = #lead, lead = #lead }
    for i = 1, #lead do ch.out[i] = lead[i] end
    if type(first) == "table" then chains[first] = ch end
  end
  local src, hits, ends, out = ch.src, ch.hits, ch.ends, ch.out
  local on = k > 0 and ends[k] or ch.lead
  local stable = on
  -- what is past the prefix is rewritten below: a conversion that raises leaves a chain whose
  -- first `ch.n` messages are still exactly what `out` holds for them
  local top, otop = ch.n, ch.on
  ch.n, ch.on = k, on
  for i = k + 1, n do
    local m = messages[i]
    local h = convert(m, i)
    if h == nil then
      if chains[first] == ch then chains[first] = nil end
      return nil
    end
    src[i], hits[i] = m, h
    local o = h.out
    for j = 1, #o do out[on + j] = o[j] end
    on = on + #o
    ends[i] = on
    ch.n, ch.on = i, on
  end
  if top < (ch.top or 0) then top = ch.top end
  if otop < (ch.otop or 0) then otop = ch.otop end
  for i = n + 1, top do src[i], hits[i], ends[i] = nil, nil, nil end
  for i = on + 1, otop do out[i] = nil end
  ch.top, ch.otop = n, on
  if ch.list ~= nil and ch.list ~= messages then chains[ch.list] = nil end
  ch.list = messages
  chains[messages] = ch
  local list = on <= COPY_VIA_STACK and { unpack(out, 1, on) } or table.move(out, 1, on, 1, {})
  return M.array(list), ch, stable
end

--- Text of a canonical message content (string, or the text of its text / tool_result blocks).
function M.content_text(content)
  if type(content) == "string" then return content end
  if type(content) ~= "table" then return "" end
  local parts = {}
  for _, b in ipairs(content) do
    if type(b) == "table" then
      if b.type == "text" and type(b.text) == "string" then
        parts[#parts + 1] = b.text
      elseif b.type == "tool_result" then
        parts[#parts + 1] = M.content_text(b.content)
      end
    end
  end
  return concat(parts, "\n")
end

--- The module's pure, I/O-free helpers, for specs (`llm_proto._test_helpers().by_prefix(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function M._test_helpers()
  return {
    claude_at_least = claude_at_least,
    by_prefix = by_prefix,
    opt_error = opt_error,
    int = int,
  }
end

return M
