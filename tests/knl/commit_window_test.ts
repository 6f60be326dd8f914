/**
 * The kernel's commit window (src/knl/commit_window.ts) seen end to end: how
 * `AGENT_BLOCK_KNL_COMMIT_MS` is read from a run's environment at the edge (`settingsFromEnv`), and when a beat's events reach the database around a
 * model request — a mock OpenAI server looks into the database from a second connection when the
 * request arrives, and holds its answer until the request is recorded there. The window is given
 * to each run in its environment; the mock's address and key go in the agent's options.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { DEFAULT_COMMIT_WINDOW_MS } from "../../src/knl/commit_window.ts";
import { settingsFromEnv } from "../../src/config/env_settings.ts";
import { InProcessRunner } from "../../src/runner/in_process.ts";

const COMMIT_WINDOW_ENV = "AGENT_BLOCK_KNL_COMMIT_MS";
const commitWindowMs = (env: Map<string, string>) =>
  settingsFromEnv(env).knlCommitMs ?? DEFAULT_COMMIT_WINDOW_MS;
import { agentRunKinds, runLua, testEnv } from "../helpers.ts";
import { MockLlm, openaiCompletion, openaiToolCall } from "../host/llm/mock_llm.ts";

const mock = new MockLlm();
Deno.test.afterAll(async () => await mock.close());

Deno.test("AGENT_BLOCK_KNL_COMMIT_MS: the default, whole numbers from 0 to 60000, an error naming it otherwise", () => {
  const env = (raw?: string) => new Map(raw === undefined ? [] : [[COMMIT_WINDOW_ENV, raw]]);
  assert.equal(commitWindowMs(env()), DEFAULT_COMMIT_WINDOW_MS);
  for (
    const [raw, want] of [["0", 0], ["25", 25], ["60000", 60000], [" ", DEFAULT_COMMIT_WINDOW_MS]] as const
  ) {
    assert.equal(commitWindowMs(env(raw)), want);
  }
  for (const raw of ["-1", "2.5", "soon", "60001"]) {
    assert.throws(
      () => commitWindowMs(env(raw)),
      new RegExp(
        `^RangeError: ${COMMIT_WINDOW_ENV} must be a whole number of milliseconds from 0 to 60000, got '${raw}'$`,
      ),
    );
  }
});

/** What a run with one tool call leaves in the log, in order. */
const ONE_TOOL_RUN = agentRunKinds({ turns: [1, 0] });

/** Kinds committed to the project's database so far, read from a second connection. */
function committedKinds(path: string): string[] {
  try {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return (db.prepare("SELECT kind FROM events ORDER BY position").all() as { kind: string }[]).map((r) =>
        r.kind
      );
    } finally {
      db.close();
    }
  } catch {
    return []; // no database yet
  }
}

/** Runs a one-tool agent against the mock; reports what the database held when each request arrived. */
async function runAgent(
  window: string,
): Promise<{ atArrival: string[][]; recorded: boolean[]; stderr: string }> {
  const dir = await Deno.makeTempDir({ prefix: "ab_commit_window_" });
  const path = join(dir, ".agent-block", "knl.sqlite");
  const atArrival: string[][] = [];
  const recorded: boolean[] = [];
  // The answer waits (up to 10 s, far beyond any window) until the request is in the log.
  const seeRequest = async () => {
    const seen = committedKinds(path);
    atArrival.push(seen);
    const want = atArrival.length; // the n-th request needs n llm_request rows
    const deadline = Date.now() + 10_000;
    let rows = seen;
    while (rows.filter((k) => k === "llm_request").length < want && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 2));
      rows = committedKinds(path);
    }
    recorded.push(rows.filter((k) => k === "llm_request").length >= want);
  };
  mock.reset();
  mock.push(
    {
      kind: "json",
      body: openaiCompletion({ tool_calls: [openaiToolCall("call_1", "add", { a: 2, b: 3 })] }, "tool_calls"),
      before: seeRequest,
    },
    { kind: "json", body: openaiCompletion({ content: "5" }), before: seeRequest },
  );
  const src = `
tool.register("add", { description = "adds", input_schema = { type = "object" } }, function(x) return x.a + x.b end)
local r = require("agent").run({ provider = "openai", prompt = "2+3?", max_retries = 0, base_url = BASE_URL,
  api_key = "sk-test" })
assert(r.ok, r.error)
print(r.content)`;
  const r = await runLua(src, {
    projectRoot: dir,
    env: testEnv({ [COMMIT_WINDOW_ENV]: window }),
    globals: { BASE_URL: mock.url + "/v1" },
  });
  assert.equal(r.outcome.status, "returned", r.stderr);
  assert.equal(r.stdout, "5\n");
  assert.deepEqual(committedKinds(path), ONE_TOOL_RUN);
  return { atArrival, recorded, stderr: r.stderr };
}

Deno.test("with the default window, a request's events are committed while it is in flight", async () => {
  const { recorded } = await runAgent(String(DEFAULT_COMMIT_WINDOW_MS));
  assert.deepEqual(recorded, [true, true], "each request reached the log before its answer was sent");
});

Deno.test("with a window of 0, a request's events are committed before it is sent", async () => {
  const { atArrival } = await runAgent("0");
  assert.deepEqual(atArrival[0], ONE_TOOL_RUN.slice(0, 3), "the opening and the first request");
  assert.deepEqual(atArrival[1], ONE_TOOL_RUN.slice(0, 7), "everything up to the second request");
});

Deno.test("an invalid AGENT_BLOCK_KNL_COMMIT_MS is a run that never starts, with a message naming it", async () => {
  mock.reset();
  const dir = await Deno.makeTempDir({ prefix: "ab_commit_window_" });
  // the edge's path: the in-process runner given the edge's parser, as the CLI and mod.ts make it
  const { outcome } = await new InProcessRunner({ envSettings: settingsFromEnv, stderr: () => {} }).run({
    script: { source: `print("ran")`, name: "w.lua" },
    projectRoot: dir,
    env: testEnv({ [COMMIT_WINDOW_ENV]: "fast" }),
  });
  assert.deepEqual(outcome, {
    status: "raised",
    code: "config",
    message: "AGENT_BLOCK_KNL_COMMIT_MS must be a whole number of milliseconds from 0 to 60000, got 'fast'",
    traceback: "",
  });
  assert.equal(mock.requests.length, 0);
});
