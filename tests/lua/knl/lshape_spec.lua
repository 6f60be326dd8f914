-- lshape: validation, reflection and LuaCATS output. Run alone: agent-block test tests/lua/knl/lshape_spec.lua
local lshape = require("lshape")
local T = lshape.t

describe("lshape.check", function()
  it("accepts the seed README's example", function()
    local User = T.shape({ name = T.string, age = T.number })
    local ok, why = lshape.check.check({ name = "Ada", age = 36 }, User)
    expect(ok).to.equal(true)
    expect(why).to_not.exist()
  end)

  it("names the path of the first mismatch", function()
    local User = T.shape({ name = T.string, age = T.integer, tags = T.array_of(T.string):optional(),
      address = T.shape({ city = T.string }):optional() })
    local function why(v) return select(2, lshape.check.check(v, User)) end
    expect(why({ name = "A", age = "x" })).to.equal("$.age: expected integer, got string")
    expect(why({ name = "A", age = 1.5 })).to.equal("$.age: expected integer, got float")
    expect(why({ name = "A", age = 1, tags = { "a", 2 } })).to.equal("$.tags[2]: expected string, got integer")
    expect(why({ name = "A", age = 1, address = {} })).to.equal("$.address.city: expected string, got nil")
    expect(why({ age = 1 })).to.equal("$.name: expected string, got nil")
    expect(why("nope")).to.equal("$: expected table, got string")
    expect(lshape.check.check({ name = "A", age = 1, extra = true }, User)).to.equal(true)
    local ok, strict = lshape.check.check({ name = "A", age = 1, extra = true }, User, { strict = true })
    expect(ok).to.equal(false)
    expect(strict).to.equal('$: unknown field "extra"')
  end)

  it("handles literals, one_of, any_of, maps, patterns, discriminated unions and refs", function()
    local c = lshape.check.check
    expect(c("b", T.one_of("a", "b"))).to.equal(true)
    expect(select(2, c("z", T.one_of("a", "b")))).to.equal('$: expected one of "a", "b", got "z"')
    expect(c(3, T.any_of(T.string, T.number))).to.equal(true)
    expect(select(2, c(true, T.any_of(T.string, T.number)))).to.match("matches none of 2 alternatives")
    expect(c({ a = 1, b = 2 }, T.map_of(T.string, T.integer))).to.equal(true)
    expect(select(2, c({ a = "x" }, T.map_of(T.string, T.integer)))).to.equal("$.a: expected integer, got string")
    expect(select(2, c("abc", T.pattern("^%d+$")))).to.equal('$: "abc" does not match "^%d+$"')
    local Shape = T.discriminated("type", { circle = T.shape({ type = T.literal("circle"), r = T.number }),
      square = T.shape({ type = T.literal("square"), side = T.number }) })
    expect(c({ type = "circle", r = 1 }, Shape)).to.equal(true)
    expect(select(2, c({ type = "circle", side = 1 }, Shape))).to.equal("$.r: expected number, got nil")
    expect(select(2, c({ type = "hex" }, Shape))).to.equal([[$: field 'type' must be one of "circle", "square", got "hex"]])
    local Node = T.named("SpecNode", T.shape({ value = T.number, next = T.ref("SpecNode"):optional() }))
    expect(c({ value = 1, next = { value = 2, next = { value = 3 } } }, Node)).to.equal(true)
    expect(select(2, c({ value = 1, next = { value = "x" } }, Node))).to.equal("$.next.value: expected number, got string")
  end)

  it("asserts, and asserts only in dev mode for assert_dev", function()
    expect(function() lshape.check.assert(1, T.string, "input") end).to.fail.with("input: %$: expected string, got integer")
    expect(lshape.check.assert("x", T.string)).to.equal("x")
    expect(lshape.check.is_dev_mode()).to.equal(os.getenv("LSHAPE_CHECK") == "1")
  end)

  it("refuses bad schemas with a clear error", function()
    expect(function() T.shape({ a = "string" }) end).to.fail.with("field 'a' must be a schema, got string")
    expect(function() T.array_of(3) end).to.fail.with("argument 1 must be a schema")
    expect(function() lshape.check.check(1, {}) end).to.fail.with("argument 2 %(schema%) must be a schema")
  end)
end)

describe("lshape.reflect", function()
  it("lists fields and walks nodes", function()
    local S = T.shape({ b = T.number:describe("bee"), a = T.array_of(T.string):optional() })
    local f = lshape.reflect.fields(S)
    expect(f[1].name).to.equal("a")
    expect(f[1].optional).to.equal(true)
    expect(f[2].doc).to.equal("bee")
    local paths = {}
    lshape.reflect.walk(S, function(_, path) paths[#paths + 1] = path end)
    expect(table.concat(paths, " ")).to.equal("$ $.a $.a[] $.b")
  end)
end)

describe("lshape.luacats", function()
  it("generates classes with optional fields, docs, arrays, unions and references", function()
    local Address = T.shape({ city = T.string, zip = T.string:optional() })
    local User = T.shape({
      name = T.string:describe("display name"),
      age = T.integer,
      role = T.one_of("admin", "user"),
      tags = T.array_of(T.string),
      address = Address:optional(),
      meta = T.map_of(T.string, T.any),
    })
    local out = lshape.luacats.gen({ User = User, Address = Address }, "app.")
    expect(out).to.equal(table.concat({
      "---@class app.Address",
      "---@field city string",
      "---@field zip? string",
      "",
      "---@class app.User",
      "---@field address? app.Address",
      "---@field age integer",
      "---@field meta table<string, any>",
      "---@field name string display name",
      '---@field role "admin"|"user"',
      "---@field tags string[]",
      "",
    }, "\n"))
  end)

  it("writes unnamed nested shapes inline and non-shapes as aliases", function()
    local out = lshape.luacats.gen({ Id = T.any_of(T.string, T.integer),
      Box = T.shape({ inner = T.shape({ x = T.number }) }) })
    expect(out).to.match("---@alias Id string|integer")
    expect(out).to.match("---@field inner { x: number }")
  end)

  it("renders the kernel's own declarations", function()
    local cats = require("knl_types").luacats()
    expect(cats).to.match("---@class knl.Response")
    expect(cats).to.match("---@field content knl.ContentBlock%[%] normalised content blocks")
    expect(cats).to.match("---@field usage%? knl.Usage")
    expect(cats).to.match('---@field kind "ok"|"refused"|"error"|"stopped"')
  end)
end)
