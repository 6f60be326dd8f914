--- A prompt that asks the client for its context first
---@prompt test_input_required_result_prompt
local a = mcp.client.ask({
  user_context = {
    method = "elicitation/create",
    params = {
      message = "What context should the prompt use?",
      requestedSchema = { type = "object", properties = { context = { type = "string" } }, required = { "context" } },
    },
  },
})
local ctx = type(a.user_context.content) == "table" and a.user_context.content.context or ""
return "Use this context: " .. tostring(ctx)
