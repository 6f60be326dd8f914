/**
 * The flows face of the package (`unstable_flows.ts`): `runFlow` on a Blueprint file with the defaults filled in (the
 * in-process runner, the project's kernel database), `resumeFlow` re-reading the recorded file,
 * and `onEvent` seeing every recorded event.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempProject, testEnv } from "../helpers.ts";
import { openExistingStore } from "../../mod.ts";
import { type FlowEvent, listFlowRuns, resumeFlow, runFlow } from "../../unstable_flows.ts";

Deno.test("unstable_flows.ts runFlow / resumeFlow: a file Blueprint, the project's store, events, a resume after a failure", async () => {
  const root = await tempProject({
    "blocks/gate.lua": `if not std.fs.exists("open") then error("closed", 0) end return "through"`,
    "flows/g.bp.yaml": `id: gate
agents: [{ name: gate, kind: block, spec: { block: gate } }]
flow: { kind: step, ref: gate, in: { op: lit, value: "" }, out: { op: path, at: $.g } }
`,
  });
  const events: FlowEvent[] = [];
  const options = { projectRoot: root, env: testEnv(), onEvent: (e: FlowEvent) => void events.push(e) };
  const first = await runFlow(join(root, "flows/g.bp.yaml"), options);
  assert.equal(first.status, "failed");
  assert.equal(first.error?.failed_step, "gate");
  await Deno.writeTextFile(join(root, "open"), "");
  const resumed = await resumeFlow(first.runId, options);
  assert.equal(resumed.status, "completed");
  assert.deepEqual(resumed.ctx, { g: "through" });
  const store = openExistingStore(join(root, ".agent-block", "knl.sqlite"));
  assert.deepEqual(listFlowRuns(store).map((r) => [r.run, r.state]), [[first.runId, "completed"]]);
  assert.deepEqual(
    events.map((e) => e.kind),
    store.read(first.runId).map((e) => e.kind).filter((k) => k.startsWith("flow.")),
  );
});
