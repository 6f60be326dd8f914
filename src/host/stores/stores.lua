--- Model-facing tools of the stores: std.kv.register_tools, std.sql.register_tools, std.ts.register_tools.
--
-- Owns the tool names, schemas and result shapes a model sees (kv_get → { value }, kv_set →
-- { ok = true }, kv_delete → { deleted }, kv_list → { keys }; sql_execute → { affected, last_id },
-- sql_query → { rows }; ts_append → { ok = true }, ts_query → { rows }, ts_last → { row }), and the
-- options every register_tools takes: `allowed` (subset of the operations, default all),
-- `prefix` (default "kv_" / "sql_" / "ts_"), `group` (tool.register's meta.group) and, for kv,
-- `ns_lock` (every call uses that namespace; the model cannot pick another). Each answers the
-- list of tool names it registered. Tools go through `tool.register`, so they are ordinary
-- entries of the run's registry. Also sets `std.sql.null` (the same sentinel as `std.json.null`).
local R, H = ...
local user_level = R.user_level
local type, error, sformat, ipairs, pairs = type, error, string.format, ipairs, pairs

std.sql.null = H.null

local function obj(props, required)
  local s = { type = "object", properties = props }
  if required and #required > 0 then s.required = required end
  return s
end

local function register(fname, opts, default_prefix, ops)
  if opts ~= nil and type(opts) ~= "table" then
    error(sformat("%s: argument 1 (opts) must be a table, got %s", fname, type(opts)), user_level())
  end
  opts = opts or {}
  local prefix = opts.prefix or default_prefix
  if type(prefix) ~= "string" then
    error(sformat("%s: argument 1 (opts) field 'prefix' must be a string, got %s", fname, type(prefix)), user_level())
  end
  local by_name, order = {}, {}
  for _, op in ipairs(ops) do by_name[op.op] = op; order[#order + 1] = op.op end
  local wanted = order
  if opts.allowed ~= nil then
    if type(opts.allowed) ~= "table" then
      error(sformat("%s: argument 1 (opts) field 'allowed' must be a table, got %s", fname, type(opts.allowed)), user_level())
    end
    wanted = {}
    for i, name in ipairs(opts.allowed) do
      local op = type(name) == "string" and name:gsub("^" .. prefix, "") or name
      if not by_name[op] then
        error(sformat("%s: argument 1 (opts) field 'allowed' element %d must be one of %s, got %s",
          fname, i, table.concat(order, ", "), tostring(name)), user_level())
      end
      wanted[#wanted + 1] = op
    end
  end
  local meta = opts.group and { group = opts.group } or nil
  local names = std.json.array()
  for _, op in ipairs(wanted) do
    local spec = by_name[op]
    local name = prefix .. op
    tool.register(name, { description = spec.description, input_schema = spec.schema }, spec.handler, meta)
    names[#names + 1] = name
  end
  return names
end

local function need(input, tool_name, field, kind)
  local v = type(input) == "table" and input[field] or nil
  if type(v) ~= kind then
    error(sformat("%s: input field '%s' must be a %s, got %s", tool_name, field, kind, type(v)), 0)
  end
  return v
end

function std.kv.register_tools(opts)
  local lock = type(opts) == "table" and opts.ns_lock or nil
  if lock ~= nil and (type(lock) ~= "string" or lock == "") then
    error(sformat("std.kv.register_tools: argument 1 (opts) field 'ns_lock' must be a non-empty string, got %s",
      type(lock)), user_level())
  end
  local function ns_of(input)
    if lock then return lock end
    return need(input, "kv", "ns", "string")
  end
  local function props(extra)
    local p = {}
    if not lock then p.ns = { type = "string", description = "Namespace" } end
    for k, v in pairs(extra) do p[k] = v end
    return p
  end
  local function req(list)
    local r = {}
    if not lock then r[1] = "ns" end
    for _, v in ipairs(list) do r[#r + 1] = v end
    return r
  end
  local key = { type = "string", description = "Key" }
  return register("std.kv.register_tools", opts, "kv_", {
    { op = "get", description = "Read the value stored under a key (null when absent).",
      schema = obj(props({ key = key }), req({ "key" })),
      handler = function(input) return { value = std.kv.get(ns_of(input), need(input, "kv_get", "key", "string")) } end },
    { op = "set", description = "Store a JSON value under a key, replacing any previous value.",
      schema = obj(props({ key = key, value = { description = "Any JSON value" } }), req({ "key", "value" })),
      handler = function(input)
        local v = type(input) == "table" and input.value
        if v == nil then error("kv_set: input field 'value' is missing", 0) end
        std.kv.set(ns_of(input), need(input, "kv_set", "key", "string"), v)
        return { ok = true }
      end },
    { op = "delete", description = "Delete a key; answers whether it existed.",
      schema = obj(props({ key = key }), req({ "key" })),
      handler = function(input) return { deleted = std.kv.delete(ns_of(input), need(input, "kv_delete", "key", "string")) } end },
    { op = "list", description = "List the keys of the namespace, optionally only those starting with a prefix.",
      schema = obj(props({ prefix = { type = "string", description = "Key prefix" } }), req({})),
      handler = function(input)
        local p = type(input) == "table" and input.prefix or nil
        if p ~= nil and type(p) ~= "string" then error("kv_list: input field 'prefix' must be a string", 0) end
        return { keys = std.kv.list(ns_of(input), p) }
      end },
  })
end

local sql_schema = obj({
  sql = { type = "string", description = "One SQLite statement" },
  params = { description = "Positional parameters (array) or named parameters (object)" },
}, { "sql" })

function std.sql.register_tools(opts)
  return register("std.sql.register_tools", opts, "sql_", {
    { op = "execute", description = "Execute an SQLite statement that changes data or schema; answers the number of rows affected.",
      schema = sql_schema,
      handler = function(input)
        local r = std.sql.execute(need(input, "sql_execute", "sql", "string"), input.params)
        return { affected = r.affected, last_id = r.last_id }
      end },
    { op = "query", description = "Run an SQLite query; answers the rows as objects keyed by column name.",
      schema = sql_schema,
      handler = function(input) return { rows = std.sql.query(need(input, "sql_query", "sql", "string"), input.params) } end },
  })
end

local tags_schema = { type = "object", description = "Tags: string keys, scalar values (AND-filter when querying)" }

function std.ts.register_tools(opts)
  return register("std.ts.register_tools", opts, "ts_", {
    { op = "append", description = "Append a data point (a number or a JSON object) to a series.",
      schema = obj({
        series = { type = "string" }, value = { description = "A number or a JSON object" }, tags = tags_schema,
        at = { type = "integer", description = "Unix time in milliseconds (default now)" },
      }, { "series", "value" }),
      handler = function(input)
        std.ts.append(need(input, "ts_append", "series", "string"), input.value, input.tags, input.at)
        return { ok = true }
      end },
    { op = "query", description = "Query a series: raw points, or aggregated (count/sum/avg/last), optionally in time buckets.",
      schema = obj({
        series = { type = "string" },
        from = { type = "integer", description = "Start, ms, inclusive" },
        to = { type = "integer", description = "End, ms, inclusive" },
        tags = tags_schema,
        agg = { type = "string", enum = { "count", "sum", "avg", "last" } },
        bucket_ms = { type = "integer", description = "Bucket width in ms (needs agg)" },
        limit = { type = "integer" }, offset = { type = "integer" },
      }, { "series" }),
      handler = function(input)
        local series = need(input, "ts_query", "series", "string")
        local q = {}
        for _, k in ipairs({ "from", "to", "tags", "agg", "bucket_ms", "limit", "offset" }) do q[k] = input[k] end
        return { rows = std.ts.query(series, q) }
      end },
    { op = "last", description = "The most recent point of a series (optionally matching tags), or null.",
      schema = obj({ series = { type = "string" }, tags = tags_schema }, { "series" }),
      handler = function(input) return { row = std.ts.last(need(input, "ts_last", "series", "string"), input.tags) } end },
  })
end
