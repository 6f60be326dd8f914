-- Specs of the supervisor pack's predicates and watch, and a child restarted with a fresh fold.
-- Run alone: agent-block test embedded/supervisor/spec/supervisor_spec.lua
local supervisor = require("supervisor")
local knl = require("knl")

local function beat_with(calls)
  local tools = {}
  for i, c in ipairs(calls) do tools[i] = { name = c[1], input = c[2] or {}, is_error = c[3] } end
  return { kind = "ok", out = { tools = tools } }
end

describe("supervisor predicates", function()
  it("no_progress counts beats without a new successful call", function()
    local w = supervisor.watch({ supervisor.stop.no_progress(2) })
    expect(w:observe(beat_with({ { "read", { p = 1 } } }))).to.equal(nil)
    expect(w:observe(beat_with({ { "read", { p = 1 } } }))).to.equal(nil)
    expect(w:observe(beat_with({ { "read", { p = 2 }, true } }))).to.match("no progress for 2 beats")
  end)

  it("repeated_call: the same call n times in a row", function()
    local w = supervisor.watch({ supervisor.stop.repeated_call(3) })
    expect(w:observe(beat_with({ { "a", { x = 1 } }, { "a", { x = 1 } } }))).to.equal(nil)
    expect(w:observe(beat_with({ { "a", { x = 1 } } }))).to.match("the same tool call %(a%) 3 times")
    w:reset()
    expect(w:observe(beat_with({ { "a", { x = 1 } } }))).to.equal(nil)
  end)

  it("budget_fraction, max_beats and wall_clock", function()
    local w = supervisor.watch({ supervisor.stop.budget_fraction(0.5) }, { budget = { amount = 100, tag = "tokens" } })
    expect(w:observe(beat_with({}), { spent = 40 })).to.equal(nil)
    expect(w:observe(beat_with({}), { spent = 50 })).to.match("50%% of the budget spent")
    local m = supervisor.watch({ supervisor.stop.max_beats(2) })
    expect(m:observe(beat_with({}))).to.equal(nil)
    expect(m:observe(beat_with({}))).to.equal("2 beats")
    local c = supervisor.watch({ supervisor.stop.wall_clock(0.001) })
    c.state.started_ms = std.time.millis() - 10
    expect(c:observe(beat_with({}))).to.match("wall%-clock limit")
    expect(function() supervisor.stop.budget_fraction(2) end).to.fail.with("in %(0, 1%]")
    expect(function() supervisor.stop.no_progress(0) end).to.fail.with("positive integer")
  end)

  it("a custom progress function decides what progress is", function()
    local w = supervisor.watch({ supervisor.stop.no_progress(1) }, { progress = function() return true end })
    expect(w:observe(beat_with({}))).to.equal(nil)
  end)
end)

describe("supervisor.child", function()
  it("restarts a stalled child in a fresh session that starts from the prompt again", function()
    local n = 0
    local port = { profile = { model = "scripted" }, chat = function(_, req)
      n = n + 1
      if n <= 2 then
        return { content = { { type = "tool_use", id = "t" .. n, name = "look", input = { same = true } } } }
      end
      -- the restart sees only the prompt and the note, not the first attempt's turns
      expect(#req.messages).to.equal(1)
      expect(req.messages[1].content).to.match("Restart 1")
      return { content = { { type = "text", text = "ok" } } }
    end }
    local dev = knl.device({ llm = port, tools = { { name = "look", description = "look",
      handler = function() return "same" end } } })
    knl.session({ store = "mem" }, function(s)
      local r = supervisor.child(s, { name = "looker", device = dev, prompt = "look around",
        stop = { supervisor.stop.repeated_call(2) }, restarts = 1 })
      expect(r.status).to.equal("done")
      expect(r.attempts).to.equal(2)
      expect(#r.sessions).to.equal(2)
      expect(r.beats).to.equal(3)
      expect(r.usage.calls).to.equal(3)
    end)
  end)

  it("checks its spec", function()
    knl.session({ store = "mem" }, function(s)
      expect(function() supervisor.child(s, { name = "x", prompt = "p" }) end).to.fail.with("field 'device'")
      expect(function() supervisor.run(s, { { device = {}, prompt = "p" } }) end).to.fail.with("child 1: field 'name'")
    end)
  end)
end)
