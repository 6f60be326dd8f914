/**
 * `serve --nats` and `agent-block worker` (issue 30 §2, §4): real managers and workers as
 * subprocesses over a real `nats-server` with JetStream (its store in a temporary directory, on
 * 127.0.0.1 and a free port, stopped by each test). Every wait is for a state the API, the state
 * bucket or a file reports, never for elapsed time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import { processAlive, waitFor } from "../helpers.ts";
import { natsMissing, startNats } from "../mesh/nats_server.ts";
import {
  jobProject,
  type Manager,
  startManager,
  startWorker,
  waitForGoProject,
  waitForRun,
  type Worker,
} from "./serve_helpers.ts";

const ignore = natsMissing() !== undefined;

/** Every run state in the bucket, by run id. */
// deno-lint-ignore no-explicit-any
async function runStates(url: string): Promise<Map<string, any>> {
  const nc = await connect({ servers: url });
  try {
    const kv = await new Kvm(nc).open("AGENT_BLOCK_RUN_STATE");
    // deno-lint-ignore no-explicit-any
    const out = new Map<string, any>();
    for await (const k of await kv.keys("run.>")) {
      const e = await kv.get(k);
      if (e && e.operation === "PUT") out.set(k.slice(4), e.json());
    }
    return out;
  } finally {
    await nc.close();
  }
}

/** POSTs a run of `job`; its id. */
async function requestRun(m: Manager, job: string): Promise<string> {
  const r = await m.api(`/jobs/${job}/runs`, { method: "POST" });
  assert.equal(r.status, 202, JSON.stringify(r.body));
  return r.body.run_id;
}

async function stopAll(workers: Worker[], managers: Manager[]): Promise<void> {
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(managers.map((m) => m.stop()));
}

Deno.test({
  name: "serve --nats: one manager and three workers, thirty runs: each ends exactly once with its result",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) {
      files[`blocks/j${i}.lua`] = `return "j${i} " .. std.env.get("AGENT_BLOCK_RUN_ID")\n`;
      files[`blocks/j${i}.job.toml`] = 'every = "1h"\n';
    }
    const p = await jobProject(files);
    const workers = await Promise.all(
      [0, 1, 2].map(() => startWorker(["--nats", srv.url, "-p", p.root, "--max-live", "3"], p.home)),
    );
    const m = await startManager(p.root, p.home, ["--nats", srv.url, "--max-live", "30"]);
    let last = "";
    try {
      await waitFor(async () => {
        const r = await m.api("/runs?limit=100");
        last = JSON.stringify(r.body);
        // deno-lint-ignore no-explicit-any
        return r.status === 200 && r.body.runs.filter((x: any) => x.state !== "running").length >= 30;
      }, {
        what: () =>
          `30 runs to end; last /runs: ${last}\nmanager: ${m.stderr()}\n` +
          workers.map((w, i) => `worker ${i}: ${w.stderr()}`).join("\n"),
        timeoutMs: 240_000,
      });
      const runs = (await m.api("/runs?limit=100")).body.runs;
      assert.equal(runs.length, 30);
      for (let i = 0; i < 30; i++) {
        // deno-lint-ignore no-explicit-any
        const mine = runs.filter((r: any) => r.job === `j${i}`);
        assert.equal(mine.length, 1, `job j${i} ran ${mine.length} times`);
        assert.equal(
          mine[0].state,
          "ok",
          `${JSON.stringify(mine[0])}\n${workers.map((w, i) => `worker ${i}: ${w.stderr()}`).join("\n")}`,
        );
        assert.equal(mine[0].result, `j${i} ${mine[0].run_id}`);
      }
      const states = await runStates(srv.url);
      assert.equal(states.size, 30);
      const byWorker = new Set<string>();
      for (const s of states.values()) {
        assert.equal(s.state, "ok");
        assert.equal(s.attempt, 1);
        byWorker.add(s.worker);
      }
      assert.ok(byWorker.size >= 1);
    } finally {
      await stopAll(workers, [m]);
    }
  },
});

Deno.test({
  name: "serve --nats: a worker SIGKILLed mid-run: max_attempts 2 completes on another worker, 1 is lost",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    // attempt 1 starts a process that leaves its pid and sleeps; a later attempt finds the file
    const block = (name: string) =>
      `local f = _PROMPT .. "/${name}.first"
if std.fs.exists(f) then return "${name} again" end
sh.exec("sh -c 'echo $$ > " .. f .. ".tmp; mv " .. f .. ".tmp " .. f .. "; exec sleep 300'")
return "never"
`;
    const p = await jobProject({
      "blocks/retry.lua": block("retry"),
      "blocks/once.lua": block("once"),
    });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    Deno.writeTextFileSync(
      join(p.root, "blocks/retry.job.toml"),
      `max_attempts = 2\nprompt = "${scratch}"\n`,
    );
    Deno.writeTextFileSync(join(p.root, "blocks/once.job.toml"), `prompt = "${scratch}"\n`);
    const args = ["--nats", srv.url, "-p", p.root, "--ack-wait", "2s"];
    const a = await startWorker(args, p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    let b: Worker | undefined;
    try {
      const retry = await requestRun(m, "retry");
      const once = await requestRun(m, "once");
      await waitForRun(m, retry, "running");
      await waitForRun(m, once, "running");
      await waitFor(() => ["retry", "once"].every((n) => exists(join(scratch, `${n}.first`))), {
        what: "both first attempts to start",
        timeoutMs: 60_000,
      });
      const pids = ["retry", "once"].map((n) => Number(Deno.readTextFileSync(join(scratch, `${n}.first`))));
      await a.kill();
      // the killed worker's runs do not survive it
      await waitFor(() => pids.every((pid) => !processAlive(pid)), {
        what: "the killed runs' processes to end",
      });
      b = await startWorker(args, p.home);
      const r = await waitForRun(m, retry, "ended", 120_000);
      assert.equal(r.state, "ok", JSON.stringify(r));
      assert.equal(r.result, "retry again");
      const o = await waitForRun(m, once, "ended", 120_000);
      assert.equal(o.state, "lost", JSON.stringify(o));
      assert.match(o.message, /stopped answering during attempt 1 \(max_attempts = 1/);
      const states = await runStates(srv.url);
      assert.equal(states.get(retry).attempt, 2);
      assert.equal(states.get(once).state, "lost");
      assert.notEqual(states.get(retry).worker, `${Deno.hostname()}:${a.child.pid}`);
    } finally {
      await stopAll(b ? [a, b] : [a], [m]);
    }
  },
});

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test({
  name: "serve --nats: a worker without the job's project records failed with the reason; the others go on",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await jobProject({
      "blocks/orphan.lua": 'return "never here"\n',
      "blocks/orphan.job.toml": 'queue = "lonely"\nproject = "payroll"\n',
      "blocks/fine.lua": 'return "fine"\n',
      "blocks/fine.job.toml": 'project = "payroll"\n',
    });
    const other = await jobProject({ "blocks/x.lua": "return 1\n", "blocks/x.job.toml": "" });
    const w1 = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const w2 = await startWorker(["--nats", srv.url, "-p", other.root, "--queue", "lonely"], other.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    try {
      const orphan = await requestRun(m, "orphan");
      const fine = await requestRun(m, "fine");
      const o = await waitForRun(m, orphan, "ended", 120_000);
      assert.equal(o.state, "failed");
      assert.match(o.message, /does not have project 'payroll'/);
      const f = await waitForRun(m, fine, "ended", 120_000);
      assert.equal(f.state, "ok");
      assert.equal(f.result, "fine");
      // the worker without the project goes on pulling
      assert.equal(w2.child.pid > 0, true);
      const again = await requestRun(m, "orphan");
      assert.equal((await waitForRun(m, again, "ended", 120_000)).state, "failed");
    } finally {
      await stopAll([w1, w2], [m]);
    }
  },
});

/** A block that says it started, then waits for `<_PROMPT>/go` and returns `done`. */
Deno.test({
  name: "serve --nats: the NATS server restarted mid-run: the run's end is recorded",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await waitForGoProject();
    const scratch = p.scratch;
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    try {
      const id = await requestRun(m, "wait");
      await waitForRun(m, id, "running");
      await waitFor(() => exists(join(scratch, "started")), { what: "the run to start" });
      await srv.restart();
      await waitFor(() => /reconnected/.test(w.stderr()) && /reconnected/.test(m.stderr()), {
        what: `both to reconnect\n${w.stderr()}\n${m.stderr()}`,
        timeoutMs: 60_000,
      });
      Deno.writeTextFileSync(join(scratch, "go"), "");
      const r = await waitForRun(m, id, "ended", 120_000);
      assert.equal(r.state, "ok", JSON.stringify(r));
      assert.equal(r.result, "done");
      assert.equal((await runStates(srv.url)).get(id).state, "ok");
    } finally {
      await stopAll([w], [m]);
    }
  },
});

Deno.test({
  name: "serve --nats: a draining worker hands its run back and another worker completes it",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await waitForGoProject();
    const scratch = p.scratch;
    const a = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    let b: Worker | undefined;
    try {
      const id = await requestRun(m, "wait");
      await waitFor(() => exists(join(scratch, "started")), { what: "the run to start" });
      assert.equal(await a.stop(), 0);
      assert.match(a.stderr(), /handed back \(the worker is draining\)/);
      assert.equal((await runStates(srv.url)).get(id).state, "queued");
      Deno.writeTextFileSync(join(scratch, "go"), "");
      b = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
      const r = await waitForRun(m, id, "ended", 120_000);
      assert.equal(r.state, "ok", JSON.stringify(r));
      assert.equal(r.result, "done");
      const s = (await runStates(srv.url)).get(id);
      assert.equal(s.attempt, 1); // a hand-back is no attempt
      assert.equal(s.worker, `${Deno.hostname()}:${b.child.pid}`);
    } finally {
      await stopAll(b ? [b] : [], [m]);
    }
  },
});

Deno.test({
  name: "serve --nats: two managers of one project never start one interval run twice",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await jobProject({
      "blocks/tick.lua": 'sh.exec("echo ran >> \'" .. _PROMPT .. "/log\'")\nreturn "ticked"\n',
    });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    Deno.writeTextFileSync(join(p.root, "blocks/tick.job.toml"), `every = "1h"\nprompt = "${scratch}"\n`);
    const home2 = join(p.home, "second");
    Deno.mkdirSync(home2);
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const [m1, m2] = await Promise.all([
      startManager(p.root, p.home, ["--nats", srv.url]),
      startManager(p.root, home2, ["--nats", srv.url]),
    ]);
    try {
      const ends = await Promise.all([m1, m2].map((m) => waitForEndOf(m, "tick")));
      for (const e of ends) {
        assert.equal(e.state, "ok");
        assert.equal(e.result, "ticked");
      }
      assert.equal(Deno.readTextFileSync(join(scratch, "log")), "ran\n");
      assert.equal((await runStates(srv.url)).size, 1);
      // one followed the other's run: same end
      assert.equal(ends[0].ended_ms, ends[1].ended_ms);
    } finally {
      await stopAll([w], [m1, m2]);
    }
  },
});

/** The first ended run of `job` on `m`. */
// deno-lint-ignore no-explicit-any
async function waitForEndOf(m: Manager, job: string): Promise<any> {
  // deno-lint-ignore no-explicit-any
  let run: any;
  await waitFor(async () => {
    const r = await m.api(`/runs?job=${job}`);
    // deno-lint-ignore no-explicit-any
    run = r.status === 200 ? r.body.runs.find((x: any) => x.state !== "running") : undefined;
    return run !== undefined;
  }, { what: `a run of ${job} to end\n${m.stderr()}`, timeoutMs: 120_000 });
  return run;
}

Deno.test({
  name: "serve --nats: a result past 64 KiB and the run's kernel export travel through the object store",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await jobProject({
      "blocks/big.lua":
        'require("knl").session({ owner = "big" }, function() end)\nreturn string.rep("x", 100000)\n',
      "blocks/big.job.toml": "",
    });
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    try {
      const id = await requestRun(m, "big");
      const r = await waitForRun(m, id, "ended", 120_000);
      assert.equal(r.state, "ok");
      assert.equal(r.result, null); // past the inline limit
      assert.equal(r.result_bytes, 100000);
      assert.equal(Deno.readTextFileSync(r.result_file), "x".repeat(100000));
      const state = (await runStates(srv.url)).get(id);
      assert.equal(state.result_object, id);
      // the run's kernel record beside it: knl export --as events lines of its session
      assert.equal(state.knl_object, `${id}.knl`);
      const nc = await connect({ servers: srv.url });
      try {
        const os = await new Objm(nc).open("AGENT_BLOCK_RUN_RESULTS");
        const lines = new TextDecoder().decode((await os.getBlob(`${id}.knl`))!).trim().split("\n")
          .map((l) => JSON.parse(l));
        assert.equal(lines[0].stream, state.counts.sessions[0]);
        assert.ok(lines.some((l) => l.kind === "session_open"), JSON.stringify(lines[0]));
      } finally {
        await nc.close();
      }
    } finally {
      await stopAll([w], [m]);
    }
  },
});

Deno.test({
  name: "serve --nats: a manager restarted mid-run follows its run again; the run is not started twice",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await waitForGoProject(`every = "1h"\n`);
    const scratch = p.scratch;
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m1 = await startManager(p.root, p.home, ["--nats", srv.url]);
    let m2: Manager | undefined;
    try {
      await waitFor(() => exists(join(scratch, "started")), { what: "the run to start", timeoutMs: 60_000 });
      const [id] = [...(await runStates(srv.url)).keys()];
      assert.equal(await m1.stop(), 0);
      m2 = await startManager(p.root, p.home, ["--nats", srv.url]);
      await waitFor(() => /following it again/.test(m2!.stderr()), {
        what: "the manager to follow the run again",
      });
      Deno.writeTextFileSync(join(scratch, "go"), "");
      const r = await waitForRun(m2, id, "ended", 120_000);
      assert.equal(r.state, "ok", JSON.stringify(r));
      assert.equal(r.result, "done");
      const states = await runStates(srv.url);
      assert.equal(states.size, 1, "one run of the interval");
      assert.equal(states.get(id).attempt, 1);
    } finally {
      await stopAll([w], m2 ? [m2] : []);
    }
  },
});

Deno.test({
  name: "serve --nats: a flow job goes through the same queue and runs its Blueprint on the worker",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await jobProject({
      "blocks/up.lua": "return string.upper(_PROMPT)",
      "blocks/nightly.lua": "return 'the job carrier'",
      "blocks/nightly.job.toml": 'every = "1h"\nflow = "flows/up.bp.json"\n[init]\nword = "hi"\n',
      "flows/up.bp.json": JSON.stringify({
        id: "up-flow",
        agents: [{ name: "up", kind: "block", spec: { block: "up" } }],
        flow: { kind: "step", ref: "up", in: { op: "path", at: "$.word" }, out: { op: "path", at: "$.out" } },
      }),
    });
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    try {
      const r = await waitForEndOf(m, "nightly");
      assert.equal(r.state, "ok", JSON.stringify(r));
      assert.deepEqual(JSON.parse(Deno.readTextFileSync(r.result_file)).ctx, { word: "hi", out: "HI" });
      const s = (await runStates(srv.url)).get(r.run_id);
      assert.equal(s.worker, `${Deno.hostname()}:${w.child.pid}`);
    } finally {
      await stopAll([w], [m]);
    }
  },
});

Deno.test({
  name: "attack: a sandboxed flow job on a worker runs its steps as confined child runs",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    // A worker interprets a flow in its own process: with `sandbox = true` each step must still be
    // a confined child run, so a step cannot plant a library in the home's lib/ (read-only to
    // confined runs), and the flow completes with what the step saw.
    await using srv = await startNats("", { jetstream: true });
    const p = await jobProject({
      "blocks/plant.lua": `local f, err = io.open(os.getenv("AGENT_BLOCK_HOME") .. "/lib/planted.lua", "w")
if f then f:write("return 1") f:close() return "planted" end
return "refused: " .. tostring(err)`,
      "blocks/nightly.lua": "return 'the job carrier'",
      "blocks/nightly.job.toml":
        'every = "1h"\nsandbox = true\nflow = "flows/plant.bp.json"\n[init]\nword = "hi"\n',
      "flows/plant.bp.json": JSON.stringify({
        id: "plant-flow",
        agents: [{ name: "plant", kind: "block", spec: { block: "plant" } }],
        flow: {
          kind: "step",
          ref: "plant",
          in: { op: "path", at: "$.word" },
          out: { op: "path", at: "$.out" },
        },
      }),
    });
    Deno.mkdirSync(join(p.home, "lib"), { recursive: true });
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    try {
      const r = await waitForEndOf(m, "nightly");
      assert.equal(r.state, "ok", JSON.stringify(r));
      assert.match(String(JSON.parse(Deno.readTextFileSync(r.result_file)).ctx.out), /^refused: /);
      assert.throws(() => Deno.statSync(join(p.home, "lib", "planted.lua")), Deno.errors.NotFound);
    } finally {
      await stopAll([w], [m]);
    }
  },
});
