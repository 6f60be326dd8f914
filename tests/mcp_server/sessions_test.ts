/**
 * `SessionTable` (src/mcp_server/sessions.ts) on a fake clock: eviction order when full (holding
 * nothing before holding only a stream, then the one idle longest; never one with a call in
 * flight), idle expiry (not while a request or a stream is open), and `track` reporting the end
 * of a response body however it ends.
 */
import assert from "node:assert/strict";
import { SessionTable, track } from "../../src/mcp_server/sessions.ts";

function table(max: number, idleMs = 1000) {
  let now = 0;
  const closed: string[] = [];
  const t = new SessionTable<string>({
    max,
    idleMs,
    now: () => now,
    close: (s, id, why) => closed.push(`${id}=${s}: ${why}`),
  });
  return { t, closed, tick: (ms: number) => (now += ms) };
}

Deno.test("attack: a full session table evicts the session idle longest, never one with a call in flight", () => {
  const { t, closed, tick } = table(3);
  t.add("a", "A");
  tick(10);
  t.add("b", "B");
  tick(10);
  t.add("c", "C");
  const callA = t.begin("a", "call"); // a is the oldest, but busy
  tick(10);
  assert.equal(t.makeRoom(), true);
  assert.equal(t.get("b"), undefined);
  assert.match(closed[0], /^b=B: evicted for a new client/);
  t.add("d", "D");
  // c holds a stream, d holds nothing: d goes first although c is idle longer.
  const streamC = t.begin("c", "stream");
  tick(10);
  assert.equal(t.makeRoom(), true);
  assert.equal(t.get("d"), undefined);
  t.add("e", "E");
  const callE = t.begin("e", "call");
  assert.equal(t.makeRoom(), true, "c holds only a stream: it is evicted");
  assert.equal(t.get("c"), undefined);
  t.add("f", "F");
  t.begin("f", "call");
  assert.equal(t.makeRoom(), false, "every session has a call in flight");
  assert.equal(t.size, 3);
  callA();
  callE();
  streamC();
  assert.equal(t.makeRoom(), true);
  assert.equal(t.size, 2);
});

Deno.test("attack: idle sessions expire; a request or a stream in flight keeps one alive, its end restarts the clock", () => {
  const { t, closed, tick } = table(10, 1000);
  t.add("idle", "I");
  t.add("call", "C");
  t.add("stream", "S");
  const endCall = t.begin("call", "call");
  const endStream = t.begin("stream", "stream");
  tick(999);
  assert.equal(t.sweep(), 0);
  tick(1);
  assert.equal(t.sweep(), 1);
  assert.match(closed[0], /^idle=I: expired after 1 s idle/);
  tick(5000);
  assert.equal(t.sweep(), 0, "busy sessions do not expire");
  endCall();
  endCall(); // ending twice counts once
  tick(999);
  assert.equal(t.sweep(), 0);
  tick(1);
  assert.equal(t.sweep(), 1);
  assert.equal(t.get("call"), undefined);
  assert.equal(t.get("stream"), "S");
  endStream();
  tick(1000);
  assert.equal(t.sweep(), 1);
  assert.equal(t.size, 0);
  // delete is the caller's removal: no close.
  t.add("x", "X");
  t.delete("x");
  assert.equal(closed.length, 3);
  assert.doesNotThrow(() => t.begin("gone", "call")());
});

Deno.test("sessions: track reports the end of a body once, whether read to the end, cancelled or absent", async () => {
  let n = 0;
  const done = () => n++;
  const read = track(new Response("hello"), done);
  assert.equal(await read.text(), "hello");
  assert.equal(n, 1);
  const cancelled = track(
    new Response(new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array(1)) })),
    done,
  );
  const r = cancelled.body!.getReader();
  await r.read();
  await r.cancel();
  assert.equal(n, 2);
  track(new Response(null, { status: 202 }), done);
  assert.equal(n, 3);
});
