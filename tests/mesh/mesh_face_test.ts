// The Lua face of the mesh: the not-connected errors, `__ab_obs` injection, and in-process runs
// talking through a real nats-server (request/reply, a handler error, send, a nested request).
import { settingsFromEnv } from "../../src/config/env_settings.ts";
import assert from "node:assert/strict";
import { notConnected, obsContext, withObs } from "../../src/host/mesh.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { LuaFloat } from "../../src/json/values.ts";
import { resultOf, runLua, settleWithin, tempDir, testEnv, waitFor } from "../helpers.ts";
import { connect, headers, type Msg } from "@nats-io/transport-node";
import { connectMesh } from "../../src/clients/mesh/connect.ts";
import { SIGNATURE_HEADER, subjectOf } from "../../src/clients/mesh/nats_transport.ts";
import { natsMissing, startNats } from "./nats_server.ts";
import type { RunEvent } from "../../src/obs/run_events.ts";

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
  const ids = () => settingsFromEnv(env).correlation ?? {}; // the edge's reading
  const obs = obsContext(ids(), "ME");
  assert.deepEqual(obs, { trace_id: "t-1", agent_id: "ME", agent_name: "scout" }); // empty run_id left out
  env.set("AGENT_BLOCK_AGENT_ID", "agent-7");
  assert.equal(obsContext(ids(), "ME").agent_id, "agent-7");
  assert.deepEqual(withObs(undefined, obs), { __ab_obs: obs });
  assert.deepEqual(withObs(null, obs), { __ab_obs: obs });
  const input = { q: 1 };
  assert.deepEqual(withObs(input, obs), { q: 1, __ab_obs: obs });
  assert.deepEqual(input, { q: 1 }, "the input is not changed");
  const own = { __ab_obs: { trace_id: "mine" } };
  assert.equal(withObs(own, obs), own);
  for (const v of [[1, 2], "text", 3, true, new LuaFloat(2)]) assert.equal(withObs(v, obs), v);
});

/** Lua: `ask(to, payload [, timeout])`, retrying while nobody listens at `to` yet (for 90 s). */
const ASK = `
local function ask(to, p, t)
  local deadline = std.time.now() + 90
  while true do
    local ok, r = pcall(mesh.request, to, p, t or 30)
    if ok then return r end
    if r.kind ~= "unreachable" or std.time.now() > deadline then error(r, 0) end
    std.time.sleep(0.05)
  end
end
`;

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
    await using srv = await startNats();
    const a = MeshIdentity.fromSeedHex(KEY_A).agentId;
    const b = MeshIdentity.fromSeedHex(KEY_B).agentId;
    const c = MeshIdentity.fromSeedHex(KEY_C).agentId;
    // the serving runs end when the client stops them, or when the test ends (a failure included)
    const abort = new AbortController();
    const serving: ReturnType<typeof runLua>[] = [];
    try {
      const mesh = (key: string) => ({ relay: srv.url, secretKey: key });
      const server = runLua(SERVER, { mesh: mesh(KEY_A), signal: abort.signal });
      const helper = runLua(
        `mesh.on(function(ev)
        if ev.payload.ping then return "pong" end
        bus.stop()
        return "inner answer to " .. ev.meta.from
      end)
      bus.serve()`,
        { mesh: mesh(KEY_C), signal: abort.signal },
      );
      serving.push(server, helper);
      const client = await runLua(
        `
      local A, C = ...
      ${ASK}
      local r1 = ask(A, { q = "hi", n = 1 })
      local r2 = ask(A, { boom = true, n = 2 })
      mesh.send(A, { n = 3 })
      local ok, e = pcall(mesh.request, "${MeshIdentity.random().agentId}", {})
      ask(C, { ping = true }) -- the helper is up (it answers anything)
      local r4 = ask(A, { nested = C, n = 4 })
      local r5 = ask(A, { stop = true, n = 5 })
      return std.json.encode({ r1 = r1, r2 = r2, e = { kind = e.kind, peer = e.peer, msg = tostring(e) },
        r4 = r4, r5 = r5, me = mesh.agent_id() })`.replace("local A, C = ...", `local A, C = "${a}", "${c}"`),
        { mesh: mesh(KEY_B), env: testEnv({ AGENT_BLOCK_TRACE_ID: "trace-9" }) },
      );
      if (client.outcome.status !== "returned") {
        abort.abort("the client failed");
        for (const r of await settleWithin(serving, "the serving runs")) console.error(r);
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
      const [served, helped] = await settleWithin(serving, "the serving runs");
      assert.equal(served.status, "fulfilled");
      assert.equal(helped.status, "fulfilled");
      assert.deepEqual(resultOf(await server), [1, 2, 3, 4, 5]);
      assert.equal((await helper).outcome.status, "returned");
    } finally {
      abort.abort("the test ended");
      await settleWithin(serving, "the serving runs");
    }
  },
);

Deno.test({
  name: "mesh face: the kernel records mesh traffic in the open session, payloads only when asked",
  ignore,
}, async () => {
  await using srv = await startNats();
  const abort = new AbortController();
  const a = MeshIdentity.fromSeedHex(KEY_A).agentId;
  const b = MeshIdentity.fromSeedHex(KEY_B).agentId;
  const rows: { kind: string; data: Record<string, unknown> }[] = [];
  const serverRows: typeof rows = [];
  const observer = (into: typeof rows) => (e: RunEvent) => {
    if (e.type === "events") {
      for (const r of e.rows) into.push({ kind: r.kind, data: r.data as Record<string, unknown> });
    }
  };
  let server: ReturnType<typeof runLua> | undefined;
  let serverEnded = false;
  try {
    server = runLua(
      `require("knl").session({ owner = "srv", store = "mem" }, function()
        mesh.on(function(ev) if ev.payload.stop then bus.stop() end return { ok = true } end)
        bus.serve()
      end)`,
      { mesh: { relay: srv.url, secretKey: KEY_A }, signal: abort.signal, observe: observer(serverRows) },
    );
    server.then(() => serverEnded = true, () => serverEnded = true);
    // The server joins the mesh (and routes what arrives) before its script opens the session,
    // and a message that arrives with no session open is not recorded: the client starts once
    // the server's session_open is committed, so all four of its messages land in the session.
    await waitFor(() => serverEnded || serverRows.some((r) => r.kind === "session_open"), {
      what: "the server's session to open",
      timeoutMs: 60_000,
    });
    const client = await runLua(
      `local A = "${a}"
      ${ASK}
      ask(A, { before = "no session: not recorded" }) -- waits for the server to be up
      require("knl").session({ owner = "cli", store = "mem" }, function()
        mesh.request(A, { q = "secret payload" })
        mesh.send(A, { n = 1 })
        pcall(mesh.request, "${MeshIdentity.random().agentId}", {})
        mesh.request(A, { stop = true })
      end)`,
      { mesh: { relay: srv.url, secretKey: KEY_B }, observe: observer(rows) },
    );
    assert.equal(client.outcome.status, "returned", client.stderr);
    const [ended] = await settleWithin([server], "the server run");
    assert.equal(ended.status, "fulfilled");
    const kinds = rows.map((r) => r.kind).filter((k) => k.startsWith("mesh_"));
    assert.deepEqual(kinds, [
      "mesh_request",
      "mesh_reply",
      "mesh_send",
      "mesh_request",
      "mesh_reply",
      "mesh_request",
      "mesh_reply",
    ]);
    const reply = rows.find((r) => r.kind === "mesh_reply")!.data;
    assert.equal(reply.peer, a);
    assert.equal(reply.transport, "nats");
    assert.equal(reply.ok, true);
    assert.ok((reply.bytes as number) > 0 && (reply.sent_bytes as number) > 0);
    assert.ok(!JSON.stringify(rows).includes("secret payload"), "no payloads by default");
    const failed = rows.filter((r) => r.kind === "mesh_reply")[1].data;
    assert.equal(failed.ok, false);
    assert.match(String(failed.error), /no agent is listening/);
    const received = serverRows.filter((r) => r.kind === "mesh_received");
    // the one before the client's session, the request, the send and the stop
    assert.equal(received.length, 4, "the server's session saw each of its messages");
    assert.equal(received[0].data.peer, b);
    assert.ok(!("payload" in received[0].data));
  } finally {
    abort.abort("the test ended");
    await settleWithin(server ? [server] : [], "the server run");
  }
});

Deno.test(
  { name: "mesh face: AGENT_BLOCK_MESH_RECORD_PAYLOADS=1 puts payloads in the records", ignore },
  async () => {
    await using srv = await startNats();
    const a = MeshIdentity.fromSeedHex(KEY_A).agentId;
    const rows: { kind: string; data: Record<string, unknown> }[] = [];
    const abort = new AbortController();
    let server: ReturnType<typeof runLua> | undefined;
    try {
      // bus.on("mesh", ...) alone is served: the run routes inbound requests from the start
      server = runLua(
        `bus.on("mesh", function(ev) bus.stop() return { got = ev.payload.q } end) bus.serve()`,
        { mesh: { relay: srv.url, secretKey: KEY_A }, signal: abort.signal },
      );
      const client = await runLua(
        `${ASK}
        require("knl").session({ owner = "cli", store = "mem" }, function()
          ask("${a}", { q = "shown" })
        end)`,
        {
          mesh: { relay: srv.url, secretKey: KEY_B },
          env: testEnv({ AGENT_BLOCK_MESH_RECORD_PAYLOADS: "1" }),
          observe: (e) => {
            if (e.type === "events") {
              for (const r of e.rows) rows.push({ kind: r.kind, data: r.data as Record<string, unknown> });
            }
          },
        },
      );
      assert.equal(client.outcome.status, "returned", client.stderr);
      const [ended] = await settleWithin([server], "the server run");
      assert.equal(ended.status === "fulfilled" && ended.value.outcome.status, "returned");
      const req = rows.find((r) =>
        r.kind === "mesh_request" && (r.data.payload as { q?: string })?.q === "shown"
      );
      assert.ok(req, JSON.stringify(rows));
      const rep = rows.filter((r) => r.kind === "mesh_reply").at(-1)!;
      assert.deepEqual(rep.data.payload, { got: "shown" });
    } finally {
      abort.abort("the test ended");
      await settleWithin(server ? [server] : [], "the server run");
    }
  },
);

Deno.test(
  {
    name: "attack: a captured NATS message is refused by the agent's next run (the seen ids outlive the run)",
    ignore,
  },
  async () => {
    await using srv = await startNats();
    const project = await tempDir("ab_mesh_replay_");
    const a = MeshIdentity.fromSeedHex(KEY_A).agentId;
    // a party on the NATS server (no key of anyone's) that copies what is sent to `a`
    const raw = await connect({ servers: srv.url.replace("nats://", "") });
    const captured: Msg[] = [];
    const b = await connectMesh(srv.url, MeshIdentity.fromSeedHex(KEY_B));
    const serveOnce = `
      local seen = {}
      mesh.on(function(ev)
        seen[#seen + 1] = ev.payload.n
        if ev.payload.stop then bus.stop() end
        return "ok"
      end)
      bus.serve()
      return std.json.encode(seen)`;
    /** Asks `a` until a run of it listens (a run starting), then returns the reply. */
    const ask = async (payload: unknown) => {
      for (let i = 0;; i++) {
        try {
          return (await b.request(a, payload, { timeoutMs: 30_000 })).value;
        } catch (e) {
          if ((e as { kind?: string }).kind !== "unreachable" || i > 2000) throw e;
          await new Promise((r) => setTimeout(r, 25));
        }
      }
    };
    const runs: ReturnType<typeof runLua>[] = [];
    const abort = new AbortController();
    try {
      const mesh = { relay: srv.url, secretKey: KEY_A };
      runs.push(runLua(serveOnce, { mesh, projectRoot: project, signal: abort.signal }));
      assert.equal(await ask({ n: 0 }), "ok"); // the run listens
      const tap = raw.subscribe(subjectOf(a), {
        callback: (_e, m) => {
          captured.push(m);
        },
      });
      await raw.flush();
      assert.equal(await ask({ n: 1, stop: true }), "ok");
      const [first] = await settleWithin([runs[0]], "the first run");
      assert.equal(first.status === "fulfilled" && resultOf(first.value).join(), "0,1");
      await waitFor(() => captured.length === 1, { what: "the message to be captured" });
      tap.unsubscribe();
      await raw.flush();
      const replayed = JSON.parse(new TextDecoder().decode(captured[0].data)).id;

      // the agent's next run, same project: the replay is dropped, a new message is not
      runs.push(runLua(serveOnce, { mesh, projectRoot: project, signal: abort.signal }));
      assert.equal(await ask({ n: 2 }), "ok");
      await assert.rejects(
        () => raw.request(subjectOf(a), captured[0].data, { headers: captured[0].headers, timeout: 1000 }),
        "the replay is never answered",
      );
      assert.equal(await ask({ n: 3, stop: true }), "ok");
      const [second] = await settleWithin([runs[1]], "the second run");
      assert.ok(second.status === "fulfilled");
      assert.deepEqual(resultOf(second.value), [2, 3], "the replayed message reached no handler");
      assert.match(second.value.stderr, new RegExp(`dropped a message .*replayed id ${replayed}`));
    } finally {
      abort.abort("the test ended");
      await settleWithin(runs, "the serving runs");
      await settleWithin([b.close(), raw.close()], "the connections");
    }
  },
);

Deno.test(
  {
    name:
      "attack: a flood of forged NATS messages writes a few warning lines and a count; a forged from's ESC is escaped",
    ignore,
  },
  async () => {
    await using srv = await startNats();
    const a = MeshIdentity.fromSeedHex(KEY_A).agentId;
    const raw = await connect({ servers: srv.url.replace("nats://", "") });
    const b = await connectMesh(srv.url, MeshIdentity.fromSeedHex(KEY_B));
    const abort = new AbortController();
    let server: ReturnType<typeof runLua> | undefined;
    const FLOOD = 3000;
    try {
      server = runLua(
        `mesh.on(function(ev) if ev.payload.stop then bus.stop() end return "ok" end) bus.serve()`,
        { mesh: { relay: srv.url, secretKey: KEY_A }, signal: abort.signal },
      );
      for (let i = 0;; i++) { // until the run listens
        try {
          await b.request(a, { hello: true }, { timeoutMs: 30_000 });
          break;
        } catch (e) {
          if ((e as { kind?: string }).kind !== "unreachable" || i > 2000) throw e;
          await new Promise((r) => setTimeout(r, 25));
        }
      }
      const forged = (i: number) =>
        new TextEncoder().encode(
          `{"v":1,"id":"${crypto.randomUUID()}","from":"evil\\u001b[31m${i}","to":"${a}","type":"request",` +
            `"ts":${Date.now()},"payload":{}}`,
        );
      const h = headers();
      h.set(SIGNATURE_HEADER, "A".repeat(86));
      for (let i = 0; i < FLOOD; i++) {
        raw.publish(subjectOf(a), forged(i), { headers: h, reply: "_INBOX.nobody" });
      }
      await raw.flush();
      // the server handles messages in order: once it answers this, it has dropped the whole flood
      assert.equal((await b.request(a, { stop: true }, { timeoutMs: 60_000 })).value, "ok");
      const [ended] = await settleWithin([server], "the server run");
      assert.ok(ended.status === "fulfilled");
      const stderr = ended.value.stderr;
      assert.ok(!stderr.includes("\x1b"), "no raw ESC byte in the log");
      assert.match(stderr, /claiming to be from evil\\x1b\[31m0:/);
      const lines = stderr.split("\n").filter((l) => l.includes("mesh: dropped"));
      assert.ok(lines.length <= 20, `a few lines, not one each: ${lines.length}`);
      const shown = lines.filter((l) => /^\[warn\] test\.lua: mesh: dropped a message/.test(l)).length;
      const counted = lines.map((l) => Number(/dropped messages: (\d+) more not shown/.exec(l)?.[1] ?? 0))
        .reduce((x, y) => x + y, 0);
      assert.equal(shown + counted, FLOOD, "every drop is written or counted:\n" + lines.join("\n"));
    } finally {
      abort.abort("the test ended");
      await settleWithin(server ? [server] : [], "the server run");
      await settleWithin([b.close(), raw.close()], "the connections");
    }
  },
);
