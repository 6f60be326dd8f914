/**
 * The runner contract: the same scenarios through `InProcessRunner` and `ChildRunner` give the
 * same event kinds in the same order (`end` exactly once, last) and the same outcome — a
 * returned value, a raise, a deferral, a timeout, a cancellation, artifacts and sessions, a
 * nested MCP call. Each scenario runs under both runners at once (the child's is a real
 * agent-block process); cancellation waits for a file the block writes, never for time.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ChildRunner } from "../../src/runner/child.ts";
import { InProcessRunner } from "../../src/runner/in_process.ts";
import type { BlockRunner, RunEvent, RunReport, RunRequest } from "../../src/runner/runner.ts";
import { ProcessGroups } from "../../src/proc/group.ts";
import { tempProject, testEnv, waitFor } from "../helpers.ts";
import { DENO, ECHO, lq } from "../host/mcp/peers.ts";

const opts = { sanitizeOps: false, sanitizeResources: false };

const BLOCKS: Record<string, string> = {
  "ret.lua": 'return "v " .. _PROMPT',
  "raise.lua": 'error({ code = "E42", detail = "nope" })',
  "defer.lua": 'job.defer("no input yet")',
  "slow.lua": 'local f = io.open(_PROMPT, "w") f:write("x") f:close()\nstd.task.sleep(300)\nreturn "woke"',
  "parts.lua": `
    bus.emit("artifact", { name = "plan.md", content = "draft" })
    require("knl").session({ owner = "contract", store = "default" }, function(s)
      s:append({ kind = "note", data = { text = "one" } })
    end)
    bus.emit("artifact", { name = "stats", content = { n = 3 } })
    return "parts"`,
  "mcp.lua": `
    assert(mcp.connect("echo", ${lq(DENO)}, { "run", "-A", "--quiet", ${lq(ECHO)} }))
    local r = mcp.call("echo", "echo", { msg = "hi" })
    return r.content[1].text`,
};

/**
 * What a contract compares: the event kinds in order (consecutive `events` as one: how the
 * kernel's rows split into commits follows its commit window, not the runner), the rows' kinds,
 * and the outcome.
 */
function shape(events: RunEvent[], report: RunReport) {
  return {
    kinds: events.map((e) => e.type).filter((t, i, all) => !(t === "events" && all[i - 1] === "events")),
    rows: events.flatMap((e) => e.type === "events" ? e.rows.map((r) => r.kind) : []),
    outcome: report.outcome,
    artifacts: report.artifacts.map((a) => [a.name, a.content]),
    sessions: report.sessions.length,
  };
}

async function both(
  name: string,
  request: (dir: string, runner: string) => RunRequest,
  during?: (dir: string, runner: string, cancel: AbortController) => Promise<void>,
) {
  const dir = await tempProject(BLOCKS, "ab_contract_");
  const procs = new ProcessGroups();
  const runners: [string, BlockRunner][] = [
    ["in-process", new InProcessRunner({ stdout: () => {}, stderr: () => {} })],
    ["child", new ChildRunner({ procs, stderr: () => {}, graceMs: 500 })],
  ];
  const shapes = await Promise.all(runners.map(async ([label, runner]) => {
    const events: RunEvent[] = [];
    const cancel = new AbortController();
    const running = runner.run(request(dir, label), {
      observe: (e) => events.push(e),
      signal: cancel.signal,
    });
    await during?.(dir, label, cancel);
    const report = await running;
    assert.equal(events.filter((e) => e.type === "end").length, 1, `${name} ${label}: one end`);
    assert.equal(events.at(-1)?.type, "end", `${name} ${label}: end last`);
    return shape(events, report);
  }));
  assert.deepEqual(shapes[1], shapes[0], `${name}: the child runner tells what the in-process one does`);
  return shapes[0];
}

const req = (script: string, extra: Partial<RunRequest> = {}) => (dir: string): RunRequest => ({
  script: { path: join(dir, script) },
  projectRoot: dir,
  env: testEnv({ AGENT_BLOCK_KNL_PATH: join(dir, "knl.sqlite") }),
  ...extra,
});

Deno.test({
  name: "runner contract: returned, raised, deferred — the same outcome and events in process and in a child",
  ...opts,
  fn: async () => {
    const r = await both("returned", req("ret.lua", { prompt: "p" }));
    assert.deepEqual(r.outcome, { status: "returned", value: "v p" });
    assert.deepEqual(r.kinds, ["end"]);
    const raised = await both("raised", req("raise.lua"));
    assert.equal(raised.outcome.status, "raised");
    if (raised.outcome.status === "raised") {
      assert.deepEqual(raised.outcome.error, { code: "E42", detail: "nope" });
    }
    const deferred = await both("deferred", req("defer.lua"));
    assert.deepEqual(deferred.outcome, { status: "deferred", reason: "no input yet" });
  },
});

Deno.test({
  name: "runner contract: a timeout and a cancellation — the same in process and in a child",
  ...opts,
  fn: async () => {
    const timed = await both(
      "timeout",
      (dir, label) => req("slow.lua", { prompt: join(dir, `t_${label}`), timeoutMs: 1500 })(dir),
    );
    assert.deepEqual(timed.outcome, { status: "timed_out", seconds: 1.5 });
    const cancelled = await both(
      "cancel",
      (dir, label) => req("slow.lua", { prompt: join(dir, `c_${label}`) })(dir),
      async (dir, label, cancel) => {
        await waitFor(() => {
          try {
            return Deno.statSync(join(dir, `c_${label}`)).isFile;
          } catch {
            return false;
          }
        }, { what: `the ${label} run to start` });
        cancel.abort("cancelled");
      },
    );
    assert.deepEqual(cancelled.outcome, { status: "cancelled", reason: "cancelled" });
  },
});

Deno.test({
  name:
    "runner contract: artifacts, sessions and a nested MCP call — the same events in process and in a child",
  ...opts,
  fn: async () => {
    const parts = await both("parts", req("parts.lua"));
    assert.deepEqual(parts.outcome, { status: "returned", value: "parts" });
    assert.deepEqual(parts.artifacts, [["plan.md", "draft"], ["stats", { n: 3 }]]);
    assert.equal(parts.sessions, 1);
    assert.deepEqual(parts.rows, ["session_open", "note", "session_close"]);
    assert.deepEqual(parts.kinds, ["artifact", "session_open", "events", "artifact", "end"]);
    const mcp = await both("mcp", req("mcp.lua"));
    assert.deepEqual(mcp.outcome, { status: "returned", value: "hi" });
    assert.deepEqual(mcp.kinds, ["mcp_connect", "mcp_call", "end"]);
  },
});
