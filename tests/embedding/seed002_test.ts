/**
 * Seed 002's contract, held by a test: the in-process spawner of `seed002_spawner.ts` (a
 * downstream that imports nothing but the package) runs real blocks in this process, with real
 * MCP servers and real subprocesses, the model played by the local Anthropic-wire mock.
 *
 * What is proved: the prompt-based mode offers the model every tool of a granted server and
 * nothing of a server the grant does not name, which is never started; the script-based mode
 * runs the caller's file verbatim and refuses an `mcp__` grant before running; `_CONTEXT`,
 * `_PROMPT` (structured input JSON-encoded), `_TASK_METADATA` and `_AGENT_CTX` (nesting kept);
 * artifacts staged while the run goes on, the first other emit as the terminal value (content,
 * response, whole payload), a run that never emits failing; the per-invocation project root
 * (work_dir > project_root > spec.project_root) as `std.env.project_root()`, the cwd of `sh.exec`
 * and of MCP servers, with the host's cwd untouched; cancellation in the middle of a model call
 * and of an `sh.exec` (the process is gone); two concurrent invocations kept apart.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { processAlive, REPO_ROOT, tempDir, tempProject, testEnv, waitFor } from "../helpers.ts";
import { anthropicMessage, MockLlm } from "../host/llm/mock_llm.ts";
import {
  type AgentSpec,
  type McpServerSpec,
  Seed002SpawnerFactory,
  type WorkerResult,
} from "./seed002_spawner.ts";

const DENO = Deno.execPath();
const FIXTURES = join(REPO_ROOT, "tests/fixtures/mcp");
const ENV_SERVER = join(FIXTURES, "env_server.ts");
const MARKER_SERVER = join(FIXTURES, "marker_server.ts");

const mock = new MockLlm();
Deno.test.afterAll(async () => await mock.close());

const factory = new Seed002SpawnerFactory({
  env: testEnv({ ANTHROPIC_BASE_URL: mock.url, ANTHROPIC_API_KEY: "sk-ant-test" }),
  home: await tempDir("ab_seed002_home_"),
});

/** A stdio server of the env fixture (tools `env`, `args`, `cwd`). */
const envServer = (name: string): McpServerSpec => ({
  name,
  command: DENO,
  args: ["run", "-A", "--quiet", ENV_SERVER],
});

/** A stdio server of the marker fixture, which writes its cwd to `marker` when it starts. */
const markerServer = (name: string, marker: string): McpServerSpec => ({
  name,
  command: DENO,
  args: ["run", "-A", "--quiet", MARKER_SERVER, "--marker", marker],
});

/** A script-based agent over `source`, written to a fresh file. */
async function scriptAgent(source: string, spec: AgentSpec = {}, tools: string[] = []) {
  const dir = await tempDir("ab_seed002_script_");
  const path = join(dir, "agent.lua");
  await Deno.writeTextFile(path, source);
  return factory.build({ project_root: dir, ...spec, script_path: path }, { tools });
}

/** True while `pid` is a live (non-zombie) process. */

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

type Json = Record<string, unknown>;

/** Fails with the error and the run's log unless the invocation succeeded. */
function succeeded(r: WorkerResult): void {
  if (r.error) throw new Error(`the invocation failed: ${r.error.code}: ${r.error.message}\n${r.log}`);
}

Deno.test({
  name: "prompt-based: only the granted server is started, every tool of it reaches the model",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    mock.reset();
    const root = await tempProject();
    const markers = await tempDir();
    const agent = factory.build({
      project_root: root,
      mcp_servers: [envServer("notes"), markerServer("vault", join(markers, "vault"))],
    }, {
      system_prompt: "You are a terse locator.",
      tools: ["mcp__notes__cwd", "Read", "WebSearch"],
    });
    mock.push(
      {
        kind: "json",
        body: anthropicMessage(
          [{ type: "tool_use", id: "toolu_1", name: "notes__cwd", input: {} }],
          "tool_use",
        ),
      },
      { kind: "json", body: anthropicMessage([{ type: "text", text: "Found the project." }]) },
    );
    const r = await agent.invoke({ prompt: "where are you?" });
    succeeded(r);
    assert.equal(r.value, "Found the project.");
    assert.deepEqual(r.parts, {});

    assert.equal(mock.requests.length, 2);
    const first = mock.requests[0].body;
    const offered = (first.tools as { name: string }[]).map((t) => t.name).sort();
    assert.deepEqual(
      offered,
      ["notes__args", "notes__cwd", "notes__env"],
      "every tool of notes, none of vault",
    );
    assert.equal((first.system as { text: string }[])[0].text, "You are a terse locator.");
    const asked = (first.messages as { role: string; content: Json[] }[])[0];
    assert.equal(asked.role, "user");
    assert.equal(asked.content[0].text, "where are you?");
    // the granted server ran in the project root and answered the model's call
    const sent = mock.requests[1].body.messages as { content: Json[] }[];
    assert.equal(sent[2].content[0].tool_use_id, "toolu_1");
    assert.equal(sent[2].content[0].content, Deno.realPathSync(root));
    assert.equal(exists(join(markers, "vault")), false, "the server the grant does not name never started");
  },
});

Deno.test({
  name: "prompt-based: a granted server starts (its marker is written), an unknown one is refused",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    mock.reset();
    const root = await tempProject();
    const markers = await tempDir();
    const spec = { project_root: root, mcp_servers: [markerServer("vault", join(markers, "vault"))] };
    mock.push({ kind: "json", body: anthropicMessage([{ type: "text", text: "ok" }]) });
    const r = await factory.build(spec, { tools: ["mcp__vault__secret"] }).invoke({ prompt: "go" });
    succeeded(r);
    assert.equal(r.value, "ok");
    const offered = (mock.requests[0].body.tools as { name: string }[]).map((t) => t.name).sort();
    assert.deepEqual(offered, ["vault__secret", "vault__whereami"]);
    assert.equal(Deno.readTextFileSync(join(markers, "vault")), Deno.realPathSync(root));

    assert.throws(
      () => factory.build(spec, { tools: ["mcp__valut__secret"] }),
      (e: Error & { code?: string }) => {
        assert.equal(e.code, "config");
        assert.match(e.message, /'valut'/);
        return true;
      },
    );
  },
});

Deno.test("script-based: the caller's file runs verbatim; an mcp__ grant is refused before running", async () => {
  const source = `-- the caller's own script
local greeting = "verbatim " .. _PROMPT
bus.emit("result", { content = greeting .. " from " .. _SCRIPT_NAME:match("[^/]+$") })
`;
  const agent = await scriptAgent(source, {}, ["Read", "WebSearch"]);
  const r = await agent.invoke({ prompt: "run" });
  succeeded(r);
  assert.equal(r.value, "verbatim run from agent.lua");

  const dir = await tempDir();
  const script = join(dir, "touch.lua");
  await Deno.writeTextFile(script, `std.fs.write(${JSON.stringify(join(dir, "ran"))}, "yes")`);
  assert.throws(
    () =>
      factory.build(
        { script_path: script, mcp_servers: [envServer("notes")] },
        { tools: ["Read", "mcp__notes__cwd"] },
      ),
    (e: Error & { code?: string }) => {
      assert.equal(e.code, "config");
      assert.match(e.message, /mcp__notes__cwd/);
      return true;
    },
  );
  assert.equal(exists(join(dir, "ran")), false);
});

Deno.test("inputs: _CONTEXT, _PROMPT (text, structured as JSON), _TASK_METADATA and _AGENT_CTX nested", async () => {
  const dir = await tempDir();
  const script = join(dir, "inputs.lua");
  await Deno.writeTextFile(
    script,
    `
local decoded = type(_PROMPT) == "string" and _PROMPT:sub(1, 1) == "{" and std.json.decode(_PROMPT) or nil
bus.emit("result", { content = std.json.encode({
  context = _CONTEXT,
  prompt_type = type(_PROMPT),
  prompt = _PROMPT,
  decoded = decoded,
  meta = _TASK_METADATA,
  ctx = _AGENT_CTX,
  -- read in Lua, so the nesting is real tables, not text
  second_label = _TASK_METADATA.ticket.labels[2],
  reviewer = _AGENT_CTX.review.reviewers[1].name,
}) })
`,
  );
  const agent = factory.build({ project_root: dir, script_path: script }, {
    system_prompt: "You review tickets.",
    tools: [],
  });
  const meta = { ticket: { id: "T-7", labels: ["bug", "p1"], links: { parent: "T-1" } }, attempt: 2 };
  const ctx = {
    review: { reviewers: [{ name: "ada", weight: 3 }, { name: "bob", weight: 1 }], strict: true },
  };

  const text = await agent.invoke({ prompt: "triage T-7", task_metadata: meta, agent_ctx: ctx });
  succeeded(text);
  const t = JSON.parse(text.value as string);
  assert.equal(t.context, "You review tickets.");
  assert.equal(t.prompt_type, "string");
  assert.equal(t.prompt, "triage T-7");
  assert.deepEqual(t.meta, meta);
  assert.deepEqual(t.ctx, ctx);
  assert.equal(t.second_label, "p1");
  assert.equal(t.reviewer, "ada");

  const input = { ask: "triage", ids: [7, 8, { sub: "T-9" }], opts: { deep: { deeper: "yes" } } };
  const structured = await agent.invoke({ prompt: input, task_metadata: meta, agent_ctx: ctx });
  succeeded(structured);
  const s = JSON.parse(structured.value as string);
  assert.equal(s.prompt_type, "string");
  assert.deepEqual(JSON.parse(s.prompt), input);
  assert.deepEqual(s.decoded, input);
});

Deno.test("results: artifacts are staged as the run goes on; the first other emit is the value", async (t) => {
  await t.step("artifacts, then the terminal emit's content; later emits are not the result", async () => {
    const agent = await scriptAgent(`
bus.emit("artifact", { name = "verdict", content = "PASS" })
bus.emit("artifact", { name = "details", content = { checks = { "lint", "test" }, failed = 0, score = 4 / 2 } })
local after = sh.exec("echo still running").stdout:gsub("%s+$", "")
bus.emit("report", { content = "body: " .. after, response = "not this" })
bus.emit("report", { content = "a second report" })
bus.emit("other_kind", "nor this")
`);
    const r = await agent.invoke({ prompt: "go" });
    succeeded(r);
    assert.equal(r.value, "body: still running");
    assert.deepEqual(r.parts, {
      verdict: "PASS",
      details: { checks: ["lint", "test"], failed: 0, score: 2 },
    });
  });

  await t.step("no content: the response", async () => {
    const agent = await scriptAgent(`bus.emit("done", { response = "the response", extra = 1 })`);
    const r = await agent.invoke({ prompt: "go" });
    succeeded(r);
    assert.equal(r.value, "the response");
  });

  await t.step("neither: the whole payload (a table, or a scalar)", async () => {
    const table = await scriptAgent(
      `bus.emit("done", { verdict = "ok", score = 10 / 2, items = { 1, 2.5, { n = "three" } } })`,
    );
    const r = await table.invoke({ prompt: "go" });
    succeeded(r);
    assert.deepEqual(r.value, { verdict: "ok", score: 5, items: [1, 2.5, { n: "three" }] });
    assert.deepEqual(JSON.parse(JSON.stringify(r.value)), r.value, "plain JSON");

    const scalar = await scriptAgent(`bus.emit("done", "just text")`);
    const s = await scalar.invoke({ prompt: "go" });
    succeeded(s);
    assert.equal(s.value, "just text");
  });

  await t.step("a script that never emits a result fails the invocation (its parts are kept)", async () => {
    const agent = await scriptAgent(`
bus.emit("artifact", { name = "verdict", content = "FAIL" })
return "a returned value is not a result"
`);
    const r = await agent.invoke({ prompt: "go" });
    assert.equal(r.value, undefined);
    assert.deepEqual(r.parts, { verdict: "FAIL" });
    assert.equal(r.error?.code, "script");
    assert.match(r.error!.message, /never emitted a result/);
  });

  await t.step("a script that raises after its result fails the invocation", async () => {
    const agent = await scriptAgent(`bus.emit("done", { content = "early" }); error("then broke")`);
    const r = await agent.invoke({ prompt: "go" });
    assert.equal(r.value, "early");
    assert.equal(r.error?.code, "script");
    assert.match(r.error!.message, /then broke/);
  });
});

Deno.test({
  name: "project root: per invocation (work_dir > project_root > spec), for sh.exec and MCP servers",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const [specRoot, taskRoot, workDir] = await Promise.all([tempProject(), tempProject(), tempProject()]);
    const hostCwd = Deno.cwd();
    const agent = await scriptAgent(
      `
local pwd = sh.exec("pwd").stdout:gsub("%s+$", "")
assert(mcp.connect("where", _AGENT_CTX.command, _AGENT_CTX.args))
local server_cwd = mcp.call("where", "cwd", {}).content[1].text
-- a bare relative path is the task's: the run works in its project root (the host was not moved)
local f = io.open("marker.txt")
local host_file = f and f:read("l")
if f then f:close() end
bus.emit("result", { content = std.json.encode({
  root = std.env.project_root(), pwd = pwd, server = server_cwd, host_file = host_file,
}) })
`,
      { project_root: specRoot },
    );
    const server = envServer("where");
    for (const root of [specRoot, taskRoot, workDir]) {
      Deno.writeTextFileSync(join(root, "marker.txt"), root + "\n");
    }
    const agent_ctx = { command: server.command, args: server.args! };
    const cases = [
      { inv: {}, want: specRoot },
      { inv: { project_root: taskRoot }, want: taskRoot },
      { inv: { project_root: taskRoot, work_dir: workDir }, want: workDir },
      { inv: { work_dir: workDir }, want: workDir },
    ];
    for (const { inv, want } of cases) {
      const r = await agent.invoke({ prompt: "where", agent_ctx, ...inv });
      succeeded(r);
      const seen = JSON.parse(r.value as string);
      const real = Deno.realPathSync(want);
      assert.deepEqual(
        seen,
        { root: want, pwd: real, server: real, host_file: want },
        JSON.stringify(inv),
      );
      assert.equal(Deno.cwd(), hostCwd, "the host process's cwd is unchanged");
    }
  },
});

Deno.test("project root: a spec without one falls back to the host's cwd when the agent was built", async () => {
  const dir = await tempDir();
  const script = join(dir, "root.lua");
  await Deno.writeTextFile(script, `bus.emit("result", { content = std.env.project_root() })`);
  const agent = factory.build({ script_path: script }, { tools: [] });
  const r = await agent.invoke({ prompt: "where" });
  succeeded(r);
  assert.equal(r.value, Deno.cwd());
  const task = await tempProject();
  assert.equal((await agent.invoke({ prompt: "where", project_root: task })).value, task);
});

Deno.test("cancel: in the middle of a model call, the invocation ends cancelled at once", async () => {
  mock.reset();
  mock.push({ kind: "hang" });
  const agent = factory.build({ project_root: await tempProject() }, { tools: [] });
  const stop = new AbortController();
  const running = agent.invoke({ prompt: "think forever", signal: stop.signal });
  await waitFor(() => mock.requests.length === 1, { what: "the model request to arrive" });
  const t0 = performance.now();
  stop.abort("the engine is shutting down");
  const r = await running;
  const ms = performance.now() - t0;
  assert.equal(r.error?.code, "cancelled", r.error?.message);
  assert.equal(r.value, undefined);
  assert.equal(mock.requests.length, 1, "no retry after the cancel");
  assert.ok(ms < 15_000, `cancelled after ${ms} ms`);
});

Deno.test("cancel: in the middle of an sh.exec, the command's process is gone", async () => {
  const agent = await scriptAgent(`
sh.exec("echo $$ > sleep.pid.tmp && mv sleep.pid.tmp sleep.pid && exec sleep 30", { timeout = 120 })
bus.emit("result", { content = "not reached" })
`);
  const root = await tempProject();
  const pidFile = join(root, "sleep.pid");
  const stop = new AbortController();
  const running = agent.invoke({ prompt: "sleep", project_root: root, signal: stop.signal });
  await waitFor(() => exists(pidFile), { what: "the command to write its pid" });
  const pid = Number(Deno.readTextFileSync(pidFile).trim());
  assert.ok(pid > 0 && processAlive(pid), `pid ${pid} is running`);
  const t0 = performance.now();
  stop.abort("cancelled by the engine");
  const r = await running;
  const ms = performance.now() - t0;
  assert.equal(r.error?.code, "cancelled", r.error?.message);
  assert.equal(r.value, undefined);
  assert.ok(ms < 15_000, `cancelled after ${ms} ms`);
  await waitFor(() => !processAlive(pid), { what: `process ${pid} to be gone`, timeoutMs: 10_000 });
});

Deno.test("concurrency: two invocations at once keep their own project root, globals and environment", async () => {
  const agent = await scriptAgent(`
local root = std.env.project_root()
std.env.set("WHO", _AGENT_CTX.who)
std.fs.write(root .. "/ready", "1")
local deadline = os.time() + 60
while not std.fs.exists(root .. "/go") do
  if os.time() > deadline then error("never told to go") end
  std.task.sleep(0.02)
end
bus.emit("result", { content = std.json.encode({
  root = root,
  pwd = (sh.exec("pwd").stdout:gsub("%s+$", "")),
  env = std.env.get("WHO"),
  prompt = _PROMPT,
  meta = _TASK_METADATA,
  ctx = _AGENT_CTX,
}) })
`);
  const roots = await Promise.all([tempProject(), tempProject()]);
  const runs = roots.map((root, i) =>
    agent.invoke({
      prompt: `task ${i}`,
      work_dir: root,
      task_metadata: { task: { n: i, tags: [`t${i}`] } },
      agent_ctx: { who: `agent ${i}` },
    })
  );
  // both are running (each waits for its go) before either may finish
  await waitFor(() => roots.every((r) => exists(join(r, "ready"))), { what: "both runs to start" });
  for (const r of roots) Deno.writeTextFileSync(join(r, "go"), "1");
  const results = await Promise.all(runs);
  results.forEach((r, i) => {
    succeeded(r);
    assert.deepEqual(JSON.parse(r.value as string), {
      root: roots[i],
      pwd: Deno.realPathSync(roots[i]),
      env: `agent ${i}`,
      prompt: `task ${i}`,
      meta: { task: { n: i, tags: [`t${i}`] } },
      ctx: { who: `agent ${i}` },
    });
  });
});
