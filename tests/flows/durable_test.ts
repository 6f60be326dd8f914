/**
 * The durable record, resume, rerun and cancellation, in process (acceptance checks 20–24 of the
 * flow reference, §5.2; the SIGKILL check 19 is in cli_test.ts). Blocks count their own
 * invocations in files, so "only that step ran again" is proved by the counts, not by timing.
 * The run's lock in process: a live run refuses a resume or rerun; an in-memory store's runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { pathExists, waitFor } from "../helpers.ts";
import { blockAgent, flowProject, L, P, seq, step } from "./flow_helpers.ts";
import { rerunFlow, resumeFlow } from "../../src/flows/run.ts";
import { exportSession } from "../../src/knl/export.ts";
import { sha256Hex } from "../../src/flows/hash.ts";
import { AgentBlockError } from "../../src/errors.ts";
import { listFlowRuns, UnknownFlowRun } from "../../src/flows/record.ts";
import { FlowRunBusy, runIsLive, runLockPath } from "../../src/flows/run_lock.ts";
import { lockIsHeld } from "../../src/util/file_lock.ts";
import { EventStore } from "../../src/knl/store.ts";

/** A block that logs `_STEP_KEY` to calls/<name>.log and returns `_PROMPT .. suffix`. */
const counted = (name: string, body = "") =>
  `local f = "calls/${name}.log"
std.fs.write(f, (std.fs.exists(f) and std.fs.read(f) or "") .. _STEP_KEY .. "\\n")
${body}
return _PROMPT .. "-${name}"`;

const calls = (root: string, name: string): string[] => {
  try {
    // complete lines only: the step may be seen between creating the file and writing its line
    return Deno.readTextFileSync(join(root, "calls", `${name}.log`)).split("\n").slice(0, -1);
  } catch {
    return [];
  }
};

const waitGo = `while not std.fs.exists("go") do std.task.sleep(0.02) end`;
const failUnlessFixed = `if not std.fs.exists("fixed") then error("not fixed yet", 0) end`;

Deno.test("a loop's repeated step with equal input records occurrences 0, 1, 2; after a cancel, resume replays each once", async () => {
  const f = await flowProject({
    "calls/.keep": "",
    "blocks/same.lua": counted("same"),
    "blocks/stop.lua": counted("stop", waitGo),
  });
  const compiled = f.compile({
    id: "loop",
    agents: [blockAgent("same"), blockAgent("stop")],
    flow: seq(
      { kind: "loop", counter: P("$.n"), cond: L(true), body: step("same", L("x"), "$.v"), max: 3 },
      step("stop", L("y"), "$.stopped"),
    ),
  });
  const abort = new AbortController();
  const { runFlow } = await import("../../src/flows/run.ts");
  const running = runFlow({ ...f.options(compiled), signal: abort.signal });
  await waitFor(() => calls(f.root, "stop").length === 1, { what: "the stop step to start" });
  abort.abort("test stop");
  const first = await running;
  assert.equal(first.status, "cancelled");
  const rec = f.store().read(first.runId);
  assert.deepEqual(
    rec.filter((e) => e.kind === "flow.step_completed" && e.data.ref === "same").map((e) =>
      e.data.occurrence
    ),
    [0, 1, 2],
  );
  assert.ok(rec.some((e) => e.kind === "flow.cancel_requested" && e.data.reason === "test stop"));
  assert.deepEqual(rec.find((e) => e.kind === "flow.run_finished")?.data.status, "cancelled");

  await Deno.writeTextFile(join(f.root, "go"), "");
  const resumed = await resumeFlow(first.runId, f.options(compiled));
  assert.equal(resumed.status, "completed", JSON.stringify(resumed.error));
  assert.deepEqual(resumed.ctx, { n: 3, v: "x-same", stopped: "y-stop" });
  assert.equal(calls(f.root, "same").length, 3, "no occurrence of 'same' ran again");
  assert.equal(calls(f.root, "stop").length, 2, "the cancelled step ran again");
  const after = f.store().read(first.runId);
  const resumedAt = after.findIndex((e) => e.kind === "flow.run_resumed");
  assert.deepEqual(
    after.slice(resumedAt).filter((e) => e.kind === "flow.replay_hit").map((
      e,
    ) => [e.data.ref, e.data.occurrence]),
    [["same", 0], ["same", 1], ["same", 2]],
  );
  // the cancelled step kept its key
  assert.equal(calls(f.root, "stop")[0], calls(f.root, "stop")[1]);
});

Deno.test("failed steps leave no replay row; rerun --from b keeps a from the record", async () => {
  const f = await flowProject({
    "calls/.keep": "",
    "blocks/a.lua": counted("a"),
    "blocks/b.lua": counted("b", failUnlessFixed),
    "blocks/c.lua": counted("c"),
  });
  const compiled = f.compile({
    id: "abc",
    agents: ["a", "b", "c"].map((n) => blockAgent(n)),
    flow: seq(step("a", P("$.s"), "$.a"), step("b", P("$.a"), "$.b"), step("c", P("$.b"), "$.c")),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const failed = await runFlow({ ...f.options(compiled), initCtx: { s: "s" } });
  assert.equal(failed.status, "failed");
  assert.equal(failed.error?.failed_step, "b");
  assert.match(failed.error!.message, /not fixed yet/);
  // resume of a failed run: b has no replay row, so it runs again (and fails again)
  const again = await resumeFlow(failed.runId, f.options(compiled));
  assert.equal(again.status, "failed");
  assert.deepEqual([calls(f.root, "a").length, calls(f.root, "b").length, calls(f.root, "c").length], [
    1,
    2,
    0,
  ]);

  await Deno.writeTextFile(join(f.root, "fixed"), "");
  const rerun = await rerunFlow(failed.runId, "b", f.options(compiled));
  assert.equal(rerun.status, "completed", JSON.stringify(rerun.error));
  assert.deepEqual(rerun.ctx, { s: "s", a: "s-a", b: "s-a-b", c: "s-a-b-c" });
  assert.deepEqual([calls(f.root, "a").length, calls(f.root, "b").length, calls(f.root, "c").length], [
    1,
    3,
    1,
  ]);

  // a completed run rerun from b: a replays, b and c run again
  const again2 = await rerunFlow(failed.runId, "b", f.options(compiled));
  assert.equal(again2.status, "completed");
  assert.deepEqual([calls(f.root, "a").length, calls(f.root, "b").length, calls(f.root, "c").length], [
    1,
    4,
    2,
  ]);
  const cuts = f.store().read(failed.runId).filter((e) => e.kind === "flow.replay_cut");
  assert.deepEqual(cuts.map((e) => e.data.from_step), ["b", "b"]);
});

Deno.test("an agent edited between the run and the resume runs again (its digest is in the key)", async () => {
  const f = await flowProject({
    "calls/.keep": "",
    "agents/b.md": "---\nname: b\n---\nFirst instructions.\n",
    "blocks/a.lua": counted("a"),
    "blocks/b.lua": counted("b"),
    "blocks/c.lua": counted("c", failUnlessFixed),
  });
  const doc = {
    id: "edit",
    agents: [
      blockAgent("a"),
      { $agent_md: "agents/b.md", kind: "block", spec: { block: "b" } },
      blockAgent("c"),
    ],
    flow: seq(step("a", L("s"), "$.a"), step("b", P("$.a"), "$.b"), step("c", P("$.b"), "$.c")),
  };
  const { runFlow } = await import("../../src/flows/run.ts");
  const first = await runFlow(f.options(f.compile(doc)));
  assert.equal(first.status, "failed");
  await Deno.writeTextFile(join(f.root, "agents/b.md"), "---\nname: b\n---\nSecond instructions.\n");
  await Deno.writeTextFile(join(f.root, "fixed"), "");
  const resumed = await resumeFlow(first.runId, f.options(f.compile(doc)));
  assert.equal(resumed.status, "completed", JSON.stringify(resumed.error));
  assert.deepEqual([calls(f.root, "a").length, calls(f.root, "b").length, calls(f.root, "c").length], [
    1,
    2,
    2,
  ]);
});

Deno.test("knl export lists the flow events in order; a large value is a pointer file whose sha256 matches and replays", async () => {
  const f = await flowProject({
    "calls/.keep": "",
    "blocks/big.lua": `return string.rep("x", 70000)`,
    "blocks/c.lua": counted("c", failUnlessFixed),
  });
  const compiled = f.compile({
    id: "big",
    agents: [blockAgent("big"), blockAgent("c")],
    flow: seq(step("big", L(""), "$.big"), step("c", L("c"), "$.c")),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow(f.options(compiled));
  assert.equal(r.status, "failed");
  const kinds = exportSession(f.store(), r.runId, "events").map((x) => x.kind);
  assert.deepEqual(kinds, [
    "session_open",
    "flow.run_started",
    "flow.step_dispatched",
    "flow.step_completed",
    "flow.step_dispatched",
    "flow.step_completed",
    "flow.run_finished",
  ]);
  const done = f.store().read(r.runId).filter((e) => e.kind === "flow.step_completed");
  for (const d of done) {
    assert.ok(typeof d.data.duration_ms === "number");
    assert.ok("usage" in d.data);
    assert.ok(typeof d.data.status === "string");
  }
  const ref = done[0].data.value_ref as { path: string; sha256: string; bytes: number };
  assert.equal(done[0].data.value, undefined);
  const bytes = await Deno.readFile(join(f.root, ref.path));
  assert.equal(sha256Hex(bytes), ref.sha256);
  assert.equal(ref.bytes, 70002);
  await Deno.writeTextFile(join(f.root, "fixed"), "");
  const resumed = await resumeFlow(r.runId, f.options(compiled));
  assert.equal(resumed.status, "completed");
  assert.equal((resumed.ctx as { big: string }).big.length, 70000);
  // a pointer file changed behind the record's back is refused, not replayed
  await Deno.writeTextFile(join(f.root, ref.path), JSON.stringify("y"));
  const rerun = await rerunFlow(r.runId, "c", f.options(compiled));
  assert.equal(rerun.status, "failed");
  assert.match(rerun.error!.message, /does not match its recorded sha256/);
});

Deno.test("a waiting step: job.defer with on_defer = wait pauses the run; an answer becomes the step's value", async () => {
  const f = await flowProject({
    "calls/.keep": "",
    "blocks/approve.lua": counted("approve", `job.defer("a human must approve " .. _PROMPT)`),
    "blocks/ship.lua": `local a = std.json.decode(_PROMPT) return a.approved and "shipped" or "held"`,
  });
  const compiled = f.compile({
    id: "approval",
    agents: [blockAgent("approve", { spec: { block: "approve", on_defer: "wait" } }), blockAgent("ship")],
    flow: seq(step("approve", L("release 1.2"), "$.approval"), step("ship", P("$.approval"), "$.result")),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow(f.options(compiled));
  assert.equal(r.status, "waiting");
  assert.deepEqual(r.waiting, { step: "approve", reason: "a human must approve release 1.2" });
  await assert.rejects(resumeFlow(r.runId, f.options(compiled)), /waiting at step 'approve'.*--answer/);
  const resumed = await resumeFlow(r.runId, { ...f.options(compiled), answer: { approved: true } });
  assert.equal(resumed.status, "completed", JSON.stringify(resumed.error));
  assert.deepEqual(resumed.ctx, { approval: { approved: true }, result: "shipped" });
  assert.equal(calls(f.root, "approve").length, 1, "the answered step did not run again");
  const answered = f.store().read(r.runId).find((e) =>
    e.kind === "flow.step_completed" && e.data.status === "answered"
  );
  assert.deepEqual(answered?.data.value, { approved: true });
});

Deno.test("commands that fail change nothing in the record; an unknown run id is a clear error", async () => {
  const f = await flowProject({ "blocks/a.lua": `return "a"` });
  const compiled = f.compile({ id: "one", agents: [blockAgent("a")], flow: step("a", L(""), "$.a") });
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow(f.options(compiled));
  assert.equal(r.status, "completed");
  const before = f.store().read(r.runId).length;
  await assert.rejects(
    resumeFlow(r.runId, f.options(compiled)),
    (e) => e instanceof AgentBlockError && /already completed/.test(e.message),
  );
  await assert.rejects(
    rerunFlow(r.runId, "nope", f.options(compiled)),
    /has no step 'nope' \(its steps: a\)/,
  );
  assert.equal(f.store().read(r.runId).length, before);
  const bad = f.compile({
    id: "bad",
    agents: [{ name: "x", kind: "lua", spec: { source: "error('no', 0)" } }],
    flow: step("x", L(""), "$.x"),
  });
  const failed = await runFlow(f.options(bad));
  const beforeFailed = f.store().read(failed.runId).length;
  await assert.rejects(
    resumeFlow(failed.runId, { ...f.options(bad), answer: 1 }),
    /is failed, not waiting for an answer/,
  );
  assert.equal(f.store().read(failed.runId).length, beforeFailed);
  await assert.rejects(
    resumeFlow("flow-nope", f.options(compiled)),
    (e) => e instanceof UnknownFlowRun && /no flow run 'flow-nope'/.test(e.message),
  );
});

Deno.test("an AbortSignal stops in-flight fanout steps and records cancelled; a second run of the same key sees the same _STEP_KEY", async () => {
  const f = await flowProject({ "calls/.keep": "", "blocks/lane.lua": counted("lane", waitGo) });
  const compiled = f.compile({
    id: "fan",
    hints: { global: { max_parallel: 3 } },
    agents: [blockAgent("lane")],
    flow: {
      kind: "fanout",
      items: L(["a", "b", "c"]),
      bind: P("$.item"),
      body: step("lane", P("$.item"), "$.r"),
      join: "all",
      out: P("$.lanes"),
    },
  });
  const abort = new AbortController();
  const { runFlow } = await import("../../src/flows/run.ts");
  const running = runFlow({ ...f.options(compiled), signal: abort.signal });
  await waitFor(() => calls(f.root, "lane").length === 3, { what: "three lanes in flight at once" });
  abort.abort("enough");
  const r = await running;
  assert.equal(r.status, "cancelled");
  const cancelled = f.store().read(r.runId).filter((e) => e.kind === "flow.step_completed");
  assert.deepEqual(cancelled.map((e) => e.data.status), ["cancelled", "cancelled", "cancelled"]);
  await Deno.writeTextFile(join(f.root, "go"), "");
  const resumed = await resumeFlow(r.runId, f.options(compiled));
  assert.equal(resumed.status, "completed");
  const keys = calls(f.root, "lane");
  assert.equal(keys.length, 6);
  assert.deepEqual(
    new Set(keys.slice(0, 3)),
    new Set(keys.slice(3)),
    "each lane's step key is the same on resume",
  );
});

Deno.test("in one process too, a live run's lock refuses a resume and a rerun (FlowRunBusy); its listing is running, then completed", async () => {
  const f = await flowProject({
    "calls/.keep": "",
    "blocks/a.lua": counted("a"),
    "blocks/b.lua": counted("b", waitGo),
  });
  const compiled = f.compile({
    id: "two",
    agents: [blockAgent("a"), blockAgent("b")],
    flow: seq(step("a", L("x"), "$.a"), step("b", P("$.a"), "$.b")),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const running = runFlow(f.options(compiled));
  await waitFor(() => calls(f.root, "b").length === 1, { what: "step b to start" });
  const runId = calls(f.root, "b")[0].split("/")[0];
  const home = join(f.root, "home");
  const before = f.store().read(runId).length;
  const lock = runLockPath(home, f.store(), runId);
  assert.equal(lockIsHeld(lock), true);
  assert.equal(Deno.statSync(lock).mode! & 0o777, 0o200, "the lock file has no read permission");
  await assert.rejects(
    resumeFlow(runId, f.options(compiled)),
    (e) => e instanceof FlowRunBusy && e.exitCode === 1 && e.message.includes(lock),
  );
  await assert.rejects(rerunFlow(runId, "a", f.options(compiled)), FlowRunBusy);
  assert.equal(f.store().read(runId).length, before, "a refused command appends nothing");
  assert.deepEqual(listFlowRuns(f.store(), runIsLive(home, f.store())).map((r) => r.state), ["running"]);
  await Deno.writeTextFile(join(f.root, "go"), "");
  assert.equal((await running).status, "completed");
  assert.equal(lockIsHeld(lock), false);
  assert.equal(pathExists(lock), false, "a finished run's lock file is removed");
  assert.deepEqual(listFlowRuns(f.store(), runIsLive(home, f.store())).map((r) => r.state), ["completed"]);
});

Deno.test("an in-memory store's runs are locked in the process: a live run refuses a rerun; a run left running with no holder is interrupted", async () => {
  const f = await flowProject();
  const compiled = f.compile({
    id: "mem",
    agents: [{ name: "wait", kind: "fn" }],
    flow: step("wait", L("x"), "$.w"),
  });
  const store = new EventStore(":memory:");
  let release!: () => void;
  const gate = new Promise<void>((r) => release = r);
  let started!: (runId: string) => void;
  const startedRun = new Promise<string>((r) => started = r);
  const fns = {
    wait: async (_: unknown, info: { stepKey: string }) => {
      started(info.stepKey.split("/")[0]);
      await gate;
      return "done";
    },
  };
  const { runFlow } = await import("../../src/flows/run.ts");
  const running = runFlow({ ...f.options(compiled, { store, fns }) });
  const runId = await startedRun;
  await assert.rejects(rerunFlow(runId, "wait", f.options(compiled, { store, fns })), FlowRunBusy);
  assert.deepEqual(listFlowRuns(store, runIsLive(f.root, store)).map((r) => r.state), ["running"]);
  release();
  assert.equal((await running).status, "completed");
  // a run whose record says running and that nothing in this process runs (as after a crash)
  store.append({ stream: runId, kind: "flow.run_resumed", data: "{}", meta: "{}" });
  assert.deepEqual(listFlowRuns(store, runIsLive(f.root, store)).map((r) => r.state), ["interrupted"]);
  assert.deepEqual(listFlowRuns(store).map((r) => r.state), ["running"], "without a probe: as recorded");
  const again = await rerunFlow(runId, "wait", f.options(compiled, { store, fns }));
  assert.equal(again.status, "completed");
  store.close();
});

Deno.test("replay hits are committed with the run's next event, in order; onEvent hears of each once it is recorded", async () => {
  const f = await flowProject({
    "calls/.keep": "",
    "blocks/a.lua": counted("a"),
    "blocks/b.lua": counted("b"),
    "blocks/c.lua": counted("c", failUnlessFixed),
  });
  const compiled = f.compile({
    id: "held",
    agents: ["a", "b", "c"].map((n) => blockAgent(n)),
    flow: seq(step("a", P("$.s"), "$.a"), step("b", P("$.a"), "$.b"), step("c", P("$.b"), "$.c")),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const failed = await runFlow({ ...f.options(compiled), initCtx: { s: "s" } });
  assert.equal(failed.status, "failed");
  const before = f.store().read(failed.runId).length;

  await Deno.writeTextFile(join(f.root, "fixed"), "");
  const heard: string[] = [];
  const hitsHeardWith: boolean[] = []; // whether c's dispatch was recorded when a hit was heard
  const resumed = await resumeFlow(failed.runId, {
    ...f.options(compiled),
    onEvent: (e) => {
      // what the listener hears is in the record already, and it hears it in log order
      const rows = f.store().read(failed.runId).slice(before);
      const at = rows.findIndex((r, i) => i >= heard.length && r.kind === e.kind);
      assert.equal(at, heard.length, `${e.kind} was heard before it was recorded, or out of order`);
      heard.push(e.kind);
      if (e.kind === "flow.replay_hit") {
        hitsHeardWith.push(rows.some((r) => r.kind === "flow.step_dispatched" && r.data.ref === "c"));
      }
    },
  });
  assert.equal(resumed.status, "completed", JSON.stringify(resumed.error));
  const rows = f.store().read(failed.runId).slice(before);
  assert.deepEqual(rows.map((r) => [r.kind, r.data.ref ?? null]), [
    ["flow.run_resumed", null],
    ["flow.replay_hit", "a"],
    ["flow.replay_hit", "b"],
    ["flow.step_dispatched", "c"],
    ["flow.step_completed", "c"],
    ["flow.run_finished", null],
    ["session_close", null],
  ]);
  // the two hits landed in the transaction of c's dispatch: consecutive positions, one epoch
  const [hitA, hitB, dispatched] = rows.slice(1, 4);
  assert.deepEqual([hitB.position - hitA.position, dispatched.position - hitB.position], [1, 1]);
  assert.equal(hitA.epoch_ms, dispatched.epoch_ms);
  assert.deepEqual(heard, rows.slice(0, -1).map((r) => r.kind));
  assert.deepEqual(hitsHeardWith, [true, true], "the hits were committed with c's dispatch");
  assert.deepEqual([calls(f.root, "a").length, calls(f.root, "b").length, calls(f.root, "c").length], [
    1,
    1,
    2,
  ]);
});

Deno.test("a step's completion is committed with the next step's dispatch, before the next step runs; onEvent hears it once recorded", async () => {
  const f = await flowProject({ "blocks/a.lua": `return _PROMPT .. "-a"` });
  const seenByB: string[][] = []; // what the record held of a when b ran
  const compiled = f.compile({
    id: "one_txn",
    agents: [blockAgent("a"), { name: "b", kind: "fn" }],
    flow: seq(step("a", P("$.s"), "$.a"), step("b", P("$.a"), "$.b")),
  });
  const heard: string[] = [];
  let runId = "";
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow({
    ...f.options(compiled, {
      fns: {
        b: (input) => {
          const rows = f.store().read(runId).filter((e) => e.data.ref === "a");
          seenByB.push(rows.map((e) => `${e.kind}:${e.data.status ?? ""}`));
          return `${input}-b`;
        },
      },
      onEvent: (e) => {
        runId = e.run;
        const rows = f.store().read(e.run);
        assert.ok(rows.some((x) => x.kind === e.kind), `${e.kind} was heard before it was recorded`);
        heard.push(e.kind);
      },
    }),
    initCtx: { s: "s" },
  });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  assert.deepEqual(r.ctx, { s: "s", a: "s-a", b: "s-a-b" });
  assert.deepEqual(
    seenByB,
    [["flow.step_dispatched:", "flow.step_completed:passed"]],
    "a's result was durable before b ran",
  );
  const rows = f.store().read(r.runId);
  const kinds = rows.map((e) => `${e.kind}${e.data.ref ? ":" + e.data.ref : ""}`);
  assert.deepEqual(kinds, [
    "session_open",
    "flow.run_started",
    "flow.step_dispatched:a",
    "flow.step_completed:a",
    "flow.step_dispatched:b",
    "flow.step_completed:b",
    "flow.run_finished",
    "session_close",
  ]);
  // a's completion and b's dispatch: one transaction (consecutive positions, one epoch); b's
  // completion went with the run's end
  const [doneA, dispB, doneB, finished] = rows.slice(3, 7);
  assert.deepEqual([dispB.position - doneA.position, doneB.position - dispB.position + 0], [1, 1]);
  assert.equal(doneA.epoch_ms, dispB.epoch_ms);
  assert.deepEqual([finished.position - doneB.position, doneB.epoch_ms], [1, finished.epoch_ms]);
  assert.deepEqual(heard, rows.slice(1, -1).map((e) => e.kind));
});

Deno.test("a fanout lane's completed step is committed while another lane still runs (no next event needed)", async () => {
  const f = await flowProject();
  let runId = "";
  const compiled = f.compile({
    id: "lanes",
    agents: [{ name: "lane", kind: "fn" }],
    flow: {
      kind: "fanout",
      items: L(["quick", "slow"]),
      bind: P("$.i"),
      body: step("lane", P("$.i"), "$.r"),
      join: "all",
      out: P("$.lanes"),
    },
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow({
    ...f.options(compiled, {
      onEvent: (e) => void (runId = e.run),
      fns: {
        lane: async (input) => {
          if (input === "slow") {
            // returns only once the quick lane's result is in the record: nothing else is
            // dispatched or recorded until then, so only the held completion's timer commits it
            await waitFor(
              () =>
                f.store().read(runId).some((e) =>
                  e.kind === "flow.step_completed" && e.data.status === "passed"
                ),
              { what: "the quick lane's step_completed in the record", timeoutMs: 30_000 },
            );
          }
          return input;
        },
      },
    }),
  });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  const done = f.store().read(r.runId).filter((e) => e.kind === "flow.step_completed");
  assert.deepEqual(done.map((e) => e.data.value), ["quick", "slow"]);
});
