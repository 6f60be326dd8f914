-- The network escape suite's block (net_attack_test.ts), run under --sandbox-net allow-list: reaches
-- the allowed hosts every way a run does, tries the refused ones and the ways around the proxy,
-- and reports each outcome as JSON. Everything runs in a kernel session, which is kept open until
-- the proxy's refusals have arrived as net_denied events (they come on their own connection).
-- _PROMPT is JSON: { allowed, other, by_name, by_literal, other_port_connect, mcp, mcp_other, deno,
-- probe, probe_arg, want_denials }.
local p = std.json.decode(_PROMPT)
local knl = require("knl")
local out = {}
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function try(name, fn)
  local ok, v = pcall(fn)
  out[name] = ok and tostring(v) or ("raised: " .. tostring(v))
end
local function get(url)
  local r = http.request({ url = url, timeout = 30 })
  if r.ok then return "status " .. tostring(r.status) .. " " .. tostring(r.body) end
  return "failed: " .. tostring(r.error)
end
local function shell(cmd)
  local r = sh.exec(cmd, { timeout = 60 })
  return "exit " .. tostring(r.code) .. " " .. (r.stdout or "") .. (r.stderr or "")
end
local function curl(args) return shell("curl -fsS --max-time 20 " .. args) end

local store = knl.open({ sqlite = "net.sqlite" })
out.session = store:session({ owner = "net" }, function(s)
  -- the allowed hosts, every way a run reaches them
  try("http.request allowed", function() return get(p.allowed .. "/hello") end)
  try("curl allowed", function() return curl(q(p.allowed .. "/hello")) end)
  try("llm allowed", function()
    local r = llm.chat("hi", { provider = "openai", api_key = "k", max_retries = 0 })
    return "answered " .. r.content[1].text
  end)
  try("mcp allowed", function()
    mcp.connect_http("echo", p.mcp)
    local r = mcp.call("echo", "echo", { msg = "through the proxy" })
    return r.ok and ("answered " .. r.content[1].text) or ("failed " .. tostring(r.error))
  end)
  -- a host not on the list, every way
  try("http.request other", function() return get(p.other .. "/hello") end)
  try("curl other", function() return curl(q(p.other .. "/hello")) end)
  try("llm other", function()
    local r = llm.chat("hi", { provider = "openai", api_key = "k", base_url = p.other .. "/v1", max_retries = 0 })
    return "answered " .. r.content[1].text
  end)
  try("mcp other", function()
    mcp.connect_http("other", p.mcp_other)
    return "connected"
  end)
  -- ways around the proxy
  try("rebinding", function() return curl(q(p.by_name .. "/hello")) end)
  try("literal", function() return curl(q(p.by_literal .. "/hello")) end)
  try("connect other port", function() return curl("--proxytunnel " .. q(p.other_port_connect .. "/hello")) end)
  try("unset proxy", function()
    return shell("env -u HTTP_PROXY -u http_proxy -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy " ..
      "curl -fsS --max-time 20 " .. q(p.allowed .. "/hello"))
  end)
  try("noproxy", function() return curl("--noproxy '*' " .. q(p.allowed .. "/hello")) end)
  try("probe", function()
    local r = sh.exec(q(p.deno) .. " run -A --quiet " .. q(p.probe) .. " " .. q(p.probe_arg), { timeout = 60 })
    return r.stdout ~= "" and r.stdout or ("exit " .. tostring(r.code) .. " " .. r.stderr)
  end)
  -- the refusals arrive on the proxy's feed: wait for them (bounded) before the session closes
  local denied = {}
  for _ = 1, 300 do
    denied = {}
    for _, ev in ipairs(s:events()) do
      if ev.kind == "net_denied" then denied[#denied + 1] = ev.data.host .. ":" .. tostring(ev.data.port) end
    end
    if #denied >= p.want_denials then break end
    std.time.sleep(0.1)
  end
  out.denied = table.concat(denied, " ")
  return s.id
end)
return std.json.encode(out)
