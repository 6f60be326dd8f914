/**
 * The event stream's JSON Lines form: every event kind round-trips, the reader splits a byte
 * stream at any chunking into the same events, and a bad line stops it naming the line and field.
 */
import assert from "node:assert/strict";
import { eventLine, EventLineReader, parseEventLine } from "../../src/runner/event_json.ts";
import type { RunEvent } from "../../src/runner/runner.ts";

const EVENTS: RunEvent[] = [
  { type: "session_open", session: "s_1" },
  {
    type: "events",
    rows: [{
      position: 1,
      stream: "s_1",
      seq: 1,
      epoch_ms: 1700000000000,
      kind: "note",
      schema_version: 1,
      meta: { beat: 0 },
      data: { text: "é ünïcode" },
    }],
  },
  { type: "mcp_connect", server: "fs", transport: "stdio", ms: 12.5, ok: true },
  { type: "mcp_connect", server: "web", transport: "http", ms: 3, ok: false, error: "refused" },
  { type: "mcp_call", server: "fs", tool: "read", ms: 1, ok: true },
  { type: "mcp_call", server: "fs", tool: "read", ms: 1, ok: false, error: "no such file" },
  { type: "artifact", name: "plan.md", content: { steps: [1, 2] }, id: "ev-1" },
  { type: "artifact", name: "empty", content: undefined, id: "ev-2" },
  { type: "end", ms: 40, outcome: { status: "raised", code: "script", message: "m", traceback: "t" } },
  { type: "end", ms: 41, outcome: { status: "returned", value: "ok" } },
  { type: "a2a_call", agent: "http://127.0.0.1:7790", method: "send", ms: 2, ok: true },
  {
    type: "a2a_call",
    agent: "http://127.0.0.1:7790",
    method: "get",
    ms: 1,
    ok: false,
    error: "a2a.get: gone",
  },
];

Deno.test("event JSON: every kind round-trips, one line each", () => {
  for (const e of EVENTS) {
    const line = eventLine(e);
    assert.ok(line.endsWith("\n") && !line.slice(0, -1).includes("\n"), e.type);
    assert.deepEqual(parseEventLine(line.slice(0, -1), "t"), e);
  }
});

Deno.test("event JSON: the reader gives the same events whatever the chunking", async () => {
  const bytes = new TextEncoder().encode(EVENTS.map(eventLine).join(""));
  for (const size of [1, 7, 64, bytes.length]) {
    const got: RunEvent[] = [];
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < bytes.length; i += size) c.enqueue(bytes.slice(i, i + size));
        c.close();
      },
    });
    const reader = new EventLineReader(stream, "test", (e) => got.push(e));
    await reader.done;
    assert.equal(reader.error, undefined);
    assert.deepEqual(got, EVENTS, `chunks of ${size}`);
  }
});

Deno.test("event JSON: a bad line stops the reader, naming the line and the field", async () => {
  const lines = eventLine(EVENTS[0]) + '{"v":1,"type":"mcp_call","server":"x"}\n' + eventLine(EVENTS[9]);
  const got: RunEvent[] = [];
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(lines));
      c.close();
    },
  });
  const reader = new EventLineReader(stream, "the child's events", (e) => got.push(e));
  await reader.done;
  assert.deepEqual(got, [EVENTS[0]]);
  assert.match(reader.error!.message, /the child's events, line 2: field 'tool' must be a string/);
  assert.throws(() => parseEventLine('{"v":2,"type":"end"}', "f"), /f: field 'v' must be 1/);
  assert.throws(() => parseEventLine('{"v":1,"type":"nope"}', "f"), /field 'type' must be one of/);
  assert.throws(
    () => parseEventLine('{"v":1,"type":"session_open","session":"s","x":1}', "f"),
    /unknown field 'x'/,
  );
});
