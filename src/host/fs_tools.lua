--- std.fs.tool_specs / std.fs.register_tools: the file tools a model is offered.
--
-- Owns the tool names, descriptions and input schemas, and which tools a set contains: `fs_read`
-- and `fs_edit` always; `fs_write`, `fs_rollback` and `fs_search_replace` only when named in
-- `opts.allowed`. `opts.roots` (extra directories besides the project root), `opts.max_file_bytes`
-- (largest file the tools read, default 16 MiB), `opts.no_symlinks` (no change through a symlink)
-- and the confinement rules live in fs_tools.ts. `tool_specs(opts)` answers `{ name, description,
-- input_schema, handler }` entries for a caller's own registry; `register_tools(opts)` registers them through
-- `tool.register` (with `opts.group` as meta.group) and answers their names. A tool failure raises
-- its message without a position: it is written for the model.
local R, H = ...
local user_level = R.user_level
local type, error, sformat, ipairs = type, error, string.format, ipairs

local DEFAULT = { "fs_read", "fs_edit" }
local OPTIONAL = { fs_write = true, fs_rollback = true, fs_search_replace = true }

local function props(t) return { type = "object", properties = t.p, required = t.r } end
local path = { type = "string", description = "File path, relative to the project root" }

local SPECS = {
  fs_read = {
    description = "Read a text file with line numbers. Optionally only lines start_line..end_line (inclusive).",
    input_schema = props({ p = { path = path,
      start_line = { type = "integer", description = "First line to show (1-based)" },
      end_line = { type = "integer", description = "Last line to show (inclusive)" } }, r = { "path" } }),
  },
  fs_edit = {
    description = "Replace lines start_line..end_line (inclusive, 1-based) of a file with content. expect must be "
      .. "the exact current text of those lines (copy it from fs_read, without the line numbers); the edit is refused "
      .. "otherwise. Empty content deletes the lines; end_line = start_line - 1 with expect = \"\" inserts before start_line.",
    input_schema = props({ p = { path = path,
      start_line = { type = "integer" }, end_line = { type = "integer" },
      expect = { type = "string", description = "Current text of the lines being replaced" },
      content = { type = "string", description = "New text for those lines" } },
      r = { "path", "start_line", "end_line", "expect", "content" } }),
  },
  fs_write = {
    description = "Create or overwrite a file with content (parent directories are created).",
    input_schema = props({ p = { path = path, content = { type = "string" } }, r = { "path", "content" } }),
  },
  fs_rollback = {
    description = "Undo the most recent remaining edit this run made to a file (fs_edit, fs_write or fs_search_replace).",
    input_schema = props({ p = { path = path }, r = { "path" } }),
  },
  fs_search_replace = {
    description = "Replace one snippet of a file: search must occur exactly once, verbatim (include enough "
      .. "surrounding text to make it unique); it is replaced by replace.",
    input_schema = props({ p = { path = path, search = { type = "string" }, replace = { type = "string" } },
      r = { "path", "search", "replace" } }),
  },
}

local function build(fname, opts)
  if opts ~= nil and type(opts) ~= "table" then
    error(sformat("%s: argument 1 (opts) must be a table, got %s", fname, type(opts)), user_level())
  end
  opts = opts or {}
  local names = { DEFAULT[1], DEFAULT[2] }
  if opts.allowed ~= nil then
    if type(opts.allowed) ~= "table" then
      error(sformat("%s: argument 1 (opts) field 'allowed' must be a table, got %s", fname, type(opts.allowed)), user_level())
    end
    for i, name in ipairs(opts.allowed) do
      if not OPTIONAL[name] and name ~= "fs_read" and name ~= "fs_edit" then
        error(sformat("%s: argument 1 (opts) field 'allowed' element %d must be one of fs_write, fs_rollback, "
          .. "fs_search_replace, got %s", fname, i, tostring(name)), user_level())
      end
      if OPTIONAL[name] then
        local dup = false
        for _, n in ipairs(names) do if n == name then dup = true end end
        if not dup then names[#names + 1] = name end
      end
    end
  end
  local ok, set = pcall(H.fs_tools_new, opts)
  if not ok then error((tostring(set):gsub("^fs_tools_new", fname)), user_level()) end
  local out = std.json.array()
  for _, name in ipairs(names) do
    local spec = SPECS[name]
    out[#out + 1] = {
      name = name,
      description = spec.description,
      input_schema = spec.input_schema,
      handler = function(input)
        local result, err = H.fs_tool(set, name, input)
        if result == nil then error(err, 0) end
        return result
      end,
    }
  end
  return out
end

function std.fs.tool_specs(opts) return build("std.fs.tool_specs", opts) end

function std.fs.register_tools(opts)
  local specs = build("std.fs.register_tools", opts)
  local group = opts and opts.group
  if group ~= nil and type(group) ~= "string" then
    error(sformat("std.fs.register_tools: argument 1 (opts) field 'group' must be a string, got %s", type(group)), user_level())
  end
  local names = std.json.array()
  for i, s in ipairs(specs) do
    tool.register(s.name, { description = s.description, input_schema = s.input_schema }, s.handler,
      group and { group = group } or nil)
    names[i] = s.name
  end
  return names
end
