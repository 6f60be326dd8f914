/**
 * OpenTelemetry of `agent-block serve`'s flow jobs: a real manager process (`serve`) with the
 * standard `OTEL_*` variables runs a job whose `flow = ...` Blueprint has two block steps; the
 * OTLP/HTTP receiver (`otlp_receiver.ts`) gets one trace: `invoke_workflow <flow>` with each step
 * run's `invoke_agent` span as its child (and the steps' own spans under those), and a failing
 * flow's span is an error naming the outcome.
 */
import assert from "node:assert/strict";
import { OtlpReceiver } from "./otlp_receiver.ts";
import { jobProject, startManager, waitForEnd } from "../serve/serve_helpers.ts";
import { waitFor } from "../helpers.ts";

const P = (at: string) => ({ op: "path", at });

Deno.test({
  name: "otel serve: a flow job's run is an invoke_workflow span with its step runs as children",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const rx = new OtlpReceiver();
    const p = await jobProject({
      "blocks/up.lua": `sh.exec("true") return string.upper(_PROMPT)`,
      "blocks/twice.lua": "return _PROMPT .. _PROMPT",
      "blocks/broken.lua": 'error("no luck", 0)',
      "blocks/nightly.lua": "return 'the job carrier'",
      "blocks/nightly.job.toml": 'every = "1h"\nflow = "flows/two.bp.json"\n[init]\nword = "hi"\n',
      "blocks/failing.lua": "return 'the job carrier'",
      "blocks/failing.job.toml": 'every = "1h"\nflow = "flows/broken.bp.json"\ninit = { word = "x" }\n',
      "flows/two.bp.json": JSON.stringify({
        id: "two-flow",
        agents: [
          { name: "up", kind: "block", spec: { block: "up" } },
          { name: "twice", kind: "block", spec: { block: "twice" } },
        ],
        flow: {
          kind: "seq",
          children: [
            { kind: "step", ref: "up", in: P("$.word"), out: P("$.up") },
            { kind: "step", ref: "twice", in: P("$.up"), out: P("$.out") },
          ],
        },
      }),
      "flows/broken.bp.json": JSON.stringify({
        id: "broken-flow",
        agents: [{ name: "broken", kind: "block", spec: { block: "broken" } }],
        flow: { kind: "step", ref: "broken", in: P("$.word"), out: P("$.out") },
      }),
    });
    const m = await startManager(p.root, p.home, [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: rx.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    });
    try {
      const ok = await waitForEnd(m, "nightly");
      assert.equal(ok.state, "ok", JSON.stringify(ok));
      assert.deepEqual(JSON.parse(Deno.readTextFileSync(ok.result_file)).ctx.out, "HIHI");
      const bad = await waitForEnd(m, "failing");
      assert.equal(bad.state, "failed");
      await waitFor(() => rx.named("invoke_workflow broken.bp.json").length === 1, {
        what: "the failing flow's span",
      });

      const flow = rx.one("invoke_workflow two.bp.json");
      assert.equal(flow.parentSpanId, "");
      assert.equal(flow.attributes["gen_ai.operation.name"], "invoke_workflow");
      assert.equal(flow.attributes["agent_block.run.id"], ok.run_id);
      assert.equal(flow.attributes["agent_block.label.job"], "nightly");
      assert.equal(flow.attributes["agent_block.outcome"], "returned");
      const steps = rx.spans.filter((s) => s.name.startsWith("invoke_agent ") && s.traceId === flow.traceId);
      assert.deepEqual(steps.map((s) => s.name).sort(), [
        "invoke_agent blocks/twice.lua",
        "invoke_agent blocks/up.lua",
      ]);
      for (const s of steps) assert.equal(s.parentSpanId, flow.spanId, `${s.name} under the flow run`);
      const up = steps.find((s) => s.name.endsWith("up.lua"))!;
      const exec = rx.spans.find((s) => s.name === "sh.exec" && s.traceId === flow.traceId);
      assert.equal(exec?.parentSpanId, up.spanId, "a step's own spans under its run");
      assert.ok(steps.every((s) => s.start >= flow.start && s.end <= flow.end));

      const broken = rx.one("invoke_workflow broken.bp.json");
      assert.equal(broken.status.code, 2, "ERROR");
      assert.equal(broken.attributes["agent_block.outcome"], "raised");
      assert.match(broken.status.message ?? "", /failed at step 'broken'/);
      const brokenStep = rx.spans.find((s) => s.name === "invoke_agent blocks/broken.lua");
      assert.equal(brokenStep?.parentSpanId, broken.spanId);
    } finally {
      assert.equal(await m.stop(), 0);
      await rx.close();
    }
  },
});
