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
import { CLI, runCli, tempDir, testEnv, waitFor } from "../helpers.ts";
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from "@opentelemetry/sdk-trace";
import { BlockConfig, runBlock, ScriptSource } from "../../mod.ts";
import { telemetryFromEnv, TelemetrySettingsError } from "../../src/obs/otel/settings.ts";
import { openExistingStore } from "../../src/knl/store.ts";
import { connectStdio, freshProject } from "../mcp_server/mcp_helpers.ts";

const SECRET = "sk-ant-secret-0123456789abcdef";

/** The agent: a Lua tool that runs `sh.exec`, the echo server's `meta` tool, two model turns. */
function agentScript(): string {
  return `
    tool.register("shell", { description = "runs a command" }, function()
      local r = sh.exec("echo from-shell")
      return r.stdout
    end)
    local r = require("agent").run({
      prompt = "go", max_retries = 0, temperature = 0.25, top_p = 0.75, stop = { "END" }, max_tokens = 900,
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
        // the request's parameters, as the kernel recorded them
        assert.equal(c.attributes["gen_ai.request.temperature"], 0.25);
        assert.equal(c.attributes["gen_ai.request.top_p"], 0.75);
        assert.deepEqual(c.attributes["gen_ai.request.stop_sequences"], ["END"]);
        assert.equal(c.attributes["gen_ai.request.max_tokens"], 900);
        // contents only when opted in
        for (const k of ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"]) {
          assert.equal(c.attributes[k], undefined, `${k} without opt-in`);
        }
      }
      assert.equal(rx.one("execute_tool shell").attributes["gen_ai.tool.call.arguments"], undefined);
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

/** `deno run -A cli.ts args` with V8's function-event log: which scripts the process compiled. */
async function scriptsLoaded(dir: string, args: string[], env: Record<string, string>): Promise<string> {
  const log = join(dir, `v8_${crypto.randomUUID()}.log`);
  const r = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      `--v8-flags=--log-function-events,--logfile=${log},--no-logfile-per-isolate`,
      CLI,
      ...args,
    ],
    env: testEnv(env),
    clearEnv: true,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.equal(r.code, 0, new TextDecoder().decode(r.stderr));
  return await Deno.readTextFile(log);
}

Deno.test("otel: with no endpoint no OpenTelemetry module is loaded; with one they are", async () => {
  const dir = await tempDir();
  const script = join(dir, "s.lua");
  await Deno.writeTextFile(script, `sh.exec("true") return "ok"`);
  const rx = new OtlpReceiver();
  try {
    const off = await scriptsLoaded(dir, ["-s", script], {});
    assert.ok(
      !/opentelemetry|otel\/(tracer|export)\.ts|runner\/traced\.ts/.test(off),
      "no OTel code without an endpoint",
    );
    const on = await scriptsLoaded(dir, ["-s", script], {
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    assert.match(
      on,
      /@opentelemetry\+otlp-transformer/,
      "the detector sees the OTel packages when they are used",
    );
    assert.match(on, /otel\/export\.ts/);
    assert.equal(rx.named("sh.exec").length, 1);
  } finally {
    await rx.close();
  }
});

Deno.test("otel: a CLI run given TRACEPARENT joins the caller's trace; http/protobuf is the default encoding", async () => {
  const dir = await tempDir();
  const script = join(dir, "child_of_ci.lua");
  await Deno.writeTextFile(script, `sh.exec("true") return "ok"`);
  const rx = new OtlpReceiver();
  try {
    const traceId = "4bf92f3577b34da6a3ce929d0e0e4736", parent = "00f067aa0ba902b7";
    const r = await runCli(["-s", script], {
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        TRACEPARENT: `00-${traceId}-${parent}-01`,
      },
    });
    assert.equal(r.code, 0, r.stderr);
    const run = rx.one("invoke_agent child_of_ci.lua");
    assert.equal(run.traceId, traceId);
    assert.equal(run.parentSpanId, parent);
    assert.equal(rx.one("sh.exec").parentSpanId, run.spanId);

    // protobuf (the standard default): the official binary encoding reaches /v1/traces
    const pb = new OtlpReceiver();
    try {
      const r2 = await runCli(["-s", script], { env: { OTEL_EXPORTER_OTLP_ENDPOINT: pb.url } });
      assert.equal(r2.code, 0, r2.stderr);
      const traces = pb.requests.filter((q) => q.path === "/v1/traces");
      assert.equal(traces.length, 1);
      assert.equal(traces[0].contentType, "application/x-protobuf");
      const text = new TextDecoder("utf-8", { fatal: false }).decode(traces[0].bytes);
      assert.ok(text.includes("invoke_agent child_of_ci.lua") && text.includes("sh.exec"));
    } finally {
      await pb.close();
    }
  } finally {
    await rx.close();
  }
});

Deno.test("otel: SIGTERM ends the run and its spans are flushed before the process exits", async () => {
  const dir = await tempDir();
  const ready = join(dir, "ready");
  const script = join(dir, "long.lua");
  await Deno.writeTextFile(
    script,
    `sh.exec("touch ${ready}; sleep 60")
     return "never"`,
  );
  const rx = new OtlpReceiver();
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", CLI, "-s", script],
      env: testEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }),
      clearEnv: true,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    await waitFor(async () => {
      try {
        await Deno.stat(ready);
        return true;
      } catch {
        return false;
      }
    }, { what: "the run's sh.exec to start" });
    child.kill("SIGTERM");
    const out = await child.output();
    assert.equal(out.code, 130, new TextDecoder().decode(out.stderr));
    const run = rx.one("invoke_agent long.lua");
    assert.equal(run.attributes["agent_block.outcome"], "cancelled");
    assert.equal(run.status.code, 2, "ERROR");
    const exec = rx.one("sh.exec"); // cut by the stop, ended with the run
    assert.equal(exec.parentSpanId, run.spanId);
    assert.ok(exec.end <= run.end);
  } finally {
    await rx.close();
  }
});

Deno.test("otel: the SDK sends spans to the embedder's tracer provider, under the traceparent it is given", async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const report = await runBlock(
    BlockConfig.builder(ScriptSource.inline(`sh.exec("true") return "ok"`, "embedded.lua"), ".")
      .env({})
      .tracerProvider(provider)
      .traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
      .build(),
  );
  assert.equal(report.value, "ok");
  const spans = exporter.getFinishedSpans();
  const run = spans.find((s) => s.name === "invoke_agent embedded.lua")!;
  assert.ok(run, spans.map((s) => s.name).join());
  assert.equal(run.spanContext().traceId, "0af7651916cd43dd8448eb211c80319c");
  assert.equal(run.parentSpanContext?.spanId, "b7ad6b7169203331");
  const exec = spans.find((s) => s.name === "sh.exec")!;
  assert.equal(exec.parentSpanContext?.spanId, run.spanContext().spanId);
  assert.throws(
    () => BlockConfig.builder(ScriptSource.inline("return 1", "x.lua"), ".").traceparent("00-nope").build(),
    /traceparent must be a W3C traceparent header/,
  );
});

Deno.test("otel: a collector that never answers costs the run at most the bound, and is told once", async () => {
  const rx = new OtlpReceiver({ hang: true });
  try {
    const errs: string[] = [];
    const settings = jsonSettings(rx, { OTEL_EXPORTER_OTLP_TIMEOUT: "200" });
    for (let i = 0; i < 2; i++) {
      const report = await runBlock(
        BlockConfig.builder(ScriptSource.inline(`return "ok"`, "quick.lua"), ".")
          .env({})
          .telemetry(settings)
          .stderr((b) => void errs.push(new TextDecoder().decode(b)))
          .build(),
      );
      assert.equal(report.value, "ok", "the run is not failed by its collector");
    }
    const warnings = errs.join("").split("\n").filter((l) => l.includes("cannot export telemetry"));
    assert.equal(warnings.length, 1, errs.join(""));
    assert.match(warnings[0], /no answer within 200 ms/);
    assert.ok(rx.requests.length >= 2, "both runs tried");
  } finally {
    await rx.close();
  }
});

Deno.test("otel: settings come from the standard variables; bad values are refused by name", () => {
  assert.equal(telemetryFromEnv({}), undefined);
  assert.equal(
    telemetryFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318", OTEL_SDK_DISABLED: "true" }),
    undefined,
  );
  assert.deepEqual(
    telemetryFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://c:4318/",
      OTEL_EXPORTER_OTLP_HEADERS: "authorization=Bearer%20t,x-team=qa",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=ci",
      OTEL_SERVICE_NAME: "nightly",
      OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true",
    }),
    {
      tracesEndpoint: "http://c:4318/v1/traces",
      metricsEndpoint: "http://c:4318/v1/metrics",
      protocol: "http/protobuf",
      timeoutMs: 10_000,
      serviceName: "nightly",
      headers: { authorization: "Bearer t", "x-team": "qa" },
      resourceAttributes: { "deployment.environment": "ci" },
      captureContent: true,
    },
  );
  const only = telemetryFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://c/traces" })!;
  assert.equal(only.tracesEndpoint, "https://c/traces");
  assert.equal(only.metricsEndpoint, undefined);
  const bad: [Record<string, string>, RegExp][] = [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: "c:4318" }, /OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
      /PROTOCOL.*grpc.*HTTP only/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_TIMEOUT: "soon" },
      /OTEL_EXPORTER_OTLP_TIMEOUT/,
    ],
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "http://c", OTEL_EXPORTER_OTLP_HEADERS: "novalue" },
      /OTEL_EXPORTER_OTLP_HEADERS/,
    ],
  ];
  for (const [env, re] of bad) {
    assert.throws(
      () => telemetryFromEnv(env),
      (e) => e instanceof TelemetrySettingsError && re.test(e.message),
    );
  }
});

Deno.test("otel: a bad OTEL_* variable stops the CLI run before it starts, naming the variable (exit 1)", async () => {
  const dir = await tempDir();
  const script = join(dir, "s.lua");
  await Deno.writeTextFile(script, `return "ok"`);
  const r = await runCli(["-s", script], {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:1", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" },
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
});

Deno.test("otel: a raise and a timeout are exported with their outcome", async () => {
  const rx = new OtlpReceiver();
  try {
    const run = (source: string, name: string, timeoutMs?: number) => {
      const b = BlockConfig.builder(ScriptSource.inline(source, name), ".").env({}).telemetry(
        jsonSettings(rx),
      )
        .stderr(() => {});
      if (timeoutMs) b.timeoutMs(timeoutMs);
      return runBlock(b.build());
    };
    assert.equal((await run(`error("boom")`, "raises.lua")).outcome.status, "raised");
    assert.equal((await run(`sh.exec("sleep 30")`, "slow.lua", 300)).outcome.status, "timed_out");
    const raised = rx.one("invoke_agent raises.lua");
    assert.equal(raised.status.code, 2);
    assert.match(raised.status.message ?? "", /boom/);
    assert.equal(raised.attributes["agent_block.outcome"], "raised");
    const slow = rx.one("invoke_agent slow.lua");
    assert.equal(slow.attributes["agent_block.outcome"], "timed_out");
    assert.equal(slow.attributes["error.type"], "timed_out");
  } finally {
    await rx.close();
  }
});

Deno.test({
  name:
    "otel: agent-block mcp serves run_block as a SERVER span under the _meta traceparent, the run its child",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const p = await freshProject();
    const rx = new OtlpReceiver();
    const s = await connectStdio(p.root, p.home, {
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: rx.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" },
    });
    try {
      const traceId = "5bf92f3577b34da6a3ce929d0e0e4737", parent = "10f067aa0ba902b8";
      const r = await s.client.callTool({
        name: "run_block",
        arguments: { block: "where" },
        _meta: { traceparent: `00-${traceId}-${parent}-01` },
      });
      assert.ok(!r.isError, JSON.stringify(r));
      const run = rx.one("invoke_agent where");
      assert.equal(run.traceId, traceId);
      // the server's own span (exported in the background after the call) sits between
      await waitFor(() => rx.named("tools/call run_block").length === 1, { what: "the server span" });
      const server = rx.one("tools/call run_block");
      assert.equal(server.kind, 2, "SERVER");
      assert.equal(server.traceId, traceId);
      assert.equal(server.parentSpanId, parent);
      assert.equal(run.parentSpanId, server.spanId);
      await waitFor(() => rx.points.some((p) => p.metric === "mcp.server.operation.duration"), {
        what: "mcp.server.operation.duration",
      });
    } finally {
      await s.close();
      await rx.close();
    }
  },
});

Deno.test("otel: the lean tracer honours the caller's sampled flag and makes valid ids", async () => {
  const { LeanTracer } = await import("../../src/obs/otel/lean_tracer.ts");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const { ROOT_CONTEXT, trace, TraceFlags } = await import("@opentelemetry/api");
  const ended: string[] = [];
  const t = new LeanTracer(resourceFromAttributes({}), { name: "t" }, (s) => void ended.push(s.name));
  const unsampled = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
    spanId: "00f067aa0ba902b7",
    traceFlags: TraceFlags.NONE,
  });
  const dropped = t.startSpan("dropped", {}, unsampled);
  dropped.end();
  const kept = t.startSpan("kept");
  kept.end();
  kept.end();
  assert.deepEqual(ended, ["kept"]);
  assert.equal(dropped.spanContext().traceId, "4bf92f3577b34da6a3ce929d0e0e4736");
  assert.match(kept.spanContext().traceId, /^[0-9a-f]{32}$/);
  assert.match(kept.spanContext().spanId, /^[0-9a-f]{16}$/);
});

Deno.test({
  name:
    "otel: with content capture, system instructions, input and output messages, tool arguments and results are exported masked by the run's secrets",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const rx = new OtlpReceiver();
    const mock = new MockLlm();
    try {
      mock.push(
        {
          kind: "json",
          body: anthropicMessage(
            [{ type: "tool_use", id: "toolu_k", name: "leak", input: { q: "key?" } }],
            "tool_use",
          ),
        },
        { kind: "json", body: anthropicMessage([{ type: "text", text: `the key is ${SECRET}` }]) },
      );
      const script = `
        tool.register("leak", { description = "leaks" }, function()
          sh.exec("echo " .. std.env.get("ANTHROPIC_API_KEY"))
          return "key=" .. std.env.get("ANTHROPIC_API_KEY")
        end)
        local key = std.env.get("ANTHROPIC_API_KEY")
        local r = require("agent").run({ prompt = "go, the key is " .. key, system = "be terse; never say " .. key,
          max_retries = 0, store = "mem" })
        assert(r.ok, r.error)
        return "done"`;
      const report = await runBlock(
        BlockConfig.builder(ScriptSource.inline(script, "leaky.lua"), ".")
          .env(testEnv({ ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: SECRET }))
          .telemetry(jsonSettings(rx, { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }))
          .stderr(() => {})
          .build(),
      );
      assert.equal(report.value, "done", JSON.stringify(report.outcome));
      const tool = rx.one("execute_tool leak");
      assert.equal(tool.attributes["gen_ai.tool.call.arguments"], JSON.stringify({ q: "key?" }));
      assert.match(String(tool.attributes["gen_ai.tool.call.result"]), /^key=\[redacted\]$/);
      const chats = rx.spans.filter((s) => s.name.startsWith("chat "));
      assert.ok(
        chats.some((c) => String(c.attributes["gen_ai.output.messages"]).includes("the key is [redacted]")),
      );
      // input messages and system instructions of each model call, as sent, masked
      const byStart = chats.sort((a, b) => a.start - b.start);
      const system = JSON.parse(String(byStart[0].attributes["gen_ai.system_instructions"]));
      assert.deepEqual(system, [{ type: "text", content: "be terse; never say [redacted]" }]);
      const first = JSON.parse(String(byStart[0].attributes["gen_ai.input.messages"]));
      assert.deepEqual(first, [{
        role: "user",
        parts: [{ type: "text", content: "go, the key is [redacted]" }],
      }]);
      const second = JSON.parse(String(byStart[1].attributes["gen_ai.input.messages"]));
      assert.deepEqual(second.map((m: { role: string }) => m.role), ["user", "assistant", "user"]);
      assert.deepEqual(second[1].parts, [{
        type: "tool_call",
        id: "toolu_k",
        name: "leak",
        arguments: { q: "key?" },
      }]);
      assert.deepEqual(second[2].parts[0], {
        type: "tool_call_response",
        id: "toolu_k",
        response: "key=[redacted]",
      });
      const out = JSON.parse(String(byStart[0].attributes["gen_ai.output.messages"]));
      assert.deepEqual(out, [{
        role: "assistant",
        parts: [{ type: "tool_call", id: "toolu_k", name: "leak", arguments: { q: "key?" } }],
        finish_reason: "tool_use",
      }]);
      assert.match(String(rx.one("sh.exec").attributes["process.command_line"]), /\[redacted\]/);
      assert.equal(rx.allText().includes(SECRET), false, "the key is in no exported byte");
    } finally {
      await mock.close();
      await rx.close();
    }
  },
});

Deno.test("otel: the protobuf span encoding is byte for byte the official serializer's", async () => {
  const { LeanTracer } = await import("../../src/obs/otel/lean_tracer.ts");
  const { OtelRunTrace } = await import("../../src/obs/otel/tracer.ts");
  const { encodeTraces } = await import("../../src/obs/otel/otlp_proto.ts");
  const { resourceFromAttributes } = await import("@opentelemetry/resources");
  const { ProtobufTraceSerializer } = await import("@opentelemetry/otlp-transformer");
  // deno-lint-ignore no-explicit-any
  const spans: any[] = [];
  const resource = resourceFromAttributes({ "service.name": "ci", "deployment.environment": "prüfung" });
  const tracer = new LeanTracer(
    resource,
    { name: "agent-block", version: "9.9.9" },
    (s) => void spans.push(s),
  );
  const run = new OtelRunTrace({
    tracer,
    name: "mixed.lua",
    parent: { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", sampled: true },
    attributes: { "agent_block.run.id": "r-1" },
  });
  const meta = (beat: number) => JSON.stringify({ beat });
  run.rows([
    { stream: "s1", kind: "session_open", data: "{}", meta: "{}" },
    {
      stream: "s1",
      kind: "llm_request",
      data: JSON.stringify({
        model: "m-ü",
        provider: "anthropic",
        max_tokens: 900,
        temperature: 0.25,
        stop: ["a", "b"],
      }),
      meta: meta(1),
    },
    {
      stream: "s1",
      kind: "llm_response",
      data: JSON.stringify({
        content: [{ type: "text", text: "hi" }],
        model: "m-ü",
        stop_reason: "end_turn",
        elapsed_ms: 12.5,
        usage: { input_tokens: 2 ** 40, output_tokens: 0 },
      }),
      meta: meta(1),
    },
    { stream: "s1", kind: "tool_call", data: JSON.stringify({ id: "t1", name: "x" }), meta: meta(2) },
    {
      stream: "s1",
      kind: "tool_result",
      data: JSON.stringify({ id: "t1", is_error: true, content: "bäd ".repeat(100), elapsed_ms: 3 }),
      meta: meta(2),
    },
  ]);
  const remote = run.start("mesh.receive peer", "server", {
    negative: -5,
    flag: false,
    list: ["ü", "b"],
    nums: ["1"],
  }, "00-5bf92f3577b34da6a3ce929d0e0e4737-10f067aa0ba902b8-01");
  remote.fail("handler_error", "x".repeat(300));
  remote.end();
  run.start("sh.exec", "internal").end();
  run.start("send", "producer").end();
  run.end({ status: "raised", code: "script", message: "boom ✗", traceback: "" });
  assert.ok(spans.length >= 7);
  const official = ProtobufTraceSerializer.serializeRequest(spans)!;
  const ours = encodeTraces(spans);
  assert.equal(ours.length, official.length);
  assert.deepEqual(ours, official);
  // a second resource and scope group as the official one groups them
  const other = new LeanTracer(
    resourceFromAttributes({ "service.name": "b" }),
    { name: "other" },
    (s) => void spans.push(s),
  );
  other.startSpan("lone").end();
  assert.deepEqual(encodeTraces(spans), ProtobufTraceSerializer.serializeRequest(spans));
});

Deno.test("otel: captured input messages read both wire shapes (Anthropic blocks, OpenAI chat completions)", async () => {
  const { requestContents, bodyJson } = await import("../../src/obs/otel/messages.ts");
  const openai = {
    model: "gpt-x",
    messages: [
      { role: "system", content: "be brief" },
      {
        role: "user",
        content: [{ type: "text", text: "sum" }, { type: "image_url", image_url: { url: "data:..." } }],
      },
      {
        role: "assistant",
        content: null,
        reasoning_content: "thinking",
        tool_calls: [{ id: "c1", type: "function", function: { name: "add", arguments: '{"a":1}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: "2" },
    ],
  };
  assert.deepEqual(requestContents(bodyJson(new TextEncoder().encode(JSON.stringify(openai)))), {
    system: [{ type: "text", content: "be brief" }],
    messages: [
      { role: "user", parts: [{ type: "text", content: "sum" }, { type: "image_url" }] },
      {
        role: "assistant",
        parts: [{ type: "reasoning", content: "thinking" }, {
          type: "tool_call",
          id: "c1",
          name: "add",
          arguments: { a: 1 },
        }],
      },
      { role: "tool", parts: [{ type: "tool_call_response", id: "c1", response: "2" }] },
    ],
  });
  const anthropic = {
    system: [{ type: "text", text: "rules", cache_control: { type: "ephemeral" } }],
    messages: [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [{ type: "thinking", thinking: "hm", signature: "s" }, {
          type: "tool_use",
          id: "t",
          name: "n",
          input: {},
        }],
      },
      {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "t",
          content: [{ type: "text", text: "ok" }],
          is_error: false,
        }],
      },
    ],
  };
  assert.deepEqual(requestContents(bodyJson(JSON.stringify(anthropic))), {
    system: [{ type: "text", content: "rules" }],
    messages: [
      { role: "user", parts: [{ type: "text", content: "go" }] },
      {
        role: "assistant",
        parts: [{ type: "reasoning", content: "hm" }, {
          type: "tool_call",
          id: "t",
          name: "n",
          arguments: {},
        }],
      },
      { role: "user", parts: [{ type: "tool_call_response", id: "t", response: "ok" }] },
    ],
  });
  assert.equal(requestContents(bodyJson("not json")), undefined);
  assert.equal(requestContents(bodyJson(undefined)), undefined);
});
