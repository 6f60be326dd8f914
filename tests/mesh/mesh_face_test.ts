// The Lua face of the mesh: the not-connected errors, `__ab_obs` injection, and in-process runs
// talking through a real nats-server (request/reply, a handler error, send, a nested request).
import assert from "node:assert/strict";
import { notConnected, obsContext, withObs } from "../../src/host/mesh.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { LuaFloat } from "../../src/json/values.ts";
import { resultOf, runLua, testEnv } from "../helpers.ts";
import { natsMissing, startNats } from "./nats_server.ts";

const missing = natsMissing();
const ignore = missing !== undefined;
if (ignore) console.warn(`skipping the in-process NATS mesh tests: ${missing}`);

export const KEY_A = "a".repeat(64);
export const KEY_B = "b".repeat(64);
export const KEY_C = "c".repeat(64);

Deno.test("mesh face: every function raises 'mesh not connected' without --relay", async () => {
  const r = await runLua(`
    local out = {}
    for _, name in ipairs({ "send", "request", "on", "agent_id" }) do
      local ok, e = pcall(mesh[name], "x", {})
      out[#out + 1] = { ok = ok, msg = tostring(e), kind = e.kind, source = e.source }
    end
    return std.json.encode(out)`);
  const got = resultOf(r);
  for (const [i, name] of ["send", "request", "on", "agent_id"].entries()) {
    assert.equal(got[i].ok, false);
    assert.match(got[i].msg, new RegExp(`mesh\\.${name}: mesh not connected \\(no --relay specified\\)$`));
    assert.equal(got[i].kind, "not_connected");
    assert.equal(got[i].source, "mesh");
  }
  assert.equal(notConnected("send").message, "mesh.send: mesh not connected (no --relay specified)");
});

Deno.test("mesh face: __ab_obs goes on objects and nil only, never over the caller's own", () => {
  const env = new Map([["AGENT_BLOCK_TRACE_ID", "t-1"], ["AGENT_BLOCK_RUN_ID", ""], [
    "AGENT_BLOCK_AGENT_NAME",
    "scout",
  ]]);
  const obs = obsContext({ get: (k) => env.get(k) }, "ME");
  assert.deepEqual(obs, { trace_id: "t-1", agent_id: "ME", agent_name: "scout" }); // empty run_id left out
  env.set("AGENT_BLOCK_AGENT_ID", "agent-7");
  assert.equal(obsContext({ get: (k) => env.get(k) }, "ME").agent_id, "agent-7");
  assert.deepEqual(withObs(undefined, obs), { __ab_obs: obs });
  assert.deepEqual(withObs(null, obs), { __ab_obs: obs });
  const input = { q: 1 };
  assert.deepEqual(withObs(input, obs), { q: 1, __ab_obs: obs });
  assert.deepEqual(input, { q: 1 }, "the input is not changed");
  const own = { __ab_obs: { trace_id: "mine" } };
  assert.equal(withObs(own, obs), own);
  for (const v of [[1, 2], "text", 3, true, new LuaFloat(2)]) assert.equal(withObs(v, obs), v);
});

/** A serving block: answers requests until one says stop; nested asks a third agent first. */
const SERVER = `
  local seen = {}
  mesh.on(function(ev)
    seen[#seen + 1] = ev.payload.n
    if ev.payload.boom then error("boom requested") end
    if ev.payload.stop then bus.stop() return "bye" end
    if ev.payload.nested then
      local inner = mesh.request(ev.payload.nested, { q = "inner" })
      return { inner = inner, from = ev.meta.from }
    end
    return { echo = ev.payload.q, from = ev.meta.from, obs = ev.payload.__ab_obs, me = mesh.agent_id() }
  end)
  bus.serve()
  return std.json.encode(seen)`;

Deno.test(
  { name: "mesh face: two in-process runs request, reply, send and nest over NATS", ignore },
  async () => {
    const srv = await startNats();
    const a = MeshIdentity.fromSeedHex(KEY_A).agentId;
    const b = MeshIdentity.fromSeedHex(KEY_B).agentId;
    const c = MeshIdentity.fromSeedHex(KEY_C).agentId;
    try {
      const mesh = (key: string) => ({ relay: srv.url, secretKey: key });
      const server = runLua(SERVER, { mesh: mesh(KEY_A) });
      const helper = runLua(
        `mesh.on(function(ev) bus.stop() return "inner answer to " .. ev.meta.from end) bus.serve()`,
        { mesh: mesh(KEY_C) },
      );
      const client = await runLua(
        `
      local A, C = ...
      local function ask(p)
        for _ = 1, 200 do -- the server may not be subscribed yet
          local ok, r = pcall(mesh.request, A, p, 5)
          if ok then return r end
          if r.kind ~= "unreachable" then error(r) end
          std.task.sleep(0.05)
        end
      end
      local r1 = ask({ q = "hi", n = 1 })
      local r2 = ask({ boom = true, n = 2 })
      mesh.send(A, { n = 3 })
      local ok, e = pcall(mesh.request, "${MeshIdentity.random().agentId}", {})
      local r4 = ask({ nested = C, n = 4 })
      local r5 = ask({ stop = true, n = 5 })
      return std.json.encode({ r1 = r1, r2 = r2, e = { kind = e.kind, peer = e.peer, msg = tostring(e) },
        r4 = r4, r5 = r5, me = mesh.agent_id() })`.replace("local A, C = ...", `local A, C = "${a}", "${c}"`),
        { mesh: mesh(KEY_B), env: testEnv({ AGENT_BLOCK_TRACE_ID: "trace-9" }) },
      );
      if (client.outcome.status !== "returned") {
        for (const r of [await server, await helper]) console.error(r.outcome, r.stderr);
      }
      const got = resultOf(client);
      assert.equal(got.me, b);
      assert.deepEqual(got.r1, {
        echo: "hi",
        from: b,
        me: a,
        obs: { trace_id: "trace-9", agent_id: b },
      });
      assert.match(got.r2.error, /boom requested/);
      assert.equal(got.e.kind, "unreachable");
      assert.match(got.e.msg, /^test\.lua:\d+: mesh\.request: request to .* no agent is listening/);
      assert.deepEqual(got.r4, { inner: `inner answer to ${a}`, from: b });
      assert.equal(got.r5, "bye");
      assert.deepEqual(resultOf(await server), [1, 2, 3, 4, 5]);
      assert.equal((await helper).outcome.status, "returned");
    } finally {
      await srv.stop();
    }
  },
);
