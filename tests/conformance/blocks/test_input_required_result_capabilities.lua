--- Asks only for what the client declared it can answer
---@tool test_input_required_result_capabilities
local caps = mcp.client.capabilities()
local asks = {}
if caps.sampling then
  asks.question = {
    method = "sampling/createMessage",
    params = { messages = { { role = "user", content = { type = "text", text = "Say hi" } } }, maxTokens = 20 },
  }
end
if caps.elicitation then
  asks.name = {
    method = "elicitation/create",
    params = { message = "Your name?", requestedSchema = { type = "object", properties = { name = { type = "string" } } } },
  }
end
if next(asks) == nil then return "the client declared neither sampling nor elicitation" end
local a = mcp.client.ask(asks)
local keys = {}
for k in pairs(a) do keys[#keys + 1] = k end
table.sort(keys)
return "answered: " .. table.concat(keys, ", ")
