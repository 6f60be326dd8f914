// agent-block processes on the agent-mesh relay (the TypeScript test relay, in this process):
// mesh.request / mesh.send / mesh.on between real CLI runs, a handler that itself requests, a relay
// restart mid-run that every process survives, and the edge's errors for a relay that refuses or
// is not there.
import assert from "node:assert/strict";
import { runCli, tempProject, testEnv } from "../helpers.ts";
import { startRelay } from "../../examples/mesh_relay.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { IDS, threeBlocks } from "./three_blocks.ts";

const KEY_A = "a".repeat(64);
const KEY_B = "b".repeat(64);
const ID = (k: string) => MeshIdentity.fromSeedHex(k).agentId;

Deno.test("mesh relay cli: three blocks request, send and nest over the relay, and survive its restart", async () => {
  let relay = await startRelay();
  try {
    const url = relay.url;
    const outs = await threeBlocks({
      url,
      trace: "trace-relay",
      retry: "timeout connect 10",
      midway: async () => {
        assert.equal(relay.metrics().rejected, 0, "every envelope the blocks sent verified at the relay");
        await relay.close();
        relay = await startRelay({ port: relay.port });
      },
    });
    assert.match(
      outs.server.stderr,
      new RegExp(`mesh: connected to ${url.replace(/[./]/g, "\\$&")} \\(relay\\) as ${IDS.server}`),
    );
    assert.match(outs.server.stderr + outs.helper.stderr + outs.client.stderr, /mesh: lost .*reconnecting/);
  } finally {
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
