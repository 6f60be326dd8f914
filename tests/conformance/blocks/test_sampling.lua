--- Tests server-initiated sampling (LLM completion request)
---@tool test_sampling
---@param prompt string The prompt to send to the LLM
local r = mcp.client.sample({
  messages = { { role = "user", content = { type = "text", text = _ARGS.prompt } } },
  maxTokens = 100,
})
local text = type(r.content) == "table" and r.content.text or "(no text)"
return "LLM response: " .. tostring(text)
