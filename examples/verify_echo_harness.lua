-- Verifies the MCP Echo Harness end to end: every listing, a call, progress, a resource, a prompt,
-- completion and the era-dependent ping. Raises on the first mismatch; prints
-- VERIFY_ECHO_HARNESS_OK at the end.
--
--   # over HTTP (server started separately):
--   deno run -A examples/echo_mcp_server.ts --transport http --port 0   # prints ECHO_MCP_URL=...
--   ECHO_MCP_URL=http://127.0.0.1:<port>/mcp agent-block -s examples/verify_echo_harness.lua
--   # over stdio (the script starts the server; DENO names the deno binary, default "deno"):
--   agent-block -s examples/verify_echo_harness.lua

local function check(cond, what, got)
  if not cond then error("verify_echo_harness: " .. what .. " (got " .. std.json.encode(got) .. ")", 2) end
  print("ok   " .. what)
end

local url = os.getenv("ECHO_MCP_URL")
if url and url ~= "" then
  mcp.connect_http("echo", url)
  print("connected over HTTP to " .. url)
else
  local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."
  mcp.connect("echo", os.getenv("DENO") or "deno", { "run", "-A", "--quiet", here .. "/echo_mcp_server.ts" })
  print("connected over stdio")
end

local info = mcp.server_info("echo")
check(info.ok and info.server_info.serverInfo.name == "echo-mcp-server", "server_info names the echo server", info)
print("     protocol " .. info.server_info.protocolVersion)

local tools = mcp.list_tools("echo")
local names = {}
for _, t in ipairs(tools.tools or {}) do names[#names + 1] = t.name end
table.sort(names)
check(tools.ok and #names == 2 and names[1] == "echo" and names[2] == "slow_echo", "2 tools: echo, slow_echo", names)

local res = mcp.list_resources("echo")
check(res.ok and #res.resources == 2, "2 resources: text://hello, text://note", res)
local hello = mcp.read_resource("echo", "text://hello")
check(hello.ok and hello.contents[1].text == "hello world", "text://hello reads 'hello world'", hello)

local prompts = mcp.list_prompts("echo")
check(prompts.ok and #prompts.prompts == 1 and prompts.prompts[1].name == "greet", "1 prompt: greet", prompts)
local greet = mcp.get_prompt("echo", "greet", { name = "harness" })
check(greet.ok and greet.messages[1].content.text == "hello, harness", "greet renders 'hello, harness'", greet)

local done = mcp.complete("echo", { type = "ref/prompt", name = "greet" }, "name", "wo")
check(done.ok and done.values[1] == "world", "completion of greet.name 'wo' offers 'world'", done)

local echo = mcp.call("echo", "echo", { msg = "ping" })
check(echo.ok and not echo.is_error and echo.content[1].text == "ping", "echo returns its message", echo)

local seen = {}
mcp.on_progress("echo", function(_, prog, total, msg)
  seen[#seen + 1] = msg
  print("     progress", prog, total, msg)
end)
local slow = mcp.call("echo", "slow_echo", { msg = "hi", steps = 3 })
check(slow.ok and slow.content[1].text == "hi", "slow_echo returns its message", slow)
check(#seen == 3 and seen[3] == "step 3/3", "3 progress notifications, the last one included", seen)

local ping = mcp.ping("echo")
if info.server_info.era == "modern" then
  check(not ping.ok and ping.error:find("no ping", 1, true), "ping does not exist in the 2026-07-28 era", ping)
else
  check(ping.ok and ping.latency_ms >= 0, "ping answers", ping)
end

mcp.disconnect("echo")
print("VERIFY_ECHO_HARNESS_OK")
