-- The sandbox escape suite's block: tries every way out it is given and reports each, as JSON.
-- _PROMPT is JSON: { outside = dir, tmp = file, fs_rw = dir, deno = path, port = n, probe = file }.
local p = std.json.decode(_PROMPT)
local O = p.outside
local out = {}
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function try(name, fn)
  local ok, v = pcall(fn)
  out[name] = ok and tostring(v) or ("raised: " .. tostring(v))
end
local function open_write(path)
  local f, err = io.open(path, "w")
  if not f then return "denied: " .. tostring(err) end
  f:write("x")
  f:close()
  return "wrote"
end
local function shell(cmd)
  local r = sh.exec(cmd, { timeout = 60 })
  return (r.code == 0 and "exit 0" or ("exit " .. tostring(r.code))) .. " " .. (r.stdout or "") .. (r.stderr or "")
end

-- ways out
try("io.open", function() return open_write(O .. "/io_open.txt") end)
try("std.fs.write", function() std.fs.write(O .. "/fs_write.txt", "x"); return "wrote" end)
try("fs tools", function()
  std.fs.register_tools({ allowed = { "fs_write" }, roots = { O } })
  return tool.call("fs_write", { path = O .. "/fs_tool.txt", content = "x" })
end)
try("sh.exec", function() return shell("echo x > " .. q(O .. "/sh.txt")) end)
try("grandchild", function() return shell("sh -c " .. q("sh -c " .. q("echo x > " .. q(O .. "/grand.txt")))) end)
try("detached", function() return shell("setsid -w sh -c " .. q("echo x > " .. q(O .. "/detached.txt"))) end)
try("io.popen", function()
  local f = io.popen("echo x > " .. q(O .. "/popen.txt") .. " 2>&1; echo $?")
  local s = f:read("a")
  f:close()
  return "exit " .. s
end)
try("mcp server", function()
  local ok, err = mcp.connect("evil", "sh", { "-c", "echo x > " .. q(O .. "/mcp.txt") .. "; exit 3" },
    { required = false, timeout = 30 })
  return tostring(ok) .. " " .. tostring(err)
end)
try("symlink", function()
  shell("ln -s " .. q(O) .. " link")
  return open_write("link/symlink.txt")
end)
try("rename", function()
  open_write("moveme.txt")
  local ok, err = os.rename("moveme.txt", O .. "/moved.txt")
  return ok and "renamed" or ("denied: " .. tostring(err))
end)
try("mv", function()
  open_write("moveme2.txt")
  return shell("mv moveme2.txt " .. q(O .. "/moved2.txt"))
end)
try("git hook io.open", function() return open_write(".git/hooks/pre-commit") end)
try("git hook sh", function() return shell("echo x > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout") end)
try("git config", function() return shell("git config core.hooksPath /tmp/evil-hooks") end)
if p.port then
  try("http connect", function()
    local r = http.request("http://127.0.0.1:" .. p.port .. "/", { timeout = 20 })
    return r.ok and ("status " .. tostring(r.status)) or ("failed: " .. tostring(r.error))
  end)
  try("child connect", function()
    return shell(q(p.deno) .. " eval " .. q("const c = await Deno.connect({ hostname: '127.0.0.1', port: " .. p.port .. " }); c.close(); console.log('connected')"))
  end)
  try("child listen", function()
    return shell(q(p.deno) .. " eval " .. q("const l = Deno.listen({ hostname: '127.0.0.1', port: 0 }); console.log('listening'); l.close()"))
  end)
end
try("io_uring", function() return shell(q(p.deno) .. " run -A " .. q(p.probe)) end)

-- what must still work
try("ok project", function() return open_write("ok_project.txt") end)
try("ok project child", function() return shell("echo x > ok_child.txt && cat ok_child.txt") end)
try("ok tmp", function() return open_write(p.tmp) end)
try("ok fs_rw", function() return open_write(p.fs_rw .. "/ok_fs_rw.txt") end)
try("ok kv", function() std.kv.set("ns", "k", "v"); return std.kv.get("ns", "k") end)
try("ok sql", function()
  std.sql.execute("CREATE TABLE IF NOT EXISTS t (x)")
  std.sql.execute("INSERT INTO t VALUES (1)")
  return "rows " .. #std.sql.query("SELECT x FROM t")
end)
try("ok ts", function() std.ts.append("s", 1); return "appended" end)
try("ok knl", function()
  local knl = require("knl")
  return knl.session({ owner = "escape", budget = { amount = 1 } }, function() return "session" end)
end)
try("ok git read", function() local f = assert(io.open(".git/HEAD")); local s = f:read("l"); f:close(); return s end)
try("ok git status", function() return shell("git status --short >/dev/null && echo ok") end)
return std.json.encode(out)
