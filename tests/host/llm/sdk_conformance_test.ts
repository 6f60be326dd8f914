/**
 * The official SDKs as ground truth, both ways:
 * - our request bodies, captured by the mock from real agent.run / llm.chat calls, are written
 *   into a TypeScript file as literals with `satisfies Anthropic.MessageCreateParams` (the beta
 *   params when context management is on) / `OpenAI.Chat.ChatCompletionCreateParams`, and
 *   `deno check` must accept it (excess or mistyped fields fail), plus runtime checks against
 *   the requests the SDKs themselves send to the same mock;
 * - the SDK clients, pointed at the mock, must parse the replies our tests feed our own client
 *   (JSON and SSE, both providers), so the mock speaks the real wire formats.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
// test-only packages: pinned here, not in deno.json's import map (a run installs only what it needs)
// deno-lint-ignore no-import-prefix -- test-only package, kept out of deno.json's import map (tools/gen_run_lock.ts)
import Anthropic from "npm:@anthropic-ai/sdk@1.14.0";
// deno-lint-ignore no-import-prefix -- test-only package, kept out of deno.json's import map (tools/gen_run_lock.ts)
import OpenAI from "npm:openai@7.59.0";
import { evalLua, REPO_ROOT } from "../../helpers.ts";
import {
  anthropicMessage,
  anthropicStream,
  MockLlm,
  openaiCompletion,
  openaiStream,
  openaiToolCall,
} from "./mock_llm.ts";

const mock = new MockLlm();
Deno.test.afterAll(async () => await mock.close());

/** Runs agent.run for two turns (tool call, then answer) and returns the two request bodies. */
async function twoTurns(provider: "anthropic" | "openai", opts: string): Promise<Record<string, unknown>[]> {
  mock.reset();
  if (provider === "anthropic") {
    mock.push(
      {
        kind: "json",
        body: anthropicMessage([{ type: "text", text: "checking" }, {
          type: "tool_use",
          id: "toolu_a",
          name: "lookup",
          input: { city: "Oslo" },
        }], "tool_use"),
      },
      { kind: "json", body: anthropicMessage([{ type: "text", text: "It is cold." }]) },
    );
  } else {
    mock.push(
      {
        kind: "json",
        body: openaiCompletion({
          content: null,
          tool_calls: [openaiToolCall("call_a", "lookup", { city: "Oslo" })],
        }, "tool_calls"),
      },
      { kind: "json", body: openaiCompletion({ content: "It is cold." }) },
    );
  }
  const base = provider === "anthropic" ? mock.url : mock.url + "/v1";
  const out = await evalLua(`
    tool.register("lookup", { description = "Look up a city", input_schema = { type = "object",
      properties = { city = { type = "string" } }, required = { "city" } } },
      function(x) return "cold in " .. x.city end)
    local r = require("agent").run({ provider = "${provider}", base_url = "${base}", api_key = "k", max_retries = 0,
      prompt = "Weather in Oslo?", system = "Be brief.", ${opts} })
    return std.json.encode(r)`);
  const r = JSON.parse(out!);
  assert.equal(r.ok, true, r.error);
  assert.equal(mock.requests.length, 2);
  return mock.requests.map((q) => q.body);
}

async function oneCall(provider: "anthropic" | "openai", opts: string): Promise<Record<string, unknown>> {
  mock.reset();
  mock.push(
    provider === "anthropic"
      ? { kind: "sse", events: anthropicStream(anthropicMessage([{ type: "text", text: "ok" }])) }
      : { kind: "sse", events: openaiStream(openaiCompletion({ content: "ok" })) },
  );
  const base = provider === "anthropic" ? mock.url : mock.url + "/v1";
  await evalLua(
    `return std.json.encode(llm.chat("hi", { provider = "${provider}", base_url = "${base}", api_key = "k",
    max_retries = 0, stream = true, ${opts} }))`,
  );
  return mock.requests[0].body;
}

Deno.test("our request bodies type-check against the official SDKs' params", async () => {
  const anthropicPlain = [
    ...await twoTurns(
      "anthropic",
      `context_management = false, tools = nil, parallel_tool_calls = false,
      thinking = { budget_tokens = 2048 }, max_tokens = 4096, stop = { "END" }, top_k = 20`,
    ),
    await oneCall("anthropic", `model = "claude-sonnet-4-5", temperature = 0.3, top_p = 0.9`),
  ];
  const anthropicBeta = await twoTurns(
    "anthropic",
    `model = "claude-opus-4-7", thinking = { effort = "high" },
    tool_choice = "auto", response_format = { type = "json_schema", json_schema = { name = "out",
    schema = { type = "object", properties = { answer = { type = "string" } } } } }`,
  );
  const openaiBodies = [
    ...await twoTurns(
      "openai",
      `model = "gpt-4o-mini", tool_choice = { type = "function", name = "lookup" },
      parallel_tool_calls = false, stop = "END", seed = 7, temperature = 0.2, max_tokens = 300,
      response_format = { type = "json_schema", json_schema = { name = "out", schema = { type = "object" } } }`,
    ),
    await oneCall(
      "openai",
      `model = "gpt-5.1", thinking = { effort = "low" }, max_tokens = 500, temperature = 0.4`,
    ),
  ];
  // runtime checks of what the type check cannot see
  assert.deepEqual((anthropicBeta[0].context_management as { edits: unknown[] }).edits.length, 1);
  // Sampling parameters go out under API version 2023-06-01 (2026-10-21, the pinned SDK's, has
  // none, so its types cannot check them): checked here, and the rest of each body by the types.
  assert.equal(anthropicPlain[0].top_k, 20);
  assert.equal(anthropicPlain[2].temperature, 0.3);
  assert.equal(anthropicPlain[2].top_p, 0.9);
  const SAMPLING = new Set(["temperature", "top_p", "top_k"]);
  const typed = anthropicPlain.map((b) =>
    Object.fromEntries(Object.entries(b).filter(([k]) => !SAMPLING.has(k)))
  );
  assert.equal(openaiBodies[2].max_completion_tokens, 500);
  assert.equal(openaiBodies[2].temperature, undefined);
  const second = openaiBodies[1].messages as Record<string, unknown>[];
  assert.deepEqual(second.map((m) => m.role), ["system", "user", "assistant", "tool"]);

  const lines = [
    `import type Anthropic from "npm:@anthropic-ai/sdk@1.14.0";`,
    `import type OpenAI from "npm:openai@7.59.0";`,
    ...typed.map((b, i) =>
      `export const a${i} = ${JSON.stringify(b)} satisfies Anthropic.MessageCreateParams;`
    ),
    ...anthropicBeta.map((b, i) =>
      `export const b${i} = ${JSON.stringify(b)} satisfies Anthropic.Beta.Messages.MessageCreateParams;`
    ),
    ...openaiBodies.map((b, i) =>
      `export const o${i} = ${JSON.stringify(b)} satisfies OpenAI.Chat.ChatCompletionCreateParams;`
    ),
    // the check must be able to fail: a misspelt field is refused
    `// @ts-expect-error a field the API does not have`,
    `export const bad = { model: "m", max_tokens: 1, messages: [], stop: ["x"] } satisfies Anthropic.MessageCreateParams;`,
  ];
  const dir = await Deno.makeTempDir({ prefix: "ab_sdk_types_" });
  try {
    const file = join(dir, "bodies_check.ts");
    await Deno.writeTextFile(file, lines.join("\n") + "\n");
    const r = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--config", join(REPO_ROOT, "deno.json"), file],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(r.stderr);
    assert.equal(r.code, 0, `deno check refused our bodies:\n${err}\n${lines.join("\n")}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("our headers match what the official SDKs send", async () => {
  mock.reset();
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "a" }]) });
  await new Anthropic({ baseURL: mock.url, apiKey: "k1", maxRetries: 0 }).messages.create({
    model: "claude-haiku-4-5-20251001",
    max_tokens: 10,
    messages: [{ role: "user", content: "hi" }],
  });
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "a" }]) });
  await evalLua(`llm.chat("hi", { base_url = "${mock.url}", api_key = "k1", max_retries = 0 })`);
  const [sdk, ours] = mock.requests;
  assert.equal(ours.path, sdk.path);
  for (const h of ["authorization", "anthropic-version", "content-type"]) {
    assert.equal(ours.headers[h], sdk.headers[h], h);
  }
  mock.reset();
  mock.push({ kind: "json", body: openaiCompletion({ content: "a" }) });
  await new OpenAI({ baseURL: mock.url + "/v1", apiKey: "k2", maxRetries: 0 }).chat.completions.create({
    model: "gpt-4o-mini",
    messages: [{ role: "user", content: "hi" }],
  });
  mock.push({ kind: "json", body: openaiCompletion({ content: "a" }) });
  await evalLua(
    `llm.chat("hi", { provider = "openai", base_url = "${mock.url}/v1", api_key = "k2", max_retries = 0 })`,
  );
  const [osdk, oours] = mock.requests;
  assert.equal(oours.path, osdk.path);
  assert.equal(oours.headers.authorization, osdk.headers.authorization);
  assert.deepEqual(Object.keys(oours.body).sort(), ["max_tokens", "messages", "model"]);
});

Deno.test("the official SDKs accept the mock's replies (JSON and SSE)", async () => {
  const anthropic = new Anthropic({ baseURL: mock.url, apiKey: "k", maxRetries: 0 });
  const msg = anthropicMessage([
    { type: "thinking", thinking: "hmm", signature: "sig" },
    { type: "text", text: "Hello" },
    { type: "tool_use", id: "toolu_x", name: "lookup", input: { city: "Paris" } },
  ], "tool_use");
  mock.reset();
  mock.push({ kind: "json", body: msg }, { kind: "sse", events: anthropicStream(msg) });
  const params = {
    model: "claude-haiku-4-5-20251001",
    max_tokens: 100,
    messages: [{ role: "user" as const, content: "hi" }],
  };
  const m1 = await anthropic.messages.create(params);
  assert.deepEqual(m1.content, msg.content);
  const m2 = await anthropic.messages.stream(params).finalMessage();
  assert.deepEqual(m2.content, msg.content);
  assert.equal(m2.stop_reason, "tool_use");

  const openai = new OpenAI({ baseURL: mock.url + "/v1", apiKey: "k", maxRetries: 0 });
  const c = openaiCompletion({
    content: "Hi",
    reasoning_content: "r",
    tool_calls: [openaiToolCall("call_1", "lookup", { city: "Oslo" })],
  }, "tool_calls");
  mock.push({ kind: "json", body: c }, { kind: "sse", events: openaiStream(c) });
  const oparams = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "hi" }] };
  const c1 = await openai.chat.completions.create(oparams);
  assert.equal(c1.choices[0].message.tool_calls?.[0].id, "call_1");
  const c2 = await openai.chat.completions.stream(oparams).finalChatCompletion();
  const call = c2.choices[0].message.tool_calls?.[0];
  assert.ok(call && call.type === "function");
  assert.deepEqual(JSON.parse(call.function.arguments), { city: "Oslo" });
  assert.equal(c2.choices[0].message.content, "Hi");
  assert.equal(c2.usage?.total_tokens, 15);
});
