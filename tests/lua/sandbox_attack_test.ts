/**
 * Attacks on the text-only `load` and on the end of a run (issue 14 §2): real bytecode (dumped by
 * a bare engine of the same build) offered through every loading route, the routes to the C
 * `load` through `debug`, and a block that tries to go on running after `os.exit` / `job.defer`
 * (src/lua/prelude.lua, src/lua/runtime.lua, src/lua/watchdog.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { returnedValue, runLua, tempProject } from "../helpers.ts";
import { LuaEngine } from "../../src/lua/engine.ts";
import type { HostModule } from "../../src/host/context.ts";

/** Bytecode of the chunk `src`, dumped by a bare engine (no prelude: `string.dump` is there). */
async function bytecode(src: string): Promise<Uint8Array> {
  const e = await LuaEngine.create();
  try {
    const v = e.evaluate(`return string.dump(load(${JSON.stringify(src)}))`, "=dump");
    assert.ok(v instanceof Uint8Array, "string.dump gives bytes");
    return v;
  } finally {
    e.close();
  }
}

const BINARY = /attempt to load a binary chunk \(mode is 't'\)/;

Deno.test("attack: load a binary chunk from a string (load, any mode, a reader function)", async () => {
  const bc = await bytecode("return 42");
  const out = returnedValue(
    await runLua(
      `
    local bc = ...
    local r = {}
    local function try(name, f, e) r[#r + 1] = name .. ": " .. tostring(e) end
    local f, e = load(BC) try("load", f, e)
    f, e = load(BC, "=x", "b") try("load b", f, e)
    f, e = load(BC, "=x", "bt", {}) try("load bt env", f, e)
    local i = 0
    f, e = load(function() i = i + 1 if i <= #BC then return BC:sub(i, i) end end, "=reader", "b")
    try("reader", f, e)
    assert(string.dump == nil, "string.dump is gone")
    return table.concat(r, "\\n")
  `,
      { globals: { BC: bc } },
    ),
  );
  for (const line of out.split("\n")) assert.match(line, BINARY, line);
});

Deno.test("attack: load a binary chunk from a file (loadfile, dofile, require of a module file)", async () => {
  const bc = await bytecode("return { pwned = true }");
  const root = await tempProject({});
  Deno.writeFileSync(join(root, "chunk.luac"), bc);
  Deno.mkdirSync(join(root, "lib"));
  Deno.writeFileSync(join(root, "lib", "evil.lua"), bc);
  Deno.writeFileSync(join(root, "evil2.lua"), bc); // beside the script: on the require path
  const out = returnedValue(
    await runLua(
      `
    local r = {}
    local f, e = loadfile("chunk.luac") r[#r + 1] = "loadfile: " .. tostring(e)
    local ok, err = pcall(dofile, "chunk.luac") r[#r + 1] = "dofile: " .. tostring(err)
    ok, err = pcall(require, "evil") r[#r + 1] = "require lib: " .. tostring(err)
    ok, err = pcall(require, "evil2") r[#r + 1] = "require beside: " .. tostring(err)
    return table.concat(r, "|")
  `,
      { projectRoot: root },
    ),
  );
  const lines = out.split("|");
  assert.equal(lines.length, 4, out);
  for (const line of lines) assert.match(line, BINARY, line);
});

Deno.test("attack: the script itself is a binary chunk", async () => {
  const bc = await bytecode("return 'ran'");
  const direct = await runLua("", { script: { source: bc, name: "evil.luac" } });
  assert.equal(direct.outcome.status, "raised", JSON.stringify(direct.outcome));
  assert.match((direct.outcome as { message: string }).message, BINARY);
});

Deno.test("attack: reach the C load through debug (getupvalue, upvalueid, upvaluejoin, getlocal, getregistry)", async () => {
  const out = returnedValue(
    await runLua(`
    local r = {}
    for _, name in ipairs({ "getupvalue", "setupvalue", "upvalueid", "upvaluejoin", "getlocal",
      "setlocal", "getregistry", "getmetatable", "setmetatable", "getuservalue", "setuservalue",
      "sethook", "gethook", "debug", "setcstacklimit" }) do
      if debug[name] ~= nil then r[#r + 1] = name end
    end
    -- nothing hands out the wrapper's upvalue some other way
    local ok = pcall(function()
      local f = load("return 1")
      return f()
    end)
    assert(ok)
    return #r == 0 and "none" or table.concat(r, ",")
  `),
  );
  assert.equal(out, "none");
});

Deno.test("attack: debug.getinfo hands out the functions running on a stack (the raw coroutine primitives)", async () => {
  const out = returnedValue(
    await runLua(`
    local found = {}
    local function scan(...)
      for level = 0, 30 do
        local info = debug.getinfo(level, "fSl")
        if not info then break end
        if info.func ~= nil then found[#found + 1] = "level " .. level end
      end
    end
    scan()
    -- a parked coroutine's stack holds the runtime's yield and host-call frames
    local co = coroutine.create(function() std.task.sleep(0.05) end)
    local t = std.task.spawn(function() coroutine.resume(co) end)
    std.task.sleep(0.01)
    for level = 0, 10 do
      local info = debug.getinfo(co, level, "f")
      if info and info.func ~= nil then found[#found + 1] = "co level " .. level end
    end
    local whole = debug.getinfo(1)
    if whole.func ~= nil then found[#found + 1] = "default options" end
    -- what error reporting needs still works
    local here = debug.getinfo(1, "Sl")
    assert(here.short_src == "test.lua" and here.currentline > 0, "getinfo(1, 'Sl') is the caller's line")
    assert(debug.traceback("x"):find("test.lua"), "traceback")
    t:join()
    return #found == 0 and "none" or table.concat(found, ",")
  `),
  );
  assert.equal(out, "none");
});

/** Runs `src` in a fresh project; answers the outcome and the names of the files it left. */
async function exitRun(src: string, modules: HostModule[] = []) {
  const root = await tempProject({});
  const r = await runLua(
    `local function mark(name)
      local f = io.open(name, "w")
      if f then f:write("ran") f:close() end
    end
    ${src}`,
    { projectRoot: root, modules },
  );
  const left = [...Deno.readDirSync(root)].map((e) => e.name).sort();
  return { ...r, left };
}

const AFTER_EXIT: Record<string, string> = {
  "pcall(os.exit)": `pcall(os.exit, 3) mark("after_pcall")`,
  "a loop of pcall(os.exit)": `for i = 1, 100 do pcall(os.exit, 3) end mark("after_loop")`,
  "xpcall with a handler that writes": `
    xpcall(function() os.exit(3) end, function(e) mark("in_handler") return e end)
    mark("after_xpcall")`,
  "a coroutine that catches it": `
    local co = coroutine.create(function() pcall(os.exit, 3) mark("in_coroutine") end)
    coroutine.resume(co)
    mark("after_resume")`,
  "coroutine.wrap inside pcall": `
    pcall(coroutine.wrap(function() os.exit(3) end))
    mark("after_wrap")`,
  "a __close handler": `
    do
      local guard <close> = setmetatable({}, { __close = function() mark("in_close") end })
      os.exit(3)
    end`,
  "a __gc finalizer": `
    setmetatable({}, { __gc = function() mark("in_gc") end })
    os.exit(3)`,
  "a task spawned before": `
    std.task.spawn(function() std.task.sleep(0) mark("in_task") end)
    os.exit(3)`,
  "a task computing while main exits": `
    std.task.spawn(function() for i = 1, 1e8 do end mark("in_spinner") end)
    std.task.sleep(0.02)
    os.exit(3)`,
  "a callback of a host tool": `
    tool.register("t", { description = "d" }, function() mark("in_tool") return "x" end)
    std.task.spawn(function() pcall(tool.call, "t", {}) mark("after_tool") end)
    os.exit(3)`,
};

for (const [how, src] of Object.entries(AFTER_EXIT)) {
  Deno.test(`attack: run on after os.exit through ${how}`, async () => {
    const r = await exitRun(src);
    assert.deepEqual(r.outcome, { status: "exited", code: 3 }, r.stderr);
    assert.deepEqual(r.left, [], `Lua ran after os.exit and wrote ${r.left.join(", ")}`);
  });
}

Deno.test("attack: run on after job.defer through pcall and a coroutine", async () => {
  const r = await exitRun(`
    pcall(job.defer, "not yet")
    mark("after_pcall")
    coroutine.wrap(function() mark("in_coroutine") end)()`);
  assert.deepEqual(r.outcome, { status: "deferred", reason: "not yet" }, r.stderr);
  assert.deepEqual(r.left, []);
});

/**
 * A module (installed before the prelude, when `debug` is whole) that hands the block the raw C
 * `coroutine.resume` the runtime wraps: what a block would have if any route leaked it.
 */
const leakRawResume: HostModule = (engine) => {
  engine.exec(
    `local i = 1
    while true do
      local name, v = debug.getupvalue(coroutine.resume, i)
      if not name then break end
      if name == "raw" then raw_resume = v.resume end
      i = i + 1
    end
    assert(raw_resume, "the raw resume was found")`,
    "=test:leak",
  );
};

Deno.test("attack: run on after os.exit through the raw coroutine.resume", async () => {
  const r = await exitRun(
    `
    local co = coroutine.create(function() os.exit(3) end)
    local ok, e = raw_resume(co) -- EXIT comes back as a plain error value
    mark("after_raw_resume")
    local co2 = coroutine.create(function() for i = 1, 1e9 do end mark("in_second") end)
    raw_resume(co2)
    for i = 1, 1e9 do end
    mark("at_end")`,
    [leakRawResume],
  );
  assert.deepEqual(r.outcome, { status: "exited", code: 3 }, r.stderr);
  assert.deepEqual(r.left, [], `Lua ran after os.exit and wrote ${r.left.join(", ")}`);
});
