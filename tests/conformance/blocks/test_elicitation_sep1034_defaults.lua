--- Tests elicitation with default values per SEP-1034
---@tool test_elicitation_sep1034_defaults
local r = mcp.client.elicit("Please review and update the form fields with defaults", {
  type = "object",
  properties = {
    name = { type = "string", description = "User name", default = "John Doe" },
    age = { type = "integer", description = "User age", default = 30 },
    score = { type = "number", description = "User score", default = 95.5 },
    status = { type = "string", description = "User status", enum = { "active", "inactive", "pending" }, default = "active" },
    verified = { type = "boolean", description = "Verification status", default = true },
  },
})
return "Elicitation completed: action=" .. r.action .. ", content=" .. std.json.encode(r.content or {})
