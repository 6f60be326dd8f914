/**
 * The abort of a Streamable HTTP request reaches the server: the client closes the request's
 * exchange (how a 2026-07-28 client cancels), also in a long-lived process where a garbage
 * collection ran between the response's headers and the abort. Deno's fetch ties the end of a
 * response body to an internal signal that only a weak reference connects to the request's
 * signal, so after such a collection the abort used to be lost and the server's tool ran on
 * (`src/clients/mcp/limits.ts`). Real processes: our echo server over HTTP, and a client process
 * (`tests/fixtures/mcp/gc_abort_client.ts`) that forces the collections.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { waitFor } from "../../helpers.ts";
import { DENO, FIXTURES, startEchoHttp } from "../../host/mcp/peers.ts";

Deno.test("an aborted Streamable HTTP request closes its exchange, even after a GC in a long-lived client", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_mcp_abort_gc_" });
  const log = join(dir, "cancel.log");
  const server = await startEchoHttp(["--test-tools", "--cancel-log", log]);
  const client = new Deno.Command(DENO, {
    args: [
      "run",
      "-A",
      "--quiet",
      "--v8-flags=--expose-gc",
      join(FIXTURES, "gc_abort_client.ts"),
      server.url,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const pumps = Promise.all([client.stdout, client.stderr].map(async (s) => {
    const dec = new TextDecoder();
    for await (const chunk of s) out += dec.decode(chunk, { stream: true });
  }));
  const readLog = () => {
    try {
      return Deno.readTextFileSync(log);
    } catch {
      return "";
    }
  };
  try {
    await waitFor(() => out.includes("ABORTED"), {
      what: () => `the client to abort its call; its output:\n${out}`,
      timeoutMs: 60_000,
    });
    assert.match(out, /ABORTED failed: .*the caller gave up/, "the call fails with the abort's reason");
    // The client process lives on: only its closing the exchange can end the server's tool.
    const id = readLog().match(/^started (\S+)$/m)?.[1];
    assert.ok(id !== undefined, `the server started the tool; its log: ${JSON.stringify(readLog())}`);
    await waitFor(() => readLog().split("\n").includes(`cancelled ${id}`), {
      what: () => `the server to see the exchange closed; its log: ${JSON.stringify(readLog())}`,
    });
  } finally {
    // The client exits when its stdin closes; killed as well, so a failed test never hangs here.
    await client.stdin.close().catch(() => undefined);
    try {
      client.kill("SIGKILL");
    } catch { /* already gone */ }
    await client.status;
    await pumps;
    await server.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
