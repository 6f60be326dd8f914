/**
 * Run writers (`EventWriter`) over one shared connection: each run's deferred events, commit
 * window, busy timeout and failures are its own. Two writers on one `EventStore` stand for two
 * runs of one process writing to one file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { closeStore, type EventRow, type EventStore, type NewEvent, openStore } from "../../src/knl/store.ts";
import { EventWriter } from "../../src/knl/writer.ts";
import { DEFAULT_BUSY_TIMEOUT_MS } from "../../src/knl/busy_timeout.ts";
import { settingsFromEnv } from "../../src/config/env_settings.ts";

const BUSY_TIMEOUT_ENV = "AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS";
const busyTimeoutMs = (env: Map<string, string>) =>
  settingsFromEnv(env).knlBusyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;

async function tempDb(): Promise<string> {
  return join(await Deno.makeTempDir({ prefix: "ab_knl_writer_" }), "knl.sqlite");
}

const ev = (stream: string, kind: string, data: unknown = {}): NewEvent => ({
  stream,
  kind,
  data: JSON.stringify(data),
  meta: "{}",
});
const BAD = (stream: string): NewEvent => ({ stream, kind: "bad", data: "not json", meta: "{}" });

const writer = (store: EventStore, commitWindowMs = 60_000, busyTimeoutMs = DEFAULT_BUSY_TIMEOUT_MS) =>
  new EventWriter(store, { commitWindowMs, busyTimeoutMs });

/** Kinds committed so far, by stream, seen from a second connection. */
function committed(path: string): { stream: string; seq: number; kind: string }[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare("SELECT stream, seq, kind FROM events ORDER BY position").all() as {
      stream: string;
      seq: number;
      kind: string;
    }[]).map((r) => ({ stream: r.stream, seq: Number(r.seq), kind: r.kind }));
  } finally {
    db.close();
  }
}

Deno.test("two writers on one connection: each commit carries its own writer's events only", async () => {
  const path = await tempDb();
  const store = openStore(path);
  const a = writer(store);
  const b = writer(store);
  a.defer(ev("a", "a1"));
  b.defer(ev("b", "b1"));
  a.defer(ev("a", "a2"));
  b.defer(ev("b", "b2"));
  assert.deepEqual([a.pending, b.pending], [2, 2]);
  a.append(ev("a", "a3")); // a's commit point
  assert.deepEqual(committed(path).map((r) => r.kind), ["a1", "a2", "a3"]);
  assert.equal(b.pending, 2, "b's events wait for b's own commit");
  // a read straight on the store (an outside reader) sees what is committed, nothing deferred
  assert.equal(store.hasStream("b"), false);
  // a read through b commits b's events first
  assert.deepEqual(b.read("b").map((r) => [r.seq, r.kind]), [[1, "b1"], [2, "b2"]]);
  a.defer(ev("a", "a4"));
  b.settle(); // b's effect hook: nothing of a's goes with it
  assert.equal(a.pending, 1);
  a.close();
  b.close();
  assert.deepEqual(committed(path).map((r) => `${r.stream}:${r.seq}:${r.kind}`), [
    "a:1:a1",
    "a:2:a2",
    "a:3:a3",
    "b:1:b1",
    "b:2:b2",
    "a:4:a4",
  ]);
  closeStore(path);
});

Deno.test("interleaved appends of two writers to one stream keep seq gap-free in commit order", async () => {
  const path = await tempDb();
  const store = openStore(path);
  const a = writer(store);
  const b = writer(store);
  for (let i = 0; i < 40; i++) {
    const w = i % 2 === 0 ? a : b;
    if (i % 3 === 0) w.append(ev("shared", "now", { i }));
    else w.defer(ev("shared", "later", { i }));
    if (i % 7 === 0) (i % 2 === 0 ? b : a).flush();
  }
  a.close();
  b.close();
  const rows = committed(path);
  assert.equal(rows.length, 40);
  assert.deepEqual(rows.map((r) => r.seq), Array.from({ length: 40 }, (_, i) => i + 1));
  closeStore(path);
});

Deno.test("one bad row drops its writer's batch only, with the count, raised in that writer only", async () => {
  const path = await tempDb();
  const store = openStore(path);
  const good = writer(store);
  const bad = writer(store);
  good.defer(ev("g", "g1"));
  bad.defer(ev("x", "x1"));
  bad.defer(BAD("x"));
  bad.defer(ev("x", "x2"));
  good.defer(ev("g", "g2"));
  // the bad writer's commit fails on its batch: all three are lost, good's two are untouched
  assert.throws(
    () => bad.append(ev("x", "x3")),
    new RegExp(`^DeferredRowsFailed: knl: 3 deferred event\\(s\\) could not be written to ${path}: `),
  );
  assert.equal(bad.pending, 0);
  assert.equal(good.pending, 2);
  assert.deepEqual(committed(path), [], "the failed transaction wrote nothing, x3 included");
  // the good writer commits as if nothing happened; the bad one goes on after its error
  assert.deepEqual(good.read("g").map((r) => r.kind), ["g1", "g2"]);
  assert.equal(bad.append(ev("x", "x4")).seq, 1);
  good.close();
  bad.close();
  closeStore(path);
});

Deno.test("a loss where no caller could hear it (settle, the window) is raised by the run's next call", async () => {
  const path = await tempDb();
  const store = openStore(path);
  const good = writer(store, 1);
  const bad = writer(store);
  bad.defer(BAD("x"));
  bad.settle(); // the effect hook: must not throw
  assert.equal(bad.pending, 0);
  good.defer(ev("g", "g1"));
  bad.defer(ev("x", "ok-later"));
  bad.settle(); // these are not held back by the earlier loss
  assert.deepEqual(committed(path).map((r) => r.kind), ["ok-later"]);
  await new Promise((r) => setTimeout(r, 5)); // good's window passes: its timer commits g1
  assert.deepEqual(committed(path).map((r) => r.kind), ["ok-later", "g1"]);
  // a second loss before anyone heard of the first is added to it
  bad.defer(BAD("x"));
  bad.defer(BAD("x"));
  bad.settle();
  assert.throws(() => bad.append(ev("x", "never")), /knl: 3 deferred event\(s\) could not be written/);
  assert.deepEqual(committed(path).map((r) => r.kind), ["ok-later", "g1"], "the raising call wrote nothing");
  assert.doesNotThrow(() => good.flush());
  bad.append(ev("x", "after"));
  good.close();
  bad.close();
  closeStore(path);
});

Deno.test("AGENT_BLOCK_KNL_BUSY_TIMEOUT_MS read at the edge: whole ms; a malformed one is an error naming it", () => {
  const env = (raw?: string) => new Map(raw === undefined ? [] : [[BUSY_TIMEOUT_ENV, raw]]);
  assert.equal(busyTimeoutMs(env()), DEFAULT_BUSY_TIMEOUT_MS);
  assert.equal(busyTimeoutMs(env("")), DEFAULT_BUSY_TIMEOUT_MS, "blank is unset");
  assert.equal(busyTimeoutMs(env("0")), 0);
  assert.equal(busyTimeoutMs(env("1500")), 1500);
  for (const raw of ["-1", "2.5", "soon"]) {
    assert.throws(
      () => busyTimeoutMs(env(raw)),
      new RangeError(
        `${BUSY_TIMEOUT_ENV} must be a whole number of milliseconds from 0 to 2147483647, got '${raw}'`,
      ),
    );
  }
});

Deno.test("each writer's window and busy timeout are its own over the shared connection", async () => {
  const path = await tempDb();
  const store = openStore(path, { busyTimeoutMs: 1234 });
  assert.equal(store.busyTimeoutMs, 1234, "the first opener's timeout opens the connection");
  assert.equal(openStore(path, { busyTimeoutMs: 99 }), store, "a later opener shares it");
  const busy = () => (store.db.prepare("PRAGMA busy_timeout").get() as { timeout: number }).timeout;
  const fast = writer(store, 0, 250);
  const slow = writer(store, 60_000, 4000);
  fast.defer(ev("f", "f1"));
  slow.defer(ev("s", "s1"));
  await Promise.resolve(); // fast's window of 0: committed when the stack unwinds
  assert.deepEqual(committed(path).map((r) => r.kind), ["f1"]);
  assert.equal(busy(), 250, "fast's commit ran under fast's timeout");
  slow.flush();
  assert.equal(busy(), 4000);
  fast.read("f");
  assert.equal(busy(), 250);
  fast.close();
  slow.close();
  closeStore(path);
});

Deno.test("a store closed under a writer's deferred events: they are dropped, the error names how many", async () => {
  const path = await tempDb();
  const w = writer(openStore(path));
  w.defer(ev("a", "1"));
  w.defer(ev("a", "2"));
  closeStore(path);
  assert.throws(
    () => w.flush(),
    /knl: 2 deferred event\(s\) could not be written to .*: knl: the store .* is closed/,
  );
  assert.equal(w.pending, 0);
  w.close(); // nothing left, no timer armed
  assert.throws(() => w.defer(ev("a", "3")), /the run's writer of .* is closed/);
});

Deno.test("an observed writer hands each commit over as the rows a reader gets, in commit order", async () => {
  const path = await tempDb();
  const store = openStore(path);
  const seen: EventRow[][] = [];
  const watched = new EventWriter(store, {
    commitWindowMs: 60_000,
    busyTimeoutMs: DEFAULT_BUSY_TIMEOUT_MS,
    onCommit: (rows) => seen.push([...rows]),
  });
  const other = writer(store); // another run of the process, not observed
  watched.append(ev("w", "open", { n: 0 }));
  other.append(ev("o", "theirs"));
  // more deferred rows than one multi-row INSERT takes (32), several streams, then a commit point
  for (let i = 1; i <= 70; i++) watched.defer(ev(i % 3 === 0 ? "w2" : "w", "step", { i, x: 1.5 }));
  other.defer(ev("o", "theirs-deferred"));
  watched.appendMany([ev("w", "point"), ev("w2", "point")]);
  watched.defer(ev("w", "late"));
  watched.settle(); // the effect hook's commit, no caller
  other.flush();
  watched.flush(); // nothing waits: no empty hand-over
  watched.close();
  other.close();

  assert.deepEqual(seen.map((c) => c.length), [1, 72, 1], "one hand-over per committed transaction");
  const streamed = seen.flat();
  assert.ok(streamed.every((r) => r.stream !== "o"), "another writer's rows are not this writer's");
  // exactly what the store gives a reader afterwards, row for row (positions of multi-row INSERTs too)
  const byStream = (s: string) => streamed.filter((r) => r.stream === s);
  for (const s of ["w", "w2"]) assert.deepEqual(byStream(s), store.read(s), s);
  const positions = streamed.map((r) => r.position);
  assert.deepEqual(positions, [...positions].sort((x, y) => x - y), "commit order");
  closeStore(path);
});
