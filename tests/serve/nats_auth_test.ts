/**
 * The run queue's credentials and bad input (issue 30 §3, §4): a real `nats-server` started with
 * the configuration of `docs/runbooks/nats.md` (nkey users with subject permissions, the public
 * keys filled in), and the errors for a malformed URL, an unreadable credentials file and a
 * stream created earlier with settings the queue cannot use.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect, nkeyAuthenticator, nkeys } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { REPO_ROOT } from "../helpers.ts";
import { natsMissing, startNats } from "../mesh/nats_server.ts";
import { jobProject, runWorkerToExit, startManager, startWorker, waitForRun } from "./serve_helpers.ts";

const ignore = natsMissing() !== undefined;

/** The runbook's server configuration, its placeholders filled in. */
function runbookConfig(keys: Record<string, string>): string {
  const md = Deno.readTextFileSync(join(REPO_ROOT, "docs/runbooks/nats.md"));
  const m = /```conf\n([\s\S]*?)```/.exec(md);
  assert.ok(m, "docs/runbooks/nats.md has a ```conf block");
  let conf = m[1];
  for (const [k, v] of Object.entries(keys)) conf = conf.split(k).join(v);
  return conf;
}

function user(): { pub: string; seed: string } {
  const kp = nkeys.createUser();
  return { pub: kp.getPublicKey(), seed: new TextDecoder().decode(kp.getSeed()) };
}

/** `nats-server` with JetStream and the runbook's configuration: `mgr` the manager, `wrk` the worker. */
function runbookServer(mgr: { pub: string }, wrk: { pub: string }) {
  return startNats(
    runbookConfig({ MANAGER_NKEY: mgr.pub, WORKER_NKEY: wrk.pub, AGENT_NKEY: user().pub, AGENT_ID: "x" }),
    { jetstream: true },
  );
}

Deno.test({
  name:
    "serve --nats: nkey users of the runbook's configuration: the right seeds run, a wrong one exits 2, " +
    "a worker may not publish a run",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const mgr = user(), wrk = user(), stranger = user();
    await using srv = await runbookServer(mgr, wrk);
    const p = await jobProject({ "blocks/hi.lua": 'return "hi"\n', "blocks/hi.job.toml": "" });
    const seeds = join(p.home, "seeds");
    Deno.mkdirSync(seeds);
    for (const [n, u] of Object.entries({ mgr, wrk, stranger })) {
      Deno.writeTextFileSync(join(seeds, n), u.seed + "\n");
    }

    const m = await startManager(p.root, p.home, ["--nats", srv.url, "--nats-nkey", join(seeds, "mgr")]);
    const w = await startWorker(["--nats", srv.url, "--nats-nkey", join(seeds, "wrk"), "-p", p.root], p.home);
    try {
      const r = await m.api("/jobs/hi/runs", { method: "POST" });
      const run = await waitForRun(m, r.body.run_id, "ended", 120_000);
      assert.equal(run.state, "ok", JSON.stringify(run));
      assert.equal(run.result, "hi");

      // a seed the server does not know: a clear error, exit 2, no seed shown
      const bad = await runWorkerToExit(
        ["--nats", srv.url, "--nats-nkey", join(seeds, "stranger"), "-p", p.root],
        p.home,
      );
      assert.equal(bad.code, 2, bad.stderr);
      assert.match(
        bad.stderr,
        new RegExp(`cannot connect to nats://127\\.0\\.0\\.1:${srv.port}: .*refused the credentials`),
      );
      assert.ok(!bad.stderr.includes(stranger.seed));

      // the worker's user may not publish a run
      const nc = await connect({
        servers: srv.url,
        authenticator: nkeyAuthenticator(
          new TextEncoder().encode(wrk.seed),
        ),
      });
      try {
        await assert.rejects(
          jetstream(nc).publish("agent_block.runs.default.hi", "{}", { timeout: 5000 }),
          (e: Error) => /permission/i.test(`${e.message} ${(e as { cause?: Error }).cause?.message ?? ""}`),
        );
      } finally {
        await nc.close();
      }
    } finally {
      await w.stop();
      await m.stop();
    }
  },
});

Deno.test({
  name: "worker: a malformed NATS URL and an unreadable creds file are clear errors (exit 2), the URL masked",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const p = await jobProject({ "blocks/hi.lua": "return 1\n" });
    const url = await runWorkerToExit(["--nats", "http://user:hunter2@127.0.0.1:4222", "-p", p.root], p.home);
    assert.equal(url.code, 2, url.stderr);
    assert.match(
      url.stderr,
      /--nats: 'http:\/\/127\.0\.0\.1:4222' is not a NATS URL: the scheme must be nats:\/\/ or tls:\/\//,
    );
    assert.ok(!url.stderr.includes("hunter2"));
    const creds = await runWorkerToExit(
      ["--nats", "nats://127.0.0.1:4222", "--nats-creds", join(p.root, "no.creds"), "-p", p.root],
      p.home,
    );
    assert.equal(creds.code, 2, creds.stderr);
    assert.match(creds.stderr, new RegExp(`--nats-creds ${join(p.root, "no.creds")} cannot be read`));
  },
});

Deno.test({
  name: "worker: a stream AGENT_BLOCK_RUNS created earlier with other settings is refused, its messages kept",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const nc = await connect({ servers: srv.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({
        name: "AGENT_BLOCK_RUNS",
        subjects: ["agent_block.runs.>"],
        retention: RetentionPolicy.Limits,
        storage: StorageType.File,
      });
      await jetstream(nc).publish("agent_block.runs.default.x", "keep me");
      const p = await jobProject({ "blocks/hi.lua": "return 1\n" });
      const r = await runWorkerToExit(["--nats", srv.url, "-p", p.root], p.home);
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /stream AGENT_BLOCK_RUNS exists with settings the run queue cannot use: retention is limits/,
      );
      const info = await jsm.streams.info("AGENT_BLOCK_RUNS");
      assert.equal(info.state.messages, 1);
      assert.equal(info.config.retention, RetentionPolicy.Limits);
    } finally {
      await nc.close();
    }
  },
});

Deno.test({
  name: "serve --config / worker --config: the queue's URL and nkey seed from the settings file (the run " +
    "config's field names), a flag winning over its field; a bad field is an error naming the file and field",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const mgr = user(), wrk = user(), stranger = user();
    await using srv = await runbookServer(mgr, wrk);
    const p = await jobProject({ "blocks/hi.lua": 'return "hi"\n', "blocks/hi.job.toml": "" });
    const dir = join(p.home, "settings");
    Deno.mkdirSync(dir);
    const file = (name: string, text: string) => {
      Deno.writeTextFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const seeds = Object.fromEntries(
      Object.entries({ mgr, wrk, stranger }).map(([n, u]) => [n, file(`${n}.seed`, u.seed + "\n")]),
    );
    // the credentials in the URL are masked wherever the URL is shown
    const masked = srv.url.replace("nats://", "nats://someone:hunter2@");
    const manager = file("manager.json", JSON.stringify({ nats: masked, nats_nkey: seeds.mgr }));
    // the worker's file names a seed the server does not know: the flag beside it wins
    const worker = file("worker.json", JSON.stringify({ nats: srv.url, nats_nkey: seeds.stranger }));

    const m = await startManager(p.root, p.home, ["--config", manager]);
    const w = await startWorker(["--config", worker, "--nats-nkey", seeds.wrk, "-p", p.root], p.home);
    try {
      assert.ok(!m.stderr().includes("hunter2"), m.stderr());
      assert.match(
        m.stderr(),
        new RegExp(`runs through the NATS run queue on nats://127\\.0\\.0\\.1:${srv.port}`),
      );
      const r = await m.api("/jobs/hi/runs", { method: "POST" });
      const run = await waitForRun(m, r.body.run_id, "ended", 120_000);
      assert.equal(run.state, "ok", JSON.stringify(run));
      assert.equal(run.result, "hi");

      // the file's seed alone is refused by the server: exit 2, as a refused flag's
      const refused = await runWorkerToExit(["--config", worker, "-p", p.root], p.home);
      assert.equal(refused.code, 2, refused.stderr);
      assert.match(refused.stderr, /refused the credentials/);
      assert.ok(!refused.stderr.includes(stranger.seed));
      // bad settings: each names the file and the field (exit 1)
      const typo = file("typo.json", JSON.stringify({ nats: srv.url, nats_key: seeds.wrk }));
      const bad = await runWorkerToExit(["--config", typo, "-p", p.root], p.home);
      assert.equal(bad.code, 1, bad.stderr);
      assert.match(bad.stderr, /typo\.json: unknown field 'nats_key' \(known: nats, nats_creds, nats_nkey,/);
      const gone = file("gone.json", JSON.stringify({ nats: srv.url, nats_creds: join(dir, "no.creds") }));
      const unreadable = await runWorkerToExit(["--config", gone, "-p", p.root], p.home);
      assert.equal(unreadable.code, 1, unreadable.stderr);
      assert.match(unreadable.stderr, /gone\.json: field 'nats_creds' .*no\.creds cannot be read/);
      const url = file("url.json", JSON.stringify({ nats: "http://someone:hunter2@127.0.0.1:4222" }));
      const badUrl = await runWorkerToExit(["--config", url, "-p", p.root], p.home);
      assert.equal(badUrl.code, 1, badUrl.stderr);
      assert.match(badUrl.stderr, /url\.json: field 'nats': 'http:\/\/127\.0\.0\.1:4222' is not a NATS URL/);
      assert.ok(!badUrl.stderr.includes("hunter2"));
    } finally {
      await w.stop();
      await m.stop();
    }
  },
});
