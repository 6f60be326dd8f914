// agent-block processes on the mesh over a real nats-server: request/reply through Lua, send, a
// handler that itself requests, a forger with the wrong key, a server restart mid-run; and the
// edge's errors (not connected, bad key, bad URL, unreachable server).
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  pathExists as exists,
  REPO_ROOT,
  runCli,
  spawnBlock,
  tempProject,
  testEnv,
  waitFor,
} from "../helpers.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { natsMissing, startNats } from "./nats_server.ts";

const missing = natsMissing();
const ignore = missing !== undefined;
if (ignore) console.warn(`skipping the NATS mesh CLI tests: ${missing}`);

const KEY_A = "1".repeat(64);
const KEY_B = "2".repeat(64);
const KEY_C = "3".repeat(64);
const ID = (k: string) => MeshIdentity.fromSeedHex(k).agentId;

const SERVER = `
local seen = {}
mesh.on(function(ev)
  local p = ev.payload
  seen[#seen + 1] = p.q or (p.nested and "nested") or (p.forged and "FORGED") or (p.stop and "stop") or "?"
  assert(ev.meta.from == _PROMPT, "from " .. tostring(ev.meta.from))
  if p.stop then bus.stop() return "bye" end
  if p.nested then return { inner = mesh.request(p.nested, { q = "inner" }, 10) } end
  return { echo = p.q, from = ev.meta.from, trace = p.__ab_obs and p.__ab_obs.trace_id }
end)
bus.serve()
print(std.json.encode(seen))
`;

const HELPER = `
mesh.on(function(ev)
  if ev.payload.stop then bus.stop() return "bye" end
  return "inner from " .. mesh.agent_id() .. " to " .. ev.meta.from
end)
bus.serve()
`;

const CLIENT = `
local A, C = _PROMPT:match("(%S+) (%S+)")
-- retries while nobody listens at the target yet (starting, reconnecting), for 90 s
local function ask(p, why, to)
  local deadline = std.time.now() + 90
  while true do
    local ok, r = pcall(mesh.request, to or A, p, 30)
    if ok then return r end
    if (r.kind ~= "unreachable" and r.kind ~= "connect") or std.time.now() > deadline then
      error("no answer (" .. why .. "): " .. tostring(r), 0)
    end
    std.time.sleep(0.05)
  end
end
local out = {}
out.r1 = ask({ q = "hi" }, "hi")
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

const NAMES = ["server", "helper", "client"];

Deno.test(
  {
    name:
      "attack: mesh nats forged from a wrong-key process is dropped; three blocks request, send, nest, survive a restart",
    ignore,
  },
  async () => {
    const srv = await startNats();
    const dir = await tempProject({ "server.lua": SERVER, "helper.lua": HELPER, "client.lua": CLIENT });
    const [a, b, c] = [ID(KEY_A), ID(KEY_B), ID(KEY_C)];
    const stop = () => {
      for (const p of procs) {
        try {
          p.kill("SIGKILL");
        } catch { /* exited */ }
      }
    };
    const procs = [
      spawnBlock(
        dir,
        "server.lua",
        ["--relay", srv.url, "--secret-key", KEY_A, "--prompt", b],
        testEnv({ AGENT_BLOCK_TRACE_ID: "trace-cli" }),
      ),
      spawnBlock(
        dir,
        "helper.lua",
        ["--relay", srv.url, "--secret-key", KEY_C],
        testEnv({ AGENT_BLOCK_TRACE_ID: "trace-cli" }),
      ),
      spawnBlock(
        dir,
        "client.lua",
        ["--relay", srv.url, "--prompt", `${a} ${c}`],
        testEnv({
          AGENT_BLOCK_TRACE_ID: "trace-cli",
          AGENT_BLOCK_MESH_SECRET_KEY: KEY_B,
        }),
      ),
    ];
    try {
      await waitFor(() => exists(join(dir, "phase1")), {
        what: "the client's first phase",
        timeoutMs: 60_000,
      });
      // a third process with the wrong key claims to be the client: the server drops both messages
      const forger = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", join(REPO_ROOT, "tests/mesh/forger.ts"), srv.url, a, b],
        env: testEnv(),
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(
        new TextDecoder().decode(forger.stdout),
        "dropped\ndropped\n",
        new TextDecoder().decode(forger.stderr),
      );
      await srv.restart();
      await Deno.writeTextFile(join(dir, "restarted"), "");
      // the client ends first (it stops the others); if it fails, the others are ended too
      const clientOut = await procs[2].output();
      if (clientOut.code !== 0) stop();
      const outs = [await procs[0].output(), await procs[1].output(), clientOut];
      const text = (b: Uint8Array) => new TextDecoder().decode(b);
      const all = outs.map((o, j) => `--- ${NAMES[j]} (exit ${o.code}):\n${text(o.stderr)}`).join("\n");
      const [server, helper, client] = outs.map((r, i) => {
        assert.equal(r.code, 0, `the ${NAMES[i]} failed:\n${all}`);
        return { stdout: text(r.stdout), stderr: text(r.stderr) };
      });
      const got = JSON.parse(client.stdout);
      assert.equal(got.me, b);
      assert.deepEqual(got.r1, { echo: "hi", from: b, trace: "trace-cli" });
      assert.deepEqual(got.r2, { inner: `inner from ${c} to ${a}` });
      assert.deepEqual(got.r3, { echo: "after", from: b, trace: "trace-cli" });
      assert.equal(got.r4, "bye");
      assert.deepEqual(JSON.parse(server.stdout), ["hi", "note", "nested", "after", "stop"]);
      assert.match(
        server.stderr,
        new RegExp(`dropped a message claiming to be from ${b}: .*signature does not verify`),
      );
      assert.match(server.stderr, /mesh: lost .*reconnecting/);
      assert.match(server.stderr, new RegExp(`mesh: connected to ${srv.url} \\(nats\\) as ${a}`));
      assert.doesNotMatch(server.stderr + client.stderr + helper.stderr, /AgentId changes every run/);
    } finally {
      stop();
      await Promise.allSettled(procs.map((p) => p.status));
      await Promise.allSettled(procs.map((p) => p.output())); // closes their pipes
      await srv.stop();
    }
  },
);

Deno.test("mesh cli: without --relay every mesh function raises the not-connected error (exit 1)", async () => {
  const dir = await tempProject({ "m.lua": 'mesh.send("x", {})' });
  const r = await runCli(["-s", "m.lua"], { cwd: dir, env: testEnv(), clearEnv: true });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /error: m\.lua:1: mesh\.send: mesh not connected \(no --relay specified\)/);
});

Deno.test("mesh cli: bad keys and URLs are refused before the run, naming the flag or variable", async () => {
  const dir = await tempProject({ "m.lua": "return mesh.agent_id()" });
  const env = testEnv();
  const bad = await runCli(["-s", "m.lua", "--relay", "nats://127.0.0.1:4222", "--secret-key", "abc"], {
    cwd: dir,
    env,
    clearEnv: true,
  });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--secret-key: expected 64 hex characters \(an Ed25519 seed\), got 3/);
  const url = await runCli(["-s", "m.lua", "--relay", "http://127.0.0.1:1/"], {
    cwd: dir,
    env,
    clearEnv: true,
  });
  assert.equal(url.code, 2);
  assert.match(url.stderr, /--relay: unknown scheme 'http:', got 'http:\/\/127\.0\.0\.1:1\/'/);
  await Deno.writeTextFile(join(dir, ".env"), `AGENT_BLOCK_MESH_SECRET_KEY=${"z".repeat(64)}\n`);
  const envKey = await runCli(["-s", "m.lua", "--relay", "nats://127.0.0.1:1"], {
    cwd: dir,
    env,
    clearEnv: true,
  });
  assert.equal(envKey.code, 1);
  assert.match(envKey.stderr, /mesh: AGENT_BLOCK_MESH_SECRET_KEY: expected 64 hex characters .* non-hex/);
  assert.doesNotMatch(envKey.stderr, /zzzzzzzz/);
  await Deno.remove(join(dir, ".env"));
  const down = await runCli(["-s", "m.lua", "--relay", "nats://127.0.0.1:1"], {
    cwd: dir,
    env,
    clearEnv: true,
  });
  assert.equal(down.code, 1);
  assert.match(down.stderr, /error: mesh: connect to nats:\/\/127\.0\.0\.1:1 failed/);
  const cfg = await runCli(["-s", "m.lua", "--config", "c.json"], {
    cwd: await tempProject({ "m.lua": "", "c.json": '{"relay": "ftp://x"}' }),
    env,
    clearEnv: true,
  });
  assert.equal(cfg.code, 1);
  assert.match(cfg.stderr, /c\.json: field 'relay': unknown scheme 'ftp:'/);
});

Deno.test(
  { name: "mesh nats cli: the key comes from .env, is masked, and a missing one warns", ignore },
  async () => {
    const srv = await startNats();
    try {
      const dir = await tempProject({
        "m.lua": "print(mesh.agent_id()) error('leak ' .. _PROMPT)",
        ".env": `AGENT_BLOCK_MESH_SECRET_KEY=${KEY_A}\n`,
      });
      const r = await runCli(["-s", "m.lua", "--relay", srv.url, "--prompt", KEY_A], {
        cwd: dir,
        env: testEnv(),
        clearEnv: true,
      });
      assert.equal(r.code, 1);
      assert.equal(r.stdout.trim(), ID(KEY_A));
      assert.match(r.stderr, /leak \[redacted\]/);
      assert.ok(!r.stderr.includes(KEY_A));
      const anon = await runCli(["-s", "m.lua", "--relay", srv.url, "--prompt", "x"], {
        cwd: await tempProject({ "m.lua": "print(mesh.agent_id())" }),
        env: testEnv(),
        clearEnv: true,
      });
      assert.equal(anon.code, 0, anon.stderr);
      assert.match(
        anon.stderr,
        new RegExp(`AgentId changes every run \\(this run: ${anon.stdout.trim()}\\)`),
      );
    } finally {
      await srv.stop();
    }
  },
);
