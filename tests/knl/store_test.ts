/**
 * The event store on real SQLite files: appends and reads, the session-tree transaction,
 * a run's deferred events (its `EventWriter`) and when they commit, the read-only query guard,
 * the layout-1 migration fixture, upcasting, and the process cache. Settings are given to the
 * writer, never read from the process environment.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { closeStore, EventStore, openExistingStore, openStore } from "../../src/knl/store.ts";
import { readOnlyQuery } from "../../src/knl/query.ts";
import { exportSession, listSessions, UnknownSession } from "../../src/knl/export.ts";
import { CREATE_EVENTS, LAYOUT_VERSION, SESSION_INDEX } from "../../src/knl/schema.ts";
import { DEFAULT_COMMIT_WINDOW_MS } from "../../src/knl/commit_window.ts";
import { DEFAULT_BUSY_TIMEOUT_MS } from "../../src/knl/busy_timeout.ts";
import { EventWriter } from "../../src/knl/writer.ts";
import { agentRunKinds, REPO_ROOT } from "../helpers.ts";

const FIXTURE = join(REPO_ROOT, "tests", "fixtures", "knl_layout1.sqlite");

async function tempDb(name = "knl.sqlite"): Promise<string> {
  return join(await Deno.makeTempDir({ prefix: "ab_knl_" }), name);
}

/** A run's writer over `store` with the given window (the default unless told). */
const writer = (store: EventStore, commitWindowMs = DEFAULT_COMMIT_WINDOW_MS) =>
  new EventWriter(store, { commitWindowMs, busyTimeoutMs: DEFAULT_BUSY_TIMEOUT_MS });

const ev = (stream: string, kind: string, data: unknown = {}, meta: unknown = {}) => ({
  stream,
  kind,
  data: JSON.stringify(data),
  meta: JSON.stringify(meta),
});

Deno.test("append numbers each stream from 1 and reads back in seq order", async () => {
  const path = await tempDb();
  const s = openStore(path);
  const a1 = s.append(ev("a", "x", { n: 1 }));
  const b1 = s.append(ev("b", "x", { n: 1 }));
  const a2 = s.append(ev("a", "y", { n: 2 }, { beat: 1 }));
  assert.equal(a1.seq, 1);
  assert.equal(b1.seq, 1);
  assert.equal(a2.seq, 2);
  assert.ok(a1.position < b1.position && b1.position < a2.position);
  const rows = s.read("a");
  assert.deepEqual(rows.map((r) => [r.seq, r.kind, r.data.n, r.meta.beat]), [[1, "x", 1, undefined], [
    2,
    "y",
    2,
    1,
  ]]);
  assert.deepEqual(s.read("a", 2).map((r) => r.seq), [2]);
  assert.deepEqual(s.tail("a", 1).map((r) => r.kind), ["y"]);
  assert.equal(s.hasStream("a"), true);
  assert.equal(s.hasStream("zz"), false);
  // WAL and the explicit busy timeout are in force
  assert.equal((s.db.prepare("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode, "wal");
  assert.equal((s.db.prepare("PRAGMA busy_timeout").get() as { timeout: number }).timeout, 30000);
  closeStore(path);
});

Deno.test("one file is one connection per process", async () => {
  const path = await tempDb();
  const a = openStore(path);
  const b = openStore(path);
  assert.equal(a, b);
  closeStore(path);
  assert.equal(a.closed, true);
  const c = openStore(path);
  assert.notEqual(c, a);
  closeStore(path);
});

Deno.test("appendMany is one transaction: all or nothing", async () => {
  const path = await tempDb();
  const s = openStore(path);
  s.appendMany([ev("p", "session_open"), ev("c1", "session_open"), ev("c2", "session_open")]);
  assert.equal(s.read("c2").length, 1);
  assert.throws(() =>
    s.appendMany([ev("p", "ok"), { stream: "p", kind: "bad", data: "not json", meta: "{}" }])
  );
  assert.deepEqual(s.read("p").map((r) => r.kind), ["session_open"]);
  closeStore(path);
});

Deno.test("deferred events commit with the next append, in order, stamped when appended", async () => {
  const path = await tempDb();
  const s = writer(openStore(path));
  const other = new DatabaseSync(path); // another connection: sees committed rows only
  const committed = () =>
    (other.prepare("SELECT kind FROM events ORDER BY position").all() as { kind: string }[])
      .map((r) => r.kind);
  s.append(ev("a", "first"));
  s.deferMany([ev("a", "d1"), ev("a", "d2")]);
  assert.equal(s.pending, 2);
  assert.deepEqual(committed(), ["first"]);
  await new Promise((r) => setTimeout(r, 5)); // a clock tick between deferral and commit
  const next = s.append(ev("a", "next"));
  assert.equal(s.pending, 0);
  assert.deepEqual(committed(), ["first", "d1", "d2", "next"]);
  assert.equal(next.seq, 4);
  const rows = s.read("a");
  assert.deepEqual(rows.map((r) => r.seq), [1, 2, 3, 4]);
  assert.ok(rows[1].epoch_ms < rows[3].epoch_ms, "a deferred event keeps the time it was appended");
  other.close();
  closeStore(path);
});

Deno.test("deferred events commit before a read, on flush, on close, and once the commit window has passed", async () => {
  const path = await tempDb();
  const s = writer(openStore(path), 5);
  const other = new DatabaseSync(path);
  const count = () => Number((other.prepare("SELECT COUNT(*) AS n FROM events").get() as { n: number }).n);
  s.defer(ev("a", "d"));
  assert.equal(s.read("a").length, 1); // a read of this store sees them, because it commits them
  assert.equal(count(), 1);
  s.defer(ev("a", "d"));
  assert.equal(s.query("SELECT kind FROM events").length, 2);
  s.defer(ev("a", "d"));
  s.flush();
  assert.equal(count(), 3);
  s.defer(ev("a", "d"));
  s.defer(ev("a", "d"));
  await Promise.resolve();
  assert.equal(count(), 3, "they wait out the window, not just the current stack");
  // a timer armed after the store's, for a later time, fires after it
  await new Promise((resolve) => setTimeout(resolve, s.commitWindowMs + 1));
  assert.equal(count(), 5, "both committed together once the window passed");
  assert.equal(s.pending, 0);
  s.defer(ev("a", "d"));
  s.close(); // the run's end: commits, and disarms the window's timer (the op sanitizer would see it)
  assert.equal(count(), 6);
  closeStore(path);
  other.close();
});

Deno.test("many deferred events of several streams commit in append order with gap-free seqs", async () => {
  const path = await tempDb();
  const s = writer(openStore(path));
  s.append(ev("b", "first")); // b already has seq 1
  const streams = ["a", "b", "c"];
  for (let i = 0; i < 70; i++) s.defer(ev(streams[i % 3], "d", { i }));
  s.flush();
  const rows = readOnlyQuery(s.store, "SELECT stream, seq, data FROM events ORDER BY position") as {
    stream: string;
    seq: number;
    data: { i: number };
  }[];
  assert.equal(rows.length, 71);
  assert.deepEqual(rows.slice(1).map((r) => r.data.i), Array.from({ length: 70 }, (_, i) => i));
  for (const st of streams) {
    const seqs = rows.filter((r) => r.stream === st).map((r) => Number(r.seq));
    assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1), `stream ${st}`);
  }
  closeStore(path);
});

Deno.test("with a commit window of 0, deferred events commit when the stack unwinds", async () => {
  const path = await tempDb();
  const s = writer(openStore(path), 0);
  const other = new DatabaseSync(path);
  const count = () => Number((other.prepare("SELECT COUNT(*) AS n FROM events").get() as { n: number }).n);
  s.defer(ev("a", "d"));
  assert.equal(count(), 0);
  await Promise.resolve(); // the microtask queued by the deferral has run
  assert.equal(count(), 1);
  s.close();
  closeStore(path);
  other.close();
});

Deno.test("a deferred event that cannot be written is dropped with an error naming it; the next commit works", async () => {
  const path = await tempDb();
  const s = writer(openStore(path));
  s.defer({ stream: "p", kind: "bad", data: "not json", meta: "{}" });
  assert.throws(() => s.append(ev("p", "ok")), /1 deferred event\(s\) could not be written/);
  assert.equal(s.pending, 0);
  s.append(ev("p", "ok"));
  assert.deepEqual(s.read("p").map((r) => r.kind), ["ok"]);
  s.close();
  closeStore(path);
});

Deno.test("a layout-2 file's general kind index is replaced by the partial session index on open", async () => {
  const path = await tempDb();
  const raw = new DatabaseSync(path);
  raw.exec(CREATE_EVENTS.replace(SESSION_INDEX, "CREATE INDEX events_by_kind ON events (kind, stream);"));
  raw.exec(`PRAGMA user_version = ${LAYOUT_VERSION}`);
  raw.close();
  const s = new EventStore(path);
  const names = (s.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").all() as {
    name: string;
  }[]).map((r) => r.name);
  assert.deepEqual(names, ["events_session_opens", "sqlite_autoindex_events_1"]);
  const plan = (s.db.prepare(
    "EXPLAIN QUERY PLAN SELECT stream FROM events WHERE kind = 'session_open' ORDER BY position DESC LIMIT 5",
  ).all() as { detail: string }[]).map((r) => r.detail).join("; ");
  assert.match(plan, /USING INDEX events_session_opens/);
  s.close();
});

Deno.test("the query guard allows one SELECT over events and nothing else", () => {
  const s = new EventStore(":memory:");
  s.append(ev("a", "x", { v: 1 }));
  assert.deepEqual(readOnlyQuery(s, "SELECT json_extract(data, '$.v') AS v FROM events"), [{ v: 1 }]);
  assert.deepEqual(readOnlyQuery(s, "select data from events -- trailing comment; with a semicolon"), [{
    data: { v: 1 },
  }]);
  assert.deepEqual(readOnlyQuery(s, "SELECT ';' AS s;"), [{ s: ";" }]);
  assert.throws(() => readOnlyQuery(s, "SELECT 1; SELECT 2"), /only one statement/);
  assert.throws(() => readOnlyQuery(s, "INSERT INTO events (stream) VALUES ('x')"), /only a SELECT/);
  assert.throws(() => readOnlyQuery(s, "PRAGMA user_version"), /only a SELECT/);
  assert.throws(() => readOnlyQuery(s, "SELECT * FROM sqlite_master"), /refused: reading sqlite_master/);
  assert.throws(
    () => readOnlyQuery(s, "WITH t AS (SELECT 1) DELETE FROM events"),
    /refused|not authorized/,
  );
  // the connection is usable for appends afterwards (the authorizer is gone)
  s.append(ev("a", "y"));
  assert.equal(s.read("a").length, 2);
  s.close();
});

Deno.test("the layout-1 fixture is brought forward once, keeping order, labels and beats", async () => {
  const path = await tempDb("old.sqlite");
  Deno.copyFileSync(FIXTURE, path);
  const s = new EventStore(path);
  assert.equal(s.openedLayout, 1);
  const raw = new DatabaseSync(path);
  assert.equal(
    (raw.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
    LAYOUT_VERSION,
  );
  const tables =
    (raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .all() as { name: string }[])
      .map((r) => r.name);
  assert.deepEqual(tables, ["events"]);
  raw.close();

  const a = s.read("old-a");
  // one turn with one tool call, closed without an agent_result (layout 1 had none)
  assert.deepEqual(a.map((r) => r.kind), agentRunKinds({ turns: [1], agentResult: false }));
  assert.equal(a[0].epoch_ms, Date.parse("2026-01-02T03:04:05.000Z"));
  assert.deepEqual(a[0].meta, { job: "nightly", run: "nightly-1" });
  assert.deepEqual(a[0].data, { owner: "nightly", budget: { amount: 4, tag: "beats" } });
  // upcast to today's shapes
  assert.deepEqual(a[1].data, { content: "what is 2+3?" });
  assert.deepEqual(a[3].data, {
    content: [{ type: "text", text: "calling add" }],
    model: "old-model",
    stop_reason: "tool_use",
    usage: { input_tokens: 12, output_tokens: 7, total_tokens: 19 },
  });
  assert.equal(a[3].meta.beat, 1);
  assert.deepEqual(a[4].data, { id: "tu1", name: "add", input: { a: 2, b: 3 } });
  assert.deepEqual(a[5].data, { id: "tu1", name: "add", content: "5", is_error: false });
  assert.deepEqual(a[6].data, { status: "ok" });
  assert.ok(a.every((r) => r.schema_version === 2));
  // stored rows keep their version: upcasting happens on read
  const stored = readOnlyQuery(s, "SELECT DISTINCT schema_version FROM events");
  assert.deepEqual(stored, [{ schema_version: 1 }]);
  // global order kept: old-b's open sits between old-a's open and its message
  const order = readOnlyQuery(s, "SELECT stream, seq FROM events ORDER BY position LIMIT 3");
  assert.deepEqual(order.map((r) => `${r.stream}:${r.seq}`), ["old-a:1", "old-b:1", "old-a:2"]);

  // the sessions listing and the export read it like any other log
  const sessions = listSessions(s);
  assert.deepEqual(sessions.map((x) => [x.id, x.closed, x.beats, x.tokens]), [["old-b", false, 0, 0], [
    "old-a",
    true,
    1,
    19,
  ]]);
  assert.deepEqual(listSessions(s, { labels: { job: "nightly" } }).map((x) => x.id), ["old-a"]);
  const msgs = exportSession(s, "old-a", "messages");
  assert.deepEqual(msgs.map((m) => m.kind), ["msg_user", "llm_response", "tool_call", "tool_result"]);
  assert.throws(() => exportSession(s, "nope", "events"), UnknownSession);

  // new appends continue the migrated streams
  assert.equal(s.append(ev("old-b", "msg_user", { content: "later" })).seq, 3);
  s.close();
  // a second open finds today's layout and migrates nothing
  const again = new EventStore(path);
  assert.equal(again.openedLayout, LAYOUT_VERSION);
  assert.equal(again.read("old-b").length, 3);
  again.close();
});

Deno.test("a database from a newer layout is refused, an absent one is not created by readers", async () => {
  const path = await tempDb("new.sqlite");
  const raw = new DatabaseSync(path);
  raw.exec("PRAGMA user_version = 99");
  raw.close();
  assert.throws(() => new EventStore(path), /layout 99, newer than this release understands/);
  const missing = await tempDb("absent.sqlite");
  assert.throws(() => openExistingStore(missing), /no kernel database at/);
  assert.throws(() => Deno.statSync(missing), Deno.errors.NotFound);
});
