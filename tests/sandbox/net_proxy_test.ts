/**
 * The sandbox's proxy on its own (`src/sandbox/net_proxy.ts`, `net_forward.ts`), served in this
 * process on a Unix socket and spoken to in raw HTTP: the token line, keep-alive forwarding with
 * `Content-Length` and chunked bodies, a later request for another upstream on the same connection
 * (closed, never forwarded), `CONNECT` tunnels, the denial feed, and the feed owner's end ending
 * the proxy; and the compiled binary's way to it (`--sandbox-stage=proxy`), started as the launcher
 * starts it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type ProxyHandle, serveProxy } from "../../src/sandbox/net_proxy.ts";
import { type ForwardHead, parseForwardHead } from "../../src/sandbox/net_forward.ts";
import { parseAllowList } from "../../src/sandbox/net_policy.ts";
import { connectProxy, type Denial, DENIAL_FEED } from "../../src/sandbox/net_pipe.ts";
import { PROXY_CONFIG_VAR } from "../../src/sandbox/net_bridge.ts";
import { proxyCommand, startProxy } from "../../src/sandbox/net_launch.ts";
import type { SelfLaunch } from "../../src/proc/self.ts";
import { CLI, pathExists, REPO_ROOT, waitFor } from "../helpers.ts";

const opts = { ignore: Deno.build.os === "windows", sanitizeResources: false, sanitizeOps: false };
const enc = new TextEncoder();
const dec = new TextDecoder();
const TOKEN = "t0ken";

interface World {
  socket: string;
  proxy: ProxyHandle;
  said: string[];
  allowedPort: number;
  otherPort: number;
  /** Requests the allowed upstream answered: method, path and body. */
  seen: string[];
  otherHits: () => number;
  close(): Promise<void>;
}

async function world(): Promise<World> {
  const dir = await Deno.makeTempDir({ prefix: "ab_proxy_" });
  const seen: string[] = [];
  const allowed = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.text();
    seen.push(`${req.method} ${new URL(req.url).pathname} ${body}`);
    return new Response(`echo ${body}`);
  });
  let otherHits = 0;
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    otherHits++;
    return new Response("other");
  });
  const socket = join(dir, "proxy.sock");
  const said: string[] = [];
  const proxy = serveProxy(
    { socket, token: TOKEN, allow: parseAllowList([`127.0.0.1:${allowed.addr.port}`]) },
    (l) => said.push(l),
  );
  return {
    socket,
    proxy,
    said,
    allowedPort: allowed.addr.port,
    otherPort: other.addr.port,
    seen,
    otherHits: () => otherHits,
    close: async () => {
      proxy.close();
      await proxy.done;
      await allowed.shutdown();
      await other.shutdown();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The denial feed of the proxy on `socket`, registered. */
async function openFeed(socket: string, token: string): Promise<Deno.UnixConn> {
  const feed = await connectProxy(socket); // a proxy just started may not listen yet
  await feed.write(enc.encode(`${token}\r\n${DENIAL_FEED}\r\n\r\n`));
  const b = new Uint8Array(16);
  assert.equal(dec.decode(b.subarray(0, (await feed.read(b))!)), "\n", "registered");
  return feed;
}

/** The next refusal the feed tells (one JSON line). */
async function nextDenial(feed: Deno.Conn): Promise<Denial> {
  const b = new Uint8Array(1024);
  let line = "";
  while (!line.includes("\n")) {
    const n = await feed.read(b);
    assert.ok(n !== null, "the feed ended before the refusal came");
    line += dec.decode(b.subarray(0, n));
  }
  return JSON.parse(line);
}

/** Reads one response (head and a Content-Length body); undefined when the connection closed first. */
async function readResponse(c: Deno.Conn, pending: { buf: string }): Promise<string | undefined> {
  const b = new Uint8Array(4096);
  while (true) {
    const end = pending.buf.indexOf("\r\n\r\n");
    if (end >= 0) {
      const len = Number(/content-length:\s*(\d+)/i.exec(pending.buf.slice(0, end))?.[1] ?? 0);
      if (pending.buf.length >= end + 4 + len) {
        const out = pending.buf.slice(0, end + 4 + len);
        pending.buf = pending.buf.slice(end + 4 + len);
        return out;
      }
    }
    const n = await c.read(b).catch(() => null);
    if (n === null) return undefined;
    pending.buf += dec.decode(b.subarray(0, n));
  }
}

Deno.test({
  name: "sandbox proxy: keep-alive forwarding with Content-Length and chunked bodies, in origin form",
  ...opts,
  fn: async () => {
    const w = await world();
    try {
      const c = await Deno.connect({ transport: "unix", path: w.socket });
      const pending = { buf: "" };
      const base = `http://127.0.0.1:${w.allowedPort}`;
      await c.write(
        enc.encode(`${TOKEN}\r\nPOST ${base}/one HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc`),
      );
      assert.match((await readResponse(c, pending))!, /^HTTP\/1\.1 200[^]*echo abc$/);
      await c.write(
        enc.encode(
          `POST ${base}/two HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nProxy-Authorization: x\r\n\r\n` +
            `2\r\nde\r\n3;ext=1\r\nfgh\r\n0\r\n\r\n`,
        ),
      );
      assert.match((await readResponse(c, pending))!, /echo defgh$/);
      await c.write(enc.encode(`GET ${base}/three HTTP/1.1\r\nHost: x\r\n\r\n`));
      assert.match((await readResponse(c, pending))!, /^HTTP\/1\.1 200/);
      // a counted body whose head came first and its rest later
      await c.write(enc.encode(`POST ${base}/four?q=1 HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nab`));
      await new Promise((r) => setTimeout(r, 20));
      await c.write(enc.encode(`cdef`));
      assert.match((await readResponse(c, pending))!, /echo abcdef$/);
      assert.deepEqual(w.seen, ["POST /one abc", "POST /two defgh", "GET /three ", "POST /four abcdef"]);
      // another upstream on the same connection: closed, never forwarded anywhere
      await c.write(enc.encode(`GET http://127.0.0.1:${w.otherPort}/x HTTP/1.1\r\nHost: x\r\n\r\n`));
      assert.equal(await readResponse(c, pending), undefined);
      assert.equal(w.otherHits(), 0);
      assert.equal(w.seen.length, 4);
      c.close();
    } finally {
      await w.close();
    }
  },
});

Deno.test({
  name: "attack: sandbox net: the proxy answers nothing without the token, and refuses what the list lacks",
  ...opts,
  fn: async () => {
    const w = await world();
    try {
      const wrong = await Deno.connect({ transport: "unix", path: w.socket });
      await wrong.write(enc.encode(`nope\r\nCONNECT 127.0.0.1:${w.allowedPort} HTTP/1.1\r\n\r\n`));
      assert.equal(await readResponse(wrong, { buf: "" }), undefined);
      wrong.close();
      const c = await Deno.connect({ transport: "unix", path: w.socket });
      await c.write(enc.encode(`${TOKEN}\r\nCONNECT 127.0.0.1:${w.otherPort} HTTP/1.1\r\n\r\n`));
      assert.match(
        (await readResponse(c, { buf: "" }))!,
        /^HTTP\/1\.1 403 [^]*X-Agent-Block-Denied: 127\.0\.0\.1:\d+/,
      );
      c.close();
      assert.equal(w.otherHits(), 0);
      assert.equal(w.said.length, 1);
      assert.match(w.said[0], /refused 127\.0\.0\.1:\d+ \(an address not on the allow-list/);
    } finally {
      await w.close();
    }
  },
});

Deno.test({
  name:
    "sandbox proxy: a CONNECT tunnel carries bytes both ways; the feed tells of refusals; its owner's end ends the proxy",
  ...opts,
  fn: async () => {
    const w = await world();
    try {
      const feed = await openFeed(w.socket, TOKEN);
      const t = await Deno.connect({ transport: "unix", path: w.socket });
      await t.write(enc.encode(`${TOKEN}\r\nCONNECT 127.0.0.1:${w.allowedPort} HTTP/1.1\r\n\r\n`));
      const pending = { buf: "" };
      assert.match((await readResponse(t, pending))!, /^HTTP\/1\.1 200 Connection established/);
      await t.write(enc.encode(`GET /tunnel HTTP/1.1\r\nHost: x\r\n\r\n`));
      assert.match((await readResponse(t, pending))!, /^HTTP\/1\.1 200/);
      t.close();
      const r = await Deno.connect({ transport: "unix", path: w.socket });
      await r.write(
        enc.encode(`${TOKEN}\r\nGET http://localhost:${w.otherPort}/ HTTP/1.1\r\nHost: x\r\n\r\n`),
      );
      assert.match((await readResponse(r, { buf: "" }))!, /^HTTP\/1\.1 403/);
      r.close();
      assert.deepEqual(await nextDenial(feed), {
        host: "localhost",
        port: w.otherPort,
        reason: `not on the allow-list at this port`,
      });
      feed.close(); // the owner (first feed) goes: the proxy ends
      await w.proxy.done;
      await assert.rejects(() => Deno.connect({ transport: "unix", path: w.socket }));
    } finally {
      await w.close();
    }
  },
});

Deno.test({
  name: "sandbox proxy: a listed name that resolves to an address also listed is reached at that address",
  ...opts,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_proxy_" });
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      () => new Response("local"),
    );
    const socket = join(dir, "proxy.sock");
    const port = server.addr.port;
    const said: string[] = [];
    const proxy = serveProxy(
      { socket, token: TOKEN, allow: parseAllowList([`localhost:${port}`, `127.0.0.1:${port}`]) },
      (l) => said.push(l),
    );
    try {
      const c = await Deno.connect({ transport: "unix", path: socket });
      await c.write(
        enc.encode(`${TOKEN}\r\nGET http://localhost:${port}/ HTTP/1.1\r\nHost: localhost\r\n\r\n`),
      );
      assert.match((await readResponse(c, { buf: "" }))!, /^HTTP\/1\.1 200[^]*local$/);
      c.close();
      assert.deepEqual(said, []);
    } finally {
      proxy.close();
      await proxy.done;
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "sandbox proxy: a forwarded WebSocket upgrade (ws://) carries frames both ways to the checked upstream",
  ...opts,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_proxy_" });
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      const { socket, response } = Deno.upgradeWebSocket(req);
      socket.onmessage = (e) => socket.send(`echo ${e.data}`);
      return response;
    });
    const socket = join(dir, "proxy.sock");
    const port = server.addr.port;
    const proxy = serveProxy(
      { socket, token: TOKEN, allow: parseAllowList([`127.0.0.1:${port}`]) },
      () => {},
    );
    try {
      const c = await Deno.connect({ transport: "unix", path: socket });
      await c.write(enc.encode(
        `${TOKEN}\r\nGET http://127.0.0.1:${port}/ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
          `Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      ));
      const pending = { buf: "" };
      assert.match((await readResponse(c, pending))!, /^HTTP\/1\.1 101 /);
      // a masked text frame, as a client sends it; past the upgrade the proxy parses nothing
      const text = enc.encode("hi");
      const mask = [1, 2, 3, 4];
      await c.write(
        new Uint8Array([0x81, 0x80 | text.length, ...mask, ...text.map((b, i) => b ^ mask[i % 4])]),
      );
      const b = new Uint8Array(64);
      let got = new Uint8Array(0);
      while (got.length < 2 || got.length < 2 + got[1]) {
        const n = await c.read(b);
        assert.ok(n !== null, "the upgraded connection closed");
        got = new Uint8Array([...got, ...b.subarray(0, n)]);
      }
      assert.equal(got[0], 0x81);
      assert.equal(dec.decode(got.subarray(2, 2 + got[1])), "echo hi");
      c.close();
    } finally {
      proxy.close();
      await proxy.done;
      await server.shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name:
    "sandbox proxy: the compiled binary's stage (`<binary> --sandbox-stage=proxy`, cli.ts standing for the binary) serves the list and ends with its run",
  ...opts,
  fn: async () => {
    // The launch of a compiled binary, whose command is the binary itself: `cli.ts` run by Deno
    // takes its place, so the stage is reached as the binary reaches it (cli.ts's first-argument
    // dispatch, `proxy_stage.ts`, the configuration in its environment). That the binary
    // carries these modules is compile_test's part (deno.json's compile.include).
    const launch: SelfLaunch = {
      mode: "compiled",
      prefix: [Deno.execPath(), "run", "-A", "--quiet", "--config", join(REPO_ROOT, "deno.json"), CLI],
    };
    const hits: string[] = [];
    const allowed = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      hits.push(new URL(req.url).pathname);
      return new Response("reached");
    });
    const port = allowed.addr.port;
    const proxy = startProxy(parseAllowList([`127.0.0.1:${port}`]), launch);
    try {
      const feed = await openFeed(proxy.socket, proxy.token);
      // the listed host:port, through a tunnel
      const t = await Deno.connect({ transport: "unix", path: proxy.socket });
      await t.write(enc.encode(`${proxy.token}\r\nCONNECT 127.0.0.1:${port} HTTP/1.1\r\n\r\n`));
      const pending = { buf: "" };
      assert.match((await readResponse(t, pending))!, /^HTTP\/1\.1 200 Connection established/);
      await t.write(enc.encode(`GET /through HTTP/1.1\r\nHost: x\r\n\r\n`));
      assert.match((await readResponse(t, pending))!, /^HTTP\/1\.1 200[^]*reached$/);
      t.close();
      // another port of the same address: refused, and told on the feed
      const r = await Deno.connect({ transport: "unix", path: proxy.socket });
      await r.write(enc.encode(`${proxy.token}\r\nCONNECT 127.0.0.1:${port + 1} HTTP/1.1\r\n\r\n`));
      assert.match((await readResponse(r, { buf: "" }))!, /^HTTP\/1\.1 403 /);
      r.close();
      assert.equal((await nextDenial(feed)).port, port + 1);
      assert.deepEqual(hits, ["/through"]);
      // the run (the feed's owner) goes: the stage ends and removes its socket's directory
      feed.close();
      const dir = proxy.socket.slice(0, proxy.socket.lastIndexOf("/"));
      await waitFor(() => !pathExists(dir), { what: `the proxy stage to end and remove ${dir}` });
    } finally {
      proxy.kill();
      await allowed.shutdown();
    }
  },
});

Deno.test({
  name:
    "attack: sandbox proxy: its launcher killed outright before any run connected: the proxy ends at once",
  ...opts,
  ignore: Deno.build.os !== "linux",
  fn: async () => {
    // The launcher (standing in: a Deno program that starts the proxy, says where, and waits)
    // is SIGKILLed: no feed ever connected and nobody will send SIGTERM. The kernel tells the
    // proxy (its parent-death signal), and it removes its socket's directory as it goes.
    const dir = await Deno.makeTempDir({ prefix: "ab_proxy_orphan_" });
    const script = join(dir, "launcher.ts");
    Deno.writeTextFileSync(
      script,
      `import { startProxy } from ${
        JSON.stringify(new URL("../../src/sandbox/net_launch.ts", import.meta.url).href)
      };
       const p = startProxy([]);
       console.log(p.socket);
       await new Promise(() => setInterval(() => {}, 1000));`,
    );
    const launcher = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", "--config", join(REPO_ROOT, "deno.json"), script],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    try {
      const reader = launcher.stdout.pipeThrough(new TextDecoderStream()).getReader();
      let text = "";
      while (!text.includes("\n")) {
        const r = await reader.read();
        if (r.done) throw new Error(`the stand-in launcher ended before it said its socket: ${text}`);
        text += r.value;
      }
      const socketDir = text.trim().slice(0, text.trim().lastIndexOf("/"));
      assert.ok(pathExists(socketDir), "the proxy serves");
      launcher.kill("SIGKILL");
      await launcher.status;
      await waitFor(() => !pathExists(socketDir), {
        what: `the orphaned proxy to end and remove ${socketDir}`,
      });
      reader.releaseLock();
      await launcher.stdout.cancel().catch(() => undefined);
    } finally {
      try {
        launcher.kill("SIGKILL");
      } catch {
        // ended
      }
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("attack: sandbox proxy: a later head is bound to the first one's upstream only by its whole origin", () => {
  const first = parseForwardHead(
    "GET http://api.example:808/v1?a=1 HTTP/1.1\r\nHost: api.example",
  ) as ForwardHead;
  assert.deepEqual([first.host, first.port, first.origin], ["api.example", 808, "http://api.example:808"]);
  assert.match(first.text, /^GET \/v1\?a=1 HTTP\/1\.1\r\n/);
  const next = (target: string) => {
    const h = parseForwardHead(`POST ${target} HTTP/1.1\r\nContent-Length: 2`, first);
    return "error" in h ? h.error : `${h.host}:${h.port} ${h.text.split("\r\n")[0]}`;
  };
  // the same origin text: the same upstream, the path as written
  assert.equal(next("http://api.example:808/v1/x"), "api.example:808 POST /v1/x HTTP/1.1");
  // an origin that only starts like the first one's is parsed in full and names its own upstream
  assert.equal(next("http://api.example:808@evil.example/x"), "evil.example:80 POST /x HTTP/1.1");
  assert.equal(next("http://api.example:8080/x"), "api.example:8080 POST /x HTTP/1.1");
  assert.equal(
    next("http://api.example:808.evil.example/x"),
    "a proxy request names an absolute http:// URL",
  );
  assert.equal(next("http://api.example:808?x"), "api.example:808 POST /?x HTTP/1.1");
  // a lenient spelling the URL parser accepts is never taken as a prefix of later heads
  const odd = parseForwardHead("GET http:/api.example:808/v1 HTTP/1.1") as ForwardHead;
  assert.deepEqual([odd.host, odd.port, odd.origin], ["api.example", 808, "\0"]);
  const again = parseForwardHead("GET http:/api.example:808/v2 HTTP/1.1", odd) as ForwardHead;
  assert.equal(again.text.split("\r\n")[0], "GET /v2 HTTP/1.1");
});

Deno.test({
  name:
    "sandbox proxy: the bridge's first connection waits for a proxy still starting, and gives up at its bound",
  ...opts,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "ab_proxy_wait_" });
    try {
      const socket = join(dir, "proxy.sock");
      // nothing there at all: refused once the bound has passed, naming the socket
      await assert.rejects(
        connectProxy(socket, 200),
        (e: Error) => e.message.includes(`the proxy did not answer at ${socket} within 0.2 s`),
      );
      // a proxy that starts listening while the bridge waits: connected
      const waiting = connectProxy(socket, 60_000);
      await new Promise((r) => setTimeout(r, 50));
      const listener = Deno.listen({ transport: "unix", path: socket });
      const conn = await waiting;
      (await listener.accept()).close();
      conn.close();
      listener.close();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("sandbox proxy: its command carries its configuration, and from source turns Deno's update check off", () => {
  const config = {
    socket: "/tmp/x/proxy.sock",
    token: "t",
    allow: parseAllowList(["example.com:8443"]),
    parent: 42,
  };
  // from source: the Deno CLI on the stage's own entry, without the project's configuration; the
  // proxy is outside the run's namespace, so Deno's update check would reach dl.deno.land unlisted
  const source = proxyCommand(config, { mode: "source", prefix: ["/opt/deno", "run", "-A", CLI] });
  assert.equal(source.cmd, "/opt/deno");
  assert.deepEqual(source.args.slice(0, 5), ["run", "-A", "--quiet", "--no-config", "--no-lock"]);
  assert.match(source.args.at(-1)!, /\/src\/cli\/proxy_stage\.ts$/);
  assert.deepEqual(JSON.parse(source.env[PROXY_CONFIG_VAR]), config);
  assert.equal(source.env.DENO_NO_UPDATE_CHECK, "1");
  // compiled: the binary at its stage
  const compiled = proxyCommand(config, { mode: "compiled", prefix: ["/usr/bin/agent-block"] });
  assert.deepEqual([compiled.cmd, ...compiled.args], ["/usr/bin/agent-block", "--sandbox-stage=proxy"]);
  assert.deepEqual(JSON.parse(compiled.env[PROXY_CONFIG_VAR]), config);
});
