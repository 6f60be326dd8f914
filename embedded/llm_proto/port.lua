--- llm_proto.port: the provider Ports — the only way a loop (agent.run, the kernel) talks to a model.
--
-- `require("llm_proto.port")` is `{ anthropic = P, openai = P, replay = P }`. `P:open(opts)`
-- returns a Port:
--
--   port.profile      { provider, model, dialect, base_url, max_tokens, context_window,
--                       max_output_tokens, capabilities = { tools, thinking, reasoning,
--                       parallel_tool_calls, response_format, cache_control, context_management },
--                       sampling = { temperature, top_p, top_k, seed, stop } | nil (the open-time
--                       defaults of those request fields, which a request's own override; the
--                       kernel records what a call asked with them) }
--   port:chat(request) → { content = { blocks }, stop_reason, usage, model, id }   (raises on failure)
--
-- `opts` (open) — where and how:
--   model (default env ANTHROPIC_MODEL / OPENAI_MODEL, else claude-haiku-4-5-20251001 /
--   gpt-4o-mini), api_key, api_key_env, base_url, dialect (openai|vllm|llamacpp|ollama; default
--   inferred from base_url), max_tokens (default 4096), timeout (seconds one attempt may take,
--   the whole answer included, streamed or not; default 120), max_response_bytes (largest answer
--   accepted; default env AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES, else 64 MiB), max_retries (default 2), prices (overrides of llm_proto.prices), replay (replay only), and any
--   request field below as a default for every call.
--
-- `request` (chat) — what to ask; every field overrides the open-time default:
--   messages     (required) array of { role = "user"|"assistant", content = string | { blocks } };
--                blocks: { type="text", text }, { type="tool_use", id, name, input },
--                { type="tool_result", tool_use_id, content = string, is_error? },
--                { type="thinking", thinking, signature? }, { type="image", source }
--   system       string
--   tools        array of { name, description, input_schema } (a `group` field is ignored)
--   tool_choice  "auto" | "none" | "required" | "any" | { type="function"|"tool", name }
--   max_tokens   integer
--   protocol options: parallel_tool_calls, thinking ({effort}|{budget_tokens}|true|false), stop,
--   response_format, temperature, top_p, top_k, seed, cache_control (Anthropic; default on),
--   context_management (Anthropic; true = the default edits) and context_management_config,
--   extra_body (merged into the wire body last)
--   transport: stream (bool), on_delta (function(delta); implies stream), timeout, max_retries,
--   max_response_bytes
--
-- The response's `usage` has the six fields of `llm_proto` plus `cost_usd` when the model has a
-- price. `delta` handed to `on_delta` is `{ type = "text", text } | { type = "thinking",
-- thinking } | { type = "tool_use", index, id?, name?, partial_json }`.
--
-- Replay (`replay:open({ replay = path })`, or env AGENT_BLOCK_REPLAY): a JSON Lines file, one
-- scripted response per line, in the normalised shape (`content` may be a plain string;
-- `usage`, `stop_reason` default sensibly). A line may carry `"expect"`, checked against the
-- request before answering: `model` (equal), `system_contains` (substring of the system
-- prompt), `tools` (names that must be offered), `no_tools` (true: none offered),
-- `last_message_contains` (substring of the last message's text or tool results),
-- `tool_choice` (equal after normalisation), `messages` (message count). A request is also
-- built with the Anthropic adapter (or `replay_as = "openai"`), so local refusals fire offline.
-- The file's cursor is shared by every Port on the same file in one run; past its last line
-- `chat` raises naming the file and the request number. Relative paths resolve against the
-- script's directory, then the project root.
--
-- Forcing replay: with `AGENT_BLOCK_FORCE_REPLAY` on in the run's environment (`1`, `true`, `yes`,
-- `on`), `anthropic:open` and `openai:open` open a replay Port instead (with the same options:
-- the block's `model` stays the scripted responses' default model), so a block that names its
-- provider runs offline too — what `lspec.run_block(path, { replay = ... })` sets.
local P = require("llm_proto")
local T = require("llm_proto.transport")

local type, pairs, ipairs, error, setmetatable, sformat = type, pairs, ipairs, error, setmetatable, string.format

local Port = {}
Port.__index = Port

-- The request with the open-time defaults behind it (read through __index, not copied).
local function merged(defaults, req)
  local r = {}
  for k, v in pairs(req) do r[k] = v end
  return setmetatable(r, { __index = defaults })
end

-- Cost of a response, with the price entry looked up once per model and price table.
local function cost(port, model, usage, prices)
  if port._price_model ~= model or port._price_table ~= prices then
    port._price_model, port._price_table = model, prices
    port._price = P.price_of(model, prices) or false
  end
  return port._price and P.cost_at(port._price, usage) or nil
end

local function check_request(req)
  if type(req) ~= "table" then error(sformat("port:chat: argument 1 (request) must be a table, got %s", type(req)), 3) end
  if type(req.messages) ~= "table" or #req.messages == 0 then
    error("port:chat: request field 'messages' must be a non-empty array", 3)
  end
end

local function warner(port)
  return function(msg)
    if not port._warned[msg] then
      port._warned[msg] = true
      log.warn("llm_proto: " .. msg)
    end
  end
end

local function open_opts(opts, who)
  if opts == nil then return {} end
  if type(opts) ~= "table" then error(sformat("%s:open: argument 1 (opts) must be a table, got %s", who, type(opts)), 3) end
  for _, k in ipairs({ "model", "api_key", "api_key_env", "base_url", "dialect" }) do
    if opts[k] ~= nil and type(opts[k]) ~= "string" then
      error(sformat("%s:open: field '%s' must be a string, got %s", who, k, type(opts[k])), 3)
    end
  end
  local d = opts.dialect
  if d ~= nil and d ~= "openai" and d ~= "vllm" and d ~= "llamacpp" and d ~= "ollama" then
    error(sformat("%s:open: field 'dialect' must be openai, vllm, llamacpp or ollama, got %q", who, d), 3)
  end
  if opts.max_tokens ~= nil and math.type(opts.max_tokens) ~= "integer" then
    error(sformat("%s:open: field 'max_tokens' must be an integer, got %s", who, type(opts.max_tokens)), 3)
  end
  return opts
end

-- The sampling fields given at open (a request's own win over them), or nil when none was.
local SAMPLING = { "temperature", "top_p", "top_k", "seed", "stop" }
local function sampling_of(opts)
  local out
  for _, k in ipairs(SAMPLING) do
    if opts[k] ~= nil then
      out = out or {}
      out[k] = opts[k]
    end
  end
  return out
end

local replay -- the replay provider (below), which the others hand over to when a run forces it

local FORCE_ON = { ["1"] = true, ["true"] = true, yes = true, on = true }
local FORCE_OFF = { ["0"] = true, ["false"] = true, no = true, off = true }
--- Whether the run forces the replay provider (`AGENT_BLOCK_FORCE_REPLAY`); a bad value raises.
local function replay_forced()
  local v = T.env("AGENT_BLOCK_FORCE_REPLAY")
  if v == nil then return false end
  local k = v:lower():match("^%s*(.-)%s*$")
  if k == "" or FORCE_OFF[k] then return false end
  if FORCE_ON[k] then return true end
  error(sformat("AGENT_BLOCK_FORCE_REPLAY must be 1, true, yes, on or 0, false, no, off; got %q", v), 0)
end

local function http_provider(wire, model_env, default_model)
  local prov = {}
  function prov:open(opts)
    if replay_forced() then return replay:open(opts) end
    opts = open_opts(opts, wire)
    local model = opts.model or T.env(model_env) or default_model
    local base_url = T.base_url({ provider = wire, base_url = opts.base_url })
    local dialect = wire == "openai" and (opts.dialect or P.dialect_of(base_url)) or nil
    local profile = P.profile(wire, model, { dialect = dialect, base_url = base_url, max_tokens = opts.max_tokens })
    profile.sampling = sampling_of(opts)
    local port = setmetatable({
      provider = wire,
      profile = profile,
      _defaults = opts,
      _warned = {},
    }, Port)
    port._warn = warner(port)
    return port
  end
  return prov
end

-- JSON text of each wire message, by identity: the adapters reuse a message's converted form
-- while it is unchanged, so a loop encodes each message once instead of on every turn. The text
-- stays on the host side (`T.handle` encodes it and answers `{ id }`, released when collected) and
-- the transport copies its bytes into the body (`raw_messages`; for a conversation the adapter
-- chains, `raw_chain`, below). The adapters reuse a tools list's
-- converted form per list table, so it is encoded once too (`raw_tools`): pass the same table
-- while the tools are the same, and treat messages and tool lists as values once sent.
local encoded = setmetatable({}, { __mode = "k" })
local function encode(v)
  return T.handle(v)
end

local function encode_messages(list)
  local out = {}
  for i = 1, #list do
    local m = list[i]
    local h = encoded[m]
    if not h then
      h = encode(m)
      encoded[m] = h
    end
    out[i] = h.id
  end
  return out
end

-- The host's copy of each conversation's encoded wire messages, by the adapter's chain
-- (`P.convert_list`): a turn hands the host only the messages past those unchanged since the
-- chain's previous request (`T.chain_update`, before the send), and the request names the chain.
-- So a turn's cost in this file and across the boundary is what it added, not the history.
local wires = setmetatable({}, { __mode = "k" })

local function encode_chain(chain, stable, sent)
  local w = wires[chain]
  if not w then
    w = { handle = T.chain(), n = 0 }
    wires[chain] = w
  end
  if stable > w.n then stable = w.n end
  local add = stable == 0 and sent or table.move(sent, stable + 1, #sent, 1, {})
  local ok, err = pcall(T.chain_update, w.handle.id, stable, add)
  if not ok then
    wires[chain] = nil -- the host's copy is not known to match: the next request starts a new one
    error(err, 0)
  end
  w.n = #sent
  return w
end

--- One model call; returns the normalised response, raises on failure.
function Port:chat(request)
  check_request(request)
  local req = merged(self._defaults, request)
  local warn = self._warn
  if self.provider == "replay" then return self:_replay(req, warn) end
  local profile = self.profile
  local built = P.build(self.provider, req, profile, warn)
  local on_delta = req.on_delta
  if on_delta ~= nil and type(on_delta) ~= "function" then
    error(sformat("port:chat: field 'on_delta' must be a function, got %s", type(on_delta)), 2)
  end
  local wire = built.body
  local sent = wire.messages -- kept alive (and its texts with it) until the request is done
  local raw, chain
  if built.chain then
    chain = encode_chain(built.chain, built.stable, sent) -- kept alive (its host copy with it) likewise
  else
    raw = encode_messages(sent)
  end
  wire.messages = nil
  local raw_tools
  if wire.tools then
    local h = encoded[wire.tools]
    if not h then
      h = encode(wire.tools)
      encoded[wire.tools] = h
    end
    raw_tools, wire.tools = h.id, nil
  end
  local ok, body = pcall(T.send, {
    provider = self.provider,
    base_url = req.base_url,
    api_key = req.api_key,
    api_key_env = req.api_key_env,
    betas = built.betas,
    api_version = built.api_version,
    body = wire,
    raw_messages = raw,
    raw_chain = chain and chain.handle.id,
    raw_tools = raw_tools,
    timeout = req.timeout,
    max_response_bytes = req.max_response_bytes,
    max_retries = req.max_retries,
    stream = req.stream == true or on_delta ~= nil,
  }, on_delta)
  sent, chain = nil, nil
  if not ok then
    -- the transport's message names provider, status and cause; the position inside this file does
    -- not help. A failed request is an error table ({ message, provider, status, retryable,
    -- retry_after_ms? }, `tostring` gives the message): raised on with its fields, message trimmed.
    if type(body) == "string" then error((body:gsub("^[^\n]-:%d+: (llm: )", "%1")), 0) end
    if type(body) == "table" and type(body.message) == "string" then
      body.message = body.message:gsub("^[^\n]-:%d+: (llm: )", "%1")
    end
    error(body, 0)
  end
  local resp = P.normalize(self.provider, body, warn)
  resp.usage.cost_usd = cost(self, resp.model or profile.model, resp.usage, req.prices)
  return resp
end

-- replay --------------------------------------------------------------------------------------

local cursors = {} -- absolute path -> next line index, shared within one run

local function load_script(path)
  local text, abs = T.read_replay(path)
  local entries = {}
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if line:match("%S") then
      local ok, v = pcall(std.json.decode, line)
      if not ok or type(v) ~= "table" then
        error(sformat("replay: %s:%d is not a JSON object: %s", abs, n, tostring(v)), 0)
      end
      entries[#entries + 1] = { line = n, value = v }
    end
  end
  return entries, abs
end

local function fail_expect(port, entry, what)
  error(sformat("replay: %s:%d: request #%d does not match the script: %s",
    port._path, entry.line, port._served, what), 0)
end

local function check_expect(port, entry, req)
  local e = entry.value.expect
  if e == nil then return end
  if e.model ~= nil and (req.model or port.profile.model) ~= e.model then
    fail_expect(port, entry, sformat("expected model %q, got %q", e.model, tostring(req.model or port.profile.model)))
  end
  if e.system_contains ~= nil and not (req.system or ""):find(e.system_contains, 1, true) then
    fail_expect(port, entry, sformat("expected the system prompt to contain %q", e.system_contains))
  end
  local offered = {}
  for _, t in ipairs(req.tools or {}) do offered[t.name] = true end
  for _, name in ipairs(e.tools or {}) do
    if not offered[name] then fail_expect(port, entry, sformat("expected tool %q to be offered", name)) end
  end
  if e.no_tools and next(offered) then fail_expect(port, entry, "expected no tools to be offered") end
  if e.last_message_contains ~= nil then
    local last = req.messages[#req.messages]
    local text = P.content_text(last and last.content)
    if not text:find(e.last_message_contains, 1, true) then
      fail_expect(port, entry, sformat("expected the last message to contain %q, got %q", e.last_message_contains, text))
    end
  end
  if e.messages ~= nil and #req.messages ~= e.messages then
    fail_expect(port, entry, sformat("expected %d messages, got %d", e.messages, #req.messages))
  end
  if e.tool_choice ~= nil then
    local want, got = P.tool_choice(e.tool_choice), P.tool_choice(req.tool_choice) or {}
    if want.mode ~= got.mode or want.name ~= got.name then
      fail_expect(port, entry, sformat("expected tool_choice %s", std.json.encode(e.tool_choice)))
    end
  end
end

local function scripted_response(port, v)
  local r = v.response or v
  local content = r.content
  if type(content) == "string" then content = { { type = "text", text = content } } end
  if type(content) ~= "table" then error(sformat("replay: %s: a scripted response needs 'content'", port._path), 0) end
  local blocks, has_tool = P.array(), false
  for i, b in ipairs(content) do
    local c = P.copy(b)
    if c.type == "tool_use" then
      has_tool = true
      c.id = c.id or sformat("toolu_replay_%d_%d", port._served, i)
      c.input = c.input or std.json.object()
    end
    blocks[i] = c
  end
  local u = r.usage or {}
  local usage = P.usage(u.input_tokens, u.output_tokens, u.cache_read_input_tokens,
    u.cache_creation_input_tokens, u.thinking_tokens)
  return {
    id = r.id or sformat("msg_replay_%d", port._served),
    model = r.model or port.profile.model,
    content = blocks,
    stop_reason = r.stop_reason or (has_tool and "tool_use" or "end_turn"),
    usage = usage,
  }
end

function Port:_replay(req, warn)
  local wire = req.replay_as or "anthropic"
  P.build(wire, req, P.profile(wire, req.model or self.profile.model, { dialect = "openai" }), warn)
  local i = cursors[self._path] or 1
  local entry = self._entries[i]
  self._served = i
  if not entry then
    error(sformat("replay: %s ran out: it scripts %d responses and request #%d has none",
      self._path, #self._entries, i), 0)
  end
  cursors[self._path] = i + 1
  check_expect(self, entry, req)
  local resp = scripted_response(self, entry.value)
  if type(req.on_delta) == "function" then
    for _, b in ipairs(resp.content) do
      if b.type == "text" then req.on_delta({ type = "text", index = 0, text = b.text })
      elseif b.type == "thinking" then req.on_delta({ type = "thinking", index = 0, thinking = b.thinking }) end
    end
  end
  resp.usage.cost_usd = cost(self, resp.model, resp.usage, req.prices)
  return resp
end

replay = {}
function replay:open(opts)
  opts = open_opts(opts, "replay")
  local path = opts.replay or T.env("AGENT_BLOCK_REPLAY")
  if type(path) ~= "string" or path == "" then
    error("replay:open: no script: pass opts.replay = <file.jsonl> or set AGENT_BLOCK_REPLAY", 2)
  end
  local entries, abs = load_script(path)
  local model = opts.model or "replay"
  local profile = P.profile("anthropic", model, { max_tokens = opts.max_tokens })
  profile.provider, profile.dialect = "replay", "replay"
  profile.sampling = sampling_of(opts)
  local port = setmetatable({
    provider = "replay",
    profile = profile,
    _defaults = opts,
    _warned = {},
    _entries = entries,
    _path = abs,
    _served = 0,
  }, Port)
  port._warn = warner(port)
  return port
end

--- The module's pure, I/O-free helpers, for specs (`require("llm_proto.port")._test_helpers().merged(...)`):
-- a fresh table each call, not part of the API (names and shapes may change with the code they test).
local function test_helpers()
  return {
    merged = merged,
    check_request = check_request,
    open_opts = open_opts,
    check_expect = check_expect,
    scripted_response = scripted_response,
  }
end

return {
  anthropic = http_provider("anthropic", "ANTHROPIC_MODEL", "claude-haiku-4-5-20251001"),
  openai = http_provider("openai", "OPENAI_MODEL", "gpt-4o-mini"),
  replay = replay,
  _test_helpers = test_helpers,
}
