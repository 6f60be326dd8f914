-- Release smoke test (tools/smoke_test.sh): an MCP round trip over stdio against the example echo
-- server, started as `$SMOKE_DENO run -A $SMOKE_ECHO_SERVER`. SMOKE_SERVER_ENV_AUDIT, when set,
-- is the server's own DENO_AUDIT_PERMISSIONS file (tests/compile_test.ts keeps the server's file
-- reads apart from the runtime's). Returns the echoed text.
local env = {}
local audit = std.env.get("SMOKE_SERVER_ENV_AUDIT")
if audit then env.DENO_AUDIT_PERMISSIONS = audit end
mcp.connect("echo", std.env.get("SMOKE_DENO"), { "run", "-A", std.env.get("SMOKE_ECHO_SERVER") }, { env = env })
local r = mcp.call("echo", "echo", { msg = "round trip" })
assert(r.ok and not r.is_error, "mcp.call failed: " .. std.json.encode(r))
return r.content[1].text
