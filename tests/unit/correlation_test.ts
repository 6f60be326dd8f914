/** The one table of a run's correlation ids (src/correlation.ts), and the edge's reading of them. */
import assert from "node:assert/strict";
import { correlationVariable, orderedIds, RUN_CORRELATION_IDS } from "../../src/correlation.ts";
import { settingsFromEnv } from "../../src/config/env_settings.ts";

Deno.test("correlation ids: read at the edge by key in table order; unset and empty ones are absent; a fallback fills a gap", () => {
  const env: Record<string, string> = {
    AGENT_BLOCK_AGENT_NAME: "scout",
    AGENT_BLOCK_RUN_ID: "",
    AGENT_BLOCK_TRACE_ID: "t1",
  };
  const ids = () => settingsFromEnv(env).correlation ?? {};
  assert.deepEqual(Object.entries(orderedIds(ids())), [["trace_id", "t1"], ["agent_name", "scout"]]);
  assert.deepEqual(Object.keys(orderedIds(ids(), { agent_id: "ab-1", run_id: "r" })), [
    "trace_id",
    "run_id",
    "agent_id",
    "agent_name",
  ]);
  env.AGENT_BLOCK_AGENT_ID = "own";
  assert.equal(orderedIds(ids(), { agent_id: "ab-1" }).agent_id, "own", "the run's own id wins");
  assert.equal(correlationVariable("runId"), "AGENT_BLOCK_RUN_ID");
  assert.equal(new Set(RUN_CORRELATION_IDS.map((i) => i.variable)).size, RUN_CORRELATION_IDS.length);
});
