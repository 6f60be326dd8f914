-- Release smoke test (tools/smoke_test.sh): a std.kv round trip through SQLite and, where there is a
-- /bin/sh (SMOKE_NO_SH unset), one sh.exec. Returns {"kv":42,"sh":"smoke"} as JSON.
std.kv.set("smoke", "n", { count = 41 })
local out = { kv = std.kv.get("smoke", "n").count + 1 }
if std.env.get("SMOKE_NO_SH") ~= "1" then
  local r = sh.exec("echo smoke")
  assert(r.ok and r.code == 0, "sh.exec failed: " .. tostring(r.error or r.stderr))
  out.sh = (r.stdout:gsub("%s+$", ""))
end
return std.json.encode(out)
