/**
 * The run queue's state beyond a run's start and end (issue 30 §2): a queued run's counts reach
 * the manager's API while the run goes (as a run's on one machine do), and the managers' interval
 * claims expire instead of piling up one per interval forever. A real `nats-server` with
 * JetStream on 127.0.0.1 (its store in a temporary directory); every wait is for a state the API
 * or the bucket reports, bounded by a deadline.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect } from "@nats-io/transport-node";
import { Kvm } from "@nats-io/kv";
import { DatabaseSync } from "node:sqlite";
import { waitFor } from "../helpers.ts";
import { exists } from "../../src/util/fs.ts";
import { natsMissing, startNats } from "../mesh/nats_server.ts";
import { jobProject, startManager, startWorker, waitForRun } from "./serve_helpers.ts";
import { openRunQueue, SLOT_TTL_MS, SLOTS_BUCKET, STATE_BUCKET } from "../../src/clients/nats/run_queue.ts";
import { QueueDispatch, slotKey } from "../../src/serve/queue_dispatch.ts";

const ignore = natsMissing() !== undefined;

/** True once the record at `path` holds the start of run `id`. */
function recordHasStart(path: string, id: string): boolean {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(
      "SELECT 1 FROM events WHERE kind = 'run_start' AND json_extract(data, '$.run_id') = ?",
    ).get(id) !== undefined;
  } finally {
    db.close();
  }
}

Deno.test({
  name: "serve --nats: a queued run's counts show on the manager's API while it runs, not only at its end",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    // one kernel session opened, then the run waits for the test's go
    const p = await jobProject({
      "blocks/count.lua": `require("knl").session({ owner = "count" }, function() end)
std.fs.write(_PROMPT .. "/started", "")
while not std.fs.exists(_PROMPT .. "/go") do std.task.sleep(0.05) end
return "done"
`,
    });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    Deno.writeTextFileSync(join(p.root, "blocks/count.job.toml"), `prompt = "${scratch}"\n`);
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    try {
      const r = await m.api("/jobs/count/runs", { method: "POST" });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const id = r.body.run_id;
      await waitFor(() => exists(join(scratch, "started")), { what: `the run to start\n${w.stderr()}` });
      // deno-lint-ignore no-explicit-any
      let live: any;
      await waitFor(async () => {
        live = (await m.api(`/runs/${id}`)).body;
        return live.counts?.sessions?.length === 1;
      }, { what: `the run's session in its live counts\n${m.stderr()}`, timeoutMs: 60_000 });
      assert.equal(live.state, "running", "the counts came while the run went");
      assert.match(live.counts.sessions[0], /^s_/);
      assert.ok(!exists(join(scratch, "go")));
      Deno.writeTextFileSync(join(scratch, "go"), "");
      const ended = await waitForRun(m, id, "ended", 120_000);
      assert.equal(ended.state, "ok", JSON.stringify(ended));
      assert.deepEqual(ended.counts.sessions, live.counts.sessions);
    } finally {
      await w.stop();
      await m.stop();
    }
  },
});

Deno.test({
  name: "run queue: interval claims live in their own bucket and expire; a worker's handles have no claims",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const nc = await connect({ servers: srv.url });
    try {
      const stopping = new AbortController();
      // a worker's connection opens the shared layout only
      const worker = await openRunQueue(nc);
      assert.equal(worker.slots, undefined);
      const kvm = new Kvm(nc);
      await assert.rejects(kvm.open(SLOTS_BUCKET).then((kv) => kv.status()), /stream not found/);

      const h = await openRunQueue(nc, { slots: true, slotTtlMs: 1500 });
      assert.equal((await h.slots!.status()).ttl, 1500);
      const opts = {
        handles: h,
        projectRoot: "/p",
        defaultProject: "p",
        stopping: stopping.signal,
        log: () => {},
      };
      const a = new QueueDispatch(opts), b = new QueueDispatch(opts);
      // two managers deciding one slot: the first claim holds it, the second follows that run
      assert.equal(await a.claimSlot("tick", 60_000, "run-a"), "run-a");
      assert.equal(await b.claimSlot("tick", 60_000, "run-b"), "run-a");
      assert.equal((await h.slots!.get(slotKey("tick", 60_000)))?.string(), "run-a");
      // nothing of the claims is in the run-state bucket
      const state = await kvm.open(STATE_BUCKET);
      assert.deepEqual(await Array.fromAsync(await state.keys()), []);
      // the server removes the claim after the bucket's max_age: no claim outlives it
      await waitFor(async () => (await h.slots!.get(slotKey("tick", 60_000))) === null, {
        what: "the claim to expire",
        timeoutMs: 30_000,
      });
      assert.deepEqual(await Array.fromAsync(await h.slots!.keys()), []);

      // the default expiry when a manager creates the bucket
      await (await kvm.open(SLOTS_BUCKET)).destroy();
      const fresh = await openRunQueue(nc, { slots: true });
      assert.equal((await fresh.slots!.status()).ttl, SLOT_TTL_MS);
      stopping.abort();
    } finally {
      await nc.close();
    }
  },
});

Deno.test({
  name: "serve --nats: a run queued while no worker runs is on the manager's record: after a SIGKILL the " +
    "restarted manager follows it, and records its end once a worker takes it",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await jobProject({ "blocks/hi.lua": 'return "hi"\n', "blocks/hi.job.toml": "" });
    const m1 = await startManager(p.root, p.home, ["--nats", srv.url]);
    let m2: Awaited<ReturnType<typeof startManager>> | undefined;
    let w: Awaited<ReturnType<typeof startWorker>> | undefined;
    try {
      const r = await m1.api("/jobs/hi/runs", { method: "POST" });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const id = r.body.run_id;
      // queued in the state bucket (published), no worker to take it
      const nc = await connect({ servers: srv.url });
      try {
        const state = await new Kvm(nc).open(STATE_BUCKET);
        await waitFor(
          async () => (await state.get(`run.${id}`))?.json<{ state: string }>().state === "queued",
          { what: () => `run ${id} to be queued\n${m1.stderr()}`, timeoutMs: 60_000 },
        );
      } finally {
        await nc.close();
      }
      // and on the manager's record (written once the run is published: a kill before it would
      // leave a run the record never had)
      await waitFor(() => recordHasStart(join(p.home, "serve.sqlite"), id), {
        what: () => `run ${id} on the manager's record\n${m1.stderr()}`,
        timeoutMs: 60_000,
      });
      // killed outright: nothing of the manager's stopping runs (a graceful stop records the run anyway)
      await m1.kill();
      m2 = await startManager(p.root, p.home, ["--nats", srv.url]);
      await waitFor(() => new RegExp(`run ${id} of job hi was going on the run queue`).test(m2!.stderr()), {
        what: () => `the restarted manager to follow run ${id}\n${m2!.stderr()}`,
        timeoutMs: 60_000, // a generous bound: it tells "never" from "late on a loaded machine"
      });
      const waiting = await m2.api(`/runs/${id}`);
      assert.equal(waiting.status, 200, JSON.stringify(waiting.body));
      assert.equal(waiting.body.state, "running");
      w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
      const ended = await waitForRun(m2, id, "ended", 120_000);
      assert.equal(ended.state, "ok", JSON.stringify(ended));
      assert.equal(ended.result, "hi");
    } finally {
      await w?.stop();
      if (m2) await m2.stop();
      else await m1.stop();
    }
  },
});

Deno.test({
  name: "worker --max-live 1 with four runs queued: one live at a time (a message received is a slot taken " +
    "until its run is live)",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await jobProject({ "blocks/x.lua": "return 1\n" });
    const scratch = join(p.root, "scratch");
    Deno.mkdirSync(scratch);
    // each run marks itself live, notes any other live run, waits for the go, unmarks itself
    const block = `local me = _PROMPT .. "/" .. std.env.get("AGENT_BLOCK_RUN_ID")
for _, f in ipairs(std.fs.glob(_PROMPT .. "/*.live")) do std.fs.write(me .. ".overlap", f) end
std.fs.write(me .. ".live", "")
while not std.fs.exists(_PROMPT .. "/go") do std.task.sleep(0.05) end
std.fs.remove(me .. ".live")
return "done"
`;
    const names = ["a", "b", "c", "d"];
    for (const n of names) {
      Deno.writeTextFileSync(join(p.root, `blocks/${n}.lua`), block);
      Deno.writeTextFileSync(join(p.root, `blocks/${n}.job.toml`), `prompt = "${scratch}"\n`);
    }
    const m = await startManager(p.root, p.home, ["--nats", srv.url, "--max-live", "4"]);
    let w: Awaited<ReturnType<typeof startWorker>> | undefined;
    const nc = await connect({ servers: srv.url });
    try {
      const ids: string[] = [];
      for (const n of names) ids.push((await m.api(`/jobs/${n}/runs`, { method: "POST" })).body.run_id);
      const state = await new Kvm(nc).open(STATE_BUCKET);
      const states = async () =>
        await Promise.all(
          ids.map(async (id) => (await state.get(`run.${id}`))?.json<{ state: string }>().state),
        );
      await waitFor(async () => (await states()).every((s) => s === "queued"), {
        what: `the four runs to be queued\n${m.stderr()}`,
        timeoutMs: 60_000,
      });
      w = await startWorker(["--nats", srv.url, "-p", p.root, "--max-live", "1"], p.home);
      await waitFor(() => [...Deno.readDirSync(scratch)].some((e) => e.name.endsWith(".live")), {
        what: `a run to go live\n${w.stderr()}`,
        timeoutMs: 60_000,
      });
      // the first run's process is up: a worker pulling past its slot would have taken more by now
      const now = await states();
      assert.equal(now.filter((s) => s === "running").length, 1, JSON.stringify(now));
      assert.equal(now.filter((s) => s === "queued").length, 3, JSON.stringify(now));
      Deno.writeTextFileSync(join(scratch, "go"), "");
      for (const id of ids) assert.equal((await waitForRun(m, id, "ended", 120_000)).state, "ok");
      const overlaps = [...Deno.readDirSync(scratch)].filter((e) => e.name.endsWith(".overlap"));
      assert.deepEqual(overlaps.map((e) => e.name), [], "two runs were live at once");
    } finally {
      await nc.close();
      await w?.stop();
      await m.stop();
    }
  },
});
