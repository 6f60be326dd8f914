/**
 * A conversation's requests, turn after turn, when only what a turn added is converted and encoded
 * (llm_proto's chains, knl's `extends`, the host's joined messages): every request carries the
 * whole conversation exactly as a full conversion would, on both wires, with the Anthropic cache
 * marker on the last message only; a history edited in the middle or at its start is sent as
 * edited; and the host's joined buffer (`JoinedMessages`) keeps a request's view intact.
 */
import assert from "node:assert/strict";
import { runLua } from "../../helpers.ts";
import { JoinedMessages } from "../../../src/host/llm/joined_messages.ts";
import { anthropicMessage, MockLlm, openaiCompletion } from "./mock_llm.ts";

const mock = new MockLlm();
Deno.test.afterAll(async () => await mock.close());

const TURNS = 12;

type Msg = Record<string, unknown>;

Deno.test("a long agent.run over OpenAI: every request holds the whole conversation, in order", async () => {
  mock.reset();
  for (let i = 0; i < TURNS; i++) {
    mock.push({
      kind: "json",
      body: openaiCompletion({
        role: "assistant",
        content: i % 3 === 0 ? `step ${i}` : null,
        tool_calls: [{
          id: `call_${i}`,
          type: "function",
          function: { name: "add", arguments: `{"a":${i},"b":1}` },
        }],
      }, "tool_calls"),
    });
  }
  mock.push({ kind: "json", body: openaiCompletion({ role: "assistant", content: "done" }) });
  const r = await runLua(
    `
tool.register("add", { description = "adds", input_schema = { type = "object" } }, function(x) return { sum = x.a + x.b } end)
local r = require("agent").run({ provider = "openai", base_url = BASE_URL, api_key = "k", prompt = "add",
  system = "be brief", max_retries = 0, max_iterations = ${TURNS + 2} })
assert(r.ok, r.error)
print(r.num_turns)`,
    { globals: { BASE_URL: mock.url + "/v1" } },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal(r.stdout.trim(), String(TURNS + 1));
  assert.equal(mock.requests.length, TURNS + 1);
  const expected: Msg[] = [{ role: "system", content: "be brief" }, { role: "user", content: "add" }];
  for (let i = 0; i <= TURNS; i++) {
    assert.deepEqual(mock.requests[i].body.messages, expected, `request ${i + 1}`);
    if (i === TURNS) break;
    expected.push({
      role: "assistant",
      content: i % 3 === 0 ? `step ${i}` : null,
      tool_calls: [{
        id: `call_${i}`,
        type: "function",
        function: { name: "add", arguments: `{"a":${i},"b":1}` },
      }],
    });
    expected.push({ role: "tool", tool_call_id: `call_${i}`, content: `{"sum":${i + 1}}` });
  }
});

Deno.test("a long agent.run over Anthropic: the cache marker is on the last message of each request only", async () => {
  mock.reset();
  for (let i = 0; i < TURNS; i++) {
    mock.push({
      kind: "json",
      body: anthropicMessage(
        [{ type: "tool_use", id: `toolu_${i}`, name: "add", input: { a: i, b: 1 } }],
        "tool_use",
      ),
    });
  }
  mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "done" }]) });
  const r = await runLua(
    `
tool.register("add", { description = "adds", input_schema = { type = "object" } }, function(x) return { sum = x.a + x.b } end)
local r = require("agent").run({ base_url = BASE_URL, api_key = "k", prompt = "add", max_retries = 0,
  max_iterations = ${TURNS + 2} })
assert(r.ok, r.error)`,
    { globals: { BASE_URL: mock.url } },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal(mock.requests.length, TURNS + 1);
  const marker = { type: "ephemeral" };
  const plain: Msg[] = [{ role: "user", content: [{ type: "text", text: "add" }] }];
  for (let i = 0; i <= TURNS; i++) {
    // what was sent, with the one marker expected at the end
    const want = structuredClone(plain) as { role: string; content: Msg[] }[];
    const last = want[want.length - 1].content;
    last[last.length - 1] = { ...last[last.length - 1], cache_control: marker };
    const got = mock.requests[i].body.messages as Msg[];
    // the prompt went as a string; compare its text block form
    if (typeof got[0].content === "string") got[0].content = [{ type: "text", text: got[0].content }];
    if (i === 0) assert.deepEqual(got[0].content, [{ type: "text", text: "add", cache_control: marker }]);
    else assert.deepEqual(got, want, `request ${i + 1}`);
    if (i === TURNS) break;
    plain.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name: "add", input: { a: i, b: 1 } }],
    });
    plain.push({
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: `toolu_${i}`,
        content: `{"sum":${i + 1}}`,
        is_error: false,
      }],
    });
  }
});

Deno.test("one Port, a history edited between calls: each request carries the list as it was given", async () => {
  mock.reset();
  for (let i = 0; i < 5; i++) {
    mock.push({ kind: "json", body: openaiCompletion({ role: "assistant", content: "ok" }) });
  }
  const r = await runLua(
    `
local port = require("llm_proto.port").openai:open({ base_url = BASE_URL, api_key = "k", max_retries = 0 })
local a, b, c = { role = "user", content = "a" }, { role = "assistant", content = "b" }, { role = "user", content = "c" }
local x = { role = "assistant", content = "x" }
port:chat({ messages = { a, b, c } })
port:chat({ messages = { a, x, c } })          -- the middle replaced
port:chat({ messages = { a, x } })             -- shortened
local a2 = { role = "user", content = "a2" }
port:chat({ messages = { a2, x, c } })         -- another first message
c.content = "c, edited"                         -- a field replaced on a message sent before
port:chat({ messages = { a2, x, c } })`,
    { globals: { BASE_URL: mock.url + "/v1" } },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  const texts = mock.requests.map((q) => (q.body.messages as Msg[]).map((m) => m.content).join("|"));
  assert.deepEqual(texts, ["a|b|c", "a|x|c", "a|x", "a2|x|c", "a2|x|c, edited"]);
});

Deno.test("kernel beats with a user turn merged into the last message between them (a failed beat's too): each request sends the merged form", async () => {
  mock.reset();
  const call = (id: string) =>
    openaiCompletion({
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "f", arguments: "{}" } }],
    }, "tool_calls");
  mock.push({ kind: "json", status: 500, body: { error: { type: "server_error", message: "down" } } });
  mock.push({ kind: "json", body: call("t1") }, {
    kind: "json",
    body: openaiCompletion({ role: "assistant", content: "done" }),
  });
  const r = await runLua(
    `
local knl = require("knl")
local port = require("llm_proto.port").openai:open({ base_url = BASE_URL, api_key = "k", max_retries = 0 })
local dev = knl.device({ llm = port, tools = {
  list = function() return { { name = "f", description = "f", input_schema = { type = "object" } } } end,
  call = function() return "r" end,
} })
local s = knl.open({ store = "mem" }):session({ owner = "t" })
s:append({ kind = "msg_user", data = { content = "q" } })
assert(knl.beat(s, dev, {}).kind == "error")                -- nothing added to the conversation
s:append({ kind = "msg_user", data = { content = "more" } }) -- joins the message the failed request sent
knl.beat(s, dev, {})
s:append({ kind = "msg_user", data = { content = "again" } }) -- joins the tool result's user turn
knl.beat(s, dev, {})`,
    { globals: { BASE_URL: mock.url + "/v1" } },
  );
  assert.equal(r.outcome.status, "returned", r.stderr);
  const shapes = mock.requests.map((q) =>
    (q.body.messages as Msg[]).map((m) => `${m.role}:${m.content ?? (m.tool_calls as Msg[])?.length}`).join(
      "|",
    )
  );
  assert.deepEqual(shapes, [
    "user:q",
    "user:q\nmore",
    "user:q\nmore|assistant:1|tool:r|user:again",
  ]);
});

Deno.test("JoinedMessages: keep and append; a view in use is never overwritten", () => {
  const enc = (s: string) => new TextEncoder().encode(s);
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  const j = new JoinedMessages();
  const empty = j.view();
  assert.equal(text(empty), "");
  j.release(empty);
  j.update(0, [enc("1"), enc("22")]);
  assert.equal(j.count, 2);
  const v1 = j.view();
  assert.equal(text(v1), "1,22");
  j.update(2, [enc("333")]); // appending leaves v1's bytes alone
  assert.equal(text(v1), "1,22");
  j.update(1, [enc("4")]); // dropping while v1 is in use: a fresh buffer
  assert.equal(text(v1), "1,22");
  assert.equal(text(j.view()), "1,4");
  j.update(0, []);
  assert.equal(j.count, 0);
  assert.equal(text(j.view()), "");
  assert.throws(() => j.update(3, []), RangeError);
  // in place once no view is in use
  const k = new JoinedMessages();
  k.update(0, [enc("a"), enc("b")]);
  const v = k.view();
  k.release(v);
  k.update(1, [enc("ccc")]);
  assert.equal(text(k.view()), "a,ccc");
  assert.equal(text(v), "a,c", "released: overwritten in place");
});
