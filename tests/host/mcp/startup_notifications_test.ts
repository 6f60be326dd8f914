/**
 * Notifications a 2025-era server sends right after `initialize` (its `tools/list_changed`, a log
 * message) reach the script over Streamable HTTP as they do over stdio and SSE: the client opens
 * the server's event stream before it says it is ready (`http_transport.ts`). Against
 * `tests/fixtures/mcp/startup_notify_server.ts` (v2 SDK) over stdio and HTTP, and against
 * server-everything (v1 SDK; four `tools/list_changed` after initialize) over HTTP and SSE.
 */
import { join } from "node:path";
import assert from "node:assert/strict";
import { resultOf, runLua } from "../../helpers.ts";
import { DENO, FIXTURES, lq, type Peer, startEverything, startPeer } from "./peers.ts";

const SERVER = join(FIXTURES, "startup_notify_server.ts");

/** Connects with `connect`, then waits (at most 20 s) for the start-up notifications. */
async function startup(connect: string, wantLog: boolean): Promise<Record<string, unknown>> {
  const out = await runLua(`
    local changed, logs = 0, {}
    mcp.on_tools_list_changed("n", function(ev) changed = changed + 1 end)
    mcp.on_log("n", function(level, logger, data) logs[#logs + 1] = logger .. ": " .. tostring(data) end)
    ${connect}
    local deadline = os.time() + 20
    while (changed == 0 or (${wantLog} and #logs == 0)) and os.time() < deadline do std.task.sleep(0.02) end
    -- the connection still works after its event stream was opened early
    local ok = mcp.list_tools("n").ok
    mcp.disconnect("n")
    return std.json.encode({ changed = changed, logs = logs, ok = ok })
  `);
  return resultOf(out);
}

Deno.test("notifications sent right after initialize are delivered over stdio, Streamable HTTP and SSE", async (t) => {
  const peers: Peer[] = [];
  try {
    await t.step("stdio (v2 server)", async () => {
      const r = await startup(
        `assert(mcp.connect("n", ${lq(DENO)}, { "run", "-A", "--quiet", ${
          lq(SERVER)
        } }, { era = "legacy" }))`,
        true,
      );
      assert.deepEqual(r, { changed: 1, logs: ["startup: ready"], ok: true });
    });
    const http = await startPeer([SERVER, "--http"], (o) => o.match(/NOTIFY_MCP_URL=(\S+)/)?.[1]);
    peers.push(http);
    await t.step("Streamable HTTP (v2 server)", async () => {
      const r = await startup(`assert(mcp.connect_http("n", ${lq(http.url)}, { era = "legacy" }))`, true);
      assert.deepEqual(r, { changed: 1, logs: ["startup: ready"], ok: true });
    });
    const everything = await startEverything("streamableHttp");
    peers.push(everything);
    await t.step("Streamable HTTP (server-everything)", async () => {
      const r = await startup(`assert(mcp.connect_http("n", ${lq(everything.url)}))`, false);
      assert((r.changed as number) > 0, JSON.stringify(r));
      assert.deepEqual(r.ok, true);
    });
    const sse = await startEverything("sse");
    peers.push(sse);
    await t.step("SSE (server-everything)", async () => {
      const r = await startup(`assert(mcp.connect_http("n", ${lq(sse.url)}, { transport = "sse" }))`, false);
      assert((r.changed as number) > 0, JSON.stringify(r));
    });
  } finally {
    for (const p of peers) await p.stop();
  }
});
