/**
 * The scheduler (src/lua/runtime.lua) and the engine's host-call bridge (src/lua/engine.ts):
 * host calls from every place Lua can yield, tasks, sleeping concurrency, cancellation, calls
 * from TypeScript into Lua, and the error for host calls where Lua cannot yield.
 */
import assert from "node:assert/strict";
import { runLua } from "../helpers.ts";
import { echoModule } from "./echo_module.ts";

/** Runs `source` with the `t.*` test module; returns the chunk's result, failing otherwise. */
async function run(source: string): Promise<string> {
  const { module } = echoModule();
  const r = await runLua(source, { modules: [module] });
  if (r.outcome.status !== "returned") {
    throw new Error(`Lua did not return: ${JSON.stringify(r.outcome)}\nstderr: ${r.stderr}`);
  }
  return String(r.outcome.value);
}

Deno.test("async host calls from the main chunk, pcall and xpcall", async () => {
  const out = await run(`
    local a = t.aecho("main")
    local ok, b = pcall(t.aecho, "pcall")
    assert(ok)
    local ok2, c = xpcall(function() return t.aecho("xpcall") end, debug.traceback)
    assert(ok2)
    local ok3, d = pcall(function() return select(2, pcall(t.aecho, "nested")) end)
    return table.concat({a, b, c, d}, ",")
  `);
  assert.equal(out, "main,pcall,xpcall,nested");
});

Deno.test("an async host call failing inside pcall is caught with its message", async () => {
  const out = await run(`
    local ok, err = pcall(function() local v = t.athrow("async bad") return v end)
    assert(not ok)
    local ok2, err2 = pcall(function() return t.throw("sync bad") end)
    assert(not ok2)
    -- a tail call drops the caller's frame: the line of the enclosing pcall is reported
    local ok3, err3 = pcall(function() return t.athrow("tail") end)
    return err .. "|" .. err2 .. "|" .. err3
  `);
  assert.equal(out, "test.lua:2: async bad|test.lua:4: sync bad|test.lua:7: tail");
});

Deno.test("host calls inside coroutine.wrap generators nested three deep", async () => {
  const out = await run(`
    local function gen(n, inner)
      return coroutine.wrap(function()
        for i = 1, n do
          local v = t.aecho(i)
          if inner then
            for w in inner() do coroutine.yield(v .. "." .. w) end
          else
            coroutine.yield(v)
          end
        end
      end)
    end
    local deep = function() return gen(2) end
    local mid = function() return gen(2, deep) end
    local got = {}
    for v in gen(2, mid) do
      std.task.sleep(0)
      got[#got + 1] = v
    end
    return table.concat(got, ",")
  `);
  assert.equal(out, "1.1.1,1.1.2,1.2.1,1.2.2,2.1.1,2.1.2,2.2.1,2.2.2");
});

Deno.test("coroutine.resume / status / isyieldable stay truthful around host calls", async () => {
  const out = await run(`
    local co = coroutine.create(function(x)
      local y = t.aecho(x + 1)
      local z = coroutine.yield(y)
      return t.aecho(z * 2)
    end)
    local ok1, v1 = coroutine.resume(co, 1)
    local s1 = coroutine.status(co)
    local ok2, v2 = coroutine.resume(co, 10)
    local s2 = coroutine.status(co)
    local ok3, e3 = coroutine.resume(co)
    return table.concat({tostring(ok1), v1, s1, tostring(ok2), v2, s2, tostring(ok3), e3}, ",")
  `);
  assert.equal(out, "true,2,suspended,true,20,dead,false,cannot resume dead coroutine");
});

Deno.test("std.task: spawn, join, all, yield", async () => {
  const out = await run(`
    local order = {}
    local a = std.task.spawn(function(x) order[#order+1] = "a"; std.task.sleep(0.01); return x * 2, "two" end, 21)
    local b = std.task.spawn(function() order[#order+1] = "b"; return "bee" end)
    local v, second = a:join()
    assert(v == 42 and second == "two", "join returns every value")
    assert(std.task.join(b) == "bee")
    local all = std.task.all({std.task.spawn(function() return 1 end), std.task.spawn(function() std.task.yield(); return 2 end)})
    assert(#all == 2 and all[1] == 1 and all[2] == 2)
    assert(a:done() and a:status() == "done")
    return table.concat(order, ",")
  `);
  assert.equal(out, "a,b");
});

Deno.test("two tasks sleeping 200 ms each sleep at the same time, not one after the other", async () => {
  // Proven by the intervals overlapping, which no machine load can fake: run one after the
  // other, the second sleep would start only after the first ended.
  const out = await run(`
    local function nap() local s = t.now(); std.task.sleep(0.2); return s, t.now() end
    local h1 = std.task.spawn(nap)
    local h2 = std.task.spawn(nap)
    local s1, e1 = h1:join()
    local s2, e2 = h2:join()
    return string.format("%.3f %.3f %.3f %.3f", s1, e1, s2, e2)
  `);
  const [s1, e1, s2, e2] = out.split(" ").map(Number);
  assert.ok(e1 - s1 >= 195 && e2 - s2 >= 195, `a 200 ms sleep ended early: ${out}`);
  assert.ok(s2 < e1 && s1 < e2, `the two sleeps did not overlap: ${out}`);
});

Deno.test("1,000 concurrent sleeping tasks all finish", async () => {
  const out = await run(`
    local t0 = t.now()
    local hs = {}
    for i = 1, 1000 do
      hs[i] = std.task.spawn(function() std.task.sleep(0.05) return i end)
    end
    local sum = 0
    for _, v in ipairs(std.task.all(hs)) do sum = sum + v end
    return string.format("%d %d", sum, math.floor(t.now() - t0))
  `);
  const [sum, ms] = out.split(" ").map(Number);
  assert.equal(sum, 500500);
  // concurrent, not one after another (50 s): the bound tells the two apart under any load
  assert.ok(ms < 30_000, `1000 tasks of 50 ms took ${ms} ms`);
});

Deno.test("join re-raises the task's error, tables kept", async () => {
  const out = await run(`
    local h = std.task.spawn(function() error({code = 7, why = "bad"}) end)
    local ok, e = pcall(h.join, h)
    assert(not ok and type(e) == "table" and e.code == 7 and e.why == "bad", "table error kept")
    local h2 = std.task.spawn(function() error("plain") end)
    local ok2, e2 = pcall(function() return h2:join() end)
    assert(h2:status() == "failed")
    return e2
  `);
  assert.equal(out, "test.lua:5: plain");
});

Deno.test("cancel delivers 'cancelled' to the task and to its joiners", async () => {
  const out = await run(`
    local seen
    local h = std.task.spawn(function()
      local ok, err = pcall(std.task.sleep, 30)
      seen = err
      error(err, 0)
    end)
    std.task.sleep(0.01)
    assert(h:cancel() == true, "cancel of a live task returns true")
    local ok, e = pcall(h.join, h)
    assert(not ok)
    assert(h:cancel() == false, "cancel of a finished task returns false")
    local never = std.task.spawn(function() return "ran" end)
    never:cancel()
    local ok2, e2 = pcall(never.join, never)
    return table.concat({tostring(seen), tostring(e), tostring(ok2), tostring(e2), never:status()}, "|")
  `);
  const [seen, joined, ok2, e2, status] = out.split("|");
  assert.match(seen, /cancelled$/);
  assert.match(joined, /cancelled$/);
  assert.equal(ok2, "false");
  assert.match(e2, /cancelled$/);
  assert.equal(status, "cancelled");
});

Deno.test("the run ends when the main task returns: tasks still sleeping are cancelled", async () => {
  const { module } = echoModule();
  const t0 = performance.now();
  const r = await runLua(`std.task.spawn(function() std.task.sleep(60) end) return "done"`, {
    modules: [module],
  });
  assert.deepEqual(r.outcome, { status: "returned", value: "done" });
  // cancelled, not waited out (60 s): a bound that tells the two apart under any load
  assert.ok(performance.now() - t0 < 30_000);
});

Deno.test("a failed task nobody joined is reported as a warning", async () => {
  const r = await runLua(`std.task.spawn(function() error("lost") end) std.task.sleep(0.01) return "x"`);
  assert.equal(r.outcome.status, "returned");
  assert.match(r.stderr, /task \d+ failed and was never joined: test\.lua:1: lost/);
});

Deno.test("a deadlock between tasks is an error, not a hang", async () => {
  const r = await runLua(`
    local a
    local b = std.task.spawn(function() std.task.yield() return a:join() end)
    a = std.task.spawn(function() return b:join() end)
    return a:join()
  `);
  assert.equal(r.outcome.status, "raised");
  assert.match((r.outcome as { message: string }).message, /deadlock/);
});

for (
  const [where, code] of [
    ["__tostring", `tostring(setmetatable({}, {__tostring = function() return t.aecho("x") end}))`],
  ]
) {
  Deno.test(`a host call inside ${where} raises 'yielding is impossible' at the user's line`, async () => {
    const out = await run(`
      local ok, err = pcall(function()
        ${code}
      end)
      assert(not ok, "the host call went through")
      return err
    `);
    assert.match(out, /^test\.lua:3: host call '[a-z._]+' made where yielding is impossible/);
  });
}

Deno.test("host calls inside a table.sort comparator and a string.gsub callback (Lua loops, they can yield)", async () => {
  const out = await run(`
    local t2 = {3, 1, 2}
    table.sort(t2, function(a, b) std.task.sleep(0) return a < b end)
    local s = string.gsub("abc", "%w", function(c) return t.aecho(c:upper()) end)
    return table.concat(t2, ",") .. " " .. s
  `);
  assert.equal(out, "1,2,3 ABC");
});

Deno.test("engine.callLua: TypeScript calls a Lua function that makes host calls itself", async () => {
  const out = await run(`
    t.keep(function(a, b)
      std.task.sleep(0.01)
      return t.aecho(a + b), "second"
    end)
    local kind, sum, second = t.call_kept(2, 3)
    t.keep(function() error({code = 9}) end)
    local kind2, msg2, val2 = t.call_kept()
    t.keep(function() error("from lua") end)
    local kind3, msg3 = t.call_kept()
    return table.concat({kind, sum, second, kind2, msg2, tostring(val2.code), kind3, msg3}, "|")
  `);
  assert.equal(out, `ok|5|second|error|{"code":9}|9|error|test.lua:9: from lua`);
});

Deno.test("errors name chunk and line; an uncaught table error is rendered as JSON", async () => {
  const r1 = await runLua(`local x = 1\n\nerror("three")`, { name: "my_agent.lua" });
  assert.equal(r1.outcome.status, "raised");
  const f1 = r1.outcome as { message: string; traceback: string };
  assert.equal(f1.message, "my_agent.lua:3: three");
  assert.match(f1.traceback, /stack traceback:\n\s+my_agent\.lua:3: in main chunk/);
  assert.doesNotMatch(f1.traceback, /ab:/, "runtime frames are trimmed");

  const r2 = await runLua(`local function f() error({b = 2, a = {1, 2}}) end\nf()`);
  const f2 = r2.outcome as { message: string; error: unknown };
  assert.equal(f2.message, `{"a":[1,2],"b":2}`);
  assert.deepEqual(f2.error, { a: [1, 2], b: 2 });

  const r3 = await runLua(`local ok, e = pcall(error, {keep = true})\nreturn tostring(e.keep)`);
  assert.deepEqual(r3.outcome, { status: "returned", value: "true" });
});

Deno.test("a JS exception from a host function reaches Lua as a catchable error", async () => {
  const { module } = echoModule();
  const r = await runLua(
    `local ok, e = pcall(function() t.throw("kaput") end)\nassert(not ok)\nlocal ok2, e2 = pcall(function() t.throw_value({n = 1}) end)\nreturn e .. "|" .. e2.n\n`,
    { modules: [module] },
  );
  assert.deepEqual(r.outcome, { status: "returned", value: "test.lua:1: kaput|1" });
  const r2 = await runLua(`t.athrow("uncaught")`, { modules: [module] });
  assert.equal((r2.outcome as { message: string }).message, "test.lua:1: uncaught");
});

Deno.test("stopping a run from outside ends it at the next host wait", async () => {
  const ac = new AbortController();
  const p = runLua(`std.task.sleep(60)`, { signal: ac.signal });
  setTimeout(() => ac.abort("test stop"), 50);
  const r = await p;
  assert.deepEqual(r.outcome, { status: "cancelled", reason: "test stop" });
});

Deno.test("a returned table is tostring'd, as the seed says, with one warning naming std.json.encode", async () => {
  const warned =
    /the block returned a table, which becomes its address \(table: 0x[0-9a-f]+\) in the result; return std\.json\.encode\(value\) for its contents/;
  let r = await runLua(`return { answer = 42 }`);
  assert.equal(r.outcome.status, "returned");
  assert.match(String(r.outcome.status === "returned" && r.outcome.value), /^table: 0x[0-9a-f]+$/);
  assert.match(r.stderr, warned);
  assert.equal(r.stderr.match(/the block returned/g)?.length, 1, "said once");
  r = await runLua(`return function() end`);
  assert.match(r.stderr, /the block returned a function/);
  // what the script meant to be text is not warned about
  for (
    const src of [
      `return std.json.encode({ answer = 42 })`,
      `return setmetatable({}, { __tostring = function() return "mine" end })`,
      `return 42`,
      `return nil`,
    ]
  ) {
    r = await runLua(src);
    assert.equal(r.outcome.status, "returned", src);
    assert.doesNotMatch(r.stderr, /the block returned/, src);
  }
});
