/**
 * When the kernel's events reach the database, seen from a second connection while a beat runs:
 * the request before the model is asked, the tool call before its tool runs, and the trailing
 * tool result — deferred — no later than the next asynchronous host call, the next write, or
 * the run's end.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { runLua } from "../helpers.ts";
import type { LuaEngine } from "../../src/lua/engine.ts";
import type { RunContext } from "../../src/host/context.ts";

const SCRIPT = `
seen = {}
local knl = require("knl")
local calls = 0
local port = { profile = { provider = "test", model = "test-1" } }
function port:chat()
  calls = calls + 1
  seen["model_call_" .. calls] = peek.kinds()
  if calls == 1 then
    return { content = { { type = "tool_use", id = "c1", name = "echo", input = {} } }, stop_reason = "tool_use",
      model = "test-1", usage = { input_tokens = 1, output_tokens = 1 } }
  end
  return { content = { { type = "text", text = "done" } }, stop_reason = "end_turn", model = "test-1",
    usage = { input_tokens = 1, output_tokens = 1 } }
end
local tools = {
  list = function() return { { name = "echo", description = "echo", input_schema = { type = "object" } } } end,
  call = function() seen.during_tool = peek.kinds(); return "ok" end,
}
local dev = knl.device({ llm = port, tools = tools })
local s = knl.session({ owner = "test" })
seen.after_open = peek.kinds()
s:append({ kind = "msg_user", data = { content = "hi" } })
seen.after_append = peek.kinds()
knl.beat(s, dev)
seen.after_beat = peek.kinds()
std.task.sleep(0)
seen.after_async = peek.kinds()
knl.beat(s, dev)
s:close()
return std.json.encode(seen)
`;

Deno.test("the kernel commits write-ahead points at once and deferred events by the next async call", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_knl_deferred_" });
  const path = join(root, ".agent-block", "knl.sqlite");
  const seen: Record<string, string[]> = {};
  const peek = (engine: LuaEngine, _run: RunContext) => {
    engine.define("peek.kinds", {
      sync: () => {
        try {
          const db = new DatabaseSync(path, { readOnly: true });
          try {
            return (db.prepare("SELECT kind FROM events ORDER BY position").all() as { kind: string }[])
              .map((r) => r.kind);
          } finally {
            db.close();
          }
        } catch {
          return []; // no database file yet
        }
      },
    });
  };
  const r = await runLua(SCRIPT, {
    projectRoot: root,
    modules: [peek],
  });
  assert.equal(r.outcome.status, "returned", JSON.stringify(r.outcome));
  Object.assign(seen, JSON.parse(String((r.outcome as { result?: unknown }).result)));
  // the session's opening is deferred, and travels with the first append
  assert.deepEqual(seen.after_open, []);
  assert.deepEqual(seen.after_append, ["session_open", "msg_user"]);
  assert.deepEqual(seen.model_call_1, ["session_open", "msg_user", "llm_request"]);
  assert.deepEqual(seen.during_tool, [
    "session_open",
    "msg_user",
    "llm_request",
    "llm_response",
    "tool_call",
  ]);
  // the beat's trailing result waits for the next commit point...
  assert.deepEqual(seen.after_beat, seen.during_tool);
  // ...which an asynchronous host call is
  assert.deepEqual(seen.after_async, [...seen.during_tool, "tool_result"]);
  assert.deepEqual(seen.model_call_2, [...seen.after_async, "llm_request"]);
  const db = new DatabaseSync(path, { readOnly: true });
  const kinds = (db.prepare("SELECT kind FROM events ORDER BY position").all() as { kind: string }[]).map((
    x,
  ) => x.kind);
  db.close();
  assert.deepEqual(kinds, [...seen.model_call_2, "llm_response", "session_close"]);
});
