// agent-block processes on the agent-mesh relay (the TypeScript test relay, in this process):
// mesh.request / mesh.send / mesh.on between real CLI runs, a handler that itself requests, a relay
// restart mid-run that every process survives, and the edge's errors for a relay that refuses or
// is not there.
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  finishBlock as finish,
  pathExists as exists,
  runCli,
  spawnBlock,
  stopBlocks,
  tempProject,
  testEnv,
  waitFor,
} from "../helpers.ts";
import { startRelay } from "../../examples/mesh_relay.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";

const KEY_A = "a".repeat(64);
const KEY_B = "b".repeat(64);
const KEY_C = "c".repeat(64);
const ID = (k: string) => MeshIdentity.fromSeedHex(k).agentId;
const TRACE = "trace-relay";

// A: answers, asks C from inside a handler, stops when told.
const SERVER = `
local seen = {}
mesh.on(function(ev)
  local p = ev.payload
  seen[#seen + 1] = p.q or (p.nested and "nested") or (p.stop and "stop") or "?"
  if p.stop then bus.stop() return "bye" end
  if p.nested then return { inner = mesh.request(p.nested, { q = "inner" }, 20) } end
  return { echo = p.q, from = ev.meta.from, ntype = p.n and math.type(p.n), trace = p.__ab_obs and p.__ab_obs.trace_id }
end)
bus.serve()
print(std.json.encode(seen))
`;

// C: answers with who it is and who asked.
const HELPER = `
mesh.on(function(ev)
  if ev.payload.stop then bus.stop() return "bye" end
  return "inner from " .. mesh.agent_id() .. " to " .. ev.meta.from
end)
bus.serve()
`;

// B: drives the conversation; waits for the test to restart the relay in the middle.
const CLIENT = `
local A, C = _PROMPT:match("(%S+) (%S+)")
local function ask(p, why, to)
  for _ = 1, 100 do
    local ok, r = pcall(mesh.request, to or A, p, 10)
    if ok then return r end
    if r.kind ~= "timeout" and r.kind ~= "connect" then error(r) end
  end
  error("no answer: " .. why)
end
local out = {}
out.r1 = ask({ q = "hi", n = 2.0 }, "hi")
mesh.send(A, { q = "note" })
out.r2 = ask({ nested = C }, "nested")
std.fs.write("phase1", "")
while not std.fs.exists("restarted") do std.task.sleep(0.05) end
out.r3 = ask({ q = "after" }, "after the restart")
ask({ stop = true }, "stop C", C)
out.r4 = ask({ stop = true }, "stop A")
out.me = mesh.agent_id()
print(std.json.encode(out))
`;

Deno.test("mesh relay cli: three blocks request, send and nest over the relay, and survive its restart", async () => {
  let relay = await startRelay();
  const port = relay.port;
  const dir = await tempProject({ "server.lua": SERVER, "helper.lua": HELPER, "client.lua": CLIENT });
  const [a, b, c] = [ID(KEY_A), ID(KEY_B), ID(KEY_C)];
  const procs = [
    spawnBlock(
      dir,
      "server.lua",
      ["--relay", relay.url, "--secret-key", KEY_A],
      testEnv({ AGENT_BLOCK_TRACE_ID: TRACE }),
    ),
    spawnBlock(
      dir,
      "helper.lua",
      ["--relay", relay.url, "--secret-key", KEY_C],
      testEnv({ AGENT_BLOCK_TRACE_ID: TRACE }),
    ),
    spawnBlock(
      dir,
      "client.lua",
      ["--relay", relay.url, "--prompt", `${a} ${c}`],
      testEnv({
        AGENT_BLOCK_TRACE_ID: TRACE,
        AGENT_BLOCK_MESH_SECRET_KEY: KEY_B,
      }),
    ),
  ];
  try {
    await waitFor(() => exists(join(dir, "phase1")), { what: "the client's first phase", timeoutMs: 60_000 });
    assert.equal(relay.metrics().rejected, 0, "every envelope the blocks sent verified at the relay");
    await relay.close();
    relay = await startRelay({ port });
    await Deno.writeTextFile(join(dir, "restarted"), "");
    const [server, helper, client] = await Promise.all([
      finish(procs[0], "the server"),
      finish(procs[1], "the helper"),
      finish(procs[2], "the client"),
    ]);
    const got = JSON.parse(client.stdout);
    assert.equal(got.me, b);
    assert.deepEqual(
      got.r1,
      { echo: "hi", from: b, ntype: "float", trace: "trace-relay" },
      "2.0 arrived as a float",
    );
    assert.deepEqual(got.r2, { inner: `inner from ${c} to ${a}` });
    assert.deepEqual(got.r3, { echo: "after", from: b, trace: "trace-relay" });
    assert.equal(got.r4, "bye");
    assert.deepEqual(JSON.parse(server.stdout), ["hi", "note", "nested", "after", "stop"]);
    assert.match(
      server.stderr,
      new RegExp(`mesh: connected to ${relay.url.replace(/[./]/g, "\\$&")} \\(relay\\) as ${a}`),
    );
    assert.match(server.stderr + helper.stderr + client.stderr, /mesh: lost .*reconnecting/);
    assert.doesNotMatch(server.stderr + client.stderr + helper.stderr, /AgentId changes every run/);
  } finally {
    await stopBlocks(procs);
    await relay.close();
  }
});

Deno.test("mesh relay cli: a relay that is not there, or whose gate refuses the agent, fails the run (exit 1)", async () => {
  const dir = await tempProject({ "m.lua": "print(mesh.agent_id())" });
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const freePort = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const down = await runCli([
    "-s",
    "m.lua",
    "--relay",
    `ws://127.0.0.1:${freePort}/ws`,
    "--secret-key",
    KEY_A,
  ], {
    cwd: dir,
    env: testEnv(),
    clearEnv: true,
  });
  assert.equal(down.code, 1, down.stderr);
  assert.match(
    down.stderr,
    new RegExp(`error: mesh: connect to ws://127\\.0\\.0\\.1:${freePort}/ws failed: cannot reach the relay`),
  );
  const relay = await startRelay({ gate: (id) => id !== ID(KEY_A) });
  try {
    const denied = await runCli(["-s", "m.lua", "--relay", relay.url, "--secret-key", KEY_A], {
      cwd: dir,
      env: testEnv(),
      clearEnv: true,
    });
    assert.equal(denied.code, 1, denied.stderr);
    assert.match(
      denied.stderr,
      /error: mesh: connect to .* failed: the relay closed the connection right after login: its gate does not admit/,
    );
    const admitted = await runCli(["-s", "m.lua", "--relay", relay.url, "--secret-key", KEY_B], {
      cwd: dir,
      env: testEnv(),
      clearEnv: true,
    });
    assert.equal(admitted.code, 0, admitted.stderr);
    assert.equal(admitted.stdout.trim(), ID(KEY_B));
  } finally {
    await relay.close();
  }
});
