/**
 * agent.run on the kernel, seen from outside: what a run leaves in the session log.
 *
 * - through the real CLI on the replay provider: the seed event's labels (`--label`) and
 *   correlation ids, the kinds in order with their beats, tool_call/tool_result pairs, the seed's
 *   `json_extract(meta, '$.run_id')` query from Lua, `knl export --as messages` folded back into
 *   exactly `result.messages`, and `knl sessions`;
 * - against the local mock Anthropic and OpenAI servers (the real wire formats): requests,
 *   responses, tool pairs and a failed call recorded in the project's default database;
 * - the stores: `store = "mem"` leaves nothing on disk, `{ sqlite = path }` writes that file
 *   (and `knl export --store` reads it), AGENT_BLOCK_KNL_PATH moves the default;
 * - os.exit inside a tool ends the run with its code, the session closed as `exit`.
 *
 * In-process runs get their variables in their own environment (`testEnv`), the mocks' address
 * and key in the agent's options; the CLI runs get theirs as the subprocess's environment.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { agentRunKinds, jsonLines, runCli, runLua, tempProject, testEnv } from "../../helpers.ts";
import { openExistingStore } from "../../../src/knl/store.ts";
import { anthropicError, anthropicMessage, anthropicStream, MockLlm, openaiCompletion } from "./mock_llm.ts";

const mock = new MockLlm();
Deno.test.afterAll(async () => await mock.close());

const exists = (p: string) => {
  try {
    Deno.statSync(p);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
};

type Msg = { role: string; content: unknown };
type Block = Record<string, unknown>;

/**
 * The conversation held by `knl export --as messages` records, folded the way the kernel folds
 * it: user messages, responses, tool results (a tool_call's block is already in its response),
 * consecutive turns of one role merged.
 */
function foldExport(records: Record<string, unknown>[]): Msg[] {
  const out: Msg[] = [];
  const blocks = (c: unknown): Block[] => typeof c === "string" ? [{ type: "text", text: c }] : c as Block[];
  for (const r of records) {
    const role = r.role as string;
    const last = out.at(-1);
    if (last && last.role === role) {
      last.content = [...blocks(last.content), ...blocks(r.content)];
    } else {
      out.push({ role, content: r.content });
    }
  }
  return out;
}

const REPLAY = [
  {
    content: [
      { type: "thinking", thinking: "I should count with the tool.", signature: "sig-1" },
      { type: "text", text: "Counting." },
      { type: "tool_use", id: "wc1", name: "word_count", input: { text: "one two three" } },
    ],
    usage: { input_tokens: 40, output_tokens: 12 },
  },
  {
    expect: { last_message_contains: '{"words":3}' },
    content: "There are 3 words.",
    usage: { input_tokens: 60, output_tokens: 6 },
  },
].map((l) => JSON.stringify(l)).join("\n") + "\n";

const COUNT_AGENT = `
tool.register("word_count", { description = "Counts words.", input_schema = { type = "object" } }, function(input)
  local n = 0
  for _ in input.text:gmatch("%S+") do n = n + 1 end
  return { words = n }
end)
local r = require("agent").run({ provider = "replay", replay = "count.jsonl", prompt = "How many words in 'one two three'?",
  system = "Use tools." })
local by_run = r.session:query("SELECT kind FROM events WHERE json_extract(meta, '$.run_id') = ?",
  { os.getenv("AGENT_BLOCK_RUN_ID") })
print(std.json.encode({ ok = r.ok, id = r.session_id, messages = r.messages, by_run = by_run }))
`;

Deno.test("agent.run through the CLI: seed labels and correlation ids, beats, pairs, export = result.messages", async () => {
  const dir = await tempProject({ "count_agent.lua": COUNT_AGENT, "count.jsonl": REPLAY });
  const env = {
    AGENT_BLOCK_RUN_ID: "run-77",
    AGENT_BLOCK_TRACE_ID: "trace-3",
    AGENT_BLOCK_AGENT_ID: "agent-9",
    AGENT_BLOCK_AGENT_NAME: "counter",
  };
  const r = await runCli([
    "-s",
    "count_agent.lua",
    "-p",
    ".",
    "--label",
    "job=count",
    "--label",
    "run=count-1",
  ], {
    cwd: dir,
    env,
  });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, true);
  assert.match(out.id, /^s_/);
  // the seed's query: the session is selected by the id the obs lines carry
  assert.deepEqual(out.by_run, [{ kind: "session_open" }]);
  assert.ok(exists(join(dir, ".agent-block", "knl.sqlite")), "the project's database holds the run");

  const ex = await runCli(["knl", "export", "--session", out.id, "--as", "events"], { cwd: dir });
  assert.equal(ex.code, 0, ex.stderr);
  const events = jsonLines(ex.stdout);
  assert.deepEqual(events.map((e) => e.kind), agentRunKinds({ turns: [1, 0] }));
  assert.deepEqual(events[0].meta, {
    job: "count",
    run: "count-1",
    run_id: "run-77",
    trace_id: "trace-3",
    agent_id: "agent-9",
    agent_name: "counter",
  });
  assert.equal(events[0].data.owner, "agent");
  assert.deepEqual(events.map((e) => e.meta.beat ?? null), [null, null, 1, 1, 1, 1, 2, 2, null, null]);
  assert.equal(events[2].data.system, true);
  assert.deepEqual(events[2].data.tools, ["word_count"]);
  assert.deepEqual(events[4].data, { id: "wc1", name: "word_count", input: { text: "one two three" } });
  assert.equal(events[5].data.id, "wc1");
  assert.equal(events[5].data.content, '{"words":3}');
  assert.equal(events[5].data.is_error, false);
  assert.equal(events[7].data.usage.total_tokens, 66);
  assert.deepEqual(
    { ...events[8].data, usage: events[8].data.usage.total_tokens },
    { ok: true, stop_reason: "completed", num_turns: 2, usage: 118 },
  );
  assert.equal(events[9].data.status, "ok");

  const ms = await runCli(["knl", "export", "--session", out.id, "--as", "messages", "-p", dir]);
  assert.equal(ms.code, 0, ms.stderr);
  const records = jsonLines(ms.stdout);
  // each tool use once, in the response that asked for it (no tool_call record repeating it)
  assert.deepEqual(records.map((x) => x.kind), [
    "msg_user",
    "llm_response",
    "tool_result",
    "llm_response",
  ]);
  assert.deepEqual(foldExport(records), out.messages);
  // the signed thinking block is part of the conversation the next request carried
  assert.equal((out.messages[1].content as Block[])[0].type, "thinking");

  const ls = await runCli(["knl", "sessions", "--json", "--label", "job=count"], { cwd: dir });
  const sessions = jsonLines(ls.stdout);
  assert.equal(sessions.length, 1);
  assert.equal(sessions[0].id, out.id);
  assert.equal(sessions[0].owner, "agent");
  assert.equal(sessions[0].closed, true);
  assert.equal(sessions[0].status, "ok");
  assert.equal(sessions[0].beats, 2);
  assert.equal(sessions[0].tokens, 118);
});

Deno.test("agent.run over the Anthropic mock: requests, responses and a failed call in the default database", async () => {
  mock.reset();
  mock.push(
    {
      kind: "json",
      body: anthropicMessage([
        { type: "text", text: "Adding." },
        { type: "tool_use", id: "toolu_1", name: "add", input: { a: 2, b: 3 } },
      ], "tool_use"),
    },
    { kind: "json", body: anthropicMessage([{ type: "text", text: "It is 5." }]) },
    { kind: "json", status: 400, body: anthropicError("invalid_request_error", "prompt is too long") },
  );
  const dir = await Deno.makeTempDir({ prefix: "ab_agent_knl_" });
  const src = `
tool.register("add", { description = "adds", input_schema = { type = "object" } }, function(x) return x.a + x.b end)
local agent = require("agent")
local ep = { base_url = BASE_URL, api_key = "sk-ant-test" }
local a = agent.run({ prompt = "2+3?", model = "claude-haiku-4-5-20251001", max_retries = 0, base_url = ep.base_url,
  api_key = ep.api_key })
local b = agent.run({ prompt = "again", model = "claude-haiku-4-5-20251001", max_retries = 0, base_url = ep.base_url,
  api_key = ep.api_key })
print(a.session_id, a.content, b.session_id, b.ok, b.error)`;
  const r = await runLua(src, { projectRoot: dir, globals: { BASE_URL: mock.url } });
  assert.equal(r.outcome.status, "returned", r.stderr);
  const [idA, content, idB, okB, errB] = r.stdout.trim().split("\t");
  assert.equal(content, "It is 5.");
  assert.equal(okB, "false");
  assert.match(errB, /prompt is too long/);
  assert.equal(mock.requests.length, 3);

  const store = openExistingStore(join(dir, ".agent-block", "knl.sqlite"));
  const a = store.read(idA);
  assert.deepEqual(a.map((e) => e.kind), agentRunKinds({ turns: [1, 0] }));
  const req = a[2].data;
  assert.equal(req.provider, "anthropic");
  assert.equal(req.model, "claude-haiku-4-5-20251001");
  assert.deepEqual(req.tools, ["add"]);
  assert.equal(req.message_count, 1);
  assert.equal(a[6].data.message_count, 3);
  const resp = a[3].data as { stop_reason: string; usage: Record<string, number>; content: Block[] };
  assert.equal(resp.stop_reason, "tool_use");
  assert.equal(resp.usage.input_tokens, 10);
  assert.equal(typeof resp.usage.cost_usd, "number", "the priced call's cost is recorded");
  assert.equal(resp.content[1].id, "toolu_1");
  assert.equal(a[5].data.content, "5");
  // what the second request sent is what the log folds to
  const sent = mock.requests[1].body.messages as { role: string; content: Block[] }[];
  assert.equal(sent[2].content[0].tool_use_id, "toolu_1");
  assert.equal(sent[2].content[0].content, "5");

  const b = store.read(idB);
  assert.deepEqual(b.map((e) => e.kind), agentRunKinds({ turns: ["failed"] }));
  assert.match(String(b[3].data.error), /prompt is too long/);
  assert.equal(b[5].data.status, "error");
});

Deno.test("context editing: what the server reports it did is kept in llm_response, JSON and streamed", async () => {
  mock.reset();
  const report = {
    applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 3, cleared_input_tokens: 41000 }],
  };
  const edited = { ...anthropicMessage([{ type: "text", text: "Trimmed." }]), context_management: report };
  mock.push(
    { kind: "json", body: edited },
    { kind: "sse", events: anthropicStream(edited) },
    { kind: "json", body: anthropicMessage([{ type: "text", text: "Untouched." }]) },
  );
  const dir = await Deno.makeTempDir({ prefix: "ab_agent_cm_" });
  const src = `
local agent = require("agent")
local ids = {}
for i, stream in ipairs({ false, true, false }) do
  local r = agent.run({ prompt = "go", model = "claude-haiku-4-5-20251001", max_retries = 0, base_url = BASE_URL,
    api_key = "sk-ant-test", stream = stream })
  assert(r.ok, r.error)
  ids[i] = r.session_id
end
print(table.concat(ids, "\t"))`;
  const r = await runLua(src, { projectRoot: dir, globals: { BASE_URL: mock.url } });
  assert.equal(r.outcome.status, "returned", r.stderr);
  // context editing was asked for (the default), so the server's report is what it did
  assert.ok(mock.requests.every((q) => q.body.context_management !== undefined));
  const store = openExistingStore(join(dir, ".agent-block", "knl.sqlite"));
  const responses = r.stdout.trim().split("\t").map((id) =>
    store.read(id).find((e) => e.kind === "llm_response")!
  );
  assert.deepEqual(responses[0].data.context_management, report, "JSON response");
  assert.deepEqual(responses[1].data.context_management, report, "streamed response");
  assert.equal(responses[2].data.context_management, undefined, "nothing reported, nothing kept");
  // and `knl export --as events` carries it
  const out = await runCli(["knl", "export", "--session", r.stdout.trim().split("\t")[0], "--as", "events"], {
    cwd: dir,
  });
  assert.equal(out.code, 0, out.stderr);
  const exported = jsonLines(out.stdout).find((e) => e.kind === "llm_response") as {
    data: Record<string, unknown>;
  };
  assert.deepEqual(exported.data.context_management, report);
});

Deno.test("agent.run over the OpenAI mock: arguments that are not JSON are an is_error tool result", async () => {
  mock.reset();
  mock.push(
    {
      kind: "json",
      body: openaiCompletion({
        content: null,
        tool_calls: [
          { id: "call_bad", type: "function", function: { name: "add", arguments: "{not json" } },
          { id: "call_ok", type: "function", function: { name: "add", arguments: '{"a":1,"b":2}' } },
        ],
      }, "tool_calls"),
    },
    { kind: "json", body: openaiCompletion({ content: "done" }) },
  );
  const src = `
tool.register("add", { description = "adds" }, function(x) return x.a + x.b end)
local r = require("agent").run({ prompt = "p", provider = "openai", store = "mem", base_url = BASE_URL,
  api_key = "sk-oai-test" })
local rows = require("knl").views.tool_pairs(r.session)
print(std.json.encode({ ok = r.ok, rows = rows }))`;
  const r = await runLua(src, { globals: { BASE_URL: mock.url + "/v1" } });
  assert.equal(r.outcome.status, "returned", r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, true);
  assert.equal(out.rows.length, 2);
  assert.equal(out.rows[0].id, "call_bad");
  assert.equal(out.rows[0].is_error, true);
  assert.equal(out.rows[0].content, "tool error: the arguments were not a JSON object: {not json");
  assert.equal(out.rows[1].content, "3");
  assert.equal(out.rows[1].is_error, false);
  const tools = (mock.requests[1].body.messages as { role: string; tool_call_id?: string; content: string }[])
    .filter((m) => m.role === "tool");
  assert.deepEqual(tools.map((m) => m.tool_call_id), ["call_bad", "call_ok"]);
  assert.equal(tools[0].content, "tool error: the arguments were not a JSON object: {not json");
});

const ONE_TURN = JSON.stringify({ content: "hello" }) + "\n";

Deno.test('store = "mem" leaves nothing on disk; the session lives as long as the run', async () => {
  const dir = await tempProject({ "one.jsonl": ONE_TURN });
  const src = `
local r = require("agent").run({ provider = "replay", replay = "one.jsonl", prompt = "hi", store = "mem" })
print(r.ok, #r.session:events(), require("knl").open({ store = "mem" }):has(r.session_id))`;
  const r = await runLua(src, { projectRoot: dir });
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal(r.stdout, "true\t6\ttrue\n");
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["one.jsonl"]);
});

Deno.test("store = { sqlite = path } writes that file, which knl export --store reads", async () => {
  const dir = await tempProject({
    "a.lua": `local r = require("agent").run({ provider = "replay", replay = "one.jsonl", prompt = "hi",
      store = { sqlite = "logs/agent.sqlite" } })
      print(r.session_id)`,
    "one.jsonl": ONE_TURN,
  });
  const r = await runCli(["-s", "a.lua", "-p", "."], { cwd: dir });
  assert.equal(r.code, 0, r.stderr);
  const id = r.stdout.trim();
  assert.ok(exists(join(dir, "logs", "agent.sqlite")));
  assert.ok(!exists(join(dir, ".agent-block")), "the default database was not touched");
  const ex = await runCli([
    "knl",
    "export",
    "--session",
    id,
    "--as",
    "messages",
    "--store",
    "logs/agent.sqlite",
  ], {
    cwd: dir,
  });
  assert.equal(ex.code, 0, ex.stderr);
  assert.deepEqual(foldExport(jsonLines(ex.stdout)), [
    { role: "user", content: "hi" },
    { role: "assistant", content: [{ type: "text", text: "hello" }] },
  ]);
  const def = await runCli(["knl", "export", "--session", id], { cwd: dir });
  assert.equal(def.code, 1);
  assert.match(def.stderr, /^error: no kernel database at /);
});

Deno.test("AGENT_BLOCK_KNL_PATH moves agent.run's default database; a store that cannot open is an error result", async () => {
  const dir = await tempProject({ "one.jsonl": ONE_TURN, "blocker": "a file, not a directory" });
  const src = `
local agent = require("agent")
local r = agent.run({ provider = "replay", replay = "one.jsonl", prompt = "hi" })
local bad = agent.run({ provider = "replay", replay = "one.jsonl", prompt = "hi", store = { sqlite = "blocker/x.sqlite" } })
print(r.ok, r.session_id, bad.ok, bad.session_id, bad.error)`;
  const r = await runLua(src, {
    projectRoot: dir,
    env: testEnv({ AGENT_BLOCK_KNL_PATH: "elsewhere/knl.sqlite" }),
  });
  assert.equal(r.outcome.status, "returned", r.stderr);
  const [ok, id, okBad, idBad, err] = r.stdout.trim().split("\t");
  assert.equal(ok, "true");
  assert.equal(openExistingStore(join(dir, "elsewhere", "knl.sqlite")).hasStream(id), true);
  assert.ok(!exists(join(dir, ".agent-block")));
  assert.equal(okBad, "false");
  assert.equal(idBad, "nil");
  assert.match(err, /^agent\.run: opts\.store: /);
});

Deno.test("os.exit inside a tool ends the run with its code and closes the session as exit", async () => {
  const dir = await tempProject({
    "quit.lua": `tool.register("quit", { description = "quits" }, function() os.exit(3) end)
      local r = require("agent").run({ provider = "replay", replay = "quit.jsonl", prompt = "stop now" })
      print("not reached", r.ok)`,
    "quit.jsonl": JSON.stringify({ content: [{ type: "tool_use", id: "q1", name: "quit", input: {} }] }) +
      "\n",
  });
  const r = await runCli(["-s", "quit.lua", "-p", "."], { cwd: dir });
  assert.equal(r.code, 3, r.stderr);
  assert.equal(r.stdout, "");
  const ls = jsonLines((await runCli(["knl", "sessions", "--json"], { cwd: dir })).stdout);
  assert.equal(ls.length, 1);
  assert.equal(ls[0].owner, "agent");
  assert.equal(ls[0].status, "exit");
  const events = jsonLines((await runCli(["knl", "export", "--session", ls[0].id], { cwd: dir })).stdout);
  // No Lua runs past os.exit, so the tool call stays visibly unanswered and the host closes the
  // session on the run's behalf.
  assert.deepEqual(events.map((e) => e.kind).slice(-3), ["llm_response", "tool_call", "session_close"]);
  assert.equal(events.at(-1).data.status, "exit");
});
