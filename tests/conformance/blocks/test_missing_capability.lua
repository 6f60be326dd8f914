--- Needs sampling: a client that did not declare it gets -32021 (2026-07-28)
---@tool test_missing_capability
local r = mcp.client.sample("Needs sampling")
return "sampled: " .. tostring(r.content and r.content.text)
