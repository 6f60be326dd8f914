--- Elicits while the call is open: only an input_required result reaches the client, never a request
---@tool test_streaming_elicitation
local r = mcp.client.elicit("Streaming elicitation", { type = "object", properties = { x = { type = "string" } } })
return "elicited: " .. r.action
