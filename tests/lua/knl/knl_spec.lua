-- The Lua kernel against a scripted Port (scripted_port.lua, a test double of the Port contract).
-- Every session here uses store = "mem": a private in-memory log for this spec run.
-- Run alone: agent-block test tests/lua/knl/knl_spec.lua
local knl = require("knl")
local adapter = require("knl_adapter")
local sp = require("scripted_port")

local function add_tools(log)
  return adapter.tools({
    { name = "add", description = "adds a and b", input_schema = { type = "object" },
      handler = function(i) if log then log[#log + 1] = i end return i.a + i.b end },
    { name = "boom", description = "raises", handler = function() error("tool exploded") end },
  })
end

local function kinds(s)
  local out = {}
  for i, e in ipairs(s:events()) do out[i] = e.kind end
  return table.concat(out, " ")
end

describe("knl.session / knl.beat (the seed example)", function()
  it("runs the loop to the end, recording every call and tool", function()
    local port = sp.new({ sp.tools({ { "t1", "add", { a = 2, b = 3 } } }, "adding"), sp.text("it is 5") })
    local device = knl.device({ llm = port, tools = add_tools(), system = "be brief" })
    local id, usage, outs = nil, nil, {}
    local ret = knl.session({ owner = "u", budget = { amount = 8, tag = "beats" }, store = "mem" }, function(s)
      id = s.id
      s:append({ kind = "msg_user", data = { content = "2+3?" } })
      for _ = 1, 8 do
        local out = knl.beat(s, device)
        outs[#outs + 1] = out
        if not knl.Outcome.is_ok(out) then break end
        if #out.out.tools == 0 then break end
      end
      usage = knl.views.usage(s)
      expect(kinds(s)).to.equal("session_open msg_user llm_request llm_response tool_call tool_result budget_charge "
        .. "llm_request llm_response budget_charge")
      return "done", 2
    end)
    expect(ret).to.equal("done")
    expect(#outs).to.equal(2)
    expect(outs[1].out.tools[1].result).to.equal("5")
    expect(outs[2].out.text).to.equal("it is 5")
    expect(usage[1].calls).to.equal(2)
    expect(usage[1].input_tokens).to.equal(30)
    expect(usage[1].output_tokens).to.equal(13)
    -- what the model saw on the second call: the tool result folded into the conversation
    local req = port.requests[2]
    expect(req.system).to.equal("be brief")
    expect(#req.messages).to.equal(3)
    expect(req.messages[3].content[1].type).to.equal("tool_result")
    expect(req.messages[3].content[1].tool_use_id).to.equal("t1")
    expect(req.tools[1].name).to.equal("add")
    -- the bracket closed the session
    local st = knl.open({ store = "mem" })
    local evs = st:events(id)
    expect(evs[#evs].kind).to.equal("session_close")
    expect(evs[#evs].data.status).to.equal("ok")
    expect(evs[#evs].data.beats).to.equal(2)
  end)

  it("carries the beat as a meta label and answers the query views", function()
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "x" } })
      local port = sp.new({ sp.tools({ { "a1", "add", { a = 1, b = 1 } }, { "a2", "boom", {} } }), sp.text("ok") })
      local d = knl.device({ llm = port, tools = add_tools() })
      knl.beat(s, d)
      knl.beat(s, d)
      local beats = knl.views.beats(s)
      expect(#beats).to.equal(2)
      expect(beats[1].tool_calls).to.equal(2)
      expect(beats[2].outcome).to.equal("ok")
      local pairs_ = knl.views.tool_pairs(s)
      expect(#pairs_).to.equal(2)
      expect(pairs_[1].content).to.equal("2")
      expect(pairs_[1].is_error).to.equal(false)
      expect(pairs_[1].input.a).to.equal(1)
      expect(pairs_[2].is_error).to.equal(true)
      expect(pairs_[2].content).to.match("tool exploded")
      local rows = s:query("SELECT seq FROM events WHERE stream = ? AND json_extract(meta, '$.beat') = 2 ORDER BY seq",
        { s.id })
      expect(#rows).to.equal(2) -- llm_request, llm_response (no budget: no charge)
      local tail = s:view("tail", { n = 2 })
      expect(tail[1].kind).to.equal("llm_request")
      expect(tail[2].kind).to.equal("llm_response")
      expect(tail[2].meta.beat).to.equal(2)
    end)
  end)

  it("files an event appended with opts.beat under that beat, with its own meta kept", function()
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "note", data = { n = 1 } }, { beat = 7 })
      s:append({ kind = "note", data = { n = 2 }, meta = { who = "me" } }, { beat = 7, defer = true })
      local rows = s:query("SELECT json_extract(meta, '$.beat') AS beat, json_extract(meta, '$.who') AS who " ..
        "FROM events WHERE stream = ? AND kind = 'note' ORDER BY seq", { s.id })
      expect(rows[1].beat).to.equal(7)
      expect(rows[2].beat).to.equal(7)
      expect(rows[2].who).to.equal("me")
      expect(function() s:append({ kind = "note" }, { beat = 1.5 }) end).to.fail.with("field 'beat' must be an integer")
    end)
  end)
end)

describe("budget", function()
  it("refuses a beat over budget without calling the model", function()
    local port = sp.new({ sp.text("one"), sp.text("two"), sp.text("three") })
    local d = knl.device({ llm = port })
    knl.session({ owner = "u", budget = { amount = 2, tag = "beats" }, store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "hi" } })
      expect(knl.beat(s, d).kind).to.equal("ok")
      expect(knl.beat(s, d).kind).to.equal("ok")
      local out = knl.beat(s, d)
      expect(out.kind).to.equal("refused")
      expect(out.reason).to.match("budget exhausted: spent 2 of 2 beats")
      expect(port.calls).to.equal(2)
      expect(knl.Outcome.is_ok(out)).to.equal(false)
      local ledger = knl.views.ledger(s)
      expect(#ledger).to.equal(3)
      expect(ledger[2].remaining).to.equal(0)
      expect(ledger[3].kind).to.equal("beat_refused")
      expect(knl.views.beats(s)[3].outcome).to.equal("refused")
    end)
  end)

  it("numbers every refused beat: two refusals in a row are two beats", function()
    local port = sp.new({ sp.text("one") })
    local d = knl.device({ llm = port })
    knl.session({ owner = "u", budget = { amount = 1, tag = "beats" }, store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "hi" } })
      expect(knl.beat(s, d).beat).to.equal(1)
      local a, b = knl.beat(s, d), knl.beat(s, d)
      expect({ a.kind, a.beat, b.kind, b.beat }).to.equal({ "refused", 2, "refused", 3 })
      local rows = s:query("SELECT CAST(json_extract(meta, '$.beat') AS INTEGER) AS beat FROM events " ..
        "WHERE stream = ? AND kind = 'beat_refused' ORDER BY seq", { s.id })
      expect({ rows[1].beat, rows[2].beat }).to.equal({ 2, 3 })
      local beats = knl.views.beats(s)
      expect(#beats).to.equal(3)
      expect({ beats[2].outcome, beats[3].outcome }).to.equal({ "refused", "refused" })
      expect(port.calls).to.equal(1)
    end)
  end)

  it("charges tokens when the budget's tag is tokens, and a device's cost when given", function()
    local port = sp.new({ sp.text("a", 100, 50), sp.text("b") })
    knl.session({ owner = "u", budget = { amount = 120, tag = "tokens" }, store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "hi" } })
      expect(knl.beat(s, knl.device({ llm = port })).kind).to.equal("ok")
      expect(s.spent).to.equal(150)
      expect(knl.beat(s, knl.device({ llm = port })).kind).to.equal("refused")
    end)
    local port2 = sp.new({ sp.text("a"), sp.text("b") })
    knl.session({ owner = "u", budget = { amount = 1, tag = "usd" }, store = "mem" }, function(s)
      local d = knl.device({ llm = port2, cost = function(out) return out.usage.total_tokens / 100 end })
      knl.beat(s, d)
      expect(s.spent).to.equal(0.15)
      expect(s:remaining()).to.equal(0.85)
    end)
  end)
end)

describe("tool_pairs", function()
  it("pairs a call with its result in the same beat, so ids reused across turns pair right", function()
    -- a server numbering its tool-use ids per response: every turn's first call is `call_0`
    local port = sp.new({
      sp.tools({ { "call_0", "add", { a = 1, b = 1 } }, { "call_1", "add", { a = 2, b = 2 } } }),
      sp.tools({ { "call_0", "add", { a = 10, b = 10 } } }),
      sp.tools({ { "call_0", "boom", {} } }),
      sp.text("done"),
    })
    local d = knl.device({ llm = port, tools = add_tools() })
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "sums" } })
      for _ = 1, 4 do knl.beat(s, d) end
      local rows = knl.views.tool_pairs(s)
      local got = {}
      for i, r in ipairs(rows) do got[i] = { r.beat, r.id, r.content, r.is_error } end
      expect(got).to.equal({
        { 1, "call_0", "2", false }, { 1, "call_1", "4", false }, { 2, "call_0", "20", false },
        { 3, "call_0", got[4][3], true },
      })
      expect(got[4][3]).to.match("tool exploded")
      expect(rows[1].input).to.equal({ a = 1, b = 1 })
      expect(rows[3].input).to.equal({ a = 10, b = 10 })
    end)
  end)

  it("leaves a call without its result pending (nil), even when a later beat reuses its id", function()
    knl.session({ owner = "u", store = "mem" }, function(s)
      knl.record.tool_call(s, { id = "call_0", name = "add", input = {} }, 1)
      knl.record.tool_call(s, { id = "call_0", name = "add", input = {} }, 2)
      knl.record.tool_result(s, { id = "call_0", name = "add" }, "late", false, 2, 5)
      local rows = knl.views.tool_pairs(s)
      expect(#rows).to.equal(2)
      expect(rows[1].content).to_not.exist()
      expect(rows[1].is_error).to_not.exist()
      expect(rows[2].content).to.equal("late")
    end)
  end)
end)

describe("outcomes", function()
  it("is error when the Port raises, recording llm_call_failed", function()
    knl.session({ owner = "u", store = "mem" }, function(s)
      local out = knl.beat(s, knl.device({ llm = sp.new({ { error = "HTTP 529 overloaded" } }) }))
      expect(out.kind).to.equal("error")
      expect(out.error).to.match("HTTP 529 overloaded")
      expect(kinds(s)).to.equal("session_open llm_request llm_call_failed")
      expect(s:view("tail", { n = 1 })[1].data.error).to.match("529")
    end)
  end)

  it("is error when the Port answers outside knl_types.Response", function()
    knl.session({ owner = "u", store = "mem" }, function(s)
      local out = knl.beat(s, knl.device({ llm = sp.new({ { content = { { type = "text" } } } }) }))
      expect(out.kind).to.equal("error")
      expect(out.error).to.match("outside knl_types.Response: %$.content%[1%].text: expected string, got nil")
    end)
  end)

  it("is stopped by a filter before the model is called", function()
    local port = sp.new({ sp.text("never") })
    knl.session({ owner = "u", store = "mem" }, function(s)
      local d = knl.device({ llm = port, filters = { function(req) if #req.messages == 0 then return false, "nothing to say" end end } })
      local out = knl.beat(s, d)
      expect(out.kind).to.equal("stopped")
      expect(out.reason).to.equal("nothing to say")
      expect(port.calls).to.equal(0)
    end)
  end)

  it("lets filters rewrite the request", function()
    local port = sp.new({ sp.text("ok") })
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "hi" } })
      knl.beat(s, knl.device({ llm = port, filters = { function(req) req.max_tokens = 77; return req end } }))
      expect(port.requests[1].max_tokens).to.equal(77)
    end)
  end)

  it("applies the tool policy: deny keeps going, stop ends the beat, every call still gets a result", function()
    local ran = {}
    local port = sp.new({ sp.tools({ { "1", "add", { a = 1, b = 2 } }, { "2", "boom" }, { "3", "add", { a = 0, b = 0 } } }) })
    knl.session({ owner = "u", store = "mem" }, function(s)
      local d = knl.device({ llm = port, tools = add_tools(ran), tool_policy = function(call)
        if call.name == "boom" then return "stop", "boom is not allowed here" end
        return true
      end })
      local out = knl.beat(s, d)
      expect(out.kind).to.equal("stopped")
      expect(out.reason).to.equal("boom is not allowed here")
      expect(#ran).to.equal(1)
      local pairs_ = knl.views.tool_pairs(s)
      expect(#pairs_).to.equal(3)
      expect(pairs_[3].content).to.match("not run")
      expect(knl.views.beats(s)[1].outcome).to.equal("stopped")
    end)
    local port2 = sp.new({ sp.tools({ { "1", "add", { a = 1, b = 2 } }, { "2", "boom" } }) })
    knl.session({ owner = "u", store = "mem" }, function(s)
      local out = knl.beat(s, knl.device({ llm = port2, tools = add_tools(), tool_policy = { deny = { "boom" } } }))
      expect(out.kind).to.equal("ok")
      expect(out.out.tools[2].result).to.match("denied")
      expect(out.out.tools[2].is_error).to.equal(true)
    end)
  end)
end)

describe("on_response (the caller's look between a response and its tools)", function()
  it("sees the response before any tool runs, and a reason stops the beat with the calls answered", function()
    local ran, seen = {}, nil
    local port = sp.new({ sp.tools({ { "1", "add", { a = 1, b = 2 } }, { "2", "add", { a = 3, b = 4 } } }, "two sums") })
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "sum" } })
      local out = knl.beat(s, knl.device({ llm = port, tools = add_tools(ran) }), { on_response = function(o, sess)
        seen = { text = o.text, n = #o.tools, ran = #ran, same = sess == s, usage = o.usage.total_tokens }
        return "the caller said stop"
      end })
      expect(seen).to.equal({ text = "two sums", n = 0, ran = 0, same = true, usage = 28 })
      expect(#ran).to.equal(0)
      expect(out.kind).to.equal("stopped")
      expect(out.reason).to.equal("the caller said stop")
      expect(out.out.tools[2].result).to.equal("not run: the caller said stop")
      expect(out.out.tools[2].is_error).to.equal(true)
      expect(kinds(s)).to.equal("session_open msg_user llm_request llm_response tool_call tool_result tool_call "
        .. "tool_result beat_stopped")
      expect(s:view("tail", { n = 1 })[1].data).to.equal({ reason = "the caller said stop", where = "on_response" })
      expect(knl.views.beats(s)[1].outcome).to.equal("stopped")
    end)
  end)

  it("lets the beat go on with nil, stops a beat without tools too, and turns a raise into a stop", function()
    local port = sp.new({ sp.tools({ { "1", "add", { a = 1, b = 2 } } }), sp.text("done"), sp.text("again") })
    knl.session({ owner = "u", budget = { amount = 10 }, store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "x" } })
      local d = knl.device({ llm = port, tools = add_tools() })
      local out = knl.beat(s, d, { on_response = function() return nil end })
      expect(out.kind).to.equal("ok")
      expect(out.out.tools[1].result).to.equal("3")
      out = knl.beat(s, d, { on_response = function() return "enough" end })
      expect(out.kind).to.equal("stopped")
      expect(out.out.text).to.equal("done")
      out = knl.beat(s, d, { on_response = function() error("hook broke") end })
      expect(out.kind).to.equal("stopped")
      expect(out.reason).to.match("^on_response raised: .*hook broke")
      expect(kinds(s)).to.equal("session_open msg_user llm_request llm_response tool_call tool_result budget_charge "
        .. "llm_request llm_response budget_charge beat_stopped llm_request llm_response budget_charge beat_stopped")
      expect(function() knl.beat(s, d, { on_response = 3 }) end).to.fail.with("field 'on_response' must be a function")
    end)
  end)

  it("lets a cancel raised inside it end the task", function()
    local port = sp.new({ sp.text("hi") })
    local t = std.task.spawn(function()
      knl.session({ owner = "u", store = "mem" }, function(s)
        s:append({ kind = "msg_user", data = { content = "x" } })
        knl.beat(s, knl.device({ llm = port }), { on_response = function() std.task.sleep(30) end })
      end)
    end)
    while port.calls == 0 do std.task.yield() end
    std.task.yield()
    t:cancel()
    local ok, err = pcall(t.join, t)
    expect(ok).to.equal(false)
    expect(tostring(err)).to.match("cancelled")
  end)
end)

describe("what a beat hands on", function()
  it("keeps what the server reports it did to the context (context_management) in llm_response", function()
    local report = { applied_edits = { { type = "clear_tool_uses_20250919", cleared_tool_uses = 2,
      cleared_input_tokens = 30000 } } }
    local resp = sp.text("trimmed")
    resp.context_management = report
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "hi" } })
      knl.beat(s, knl.device({ llm = sp.new({ resp, sp.text("plain") }) }))
      knl.beat(s, knl.device({ llm = sp.new({ sp.text("plain") }) }))
      local rows = s:query("SELECT data FROM events WHERE stream = ? AND kind = 'llm_response' ORDER BY seq", { s.id })
      expect(rows[1].data.context_management).to.equal(report)
      expect(rows[2].data.context_management).to_not.exist()
      local _ = knl.record.llm_response(s, resp, 3, 1)
      expect(s:view("tail", { n = 1 })[1].data.context_management).to.equal(report)
    end)
  end)

  it("gives a ToolPort the tool_use id and records the priced cost", function()
    local ids = {}
    local resp = sp.tools({ { "toolu_9", "probe", {} } })
    resp.usage.cost_usd = 0.25
    local port = sp.new({ resp })
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "x" } })
      local tp = { list = function() return { { name = "probe", description = "p" } } end,
        call = function(_, name, _, ctx) ids[#ids + 1] = name .. " " .. ctx.id .. " " .. ctx.beat; return "ok" end }
      local out = knl.beat(s, knl.device({ llm = port, tools = tp }))
      expect(ids).to.equal({ "probe toolu_9 1" })
      expect(out.out.usage.cost_usd).to.equal(0.25)
      expect(s:events()[4].data.usage.cost_usd).to.equal(0.25)
    end)
  end)

  it("folds thinking blocks into the conversation, but adds no message for thinking alone", function()
    local think = { type = "thinking", thinking = "hmm", signature = "sig" }
    local port = sp.new({
      { content = { think, { type = "tool_use", id = "t1", name = "add", input = { a = 1, b = 1 } } },
        stop_reason = "tool_use", usage = { input_tokens = 1, output_tokens = 1 } },
      { content = { { type = "thinking", thinking = "only" } }, stop_reason = "max_tokens",
        usage = { input_tokens = 1, output_tokens = 1 } },
    })
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "x" } })
      local d = knl.device({ llm = port, tools = add_tools() })
      knl.beat(s, d)
      knl.beat(s, d)
      local sent = port.requests[2].messages
      expect(#sent).to.equal(3)
      expect(sent[2].content[1]).to.equal(think)
      expect(#s:messages()).to.equal(3)
    end)
  end)

  it("never changes a message it handed out, and offers one tools list per device", function()
    local port = sp.new({ sp.tools({ { "t1", "add", { a = 1, b = 1 } }, { "t2", "add", { a = 2, b = 2 } } }),
      { error = "down" }, sp.text("ok") })
    knl.session({ owner = "u", store = "mem" }, function(s)
      s:append({ kind = "msg_user", data = { content = "x" } })
      local d = knl.device({ llm = port, tools = add_tools() })
      knl.beat(s, d)
      knl.beat(s, d) -- fails after sending [user, assistant, user(tool_result)]
      local failed_last = port.requests[2].messages[3]
      expect(#failed_last.content).to.equal(2) -- two tool results, merged into one user turn
      s:append({ kind = "msg_user", data = { content = "please retry" } })
      knl.beat(s, d)
      expect(#failed_last.content).to.equal(2)
      local last = port.requests[3].messages[3]
      expect(#last.content).to.equal(3)
      expect(last.content[3].text).to.equal("please retry")
      expect(port.requests[1].tools).to.be(port.requests[3].tools)
    end)
  end)
end)

describe("knl.device", function()
  it("is frozen: changing it raises", function()
    local d = knl.device({ llm = sp.new({}), tools = add_tools(), filters = { function() end }, system = "s" })
    expect(function() d.system = "other" end).to.fail.with("a device is frozen; field 'system' cannot be changed")
    expect(function() d.llm = {} end).to.fail.with("frozen")
    expect(function() d.filters[2] = function() end end).to.fail.with("frozen")
    expect(function() d.tool_specs[1] = {} end).to.fail.with("frozen")
    expect(function() setmetatable(d, nil) end).to.fail()
    expect(d.system).to.equal("s")
    local seen = {}
    for k in pairs(d) do seen[#seen + 1] = k end
    expect(#seen > 0).to.equal(true)
  end)

  it("validates its spec", function()
    expect(function() knl.device({}) end).to.fail.with("field 'llm': expected table, got nil")
    expect(function() knl.device({ llm = {} }) end).to.fail.with("must be a Port with a chat method")
    expect(function() knl.device({ llm = sp.new({}), sytem = "typo" }) end).to.fail.with("unknown field 'sytem'")
    expect(function() knl.device({ llm = sp.new({}), filters = { 3 } }) end).to.fail.with("field 'filters%[1%]'")
  end)

  it("accepts a plain list of flat specs as tools", function()
    local d = knl.device({ llm = sp.new({}), tools = { { name = "x", description = "d", handler = function() end } } })
    expect(d.tool_specs[1].name).to.equal("x")
  end)
end)

describe("session bracket", function()
  it("closes as error when fn raises and re-raises the same value", function()
    local id
    local ok, err = pcall(knl.session, { owner = "u", store = "mem" }, function(s)
      id = s.id
      error({ code = 42 })
    end)
    expect(ok).to.equal(false)
    expect(err.code).to.equal(42)
    local evs = knl.open({ store = "mem" }):events(id)
    expect(evs[#evs].kind).to.equal("session_close")
    expect(evs[#evs].data.status).to.equal("error")
    expect(evs[#evs].data.error).to.match("42")
  end)

  it("opens and closes a tree in one go", function()
    local ids = {}
    knl.session({ owner = "root", store = "mem", children = { { owner = "c1" }, { owner = "c2" } } }, function(s)
      expect(#s.children).to.equal(2)
      for _, c in ipairs(s.children) do ids[#ids + 1] = c.id end
      s.children[1]:append({ kind = "note", data = { n = 1 } })
      local rows = s:query("SELECT stream, json_extract(data, '$.parent') AS parent FROM events WHERE kind = 'session_open' AND json_extract(data, '$.parent') = ?", { s.id })
      expect(#rows).to.equal(2)
      s:spawn({ owner = "later" }, function(c) ids[#ids + 1] = c.id; c:append({ kind = "note" }) end)
    end)
    local st = knl.open({ store = "mem" })
    for _, id in ipairs(ids) do
      local evs = st:events(id)
      expect(evs[#evs].kind).to.equal("session_close")
    end
  end)

  it("validates appends and refuses kernel-written kinds", function()
    knl.session({ owner = "u", store = "mem" }, function(s)
      expect(function() s:append({ data = {} }) end).to.fail.with("field 'kind' must be a non%-empty string")
      expect(function() s:append({ kind = "x", data = 3 }) end).to.fail.with("field 'data' must be a table, got number")
      expect(function() s:append({ kind = "session_close" }) end).to.fail.with("written by the session bracket")
      expect(function() s.append(nil, {}) end).to.fail.with("expected a knl session")
      local seq, pos = s:append({ kind = "note", data = { x = 1.0, big = 9007199254740993 } })
      expect(seq).to.equal(2)
      expect(math.type(pos)).to.equal("integer")
      local e = s:view("tail", { n = 1 })[1]
      expect(math.type(e.data.x)).to.equal("float")
      expect(e.data.big).to.equal(9007199254740993)
    end)
    local s = knl.session({ owner = "u", store = "mem" })
    s:close()
    expect(function() s:append({ kind = "x" }) end).to.fail.with("is closed")
  end)

  it("keeps s:query to one read-only SELECT over events", function()
    knl.session({ owner = "u", store = "mem" }, function(s)
      expect(function() s:query("DELETE FROM events") end).to.fail.with("only a SELECT")
      expect(function() s:query("SELECT 1; DELETE FROM events") end).to.fail.with("only one statement")
      expect(function() s:query("SELECT * FROM sqlite_master") end).to.fail.with("refused: reading sqlite_master")
      expect(function() s:query("WITH x AS (SELECT 1) INSERT INTO events(stream) SELECT 1") end).to.fail()
      local rows = s:query("SELECT count(*) AS n FROM events WHERE stream = :id", { id = s.id })
      expect(rows[1].n).to.equal(1)
      local j = s:query("SELECT value FROM json_each('[1,2,3]')")
      expect(#j).to.equal(3)
      expect(#s:query("SELECT * FROM events", nil, { limit = 1 })).to.equal(1)
      expect(type(s:query("SELECT meta FROM events WHERE stream = ?", { s.id }, { raw = true })[1].meta)).to.equal("string")
    end)
  end)
end)

describe("knl.api", function()
  it("publishes the table's columns", function()
    local api = knl.api()
    local names = {}
    for i, c in ipairs(api.schema) do names[i] = c.name end
    expect(table.concat(names, ",")).to.equal("position,stream,seq,epoch_ms,kind,schema_version,meta,data")
    expect(api.table).to.equal("events")
    expect(#api.views).to.equal(5)
  end)
  it("lists sessions through the sessions view, newest first, filtered by label", function()
    local a = knl.session({ owner = "first", store = "mem", labels = { team = "x" } })
    local b = knl.session({ owner = "second", store = "mem", labels = { team = "y" } })
    local rows = knl.views.sessions(b, { labels = { team = "x" } })
    expect(#rows).to.equal(1)
    expect(rows[1].id).to.equal(a.id)
    expect(rows[1].closed).to.equal(false)
    a:close()
    local all = knl.views.sessions(b, { limit = 2 })
    expect(all[1].id).to.equal(b.id)
    expect(all[2].id).to.equal(a.id)
    expect(all[2].closed).to.equal(true)
    b:close()
  end)
end)

describe("cancellation", function()
  it("records the failed call and lets a cancel end the task instead of becoming an outcome", function()
    local sid
    local port = { profile = { model = "slow" } }
    function port:chat() std.task.sleep(30); return { content = {} } end
    local t = std.task.spawn(function()
      knl.session({ owner = "u", store = "mem" }, function(s)
        sid = s.id
        knl.beat(s, knl.device({ llm = port }))
        s:append({ kind = "after_cancel" })
      end)
    end)
    std.task.sleep(0.05)
    t:cancel()
    local ok, err = pcall(t.join, t)
    expect(ok).to.equal(false)
    expect(tostring(err)).to.match("cancelled")
    local evs = knl.open({ store = "mem" }):events(sid)
    local kinds = {}
    for i, e in ipairs(evs) do kinds[i] = e.kind end
    expect(table.concat(kinds, " ")).to.equal("session_open llm_request llm_call_failed session_close")
    expect(evs[4].data.status).to.equal("cancelled")
  end)
end)

describe("the fast Response check", function()
  it("agrees with lcheck(resp, knl_types.Response): never passes what lcheck refuses", function()
    local lcheck = require("lshape.check").check
    local types = require("knl_types")
    local text = { type = "text", text = "hi" }
    local cases = {
      { content = {} }, { content = { text } },
      { content = { text, { type = "tool_use", id = "t1", name = "add", input = {} } }, stop_reason = "tool_use",
        model = "m", usage = { input_tokens = 1, output_tokens = 2, total_tokens = 3, thinking_tokens = 0 } },
      { content = { { type = "thinking", thinking = "hm", signature = "s" } } },
      { content = { { type = "tool_result", tool_use_id = "t", content = "x", is_error = true } } },
      { content = { text }, extra = "fields are allowed" },
      { content = { text }, context_management = { applied_edits = {} } },
      -- refused
      "not a table", {}, { content = "x" }, { content = { text, nil, text } }, { content = { text, x = 1 } },
      { content = { { type = "text" } } }, { content = { { type = "image" } } }, { content = { 1 } },
      { content = { { type = "tool_use", id = "t", name = "n" } } },
      { content = { { type = "tool_result", tool_use_id = "t" } } },
      { content = { { type = "thinking", thinking = "x", signature = 1 } } },
      { content = {}, stop_reason = 1 }, { content = {}, model = false },
      { content = {}, usage = { input_tokens = 1 } }, { content = {}, usage = { input_tokens = 1, output_tokens = 1,
        total_tokens = "3" } }, { content = {}, usage = 5 }, { content = {}, context_management = "cleared" },
    }
    local passed = 0
    for i, r in ipairs(cases) do
      local fast = knl._test_helpers().plain_response(r)
      local full = lcheck(r, types.Response)
      expect(fast).to.equal(full == true and i <= 7)
      if i <= 7 then expect(full).to.equal(true) end
      if fast then passed = passed + 1 end
    end
    expect(passed).to.equal(7)
  end)
end)

describe("the fast SessionOpts and DeviceSpec checks", function()
  local lcheck = require("lshape.check").check
  local types = require("knl_types")
  -- the first `n` cases pass the fast check (and lcheck); the rest are left to lcheck
  local function agrees(fast, schema, cases, n)
    for i, v in ipairs(cases) do
      local ok = fast(v)
      expect(ok).to.equal(i <= n)
      if ok then expect(lcheck(v, schema)).to.equal(true) end
    end
  end
  it("never pass what lcheck(opts, knl_types.SessionOpts) refuses", function()
    local cases = {
      {}, { owner = "agent" }, { owner = "a", budget = { amount = 5 } }, { budget = { amount = 1, tag = "tokens" } },
      { owner = "a", scope = { x = 1 }, store = "mem" },
      -- refused, or left to lcheck
      { owner = 1 }, { budget = 5 }, { budget = {} }, { budget = { amount = "5" } }, { budget = { amount = 1, tag = 2 } },
      { labels = { a = "b" } }, { children = { {} } }, { budget = { amount = 1, other = true } }, { [1] = "x" },
    }
    agrees(knl._test_helpers().plain_session_opts, types.SessionOpts, cases, 5)
  end)
  it("never pass what lcheck(spec, knl_types.DeviceSpec) refuses", function()
    local port = { chat = function() end }
    local cases = {
      { llm = port }, { llm = port, tools = { list = function() end, call = function() end }, system = "be brief" },
      { llm = port, fold = function() end, cost = function() end },
      -- refused, or left to lcheck
      {}, { llm = "port" }, { llm = port, system = 1 }, { llm = port, tools = "t" }, { llm = port, fold = {} },
      { llm = port, filters = {} }, { llm = port, tool_policy = function() end }, { llm = port, other = 1 },
    }
    agrees(knl._test_helpers().plain_device_spec, types.DeviceSpec, cases, 3)
  end)
end)
