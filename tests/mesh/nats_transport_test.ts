// The NATS mesh transport against a real nats-server: request/reply and send with signatures
// checked both ways, forged and replayed messages dropped, size and reachability errors, close,
// a server restart the transport survives, the replay memory kept by the sandbox launcher
// (asynchronous: awaited before a message is accepted; gone, every message is dropped), and the
// way through the sandbox's proxy (a tunnel per connection, TLS done by the forwarder and checked
// for each server's own name, also when only the server asks for TLS; a CA given the only one trusted).
import assert from "node:assert/strict";
import { connect, headers } from "@nats-io/transport-node";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { connectMesh } from "../../src/clients/mesh/connect.ts";
import { MeshError, type MeshStateEvent, type MeshTransport } from "../../src/clients/mesh/transport.ts";
import { SIGNATURE_HEADER, subjectOf } from "../../src/clients/mesh/nats_transport.ts";
import { encodeBase64Url } from "../../src/clients/mesh/base64url.ts";
import { join } from "node:path";
import { REPO_ROOT, settleWithin, tempDir, testCertificate, waitFor } from "../helpers.ts";
import { serveProxy } from "../../src/sandbox/net_proxy.ts";
import { parseAllowList } from "../../src/sandbox/net_policy.ts";
import { splice } from "../../src/sandbox/net_pipe.ts";
import { natsMissing, startNats } from "./nats_server.ts";
import { MemorySeenIds } from "../../src/clients/mesh/seen_ids.ts";
import { connectSeenIds, serveSeenIds } from "../../src/clients/mesh/seen_remote.ts";

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

/**
 * The sandbox's proxy (`serveProxy`, on a Unix socket, allowing `allow`) behind a loopback TCP
 * front that opens every connection with the proxy's token, as the confined run's bridge does:
 * what `MeshConnectOptions.proxy` names under the allow-list. Disposing of it stops both.
 */
function proxyFront(dir: string, allow: string[]): { url: string; said: string[] } & AsyncDisposable {
  const socket = join(dir, "proxy.sock");
  const said: string[] = [];
  const proxy = serveProxy({ socket, token: "tok", allow: parseAllowList(allow) }, (l) => said.push(l));
  const front = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const open = new Set<Deno.Conn>();
  void (async () => {
    for await (const c of front) {
      open.add(c);
      void Deno.connect({ transport: "unix", path: socket }).then(async (up) => {
        open.add(up);
        await up.write(new TextEncoder().encode("tok\r\n"));
        await splice(c, up);
      }, () => c.close());
    }
  })().catch(() => undefined);
  return {
    url: `http://127.0.0.1:${front.addr.port}`,
    said,
    [Symbol.asyncDispose]: async () => {
      front.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      proxy.close();
      await proxy.done;
    },
  };
}

Deno.test(
  {
    name: "mesh nats: through an HTTP proxy (the sandbox's allow-list) each server connection is a tunnel",
    ignore,
  },
  async () => {
    await using srv = await startNats();
    const dir = await tempDir("ab_nats_proxy_");
    await using proxy = proxyFront(dir, [`127.0.0.1:${srv.port}`]);
    const a = await connectMesh(srv.url, MeshIdentity.random(), { proxy: proxy.url });
    const b = await connectMesh(srv.url, MeshIdentity.random());
    try {
      b.setHandler((m) => Promise.resolve({ echo: m.payload }));
      const r = await a.request(b.agentId, "through the tunnel", { timeoutMs: 20_000 });
      assert.deepEqual(r.value, { echo: "through the tunnel" });
      assert.deepEqual(proxy.said, []);
    } finally {
      await settleWithin([a.close(), b.close()], "closing the two agents");
    }
    // a server the proxy does not allow: the connect fails, naming the refusal
    const other = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    let hits = 0;
    void (async () => {
      for await (const c of other) {
        hits++;
        c.close();
      }
    })().catch(() => undefined);
    try {
      const e = await meshError(() =>
        connectMesh(`nats://127.0.0.1:${other.addr.port}`, MeshIdentity.random(), {
          proxy: proxy.url,
          connectTimeoutMs: 5_000,
        })
      );
      assert.equal(e.kind, "connect");
      assert.match(e.message, new RegExp(`refused CONNECT 127\\.0\\.0\\.1:${other.addr.port}: 403`));
      assert.equal(hits, 0);
      assert.match(proxy.said.join("\n"), new RegExp(`refused 127\\.0\\.0\\.1:${other.addr.port}`));
    } finally {
      other.close();
    }
  },
);

/**
 * A stand-in for the sandbox's proxy that takes any `CONNECT name:port` to 127.0.0.1:port (so a
 * test may name a server `nats.test`) and records each target. Disposing of it stops it.
 */
function anyNameProxy(): { url: string; targets: string[] } & AsyncDisposable {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const targets: string[] = [];
  const open = new Set<Deno.Conn>();
  void (async () => {
    for await (const c of l) {
      open.add(c);
      void (async () => {
        const b = new Uint8Array(4096);
        let head = "";
        while (!head.includes("\r\n\r\n")) {
          const n = await c.read(b);
          if (n === null) return c.close();
          head += new TextDecoder().decode(b.subarray(0, n));
        }
        const target = /^CONNECT (\S+) /.exec(head)?.[1] ?? "?";
        targets.push(target);
        const up = await Deno.connect({ hostname: "127.0.0.1", port: Number(target.split(":").pop()) });
        open.add(up);
        await c.write(new TextEncoder().encode("HTTP/1.1 200 Connection established\r\n\r\n"));
        await splice(c, up);
      })().catch(() => c.close());
    }
  })().catch(() => undefined);
  return {
    url: `http://127.0.0.1:${l.addr.port}`,
    targets,
    [Symbol.asyncDispose]: () => {
      l.close();
      for (const c of open) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      return Promise.resolve();
    },
  };
}

Deno.test(
  {
    name: "mesh nats: TLS through a proxy's tunnel checks the server's own name, not the forwarder's",
    ignore,
  },
  async () => {
    const tls = (c: { cert: string; key: string }) =>
      `tls { cert_file: "${c.cert}", key_file: "${c.key}" }\n`;
    /** Two agents through the proxy on a TLS server whose certificate is for `certName`. */
    const attempt = async (certName: string) => {
      const cert = await testCertificate(await tempDir("ab_nats_tls_"), certName);
      const ca = Deno.readTextFileSync(cert.ca);
      await using srv = await startNats(tls(cert));
      await using proxy = anyNameProxy();
      const url = `nats://nats.test:${srv.port}`;
      const opts = { proxy: proxy.url, natsTlsCa: ca, connectTimeoutMs: 5_000 };
      try {
        const a = await connectMesh(url, MeshIdentity.random(), opts);
        const b = await connectMesh(url, MeshIdentity.random(), opts).catch(async (e) => {
          await a.close();
          throw e;
        });
        try {
          b.setHandler((m) => Promise.resolve({ echo: m.payload }));
          const r = await a.request(b.agentId, "over tls", { timeoutMs: 20_000 });
          return { value: r.value, targets: proxy.targets, port: srv.port };
        } finally {
          await settleWithin([a.close(), b.close()], "closing the two agents");
        }
      } catch (e) {
        if (e instanceof MeshError) return { error: e, targets: proxy.targets, port: srv.port };
        throw e;
      }
    };
    // the URL's name: the certificate is checked for it, and the proxy got the name (the
    // transport resolves nothing itself)
    const ok = await attempt("nats.test");
    assert.deepEqual(ok.value, { echo: "over tls" }, ok.error?.message);
    assert.deepEqual([...new Set(ok.targets)], [`nats.test:${ok.port}`]);
    // a certificate for any other name — the forwarder's 127.0.0.1, or localhost, included: refused
    for (const name of ["elsewhere.test", "127.0.0.1", "localhost"]) {
      const bad = await attempt(name);
      assert.equal(
        bad.error?.kind,
        "connect",
        `a certificate for ${name}: ${bad.error?.message ?? "accepted"}`,
      );
      assert.match(bad.error!.message, /altnames|certificate/i);
    }
  },
);

Deno.test(
  {
    name:
      "mesh nats: through a proxy, a nats:// URL whose server demands TLS goes TLS, checked for the URL's name; a plain one stays plain",
    ignore,
  },
  async () => {
    // The server's certificate chains to a CA the peers' process trusts as a system root
    // (DENO_CERT, read at start-up: hence a process of their own), so the URL asks for no TLS:
    // the server's INFO does, as it would for a server with a public certificate.
    const dir = await tempDir("ab_nats_tlsinfo_");
    const peers = async (url: string, proxy: string, ca: string, natsTlsCa?: string) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--quiet",
          join(REPO_ROOT, "tests/mesh/tunnel_peer.ts"),
          url,
          proxy,
          ...(natsTlsCa !== undefined ? [natsTlsCa] : []),
        ],
        env: { DENO_CERT: ca },
        stdout: "piped",
        stderr: "piped",
      }).output();
      const text = new TextDecoder().decode(out.stdout).trim();
      assert.ok(out.success && text !== "", `the peers failed: ${new TextDecoder().decode(out.stderr)}`);
      return JSON.parse(text);
    };
    const cert = await testCertificate(dir, "nats.test");
    {
      await using srv = await startNats(`tls { cert_file: "${cert.cert}", key_file: "${cert.key}" }\n`);
      await using proxy = anyNameProxy();
      const r = await peers(`nats://nats.test:${srv.port}`, proxy.url, cert.ca);
      assert.deepEqual(r, { value: { echo: "through the tunnel" } });
      assert.deepEqual([...new Set(proxy.targets)], [`nats.test:${srv.port}`]);
    }
    {
      // the same through a certificate for another name: refused (the name is checked, not skipped)
      const other = await testCertificate(await tempDir("ab_nats_tlsinfo_"), "elsewhere.test");
      await using srv = await startNats(`tls { cert_file: "${other.cert}", key_file: "${other.key}" }\n`);
      await using proxy = anyNameProxy();
      const r = await peers(`nats://nats.test:${srv.port}`, proxy.url, other.ca);
      assert.equal(r.kind, "connect", JSON.stringify(r));
      assert.match(r.message, /altnames|certificate/i);
    }
    {
      // a CA given is the only one trusted, as for the client's own TLS unconfined: a certificate
      // that chains to a system root but not to that CA is refused
      await using srv = await startNats(`tls { cert_file: "${cert.cert}", key_file: "${cert.key}" }\n`);
      await using proxy = anyNameProxy();
      const other = await testCertificate(await tempDir("ab_nats_tlsinfo_"), "nats.test");
      const r = await peers(`nats://nats.test:${srv.port}`, proxy.url, cert.ca, other.ca);
      assert.equal(r.kind, "connect", JSON.stringify(r));
      assert.match(r.message, /TLS with nats\.test: .*certificate/i);
    }
    {
      // a plain server through the same path: reached in the clear, as unconfined
      await using srv = await startNats();
      await using proxy = anyNameProxy();
      const r = await peers(`nats://nats.test:${srv.port}`, proxy.url, cert.ca);
      assert.deepEqual(r, { value: { echo: "through the tunnel" } });
    }
  },
);

Deno.test(
  {
    name: "mesh nats: through a proxy, each server of a TLS cluster is checked for its own name",
    ignore,
  },
  async () => {
    const a = await testCertificate(await tempDir("ab_nats_names_"), "a.nats.test");
    const b = await testCertificate(await tempDir("ab_nats_names_"), "b.nats.test", a);
    const tls = (c: { cert: string; key: string }) =>
      `tls { cert_file: "${c.cert}", key_file: "${c.key}" }\n`;
    await using one = await startNats(tls(a));
    await using two = await startNats(tls(b));
    await using proxy = anyNameProxy();
    const names = { [`a.nats.test:${one.port}`]: one, [`b.nats.test:${two.port}`]: two };
    const opts = { proxy: proxy.url, natsTlsCa: Deno.readTextFileSync(a.ca), connectTimeoutMs: 5_000 };
    // both servers named in one URL: the client picks one, checked for its own name
    const x = await connectMesh(
      Object.keys(names).map((n) => `nats://${n}`).join(","),
      MeshIdentity.random(),
      opts,
    );
    try {
      const first = proxy.targets.at(-1)!;
      assert.ok(first in names, first);
      const other = Object.keys(names).find((n) => n !== first)!;
      // the server it reached stops: it reconnects to the other one, checked for that one's name
      await names[first].stop();
      const y = await connectMesh(`nats://${other}`, MeshIdentity.random(), opts);
      try {
        y.setHandler((m) => Promise.resolve({ echo: m.payload }));
        const r = await x.request(y.agentId, "across names", { timeoutMs: 20_000 });
        assert.deepEqual(r.value, { echo: "across names" });
      } finally {
        await settleWithin([y.close()], "closing the second agent");
      }
      assert.deepEqual(new Set(proxy.targets), new Set(Object.keys(names)));
    } finally {
      await settleWithin([x.close()], "closing the first agent");
    }
  },
);

Deno.test(
  {
    name: "mesh nats: a tls:// URL requires TLS: a plain server is refused, a TLS server is reached",
    ignore,
  },
  async () => {
    // a server without TLS: nats:// reaches it, tls:// refuses it rather than talk in the clear
    {
      await using plain = await startNats();
      const open = await connectMesh(`nats://127.0.0.1:${plain.port}`, MeshIdentity.random());
      await open.close();
      const refused = await connectMesh(`tls://127.0.0.1:${plain.port}`, MeshIdentity.random(), {
        connectTimeoutMs: 5_000,
      }).then(async (t) => {
        await t.close();
        return undefined;
      }, (e) => e);
      assert.ok(refused instanceof MeshError, `a tls:// URL reached a plain server: ${refused}`);
      assert.equal(refused.kind, "connect");
      assert.match(refused.message, /^connect to tls:\/\/127\.0\.0\.1:\d+ failed: .*tls/i);
    }
    // the same through the sandbox's proxy (the forwarder does the TLS): refused before anything
    // of the client's is sent in the clear
    {
      await using plain = await startNats();
      await using proxy = anyNameProxy();
      const refused = await connectMesh(`tls://nats.test:${plain.port}`, MeshIdentity.random(), {
        proxy: proxy.url,
        connectTimeoutMs: 5_000,
      }).then(async (t) => {
        await t.close();
        return undefined;
      }, (e) => e);
      assert.ok(
        refused instanceof MeshError,
        `a tls:// URL reached a plain server through the proxy: ${refused}`,
      );
      assert.equal(refused.kind, "connect");
      assert.match(refused.message, /tls is not available on this server \(nats\.test\)/);
    }
    // a TLS server whose certificate chains to the CA given: reached through the tls:// URL
    const cert = await testCertificate(await tempDir("ab_nats_tlsurl_"), "localhost");
    await using srv = await startNats(`tls { cert_file: "${cert.cert}", key_file: "${cert.key}" }\n`);
    const opts = { natsTlsCa: Deno.readTextFileSync(cert.ca), connectTimeoutMs: 5_000 };
    const a = await connectMesh(`tls://localhost:${srv.port}`, MeshIdentity.random(), opts);
    const b = await connectMesh(`tls://localhost:${srv.port}`, MeshIdentity.random(), opts);
    try {
      b.setHandler((m) => Promise.resolve({ echo: m.payload }));
      assert.deepEqual((await a.request(b.agentId, "hi", { timeoutMs: 20_000 })).value, { echo: "hi" });
    } finally {
      await settleWithin([a.close(), b.close()], "closing the two agents");
    }
  },
);

Deno.test(
  {
    name:
      "attack: mesh nats with the sandbox launcher's memory: a replay is dropped, and every message once it is gone",
    ignore,
  },
  async () => {
    await using srv = await startNats();
    const store = new MemorySeenIds();
    const service = serveSeenIds(store); // what the launcher serves a confined run
    const states: MeshStateEvent[] = [];
    const b = await connectMesh(srv.url, MeshIdentity.random(), {
      onState: (e) => states.push(e),
      seenIds: await connectSeenIds(service.socket, service.token),
    });
    const raw = await connect({ servers: srv.url.replace("nats://", "") });
    try {
      const handled: unknown[] = [];
      b.setHandler((m) => {
        handled.push(m.payload);
        return Promise.resolve("ok");
      });
      const mallory = MeshIdentity.random();
      const message = (n: number) => {
        const bytes = new TextEncoder().encode(
          `{"v":1,"id":"${crypto.randomUUID()}","from":"${mallory.agentId}","to":"${b.agentId}",` +
            `"type":"request","ts":${Date.now()},"payload":{"n":${n}}}`,
        );
        const h = headers();
        h.set(SIGNATURE_HEADER, mallory.signText(bytes));
        return { bytes, h };
      };
      const drops = () => states.filter((s) => s.state === "dropped") as { reason: string }[];
      // answered once (the check awaited the launcher's answer), its replay dropped
      const one = message(1);
      const r = await raw.request(subjectOf(b.agentId), one.bytes, { headers: one.h, timeout: 30_000 });
      assert(r.string().includes('"type":"reply"'), r.string());
      await assert.rejects(() =>
        raw.request(subjectOf(b.agentId), one.bytes, { headers: one.h, timeout: 500 })
      );
      await waitFor(() => drops().length >= 1, { what: "the replay reported" });
      assert.match(drops()[0].reason, /replayed id/);
      // the launcher is gone: a new, valid message is dropped rather than accepted unchecked
      service.close();
      const two = message(2);
      await assert.rejects(() =>
        raw.request(subjectOf(b.agentId), two.bytes, { headers: two.h, timeout: 500 })
      );
      await waitFor(() => drops().length >= 2, { what: "the unchecked message reported" });
      assert.match(drops()[1].reason, /could not be checked against the seen ids: .*seen-id memory is gone/);
      assert.deepEqual(handled, [{ n: 1 }]);
    } finally {
      service.close();
      await settleWithin([b.close(), raw.close()], "the connections");
    }
  },
);
