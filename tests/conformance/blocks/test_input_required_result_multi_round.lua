--- Asks twice, one round after the other
---@tool test_input_required_result_multi_round
local one = mcp.client.ask({
  step1 = {
    method = "elicitation/create",
    params = {
      message = "Step 1: What is your name?",
      requestedSchema = { type = "object", properties = { name = { type = "string" } }, required = { "name" } },
    },
  },
})
local two = mcp.client.ask({
  step2 = {
    method = "elicitation/create",
    params = {
      message = "Step 2: What is your favorite color?",
      requestedSchema = { type = "object", properties = { color = { type = "string" } }, required = { "color" } },
    },
  },
})
return string.format("name=%s color=%s", std.json.encode(one.step1.content or {}), std.json.encode(two.step2.content or {}))
