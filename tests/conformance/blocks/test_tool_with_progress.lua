--- Tests tool that reports progress notifications
---@tool test_tool_with_progress
mcp.client.progress(0, 100, "Completed step 0 of 100")
std.time.sleep(0.05)
mcp.client.progress(50, 100, "Completed step 50 of 100")
std.time.sleep(0.05)
mcp.client.progress(100, 100, "Completed step 100 of 100")
return "Progress test completed"
