--- A test double of a provider Port for the kernel's specs: answers from a script of responses
-- (tables in knl_types.Response shape, functions of the request, or `{ error = msg }` to raise),
-- records every request it was sent, and counts calls. It is not a mock of llm_proto: it is the
-- Port contract itself (`port.profile`, `port:chat(request)`), driven by data.
local M = {}

local Port = {}
Port.__index = Port

function Port:chat(request)
  self.calls = self.calls + 1
  self.requests[#self.requests + 1] = request
  local r = self.script[self.calls]
  if r == nil then error("scripted port: no response scripted for call " .. self.calls) end
  if type(r) == "function" then return r(request, self.calls) end
  if r.error then error(r.error) end
  return r
end

--- A Port answering `script[i]` to the i-th call.
function M.new(script, profile)
  return setmetatable({ script = script, calls = 0, requests = {},
    profile = profile or { provider = "scripted", model = "scripted-1" } }, Port)
end

--- A text response.
function M.text(text, input_tokens, output_tokens)
  return { content = { { type = "text", text = text } }, stop_reason = "end_turn", model = "scripted-1",
    usage = { input_tokens = input_tokens or 10, output_tokens = output_tokens or 5 } }
end

--- A response asking for tools: `calls` = { { id, name, input }, ... }.
function M.tools(calls, text)
  local content = {}
  if text then content[1] = { type = "text", text = text } end
  for _, c in ipairs(calls) do
    content[#content + 1] = { type = "tool_use", id = c[1], name = c[2], input = c[3] or {} }
  end
  return { content = content, stop_reason = "tool_use", model = "scripted-1",
    usage = { input_tokens = 20, output_tokens = 8 } }
end

return M
