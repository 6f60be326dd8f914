/**
 * Host modules installed on first use (src/host/lazy.ts, `LuaEngine.defineLazy`): installed once,
 * by whatever first touches them (a field read or write, `pairs`, `require`), wherever that
 * happens, including where Lua cannot yield; the tables keep their identity.
 */
import assert from "node:assert/strict";
import { lazily } from "../../src/host/lazy.ts";
import type { HostModule } from "../../src/host/context.ts";
import { evalLua, runLua } from "../helpers.ts";

/** A module filling `demo` and answering `require("demo.host")`, counting its installs. */
function demoModule(): { module: HostModule; installs: () => number } {
  let n = 0;
  const module: HostModule = (engine) => {
    n++;
    engine.define("demo.twice", { sync: (a) => 2 * a.number(1, "x") });
    engine.define("@demo_secret", { sync: () => "secret" });
    engine.exec(
      `local _, H = ...
       demo.installs = (demo.installs or 0) + 1
       package.loaded["demo.host"] = { secret = H.demo_secret }`,
      "=ab:demo",
    );
  };
  return { module: lazily({ tables: ["demo"], preload: ["demo.host"] }, module), installs: () => n };
}

Deno.test("a lazy module is not installed by a run that does not touch it", async () => {
  const d = demoModule();
  assert.equal(await evalLua(`return type(demo)`, { modules: [d.module] }), "table");
  assert.equal(d.installs(), 0);
});

Deno.test("a lazy module installs once, on a field read, and keeps its table", async () => {
  const d = demoModule();
  const out = await evalLua(
    `local early = demo
     local before = rawget(demo, "twice")
     local r = demo.twice(21)
     return tostring(before) .. " " .. r .. " " .. tostring(early == demo) .. " " .. demo.installs
       .. " " .. tostring(getmetatable(demo)) .. " " .. early.twice(1)`,
    { modules: [d.module] },
  );
  assert.equal(out, "nil 42 true 1 nil 2");
  assert.equal(d.installs(), 1);
});

Deno.test("a lazy module installs on a write, on pairs, and on require", async () => {
  for (
    const [touch, expect] of [
      [`function demo.mine() return "m" end; return demo.mine() .. type(demo.twice)`, "mfunction"],
      [`local n = 0; for k in pairs(demo) do n = n + 1 end; return tostring(n)`, "2"],
      [`return require("demo.host").secret() .. type(demo.twice)`, "secretfunction"],
    ]
  ) {
    const d = demoModule();
    assert.equal(await evalLua(touch, { modules: [d.module] }), expect, touch);
    assert.equal(d.installs(), 1, touch);
  }
});

Deno.test("a lazy module installs where Lua cannot yield (inside a sort comparator)", async () => {
  const d = demoModule();
  const out = await evalLua(
    `local t = { 3, 1, 2 }
     table.sort(t, function(a, b) return demo.twice(a) < demo.twice(b) end)
     return table.concat(t, ",")`,
    { modules: [d.module] },
  );
  assert.equal(out, "1,2,3");
  assert.equal(d.installs(), 1);
});

Deno.test("the standard library's lazy packages work on first touch from a coroutine", async () => {
  const r = await runLua(`
    local co = coroutine.wrap(function()
      coroutine.yield(type(std.kv.get) .. type(std.sql.query) .. type(std.ts.append))
      coroutine.yield(type(mcp.connect) .. type(bus.emit) .. type(http.request) .. type(sh.exec))
      coroutine.yield(type(std.fs.read) .. type(std.fs.register_tools) .. type(llm.chat))
      coroutine.yield(type(require("knl.host").open) .. type(require("llm_proto.transport").send))
    end)
    return table.concat({ co(), co(), co(), co() }, " ")
  `);
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal(
    (r.outcome as { value: string }).value,
    "functionfunctionfunction functionfunctionfunctionfunction functionfunctionfunction functionfunction",
  );
});

Deno.test("a lazy module whose installation fails raises its error on every touch", async () => {
  const broken = lazily({ tables: ["demo"], preload: ["demo.host"] }, () => {
    throw new Error("demo cannot start: no licence");
  });
  const out = await evalLua(
    `local a = select(2, pcall(function() return demo.x end))
     local b = select(2, pcall(function() demo.y = 1 end))
     local c = select(2, pcall(require, "demo.host"))
     return a .. "|" .. b .. "|" .. c`,
    { modules: [broken] },
  );
  const parts = out!.split("|");
  assert.equal(parts.length, 3);
  for (const p of parts) assert.match(p, /demo cannot start: no licence/);
});

Deno.test("__installed(fn) on a trigger's metatable calls fn right after the install, within the touch; an installed module has no trigger", async () => {
  const d = demoModule();
  const out = await evalLua(
    `local log = {}
     getmetatable(demo).__installed(function() log[#log + 1] = "after " .. demo.installs .. " " .. type(rawget(demo, "twice")) end)
     log[#log + 1] = "before"
     local r = demo.twice(2)
     log[#log + 1] = "touched " .. r
     return table.concat(log, ", ") .. "; " .. tostring(getmetatable(demo))`,
    { modules: [d.module] },
  );
  assert.equal(out, "before, after 1 function, touched 4; nil");
  assert.equal(d.installs(), 1);
  assert.equal(
    await evalLua(`getmetatable(demo).__installed(function() end) return "untouched"`, {
      modules: [d.module],
    }),
    "untouched",
  );
});
