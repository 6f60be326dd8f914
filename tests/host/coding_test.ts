/**
 * `coding.run`, the `policy` pack's seams and the `supervisor` tree against scripted models: the
 * replay provider, and the local mock Anthropic server (the real wire format) with a real verify
 * command (`agent-block test` on a failing Lua spec). Each run is in-process in a fresh project;
 * what each test holds is read back from the result and from the kernel's log (`store = "mem"`
 * queried in the same run, or the project's database).
 *
 * - a loop fixing a failing Lua spec in two iterations (mock server, real `agent-block test`);
 * - the same over replay, with the edits, verify runs and policy decisions in the log;
 * - a loop that stagnates (`stop_reason = "stagnated"`), one that exceeds its budget;
 * - a tool-policy denial (an edit outside `files`) recorded as a `policy_decision`; an allowed
 *   directory swapped for a symlink between the allow-list's check and the edit (refused);
 * - `rollback = true` undoing a failed iteration's edit;
 * - a fold that keeps the context under a limit (what each request carried, as the mock saw it);
 * - a supervisor whose child runs out of budget while the parent goes on to the next child.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, REPO_ROOT, resultOf, runCli, runLua, tempProject, testEnv } from "../helpers.ts";
import { anthropicMessage, MockLlm } from "./llm/mock_llm.ts";

const mock = new MockLlm();
Deno.test.afterAll(async () => await mock.close());

const BUGGY = "local M = {}\nfunction M.add(a, b)\n  return a - b\nend\nreturn M\n";
const SPEC = 'local calc = dofile("src/calc.lua")\n' +
  'describe("calc", function()\n  it("adds", function() expect(calc.add(2, 3)).to.equal(5) end)\nend)\n';

type Line = Record<string, unknown>;
const use = (name: string, input: Record<string, unknown>, id?: string) => ({
  type: "tool_use",
  name,
  input,
  ...(id ? { id } : {}),
});
const replayFile = (lines: Line[]) => lines.map((l) => JSON.stringify(l)).join("\n") + "\n";

/** Lua that runs `coding.run(OPTS)` (`OPTS` a Lua table expression) and returns the result plus log facts. */
const runAndReport = (opts: string) => `
local coding = require("coding")
local policy = require("policy")
local supervisor = require("supervisor")
local r = coding.run(${opts})
local s = r.session
local kinds = {}
for _, row in ipairs(s:query("SELECT kind FROM events WHERE stream = ? ORDER BY seq", { s.id })) do
  kinds[#kinds + 1] = row.kind
end
local decisions = s:query([[SELECT json_extract(data, '$.tool') AS tool, json_extract(data, '$.verdict') AS verdict,
  json_extract(data, '$.reason') AS reason, json_extract(meta, '$.beat') AS beat
  FROM events WHERE stream = ? AND kind = 'policy_decision' ORDER BY seq]], { s.id })
local verifies = s:query([[SELECT json_extract(data, '$.iteration') AS iteration, json_extract(data, '$.code') AS code
  FROM events WHERE stream = ? AND kind = 'coding_verify' ORDER BY seq]], { s.id })
local edits = s:query([[SELECT json_extract(data, '$.path') AS path, json_extract(data, '$.iteration') AS iteration
  FROM events WHERE stream = ? AND kind = 'coding_edit' ORDER BY seq]], { s.id })
return std.json.encode({ r = r, kinds = kinds, decisions = decisions, verifies = verifies, edits = edits })
`;

Deno.test("coding.run fixes a failing Lua spec in two iterations (mock Anthropic server, real agent-block test)", async () => {
  const dir = await tempProject({ "src/calc.lua": BUGGY, "calc_spec.lua": SPEC });
  mock.reset();
  mock.push(
    // iteration 1: read, then a wrong fix, then done
    { kind: "json", body: anthropicMessage([use("fs_read", { path: "src/calc.lua" }, "t1")], "tool_use") },
    {
      kind: "json",
      body: anthropicMessage(
        [use("fs_search_replace", { path: "src/calc.lua", search: "a - b", replace: "a * b" }, "t2")],
        "tool_use",
      ),
    },
    { kind: "json", body: anthropicMessage([{ type: "text", text: "fixed" }]) },
    // iteration 2: the right fix
    {
      kind: "json",
      body: anthropicMessage(
        [use("fs_search_replace", { path: "src/calc.lua", search: "a * b", replace: "a + b" }, "t3")],
        "tool_use",
      ),
    },
    { kind: "json", body: anthropicMessage([{ type: "text", text: "fixed now" }]) },
  );
  const verify = `${Deno.execPath()} run -A ${CLI} test calc_spec.lua`;
  const r = await runLua(
    runAndReport(`{ prompt = "make calc_spec pass", verify = VERIFY, files = { "src/*.lua" },
      provider = "anthropic", base_url = BASE_URL, api_key = "sk-ant-test", store = "mem" }`),
    { projectRoot: dir, globals: { BASE_URL: mock.url, VERIFY: verify } },
  );
  const out = resultOf(r);
  assert.equal(out.r.ok, true, JSON.stringify(out.r));
  assert.equal(out.r.stop_reason, "passed");
  assert.equal(out.r.iterations, 2);
  assert.deepEqual(out.r.modified_files, ["src/calc.lua"]);
  assert.equal(out.r.last_verify.code, 0);
  assert.equal(Deno.readTextFileSync(join(dir, "src/calc.lua")), BUGGY.replace("a - b", "a + b"));
  // verify before the first iteration and after each, all in the log
  assert.deepEqual(out.verifies.map((v: Line) => [v.iteration, v.code === 0]), [[0, false], [1, false], [
    2,
    true,
  ]]);
  assert.deepEqual(out.edits.map((e: Line) => [e.path, e.iteration]), [["src/calc.lua", 1], [
    "src/calc.lua",
    2,
  ]]);
  assert.equal(out.decisions.length, 3, "fs_read and both edits were decided");
  assert.ok(out.decisions.every((d: Line) => d.verdict === "allow" && typeof d.beat === "number"));
  assert.equal(mock.requests.length, 5);
  // the second iteration's first request carried the failing verify output
  const req4 = JSON.stringify(mock.requests[3].body.messages);
  assert.match(req4, /still fails/);
  assert.equal(out.r.usage.input_tokens, 50);
});

Deno.test("coding.run over replay: edits, verify runs and policy decisions in the log; rollback undoes a failed iteration", async () => {
  const dir = await tempProject({
    "src/calc.lua": BUGGY,
    "script.jsonl": replayFile([
      { content: [use("fs_search_replace", { path: "src/calc.lua", search: "a - b", replace: "a * b" })] },
      { content: "tried" },
      {
        expect: { last_message_contains: "rolled back" },
        content: [use("fs_read", { path: "src/calc.lua" })],
      },
      {
        expect: { last_message_contains: "return a - b" },
        content: [use("fs_search_replace", { path: "src/calc.lua", search: "a - b", replace: "a + b" })],
      },
      { content: "done" },
    ]),
  });
  const r = await runLua(
    runAndReport(`{ prompt = "fix add", verify = "grep -q 'a + b' src/calc.lua", files = { "src/**" },
      provider = "replay", replay = "script.jsonl", store = "mem", rollback = true }`),
    { projectRoot: dir },
  );
  const out = resultOf(r);
  assert.equal(out.r.stop_reason, "passed", JSON.stringify(out.r));
  assert.equal(out.r.iterations, 2);
  assert.deepEqual(out.r.modified_files, ["src/calc.lua"]);
  assert.ok(out.kinds.includes("coding_rollback"), out.kinds.join(" "));
  assert.equal(out.kinds.at(-1), "session_close");
  assert.equal(out.kinds.at(-2), "coding_result");
  assert.equal(Deno.readTextFileSync(join(dir, "src/calc.lua")), BUGGY.replace("a - b", "a + b"));
});

Deno.test("coding.run stops with stop_reason = stagnated: the same failure twice with no edit", async () => {
  const dir = await tempProject({
    "src/calc.lua": BUGGY,
    "script.jsonl": replayFile([
      { content: [use("fs_read", { path: "src/calc.lua" })] },
      { content: "I do not know" },
      { content: "still do not know" },
    ]),
  });
  const out = resultOf(
    await runLua(
      runAndReport(`{ prompt = "fix add", verify = "grep -q 'a + b' src/calc.lua", provider = "replay",
        replay = "script.jsonl", store = "mem", max_iterations = 5 }`),
      { projectRoot: dir },
    ),
  );
  assert.equal(out.r.ok, false);
  assert.equal(out.r.stop_reason, "stagnated", JSON.stringify(out.r));
  assert.equal(out.r.iterations, 1, "the first iteration already repeated the failure it started from");
  assert.match(out.r.error, /same failure twice/);
  assert.deepEqual(out.r.modified_files, []);
});

Deno.test("coding.run exceeds its budget: stop_reason = budget, the charges in the ledger", async () => {
  const dir = await tempProject({
    "src/calc.lua": BUGGY,
    "script.jsonl": replayFile([
      {
        content: [use("fs_read", { path: "src/calc.lua" })],
        usage: { input_tokens: 600, output_tokens: 10 },
      },
      {
        content: [use("fs_read", { path: "src/calc.lua" })],
        usage: { input_tokens: 600, output_tokens: 10 },
      },
      { content: "never asked", usage: { input_tokens: 600, output_tokens: 10 } },
    ]),
  });
  const src = runAndReport(
    `{ prompt = "fix add", verify = "false", provider = "replay", replay = "script.jsonl",
    store = "mem", budget = policy.budget.tokens(1000) }`,
  ).replace(
    "return std.json.encode({",
    "local ledger = require('knl').views.ledger(s)\nreturn std.json.encode({ ledger = ledger,",
  );
  const out = resultOf(await runLua(src, { projectRoot: dir }));
  assert.equal(out.r.stop_reason, "budget", JSON.stringify(out.r));
  assert.match(out.r.error, /budget exhausted: spent 1220 of 1000 tokens/);
  assert.equal(out.r.usage.total_tokens, 1220);
  assert.deepEqual(out.ledger.map((l: Line) => l.spent), [610, 1220]);
});

Deno.test("coding.run: an edit outside `files` is denied and the denial is in the log", async () => {
  const dir = await tempProject({
    "src/calc.lua": BUGGY,
    "secret.lua": "return 1\n",
    "script.jsonl": replayFile([
      {
        content: [use("fs_search_replace", { path: "secret.lua", search: "1", replace: "2" })],
      },
      { expect: { last_message_contains: "denied: " }, content: "ok, I will not" },
    ]),
  });
  const out = resultOf(
    await runLua(
      runAndReport(`{ prompt = "fix add", verify = "grep -q 'a + b' src/calc.lua", files = { "src/calc.lua" },
        provider = "replay", replay = "script.jsonl", store = "mem", max_iterations = 1 }`),
      { projectRoot: dir },
    ),
  );
  // no edit happened, and the failure is the one it started from
  assert.equal(out.r.stop_reason, "stagnated", JSON.stringify(out.r));
  assert.equal(
    Deno.readTextFileSync(join(dir, "secret.lua")),
    "return 1\n",
    "the denied edit did not happen",
  );
  assert.equal(out.decisions.length, 1);
  assert.equal(out.decisions[0].tool, "fs_search_replace");
  assert.equal(out.decisions[0].verdict, "deny");
  assert.match(out.decisions[0].reason, /secret\.lua is not among the files this run may edit/);
  assert.deepEqual(out.edits, []);
});

Deno.test("policy.fold keeps the context under a limit: every request the mock saw stays under it", async () => {
  const dir = await tempProject({ "big.txt": "x".repeat(8000) + "\n" });
  mock.reset();
  for (let i = 0; i < 6; i++) {
    mock.push({
      kind: "json",
      body: anthropicMessage([use("fs_read", { path: "big.txt" }, `r${i}`)], "tool_use"),
    });
  }
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "read it all" }]) });
  const src = `
local knl, adapter, policy = require("knl"), require("knl_adapter"), require("policy")
local port = adapter.anthropic:open({ base_url = BASE_URL, api_key = "sk-ant-test" })
local limit = 3000
local dev = knl.device({ llm = port, tools = std.fs.tool_specs(),
  fold = policy.fold.chain(policy.fold.clear_tool_results({ budget = limit, keep = 1 }), policy.fold.under(limit)) })
local seen = {}
knl.session({ store = "mem" }, function(s)
  s:append({ kind = "msg_user", data = { content = "read big.txt again and again" } })
  for _ = 1, 8 do
    local out = knl.beat(s, dev)
    assert(knl.Outcome.is_ok(out), tostring(out))
    if #out.out.tools == 0 then break end
  end
  seen.full = policy.estimate_tokens(s:messages())
end)
return std.json.encode(seen)`;
  const out = resultOf(await runLua(src, { projectRoot: dir, globals: { BASE_URL: mock.url } }));
  assert.equal(mock.requests.length, 7);
  assert.ok(out.full > 6 * 2000, `the unfolded conversation is large (${out.full})`);
  for (const [i, req] of mock.requests.entries()) {
    const chars = JSON.stringify((req.body as { messages: unknown[] }).messages).length;
    assert.ok(chars < 3000 * 4 + 2000, `request ${i + 1} carried ${chars} characters`);
  }
  // the latest tool result is kept whole, older ones were cleared
  const last = JSON.stringify(mock.requests[6].body.messages);
  assert.match(last, /x{8000}/);
  assert.match(last, /tool result cleared by the fold/);
});

Deno.test("supervisor: a child runs out of budget while the parent goes on to the next child", async () => {
  const dir = await tempProject({
    "script.jsonl": replayFile([
      // child "spender": two tool turns of 60 tokens each against a grant of 100
      { content: [use("echo", { n: 1 })], usage: { input_tokens: 50, output_tokens: 10 } },
      { content: [use("echo", { n: 2 })], usage: { input_tokens: 50, output_tokens: 10 } },
      // child "finisher"
      { content: [use("echo", { n: 3 })], usage: { input_tokens: 5, output_tokens: 5 } },
      { content: "finished", usage: { input_tokens: 5, output_tokens: 5 } },
    ]),
  });
  const src = `
local knl, adapter, supervisor = require("knl"), require("knl_adapter"), require("supervisor")
local port = adapter.replay:open({ replay = "script.jsonl" })
local dev = knl.device({ llm = port, tools = { { name = "echo", description = "echo",
  input_schema = { type = "object" }, handler = function(x) return x end } } })
local out = knl.session({ owner = "parent", store = "mem" }, function(s)
  local rep = supervisor.run(s, {
    { name = "spender", device = dev, prompt = "spend", budget = { amount = 100, tag = "tokens" } },
    { name = "finisher", device = dev, prompt = "finish", budget = { amount = 100, tag = "tokens" } },
  })
  local kids = s:query("SELECT stream, json_extract(data, '$.parent') AS parent FROM events WHERE kind = 'session_open' AND json_extract(data, '$.parent') = ?", { s.id })
  s:append({ kind = "msg_user", data = { content = "the parent goes on" } })
  rep.kids = #kids
  rep.parent_beats = s.beats
  return rep
end)
return std.json.encode(out)`;
  const out = resultOf(await runLua(src, { projectRoot: dir }));
  assert.equal(out.ok, false);
  assert.equal(out.children.length, 2, JSON.stringify(out));
  const [spender, finisher] = out.children;
  assert.equal(spender.status, "budget", JSON.stringify(spender));
  assert.equal(spender.spent, 120);
  assert.equal(spender.usage.total_tokens, 120);
  assert.equal(spender.tool_calls, 2);
  assert.equal(finisher.status, "done", JSON.stringify(finisher));
  assert.equal(finisher.content, "finished");
  assert.equal(finisher.usage.calls, 2);
  assert.deepEqual(out.spent, { tokens: 140 });
  assert.equal(out.kids, 2, "both children are sessions under the parent");
  assert.equal(out.parent_beats, 0, "the parent's own log holds none of the children's beats");
});

Deno.test("attack: coding.run's files allow-list holds against .., absolute paths and a symlink inside an allowed directory", async () => {
  const dir = await tempProject({ "src/calc.lua": BUGGY, "secret.lua": "return 1\n" });
  Deno.symlinkSync(join(dir, "secret.lua"), join(dir, "src", "link.lua"));
  Deno.symlinkSync(dir, join(dir, "src", "up"));
  const tries = [
    { path: "src/../secret.lua" },
    { path: join(dir, "secret.lua") },
    { path: "src/link.lua" },
    { path: "src/up/secret.lua" },
    { path: "/etc/passwd" },
  ];
  const lines: Line[] = tries.map((t) => ({
    content: [use("fs_search_replace", { ...t, search: "1", replace: "2" })],
  }));
  lines.push({ content: "gave up" });
  Deno.writeTextFileSync(join(dir, "script.jsonl"), replayFile(lines));
  const out = resultOf(
    await runLua(
      runAndReport(`{ prompt = "fix add", verify = "false", files = { "src/**" }, provider = "replay",
        replay = "script.jsonl", store = "mem", max_iterations = 1, max_beats = 10 }`),
      { projectRoot: dir },
    ),
  );
  assert.equal(Deno.readTextFileSync(join(dir, "secret.lua")), "return 1\n", "the secret was not edited");
  assert.equal(out.decisions.length, tries.length, JSON.stringify(out.decisions));
  assert.ok(out.decisions.every((d: Line) => d.verdict === "deny"), JSON.stringify(out.decisions));
  assert.match(out.decisions[2].reason, /symbolic link/);
  assert.deepEqual(out.edits, []);
  assert.deepEqual(out.r.modified_files, []);
});

Deno.test("attack: coding.run's files allow-list holds when an allowed directory becomes a symlink after the check", async () => {
  const original = "return 'secret'\n";
  const dir = await tempProject({ "src/calc.lua": BUGGY, "secret/calc.lua": original });
  Deno.writeTextFileSync(
    join(dir, "script.jsonl"),
    replayFile([
      {
        content: [
          use("fs_search_replace", { path: "src/calc.lua", search: "return", replace: "return 0 and" }),
        ],
      },
      { content: "gave up" },
    ]),
  );
  // A piece after the allow-list swaps src for a symlink to secret/ once the allow-list said yes:
  // the race, made certain. The edit must not land in secret/ (which `files` does not name).
  const swap = `(function()
    local done = false
    return function(call)
      if call.name == "fs_search_replace" and not done then
        done = true
        assert(os.rename("src", "src_moved"))
        assert(sh.exec("ln -s secret src").code == 0)
      end
      return nil
    end
  end)()`;
  const out = resultOf(
    await runLua(
      runAndReport(`{ prompt = "fix add", verify = "false", files = { "src/**" }, provider = "replay",
        replay = "script.jsonl", store = "mem", max_iterations = 1, max_beats = 4, tool_policy = ${swap} }`),
      { projectRoot: dir },
    ),
  );
  assert.ok(Deno.lstatSync(join(dir, "src")).isSymlink, "the swap happened");
  assert.equal(
    Deno.readTextFileSync(join(dir, "secret/calc.lua")),
    original,
    "the edit landed outside `files`",
  );
  assert.equal(Deno.readTextFileSync(join(dir, "src_moved/calc.lua")), BUGGY);
  assert.deepEqual(out.edits, []);
  assert.deepEqual(out.r.modified_files, []);
});

Deno.test("examples/coding_loop.lua: the prompt is the task, -c the verify (and options) — through the CLI", async () => {
  const dir = await tempProject({
    "src/calc.lua": BUGGY,
    "script.jsonl": replayFile([
      {
        expect: { last_message_contains: "It fails now" },
        content: [use("fs_search_replace", { path: "src/calc.lua", search: "a - b", replace: "a + b" })],
      },
      { content: "fixed" },
    ]),
  });
  const ctx = JSON.stringify({
    verify: "grep -q 'a + b' src/calc.lua",
    files: ["src/*.lua"],
    provider: "replay",
    replay: join(dir, "script.jsonl"),
  });
  const example = join(REPO_ROOT, "examples", "coding_loop.lua");
  const r = await runCli(["-s", example, "-p", dir, "--prompt", "fix add", "-c", ctx], { env: testEnv() });
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
  assert.equal(result.stop_reason, "passed");
  assert.equal(result.iterations, 1);
  assert.deepEqual(result.modified_files, ["src/calc.lua"]);
  // without a verify the block says how to give one, exit 2
  const bad = await runCli(["-s", example, "-p", dir, "--prompt", "fix add"], { env: testEnv() });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /pass the verify command as the context/);
});
