/**
 * `agent-block flow` as a user runs it: real CLI processes on a temporary project (acceptance
 * check 19 — SIGKILL during the third step, then `flow resume` — plus a SIGKILLed run listed
 * `interrupted` and rerun, a live run refused by a concurrent resume or rerun, SIGINT, waiting
 * and answering, YAML and Lua Blueprints, and the exit codes and messages of bad input). The
 * processes of one test share the project's own agent-block home, where the runs' locks are.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runCli, tempProject, waitFor } from "../helpers.ts";
import { EventStore } from "../../src/knl/store.ts";

/** A block that logs `_STEP_KEY` to calls/<name>.log and returns `_PROMPT .. "-<name>"`. */
const counted = (name: string, body = "") =>
  `local f = "calls/${name}.log"
std.fs.write(f, (std.fs.exists(f) and std.fs.read(f) or "") .. _STEP_KEY .. "\\n")
${body}
return _PROMPT .. "-${name}"`;
const waitGo = `while not std.fs.exists("go") do std.task.sleep(0.02) end`;

const calls = (root: string, name: string): string[] => {
  try {
    // complete lines only: the step may be seen between creating the file and writing its line
    return Deno.readTextFileSync(join(root, "calls", `${name}.log`)).split("\n").slice(0, -1);
  } catch {
    return [];
  }
};

const P = (at: string) => ({ op: "path", at });
const ABC = JSON.stringify({
  id: "abc",
  agents: ["a", "b", "c"].map((n) => ({ name: n, kind: "block", spec: { block: n } })),
  flow: {
    kind: "seq",
    children: [
      { kind: "step", ref: "a", in: P("$.s"), out: P("$.a") },
      { kind: "step", ref: "b", in: P("$.a"), out: P("$.b") },
      { kind: "step", ref: "c", in: P("$.b"), out: P("$.c") },
    ],
  },
});

async function abcProject() {
  return await tempProject({
    "calls/.keep": "",
    "blocks/a.lua": counted("a"),
    "blocks/b.lua": counted("b"),
    "blocks/c.lua": counted("c", waitGo),
    "flows/abc.bp.json": ABC,
  });
}

/** The environment of a test's flow processes: the project's own agent-block home. */
const homeEnv = (root: string) => ({ AGENT_BLOCK_HOME: join(root, "home") });

/** `agent-block flow ARGS` in `root`, to its end. */
const flowCli = (root: string, args: string[]) =>
  runCli(["flow", ...args], { cwd: root, env: homeEnv(root) });

/** The kinds of the run's recorded events, read from the project's kernel file. */
function recordedKinds(root: string, runId: string): string[] {
  const store = new EventStore(join(root, ".agent-block", "knl.sqlite"));
  try {
    return store.read(runId).map((e) => e.kind);
  } finally {
    store.close();
  }
}

function spawnFlow(root: string, args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", CLI, "flow", ...args],
    cwd: root,
    env: { NO_COLOR: "1", ...homeEnv(root) },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("SIGKILL during the third step: flow resume runs only that step, same run id, same context, same _STEP_KEY", async () => {
  const root = await abcProject();
  const child = spawnFlow(root, ["run", "flows/abc.bp.json", "--init", '{"s":"s"}']);
  await waitFor(() => calls(root, "c").length === 1, { what: "step c to start" });
  child.kill("SIGKILL");
  const killed = await child.output();
  assert.notEqual(killed.code, 0);
  const runId = calls(root, "c")[0].split("/")[0];

  const runs = await flowCli(root, ["runs", "--json"]);
  assert.equal(runs.code, 0, runs.stderr);
  assert.deepEqual(runs.stdout.trim().split("\n").map((l) => JSON.parse(l)).map((r) => [r.run, r.state]), [[
    runId,
    "interrupted",
  ]]);

  await Deno.writeTextFile(join(root, "go"), "");
  const resumed = await flowCli(root, ["resume", runId, "--result", "out.json"]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, new RegExp(`flow run ${runId}: completed`));
  assert.deepEqual([calls(root, "a").length, calls(root, "b").length, calls(root, "c").length], [1, 1, 2]);
  const [k1, k2] = calls(root, "c");
  assert.equal(k1, k2, "_STEP_KEY is equal across the crash and its resume");
  const resumedCtx = JSON.parse(await Deno.readTextFile(join(root, "out.json")));

  const fresh = await flowCli(root, [
    "run",
    "flows/abc.bp.json",
    "--init",
    '{"s":"s"}',
    "--result",
    "fresh.json",
  ]);
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.deepEqual(resumedCtx, JSON.parse(await Deno.readTextFile(join(root, "fresh.json"))));
  assert.deepEqual(resumedCtx, { s: "s", a: "s-a", b: "s-a-b", c: "s-a-b-c" });

  const show = await flowCli(root, ["show", runId]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /a#0 replayed \(passed\)/);
  assert.match(show.stdout, /run completed/);
  assert.match(show.stdout.trimEnd(), /\n {12}state: completed$/);
});

Deno.test("a SIGKILLed run is listed and shown interrupted, and flow rerun --from takes it: earlier steps replay", async () => {
  const root = await abcProject();
  const child = spawnFlow(root, ["run", "flows/abc.bp.json", "--init", '{"s":"s"}']);
  await waitFor(() => calls(root, "c").length === 1, { what: "step c to start" });
  child.kill("SIGKILL");
  assert.notEqual((await child.output()).code, 0);
  const runId = calls(root, "c")[0].split("/")[0];
  assert.equal(recordedKinds(root, runId).at(-1), "flow.step_dispatched", "the record still says running");

  const runs = await flowCli(root, ["runs"]);
  assert.equal(runs.code, 0, runs.stderr);
  assert.match(runs.stdout, new RegExp(`${runId}\\s+abc\\s+interrupted\\s`));
  const show = await flowCli(root, ["show", runId]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(
    show.stdout.trimEnd(),
    new RegExp(`state: interrupted \\(.*flow resume ${runId} continues it\\)$`),
  );

  await Deno.writeTextFile(join(root, "go"), "");
  const rerun = await flowCli(root, ["rerun", runId, "--from", "b", "--result", "out.json"]);
  assert.equal(rerun.code, 0, rerun.stderr);
  assert.match(rerun.stderr, new RegExp(`flow run ${runId}: completed`));
  assert.deepEqual([calls(root, "a").length, calls(root, "b").length, calls(root, "c").length], [1, 2, 2]);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(join(root, "out.json"))), {
    s: "s",
    a: "s-a",
    b: "s-a-b",
    c: "s-a-b-c",
  });
  const after = await flowCli(root, ["runs", "--json"]);
  assert.equal(JSON.parse(after.stdout.trim()).state, "completed");
});

Deno.test("a live run is refused by a concurrent rerun and resume, naming the run and the rule; the record is unchanged", async () => {
  const root = await abcProject();
  const child = spawnFlow(root, ["run", "flows/abc.bp.json", "--init", '{"s":"s"}']);
  try {
    await waitFor(() => calls(root, "c").length === 1, { what: "step c to start" });
    const runId = calls(root, "c")[0].split("/")[0];
    const before = recordedKinds(root, runId);

    const runs = await flowCli(root, ["runs", "--json"]);
    assert.deepEqual(JSON.parse(runs.stdout.trim()).state, "running");
    const show = await flowCli(root, ["show", runId]);
    assert.match(
      show.stdout.trimEnd(),
      /\n {12}state: running$/,
      `flow show: exit ${show.code}: ${show.stderr}`,
    );
    for (
      const args of [["rerun", runId, "--from", "a"], ["rerun", runId, "--from", "c"], ["resume", runId]]
    ) {
      const r = await flowCli(root, args);
      assert.equal(r.code, 1, `${args.join(" ")}: ${r.stderr}`);
      assert.match(
        r.stderr,
        new RegExp(
          `flow run ${runId} is running in another process \\(it holds the run's lock .*flow-locks/[0-9a-f]{32}\\.lock\\); ` +
            "a run is resumed or rerun only when no process runs it",
        ),
      );
    }
    assert.deepEqual(recordedKinds(root, runId), before, "a refused command appends nothing");
    assert.deepEqual([calls(root, "a").length, calls(root, "b").length, calls(root, "c").length], [1, 1, 1]);

    await Deno.writeTextFile(join(root, "go"), "");
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.deepEqual(
      [...Deno.readDirSync(join(root, "home", "flow-locks"))],
      [],
      "a finished run's lock is removed",
    );
    const rerun = await flowCli(root, ["rerun", runId, "--from", "c"]);
    assert.equal(rerun.code, 0, rerun.stderr);
    assert.deepEqual([calls(root, "a").length, calls(root, "b").length, calls(root, "c").length], [1, 1, 2]);
  } finally {
    try {
      child.kill("SIGKILL");
      await child.output();
    } catch { /* it has ended */ }
  }
});

Deno.test("SIGINT cancels the run (exit 1, recorded cancelled); flow resume continues it", async () => {
  const root = await abcProject();
  const child = spawnFlow(root, [
    "run",
    "flows/abc.bp.json",
    "--init",
    '{"s":"s"}',
    "--events",
    "events.jsonl",
  ]);
  await waitFor(() => calls(root, "c").length === 1, { what: "step c to start" });
  child.kill("SIGINT");
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 1, stderr);
  assert.match(stderr, /cancelled: received SIGINT.*flow resume/);
  const events = (await Deno.readTextFile(join(root, "events.jsonl"))).trim().split("\n").map((l) =>
    JSON.parse(l)
  );
  assert.deepEqual(events.slice(-2).map((e) => e.kind), ["flow.cancel_requested", "flow.run_finished"]);
  const runId = events[0].run;
  await Deno.writeTextFile(join(root, "go"), "");
  const resumed = await flowCli(root, ["resume", runId]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.deepEqual([calls(root, "a").length, calls(root, "b").length, calls(root, "c").length], [1, 1, 2]);
});

Deno.test("a waiting step exits 75 and is listed as waiting; flow resume --answer continues with that value", async () => {
  const root = await tempProject({
    "blocks/approve.lua": `job.defer("needs sign-off")`,
    "blocks/ship.lua": `return std.json.decode(_PROMPT).ok and "shipped" or "held"`,
    "flows/release.bp.yaml": `id: release
agents:
  - name: approve
    kind: block
    spec: { block: approve, on_defer: wait }
  - name: ship
    kind: block
    spec: { block: ship }
flow:
  kind: seq
  children:
    - { kind: step, ref: approve, in: { op: lit, value: go }, out: { op: path, at: $.approval } }
    - { kind: step, ref: ship, in: { op: path, at: $.approval }, out: { op: path, at: $.result } }
`,
  });
  const run = await flowCli(root, ["run", "flows/release.bp.yaml"]);
  assert.equal(run.code, 75, run.stderr);
  const runId = /flow run (flow-\S+): waiting at step 'approve': needs sign-off/.exec(run.stderr)?.[1];
  assert.ok(runId, run.stderr);
  const runs = await flowCli(root, ["runs"]);
  assert.match(runs.stdout, new RegExp(`${runId}\\s+release\\s+waiting\\s+.*approve: needs sign-off`));
  const noAnswer = await flowCli(root, ["resume", runId]);
  assert.equal(noAnswer.code, 1);
  assert.match(noAnswer.stderr, /waiting at step 'approve'.*--answer JSON/);
  const answered = await flowCli(root, ["resume", runId, "--answer", '{"ok":true}', "--result", "r.json"]);
  assert.equal(answered.code, 0, answered.stderr);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(join(root, "r.json"))), {
    approval: { ok: true },
    result: "shipped",
  });
});

Deno.test("a .bp.lua Blueprint built with require('flow') runs like its JSON form", async () => {
  const root = await tempProject({
    "blocks/up.lua": `return string.upper(_PROMPT)`,
    "flows/up.bp.lua": `local F = require("flow")
return {
  id = "lua-form",
  agents = { { name = "up", kind = "block", spec = { block = "up" } } },
  flow = F.seq({
    F.step({ agent = "up", input = "$.word", out = "$.loud" }),
    F.loop_({ counter = "$.n", cond = F.p("$.n"):lt(2), body = F.assign({ at = "$.last", value = F.p("$.n") + 10 }), max = 5 }),
    F.branch({ cond = F.p("$.loud"):eq("HI"), on_true = F.assign({ at = "$.ok", value = true }) }),
  }),
}`,
  });
  const r = await flowCli(root, ["run", "flows/up.bp.lua", "--init", '{"word":"hi"}', "--result", "r.json"]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(await Deno.readTextFile(join(root, "r.json"))), {
    word: "hi",
    loud: "HI",
    n: 2,
    last: 11,
    ok: true,
  });
  const lint = await flowCli(root, ["lint", "flows/up.bp.lua"]);
  assert.equal(lint.code, 0, lint.stderr);
  assert.match(lint.stderr, /flows\/up\.bp\.lua: ok \(1 agent\(s\)/);
});

Deno.test("bad input: syntax error, unknown node kind, bad path, missing agent file get exit 2 naming where and what", async () => {
  const root = await tempProject({
    "syntax.json": '{\n  "id": "x",\n  "flow": {"kind": "seq" "children": []}\n}',
    "syntax.yaml": "id: x\nflow:\n  kind: seq\n  children: [\n",
    "kind.json": JSON.stringify({ id: "x", flow: { kind: "seq", children: [{ kind: "parallel" }] } }),
    "path.json": JSON.stringify({
      id: "x",
      flow: { kind: "assign", at: P("$.r[0]"), value: { op: "lit", value: 1 } },
    }),
    "agent.json": JSON.stringify({
      id: "x",
      agents: [{ $agent_md: "agents/missing.md" }],
      flow: { kind: "seq", children: [] },
    }),
  });
  const cases: [string, RegExp][] = [
    ["syntax.json", /syntax\.json:3:\d+: not valid JSON/],
    ["syntax.yaml", /syntax\.yaml:\d+:\d+: not valid YAML/],
    [
      "kind.json",
      /kind\.json: at \/flow\/children\/0\/kind: unknown node kind "parallel" \(expected one of step, seq/,
    ],
    ["path.json", /path\.json: at \/flow\/at\/at: invalid path '\$\.r\[0\]': a bracket holds a quoted key/],
    ["agent.json", /agent\.json: at \/agents\/0\/\$agent_md: 'agents\/missing\.md' not found; looked in/],
  ];
  for (const [file, want] of cases) {
    for (const cmd of ["run", "lint"]) {
      const r = await flowCli(root, [cmd, file]);
      assert.equal(r.code, 2, `${cmd} ${file}: ${r.stderr}`);
      assert.match(r.stderr, want);
    }
  }
  const missing = await flowCli(root, ["run", "nope.json"]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /cannot read Blueprint nope\.json: no such file/);
  assert.ok(
    !(await Deno.stat(join(root, ".agent-block")).then(() => true, () => false)),
    "a refused Blueprint records nothing",
  );
});

Deno.test("unknown run ids, commands and flags are clear errors", async () => {
  const root = await abcProject();
  let r = await flowCli(root, ["resume", "flow-nope"]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /no kernel database at .*no flow has run in this project/);
  await Deno.writeTextFile(join(root, "go"), "");
  assert.equal(
    (await flowCli(root, ["run", "flows/abc.bp.json", "--init", '{"s":"s"}'])).code,
    0,
  );
  r = await flowCli(root, ["resume", "flow-nope"]);
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /error: no flow run 'flow-nope' in .*knl\.sqlite \(agent-block flow runs lists them\)/,
  );
  r = await flowCli(root, ["show", "flow-nope"]);
  assert.equal(r.code, 1);
  r = await flowCli(root, ["rerun", "flow-nope"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--from STEP is required/);
  r = await flowCli(root, ["rnu"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown command 'rnu' \(did you mean 'run'\?\)/);
  r = await flowCli(root, ["run", "flows/abc.bp.json", "--init", "{bad"]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--init: not valid JSON/);
});

Deno.test("flow schema prints a JSON Schema naming every node kind and op", async () => {
  const r = await runCli(["flow", "schema"]);
  assert.equal(r.code, 0, r.stderr);
  const schema = JSON.parse(r.stdout);
  assert.equal(schema.title, "agent-block flow Blueprint");
  for (const k of ["step", "seq", "branch", "loop", "fanout", "try", "assign", "let"]) {
    assert.ok(schema.$defs[`node_${k}`], k);
  }
  for (const op of ["path", "call_extern", "mod", "in"]) assert.ok(schema.$defs[`expr_${op}`], op);
});
