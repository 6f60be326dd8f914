/**
 * The ported pattern matcher (src/lua/lpattern.ts) and the string functions built on it
 * (src/lua/interruptible.lua) against the C functions of the same build: every call below is made
 * with both, in one run, and the answers (values or error messages) must be the same. A test
 * module sends every call of the block's functions to the ported matcher (`R.matcher_limits`).
 * Also the attacks on it: pathological patterns under the CPU limit, under a stop, and alone.
 */
import assert from "node:assert/strict";
import { returnedValue, runLua } from "../helpers.ts";
import type { HostModule } from "../../src/host/context.ts";
import type { Outcome } from "../../src/outcome.ts";

/** Exposes the C functions as `C` and sends every call of the wrappers to the ported matcher. */
const portedOnly: HostModule = (engine) => {
  engine.exec(
    `local R = ...
    C = { find = R.cstring.find, match = R.cstring.match, gmatch = R.cstring.gmatch, gsub = R.cstring.gsub,
      sort = table.sort }
    R.matcher_limits.cheap = -1`,
    "=test:ported",
  );
};

const COMPARE = `
local subjects = { "", "a", "abc", "hello world", "  trim me  ", "aaa", "a,b,,c", "key = value",
  "x=1;y=22;z=333", "(foo(bar)baz)", "THE (quick) Fox", "\\0a\\0b", "ünïcödé", "1.5e3 -2 0x1F",
  "abcabcabc", "   ", "a.b-c+d*e?f[g]h%i^j$k", "THE END", "aXbXc", "\\n\\nx\\n", "[[x]]", "f(a,b)(c)" }
local patterns = { "", "a", "b", "^a", "a$", "^$", "^", "$", ".", "..", "a*", "a+", "a-", "a?", "%a+",
  "%A+", "%d+", "%D", "%s*", "%S+", "%w+", "%W", "%l+", "%u+", "%p", "%c", "%x+", "%g+", "[abc]",
  "[^abc]+", "[a-c]+", "[%a_][%w_]*", "[]]", "[^]]+", "[a-]", "[-a]", "(a)", "(a*)", "()a()", "(%w+)=(%w+)",
  "(%w+)%s*=%s*(%w+)", "^(%s*)(.-)(%s*)$", "%s*(.-)%s*$", "(.)%1", "(a)(b)%2%1", "%b()", "%b[]", "%f[%a]%a+",
  "%f[%w]%w+%f[%W]", "a.-b", "a.*b", "(.-)X", "(.*)X", "^(.-)%s*$", "x*", "%.", "%%", "[%.%-]", "%$",
  "(h)(e)(l)(l)(o)", "((a)(b))", "(a(b(c)))", "[%w%.]+", "%d%d?%d?", "0x%x+", "[+-]?%d+",
  -- malformed ones (the errors must be the same, when the matcher reaches them)
  "%", "[a", "[^", "(a", "a)", "%1", "(a)%2", "%b", "%bx", "%f", "%fa", "(()", "%0", "a%",
}
local inits = { nil, 1, 2, -1, -3, 0, 5, 100 }
local out, diffs = 0, {}
local function show(ok, ...)
  local t = { tostring(ok) }
  for i = 1, select("#", ...) do t[#t + 1] = string.format("%q", tostring((select(i, ...)))) end
  return table.concat(t, " ")
end
local function same(what, f, c, ...)
  local a = show(pcall(f, ...))
  local b = show(pcall(c, ...))
  out = out + 1
  if a ~= b then diffs[#diffs + 1] = what .. ": ported " .. a .. " | C " .. b end
end
local function collect(gm, s, p, init)
  local t = {}
  local ok, err = pcall(function()
    for a, b, c in gm(s, p, init) do t[#t + 1] = tostring(a) .. "," .. tostring(b) .. "," .. tostring(c) end
  end)
  if not ok then return "error: " .. tostring(err) end
  return table.concat(t, "|")
end
for _, s in ipairs(subjects) do
  for _, p in ipairs(patterns) do
    local label = string.format("%q ~ %q", s, p)
    for _, init in ipairs(inits) do
      same(label .. " find " .. tostring(init), string.find, C.find, s, p, init)
      same(label .. " match " .. tostring(init), string.match, C.match, s, p, init)
    end
    same(label .. " find plain", string.find, C.find, s, p, 1, true)
    local a, b = collect(string.gmatch, s, p), collect(C.gmatch, s, p)
    if a ~= b then diffs[#diffs + 1] = label .. " gmatch: ported " .. a .. " | C " .. b end
    local a2, b2 = collect(string.gmatch, s, p, 3), collect(C.gmatch, s, p, 3)
    if a2 ~= b2 then diffs[#diffs + 1] = label .. " gmatch init 3: ported " .. a2 .. " | C " .. b2 end
    for _, r in ipairs({ "<%0>", "%1", "[%2]", "%%", "x", "%", "%9" }) do
      same(label .. " gsub " .. r, string.gsub, C.gsub, s, p, r)
    end
    same(label .. " gsub n=1", string.gsub, C.gsub, s, p, "-", 1)
    same(label .. " gsub table", string.gsub, C.gsub, s, p, { a = "A", b = false, [1] = "one", aaa = 3 })
    same(label .. " gsub function", string.gsub, C.gsub, s, p, function(x, y) if x == "b" then return nil end
      return "<" .. tostring(x) .. tostring(y) .. ">" end)
    same(label .. " gsub bad value", string.gsub, C.gsub, s, p, function() return {} end)
  end
end
return string.format("%d compared\\n%s", out, table.concat(diffs, "\\n"))
`;

Deno.test("the ported matcher answers as the C one: find, match, gmatch, gsub on many patterns", async () => {
  const out = returnedValue(await runLua(COMPARE, { modules: [portedOnly] }));
  const [head, ...diffs] = out.split("\n").filter((l) => l !== "");
  assert.match(head, /^\d+ compared$/);
  assert.ok(Number(head.split(" ")[0]) > 20_000, head);
  assert.deepEqual(diffs.slice(0, 20), [], `${diffs.length} differences`);
});

Deno.test("the ported matcher on long subjects (stopping between starts) answers as the C one", async () => {
  // Long enough that the searches yield for preemption many times.
  const out = returnedValue(
    await runLua(
      `
    local text = {}
    for i = 1, 30000 do text[i] = "word" .. i .. " = value" .. i end
    text = table.concat(text, "\\n") .. "\\nEND"
    local function all(gm) local n, last = 0 for k, v in gm(text, "(%w+)%s*=%s*(%w+)") do n = n + 1 last = v end return n .. ":" .. last end
    local checks = {
      { string.find(text, "(%w+)%s*=%s*value29999") }, { C.find(text, "(%w+)%s*=%s*value29999") },
      { string.find(text, "END", 1, true) }, { C.find(text, "END", 1, true) },
      { string.match(text, "(%d+)%s*\\nEND") }, { C.match(text, "(%d+)%s*\\nEND") },
      { all(string.gmatch) }, { all(C.gmatch) },
      { select(2, string.gsub(text, "%s*=%s*", ":")) }, { select(2, C.gsub(text, "%s*=%s*", ":")) },
      { #string.gsub(text, "(%w+)", function(w) return w:upper() end) }, { #C.gsub(text, "(%w+)", string.upper) },
    }
    local r = {}
    for i = 1, #checks, 2 do
      local a, b = table.concat(checks[i], ","), table.concat(checks[i + 1], ",")
      r[#r + 1] = a == b and "same" or (a .. " ~= " .. b)
    end
    return table.concat(r, " ")
  `,
      { modules: [portedOnly] },
    ),
  );
  assert.equal(out, "same same same same same same");
});

Deno.test("table.sort with a comparator (ported to Lua) sorts as the C one", async () => {
  const out = returnedValue(
    await runLua(
      `
    local seed = 42
    local function rnd(n) seed = (seed * 1103515245 + 12345) % 2147483648 return seed % n end
    local bad = {}
    for _, n in ipairs({ 0, 1, 2, 3, 5, 10, 99, 100, 101, 1000, 20000 }) do
      local a, b = {}, {}
      for i = 1, n do local v = rnd(n // 2 + 1) a[i] = v b[i] = v end
      table.sort(a, function(x, y) return x > y end)
      C.sort(b, function(x, y) return x > y end)
      for i = 1, n do if a[i] ~= b[i] then bad[#bad + 1] = n .. "@" .. i break end end
    end
    local ok, err = pcall(table.sort, { 3, 1, 2, 5, 4, 7, 6 }, function() return true end)
    local ok2, err2 = pcall(function() table.sort({ 1, 2 }, 5) end)
    return table.concat(bad, ",") .. "|" .. tostring(err) .. "|" .. tostring(err2)
  `,
      { modules: [portedOnly] },
    ),
  );
  assert.equal(
    out,
    "|invalid order function for sorting|test.lua:13: bad argument #2 to 'sort' (function expected, got number)",
  );
});

Deno.test("string functions: argument errors read as the C functions' and point at the caller", async () => {
  const out = returnedValue(
    await runLua(`
    local r = {}
    local function try(f) local ok, e = pcall(f) r[#r + 1] = e end
    try(function() string.find(nil, "a") end)
    try(function() ("x"):find({}) end)
    try(function() string.match("a", "a", "x") end)
    try(function() string.gmatch("a") end)
    try(function() string.gsub("abc", "a") end)
    try(function() string.find("abc", "%") end)
    try(function() string.gsub("abc", "a", "%2") end)
    return table.concat(r, "\\n")
  `),
  );
  assert.equal(
    out,
    [
      "test.lua:4: bad argument #1 to 'find' (string expected, got nil)",
      "test.lua:5: bad argument #1 to 'find' (string expected, got table)",
      "test.lua:6: bad argument #3 to 'match' (number expected, got string)",
      "test.lua:7: bad argument #2 to 'gmatch' (string expected, got no value)",
      "test.lua:8: bad argument #3 to 'gsub' (string/function/table expected, got no value)",
      "test.lua:9: malformed pattern (ends with '%')",
      "test.lua:10: invalid capture index %2",
    ].join("\n"),
  );
});

const PATHOLOGICAL: Record<string, string> = {
  "string.find": `string.find(string.rep("a", 5000), "a*a*a*a*b")`,
  "string.match": `string.match(string.rep("a", 5000), "(a*)(a*)(a*)b")`,
  "string.gmatch": `for x in string.gmatch(string.rep("a", 5000), "a*a*a*b") do end`,
  "string.gsub": `string.gsub(string.rep("a", 5000), "a-a-a-b", "x")`,
  "string.gsub with a function": `string.gsub(string.rep("a", 5000), "a*a*a*b", function() end)`,
  "a quadratic find over 1 MB": `string.find(string.rep("a", 1e6), "%a+=")`,
};

for (const [fn, src] of Object.entries(PATHOLOGICAL)) {
  Deno.test(`attack: a pathological pattern in ${fn} (no Lua instruction for hours) under --cpu-limit`, async () => {
    const r = await runLua(src, { limits: { cpuSeconds: 0.3 } });
    assert.equal(r.outcome.status, "raised", JSON.stringify(r.outcome));
    assert.match((r.outcome as { message: string }).message, /^CPU limit exceeded/);
  });
}

for (const [fn, src] of Object.entries(PATHOLOGICAL)) {
  Deno.test(`attack: a pathological pattern in ${fn} ignores the embedder's stop`, async () => {
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort("stopped by the test"), 200);
    try {
      const r = await runLua(`while true do ${src} end`, { signal: ac.signal });
      assert.deepEqual(r.outcome, { status: "cancelled", reason: "stopped by the test" } satisfies Outcome);
    } finally {
      clearTimeout(timer);
    }
  });
}

Deno.test("attack: a pathological pattern alone is ended with a catchable error, and the run goes on", async () => {
  const out = returnedValue(
    await runLua(`
    local ok, err = pcall(string.find, string.rep("a", 5000), "a*a*a*a*b")
    local after = string.find("still works", "w(%a+)")
    return tostring(ok) .. " | " .. tostring(err) .. " | " .. after
  `),
  );
  assert.match(out, /^false \| pattern too expensive: matching ran for more than 1 s .* \| 7$/);
});
