--- Tests simple text content response
---@tool test_simple_text
return "This is a simple text response for testing."
