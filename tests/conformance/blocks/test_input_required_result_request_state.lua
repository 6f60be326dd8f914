--- Asks for a confirmation; the echoed request state brings the call back to this very run
---@tool test_input_required_result_request_state
local a = mcp.client.ask({
  confirm = {
    method = "elicitation/create",
    params = {
      message = "Please confirm",
      requestedSchema = { type = "object", properties = { ok = { type = "boolean" } }, required = { "ok" } },
    },
  },
})
return "state-ok: confirmed=" .. std.json.encode(a.confirm.content or {})
