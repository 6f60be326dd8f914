-- Counts the files, lines and bytes of the project per file extension, reading files concurrently,
-- and returns the totals as JSON (no API key, no server: io, os, std.task and std.json only).
--
-- Run it:   agent-block -b project_stats [--result stats.json] [--prompt "lua,ts"]
--      or   agent-block -s blocks/project_stats.lua -p OTHER_DIR   (counts OTHER_DIR)
-- `--prompt` narrows the count to a comma-separated list of extensions.
-- Hidden directories and node_modules are skipped; git's file list is used when DIR is a checkout.

local root = std.env.project_root()

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

--- Every regular file below the root (relative paths), from git when possible, else from find.
local function list_files()
  local files = {}
  local git = io.popen("git -C " .. shell_quote(root) .. " ls-files --cached --others --exclude-standard 2>/dev/null")
  for line in git:lines() do files[#files + 1] = line end
  local ok = git:close()
  if ok and #files > 0 then return files, "git" end
  files = {}
  local find = assert(io.popen("cd " .. shell_quote(root) ..
    " && find . -type d \\( -name '.?*' -o -name node_modules \\) -prune -o -type f -print"))
  for line in find:lines() do
    if line ~= "." then files[#files + 1] = line:gsub("^%./", "") end
  end
  find:close()
  return files, "find"
end

local function extension(path)
  local name = path:match("[^/]+$") or path
  return name:match("^.+%.([%w_]+)$") or "(none)"
end

--- Lines and bytes of one file, read in 64 KiB blocks.
local function measure(path)
  local f = io.open(root .. "/" .. path, "rb")
  if not f then return nil end
  local lines, bytes, last = 0, 0, nil
  while true do
    local block = f:read(65536)
    if not block then break end
    bytes = bytes + #block
    local _, n = block:gsub("\n", "")
    lines = lines + n
    last = block:sub(-1)
  end
  f:close()
  if bytes > 0 and last ~= "\n" then lines = lines + 1 end
  return lines, bytes
end

local wanted
if _PROMPT and _PROMPT ~= "" then
  wanted = {}
  for ext in _PROMPT:gmatch("[^,%s]+") do wanted[ext:gsub("^%.", "")] = true end
end

local files, source = list_files()
local selected = {}
for _, path in ipairs(files) do
  if not wanted or wanted[extension(path)] then selected[#selected + 1] = path end
end

-- One task per worker, each taking files from a shared cursor: the reads overlap with one another.
local by_ext, cursor = {}, 0
local function worker()
  while true do
    cursor = cursor + 1
    local path = selected[cursor]
    if not path then return end
    local lines, bytes = measure(path)
    if lines then
      local ext = extension(path)
      local e = by_ext[ext] or { files = 0, lines = 0, bytes = 0 }
      e.files, e.lines, e.bytes = e.files + 1, e.lines + lines, e.bytes + bytes
      by_ext[ext] = e
    end
    std.task.yield()
  end
end
local workers = {}
for i = 1, 8 do workers[i] = std.task.spawn(worker) end
std.task.all(workers)

local total = { files = 0, lines = 0, bytes = 0 }
local largest = {}
for ext, e in pairs(by_ext) do
  total.files, total.lines, total.bytes = total.files + e.files, total.lines + e.lines, total.bytes + e.bytes
  largest[#largest + 1] = ext
end
table.sort(largest, function(a, b)
  if by_ext[a].lines ~= by_ext[b].lines then return by_ext[a].lines > by_ext[b].lines end
  return a < b
end)

local summary = {}
for i = 1, math.min(3, #largest) do
  local e = largest[i]
  summary[#summary + 1] = string.format("%s: %d files, %d lines", e, by_ext[e].files, by_ext[e].lines)
end
print(string.format("%d files, %d lines in %s (listed by %s)", total.files, total.lines, root, source))
for _, line in ipairs(summary) do print("  " .. line) end

return std.json.encode({
  root = root,
  listed_by = source,
  generated_at = os.date("!%Y-%m-%dT%H:%M:%SZ"),
  total = total,
  by_extension = by_ext,
  top = std.json.array(largest),
})
