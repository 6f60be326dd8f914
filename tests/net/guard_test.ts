/**
 * The HTTP guard (pure): the bind rule, forged Host and Origin, the bearer token, and the body
 * limit for a declared length and for a chunked body that goes past it.
 */
import assert from "node:assert/strict";
import {
  admit,
  allowedHostnames,
  bindRefusal,
  constantTimeEqual,
  type GuardPolicy,
  headerRefusal,
  hostOfHeader,
  isLoopback,
  refusalResponse,
} from "../../src/net/guard.ts";

const policy = (extra: Partial<GuardPolicy> = {}): GuardPolicy => ({
  allowedHosts: allowedHostnames("127.0.0.1"),
  ...extra,
});

const req = (headers: Record<string, string>, init: RequestInit = {}) =>
  new Request("http://127.0.0.1:9/x", { method: "POST", headers, ...init });

/** A body arriving in `chunks` pieces of `size` bytes with no Content-Length. */
function chunked(chunks: number, size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(c) {
      if (sent++ >= chunks) c.close();
      else c.enqueue(new Uint8Array(size).fill(0x61));
    },
  });
}

Deno.test("guard: loopback bind unless explicitly opted out", () => {
  for (const h of ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost", "LOCALHOST"]) {
    assert.equal(bindRefusal(h), undefined, h);
  }
  for (const h of ["0.0.0.0", "::", "192.168.1.4", "example.com", "127.0.0.256"]) {
    assert.match(bindRefusal(h) ?? "", /only loopback addresses/, h);
    assert.equal(bindRefusal(h, { allowNonLoopback: true }), undefined, h);
  }
  assert.ok(!isLoopback("127.0.0.1.example.com") && !isLoopback("localhost.evil"));
  assert.deepEqual(allowedHostnames("::1").sort(), ["127.0.0.1", "[::1]", "localhost"]);
  assert.deepEqual(allowedHostnames("10.0.0.5").sort(), ["10.0.0.5", "127.0.0.1", "[::1]", "localhost"]);
});

Deno.test("attack: a forged Host (DNS rebinding) is refused by the guard: only loopback or the bound address", () => {
  for (const host of ["127.0.0.1:9", "127.0.0.1", "localhost:8080", "LocalHost", "[::1]:9"]) {
    assert.equal(headerRefusal(req({ host }), policy()), undefined, host);
  }
  for (
    const host of [
      "evil.example.com",
      "evil.example.com:9",
      "127.0.0.1.evil.com",
      "localhost.",
      "a@127.0.0.1",
      "[::1",
    ]
  ) {
    const r = headerRefusal(req({ host }), policy());
    assert.equal(r?.status, 403, host);
  }
  assert.equal(
    headerRefusal(req({ host: "10.0.0.5:80" }), policy({ allowedHosts: allowedHostnames("10.0.0.5") })),
    undefined,
  );
  assert.equal(hostOfHeader("[::1]:8080"), "[::1]");
  assert.equal(hostOfHeader("x:y:z"), undefined);
});

Deno.test("attack: a foreign, null or unparsable Origin is refused by the guard", () => {
  const ok = (origin: string) => headerRefusal(req({ host: "127.0.0.1:9", origin }), policy());
  assert.equal(ok("http://localhost:5173"), undefined);
  assert.equal(ok("https://127.0.0.1"), undefined);
  assert.equal(ok("http://[::1]:3000"), undefined);
  assert.equal(ok(""), undefined);
  for (
    const o of [
      "http://evil.example.com",
      "null",
      "not a url",
      "http://localhost.evil.com",
      "chrome-extension://abc",
    ]
  ) {
    const r = ok(o);
    assert.equal(r?.status, 403, o);
    assert.match(r?.message ?? "", /Origin/);
  }
});

Deno.test("attack: a missing or wrong bearer token is refused, compared in constant time, Host checked first", () => {
  const p = policy({ token: "s3cret-token" });
  const missing = headerRefusal(req({ host: "127.0.0.1:9" }), p);
  assert.equal(missing?.status, 401);
  assert.match(missing?.headers?.["WWW-Authenticate"] ?? "", /^Bearer /);
  for (
    const auth of [
      "Bearer wrong",
      "Bearer s3cret-toke",
      "Bearer s3cret-token2",
      "Basic s3cret-token",
      "s3cret-token",
      "Bearer ",
    ]
  ) {
    assert.equal(headerRefusal(req({ host: "127.0.0.1:9", authorization: auth }), p)?.status, 401, auth);
  }
  assert.equal(
    headerRefusal(req({ host: "127.0.0.1:9", authorization: "Bearer s3cret-token" }), p),
    undefined,
  );
  assert.equal(
    headerRefusal(req({ host: "127.0.0.1:9", authorization: "bearer  s3cret-token" }), p),
    undefined,
  );
  assert.equal(
    headerRefusal(req({ host: "evil.example.com", authorization: "Bearer s3cret-token" }), p)?.status,
    403,
  );
  assert.ok(constantTimeEqual("abc", "abc"));
  assert.ok(
    !constantTimeEqual("", "abc") && !constantTimeEqual("abcd", "abc") && !constantTimeEqual("abd", "abc"),
  );
  assert.ok(!constantTimeEqual("abcabc", "abc"));
});

Deno.test("attack: a declared body past the guard's limit is refused unread (413); within it admitted as is", async () => {
  const p = policy({ maxBodyBytes: 10 });
  const big = req({ host: "127.0.0.1:9", "content-length": "11" }, { body: "01234567890" });
  const r = await admit(big, p);
  assert.ok("refusal" in r && r.refusal.status === 413);
  assert.equal(big.bodyUsed, false);
  const small = req({ host: "127.0.0.1:9", "content-length": "10" }, { body: "0123456789" });
  const a = await admit(small, p);
  assert.ok("request" in a && a.request === small);
  assert.equal(headerRefusal(req({ host: "127.0.0.1:9", "content-length": "ten" }), p)?.status, 400);
  const resp = refusalResponse({ status: 413, message: "too big" });
  assert.equal(resp.status, 413);
  assert.deepEqual(await resp.json(), { error: "too big" });
});

Deno.test("attack: a chunked body is read up to the guard's limit and refused past it; kept whole within it", async () => {
  const p = policy({ maxBodyBytes: 1000 });
  const over = await admit(
    req({ host: "127.0.0.1:9" }, { body: chunked(1_000_000, 100) }),
    p,
  );
  assert.ok("refusal" in over);
  assert.equal(over.refusal.status, 413);
  assert.match(over.refusal.message, /exceeds 1000 bytes/);

  const ac = new AbortController();
  const within = req({ host: "127.0.0.1:9", "x-extra": "kept" }, {
    body: chunked(10, 100),
    signal: ac.signal,
  });
  const ok = await admit(within, p);
  assert.ok("request" in ok);
  assert.equal(ok.request.method, "POST");
  assert.equal(ok.request.url, "http://127.0.0.1:9/x");
  assert.equal(ok.request.headers.get("x-extra"), "kept");
  assert.equal((await ok.request.text()).length, 1000);
  ac.abort();
  assert.equal(ok.request.signal.aborted, true);

  const none = req({ host: "127.0.0.1:9" });
  const n = await admit(none, p);
  assert.ok("request" in n && n.request === none);
});

Deno.test("followSignal: false builds the read request from its parts, without the served request's signal", async () => {
  const ac = new AbortController();
  const within = req({ host: "127.0.0.1:9", "x-extra": "kept" }, {
    body: chunked(10, 100),
    signal: ac.signal,
  });
  const ok = await admit(within, policy({ maxBodyBytes: 1000, followSignal: false }));
  assert.ok("request" in ok);
  assert.equal(ok.request.headers.get("x-extra"), "kept");
  assert.equal((await ok.request.text()).length, 1000);
  ac.abort();
  assert.equal(ok.request.signal.aborted, false, "not tied to the served request");
});
