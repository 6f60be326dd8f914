/**
 * The run queue's state write across a lost request (issue 30 reliability, `kv_write.ts`): a real
 * `nats-server` with JetStream on 127.0.0.1 (its store in a temporary directory), the run queue's
 * own handles (`openRunQueue`, `JETSTREAM_TIMEOUT_MS`). The server is stalled (SIGSTOP) before a
 * write is issued, so the write's request waits unanswered in the server's socket; the write's
 * retry is held at its first lost request (`onLost`) while the test resumes, or kills and
 * restarts, the server, and then let go. Nothing depends on timing: every step waits for an
 * event (the client's timeout of a request the stalled server cannot answer), each wait bounded.
 *
 * With one key written only by the test, a revision of exactly one past the expected one shows
 * that exactly one write landed (each write is a new message of the bucket's stream).
 *
 * And once through a real worker and manager: the server stalled as a run ends, so the worker's
 * write of the run's end goes unanswered (the worker logs it: the event the test waits for before
 * it resumes the server); the run is recorded `ok` once, with its result.
 */
import assert from "node:assert/strict";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { join } from "node:path";
import { Kvm } from "@nats-io/kv";
import { settleWithin, waitFor } from "../helpers.ts";
import { startManager, startWorker, waitForGoProject, waitForRun } from "./serve_helpers.ts";
import { natsMissing, type NatsServer, startNats } from "../mesh/nats_server.ts";
import { openRunQueue, type RunQueueHandles } from "../../src/clients/nats/run_queue.ts";
import { type CasResult, casWrite, isLostRequest } from "../../src/clients/nats/kv_write.ts";

const ignore = natsMissing() !== undefined;
const KEY = "run.cas";
/** How long a wait for an event may take before the test fails (the events come in seconds). */
const BOUND_MS = 60_000;

/** A retry held at its first lost request until `open()`; `write` is the held write (it must not end first). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  let seen!: (e: Error) => void;
  const lost = new Promise<Error>((r) => (seen = r));
  let count = 0;
  return {
    /** The first lost request's error (bounded; a write that ends instead is shown). */
    lost: async (write: Promise<CasResult>) =>
      (await settleWithin(
        [Promise.race([
          lost,
          write.then((r) => Promise.reject(new Error(`the write ended: ${JSON.stringify(r)}`))),
        ])],
        "the write's first lost request",
        BOUND_MS,
      ))[0],
    open,
    /** How many lost requests the write retried after. */
    count: () => count,
    onLost: async (e: Error) => {
      count++;
      seen(e);
      await opened;
    },
  };
}

async function firstLost(g: ReturnType<typeof gate>, write: Promise<CasResult>): Promise<Error> {
  const r = await g.lost(write);
  if (r.status === "rejected") throw r.reason;
  const e = (r as PromiseFulfilledResult<Error>).value;
  assert.ok(isLostRequest(e), `a lost request, not ${e.name}: ${e.message}`);
  return e;
}

/** `p`, its failure also seen later by `settled` (a test that fails first leaves none uncaught). */
function held(p: Promise<CasResult>): Promise<CasResult> {
  p.catch(() => {});
  return p;
}

async function settled(p: Promise<CasResult>, what: string): Promise<CasResult> {
  const [r] = await settleWithin([p], what, BOUND_MS);
  if (r.status === "rejected") throw r.reason;
  return r.value;
}

/** A connection that reconnects at once and without limit (as `connection.ts`'s do). */
async function client(srv: NatsServer): Promise<{ nc: NatsConnection; h: RunQueueHandles }> {
  const nc = await connect({ servers: srv.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  return { nc, h: await openRunQueue(nc) };
}

/** A state-like text, unique to this write. */
const text = (who: string) => JSON.stringify({ who, write_id: crypto.randomUUID() });

async function current(h: RunQueueHandles): Promise<{ text: string; revision: number }> {
  const e = await h.state.get(KEY);
  assert.ok(e && e.operation === "PUT", "the key holds a value");
  return { text: e.string(), revision: e.revision };
}

Deno.test({
  name: "state write: the server stalled mid-write, the write lands late: found as written, exactly once",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const { nc, h } = await client(srv);
    try {
      const r0 = await casWrite(h.state, KEY, text("first"), 0);
      assert.ok(r0.ok);
      const update = text("update");
      const create = text("create");
      await srv.pause();
      const gu = gate();
      const gc = gate();
      // an update of the key and a create of a new one, both sent to the stalled server
      const pu = held(casWrite(h.state, KEY, update, r0.revision, { onLost: gu.onLost }));
      const pc = held(casWrite(h.state, "run.cas_new", create, 0, { onLost: gc.onLost }));
      await firstLost(gu, pu);
      await firstLost(gc, pc);
      srv.resume(); // the server reads both requests now and carries them out, unanswered
      gu.open();
      gc.open();
      const ru = await settled(pu, "the update");
      const rc = await settled(pc, "the create");
      assert.ok(ru.ok && rc.ok, JSON.stringify({ ru, rc }));
      const now = await current(h);
      assert.equal(now.text, update);
      assert.equal(ru.revision, now.revision);
      const created = await h.state.get("run.cas_new");
      assert.equal(created?.string(), create);
      assert.equal(rc.revision, created?.revision);
      // two writes landed in all (one per key) after the first: no try was written twice
      assert.equal(Math.max(ru.revision, rc.revision), r0.revision + 2);
      assert.equal((await h.jsm.streams.info("KV_AGENT_BLOCK_RUN_STATE")).state.last_seq, r0.revision + 2);
    } finally {
      await nc.close();
    }
  },
});

Deno.test({
  name: "state write: the server restarted mid-write (the request lost): written again, exactly once",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const { nc, h } = await client(srv);
    try {
      const r0 = await casWrite(h.state, KEY, text("first"), 0);
      assert.ok(r0.ok);
      const mine = text("mine");
      await srv.pause();
      const g = gate();
      const p = held(casWrite(h.state, KEY, mine, r0.revision, { onLost: g.onLost }));
      await firstLost(g, p);
      await srv.restart(); // the stalled server is killed with the request unread: it never lands
      g.open();
      const r = await settled(p, "the write");
      assert.ok(r.ok, JSON.stringify(r));
      const now = await current(h);
      assert.equal(now.text, mine);
      assert.equal(r.revision, now.revision);
      assert.equal(r.revision, r0.revision + 1, "exactly one write landed after the first");
    } finally {
      await nc.close();
    }
  },
});

Deno.test({
  name:
    "state write: two writers at one revision with the server stalled: one lands, the other is a conflict",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const a = await client(srv);
    const b = await client(srv);
    try {
      const r0 = await casWrite(a.h.state, KEY, text("first"), 0);
      assert.ok(r0.ok);
      const ta = text("a");
      const tb = text("b");
      await srv.pause();
      const ga = gate();
      const gb = gate();
      const pa = held(casWrite(a.h.state, KEY, ta, r0.revision, { onLost: ga.onLost }));
      const pb = held(casWrite(b.h.state, KEY, tb, r0.revision, { onLost: gb.onLost }));
      await firstLost(ga, pa);
      await firstLost(gb, pb);
      srv.resume(); // both requests are carried out in some order: one of them is refused
      ga.open();
      gb.open();
      const ra = await settled(pa, "writer a");
      const rb = await settled(pb, "writer b");
      assert.equal([ra, rb].filter((r) => r.ok).length, 1, JSON.stringify({ ra, rb }));
      const [won, wonText, lostR] = ra.ok ? [ra, ta, rb] : [rb, tb, ra];
      assert.ok(won.ok && !lostR.ok);
      assert.equal(lostR.current?.string(), wonText, "the loser is shown the winner's write");
      const now = await current(a.h);
      assert.equal(now.text, wonText);
      assert.equal(now.revision, won.revision);
      assert.equal(won.revision, r0.revision + 1, "exactly one write landed after the first");
      // and a plain stale write is refused too
      const stale = await casWrite(b.h.state, KEY, text("stale"), r0.revision);
      assert.ok(!stale.ok);
      assert.equal((await current(a.h)).text, wonText);
    } finally {
      await a.nc.close();
      await b.nc.close();
    }
  },
});

Deno.test({
  name: "state write: restarted mid-write and another writer landed first: a conflict, never a blind write",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const a = await client(srv);
    const b = await client(srv);
    try {
      const r0 = await casWrite(a.h.state, KEY, text("first"), 0);
      assert.ok(r0.ok);
      const ta = text("a");
      const tb = text("b");
      await srv.pause();
      const ga = gate();
      const pa = held(casWrite(a.h.state, KEY, ta, r0.revision, { onLost: ga.onLost }));
      await firstLost(ga, pa);
      await srv.restart(); // a's request is lost with the server
      // b writes at the same revision while a is held: b lands
      const rb = await settled(casWrite(b.h.state, KEY, tb, r0.revision), "writer b");
      assert.ok(rb.ok, JSON.stringify(rb));
      ga.open();
      const ra = await settled(pa, "writer a");
      assert.ok(!ra.ok, JSON.stringify(ra));
      assert.equal(ra.current?.string(), tb);
      const now = await current(a.h);
      assert.equal(now.text, tb);
      assert.equal(now.revision, r0.revision + 1, "only b's write landed");
    } finally {
      await a.nc.close();
      await b.nc.close();
    }
  },
});

const exists = (path: string) => {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
};

Deno.test({
  name: "worker: the server stalled as a run ends: its end, written over a lost request, is recorded once",
  ignore,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using srv = await startNats("", { jetstream: true });
    const p = await waitForGoProject();
    const scratch = p.scratch;
    const w = await startWorker(["--nats", srv.url, "-p", p.root], p.home);
    const m = await startManager(p.root, p.home, ["--nats", srv.url]);
    let resumed = false;
    try {
      const r = await m.api("/jobs/wait/runs", { method: "POST" });
      assert.equal(r.status, 202, JSON.stringify(r.body));
      const id = r.body.run_id;
      await waitForRun(m, id, "running");
      await waitFor(() => exists(join(scratch, "started")), { what: `the run to start\n${w.stderr()}` });
      await srv.pause();
      Deno.writeTextFileSync(join(scratch, "go"), ""); // the run ends; its end is written to a stalled server
      await waitFor(() => new RegExp(`run ${id}: writing its state ok went unanswered`).test(w.stderr()), {
        what: () => `the worker's end write to go unanswered\n${w.stderr()}`,
        timeoutMs: BOUND_MS,
      });
      srv.resume();
      resumed = true;
      const ended = await waitForRun(m, id, "ended", 120_000);
      assert.equal(ended.state, "ok", JSON.stringify(ended));
      assert.equal(ended.result, "done");
      const runs = (await m.api("/runs?limit=100")).body.runs;
      assert.equal(runs.length, 1, JSON.stringify(runs));
      assert.doesNotMatch(w.stderr(), /not recorded|a run failed in the worker/);
      const nc = await connect({ servers: srv.url });
      try {
        const e = await (await new Kvm(nc).open("AGENT_BLOCK_RUN_STATE")).get(`run.${id}`);
        const s = e?.json<{ state: string; attempt: number }>();
        assert.equal(s?.state, "ok");
        assert.equal(s?.attempt, 1);
      } finally {
        await nc.close();
      }
    } finally {
      if (!resumed) srv.resume();
      await w.stop();
      await m.stop();
    }
  },
});
