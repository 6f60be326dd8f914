/**
 * bus.* and the TypeScript seam (`BusHost` + `busModule`): Lua handlers with closures run as
 * tasks in emission order, the `on_any` fallback, `until_idle`, `bus.stop`, an unbounded queue,
 * failing handlers, and an embedder's TypeScript handlers and acks.
 */
import assert from "node:assert/strict";
import { runLua } from "../helpers.ts";
import { BusHost, busModule } from "../../src/host/bus.ts";

async function ret(source: string, extra: Parameters<typeof runLua>[1] = {}) {
  const r = await runLua(source, extra);
  if (r.outcome.status !== "returned") throw new Error(`${JSON.stringify(r.outcome)}\n${r.stderr}`);
  return { out: r.outcome.value as string, stderr: r.stderr };
}

Deno.test("bus: handlers with closures get {kind, id, payload, meta} in emission order; on_any catches the rest", async () => {
  const { out } = await ret(`
    local seen = {}
    bus.on("job", function(ev)
      seen[#seen + 1] = ev.kind .. ":" .. ev.payload.n .. ":" .. type(ev.meta)
      if ev.payload.n == 1 then bus.emit("job", { n = 3 }) end -- emitted by a handler: served too
      std.task.sleep(0) -- a handler may yield
    end)
    bus.on_any(function(ev) seen[#seen + 1] = "any:" .. ev.kind .. ":" .. ev.id end)
    local id1 = bus.emit("job", { n = 1 })
    bus.emit("other", "p", "my-id")
    bus.emit("job", { n = 2 })
    assert(type(id1) == "string" and #id1 == 36)
    local pending = bus.pending()
    bus.serve({ until_idle = true })
    return pending .. " " .. table.concat(seen, " ") .. " " .. bus.pending()`);
  assert.equal(out, "3 job:1:table any:other:my-id job:2:table job:3:table 0");
});

Deno.test("bus: stop ends serve after the handler in flight; queued events wait for the next serve", async () => {
  const { out } = await ret(`
    local log = {}
    bus.on("e", function(ev)
      log[#log + 1] = ev.payload
      if ev.payload == 2 then bus.stop() end
    end)
    for i = 1, 4 do bus.emit("e", i) end
    bus.serve()
    local mid = table.concat(log, ",") .. "/" .. bus.pending()
    bus.serve({ until_idle = true })
    return mid .. " " .. table.concat(log, ",")`);
  assert.equal(out, "1,2/2 1,2,3,4");
});

Deno.test("bus: serve waits for events from other tasks until stopped", async () => {
  const { out } = await ret(`
    local got = {}
    bus.on("tick", function(ev) got[#got + 1] = ev.payload end)
    local producer = std.task.spawn(function()
      for i = 1, 3 do std.task.sleep(0.01) bus.emit("tick", i) end
      std.task.sleep(0.01)
      bus.stop()
    end)
    bus.serve()
    producer:join()
    return table.concat(got, ",")`);
  assert.equal(out, "1,2,3");
});

Deno.test("bus: the queue is unbounded (emit never blocks); failing and unclaimed events are reported", async () => {
  const { out, stderr } = await ret(`
    for i = 1, 10000 do bus.emit("n", i) end
    bus.emit("nobody", 1, "lost-1")
    local sum = 0
    bus.on("n", function(ev)
      if ev.payload == 5 then error("boom at five") end
      sum = sum + ev.payload
    end)
    bus.serve({ until_idle = true })
    return tostring(sum)`);
  assert.equal(out, String(50005000 - 5));
  assert.match(stderr, /\[warn\] test\.lua: bus: handler for 'n' failed: .*boom at five/);
  assert.match(stderr, /\[warn\] test\.lua: bus: no handler for kind 'nobody' \(event lost-1 dropped\)/);
});

Deno.test("bus: argument errors and one serve at a time", async () => {
  for (
    const [code, msg] of [
      [`bus.emit(nil, 1)`, "bus.emit: argument 1 (kind) must be a string, got nil"],
      [`bus.emit("", 1)`, "bus.emit: argument 1 (kind) must be a non-empty string, got an empty string"],
      [`bus.emit("k", 1, {})`, "bus.emit: argument 3 (id) must be a string, got table"],
      [`bus.on("k", "f")`, "bus.on: argument 2 (fn) must be a function, got string"],
      [`bus.on_any(5)`, "bus.on_any: argument 1 (fn) must be a function, got number"],
      [`bus.serve(5)`, "bus.serve: argument 1 (opts) must be a table, got number"],
      [
        `bus.serve({ until_idle = "yes" })`,
        "bus.serve: argument 1 (opts) field 'until_idle' must be a boolean, got string",
      ],
    ]
  ) {
    const r = await runLua(`\n${code}`);
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`, code);
  }
  const { out } = await ret(`
    bus.on("x", function() return bus.serve() end)
    bus.emit("x", 1)
    local err
    bus.on("x", function() local ok, e = pcall(bus.serve) err = e end)
    bus.serve({ until_idle = true })
    return err`);
  assert.match(out, /bus\.serve: already serving/);
});

Deno.test("BusHost: TypeScript handlers get Lua emits without bus.serve; acks flow back to TypeScript emitters", async () => {
  const host = new BusHost();
  const received: unknown[] = [];
  host.on("result", (ev) => {
    received.push([ev.kind, ev.payload]);
  });
  host.onAny((ev) => {
    received.push(["any", ev.kind]);
  });
  let ack: Promise<unknown> | undefined;
  let failed: Promise<unknown> | undefined;
  const { out } = await ret(
    `bus.emit("result", { answer = 42 })   -- a TypeScript handler: delivered at once
     bus.emit("misc", 1)                    -- TypeScript fallback
     bus.on("ask", function(ev) return { doubled = ev.payload.n * 2, from = ev.meta.from } end)
     bus.on("fail", function() error("handler refused") end)
     _TRIGGER()
     bus.serve({ until_idle = true })
     return "served"`,
    {
      modules: [
        busModule(host),
        (engine) =>
          engine.define("_TRIGGER", {
            sync: () => {
              ack = host.emit("ask", { n: 21 }, { meta: { from: "embedder" } });
              failed = host.emit("fail", null);
            },
          }),
      ],
    },
  );
  assert.equal(out, "served");
  assert.deepEqual(received, [["result", { answer: 42 }], ["any", "misc"]]);
  assert.deepEqual(await ack, { doubled: 42, from: "embedder" });
  await assert.rejects(failed!, /handler refused/);
});

Deno.test("BusHost: a Lua handler for the kind wins over the TypeScript one; unserved acks reject at run end", async () => {
  const host = new BusHost();
  const tsGot: string[] = [];
  host.on("k", (ev) => {
    tsGot.push(String(ev.payload));
    return "ts";
  });
  let pendingAck: Promise<unknown> | undefined;
  await ret(
    `bus.on("k", function(ev) return "lua" end)
     bus.emit("k", "from-lua")
     bus.serve({ until_idle = true })
     _TRIGGER()
     return "x"`,
    {
      modules: [
        busModule(host),
        (engine) =>
          engine.define("_TRIGGER", {
            sync: () => {
              pendingAck = host.emit("k", "never served");
            },
          }),
      ],
    },
  );
  assert.deepEqual(tsGot, []);
  await assert.rejects(pendingAck!, /the run ended before the event was dispatched/);
  await assert.rejects(host.emit("k", 1), /the run has ended/);
});

Deno.test("BusHost: TypeScript handlers get integral Lua floats as numbers; Lua handlers keep them floats", async () => {
  const host = new BusHost();
  const received: unknown[] = [];
  host.on("result", (ev) => {
    received.push(ev.payload);
  });
  const { out } = await ret(
    `bus.emit("result", { score = 10 / 2, ratio = 0.5, n = 3, list = { 1.0, 2, { deep = 4.0 } } })
     local kinds = {}
     bus.on("lua", function(ev) kinds[#kinds + 1] = math.type(ev.payload.x) .. ":" .. tostring(ev.payload.x) end)
     bus.emit("lua", { x = 3.0 })
     bus.serve({ until_idle = true })
     return table.concat(kinds, " ")`,
    { modules: [busModule(host)] },
  );
  assert.equal(out, "float:3.0");
  assert.deepEqual(received, [{ score: 5, ratio: 0.5, n: 3, list: [1, 2, { deep: 4 }] }]);
  // plain JSON, no engine tag left in it
  assert.deepEqual(JSON.parse(JSON.stringify(received[0])), received[0]);
});
