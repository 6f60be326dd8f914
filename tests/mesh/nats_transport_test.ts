// The NATS mesh transport against a real nats-server: request/reply and send with signatures
// checked both ways, forged and replayed messages dropped, size and reachability errors, close,
// and a server restart the transport survives.
import assert from "node:assert/strict";
import { connect, headers } from "@nats-io/transport-node";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { connectMesh } from "../../src/clients/mesh/connect.ts";
import { MeshError, type MeshStateEvent, type MeshTransport } from "../../src/clients/mesh/transport.ts";
import { SIGNATURE_HEADER, subjectOf } from "../../src/clients/mesh/nats_transport.ts";
import { encodeBase64Url } from "../../src/clients/mesh/base64url.ts";
import { settleWithin, waitFor } from "../helpers.ts";
import { natsMissing, startNats } from "./nats_server.ts";

/** The MeshError `fn` rejects with (fails when it resolves or rejects with something else). */
async function meshError(fn: () => Promise<unknown>): Promise<MeshError> {
  try {
    await fn();
  } catch (e) {
    if (e instanceof MeshError) return e;
    throw e;
  }
  throw new Error("expected a MeshError, but the call succeeded");
}

const missing = natsMissing();
const ignore = missing !== undefined;
if (ignore) console.warn(`skipping the NATS transport tests: ${missing}`);

/**
 * Two agents on `url`, closed when the holder's scope ends (`await using`), a failed test
 * included; closing is bounded, so a close that never ends fails the test instead of hanging it.
 */
async function pair(
  url: string,
  states?: MeshStateEvent[],
): Promise<{ agents: [MeshTransport, MeshTransport] } & AsyncDisposable> {
  const a = await connectMesh(url, MeshIdentity.random(), { onState: (e) => states?.push(e) });
  const b = await connectMesh(url, MeshIdentity.random(), { onState: (e) => states?.push(e) }).catch(
    async (e) => {
      await a.close();
      throw e;
    },
  );
  return {
    agents: [a, b],
    [Symbol.asyncDispose]: async () => {
      await settleWithin([a.close(), b.close()], "closing the two agents");
    },
  };
}

Deno.test({ name: "mesh nats: request, reply and send between two verified agents", ignore }, async () => {
  await using srv = await startNats();
  await using pairOf = await pair(srv.url);
  const [a, b] = pairOf.agents;
  const seen: { from: string; payload: unknown }[] = [];
  b.setHandler((m) => {
    seen.push({ from: m.from, payload: m.payload });
    if ((m.payload as { boom?: boolean }).boom) return Promise.reject(new Error("handler failed"));
    return Promise.resolve({ echo: m.payload, by: b.agentId });
  });
  const r = await a.request(b.agentId, { q: "hi", n: 3 });
  assert.deepEqual(r.value, { echo: { q: "hi", n: 3 }, by: b.agentId });
  assert.deepEqual(r.sentBytes, '{"n":3,"q":"hi"}'.length);
  assert(r.receivedBytes > r.sentBytes);
  assert.deepEqual(seen[0].from, a.agentId);
  // a handler's error is a normal reply
  assert.deepEqual((await a.request(b.agentId, { boom: true })).value, { error: "handler failed" });
  const s = await a.send(b.agentId, { note: 1 });
  assert.deepEqual(s.sentBytes, '{"note":1}'.length);
  await waitFor(() => seen.length === 3, { what: "the send to reach b's handler" });
  assert.deepEqual(seen[2], { from: a.agentId, payload: { note: 1 } });
});

Deno.test(
  { name: "mesh nats: unreachable target, too large, timeout and close are typed", ignore },
  async () => {
    await using srv = await startNats("max_payload: 4096\n");
    await using pairOf = await pair(srv.url);
    const [a, b] = pairOf.agents;
    const nobody = MeshIdentity.random().agentId;
    const e1 = await meshError(() => a.request(nobody, {}));
    assert.deepEqual(e1.kind, "unreachable");
    assert(e1.message.includes(subjectOf(nobody)), e1.message);
    const e2 = await meshError(() => a.send(b.agentId, { big: "x".repeat(5000) }));
    assert.deepEqual(e2.kind, "too_large");
    let release!: () => void;
    b.setHandler(() => new Promise((r) => (release = () => r("late"))));
    const e3 = await meshError(() => a.request(b.agentId, {}, { timeoutMs: 300 }));
    assert.deepEqual(e3.kind, "timeout");
    release = undefined!;
    const pending = a.request(b.agentId, {}, { timeoutMs: 20_000 });
    await waitFor(() => release !== undefined, { what: "the request to arrive" });
    const closed = meshError(() => pending); // awaited before the close rejects it
    await a.close();
    const e4 = await closed;
    assert.deepEqual(e4.kind, "closed");
    release();
    const e5 = await meshError(() => a.request(b.agentId, {}));
    assert.deepEqual(e5.kind, "closed");
  },
);

Deno.test(
  { name: "attack: mesh nats forged from, replay and misaddressed messages are dropped", ignore },
  async () => {
    await using srv = await startNats();
    const states: MeshStateEvent[] = [];
    await using pairOf = await pair(srv.url, states);
    const [a, b] = pairOf.agents;
    const raw = await connect({ servers: srv.url.replace("nats://", "") });
    try {
      const handled: unknown[] = [];
      b.setHandler((m) => {
        handled.push(m.payload);
        return Promise.resolve("ok");
      });
      const mallory = MeshIdentity.random();
      const body = (from: string, to: string, id = crypto.randomUUID(), ts = Date.now()) =>
        new TextEncoder().encode(
          `{"v":1,"id":"${id}","from":"${from}","to":"${to}","type":"request","ts":${ts},"payload":{"evil":1}}`,
        );
      const signed = (bytes: Uint8Array, who: MeshIdentity) => {
        const h = headers();
        h.set(SIGNATURE_HEADER, who.signText(bytes));
        return h;
      };
      const drops = () => states.filter((s) => s.state === "dropped").length;
      // 1. claims to be a, signed by mallory
      const forged = body(a.agentId, b.agentId);
      await assert.rejects(() =>
        raw.request(subjectOf(b.agentId), forged, { headers: signed(forged, mallory), timeout: 500 })
      );
      // 2. unsigned
      await assert.rejects(() => raw.request(subjectOf(b.agentId), forged, { timeout: 500 }));
      // 3. a bad signature header
      const h = headers();
      h.set(SIGNATURE_HEADER, encodeBase64Url(new Uint8Array(64)));
      await assert.rejects(() => raw.request(subjectOf(b.agentId), forged, { headers: h, timeout: 500 }));
      // 4. mallory's own valid message, but stale
      const stale = body(mallory.agentId, b.agentId, undefined, Date.now() - 10 * 60_000);
      await assert.rejects(() =>
        raw.request(subjectOf(b.agentId), stale, { headers: signed(stale, mallory), timeout: 500 })
      );
      // 5. a message mallory signed for a, replayed to b
      const forA = body(mallory.agentId, a.agentId);
      await assert.rejects(() =>
        raw.request(subjectOf(b.agentId), forA, { headers: signed(forA, mallory), timeout: 500 })
      );
      assert.deepEqual(handled, []);
      await waitFor(() => drops() >= 5, { what: "five drops reported" });
      // 6. a valid one is answered once; its replay is dropped
      const good = body(mallory.agentId, b.agentId);
      const r = await raw.request(subjectOf(b.agentId), good, {
        headers: signed(good, mallory),
        timeout: 30_000,
      });
      assert(r.string().includes('"type":"reply"'), r.string());
      await assert.rejects(() =>
        raw.request(subjectOf(b.agentId), good, { headers: signed(good, mallory), timeout: 500 })
      );
      assert.deepEqual(handled, [{ evil: 1 }]);
      await waitFor(() => drops() >= 6, { what: "the replay reported" });
      // 7. a forged reply to a's request is refused by a (b's real answer waits until the server
      // has the forged one, so the forged reply is the one a gets first, whatever the load)
      let forgedReplySent!: () => void;
      const forgedReply = new Promise<void>((r) => forgedReplySent = r);
      raw.subscribe(subjectOf(b.agentId), {
        callback: (_e, m) => {
          const reply = new TextEncoder().encode(
            `{"v":1,"id":"${crypto.randomUUID()}","from":"${b.agentId}","to":"${a.agentId}","type":"reply",` +
              `"re":"${JSON.parse(m.string()).id}","ts":${Date.now()},"payload":"forged"}`,
          );
          m.respond(reply, { headers: signed(reply, mallory) });
          raw.flush().then(forgedReplySent);
        },
      });
      await raw.flush();
      b.setHandler(async () => {
        await forgedReply;
        return "real";
      });
      const e = await meshError(() => a.request(b.agentId, {}));
      assert.deepEqual(e.kind, "protocol");
      assert(e.message.includes("failed verification"), e.message);
    } finally {
      await settleWithin([raw.close()], "closing the raw connection");
    }
  },
);

Deno.test({ name: "mesh nats: both agents survive a server restart", ignore }, async () => {
  await using srv = await startNats();
  const states: MeshStateEvent[] = [];
  await using pairOf = await pair(srv.url, states);
  const [a, b] = pairOf.agents;
  b.setHandler((m) => Promise.resolve(m.payload));
  assert.deepEqual((await a.request(b.agentId, 1)).value, 1);
  await srv.restart();
  // asked at once, while both may still be away: the call waits for the connection and for
  // the peer's subscription, within its timeout
  assert.deepEqual((await a.request(b.agentId, 2, { timeoutMs: 20_000 })).value, 2);
  assert(states.some((s) => s.state === "disconnected"));
  assert(states.some((s) => s.state === "connected" && s.resumed));
});
