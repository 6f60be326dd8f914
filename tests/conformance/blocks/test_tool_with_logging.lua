--- Tests tool that emits log messages during execution
---@tool test_tool_with_logging
mcp.client.log("info", "Tool execution started")
std.time.sleep(0.05)
mcp.client.log("info", "Tool processing data")
std.time.sleep(0.05)
mcp.client.log("info", "Tool execution completed")
return "Tool with logging executed successfully"
