--- Asks for a confirmation; a request state that is not the one given is refused
---@tool test_input_required_result_tampered_state
local a = mcp.client.ask({
  confirm = {
    method = "elicitation/create",
    params = {
      message = "Please confirm",
      requestedSchema = { type = "object", properties = { ok = { type = "boolean" } }, required = { "ok" } },
    },
  },
})
return "confirmed: " .. std.json.encode(a.confirm.content or {})
