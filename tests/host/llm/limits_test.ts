/**
 * The bounds of a model request, against the local mock APIs: `timeout` covers the whole
 * exchange (a server that streams forever is cut off at it), an answer past `max_response_bytes`
 * fails while it streams — streamed, as a JSON body without a length, or with a declared length
 * past the limit — an endless error body is read only for its message, and the run's
 * `AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES` sets the default. "Early" is proven by the bytes the mock
 * produced before the client hung up, never by timing.
 */
import assert from "node:assert/strict";
import { runLua, testEnv, waitFor } from "../../helpers.ts";
import { anthropicMessage, MockLlm, openaiCompletion, type StreamStats } from "./mock_llm.ts";

const mock = new MockLlm();
const KEY = "sk-test-secret-0123456789";
const MiB = 1024 * 1024;

Deno.test.afterAll(async () => await mock.close());

function opts(provider: "anthropic" | "openai", extra = ""): string {
  const base = provider === "anthropic" ? mock.url : `${mock.url}/v1`;
  return `{ provider = "${provider}", base_url = "${base}", api_key = "${KEY}", max_retries = 0 ${extra} }`;
}

async function chatError(o: string, env = testEnv()): Promise<string> {
  const r = await runLua(
    `local ok, e = pcall(llm.chat, "hello", ${o}); assert(not ok, "expected a failure"); return tostring(e)`,
    { env },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  return String((r.outcome as { value: string }).value);
}

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

const ANTHROPIC_HEAD = sse("message_start", {
  type: "message_start",
  message: { ...anthropicMessage([]), stop_reason: null },
}) +
  sse("content_block_start", {
    type: "content_block_start",
    index: 0,
    content_block: { type: "text", text: "" },
  });

function stats(): StreamStats {
  return { bytes: 0, cancelled: false };
}

Deno.test("attack: a model server that keeps streaming forever is cut off at the timeout (both providers)", async () => {
  for (const provider of ["anthropic", "openai"] as const) {
    mock.reset();
    const s = stats();
    mock.push({
      kind: "forever",
      head: provider === "anthropic" ? ANTHROPIC_HEAD : "",
      // Something arrives every 20 ms: a silence-only timeout would never fire.
      piece: provider === "anthropic" ? sse("ping", { type: "ping" }) : ": still thinking\n\n",
      everyMs: 20,
      stats: s,
    });
    const err = await chatError(opts(provider, ", stream = true, timeout = 0.5"));
    assert.match(err, new RegExp(`^llm: ${provider} request timed out after 0\\.5 s \\(timeout\\)`));
    await waitFor(() => s.cancelled, { what: `the ${provider} stream to be hung up on` });
  }
});

Deno.test("attack: a streamed answer past max_response_bytes fails while it streams", async () => {
  mock.reset();
  const s = stats();
  const text = "x".repeat(16 * 1024);
  mock.push({
    kind: "forever",
    head: ANTHROPIC_HEAD,
    piece: sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text },
    }),
    stats: s,
  });
  const err = await chatError(
    opts("anthropic", `, stream = true, timeout = 60, max_response_bytes = ${MiB}`),
  );
  assert.match(err, /^llm: anthropic response is larger than 1048576 bytes \(max_response_bytes\)/);
  await waitFor(() => s.cancelled, { what: "the stream to be hung up on" });
  assert.ok(s.bytes < 16 * MiB, `the mock produced ${s.bytes} bytes before the client hung up`);
});

Deno.test("attack: a JSON answer past max_response_bytes fails before it is buffered (no length, or a declared one)", async () => {
  mock.reset();
  const s = stats();
  mock.push({
    kind: "forever",
    contentType: "application/json",
    head: '{"id":"chatcmpl-x","choices":[{"index":0,"message":{"role":"assistant","content":"',
    piece: "y".repeat(64 * 1024),
    stats: s,
  });
  const err = await chatError(opts("openai", `, timeout = 60, max_response_bytes = ${MiB}`));
  assert.match(err, /^llm: openai response is larger than 1048576 bytes \(max_response_bytes\)/);
  await waitFor(() => s.cancelled, { what: "the body to be hung up on" });
  assert.ok(s.bytes < 16 * MiB, `the mock produced ${s.bytes} bytes before the client hung up`);

  // A Content-Length past the limit is refused as declared.
  mock.reset();
  const big = JSON.stringify(openaiCompletion({ content: "z".repeat(2 * MiB) }));
  mock.push({ kind: "raw", text: big });
  const declared = await chatError(opts("openai", `, max_response_bytes = ${MiB}`));
  assert.match(declared, /^llm: openai response is larger than 1048576 bytes/);
});

Deno.test("attack: an endless error body is read only for its message", async () => {
  mock.reset();
  const s = stats();
  mock.push({
    kind: "forever",
    status: 500,
    contentType: "text/plain",
    head: "upstream exploded: ",
    piece: "!".repeat(64 * 1024),
    stats: s,
  });
  const err = await chatError(opts("anthropic", ", timeout = 60"));
  assert.match(err, /^llm: anthropic HTTP 500: upstream exploded: !!!/);
  await waitFor(() => s.cancelled, { what: "the error body to be hung up on" });
  assert.ok(s.bytes < 16 * MiB, `the mock produced ${s.bytes} bytes before the client hung up`);
});

Deno.test("AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES sets the default; the field overrides it; bad values are named", async () => {
  const answer = openaiCompletion({
    content: "a fine answer, longer than a hundred bytes once it is wrapped in JSON",
  });
  mock.reset();
  mock.push({ kind: "json", body: answer });
  const env = testEnv({ AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES: "100" });
  assert.match(
    await chatError(opts("openai"), env),
    /response is larger than 100 bytes \(max_response_bytes\)/,
  );

  mock.reset();
  mock.push({ kind: "json", body: answer });
  const r = await runLua(
    `return llm.chat("hello", ${opts("openai", ", max_response_bytes = 100000")}).content[1].text`,
    {
      env,
    },
  );
  assert.deepEqual(r.outcome, { status: "returned", value: answer.choices[0].message.content });

  mock.reset();
  // read at the edge: a malformed value is a run that never starts, the message naming it
  const bad = await runLua(`return "ran"`, { env: testEnv({ AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES: "lots" }) });
  assert.equal(bad.outcome.status, "raised");
  assert.match(
    (bad.outcome as { message: string }).message,
    /^AGENT_BLOCK_LLM_MAX_RESPONSE_BYTES must be a positive whole number of bytes, got 'lots'$/,
  );
  const badField = await chatError(opts("openai", ", max_response_bytes = 0"));
  assert.match(badField, /field 'max_response_bytes' must be a positive whole number of bytes, got 0/);
});
