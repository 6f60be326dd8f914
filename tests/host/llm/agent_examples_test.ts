/**
 * The seed README's agent examples, run as written (MCP parts aside) against the local mock APIs,
 * plus the shipped offline example `blocks/hello_agent.lua` through the real CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { REPO_ROOT, runCli, runLua, testEnv } from "../../helpers.ts";
import { anthropicMessage, anthropicStream, MockLlm, openaiCompletion, openaiToolCall } from "./mock_llm.ts";

const mock = new MockLlm();
Deno.test.afterAll(async () => await mock.close());

// The runs see only these variables (and testEnv's basics): nothing of the process's own keys.
const anthEnv = () => ({ ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-ant-test" });
const oaiEnv = () => ({ OPENAI_BASE_URL: mock.url + "/v1", OPENAI_API_KEY: "sk-oai-test" });

Deno.test("Usage: my_agent.lua with --prompt and -c", async () => {
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "A short summary." }]) });
  const src = `-- my_agent.lua
local agent = require("agent")
local result = agent.run({
  prompt = _PROMPT, -- nil when --prompt is omitted (agent.run will error — expected)
  system = _CONTEXT, -- nil when -c is omitted (system prompt is optional)
})
print(result.content)`;
  const r = await runLua(src, {
    prompt: "Summarise the README",
    context: "You are a concise technical writer.",
    env: testEnv(anthEnv()),
  });
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal(r.stdout, "A short summary.\n");
  const body = mock.requests[0].body;
  assert.equal((body.system as { text: string }[])[0].text, "You are a concise technical writer.");
  assert.equal(mock.requests[0].headers["anthropic-beta"], "context-management-2025-06-27");
  const none = await runLua(`local r = require("agent").run({ prompt = _PROMPT }); print(r.ok, r.error)`, {
    env: testEnv(anthEnv()),
  });
  assert.equal(none.stdout, "false\tagent.run: opts.prompt is required (a non-empty string)\n");
});

Deno.test("agent (StdPkg): the full option example, without MCP", async () => {
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "Listed and summarised." }]) });
  const src = `
local agent = require("agent")
tool.register("list_files", { description = "lists" }, function() return "a b" end, { group = "fs" })
local prior = { { role = "user", content = "earlier question" }, { role = "assistant", content = "earlier answer" } }
local result = agent.run({
  prompt = "List files in the current directory and summarise them.",
  system = "You are a helpful assistant.", -- optional
  model = "claude-haiku-4-5-20251001", -- optional, env ANTHROPIC_MODEL as fallback
  max_tokens = 4096, -- per-request token limit
  max_iterations = 20, -- loop iteration cap
  max_tokens_budget = 50000, -- total token budget (nil = unlimited)
  timeout = 120, -- HTTP timeout in seconds
  context_management = true, -- default true; false disables beta header + body
  context_management_config = { -- default: trigger 80K, keep 3, clear_at_least 10K
    edits = {
      {
        type = "clear_tool_uses_20250919",
        trigger = { type = "input_tokens", value = 80000 },
        keep = { type = "tool_uses", value = 3 },
        clear_at_least = { type = "input_tokens", value = 10000 },
      },
    },
  },
  on_turn = function(info) -- optional per-turn callback
    print("turn", info.turn_number, "#tools", #info.tool_calls)
  end,
  extra_tools = {}, -- optional extra Anthropic tool defs
  tool_groups = { "outline" }, -- optional; nil = every tool
  history = prior, -- optional prior messages (e.g. session.load)
  store = "mem",
})
if result.ok then
  print(result.content)
else
  print("error:", result.error)
end`;
  const r = await runLua(src, { env: testEnv(anthEnv()) });
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal(r.stdout, "turn\t1\t#tools\t0\nListed and summarised.\n");
  const q = mock.requests[0];
  assert.equal(q.headers["anthropic-beta"], "context-management-2025-06-27");
  assert.equal(
    (q.body.context_management as { edits: { keep: { value: number } }[] }).edits[0].keep.value,
    3,
  );
  assert.equal(q.body.tools, undefined, "tool_groups = { 'outline' } leaves no tool");
  assert.deepEqual((q.body.messages as { role: string }[]).map((m) => m.role), ["user", "assistant", "user"]);
});

Deno.test("Provider Switching: Anthropic default, OpenAI, local vLLM", async () => {
  mock.reset();
  mock.push(
    { kind: "json", body: anthropicMessage([{ type: "text", text: "from claude" }]) },
    { kind: "json", body: openaiCompletion({ content: "from gpt" }) },
    { kind: "json", body: openaiCompletion({ content: "from qwen" }) },
  );
  const src = `
local agent = require("agent")
local a = agent.run({ prompt = "Hello", model = "claude-haiku-4-5-20251001" })
local b = agent.run({ prompt = "Hello", provider = "openai", model = "gpt-4o-mini" })
local c = agent.run({
  prompt = "Hello",
  provider = "openai",
  base_url = "${mock.url}/v1",
  model = "Qwen/Qwen3-0.6B",
  api_key = "token-abc123",
})
print(a.content, b.content, c.content)`;
  const r = await runLua(src, { env: testEnv({ ...anthEnv(), ...oaiEnv() }) });
  assert.equal(r.stdout, "from claude\tfrom gpt\tfrom qwen\n", r.stderr);
  const [qa, qb, qc] = mock.requests;
  assert.equal(qa.path, "/v1/messages");
  assert.equal(qb.path, "/v1/chat/completions");
  assert.equal(qb.headers.authorization, "Bearer sk-oai-test");
  assert.equal(qb.body.model, "gpt-4o-mini");
  assert.equal(qc.headers.authorization, "Bearer token-abc123");
  assert.equal(qc.body.model, "Qwen/Qwen3-0.6B");
  assert.equal(qb.body.context_management, undefined);
});

Deno.test("Protocol options: the example on vLLM, and its refusal on Claude with manual thinking", async () => {
  mock.reset();
  mock.push(
    {
      kind: "json",
      body: openaiCompletion(
        { content: null, tool_calls: [openaiToolCall("c1", "grep", { q: "x" })] },
        "tool_calls",
      ),
    },
    { kind: "json", body: openaiCompletion({ content: '{"answer":"done"}' }) },
  );
  const opts = `
  tool_choice = "required",
  parallel_tool_calls = false,
  thinking = { effort = "medium" },
  response_format = { type = "json_schema", json_schema = { name = "out", schema = { type = "object" } } },
  temperature = 0.2, top_p = 0.9, top_k = 40, stop = { "END" }, seed = 7,
  max_retries = 2,`;
  const src = `
tool.register("grep", { description = "search" }, function(x) return "hit for " .. x.q end)
local agent = require("agent")
local r = agent.run({ prompt = "...", provider = "openai", base_url = "${mock.url}/v1", api_key = "k", dialect = "vllm",
  max_iterations = 3, ${opts}
  on_turn = function(info) if #info.tool_calls == 0 then return false end end })
local c = agent.run({ prompt = "...", model = "claude-haiku-4-5-20251001", ${opts} })
print(r.ok, r.content, c.ok, c.error)`;
  const r = await runLua(src, { env: testEnv(anthEnv()) });
  assert.equal(r.outcome.status, "returned", r.stderr);
  const [ok, content, cok, cerr] = r.stdout.trim().split("\t");
  assert.equal(ok, "true");
  assert.equal(content, '{"answer":"done"}');
  assert.equal(cok, "false");
  assert.match(cerr, /forced tool use .* cannot be combined with manual extended thinking/);
  assert.equal(mock.requests.length, 2, "the refused Anthropic request was never sent");
  const b = mock.requests[0].body;
  assert.equal(b.tool_choice, "required");
  assert.equal(b.parallel_tool_calls, false);
  assert.deepEqual(b.chat_template_kwargs, { enable_thinking: true });
  assert.equal(b.reasoning_effort, "medium");
  assert.deepEqual(b.stop, ["END"]);
  assert.equal(b.temperature, 0.2);
  assert.equal(b.top_p, 0.9);
  assert.equal(b.top_k, 40);
  assert.equal(b.seed, 7);
  assert.equal((b.response_format as { type: string }).type, "json_schema");
  const tool = (mock.requests[1].body.messages as { role: string; content: string }[]).at(-1)!;
  assert.deepEqual(tool, { role: "tool", tool_call_id: "c1", content: "hit for x" });
});

Deno.test("Anthropic-only options warn once on the OpenAI path and are ignored", async () => {
  mock.reset();
  mock.push(
    {
      kind: "json",
      body: openaiCompletion({ content: null, tool_calls: [openaiToolCall("c1", "noop", {})] }, "tool_calls"),
    },
    { kind: "json", body: openaiCompletion({ content: "ok" }) },
  );
  const src = `
tool.register("noop", { description = "n" }, function() return "" end)
local r = require("agent").run({ prompt = "p", provider = "openai", cache_control = true, context_management = true,
  context_management_config = { edits = {} } })
print(r.ok)`;
  const r = await runLua(src, { env: testEnv(oaiEnv()) });
  assert.equal(r.stdout, "true\n", r.stderr);
  for (const k of ["cache_control", "context_management", "context_management_config"]) {
    const n = r.stderr.split("\n").filter((l) => l.includes(`${k} is Anthropic-only`)).length;
    assert.equal(n, 1, `${k} warned ${n} times:\n${r.stderr}`);
  }
  assert.equal(mock.requests[1].body.context_management, undefined);
});

Deno.test("agent.run streams a tool loop over Anthropic SSE with on_delta", async () => {
  mock.reset();
  mock.push(
    {
      kind: "sse",
      events: anthropicStream(
        anthropicMessage([
          { type: "thinking", thinking: "use the tool", signature: "s1" },
          { type: "text", text: "Counting." },
          { type: "tool_use", id: "toolu_s", name: "count", input: { text: "a b c" } },
        ], "tool_use"),
      ),
    },
    { kind: "sse", events: anthropicStream(anthropicMessage([{ type: "text", text: "Three words." }])) },
  );
  const src = `
tool.register("count", { description = "counts words" }, function(x)
  local n = 0 for _ in x.text:gmatch("%S+") do n = n + 1 end return n end)
local text = {}
local r = require("agent").run({ prompt = "count 'a b c'", model = "claude-haiku-4-5-20251001",
  on_delta = function(d) if d.type == "text" then text[#text + 1] = d.text end end })
print(r.ok, r.content, table.concat(text))`;
  const r = await runLua(src, { env: testEnv(anthEnv()) });
  assert.equal(r.stdout, "true\tThree words.\tCounting.Three words.\n", r.stderr);
  const second = mock.requests[1].body.messages as {
    role: string;
    content: { type: string; content?: string }[];
  }[];
  assert.equal(mock.requests[1].body.stream, true);
  assert.equal(second[1].content[0].type, "thinking", "the signed thinking block goes back");
  assert.equal(second[2].content[0].content, "3");
});

Deno.test("blocks/hello_agent.lua runs offline through the CLI on its replay script", async () => {
  // the run's session goes to a scratch database, not the repository's own
  const env = { AGENT_BLOCK_KNL_PATH: join(await Deno.makeTempDir({ prefix: "ab_hello_" }), "knl.sqlite") };
  const r = await runCli(["-b", "hello_agent", "-p", REPO_ROOT], { cwd: REPO_ROOT, env });
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, true);
  assert.equal(out.stop_reason, "completed");
  assert.equal(out.content, "There are 5 words.");
  assert.equal(out.num_turns, 2);
  const ex = await runCli(
    ["knl", "export", "--session", out.session_id, "--as", "messages", "-p", REPO_ROOT],
    {
      env,
    },
  );
  assert.equal(ex.code, 0, ex.stderr);
  const kinds = ex.stdout.trim().split("\n").map((l) => JSON.parse(l).kind);
  assert.deepEqual(kinds, ["msg_user", "llm_response", "tool_result", "llm_response"]);
});
