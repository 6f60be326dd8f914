/**
 * OpenTelemetry across the mesh: two real CLI processes on the agent-mesh relay (the TypeScript
 * test relay, in this process), both exporting to one OTLP/HTTP receiver (`otlp_receiver.ts`).
 *
 * What is proved: the client's `mesh.request <peer>` (CLIENT) and `mesh.send <peer>` (PRODUCER)
 * spans; the server's `mesh.receive <from>` (SERVER) span of each joins the client's trace under
 * the client span whose `traceparent` travelled in the payload's `__ab_obs`; what the server's
 * handler does (`sh.exec`) is the server span's child; a failed request is an error span.
 */
import assert from "node:assert/strict";
import { OtlpReceiver, type ReceivedSpan } from "./otlp_receiver.ts";
import { settleWithin, spawnBlock, stopBlocks, tempProject, testEnv } from "../helpers.ts";
import { startRelay } from "../../examples/mesh_relay.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";

const KEYS = { server: "d".repeat(64), client: "e".repeat(64) };
const IDS = {
  server: MeshIdentity.fromSeedHex(KEYS.server).agentId,
  client: MeshIdentity.fromSeedHex(KEYS.client).agentId,
};

// The server runs a command in its handler, answers, and stops when told.
const SERVER = `
mesh.on(function(ev)
  if ev.payload.stop then bus.stop() return "bye" end
  if ev.payload.note then return nil end
  sh.exec("true")
  return { echo = ev.payload.q, traceparent = ev.payload.__ab_obs and ev.payload.__ab_obs.traceparent }
end)
bus.serve()
`;

// The client asks (retrying while the server is not listening yet), sends a note, asks a peer
// that is not there (a failed request), then stops the server.
const CLIENT = `
local A = _PROMPT
local function ask(p)
  local deadline = std.time.now() + 90
  while true do
    local ok, r = pcall(mesh.request, A, p, 20)
    if ok then return r end
    if std.time.now() > deadline then error("no answer: " .. tostring(r), 0) end
    std.time.sleep(0.05)
  end
end
local r = ask({ q = "hi" })
assert(r.echo == "hi", std.json.encode(r))
mesh.send(A, { note = true })
local ok = pcall(mesh.request, "${"x".repeat(43)}", { q = "nobody" }, 1)
assert(not ok, "a request to nobody fails")
ask({ stop = true })
print(std.json.encode(r))
`;

Deno.test({
  name: "otel mesh: a mesh request and send between two processes are one trace, client and server side",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const relay = await startRelay();
    const rx = new OtlpReceiver();
    const dir = await tempProject({ "server.lua": SERVER, "client.lua": CLIENT });
    const env = (extra: Record<string, string> = {}) =>
      testEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", ...extra });
    const procs = [
      spawnBlock(dir, "server.lua", ["--relay", relay.url, "--secret-key", KEYS.server], env()),
      spawnBlock(
        dir,
        "client.lua",
        ["--relay", relay.url, "--prompt", IDS.server],
        env({ AGENT_BLOCK_MESH_SECRET_KEY: KEYS.client }),
      ),
    ];
    try {
      const ends = await settleWithin(procs.map((p) => p.output()), "the two blocks", 120_000);
      const text = (b: Uint8Array) => new TextDecoder().decode(b);
      for (const e of ends) {
        if (e.status === "rejected") throw e.reason;
        assert.equal(e.value.code, 0, text(e.value.stderr));
      }
      const reply = JSON.parse(text((ends[1] as PromiseFulfilledResult<Deno.CommandOutput>).value.stdout));

      const clientRun = rx.one("invoke_agent client.lua");
      const serverRun = rx.one("invoke_agent server.lua");
      assert.notEqual(clientRun.traceId, serverRun.traceId, "each run is a trace of its own");
      const requests = rx.named(`mesh.request ${IDS.server}`);
      assert.ok(requests.length >= 2, "the question and the stop");
      for (const r of requests) {
        assert.equal(r.kind, 3, "CLIENT");
        assert.equal(r.traceId, clientRun.traceId);
        assert.equal(r.attributes["messaging.system"], "relay");
        assert.equal(r.attributes["messaging.destination.name"], IDS.server);
      }
      const receives = rx.named(`mesh.receive ${IDS.client}`);
      const byParent = (c: ReceivedSpan) => receives.find((s) => s.parentSpanId === c.spanId);
      // the answered question: its server span is the client span's child, in the client's trace
      const asked = requests.find((r) => reply.traceparent === `00-${r.traceId}-${r.spanId}-01`);
      assert.ok(asked, `the traceparent the server saw (${reply.traceparent}) is a client span's`);
      const served = byParent(asked!);
      assert.ok(served, "a server span under the client span");
      assert.equal(served!.kind, 2, "SERVER");
      assert.equal(served!.traceId, clientRun.traceId, "the server side joins the client's trace");
      assert.equal(served!.attributes["messaging.source.name"], IDS.client);
      const exec = rx.one("sh.exec");
      assert.equal(exec.parentSpanId, served!.spanId, "the handler's command under the server span");
      assert.equal(exec.traceId, clientRun.traceId);
      // the send: a PRODUCER span, received under it too
      const send = rx.one(`mesh.send ${IDS.server}`);
      assert.equal(send.kind, 4, "PRODUCER");
      assert.ok(byParent(send), "the note's server span under the send");
      // a request to nobody: an error span
      const failed = rx.one(`mesh.request ${"x".repeat(43)}`);
      assert.equal(failed.status.code, 2, "ERROR");
      assert.equal(typeof failed.attributes["error.type"], "string");
    } finally {
      await stopBlocks(procs);
      await rx.close();
      await relay.close();
    }
  },
});
