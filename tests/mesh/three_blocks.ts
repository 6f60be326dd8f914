// The three-block mesh scenario both transports run (tests/mesh/mesh_cli_test.ts over NATS,
// tests/mesh/mesh_relay_cli_test.ts over the agent-mesh relay): real CLI processes where the
// client asks the server, sends it a note, has it ask the helper from inside its handler (no
// deadlock), waits while the test disturbs the transport (a forger, a restart), asks again, and
// stops both. The common expectations are asserted here; the caller checks its transport's own.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  pathExists,
  settleWithin,
  spawnBlock,
  stopBlocks,
  tempProject,
  testEnv,
  waitFor,
} from "../helpers.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";

/** The blocks' keys (fixed, so AgentIds are known before they start). */
export const KEYS = { server: "a".repeat(64), client: "b".repeat(64), helper: "c".repeat(64) };
const id = (k: string) => MeshIdentity.fromSeedHex(k).agentId;
/** Their AgentIds. */
export const IDS = { server: id(KEYS.server), client: id(KEYS.client), helper: id(KEYS.helper) };

// The server answers (its reply carries the float it got back: 2.0 both ways), asks the helper from inside a handler, stops when told; every message it
// sees must come from the client (its _PROMPT): a forged one would fail the run.
const SERVER = `
local seen = {}
mesh.on(function(ev)
  local p = ev.payload
  seen[#seen + 1] = p.q or (p.nested and "nested") or (p.forged and "FORGED") or (p.stop and "stop") or "?"
  assert(ev.meta.from == _PROMPT, "from " .. tostring(ev.meta.from))
  if p.stop then bus.stop() return "bye" end
  if p.nested then return { inner = mesh.request(p.nested, { q = "inner" }, 20) } end
  return { echo = p.q, from = ev.meta.from, ntype = p.n and math.type(p.n), back = p.n, trace = p.__ab_obs and p.__ab_obs.trace_id }
end)
bus.serve()
print(std.json.encode(seen))
`;

// The helper answers with who it is and who asked.
const HELPER = `
mesh.on(function(ev)
  if ev.payload.stop then bus.stop() return "bye" end
  return "inner from " .. mesh.agent_id() .. " to " .. ev.meta.from
end)
bus.serve()
`;

// The client drives; _CONTEXT names the error kinds worth a retry on this transport (a target not
// listening yet, a reconnect) and the per-request timeout.
const CLIENT = `
local A, C = _PROMPT:match("(%S+) (%S+)")
local retry, timeout = {}, 30
for k in _CONTEXT:gmatch("[%a_]+") do retry[k] = true end
timeout = tonumber(_CONTEXT:match("%d+")) or timeout
local function ask(p, why, to)
  local deadline = std.time.now() + 90
  while true do
    local ok, r = pcall(mesh.request, to or A, p, timeout)
    if ok then return r end
    if not retry[r.kind] or std.time.now() > deadline then
      error("no answer (" .. why .. "): " .. tostring(r), 0)
    end
    std.time.sleep(0.05)
  end
end
local out = {}
out.r1 = ask({ q = "hi", n = 2.0 }, "hi")
out.back_type = math.type(out.r1.back)
mesh.send(A, { q = "note" })
ask({ q = "ping" }, "the helper is up", C)
out.r2 = ask({ nested = C }, "nested")
std.fs.write("phase1", "")
while not std.fs.exists("restarted") do std.task.sleep(0.05) end
out.r3 = ask({ q = "after" }, "after the restart")
ask({ stop = true }, "stop C", C)
out.r4 = ask({ stop = true }, "stop A")
out.me = mesh.agent_id()
print(std.json.encode(out))
`;

/** What each block wrote. */
export interface BlockOutput {
  stdout: string;
  stderr: string;
}

/** How a transport runs the scenario. */
export interface ScenarioOptions {
  /** The `--relay` URL. */
  url: string;
  /** `AGENT_BLOCK_TRACE_ID` of all three (checked in the replies' `__ab_obs`). */
  trace: string;
  /** Error kinds the client retries and its request timeout, e.g. `"unreachable connect 30"`. */
  retry: string;
  /** Runs after the first phase, before the client goes on (disturb the transport here). */
  midway: () => Promise<void>;
}

const NAMES = ["server", "helper", "client"];

/** Runs the scenario; returns the three outputs once all passed the common checks. */
export async function threeBlocks(
  o: ScenarioOptions,
): Promise<Record<"server" | "helper" | "client", BlockOutput>> {
  const dir = await tempProject({ "server.lua": SERVER, "helper.lua": HELPER, "client.lua": CLIENT });
  const env = (extra: Record<string, string> = {}) => testEnv({ AGENT_BLOCK_TRACE_ID: o.trace, ...extra });
  const procs = [
    spawnBlock(
      dir,
      "server.lua",
      ["--relay", o.url, "--secret-key", KEYS.server, "--prompt", IDS.client],
      env(),
    ),
    spawnBlock(dir, "helper.lua", ["--relay", o.url, "--secret-key", KEYS.helper], env()),
    spawnBlock(
      dir,
      "client.lua",
      ["--relay", o.url, "--prompt", `${IDS.server} ${IDS.helper}`, "-c", o.retry],
      env({ AGENT_BLOCK_MESH_SECRET_KEY: KEYS.client }),
    ),
  ];
  let outputs: Promise<Deno.CommandOutput>[] | undefined;
  try {
    await waitFor(() => pathExists(join(dir, "phase1")), {
      what: "the client's first phase",
      timeoutMs: 60_000,
    });
    await o.midway();
    await Deno.writeTextFile(join(dir, "restarted"), "");
    // the client ends first (it stops the others); if it fails, the others are ended too. Each
    // wait is bounded (generously: it tells "ended" from "never"), so a stuck block fails the
    // test instead of hanging the suite; the finally kills whatever still runs.
    outputs = procs.map((p) => p.output());
    const [clientEnd] = await settleWithin([outputs[2]], "the client block", 240_000);
    if (clientEnd.status === "rejected") throw clientEnd.reason;
    const clientOut = clientEnd.value;
    if (clientOut.code !== 0) await stopBlocks(procs.slice(0, 2));
    const others = await settleWithin(outputs.slice(0, 2), "the server and helper blocks", 60_000);
    const outs = [
      ...others.map((o) => {
        if (o.status === "rejected") throw o.reason;
        return o.value;
      }),
      clientOut,
    ];
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    const all = outs.map((r, i) => `--- ${NAMES[i]} (exit ${r.code}):\n${text(r.stderr)}`).join("\n");
    const [server, helper, client] = outs.map((r, i) => {
      assert.equal(r.code, 0, `the ${NAMES[i]} failed:\n${all}`);
      return { stdout: text(r.stdout), stderr: text(r.stderr) };
    });
    const got = JSON.parse(client.stdout);
    assert.equal(got.me, IDS.client);
    const from = IDS.client;
    assert.deepEqual(got.r1, { echo: "hi", from, ntype: "float", back: 2, trace: o.trace });
    assert.equal(got.back_type, "float", "the reply's 2.0 came back as a float");
    assert.deepEqual(got.r2, { inner: `inner from ${IDS.helper} to ${IDS.server}` });
    assert.deepEqual(got.r3, { echo: "after", from, trace: o.trace });
    assert.equal(got.r4, "bye");
    assert.deepEqual(JSON.parse(server.stdout), ["hi", "note", "nested", "after", "stop"]);
    assert.doesNotMatch(server.stderr + client.stderr + helper.stderr, /AgentId changes every run/);
    return { server, helper, client };
  } finally {
    await stopBlocks(procs);
    // the pipes close once the killed blocks are gone (read them, if no one has yet)
    await settleWithin(outputs ?? procs.map((p) => p.output()), "the killed blocks");
  }
}
