-- Specs of mcp_tools that need no server (the server-backed contract is tested in
-- tests/host/mcp/mcp_tools_test.ts). Run alone: agent-block test embedded/mcp_tools/spec/mcp_tools_spec.lua
local mcp_tools = require("mcp_tools")

describe("mcp_tools.resolve_group", function()
  it("takes _meta.group when it is a non-empty string", function()
    expect(mcp_tools.resolve_group({ name = "t", _meta = { group = "docs" } }, "srv")).to.equal("docs")
  end)
  it("falls back to the server name", function()
    expect(mcp_tools.resolve_group({ name = "t" }, "srv")).to.equal("srv")
    expect(mcp_tools.resolve_group({ name = "t", _meta = { group = "" } }, "srv")).to.equal("srv")
    expect(mcp_tools.resolve_group({ name = "t", _meta = { group = 3 } }, "srv")).to.equal("srv")
  end)
end)

describe("mcp_tools.flatten", function()
  it("joins text blocks and marks the others", function()
    local text = mcp_tools.flatten({
      { type = "text", text = "one" },
      { type = "image", mimeType = "image/png", data = "..." },
      { type = "resource", resource = { uri = "file:///a", text = "inline" } },
      { type = "resource_link", uri = "file:///b" },
    })
    expect(text).to.equal("one\n[image image/png]\ninline\n[resource link file:///b]")
  end)
  it("uses structured content when there is no content", function()
    expect(mcp_tools.flatten({}, { n = 1 })).to.equal('{"n":1}')
  end)
end)

describe("mcp_tools.connect", function()
  it("rejects bad arguments, naming them", function()
    expect(function() mcp_tools.connect("x") end).to.fail.with("argument 1 %(servers%) must be a table, got string")
    expect(function() mcp_tools.connect({ { command = "x" } }) end).to.fail.with("field 'name' must be a non%-empty string")
    expect(function() mcp_tools.connect({ { name = "s" } }) end).to.fail.with("server 's' needs 'command' %(stdio%) or 'url' %(HTTP%)")
  end)
  it("skips a failing server that is not required, and raises for a required one", function()
    local conn = mcp_tools.connect({ { name = "ghost", command = "/nonexistent/server" } })
    expect(#conn:tools()).to.equal(0)
    expect(conn:call("ghost__x", {})).to.equal("unknown MCP tool 'ghost__x'")
    conn:close()
    expect(function()
      mcp_tools.connect({ { name = "ghost", command = "/nonexistent/server", required = true } })
    end).to.fail.with("required server 'ghost' failed")
  end)
end)
