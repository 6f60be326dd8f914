-- Specs of the policy pack's pieces: tool-policy pieces and their decisions, folds, filters,
-- cost and budgets, limits from a profile. Run alone: agent-block test embedded/policy/spec/policy_spec.lua
local policy = require("policy")
local knl = require("knl")

local function call(name, input, id) return { id = id or ("c_" .. name), name = name, input = input or {} } end
local function user(text) return { role = "user", content = text } end
local function asst(text) return { role = "assistant", content = { { type = "text", text = text } } } end
local function results(text)
  return { role = "user", content = { { type = "tool_result", tool_use_id = "t", content = text } } }
end

describe("policy tool pieces", function()
  it("allow and deny lists", function()
    local allow, deny = policy.allow({ "fs_read" }), policy.deny("sh")
    expect(allow(call("fs_read"))).to.equal(nil)
    local v, why = allow(call("fs_write"))
    expect(v).to.equal(false)
    expect(why).to.match("not in the allow list")
    expect(deny(call("sh"))).to.equal(false)
    expect(deny(call("fs_read"))).to.equal(nil)
    expect(function() policy.allow({ 1 }) end).to.fail.with("element 1 must be a non%-empty string")
  end)

  it("argument predicates: a path under a root, a command matching a pattern", function()
    local under = policy.under("src")
    expect(under({ path = "src/a.lua" })).to.equal(true)
    expect(under({ path = "./src/x/../b.lua" })).to.equal(true)
    expect(under({ path = "src/../secret" })).to.equal(false)
    expect(under({ path = "../src/a.lua" })).to.equal(false)
    expect(under({ path = "srcx/a.lua" })).to.equal(false)
    expect(under({})).to.equal(false)
    local cmd = policy.args("sh", policy.matches("^git status"))
    expect(cmd(call("sh", { command = "git status --short" }))).to.equal(nil)
    local v, why = cmd(call("sh", { command = "rm -rf /" }))
    expect(v).to.equal(false)
    expect(why).to.match("does not match")
    expect(cmd(call("other", { command = "rm" }))).to.equal(nil)
    expect(function() policy.under("../x") end).to.fail.with("outside the project root")
  end)

  it("command: plain shell words starting with a prefix; operators, substitutions and newlines refused", function()
    local git = policy.command({ "git status", "git diff", { "npm", "test" } })
    expect(git({ command = "git status --short" })).to.equal(true)
    expect(git({ command = "git  diff 'a b.txt'" })).to.equal(true)
    expect(git({ command = [[git diff "x\"y"]] })).to.equal(true)
    expect(git({ command = "npm test" })).to.equal(true)
    expect(git({ command = "git commit -m 'line one\nline two' " })).to.equal(false) -- not a prefix
    for cmd, why in pairs({
      ["git status; touch x"] = "operator ';'",
      ["git status && touch x"] = "operator '&&'",
      ["git status || touch x"] = "operator '||'",
      ["git status | sh"] = "operator '|'",
      ["git status & touch x"] = "operator '&'",
      ["git status > .git/config"] = "operator '>'",
      ["git status < x"] = "operator '<'",
      ["git status\ntouch x"] = "newline",
      ["git status $(touch x)"] = "substitution",
      ["git status `touch x`"] = "substitution",
      ["git status \"$(touch x)\""] = "substitution",
      ["git status ${IFS}x"] = "substitution",
      ["git status *"] = "glob",
      ["git status ~/x"] = "tilde",
      ["git status {a,b}"] = "brace",
      ["git status 'unterminated"] = "unterminated single quote",
      ["git status (x)"] = "operator '('",
      ["git status # x"] = "comment",
      ["gitx status"] = "does not start with",
      ["git statusx"] = "does not start with",
      ["'git' 'status'; x"] = "operator ';'",
      [""] = "no command",
    }) do
      local v, reason = git({ command = cmd })
      expect(v).to.equal(false)
      expect(reason).to.match(why:gsub("%p", "%%%0"))
    end
    -- quoting makes an operator a plain word: what runs is git with that argument
    expect(git({ command = "git diff ';' '$(x)' \\*" })).to.equal(true)
    local v, why = git({ cmd = "git status" })
    expect(v).to.equal(false)
    expect(why).to.match("not a command string")
    -- operators allowed: every command joined must start with a prefix
    local joined = policy.command({ "git status", "git diff" }, { operators = true })
    expect(joined({ command = "git status && git diff | git status" })).to.equal(true)
    expect(joined({ command = "git status && touch x" })).to.equal(false)
    expect(joined({ command = "git status > x" })).to.equal(false)
    expect(joined({ command = "git status;" })).to.equal(false)
    expect(policy.command("make", { field = "cmd" })({ cmd = "make all" })).to.equal(true)
    expect(function() policy.command({}) end).to.fail.with("prefixes")
    expect(function() policy.command({ "git; x" }) end).to.fail.with("plain words")
    -- as a piece on the sh tool
    local piece = policy.args("sh", policy.command("git status"))
    expect(piece(call("sh", { command = "git status" }))).to.equal(nil)
    expect(piece(call("sh", { command = "git status; touch x" }))).to.equal(false)
  end)

  it("approval rules answer headlessly: allow, deny, a function", function()
    local seen
    local ap = policy.approve({ fs_write = "deny", fs_read = "allow",
      ["*"] = function(c) seen = c.name; return false, "nobody said yes" end })
    expect(ap(call("fs_read"))).to.equal(true)
    expect(ap(call("fs_write"))).to.equal(false)
    local v, why = ap(call("sh"))
    expect(v).to.equal(false)
    expect(why).to.equal("nobody said yes")
    expect(seen).to.equal("sh")
    expect(function() policy.approve({ x = "maybe" }) end).to.fail.with("must be \"allow\", \"deny\" or a function")
  end)

  it("tool_policy: the first piece that decides wins, and a beat files every decision with its call", function()
    local tp = policy.tool_policy({ policy.deny({ "sh" }), policy.approve({ fs_read = "allow" }),
      policy.args("fs_edit", policy.under("src")) }, { default = "deny" })
    local v, why, rec = tp(call("fs_edit", { path = "lib/x.lua" }))
    expect(v).to.equal(false)
    expect(why).to.match("not under src")
    expect(rec.rule).to.equal("args(fs_edit)")
    local uses = {}
    for i, c in ipairs({ call("fs_read"), call("sh"), call("fs_edit", { path = "lib/x.lua" }),
      call("fs_edit", { path = "src/x.lua" }) }) do
      uses[i] = { type = "tool_use", id = "u" .. i, name = c.name, input = c.input }
    end
    local n = 0
    local port = { chat = function()
      n = n + 1
      if n == 1 then return { content = uses } end
      return { content = { { type = "text", text = "ok" } } }
    end }
    local ran = {}
    local function tool(name)
      return { name = name, description = name, handler = function() ran[#ran + 1] = name; return "done" end }
    end
    local dev = knl.device({ llm = port, tools = { tool("fs_read"), tool("sh"), tool("fs_edit") }, tool_policy = tp })
    knl.session({ store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "go" } })
      knl.beat(s, dev)
      expect(#ran).to.equal(1)
      expect(ran[1]).to.equal("fs_read")
      local rows = s:query("SELECT kind, json_extract(data, '$.verdict') AS v, json_extract(data, '$.rule') AS rule, " ..
        "json_extract(data, '$.reason') AS reason, json_extract(meta, '$.beat') AS beat " ..
        "FROM events WHERE stream = ? AND kind IN ('tool_call', 'policy_decision', 'tool_result') ORDER BY seq", { s.id })
      local decisions, kinds = {}, {}
      for _, r in ipairs(rows) do
        kinds[#kinds + 1] = r.kind
        if r.kind == "policy_decision" then decisions[#decisions + 1] = r end
      end
      -- each decision sits between its call and its result
      expect(table.concat(kinds, " ", 1, 3)).to.equal("tool_call policy_decision tool_result")
      expect(#decisions).to.equal(4)
      expect(decisions[1].v).to.equal("allow")
      expect(decisions[1].rule).to.equal("approve")
      expect(decisions[1].beat).to.equal(1)
      expect(decisions[2].rule).to.equal("deny(sh)")
      expect(decisions[3].rule).to.equal("args(fs_edit)")
      expect(decisions[4].rule).to.equal("default")
      expect(decisions[4].reason).to.equal("no rule allows it")
    end)
  end)

  it("a piece that raises denies the call, naming the rule", function()
    local tp = policy.tool_policy({ function() error("bad piece") end }, { record = false })
    local v, why = tp(call("x"))
    expect(v).to.equal(false)
    expect(why).to.match("piece 1 raised: .*bad piece")
  end)
end)

describe("policy folds", function()
  local conv = { user("task"), asst("a1"), results("r1"), asst("a2"), results("r2"), asst("a3"), results("r3") }

  it("last_turns keeps the task and the last n assistant turns", function()
    local out = policy.fold.last_turns(2)(conv)
    expect(#out).to.equal(5)
    expect(out[1]).to.equal(conv[1])
    expect(out[2]).to.equal(conv[4])
    expect(policy.fold.last_turns(5)(conv)).to.equal(conv)
  end)

  it("clear_tool_results replaces old results past the budget, without touching the originals", function()
    local big = { user("task"), asst("a"), results(string.rep("x", 4000)), asst("b"), results(string.rep("y", 4000)) }
    local f = policy.fold.clear_tool_results({ budget = 1200, keep = 1 })
    local out = f(big)
    expect(out[3].content[1].content).to.match("cleared by the fold: 4000 characters")
    expect(out[5]).to.equal(big[5])
    expect(#big[3].content[1].content).to.equal(4000)
    expect(f(big)[3]).to.equal(out[3]) -- the same copy every beat: a Port reuses its encoding
    expect(policy.fold.clear_tool_results({ budget = 1e9 })(big)).to.equal(big)
  end)

  it("under drops the oldest turns until the estimate fits", function()
    local big = { user("task"), asst(string.rep("a", 4000)), results("r"), asst(string.rep("b", 4000)), results("r") }
    local out = policy.fold.under(1500)(big)
    expect(#out).to.equal(3)
    expect(out[2]).to.equal(big[4])
    expect(policy.estimate_tokens(out) <= 1500).to.equal(true)
  end)

  it("summarise asks the Port once per cut and records fold_summary", function()
    local asked = 0
    local port = { chat = function(_, req)
      asked = asked + 1
      expect(req.messages[#req.messages].role).to.equal("user")
      return { content = { { type = "text", text = "SUMMARY" } }, usage = { input_tokens = 1, output_tokens = 1 } }
    end }
    local f = policy.fold.summarise({ port = port, trigger = 10, keep = 1 })
    knl.session({ store = "mem" }, function(s)
      local out = f(conv, s)
      expect(#out).to.equal(3)
      expect(out[1].content[2].text).to.match("SUMMARY")
      expect(out[2]).to.equal(conv[6])
      f(conv, s)
      expect(asked).to.equal(1)
      local n = s:query("SELECT COUNT(*) AS n FROM events WHERE stream = ? AND kind = 'fold_summary'", { s.id })[1].n
      expect(n).to.equal(1)
    end)
  end)

  it("fit takes its budget from a profile; limits reads the profile", function()
    local lim = policy.limits({ context_window = 10000, max_output_tokens = 2000, max_tokens = 4096,
      capabilities = { reasoning = true } })
    expect(lim.max_tokens).to.equal(2000)
    expect(lim.input_budget).to.equal(7000)
    expect(lim.reasoning).to.equal(true)
    local port = require("knl_adapter").anthropic:open({ model = "claude-haiku-4-5", api_key = "x" })
    expect(policy.limits(port.profile).context_window).to.equal(200000)
    expect(function() policy.fold.fit({ max_tokens = 10 }) end).to.fail.with("no context_window")
    local f = policy.fold.fit({ context_window = 2000, max_tokens = 100 })
    local big = { user("task"), asst("a"), results(string.rep("x", 20000)), asst("b"), results("ok") }
    expect(policy.estimate_tokens(f(big)) <= 1700).to.equal(true)
  end)
end)

describe("policy filters", function()
  it("redact replaces secret shapes and literals in texts and tool results", function()
    local f = policy.filters.redact({ secrets = { "hunter22" } })
    local req = { system = "s", messages = { user("key sk-ant-abc123XYZ and hunter22"),
      results("token ghp_abcdefABCDEF123"), asst("clean") } }
    local out = f(req)
    expect(out.messages[1].content).to.equal("key [redacted] and [redacted]")
    expect(out.messages[2].content[1].content).to.equal("token [redacted]")
    expect(out.messages[3]).to.equal(req.messages[3])
    expect(out.system).to.equal("s")
    expect(req.messages[1].content).to.match("hunter22")
    expect(f({ messages = { user("nothing here") } })).to.equal(nil)
  end)

  it("cap_tool_output keeps head and tail of long tool results", function()
    local f = policy.filters.cap_tool_output(100)
    local out = f({ messages = { results(string.rep("a", 200) .. string.rep("b", 200)), user(string.rep("u", 500)) } })
    local text = out.messages[1].content[1].content
    expect(text).to.match("^a+\n%[%.%.%. 300 characters cut")
    expect(text).to.match("b+$")
    expect(#out.messages[2].content).to.equal(500)
    expect(function() policy.filters.cap_tool_output(10) end).to.fail.with("at least 64")
  end)
end)

describe("policy cost and budgets", function()
  it("usd prices a response with cache-read and cache-write rates", function()
    local c = policy.cost.usd({ prices = { m = { input = 1, output = 10, cache_read = 0.1, cache_write = 2 } } })
    local usd = c({ model = "m", usage = { input_tokens = 1e6, output_tokens = 1e5, cache_read_input_tokens = 1e6,
      cache_creation_input_tokens = 5e5 } })
    expect(usd).to.equal(1 + 1 + 0.1 + 1, 1e-9)
    expect(function() policy.cost.usd({ model = "no-such-model" }) end).to.fail.with("no price for model")
    expect(policy.cost.tokens()({ usage = { total_tokens = 42 } })).to.equal(42)
    expect(policy.budget.usd(0.5).tag).to.equal("usd")
    expect(policy.budget.tokens(10).amount).to.equal(10)
    expect(function() policy.budget.usd(0) end).to.fail.with("positive number")
  end)
end)
