/**
 * A watched run is told its MCP traffic (src/host/mcp.ts → `RunContext.observe`): each connect
 * with its transport, duration and failure, each `tools/call` with its outcome — against the real
 * echo server over stdio, and a server that cannot start.
 */
import assert from "node:assert/strict";
import { returnedValue, runLua } from "../../helpers.ts";
import { DENO, ECHO, lq } from "./peers.ts";
import type { RunEvent } from "../../../src/obs/run_events.ts";

Deno.test("mcp connects and tool calls reach the run's observer, failures with their reason", async () => {
  const seen: RunEvent[] = [];
  const run = await runLua(
    `
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(ECHO)} }))
    local ok = mcp.call("echo", "echo", { msg = "hi" })
    local bad = mcp.call("echo", "no_such_tool", {})
    local up = mcp.connect("ghost", "/nonexistent/mcp-server", {}, { required = false })
    return tostring(ok.is_error) .. " " .. tostring(bad.ok == false or bad.is_error) .. " " .. tostring(up)`,
    { observe: (e) => seen.push(e) },
  );
  assert.equal(returnedValue(run), "false true false");
  const notes = seen.filter((e) => e.type === "mcp_connect" || e.type === "mcp_call");
  assert.deepEqual(
    notes.map((e) =>
      e.type === "mcp_connect"
        ? `connect ${e.server} ${e.transport} ${e.ok}`
        : `call ${e.server}.${e.tool} ${e.ok}`
    ),
    [
      "connect echo stdio true",
      "call echo.echo true",
      "call echo.no_such_tool false",
      "connect ghost stdio false",
    ],
  );
  for (const e of notes) assert.ok(e.ms >= 0 && Number.isFinite(e.ms));
  const failed = notes.filter((e) => !e.ok);
  assert.match(failed[0].error ?? "", /no_such_tool/);
  assert.match(failed[1].error ?? "", /ghost/);
});
