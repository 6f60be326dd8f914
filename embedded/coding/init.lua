--- coding: the loop that edits files until a verify command passes — `coding.run(opts)`.
--
-- A consumer built from the kernel and both shell packs: one kernel session (owner `coding`)
-- whose iterations are each some `knl.beat`s — the model reading and editing files through the
-- file tools of `std.fs` (`fs_read`, `fs_edit`, `fs_search_replace`; `fs_write` when
-- `opts.allow_write`) until it answers without tools — then the verify command. A pass ends the
-- run; a failure goes back to the model as the next iteration's message.
--
-- Options: prompt (the task, required), verify (required: a shell command run with `sh.exec` in
-- the project root with `verify_timeout` seconds, default 120 — or a Lua function answering
-- `{ code, stdout, stderr }`), files (the allow-list of what may be edited: paths or globs with
-- `*`, `?` and `**`, relative to the project root; nil = any file of the project), the model (a
-- Port as `llm`, or `provider` = anthropic | openai | replay with the Port's options as
-- agent.run takes them: model, api_key, base_url, replay, max_tokens, ...), max_iterations
-- (default 5), max_beats (model calls per iteration, default 20), budget (a `knl.Budget`, e.g.
-- `policy.budget.tokens(50000)` or `policy.budget.usd(0.5)` — a `usd` budget is charged by
-- `policy.cost.usd` with `prices`), rollback (true: a failed iteration's edits are undone with
-- `fs_rollback` before the next), verify_first (default true: verify before the first
-- iteration, so the model starts from the failure, and a passing project costs no model call),
-- tail_chars (default 2000), stop (`supervisor.stop` predicates, checked after each beat),
-- tool_policy (more `policy` pieces, after the allow-list), fold, filters, system, cost, store
-- (as agent.run's) and on_iteration(info) (returning false stops the run).
--
-- Result: `{ ok, iterations, modified_files, last_verify = { code, stdout_tail, stderr_tail },
-- stop_reason, usage, session_id, error? }` with `stop_reason` passed | stagnated (the same
-- failure twice with no edit between) | budget | max_iterations | stopped (a predicate,
-- on_iteration, or a tool policy's stop) | error; only `passed` is ok. `result.session` (through
-- the metatable) is the closed session.
--
-- Records: besides the kernel's own (`llm_*`, `tool_call` / `tool_result`, `budget_charge`) and
-- the policy pack's `policy_decision` for every file-tool call, each edit is a `coding_edit`
-- { iteration, tool, path } (under its beat), each verify run a `coding_verify` { iteration,
-- code, stdout_tail, stderr_tail, elapsed_ms (a command's), timed_out (when it did) } after a
-- `coding_start` { command, files, max_iterations, rollback }, each undo a `coding_rollback`
-- { iteration, path, ok, error }, and the end a `coding_result`.
--
-- Invariants: never throws (bad options, model and tool failures come back as a result); a
-- cancel or the run's end passes through after closing the session; nothing is edited outside
-- `files` (the allow-list is the first piece of the tool policy, so no later piece can allow
-- past it), and nothing outside the project root (the file tools' own confinement).
-- A consumer: vendor it (`agent-block vendor coding`) or shadow it and delegate to
-- `require("embedded.coding")`.
local policy = require("policy")
local supervisor = require("supervisor")
local proto = require("llm_proto")

local type, ipairs, pairs, tostring, error, pcall, setmetatable, sformat, concat =
  type, ipairs, pairs, tostring, error, pcall, setmetatable, string.format, table.concat

local M = {}
local DEFER = { defer = true }
local is_fatal = std.task.is_fatal

local EDIT_TOOLS = { fs_edit = true, fs_search_replace = true, fs_write = true }
local EDIT_ORDER = { "fs_edit", "fs_search_replace", "fs_write" }

local PORT_OPTS = {
  "model", "api_key", "api_key_env", "base_url", "dialect", "max_tokens", "timeout", "max_retries",
  "max_response_bytes", "tool_choice", "parallel_tool_calls", "thinking", "temperature", "cache_control",
  "extra_body", "prices", "replay", "replay_as",
}

-- files ------------------------------------------------------------------------------------------

-- A glob as a Lua pattern: `**` any run of characters, `*` and `?` within one segment.
local function glob_pattern(g)
  local out, i = { "^" }, 1
  while i <= #g do
    local c = g:sub(i, i)
    if c == "*" and g:sub(i + 1, i + 1) == "*" then
      if g:sub(i + 2, i + 2) == "/" then out[#out + 1] = "\1"; i = i + 3 else out[#out + 1] = ".*"; i = i + 2 end
    elseif c == "*" then out[#out + 1] = "[^/]*"; i = i + 1
    elseif c == "?" then out[#out + 1] = "[^/]"; i = i + 1
    else out[#out + 1] = c:gsub("[%^%$%(%)%%%.%[%]%+%-]", "%%%0"); i = i + 1 end
  end
  out[#out + 1] = "$"
  local p = concat(out)
  -- `**/` matches zero or more whole segments: both spellings are tried
  if p:find("\1", 1, true) then return { (p:gsub("\1", ".*/")), (p:gsub("\1", "")) } end
  return { p }
end

local function file_matcher(files)
  if files == nil then return nil end
  if type(files) == "string" then files = { files } end
  local pats = {}
  for _, g in ipairs(files) do
    local rel = policy.rel_path(g) or g
    for _, p in ipairs(glob_pattern(rel)) do pats[#pats + 1] = p end
  end
  return function(path)
    local rel = policy.rel_path(path)
    if not rel then return false end
    for _, p in ipairs(pats) do if rel:match(p) then return true end end
    return false
  end
end

local function check_opts(o)
  if type(o.prompt) ~= "string" or o.prompt == "" then return "coding.run: opts.prompt is required (the task)" end
  if type(o.verify) ~= "string" and type(o.verify) ~= "function" then
    return "coding.run: opts.verify is required: a shell command or a function answering { code, stdout, stderr }"
  end
  if type(o.verify) == "string" and o.verify:match("^%s*$") then
    return "coding.run: opts.verify is an empty command"
  end
  if o.files ~= nil and type(o.files) ~= "table" and type(o.files) ~= "string" then
    return "coding.run: opts.files must be a list of paths or globs, got " .. type(o.files)
  end
  if type(o.files) == "table" then
    for i, f in ipairs(o.files) do
      if type(f) ~= "string" or f == "" then
        return sformat("coding.run: opts.files[%d] must be a non-empty string", i)
      end
    end
  end
  for _, k in ipairs({ "max_iterations", "max_beats", "verify_timeout", "tail_chars" }) do
    if o[k] ~= nil and (type(o[k]) ~= "number" or o[k] <= 0) then
      return sformat("coding.run: opts.%s must be a positive number, got %s", k, tostring(o[k]))
    end
  end
  if o.budget ~= nil and (type(o.budget) ~= "table" or type(o.budget.amount) ~= "number" or o.budget.amount <= 0) then
    return "coding.run: opts.budget must be { amount = <positive number>, tag = \"tokens\"|\"usd\"|... }"
  end
  for _, k in ipairs({ "on_iteration", "fold", "cost" }) do
    if o[k] ~= nil and type(o[k]) ~= "function" then
      return sformat("coding.run: opts.%s must be a function, got %s", k, type(o[k]))
    end
  end
  for _, k in ipairs({ "stop", "filters" }) do
    if o[k] ~= nil and type(o[k]) ~= "table" then
      return sformat("coding.run: opts.%s must be a list of functions, got %s", k, type(o[k]))
    end
  end
  if o.tool_policy ~= nil and type(o.tool_policy) ~= "table" and type(o.tool_policy) ~= "function" then
    return "coding.run: opts.tool_policy must be a policy piece or a list of them, got " .. type(o.tool_policy)
  end
  if o.llm ~= nil and not (type(o.llm) == "table" and type(o.llm.chat) == "function") then
    return "coding.run: opts.llm must be a Port (a table with :chat)"
  end
  return nil
end

-- verify -----------------------------------------------------------------------------------------

local function tail(s, n)
  s = s or ""
  if #s <= n then return s end
  return s:sub(-n)
end

local function run_verify(o)
  local t0
  local r
  if type(o.verify) == "function" then
    local ok, v = pcall(o.verify)
    if not ok then
      if is_fatal(v) then error(v, 0) end
      r = { code = 1, stdout = "", stderr = "verify raised: " .. tostring(v) }
    elseif type(v) ~= "table" then
      r = { code = 1, stdout = "", stderr = "verify answered " .. type(v) .. ", not { code, stdout, stderr }" }
    else
      r = { code = v.code, stdout = v.stdout or "", stderr = v.stderr or "" }
    end
  else
    t0 = std.time.millis()
    local x = sh.exec(o.verify, { timeout = o.verify_timeout or 120 })
    r = { code = x.code, stdout = x.stdout or "", stderr = x.stderr or "", timed_out = x.timed_out }
    if not x.ok and x.error then r.stderr = r.stderr .. (r.stderr ~= "" and "\n" or "") .. x.error end
    if x.timed_out then
      r.stderr = r.stderr .. sformat("\n[verify timed out after %gs]", o.verify_timeout or 120)
    end
  end
  if t0 then r.elapsed_ms = std.time.millis() - t0 end -- a command's time (a Lua function's is its own)
  r.passed = r.code == 0
  return r
end

local function verify_view(v, n)
  return { code = v.code, stdout_tail = tail(v.stdout, n), stderr_tail = tail(v.stderr, n), timed_out = v.timed_out }
end

-- `v` a verify result (its view, with the tails, when `n` is nil).
local function failure_text(v, n)
  local lv = n and verify_view(v, n) or v
  return sformat("exit code: %s%s\n--- stdout (tail) ---\n%s\n--- stderr (tail) ---\n%s",
    tostring(lv.code), lv.timed_out and " (timed out)" or "", lv.stdout_tail, lv.stderr_tail)
end

-- the run ------------------------------------------------------------------------------------------

local session_of = setmetatable({}, { __mode = "k" })
local result_mt = { __index = function(r, k) if k == "session" then return session_of[r] end end }

local function open_port(o)
  if o.llm then return o.llm end
  local provider = o.provider or "anthropic"
  local P = require("llm_proto.port")[provider]
  if not P then
    error(sformat("coding.run: opts.provider must be anthropic, openai or replay, got %q", tostring(provider)), 0)
  end
  local popts = {}
  for _, k in ipairs(PORT_OPTS) do popts[k] = o[k] end
  return P:open(popts)
end

local function first_message(o, v, files_text)
  local parts = { o.prompt, "" }
  if files_text then parts[#parts + 1] = "Files you may edit: " .. files_text end
  parts[#parts + 1] = "Use fs_read to read files and fs_edit or fs_search_replace to change them. When you have " ..
    "made your changes, answer without calling a tool: the verify command then runs."
  if type(o.verify) == "string" then parts[#parts + 1] = "Verify command: " .. o.verify end
  if v then parts[#parts + 1] = "\nIt fails now:\n" .. failure_text(v, o.tail_chars or 2000) end
  return concat(parts, "\n")
end

--- Edits files until the verify command passes (see the header). Never throws (a cancel or
-- os.exit passes through).
function M.run(opts)
  local usage = proto.usage(0, 0, 0, 0, 0)
  local st = { iterations = 0, modified = {}, last_verify = nil }
  local s
  local function result(ok, stop_reason, err)
    local files = std.json.array()
    for p, n in pairs(st.modified) do if n > 0 then files[#files + 1] = p end end
    table.sort(files)
    local r = { ok = ok, iterations = st.iterations, modified_files = files, last_verify = st.last_verify,
      stop_reason = stop_reason, usage = usage, session_id = s and s.id or nil, error = err }
    return setmetatable(r, result_mt)
  end
  if type(opts) ~= "table" then
    return result(false, "error", "coding.run: argument 1 (opts) must be a table, got " .. type(opts))
  end
  local bad = check_opts(opts)
  if bad then return result(false, "error", bad) end
  local tail_n = opts.tail_chars or 2000

  local ok, a, b, c = pcall(function()
    local port = open_port(opts)
    local knl = require("knl")
    local okst, store = pcall(knl.open, { store = opts.store })
    if not okst then error("coding.run: opening the kernel store: " .. tostring(store), 0) end
    local budget = opts.budget and { amount = opts.budget.amount, tag = opts.budget.tag or "tokens" } or nil
    local cost = opts.cost
    if not cost and budget and budget.tag == "usd" then cost = policy.cost.usd({ prices = opts.prices }) end
    s = store:session({ owner = "coding", budget = budget })

    -- tools: the file tools, each edit recorded and counted for this iteration
    local allowed = { "fs_search_replace" }
    if opts.allow_write then allowed[#allowed + 1] = "fs_write" end
    -- no symlink anywhere on the way, checked as each file is opened: the allow-list checks names,
    -- so the file written must be the one its name says (a directory swapped for a symlink after
    -- the check would otherwise redirect the edit)
    local specs = std.fs.tool_specs({ allowed = allowed, no_symlinks = true })
    local rollback_handler = std.fs.tool_specs({ allowed = { "fs_rollback" }, no_symlinks = true })
    for _, t in ipairs(rollback_handler) do if t.name == "fs_rollback" then rollback_handler = t.handler; break end end
    local edits = {} -- this iteration's successful edits: paths, in order
    for _, t in ipairs(specs) do
      if EDIT_TOOLS[t.name] then
        local h, name = t.handler, t.name
        t.handler = function(input, ctx)
          local res = h(input, ctx)
          local rel = policy.rel_path(input.path) or tostring(input.path)
          edits[#edits + 1] = rel
          st.modified[rel] = (st.modified[rel] or 0) + 1
          s:append({ kind = "coding_edit", data = { iteration = st.iterations, tool = name, path = rel } },
            { defer = true, beat = s.beats })
          return res
        end
      end
    end

    -- the tool policy: the allow-list first, then the caller's pieces
    local pieces = {}
    local in_files = file_matcher(opts.files)
    if in_files then
      local pred = function(input)
        if in_files(input.path) then return true end
        return false, sformat("%s is not among the files this run may edit", tostring(input.path))
      end
      -- the globs are lexical: a symlink on the way would name a file they do not
      pieces[1] = policy.args(EDIT_ORDER, pred, policy.no_symlinks())
    end
    local extra = opts.tool_policy
    if type(extra) == "function" then extra = { extra } end
    for _, p in ipairs(extra or {}) do pieces[#pieces + 1] = p end

    local device = knl.device({
      llm = port,
      tools = specs,
      tool_policy = policy.tool_policy(pieces),
      fold = opts.fold,
      filters = opts.filters,
      system = opts.system,
      cost = cost,
    })
    -- the predicates' watch, only when there are predicates (it keys every tool call)
    local watch = opts.stop and #opts.stop > 0 and supervisor.watch(opts.stop, { budget = budget }) or nil
    local beat_opts = { max_tokens = opts.max_tokens }
    local max_iter = opts.max_iterations or 5
    local max_beats = opts.max_beats or 20

    local function verify(iteration)
      local v = run_verify(opts)
      st.last_verify = verify_view(v, tail_n)
      -- what the model is shown; the command is in `coding_start`, `timed_out` only when it did
      s:append({ kind = "coding_verify", data = { iteration = iteration, code = v.code,
        stdout_tail = st.last_verify.stdout_tail, stderr_tail = st.last_verify.stderr_tail, elapsed_ms = v.elapsed_ms,
        timed_out = v.timed_out or nil } }, DEFER)
      return v
    end
    -- what makes two failures the same: the code and the tails the model is shown
    local function signature()
      local lv = st.last_verify
      return tostring(lv.code) .. "\0" .. lv.stdout_tail .. "\0" .. lv.stderr_tail
    end

    s:append({ kind = "coding_start", data = { command = type(opts.verify) == "string" and opts.verify or "(function)",
      files = opts.files and
        std.json.array(type(opts.files) == "table" and { table.unpack(opts.files) } or { opts.files }) or nil,
      max_iterations = max_iter, rollback = opts.rollback == true } }, DEFER)
    local files_text = opts.files and concat(type(opts.files) == "table" and opts.files or { opts.files }, ", ") or nil
    local v = opts.verify_first ~= false and verify(0) or nil
    if v and v.passed then return true, "passed" end
    local previous = v and signature() or nil
    local message = first_message(opts, v, files_text)

    for it = 1, max_iter do
      st.iterations = it
      edits = {}
      s:append({ kind = "msg_user", data = { content = message } }, DEFER)
      if watch then watch:reset() end
      for _ = 1, max_beats do
        local out = knl.beat(s, device, beat_opts)
        if out.out then proto.add_usage(usage, out.out.usage) end
        if out.kind == "refused" then return false, "budget", "coding.run: " .. tostring(out.reason) end
        if out.kind == "error" then return false, "error", "coding.run: " .. tostring(out.error) end
        if out.kind == "stopped" then return false, "stopped", "coding.run: " .. tostring(out.reason) end
        local why = watch and watch:observe(out, s)
        if why then return false, "stopped", "coding.run: " .. why end
        if budget and s.spent >= budget.amount then
          return false, "budget", sformat("coding.run: budget exhausted: spent %g of %g %s", s.spent, budget.amount,
            budget.tag)
        end
        if #out.out.tools == 0 and out.out.stop_reason ~= "pause_turn" then break end
      end
      v = verify(it)
      if v.passed then return true, "passed" end
      if opts.rollback and #edits > 0 then
        for i = #edits, 1, -1 do
          local okr, err = pcall(rollback_handler, { path = edits[i] })
          if not okr and is_fatal(err) then error(err, 0) end
          if okr then st.modified[edits[i]] = st.modified[edits[i]] - 1 end
          s:append({ kind = "coding_rollback", data = { iteration = it, path = edits[i], ok = okr,
            error = not okr and tostring(err) or nil } }, DEFER)
        end
      end
      local sig = signature()
      if #edits == 0 and sig == previous then
        return false, "stagnated", sformat("coding.run: the same failure twice with no edit (iteration %d)", it)
      end
      previous = sig
      if opts.on_iteration then
        local oki, ret = pcall(opts.on_iteration, { iteration = it, edits = #edits, last_verify = st.last_verify,
          usage = usage })
        if not oki then
          if is_fatal(ret) then error(ret, 0) end
          log.warn("coding.run: on_iteration raised: " .. tostring(ret))
        elseif ret == false then
          return false, "stopped", "coding.run: on_iteration returned false"
        end
      end
      message = "The verify command still fails" .. (opts.rollback and #edits > 0 and
        " (this iteration's edits were rolled back)" or "") .. ":\n" .. failure_text(st.last_verify)
    end
    return false, "max_iterations", sformat("coding.run: max_iterations (%d) reached", max_iter)
  end)

  local r
  if ok then
    r = result(a, b, c)
  elseif is_fatal(a) then
    if s then
      local fatal = is_fatal(a)
      pcall(s.close, s, fatal, fatal == "cancelled" and "cancelled" or nil)
    end
    error(a, 0)
  else
    r = result(false, "error", type(a) == "table" and tostring(a.message or a) or tostring(a))
  end
  if s then
    local okr, err = pcall(function()
      s:append({ kind = "coding_result", data = { ok = r.ok, stop_reason = r.stop_reason, iterations = r.iterations,
        modified_files = r.modified_files, usage = r.usage, error = r.error } }, DEFER)
      s:close(r.ok and "ok" or "error", r.error)
    end)
    if not okr then log.warn("coding.run: recording the end of session " .. s.id .. " failed: " .. tostring(err)) end
    session_of[r] = s
  end
  return r
end

--- The module's pure helpers, for specs: a fresh table each call, not part of the API.
function M._test_helpers()
  return { glob_pattern = glob_pattern, file_matcher = file_matcher, check_opts = check_opts, tail = tail,
    failure_text = failure_text }
end

return M
