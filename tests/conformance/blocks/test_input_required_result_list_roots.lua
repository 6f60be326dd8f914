--- Asks the client for its roots (one input request, key client_roots)
---@tool test_input_required_result_list_roots
local a = mcp.client.ask({ client_roots = { method = "roots/list", params = {} } })
local uris = {}
for _, root in ipairs(a.client_roots.roots or {}) do uris[#uris + 1] = root.uri end
return "Client roots: " .. table.concat(uris, ", ")
