-- Specs of agent.run over the replay provider (no network): the loop, its limits, tools, results.
-- Run alone: agent-block test embedded/agent/spec/agent_spec.lua
local agent = require("agent")

local n, made = 0, {}
local function script(lines)
  n = n + 1
  local base = os.tmpname()
  local path = base .. "_agent_spec_" .. n .. ".jsonl"
  made[#made + 1] = base
  made[#made + 1] = path
  local f = assert(io.open(path, "w"))
  for _, l in ipairs(lines) do f:write(std.json.encode(l), "\n") end
  f:close()
  return path
end

--- Teardown of a group: removes the files `script` made (each must still be there).
local function remove_scripts()
  for _, p in ipairs(made) do assert(os.remove(p)) end
  made = {}
end

local function call(name, input, id)
  return { type = "tool_use", id = id or ("c_" .. name), name = name, input = input or {} }
end

tool.register("add", { description = "adds", input_schema = { type = "object" } },
  function(x) return { sum = x.a + x.b } end, { group = "math" })
tool.register("boom", { description = "fails" }, function() error("it broke") end)

describe("agent.run", function()
  it("runs tools, feeds results back and completes", function()
    local turns = {}
    local r = agent.run({
      provider = "replay",
      replay = script({
        { expect = { tools = { "add", "boom" } }, content = { call("add", { a = 2, b = 3 }) },
          usage = { input_tokens = 10, output_tokens = 2 } },
        { expect = { last_message_contains = '{"sum":5}' }, content = "five", usage = { input_tokens = 20, output_tokens = 1 } },
      }),
      prompt = "2+3?",
      on_turn = function(info)
        local keys = {}
        for k in pairs(info) do keys[#keys + 1] = k end
        table.sort(keys)
        turns[#turns + 1] = { keys = keys, n = #info.tool_calls, content = info.content }
      end,
    })
    expect(r.error).to_not.exist()
    expect(r.ok).to.equal(true)
    expect(r.stop_reason).to.equal("completed")
    expect(r.content).to.equal("five")
    expect(r.num_turns).to.equal(2)
    expect(r.usage.total_tokens).to.equal(33)
    expect(#r.messages).to.equal(4)
    expect(turns[1].keys).to.equal({ "content", "tool_calls", "turn_number", "usage" })
    expect(turns[1].n).to.equal(1)
    expect(turns[2].content).to.equal("five")
  end)

  it("sends a tool's error back to the model as an error result", function()
    local r = agent.run({
      provider = "replay",
      replay = script({
        { content = { call("boom"), call("nope") } },
        { expect = { last_message_contains = "it broke" }, content = "sorry" },
      }),
      prompt = "go",
    })
    expect(r.ok).to.equal(true)
    local results = r.messages[3].content
    expect(results[1].is_error).to.equal(true)
    expect(results[1].content).to.match("tool error: .*it broke")
    expect(results[2].content).to.match("unknown tool 'nope'")
  end)

  it("takes a tool error ending in ': cancelled' for an error, not for a cancel", function()
    tool.register("fake_cancel", { description = "fails with a cancel-like text" }, function()
      error("the upstream job was cancelled: cancelled")
    end)
    local r = agent.run({
      provider = "replay",
      store = "mem",
      replay = script({
        { content = { call("fake_cancel") } },
        { expect = { last_message_contains = ": cancelled" }, content = "noted" },
      }),
      prompt = "go",
    })
    expect(r.ok).to.equal(true)
    expect(r.stop_reason).to.equal("completed")
    expect(r.messages[3].content[1].is_error).to.equal(true)
    expect(r.messages[3].content[1].content).to.match("tool error: .*: cancelled$")
  end)

  it("says what kind of failure a failed model request was (status, retryable)", function()
    local r = agent.run({ provider = "openai", base_url = "http://127.0.0.1:1/v1", api_key = "k",
      max_retries = 0, store = "mem", prompt = "p" })
    expect(r.ok).to.equal(false)
    expect(r.stop_reason).to.equal("error")
    expect(r.error).to.match("^llm: openai connection failed")
    expect(r.status).to.equal(0)
    expect(r.retryable).to.equal(true)
  end)

  it("tells the runtime's sentinels from look-alike texts (std.task.is_fatal)", function()
    expect(std.task.is_fatal("cancelled")).to.equal(false)
    expect(std.task.is_fatal("x.lua:3: cancelled")).to.equal(false)
    expect(std.task.is_fatal({ message = "cancelled" })).to.equal(false)
    local t = std.task.spawn(function() std.task.sleep(30) end)
    std.task.yield()
    t:cancel()
    local ok, err = pcall(t.join, t)
    expect(ok).to.equal(false)
    expect(std.task.is_fatal(err)).to.equal("cancelled")
    expect(tostring(err)).to.equal("cancelled")
  end)

  it("stops when on_turn returns false, answering the pending calls", function()
    local r = agent.run({
      provider = "replay",
      replay = script({ { content = { call("add", { a = 1, b = 1 }) } } }),
      prompt = "go",
      on_turn = function() return false end,
    })
    expect(r.ok).to.equal(true)
    expect(r.stop_reason).to.equal("stopped")
    local last = r.messages[#r.messages]
    expect(last.role).to.equal("user")
    expect(last.content[1].content).to.match("on_turn returned false")
  end)

  it("reports max_iterations as a cut-off, not a completion", function()
    local r = agent.run({
      provider = "replay",
      replay = script({ { content = { call("add", { a = 1, b = 1 }, "x1") } }, { content = { call("add", { a = 1, b = 2 }, "x2") } } }),
      prompt = "loop",
      max_iterations = 2,
    })
    expect(r.ok).to.equal(false)
    expect(r.stop_reason).to.equal("max_iterations")
    expect(r.num_turns).to.equal(2)
    expect(r.error).to.match("max_iterations %(2%)")
    expect(r.messages[#r.messages].content[1].tool_use_id).to.equal("x2")
  end)

  it("stops on the token budget and on the cost budget", function()
    local r = agent.run({
      provider = "replay",
      replay = script({ { content = { call("add", { a = 1, b = 1 }) }, usage = { input_tokens = 600, output_tokens = 500 } } }),
      prompt = "spend", max_tokens_budget = 1000,
    })
    expect(r.stop_reason).to.equal("budget")
    expect(r.error).to.match("token budget spent: 1100 of 1000")
    r = agent.run({
      provider = "replay", model = "claude-haiku-4-5-20251001",
      replay = script({ { content = { call("add", { a = 1, b = 1 }) }, usage = { input_tokens = 1000000, output_tokens = 0 } } }),
      prompt = "spend", max_cost_usd = 0.5,
    })
    expect(r.stop_reason).to.equal("budget")
    expect(r.usage.cost_usd).to.equal(1.0)
    r = agent.run({ provider = "replay", model = "unpriced", replay = script({ { content = "x" } }),
      prompt = "p", max_cost_usd = 1 })
    expect(r.ok).to.equal(false)
    expect(r.error).to.match("needs a price for model \"unpriced\"")
    r = agent.run({ provider = "replay", model = "unpriced", replay = script({ { content = "x", usage = { output_tokens = 1000000 } } }),
      prompt = "p", max_cost_usd = 100, prices = { unpriced = { input = 1, output = 2 } } })
    expect(r.ok).to.equal(true)
    expect(r.usage.cost_usd).to.equal(2.0)
  end)

  it("filters by tool_groups and adds extra_tools with handlers", function()
    local r = agent.run({
      provider = "replay",
      replay = script({
        { expect = { tools = { "add", "shout" } }, content = { call("shout", { s = "hi" }) } },
        { expect = { last_message_contains = "HI" }, content = "done" },
      }),
      prompt = "p",
      tool_groups = { "math", "default" },
      extra_tools = { { name = "shout", schema = { description = "upper", input_schema = { type = "object" } },
        handler = function(x) return x.s:upper() end } },
    })
    expect(r.error).to_not.exist()
    -- boom is in "default" too; only math: boom is filtered out
    r = agent.run({
      provider = "replay",
      replay = script({ { expect = { tools = { "add" } }, content = "ok" } }),
      prompt = "p", tool_groups = { "math" },
    })
    expect(r.ok).to.equal(true)
  end)

  it("offers a tool registered during the run from the next turn on", function()
    local r = agent.run({
      provider = "replay",
      replay = script({
        { expect = { tools = { "add" } }, content = { call("learn") } },
        { expect = { tools = { "add", "learned" } }, content = { call("learned") } },
        { expect = { last_message_contains = "known now" }, content = "done" },
      }),
      prompt = "p",
      tool_groups = { "math", "late" },
      extra_tools = { { name = "learn", group = "math", description = "registers a tool", handler = function()
        tool.register("learned", { description = "new" }, function() return "known now" end, { group = "late" })
        return "ok"
      end } },
    })
    expect(r.error).to_not.exist()
    expect(r.num_turns).to.equal(3)
  end)

  it("prepends history and never throws on bad input", function()
    local r = agent.run({
      provider = "replay",
      replay = script({ { expect = { messages = 3 }, content = "ok" } }),
      prompt = "third",
      history = { { role = "user", content = "first" }, { role = "assistant", content = "second" } },
    })
    expect(r.ok).to.equal(true)
    expect(agent.run("x").error).to.match("argument 1 %(opts%) must be a table")
    expect(agent.run({}).error).to.match("prompt is required")
    expect(agent.run({ prompt = "p", history = 3 }).error).to.match("history must be a table")
    expect(agent.run({ prompt = "p", provider = "nope" }).error).to.match("must be anthropic, openai or replay")
    expect(agent.run({ prompt = "p", store = 5 }).error).to.match("opts.store")
    local ok = agent.run({ prompt = "p", provider = "replay", store = "mem", replay = script({ { content = "x" } }) })
    expect(ok.ok).to.equal(true)
  end)

  it("fails clearly when the replay script runs out or does not match", function()
    local r = agent.run({ provider = "replay", replay = script({ { content = { call("add", { a = 1, b = 1 }) } } }), prompt = "p" })
    expect(r.ok).to.equal(false)
    expect(r.stop_reason).to.equal("error")
    expect(r.error).to.match("ran out: it scripts 1 responses and request #2 has none")
    r = agent.run({ provider = "replay", replay = script({ { expect = { system_contains = "pirate" }, content = "x" } }),
      prompt = "p", system = "you are a cat" })
    expect(r.error).to.match("expected the system prompt to contain \"pirate\"")
  end)

  it("refuses locally what the provider would reject, before any request", function()
    local r = agent.run({ provider = "replay", replay = script({ { content = "x" } }), prompt = "p",
      tool_choice = "required", thinking = { budget_tokens = 2048 } })
    expect(r.ok).to.equal(false)
    expect(r.error).to.match("forced tool use")
  end)

  it("drives MCP tools through mcp_tools and closes it even on error", function()
    local log = {}
    package.loaded.mcp_tools = {
      connect = function(servers, o)
        log[#log + 1] = "connect " .. servers[1].name .. " " .. tostring(o.enable_resources)
        return {
          tools = function() log[#log + 1] = "tools"
            return { { name = "srv__echo", description = "echo", input_schema = { type = "object" }, group = "srv" } }
          end,
          call = function(_, name, input) log[#log + 1] = "call " .. name return "echo:" .. input.t, false end,
          close = function() log[#log + 1] = "close" end,
        }
      end,
    }
    local r = agent.run({
      provider = "replay",
      replay = script({
        { expect = { tools = { "srv__echo" } }, content = { call("srv__echo", { t = "x" }) } },
        { expect = { last_message_contains = "echo:x" }, content = "done" },
      }),
      prompt = "p", tool_groups = { "srv" }, enable_resources = true,
      mcp_servers = { { name = "srv", command = "srv-mcp" } },
    })
    expect(r.error).to_not.exist()
    expect(log).to.equal({ "connect srv true", "tools", "call srv__echo", "tools", "close" })
    log = {}
    r = agent.run({ provider = "replay", replay = script({}), prompt = "p", mcp_servers = { { name = "srv", command = "x" } } })
    expect(r.ok).to.equal(false)
    expect(log[#log]).to.equal("close")
    package.loaded.mcp_tools = nil
  end)

  it("resumes after pause_turn instead of stopping", function()
    local r = agent.run({
      provider = "replay",
      replay = script({
        { content = { { type = "text", text = "searching" } }, stop_reason = "pause_turn" },
        { expect = { messages = 2 }, content = "found it" },
      }),
      prompt = "p",
    })
    expect(r.error).to_not.exist()
    expect(r.num_turns).to.equal(2)
    expect(r.content).to.equal("found it")
  end)

  after_all(remove_scripts)
end)

describe("agent.run on the kernel", function()
  local knl = require("knl")

  local function kinds(r)
    local out = {}
    for i, e in ipairs(r.session:events()) do out[i] = e.kind end
    return table.concat(out, " ")
  end

  it("records one session per run and one beat per turn", function()
    local r = agent.run({
      provider = "replay", store = "mem",
      replay = script({
        { content = { call("add", { a = 2, b = 3 }, "t1") }, usage = { input_tokens = 10, output_tokens = 2 } },
        { content = "five", usage = { input_tokens = 20, output_tokens = 1 } },
      }),
      prompt = "2+3?", max_tokens_budget = 1000,
    })
    expect(r.ok).to.equal(true)
    expect(r.session_id).to.match("^s_")
    expect(r.session.id).to.equal(r.session_id)
    expect(kinds(r)).to.equal("session_open msg_user llm_request llm_response tool_call tool_result budget_charge "
      .. "llm_request llm_response budget_charge agent_result session_close")
    local ev = r.session:events()
    expect(ev[1].data.owner).to.equal("agent")
    expect(ev[2].data.content).to.equal("2+3?")
    expect(ev[3].meta.beat).to.equal(1)
    expect(ev[3].data.provider).to.equal("replay")
    expect(ev[5].data).to.equal({ id = "t1", name = "add", input = { a = 2, b = 3 } })
    expect(ev[6].data.content).to.equal('{"sum":5}')
    expect(ev[6].data.is_error).to.equal(false)
    expect(ev[8].meta.beat).to.equal(2)
    expect(ev[11].data).to.equal({ ok = true, stop_reason = "completed", num_turns = 2, usage = ev[11].data.usage })
    expect(ev[11].data.usage.total_tokens).to.equal(33)
    expect(ev[12].data.status).to.equal("ok")
    -- the views answer over the run's session; the token budget is the session's budget
    expect(#knl.views.beats(r.session)).to.equal(2)
    local ledger = knl.views.ledger(r.session)
    expect(ledger[2].spent).to.equal(33)
    expect(ledger[2].remaining).to.equal(967)
    -- the fold is the conversation: what result.messages holds
    expect(#r.messages).to.equal(4)
    expect(r.messages[3].content[1].tool_use_id).to.equal("t1")
    expect(r.session:messages()).to.equal(r.messages)
    -- a run's result encodes without its session
    expect(std.json.decode(std.json.encode(r)).session).to_not.exist()
  end)

  it("records a stop by on_turn, with the calls answered as not run", function()
    local r = agent.run({
      provider = "replay", store = "mem",
      replay = script({ { content = { call("add", { a = 1, b = 1 }, "p1"), call("boom", {}, "p2") } } }),
      prompt = "go",
      on_turn = function() return false end,
    })
    expect(r.stop_reason).to.equal("stopped")
    expect(kinds(r)).to.equal("session_open msg_user llm_request llm_response tool_call tool_result tool_call "
      .. "tool_result beat_stopped agent_result session_close")
    local ev = r.session:events()
    expect(ev[6].data.is_error).to.equal(true)
    expect(ev[6].data.content).to.equal("not run: the run stopped (on_turn returned false)")
    expect(ev[9].data.where).to.equal("on_response")
  end)

  it("records a failed model call and closes the session as an error", function()
    local r = agent.run({ provider = "replay", store = "mem", replay = script({}), prompt = "p" })
    expect(r.ok).to.equal(false)
    expect(kinds(r)).to.equal("session_open msg_user llm_request llm_call_failed agent_result session_close")
    local ev = r.session:events()
    expect(ev[4].data.error).to.match("ran out")
    expect(ev[6].data.status).to.equal("error")
    expect(ev[6].data.error).to.match("ran out")
    expect(r.num_turns).to.equal(0)
  end)

  it("records MCP tool calls like Lua tool calls", function()
    package.loaded.mcp_tools = {
      connect = function()
        return {
          tools = function() return { { name = "srv__echo", description = "echo", input_schema = { type = "object" } } } end,
          call = function(_, name, input)
            if input.t == "bad" then return "no such thing", true end
            return "echo:" .. input.t, false
          end,
          close = function() end,
        }
      end,
    }
    local r = agent.run({
      provider = "replay", store = "mem",
      replay = script({
        { content = { call("srv__echo", { t = "x" }, "m1"), call("srv__echo", { t = "bad" }, "m2") } },
        { content = "done" },
      }),
      prompt = "p", mcp_servers = { { name = "srv", command = "srv-mcp" } },
    })
    package.loaded.mcp_tools = nil
    expect(r.error).to_not.exist()
    local pairs_ = knl.views.tool_pairs(r.session)
    expect(#pairs_).to.equal(2)
    expect(pairs_[1].name).to.equal("srv__echo")
    expect(pairs_[1].content).to.equal("echo:x")
    expect(pairs_[1].is_error).to.equal(false)
    expect(pairs_[2].content).to.equal("no such thing")
    expect(pairs_[2].is_error).to.equal(true)
  end)

  it("takes history as message events and a system message into the system prompt", function()
    local r = agent.run({
      provider = "replay", store = "mem",
      replay = script({ { expect = { messages = 3, system_contains = "be terse\n\nanswer in French" }, content = "oui" } }),
      prompt = "third", system = "be terse",
      history = { { role = "system", content = "answer in French" }, { role = "user", content = "first" },
        { role = "assistant", content = { { type = "text", text = "second" } } } },
    })
    expect(r.error).to_not.exist()
    expect(kinds(r)).to.equal("session_open msg_system msg_user msg_assistant msg_user llm_request llm_response "
      .. "agent_result session_close")
    expect(agent.run({ prompt = "p", provider = "replay", store = "mem", replay = script({}),
      history = { { role = "tool", content = "x" } } }).error).to.match("history%[1%]%.role must be user, assistant or system")
    expect(agent.run({ prompt = "p", provider = "replay", store = "mem", replay = script({}),
      history = { { role = "user" } } }).error).to.match("history%[1%]%.content must be a string or a list of blocks, got nil")
  end)

  it("continues a recorded run: session.load of its session is the next run's history", function()
    local first = agent.run({ provider = "replay", store = "mem", prompt = "2+3?",
      replay = script({ { content = { call("add", { a = 2, b = 3 }, "h1") } }, { content = "five" } }) })
    local history = require("session").load(first.session_id, { store = "mem" })
    expect(history).to.equal(first.messages)
    local second = agent.run({ provider = "replay", store = "mem", prompt = "and 5+5?", history = history,
      replay = script({ { expect = { messages = 5, last_message_contains = "5+5" }, content = "ten" } }) })
    expect(second.error).to_not.exist()
    expect(#second.messages).to.equal(6)
    expect(second.messages[3].content[1].tool_use_id).to.equal("h1")
  end)

  it("keeps the store choice: mem, { sqlite = path }, and a clear error otherwise", function()
    local r = agent.run({ provider = "replay", store = "mem", replay = script({ { content = "x" } }), prompt = "p" })
    expect(knl.open({ store = "mem" }):has(r.session_id)).to.equal(true)
    local path = os.tmpname() .. "_agent_store.sqlite"
    made[#made + 1] = path
    r = agent.run({ provider = "replay", store = { sqlite = path }, replay = script({ { content = "y" } }), prompt = "p" })
    expect(r.ok).to.equal(true)
    expect(knl.open({ store = { sqlite = path } }):has(r.session_id)).to.equal(true)
    expect(knl.open({ store = "mem" }):has(r.session_id)).to.equal(false)
    for _, bad in ipairs({ "disk", { sqlite = 3 }, { sqlite = "" }, {} }) do
      local b = agent.run({ provider = "replay", store = bad, replay = script({ { content = "x" } }), prompt = "p" })
      expect(b.ok).to.equal(false)
      expect(b.error).to.match('opts%.store must be "mem" or { sqlite = <path> }')
      expect(b.session_id).to_not.exist()
    end
    local file = os.tmpname()
    made[#made + 1] = file
    local b = agent.run({ provider = "replay", store = { sqlite = file .. "/inside/a/file.sqlite" },
      replay = script({ { content = "x" } }), prompt = "p" })
    expect(b.ok).to.equal(false)
    expect(b.error).to.match("^agent%.run: opts%.store: ")
  end)

  it("closes its session as cancelled when its task is cancelled, and lets the cancel through", function()
    local started = false
    tool.register("slow", { description = "sleeps" }, function()
      started = true
      std.task.sleep(30)
      return "late"
    end)
    local t = std.task.spawn(function()
      return agent.run({ provider = "replay", store = "mem", prompt = "p",
        replay = script({ { content = { call("slow", {}, "z1") } }, { content = "never" } }) })
    end)
    while not started do std.task.yield() end
    t:cancel()
    local ok, err = pcall(t.join, t)
    expect(ok).to.equal(false)
    expect(tostring(err)).to.match("cancelled")
    local last = knl.views.sessions(knl.open({ store = "mem" }), { limit = 1 })[1]
    expect(last.owner).to.equal("agent")
    expect(last.status).to.equal("cancelled")
  end)

  after_all(remove_scripts)
end)
