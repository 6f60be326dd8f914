--- Asks the client for the user's name (one input request, key user_name)
---@tool test_input_required_result_elicitation
local a = mcp.client.ask({
  user_name = {
    method = "elicitation/create",
    params = {
      message = "What is your name?",
      requestedSchema = { type = "object", properties = { name = { type = "string" } }, required = { "name" } },
    },
  },
})
local r = a.user_name
local name = type(r.content) == "table" and r.content.name or "stranger"
return "Hello, " .. tostring(name) .. "!"
