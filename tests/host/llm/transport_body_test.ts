/**
 * How the transport hands a request body to the global fetch, against a real server on
 * 127.0.0.1: a small body goes as bytes (with its `Content-Length`), a large one (at least
 * `STREAM_BODY_BYTES`) as a stream of one chunk from a buffer leased for the request; either way
 * the server receives exactly the body `buildPayload` makes. The leased buffers are the risk:
 * requests in flight at once each send their own body, and a retry sends the same body again.
 */
import assert from "node:assert/strict";
import {
  buildPayload,
  type LlmHttpRequest,
  sendLlmRequest,
  STREAM_BODY_BYTES,
} from "../../../src/clients/llm/transport.ts";

interface Seen {
  body: string;
  length: string | null;
  chunked: boolean;
}

/** A server that records each request's body and answers by `answer` (default a chat completion). */
function server(answer?: (n: number, seen: Seen) => Promise<Response> | Response) {
  const seen: Seen[] = [];
  const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const entry: Seen = {
      body: await req.text(),
      length: req.headers.get("content-length"),
      chunked: /chunked/i.test(req.headers.get("transfer-encoding") ?? ""),
    };
    seen.push(entry);
    if (answer) return await answer(seen.length, entry);
    return Response.json({ id: "x", choices: [{ message: { role: "assistant", content: "ok" } }] });
  });
  return { url: `http://127.0.0.1:${s.addr.port}/v1/chat/completions`, seen, close: () => s.shutdown() };
}

const utf8 = new TextEncoder();

/** A request whose messages make a body of about `bytes` bytes, each message tagged `tag`. */
function request(url: string, tag: string, bytes: number, maxRetries = 0): LlmHttpRequest {
  const one = utf8.encode(JSON.stringify({ role: "user", content: `${tag} ${"é".repeat(200)}` }));
  const rawMessages = Array.from({ length: Math.ceil(bytes / one.length) }, () => one);
  return {
    provider: "openai",
    url,
    headers: { authorization: "Bearer k" },
    body: { model: "m" },
    rawMessages,
    timeoutSecs: 30,
    maxRetries,
    stream: false,
    correlation: () => ({ trace_id: "t", run_id: "r", agent_id: "a", agent_name: "n" }),
    obs: () => {},
  };
}

/** The body `buildPayload` makes for `req`, as text. */
const expected = (req: LlmHttpRequest) => new TextDecoder().decode(buildPayload(req));

Deno.test("a small body goes as bytes with its length, a large one streamed: both arrive exact", async () => {
  const srv = server();
  try {
    const small = request(srv.url, "small", 2_000);
    const large = request(srv.url, "large", 3 * STREAM_BODY_BYTES);
    assert.ok(buildPayload(small).length < STREAM_BODY_BYTES);
    assert.ok(buildPayload(large).length >= STREAM_BODY_BYTES);
    for (const req of [small, large, small, large]) {
      const r = await sendLlmRequest(req);
      assert.equal(r.status, 200);
    }
    assert.equal(srv.seen.length, 4);
    for (const [i, req] of [small, large, small, large].entries()) {
      assert.equal(srv.seen[i].body, expected(req), `request ${i}`);
    }
    assert.equal(srv.seen[0].length, String(utf8.encode(expected(small)).length));
    assert.equal(srv.seen[0].chunked, false);
    assert.equal(srv.seen[1].length, null);
    assert.equal(srv.seen[1].chunked, true);
  } finally {
    await srv.close();
  }
});

Deno.test("attack: large bodies in flight at once each arrive as their own, never another's bytes", async () => {
  const N = 4;
  let release!: () => void;
  const all = new Promise<void>((r) => release = r);
  // No request is answered before all of them arrived: every leased buffer is in use at once.
  const srv = server(async (n) => {
    if (n === N) release();
    await all;
    return Response.json({ id: "x", choices: [{ message: { role: "assistant", content: "ok" } }] });
  });
  try {
    // Sizes that differ, so that a buffer given to two requests would show in the lengths too.
    const reqs = Array.from(
      { length: N },
      (_, i) => request(srv.url, `req${i}`, (2 + i) * STREAM_BODY_BYTES),
    );
    const rs = await Promise.all(reqs.map((r) => sendLlmRequest(r)));
    assert.deepEqual(rs.map((r) => r.status), Array(N).fill(200));
    const got = srv.seen.map((s) => s.body).sort();
    assert.deepEqual(got, reqs.map(expected).sort());
    // and again, now that the buffers come from the idle ones
    srv.seen.length = 0;
    const again = Array.from(
      { length: N },
      (_, i) => request(srv.url, `again${i}`, (2 + i) * STREAM_BODY_BYTES),
    );
    await Promise.all(again.map((r) => sendLlmRequest(r)));
    assert.deepEqual(srv.seen.map((s) => s.body).sort(), again.map(expected).sort());
  } finally {
    await srv.close();
  }
});

Deno.test("a large body retried after a 500 is sent again whole", async () => {
  const srv = server((n) =>
    n === 1
      ? new Response(JSON.stringify({ error: { message: "busy" } }), {
        status: 500,
        headers: { "retry-after-ms": "0" },
      })
      : Response.json({ id: "x", choices: [{ message: { role: "assistant", content: "ok" } }] })
  );
  try {
    const req = request(srv.url, "retry", 2 * STREAM_BODY_BYTES, 1);
    const r = await sendLlmRequest(req);
    assert.equal(r.attempts, 2);
    assert.equal(srv.seen.length, 2);
    assert.equal(srv.seen[0].body, expected(req));
    assert.equal(srv.seen[1].body, expected(req));
  } finally {
    await srv.close();
  }
});
