// agent-block processes on the mesh over a real nats-server: request/reply through Lua, send, a
// handler that itself requests, a forger with the wrong key, a server restart mid-run; and the
// edge's errors (not connected, bad key, bad URL, unreachable server).
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli, tempProject, testEnv } from "../helpers.ts";
import { MeshIdentity } from "../../src/clients/mesh/identity.ts";
import { IDS, threeBlocks } from "./three_blocks.ts";
import { natsMissing, startNats } from "./nats_server.ts";
import { nkeys } from "@nats-io/transport-node";

const missing = natsMissing();
const ignore = missing !== undefined;
if (ignore) console.warn(`skipping the NATS mesh CLI tests: ${missing}`);

const KEY_A = "1".repeat(64);
const ID = (k: string) => MeshIdentity.fromSeedHex(k).agentId;

Deno.test(
  {
    name:
      "attack: mesh nats forged from a wrong-key process is dropped; three blocks request, send, nest, survive a restart",
    ignore,
  },
  async () => {
    const srv = await startNats();
    try {
      const { server } = await threeBlocks({
        url: srv.url,
        trace: "trace-cli",
        retry: "unreachable connect 30",
        midway: async () => {
          // a third process with the wrong key claims to be the client: the server drops both
          const forger = await new Deno.Command(Deno.execPath(), {
            args: [
              "run",
              "-A",
              "--quiet",
              join(REPO_ROOT, "tests/mesh/forger.ts"),
              srv.url,
              IDS.server,
              IDS.client,
            ],
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
        },
      });
      assert.match(
        server.stderr,
        new RegExp(`dropped a message claiming to be from ${IDS.client}: .*signature does not verify`),
      );
      assert.match(server.stderr, /mesh: lost .*reconnecting/);
      assert.match(server.stderr, new RegExp(`mesh: connected to ${srv.url} \\(nats\\) as ${IDS.server}`));
    } finally {
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

Deno.test(
  { name: "mesh nats cli: AGENT_BLOCK_NATS_NKEY names the seed a server requiring nkeys wants", ignore },
  async () => {
    const kp = nkeys.createUser();
    const seed = new TextDecoder().decode(kp.getSeed());
    await using srv = await startNats(
      `authorization { timeout: 10, users = [ { nkey: ${kp.getPublicKey()} } ] }\n`,
    );
    const dir = await tempProject({
      "m.lua": "print(mesh.agent_id())",
      "nkey.seed": seed + "\n",
      ".env": `AGENT_BLOCK_MESH_SECRET_KEY=${KEY_A}\nAGENT_BLOCK_NATS_NKEY=nkey.seed\n`,
    });
    const r = await runCli(["-s", "m.lua", "--relay", srv.url], { cwd: dir, env: testEnv(), clearEnv: true });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), ID(KEY_A));
    // without the seed the server refuses the connection, and the run says so
    const anon = await runCli(["-s", "m.lua", "--relay", srv.url], {
      cwd: await tempProject({
        "m.lua": "print(mesh.agent_id())",
        ".env": `AGENT_BLOCK_MESH_SECRET_KEY=${KEY_A}\n`,
      }),
      env: testEnv(),
      clearEnv: true,
    });
    assert.equal(anon.code, 1);
    assert.match(anon.stderr, /authoriz/i);
    // a seed file that cannot be read names the variable and the file
    const gone = await runCli(["-s", "m.lua", "--relay", srv.url], {
      cwd: await tempProject({ "m.lua": "", ".env": "AGENT_BLOCK_NATS_NKEY=missing.seed\n" }),
      env: testEnv(),
      clearEnv: true,
    });
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /AGENT_BLOCK_NATS_NKEY: cannot read missing\.seed: no such file/);
  },
);

/** The runbook's server configuration (docs/runbooks/nats.md), its placeholders filled in. */
function runbookConfig(fill: Record<string, string>): string {
  const md = Deno.readTextFileSync(join(REPO_ROOT, "docs/runbooks/nats.md"));
  let conf = /```conf\n([\s\S]*?)```/.exec(md)![1];
  for (const [k, v] of Object.entries(fill)) conf = conf.split(k).join(v);
  return conf;
}

Deno.test(
  {
    name:
      "mesh nats cli: --nats-nkey and the config file's nats_nkey give the seed of the runbook's mesh agent " +
      "user; the flag wins over .env; errors name the flag or the field",
    ignore,
  },
  async () => {
    const user = () => {
      const kp = nkeys.createUser();
      return { pub: kp.getPublicKey(), seed: new TextDecoder().decode(kp.getSeed()) };
    };
    const agent = user(), other = user(), stranger = user();
    await using srv = await startNats(
      runbookConfig({
        MANAGER_NKEY: other.pub,
        WORKER_NKEY: user().pub,
        AGENT_NKEY: agent.pub,
        AGENT_ID: ID(KEY_A),
      }),
      { jetstream: true },
    );
    const dir = await tempProject({
      "m.lua": "print(mesh.agent_id())",
      "agent.seed": agent.seed + "\n",
      "stranger.seed": stranger.seed + "\n",
      // the project's settings name a seed the server does not know: the flag must win
      ".env": `AGENT_BLOCK_MESH_SECRET_KEY=${KEY_A}\nAGENT_BLOCK_NATS_NKEY=stranger.seed\n`,
      "run.json": JSON.stringify({ relay: srv.url, nats_nkey: "agent.seed" }),
      "bad.json": JSON.stringify({ relay: srv.url, nats_nkey: "gone.seed" }),
    });
    const opts = { cwd: dir, env: testEnv(), clearEnv: true };
    const flag = await runCli(["-s", "m.lua", "--relay", srv.url, "--nats-nkey", "agent.seed"], opts);
    assert.equal(flag.code, 0, flag.stderr);
    assert.equal(flag.stdout.trim(), ID(KEY_A));
    assert.ok(!flag.stderr.includes(agent.seed));
    // .env's seed is refused by the server: the environment layer is really in play
    const env = await runCli(["-s", "m.lua", "--relay", srv.url], opts);
    assert.equal(env.code, 1);
    assert.match(env.stderr, /authoriz/i);
    // the config file's field is below .env: with .env's variable gone it is the seed used
    Deno.writeTextFileSync(join(dir, ".env"), `AGENT_BLOCK_MESH_SECRET_KEY=${KEY_A}\n`);
    const cfg = await runCli(["-s", "m.lua", "--config", "run.json"], opts);
    assert.equal(cfg.code, 0, cfg.stderr);
    assert.equal(cfg.stdout.trim(), ID(KEY_A));
    // errors: a flag's file (exit 2), a config field's file (exit 1), a flag without a NATS relay
    const noFile = await runCli(["-s", "m.lua", "--relay", srv.url, "--nats-nkey", "gone.seed"], opts);
    assert.equal(noFile.code, 2, noFile.stderr);
    assert.match(noFile.stderr, /--nats-nkey gone\.seed cannot be read: no such file/);
    const badCfg = await runCli(["-s", "m.lua", "--config", "bad.json"], opts);
    assert.equal(badCfg.code, 1, badCfg.stderr);
    assert.match(badCfg.stderr, /bad\.json: field 'nats_nkey': cannot read gone\.seed: no such file/);
    const noRelay = await runCli(["-s", "m.lua", "--nats-nkey", "agent.seed"], opts);
    assert.equal(noRelay.code, 2, noRelay.stderr);
    assert.match(
      noRelay.stderr,
      /--nats-nkey is for a NATS relay \(--relay nats:\/\/\.\.\.\), and the run has no relay/,
    );
  },
);
