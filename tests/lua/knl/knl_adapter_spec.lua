-- knl_adapter: ToolPorts from flat specs and other ToolPorts; provider Ports reached lazily.
-- Run alone: agent-block test tests/lua/knl/knl_adapter_spec.lua
local adapter = require("knl_adapter")

describe("knl_adapter.tools", function()
  it("merges flat specs and ToolPorts in order and dispatches to each", function()
    local inner = adapter.tools({ { name = "b", description = "B", handler = function(i, ctx) return "b:" .. i.x .. ":" .. tostring(ctx and ctx.beat) end } })
    local tp = adapter.tools({ { name = "a", description = "A", handler = function(i) return i.x * 2 end }, inner })
    local names = {}
    for i, s in ipairs(tp:list()) do names[i] = s.name end
    expect(table.concat(names, ",")).to.equal("a,b")
    expect(tp:list()[1].input_schema.type).to.equal("object")
    expect(tp:call("a", { x = 4 })).to.equal(8)
    expect(tp:call("b", { x = 1 }, { beat = 3 })).to.equal("b:1:3")
    expect(function() tp:call("zz", {}) end).to.fail.with("unknown tool 'zz'; this device has: a, b")
  end)

  it("refuses duplicates and malformed specs, naming the entry", function()
    local h = function() end
    expect(function() adapter.tools({ { name = "a", description = "x", handler = h }, { name = "a", description = "y", handler = h } }) end)
      .to.fail.with("tool 'a' is given twice %(entry 1 and entry 2%)")
    expect(function() adapter.tools({ { name = "a", handler = h } }) end).to.fail.with("entry 1: %$.description: expected string, got nil")
    expect(function() adapter.tools({ { name = "a", description = "x" } }) end).to.fail.with("field 'handler' must be a function")
    expect(function() adapter.tools({ 3 }) end).to.fail.with("entry 1 must be a tool spec or a ToolPort, got number")
  end)

  it("wraps the global tool registry", function()
    tool.register("reg_tool", { description = "r" }, function(i) return i.v + 1 end)
    local tp = adapter.registry()
    local found = false
    for _, s in ipairs(tp:list()) do if s.name == "reg_tool" then found = true end end
    expect(found).to.equal(true)
    expect(tp:call("reg_tool", { v = 1 })).to.equal(2)
  end)

  it("reaches provider Ports only on access, through llm_proto.port", function()
    expect(rawget(adapter, "anthropic")).to_not.exist()
    package.loaded["llm_proto.port"] = { anthropic = { open = function(_, o) return { profile = { model = o.model }, chat = function() end } end } }
    local port = adapter.anthropic:open({ model = "m" })
    expect(port.profile.model).to.equal("m")
    expect(function() return adapter.replay end).to.fail.with("llm_proto.port has no 'replay' Port")
    package.loaded["llm_proto.port"] = nil
    expect(adapter.nothing).to_not.exist()
  end)
end)

describe("knl_adapter.mcp", function()
  it("wraps an MCP server's tools, namespaced, and records them through a beat like Lua tools", function()
    -- A stand-in for the mcp.* API of this run (mcp.list_tools / mcp.call as the seed documents them).
    local saved = rawget(_G, "mcp")
    local calls = {}
    mcp = {
      list_tools = function(server) return { ok = true, tools = { { name = "echo", description = "echoes",
        inputSchema = { type = "object" } }, { name = "fail", description = "fails" } } } end,
      call = function(server, tool, args)
        calls[#calls + 1] = server .. "/" .. tool
        if tool == "fail" then return { isError = true, content = { { type = "text", text = "bad input" } } } end
        return { content = { { type = "text", text = "echo:" .. args.v } } }
      end,
    }
    local ok, err = pcall(function()
      local tp = adapter.mcp("srv")
      local specs = tp:list()
      expect(specs[1].name).to.equal("srv__echo")
      expect(specs[1].input_schema.type).to.equal("object")
      local knl = require("knl")
      local sp = require("scripted_port")
      local port = sp.new({ sp.tools({ { "m1", "srv__echo", { v = "x" } }, { "m2", "srv__fail", {} } }) })
      knl.session({ owner = "u", store = "mem" }, function(s)
        local out = knl.beat(s, knl.device({ llm = port, tools = { tp } }))
        expect(out.out.tools[1].result).to.equal("echo:x")
        expect(out.out.tools[2].is_error).to.equal(true)
        expect(out.out.tools[2].result).to.equal("bad input")
        local pairs_ = knl.views.tool_pairs(s)
        expect(#pairs_).to.equal(2)
        expect(pairs_[1].name).to.equal("srv__echo")
      end)
      expect(table.concat(calls, ",")).to.equal("srv/echo,srv/fail")
    end)
    mcp = saved
    assert(ok, err)
  end)
end)
