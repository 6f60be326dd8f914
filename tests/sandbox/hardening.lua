-- The sandbox hardening block: capabilities, device nodes and the sockets around TCP, each tried
-- from a child; reports each as JSON. _PROMPT is JSON:
-- { tmp = dir, disk = "MAJ MIN", deno = path, probe = file, port = n }.
local p = std.json.decode(_PROMPT)
local out = {}
local function q(s) return "'" .. s:gsub("'", "'\\''") .. "'" end
local function shell(cmd)
  local r = sh.exec(cmd, { timeout = 60 })
  return "exit " .. tostring(r.code) .. " " .. (r.stdout or "") .. (r.stderr or "")
end
local function probe(args) return shell(q(p.deno) .. " run -A " .. q(p.probe) .. " " .. args) end

out["caps"] = shell("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status")
out["mknod block tmp"] = shell("mknod " .. q(p.tmp .. "/disk") .. " b " .. p.disk)
out["mknod block project"] = shell("mknod disk b " .. p.disk)
out["mknod char tmp"] = shell("mknod " .. q(p.tmp .. "/full") .. " c 1 7")
out["mptcp connect"] = probe("2 1 262 " .. p.port)
out["smc socket"] = probe("43 1 0")
out["raw socket"] = probe("2 3 6")
out["packet socket"] = probe("17 3 0")
out["udp socket"] = probe("2 2 0")
out["unix socket"] = probe("1 1 0")
return std.json.encode(out)
