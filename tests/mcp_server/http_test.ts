/**
 * `agent-block mcp --http`: the loopback-only listen address, Host/Origin validation, the bearer
 * token, and the v2 SDK client over Streamable HTTP in both eras (including a cancellation that
 * ends the run's processes), against real server processes.
 */
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  allowedHostnames,
  isLoopback,
  MAX_LEGACY_SESSIONS,
  parseListenAddress,
  readTokenFile,
  refusal,
} from "../../src/mcp_server/http.ts";
import { AgentBlockError, UsageError } from "../../src/errors.ts";
import { processAlive, runCli, waitFor } from "../helpers.ts";
import {
  assert,
  assertEquals,
  assertRejects,
  assertStringIncludes,
  blockEnum,
  cancellableRun,
  freshProject,
  INITIALIZE_BODY,
  rawHttp,
  readPid,
  resultText,
  startHttpServer,
  waitForFile,
} from "./mcp_helpers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test("http: only loopback listen addresses are accepted", () => {
  assertEquals(parseListenAddress("127.0.0.1:8765"), { hostname: "127.0.0.1", port: 8765 });
  assertEquals(parseListenAddress("[::1]:0"), { hostname: "::1", port: 0 });
  assertEquals(parseListenAddress("localhost:1"), { hostname: "localhost", port: 1 });
  assertEquals(parseListenAddress("127.3.2.1:9"), { hostname: "127.3.2.1", port: 9 });
  for (const bad of ["0.0.0.0:80", "192.168.1.4:80", "example.com:80", "[::]:80"]) {
    let err: unknown;
    try {
      parseListenAddress(bad);
    } catch (e) {
      err = e;
    }
    assert(err instanceof UsageError, `${bad} should be refused`);
    assertStringIncludes((err as Error).message, "only loopback addresses");
  }
  for (const bad of ["8765", "127.0.0.1", "127.0.0.1:99999", "127.0.0.1:x"]) {
    let err: unknown;
    try {
      parseListenAddress(bad);
    } catch (e) {
      err = e;
    }
    assert(err instanceof UsageError, `${bad} should be a usage error`);
  }
  assert(isLoopback("127.255.0.1") && isLoopback("[::1]") && !isLoopback("127.0.0.256"));
  assertEquals(allowedHostnames("127.0.0.2").sort(), ["127.0.0.1", "127.0.0.2", "[::1]", "localhost"]);
  assertEquals(allowedHostnames("::1").sort(), ["127.0.0.1", "[::1]", "localhost"]);
});

Deno.test("attack: forged Host/Origin and a missing or wrong token are refused by the checks in front of MCP", async () => {
  const allowed = allowedHostnames("127.0.0.1");
  const req = (headers: Record<string, string>) =>
    new Request("http://127.0.0.1:9/mcp", { method: "POST", headers, body: "{}" });
  assertEquals(refusal(req({ host: "127.0.0.1:9" }), allowed, undefined), undefined);
  assertEquals(
    refusal(req({ host: "localhost:9", origin: "http://localhost:3000" }), allowed, undefined),
    undefined,
  );
  assertEquals(refusal(req({ host: "evil.example.com" }), allowed, undefined)?.status, 403);
  assertEquals(
    refusal(req({ host: "127.0.0.1:9", origin: "http://evil.example.com" }), allowed, undefined)?.status,
    403,
  );
  assertEquals(refusal(req({ host: "127.0.0.1:9", origin: "null" }), allowed, undefined)?.status, 403);
  const noToken = refusal(req({ host: "127.0.0.1:9" }), allowed, "s3cret");
  assertEquals(noToken?.status, 401);
  assertStringIncludes(noToken?.headers.get("www-authenticate") ?? "", "Bearer");
  assertEquals(
    refusal(req({ host: "127.0.0.1:9", authorization: "Bearer wrong" }), allowed, "s3cret")?.status,
    401,
  );
  assertEquals(
    refusal(req({ host: "127.0.0.1:9", authorization: "Bearer s3cret" }), allowed, "s3cret"),
    undefined,
  );
  // Host is checked before the token: a forged Host with the right token is still refused.
  assertEquals(
    refusal(req({ host: "evil.example.com", authorization: "Bearer s3cret" }), allowed, "s3cret")?.status,
    403,
  );

  const dir = await Deno.makeTempDir({ prefix: "ab_http_tok_" });
  Deno.writeTextFileSync(join(dir, "t"), "  abc123\n");
  assertEquals(readTokenFile(join(dir, "t")), "abc123");
  Deno.writeTextFileSync(join(dir, "empty"), "\n");
  let err: unknown;
  try {
    readTokenFile(join(dir, "empty"));
  } catch (e) {
    err = e;
  }
  assert(err instanceof AgentBlockError);
  assertStringIncludes((err as Error).message, "is empty");
});

Deno.test("http: the CLI refuses a non-loopback address and --token-file without --http", async () => {
  const p = await freshProject();
  const a = await runCli(["mcp", "-p", p.root, "--http", "0.0.0.0:0"]);
  assertEquals(a.code, 2);
  assertStringIncludes(a.stderr, "only loopback addresses");
  const b = await runCli(["mcp", "-p", p.root, "--token-file", "x"]);
  assertEquals(b.code, 2);
  assertStringIncludes(b.stderr, "--token-file needs --http");
  const c = await runCli(["mcp", "-p", join(p.root, "nope")]);
  assertEquals(c.code, 1);
  assertStringIncludes(c.stderr, "does not exist");
  const d = await runCli(["mcp", "--run-timeout", "0"]);
  assertEquals(d.code, 2);
  const e = await runCli(["mcp", "--progress-secs", "-1"]);
  assertEquals(e.code, 2);
  assertStringIncludes(e.stderr, "--progress-secs");
});

Deno.test({
  name:
    "attack: the HTTP server refuses a forged Host or Origin and a missing token; both eras served, cancellation ends the run",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const tokenFile = join(p.scratch, "token");
    Deno.writeTextFileSync(tokenFile, "tok-" + crypto.randomUUID() + "\n");
    const token = Deno.readTextFileSync(tokenFile).trim();
    const srv = await startHttpServer(p.root, p.home, ["--token-file", tokenFile]);
    try {
      const u = new URL(srv.url);
      const host = u.host;
      const auth = { Authorization: `Bearer ${token}` };

      assertEquals(
        (await rawHttp(srv.url, { Host: "evil.example.com", ...auth }, INITIALIZE_BODY)).status,
        403,
      );
      assertEquals(
        (await rawHttp(srv.url, { Host: `evil.example.com:${u.port}`, ...auth }, INITIALIZE_BODY)).status,
        403,
      );
      assertEquals(
        (await rawHttp(srv.url, { Host: host, Origin: "http://evil.example.com", ...auth }, INITIALIZE_BODY))
          .status,
        403,
      );
      assertEquals((await rawHttp(srv.url, { Host: host }, INITIALIZE_BODY)).status, 401);
      assertEquals(
        (await rawHttp(srv.url, { Host: host, Authorization: "Bearer nope" }, INITIALIZE_BODY)).status,
        401,
      );
      const ok = await rawHttp(
        srv.url,
        { Host: host, Origin: "http://localhost:5173", ...auth },
        INITIALIZE_BODY,
      );
      assertEquals(ok.status, 200);
      assertStringIncludes(ok.body, '"serverInfo"');
      assertEquals(
        (await rawHttp(srv.url, { Host: `localhost:${u.port}`, ...auth }, INITIALIZE_BODY)).status,
        200,
      );
      const other = await rawHttp(
        srv.url.replace("/mcp", "/other"),
        { Host: host, ...auth },
        INITIALIZE_BODY,
      );
      assertEquals(other.status, 404);
      // A declared body past the guard's limit is refused before any of it is read.
      const tooBig = await rawHttp(
        srv.url,
        { Host: host, ...auth, "Content-Length": String(64 * 1024 * 1024) },
        INITIALIZE_BODY,
      );
      assertEquals(tooBig.status, 413);
      assertStringIncludes(tooBig.body, "Payload Too Large");

      for (const era of ["legacy", "auto"] as const) {
        const client = new Client(
          { name: "agent-block-test", version: "0" },
          era === "auto" ? { versionNegotiation: { mode: "auto" } } : {},
        );
        await client.connect(
          new StreamableHTTPClientTransport(new URL(srv.url), { requestInit: { headers: auth } }),
        );
        try {
          assertEquals(client.getNegotiatedProtocolVersion(), era === "auto" ? "2026-07-28" : "2025-11-25");
          assert((await blockEnum(client)).includes("echo"));
          const r = await client.callTool({ name: "run_block", arguments: { block: "echo", prompt: era } });
          assertEquals(JSON.parse(resultText(r)), { prompt: era, context: null });
          const raised = await client.callTool({ name: "run_block", arguments: { block: "raises" } });
          assertEquals(raised.isError, true);
          assertStringIncludes(resultText(raised), "raises.lua refused: no prompt");
          const src = await client.readResource({ uri: "agent-block://blocks/where" });
          assertStringIncludes((src.contents[0] as { text: string }).text, '"project-local"');

          // Cancellation over HTTP ends the run's processes.
          const dir = join(p.scratch, era);
          Deno.mkdirSync(dir);
          const { pending, cancel } = cancellableRun(client, { block: "tree", prompt: dir });
          await waitForFile(join(dir, "shell.pid"), `the tree block (${era}) to start its shell`);
          const runPid = readPid(join(dir, "run.pid"));
          const shellPid = readPid(join(dir, "shell.pid"));
          assert(processAlive(runPid) && processAlive(shellPid));
          cancel("test cancels");
          await assertRejects(() => pending);
          await waitFor(
            () => !processAlive(runPid) && !processAlive(shellPid),
            { what: `the ${era} run's processes to end`, timeoutMs: 30_000 },
          );
        } finally {
          await client.close();
        }
      }
    } finally {
      await srv.stop();
    }
    assertEquals((await srv.proc.status).code, 0, srv.stderr());
  },
});

/** Opens a 2025-era session with a raw `initialize` and abandons it; answers its id. */
async function abandonedSession(url: string): Promise<string> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: INITIALIZE_BODY,
  });
  await res.text();
  assertEquals(res.status, 200);
  const sid = res.headers.get("mcp-session-id");
  assert(sid, "initialize answered a session id");
  return sid;
}

/** The status of a `ping` in session `sid` (404 once the session is gone). */
async function pingStatus(url: string, sid: string): Promise<number> {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-session-id": sid,
      "mcp-protocol-version": "2025-11-25",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }),
  });
  await res.text();
  return res.status;
}

Deno.test({
  name: "attack: abandoned 2025-era sessions cannot lock a new client out (the one idle longest is evicted)",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const srv = await startHttpServer(p.root, p.home);
    try {
      const sids: string[] = [];
      for (let i = 0; i < MAX_LEGACY_SESSIONS + 6; i++) sids.push(await abandonedSession(srv.url));
      // The table holds MAX_LEGACY_SESSIONS: the six idle longest made room for the last six.
      for (const sid of sids.slice(0, 6)) assertEquals(await pingStatus(srv.url, sid), 404);
      assertEquals(await pingStatus(srv.url, sids[sids.length - 1]), 200);
      assertStringIncludes(srv.stderr(), `closed 2025-era session ${sids[0]}: evicted for a new client`);
      // A real client still gets a session and is served.
      const client = new Client({ name: "late-client", version: "0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
      try {
        const r = await client.callTool({ name: "run_block", arguments: { block: "echo", prompt: "late" } });
        assertEquals(JSON.parse(resultText(r)), { prompt: "late", context: null });
      } finally {
        await client.close();
      }
    } finally {
      await srv.stop();
    }
  },
});

Deno.test({
  name:
    "attack: an abandoned 2025-era session expires after --session-idle-secs; one with a call in flight does not",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    // The busy session's call must reach the server within the idle bound of its initialize: 0.5 s
    // was once passed on a loaded machine (the session expired first and its call never ran).
    const srv = await startHttpServer(p.root, p.home, ["--session-idle-secs", "3"]);
    try {
      // A session whose only request is a call that runs until told to finish (no event stream).
      const busy = await abandonedSession(srv.url);
      const call = await fetch(srv.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-session-id": busy,
          "mcp-protocol-version": "2025-11-25",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "run_block", arguments: { block: "rendezvous", prompt: p.scratch, context: "a" } },
        }),
      });
      await waitForFile(join(p.scratch, "a.here"), "the rendezvous block to start");
      const abandoned = await abandonedSession(srv.url);
      await waitFor(() => srv.stderr().includes(`closed 2025-era session ${abandoned}: expired after`), {
        what: "the abandoned session to expire",
        timeoutMs: 60_000,
      });
      assertEquals(await pingStatus(srv.url, abandoned), 404);
      // The busy session has been idle longer, but its call is in flight: it is still there.
      assert(!srv.stderr().includes(`session ${busy}:`), srv.stderr());
      Deno.writeTextFileSync(join(p.scratch, "b.here"), "b");
      assertStringIncludes(await call.text(), '\\"met\\":\\"b\\"');
      // Done, it goes idle and expires in turn.
      await waitFor(() => srv.stderr().includes(`closed 2025-era session ${busy}: expired after`), {
        what: "the finished session to expire",
        timeoutMs: 60_000,
      });
    } finally {
      await srv.stop();
    }
  },
});

Deno.test("http: --session-idle-secs is checked and needs --http", async () => {
  const p = await freshProject();
  const a = await runCli(["mcp", "-p", p.root, "--http", "127.0.0.1:0", "--session-idle-secs", "0"]);
  assertEquals(a.code, 2);
  assertStringIncludes(a.stderr, "--session-idle-secs must be a positive number of seconds, got '0'");
  const b = await runCli(["mcp", "-p", p.root, "--session-idle-secs", "5"]);
  assertEquals(b.code, 2);
  assertStringIncludes(b.stderr, "--session-idle-secs needs --http");
});

for (const era of ["legacy", "auto"] as const) {
  Deno.test({
    name: `http server (${era} client): SIGTERM answers the calls in flight, ends their whole trees, exits 0`,
    ...opts,
    fn: async () => {
      const p = await freshProject();
      const srv = await startHttpServer(p.root, p.home);
      const client = new Client(
        { name: "agent-block-test", version: "0" },
        era === "auto" ? { versionNegotiation: { mode: "auto" } } : {},
      );
      await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
      try {
        const pending = client.callTool(
          { name: "run_block", arguments: { block: "busy", prompt: p.scratch } },
          { timeout: 300_000 },
        );
        const pidFile = join(p.scratch, "sleeper.pid");
        await waitForFile(pidFile, "the busy block to start its sleeper");
        const sleeper = readPid(pidFile);
        srv.proc.kill("SIGTERM");
        const r = await pending;
        assertEquals(r.isError, true);
        assertEquals(resultText(r), "block 'busy' was stopped: the server is shutting down");
        assertEquals((await srv.proc.status).code, 0, srv.stderr());
        await waitFor(() => !processAlive(sleeper), { what: `sleeper ${sleeper} to end`, timeoutMs: 30_000 });
      } finally {
        await client.close().catch(() => undefined);
        await srv.stop();
      }
    },
  });
}

Deno.test({
  name: "http server: clients of both eras are told when blocks come and go",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const srv = await startHttpServer(p.root, p.home);
    const clients: Client[] = [];
    try {
      const seen = new Map<string, string[][]>();
      let wake = () => {};
      for (const era of ["legacy", "auto"] as const) {
        seen.set(era, []);
        const client = new Client({ name: `watch-${era}`, version: "0" }, {
          ...(era === "auto" ? { versionNegotiation: { mode: "auto" as const } } : {}),
          listChanged: {
            tools: {
              onChanged: (error, tools) => {
                if (error) throw error;
                const t = tools?.find((x) => x.name === "run_block");
                const props = t?.inputSchema.properties as Record<string, { enum?: string[] }> | undefined;
                seen.get(era)!.push(props?.block.enum ?? []);
                wake();
              },
            },
          },
        });
        await client.connect(new StreamableHTTPClientTransport(new URL(srv.url)));
        clients.push(client);
        assert((await blockEnum(client)).includes("echo"));
      }
      const bothSaw = (cond: (names: string[]) => boolean) =>
        [...seen.values()].every((lists) => lists.length > 0 && cond(lists[lists.length - 1]));
      const next = (what: string, cond: (names: string[]) => boolean) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new Error(`not every client heard of ${what}: ${JSON.stringify([...seen])}`)),
            60_000,
          );
          wake = () => {
            if (bothSaw(cond)) {
              clearTimeout(timer);
              resolve();
            }
          };
          wake();
        });
      Deno.writeTextFileSync(join(p.root, "blocks", "announced.lua"), '-- New.\nreturn "new"\n');
      await next("the new block", (n) => n.includes("announced"));
      Deno.removeSync(join(p.root, "blocks", "announced.lua"));
      await next("the block gone", (n) => !n.includes("announced") && n.includes("echo"));
    } finally {
      for (const c of clients) await c.close().catch(() => undefined);
      await srv.stop();
    }
  },
});
