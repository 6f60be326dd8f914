--- Tests server-initiated elicitation (user input request)
---@tool test_elicitation
---@param message string The message to show the user
local r = mcp.client.elicit(_ARGS.message, {
  type = "object",
  properties = {
    username = { type = "string", description = "User's response" },
    email = { type = "string", description = "User's email address" },
  },
  required = { "username", "email" },
})
return "User response: action=" .. r.action .. ", content=" .. std.json.encode(r.content or {})
