--- supervisor: the shell pack for trees of loops — stop predicates, child loops, restarts, reports.
--
-- With `policy` it is one set: `policy` fills a device's seams, this pack decides when a loop
-- over that device should stop, and runs loops as children of a parent session. A pack is a
-- value you consult in your loop, not a registry the host reads (see the `policy` header).
--
--   supervisor.stop.*      stop predicates, each `pred(state) -> reason | nil`:
--                          `no_progress(n)` (n beats in a row without progress: by default a
--                          beat whose tool calls include a successful one not made before),
--                          `repeated_call(n)` (the same tool call, name and input, n times in a
--                          row), `budget_fraction(f)` (f of the grant spent), `wall_clock(sec)`
--                          and `max_beats(n)`.
--   supervisor.watch(preds, opts?)  a watcher over a loop: `w:observe(outcome, s)` folds one
--                          beat's outcome into its state and answers the first predicate's
--                          reason; `w:reset()` starts a fresh attempt (the grant's clock and
--                          spending carry on). `opts.progress(out, state) -> bool` says what
--                          progress is; `opts.budget` / `opts.spent` describe the grant.
--   supervisor.child(s, spec)  runs one child loop under session `s`: a child session
--                          (`s:spawn`, owner = spec.name, its own budget) beating `spec.device`
--                          on `spec.prompt` until the model answers without tools (`done`), the
--                          budget is refused (`budget`), a beat fails (`error`) or stops
--                          (`stopped`), `spec.max_beats` pass (`max_beats`), or a predicate of
--                          `spec.stop` fires (`stalled`). A stalled child is restarted
--                          (`spec.restarts` times, default 0) in a fresh child session — a fresh
--                          fold: the conversation starts again from the prompt, with a note of
--                          why the last attempt stopped — under what is left of its grant.
--                          Answers its report; a child's failure is in the report, never raised
--                          (a cancel or the run's end passes through).
--   supervisor.run(s, specs, opts?)  the children in order under `s`, the parent going on past
--                          a child that failed or ran out of budget (`opts.stop_after(report)`
--                          returning true ends the tree early). Answers `{ ok, children,
--                          usage, spent }`; `ok` when every child is `done`.
--   supervisor.report(c)   what one session spent, read from the kernel's views (`beats`,
--                          `usage`, `tool_pairs`): beats, calls, tool_calls, tokens, cost_usd.
--
-- A child report is `{ name, status, reason, attempts, sessions, beats, tool_calls, spent, tag,
-- usage, content }` — `spent` in the budget's unit over all attempts, `usage` summed from
-- `knl.views.usage` over the attempts' sessions. Each attempt's session carries the labels
-- `child` and `attempt`, and ends with a `supervisor_child` event { status, reason, attempt }.
--
-- Invariants: a child runs in its own session, so its log, budget and views are its own and a
-- parent's fold never sees a child's turns; predicates see only the state, never the session's
-- internals; nothing here writes outside the kernel's log.
local type, ipairs, tostring, error, pcall, setmetatable, sformat =
  type, ipairs, tostring, error, pcall, setmetatable, string.format

local M = {}
local stop = {}
M.stop = stop

local DEFER = { defer = true }
local is_fatal = std.task.is_fatal

local function now_ms() return std.time.millis() end

local function argerr(fn, i, name, expected, v)
  error(sformat("%s: argument %d (%s) must be %s, got %s", fn, i, name, expected, type(v)), 3)
end

local function positive_int(fn, n)
  if math.type(n) ~= "integer" or n < 1 then argerr(fn, 1, "n", "a positive integer", n) end
end

-- predicates ------------------------------------------------------------------------------------

--- Stops after `n` beats in a row without progress.
function stop.no_progress(n)
  positive_int("supervisor.stop.no_progress", n)
  return function(st)
    if st.beats - st.progress_beat >= n then return sformat("no progress for %d beats", n) end
  end
end

--- Stops when the same tool call (name and input) was made `n` times in a row.
function stop.repeated_call(n)
  positive_int("supervisor.stop.repeated_call", n)
  return function(st)
    if st.repeats >= n then return sformat("the same tool call (%s) %d times in a row", st.last_call_name, n) end
  end
end

--- Stops once `f` (0 < f <= 1) of the grant is spent.
function stop.budget_fraction(f)
  if type(f) ~= "number" or f <= 0 or f > 1 then
    argerr("supervisor.stop.budget_fraction", 1, "f", "a number in (0, 1]", f)
  end
  return function(st)
    if st.budget and st.spent >= f * st.budget.amount then
      return sformat("%g%% of the budget spent (%g of %g %s)", f * 100, st.spent, st.budget.amount,
        st.budget.tag or "beats")
    end
  end
end

--- Stops once `seconds` have passed since the watch began.
function stop.wall_clock(seconds)
  if type(seconds) ~= "number" or seconds <= 0 then
    argerr("supervisor.stop.wall_clock", 1, "seconds", "a positive number", seconds)
  end
  return function(st)
    if now_ms() - st.started_ms >= seconds * 1000 then return sformat("wall-clock limit of %gs reached", seconds) end
  end
end

--- Stops after `n` beats of the attempt.
function stop.max_beats(n)
  positive_int("supervisor.stop.max_beats", n)
  return function(st)
    if st.beats >= n then return sformat("%d beats", n) end
  end
end

-- watch -----------------------------------------------------------------------------------------

local Watch = {}
Watch.__index = Watch

local function call_key(c)
  local ok, enc = pcall(std.json.encode, c.input or {})
  return c.name .. "\0" .. (ok and enc or "?")
end

-- Default progress: a beat whose tool calls include a successful one not made before.
local function default_progress(out, st)
  local any = false
  for _, c in ipairs(out.tools or {}) do
    if not c.is_error then
      local k = call_key(c)
      if not st.seen[k] then any = true end
    end
  end
  return any
end

--- A watcher over a loop's beats (see the header).
function M.watch(preds, opts)
  if preds ~= nil and type(preds) ~= "table" then
    argerr("supervisor.watch", 1, "preds", "a list of predicates", preds)
  end
  opts = opts or {}
  for i, p in ipairs(preds or {}) do
    if type(p) ~= "function" then
      error(sformat("supervisor.watch: argument 1 (preds) element %d must be a function, got %s", i, type(p)), 2)
    end
  end
  if opts.progress ~= nil and type(opts.progress) ~= "function" then
    error("supervisor.watch: opts.progress must be a function, got " .. type(opts.progress), 2)
  end
  local w = setmetatable({ preds = preds or {}, progress = opts.progress or default_progress,
    state = { budget = opts.budget, spent_before = opts.spent or 0, spent = opts.spent or 0, started_ms = now_ms() },
  }, Watch)
  w:reset()
  return w
end

--- Starts a fresh attempt: beats, progress and repeats start over; the clock and spending go on.
function Watch:reset()
  local st = self.state
  st.beats, st.progress_beat, st.repeats, st.last_call, st.last_call_name, st.seen = 0, 0, 0, nil, nil, {}
  st.spent_before = st.spent
  return self
end

--- Folds one beat's outcome (session `s`, whose `spent` is this attempt's) into the state;
-- answers the first predicate's reason, or nil.
function Watch:observe(outcome, s)
  local st = self.state
  st.beats = st.beats + 1
  st.outcome = outcome
  if s then st.spent = st.spent_before + (s.spent or 0) end
  local out = outcome and outcome.out
  if out then
    local ok, progressed = pcall(self.progress, out, st)
    if not ok then
      if is_fatal(progressed) then error(progressed, 0) end
      log.warn("supervisor: the progress function raised: " .. tostring(progressed))
    elseif progressed then
      st.progress_beat = st.beats
    end
    for _, c in ipairs(out.tools or {}) do
      local k = call_key(c)
      if k == st.last_call then st.repeats = st.repeats + 1 else st.repeats, st.last_call = 1, k end
      st.last_call_name = c.name
      st.seen[k] = true
    end
  end
  for _, p in ipairs(self.preds) do
    local r = p(st)
    if r then return r end
  end
  return nil
end

-- reports ---------------------------------------------------------------------------------------

--- What session `c` spent, from the kernel's views.
function M.report(c)
  local knl = require("knl")
  local r = { session_id = c.id, beats = 0, calls = 0, tool_calls = 0, input_tokens = 0, output_tokens = 0,
    total_tokens = 0, cache_read_input_tokens = 0, cache_creation_input_tokens = 0, cost_usd = nil,
    spent = c.spent, tag = c.budget and c.budget.tag or nil }
  for _, b in ipairs(knl.views.beats(c)) do
    r.beats = r.beats + 1
    r.tool_calls = r.tool_calls + (b.tool_calls or 0)
  end
  for _, u in ipairs(knl.views.usage(c)) do
    r.calls = r.calls + u.calls
    for _, k in ipairs({ "input_tokens", "output_tokens", "total_tokens", "cache_read_input_tokens",
      "cache_creation_input_tokens" }) do
      r[k] = r[k] + (u[k] or 0)
    end
  end
  local rows = c:query("SELECT SUM(json_extract(data, '$.usage.cost_usd')) AS usd FROM events " ..
    "WHERE stream = ? AND kind = 'llm_response'", { c.id })
  r.cost_usd = rows[1] and rows[1].usd or nil
  return r
end

local function add_into(acc, r)
  for _, k in ipairs({ "beats", "calls", "tool_calls", "input_tokens", "output_tokens", "total_tokens",
    "cache_read_input_tokens", "cache_creation_input_tokens" }) do
    acc[k] = (acc[k] or 0) + (r[k] or 0)
  end
  if r.cost_usd then acc.cost_usd = (acc.cost_usd or 0) + r.cost_usd end
end

-- children --------------------------------------------------------------------------------------

local function check_child(spec, i)
  local where = i and sformat("supervisor.run: child %d", i) or "supervisor.child"
  if type(spec) ~= "table" then error(sformat("%s: the spec must be a table, got %s", where, type(spec)), 3) end
  if type(spec.name) ~= "string" or spec.name == "" then
    error(sformat("%s: field 'name' must be a non-empty string", where), 3)
  end
  if type(spec.device) ~= "table" and type(spec.device) ~= "function" then
    error(sformat("%s (%s): field 'device' must be a knl.device or a function making one", where, spec.name), 3)
  end
  if type(spec.prompt) ~= "string" or spec.prompt == "" then
    error(sformat("%s (%s): field 'prompt' must be a non-empty string", where, spec.name), 3)
  end
  if spec.budget ~= nil and (type(spec.budget) ~= "table" or type(spec.budget.amount) ~= "number") then
    error(sformat("%s (%s): field 'budget' must be { amount, tag? }", where, spec.name), 3)
  end
end

local RESTARTABLE = { stalled = true }

-- One attempt in a child session: returns status, reason, last text.
local function attempt(knl, c, spec, device, w, note)
  local text = spec.prompt
  if note then text = text .. "\n\n" .. note end
  c:append({ kind = "msg_user", data = { content = text } }, DEFER)
  local max_beats = spec.max_beats or 20
  local beat_opts = spec.max_tokens and { max_tokens = spec.max_tokens } or nil
  local content = ""
  while true do
    local out = knl.beat(c, device, beat_opts)
    if out.out then content = out.out.text or content end
    if out.kind == "refused" then return "budget", out.reason, content end
    if out.kind == "error" then return "error", out.error, content end
    if out.kind == "stopped" then return "stopped", out.reason, content end
    if #out.out.tools == 0 and out.out.stop_reason ~= "pause_turn" then return "done", nil, content end
    local why = w:observe(out, c)
    if why then return "stalled", why, content end
    if c.budget and c.spent >= c.budget.amount then
      return "budget", sformat("budget exhausted: spent %g of %g %s", c.spent, c.budget.amount, c.budget.tag), content
    end
    if w.state.beats >= max_beats then return "max_beats", sformat("%d beats without an answer", max_beats), content end
  end
  -- unreachable
end

--- Runs one child loop under session `s` (see the header); answers its report.
function M.child(s, spec)
  check_child(spec)
  local knl = require("knl")
  local budget = spec.budget and { amount = spec.budget.amount, tag = spec.budget.tag or "beats" } or nil
  local w = M.watch(spec.stop, { progress = spec.progress, budget = budget })
  local report = { name = spec.name, attempts = 0, sessions = {}, spent = 0, tag = budget and budget.tag or nil,
    usage = {}, beats = 0, tool_calls = 0 }
  local note
  for n = 1, (spec.restarts or 0) + 1 do
    report.attempts = n
    local grant = budget and { amount = budget.amount - report.spent, tag = budget.tag } or nil
    if grant and grant.amount <= 0 then
      report.status, report.reason = "budget", "nothing left of the budget for another attempt"
      break
    end
    local device = spec.device
    if type(device) == "function" then device = device(n) end
    local ok, status, reason, content, rep = pcall(s.spawn, s, { owner = spec.name, budget = grant,
      labels = { child = spec.name, attempt = n } }, function(c)
      local st, why, text = attempt(knl, c, spec, device, w, note)
      c:append({ kind = "supervisor_child", data = { status = st, reason = why, attempt = n } }, DEFER)
      return st, why, text, M.report(c)
    end)
    if not ok then
      if is_fatal(status) then error(status, 0) end
      status, reason = "error", tostring(type(status) == "table" and status.message or status)
    else
      report.sessions[#report.sessions + 1] = rep.session_id
      report.spent = report.spent + (rep.spent or 0)
      add_into(report.usage, rep)
      report.beats = report.beats + rep.beats
      report.tool_calls = report.tool_calls + rep.tool_calls
      report.content = content
    end
    report.status, report.reason = status, reason
    if not RESTARTABLE[status] then break end
    w:reset()
    note = sformat("(Restart %d: the previous attempt stopped: %s. Take a different approach.)", n, tostring(reason))
  end
  return report
end

--- Runs the children in order under `s`; the parent goes on past a child that failed.
function M.run(s, specs, opts)
  if type(specs) ~= "table" then argerr("supervisor.run", 2, "specs", "a list of child specs", specs) end
  opts = opts or {}
  for i, spec in ipairs(specs) do check_child(spec, i) end
  local out = { ok = true, children = {}, usage = {}, spent = {} }
  for _, spec in ipairs(specs) do
    local r = M.child(s, spec)
    out.children[#out.children + 1] = r
    add_into(out.usage, r.usage)
    if r.tag then out.spent[r.tag] = (out.spent[r.tag] or 0) + r.spent end
    if r.status ~= "done" then out.ok = false end
    if opts.stop_after and opts.stop_after(r) then break end
  end
  return out
end

--- The module's pure helpers, for specs: a fresh table each call, not part of the API.
function M._test_helpers()
  return { call_key = call_key, default_progress = default_progress }
end

return M
