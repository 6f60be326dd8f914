--- knl: the Lua half of the kernel — session bracket, frozen device, one beat, Outcome, views.
--
-- The host owns the session log (`knl.host`: an append-only SQLite event log, one per file, whose
-- sessions are streams). This module owns what a beat is:
--
--   knl.session(opts, fn)  opens a session (its seed event stamped by the host with the run's
--                          labels and correlation ids), runs fn(s), and closes it either way —
--                          `ok` when fn returns, `error` when it raises (the error is re-raised
--                          unchanged), `exit` on os.exit / job.defer, `cancelled` when its task
--                          is cancelled (both known by `std.task.is_fatal`, by identity: an
--                          error whose text ends in `: cancelled` closes it as `error`); the host closes what is still open at run end as
--                          `interrupted`. Children (`opts.children`) open and close with it in
--                          one transaction.
--   knl.device(spec)       a frozen bundle { llm, tools, tool_policy, fold, filters, system, cost };
--                          assigning to it, or to its tools / filters, raises.
--   knl.beat(s, device, opts?)  one model call plus the tools it asks for, charged to the
--                          budget. Returns an Outcome: ok | refused (over budget: the model is not
--                          called) | error (the call failed or answered outside knl_types.Response;
--                          `cause` is the Port's error when it raised a table, such as the
--                          `{ message, status, retryable }` of a failed model request)
--                          | stopped (a filter, the tool policy or the caller's `on_response`
--                          stopped it).
--   knl.views.*            query views: plain functions running one SELECT through s:query.
--   knl.api()              the published surface: table schema, kinds, views.
--
-- Records: every model call appends `llm_request` then `llm_response` or `llm_call_failed`; every
-- tool call a `tool_call` / `tool_result` pair (a denied or skipped tool too, with is_error), and
-- between them a `policy_decision` when a tool_policy function answers a record of its decision
-- (a third value, a table: `policy.tool_policy` does); each
-- charge a `budget_charge`; a refusal `beat_refused`; a stop `beat_stopped`. Each carries
-- `meta.beat`. `knl.record.*` writes the same shapes for a loop that calls a Port itself.
--
-- Durability (output commit): a beat's events and a session's opening are deferred — appended
-- in order, each stamped with the time it happened, and committed together before the run next
-- acts on the world: before any asynchronous host call but a model request, before any
-- synchronous host call not marked pure (so a tool call is in the log before its tool writes a
-- file, prints or starts anything), and before any read of the store, any `s:append` without
-- `defer`, a close, and the run's end, whichever comes first. A model request is not such an
-- act (a resumed run may ask again without harm): what precedes it commits while it is in
-- flight, at the latest when the commit window (AGENT_BLOCK_KNL_COMMIT_MS, default 5 ms) has
-- passed since the first deferred event — so beats faster than the window share a commit — or
-- before it is sent when the window is 0. What a process killed outright (SIGKILL) loses is only
-- what happened since its last effect on the world — Lua computation, model exchanges younger
-- than the window, and a response received but not yet acted on, which reads as a call cut off
-- in flight — never the record of an effect. `s:append`, `s:close` and `knl.record.*` commit at
-- once (with anything deferred before them); `s:append(ev, { defer = true })` defers.
--
-- Invariants: there is no run loop here — the caller writes it; the session's folded
-- conversation (`s:messages()`) is updated on every append through `s:append`, so a beat costs
-- O(new events), not O(log); a message handed out by `s:messages()` is never changed afterwards
-- (a Port may cache its encoding), and a beat that sends its conversation as it is (no fold, no
-- filter) tells llm_proto how much of it the previous beat sent (`extends`), so converting and
-- encoding the request cost what the turn added too; nothing here reaches the database except
-- through `knl.host`.
local sys = require("knl.host")
local types = require("knl_types")
local lcheck = require("lshape.check").check

local type, error, pairs, ipairs, setmetatable, getmetatable, tostring, select, pcall, rawequal =
  type, error, pairs, ipairs, setmetatable, getmetatable, tostring, select, pcall, rawequal
local sformat, concat = string.format, table.concat
local clock = sys.clock

local knl = { VERSION = "1.0" }

-- helpers --------------------------------------------------------------------------------------

local function describe_error(e)
  if type(e) == "string" then return e end
  if type(e) == "table" then
    if type(e.message) == "string" then return e.message end
    if type(e.error) == "string" then return e.error end
    local ok, s = pcall(std.json.encode, e)
    if ok then return s end
  end
  return tostring(e)
end

-- Errors a beat records but must not swallow: the task was cancelled (`task:cancel()`), or the
-- run is ending (os.exit / job.defer). Turning either into an Outcome would keep a loop running
-- that was told to stop. `std.task.is_fatal` knows them by identity (the runtime's sentinels),
-- never by text, and answers which one ("cancelled" or "exit").
local is_fatal = std.task.is_fatal

-- A host error arrives prefixed with the kernel's own position; callers should see theirs.
local function strip_pos(msg)
  if type(msg) ~= "string" then return msg end
  return (msg:gsub("^[^\n]-%.lua:%d+: ", "", 1))
end

local function host(level, f, ...)
  local r = table.pack(pcall(f, ...))
  if not r[1] then error(strip_pos(r[2]), level + 1) end
  return table.unpack(r, 2, r.n)
end

local function argerr(fn, i, name, expected, v, level)
  error(sformat("%s: argument %d (%s) must be %s, got %s", fn, i, name, expected, type(v)), (level or 2) + 1)
end

-- The common cases of `lcheck(v, types.SessionOpts)` and `lcheck(v, types.DeviceSpec)` (keep in
-- step with knl_types), checked without building a path per field: true only when the full
-- check passes too; anything else (another field, another type) goes to lcheck, which decides
-- and words the reason. A loop opens a session and a device per run, so these are warm paths.
local function plain_budget(b)
  if type(b) ~= "table" or type(b.amount) ~= "number" then return false end
  for k, v in pairs(b) do
    if not (k == "amount" or (k == "tag" and type(v) == "string")) then return false end
  end
  return true
end
local SESSION_FIELD_OK = {
  owner = function(v) return type(v) == "string" end,
  budget = plain_budget,
  scope = function() return true end,
  store = function() return true end,
}
local function plain_session_opts(o)
  for k, v in pairs(o) do
    local ok = SESSION_FIELD_OK[k]
    if not (ok and ok(v)) then return false end
  end
  return true
end
local DEVICE_FIELD_TYPE = { llm = "table", tools = "table", system = "string", fold = "function", cost = "function" }
local function plain_device_spec(d)
  if type(d.llm) ~= "table" then return false end
  for k, v in pairs(d) do
    local t = DEVICE_FIELD_TYPE[k]
    if not (t and type(v) == t) then return false end
  end
  return true
end

local function shape_error(fn, what, schema, v, level)
  local ok, why = lcheck(v, schema)
  if ok then return end
  local path, rest = why:match("^%$%.([^:]*): (.*)$")
  if path then
    error(sformat("%s: %s field '%s': %s", fn, what, path, rest), level + 1)
  end
  error(sformat("%s: %s: %s", fn, what, (why:gsub("^%$: ", ""))), level + 1)
end

-- Outcome --------------------------------------------------------------------------------------

-- An outcome is plain data `{ kind, beat, out?, reason?, error? }`; its metatable only prints it.
local OutcomeMT = { __name = "knl.Outcome" }
function OutcomeMT.__tostring(o)
  local why = rawget(o, "reason") or rawget(o, "error")
  return sformat("knl.Outcome(%s%s)", o.kind, why and (": " .. why) or "")
end
local function outcome(kind)
  return function(fields) fields.kind = kind; return setmetatable(fields, OutcomeMT) end
end
local Outcome = { KINDS = { "ok", "refused", "error", "stopped" } }
Outcome.ok, Outcome.refused, Outcome.error, Outcome.stopped =
  outcome("ok"), outcome("refused"), outcome("error"), outcome("stopped")
--- True for an `ok` outcome.
function Outcome.is_ok(o) return type(o) == "table" and o.kind == "ok" end
--- True for any outcome.
function Outcome.is(o) return getmetatable(o) == OutcomeMT end
knl.Outcome = Outcome

-- conversation fold ------------------------------------------------------------------------------

local function as_blocks(content)
  if type(content) == "table" then return content end
  return { { type = "text", text = tostring(content) } }
end

-- Appends a message, merging into the previous one when the role repeats (providers want turns
-- to alternate; tool results and a follow-up user text share one user turn).
-- A merged message is the fold's own table, extended in place by later merges (O(new blocks)).
local merged_by_fold = setmetatable({}, { __mode = "k" })
-- The lowest index of a fold's list whose message was replaced since the session last handed the
-- list out (`Session:messages`, which tells llm_proto what is unchanged).
local replaced_from = setmetatable({}, { __mode = "k" })
local function push_message(msgs, role, content)
  local last = msgs[#msgs]
  if last and last.role == role then
    local merged = last.content
    if not merged_by_fold[merged] then
      merged = {}
      for _, b in ipairs(as_blocks(last.content)) do merged[#merged + 1] = b end
      merged_by_fold[merged] = true
      msgs[#msgs] = { role = role, content = merged }
      local low = replaced_from[msgs]
      if not low or low > #msgs then replaced_from[msgs] = #msgs end
    end
    for _, b in ipairs(as_blocks(content)) do merged[#merged + 1] = b end
  else
    msgs[#msgs + 1] = { role = role, content = content }
  end
end

local function fold_event(msgs, kind, data)
  if kind == "msg_user" then
    push_message(msgs, "user", data.content)
  elseif kind == "msg_assistant" then
    push_message(msgs, "assistant", data.content)
  elseif kind == "llm_response" then
    -- Thinking blocks stay (Anthropic wants the signed ones back on a tool-use turn; each
    -- llm_proto adapter drops what its provider cannot take), but a response of thinking alone
    -- adds no message: the adapters would send it empty.
    local content = data.content or {}
    for _, b in ipairs(content) do
      if b.type ~= "thinking" then push_message(msgs, "assistant", content); break end
    end
  elseif kind == "tool_result" then
    push_message(msgs, "user", { { type = "tool_result", tool_use_id = data.id, content = data.content,
      is_error = data.is_error == true } })
  end
end
knl.fold_event = fold_event

-- stores -----------------------------------------------------------------------------------------

local Store = {}
Store.__index = Store
Store.__name = "knl.Store"

--- Opens a store: `opts.store` nil (the project's database, or AGENT_BLOCK_KNL_PATH), "mem"
-- (this run's in-memory log) or `{ sqlite = path }`.
function knl.open(opts)
  if opts ~= nil and type(opts) ~= "table" then argerr("knl.open", 1, "opts", "a table or nil", opts) end
  local spec = opts and opts.store
  local h, path = host(2, sys.open, spec)
  return setmetatable({ h = h, path = path }, Store)
end

local function check_store(st, fn)
  if getmetatable(st) ~= Store then error(fn .. ": call it with ':' on a store", 3) end
end

--- One read-only SELECT over the published table.
function Store:query(sql, params, opts)
  check_store(self, "store:query")
  if type(sql) ~= "string" then argerr("store:query", 1, "sql", "a string", sql) end
  return host(2, sys.query, self.h, sql, params, opts)
end

--- Events of stream `id` from `from` (default 1), upcast.
function Store:events(id, from)
  check_store(self, "store:events")
  return host(2, sys.events, self.h, id, from)
end

--- True when stream `id` has events.
function Store:has(id)
  check_store(self, "store:has")
  return host(2, sys.has, self.h, id)
end

-- sessions ---------------------------------------------------------------------------------------

local Session = {}
Session.__index = Session
Session.__name = "knl.Session"
knl.Session = Session

local function new_session(store, id, node, parent)
  local budget = node.budget and { amount = node.budget.amount, tag = node.budget.tag or "beats" } or nil
  return setmetatable({
    id = id, owner = node.owner, budget = budget, scope = node.scope, store = store,
    parent = parent, children = {}, spent = 0, beats = 0, closed = false, _msgs = {},
  }, Session)
end

local function check_session(s, fn, level)
  if getmetatable(s) ~= Session then
    error(sformat("%s: expected a knl session (call it with ':'), got %s", fn, type(s)), (level or 2) + 1)
  end
end

local RESERVED = { session_open = true, session_close = true }

local sys_append, sys_append_many = sys.append, sys.append_many

-- The kernel's own appends: arguments are known good, so no pcall on this hot path; `beat`
-- travels as an integer and the host puts it into meta.
local function append(s, kind, data, meta, beat, defer)
  local seq, position = sys_append(s.store.h, s.id, kind, data, meta, beat, defer)
  fold_event(s._msgs, kind, data or {})
  return seq, position
end

-- Several events of one beat in one transaction: { { kind, data }, ... }. With `defer`, the host
-- holds them and commits them ahead of the store's next write (see the header).
local function append_many(s, list, beat, defer)
  local seq = sys_append_many(s.store.h, s.id, list, beat, defer)
  for _, e in ipairs(list) do fold_event(s._msgs, e.kind, e.data or {}) end
  return seq
end

--- Appends `{ kind, data?, meta? }`; returns seq, position. With `opts.defer`, the event is
-- committed with the next commit (see the header) and nothing is returned; `opts.beat` files it
-- under that beat (`meta.beat`, as the kernel files its own), cheaper than a `meta` table.
function Session:append(ev, opts)
  check_session(self, "s:append")
  if type(ev) ~= "table" then argerr("s:append", 1, "event", "a table", ev) end
  if type(ev.kind) ~= "string" or ev.kind == "" then
    error("s:append: argument 1 (event) field 'kind' must be a non-empty string, got " .. type(ev.kind), 2)
  end
  if RESERVED[ev.kind] then
    error(sformat("s:append: kind '%s' is written by the session bracket, not appended", ev.kind), 2)
  end
  if ev.data ~= nil and type(ev.data) ~= "table" then
    error("s:append: argument 1 (event) field 'data' must be a table, got " .. type(ev.data), 2)
  end
  if ev.meta ~= nil and type(ev.meta) ~= "table" then
    error("s:append: argument 1 (event) field 'meta' must be a table, got " .. type(ev.meta), 2)
  end
  if opts ~= nil and type(opts) ~= "table" then argerr("s:append", 2, "opts", "a table or nil", opts) end
  if self.closed then error(sformat("s:append: session %s is closed", self.id), 2) end
  local defer = opts ~= nil and opts.defer == true
  local beat = opts ~= nil and opts.beat or nil
  if beat ~= nil and math.type(beat) ~= "integer" then
    error("s:append: argument 2 (opts) field 'beat' must be an integer, got " .. type(beat), 2)
  end
  -- `host` without its table.pack: the append answers exactly two values (a loop appends per turn)
  local ok, seq, position = pcall(sys_append, self.store.h, self.id, ev.kind, ev.data, ev.meta, beat, defer)
  if not ok then error(strip_pos(seq), 2) end
  fold_event(self._msgs, ev.kind, ev.data or {})
  return seq, position
end

--- Built-in read: events from seq `from` (default 1), in seq order, upcast.
function Session:events(from)
  check_session(self, "s:events")
  if from ~= nil and math.type(from) ~= "integer" then argerr("s:events", 1, "from", "an integer or nil", from) end
  return host(2, sys.events, self.store.h, self.id, from)
end

local BUILTIN_VIEWS = { events = true, tail = true }

--- Built-in views: `view("tail", { n })` (last n events, default 10) and `view("events", { from })`.
function Session:view(name, opts)
  check_session(self, "s:view")
  if opts ~= nil and type(opts) ~= "table" then argerr("s:view", 2, "opts", "a table or nil", opts) end
  opts = opts or {}
  if name == "tail" then
    local n = opts.n or 10
    if math.type(n) ~= "integer" or n < 0 then
      error("s:view: argument 2 (opts) field 'n' must be a non-negative integer", 2)
    end
    return host(2, sys.tail, self.store.h, self.id, n)
  elseif name == "events" then
    return host(2, sys.events, self.store.h, self.id, opts.from)
  end
  error(sformat("s:view: unknown built-in view '%s' (built-in: events, tail; query views are the functions in knl.views)",
    tostring(name)), 2)
end

--- One read-only SELECT over the published `events` table; rows as tables.
function Session:query(sql, params, opts)
  check_session(self, "s:query")
  if type(sql) ~= "string" then argerr("s:query", 1, "sql", "a string", sql) end
  if params ~= nil and type(params) ~= "table" then argerr("s:query", 2, "params", "a table or nil", params) end
  if opts ~= nil and type(opts) ~= "table" then argerr("s:query", 3, "opts", "a table or nil", opts) end
  return host(2, sys.query, self.store.h, sql, params, opts)
end

local unpack, COPY_VIA_STACK = table.unpack, 4000

-- A copy of the conversation, the copy made before it and how many leading messages the two
-- share (the same tables: appends leave them, a merge into the last message replaces it).
local function copy_messages(self)
  local msgs = self._msgs
  local last = msgs[#msgs]
  if last and type(last.content) == "table" then merged_by_fold[last.content] = nil end
  local n = #msgs
  -- A table constructor sized in one go is several times cheaper than growing one with
  -- table.move; past what the Lua stack takes comfortably, table.move.
  local copy = n <= COPY_VIA_STACK and { unpack(msgs, 1, n) } or table.move(msgs, 1, n, 1, {})
  local prev, same = self._handed, self._handed_n
  local low = replaced_from[msgs]
  replaced_from[msgs] = nil
  if low and low - 1 < same then same = low - 1 end
  self._handed, self._handed_n = copy, n
  return copy, prev, same
end

--- The conversation folded from this session's appends (a copy; providers' message shape).
-- What leaves here may be sent, and a sent message is a value (llm_proto caches its encoding by
-- identity): a later append of the same role merges into a copy, never into it.
function Session:messages()
  return (copy_messages(self))
end

--- What is left of the budget (math.huge without one).
function Session:remaining()
  if not self.budget then return math.huge end
  return self.budget.amount - self.spent
end

local function collect_open(s, ids)
  for _, c in ipairs(s.children) do collect_open(c, ids) end
  if not s.closed then ids[#ids + 1] = s end
  return ids
end

--- Closes the session and its open children in one transaction (the bracket does this).
function Session:close(status, err)
  check_session(self, "s:close")
  if self.closed then return false end
  local list = collect_open(self, {})
  local ids = {}
  for i, x in ipairs(list) do ids[i] = x.id end
  local data = { status = status or "ok", beats = self.beats, spent = self.spent }
  if err ~= nil then data.error = describe_error(err) end
  host(2, sys.session_close, self.store.h, ids, data)
  for _, x in ipairs(list) do x.closed = true end
  return true
end

local function open_tree(fn, opts, parent, level, store)
  if type(opts) ~= "table" then argerr(fn, 1, "opts", "a table", opts, level) end
  if not plain_session_opts(opts) then shape_error(fn, "argument 1 (opts)", types.SessionOpts, opts, level + 1) end
  store = store or (parent and parent.store) or knl.open({ store = opts.store })
  local nodes = { { owner = opts.owner, budget = opts.budget, scope = opts.scope, labels = opts.labels,
    parent = parent and parent.id or nil } }
  for i, c in ipairs(opts.children or {}) do
    shape_error(fn, sformat("opts.children[%d]", i), types.SessionOpts, c, level + 1)
    nodes[#nodes + 1] = { owner = c.owner or opts.owner, budget = c.budget, scope = c.scope, labels = c.labels,
      parent_index = 1 }
  end
  local ids = host(level + 1, sys.session_open, store.h, nodes, true) -- deferred: see the header
  local root = new_session(store, ids[1], nodes[1], parent)
  for i = 2, #ids do
    root.children[#root.children + 1] = new_session(store, ids[i], nodes[i], root)
  end
  if parent then parent.children[#parent.children + 1] = root end
  return root
end

local function bracket(s, fn)
  local r = table.pack(pcall(fn, s))
  if r[1] then
    if not s.closed then s:close("ok") end
    return table.unpack(r, 2, r.n)
  end
  local err = r[2]
  if not s.closed then
    local fatal = is_fatal(err)
    if fatal then
      pcall(s.close, s, fatal, fatal == "cancelled" and "cancelled" or nil)
    else
      pcall(s.close, s, "error", err)
    end
  end
  error(err, 0)
end

--- Opens a session; with `fn`, runs fn(s) and closes it either way, returning what fn returns.
-- Without `fn`, returns the open session: close it with `s:close()` (the run closes it as
-- `interrupted` otherwise).
function knl.session(opts, fn)
  if fn ~= nil and type(fn) ~= "function" then argerr("knl.session", 2, "fn", "a function or nil", fn) end
  local s = open_tree("knl.session", opts, nil, 2)
  if fn == nil then return s end
  return bracket(s, fn)
end

--- Opens a child session of `s` (its seed event names the parent), bracketed like knl.session.
function Session:spawn(opts, fn)
  check_session(self, "s:spawn")
  if self.closed then error(sformat("s:spawn: session %s is closed", self.id), 2) end
  if fn ~= nil and type(fn) ~= "function" then argerr("s:spawn", 2, "fn", "a function or nil", fn) end
  local child = open_tree("s:spawn", opts or {}, self, 2)
  if fn == nil then return child end
  return bracket(child, fn)
end

--- Store-level session on an opened store.
function Store:session(opts, fn)
  check_store(self, "store:session")
  opts = opts or {}
  if fn ~= nil and type(fn) ~= "function" then argerr("store:session", 2, "fn", "a function or nil", fn) end
  local s = open_tree("store:session", opts, nil, 2, self)
  if fn == nil then return s end
  return bracket(s, fn)
end

-- devices ----------------------------------------------------------------------------------------

local devices = setmetatable({}, { __mode = "k" }) -- proxy -> inner spec

local function frozen(fn_name, t)
  local proxy = {}
  setmetatable(proxy, {
    __index = t,
    __newindex = function(_, k)
      error(sformat("%s: a device is frozen; field '%s' cannot be changed (build a new device with knl.device)",
        fn_name, tostring(k)), 2)
    end,
    __pairs = function() return next, t, nil end,
    __len = function() return #t end,
    __metatable = "knl.device (frozen)",
  })
  return proxy
end

-- Tool names of a device's tools array, by array identity: the kernel builds that array once per
-- device and never changes it, so its names are listed once, not on every beat.
local device_tool_names = setmetatable({}, { __mode = "k" })

local function freeze_list(list)
  local c = {}
  for i, v in ipairs(list) do c[i] = v end
  return frozen("knl.device", c)
end

--- A frozen bundle of policy: { llm, tools, tool_policy, fold, filters, system, cost }.
function knl.device(spec)
  if type(spec) ~= "table" then argerr("knl.device", 1, "spec", "a table", spec) end
  if not plain_device_spec(spec) then shape_error("knl.device", "argument 1 (spec)", types.DeviceSpec, spec, 2) end
  local llm = spec.llm
  if type(llm.chat) ~= "function" then
    error("knl.device: argument 1 (spec) field 'llm' must be a Port with a chat method (port:chat(request))", 2)
  end
  for k in pairs(spec) do
    if not types.DeviceSpec.fields[k] then
      error(sformat("knl.device: argument 1 (spec) has unknown field '%s' (known: llm, tools, tool_policy, fold, filters, system, cost)", tostring(k)), 2)
    end
  end
  local tools = spec.tools
  if tools ~= nil and not (type(tools.list) == "function" and type(tools.call) == "function") then
    tools = require("knl_adapter").tools(tools)
  end
  local specs = tools and tools:list() or {}
  -- the request's tools: one array per device, so a Port sees the same list every beat and
  -- encodes it once (treat it as a value; a filter that changes tools returns a new request)
  local tools_array
  if #specs > 0 then
    tools_array = std.json.array()
    for i, t in ipairs(specs) do tools_array[i] = t end
    local names = std.json.array()
    for i, t in ipairs(specs) do names[i] = t.name end
    device_tool_names[tools_array] = names
  end
  local inner = {
    llm = llm,
    tools = tools,
    tool_specs = freeze_list(specs),
    tools_array = tools_array,
    tool_policy = type(spec.tool_policy) == "table" and frozen("knl.device", spec.tool_policy) or spec.tool_policy,
    fold = spec.fold,
    filters = spec.filters and freeze_list(spec.filters) or nil,
    system = spec.system,
    cost = spec.cost,
  }
  local proxy = frozen("knl.device", inner)
  devices[proxy] = inner
  return proxy
end

-- records ----------------------------------------------------------------------------------------

local function names_of(tools)
  local hit = tools and device_tool_names[tools]
  if hit then return hit end
  local out = std.json.array()
  for i, t in ipairs(tools or {}) do out[i] = t.name end
  return out
end

local record = {}
knl.record = record

-- Sampling fields of a request, each the request's own or else its Port's open-time default.
local SAMPLING = { "temperature", "top_p", "top_k", "seed", "stop" }

local function request_data(req, profile)
  local last = req.messages and req.messages[#req.messages]
  local d = {
    model = profile and profile.model or req.model,
    provider = profile and profile.provider or nil,
    message_count = req.messages and #req.messages or 0,
    last_role = last and last.role or nil,
    tools = names_of(req.tools),
    system = req.system ~= nil,
    max_tokens = req.max_tokens or (profile and profile.max_tokens) or nil,
    tool_choice = req.tool_choice,
  }
  local sampling = profile and profile.sampling
  for i = 1, #SAMPLING do
    local k = SAMPLING[i]
    local v = req[k]
    if v == nil and sampling then v = sampling[k] end
    if type(v) == "number" or type(v) == "string" or (k == "stop" and type(v) == "table") then d[k] = v end
  end
  return d
end

--- `llm_request`: what was asked (the messages themselves are already in the log).
function record.llm_request(s, req, beat, profile)
  return append(s, "llm_request", request_data(req, profile), nil, beat)
end

-- The data of an `llm_response` event, and its usage with total_tokens filled in. What the server
-- reports it did to the conversation (Anthropic's `context_management`, e.g. the tool uses context
-- editing cleared) is kept as it came: it is in no message, and the log is the only place it lives.
local function response_data(resp, elapsed_ms)
  local u = resp.usage or {}
  local usage = {
    input_tokens = u.input_tokens or 0, output_tokens = u.output_tokens or 0,
    cache_read_input_tokens = u.cache_read_input_tokens, cache_creation_input_tokens = u.cache_creation_input_tokens,
    thinking_tokens = u.thinking_tokens,
  }
  usage.total_tokens = u.total_tokens or (usage.input_tokens + usage.output_tokens)
  usage.cost_usd = u.cost_usd -- what llm_proto priced the call at, when the model has a price
  return { content = resp.content, stop_reason = resp.stop_reason, model = resp.model, usage = usage,
    elapsed_ms = elapsed_ms, context_management = resp.context_management }, usage
end

--- `llm_response`: the normalised response, with total_tokens filled in. Returns seq, usage.
function record.llm_response(s, resp, beat, elapsed_ms)
  local data, usage = response_data(resp, elapsed_ms)
  return append(s, "llm_response", data, nil, beat), usage
end

function record.llm_call_failed(s, err, beat, elapsed_ms)
  return append(s, "llm_call_failed", { error = describe_error(err), elapsed_ms = elapsed_ms }, nil, beat)
end

function record.tool_call(s, call, beat)
  return append(s, "tool_call", { id = call.id, name = call.name, input = call.input }, nil, beat)
end

function record.tool_result(s, call, content, is_error, beat, elapsed_ms)
  return append(s, "tool_result", { id = call.id, name = call.name, content = content, is_error = is_error == true,
    elapsed_ms = elapsed_ms }, nil, beat)
end

-- beats ------------------------------------------------------------------------------------------

-- A beat's own records are deferred (see the header): they commit before the run next acts
-- outside Lua.
local function call_failed(s, err, beat, elapsed_ms)
  append(s, "llm_call_failed", { error = describe_error(err), elapsed_ms = elapsed_ms }, nil, beat, true)
end

-- A function policy may answer a third value, a table: the record of its decision, which the beat
-- files as a `policy_decision` event with the call (in the beat's batch, before the tool runs).
local function policy_verdict(policy, call, s)
  if policy == nil then return true end
  if type(policy) == "function" then
    local ok, verdict, why, rec = pcall(policy, call, s)
    if not ok then return false, "tool_policy raised: " .. describe_error(verdict) end
    if type(rec) ~= "table" then rec = nil end
    if verdict == nil or verdict == true then return true, nil, rec end
    if verdict == "stop" then return "stop", why or "stopped by the tool policy", rec end
    return false, why or "denied by the tool policy", rec
  end
  local function has(list)
    for _, n in ipairs(list or {}) do if n == call.name then return true end end
    return false
  end
  if policy.deny and has(policy.deny) then return false, "denied by the tool policy" end
  if policy.allow and not has(policy.allow) then return false, "not in the tool policy's allow list" end
  return true
end

local function encode_result(v)
  if type(v) == "string" then return v end
  if v == nil then return "" end
  local ok, s = pcall(std.json.encode, v)
  return ok and s or tostring(v)
end

local function text_of(content)
  local parts = {}
  for _, b in ipairs(content) do if b.type == "text" then parts[#parts + 1] = b.text end end
  return concat(parts)
end

-- What a beat costs (the device's `cost`, else tokens for a `tokens` budget, else 1); charges the
-- session and returns the `budget_charge` data.
local function charge_for(dev, budget, s, out)
  local cost
  if dev.cost then
    local cok, c = pcall(dev.cost, out, s)
    if not cok or type(c) ~= "number" then
      cost = 1
      log.warn(sformat("knl.beat: the device's cost function %s; charged 1", cok and "returned no number" or
        ("raised: " .. describe_error(c))))
    else
      cost = c
    end
  elseif budget.tag == "tokens" then
    cost = out.usage.total_tokens
  else
    cost = 1
  end
  s.spent = s.spent + cost
  return { tag = budget.tag, amount = cost, spent = s.spent, remaining = budget.amount - s.spent }
end

-- The caller's look at a response before any of its tools runs (`opts.on_response(out, s)`):
-- nil or false lets the beat go on; a string stops it with that reason; raising stops it too
-- (a cancel or os.exit is re-raised).
local function response_verdict(f, out, s)
  if f == nil then return nil end
  local ok, r = pcall(f, out, s)
  if not ok then
    if is_fatal(r) then error(r, 0) end
    return "on_response raised: " .. describe_error(r)
  end
  if r == nil or r == false then return nil end
  return type(r) == "string" and r or describe_error(r)
end

-- The common case of `lcheck(resp, types.Response)` (keep in step with knl_types.Response)
-- without building a path per field: true only when the full check passes too; anything else
-- goes to lcheck, which decides and words the reason.
local function opt_type(v, t) return v == nil or type(v) == t end
local BLOCK_OK = {
  text = function(b) return type(b.text) == "string" end,
  tool_use = function(b) return type(b.id) == "string" and type(b.name) == "string" and type(b.input) == "table" end,
  thinking = function(b) return type(b.thinking) == "string" and opt_type(b.signature, "string") end,
  tool_result = function(b)
    return type(b.tool_use_id) == "string" and b.content ~= nil and opt_type(b.is_error, "boolean")
  end,
}
local function plain_response(resp)
  if type(resp) ~= "table" or not (opt_type(resp.stop_reason, "string") and opt_type(resp.model, "string")
      and opt_type(resp.context_management, "table")) then
    return false
  end
  local u = resp.usage
  if u ~= nil and not (type(u) == "table" and type(u.input_tokens) == "number" and type(u.output_tokens) == "number"
      and opt_type(u.total_tokens, "number") and opt_type(u.cache_read_input_tokens, "number")
      and opt_type(u.cache_creation_input_tokens, "number") and opt_type(u.thinking_tokens, "number")) then
    return false
  end
  local content = resp.content
  if type(content) ~= "table" then return false end
  local n, count = #content, 0
  for _ in pairs(content) do count = count + 1 end
  if count ~= n then return false end
  for i = 1, n do
    local b = content[i]
    if type(b) ~= "table" then return false end
    local ok = BLOCK_OK[b.type]
    if not (ok and ok(b)) then return false end
  end
  return true
end
--- The kernel's pure, I/O-free helpers, for specs (`knl._test_helpers().plain_response(r)`, which
-- a spec holds to lcheck): a fresh table each call, not part of the API (names and shapes may
-- change with the code they test).
function knl._test_helpers()
  return {
    describe_error = describe_error,
    strip_pos = strip_pos,
    plain_budget = plain_budget,
    plain_session_opts = plain_session_opts,
    plain_device_spec = plain_device_spec,
    plain_response = plain_response,
    as_blocks = as_blocks,
    push_message = push_message,
    names_of = names_of,
    request_data = request_data,
    response_data = response_data,
    policy_verdict = policy_verdict,
    encode_result = encode_result,
    text_of = text_of,
  }
end

--- One model call plus the tools it asks for, charged to the session's budget.
-- `opts` = { max_tokens, tool_choice } passed into the request, and `on_response(out, s)`: called
-- once the response is recorded and before any tool runs (`out` as in the Outcome, `out.tools`
-- still empty); returning a reason (a string) stops the beat — each tool call it asked for is
-- answered `not run: <reason>` with is_error, `beat_stopped` records `where = "on_response"`,
-- and the Outcome is `stopped` (with `out`). A loop that decides per turn (on_turn callbacks,
-- its own limits) needs this: by the time the beat returns, the tools have run.
function knl.beat(s, device, opts)
  check_session(s, "knl.beat", 2)
  local dev = devices[device]
  if not dev then argerr("knl.beat", 2, "device", "a device from knl.device", device) end
  if opts ~= nil and type(opts) ~= "table" then argerr("knl.beat", 3, "opts", "a table or nil", opts) end
  if s.closed then error(sformat("knl.beat: session %s is closed", s.id), 2) end
  opts = opts or {}
  local on_response = opts.on_response
  if on_response ~= nil and type(on_response) ~= "function" then
    error("knl.beat: argument 3 (opts) field 'on_response' must be a function, got " .. type(on_response), 2)
  end
  -- Every beat has its own number, a refused one too: two refusals in a row are two beats, each
  -- with its own `beat_refused` (and its own row in views.beats).
  local beat = s.beats + 1
  s.beats = beat
  local budget = s.budget
  if budget and s.spent >= budget.amount then
    local reason = sformat("budget exhausted: spent %s of %s %s", tostring(s.spent), tostring(budget.amount), budget.tag)
    append(s, "beat_refused", { reason = reason, spent = s.spent, amount = budget.amount, tag = budget.tag }, nil, beat,
      true)
    return Outcome.refused({ beat = beat, reason = reason })
  end

  local messages, prev, same = copy_messages(s)
  -- Sent as it is (no fold or filter to edit it), the copy is declared to llm_proto as extending the
  -- previous beat's, so converting and encoding the request costs what the turn added; a list a
  -- fold or a filter may have edited in place, or one after a caller's own `messages()`, is
  -- compared instead (llm_proto.convert_list).
  local plain = not dev.fold and not (dev.filters and #dev.filters > 0)
  if plain and prev and prev == s._beat_list then
    local proto = package.loaded["llm_proto"]
    if type(proto) == "table" and proto.extends then proto.extends(messages, prev, same) end
  end
  s._beat_list = plain and messages or nil
  if dev.fold then
    local ok, m = pcall(dev.fold, messages, s)
    if not ok then
      call_failed(s, "fold raised: " .. describe_error(m), beat, 0)
      return Outcome.error({ beat = beat, error = "fold raised: " .. describe_error(m) })
    end
    messages = m
  end
  local req = { messages = messages, system = dev.system, max_tokens = opts.max_tokens, tool_choice = opts.tool_choice,
    tools = dev.tools_array }
  for i, f in ipairs(dev.filters or {}) do
    local ok, r, why = pcall(f, req, s)
    if not ok then
      local e = sformat("filter %d raised: %s", i, describe_error(r))
      call_failed(s, e, beat, 0)
      return Outcome.error({ beat = beat, error = e })
    end
    if r == false then
      local reason = why or sformat("stopped by filter %d", i)
      append(s, "beat_stopped", { reason = reason, where = "filter" }, nil, beat, true)
      return Outcome.stopped({ beat = beat, reason = reason })
    end
    if type(r) == "table" then req = r end
  end

  local port = dev.llm
  append(s, "llm_request", request_data(req, port.profile), nil, beat, true)
  local t0 = clock()
  local ok, resp = pcall(port.chat, port, req)
  local elapsed = clock() - t0
  if not ok then
    call_failed(s, resp, beat, elapsed)
    if is_fatal(resp) then error(resp, 0) end
    return Outcome.error({ beat = beat, error = describe_error(resp), cause = type(resp) == "table" and resp or nil })
  end
  local valid, why = plain_response(resp)
  if not valid then valid, why = lcheck(resp, types.Response) end
  if not valid then
    local e = "the Port answered outside knl_types.Response: " .. why
    call_failed(s, e, beat, elapsed)
    return Outcome.error({ beat = beat, error = e })
  end
  local rdata, usage = response_data(resp, elapsed)
  local has_tools = false
  for _, b in ipairs(resp.content) do
    if b.type == "tool_use" then has_tools = true; break end
  end
  local out = { content = resp.content, text = text_of(resp.content), tools = {}, usage = usage,
    stop_reason = resp.stop_reason, model = resp.model }
  if not has_tools then
    -- Nothing runs between the response and its charge: both go to the host in one call.
    local charge = budget and charge_for(dev, budget, s, out)
    append_many(s, charge and { { kind = "llm_response", data = rdata }, { kind = "budget_charge", data = charge } }
      or { { kind = "llm_response", data = rdata } }, beat, true)
    local reason = response_verdict(on_response, out, s)
    if reason then
      append(s, "beat_stopped", { reason = reason, where = "on_response" }, nil, beat, true)
      return Outcome.stopped({ beat = beat, reason = reason, out = out })
    end
    return Outcome.ok({ beat = beat, out = out })
  end
  -- With tools, events go to the host (deferred, see the header) in as few calls as keep them
  -- honest: what is written before anything of the caller's runs (on_response, a policy
  -- function, a tool) is handed over right then, so it carries the time it happened, the fold
  -- is current when the caller looks, and the commit the caller's first effect triggers has
  -- it; the rest — results of calls that do not run, the charge, a stop — travels with the
  -- next hand-over.
  local batch = { { kind = "llm_response", data = rdata } }
  local function flush()
    if #batch > 0 then
      append_many(s, batch, beat, true)
      batch = {}
    end
  end
  local calls = out.tools
  local stopped, stopped_where
  local asked = false
  local policy = dev.tool_policy
  for _, b in ipairs(resp.content) do
    if b.type == "tool_use" then
      local call = { id = b.id, name = b.name, input = b.input }
      batch[#batch + 1] = { kind = "tool_call", data = { id = call.id, name = call.name, input = call.input } }
      if not asked then
        asked = true
        if on_response then
          flush()
          stopped = response_verdict(on_response, out, s)
          if stopped then stopped_where = "on_response" end
        end
      end
      calls[#calls + 1] = call
      local content, is_error
      local t1 = clock()
      if stopped then
        content, is_error = "not run: " .. stopped, true
      else
        if type(policy) == "function" then flush() end
        local verdict, reason, rec = policy_verdict(policy, call, s)
        if rec then batch[#batch + 1] = { kind = "policy_decision", data = rec } end
        if verdict == "stop" then
          stopped, stopped_where = reason, "tool_policy"
          content, is_error = "not run: " .. reason, true
        elseif not verdict then
          content, is_error = "denied: " .. reason, true
        elseif not dev.tools then
          content, is_error = sformat("unknown tool '%s': the device has no tools", call.name), true
        else
          flush()
          local tok, res = pcall(dev.tools.call, dev.tools, call.name, call.input,
            { session = s, beat = beat, id = call.id })
          if tok then content, is_error = encode_result(res), false
          elseif is_fatal(res) then
            record.tool_result(s, call, describe_error(res), true, beat, clock() - t1)
            error(res, 0)
          else content, is_error = describe_error(res), true end
        end
      end
      batch[#batch + 1] = { kind = "tool_result", data = { id = call.id, name = call.name, content = content,
        is_error = is_error == true, elapsed_ms = clock() - t1 } }
      call.result, call.is_error = content, is_error
    end
  end

  if budget then batch[#batch + 1] = { kind = "budget_charge", data = charge_for(dev, budget, s, out) } end
  if stopped then batch[#batch + 1] = { kind = "beat_stopped", data = { reason = stopped, where = stopped_where } } end
  flush()
  if stopped then return Outcome.stopped({ beat = beat, reason = stopped, out = out }) end
  return Outcome.ok({ beat = beat, out = out })
end

-- views ------------------------------------------------------------------------------------------

local views = {}
knl.views = views

local TOKENS = "COALESCE(json_extract(data, '$.usage.%s'), json_extract(data, '$.%s'), 0)"
local function tok(name) return sformat(TOKENS, name, name) end

--- One row per beat: beat, started, ended, calls, tool_calls, input_tokens, output_tokens, outcome.
function views.beats(s)
  return s:query(sformat([[
    SELECT CAST(json_extract(meta, '$.beat') AS INTEGER) AS beat,
      MIN(epoch_ms) AS started, MAX(epoch_ms) AS ended,
      SUM(kind = 'llm_request') AS calls, SUM(kind = 'tool_call') AS tool_calls,
      SUM(CASE WHEN kind = 'llm_response' THEN %s ELSE 0 END) AS input_tokens,
      SUM(CASE WHEN kind = 'llm_response' THEN %s ELSE 0 END) AS output_tokens,
      CASE WHEN SUM(kind = 'beat_refused') > 0 THEN 'refused'
           WHEN SUM(kind = 'llm_call_failed') > 0 THEN 'error'
           WHEN SUM(kind = 'beat_stopped') > 0 THEN 'stopped'
           ELSE 'ok' END AS outcome
    FROM events WHERE stream = ? AND json_extract(meta, '$.beat') IS NOT NULL
    GROUP BY 1 ORDER BY 1]], tok("input_tokens"), tok("output_tokens")), { s.id })
end

--- Each tool call with its result (nil while pending): seq, beat, id, name, input, content, is_error, ms.
-- A call's result is the first `tool_result` after it with the same id in the same beat: servers
-- that number their tool-use ids per response (`call_0`, `call_1`, ...) reuse them across turns,
-- so an id alone would pair a call with every later turn's result too. One row per call.
function views.tool_pairs(s)
  local rows = s:query([[
    SELECT c.seq AS seq, CAST(json_extract(c.meta, '$.beat') AS INTEGER) AS beat,
      json_extract(c.data, '$.id') AS id, json_extract(c.data, '$.name') AS name,
      json_extract(c.data, '$.input') AS input, json_extract(r.data, '$.content') AS content,
      json_extract(r.data, '$.is_error') AS is_error, r.epoch_ms - c.epoch_ms AS ms
    FROM events c LEFT JOIN events r ON r.stream = c.stream AND r.seq = (
      SELECT x.seq FROM events x
      WHERE x.stream = c.stream AND x.seq > c.seq AND x.kind = 'tool_result'
        AND json_extract(x.meta, '$.beat') IS json_extract(c.meta, '$.beat')
        AND json_extract(x.data, '$.id') = json_extract(c.data, '$.id')
      ORDER BY x.seq LIMIT 1)
    WHERE c.stream = ? AND c.kind = 'tool_call' ORDER BY c.seq]], { s.id })
  for _, r in ipairs(rows) do
    if type(r.input) == "string" then r.input = std.json.decode(r.input) end
    if r.is_error ~= nil then r.is_error = r.is_error == 1 end
  end
  return rows
end

--- The budget's ledger: one row per charge (beat, tag, amount, spent, remaining) and per refusal.
function views.ledger(s)
  return s:query([[
    SELECT seq, CAST(json_extract(meta, '$.beat') AS INTEGER) AS beat, kind,
      json_extract(data, '$.tag') AS tag, json_extract(data, '$.amount') AS amount,
      json_extract(data, '$.spent') AS spent, json_extract(data, '$.remaining') AS remaining
    FROM events WHERE stream = ? AND kind IN ('budget_charge', 'beat_refused') ORDER BY seq]], { s.id })
end

--- Token usage per model: model, calls, input/output/total/cache/thinking tokens.
function views.usage(s)
  return s:query(sformat([[
    SELECT json_extract(data, '$.model') AS model, COUNT(*) AS calls,
      SUM(%s) AS input_tokens, SUM(%s) AS output_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.total_tokens'), %s + %s)) AS total_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.cache_read_input_tokens'), 0)) AS cache_read_input_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.cache_creation_input_tokens'), 0)) AS cache_creation_input_tokens,
      SUM(COALESCE(json_extract(data, '$.usage.thinking_tokens'), 0)) AS thinking_tokens
    FROM events WHERE stream = ? AND kind = 'llm_response' GROUP BY 1 ORDER BY 1]],
    tok("input_tokens"), tok("output_tokens"), tok("input_tokens"), tok("output_tokens")), { s.id })
end

--- Sessions of the store, newest first: id, owner, labels, started, closed, status, beats, tokens.
-- `opts.labels` filters on the seed event's meta; `opts.limit` bounds the rows.
function views.sessions(s, opts)
  opts = opts or {}
  local where, params = { "o.kind = 'session_open'" }, {}
  local keys = {}
  for k in pairs(opts.labels or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    where[#where + 1] = "CAST(json_extract(o.meta, ?) AS TEXT) = ?"
    params[#params + 1] = '$."' .. k:gsub('"', '""') .. '"'
    params[#params + 1] = tostring(opts.labels[k])
  end
  params[#params + 1] = opts.limit or -1
  local rows = s:query([[
    SELECT o.stream AS id, json_extract(o.data, '$.owner') AS owner, o.meta AS meta, o.epoch_ms AS started,
      (SELECT json_extract(c.data, '$.status') FROM events c
        WHERE c.stream = o.stream AND c.kind = 'session_close' LIMIT 1) AS status,
      (SELECT COUNT(*) FROM events c WHERE c.stream = o.stream AND c.kind = 'session_close') AS closes,
      (SELECT COUNT(*) FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_request') AS beats,
      (SELECT COALESCE(SUM(COALESCE(json_extract(r.data, '$.usage.total_tokens'),
                                    json_extract(r.data, '$.input_tokens') + json_extract(r.data, '$.output_tokens'),
                                    0)), 0)
         FROM events r WHERE r.stream = o.stream AND r.kind = 'llm_response') AS tokens
    FROM events o WHERE ]] .. concat(where, " AND ") .. [[ ORDER BY o.position DESC LIMIT ?]], params)
  for _, r in ipairs(rows) do
    r.closed = r.closes > 0
    r.closes = nil
    r.labels = type(r.meta) == "table" and r.meta or {}
    r.meta = nil
  end
  return rows
end

-- published surface ------------------------------------------------------------------------------

--- The kernel's published surface: the event table's columns, kinds, views, outcomes.
function knl.api()
  return {
    version = knl.VERSION,
    table = "events",
    schema = sys.schema(),
    kinds = { "session_open", "session_close", "msg_user", "msg_assistant", "llm_request", "llm_response",
      "llm_call_failed", "tool_call", "tool_result", "policy_decision", "budget_charge", "beat_refused", "beat_stopped" },
    builtin_views = { "events", "tail" },
    views = { "beats", "tool_pairs", "ledger", "usage", "sessions" },
    outcomes = Outcome.KINDS,
  }
end

return knl
