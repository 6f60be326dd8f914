--- Logs three messages (only a client that set a log level on the request receives them)
---@tool test_logging_tool
mcp.client.log("info", "first")
mcp.client.log("info", "second")
mcp.client.log("info", "third")
return "logged"
