/**
 * The mesh and TLS under the sandbox's network allow-list (`--sandbox-net allow-list`): the run
 * lives in a network namespace with only loopback, so its `--relay` connection must go through
 * the proxy like everything else (the NATS transport's loopback forwarders tunnel with `CONNECT`,
 * the relay's WebSocket goes through the proxy's `HttpClient`).
 *
 * - A confined `--relay nats://127.0.0.1:PORT` run (a real `nats-server` in this process's
 *   namespace) asks an agent started outside the sandbox and gets its answer; in the same run the
 *   ways to another NATS port (`curl --proxytunnel`, `http.request`) are refused and recorded: the
 *   mesh URL is the only extra host the allow-list admits (`attack:`).
 * - The same exchange over the agent-mesh relay (the test relay in this process): `ws://` (the
 *   proxy forwards the upgrade request, then carries the frames), and `wss://` (TLS in front of the
 *   relay, for `localhost`): a tunnel, the relay's name checked.
 * - TLS through the tunnel: an HTTPS server on 127.0.0.1 with a certificate for `localhost` signed
 *   by a CA made now (`openssl`), allowed as `localhost:PORT` and by address (a name resolving to
 *   loopback is refused otherwise); the confined run's `http.request` trusts the CA (`DENO_CERT`)
 *   and gets the body. A raw front in this test sees the first bytes the proxy sent: a TLS
 *   ClientHello naming `localhost`, never a plain request — the proxy tunnelled (`CONNECT`) and
 *   the client checked the server's real name (the `wss://` test checks the same).
 */
import assert from "node:assert/strict";
import {
  settleWithin,
  spawnBlock,
  stopBlocks,
  tempDir,
  tempProject,
  testCertificate,
  testEnv,
} from "../helpers.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { natsMissing, startNats } from "../mesh/nats_server.ts";
import { startRelay } from "../../examples/mesh_relay.ts";
import { sandboxedRun, sandboxEnv, SKIP } from "./support.ts";

if (SKIP) console.warn(`net_mesh_test: skipped: ${SKIP}`);
const NATS = natsMissing();
if (NATS) console.warn(`net_mesh_test: the NATS tests are skipped: ${NATS}`);
const opts = { sanitizeResources: false, sanitizeOps: false };

const KEY_OUT = "d".repeat(64);
const KEY_IN = "e".repeat(64);
const ID_OUT = MeshIdentity.fromSeedHex(KEY_OUT).agentId;
const ID_IN = MeshIdentity.fromSeedHex(KEY_IN).agentId;

/** The agent outside the sandbox: answers every request, stops when told. */
const OUTSIDE = `
mesh.on(function(ev)
  if ev.payload.stop then bus.stop() return "bye" end
  return { echo = ev.payload.q, from = ev.meta.from }
end)
bus.serve()
`;

/**
 * The confined agent: asks the outside one (retrying while it is not subscribed yet), then, when
 * _CONTEXT names another port, tries it every way and waits (bounded) for the refusals to arrive
 * as net_denied events of its kernel session. _PROMPT: the outside agent's AgentId.
 */
const INSIDE = `
local knl = require("knl")
local out = {}
local other = _CONTEXT ~= "" and _CONTEXT or nil
local store = knl.open({ sqlite = "mesh.sqlite" })
out.session = store:session({ owner = "mesh" }, function(s)
  local deadline = std.time.now() + 60
  while true do
    local ok, r = pcall(mesh.request, _PROMPT, { q = "through the proxy" }, 20)
    if ok then out.echo = r.echo out.from = r.from break end
    if (r.kind ~= "unreachable" and r.kind ~= "timeout") or std.time.now() > deadline then
      out.error = tostring(r)
      break
    end
    std.time.sleep(0.1)
  end
  out.me = mesh.agent_id()
  if other then
    local r = sh.exec("curl -sS --max-time 20 --proxytunnel http://" .. other .. "/", { timeout = 60 })
    out.curl = "exit " .. tostring(r.code) .. " " .. (r.stdout or "") .. (r.stderr or "")
    local h = http.request({ url = "http://" .. other .. "/", timeout = 30 })
    out.http = h.ok and ("status " .. tostring(h.status) .. " " .. tostring(h.body)) or ("failed " .. tostring(h.error))
    local denied = {}
    for _ = 1, 300 do
      denied = {}
      for _, ev in ipairs(s:events()) do
        if ev.kind == "net_denied" then denied[#denied + 1] = ev.data.host .. ":" .. tostring(ev.data.port) end
      end
      if #denied >= 2 then break end
      std.time.sleep(0.1)
    end
    out.denied = table.concat(denied, " ")
  end
  pcall(mesh.request, _PROMPT, { stop = true }, 10)
  return s.id
end)
return std.json.encode(out)
`;

/** A TCP listener counting its connections (each closed at once): the port the run must not reach. */
function countingListener(): { port: number; accepted: () => number; close: () => void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let n = 0;
  void (async () => {
    for await (const c of listener) {
      n++;
      c.close();
    }
  })().catch(() => undefined);
  return { port: listener.addr.port, accepted: () => n, close: () => listener.close() };
}

/**
 * Runs the outside agent on `url` and the confined one against it; returns the confined run's
 * report, its stderr and code, and the outside agent's output.
 */
async function exchange(
  url: string,
  extra: { allow?: string; other?: string; env?: Record<string, string> } = {},
): Promise<{ report: Record<string, string>; stderr: string; code: number; outside: string }> {
  const project = await tempProject({ "inside.lua": INSIDE, "outside.lua": OUTSIDE });
  const outside = spawnBlock(
    project,
    "outside.lua",
    ["--relay", url, "--secret-key", KEY_OUT],
    testEnv(extra.env ?? {}),
  );
  try {
    const env = sandboxEnv(project, {
      ...extra.env,
      ...(extra.allow ? { AGENT_BLOCK_SANDBOX_NET_ALLOW: extra.allow } : {}),
    });
    const r = await sandboxedRun(project, "inside.lua", {
      env,
      prompt: ID_OUT,
      args: [
        "--sandbox-net",
        "allow-list",
        "--relay",
        url,
        "--secret-key",
        KEY_IN,
        "-c",
        extra.other ?? "",
      ],
    });
    let report: Record<string, string> = {};
    try {
      report = typeof r.value === "string" ? JSON.parse(r.value) : r.value;
    } catch {
      // no report: the assertions show the stderr
    }
    const [done] = await settleWithin([outside.output()], "the outside agent", 60_000);
    const outsideErr = done.status === "fulfilled" ? new TextDecoder().decode(done.value.stderr) : "";
    return { report, stderr: r.stderr, code: r.code, outside: outsideErr };
  } finally {
    await stopBlocks([outside]);
    await Deno.remove(project, { recursive: true }).catch(() => undefined);
  }
}

interface NatsSuite {
  report: Record<string, string>;
  stderr: string;
  code: number;
  outside: string;
  natsPort: number;
  otherPort: number;
  otherHits: number;
}

let natsSuite: Promise<NatsSuite> | undefined;
/** One confined NATS run, shared by the tests that read it. */
function natsRun(): Promise<NatsSuite> {
  return natsSuite ??= (async () => {
    await using srv = await startNats();
    const other = countingListener(); // another port on the NATS server's address
    try {
      const r = await exchange(srv.url, { other: `127.0.0.1:${other.port}` });
      return { ...r, natsPort: srv.port, otherPort: other.port, otherHits: other.accepted() };
    } finally {
      other.close();
    }
  })();
}

Deno.test({
  name: "sandbox net mesh: a nats:// run under the allow-list exchanges mesh messages through the proxy",
  ignore: SKIP !== undefined || NATS !== undefined,
  ...opts,
  fn: async () => {
    const s = await natsRun();
    const all = `${s.stderr}\n--- outside:\n${s.outside}`;
    assert.equal(s.code, 0, all);
    assert.equal(s.report.error, undefined, all);
    assert.equal(s.report.echo, "through the proxy", all);
    assert.equal(s.report.from, ID_IN);
    assert.equal(s.report.me, ID_IN);
    // the start-up line lists the mesh URL as allowed; the run says it went through the proxy
    assert.match(
      s.stderr,
      new RegExp(`network: allow-list through the proxy \\(.*127\\.0\\.0\\.1:${s.natsPort}\\)`),
    );
    assert.match(
      s.stderr,
      /mesh: connected to nats:\/\/127\.0\.0\.1:\d+ \(nats, through the sandbox's proxy\)/,
    );
  },
});

Deno.test({
  name:
    "attack: sandbox net mesh: the mesh URL is the only extra host reachable (another NATS port is refused)",
  ignore: SKIP !== undefined || NATS !== undefined,
  ...opts,
  fn: async () => {
    const s = await natsRun();
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.report.curl ?? "", /^exit [1-9].*(403|CONNECT)/s, s.stderr);
    assert.match(s.report.http ?? "", /^status 403 /, s.stderr);
    assert.equal(s.otherHits, 0, "the other port saw a connection");
    const other = `127.0.0.1:${s.otherPort}`;
    // both attempts recorded, and nothing else: no Deno update check either (the launcher turns
    // it off for a runtime started from source)
    const denied = (s.report.denied ?? "").split(" ");
    assert.deepEqual(denied, [other, other], s.report.denied);
    assert.ok(!denied.includes(`127.0.0.1:${s.natsPort}`), "the mesh connection was refused");
    assert.match(s.stderr, new RegExp(`--sandbox-net: refused ${other.replace(/\./g, "\\.")}`));
  },
});

Deno.test({
  name: "sandbox net mesh: a ws:// relay run under the allow-list exchanges mesh messages through the proxy",
  ignore: SKIP !== undefined,
  ...opts,
  fn: async () => {
    const relay = await startRelay();
    try {
      const s = await exchange(relay.url);
      const all = `${s.stderr}\n--- outside:\n${s.outside}`;
      assert.equal(s.code, 0, all);
      assert.equal(s.report.error, undefined, all);
      assert.equal(s.report.echo, "through the proxy", all);
      assert.equal(s.report.from, ID_IN);
      assert.match(
        s.stderr,
        /mesh: connected to ws:\/\/127\.0\.0\.1:\d+\/ws \(relay, through the sandbox's proxy\)/,
      );
      assert.equal(relay.metrics().rejected, 0);
    } finally {
      await relay.close();
    }
  },
});

/**
 * A TLS server on 127.0.0.1 with `cert` (each connection handed to `handle`) behind a raw front
 * that keeps the first bytes each connection brings: what the proxy sent, seen before TLS.
 * `port` is the front's.
 */
function tlsBehindFront(
  cert: { cert: string; key: string },
  handle: (conn: Deno.Conn) => Promise<void>,
): { port: number; firstBytes: Uint8Array[]; close: () => Promise<void> } {
  const tls = Deno.listenTls({
    hostname: "127.0.0.1",
    port: 0,
    cert: Deno.readTextFileSync(cert.cert),
    key: Deno.readTextFileSync(cert.key),
  });
  const serving = (async () => {
    for await (const conn of tls) {
      void handle(conn).catch(() => undefined).finally(() => {
        try {
          conn.close();
        } catch { /* closed */ }
      });
    }
  })().catch(() => undefined);
  const firstBytes: Uint8Array[] = [];
  const front = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const fronting = (async () => {
    for await (const conn of front) {
      void (async () => {
        const buf = new Uint8Array(16 * 1024);
        const n = await conn.read(buf);
        if (n === null) return conn.close();
        firstBytes.push(buf.slice(0, n));
        const up = await Deno.connect({ hostname: "127.0.0.1", port: tls.addr.port });
        await up.write(buf.subarray(0, n));
        await pipeBoth(conn, up);
      })().catch(() => undefined);
    }
  })().catch(() => undefined);
  return {
    port: front.addr.port,
    firstBytes,
    close: async () => {
      front.close();
      tls.close();
      await fronting;
      await serving;
    },
  };
}

/** Copies both ways between `a` and `b` until both end. */
async function pipeBoth(a: Deno.Conn, b: Deno.Conn): Promise<void> {
  await Promise.all([
    a.readable.pipeTo(b.writable).catch(() => undefined),
    b.readable.pipeTo(a.writable).catch(() => undefined),
  ]);
}

/**
 * The proxy tunnelled: the first bytes of every connection it made were a TLS ClientHello (a
 * handshake record) naming `name` — never a plain request it forwarded.
 */
function assertTunnelledTls(firstBytes: Uint8Array[], name: string): void {
  assert.ok(firstBytes.length >= 1, "the front saw no connection");
  for (const b of firstBytes) {
    assert.equal(b[0], 0x16, `not a TLS handshake: ${new TextDecoder().decode(b.subarray(0, 16))}`);
    assert.ok(new TextDecoder("latin1").decode(b).includes(name), `the ClientHello names ${name}`);
  }
}

const TLS_SCRIPT = `
local r = http.request({ url = _PROMPT, timeout = 30 })
return std.json.encode({ got = r.ok and ("status " .. tostring(r.status) .. " " .. tostring(r.body)) or ("failed " .. tostring(r.error)) })
`;

Deno.test({
  name:
    "sandbox net: TLS through the proxy's tunnel reaches a name allowed by address, its certificate checked",
  ignore: SKIP !== undefined,
  ...opts,
  fn: async () => {
    const project = await tempProject({ "tls.lua": TLS_SCRIPT });
    const cert = await testCertificate(await tempDir("ab_tls_"), "localhost");
    const server = tlsBehindFront(cert, async (conn) => {
      const buf = new Uint8Array(4096);
      let head = "";
      while (!head.includes("\r\n\r\n")) {
        const n = await conn.read(buf);
        if (n === null) return;
        head += new TextDecoder().decode(buf.subarray(0, n));
      }
      const body = "secret over tls";
      await conn.write(
        new TextEncoder().encode(
          `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
        ),
      );
    });
    try {
      const env = sandboxEnv(project, {
        // the name, and its loopback address listed as one (else the proxy refuses what it resolves to)
        AGENT_BLOCK_SANDBOX_NET_ALLOW: `localhost:${server.port},127.0.0.1:${server.port}`,
        DENO_CERT: cert.ca,
      });
      const r = await sandboxedRun(project, "tls.lua", {
        env,
        prompt: `https://localhost:${server.port}/secret`,
        args: ["--sandbox-net", "allow-list"],
      });
      const report = typeof r.value === "string" ? JSON.parse(r.value) : r.value;
      assert.equal(r.code, 0, r.stderr);
      assert.equal(report.got, "status 200 secret over tls", r.stderr);
      assertTunnelledTls(server.firstBytes, "localhost");
    } finally {
      await server.close();
      await Deno.remove(project, { recursive: true }).catch(() => undefined);
    }
  },
});

Deno.test({
  name:
    "sandbox net mesh: a wss:// relay run under the allow-list tunnels through the proxy, the relay's name checked",
  ignore: SKIP !== undefined,
  ...opts,
  fn: async () => {
    const relay = await startRelay();
    const cert = await testCertificate(await tempDir("ab_tls_"), "localhost");
    // TLS in front of the relay, for `localhost`
    const server = tlsBehindFront(cert, async (conn) => {
      const up = await Deno.connect({ hostname: "127.0.0.1", port: relay.port });
      await pipeBoth(conn, up);
    });
    try {
      const url = `wss://localhost:${server.port}/ws`;
      const s = await exchange(url, {
        allow: `127.0.0.1:${server.port}`, // localhost resolves to loopback: listed by address
        env: { DENO_CERT: cert.ca },
      });
      const all = `${s.stderr}\n--- outside:\n${s.outside}`;
      assert.equal(s.code, 0, all);
      assert.equal(s.report.error, undefined, all);
      assert.equal(s.report.echo, "through the proxy", all);
      assert.equal(s.report.from, ID_IN);
      assert.match(
        s.stderr,
        /mesh: connected to wss:\/\/localhost:\d+\/ws \(relay, through the sandbox's proxy\)/,
      );
      assertTunnelledTls(server.firstBytes, "localhost");
    } finally {
      await server.close();
      await relay.close();
    }
  },
});
