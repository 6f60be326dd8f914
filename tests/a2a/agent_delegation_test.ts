/**
 * `agent.run` with `a2a_agents`: the model (the local Anthropic mock) is offered each A2A agent as
 * a tool described by its card, calls it, and gets the agent's answer as the tool's result; the
 * call is a `tool_call`/`tool_result` pair of the session like any tool. An agent whose card
 * cannot be read fails the run with an error naming it.
 */
import { assert, assertEquals, assertStringIncludes } from "../mcp_server/mcp_helpers.ts";
import { resultOf, runLua } from "../helpers.ts";
import { anthropicMessage, MockLlm } from "../host/llm/mock_llm.ts";
import { startSdkAgent } from "./a2a_helpers.ts";

Deno.test("agent.run delegates to an A2A agent offered as a tool", async () => {
  const mock = new MockLlm();
  const agent = await startSdkAgent();
  try {
    mock.push(
      {
        kind: "json",
        body: anthropicMessage([
          { type: "text", text: "Asking the helper." },
          { type: "tool_use", id: "toolu_a1", name: "helper", input: { message: "hi there", skill: "echo" } },
        ], "tool_use"),
      },
      { kind: "json", body: anthropicMessage([{ type: "text", text: "The helper said it." }]) },
    );
    const r = resultOf(
      await runLua(`
      local r = require("agent").run({
        prompt = "ask the helper", provider = "anthropic", model = "claude-haiku-4-5-20251001",
        base_url = ${JSON.stringify(mock.url)}, api_key = "sk-ant-test", max_retries = 0, store = "mem",
        a2a_agents = { helper = ${JSON.stringify(agent.url)} },
      })
      local kinds = {}
      for _, e in ipairs(r.session:events()) do kinds[#kinds + 1] = e.kind end
      return std.json.encode({ ok = r.ok, err = r.error, content = r.content, kinds = kinds })
    `),
    );
    assertEquals(r.ok, true, JSON.stringify(r));
    assertEquals(r.content, "The helper said it.");
    assert(r.kinds.includes("tool_call") && r.kinds.includes("tool_result"), r.kinds.join(","));
    const first = mock.requests[0].body as {
      tools: { name: string; description: string; input_schema: unknown }[];
    };
    const tool = first.tools.find((t) => t.name === "helper");
    assert(tool, JSON.stringify(first.tools));
    assertStringIncludes(tool.description, "sdk-echo");
    assertStringIncludes(tool.description, "- echo: Repeats the message");
    const second = JSON.stringify(mock.requests[1].body);
    assertStringIncludes(second, "echo: hi there");
  } finally {
    await agent.close();
    await mock.close();
  }
});

Deno.test("agent.run: an A2A agent whose card cannot be read fails the run naming it", async () => {
  const agent = await startSdkAgent({ card: "{oops" });
  try {
    const r = resultOf(
      await runLua(`
      local r = require("agent").run({
        prompt = "x", provider = "anthropic", model = "claude-haiku-4-5-20251001",
        base_url = "http://127.0.0.1:9", api_key = "sk-ant-test", max_retries = 0, store = "mem",
        a2a_agents = { helper = ${JSON.stringify(agent.url)} },
      })
      local bad = require("agent").run({ prompt = "x", provider = "anthropic", a2a_agents = { ["no spaces"] = "u" } })
      return std.json.encode({ ok = r.ok, err = r.error, bad = bad.error })
    `),
    );
    assertEquals(r.ok, false);
    assertStringIncludes(r.err, "agent.run: a2a_agents.helper: a2a.card: ");
    assertStringIncludes(r.err, "malformed agent card");
    assertStringIncludes(r.bad, "opts.a2a_agents must map tool names");
  } finally {
    await agent.close();
  }
});
