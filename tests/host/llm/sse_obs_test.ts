/**
 * The small pure parts of the transport: SSE framing (split chunks, CRLF, comments, multi-line
 * data, a half record at the end), Retry-After parsing, backoff bounds, URL sanitising and the
 * obs line format; plus the replay provider picked up from AGENT_BLOCK_REPLAY.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readSse, type SseEvent } from "../../../src/clients/llm/sse.ts";
import {
  backoffMs,
  buildPayload,
  MAX_RETRY_AFTER_MS,
  retryAfter,
} from "../../../src/clients/llm/transport.ts";
import { obsLine, sanitizeUrl } from "../../../src/obs/ab_obs.ts";
import { evalLua, testEnv } from "../../helpers.ts";

function streamOf(chunks: string[]): ReadableStream<Uint8Array> {
  const enc = new TextEncoder();
  return new ReadableStream({
    start(c) {
      for (const ch of chunks) c.enqueue(enc.encode(ch));
      c.close();
    },
  });
}

async function collect(chunks: string[]): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of readSse(streamOf(chunks))) out.push(e);
  return out;
}

Deno.test("SSE: records split across chunks, CRLF and CR line ends, comments, multi-line data", async () => {
  const evs = await collect([
    "event: a\r",
    '\ndata: {"x":',
    "1}\r\n\r\n: comment\n\nda",
    "ta: line1\ndata:line2\n\n",
    "event: b\rdata: z\r\r",
    "data: half a record",
  ]);
  assert.deepEqual(evs, [
    { event: "a", data: '{"x":1}' },
    { event: "message", data: "line1\nline2" },
    { event: "b", data: "z" },
  ]);
});

Deno.test("Retry-After in seconds, as an HTTP date, retry-after-ms; backoff bounds", () => {
  assert.equal(retryAfter(new Headers({ "retry-after": "2" })), 2000);
  assert.equal(retryAfter(new Headers({ "retry-after-ms": "150", "retry-after": "9" })), 150);
  const at = new Date(Date.now() + 5000).toUTCString();
  const ms = retryAfter(new Headers({ "retry-after": at }))!;
  assert.ok(ms > 3000 && ms <= 5000, String(ms));
  assert.equal(retryAfter(new Headers()), undefined);
  assert.equal(backoffMs(1, 3_600_000), MAX_RETRY_AFTER_MS);
  for (let i = 0; i < 20; i++) {
    const b = backoffMs(1);
    assert.ok(b >= 375 && b <= 625, String(b));
    assert.ok(backoffMs(10) <= 8000 * 1.25);
  }
});

Deno.test("payload: sorted keys, stream fields, pre-encoded parts copied in as bytes", () => {
  const utf8 = new TextEncoder();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  const p = buildPayload({
    provider: "openai",
    stream: true,
    body: { model: "m", max_tokens: 5 },
    rawMessages: [
      utf8.encode('{"content":"hi","role":"user"}'),
      utf8.encode('{"content":"é ☃ 😀","role":"user"}'),
    ],
    rawTools: utf8.encode('[{"type":"function"}]'),
  });
  assert.equal(
    text(p),
    '{"max_tokens":5,"messages":[{"content":"hi","role":"user"},{"content":"é ☃ 😀","role":"user"}],' +
      '"model":"m","stream":true,"stream_options":{"include_usage":true},"tools":[{"type":"function"}]}',
  );
  // no messages at all, and the marker order reversed by the keys around it
  assert.equal(
    text(
      buildPayload({
        provider: "anthropic",
        stream: false,
        body: { z: "ü" },
        rawMessages: [],
        rawTools: utf8.encode("[]"),
      }),
    ),
    '{"messages":[],"tools":[],"z":"ü"}',
  );
  assert.deepEqual(JSON.parse(text(buildPayload({ provider: "anthropic", stream: true, body: { a: 1 } }))), {
    a: 1,
    stream: true,
  });
});

Deno.test("sanitizeUrl: no userinfo, query or fragment; the upstream vectors", () => {
  assert.equal(sanitizeUrl("https://user:pass@example.com/path?q=1&r=2#frag"), "https://example.com/path");
  assert.equal(sanitizeUrl("not a valid url ://::garbage"), "not a valid url ...");
  assert.equal(sanitizeUrl(""), "");
  assert.equal(sanitizeUrl("htps://x.com"), "htps://x.com");
  assert.equal(sanitizeUrl("https://api.example.com/v1?api_key=sk-123"), "https://api.example.com/v1");
});

Deno.test("obs lines: quoting, redaction of secret-named keys, url sanitised", () => {
  const line = obsLine("http_request", "http", {
    url: "https://u:p@h.example/x?k=v",
    note: "two words",
    api_key: "sk-live",
    authorization: "Bearer x",
  }, { trace_id: "t", run_id: "", agent_id: "a", agent_name: "my agent" });
  assert.equal(
    line,
    'prefix=ab.obs event=http_request component=http trace_id=t run_id= agent_id=a agent_name="my agent" ' +
      'url=https://h.example/x note="two words" api_key=[REDACTED] authorization=[REDACTED]',
  );
});

Deno.test("replay: AGENT_BLOCK_REPLAY names the script when opts.replay does not", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ab_replay_" });
  const file = join(dir, "script.jsonl");
  await Deno.writeTextFile(
    file,
    JSON.stringify({ content: "scripted hello", usage: { input_tokens: 3 } }) + "\n",
  );
  try {
    const out = await evalLua(
      `local r = llm.chat("hi", { provider = "replay" }); return r.content[1].text .. "|" .. r.usage.total_tokens`,
      { env: testEnv({ AGENT_BLOCK_REPLAY: file }) },
    );
    assert.equal(out, "scripted hello|3");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  const missing = await evalLua(
    `local ok, e = pcall(llm.chat, "hi", { provider = "replay" }); return tostring(e)`,
  );
  assert.match(missing!, /replay:open: no script: pass opts.replay = <file.jsonl> or set AGENT_BLOCK_REPLAY/);
});
