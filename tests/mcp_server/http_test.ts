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
import { runCli, waitFor } from "../helpers.ts";
import {
  alive,
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

Deno.test("http: the checks in front of MCP refuse forged Host/Origin and a missing token", async () => {
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
    "http server: forged Host or Origin refused, token required, both eras served, cancellation ends the run",
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
          assert(alive(runPid) && alive(shellPid));
          cancel("test cancels");
          await assertRejects(() => pending);
          await waitFor(
            () => !alive(runPid) && !alive(shellPid),
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

Deno.test({
  name: "http server: 2025-era sessions are bounded",
  ...opts,
  fn: async () => {
    const p = await freshProject();
    const srv = await startHttpServer(p.root, p.home);
    try {
      const host = new URL(srv.url).host;
      for (let i = 0; i < MAX_LEGACY_SESSIONS; i++) {
        assertEquals((await rawHttp(srv.url, { Host: host }, INITIALIZE_BODY)).status, 200);
      }
      const over = await rawHttp(srv.url, { Host: host }, INITIALIZE_BODY);
      assertEquals(over.status, 503);
      assertStringIncludes(over.body, "Too many open sessions");
    } finally {
      await srv.stop();
    }
  },
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
        await waitFor(() => !alive(sleeper), { what: `sleeper ${sleeper} to end`, timeoutMs: 30_000 });
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
