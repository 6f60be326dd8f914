--- policy: the shell pack of values for the kernel's seams — a guide to composing a loop's policy.
--
-- A pack is a value you hand to `knl.device` (or consult in a loop of your own), never a
-- registry the host reads: nothing here is looked up by name at run time, and nothing changes
-- what a device does unless you put it there. Each piece is small and composes with the others.
--
-- The seams, and what this pack puts into each:
--
--   tool_policy  `policy.tool_policy(pieces, opts?)` — one function for `device.tool_policy` from
--                pieces tried in order; the first that denies (or stops) decides, else the call
--                runs. Pieces: `policy.allow(names)`, `policy.deny(names)`, `policy.args(tool,
--                pred, ...)` (one tool, a list, or "*") with the predicates `policy.under(root,
--                field?)` (a path field inside root, lexically), `policy.no_symlinks(field?)` (no
--                symlink on the way, so the lexical check holds for the real file) and
--                `policy.matches(pattern, field?)` (a string field matches a Lua pattern; not for
--                shell commands) and `policy.command(prefixes, opts?)` (a shell command of plain
--                words, no operators, substitutions or newlines, starting with a prefix), and
--                `policy.approve(rules)`: headless approval — per tool (or "*") "allow", "deny"
--                or a Lua function answering for the absent human. Every decision, allowed ones
--                too, is a `policy_decision` event { tool, id, verdict, rule, reason } in the
--                session log under the beat's number: the policy answers it as a third value
--                and the beat files it with the call, in the same batch as its `tool_call`.
--   fold         `policy.fold.last_turns(n)` (the first message, the task, plus the last n
--                assistant turns), `policy.fold.clear_tool_results({ budget, keep })` (past a
--                token estimate, older tool results become a placeholder), `policy.fold.summarise
--                ({ port, trigger, keep })` (older turns summarised through a Port, once per cut,
--                recorded as `fold_summary`), `policy.fold.chain(f, ...)`. A fold returns a new
--                list and never changes a message it was given (a Port caches messages'
--                encodings by identity); what it drops stays in the log.
--   filters      `policy.filters.redact(opts?)` (secret-shaped strings and given literals become
--                `[redacted]`) and `policy.filters.cap_tool_output(max_chars)` (long tool results
--                keep their head and tail) — both before the request reaches the model; the log
--                keeps what the tools answered.
--   cost         `policy.cost.usd(opts?)` (the USD of a response at `llm_proto.prices`, with
--                cache-read and cache-write rates, merged with `opts.prices`) and
--                `policy.cost.tokens()`; `policy.budget.usd(x)` / `policy.budget.tokens(n)` are
--                the session budgets they are charged against.
--   limits       a model's limits are not a pack of their own: `policy.limits(profile, opts?)`
--                reads what a Port declares (`port.profile`: context_window, max_output_tokens,
--                capabilities.reasoning) and answers the numbers the seams take — `input_budget`
--                for a fold, `max_tokens` for a beat — and `policy.fold.fit(profile, opts?)` is
--                the fold that keeps a request under that budget.
--
-- Composing: a device is `knl.device({ llm = port, tools = ..., tool_policy =
-- policy.tool_policy({ policy.deny({ "fs_write" }), policy.args("fs_edit",
-- policy.under("src")) }), fold = policy.fold.fit(port.profile), filters = {
-- policy.filters.redact(), policy.filters.cap_tool_output(20000) }, cost = policy.cost.usd() })`
-- with a session budget `policy.budget.usd(0.50)`; the supervisor pack's stop predicates and
-- tree sit around the loop that beats it. To change a piece, shadow this module and delegate to
-- `require("embedded.policy")`; vendoring the whole pack is rarely the change meant.
--
-- Invariants: pure except for the `fold_summary` append (deferred: it commits with the beat's
-- next commit) and the summarising Port's call (decisions are filed by the beat); token counts are
-- estimates (4 characters a token), kept per message table so a long conversation is not
-- re-measured every beat; a filter that changes nothing returns nothing, so the request stays
-- the kernel's own.
local type, pairs, ipairs, tostring, error, pcall, setmetatable, select =
  type, pairs, ipairs, tostring, error, pcall, setmetatable, select
local sformat, concat, floor = string.format, table.concat, math.floor

local M = {}


local function describe(e)
  if type(e) == "table" and type(e.message) == "string" then return e.message end
  return tostring(e)
end

local function argerr(fn, i, name, expected, v)
  error(sformat("%s: argument %d (%s) must be %s, got %s", fn, i, name, expected, type(v)), 3)
end

local function name_set(fn, names)
  if type(names) == "string" then names = { names } end
  if type(names) ~= "table" then argerr(fn, 1, "names", "a tool name or a list of them", names) end
  local set, list = {}, {}
  for i, n in ipairs(names) do
    if type(n) ~= "string" or n == "" then
      error(sformat("%s: argument 1 (names) element %d must be a non-empty string, got %s", fn, i, type(n)), 3)
    end
    set[n] = true
    list[#list + 1] = n
  end
  return set, concat(list, ", ")
end

-- tool policies ----------------------------------------------------------------------------------

-- A piece is a function(call, s) answering nil (no opinion), true (allow), false, why (deny) or
-- "stop", why; its rule name (for the log) is kept beside it.
local rule_of = setmetatable({}, { __mode = "k" })
local function piece(rule, f)
  rule_of[f] = rule
  return f
end

--- A piece denying every call not to one of `names`.
function M.allow(names)
  local set, shown = name_set("policy.allow", names)
  return piece("allow(" .. shown .. ")", function(call)
    if set[call.name] then return nil end
    return false, sformat("'%s' is not in the allow list (%s)", tostring(call.name), shown)
  end)
end

--- A piece denying every call to one of `names`.
function M.deny(names)
  local set, shown = name_set("policy.deny", names)
  return piece("deny(" .. shown .. ")", function(call)
    if set[call.name] then return false, sformat("'%s' is denied", call.name) end
    return nil
  end)
end

-- A path as the file tools see it: relative to the project root, normalised; nil when it
-- climbs out.
local function rel_path(p)
  if type(p) ~= "string" or p == "" then return nil end
  local root = std.env.project_root()
  local abs = std.path.join(root, p)
  if abs == root then return "." end
  if abs:sub(1, #root + 1) ~= root .. "/" then return nil, abs end
  return abs:sub(#root + 2), abs
end
M.rel_path = rel_path

--- A predicate: the input's `field` (default "path") names a path inside `root` (relative to the
-- project root), lexically.
function M.under(root, field)
  if type(root) ~= "string" or root == "" then argerr("policy.under", 1, "root", "a non-empty string", root) end
  field = field or "path"
  local base = rel_path(root)
  if not base then error(sformat("policy.under: root '%s' is outside the project root", root), 2) end
  return function(input)
    local p = type(input) == "table" and input[field] or nil
    local rel = rel_path(p)
    if rel and (base == "." or rel == base or rel:sub(1, #base + 1) == base .. "/") then return true end
    return false, sformat("field '%s' (%s) is not under %s", field, tostring(p), root)
  end
end

--- A predicate: the input's path `field` (default "path") neither is nor passes through a
-- symbolic link below the project root — so a lexical check (`under`, a glob) also holds for
-- the file the path really names.
function M.no_symlinks(field)
  field = field or "path"
  return function(input)
    local p = type(input) == "table" and input[field] or nil
    local rel = rel_path(p)
    if not rel then return false, sformat("field '%s' (%s) is outside the project root", field, tostring(p)) end
    if rel == "." then return true end
    local at = std.env.project_root()
    for part in rel:gmatch("[^/]+") do
      at = at .. "/" .. part
      local ok, st = pcall(std.fs.stat, at)
      if not ok or type(st) ~= "table" then break end -- the rest does not exist yet
      if st.is_symlink then
        return false, sformat("field '%s' (%s) goes through a symbolic link (%s)", field, p, rel_path(at) or at)
      end
    end
    return true
  end
end

--- A predicate: the input's string `field` (default "command") matches the Lua pattern. A pattern
-- over a shell command cannot tell a command from a list of them (`^git ` matches
-- `git status; touch x`): for commands use `policy.command`.
function M.matches(pattern, field)
  if type(pattern) ~= "string" then argerr("policy.matches", 1, "pattern", "a Lua pattern", pattern) end
  field = field or "command"
  return function(input)
    local v = type(input) == "table" and input[field] or nil
    if type(v) == "string" and v:find(pattern) then return true end
    return false, sformat("field '%s' does not match %s", field, pattern)
  end
end

-- Shell words of `text` as a POSIX shell would split them (quotes removed), or nil and why when
-- the text holds anything but plain words: an unquoted control or redirection operator
-- (`; & | < > ( )`), a newline, a command or parameter substitution (`` ` ``, `$` outside single
-- quotes), an unquoted glob, brace or tilde (which a shell would expand into other words), a
-- comment, an unterminated quote or a trailing backslash. `opts.operators` lets `; & | && ||` through as
-- separators: the answer is then a list of commands, each a list of words.
local OPERATOR = { [";"] = true, ["&"] = true, ["|"] = true, ["<"] = true, [">"] = true, ["("] = true,
  [")"] = true }
local TWO_CHAR_OPERATOR = { ["&&"] = true, ["||"] = true, [">>"] = true, ["<<"] = true, [";;"] = true,
  ["|&"] = true, [">&"] = true, ["<&"] = true, ["&>"] = true, [">|"] = true, ["<>"] = true }
local JOINS = { [";"] = true, ["&"] = true, ["|"] = true, ["&&"] = true, ["||"] = true }
local GLOB = { ["*"] = true, ["?"] = true, ["["] = true }
local function shell_commands(text, operators)
  local cmds, words, word, has = {}, {}, {}, false
  local function finish_word()
    if has then words[#words + 1] = concat(word) end
    word, has = {}, false
  end
  local function finish_cmd()
    finish_word()
    if #words == 0 then return false end
    cmds[#cmds + 1] = words
    words = {}
    return true
  end
  local i, n = 1, #text
  while i <= n do
    local c = text:sub(i, i)
    if c == "'" then
      local j = text:find("'", i + 1, true)
      if not j then return nil, "an unterminated single quote" end
      word[#word + 1] = text:sub(i + 1, j - 1)
      has = true
      i = j + 1
    elseif c == '"' then
      i = i + 1
      while true do
        if i > n then return nil, "an unterminated double quote" end
        local d = text:sub(i, i)
        if d == '"' then break end
        if d == "$" or d == "`" then return nil, "a substitution (" .. d .. ") inside double quotes" end
        if d == "\\" and i < n and text:sub(i + 1, i + 1):find('[$`"\\\n]') then
          i = i + 1
          d = text:sub(i, i)
        end
        word[#word + 1] = d
        i = i + 1
      end
      has = true
      i = i + 1
    elseif c == "\\" then
      if i == n then return nil, "a trailing backslash" end
      local d = text:sub(i + 1, i + 1)
      if d == "\n" then return nil, "a newline" end
      word[#word + 1] = d
      has = true
      i = i + 2
    elseif c == "\n" or c == "\r" then
      return nil, "a newline"
    elseif c == " " or c == "\t" then
      finish_word()
      i = i + 1
    elseif c == "$" or c == "`" then
      return nil, "a substitution (" .. c .. ")"
    elseif OPERATOR[c] then
      local two = text:sub(i, i + 1)
      local op = TWO_CHAR_OPERATOR[two] and two or c
      if not (operators and JOINS[op]) then return nil, sformat("the shell operator '%s'", op) end
      if not finish_cmd() then return nil, sformat("an empty command before '%s'", op) end
      i = i + #op
    elseif GLOB[c] then
      return nil, sformat("an unquoted glob character '%s' (quote it)", c)
    elseif c == "~" and not has then
      return nil, "an unquoted tilde (quote it)"
    elseif c == "#" and not has then
      return nil, "a comment (#)"
    elseif c == "{" or c == "}" then
      return nil, sformat("an unquoted brace '%s' (quote it)", c)
    else
      word[#word + 1] = c
      has = true
      i = i + 1
    end
  end
  if not finish_cmd() then
    if #cmds == 0 then return nil, "no command" end
    return nil, "an operator with no command after it"
  end
  return cmds
end

--- A predicate: the input's `field` (default "command") is a shell command made only of plain
-- words (parsed as the shell would, quotes removed) whose first words are one of `prefixes` —
-- each a string of words (`"git status"`) or a list of them. Refused: control and redirection
-- operators, newlines, command and parameter substitutions, unquoted globs and tildes, so what
-- runs is exactly the program and arguments checked. `opts.operators = true` lets `;`, `&`,
-- `|`, `&&` and `||` join commands, each of which must then start with a prefix (redirections,
-- subshells and substitutions stay refused).
function M.command(prefixes, opts)
  if type(prefixes) == "string" then prefixes = { prefixes } end
  if type(prefixes) ~= "table" or #prefixes == 0 then
    argerr("policy.command", 1, "prefixes", "a command prefix or a non-empty list of them", prefixes)
  end
  opts = opts or {}
  if type(opts) ~= "table" then argerr("policy.command", 2, "opts", "a table or nil", opts) end
  local field = opts.field or "command"
  local list, shown = {}, {}
  for i, p in ipairs(prefixes) do
    local words
    if type(p) == "string" then
      words = shell_commands(p)
      words = words and #words == 1 and words[1] or nil
    elseif type(p) == "table" then
      words = p
    end
    if not words or #words == 0 then
      error(sformat("policy.command: argument 1 (prefixes) element %d must be plain words (a string or a list), " ..
        "got %s", i, type(p) == "string" and sformat("%q", p) or type(p)), 2)
    end
    list[i] = words
    shown[i] = concat(words, " ")
  end
  local shown_all = concat(shown, "', '")
  local function starts(words)
    for _, pre in ipairs(list) do
      local ok = #words >= #pre
      for k = 1, #pre do
        if not ok then break end
        ok = words[k] == pre[k]
      end
      if ok then return true end
    end
    return false
  end
  return function(input)
    local v = type(input) == "table" and input[field] or nil
    if type(v) ~= "string" then return false, sformat("field '%s' is not a command string", field) end
    local cmds, why = shell_commands(v, opts.operators == true)
    if not cmds then return false, sformat("field '%s' holds %s, which this policy refuses", field, why) end
    for _, words in ipairs(cmds) do
      if not starts(words) then
        return false, sformat("field '%s': '%s' does not start with '%s'", field, concat(words, " "), shown_all)
      end
    end
    return true
  end
end

--- A piece: calls to `tool` (a name, a list of names, or "*" for every tool) must satisfy each
-- predicate `pred(input, call) -> ok, why`.
function M.args(tool_name, ...)
  local set, shown
  if tool_name == "*" then
    shown = "*"
  elseif type(tool_name) == "string" or type(tool_name) == "table" then
    set, shown = name_set("policy.args", tool_name)
  else
    argerr("policy.args", 1, "tool", "a tool name, a list of them or \"*\"", tool_name)
  end
  local preds = { ... }
  for i = 1, select("#", ...) do
    if type(preds[i]) ~= "function" then
      error(sformat("policy.args: argument %d (predicate) must be a function, got %s", i + 1, type(preds[i])), 2)
    end
  end
  return piece("args(" .. shown .. ")", function(call)
    if set and not set[call.name] then return nil end
    for _, p in ipairs(preds) do
      local ok, why = p(call.input or {}, call)
      if not ok then return false, why or "an argument check failed" end
    end
    return nil
  end)
end

local VERDICTS = { allow = true, deny = false }

--- A piece: headless approval. `rules[tool]` (or `rules["*"]`) is "allow", "deny", or a function
-- (call, s) answering true / "allow", false / "deny" (with a reason), "stop", or nil (no
-- opinion). No rule for a tool: no opinion.
function M.approve(rules)
  if type(rules) ~= "table" then argerr("policy.approve", 1, "rules", "a table", rules) end
  for k, v in pairs(rules) do
    if not (type(v) == "function" or VERDICTS[v] ~= nil) then
      error(sformat("policy.approve: rule '%s' must be \"allow\", \"deny\" or a function, got %s", tostring(k),
        type(v) == "string" and sformat("%q", v) or type(v)), 2)
    end
  end
  return piece("approve", function(call, s)
    local r = rules[call.name]
    if r == nil then r = rules["*"] end
    if r == nil then return nil end
    if type(r) ~= "function" then
      if r == "allow" then return true end
      return false, sformat("approval rule for '%s' denies it", call.name)
    end
    local v, why = r(call, s)
    if v == true or v == "allow" then return true end
    if v == false or v == "deny" then return false, why or "the approver denied it" end
    if v == "stop" then return "stop", why or "the approver stopped the loop" end
    return nil
  end)
end

local function decision(call, verdict, rule, reason)
  return { tool = call.name, id = call.id, verdict = verdict, rule = rule, reason = reason }
end

--- One `device.tool_policy` function from pieces tried in order. `opts.default` is "allow"
-- (default) or "deny" for a call no piece answered. Answers the verdict, its reason, and the
-- decision's record `{ tool, id, verdict, rule, reason }` — which a beat files as a
-- `policy_decision` event with the call; `opts.record = false` leaves the record out.
function M.tool_policy(pieces, opts)
  if type(pieces) ~= "table" then argerr("policy.tool_policy", 1, "pieces", "a list of pieces", pieces) end
  opts = opts or {}
  local list = {}
  for i, p in ipairs(pieces) do
    if type(p) ~= "function" then
      error(sformat("policy.tool_policy: argument 1 (pieces) element %d must be a function, got %s", i, type(p)), 2)
    end
    list[i] = { f = p, rule = rule_of[p] or ("piece " .. i) }
  end
  local deny_default = opts.default == "deny"
  if opts.default ~= nil and opts.default ~= "allow" and not deny_default then
    error("policy.tool_policy: opts.default must be \"allow\" or \"deny\", got " .. tostring(opts.default), 2)
  end
  local record = opts.record ~= false
  local n = #list
  -- The pieces in one protected call (a piece that raises denies, naming its rule): `at` says
  -- which piece was running.
  local at = 0
  local function decide(call, s)
    for i = 1, n do
      at = i
      local v, why = list[i].f(call, s)
      if v == false then return "deny", list[i].rule, why end
      if v == "stop" then return "stop", list[i].rule, why end
      if v == true then return "allow", list[i].rule end
    end
    return nil
  end
  return function(call, s)
    at = 0
    local ok, verdict, rule, reason = pcall(decide, call, s)
    if not ok then
      if std.task.is_fatal(verdict) then error(verdict, 0) end
      local p = list[at]
      verdict, rule, reason = "deny", p.rule, p.rule .. " raised: " .. describe(verdict)
    elseif verdict == nil then
      rule = "default"
      if deny_default then verdict, reason = "deny", "no rule allows it" else verdict = "allow" end
    end
    -- the record is the third value: the beat files it with the call (see knl's tool_policy)
    local rec = record and decision(call, verdict, rule, reason) or nil
    if verdict == "allow" then return true, nil, rec end
    if verdict == "stop" then return "stop", reason, rec end
    return false, reason, rec
  end
end

-- token estimates ----------------------------------------------------------------------------------

local CHARS_PER_TOKEN = 4
local estimated = setmetatable({}, { __mode = "k" }) -- message table -> tokens

local function content_chars(c)
  if type(c) == "string" then return #c end
  if type(c) ~= "table" then return 0 end
  local n = 0
  for _, b in ipairs(c) do
    if type(b) == "table" then
      if b.type == "text" then n = n + #(b.text or "")
      elseif b.type == "tool_result" then n = n + content_chars(b.content)
      elseif b.type == "thinking" then n = n + #(b.thinking or "")
      elseif b.type == "tool_use" then
        local ok, s = pcall(std.json.encode, b.input or {})
        n = n + #(b.name or "") + (ok and #s or 0)
      end
    end
  end
  return n
end

--- Estimated tokens of one message (4 characters a token, plus a few for the turn).
function M.message_tokens(m)
  local hit = estimated[m]
  if hit then return hit end
  local t = floor(content_chars(m.content) / CHARS_PER_TOKEN) + 4
  estimated[m] = t
  return t
end

--- Estimated tokens of a message list.
function M.estimate_tokens(messages)
  local n = 0
  for _, m in ipairs(messages or {}) do n = n + M.message_tokens(m) end
  return n
end

-- folds --------------------------------------------------------------------------------------------

local fold = {}
M.fold = fold

local function is_tool_results(m)
  if m.role ~= "user" or type(m.content) ~= "table" then return false end
  for _, b in ipairs(m.content) do
    if type(b) == "table" and b.type ~= "tool_result" then return false end
  end
  return true
end

-- The index of the first message to keep so that the last `n` assistant turns remain: always an
-- assistant message (so each kept tool result still follows its tool use), never 1.
local function cut_for_turns(messages, n)
  local seen = 0
  for i = #messages, 2, -1 do
    if messages[i].role == "assistant" then
      seen = seen + 1
      if seen == n then return i end
    end
  end
  return nil
end

-- messages[1] then messages[from..]; the first kept must follow a user message, so when
-- messages[from] is an assistant turn the first (a user message) stands before it.
local function keep_from(messages, from, head)
  local out = { messages[1] }
  if head then out[#out + 1] = head end
  for i = from, #messages do out[#out + 1] = messages[i] end
  return out
end

--- A fold keeping the first message (the task) and the last `n` assistant turns with what
-- followed each.
function fold.last_turns(n)
  if math.type(n) ~= "integer" or n < 1 then argerr("policy.fold.last_turns", 1, "n", "a positive integer", n) end
  return function(messages)
    local from = cut_for_turns(messages, n)
    if not from or from <= 2 then return messages end
    local out = keep_from(messages, from)
    -- the task (a user message) is followed by an assistant turn: alternation holds
    return out
  end
end

--- A fold that, while the estimate is over `opts.budget` tokens, replaces the content of tool
-- results older than the last `opts.keep` (default 2) with a placeholder naming what was cut.
function fold.clear_tool_results(opts)
  if type(opts) ~= "table" or type(opts.budget) ~= "number" then
    argerr("policy.fold.clear_tool_results", 1, "opts", "a table with a number 'budget'", opts and opts.budget)
  end
  local keep = opts.keep or 2
  local cleared = setmetatable({}, { __mode = "k" }) -- original message -> its cleared copy
  return function(messages)
    local total = M.estimate_tokens(messages)
    if total <= opts.budget then return messages end
    local idx = {}
    for i, m in ipairs(messages) do if is_tool_results(m) then idx[#idx + 1] = i end end
    local out = { table.unpack(messages) }
    for j = 1, #idx - keep do
      if total <= opts.budget then break end
      local i = idx[j]
      local m = messages[i]
      local c = cleared[m]
      if not c then
        local blocks = {}
        for k, b in ipairs(m.content) do
          local chars = content_chars(b.content)
          blocks[k] = { type = "tool_result", tool_use_id = b.tool_use_id, is_error = b.is_error,
            content = sformat("[tool result cleared by the fold: %d characters]", chars) }
        end
        c = { role = "user", content = blocks }
        cleared[m] = c
      end
      total = total - M.message_tokens(m) + M.message_tokens(c)
      out[i] = c
    end
    return out
  end
end

--- A fold that keeps the estimate under `budget` tokens by dropping the oldest turns (the task
-- stays), keeping at least the last `min_turns` (default 1).
function fold.under(budget, min_turns)
  if type(budget) ~= "number" then argerr("policy.fold.under", 1, "budget", "a number", budget) end
  min_turns = min_turns or 1
  return function(messages)
    if M.estimate_tokens(messages) <= budget then return messages end
    local head = M.message_tokens(messages[1])
    local total, from = head, nil
    local turns = 0
    for i = #messages, 2, -1 do
      total = total + M.message_tokens(messages[i])
      if messages[i].role == "assistant" then
        turns = turns + 1
        if total > budget and turns > min_turns then break end
        from = i
      end
    end
    if not from or from <= 2 then return messages end
    return keep_from(messages, from)
  end
end

local SUMMARY_PROMPT = "Summarise the conversation so far for your own later use: the task, what was tried, " ..
  "what was learnt (files, errors, decisions) and what remains. Be brief and concrete."

--- A fold that, past `opts.trigger` tokens, replaces the turns before the last `opts.keep`
-- (default 2) with a summary the Port `opts.port` writes (once per cut; `fold_summary` in the
-- log). A failed summary keeps the conversation whole and logs a warning.
function fold.summarise(opts)
  if type(opts) ~= "table" or type(opts.port) ~= "table" or type(opts.port.chat) ~= "function" then
    argerr("policy.fold.summarise", 1, "opts", "a table with a Port 'port'", opts and opts.port)
  end
  if type(opts.trigger) ~= "number" then
    error("policy.fold.summarise: opts.trigger must be a number of tokens, got " .. type(opts.trigger), 2)
  end
  local keep = opts.keep or 2
  local summaries = {} -- cut message (by identity) -> summary message
  return function(messages, s)
    if M.estimate_tokens(messages) <= opts.trigger then return messages end
    local from = cut_for_turns(messages, keep)
    if not from or from <= 3 then return messages end
    local cut = messages[from]
    local summary = summaries[cut]
    if not summary then
      local older = {}
      for i = 1, from - 1 do older[i] = messages[i] end
      -- the request must end with a user turn
      if older[#older].role == "assistant" then
        older[#older + 1] = { role = "user", content = SUMMARY_PROMPT }
      else
        older[#older] = { role = "user", content = { table.unpack(
          type(older[#older].content) == "table" and older[#older].content or
          { { type = "text", text = older[#older].content } }) } }
        older[#older].content[#older[#older].content + 1] = { type = "text", text = SUMMARY_PROMPT }
      end
      local ok, resp = pcall(opts.port.chat, opts.port, { messages = older, max_tokens = opts.max_tokens or 1024 })
      if not ok then
        if std.task.is_fatal(resp) then error(resp, 0) end
        log.warn("policy.fold.summarise: the summary failed, the conversation stays whole: " .. describe(resp))
        return messages
      end
      local parts = {}
      for _, b in ipairs(resp.content or {}) do if b.type == "text" then parts[#parts + 1] = b.text end end
      local text = concat(parts, "\n")
      summary = { role = "user",
        content = { { type = "text", text = "[Summary of the earlier conversation]\n" .. text } } }
      summaries[cut] = summary
      if s then
        s:append({ kind = "fold_summary", data = { summarised = from - 1, text = text, usage = resp.usage } },
          { defer = true, beat = s.beats })
      end
    end
    -- task, summary (two user messages merge into one turn), then the kept turns
    local first = messages[1]
    local merged = { role = "user", content = {} }
    local first_blocks = type(first.content) == "table" and first.content or { { type = "text", text = first.content } }
    for _, b in ipairs(first_blocks) do
      merged.content[#merged.content + 1] = b
    end
    for _, b in ipairs(summary.content) do merged.content[#merged.content + 1] = b end
    local out = { merged }
    for i = from, #messages do out[#out + 1] = messages[i] end
    return out
  end
end

--- Folds applied in order, each to what the one before returned.
function fold.chain(...)
  local fs = { ... }
  for i = 1, select("#", ...) do
    if type(fs[i]) ~= "function" then
      error(sformat("policy.fold.chain: argument %d must be a fold function, got %s", i, type(fs[i])), 2)
    end
  end
  return function(messages, s)
    for _, f in ipairs(fs) do messages = f(messages, s) end
    return messages
  end
end

-- limits ------------------------------------------------------------------------------------------

--- What a Port's profile says about the model, as the numbers the seams take: `{ context_window,
-- max_output_tokens, reasoning, max_tokens, input_budget }`. `opts.context_window` /
-- `opts.max_tokens` stand in for what the profile lacks; `opts.reserve` (default 0.1) is the
-- fraction of the window kept free of input besides the output.
function M.limits(profile, opts)
  if type(profile) ~= "table" then argerr("policy.limits", 1, "profile", "a Port's profile table", profile) end
  opts = opts or {}
  local window = opts.context_window or profile.context_window
  local max_out = profile.max_output_tokens
  local max_tokens = opts.max_tokens or profile.max_tokens or 4096
  if max_out and max_tokens > max_out then max_tokens = max_out end
  local caps = profile.capabilities or {}
  local out = { context_window = window, max_output_tokens = max_out, reasoning = caps.reasoning == true,
    thinking = caps.thinking, max_tokens = max_tokens }
  if window then
    out.input_budget = floor(window * (1 - (opts.reserve or 0.1))) - max_tokens
  end
  return out
end

--- The fold that keeps a request within what `profile` allows (`policy.limits(profile,
-- opts).input_budget`): old tool results cleared first, then the oldest turns dropped.
function fold.fit(profile, opts)
  local lim = M.limits(profile, opts)
  if not lim.input_budget then
    error("policy.fold.fit: the profile declares no context_window (pass opts.context_window)", 2)
  end
  return fold.chain(fold.clear_tool_results({ budget = lim.input_budget }), fold.under(lim.input_budget))
end

-- filters -----------------------------------------------------------------------------------------

local filters = {}
M.filters = filters

-- Rewrites the text of each message through `f(text) -> text|nil`, building a new message only
-- for one that changed (cached by identity); returns the new request, or nil when nothing changed.
local function map_messages(req, cache, f)
  local changed = false
  local out = {}
  for i, m in ipairs(req.messages) do
    local c = cache[m]
    if c == nil then
      c = false
      if type(m.content) == "string" then
        local t = f(m.content, "text")
        if t then c = { role = m.role, content = t } end
      elseif type(m.content) == "table" then
        local blocks, any = {}, false
        for k, b in ipairs(m.content) do
          local nb = b
          if b.type == "text" then
            local t = f(b.text, "text")
            if t then nb = { type = "text", text = t } end
          elseif b.type == "tool_result" and type(b.content) == "string" then
            local t = f(b.content, "tool_result")
            if t then nb = { type = "tool_result", tool_use_id = b.tool_use_id, is_error = b.is_error, content = t } end
          end
          if nb ~= b then any = true end
          blocks[k] = nb
        end
        if any then c = { role = m.role, content = blocks } end
      end
      cache[m] = c
    end
    if c then changed = true; out[i] = c else out[i] = m end
  end
  if not changed then return nil end
  local r = {}
  for k, v in pairs(req) do r[k] = v end
  r.messages = out
  return r
end

-- Shapes of credentials that should never reach a model (or be echoed back by one).
M.SECRET_PATTERNS = {
  "sk%-ant%-[%w_%-]+", "sk%-[%w_%-][%w_%-][%w_%-][%w_%-][%w_%-][%w_%-][%w_%-][%w_%-]+",
  "AKIA[%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d][%u%d]",
  "gh[pousr]_[%w]+", "xox[baprs]%-[%w%-]+", "[Bb]earer%s+[%w%.%-_~+/]+=*",
  "%-%-%-%-%-BEGIN [%u ]*PRIVATE KEY%-%-%-%-%-.-%-%-%-%-%-END [%u ]*PRIVATE KEY%-%-%-%-%-",
}

--- A filter replacing secret-shaped strings (`policy.SECRET_PATTERNS`, plus `opts.patterns`)
-- and the literal `opts.secrets` with `opts.replacement` (default "[redacted]") in every text
-- and tool result of the request.
function filters.redact(opts)
  opts = opts or {}
  if type(opts) ~= "table" then argerr("policy.filters.redact", 1, "opts", "a table or nil", opts) end
  local repl = opts.replacement or "[redacted]"
  local pats = {}
  for _, p in ipairs(M.SECRET_PATTERNS) do pats[#pats + 1] = p end
  for _, p in ipairs(opts.patterns or {}) do pats[#pats + 1] = p end
  local lits = {}
  for _, v in ipairs(opts.secrets or {}) do
    if type(v) == "string" and #v >= 4 then lits[#lits + 1] = v end
  end
  local safe_repl = repl:gsub("%%", "%%%%")
  local function scrub(text)
    if type(text) ~= "string" then return nil end
    local t, hits = text, 0
    for _, v in ipairs(lits) do
      local s, e = t:find(v, 1, true)
      while s do
        t = t:sub(1, s - 1) .. repl .. t:sub(e + 1)
        hits = hits + 1
        s, e = t:find(v, s + #repl, true)
      end
    end
    for _, p in ipairs(pats) do
      local n
      t, n = t:gsub(p, safe_repl)
      hits = hits + n
    end
    return hits > 0 and t or nil
  end
  local cache = setmetatable({}, { __mode = "k" })
  return function(req) return map_messages(req, cache, scrub) end
end

--- A filter cutting every tool result longer than `max_chars` to its head and tail with a note
-- of how much was left out.
function filters.cap_tool_output(max_chars)
  if math.type(max_chars) ~= "integer" or max_chars < 64 then
    argerr("policy.filters.cap_tool_output", 1, "max_chars", "an integer of at least 64", max_chars)
  end
  local head = floor(max_chars * 2 / 3)
  local tail = max_chars - head
  local cache = setmetatable({}, { __mode = "k" })
  return function(req)
    return map_messages(req, cache, function(text, where)
      if where ~= "tool_result" or #text <= max_chars then return nil end
      return sformat("%s\n[... %d characters cut by the filter ...]\n%s", text:sub(1, head), #text - max_chars,
        text:sub(-tail))
    end)
  end
end

-- cost and budgets --------------------------------------------------------------------------------

local cost = {}
M.cost = cost

--- A cost function charging the USD of each response at the price of its model
-- (`llm_proto.prices` merged with `opts.prices`; input, output, cache_read and cache_write per
-- million tokens). `opts.model` checks at once that the model has a price.
function cost.usd(opts)
  opts = opts or {}
  local proto = require("llm_proto")
  if opts.model and not proto.price_of(opts.model, opts.prices) then
    error(sformat("policy.cost.usd: no price for model %q: pass opts.prices = { [model] = { input, output, " ..
      "cache_read, cache_write } } (USD per million tokens)", opts.model), 2)
  end
  return function(out)
    local model = out.model or opts.model
    local p = proto.price_of(model, opts.prices)
    if not p then error(sformat("policy.cost.usd: no price for model %q", tostring(model)), 0) end
    return proto.cost_at(p, proto.usage(out.usage.input_tokens, out.usage.output_tokens,
      out.usage.cache_read_input_tokens, out.usage.cache_creation_input_tokens))
  end
end

--- A cost function charging each response's total tokens.
function cost.tokens()
  return function(out) return out.usage.total_tokens or 0 end
end

local budget = {}
M.budget = budget

--- A session budget in USD (charged by `policy.cost.usd`).
function budget.usd(amount)
  if type(amount) ~= "number" or amount <= 0 then
    argerr("policy.budget.usd", 1, "amount", "a positive number", amount)
  end
  return { amount = amount, tag = "usd" }
end

--- A session budget in tokens (charged by `policy.cost.tokens`, or the kernel's default).
function budget.tokens(amount)
  if type(amount) ~= "number" or amount <= 0 then
    argerr("policy.budget.tokens", 1, "amount", "a positive number", amount)
  end
  return { amount = amount, tag = "tokens" }
end

--- The module's pure helpers, for specs: a fresh table each call, not part of the API.
function M._test_helpers()
  return {
    content_chars = content_chars,
    cut_for_turns = cut_for_turns,
    is_tool_results = is_tool_results,
    map_messages = map_messages,
    rule_of = function(f) return rule_of[f] end,
  }
end

return M
