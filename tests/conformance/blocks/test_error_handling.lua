--- Tests error response handling
---@tool test_error_handling
error("This tool intentionally returns an error for testing", 0)
