--- A simple prompt without arguments
---@prompt test_simple_prompt
return "This is a simple prompt for testing."
