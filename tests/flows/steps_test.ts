/**
 * Steps with real blocks (acceptance checks 14–18 of the flow reference, §5.2): every block runs
 * through the in-process `BlockRunner`, and what it returns, stages, raises or defers becomes the
 * step's value or failure as the fold says.
 */
import assert from "node:assert/strict";
import { assign, blockAgent, flowProject, L, P, seq, step } from "./flow_helpers.ts";

Deno.test("fold: JSON object text is data, quoted and bare words stay strings, a fenced block is parsed", async () => {
  const f = await flowProject({
    "blocks/obj.lua": `return '{"verdict":"PASS"}'`,
    "blocks/quoted.lua": `return '"PASS"'`,
    "blocks/bare.lua": `return "PASS"`,
    "blocks/fenced.lua": 'return "```json\\n[1, {\\"a\\": true}]\\n```"',
    "blocks/truth.lua": `return "true"`,
    "blocks/table.lua": `return { items = { 1, 2 }, name = "t" }`,
    "blocks/number.lua": `return 42`,
  });
  const names = ["obj", "quoted", "bare", "fenced", "truth", "table", "number"];
  const r = await f.run({
    id: "fold",
    agents: names.map((n) => blockAgent(n)),
    flow: seq(...names.map((n) => step(n, L(""), `$.${n}`))),
  });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  assert.deepEqual(r.ctx, {
    obj: { verdict: "PASS" },
    quoted: '"PASS"',
    bare: "PASS",
    fenced: [1, { a: true }],
    truth: "true",
    table: { items: [1, 2], name: "t" },
    number: "42",
  });
});

Deno.test("verdict through the body and through a staged part, routed by branch", async () => {
  const f = await flowProject({
    "blocks/body_gate.lua": `return _PROMPT == "good" and "PASS" or "BLOCKED"`,
    "blocks/part_gate.lua":
      `bus.emit("artifact", { name = "verdict", content = _PROMPT == "good" and "PASS" or "BLOCKED" })
return "A long report about " .. _PROMPT`,
  });
  const doc = {
    id: "verdicts",
    agents: [
      blockAgent("body_gate", { verdict: { channel: "body", values: ["PASS", "BLOCKED"] } }),
      blockAgent("part_gate", { verdict: { channel: "part", values: ["PASS", "BLOCKED"] } }),
    ],
    flow: seq(
      step("body_gate", P("$.input"), "$.g1"),
      step("part_gate", P("$.input"), "$.g2"),
      {
        kind: "branch",
        cond: {
          op: "and",
          args: [{ op: "eq", lhs: P("$.g1"), rhs: L("PASS") }, {
            op: "in",
            needle: P('$.g2.parts["verdict"]'),
            haystack: L(["PASS"]),
          }],
        },
        then: assign("$.shipped", L(true)),
        else: assign("$.halted_at", {
          op: "or",
          args: [{ op: "eq", lhs: P("$.g1"), rhs: L("BLOCKED") }, {
            op: "eq",
            lhs: P('$.g2.parts["verdict"]'),
            rhs: L("BLOCKED"),
          }],
        }),
      },
    ),
  };
  const good = await f.run(doc, { input: "good" });
  assert.equal(good.status, "completed", JSON.stringify(good.error));
  assert.deepEqual(good.ctx, {
    input: "good",
    g1: "PASS",
    g2: { out: "A long report about good", parts: { verdict: "PASS" } },
    shipped: true,
  });
  const bad = await f.run(doc, { input: "bad" });
  assert.equal(bad.status, "completed");
  assert.equal((bad.ctx as Record<string, unknown>).halted_at, true, "a halt gate is a completion");
});

Deno.test("verdict contract: a part contract without a staged verdict fails the step, naming the contract", async () => {
  const f = await flowProject({ "blocks/forgetful.lua": `return "a report, no verdict"` });
  const r = await f.run({
    id: "contract",
    agents: [blockAgent("forgetful", { verdict: { channel: "part", values: ["PASS"] } })],
    flow: step("forgetful", L("x"), "$.gate"),
  });
  assert.equal(r.status, "failed");
  assert.equal(r.error?.failed_step, "forgetful");
  assert.match(
    r.error!.message,
    /verdict contract violation: the part channel needs a staged part 'verdict'/,
  );
  const body = await f.run({
    id: "contract",
    agents: [blockAgent("forgetful", { verdict: { channel: "body", values: ["PASS"] } })],
    flow: step("forgetful", L("x"), "$.gate"),
  });
  assert.match(body.error!.message, /the body channel takes one of "PASS"; got "a report, no verdict"/);
});

Deno.test("ok = false and a raising block fail their step; an enclosing try catches both", async () => {
  const f = await flowProject({
    "blocks/refuse.lua": `return { ok = false, error = "cannot do " .. _PROMPT }`,
    "blocks/refuse_json.lua": `return '{"ok": false, "message": "json says no"}'`,
    "blocks/crash.lua": `error("the disk is on fire")`,
    "blocks/after.lua": `return "after"`,
  });
  const doc = {
    id: "tries",
    agents: ["refuse", "refuse_json", "crash", "after"].map((n) => blockAgent(n)),
    flow: seq(
      {
        kind: "try",
        body: seq(assign("$.x", L(1)), step("refuse", L("that"), "$.r")),
        catch: assign("$.c1", L(true)),
        err_at: P("$.e1"),
      },
      { kind: "try", body: step("refuse_json", L(""), "$.r"), catch: seq(), err_at: P("$.e2") },
      { kind: "try", body: step("crash", L(""), "$.r"), catch: seq(), err_at: P("$.e3") },
      step("after", L(""), "$.after"),
    ),
  };
  const r = await f.run(doc);
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  const ctx = r.ctx as Record<string, string>;
  assert.equal(ctx.x, undefined, "the try rolled the assignment back");
  assert.equal(ctx.c1, true as unknown as string);
  assert.match(ctx.e1, /step 'refuse' completed with ok = false: cannot do that/);
  assert.match(ctx.e2, /step 'refuse_json' completed with ok = false: json says no/);
  assert.match(ctx.e3, /step 'crash' raised: .*crash\.lua:1: the disk is on fire/);
  assert.equal(ctx.after, "after");
  // Without a try, the run fails naming the step.
  const bare = await f.run({ ...doc, flow: step("crash", L(""), "$.r") });
  assert.equal(bare.status, "failed");
  assert.equal(bare.error?.failed_step, "crash");
});

Deno.test("job.defer skips the step: the flow goes on and out is not written", async () => {
  const f = await flowProject({
    "blocks/later.lua": `job.defer("the export is not there yet")`,
    "blocks/next.lua": `return "went on"`,
  });
  const r = await f.run({
    id: "skip",
    agents: [blockAgent("later"), blockAgent("next")],
    flow: seq(step("later", L(""), "$.never"), step("next", L(""), "$.next")),
  });
  assert.equal(r.status, "completed");
  assert.deepEqual(r.ctx, { next: "went on" });
  const events = f.store().read(r.runId).filter((e) => e.kind === "flow.step_completed");
  assert.deepEqual(events.map((e) => [e.data.ref, e.data.status, e.data.reason ?? null]), [
    ["later", "skipped", "the export is not there yet"],
    ["next", "passed", null],
  ]);
});

Deno.test("globals: _PROMPT (JSON for structured input), _CONTEXT, _TASK_METADATA, _AGENT_CTX, _STEP_KEY", async () => {
  const f = await flowProject({
    "agents/seer.md": "---\nname: seer\n---\nYou see everything.\n",
    "blocks/seer.lua": `local input = std.json.decode(_PROMPT)
return {
  prompt_type = type(_PROMPT),
  n = input.n,
  tags = input.tags,
  context = _CONTEXT,
  meta = _TASK_METADATA,
  agent_ctx = _AGENT_CTX,
  key = _STEP_KEY,
}`,
    "blocks/plain.lua": `return { prompt = _PROMPT, meta = _TASK_METADATA.ticket, level = _AGENT_CTX.level }`,
  });
  const compiled = f.compile({
    id: "globals",
    default_agent_ctx: { team: "core", level: 1 },
    agents: [
      { $agent_md: "agents/seer.md", kind: "block", spec: { block: "seer" }, meta: { ctx: { level: 2 } } },
      { name: "plain", kind: "block", spec: { block: "plain" } },
    ],
    flow: seq(step("seer", P("$.job"), "$.seen"), step("plain", L("just text"), "$.plain")),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow({
    ...f.options(compiled),
    initCtx: { job: { n: 3, tags: ["a", "b"] } },
    taskMetadata: { ticket: "T-1" },
  });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  const seen = (r.ctx as Record<string, Record<string, unknown>>).seen;
  assert.equal(seen.prompt_type, "string");
  assert.equal(seen.n, 3);
  assert.deepEqual(seen.tags, ["a", "b"]);
  assert.equal(seen.context, "You see everything.\n");
  assert.deepEqual(seen.meta, { ticket: "T-1" });
  assert.deepEqual(seen.agent_ctx, { team: "core", level: 2 });
  assert.match(String(seen.key), new RegExp(`^${r.runId}/seer/[0-9a-f]{12}/0$`));
  const plain = (r.ctx as Record<string, Record<string, unknown>>).plain;
  assert.deepEqual(plain, { prompt: "just text", meta: "T-1", level: 1 }, "default_agent_ctx alone");
});

Deno.test("a terminal bus.emit of another kind is the value (seed 002); artifacts still reach the block's bus", async () => {
  const f = await flowProject({
    "blocks/emitter.lua": `local seen = 0
bus.on("artifact", function() seen = seen + 1 end)
bus.emit("artifact", { name = "notes", content = { lines = 2 } })
bus.serve({ until_idle = true })
bus.emit("agent_result", { content = "the answer", handler_saw = seen })`,
  });
  const r = await f.run({ id: "emit", agents: [blockAgent("emitter")], flow: step("emitter", L(""), "$.v") });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  assert.deepEqual(r.ctx, { v: { out: "the answer", parts: { notes: { lines: 2 } } } });
});

Deno.test("lua and fn agents: inline Lua and an embedder's function", async () => {
  const f = await flowProject();
  const compiled = f.compile({
    id: "kinds",
    agents: [
      { name: "double", kind: "lua", spec: { source: "return tostring(tonumber(_PROMPT) * 2)" } },
      { name: "inc", kind: "fn" },
    ],
    flow: seq(step("double", P("$.n"), "$.d"), step("inc", P("$.n"), "$.i")),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow({
    ...f.options(compiled),
    initCtx: { n: 21 },
    fns: { inc: (x) => (x as number) + 1 },
  });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  assert.deepEqual(r.ctx, { n: 21, d: "42", i: 22 });
});

Deno.test("each step's run is labelled with the flow run and its step key (the link to its own sessions)", async () => {
  const f = await flowProject({
    "blocks/note.lua":
      `require("knl").session({ owner = "note" }, function(s) s:append({ kind = "note", data = { p = _PROMPT } }) end)
return "noted"`,
  });
  const r = await f.run({ id: "links", agents: [blockAgent("note")], flow: step("note", L("hello"), "$.v") });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  const { listSessions } = await import("../../src/knl/export.ts");
  const child = listSessions(f.store(), { labels: { flow_run: r.runId } });
  assert.equal(child.length, 1);
  assert.equal(child[0].owner, "note");
  const completed = f.store().read(r.runId).find((e) => e.kind === "flow.step_completed")!;
  assert.equal(child[0].labels.flow_step, completed.data.key);
  // the step's record names the session its block opened, and a block with no model spent nothing
  assert.deepEqual(completed.data.child_sessions, [child[0].id]);
  assert.deepEqual(completed.data.usage, { turns: 0, input_tokens: 0, output_tokens: 0, tool_calls: 0 });
});

Deno.test("agent_block prompt mode: agent.run with the agent.md body as system prompt, profile.model, the replay provider", async () => {
  const f = await flowProject({
    "agents/reviewer.md":
      "---\nname: reviewer\nmodel: claude-haiku-4-5\n---\nYou review release notes. Answer PASS or BLOCKED.\n",
    "reviewer.replay.jsonl": JSON.stringify({
      expect: {
        model: "claude-haiku-4-5",
        system_contains: "You review release notes",
        last_message_contains: "v1.2 notes",
      },
      content: "PASS",
      usage: { input_tokens: 40, output_tokens: 2 },
    }) + "\n",
  });
  const r = await f.run({
    id: "prompted",
    agents: [{
      $agent_md: "agents/reviewer.md",
      kind: "agent_block",
      spec: { agent_options: { provider: "replay", replay: "reviewer.replay.jsonl", max_iterations: 2 } },
      verdict: { channel: "body", values: ["PASS", "BLOCKED"] },
    }],
    flow: seq(
      step("reviewer", P("$.notes"), "$.gate"),
      {
        kind: "branch",
        cond: { op: "in", needle: P("$.gate"), haystack: L(["PASS", "BLOCKED"]) },
        then: assign("$.reviewed", L(true)),
        else: seq(),
      },
    ),
  }, { notes: "v1.2 notes" });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  assert.deepEqual(r.ctx, { notes: "v1.2 notes", gate: "PASS", reviewed: true });
  // the agent's own session is labelled with the flow run
  const { listSessions } = await import("../../src/knl/export.ts");
  const sessions = listSessions(f.store(), { labels: { flow_run: r.runId } });
  assert.equal(sessions.length, 1);
  assert.equal(sessions[0].tokens, 42);
  // the step's record carries the same spend as the kernel, and links the agent's session
  const completed = f.store().read(r.runId).find((e) => e.kind === "flow.step_completed")!;
  const usage = completed.data.usage as Record<string, number>;
  assert.equal(usage.turns, 1);
  assert.equal(usage.input_tokens, 40);
  assert.equal(usage.output_tokens, 2);
  assert.deepEqual(completed.data.child_sessions, [sessions[0].id]);
});

Deno.test("a returned string comes back the same with or without the wrapper's JSON envelope", async () => {
  // A UTF-8 string with nothing staged comes back after its own mark, without std.json; the
  // same string beside an artifact, invalid UTF-8 and a number go through the envelope.
  const text = 'naïve \\"quoted\\" \\\\ tab\\t nul\\0 🙂 {not json'; // Lua escapes, decoded by Lua
  const f = await flowProject({
    "blocks/plain.lua": `return "${text}"`,
    "blocks/staged.lua": `bus.emit("artifact", { name = "n", content = 1 })\nreturn "${text}"`,
    "blocks/bytes.lua": `return "ok\\255\\254"`,
    "blocks/number.lua": `return 42`,
    "blocks/keyed.lua": `return _STEP_KEY .. " " .. _TASK_METADATA.ticket .. " " .. type(_TASK_METADATA)`,
    "blocks/json.lua": `return '{"a": [1, "x"]}'`,
  });
  const names = ["plain", "staged", "bytes", "number", "keyed", "json"];
  const compiled = f.compile({
    id: "strings",
    agents: names.map((n) => blockAgent(n)),
    flow: seq(...names.map((n) => step(n, L(null), `$.${n}`))),
  });
  const { runFlow } = await import("../../src/flows/run.ts");
  const r = await runFlow({ ...f.options(compiled), taskMetadata: { ticket: "T-9" } });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  const ctx = r.ctx as Record<string, unknown>;
  const expected = 'naïve "quoted" \\ tab\t nul\0 🙂 {not json';
  assert.equal(ctx.plain, expected);
  assert.deepEqual(ctx.staged, { out: expected, parts: { n: 1 } });
  assert.equal(ctx.bytes, "ok\uFFFD\uFFFD", "invalid UTF-8 is decoded with replacement characters");
  assert.equal(ctx.number, "42");
  assert.match(String(ctx.keyed), new RegExp(`^${r.runId}/keyed/[0-9a-f]{12}/0 T-9 table$`));
  assert.deepEqual(ctx.json, { a: [1, "x"] });
  const completed = f.store().read(r.runId).filter((e) => e.kind === "flow.step_completed");
  assert.deepEqual(completed.map((e) => e.data.value), names.map((n) => ctx[n] as unknown));
});

Deno.test("a step that never touches bus does not install it; a first touch anywhere (a module, pairs, a task) is still tapped", async () => {
  const f = await flowProject({
    "blocks/quiet.lua": `return tostring(rawget(bus, "emit") == nil)`,
    "lib/stage.lua": `return { go = function() bus.emit("artifact", { name = "n", content = 1 }) end }`,
    "blocks/viamod.lua": `require("stage").go() return "done"`,
    "blocks/bypairs.lua": `for _ in pairs(bus) do end
bus.emit("artifact", { name = "p", content = 2 })
return "listed"`,
    "blocks/intask.lua":
      `std.task.spawn(function() bus.emit("result", { content = "from a task" }) end):join()`,
  });
  const names = ["quiet", "viamod", "bypairs", "intask"];
  const r = await f.run({
    id: "lazy_bus",
    agents: names.map((n) => blockAgent(n)),
    flow: seq(...names.map((n) => step(n, L(""), `$.${n}`))),
  });
  assert.equal(r.status, "completed", JSON.stringify(r.error));
  assert.deepEqual(r.ctx, {
    quiet: "true",
    viamod: { out: "done", parts: { n: 1 } },
    bypairs: { out: "listed", parts: { p: 2 } },
    intask: "from a task",
  });
});
