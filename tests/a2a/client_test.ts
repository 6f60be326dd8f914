/**
 * `a2a.*` from Lua against an agent built with the A2A SDK's own server (Express, in this test
 * process), over both bindings: card, send (streamed and not), get, cancel, headers; a malformed
 * card and an agent that drops mid-stream give clear `{ ok = false }` errors; every call is told
 * to the run's observer as an `a2a_call` event.
 */
import { assert, assertEquals, assertStringIncludes } from "../mcp_server/mcp_helpers.ts";
import { resultOf, runLua } from "../helpers.ts";
import { startSdkAgent } from "./a2a_helpers.ts";
import type { RunEvent } from "../../src/obs/run_events.ts";

// deno-lint-ignore no-explicit-any
async function lua(source: string, observe?: (e: RunEvent) => void): Promise<any> {
  return resultOf(await runLua(source, observe ? { observe } : {}));
}

for (const binding of ["JSONRPC", "HTTP+JSON"]) {
  Deno.test(`a2a client (${binding}): card, streamed send with updates, get and cancel against an SDK agent`, async () => {
    const agent = await startSdkAgent();
    try {
      const events: RunEvent[] = [];
      const r = await lua(
        `
        local url, b = ${JSON.stringify(agent.url)}, ${JSON.stringify(binding)}
        local card = a2a.card(url)
        local kinds = {}
        local sent = a2a.send(url, "hello", {
          binding = b,
          headers = { authorization = "Bearer t0ken" },
          on_update = function(ev) kinds[#kinds + 1] = ev.kind .. ":" .. (ev.state or ev.name or "") end,
        })
        local got = a2a.get(url, sent.id, { binding = b })
        local cont = a2a.send(url, { text = "again" }, { binding = b, context_id = sent.context_id })
        -- a slow task, cancelled from another task once its id is known
        local id
        local t = std.task.spawn(function()
          return a2a.send(url, "slow", { binding = b, on_update = function(ev) id = id or ev.event.id end })
        end)
        while not id do std.task.sleep(0.01) end
        local cancelled = a2a.cancel(url, id, { binding = b })
        local slow = std.task.join(t)
        local missing = a2a.get(url, "no-such-task", { binding = b })
        return std.json.encode({
          name = card.name, skill = card.skills[1].id, ok = sent.ok, state = sent.state, text = sent.text,
          kinds = kinds, got = got.state, got_text = got.text, ctx_same = cont.context_id == sent.context_id,
          cancelled = cancelled.state, cancelled_full = cancelled, slow = slow.state, slow_full = slow, missing = missing,
        })
      `,
        (e) => void events.push(e),
      );
      assertEquals(r.name, "sdk-echo");
      assertEquals(r.skill, "echo");
      assertEquals(r.ok, true);
      assertEquals(r.state, "completed");
      assertEquals(r.text, "echo: hello");
      assertEquals(r.kinds, ["task:submitted", "status:working", "artifact:answer", "status:completed"]);
      assertEquals(r.got, "completed");
      assertEquals(r.got_text, "echo: hello");
      assertEquals(r.ctx_same, true);
      assertEquals(r.cancelled, "canceled", JSON.stringify([r.cancelled_full, r.slow_full]));
      assertEquals(r.slow, "canceled", JSON.stringify(r.slow_full));
      assertEquals(r.missing.ok, false);
      assertEquals(r.missing.code, "TASK_NOT_FOUND");
      assertEquals(r.missing.kind, "remote");
      assert(agent.seenAuth.includes("Bearer t0ken"), "the headers reach the agent");
      const calls = events.filter((e) => e.type === "a2a_call").map((e) =>
        e.type === "a2a_call" ? `${e.method}:${e.ok}` : ""
      );
      assertEquals(calls.slice(0, 3), ["card:true", "send:true", "get:true"]);
      assert(calls.includes("cancel:true") && calls.includes("get:false"), calls.join(","));
    } finally {
      await agent.close();
    }
  });

  Deno.test(`a2a client (${binding}): an agent that drops mid-stream is a clear stream error`, async () => {
    const agent = await startSdkAgent();
    try {
      const r = await lua(`
        local seen = {}
        local r = a2a.send(${JSON.stringify(agent.url)}, "drop", { binding = ${JSON.stringify(binding)},
          on_update = function(ev) seen[#seen + 1] = ev.kind end })
        return std.json.encode({ r = r, seen = seen })
      `);
      assertEquals(r.r.ok, false);
      assertEquals(r.r.kind, "stream", JSON.stringify(r.r));
      assertStringIncludes(r.r.error, "a2a.send: ");
      assertStringIncludes(r.r.error, agent.url);
      assertStringIncludes(r.r.error, "ended in state working before a final state (the connection broke: ");
    } finally {
      await agent.close();
    }
  });
}

Deno.test("a2a client: an agent whose card does not stream is sent a plain SendMessage", async () => {
  const agent = await startSdkAgent({ streaming: false });
  try {
    const r = await lua(`
      local kinds = {}
      local r = a2a.send(${
      JSON.stringify(agent.url)
    }, "plain", { on_update = function(ev) kinds[#kinds+1] = ev.kind end })
      return std.json.encode({ state = r.state, text = r.text, kinds = kinds })
    `);
    assertEquals(r, { state: "completed", text: "echo: plain", kinds: ["task"] });
  } finally {
    await agent.close();
  }
});

Deno.test("a2a client: malformed cards and unreachable agents are clear errors, not raises", async () => {
  const cases: [unknown, string][] = [
    ["{not json", "not JSON"],
    [[1, 2], "not a JSON object"],
    [{ name: "x" }, "'supportedInterfaces' must be a non-empty array"],
    [
      { name: "x", supportedInterfaces: [{ url: "http://127.0.0.1:1/x", protocolBinding: "GRPC" }] },
      "no interface speaks",
    ],
    [{ name: "x", supportedInterfaces: [{ url: "not a url", protocolBinding: "JSONRPC" }] }, "is not a URL"],
    [{
      name: "x",
      supportedInterfaces: [{ url: "http://127.0.0.1:1/x", protocolBinding: "JSONRPC" }],
      skills: {},
    }, "'skills' must be an array"],
  ];
  for (const [card, want] of cases) {
    const agent = await startSdkAgent({ card });
    try {
      const r = await lua(`
        local url = ${JSON.stringify(agent.url)}
        return std.json.encode({ card = a2a.card(url), send = a2a.send(url, "x") })
      `);
      for (const k of ["card", "send"]) {
        assertEquals(r[k].ok, false, `${k} of ${JSON.stringify(card)}`);
        assertEquals(r[k].kind, "card");
        assertStringIncludes(r[k].error, "malformed agent card");
        assertStringIncludes(r[k].error, want);
        assertStringIncludes(r[k].error, "/.well-known/agent-card.json");
      }
    } finally {
      await agent.close();
    }
  }
  // Nothing listening: a card error naming the URL.
  const r = await lua(`return std.json.encode(a2a.card("http://127.0.0.1:9/"))`);
  assertEquals(r.ok, false);
  assertEquals(r.kind, "card");
  assertStringIncludes(r.error, "http://127.0.0.1:9/.well-known/agent-card.json");
});

Deno.test("a2a client: bad arguments raise naming the argument", async () => {
  const run = await runLua(`return a2a.send("http://127.0.0.1:9", 42)`);
  assertEquals(run.outcome.status, "raised");
  assertStringIncludes(JSON.stringify(run.outcome), "argument 2 (message) must be a string or a table");
  const run2 = await runLua(`return a2a.send("http://127.0.0.1:9", "x", { binding = "grpc" })`);
  assertStringIncludes(JSON.stringify(run2.outcome), "field 'binding' must be");
});

Deno.test("a2a client: opts.timeout ends a call the agent does not finish, as kind timeout", async () => {
  const agent = await startSdkAgent();
  try {
    const r = await lua(
      `return std.json.encode(a2a.send(${JSON.stringify(agent.url)}, "slow", { timeout = 0.3 }))`,
    );
    assertEquals(r.ok, false);
    assertEquals(r.kind, "timeout");
    assertStringIncludes(r.error, "timed out after 0.3 s");
  } finally {
    await agent.close();
  }
});

Deno.test("a2a client: an error raised by on_update raises out of a2a.send", async () => {
  const agent = await startSdkAgent();
  try {
    const run = await runLua(`
      return a2a.send(${JSON.stringify(agent.url)}, "hello", { on_update = function(ev)
        if ev.kind == "artifact" then error("seen enough") end
      end })
    `);
    assertEquals(run.outcome.status, "raised");
    assertStringIncludes(JSON.stringify(run.outcome), "seen enough");
  } finally {
    await agent.close();
  }
});
