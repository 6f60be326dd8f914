/**
 * llm.chat through the real transport against the local mock APIs: both wire formats, streaming
 * with on_delta, retries (429 + Retry-After, 500 then success), errors with type, malformed JSON,
 * a cut stream, a timeout, obs lines, endpoint and key resolution.
 */
import assert from "node:assert/strict";
import { evalLua, runLua, tempDir, testEnv } from "../../helpers.ts";
import { join } from "node:path";
import {
  anthropicError,
  anthropicMessage,
  anthropicStream,
  MockLlm,
  openaiCompletion,
  openaiStream,
  openaiToolCall,
} from "./mock_llm.ts";

const mock = new MockLlm();
const KEY = "sk-test-secret-0123456789";

function anth(extra = ""): string {
  return `{ base_url = "${mock.url}", api_key = "${KEY}", max_retries = 0 ${extra} }`;
}
function oai(extra = ""): string {
  return `{ provider = "openai", base_url = "${mock.url}/v1", api_key = "${KEY}", max_retries = 0 ${extra} }`;
}

async function chat(
  opts: string,
  messages = `"hello there"`,
  env = testEnv(),
): Promise<Record<string, unknown>> {
  const out = await evalLua(`return std.json.encode(llm.chat(${messages}, ${opts}))`, { env });
  return JSON.parse(out!);
}

async function chatError(opts: string, env = testEnv()): Promise<{ error: string; stderr: string }> {
  const r = await runLua(
    `local ok, e = pcall(llm.chat, "hello", ${opts}); assert(not ok, "expected a failure"); return tostring(e)`,
    { env },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  return { error: String((r.outcome as { value: string }).value), stderr: r.stderr };
}

Deno.test.afterAll(async () => await mock.close());

Deno.test("anthropic: request headers and body, normalised response", async () => {
  mock.reset();
  mock.push({
    kind: "json",
    body: anthropicMessage(
      [
        { type: "thinking", thinking: "let me see", signature: "sig1" },
        { type: "text", text: "Hi!" },
        { type: "tool_use", id: "toolu_1", name: "grep", input: { q: "x" } },
      ],
      "tool_use",
      { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 100 },
    ),
  });
  const r = await chat(anth(`, system = "be brief", tools = { { name = "grep", description = "search",
    input_schema = { type = "object", properties = { q = { type = "string" } } } } }, max_tokens = 256`));
  const req = mock.requests[0];
  assert.equal(req.path, "/v1/messages");
  assert.equal(req.headers["authorization"], `Bearer ${KEY}`);
  assert.equal(req.headers["anthropic-version"], "2026-10-21");
  assert.equal(req.headers["content-type"], "application/json");
  assert.equal(req.headers["anthropic-beta"], undefined);
  assert.equal(req.body.model, "claude-haiku-4-5-20251001");
  assert.equal(req.body.max_tokens, 256);
  assert.deepEqual(req.body.system, [{
    type: "text",
    text: "be brief",
    cache_control: { type: "ephemeral" },
  }]);
  assert.equal(req.body.stream, undefined);
  assert.deepEqual(r.content, [
    { type: "thinking", thinking: "let me see", signature: "sig1" },
    { type: "text", text: "Hi!" },
    { type: "tool_use", id: "toolu_1", name: "grep", input: { q: "x" } },
  ]);
  assert.equal(r.stop_reason, "tool_use");
  assert.deepEqual(r.usage, {
    input_tokens: 12,
    output_tokens: 7,
    total_tokens: 119,
    cache_read_input_tokens: 100,
    cache_creation_input_tokens: 0,
    thinking_tokens: 0,
    cost_usd: (12 * 1 + 7 * 5 + 100 * 0.1) / 1e6,
  });
});

Deno.test("anthropic: SSE stream with thinking, text and tool input fragments, deltas in order", async () => {
  mock.reset();
  const msg = anthropicMessage(
    [
      { type: "thinking", thinking: "hmm", signature: "sig2" },
      { type: "text", text: "Looking it up" },
      { type: "tool_use", id: "toolu_2", name: "lookup", input: { city: "Paris", n: 2 } },
    ],
    "tool_use",
    { input_tokens: 20, output_tokens: 9 },
  );
  mock.push({ kind: "sse", events: anthropicStream(msg) });
  const out = await evalLua(`
    local deltas = {}
    local r = llm.chat("weather?", ${anth(`, on_delta = function(d) deltas[#deltas + 1] = d end`)})
    return std.json.encode({ r = r, deltas = deltas })`);
  const { r, deltas } = JSON.parse(out!);
  assert.equal(mock.requests[0].body.stream, true);
  assert.equal(mock.requests[0].headers["accept"], "text/event-stream");
  assert.deepEqual(r.content, msg.content);
  assert.equal(r.stop_reason, "tool_use");
  assert.equal(r.usage.output_tokens, 9);
  assert.equal(r.usage.input_tokens, 20);
  const text = deltas.filter((d: { type: string }) => d.type === "text").map((d: { text: string }) => d.text)
    .join("");
  assert.equal(text, "Looking it up");
  assert.deepEqual(deltas[0], { type: "thinking", index: 0, thinking: "hmm" });
  const json = deltas.filter((d: { type: string }) => d.type === "tool_use").map((
    d: { partial_json: string },
  ) => d.partial_json)
    .join("");
  assert.deepEqual(JSON.parse(json), { city: "Paris", n: 2 });
});

Deno.test("openai: tool calls, reasoning_content, request translation", async () => {
  mock.reset();
  mock.push({
    kind: "json",
    body: openaiCompletion(
      {
        content: "checking",
        reasoning_content: "need the tool",
        tool_calls: [openaiToolCall("call_1", "grep", { q: "y" })],
      },
      "tool_calls",
      { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 },
    ),
  });
  const r = await chat(oai(`, system = "sys", max_tokens = 64, tools = { { name = "grep", description = "d",
    input_schema = { type = "object" } } }, tool_choice = "required", parallel_tool_calls = false, temperature = 0.5, seed = 3`));
  const req = mock.requests[0];
  assert.equal(req.path, "/v1/chat/completions");
  assert.equal(req.headers["authorization"], `Bearer ${KEY}`);
  assert.equal(req.headers["anthropic-version"], undefined);
  assert.deepEqual(req.body.messages, [{ role: "system", content: "sys" }, {
    role: "user",
    content: "hello there",
  }]);
  assert.equal(req.body.max_tokens, 64);
  assert.equal(req.body.tool_choice, "required");
  assert.equal(req.body.parallel_tool_calls, false);
  assert.equal(req.body.temperature, 0.5);
  assert.equal(req.body.seed, 3);
  assert.deepEqual(r.content, [
    { type: "thinking", thinking: "need the tool" },
    { type: "text", text: "checking" },
    { type: "tool_use", id: "call_1", name: "grep", input: { q: "y" } },
  ]);
  assert.equal(r.stop_reason, "tool_use");
  assert.equal((r.usage as Record<string, number>).total_tokens, 38);
});

Deno.test("openai: streamed deltas with tool-call argument fragments and usage chunk", async () => {
  mock.reset();
  const c = openaiCompletion(
    {
      content: "on it",
      reasoning_content: "think",
      tool_calls: [openaiToolCall("call_9", "lookup", { city: "Oslo" })],
    },
    "tool_calls",
    { prompt_tokens: 11, completion_tokens: 4, total_tokens: 15 },
  );
  mock.push({ kind: "sse", events: openaiStream(c) });
  const out = await evalLua(`
    local deltas = {}
    local r = llm.chat("go", ${oai(`, on_delta = function(d) deltas[#deltas + 1] = d end`)})
    return std.json.encode({ r = r, deltas = deltas })`);
  const { r, deltas } = JSON.parse(out!);
  assert.equal(mock.requests[0].body.stream, true);
  assert.deepEqual(mock.requests[0].body.stream_options, { include_usage: true });
  assert.deepEqual(r.content, [
    { type: "thinking", thinking: "think" },
    { type: "text", text: "on it" },
    { type: "tool_use", id: "call_9", name: "lookup", input: { city: "Oslo" } },
  ]);
  assert.equal(r.usage.total_tokens, 15);
  const frags = deltas.filter((d: { type: string }) => d.type === "tool_use");
  assert.equal(frags[0].name, "lookup");
  assert.ok(frags.length >= 3, "argument fragments arrive one by one");
});

Deno.test("429 with Retry-After is retried after the delay the server asked for", async () => {
  mock.reset();
  mock.push(
    {
      kind: "json",
      status: 429,
      body: anthropicError("rate_limit_error", "slow down"),
      headers: { "retry-after": "1" },
    },
    { kind: "json", body: anthropicMessage([{ type: "text", text: "ok" }]) },
  );
  const t0 = performance.now();
  const r = await chat(`{ base_url = "${mock.url}", api_key = "k", max_retries = 2 }`);
  assert.ok(performance.now() - t0 >= 950, "waited for Retry-After");
  assert.equal(mock.requests.length, 2);
  assert.deepEqual(r.content, [{ type: "text", text: "ok" }]);
});

Deno.test("500 then success; 529 overloaded exhausts max_retries with a clear error", async () => {
  mock.reset();
  mock.push(
    { kind: "json", status: 500, body: anthropicError("api_error", "boom") },
    { kind: "json", body: anthropicMessage([{ type: "text", text: "fine" }]) },
  );
  const r = await chat(`{ base_url = "${mock.url}", api_key = "k", max_retries = 1 }`);
  assert.deepEqual(r.content, [{ type: "text", text: "fine" }]);
  assert.equal(mock.requests.length, 2);
  mock.reset();
  for (let i = 0; i < 2; i++) {
    mock.push({
      kind: "json",
      status: 529,
      body: anthropicError("overloaded_error", "Overloaded"),
      headers: { "retry-after-ms": "10" },
    });
  }
  const { error } = await chatError(`{ base_url = "${mock.url}", api_key = "k", max_retries = 1 }`);
  assert.match(
    error,
    /llm: anthropic HTTP 529 \(overloaded_error\): Overloaded \(gave up after 2 attempts\)/,
  );
  assert.equal(mock.requests.length, 2);
});

Deno.test("a 400 with an error type is not retried and says what the server said", async () => {
  mock.reset();
  mock.push({
    kind: "json",
    status: 400,
    body: anthropicError("invalid_request_error", "max_tokens: too large"),
  });
  const { error } = await chatError(`{ base_url = "${mock.url}", api_key = "k", max_retries = 3 }`);
  assert.match(error, /anthropic HTTP 400 \(invalid_request_error\): max_tokens: too large/);
  assert.equal(mock.requests.length, 1);
  mock.reset();
  mock.push({
    kind: "json",
    status: 401,
    body: { error: { message: "bad key", type: "invalid_request_error", code: "invalid_api_key" } },
  });
  const e2 = await chatError(oai(", max_retries = 3"));
  assert.match(e2.error, /openai HTTP 401 \(invalid_request_error\): bad key/);
});

Deno.test("a failed request raises an error table: message, provider, status, retryable, retry_after_ms", async () => {
  mock.reset();
  mock.push({
    kind: "json",
    status: 529,
    body: anthropicError("overloaded_error", "Overloaded"),
    headers: { "retry-after-ms": "10" },
  });
  const r = await runLua(`
    local ok, e = pcall(llm.chat, "hello", ${anth()})
    assert(not ok and type(e) == "table", "an error table")
    return std.json.encode({ s = tostring(e), m = e.message, provider = e.provider, status = e.status,
      retryable = e.retryable, after = e.retry_after_ms })`);
  assert.equal(r.outcome.status, "returned", r.stderr);
  const e = JSON.parse(String((r.outcome as { value: string }).value));
  assert.equal(e.s, "llm: anthropic HTTP 529 (overloaded_error): Overloaded");
  assert.equal(e.m, e.s);
  assert.deepEqual([e.provider, e.status, e.retryable, e.after], ["anthropic", 529, true, 10]);

  // uncaught, it fails the run with the plain message, as a string error would
  mock.reset();
  mock.push({ kind: "json", status: 400, body: anthropicError("invalid_request_error", "bad") });
  const u = await runLua(`llm.chat("hello", ${anth()})`);
  assert.equal(u.outcome.status, "raised");
  assert.equal(
    (u.outcome as { message: string }).message,
    "llm: anthropic HTTP 400 (invalid_request_error): bad",
  );
});

Deno.test("malformed JSON is an error, not an answer", async () => {
  mock.reset();
  mock.push({ kind: "raw", text: '{"id": "msg", "content": [' });
  const { error } = await chatError(anth());
  assert.match(error, /anthropic response is not valid JSON/);
});

Deno.test("a stream cut in the middle is an error, never a half answer", async () => {
  mock.reset();
  const events = anthropicStream(anthropicMessage([{ type: "text", text: "a long answer" }]));
  mock.push({ kind: "sse", events: events.slice(0, 4) });
  const { error } = await chatError(anth(`, max_retries = 2, on_delta = function() end`));
  assert.match(error, /anthropic stream was truncated: it ended before message_stop/);
  assert.equal(mock.requests.length, 1, "a stream that delivered deltas is not retried");

  mock.reset();
  const oevents = openaiStream(openaiCompletion({ content: "partial answer here" }));
  mock.push({ kind: "sse", events: oevents.slice(0, 2), cut: "error" });
  const e2 = await chatError(oai(`, on_delta = function() end`));
  assert.match(e2.error, /openai stream (was cut|was truncated)/);

  mock.reset();
  mock.push({ kind: "sse", events: oevents.slice(0, 3) }, { kind: "sse", events: oevents });
  const r = await chat(oai(`, max_retries = 1, stream = true`));
  assert.deepEqual(
    r.content,
    [{ type: "text", text: "partial answer here" }],
    "retried when nothing was delivered",
  );
});

Deno.test("a slow server hits the timeout, which is not retried", async () => {
  mock.reset();
  mock.push({ kind: "hang" });
  const t0 = performance.now();
  const { error } = await chatError(anth(`, timeout = 0.3, max_retries = 2`));
  assert.match(error, /anthropic request timed out after 0.3 s/);
  assert.equal(mock.requests.length, 1);
  assert.ok(performance.now() - t0 < 10_000);
});

Deno.test("obs lines: one http_request and one http_response per attempt, ids, no key, no body", async () => {
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "ok" }]) });
  {
    const env = testEnv({
      AGENT_BLOCK_LOG: "debug", // the lines are debug: a run that goes well stays quiet
      AGENT_BLOCK_TRACE_ID: "trace-123",
      AGENT_BLOCK_RUN_ID: "run-9",
      AGENT_BLOCK_AGENT_NAME: "tester",
    });
    const r = await runLua(`return std.json.encode(llm.chat("SECRET-PROMPT-TEXT", ${anth()}))`, { env });
    assert.equal(r.outcome.status, "returned", r.stderr);
    const lines = r.stderr.split("\n").filter((l) => l.includes("prefix=ab.obs"));
    assert.equal(lines.length, 2, r.stderr);
    assert.match(
      lines[0],
      /event=http_request component=http trace_id=trace-123 run_id=run-9 agent_id=[0-9a-f-]{36} agent_name=tester method=POST url=http:\/\/127\.0\.0\.1:\d+\/v1\/messages provider=anthropic attempt=1/,
    );
    assert.match(lines[1], /event=http_response .* status=200 latency_ms=\d+/);
    assert.ok(!r.stderr.includes(KEY) && !r.stderr.includes("SECRET-PROMPT-TEXT"));
    // at the default level, a call that went well prints nothing
    mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "ok" }]) });
    const quiet = await runLua(`llm.chat("hi", ${anth()})`);
    assert.equal(quiet.outcome.status, "returned", quiet.stderr);
    assert.equal(quiet.stderr, "");
  }
});

Deno.test("endpoint and key resolution: env base URL, api_key_env, refusal without a key", async () => {
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "env" }]) });
  const r0 = await chat(
    `{ api_key_env = "MY_TEST_KEY", max_retries = 0 }`,
    undefined,
    testEnv({ ANTHROPIC_BASE_URL: mock.url, MY_TEST_KEY: "from-env-var" }),
  );
  assert.deepEqual(r0.content, [{ type: "text", text: "env" }]);
  assert.equal(mock.requests[0].headers["authorization"], "Bearer from-env-var");
  // testEnv() carries no OPENAI_API_KEY (nor does the process's matter: the run sees only its own)
  const { error } = await chatError(`{ provider = "openai" }`);
  assert.match(
    error,
    /no API key for provider 'openai': set OPENAI_API_KEY or pass api_key \/ api_key_env/,
  );
  // A local server needs no key.
  mock.reset();
  mock.push({ kind: "json", body: openaiCompletion({ content: "local" }) });
  const r = await chat(`{ provider = "openai", base_url = "${mock.url}/v1", max_retries = 0 }`);
  assert.equal(mock.requests[0].headers["authorization"], undefined);
  assert.deepEqual(r.content, [{ type: "text", text: "local" }]);
});

Deno.test("on_delta errors abort the request with a clear message", async () => {
  mock.reset();
  mock.push({ kind: "sse", events: openaiStream(openaiCompletion({ content: "abc" })) });
  const { error } = await chatError(oai(`, on_delta = function() error("stop here") end`));
  assert.match(error, /llm: on_delta raised: .*stop here/);
});

Deno.test("llm.chat argument errors", async () => {
  const r = await runLua(`llm.chat(42)`);
  assert.equal(r.outcome.status, "raised");
  assert.match(
    (r.outcome as { message: string }).message,
    /llm.chat: argument 1 \(messages\) must be a string or a table, got number/,
  );
  const r2 = await runLua(`llm.chat("x", { provider = "bard" })`);
  assert.match(
    (r2.outcome as { message: string }).message,
    /must be anthropic, openai or replay, got "bard"/,
  );
});

Deno.test("a refused connection is retried, then reported", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const { error, stderr } = await chatError(
    `{ base_url = "http://127.0.0.1:${port}", api_key = "k", max_retries = 1 }`,
    testEnv({ AGENT_BLOCK_LOG: "debug" }),
  );
  // the cause, not a bare "fetch failed"
  assert.match(
    error,
    /llm: anthropic connection failed: tcp connect error: Connection refused .*\(gave up after 2 attempts\)/,
  );
  assert.equal(stderr.split("\n").filter((l) => l.includes("event=http_request")).length, 2);
  assert.match(stderr, /event=http_response .* status=0 latency_ms=\d+ error=connection/);
});

Deno.test("errors never carry userinfo, a key in the URL or the API key", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  const { error, stderr } = await chatError(
    `{ base_url = "http://alice:hunter2secret@127.0.0.1:${port}", api_key = "${KEY}", max_retries = 0 }`,
  );
  assert.match(error, /llm: anthropic (connection|request) failed/);
  for (const secret of ["hunter2secret", KEY]) {
    assert.ok(!error.includes(secret) && !stderr.includes(secret), `${secret} leaked:\n${error}\n${stderr}`);
  }
});

Deno.test("obs agent_id: AGENT_BLOCK_AGENT_ID when set, else one id per process", async () => {
  const ids = async (env = testEnv({ AGENT_BLOCK_LOG: "debug" })) => {
    mock.reset();
    mock.push(
      { kind: "json", body: anthropicMessage([{ type: "text", text: "a" }]) },
      { kind: "json", body: anthropicMessage([{ type: "text", text: "b" }]) },
    );
    const r = await runLua(`llm.chat("x", ${anth()}) llm.chat("y", ${anth()})`, { env });
    return [...r.stderr.matchAll(/event=http_\w+ .*?agent_id=(\S*)/g)].map((m) => m[1]);
  };
  const auto = [...await ids(), ...await ids()];
  assert.equal(auto.length, 8);
  assert.equal(new Set(auto).size, 1, "the made-up id is stable within the process");
  assert.deepEqual(await ids(testEnv({ AGENT_BLOCK_LOG: "debug", AGENT_BLOCK_AGENT_ID: "agent-7" })), [
    "agent-7",
    "agent-7",
    "agent-7",
    "agent-7",
  ]);
});

Deno.test("anthropic: sampling parameters are forwarded as the seed says, under the API version that takes them", async () => {
  // 2026-10-21 refuses temperature/top_p/top_k: a request carrying one goes out as 2023-06-01.
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "a" }]) });
  await chat(anth(`, temperature = 0.2, top_p = 0.9, top_k = 40`));
  let req = mock.requests[0];
  assert.equal(req.body.temperature, 0.2);
  assert.equal(req.body.top_p, 0.9);
  assert.equal(req.body.top_k, 40);
  assert.equal(req.headers["anthropic-version"], "2023-06-01");
  assert.equal(req.headers["x-api-key"], KEY);
  assert.equal(req.headers["authorization"], undefined);
  // what the seed lists is dropped with a warning: temperature ~= 1 past Opus 4.6; the rest goes on
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "a" }]) });
  const r = await runLua(
    `return std.json.encode(llm.chat("hi", ${
      anth(`, model = "claude-opus-4-7", temperature = 0.2, top_p = 0.9`)
    }))`,
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.match(r.stderr, /temperature 0\.2 dropped: claude-opus-4-7 takes temperature 1 only/);
  req = mock.requests[0];
  assert.equal(req.body.temperature, undefined);
  assert.equal(req.body.top_p, 0.9);
  assert.equal(req.headers["anthropic-version"], "2023-06-01");
  // without any, the pinned SDK's version and header
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "a" }]) });
  await chat(anth(`, model = "claude-opus-4-7", temperature = 0.2, thinking = { effort = "low" }`));
  req = mock.requests[0];
  assert.equal(req.body.temperature, undefined, "no temperature while thinking");
  assert.equal(req.headers["anthropic-version"], "2026-10-21");
  assert.equal(req.headers["authorization"], `Bearer ${KEY}`);
});

Deno.test("AGENT_BLOCK_FORCE_REPLAY: a run answers from the replay script whatever provider it names", async () => {
  const dir = await tempDir("ab_force_replay_");
  const script = join(dir, "answers.jsonl");
  Deno.writeTextFileSync(script, `{"content": "scripted"}\n{"content": "again"}\n`);
  const src =
    `return llm.chat("hi", { provider = "anthropic", model = "claude-opus-4-7" }).content[1].text .. " " ..
    llm.chat("hi", { provider = "openai", base_url = "http://127.0.0.1:9/v1" }).content[1].text`;
  let r = await runLua(src, { env: testEnv({ AGENT_BLOCK_FORCE_REPLAY: "1", AGENT_BLOCK_REPLAY: script }) });
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal((r.outcome as { value: string }).value, "scripted again");
  r = await runLua(src, {
    env: testEnv({ AGENT_BLOCK_FORCE_REPLAY: "sometimes", AGENT_BLOCK_REPLAY: script }),
  });
  assert.equal(r.outcome.status, "raised");
  assert.match(
    (r.outcome as { message: string }).message,
    /AGENT_BLOCK_FORCE_REPLAY must be 1, true, yes, on or 0/,
  );
});
