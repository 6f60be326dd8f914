/**
 * What an MCP server may send, against real servers: a result past `max_message_bytes` fails a
 * chunk past the limit over stdio and over Streamable HTTP (an event stream or a JSON body) —
 * proven by the bytes the server managed to produce before the client hung up, not by timing —
 * a big result within the limit arrives whole, and a Streamable HTTP server that dies in the
 * middle of a call fails the call when the connection drops, not at the request timeout.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { resultOf, runLua, tempDir } from "../../helpers.ts";
import { DENO, FIXTURES, lq, startEchoHttp, startPeer } from "./peers.ts";

const MiB = 1024 * 1024;
const HUGE_STDIO = join(FIXTURES, "huge_result_server.ts");
const HUGE_HTTP = join(FIXTURES, "huge_http_server.ts");

function produced(countFile: string): number {
  try {
    return Number(Deno.readTextFileSync(countFile));
  } catch {
    return 0;
  }
}

Deno.test("attack: a stdio MCP server answering a 300 MB result is cut off a chunk past max_message_bytes", async () => {
  const dir = await tempDir("ab_mcp_huge_");
  const count = join(dir, "count");
  const out = await runLua(`
    assert(mcp.connect("huge", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(HUGE_STDIO)}, "--count-file", ${
    lq(count)
  } }, { era = "legacy", max_message_bytes = ${MiB} }))
    local r = mcp.call("huge", "huge", { bytes = ${300 * MiB} })
    return std.json.encode({ ok = r.ok, error = r.error, kind = r.kind })
  `);
  const r = resultOf(out);
  assert.equal(r.ok, false);
  assert.match(r.error, /tools\/call 'huge' on server 'huge' failed: /);
  assert.match(r.error, /server 'huge' sent a message larger than 1048576 bytes \(max_message_bytes\)/);
  assert.equal(r.kind, "closed");
  const sent = produced(count);
  assert.ok(sent > 0 && sent < 8 * MiB, `the server wrote ${sent} bytes before the client hung up`);
});

Deno.test("an 8 MB result over stdio arrives whole (within the default limit)", async () => {
  const out = await runLua(`
    assert(mcp.connect("huge", ${lq(DENO)}, { "run", "-A", "--quiet", ${
    lq(HUGE_STDIO)
  } }, { era = "legacy" }))
    local r = mcp.call("huge", "huge", { bytes = ${8 * MiB} })
    local text = r.content[1].text
    return std.json.encode({ ok = r.ok, n = #text, all_a = text:find("[^a]") == nil })
  `);
  assert.deepEqual(resultOf(out), { ok: true, n: 8 * MiB, all_a: true });
});

for (const as of ["sse", "json"] as const) {
  Deno.test(`attack: a Streamable HTTP server sending a 300 MB result (${as}) is cut off early`, async () => {
    const dir = await tempDir("ab_mcp_huge_http_");
    const count = join(dir, "count");
    const peer = await startPeer(
      [HUGE_HTTP, "--count-file", count],
      (o) => o.match(/HUGE_MCP_URL=(\S+)/)?.[1],
    );
    try {
      const out = await runLua(`
        assert(mcp.connect_http("big", ${
        lq(peer.url)
      }, { era = "legacy", max_message_bytes = ${MiB}, timeout = 60 }))
        local r = mcp.call("big", "huge", { bytes = ${300 * MiB}, as = "${as}" })
        return std.json.encode({ ok = r.ok, error = r.error, kind = r.kind })
      `);
      const r = resultOf(out);
      assert.equal(r.ok, false);
      assert.match(r.error, /tools\/call 'huge' on server 'big' failed: /);
      assert.match(r.error, /server 'big' sent a message larger than 1048576 bytes \(max_message_bytes\)/);
      assert.notEqual(r.kind, "timeout");
      // Loopback socket buffers hold a few MB beyond what the client read; 300 MB were offered.
      const sent = produced(count);
      assert.ok(sent > 0 && sent < 32 * MiB, `the server produced ${sent} bytes before the client hung up`);
    } finally {
      await peer.stop();
    }
  });
}

for (const era of ["legacy", "auto"] as const) {
  Deno.test(
    `attack: a Streamable HTTP server dying mid-call (${era}) fails the call when the connection drops, not at the timeout`,
    async () => {
      const peer = await startEchoHttp(["--test-tools"]);
      try {
        // A 60 s timeout: were the drop not noticed, the call would end as a timeout.
        const out = await runLua(`
          assert(mcp.connect_http("echo", ${lq(peer.url)}, { era = "${era}", timeout = 60 }))
          local r = mcp.call("echo", "exit_mid_stream", {})
          return std.json.encode({ ok = r.ok, error = r.error, kind = r.kind })
        `);
        const r = resultOf(out);
        assert.equal(r.ok, false);
        assert.equal(r.kind, "closed", r.error);
        assert.match(
          r.error,
          /tools\/call 'exit_mid_stream' on server 'echo' failed: the connection dropped before the server answered/,
        );
      } finally {
        await peer.stop();
      }
    },
  );
}
