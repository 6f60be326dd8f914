--- llm_proto.openai: canonical request → OpenAI chat-completions body, and back; one module for
-- every OpenAI-compatible server, varied by `profile.dialect` (openai | vllm | llamacpp | ollama).
--
-- Owns the OpenAI columns of the translation table:
-- - messages: the system prompt becomes the first `system` message; assistant blocks become
--   text plus `tool_calls` (thinking dropped); a user message with `tool_result` blocks becomes
--   one `tool` message per result (before any text the message also carried); images become
--   `image_url` parts;
-- - `max_tokens` → `max_completion_tokens` on reasoning models at api.openai.com, else
--   `max_tokens`; `tool_choice` ("required", `{ type = "function", function = { name } }`;
--   dropped with a warning on Ollama); `parallel_tool_calls` top-level, only with tools;
-- - `thinking`: `reasoning_effort` (openai, reasoning models only; `false` → "none" on gpt-5.1+),
--   `chat_template_kwargs.enable_thinking` (+ `reasoning_effort` for an effort) on vLLM and
--   llama.cpp, `reasoning_effort` only on Ollama; a budget is sent as the nearest effort;
-- - `stop`, `seed`, `top_p`, `response_format` forwarded; `top_k` forwarded except to
--   api.openai.com; `extra_body` merged last.
-- Refused: tools plus reasoning on gpt-5.6 and later. Dropped with a warning: `temperature` on
-- reasoning models, `top_k` on api.openai.com, the Anthropic-only `cache_control`,
-- `context_management`, `context_management_config`.
-- Back (`O.normalize`): the reasoning becomes ONE thinking block first, whether it came in
-- `reasoning_content` / `reasoning`, as `<think>` tags in the text, or both (the same thought
-- twice is kept once); then the text, then the tool calls.
local P = require("llm_proto")
local O = {}

local type, ipairs, pairs, error, sformat, concat = type, ipairs, pairs, error, string.format, table.concat
local one_thinking

-- Raw `arguments` text of tool_use blocks this module normalised, so the next request sends the
-- model's own text back instead of re-encoding (weak keys: the blocks own the lifetime).
local raw_args = setmetatable({}, { __mode = "k" })

local function is_public(profile)
  return type(profile.base_url) == "string" and profile.base_url:find("api.openai.com", 1, true) ~= nil
end

local function image_part(b)
  local src = b.source or {}
  local url = src.url
  if src.type == "base64" then url = "data:" .. tostring(src.media_type) .. ";base64," .. tostring(src.data) end
  return { type = "image_url", image_url = { url = url } }
end

local function result_text(content)
  if type(content) == "string" then return content end
  if content == nil then return "" end
  return P.content_text(content)
end

-- Converted form of each canonical message, reused while the message keeps its role and content
-- (a loop resends its whole history every turn; messages are values once sent).
local converted = setmetatable({}, { __mode = "k" })

local convert_one

-- The previous conversion of each conversation (by its first message), for `P.convert_list`.
local chains = setmetatable({}, { __mode = "k" })

local function hit_of(m, i)
  if type(m) ~= "table" then
    error(sformat("llm_proto.openai: messages[%d] must be a table, got %s", i, type(m)), 0)
  end
  local hit = converted[m]
  if not (hit and hit.content == m.content and hit.role == m.role) then
    hit = { content = m.content, role = m.role, out = convert_one(m) }
    converted[m] = hit
  end
  return hit
end

-- The wire messages, the conversation's chain and how many of them are unchanged since its
-- previous conversion (see `P.convert_list`).
local function convert_messages(messages, system)
  if type(system) == "table" then system = P.content_text(system) end
  if system == "" then system = nil end
  local lead = system ~= nil and { { role = "system", content = system } } or {}
  return P.convert_list(chains, messages, system or false, lead, hit_of)
end

function convert_one(m)
  local out = {}
  do
    local c = m.content
    if type(c) ~= "table" then
      out[#out + 1] = { role = m.role, content = c == nil and "" or c }
    elseif m.role == "assistant" then
      local texts, calls = {}, P.array()
      for _, b in ipairs(c) do
        if b.type == "text" then
          texts[#texts + 1] = b.text
        elseif b.type == "tool_use" then
          calls[#calls + 1] = { id = b.id, type = "function", ["function"] = {
            name = b.name,
            arguments = b.invalid_input or raw_args[b] or std.json.encode(b.input or std.json.object()),
          } }
        end
      end
      local msg = { role = "assistant" }
      local text = concat(texts, "\n")
      if #calls > 0 then
        msg.tool_calls = calls
        msg.content = text ~= "" and text or std.json.null
      else
        msg.content = text
      end
      out[#out + 1] = msg
    else
      local parts, has_image = P.array(), false
      for _, b in ipairs(c) do
        if b.type == "tool_result" then
          out[#out + 1] = { role = "tool", tool_call_id = b.tool_use_id, content = result_text(b.content) }
        elseif b.type == "text" then
          parts[#parts + 1] = { type = "text", text = b.text }
        elseif b.type == "image" then
          parts[#parts + 1] = image_part(b)
          has_image = true
        end
      end
      if #parts > 0 then
        if has_image then
          out[#out + 1] = { role = m.role, content = parts }
        else
          local texts = {}
          for k, p in ipairs(parts) do texts[k] = p.text end
          out[#out + 1] = { role = m.role, content = concat(texts, "\n") }
        end
      end
    end
  end
  return out
end

-- Converted tool lists by list identity (a loop offers the same list each turn).
local converted_tools = setmetatable({}, { __mode = "k" })

local convert_tools_uncached
local function convert_tools(tools)
  if tools == nil or #tools == 0 then return nil end
  local hit = converted_tools[tools]
  if hit and hit.n == #tools then return hit.out end
  local out = convert_tools_uncached(tools)
  converted_tools[tools] = { n = #tools, out = out }
  return out
end

function convert_tools_uncached(tools)
  local out = P.array()
  for i, t in ipairs(tools) do
    if type(t) ~= "table" or type(t.name) ~= "string" then
      error(sformat("llm_proto.openai: tools[%d] must be a table with a string name", i), 0)
    end
    out[i] = { type = "function", ["function"] = {
      name = t.name,
      description = t.description or "",
      parameters = t.input_schema or { type = "object", properties = std.json.object() },
    } }
  end
  return out
end

local ANTHROPIC_ONLY = { "cache_control", "context_management", "context_management_config" }

--- Builds `{ body }` for `/chat/completions`.
function O.build(req, profile, warn)
  local model = req.model or profile.model
  local dialect = profile.dialect or "openai"
  if type(req.messages) ~= "table" or #req.messages == 0 then
    error("llm_proto.openai: messages must be a non-empty array", 0)
  end
  local messages, chain, stable = convert_messages(req.messages, req.system)
  local body = { model = model, messages = messages }
  local reasoning = dialect == "openai" and P.is_reasoning_model(model)
  local max_tokens = req.max_tokens or profile.max_tokens
  if max_tokens ~= nil then
    if reasoning then body.max_completion_tokens = max_tokens else body.max_tokens = max_tokens end
  end
  body.tools = convert_tools(req.tools)

  local tc = P.tool_choice(req.tool_choice)
  if tc and not body.tools then
    if tc.mode == "tool" or tc.mode == "required" then
      error("llm_proto.openai: tool_choice forces a tool but the request has no tools", 0)
    end
    tc = nil -- the API takes tool_choice only together with tools
  end
  if tc then
    if dialect == "ollama" then
      warn("tool_choice is not taken by Ollama; dropped")
    elseif tc.mode == "tool" then
      body.tool_choice = { type = "function", ["function"] = { name = tc.name } }
    else
      body.tool_choice = tc.mode
    end
  end
  local parallel = req.parallel_tool_calls
  if parallel == nil and tc and tc.disable_parallel then parallel = false end
  if parallel ~= nil and body.tools then body.parallel_tool_calls = parallel end

  local th = P.thinking(req.thinking)
  if th then
    local effort = th.effort or (th.budget_tokens and P.budget_effort(th.budget_tokens))
      or (th.on and "medium") or nil
    if dialect == "openai" then
      if th.off then
        local major, minor = P.gpt_version(model)
        if reasoning and major and (major > 5 or (major == 5 and minor >= 1)) then
          body.reasoning_effort = "none"
        elseif reasoning then
          warn(sformat("thinking = false cannot be expressed for %s; reasoning stays at the model's default", model))
        end
      elseif not reasoning then
        warn(sformat("thinking is not taken by %s (not a reasoning model); dropped", model))
      else
        local major, minor = P.gpt_version(model)
        if body.tools and major and (major > 5 or (major == 5 and minor >= 6)) then
          error(sformat("llm_proto.openai: %s does not take tools together with reasoning (thinking); " ..
            "drop the tools or pass thinking = false", model), 0)
        end
        body.reasoning_effort = effort
      end
    elseif dialect == "ollama" then
      body.reasoning_effort = th.off and "none" or effort
    else -- vllm, llamacpp
      body.chat_template_kwargs = { enable_thinking = not th.off }
      if not th.off and (th.effort or th.budget_tokens) then body.reasoning_effort = effort end
    end
  end

  if req.stop ~= nil then body.stop = P.stop_list(req.stop) end
  if req.temperature ~= nil then
    if reasoning then
      warn(sformat("temperature is not taken by reasoning model %s; dropped", model))
    else
      body.temperature = req.temperature
    end
  end
  if req.top_p ~= nil then body.top_p = req.top_p end
  if req.top_k ~= nil then
    if is_public(profile) then warn("top_k is not taken by api.openai.com; dropped") else body.top_k = req.top_k end
  end
  if req.seed ~= nil then body.seed = req.seed end
  if req.response_format ~= nil then body.response_format = req.response_format end
  for i = 1, #ANTHROPIC_ONLY do
    local k = ANTHROPIC_ONLY[i]
    if req[k] ~= nil then warn(k .. " is Anthropic-only; ignored on the OpenAI path") end
  end
  if type(req.extra_body) == "table" then
    for k, v in pairs(req.extra_body) do body[k] = v end
  end
  -- `chain`/`stable` (internal): the Port encodes only the wire messages past `stable` again
  return { body = body, chain = body.messages == messages and chain or nil, stable = stable }
end

local STOP = { stop = "end_turn", tool_calls = "tool_use", function_call = "tool_use",
  length = "max_tokens", content_filter = "refusal" }

-- The one thinking text of a response that may carry it twice: in `reasoning_content` (or
-- `reasoning`) and as `<think>` tags in the text, as some servers send it. The same thought in
-- both (or one holding the other) is kept once, the longer; two different ones are joined.
function one_thinking(field, tagged)
  if tagged == nil then return field end
  if field == nil then return tagged end
  local f, t = field:match("^%s*(.-)%s*$"), tagged:match("^%s*(.-)%s*$")
  if t == "" or f:find(t, 1, true) then return field end
  if t:find(f, 1, true) then return tagged end
  return field .. "\n\n" .. tagged
end

--- Normalises a chat-completions response body.
function O.normalize(body, warn)
  if type(body) ~= "table" then error("llm_proto.openai: response is not an object", 0) end
  if body.error then
    local e = body.error
    error("llm_proto.openai: error response: " .. tostring(type(e) == "table" and e.message or e), 0)
  end
  local choice = type(body.choices) == "table" and body.choices[1]
  if not choice then error("llm_proto.openai: response has no choices", 0) end
  local msg = choice.message
  if type(msg) ~= "table" then error("llm_proto.openai: response choices[1] has no message", 0) end
  local content = P.array()
  local reasoning = msg.reasoning_content or msg.reasoning
  if type(reasoning) ~= "string" or reasoning == "" then reasoning = nil end
  local text = msg.content
  if type(text) == "table" then
    local parts = {}
    for _, p in ipairs(text) do
      if type(p) == "table" and type(p.text) == "string" then parts[#parts + 1] = p.text end
    end
    text = concat(parts)
  end
  local rest
  if type(text) == "string" and text ~= "" then
    local tagged
    tagged, rest = P.split_think(text)
    reasoning = one_thinking(reasoning, tagged)
  end
  if reasoning then content[#content + 1] = { type = "thinking", thinking = reasoning } end
  if rest and rest ~= "" then content[#content + 1] = { type = "text", text = rest } end
  local has_tools = false
  for _, tc in ipairs(msg.tool_calls or {}) do
    local fn = tc["function"] or {}
    local args = fn.arguments
    local block = { type = "tool_use", id = tc.id, name = fn.name }
    if type(fn.parsed_arguments) == "table" then
      -- parsed by the host transport (see transport.ts); the text is kept to send back as is
      block.input = fn.parsed_arguments
      if type(args) == "string" then raw_args[block] = args end
    elseif type(args) == "table" then
      block.input = args
    elseif args == nil or args == "" then
      block.input = std.json.object()
    else
      local ok, v = pcall(std.json.decode, args)
      if ok and type(v) == "table" then
        block.input = v
        raw_args[block] = args
      else
        block.input = std.json.object()
        block.invalid_input = args
        warn(sformat("tool call '%s' arguments are not a JSON object", tostring(fn.name)))
      end
    end
    content[#content + 1] = block
    has_tools = true
  end
  local fr = choice.finish_reason
  local stop = STOP[fr] or fr or "end_turn"
  if has_tools and stop == "end_turn" then stop = "tool_use" end
  local u = body.usage or {}
  local pd = type(u.prompt_tokens_details) == "table" and u.prompt_tokens_details or {}
  local cd = type(u.completion_tokens_details) == "table" and u.completion_tokens_details or {}
  local cached = tonumber(pd.cached_tokens) or 0
  return {
    id = body.id,
    model = body.model,
    content = content,
    stop_reason = stop,
    usage = P.usage((tonumber(u.prompt_tokens) or 0) - cached, u.completion_tokens, cached, 0, cd.reasoning_tokens),
  }
end

--- The module's pure, I/O-free helpers, for specs (`llm_proto.openai._test_helpers().image_part(...)`): a fresh table
-- each call, not part of the API (names and shapes may change with the code they test).
function O._test_helpers()
  return {
    is_public = is_public,
    image_part = image_part,
    result_text = result_text,
    convert_one = convert_one,
    convert_messages = convert_messages,
    convert_tools = convert_tools,
    one_thinking = one_thinking,
  }
end

return O
