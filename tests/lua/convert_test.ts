/**
 * The value converter (src/lua/convert.ts) and the JSON codec (src/json/codec.ts), seen from both
 * sides: what a host function receives from Lua, and what Lua gets back.
 */
import assert from "node:assert/strict";
import { evalLua, runLua } from "../helpers.ts";
import { echoModule } from "./echo_module.ts";
import { LuaFloat } from "../../src/json/values.ts";
import { LuaEngine } from "../../src/lua/engine.ts";
import { parseJson, stringifyJson } from "../../src/json/codec.ts";

async function withEcho(source: string) {
  const { module, captured } = echoModule();
  const r = await runLua(source, { modules: [module] });
  if (r.outcome.status !== "returned") {
    throw new Error(`Lua did not return: ${JSON.stringify(r.outcome)}\n${r.stderr}`);
  }
  return { captured, result: r.outcome.value };
}

Deno.test("strings with NUL bytes cross unchanged both ways", async () => {
  const { captured, result } = await withEcho(`
    t.capture("a\\0b\\0")
    local back = t.echo("a\\0b\\0")
    assert(back == "a\\0b\\0" and #back == 4, "echo changed the string: " .. #back)
    local aback = t.aecho("x\\0y")
    assert(aback == "x\\0y", "async echo changed the string")
    return back
  `);
  assert.equal(captured[0], "a\0b\0");
  assert.equal(result, "a\0b\0");
});

Deno.test("non-UTF-8 strings arrive as exact bytes and round-trip", async () => {
  const { captured } = await withEcho(`
    local s = "\\xff\\xfe\\x00\\x80ok"
    t.capture(s)
    assert(t.echo(s) == s, "sync round trip")
    assert(t.aecho(s) == s, "async round trip")
    local b = t.give("bytes")
    assert(b == "\\0\\xffA\\0", "bytes from JS: " .. b:byte(1, -1))
    return "ok"
  `);
  assert.ok(captured[0] instanceof Uint8Array);
  assert.deepEqual([...(captured[0] as Uint8Array)], [0xff, 0xfe, 0, 0x80, 0x6f, 0x6b]);
});

Deno.test("a non-UTF-8 chunk result keeps its bytes", async () => {
  const r = await runLua(`return "\\xff\\x00\\xfe"`);
  assert.equal(r.outcome.status, "returned");
  const v = (r.outcome as { value: unknown }).value;
  assert.ok(v instanceof Uint8Array);
  assert.deepEqual([...v], [0xff, 0, 0xfe]);
});

Deno.test("integers keep full 64-bit precision and stay apart from floats", async () => {
  const { captured } = await withEcho(`
    t.capture(math.maxinteger, math.mininteger, 9007199254740993, 42, 1.5, -0.25)
    assert(t.echo(math.maxinteger) == math.maxinteger, "maxinteger round trip")
    assert(t.echo(math.mininteger) == math.mininteger, "mininteger round trip")
    assert(t.echo(9007199254740993) == 9007199254740993, "2^53+1 round trip")
    assert(math.type(t.echo(42)) == "integer", "42 stays an integer")
    assert(math.type(t.echo(1.5)) == "float", "1.5 stays a float")
    assert(t.give("max") == math.maxinteger and math.type(t.give("max")) == "integer", "bigint max")
    assert(t.give("min") == math.mininteger, "bigint min")
    assert(math.type(t.give("big_safe")) == "integer", "2^53-1 from JS is an integer")
    assert(math.type(t.give("float3")) == "float" and t.give("float3") == 3.0, "LuaFloat(3) is 3.0")
    assert(math.type(t.give("half")) == "float", "2.5 is a float")
    t.tagged(3.0)
    t.tagged(3)
    t.capture_tagged({f = 3.0, i = 3, h = 0.5}, 2.0)
    return "ok"
  `);
  assert.ok(
    captured[8] && (captured[8] as { f: unknown }).f instanceof LuaFloat,
    "floats: 'tagged' keeps 3.0",
  );
  assert.deepEqual(captured[8], { f: new LuaFloat(3), i: 3, h: 0.5 });
  assert.deepEqual(captured[9], new LuaFloat(2));
  assert.deepEqual(captured.slice(0, 6), [2n ** 63n - 1n, -(2n ** 63n), 9007199254740993n, 42, 1.5, -0.25]);
  assert.ok(captured[6] instanceof LuaFloat && captured[6].value === 3, "tagged 3.0 is a LuaFloat");
  assert.equal(captured[7], 3);
});

Deno.test("tables: one rule decides array or object, empty tables included", async () => {
  const { captured } = await withEcho(`
    t.capture({1, 2, 3})                    -- 1: array
    t.capture({})                           -- 2: empty table -> object
    t.capture(std.json.array())             -- 3: marked empty array
    t.capture({1, 2, nil, 4})               -- 4: hole -> object
    t.capture({a = 1, [1] = "x"})           -- 5: mixed -> object
    t.capture(std.json.object({1, 2}))      -- 6: marked object
    t.capture(std.json.array({[1] = 1, [3] = 3})) -- 7: marked array with a hole -> null
    t.capture({x = std.json.null})          -- 8: null sentinel
    t.capture({[2] = "b", [1] = "a"})       -- 9: keys 1..n in any order -> array
    t.capture({[0] = "z"})                  -- 10: 0 is not an array index
    t.capture({[1.5] = "f"})                -- 11: float key
    return "ok"
  `);
  assert.deepEqual(captured[0], [1, 2, 3]);
  assert.deepEqual(captured[1], {});
  assert.ok(!Array.isArray(captured[1]));
  assert.deepEqual(captured[2], []);
  assert.ok(Array.isArray(captured[2]));
  assert.deepEqual(captured[3], { "1": 1, "2": 2, "4": 4 });
  assert.deepEqual(captured[4], { "1": "x", a: 1 });
  assert.deepEqual(captured[5], { "1": 1, "2": 2 });
  assert.deepEqual(captured[6], [1, null, 3]);
  assert.deepEqual(captured[7], { x: null });
  assert.deepEqual(captured[8], ["a", "b"]);
  assert.deepEqual(captured[9], { "0": "z" });
  assert.deepEqual(captured[10], { "1.5": "f" });
});

Deno.test("JS arrays come back marked, so empty ones stay arrays; null is std.json.null", async () => {
  const out = await withEcho(`
    local a = t.give("empty_array")
    assert(std.json.is_array(a), "[] is marked as an array")
    assert(std.json.encode(a) == "[]", "[] encodes as []")
    local o = t.give("empty_object")
    assert(not std.json.is_array(o) and next(o) == nil, "{} is a plain empty table")
    assert(std.json.encode(o) == "{}", "{} encodes as {}")
    assert(t.give("null") == std.json.null, "JS null is std.json.null")
    assert(std.json.is_null(t.echo(std.json.null)), "the sentinel round-trips")
    local n = t.give("nested")
    assert(n.list[3].x == std.json.null, "nested null")
    assert(n.n == 1 << 62, "nested bigint")
    return std.json.encode(n)
  `);
  assert.equal(out.result, `{"f":0.5,"list":[1,2,{"x":null}],"n":4611686018427387904,"three":3.0}`);
});

Deno.test("cycles are refused with an error naming the path", async () => {
  const { result } = await withEcho(`
    local t1 = {name = "a"}
    t1.child = {parent = t1}
    local ok, err = pcall(function() t.capture(t1) end)
    assert(not ok, "a cycle was accepted")
    local ok2, err2 = pcall(function() return std.json.encode(t1) end)
    assert(not ok2, "json.encode accepted a cycle")
    return err .. "\\n" .. err2
  `);
  const [e1, e2] = String(result).split("\n");
  assert.match(e1, /^test\.lua:4: .*contains itself \(cycle at argument 1\.child\.parent\)/);
  assert.match(e2, /^test\.lua:6: std\.json\.encode: .*contains itself/);
});

Deno.test("functions and other values are refused unless asked for", async () => {
  const { captured, result } = await withEcho(`
    local ok, err = pcall(t.capture, print)
    assert(not ok)
    t.capture_fn(print)
    local ok2, err2 = pcall(t.capture, {co = coroutine.create(print)})
    assert(not ok2)
    return err .. "|" .. err2
  `);
  assert.match(String(result), /cannot convert a function/);
  assert.match(String(result), /cannot convert a thread value at argument 1\.co/);
  assert.equal(captured.length, 1);
  assert.equal(captured[0]!.constructor.name, "LuaFunctionRef");
});

Deno.test("std.json.encode sorts keys, keeps 3.0 a float, refuses what JSON cannot say", async () => {
  const out = await evalLua(`
    local r = {}
    r[#r+1] = std.json.encode({b = 1, a = 2, c = {z = 1, y = 2}})
    r[#r+1] = std.json.encode({x = 3.0, y = 3, z = -0.0})
    r[#r+1] = std.json.encode(math.maxinteger)
    r[#r+1] = std.json.encode({"a\\0", "\\u{e9}"})
    r[#r+1] = tostring(select(2, pcall(std.json.encode, 0/0)))
    r[#r+1] = tostring(select(2, pcall(std.json.encode, "\\xff")))
    r[#r+1] = std.json.encode_pretty({b = {1}, a = {}})
    return table.concat(r, "\\n")
  `);
  const lines = out!.split("\n");
  assert.equal(lines[0], `{"a":2,"b":1,"c":{"y":2,"z":1}}`);
  assert.equal(lines[1], `{"x":3.0,"y":3,"z":-0.0}`);
  assert.equal(lines[2], "9223372036854775807");
  assert.equal(lines[3], `["a\\u0000","é"]`);
  assert.match(lines[4], /std\.json\.encode: cannot encode NaN/);
  assert.match(lines[5], /std\.json\.encode: cannot encode a string that is not valid UTF-8/);
  assert.equal(lines.slice(6).join("\n"), `{\n  "a": {},\n  "b": [\n    1\n  ]\n}`);
});

Deno.test("std.json.decode: floats, big integers, null as nil or as the sentinel", async () => {
  const out = await evalLua(`
    local d = std.json.decode('{"f":3.0,"i":3,"big":9223372036854775807,"n":null,"list":[1,null,2]}')
    assert(math.type(d.f) == "float", "3.0 decodes as a float")
    assert(math.type(d.i) == "integer", "3 decodes as an integer")
    assert(d.big == math.maxinteger, "maxinteger decodes exactly")
    assert(d.n == nil, "null is nil by default")
    assert(std.json.is_array(d.list) and d.list[2] == nil and d.list[3] == 2, "array with a hole")
    local k = std.json.decode('{"n":null}', {null = true})
    assert(k.n == std.json.null, "{null=true} keeps the sentinel")
    local ok, err = pcall(function() return std.json.decode("{bad") end)
    assert(not ok)
    return err
  `);
  assert.match(out!, /^test\.lua:10: std\.json\.decode: /);
});

Deno.test("json.ts: parse(stringify(v)) reproduces converter values", () => {
  const v = { a: [1, new LuaFloat(2), 2.5, null], b: 2n ** 63n - 1n, c: "é\u0000", d: {} };
  const text = stringifyJson(v);
  assert.equal(text, `{"a":[1,2.0,2.5,null],"b":9223372036854775807,"c":"é\\u0000","d":{}}`);
  assert.deepEqual(parseJson(text), v);
});

Deno.test("converter: a stack index above the top reads as undefined (nil)", async () => {
  const e = await LuaEngine.create();
  try {
    assert.equal(e.toJs(e.L, e.api.gettop(e.L) + 3), undefined);
  } finally {
    e.close();
  }
});

Deno.test("converter.toJson writes the same text as stringifyJson(toJs(tagged)), or defers to it", async () => {
  const seen: { fast: string | undefined; slow: string }[] = [];
  const module = (engine: LuaEngine) => {
    engine.define("t.both", {
      raw: (L) => {
        const fast = engine.converter.toJson(L, 1);
        let slow: string;
        try {
          slow = stringifyJson(engine.toJs(L, 1, { floats: "tagged" }));
        } catch (e) {
          slow = `error: ${(e as Error).message}`;
        }
        seen.push({ fast, slow });
        engine.api.pushstring(L, engine.toJson(L, 1));
        return 1;
      },
    });
  };
  const r = await runLua(
    `
    local cases = {
      { a = 1, b = 2.0, c = -0.0, d = 1e300, e = 0.1, f = math.maxinteger, g = math.mininteger, h = 2^53 + 0.0 },
      { "x", "y", { z = std.json.null } },
      std.json.array(), std.json.object(), {},
      setmetatable({ [1] = 1, [3] = 3 }, std.json.array_mt),
      setmetatable({ 1, 2 }, std.json.object_mt),
      { [1] = "a", [2] = "b", [4] = "d" },
      { [0] = "zero", [-1] = "neg", [1.5] = "f", k = "é\\0\\n\\"" },
      { nested = { deeper = { list = { 1, 2.5, true, false, "s" } } } },
      { ["b"] = 1, ["a"] = 2, ["10"] = 3, ["9"] = 4, [2] = 5 },
      "top", 42, 4.0, true, std.json.null,
    }
    for _, v in ipairs(cases) do t.both(v) end
    -- values the fast path leaves to the general one (which raises or decides)
    local bad = { { f = print }, { n = 0/0 }, { s = "\\xff" }, { [1] = "one", ["1"] = "uno" },
      setmetatable({ 1, x = 2 }, std.json.array_mt), { [true] = 1 } }
    local cyc = {}; cyc.self = cyc
    bad[#bad + 1] = cyc
    local errors = 0
    for _, v in ipairs(bad) do
      if not pcall(t.both, v) then errors = errors + 1 end
    end
    return errors
  `,
    { modules: [module] },
  );
  assert.equal(r.outcome.status, "returned", JSON.stringify(r.outcome));
  if (r.outcome.status !== "returned") return;
  assert.equal(String(r.outcome.value), "6"); // all but { [1], ["1"] } raise
  assert.equal(seen.length, 23);
  for (const { fast, slow } of seen.slice(0, 16)) assert.equal(fast, slow);
  for (const { fast } of seen.slice(16)) assert.equal(fast, undefined);
});

Deno.test("std.json.encode: number keys written as text never yield the same JSON key twice", async () => {
  const out = await evalLua(`
    return table.concat({
      std.json.encode({ [0] = 1, ["0"] = 2 }) == '{"0":2}' and "ok" or std.json.encode({ [0] = 1, ["0"] = 2 }),
      std.json.encode({ [1.5] = 1, ["1.5"] = 2 }) == '{"1.5":2}' and "ok" or std.json.encode({ [1.5] = 1, ["1.5"] = 2 }),
      std.json.encode({ b = 1, a = 2, [0] = 3 }),
    }, " ")
  `);
  assert.equal(out, `ok ok {"0":3,"a":2,"b":1}`);
});
