--- Asks for a name, a greeting and the roots in one round
---@tool test_input_required_result_multiple_inputs
local a = mcp.client.ask({
  user_name = {
    method = "elicitation/create",
    params = {
      message = "What is your name?",
      requestedSchema = { type = "object", properties = { name = { type = "string" } }, required = { "name" } },
    },
  },
  greeting = {
    method = "sampling/createMessage",
    params = {
      messages = { { role = "user", content = { type = "text", text = "Generate a greeting" } } },
      maxTokens = 50,
    },
  },
  client_roots = { method = "roots/list", params = {} },
})
return string.format("name=%s greeting=%s roots=%d", std.json.encode(a.user_name.content or {}),
  std.json.encode(a.greeting.content or {}), #(a.client_roots.roots or {}))
