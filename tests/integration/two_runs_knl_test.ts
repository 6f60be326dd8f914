/**
 * Proof (issue #12, the run's record writer): two blocks running at the same time in one process
 * keep their kernel records apart.
 *
 * - Different files: one run writes `{ sqlite = path }`, the other the default database moved by
 *   its own environment (`AGENT_BLOCK_KNL_PATH`), each with its own commit window and correlation
 *   ids; each file holds that run's session only, gap-free, stamped with that run's ids.
 * - One shared file (one connection in the process), one run failing mid-commit: a trigger makes
 *   the database refuse one kind of row, and one run defers such a row inside a beat's batch.
 *   That run fails with the error naming how many of its events were lost; the other run — whose
 *   deferred events were waiting, uncommitted, at that very moment — loses nothing, none of its
 *   events was committed by the failing run, and all of them are committed and readable at its
 *   end with gap-free `seq`. Neither run sees the other's events in its own stream.
 *
 * The runs interleave for real: each beat's Port waits in `hold.wait`, an asynchronous host call
 * marked `deferCommit` like a model request (deferred events wait while it is in flight), and a
 * shared timeline records whose beat ran when.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { runLua, testEnv } from "../helpers.ts";
import type { LuaEngine } from "../../src/lua/engine.ts";
import { CREATE_EVENTS, LAYOUT_VERSION } from "../../src/knl/schema.ts";
import { closeStore } from "../../src/knl/store.ts";

/** Host functions shared by both runs: a model-request stand-in, a timeline, a peek, a latch. */
function harness(dbPath?: string) {
  const timeline: string[] = [];
  const flags = new Set<string>();
  const module = (engine: LuaEngine) => {
    engine.define("hold.wait", {
      deferCommit: true,
      async: (a) => new Promise((r) => setTimeout(r, a.number(1, "ms"))),
    });
    engine.define("mark.note", { pure: true, sync: (a) => void timeline.push(a.string(1, "what")) });
    engine.define("mark.set", { pure: true, sync: (a) => void flags.add(a.string(1, "flag")) });
    engine.define("mark.has", { pure: true, sync: (a) => flags.has(a.string(1, "flag")) });
    // rows committed so far in the shared file, by stream, from a second connection
    engine.define("peek.committed", {
      pure: true,
      sync: (a) => {
        const db = new DatabaseSync(dbPath!, { readOnly: true });
        try {
          const row = db.prepare("SELECT COUNT(*) AS n FROM events WHERE stream = ?").get(
            a.string(1, "stream"),
          );
          return Number((row as { n: number }).n);
        } finally {
          db.close();
        }
      },
    });
  };
  return { timeline, flags, module };
}

/** A Port that answers at once after waiting `ms` "in flight". */
const PORT = `
local function port(ms)
  local p = { profile = { provider = "test", model = "test-1" } }
  function p:chat()
    hold.wait(ms)
    return { content = { { type = "text", text = "ok" } }, stop_reason = "end_turn", model = "test-1",
      usage = { input_tokens = 1, output_tokens = 1 } }
  end
  return p
end
`;

/** Both runs interleaved: neither's marks all precede the other's. */
function assertInterleaved(timeline: string[], a: string, b: string): void {
  const first = (p: string) => timeline.findIndex((t) => t.startsWith(p));
  const last = (p: string) => timeline.findLastIndex((t) => t.startsWith(p));
  assert.ok(first(a) >= 0 && first(b) >= 0, timeline.join(" "));
  assert.ok(first(b) < last(a) && first(a) < last(b), `the runs did not interleave: ${timeline.join(" ")}`);
}

type Row = { stream: string; seq: number; kind: string; meta: string };

function rowsOf(path: string): Row[] {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return (db.prepare("SELECT stream, seq, kind, meta FROM events ORDER BY position").all() as Row[])
      .map((r) => ({ ...r, seq: Number(r.seq) }));
  } finally {
    db.close();
  }
}

function assertGapFree(rows: Row[], stream: string): void {
  const seqs = rows.filter((r) => r.stream === stream).map((r) => r.seq);
  assert.deepEqual(seqs, Array.from({ length: seqs.length }, (_, i) => i + 1), `stream ${stream}`);
}

const RUN_DIFFERENT_FILES = `${PORT}
local knl = require("knl")
local dev = knl.device({ llm = port(3) })
local out = {}
knl.session({ owner = NAME, store = STORE }, function(s)
  out.id = s.id
  for i = 1, 6 do
    mark.note(NAME .. i)
    s:append({ kind = "msg_user", data = { content = NAME .. " turn " .. i } })
    local o = knl.beat(s, dev)
    if o.kind ~= "ok" then error("beat " .. i .. ": " .. tostring(o)) end
    std.task.sleep(0.002)
  end
  out.streams = {}
  for _, e in ipairs(s:events()) do out.streams[e.stream] = true end
end)
return std.json.encode(out)
`;

Deno.test("two runs at the same time with different kernel files: each file holds its own run only", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_two_runs_knl_" });
  const projA = join(dir, "a");
  const projB = join(dir, "b");
  Deno.mkdirSync(projA);
  Deno.mkdirSync(projB);
  const pathA = join(projA, "logs", "a.sqlite");
  const pathB = join(dir, "elsewhere", "b.sqlite");
  const h = harness();
  try {
    const [a, b] = await Promise.all([
      runLua(RUN_DIFFERENT_FILES, {
        projectRoot: projA,
        env: testEnv({ AGENT_BLOCK_KNL_COMMIT_MS: "0", AGENT_BLOCK_RUN_ID: "run-A" }),
        globals: { NAME: "A", STORE: { sqlite: "logs/a.sqlite" } },
        modules: [h.module],
      }),
      runLua(RUN_DIFFERENT_FILES.replace(", store = STORE", ""), {
        projectRoot: projB,
        env: testEnv({
          AGENT_BLOCK_KNL_PATH: pathB,
          AGENT_BLOCK_KNL_COMMIT_MS: "60000",
          AGENT_BLOCK_RUN_ID: "run-B",
        }),
        globals: { NAME: "B" },
        modules: [h.module],
      }),
    ]);
    assert.equal(a.outcome.status, "returned", a.stderr + JSON.stringify(a.outcome));
    assert.equal(b.outcome.status, "returned", b.stderr + JSON.stringify(b.outcome));
    assertInterleaved(h.timeline, "A", "B");
    const outA = JSON.parse(String((a.outcome as { value: unknown }).value));
    const outB = JSON.parse(String((b.outcome as { value: unknown }).value));
    assert.deepEqual(Object.keys(outA.streams), [outA.id]);
    assert.deepEqual(Object.keys(outB.streams), [outB.id]);
    for (const [path, out, runId] of [[pathA, outA, "run-A"], [pathB, outB, "run-B"]] as const) {
      const rows = rowsOf(path);
      assert.deepEqual([...new Set(rows.map((r) => r.stream))], [out.id], `${path} holds its own run only`);
      assertGapFree(rows, out.id);
      assert.equal(rows[0].kind, "session_open");
      assert.equal(JSON.parse(rows[0].meta).run_id, runId, "the seed carries its own run's id");
      assert.equal(rows.at(-1)!.kind, "session_close");
      assert.equal(rows.filter((r) => r.kind === "llm_request").length, 6);
    }
    assert.throws(() => Deno.statSync(join(projB, ".agent-block")), Deno.errors.NotFound);
  } finally {
    closeStore(pathA);
    closeStore(pathB);
  }
});

const RUN_GOOD = `${PORT}
local knl = require("knl")
local dev = knl.device({ llm = port(4) })
local s = knl.open({ store = { sqlite = STORE } }):session({ owner = "good" })
local i = 0
-- no act on the world in this loop: every event waits, deferred, until the reads at the end
while i < 4 or (not mark.has("bad_failed") and i < 200) do
  i = i + 1
  mark.note("good" .. i)
  s:append({ kind = "note", data = { i = i } }, { defer = true })
  local o = knl.beat(s, dev)
  if o.kind ~= "ok" then error("beat " .. i .. ": " .. tostring(o)) end
end
local events = s:events()
local streams, kinds = {}, {}
for _, e in ipairs(events) do
  streams[e.stream] = true
  kinds[#kinds + 1] = e.kind
end
s:close()
return std.json.encode({ id = s.id, beats = i, streams = streams, kinds = kinds })
`;

const RUN_BAD = `${PORT}
local knl = require("knl")
local dev = knl.device({ llm = port(2) })
while GOOD_ID() == "" do std.task.sleep(0.001) end -- the other run is under way
local s = knl.open({ store = { sqlite = STORE } }):session({ owner = "bad" })
mark.set("bad_id=" .. s.id)
for i = 1, 5 do
  mark.note("bad" .. i)
  local o = knl.beat(s, dev)
  if o.kind ~= "ok" then error("beat " .. i .. ": " .. tostring(o)) end
  if i == 3 then
    s:append({ kind = "poison", data = { i = i } }, { defer = true }) -- the database refuses it
    mark.set("good_committed_before=" .. peek.committed(GOOD_ID()))
  end
  std.task.sleep(0.001) -- an act on the world: this run's deferred events commit first (or fail)
  if i == 3 then
    mark.set("good_committed_after=" .. peek.committed(GOOD_ID()))
    mark.set("bad_failed")
    s:append({ kind = "after" }) -- the run's next call through the store raises the loss
    error("not reached: the loss was not raised")
  end
end
`;

Deno.test("two runs on one file, one failing mid-commit: the other loses nothing and sees nothing of it", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_two_runs_knl_" });
  const path = join(dir, "shared.sqlite");
  const raw = new DatabaseSync(path);
  raw.exec(CREATE_EVENTS);
  raw.exec(`PRAGMA user_version = ${LAYOUT_VERSION}`);
  raw.exec(`CREATE TRIGGER refuse_poison BEFORE INSERT ON events WHEN NEW.kind = 'poison'
    BEGIN SELECT RAISE(ABORT, 'poison rows are refused'); END`);
  raw.close();
  const h = harness(path);
  // the good run announces its id through the timeline latch
  const goodSrc = RUN_GOOD.replace(
    `local i = 0`,
    `mark.set("good_id=" .. s.id)\nlocal i = 0`,
  );
  const announced = () => [...h.flags].find((f) => f.startsWith("good_id="))?.slice("good_id=".length) ?? "";
  const goodIdFn = (engine: LuaEngine) => engine.define("GOOD_ID", { pure: true, sync: () => announced() });
  try {
    const [good, bad] = await Promise.all([
      runLua(goodSrc, {
        projectRoot: dir,
        env: testEnv({ AGENT_BLOCK_KNL_COMMIT_MS: "60000" }),
        globals: { STORE: path },
        modules: [h.module],
      }),
      runLua(RUN_BAD, {
        projectRoot: dir,
        env: testEnv(),
        globals: { STORE: path },
        modules: [h.module, goodIdFn],
      }),
    ]);
    assert.equal(good.outcome.status, "returned", good.stderr + JSON.stringify(good.outcome));
    assertInterleaved(h.timeline, "good", "bad");
    const out = JSON.parse(String((good.outcome as { value: unknown }).value));
    const badId = [...h.flags].find((f) => f.startsWith("bad_id="))!.slice("bad_id=".length);
    const rows = rowsOf(path);

    // the good run: every event committed and readable, gap-free, none of the other run's
    const mine = rows.filter((r) => r.stream === out.id);
    assert.equal(mine.filter((r) => r.kind === "note").length, out.beats);
    assert.equal(mine.filter((r) => r.kind === "llm_request").length, out.beats);
    assert.equal(mine[0].kind, "session_open");
    assert.equal(mine.at(-1)!.kind, "session_close");
    assertGapFree(rows, out.id);
    assert.deepEqual(Object.keys(out.streams), [out.id]);
    assert.deepEqual(out.kinds, mine.slice(0, -1).map((r) => r.kind), "its own view is its own stream");
    // while the other run's commit failed, its events were waiting and stayed out of that commit
    assert.ok(h.flags.has("good_committed_before=0"), [...h.flags].join(" "));
    assert.ok(h.flags.has("good_committed_after=0"), [...h.flags].join(" "));

    // the failing run: its error names how many of its events were lost (beat 3's and the
    // refused row), it lost those only, and its stream stays gap-free
    const perBeat = mine.filter((r) => JSON.parse(r.meta).beat === 1).length;
    assert.ok(perBeat >= 2);
    assert.equal(bad.outcome.status, "raised");
    const message = (bad.outcome as { message: string }).message;
    assert.match(
      message,
      new RegExp(
        `knl: ${perBeat + 1} deferred event\\(s\\) could not be written to ${path}: poison rows are refused`,
      ),
    );
    const theirs = rows.filter((r) => r.stream === badId);
    assertGapFree(rows, badId);
    assert.equal(theirs.filter((r) => r.kind === "llm_request").length, 2, "beats 1 and 2 only");
    assert.ok(!theirs.some((r) => r.kind === "poison" || r.kind === "after"));
    assert.equal(theirs.at(-1)!.kind, "session_close", "the run's end closes its session");
    assert.ok(!mine.some((r) => r.kind === "poison" || r.kind === "after"));
    assert.doesNotMatch(good.stderr, /deferred event/);
  } finally {
    closeStore(path);
  }
});
