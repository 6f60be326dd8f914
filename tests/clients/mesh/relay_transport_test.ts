// The relay transport end to end against the TypeScript test relay (examples/mesh_relay.ts) on
// 127.0.0.1: login, encryption, correlation, failures, buffering, resume and reconnection.
import assert from "node:assert/strict";
import { waitFor } from "../../helpers.ts";
import { type Relay, type RelayOptions, startRelay } from "../../../examples/mesh_relay.ts";
import { connectRelay, type RelayTuning } from "../../../src/clients/mesh/relay_transport.ts";
import { MeshIdentity } from "../../../src/clients/mesh/identity.ts";
import {
  MeshError,
  type MeshHandler,
  type MeshStateEvent,
  type MeshTransport,
} from "../../../src/clients/mesh/transport.ts";
import { LuaFloat } from "../../../src/json/values.ts";

interface Peer {
  t: MeshTransport;
  events: MeshStateEvent[];
  drops: () => string[];
}

const open: MeshTransport[] = [];

async function peer(
  relay: Relay | string,
  tuning: RelayTuning = {},
  identity = MeshIdentity.random(),
): Promise<Peer> {
  const events: MeshStateEvent[] = [];
  const url = new URL(typeof relay === "string" ? relay : relay.url);
  const t = await connectRelay(url, identity, { onState: (e) => events.push(e) }, {
    backoffMs: [50, 300],
    ...tuning,
  });
  open.push(t);
  return {
    t,
    events,
    drops: () => events.flatMap((e) => (e.state === "dropped" ? [e.reason] : [])),
  };
}

async function withRelay(fn: (relay: Relay) => Promise<void>, options: RelayOptions = {}): Promise<void> {
  const relay = await startRelay(options);
  try {
    await fn(relay);
  } finally {
    for (const t of open.splice(0)) await t.close();
    await relay.close();
  }
}

const echo: MeshHandler = (inbound) => Promise.resolve({ from: inbound.from, got: inbound.payload });

function isMesh(kind: MeshError["kind"], re?: RegExp) {
  return (e: unknown) => e instanceof MeshError && e.kind === kind && (!re || re.test(e.message));
}

Deno.test("mesh relay: an encrypted request and reply, the session reused, values kept exact", async () => {
  const frames: string[] = [];
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    b.t.setHandler(echo);
    const before = relay.metrics().routed;
    const payload = { text: "secret-marker", n: new LuaFloat(2), big: 2n ** 62n, list: [1, 2.5, null] };
    const r1 = await a.t.request(b.t.agentId, payload);
    assert.equal(relay.metrics().routed - before, 5, "three handshake messages, the request and the reply");
    assert.deepEqual(r1.value, { from: a.t.agentId, got: payload });
    assert.ok((r1.value as { got: { n: unknown } }).got.n instanceof LuaFloat, "2.0 stays a float");
    const sentText = '{"big":4611686018427387904,"list":[1,2.5,null],"n":2.0,"text":"secret-marker"}';
    assert.equal(r1.sentBytes, sentText.length);
    assert.equal(r1.receivedBytes, `{"from":"${a.t.agentId}","got":${sentText}}`.length);
    const r2 = await a.t.request(b.t.agentId, { again: true });
    assert.equal(relay.metrics().routed - before, 7, "the second request reuses the Noise session");
    assert.deepEqual(r2.value, { from: a.t.agentId, got: { again: true } });
    // The other direction reuses the same session too.
    a.t.setHandler(echo);
    const r3 = await b.t.request(a.t.agentId, "back");
    assert.deepEqual(r3.value, { from: b.t.agentId, got: "back" });
    assert.equal(relay.metrics().routed - before, 9);
    const sent = await a.t.send(b.t.agentId, { fire: "and forget" });
    assert.equal(sent.sentBytes, '{"fire":"and forget"}'.length);
    assert.ok(frames.length > 0);
    assert.ok(!frames.some((f) => f.includes("secret-marker")), "the relay only sees ciphertext");
    assert.ok(
      frames.filter((f) => f.includes('"msg_type":"request"')).every((f) => f.includes('"encrypted":true')),
    );
    assert.deepEqual(a.drops(), []);
    assert.deepEqual(b.drops(), []);
  }, { tap: (f) => frames.push(f) });
});

Deno.test("mesh relay: a handler's error comes back as { error = ... }; no handler is an error reply too", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    const r0 = await a.t.request(b.t.agentId, 1);
    assert.deepEqual(r0.value, { error: "no mesh handler is set on this agent" });
    b.t.setHandler(() => Promise.reject(new Error("boom in handler")));
    const r1 = await a.t.request(b.t.agentId, 1);
    assert.deepEqual(r1.value, { error: "boom in handler" });
    b.t.setHandler(() => Promise.resolve(NaN));
    const r2 = await a.t.request(b.t.agentId, 1);
    assert.match((r2.value as { error: string }).error, /the reply has no JSON form: cannot send NaN/);
    b.t.setHandler(() => Promise.resolve("y".repeat(70_000)));
    const r3 = await a.t.request(b.t.agentId, 1);
    assert.match(
      (r3.value as { error: string }).error,
      /the reply of 70002 bytes exceeds the 65519-byte limit/,
    );
  });
});

Deno.test("mesh relay: an unknown target times out, naming the handshake; payload limits refuse early", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const nobody = MeshIdentity.random().agentId;
    await assert.rejects(
      a.t.request(nobody, { hi: 1 }, { timeoutMs: 300 }),
      isMesh(
        "timeout",
        /no reply from .* within 300 ms \(waiting for its answer to the encryption handshake\)/,
      ),
    );
    await assert.rejects(
      a.t.request(nobody, "x".repeat(70_000)),
      isMesh("too_large", /exceeds the 65519-byte limit/),
    );
    await assert.rejects(a.t.request(nobody, { f: Infinity }), isMesh("payload", /Infinity/));
    const ac = new AbortController();
    const p = a.t.request(nobody, 1, { signal: ac.signal });
    ac.abort(new Error("run cancelled"));
    await assert.rejects(p, /run cancelled/);
  });
});

/** A raw relay client: logs in with `identity` and sends frames we build by hand. */
async function rawClient(url: string, identity: MeshIdentity): Promise<WebSocket> {
  const ws = new WebSocket(url);
  const frames: string[] = [];
  let wake = () => {};
  ws.onmessage = (e) => {
    frames.push(e.data);
    wake();
  };
  await new Promise((r) => (ws.onopen = r));
  const next = async () => {
    while (!frames.length) await new Promise<void>((r) => (wake = r));
    return JSON.parse(frames.shift()!);
  };
  ws.send(JSON.stringify({ agent_id: identity.agentId }));
  const { nonce } = await next();
  ws.send(
    JSON.stringify({
      agent_id: identity.agentId,
      signature: identity.signText(new TextEncoder().encode(nonce)),
    }),
  );
  assert.equal((await next()).success, true);
  return ws;
}

Deno.test("attack: mesh relay drops a spoofed from and a payload signed in a form serde re-prints differently", async () => {
  const { buildEnvelope, encodeEnvelope } = await import("../../../src/clients/mesh/envelope.ts");
  await withRelay(async (relay) => {
    const b = await peer(relay);
    let calls = 0;
    b.t.setHandler((i) => {
      calls++;
      return Promise.resolve(i.payload);
    });
    const mallory = MeshIdentity.random();
    const victim = MeshIdentity.random();
    const ws = await rawClient(relay.url, mallory);
    // 1. Signed by mallory, claiming to be the victim.
    const spoof = buildEnvelope(mallory, { to: b.t.agentId, msgType: "request", payloadText: "{}" });
    ws.send(encodeEnvelope({ ...spoof, from: victim.agentId }));
    // 2. Signed over unsorted keys: the relay re-sorts, and the signature no longer matches.
    ws.send(
      encodeEnvelope(
        buildEnvelope(mallory, { to: b.t.agentId, msgType: "request", payloadText: '{"b":1,"a":2}' }),
      ),
    );
    // 3. Signed over `1` where serde prints `1.0`... and over `1e2`, which serde prints `100.0`.
    ws.send(
      encodeEnvelope(buildEnvelope(mallory, { to: b.t.agentId, msgType: "request", payloadText: "1e2" })),
    );
    await waitFor(() => relay.metrics().rejected >= 3, { what: "the relay rejecting three envelopes" });
    assert.equal(relay.metrics().routed, 1, "only b's login probe was routed");
    // A properly signed plaintext request from mallory still gets through and is answered.
    ws.send(
      encodeEnvelope(
        buildEnvelope(mallory, { to: b.t.agentId, msgType: "request", payloadText: '{"a":2,"b":1}' }),
      ),
    );
    await waitFor(() => calls === 1, { what: "the honest request reaching the handler" });
    assert.equal(calls, 1);
    ws.close();
  });
});

Deno.test("attack: mesh relay transport drops forged, unknown, oversized and binary frames from a hostile relay", async () => {
  const { buildEnvelope, encodeEnvelope } = await import("../../../src/clients/mesh/envelope.ts");
  const victim = MeshIdentity.random();
  const forger = MeshIdentity.random();
  const other = MeshIdentity.random();
  let evil: WebSocket | undefined;
  const probeSeen = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    evil = socket;
    let step = 0;
    socket.onmessage = (e) => {
      if (step === 0) socket.send(JSON.stringify({ nonce: "n" }));
      else if (step === 1) socket.send(JSON.stringify({ success: true, session_token: crypto.randomUUID() }));
      else if (step === 2) {
        socket.send(e.data); // echo the login probe
        probeSeen.resolve();
      }
      step++;
    };
    return response;
  });
  try {
    const url = `ws://127.0.0.1:${server.addr.port}/ws`;
    const v = await peer(url, { maxFrameChars: 10_000 }, victim);
    let calls = 0;
    v.t.setHandler(() => {
      calls++;
      return Promise.resolve(null);
    });
    await probeSeen.promise;
    const forged = buildEnvelope(forger, { to: victim.agentId, msgType: "request", payloadText: "{}" });
    const frames = [
      encodeEnvelope({ ...forged, from: other.agentId }), // signature of another key
      encodeEnvelope(buildEnvelope(forger, { to: other.agentId, msgType: "request", payloadText: "{}" })), // not for us
      encodeEnvelope(buildEnvelope(forger, {
        to: victim.agentId,
        msgType: "response",
        inReplyTo: crypto.randomUUID(),
        payloadText: "{}",
      })),
      encodeEnvelope(
        buildEnvelope(forger, {
          to: victim.agentId,
          msgType: "request",
          payloadText: '"x"',
          encrypted: true,
        }),
      ),
      "x".repeat(20_000),
      "{not json",
    ];
    for (const f of frames) evil!.send(f);
    evil!.send(new Uint8Array([1, 2, 3]));
    await waitFor(() => v.drops().length >= 7, { what: "seven drops" });
    const d = v.drops();
    assert.match(d[0], /signature does not verify/);
    assert.match(d[1], /addressed to/);
    assert.match(d[2], /response nobody waits for/);
    assert.match(d[3], /encrypted request without a session/);
    assert.match(d[4], /frame of 20000 characters/);
    assert.match(d[5], /not JSON/);
    assert.match(d[6], /binary frame/);
    assert.equal(calls, 0, "no forged frame reached the handler");
  } finally {
    for (const t of open.splice(0)) await t.close();
    await server.shutdown();
  }
});

Deno.test("mesh relay: a request to an offline agent is buffered and answered once it logs in", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const bId = MeshIdentity.random();
    const answer = a.t.request(bId.agentId, { queued: true }, { timeoutMs: 30_000 });
    await waitFor(() => relay.metrics().bufferedAgents === 1, { what: "the handshake buffered for b" });
    const b = await peer(relay, {}, bId);
    b.t.setHandler(echo);
    assert.deepEqual((await answer).value, { from: a.t.agentId, got: { queued: true } });
    assert.equal(relay.metrics().bufferedAgents, 0);
  });
});

Deno.test("mesh relay: a lost connection fails requests in flight, then resumes with the session token", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    const stuck = Promise.withResolvers<unknown>();
    b.t.setHandler(() => stuck.promise);
    const inFlight = a.t.request(b.t.agentId, 1, { timeoutMs: 30_000 });
    await waitFor(() => relay.metrics().routed >= 6, { what: "the request reaching b" });
    assert.ok(relay.disconnect(a.t.agentId));
    await assert.rejects(inFlight, isMesh("connect", /lost the connection/));
    await waitFor(() => a.events.some((e) => e.state === "connected" && e.resumed), {
      what: "a resumed login",
    });
    assert.equal(relay.metrics().resumes, 1);
    stuck.resolve("late");
    b.t.setHandler(echo);
    assert.deepEqual((await a.t.request(b.t.agentId, 2)).value, { from: a.t.agentId, got: 2 });
  });
});

Deno.test("mesh relay: both agents reconnect (full login) after the relay restarts on the same port", async () => {
  let relay = await startRelay();
  const port = relay.port;
  try {
    const a = await peer(relay);
    const b = await peer(relay);
    b.t.setHandler(echo);
    assert.deepEqual((await a.t.request(b.t.agentId, 1)).value, { from: a.t.agentId, got: 1 });
    await relay.close();
    await waitFor(() => a.events.some((e) => e.state === "disconnected"), { what: "a noticing the loss" });
    // A request made while the relay is away waits for the connection (within its own timeout).
    const waiting = a.t.request(b.t.agentId, 2, { timeoutMs: 30_000 });
    relay = await startRelay({ port });
    await waitFor(() => relay.metrics().connectedAgents === 2, { what: "both agents back" });
    assert.equal(relay.metrics().resumes, 0, "the new relay knows no tokens: full logins");
    assert.deepEqual((await waiting).value, { from: a.t.agentId, got: 2 });
    assert.deepEqual((await a.t.request(b.t.agentId, 3)).value, { from: a.t.agentId, got: 3 });
  } finally {
    for (const t of open.splice(0)) await t.close();
    await relay.close();
  }
});

Deno.test("mesh relay: a handler may itself make a request (no deadlock)", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    const c = await peer(relay);
    c.t.setHandler(() => Promise.resolve("from c"));
    b.t.setHandler(async (i) => {
      const inner = await b.t.request(c.t.agentId, "hop");
      const back = await b.t.request(i.from, "call back"); // the caller answers while it waits
      return { inner: inner.value, back: back.value };
    });
    a.t.setHandler(() => Promise.resolve("a answers"));
    const r = await a.t.request(b.t.agentId, "start");
    assert.deepEqual(r.value, { inner: "from c", back: "a answers" });
  });
});

Deno.test("mesh relay: a timed-out request is cancelled, its late reply dropped and never answered", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    let calls = 0;
    let cancelled = false;
    b.t.setHandler(async (i) => {
      calls++;
      if (i.payload === "slow") {
        // Waits for the caller's cancel, then answers anyway: a late reply.
        await new Promise((r) => i.signal.addEventListener("abort", r, { once: true }));
        cancelled = true;
      }
      return i.payload;
    });
    a.t.setHandler(() => {
      throw new Error("a must never treat a reply as a request");
    });
    assert.equal((await a.t.request(b.t.agentId, "warm-up")).value, "warm-up"); // session established
    await assert.rejects(
      a.t.request(b.t.agentId, "slow", { timeoutMs: 500 }),
      isMesh("timeout", /its reply/),
    );
    await waitFor(() => a.drops().some((d) => /response nobody waits for/.test(d)), {
      what: "the late reply dropped",
    });
    assert.ok(cancelled, "the cancel reached the handler's signal");
    // a forgot its session on the timeout: the next request shakes hands afresh and works.
    assert.deepEqual((await a.t.request(b.t.agentId, "fast")).value, "fast");
    assert.equal(calls, 3);
  });
});

Deno.test("mesh relay: handlers run concurrently, and crossing handshakes settle on one session", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    // Each handler waits until two are running: serial handlers would never finish.
    let running = 0;
    const both = Promise.withResolvers<void>();
    const barrier: MeshHandler = async (i) => {
      if (++running === 2) both.resolve();
      await both.promise;
      return i.payload;
    };
    a.t.setHandler(barrier);
    b.t.setHandler(barrier);
    // Both start a handshake with the other at the same moment.
    const [x, y] = await Promise.all([a.t.request(b.t.agentId, "to b"), b.t.request(a.t.agentId, "to a")]);
    assert.equal(x.value, "to b");
    assert.equal(y.value, "to a");
    const drops = a.drops().concat(b.drops());
    assert.equal(drops.length, 1, drops.join("; "));
    assert.match(drops[0], /crossing handshake \(ours goes ahead\)/, "the smaller AgentId's handshake won");
  });
});

Deno.test("mesh relay: a peer that restarted (same key, no session) is reached again after one timeout", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const bKey = MeshIdentity.random();
    const b1 = await peer(relay, {}, bKey);
    b1.t.setHandler(() => Promise.resolve("first life"));
    assert.equal((await a.t.request(bKey.agentId, 1)).value, "first life");
    await b1.t.close();
    const b2 = await peer(relay, {}, bKey);
    b2.t.setHandler(() => Promise.resolve("second life"));
    // a still holds the old session: b2 cannot read the request and drops it.
    await assert.rejects(a.t.request(bKey.agentId, 2, { timeoutMs: 500 }), isMesh("timeout"));
    await waitFor(() => b2.drops().some((d) => /without a session/.test(d)), {
      what: "b2 dropping the stale request",
    });
    assert.equal((await a.t.request(bKey.agentId, 3)).value, "second life");
  });
});

Deno.test("mesh relay: the rate limit drops part of a burst silently; the rest is answered", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    b.t.setHandler(echo);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => a.t.request(b.t.agentId, i, { timeoutMs: 4_000 })),
    );
    const ok = results.filter((r) => r.status === "fulfilled").length;
    const timedOut = results.filter((r) => r.status === "rejected" && isMesh("timeout")(r.reason)).length;
    assert.ok(ok >= 1, `some requests answered (${ok})`);
    assert.ok(timedOut >= 1, `some requests dropped by the relay (${timedOut})`);
    assert.equal(ok + timedOut, 20);
    assert.ok(relay.metrics().rateLimited >= 1);
  }, { rateLimit: 1, rateBurst: 6 });
});

Deno.test("mesh relay: the gate refusing an agent is an auth error; bad logins get the relay's strings", async () => {
  await withRelay(async (relay) => {
    await assert.rejects(
      connectRelay(new URL(relay.url), MeshIdentity.random()),
      isMesh("auth", /failed: the relay closed the connection right after login: its gate does not admit/),
    );
    const id = MeshIdentity.random();
    const attempt = async (response: (nonce: string) => unknown) => {
      const ws = new WebSocket(relay.url);
      const got: string[] = [];
      const closed = new Promise((r) => (ws.onclose = r));
      ws.onmessage = (e) => {
        got.push(e.data);
        if (got.length === 1) ws.send(JSON.stringify(response(JSON.parse(e.data).nonce)));
      };
      await new Promise((r) => (ws.onopen = r));
      ws.send(JSON.stringify({ agent_id: id.agentId }));
      await closed;
      return JSON.parse(got[1]);
    };
    const sig = (n: string) => id.signText(new TextEncoder().encode(n));
    assert.deepEqual(await attempt(() => ({})), { success: false, error: "no response" });
    assert.deepEqual(await attempt((n) => ({ agent_id: "x", signature: sig(n) })), {
      success: false,
      error: "agent_id mismatch",
    });
    assert.match(
      (await attempt(() => ({ agent_id: id.agentId, signature: "a=" }))).error,
      /^bad sig base64: /,
    );
    assert.equal(
      (await attempt(() => ({ agent_id: id.agentId, signature: "AAAA" }))).error,
      "signature must be 64 bytes",
    );
    assert.match(
      (await attempt(() => ({ agent_id: id.agentId, signature: sig("other nonce") }))).error,
      /^nonce signature invalid: /,
    );
    assert.ok(relay.metrics().authFailures >= 5);
    const resume = new WebSocket(relay.url);
    const reply = new Promise<string>((r) => (resume.onmessage = (e) => r(e.data)));
    const closed = new Promise((r) => (resume.onclose = r));
    await new Promise((r) => (resume.onopen = r));
    resume.send(JSON.stringify({ agent_id: id.agentId, session_token: crypto.randomUUID() }));
    assert.deepEqual(JSON.parse(await reply), { success: false, error: "invalid or expired session token" });
    await closed;
  }, { gate: (agentId) => agentId.startsWith("never") });
});

Deno.test("mesh relay: connecting to nothing, or to a non-ws URL, fails with kind connect", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close(); // nothing listens there now
  await assert.rejects(
    connectRelay(new URL(`ws://127.0.0.1:${port}/ws`), MeshIdentity.random()),
    isMesh("connect", /^connect to ws:\/\/127\.0\.0\.1:\d+\/ws failed: cannot reach the relay/),
  );
  await assert.rejects(
    connectRelay(new URL("http://127.0.0.1/ws"), MeshIdentity.random()),
    isMesh("connect", /must start with ws:\/\/ or wss:\/\//),
  );
  // A server that accepts the socket but never answers the login: the connect deadline.
  const silent = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const { socket, response } = Deno.upgradeWebSocket(req);
    socket.onmessage = () => {};
    return response;
  });
  try {
    await assert.rejects(
      connectRelay(new URL(`ws://127.0.0.1:${silent.addr.port}/ws`), MeshIdentity.random(), {
        connectTimeoutMs: 300,
      }),
      isMesh("connect", /^connect to ws:\/\/127\.0\.0\.1:\d+\/ws failed: no login within 300 ms$/),
    );
  } finally {
    await silent.shutdown();
  }
});

Deno.test("mesh relay: close rejects pending requests with kind closed; /health and /metrics answer", async () => {
  await withRelay(async (relay) => {
    const a = await peer(relay);
    const b = await peer(relay);
    b.t.setHandler(() => new Promise(() => {}));
    const p = assert.rejects(a.t.request(b.t.agentId, 1), isMesh("closed"));
    await waitFor(() => relay.metrics().routed >= 6, { what: "the request reaching b" });
    await a.t.close();
    await p;
    await assert.rejects(a.t.request(b.t.agentId, 1), isMesh("closed"));
    const base = relay.url.replace("ws://", "http://").replace(/\/ws$/, "");
    assert.equal(await (await fetch(`${base}/health`)).text(), "ok");
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (
      const name of [
        "mesh_connected_agents",
        "mesh_buffered_agents",
        "mesh_messages_routed_total",
        "mesh_messages_buffered_total",
        "mesh_messages_dropped_total",
        "mesh_messages_rate_limited_total",
        "mesh_auth_successes_total",
        "mesh_auth_failures_total",
      ]
    ) assert.match(metrics, new RegExp(`^${name} \\d+$`, "m"));
    assert.match(metrics, /^mesh_auth_successes_total 2$/m);
  });
});
