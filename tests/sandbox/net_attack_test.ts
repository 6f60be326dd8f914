/**
 * The sandbox's network allow-list (`--sandbox-net allow-list`), attacked. One sandboxed run of
 * `net.lua` reaches the allowed hosts every way a run does — `http.request`, an `sh.exec` curl,
 * `fetch` in a Deno child, a model call (`llm.chat` to `OPENAI_BASE_URL`, allowed as a configured
 * host without being listed) and an MCP HTTP server — and the same ways a host not on the list; then tries the ways
 * around the proxy: a direct TCP connection (curl `--noproxy`, and from a Deno child), UDP and DNS
 * to an outside resolver, an IP literal of a name that is listed only by name, a listed name that
 * resolves to 127.0.0.1 (DNS rebinding), `CONNECT` to the allowed address on another port, an
 * abstract Unix socket to a process outside, a child that unsets the proxy variables, and the
 * proxy's own socket without the run's token (what a process of another run could try).
 *
 * The servers live in this test process, outside the run's network namespace, on 127.0.0.1:
 * `allowed` (listed by address), `other` (not listed), `byName` (listed only as
 * `localhost:PORT`), the model mock and the MCP echo server (listed), a UDP socket and an
 * abstract Unix socket. Each `attack:` test checks one attempt's report and that the server it
 * aimed at saw no connection; refusals must be recorded (one stderr line per host, a `net_denied`
 * event each in the run's kernel session). The last test prints `escapes: E/N`.
 */
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { tempProject } from "../helpers.ts";
import { startEchoHttp } from "../host/mcp/peers.ts";
import { answerHttp, sandboxedRun, sandboxEnv, SKIP } from "./support.ts";

if (SKIP) console.warn(`net_attack_test: skipped: ${SKIP}`);
const opts = { ignore: SKIP !== undefined, sanitizeResources: false, sanitizeOps: false };

const SCRIPT = new URL("./net.lua", import.meta.url).pathname;
const PROBE = new URL("./net_probe.ts", import.meta.url).pathname;

const ESCAPED = "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nescaped";

/** A raw TCP server counting the connections it gets; each is answered `200 escaped`. */
function countingServer(): { port: number; accepted: () => number; close: () => Promise<void> } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let n = 0;
  const serving = (async () => {
    for await (const conn of listener) {
      n++;
      void answerHttp(conn, ESCAPED);
    }
  })().catch(() => undefined);
  return {
    port: listener.addr.port,
    accepted: () => n,
    close: async () => {
      listener.close();
      await serving;
    },
  };
}

interface Suite {
  report: Record<string, string>;
  probe: Record<string, string>;
  stderr: string;
  code: number;
  allowedHits: number;
  otherHits: number;
  byNameHits: number;
  udpGot: number;
  abstractGot: number;
  ports: { other: number; byName: number };
}

const WANT_DENIALS = 8;

async function suite(): Promise<Suite> {
  const project = await tempProject({ "net.lua": Deno.readTextFileSync(SCRIPT) });
  let allowedHits = 0;
  const allowed = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => {
    allowedHits++;
    return new Response("hello");
  });
  const model = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () =>
    Response.json({
      id: "chatcmpl-net",
      object: "chat.completion",
      created: 1,
      model: "gpt-4o-mini",
      choices: [{
        index: 0,
        message: { role: "assistant", content: "from the mock" },
        finish_reason: "stop",
      }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    }));
  const other = countingServer();
  const byName = countingServer();
  const echo = await startEchoHttp();
  const udp = createSocket("udp4");
  let udpGot = 0;
  udp.on("message", () => udpGot++);
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  const abstractName = `ab-net-test-${crypto.randomUUID()}`;
  const abstract = Deno.listen({ transport: "unix", path: "\0" + abstractName });
  let abstractGot = 0;
  const abstractServing = (async () => {
    for await (const c of abstract) {
      abstractGot++;
      c.close();
    }
  })().catch(() => undefined);
  try {
    const a = `http://127.0.0.1:${allowed.addr.port}`;
    const echoPort = new URL(echo.url).port;
    const prompt = JSON.stringify({
      allowed: a,
      other: `http://127.0.0.1:${other.port}`,
      by_name: `http://localhost:${byName.port}`,
      by_literal: `http://127.0.0.1:${byName.port}`,
      other_port_connect: `http://127.0.0.1:${other.port}`,
      mcp: echo.url,
      mcp_other: `http://127.0.0.1:${other.port}/mcp`,
      deno: Deno.execPath(),
      probe: PROBE,
      probe_arg: JSON.stringify({
        udp_port: udp.address().port,
        abstract: abstractName,
        direct_port: other.port,
        allowed: `${a}/hello`,
        other: `http://127.0.0.1:${other.port}/hello`,
      }),
      want_denials: WANT_DENIALS,
    });
    const env = sandboxEnv(project, {
      AGENT_BLOCK_SANDBOX_NET_ALLOW:
        `127.0.0.1:${allowed.addr.port}, localhost:${byName.port},127.0.0.1:${echoPort}`,
      OPENAI_BASE_URL: `http://127.0.0.1:${model.addr.port}/v1`,
    });
    const r = await sandboxedRun(project, "net.lua", { env, prompt, args: ["--sandbox-net", "allow-list"] });
    let probe: Record<string, string> = {};
    try {
      probe = JSON.parse(r.value.probe ?? "{}");
    } catch {
      // reported as it came: the probe tests say so
    }
    return {
      report: r.value,
      probe,
      stderr: r.stderr,
      code: r.code,
      allowedHits,
      otherHits: other.accepted(),
      byNameHits: byName.accepted(),
      udpGot,
      abstractGot,
      ports: { other: other.port, byName: byName.port },
    };
  } finally {
    await allowed.shutdown();
    await model.shutdown();
    await other.close();
    await byName.close();
    await echo.stop();
    udp.close();
    abstract.close();
    await abstractServing;
    await Deno.remove(project, { recursive: true });
  }
}

let shared: Promise<Suite> | undefined;
const run = () => shared ??= suite();

let attempts = 0;
let escapes = 0;

function attack(name: string, check: (s: Suite) => void): void {
  Deno.test({
    name: `attack: sandbox net: ${name}`,
    ...opts,
    fn: async () => {
      const s = await run();
      attempts++;
      try {
        check(s);
      } catch (e) {
        escapes++;
        throw e;
      }
    },
  });
}

function said(s: Suite, key: string): string {
  const v = s.report[key];
  assert.ok(v !== undefined, `no report for ${key}: ${JSON.stringify(s.report)}\n${s.stderr}`);
  return v;
}

Deno.test({
  name:
    "sandbox net: the allowed hosts work through the proxy (http.request, curl, fetch, a model call, MCP HTTP)",
  ...opts,
  fn: async () => {
    const s = await run();
    assert.equal(s.code, 0, s.stderr);
    assert.match(said(s, "http.request allowed"), /^status 200 hello/);
    assert.match(said(s, "curl allowed"), /^exit 0 hello/);
    assert.match(said(s, "llm allowed"), /^answered from the mock/);
    assert.match(said(s, "mcp allowed"), /^answered through the proxy/);
    assert.equal(s.probe.fetch_allowed, "status 200 hello", "fetch in a Deno child");
    assert.ok(s.allowedHits >= 2);
    // the start-up line lists what is allowed, the configured model endpoint included
    assert.match(
      s.stderr,
      /network: allow-list through the proxy \(127\.0\.0\.1:\d+, localhost:\d+, 127\.0\.0\.1:\d+, /,
    );
    assert.match(s.stderr, /api\.anthropic\.com:443/);
  },
});

attack("http.request to a host not on the list", (s) => {
  assert.match(said(s, "http.request other"), /^status 403 /);
  assert.equal(s.otherHits, 0);
});
attack("fetch (a Deno child) to a host not on the list", (s) => {
  assert.match(s.probe.fetch_other ?? said(s, "probe"), /^status 403 /);
  assert.equal(s.otherHits, 0);
});
attack("curl to a host not on the list", (s) => {
  assert.match(said(s, "curl other"), /^exit [1-9]/);
  assert.doesNotMatch(said(s, "curl other"), /escaped/);
  assert.equal(s.otherHits, 0);
});
attack("a model call to a base URL not on the list", (s) => {
  assert.match(said(s, "llm other"), /^raised: .*403/);
  assert.equal(s.otherHits, 0);
});
attack("an MCP HTTP server not on the list", (s) => {
  assert.match(said(s, "mcp other"), /^raised: /);
  assert.equal(s.otherHits, 0);
});
attack("a listed name that resolves to 127.0.0.1 (DNS rebinding)", (s) => {
  assert.match(said(s, "rebinding"), /^exit [1-9]/);
  assert.equal(s.byNameHits, 0);
});
attack("the IP literal of a name listed only by name", (s) => {
  assert.match(said(s, "literal"), /^exit [1-9]/);
  assert.equal(s.byNameHits, 0);
});
attack("CONNECT to the allowed address on another port", (s) => {
  assert.match(said(s, "connect other port"), /^exit [1-9].*(403|CONNECT)/s);
  assert.equal(s.otherHits, 0);
});
attack("a child that unsets the proxy variables", (s) => {
  assert.match(said(s, "unset proxy"), /^exit [1-9]/);
  assert.doesNotMatch(said(s, "unset proxy"), /hello/);
});
attack("a direct TCP connection ignoring the proxy (curl --noproxy)", (s) => {
  assert.match(said(s, "noproxy"), /^exit [1-9]/);
  assert.doesNotMatch(said(s, "noproxy"), /hello/);
});
attack("a direct TCP connection from a Deno child", (s) => {
  assert.match(s.probe.tcp_direct ?? said(s, "probe"), /^error: /);
  assert.match(s.probe.tcp_outside ?? said(s, "probe"), /^error: .*unreachable/i);
  assert.equal(s.otherHits, 0);
});
attack("UDP to a socket outside", (s) => {
  assert.ok(s.probe.udp_loopback !== undefined, said(s, "probe"));
  assert.match(s.probe.udp_outside, /^error: /);
  assert.equal(s.udpGot, 0, "a datagram reached the socket outside");
});
attack("DNS to an outside resolver", (s) => {
  assert.match(s.probe.dns_outside ?? said(s, "probe"), /^error: /);
});
attack("the proxy's socket used without the run's token (as another run would)", (s) => {
  assert.equal(s.probe.proxy_socket_no_token ?? said(s, "probe"), "closed unanswered");
  assert.ok(s.allowedHits >= 2, "the allowed server still answered the run itself");
});
attack("an abstract Unix socket to a process outside", (s) => {
  assert.match(s.probe.abstract_unix ?? said(s, "probe"), /^error: .*refused/i);
  assert.equal(s.abstractGot, 0);
});

Deno.test({
  name:
    "sandbox net: every refused connection is recorded (a net_denied event each, one stderr line per host)",
  ...opts,
  fn: async () => {
    const s = await run();
    const denied = said(s, "denied").split(" ").filter((d) => d !== "");
    assert.ok(denied.length >= WANT_DENIALS, `net_denied events: ${denied.join(" ")}`);
    for (const key of ["http.request other", "rebinding", "literal"]) said(s, key);
    const lines = s.stderr.split("\n").filter((l) => l.includes("--sandbox-net: refused"));
    const hosts = lines.map((l) => /refused (\S+)/.exec(l)![1]);
    assert.equal(new Set(hosts).size, hosts.length, `one line per host:\n${lines.join("\n")}`);
    // the other server (four ways, one line), the name listed for 127.0.0.1 and its literal
    assert.equal(hosts.filter((h) => h === `127.0.0.1:${s.ports.other}`).length, 1, lines.join("\n"));
    assert.ok(hosts.includes(`localhost:${s.ports.byName}`), lines.join("\n"));
    assert.ok(hosts.includes(`127.0.0.1:${s.ports.byName}`), lines.join("\n"));
    for (const d of denied) assert.ok(hosts.includes(d), `${d} refused but not said on stderr`);
  },
});

Deno.test({
  name: "sandbox net: the escape count",
  ...opts,
  fn: () => {
    console.log(`escapes: ${escapes}/${attempts}`);
    assert.equal(escapes, 0);
  },
});
