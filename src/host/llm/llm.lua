--- llm.*: one model call from a script, and the transport `llm_proto` reaches through.
--
-- Owns `llm.chat(messages, opts)` — a Port opened for the call (`opts.provider`: anthropic
-- (default) | openai | replay; every Port option and request field is accepted in `opts`),
-- returning the normalised response — and the internal module `llm_proto.transport` (host
-- functions: `send`, `base_url`, `read_replay`, `env`, `encode`, `release`, `chain_update`;
-- `handle(v)`: `v` encoded, as `{ id = n }`, released when the handle is collected; `chain()`: a
-- conversation's encoded messages kept on the host, as `{ id = n }`, likewise), preloaded so that a vendored
-- `llm_proto` keeps reaching the host's HTTP layer. The handle's finalizer is the host's, behind a
-- protected metatable: a script's own `__gc` never runs (src/lua/prelude.lua, "finalizers").
local R, H = ...
local type, error, sformat = type, error, string.format
local encode, release = H.llm_encode, H.llm_release

local HANDLE = { __gc = function(h) release(h.id) end, __metatable = false }

local transport = {
  send = H.llm_send,
  base_url = H.llm_base_url,
  read_replay = H.llm_read_replay,
  env = H.llm_env,
  encode = encode,
  release = release,
  handle = function(v) return R.setmetatable_gc({ id = encode(v) }, HANDLE) end,
  chain = function() return R.setmetatable_gc({ id = H.llm_chain_new() }, HANDLE) end,
  chain_update = H.llm_chain_update,
}
package.preload["llm_proto.transport"] = function() return transport end

llm = llm or {}

--- One model call. `messages` is a string (one user message) or a messages array.
function llm.chat(messages, opts)
  if type(messages) == "string" then
    messages = { { role = "user", content = messages } }
  elseif type(messages) ~= "table" then
    error(sformat("llm.chat: argument 1 (messages) must be a string or a table, got %s", type(messages)), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then
    error(sformat("llm.chat: argument 2 (opts) must be a table, got %s", type(opts)), 2)
  end
  opts = opts or {}
  local provider = opts.provider or "anthropic"
  local ports = require("llm_proto.port")
  local P = ports[provider]
  if not P then
    error(sformat("llm.chat: opts.provider must be anthropic, openai or replay, got %q", tostring(provider)), 2)
  end
  local o = {}
  for k, v in pairs(opts) do if k ~= "provider" then o[k] = v end end
  return P:open(o):chat({ messages = messages })
end
