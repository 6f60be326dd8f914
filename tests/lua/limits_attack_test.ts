/**
 * Attacks on the limits a block cannot switch off (issue 14 §1), in process: the CPU limit when
 * the block tries to remove the hook (`debug.sethook`, in the main chunk, a coroutine, a task),
 * hides a loop where hooks do not run (a `__gc` finalizer) or where Lua cannot yield (a
 * `__tostring`, a message handler), and an embedder's stop (the `signal` of `runBlock`) while Lua
 * computes without waiting for the host (src/lua/watchdog.ts).
 */
import assert from "node:assert/strict";
import { returnedValue, runLua } from "../helpers.ts";
import type { Outcome } from "../../src/outcome.ts";

const CPU = { limits: { cpuSeconds: 0.3 } };
const CPU_EXCEEDED = /^CPU limit exceeded: the script ran Lua code for more than 0\.3 s/;

function assertCpuExceeded(outcome: Outcome, stderr: string): void {
  assert.equal(outcome.status, "raised", `${JSON.stringify(outcome)}\n${stderr}`);
  assert.match((outcome as { message: string }).message, CPU_EXCEEDED);
}

const REMOVE_HOOK: Record<string, string> = {
  "the main chunk": `
    pcall(debug.sethook)
    pcall(function() require("debug").sethook() end)
    pcall(function() package.loaded.debug.sethook(function() end, "", 1e9) end)
    while true do end`,
  "a coroutine (coroutine.create)": `
    local co = coroutine.create(function()
      pcall(debug.sethook)
      while true do end
    end)
    coroutine.resume(co)`,
  "a coroutine (coroutine.wrap)": `
    coroutine.wrap(function() pcall(debug.sethook) while true do end end)()`,
  "a task (std.task.spawn)": `
    local t = std.task.spawn(function() pcall(debug.sethook) while true do end end)
    t:join()`,
  "a coroutine nested in a coroutine": `
    coroutine.wrap(function()
      coroutine.wrap(function() pcall(debug.sethook) while true do end end)()
    end)()`,
};

for (const [where, src] of Object.entries(REMOVE_HOOK)) {
  Deno.test(`attack: debug.sethook in ${where} to switch off --cpu-limit`, async () => {
    const r = await runLua(src, CPU);
    assertCpuExceeded(r.outcome, r.stderr);
  });
}

Deno.test("attack: the hook functions are not in the block's debug library at all", async () => {
  const out = returnedValue(
    await runLua(`
    local names = {}
    for k in pairs(debug) do names[#names + 1] = k end
    table.sort(names)
    assert(require("debug") == debug and package.loaded.debug == debug)
    return table.concat(names, ",")
  `),
  );
  assert.equal(out, "getinfo,traceback");
});

Deno.test("attack: a finalizer (__gc, where Lua runs no hooks) loops forever under --cpu-limit", async () => {
  // The finalizer never runs: the run ends normally, with one warning saying why.
  const r = await runLua(
    `
    for i = 1, 100 do setmetatable({}, { __gc = function() while true do end end }) end
    local mt = { __gc = true }
    local kept = setmetatable({}, mt)
    mt.__gc = function() while true do end end
    collectgarbage() collectgarbage()
    assert(getmetatable(kept) == mt and mt.__gc ~= nil, "the object keeps its metatable, __gc included")
    return "done"
  `,
    CPU,
  );
  assert.equal(returnedValue(r), "done");
  assert.match(r.stderr, /finalizers of a script's objects do not run/);
  assert.equal(r.stderr.match(/finalizers/g)?.length, 1, r.stderr);
});

Deno.test("attack: give the host's own metatables a __gc (json markers, tasks, errors, files)", async () => {
  const out = returnedValue(
    await runLua(
      `
    local spin = function() while true do end end
    local results = {}
    local function try(name, f)
      local ok, err = pcall(f)
      results[#results + 1] = name .. "=" .. (ok and "allowed" or tostring(err):match("cannot add __gc") and "refused" or tostring(err))
    end
    try("array_mt", function() std.json.array_mt.__gc = spin end)
    try("object_mt", function() rawset(std.json.object_mt, "__gc", spin) end)
    try("task", function() getmetatable(std.task.spawn(function() end)).__gc = spin end)
    try("error", function()
      -- a host error table (ERROR_MT): a model request that cannot connect
      local ok, e = pcall(llm.chat, "hi", { provider = "openai", base_url = "http://127.0.0.1:9/v1",
        api_key = "k", max_retries = 0 })
      assert(not ok and type(e) == "table", "expected an error table, got " .. tostring(e))
      getmetatable(e).__gc = spin
    end)
    try("unseal", function() setmetatable(std.json.array_mt, nil) end)
    results[#results + 1] = "file=" .. tostring(getmetatable(io.stdout))
    -- the host keeps creating objects with those metatables: none of them runs a script's finalizer
    for i = 1, 200 do std.json.array({}) std.json.decode("[1,[2]]") std.task.spawn(function() end) end
    collectgarbage() collectgarbage()
    return table.concat(results, " ")
  `,
      // room for the legitimate work under load: a finalizer that ran \`spin\` would pass any limit
      { limits: { cpuSeconds: 3 } },
    ),
  );
  assert.match(
    out,
    /^array_mt=refused object_mt=refused task=refused error=refused unseal=test\.lua:\d+: cannot change a protected metatable file=FILE\*$/,
  );
});

Deno.test("attack: a loop inside __tostring (Lua cannot yield there) under --cpu-limit", async () => {
  const r = await runLua(`print(setmetatable({}, { __tostring = function() while true do end end }))`, CPU);
  assertCpuExceeded(r.outcome, r.stderr);
});

Deno.test("attack: a loop in an xpcall message handler under --cpu-limit", async () => {
  const r = await runLua(`xpcall(error, function() while true do end end)`, CPU);
  assertCpuExceeded(r.outcome, r.stderr);
});

/** Runs `src` with a stop requested `afterMs` after the start; answers the outcome and the time. */
async function stoppedRun(
  src: string,
  afterMs = 150,
): Promise<{ outcome: Outcome; ms: number; stderr: string }> {
  const ac = new AbortController();
  const t0 = performance.now();
  const timer = setTimeout(() => ac.abort("stopped by the test"), afterMs);
  try {
    const r = await runLua(src, { signal: ac.signal });
    return { outcome: r.outcome, ms: performance.now() - t0, stderr: r.stderr };
  } finally {
    clearTimeout(timer);
  }
}

const SPINS: Record<string, string> = {
  "a tight loop in the main chunk": `while true do end`,
  "a pcall loop": `while true do pcall(function() for i = 1, 1e6 do end end) end`,
  "a loop in a coroutine": `coroutine.wrap(function() while true do end end)()`,
  "a loop in a task while main waits for it": `std.task.spawn(function() while true do end end):join()`,
  "a loop in a coroutine resumed from a __tostring": `
    print(setmetatable({}, { __tostring = function()
      coroutine.wrap(function() while true do end end)()
    end }))`,
  "a loop inside __tostring": `print(setmetatable({}, { __tostring = function() while true do end end }))`,
  "a loop in an xpcall message handler": `xpcall(error, function() while true do end end)`,
};

for (const [what, src] of Object.entries(SPINS)) {
  Deno.test(`attack: ${what} ignores the embedder's stop`, async () => {
    const r = await stoppedRun(src);
    assert.deepEqual(r.outcome, { status: "cancelled", reason: "stopped by the test" }, r.stderr);
    // A generous bound: it tells "ended" from "never" (a spin not ended runs forever), whatever
    // the load of the machine.
    assert.ok(r.ms < 60_000, `took ${Math.round(r.ms)} ms`);
  });
}

Deno.test("attack: a loop where Lua cannot yield, with no limit and no stop, is ended after a bounded stretch", async () => {
  const r = await runLua(`print(setmetatable({}, { __tostring = function() while true do end end }))`);
  assert.equal(r.outcome.status, "raised", JSON.stringify(r.outcome));
  assert.match(
    (r.outcome as { message: string }).message,
    /without a point where the run can be interrupted/,
  );
});

Deno.test("preemption: tasks that compute without waiting share the run, and timers still fire", async () => {
  // Two tasks compute until a third, which sleeps 10 ms first, says stop: without preemption the
  // sleeper would never run again (the CPU limit turns that into a failure instead of a hang).
  const out = returnedValue(
    await runLua(
      `
    local woke = false
    local function spin() local n = 0 while not woke do n = n + 1 end return n end
    local a, b = std.task.spawn(spin), std.task.spawn(spin)
    local s = std.task.spawn(function() std.task.sleep(0.01) woke = true return 0 end)
    local r = std.task.all({ a, b, s })
    return tostring(r[1] > 0 and r[2] > 0)
  `,
      { limits: { cpuSeconds: 30 } },
    ),
  );
  assert.equal(out, "true");
});

Deno.test("preemption: a coroutine's own plain yields are not mistaken for preemptions", async () => {
  const out = returnedValue(
    await runLua(`
    local co = coroutine.wrap(function()
      for i = 1, 3 do
        local t0 = os.clock() while os.clock() - t0 < 0.12 do end -- long enough to be preempted
        coroutine.yield()
      end
      return "end"
    end)
    local seen = {}
    for i = 1, 4 do seen[#seen + 1] = tostring((co())) end
    return table.concat(seen, ",")
  `),
  );
  assert.equal(out, "nil,nil,nil,end");
});

Deno.test("attack: unbounded recursion in Lua, through metamethods, and into and out of the host", async () => {
  const out = returnedValue(
    await runLua(`
    local r = {}
    local function try(name, f)
      local ok, err = pcall(f)
      r[#r + 1] = name .. ": " .. (ok and "no error" or (tostring(err):match("stack overflow") and "stack overflow"
        or tostring(err):match("nested deeper than") and "too deep" or tostring(err)))
    end
    try("lua", function() local function f(n) return f(n + 1) + 1 end return f(1) end)
    try("metamethod", function()
      local t = setmetatable({}, {}) getmetatable(t).__index = function(t, k) return t[k] end
      return t.x
    end)
    try("to the host", function()
      local t = {} local c = t
      for i = 1, 1e5 do c[1] = {} c = c[1] end
      return std.json.encode(t)
    end)
    try("from the host", function() return std.json.decode(("["):rep(1e5) .. ("]"):rep(1e5)) end)
    return table.concat(r, "; ")
  `),
  );
  assert.match(
    out,
    /^lua: stack overflow; metamethod: stack overflow; to the host: too deep; from the host: /,
  );
  assert.doesNotMatch(out, /no error/);
});

Deno.test("attack: std.json.encode of an object with 200,000 keys (the key sort was quadratic)", async () => {
  const t0 = performance.now();
  const out = returnedValue(
    await runLua(`
    local t = {}
    for i = 1, 200000 do t["k" .. (i * 7919 % 200003)] = i end
    local s = std.json.encode(t)
    local keys = {}
    for k in s:sub(1, 60):gmatch('"(k%d+)"') do keys[#keys + 1] = k end
    return #s .. " " .. table.concat(keys, ",")
  `),
  );
  assert.match(out, /^\d+ k1,k10,k100,k1000/);
  // n log n: well under a second here; the quadratic sort took minutes. The bound only tells the
  // two apart (a loaded machine runs the fast one 10 s and more), it is no speed target.
  assert.ok(performance.now() - t0 < 120_000, `took ${Math.round(performance.now() - t0)} ms`);
});
