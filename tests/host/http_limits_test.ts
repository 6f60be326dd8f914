/**
 * `http.request` holds an answer to `max_body_bytes` while it streams: a body that never ends, an
 * event that never ends (one endless line, or data lines without the blank line that would end
 * the event) — each answered `{ ok = false, error }` naming the limit, a chunk past it. "Early" is
 * proven by the bytes the local server produced before the client hung up, never by timing.
 */
import assert from "node:assert/strict";
import { resultOf, runLua, waitFor } from "../helpers.ts";

const MiB = 1024 * 1024;

interface Produced {
  bytes: number;
  cancelled: boolean;
}

/** A server whose paths stream `piece` forever (after `head`), as fast as the client reads. */
async function withServer(fn: (base: string, produced: Produced) => Promise<void>): Promise<void> {
  const ac = new AbortController();
  const enc = new TextEncoder();
  const produced: Produced = { bytes: 0, cancelled: false };
  const forever = (head: string, piece: string, type: string) => {
    const h = enc.encode(head);
    const p = enc.encode(piece);
    let first = true;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull(c) {
          const chunk = first ? h : p;
          first = false;
          produced.bytes += chunk.length;
          c.enqueue(chunk);
        },
        cancel() {
          produced.cancelled = true;
        },
      }, { highWaterMark: 0 }),
      { headers: { "content-type": type } },
    );
  };
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    (req) => {
      switch (new URL(req.url).pathname) {
        case "/body":
          return forever("", "b".repeat(64 * 1024), "application/octet-stream");
        case "/line":
          return forever("data: ", "l".repeat(64 * 1024), "text/event-stream");
        case "/event":
          return forever("event: big\n", `data: ${"d".repeat(1024)}\n`, "text/event-stream");
        case "/small":
          return new Response("x".repeat(2000));
      }
      return new Response("?", { status: 404 });
    },
  );
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`, produced);
  } finally {
    ac.abort();
    await server.finished;
  }
}

Deno.test("attack: http.request of a body that never ends stops a chunk past max_body_bytes", async () => {
  await withServer(async (base, produced) => {
    const out = await runLua(`
      local r = http.request({ url = "${base}/body", max_body_bytes = ${MiB}, timeout = 60 })
      return std.json.encode({ ok = r.ok, error = r.error })`);
    const r = resultOf(out);
    assert.equal(r.ok, false);
    assert.equal(
      r.error,
      `http.request: GET ${base}/body: the body is larger than 1048576 bytes (max_body_bytes)`,
    );
    await waitFor(() => produced.cancelled, { what: "the body to be hung up on" });
    assert.ok(produced.bytes < 16 * MiB, `the server produced ${produced.bytes} bytes`);
  });
});

for (const path of ["line", "event"]) {
  Deno.test(`attack: http.request with on_event against an endless ${path} stops a chunk past max_body_bytes`, async () => {
    await withServer(async (base, produced) => {
      const out = await runLua(`
        local n = 0
        local r = http.request({ url = "${base}/${path}", max_body_bytes = ${MiB}, timeout = 60,
          on_event = function() n = n + 1 end })
        return std.json.encode({ ok = r.ok, error = r.error, n = n })`);
      const r = resultOf(out);
      assert.deepEqual(r, {
        ok: false,
        error: `http.request: GET ${base}/${path}: an event is larger than 1048576 bytes (max_body_bytes)`,
        n: 0,
      });
      await waitFor(() => produced.cancelled, { what: "the stream to be hung up on" });
      assert.ok(produced.bytes < 16 * MiB, `the server produced ${produced.bytes} bytes`);
    });
  });
}

Deno.test("http.request: a body within max_body_bytes is whole; the field is checked", async () => {
  await withServer(async (base) => {
    const out = await runLua(`
      local r = http.request({ url = "${base}/small", max_body_bytes = 2000 })
      local over = http.request({ url = "${base}/small", max_body_bytes = 1999 })
      local ok, err = pcall(http.request, { url = "${base}/small", max_body_bytes = 1.5 })
      return std.json.encode({ n = #r.body, over = over.error, err = err })`);
    assert.deepEqual(resultOf(out), {
      n: 2000,
      over: `http.request: GET ${base}/small: the body is larger than 1999 bytes (max_body_bytes)`,
      err:
        "test.lua:4: http.request: argument 1 (request) field 'max_body_bytes' must be a positive whole number, got 1.5",
    });
  });
});
