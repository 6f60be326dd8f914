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

  it("cleans up its scripts", function()
    for _, p in ipairs(made) do os.remove(p) end
  end)
end)
