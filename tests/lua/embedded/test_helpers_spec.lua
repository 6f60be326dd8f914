-- The embedded libraries' `_test_helpers()` accessors: each library with pure, I/O-free local
-- helpers hands them to specs through it (README, Testing), a fresh table per call.
-- Run alone: agent-block test tests/lua/embedded/test_helpers_spec.lua
local EXPECTED = {
  agent = { "flat_tool", "result_string", "describe_store", "check_opts" },
  mcp_tools = { "empty_object_schema", "data_text", "check_entry", "encode_result" },
  session = { "check_id" },
  knl = { "describe_error", "strip_pos", "plain_budget", "plain_session_opts", "plain_device_spec",
    "plain_response", "as_blocks", "push_message", "names_of", "request_data", "response_data",
    "policy_verdict", "encode_result", "text_of" },
  knl_adapter = { "mcp_text" },
  llm_proto = { "claude_at_least", "by_prefix", "opt_error", "int" },
  ["llm_proto.anthropic"] = { "cache_marker", "clean_block", "convert_one", "convert_messages", "convert_tools" },
  ["llm_proto.openai"] = { "is_public", "image_part", "result_text", "convert_one", "convert_messages", "convert_tools",
    "one_thinking" },
  ["llm_proto.port"] = { "merged", "check_request", "open_opts", "check_expect", "scripted_response" },
  ["lshape.check"] = { "describe", "is_sequence", "fmt_literal", "render" },
  lspec = { "fmt", "deep_equal", "error_text", "report_lines" },
}

local function helpers(name) return require(name)._test_helpers() end

describe("_test_helpers()", function()
  it("is there in every library with local helpers, and hands over functions only", function()
    for name, want in pairs(EXPECTED) do
      local h = helpers(name)
      local got = {}
      for k, v in pairs(h) do
        expect(type(v)).to.equal("function")
        got[#got + 1] = k
      end
      table.sort(got)
      local sorted = { table.unpack(want) }
      table.sort(sorted)
      expect({ [name] = got }).to.equal({ [name] = sorted })
    end
  end)
  it("returns a fresh table each call, so a spec cannot change the library", function()
    local a, b = helpers("agent"), helpers("agent")
    expect(rawequal(a, b)).to.equal(false)
    a.check_opts = nil
    expect(type(helpers("agent").check_opts)).to.equal("function")
  end)
end)

describe("the helpers themselves", function()
  it("agent: options are checked and tool results stringified", function()
    local h = helpers("agent")
    expect(h.check_opts({ prompt = "hi" })).to.equal(nil)
    expect(h.check_opts({})).to.match("opts.prompt is required")
    expect(h.check_opts({ prompt = "x", max_iterations = 0 })).to.match("max_iterations must be a positive number")
    expect(h.result_string(nil)).to.equal("")
    expect(h.result_string({ a = 1 })).to.equal('{"a":1}')
    local spec = h.flat_tool({ name = "t", schema = { description = "d", input_schema = { type = "object" } } }, 1)
    expect(spec.description).to.equal("d")
    expect(function() h.flat_tool({}, 2) end).to.fail.with("extra_tools%[2%]")
  end)
  it("mcp_tools: data is shown as text, bad server entries are refused", function()
    local h = helpers("mcp_tools")
    expect(h.data_text({ 1, 2 })).to.equal("[1,2]")
    expect(h.encode_result({ ok = false, error = "gone" }, "x")).to.equal("gone")
    expect(function() h.check_entry(1, { name = "s" }) end).to.fail.with("needs 'command'")
  end)
  it("session: ids must be non-empty strings", function()
    expect(function() helpers("session").check_id("load", "") end).to.fail.with("an empty string")
  end)
  it("knl: positions are stripped, content folds into alternating turns", function()
    local h = helpers("knl")
    expect(h.strip_pos("embedded/knl/init.lua:12: bad")).to.equal("bad")
    expect(h.text_of({ { type = "text", text = "a" }, { type = "tool_use" }, { type = "text", text = "b" } }))
      .to.equal("ab")
    local msgs = {}
    h.push_message(msgs, "user", "one")
    h.push_message(msgs, "user", "two")
    expect(#msgs).to.equal(1)
    expect(msgs[1].content).to.equal({ { type = "text", text = "one" }, { type = "text", text = "two" } })
    expect(h.policy_verdict({ deny = { "rm" } }, { name = "rm" })).to.equal(false)
  end)
  it("knl_adapter: all-text MCP results become text", function()
    local h = helpers("knl_adapter")
    expect(h.mcp_text({ content = { { type = "text", text = "a" }, { type = "text", text = "b" } } })).to.equal("a\nb")
  end)
  it("llm_proto: the longest model prefix wins, numbers become integers", function()
    local h = helpers("llm_proto")
    expect(h.by_prefix({ claude = 1, ["claude-opus"] = 2 }, "anthropic/claude-opus-4")).to.equal(2)
    expect(h.int("3.7")).to.equal(3)
    expect(h.claude_at_least("claude-opus-4-6", 4, 6)).to.equal(true)
  end)
  it("llm_proto adapters: empty text and unsigned thinking are dropped, images become URLs", function()
    local a = helpers("llm_proto.anthropic")
    expect(a.clean_block({ type = "text", text = "" })).to.equal(nil)
    expect(a.clean_block({ type = "thinking", thinking = "x" })).to.equal(nil)
    local o = helpers("llm_proto.openai")
    expect(o.image_part({ source = { type = "base64", media_type = "image/png", data = "AA" } }))
      .to.equal({ type = "image_url", image_url = { url = "data:image/png;base64,AA" } })
  end)
  it("llm_proto.port: requests see the open-time defaults, scripted responses are filled in", function()
    local h = helpers("llm_proto.port")
    expect(h.merged({ model = "m" }, { max_tokens = 5 }).model).to.equal("m")
    expect(function() h.check_request({ messages = {} }) end).to.fail.with("non%-empty array")
    local r = h.scripted_response({ _served = 1, profile = { model = "replay" } }, { content = "hi" })
    expect(r.stop_reason).to.equal("end_turn")
    expect(r.content[1].text).to.equal("hi")
  end)
  it("lshape.check: paths render lazily", function()
    local h = helpers("lshape.check")
    expect(h.render({ { "$", "a" }, 2, index = true })).to.equal("$.a[2]")
    expect(h.is_sequence({ 1, 2 })).to.equal(true)
    expect(h.describe(1.5)).to.equal("float")
  end)
  it("lspec: deep equality and the failure report", function()
    local h = helpers("lspec")
    expect(h.deep_equal({ a = { 1 } }, { a = { 1 } })).to.equal(true)
    expect(h.report_lines("g / t", { error = "x.lua:3: boom", where = "x.lua:3" }))
      .to.equal({ "x.lua:3: g / t", "error: boom" })
  end)
end)
