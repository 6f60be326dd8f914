/**
 * When the kernel's events reach the database, seen from a second connection while a beat runs
 * (`peek.kinds`, a pure host function, looks without committing anything): a beat's events
 * wait until the run next acts outside Lua — a synchronous host call that is not pure
 * (`peek.effect` here; a file write, a print), any asynchronous one, a non-deferred append, a
 * read or a close — and then commit together, in order.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { runLua } from "../helpers.ts";
import type { LuaEngine } from "../../src/lua/engine.ts";

const SCRIPT = `
local seen = {}
local knl = require("knl")
local calls = 0
local port = { profile = { provider = "test", model = "test-1" } }
function port:chat()
  calls = calls + 1
  seen["model_call_" .. calls] = peek.kinds()
  peek.effect() -- what an HTTP Port's request is: an act outside Lua
  seen["model_call_" .. calls .. "_acting"] = peek.kinds()
  if calls == 1 then
    return { content = { { type = "tool_use", id = "c1", name = "echo", input = {} } }, stop_reason = "tool_use",
      model = "test-1", usage = { input_tokens = 1, output_tokens = 1 } }
  end
  return { content = { { type = "text", text = "done" } }, stop_reason = "end_turn", model = "test-1",
    usage = { input_tokens = 1, output_tokens = 1 } }
end
local tools = {
  list = function() return { { name = "echo", description = "echo", input_schema = { type = "object" } } } end,
  call = function()
    seen.tool_start = peek.kinds()
    peek.effect()
    seen.tool_acting = peek.kinds()
    return "ok"
  end,
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
s:append({ kind = "note" }, { defer = true })
seen.after_deferred_append = peek.kinds()
knl.beat(s, dev)
seen.before_close = peek.kinds()
s:close()
return std.json.encode(seen)
`;

Deno.test("a beat's events commit before the run next acts outside Lua, in order", async () => {
  const root = await Deno.makeTempDir({ prefix: "ab_knl_deferred_" });
  const path = join(root, ".agent-block", "knl.sqlite");
  let effects = 0;
  const peek = (engine: LuaEngine) => {
    engine.define("peek.kinds", {
      pure: true,
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
    engine.define("peek.effect", {
      sync: () => {
        effects++;
      },
    });
  };
  const r = await runLua(SCRIPT, { projectRoot: root, modules: [peek] });
  assert.equal(r.outcome.status, "returned", JSON.stringify(r.outcome));
  const seen = JSON.parse(String((r.outcome as { value?: unknown }).value)) as Record<string, string[]>;
  assert.equal(effects, 3);
  const open = ["session_open", "msg_user"];
  assert.deepEqual(seen.after_open ?? [], [], "the session's opening waits");
  assert.deepEqual(seen.after_append, open, "s:append commits, with what waited before it");
  assert.deepEqual(seen.model_call_1, open, "the request waits while only Lua runs");
  const asked = [...open, "llm_request"];
  assert.deepEqual(seen.model_call_1_acting, asked, "...and is in the log once the Port acts");
  assert.deepEqual(seen.tool_start, asked);
  const called = [...asked, "llm_response", "tool_call"];
  assert.deepEqual(seen.tool_acting, called, "the call is in the log before its tool acts");
  assert.deepEqual(seen.after_beat, called, "the result waits for the next act");
  const answered = [...called, "tool_result"];
  assert.deepEqual(seen.after_async, answered, "an asynchronous host call is one");
  assert.deepEqual(seen.after_deferred_append, answered, "s:append with defer waits too");
  assert.deepEqual(seen.model_call_2_acting, [...answered, "note", "llm_request"]);
  assert.deepEqual(seen.before_close, seen.model_call_2_acting, "the last response waits for the close");
  const db = new DatabaseSync(path, { readOnly: true });
  const kinds = db.prepare("SELECT kind, epoch_ms FROM events ORDER BY position").all() as {
    kind: string;
    epoch_ms: number;
  }[];
  db.close();
  assert.deepEqual(kinds.map((k) => k.kind), [...seen.model_call_2_acting, "llm_response", "session_close"]);
  for (let i = 1; i < kinds.length; i++) {
    assert.ok(kinds[i].epoch_ms >= kinds[i - 1].epoch_ms, "times stay in order");
  }
});
