/**
 * http.request against a real local server (Deno.serve on 127.0.0.1, an ephemeral port, shut
 * down at the end of each test): methods, headers, bodies (string, JSON table, bytes), statuses,
 * failures as `{ ok = false, error }` (refused connection, bad URL, timeout), and server-sent
 * events through `on_event` (multi-line data, CRLF, comments, ids, early close, callback errors).
 */
import assert from "node:assert/strict";
import { runLua } from "../helpers.ts";

async function withServer(fn: (base: string) => Promise<void>): Promise<void> {
  const ac = new AbortController();
  const enc = new TextEncoder();
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, signal: ac.signal, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      switch (url.pathname) {
        case "/echo": {
          const h = new Headers({ "content-type": "application/json" });
          h.append("x-multi", "a");
          h.append("x-multi", "b");
          return new Response(
            JSON.stringify({
              method: req.method,
              ct: req.headers.get("content-type"),
              auth: req.headers.get("authorization"),
              body: await req.text(),
            }),
            { status: 201, headers: h },
          );
        }
        case "/bytes":
          return new Response(new Uint8Array([0, 255, 10]));
        case "/missing":
          return new Response("nope", { status: 404 });
        case "/slow":
          await new Promise((r) => setTimeout(r, 10_000)); // the client gives up long before
          return new Response("late");
        case "/sse": {
          const parts = [
            ": a comment\n",
            "event: greet\nid: 7\ndata: hello\n\n",
            "data: line one\r\ndata: line two\r\n\r\n",
            "data:no-space\n",
            "\n",
            'data: {"n":1}\n\ndata: unterminated at the end',
          ];
          const body = new ReadableStream({
            async start(c) {
              for (const p of parts) {
                c.enqueue(enc.encode(p));
                await new Promise((r) => setTimeout(r, 5));
              }
              c.close();
            },
          });
          return new Response(body, { headers: { "content-type": "text/event-stream" } });
        }
        case "/sse-forever": {
          let i = 0;
          let timer: ReturnType<typeof setInterval> | undefined;
          const body = new ReadableStream({
            start(c) {
              timer = setInterval(() => c.enqueue(enc.encode(`data: ${++i}\n\n`)), 5);
            },
            cancel() {
              clearInterval(timer);
            },
          });
          return new Response(body, { headers: { "content-type": "text/event-stream" } });
        }
      }
      return new Response("?", { status: 500 });
    },
  );
  try {
    await fn(`http://127.0.0.1:${server.addr.port}`);
  } finally {
    ac.abort();
    await server.finished;
  }
}

async function ret(source: string): Promise<string> {
  const r = await runLua(source);
  if (r.outcome.status !== "returned") throw new Error(`${JSON.stringify(r.outcome)}\n${r.stderr}`);
  return r.outcome.value as string;
}

Deno.test("http.request: status, lowercase headers, string and JSON bodies, exact bytes, 404 is an answer", async () => {
  await withServer(async (base) => {
    const out = await ret(`
      local a = http.request({ url = "${base}/echo", method = "put", headers = { Authorization = "Bearer t" }, body = "raw" })
      local b = http.request({ url = "${base}/echo", body = { z = 1, a = 2.0 } })
      local c = http.request("${base}/missing")
      local d = http.request("${base}/bytes", { timeout = 5 })
      return std.json.encode({ a.ok, a.status, a.headers["x-multi"], a.headers["content-type"], std.json.decode(a.body),
        std.json.decode(b.body), c.ok, c.status, c.body, #d.body, d.body:byte(2) })`);
    assert.deepEqual(JSON.parse(out), [
      true,
      201,
      "a, b",
      "application/json",
      { method: "PUT", ct: "text/plain;charset=UTF-8", auth: "Bearer t", body: "raw" },
      { method: "POST", ct: "application/json", body: '{"a":2.0,"z":1}' }, // auth: null decodes to nil
      true,
      404,
      "nope",
      3,
      255,
    ]);
  });
});

Deno.test("http.request: failures answer { ok = false, error } (refused, bad URL, timeout)", async () => {
  let closedPort = 0;
  await withServer((base) => {
    closedPort = Number(new URL(base).port);
    return Promise.resolve();
  });
  await withServer(async (base) => {
    const out = await ret(`
      local a = http.request("http://127.0.0.1:${closedPort}/x")
      local b = http.request({ url = "not a url" })
      local c = http.request({ url = "${base}/slow", timeout = 0.3 })
      return std.json.encode({ a.ok, a.error, b.ok, b.error, c.ok, c.error })`);
    const v = JSON.parse(out);
    assert.equal(v[0], false);
    assert.match(
      v[1],
      new RegExp(`^http\\.request: GET http://127\\.0\\.0\\.1:${closedPort}/x: .*(refused|Connection)`, "i"),
    );
    assert.equal(v[2], false);
    assert.match(v[3], /^http\.request: GET not a url: .*(Invalid URL|invalid)/i);
    assert.deepEqual(v.slice(4), [false, `http.request: GET ${base}/slow: timed out after 0.3 s`]);
  });
});

Deno.test("http.request: server-sent events through on_event, which may yield", async () => {
  await withServer(async (base) => {
    const out = await ret(`
      local got = {}
      local r = http.request({ url = "${base}/sse", on_event = function(ev)
        std.task.sleep(0) -- the callback runs as a task and may yield
        got[#got + 1] = std.json.encode(ev)
      end })
      return std.json.encode({ r.ok, r.status, r.body, r.headers["content-type"] }) .. "\\n" .. table.concat(got, "\\n")`);
    assert.equal(
      out,
      [
        '[true,200,"","text/event-stream"]',
        '{"data":"hello","event":"greet","id":"7"}',
        '{"data":"line one\\nline two","event":"message","id":"7"}',
        '{"data":"no-space","event":"message","id":"7"}',
        '{"data":"{\\"n\\":1}","event":"message","id":"7"}',
      ].join("\n"),
    );
  });
});

Deno.test("http.request: on_event returning false closes the stream; a callback error raises", async () => {
  await withServer(async (base) => {
    const out = await ret(`
      local n = 0
      local r = http.request({ url = "${base}/sse-forever", on_event = function(ev)
        n = n + 1
        if n == 3 then return false end
      end })
      local ok, err = pcall(http.request, { url = "${base}/sse-forever", on_event = function(ev) error("stop here") end })
      return n .. " " .. tostring(r.ok) .. " " .. tostring(ok) .. " " .. err`);
    assert.match(out, /^3 true false .*http\.request: on_event: .*stop here/);
  });
});

Deno.test("http.request: argument errors", async () => {
  for (
    const [code, msg] of [
      [`http.request()`, "http.request: argument 1 (request) must be a table, got nil"],
      [`http.request({})`, "http.request: argument 1 (request) field 'url' must be a string, got nil"],
      [
        `http.request({ url = "http://x", method = 1 })`,
        "http.request: argument 1 (request) field 'method' must be a string, got number",
      ],
      [
        `http.request({ url = "http://x", method = "GE T" })`,
        "http.request: argument 1 (request) field 'method' is not an HTTP method: 'GE T'",
      ],
      [
        `http.request({ url = "http://x", headers = { a = {} } })`,
        "http.request: argument 1 (request) field 'headers' value of 'a' must be a string, got table",
      ],
      [
        `http.request({ url = "http://x", body = true })`,
        "http.request: argument 1 (request) field 'body' must be a string or a table, got boolean",
      ],
      [
        `http.request({ url = "http://x", timeout = 0 })`,
        "http.request: argument 1 (request) field 'timeout' must be a positive number, got 0",
      ],
      [
        `http.request({ url = "http://x", on_event = 1 })`,
        "http.request: argument 1 (request) field 'on_event' must be a function, got number",
      ],
      [`http.request("http://x", 5)`, "http.request: argument 2 (opts) must be a table, got number"],
    ]
  ) {
    const r = await runLua(`\n${code}`);
    assert.equal((r.outcome as { message: string }).message, `test.lua:2: ${msg}`, code);
  }
});
